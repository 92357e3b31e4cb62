"""bench/: the quick benchmark runs end to end (CI runs it here) and writes its JSON, tables (tables.md, the form of
docs/benchmarks.md's) and plot.

No timing is asserted: performance claims live in bench/results/, measured side by side.
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_bench_quick_writes_results(tmp_path):
    """`python -m bench --quick --out DIR` exits 0 and writes results with peers measured in the same run."""
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(next(tmp_path.glob("*.json")).read_text())
    text = json.dumps(results)
    assert "scapy" in text and "dpkt" in text and "engine" in text
    assert (tmp_path / "tables.md").read_text().count("|") > 20

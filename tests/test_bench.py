"""bench/: the quick benchmark runs end to end (CI runs it here) and writes its JSON, tables (tables.md, the form of
docs/benchmarks.md's) and plot.

No timing is asserted: performance claims live in bench/results/, measured side by side.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import csum
from csum import engine

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


def _xorshift_bytes(n: int) -> bytes:
    """bench/diff_loop.c's buffer: the low byte of each xorshift32 step from 0x12345678."""
    x, out = 0x12345678, bytearray()
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append(x & 0xFF)
    return bytes(out)


def test_diff_loop_harness_chains_the_two_emulations(tmp_path):
    """bench/diff_loop.c times what it says: its sink (each call's seed the previous call's result) equals the same
    chain of calls made with csum's pure-Python bpf_csum_diff and bpf_csum_diff_legacy (generic), a separate
    implementation from the C it times."""
    sys.path.insert(0, str(REPO))
    from bench import diff_loop

    exe = tmp_path / "diff_loop"
    if "lib/checksum.c-le" not in engine.SHAPES or not diff_loop.build(exe):
        pytest.skip("no C compiler or csum's C is not built")
    rounds, calls, sizes = 3, 2, [4, 20, 512]
    run = subprocess.run([str(exe), str(engine.SHAPES["lib/checksum.c-le"]), str(rounds), str(calls),
                          *map(str, sizes)], capture_output=True, text=True, check=True)
    data, seed = _xorshift_bytes(512), 0
    with engine.use("python"):
        for r in range(rounds):
            for size in sizes:
                forms = [csum.bpf_csum_diff_legacy, csum.bpf_csum_diff]
                for form in (forms[::-1] if r & 1 else forms):
                    for _ in range(calls):
                        seed = form(b"", data[:size], seed)
    lines = run.stdout.splitlines()
    assert len(lines) == rounds * len(sizes) + 1 and lines[-1] == f"sink {seed}"

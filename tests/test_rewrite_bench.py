"""bench/rewrite.py: the quick run works end to end and measures csum.rewrite beside scapy on the same packets.

No timing is asserted (performance claims live in bench/results/rewrite.json, measured side by side); the bench
itself first checks that csum.rewrite and scapy's rebuild give the same bytes for each workload.
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_bench_rewrite_quick(tmp_path):
    """`python -m bench.rewrite --quick --out F` exits 0 and writes csum and scapy times for every workload."""
    out = tmp_path / "rewrite.json"
    run = subprocess.run([sys.executable, "-m", "bench.rewrite", "--quick", "--out", str(out)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(out.read_text())
    assert set(results["workloads"]) == {"ipv4-tcp", "ipv6-udp", "icmp4-error", "vxlan"}
    assert all(r["csum_us"] > 0 and r["scapy_us"] > 0 for r in results["workloads"].values())
    assert "scapy" in results["machine"] and "| ipv4-tcp |" in run.stdout

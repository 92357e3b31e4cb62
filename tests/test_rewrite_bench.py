"""bench/rewrite.py and bench/rewrite_capture.py: the quick runs work end to end and measure csum beside scapy (and
tcprewrite) on the same packets.

No timing is asserted (performance claims live in bench/results/rewrite.json and rewrite_capture.json, measured side
by side); bench.rewrite itself first checks that csum.rewrite and scapy's rebuild give the same bytes for each
workload.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("mix", ["mixed", "icmp-errors"])
def test_bench_rewrite_capture_quick(tmp_path, mix):
    """`python -m bench.rewrite_capture --quick --mix MIX --out F` exits 0 and times every command on the same
    capture: csum rewrite keeps the capture's wrong checksums (the count before: ``csum verify``'s), --fix and
    tcprewrite --fixcsum leave none."""
    out = tmp_path / "rewrite_capture.json"
    run = subprocess.run([sys.executable, "-m", "bench.rewrite_capture", "--quick", "--mix", mix, "--out", str(out)],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(out.read_text())
    rows = {r["impl"]: r for r in results["rows"]}
    assert {"csum rewrite", "csum rewrite --fix", "scapy script"} <= set(rows)
    assert all(r["wall_s"] > 0 and r["cpu_s"] >= 0 and r["packets"] > 0 for r in rows.values())
    assert rows["csum rewrite"]["wrong_after"] == results["wrong_before"] > 0
    assert rows["csum rewrite --fix"]["wrong_after"] == 0
    if "tcprewrite --fixcsum" in rows:
        assert rows["tcprewrite --fixcsum"]["wrong_after"] == 0
        assert 0 < results["same_as_tcprewrite_from_ethertype"]["packets"] < results["packets"]
    assert "| csum rewrite |" in run.stdout

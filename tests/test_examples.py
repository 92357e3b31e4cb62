"""examples/: each script runs as a real process and prints what it promises.

Independent sources: scapy's checksum for the compared input, the naive RFC 1071
model in tests/oracle.py for the generic profile's sum, and the scripts' own
checks (property tests; nat_rewrite's "verifies" lines use csum.verify_checksum
on the rewritten bytes).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from oracle import ones_sum16
from scapy.utils import checksum as scapy_checksum

import csum

ALL_ONES = b"\xff\xff\xff"  # compare_arches.py's default input
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=120)


def test_compare_arches():
    """One row per profile; generic's csum_partial of ff ff ff is the oracle's little-endian sum; the Internet
    checksum is scapy's; every folded layout agrees."""
    run = _run("compare_arches.py")
    assert run.returncode == 0 and not run.stderr
    assert f"Internet checksum {scapy_checksum(ALL_ONES):#06x}" in run.stdout
    rows = {m[0]: m[1:] for m in re.findall(r"^(\S+)\s+(little|big)\s+(0x[0-9a-f]{8})\s+([0-9a-f]{4})", run.stdout, re.M)}
    assert sorted(rows) == sorted(csum.profile_names())
    assert int(rows["generic"][1], 16) == ones_sum16(ALL_ONES, "little")
    assert "1 distinct folded layouts in memory" in run.stdout


def test_compare_arches_takes_hex():
    run = _run("compare_arches.py", "00010203")
    assert run.returncode == 0 and "input 00010203 (4 bytes)" in run.stdout
    assert f"Internet checksum {scapy_checksum(bytes(range(4))):#06x}" in run.stdout


def test_property_tests_example():
    """Five properties pass against csum and the deliberately buggy checksum is caught."""
    run = _run("property_tests.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("passed: ") == 5
    assert "caught: my_buggy_checksum disagrees" in run.stdout
    caught = re.search(r"falsifying example: data=[0-9a-f]+(?:\.\.\.)? \((\d+) bytes\), mine (0x[0-9a-f]{4}), "
                       r"csum (0x[0-9a-f]{4})", run.stdout)
    assert caught and caught.group(2) != caught.group(3), run.stdout  # the example is printed and really fails


@pytest.mark.skipif(not (EXAMPLES / "nat_rewrite.py").exists(), reason="examples/nat_rewrite.py not present")
def test_nat_rewrite_example():
    """The rewritten packet's IPv4 and TCP checksums verify, before and after, and the BPF calls are listed."""
    run = _run("nat_rewrite.py")
    assert run.returncode == 0 and not run.stderr
    assert run.stdout.count("verifies: yes") == 4 and "verifies: no" not in run.stdout
    assert "bpf_l4_csum_replace(" in run.stdout and "bpf_l3_csum_replace(" in run.stdout


def test_dask_archive():
    """The LocalCluster example: 3 files of 200 scapy packets, every 10th UDP checksum overwritten -> 20 bad each."""
    pytest.importorskip("dask.distributed")
    run = _run("dask_archive.py")
    assert run.returncode == 1, run.stderr
    assert "total: 600 packets, 60 bad checksums, 0 malformed" in run.stdout
    assert run.stdout.count(": 200 packets, 20 bad checksums") == 3 and "(gzip)" in run.stdout

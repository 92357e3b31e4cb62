"""csum.testing.assert_checksums_ok and sample_packets, for users' pytest suites.

Expected: scapy builds the packets with correct checksums; a flipped checksum byte must be reported with the
stored and the scapy-computed value.
"""

from __future__ import annotations

import pytest
from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from csum.testing import assert_checksums_ok, sample_packets


def test_assert_checksums_ok_passes_scapy_packets_and_names_a_wrong_one():
    """Correct Ethernet and bare-IP packets pass; a wrong TCP checksum fails naming layer, stored and expected."""
    good = raw(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"x")
    assert_checksums_ok(good)
    assert_checksums_ok(raw(IPv6(src="::1", dst="::2") / UDP(sport=1, dport=2) / b"abc"))
    bad = bytearray(good)
    bad[50] ^= 0x01
    expected = Ether(good)[TCP].chksum
    with pytest.raises(AssertionError, match=rf"1 of 2 checksums wrong:\n  tcp checksum \(header at offset 34\): "
                                             rf"stored {expected ^ 0x100:#06x}, expected {expected:#06x} \(mismatch\)"):
        assert_checksums_ok(bytes(bad))


def test_sample_packets_is_reproducible():
    """The same seed gives the same packets (csum prog's default input), other seeds other ones; all verify."""
    first = sample_packets(20, seed=7)
    assert first == sample_packets(20, seed=7) and first != sample_packets(20, seed=8) and len(first) == 20
    for packet in first:
        assert_checksums_ok(packet, link="ip")


def test_assert_checksums_ok_names_the_cause():
    """A NAT that left the TCP checksum (scapy recomputes the IP header only) fails with the cause l4-not-patched
    and the old address, given the packet before; a checksum stored byte-swapped fails with byte-order (expected:
    the mistakes made here)."""
    before = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"hello"
    after = before.copy()
    after[IP].src, after[IP].chksum = "192.0.2.9", None
    after[TCP].chksum = TCP(raw(before[TCP])).chksum
    with pytest.raises(AssertionError, match=r"cause l4-not-patched: a stale pseudo-header for source address "
                                             r"10\.0\.0\.1 \(now 192\.0\.2\.9\)"):
        assert_checksums_ok(raw(Ether(raw(after))), before=raw(before))
    swapped = bytearray(raw(before))
    swapped[50], swapped[51] = swapped[51], swapped[50]
    with pytest.raises(AssertionError, match="cause byte-order"):
        assert_checksums_ok(bytes(swapped))


def test_pytest_plugin_fixture(tmp_path):
    """The ``csum_checksums`` fixture of csum.pytest_plugin (the pytest11 entry point) fails a test with the cause
    (expected: a byte-swapped checksum made here)."""
    import subprocess
    import sys
    from pathlib import Path

    frame = bytearray(raw(Ether() / IP() / TCP() / b"hi"))
    frame[50], frame[51] = frame[51], frame[50]
    test = tmp_path / "test_user.py"
    test.write_text("def test_it(csum_checksums):\n"
                    f"    csum_checksums(bytes.fromhex('{frame.hex()}'))\n")
    root = Path(__file__).resolve().parent.parent
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    # pytest loads the plugin through the entry point where csum's metadata is installed (pip install, or the
    # checkout's egg-info); naming it again with -p would register it twice
    found = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; print(any(e.value == "
                            "'csum.pytest_plugin' for e in m.entry_points(group='pytest11')))"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True).stdout.strip()
    load = [] if found == "True" else ["-p", "csum.pytest_plugin"]
    run = subprocess.run([sys.executable, "-m", "pytest", *load, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                          str(test)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 1, run.stdout[-2000:]
    assert "cause byte-order" in run.stdout

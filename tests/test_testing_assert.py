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

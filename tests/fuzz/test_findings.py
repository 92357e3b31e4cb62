"""What the fuzz runs found (their inputs are in fuzz/regressions/), each checked against a reference that is not the
code under test: scapy's checksums of the corrected packet.

The fix target found (issue 31 fuzzing, 5 December 2026) that ``csum fix`` wrote a wrong outer UDP checksum on a
GRE-in-UDP packet (RFC 8086) whose GRE checksum was wrong too: GRE stands at UDP's depth, the C fast path corrected
one depth's fields at once, and the UDP checksum was computed over the GRE checksum before its correction.
"""

from __future__ import annotations

import pytest
from scapy.all import GRE, IP, UDP, Ether, IPv6, raw

from csum import engine
from csum.capture import checker, pcap

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _gre_in_udp(outer_ok: bool, gre_ok: bool, inner_ok: bool) -> bytes:
    """IPv6 / UDP 4754 / GRE (checksum, key) / IPv4 / UDP, every checksum by scapy, then the chosen ones made wrong:
    the inner IPv4 destination changed under its checksums, the GRE checksum, the outer UDP checksum."""
    inner = IP(src="172.16.0.1", dst="172.16.0.2") / UDP(sport=53, dport=53) / b"\x11\x40"
    frame = bytearray(raw(ETH / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=50000, dport=4754)
                          / GRE(chksum_present=1, key_present=1) / inner))
    gre_at = 14 + 40 + 8
    if not inner_ok:
        frame[gre_at + 12 + 18] ^= 0x04  # the inner IPv4 destination: its header and UDP checksums wrong, GRE's too
    if not gre_ok:
        frame[gre_at + 4] ^= 0x10
    if not outer_ok:
        frame[14 + 40 + 6] ^= 0x01
    return bytes(frame)


def _scapy_right(frame: bytes) -> bool:
    """Whether every checksum of the frame is what scapy computes (GRE's, both UDP's, the inner IPv4 header's)."""
    packet = Ether(frame)
    again = packet.copy()
    for layer in (again[IPv6][UDP], again[GRE], again[GRE][IP], again[GRE][UDP]):
        del layer.chksum
    rebuilt = Ether(raw(again))
    return [packet[IPv6][UDP].chksum, packet[GRE].chksum, packet[GRE][IP].chksum, packet[GRE][UDP].chksum] == \
        [rebuilt[IPv6][UDP].chksum, rebuilt[GRE].chksum, rebuilt[GRE][IP].chksum, rebuilt[GRE][UDP].chksum]


@pytest.mark.parametrize("c_walker", [True, False], ids=["c", "python"])
@pytest.mark.parametrize("wrong", ["gre", "gre+outer", "inner", "inner+gre", "inner+gre+outer", "outer"])
def test_fix_of_gre_in_udp_leaves_every_checksum_right(wrong: str, c_walker: bool, monkeypatch) -> None:
    """Whatever was wrong, the patched packet has every checksum scapy computes (the GRE checksum corrected before
    the outer UDP one that covers it is judged)."""
    if not c_walker:
        monkeypatch.setattr(engine, "cwalk", None)
    elif engine.cwalk is None:
        pytest.skip("the C walker is not built")
    parts = set(wrong.split("+"))
    frame = _gre_in_udp("outer" not in parts, "gre" not in parts, "inner" not in parts)
    assert not _scapy_right(frame)
    cap = pcap.parse(pcap.to_bytes([frame], 1))
    report = checker.check(cap)
    fixed = pcap.patched(cap, report.patches)
    assert _scapy_right(bytes(fixed[24 + 16 :]))  # past the pcap file header and the record header

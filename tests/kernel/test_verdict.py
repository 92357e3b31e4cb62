"""csum.kernel.verdict: each output checksum judged on its own and against its counterpart, without a kernel.

Expected statuses follow from how scapy builds each pair (a checksum right or wrong by construction, a layer added
or removed, an output that does not parse); return value names are include/uapi/linux/pkt_cls.h's and bpf.h's.
"""

from __future__ import annotations

from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from csum.kernel.verdict import action, judge

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")


def _tcp(src: str = "10.0.0.1", tcp_error: int = 0) -> bytes:
    pkt = Ether(raw(ETHER / IP(src=src, dst="10.0.0.2") / TCP(sport=1, dport=2) / b"data"))
    pkt[TCP].chksum = (pkt[TCP].chksum + tcp_error) & 0xFFFF
    return raw(pkt)


def _statuses(before: bytes, after: bytes) -> list[tuple[str, str]]:
    return [(c.layer, c.status) for c in judge(before, after).checks]


def test_broken_kept_bad_and_ok():
    """Right in and out: ok; right in, wrong out: broken; wrong in and out by the same amount (what an incremental
    update leaves): kept-bad; wrong in, wrong out by another amount: broken."""
    assert _statuses(_tcp(), _tcp("192.0.2.1")) == [("ipv4", "ok"), ("tcp", "ok")]
    assert _statuses(_tcp(), _tcp("192.0.2.1", 1)) == [("ipv4", "ok"), ("tcp", "broken")]
    assert _statuses(_tcp(tcp_error=5), _tcp("192.0.2.1", 5)) == [("ipv4", "ok"), ("tcp", "kept-bad")]
    assert _statuses(_tcp(tcp_error=5), _tcp("192.0.2.1", 6)) == [("ipv4", "ok"), ("tcp", "broken")]


def test_added_and_removed_layers_pair_from_the_inside():
    """An outer IPv4 header added (right or wrong) is judged as added; the inner ones keep their counterparts; a
    removed header is listed."""
    inner = _tcp()[14:]
    good = raw(ETHER / IP(src="198.51.100.1", dst="198.51.100.2", proto=4) / Raw(inner))
    wrong = bytearray(good)
    wrong[24] ^= 1
    judged = judge(_tcp(), good)
    assert [(c.layer, c.status, c.was is None) for c in judged.checks] == [
        ("ipv4", "ok", True), ("ipv4", "ok", False), ("tcp", "ok", False)]
    assert [(c.status, c.was is None) for c in judge(_tcp(), bytes(wrong)).checks][0] == ("broken", True)
    back = judge(good, _tcp())
    assert back.removed == ["ipv4"] and all(c.status == "ok" for c in back.checks)


def test_udp_checksum_cleared_or_lost():
    """A UDP checksum set to 0 on purpose: cleared (not broken); 0 where the sender stores 0xffff (a computed 0 not
    mangled): broken."""
    before = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / b"abc")
    after = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2, chksum=0) / b"abc")
    assert _statuses(before, after)[1] == ("udp", "cleared")
    # a datagram whose checksum computes to 0 (stored 0xffff): payload word chosen so the sum is all ones
    probe = Ether(raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / b"\0\0"))
    payload = probe[UDP].chksum.to_bytes(2, "big")
    zero = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / payload)
    assert Ether(zero)[UDP].chksum == 0xFFFF
    unmangled = bytearray(zero)
    unmangled[40:42] = b"\0\0"
    assert _statuses(zero, bytes(unmangled))[1] == ("udp", "broken")


def test_outputs_that_do_not_parse():
    """Not IP before and after: nothing to judge; an IPv4 output cut short: an error that breaks it; the input cut
    the same way: the error kept, not counted as the program's."""
    arp = raw(ETHER / ARP())
    assert judge(arp, arp) == ([], [], None, False)
    cut = judge(_tcp(), _tcp()[:-4])
    assert cut.error and "does not parse" in cut.error and cut.error_breaks
    assert judge(_tcp()[:-4], _tcp()[:-4]).error_breaks is False
    assert "not IP" in judge(_tcp(), arp).error


def test_actions_and_drops():
    """tc and XDP return values by name; the ones after which the packet goes nowhere are drops."""
    assert action("tc", 0) == ("TC_ACT_OK", False) and action("tc", 2) == ("TC_ACT_SHOT", True)
    assert action("tc", 0xFFFFFFFF) == ("TC_ACT_UNSPEC", False) and action("tc", 4)[1] and action("tc", 7) == (
        "TC_ACT_REDIRECT", False)
    assert action("xdp", 1) == ("XDP_DROP", True) and action("xdp", 0) == ("XDP_ABORTED", True)
    assert action("xdp", 3) == ("XDP_TX", False) and action("xdp", 9) == ("9 (unknown)", True)


def test_verify_frame_is_deprecated_and_still_answers():
    """csum.prog.verify_frame (0.1.0) warns and still gives one check per checksum (scapy built them right)."""
    import pytest

    from csum import prog

    with pytest.warns(DeprecationWarning, match="verify_frame"):
        checks = prog.verify_frame(_tcp())
    assert [(c.layer, c.ok) for c in checks] == [("ipv4", True), ("tcp", True)]

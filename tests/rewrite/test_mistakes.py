"""csum.rewrite.infer, .handwritten and .mistakes without a kernel: packets scapy builds with one known mistake.

Expected values: scapy's from-scratch checksums (what a correct update must equal), arithmetic done by hand for
the hand-written slips (written out in the docstrings), and mistakes known by construction (the test makes the
packet that mistake would leave). The kernel runs of the same catalogue are tests/kernel/test_mistake_table.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from csum.rewrite import FieldChange, rewrite
from csum.rewrite.handwritten import CORRECT, FORMS, Form, update
from csum.rewrite.infer import infer
from csum.rewrite.mistakes import SKB_CSUM, Mistake, added_header, reproduce

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
TCP4 = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2", ttl=9) / TCP(sport=1000, dport=80) / b"payload")


def _scapy(frame: bytes, keep: tuple[type, ...] = (), **ip) -> bytes:
    """scapy's build of ``frame`` with IPv4 fields ``ip`` set, every checksum recomputed but those of ``keep``."""
    pkt = Ether(frame)
    for name, value in ip.items():
        setattr(pkt[IP], name, value)
    for layer in (IP, TCP, UDP, ICMP):
        if layer in pkt and layer not in keep:
            del pkt[layer].chksum
    return raw(pkt)


@settings(max_examples=300)
@given(st.binary(min_size=4, max_size=4), st.binary(min_size=4, max_size=4), st.sampled_from(FORMS))
def test_correct_forms_agree_with_scapy(old, new, form):
    """Any form folded to the end updates the IPv4 header checksum for a source address change to what scapy
    computes for the new header (0x0000 and 0xffff being the same sum)."""
    frame = _scapy(TCP4, src=".".join(map(str, old)))
    want = _scapy(frame, src=".".join(map(str, new)))
    got = update(int.from_bytes(frame[24:26], "little"), old, new, form)
    assert got.to_bytes(2, "little") == want[24:26] or {got, int.from_bytes(want[24:26], "little")} == {0, 0xFFFF}


def test_slips_by_hand():
    """Worked by hand: ~HC = 0xffff, ~old = 0xffffffff (old 0), new 0xffffffff. 64-bit sum 0x2_0000_fffd; one fold
    0xfffd + 0x20000 = 0x2fffd, cut to 16 bits 0xfffd, complemented 0x0002 (folded to the end: 0xffff -> 0x0000).
    A 32-bit accumulator wraps to 0x0000_fffd (two carries lost): folded 0xfffd, complemented 0x0002. The new value
    byte-swapped (ff ff ff ff is its own swap) changes nothing. A 2-byte field 00 01 -> 00 02 (little-endian words
    0x0100 -> 0x0200, zero-extended): 0xffff + 0xfffffeff + 0x0200 = 0x1_0001_00fe, folded 0x0100, complemented
    0xfeff; stored swapped 0xfffe."""
    old, new = bytes(4), b"\xff" * 4
    assert update(0, old, new, CORRECT) == 0x0000
    assert update(0, old, new, Form(folds=1)) == 0x0002
    assert update(0, old, new, Form(acc=32)) == 0x0002
    assert update(0, old, new, swap_new=True) == 0x0000
    assert update(0, b"\x00\x01", b"\x00\x02") == 0xFEFF
    assert update(0, b"\x00\x01", b"\x00\x02", swap_result=True) == 0xFFFE


def test_infer_names_the_change():
    """The change between a packet and scapy's SNAT + port + TTL of it, as a rewrite request that makes it."""
    after = raw(Ether(_scapy(TCP4, src="192.0.2.1", ttl=8)) / b"")
    pkt = Ether(after)
    pkt[TCP].dport = 8080
    del pkt[TCP].chksum
    after = raw(pkt)
    found = infer(TCP4, after)
    assert found.request["saddr"] == bytes([192, 0, 2, 1]) and found.request["decrement_ttl"] is True
    assert found.request["fields"] == [FieldChange(36, (8080).to_bytes(2, "big"))]
    assert rewrite(TCP4, link="ethernet", **found.request).packet == after
    assert infer(TCP4, TCP4 + b"\0").request is None and "length" in infer(TCP4, TCP4 + b"\0").reason
    assert infer(TCP4, TCP4).request is None and "nothing but checksum" in infer(TCP4, TCP4).reason


def test_reproduce_l4_not_patched_and_correct():
    """scapy's SNAT with the TCP checksum left as it was: L4_NOT_PATCHED on the TCP field (XDP); the right SNAT:
    reproduced by the correct update (nothing to blame)."""
    broken = _scapy(TCP4, keep=(TCP,), src="192.0.2.1")
    finding = reproduce(TCP4, broken, kind="xdp")
    assert finding.mistakes == (Mistake.L4_NOT_PATCHED,) and finding.fields == {50: (Mistake.L4_NOT_PATCHED,)}
    right = reproduce(TCP4, _scapy(TCP4, src="192.0.2.1"), kind="xdp")
    assert right.mistakes == () and "correct update" in right.note


def test_reproduce_skb_csum_only_mistakes_need_evidence():
    """Right bytes and a stale skb->csum on a tc SNAT: without the program's calls csum names every mistake that
    reproduces it; with them (bpf_l4_csum_replace called with flags 0 and 0x20, l3 and store called) only the
    missing BPF_F_PSEUDO_HDR."""
    after = _scapy(TCP4, src="192.0.2.1")
    loose = reproduce(TCP4, after, kind="tc", stale=True)
    assert Mistake.PSEUDO_HDR_MISSING in loose.mistakes and len(loose.mistakes) > 1
    calls = {"bpf_l4_csum_replace": frozenset({0, 0x20}), "bpf_l3_csum_replace": frozenset({0}),
             "bpf_skb_store_bytes": frozenset({0}), "bpf_csum_diff": frozenset({0})}
    exact = reproduce(TCP4, after, kind="tc", stale=True, evidence=calls)
    assert exact.mistakes == (Mistake.PSEUDO_HDR_MISSING,) and exact.fields == {SKB_CSUM: exact.mistakes}
    assert reproduce(TCP4, after, kind="tc", stale=False, evidence=calls).mistakes == ()


def test_reproduce_outer_not_carried():
    """An ICMP error whose quoted source and quoted checksums scapy rewrote, the ICMP checksum kept: the enclosing
    checksum not carried."""
    quote = IP(src="10.0.0.2", dst="10.0.0.1") / TCP(sport=80, dport=1000)
    before = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=3, code=1) / Raw(raw(quote)))
    quote.src = "192.0.2.1"
    del quote[IP].chksum, quote[TCP].chksum
    pkt = Ether(before)
    pkt[ICMP].remove_payload()
    after = raw(pkt / Raw(raw(quote)))
    assert reproduce(before, after, kind="xdp").mistakes == (Mistake.OUTER_NOT_CARRIED,)


def test_reproduce_says_when_nothing_reproduces():
    """A checksum set to a value no modelled mistake gives: no mistake named, the note says so."""
    after = bytearray(_scapy(TCP4, src="192.0.2.1"))
    after[50:52] = b"\x12\x34"
    finding = reproduce(TCP4, bytes(after), kind="xdp")
    assert finding.mistakes == () and "no simulated mistake" in finding.note


def test_added_header_checksum_computed_early():
    """An outer IPv4 header whose checksum scapy computed while the total length was 0 (then set): reproduced as
    HEADER_FIELD_LATE naming the total length; one left 0: HEADER_CSUM_UNSET; a right one: nothing."""
    inner = IP(src="10.0.0.1", dst="10.0.0.2") / TCP() / b"x"
    early = IP(src="198.51.100.1", dst="198.51.100.2", proto=4, len=0)
    check = IP(raw(early)).chksum
    frame = raw(ETHER / IP(src="198.51.100.1", dst="198.51.100.2", proto=4, len=20 + len(inner), chksum=check) / inner)
    finding = added_header(frame, 14)
    assert finding.mistakes == (Mistake.HEADER_FIELD_LATE,) and "the total length still 0" in finding.note
    unset = raw(ETHER / IP(src="198.51.100.1", dst="198.51.100.2", proto=4, chksum=0) / inner)
    assert added_header(unset, 14).mistakes == (Mistake.HEADER_CSUM_UNSET,)
    right = raw(ETHER / IP(src="198.51.100.1", dst="198.51.100.2", proto=4) / inner)
    assert added_header(right, 14).mistakes == ()


@pytest.mark.parametrize("seed", range(3))
def test_random_port_change_byte_order_slip(seed):
    """A port set in network order but summed byte-swapped (the value a host-order constant gives): scapy's packet
    with the checksum computed for the swapped port is reproduced as BYTE_ORDER (XDP)."""
    r = random.Random(seed)
    port = r.randrange(1, 0xFFFF)
    swapped = int.from_bytes(port.to_bytes(2, "big"), "little")
    as_summed = Ether(TCP4)
    as_summed[TCP].dport = swapped
    del as_summed[TCP].chksum
    check = Ether(raw(as_summed))[TCP].chksum
    after = Ether(TCP4)
    after[TCP].dport, after[TCP].chksum = port, check
    if swapped == port:
        pytest.skip("a port that is its own byte swap")
    assert Mistake.BYTE_ORDER in reproduce(TCP4, raw(after), kind="xdp").mistakes

"""csum.explain.program (what csum prog names beyond csum.rewrite's reproduction) on packets scapy builds, each
mistake made with tests/oracle.py's naive RFC 1071 arithmetic or scapy's own checksum code, never csum's: the change
inferred across a resize, the from-scratch slips, a translation's mistakes over many random packets (the BPF
programs of tests/kernel/test_prog_explained.py make them on the running kernel, both ways)."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import ones_sum16, rfc1071_checksum
from scapy.compat import raw
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from csum.explain.program import align, explain_program

ETH = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
N = 200


def _a4(r: random.Random) -> str:
    return ".".join(str(r.randrange(1, 255)) for _ in range(4))


def _a6(r: random.Random) -> str:
    return ":".join(f"{r.randrange(65536):x}" for _ in range(8))


def _segment(r: random.Random) -> TCP | UDP:
    layer = r.choice([TCP, UDP])(sport=r.randrange(65536), dport=r.randrange(65536))
    return layer / r.randbytes(r.randrange(1, 40))


def _with_check(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + value.to_bytes(2, "big") + frame[at + 2:]


def _l4_check_at(frame: bytes) -> int:
    pkt = Ether(frame)
    layer = pkt[TCP] if TCP in pkt else pkt[UDP]
    return len(frame) - len(raw(layer)) + (16 if isinstance(layer, TCP) else 6)


def test_align_kinds():
    """The change named across a resize: an IP-in-IP header or a VLAN tag added (pushed), removed (popped), IPv4 <->
    IPv6 with the same segment (translated); expected: how scapy built the pair."""
    r = random.Random(1)
    inner = IP(src=_a4(r), dst=_a4(r)) / TCP(sport=1, dport=2) / b"data"
    plain, tunnelled = raw(ETH / inner), raw(ETH / IP(src=_a4(r), dst=_a4(r), proto=4) / inner)
    assert align(plain, tunnelled).kind == "pushed"
    assert align(tunnelled, plain).kind == "popped"
    assert align(plain, plain).kind == "same"
    tagged = raw(ETH / Dot1Q(vlan=7) / inner)
    assert align(plain, tagged).kind == "pushed"
    assert align(tagged, plain).kind == "popped"
    v6 = raw(ETH / IPv6(src=_a6(r), dst=_a6(r)) / TCP(sport=1, dport=2) / b"data")
    assert align(plain, v6).kind == "translated"
    assert align(v6, plain).kind == "translated"
    assert align(plain, raw(ETH / IPv6(src=_a6(r), dst=_a6(r)) / TCP(sport=1, dport=2) / b"other bytes")).kind \
        == "unknown"


def test_vlan_pushed_ttl():
    """A VLAN tag pushed and the TTL decremented without the header checksum's update (the TTL byte lowered in
    scapy's frame, its checksum left): ttl-not-updated, the change named in the detail."""
    r = random.Random(2)
    for _ in range(20):
        inner = IP(src=_a4(r), dst=_a4(r), ttl=r.randrange(2, 256)) / _segment(r)
        before = raw(ETH / inner)
        after = bytearray(raw(ETH / Dot1Q(vlan=7) / inner))
        after[18 + 8] -= 1
        got = explain_program(before, bytes(after))[18 + 10]
        assert [c for c, _ in got] == ["ttl-not-updated"], got
        assert "4 bytes of headers added" in got[0][1]


def test_grown_length_not_updated():
    """A packet grown by payload bytes with its IPv4 total length updated and the header checksum left (scapy builds
    both; the input's checksum copied): tot-len-not-updated, the length named."""
    r = random.Random(3)
    for _ in range(20):
        seg = _segment(r)
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / seg)
        old = Ether(before)[IP]
        grown = ETH / IP(src=old.src, dst=old.dst, proto=old.proto, chksum=old.chksum) \
            / Raw(raw(seg) + r.randbytes(4))
        got = explain_program(before, raw(grown))[24]
        assert [c for c, _ in got] == ["tot-len-not-updated"], got


def _translated_6to4(r: random.Random) -> tuple[bytes, bytes, bytes, bytes, int]:
    """(before: IPv6, after: the same segment under IPv4 with scapy's right checksum, the old and new address
    bytes, the IPv6 checksum the segment had)."""
    seg = _segment(r)
    v6 = IPv6(src=_a6(r), dst=_a6(r)) / seg
    before = raw(ETH / v6)
    old_check = Ether(before)[seg.__class__].chksum
    v4 = IP(src=_a4(r), dst=_a4(r)) / seg.__class__(raw(Ether(before)[seg.__class__]))
    del v4[seg.__class__].chksum
    after = raw(ETH / v4)
    pkt6, pkt4 = Ether(before)[IPv6], Ether(after)[IP]
    old = raw(pkt6)[8:40]
    new = raw(pkt4)[12:20]
    return before, after, old, new, old_check


@pytest.mark.parametrize("cause", ["l4-not-patched", "diff-size-wrong"])
def test_translated_6to4(cause):
    """IPv6 -> IPv4: the checksum left with the IPv6 pseudo-header (the segment's stored IPv6 checksum kept), or
    moved by bpf_csum_diff(old, 8, new, 8): only the first 8 bytes of the IPv6 addresses taken out (RFC 1624 eqn. 3
    with the oracle's sums); expected cause: the one made, on every packet the mistake changes, alone on at least 99%
    of them (another simulated mistake may give the same 16 bits: both are listed)."""
    r = random.Random(cause)
    named = alone = 0
    for _ in range(N):
        before, after, old, new, old_check = _translated_6to4(r)
        at = _l4_check_at(after)
        if cause == "l4-not-patched":
            stored = old_check
        else:  # ~(~old_check + new - old[:8]), one's complement
            total = ones_sum16((~old_check & 0xFFFF).to_bytes(2, "big") + new)
            total = ones_sum16(total.to_bytes(2, "big") + (~ones_sum16(old[:8]) & 0xFFFF).to_bytes(2, "big"))
            stored = ~total & 0xFFFF
        right = int.from_bytes(after[at:at + 2], "big")
        if stored in (right, 0, 0xFFFF) or {stored, right} == {0, 0xFFFF}:
            continue
        got = [c for c, _ in explain_program(before, _with_check(after, at, stored))[at]]
        assert cause in got, (before.hex(), got)
        named += 1
        alone += got == [cause]
    assert named > N * 0.9 and alone >= 0.99 * named, (named, alone)


def _scratch(cause: str, pseudo: bytes, seg: bytes) -> int:
    """The checksum a loop stores with the mistake ``cause`` (the segment's checksum field zeroed)."""
    if cause == "no-pseudo-header":
        return rfc1071_checksum(seg)
    if cause == "not-complemented":
        return ones_sum16(pseudo + seg)
    if cause == "odd-byte-dropped":
        return rfc1071_checksum(pseudo + seg[:-1])
    # single-fold, as csum_tcpudp_nofold adds the pseudo-header: the addresses as 32-bit words, loaded on a
    # little-endian CPU, the rest as 16-bit words, in a 64-bit sum folded once and stored as 16 bits
    data = pseudo[8:] + seg + b"\0" * (len(seg) & 1)
    total = sum(struct.unpack("<2I", pseudo[:8])) + sum(struct.unpack(f"<{len(data) // 2}H", data))
    once = (total & 0xFFFF) + (total >> 16)
    return int.from_bytes((~once & 0xFFFF).to_bytes(2, "little"), "big")


@pytest.mark.parametrize("cause", ["no-pseudo-header", "not-complemented", "odd-byte-dropped", "single-fold"])
def test_scratch(cause):
    """A TCP/UDP checksum computed from scratch with one slip, by the oracle's arithmetic; the packet before is
    the same one with scapy's right checksum. Expected: the slip's cause named on every field it changes, alone on at
    least 99% of them."""
    r = random.Random(cause)
    alone = tried = 0
    for _ in range(N):
        seg = _segment(r)
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / seg)
        if cause == "odd-byte-dropped" and (len(raw(seg)) % 2 == 0 or before[-1] == 0):
            continue
        at = _l4_check_at(before)
        pkt = Ether(before)[IP]
        l4 = bytearray(raw(pkt.payload))
        l4[at - 34:at - 32] = b"\0\0"
        pseudo = raw(pkt)[12:20] + bytes([0, pkt.proto]) + len(l4).to_bytes(2, "big")
        stored = _scratch(cause, pseudo, bytes(l4))
        if UDP in pkt and stored == 0:
            stored = 0xFFFF
        right = int.from_bytes(before[at:at + 2], "big")
        if stored == right or {stored, right} == {0, 0xFFFF}:
            continue
        tried += 1
        got = [c for c, _ in explain_program(before, _with_check(before, at, stored))[at]]
        assert cause in got, (before.hex(), got)
        # a 64-bit sum folded once loses the carries a 32-bit one loses: the same bytes, both listed
        alone += got == [cause] or (cause == "single-fold" and sorted(got) == ["carry-lost", "single-fold"])
    assert tried > N // 4 and alone >= 0.99 * tried, (alone, tried)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 3), st.binary(max_size=24), st.integers(0, 120))
def test_any_pair_is_judged_without_error(seed, kind, junk, cut):
    """Any input/output pair (a packet, the same one truncated, grown by junk, tunnelled, translated, with a byte
    changed) gives an answer per wrong field, never an exception: csum prog calls this for every broken packet.
    Expected: only that the call returns a mapping of tuples (there is no value to compare)."""
    r = random.Random(seed)
    seg = _segment(r)
    before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / seg)
    after = [before[:cut] + junk, raw(ETH / IP(src=_a4(r), dst=_a4(r), proto=4) / Ether(before)[IP]) + junk,
             raw(ETH / IPv6(src=_a6(r), dst=_a6(r), nh=Ether(before)[IP].proto) / raw(Ether(before)[IP].payload)) + junk,
             before[:cut] + bytes([r.randrange(256)]) + before[cut + 1:]][kind]
    got = explain_program(before, after)
    assert all(isinstance(v, tuple) for v in got.values())
    got = explain_program(after, before)
    assert all(isinstance(v, tuple) for v in got.values())
    bad = before[:cut] + bytes(4) + before[cut + 4:]  # a wrong checksum or a broken header; the input not IP
    got = explain_program(raw(Ether(type=0x0806)) + junk, bad)
    assert all(isinstance(v, tuple) for v in got.values())

"""csum.explain.changes through csum.explain.program (what csum prog names from the input and output side by side) on
packet pairs scapy builds, each mistake made with tests/oracle.py's naive RFC 1071 arithmetic, never csum's: an
update seeded with the old checksum, a covered field changed without an update, one address of two left stale, a
header summed short, a grown header updated in part. No kernel needed: the BPF programs of
tests/kernel/test_prog_explained_patterns.py make the same mistakes on the running kernel."""

from __future__ import annotations

import random

import pytest
from oracle import ones_sum16, rfc1071_checksum
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

from csum.explain.program import explain_program

ETH = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
N = 200


def _a4(r: random.Random) -> str:
    return ".".join(str(r.randrange(1, 255)) for _ in range(4))


def _with(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + value.to_bytes(2, "big") + frame[at + 2:]


def _check(frame: bytes, at: int) -> int:
    return int.from_bytes(frame[at:at + 2], "big")


def _nat_pair(r: random.Random) -> tuple[bytes, bytes, int]:
    """A TCP or UDP packet and the same one with both addresses rewritten (scapy's checksums): (before, after,
    the L4 checksum's offset)."""
    layer = r.choice([TCP, UDP])
    seg = layer(sport=r.randrange(1, 65536), dport=r.randrange(1, 65536)) / r.randbytes(r.randrange(1, 40))
    src, dst = _a4(r), _a4(r)
    before = raw(ETH / IP(src=src, dst=dst) / seg)
    after = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / layer(raw(seg)[:6 if layer is UDP else 16] + b"\0\0"
                                                         + raw(seg)[8 if layer is UDP else 18:]))
    return before, after, 34 + (6 if layer is UDP else 16)


def _causes(before: bytes, after: bytes, at: int) -> list[str]:
    return [c for c, _ in explain_program(before, after).get(at, ())]


def test_seed_not_complemented():
    """RFC 1624 eqn. 3 with HC in place of ~HC: ~(HC + ~m + m') over the address words (the oracle's one's
    complement sums); expected: seed-not-complemented on every field it breaks, alone on at least 99% of them."""
    r = random.Random(1)
    tried = alone = 0
    for _ in range(N):
        before, after, at = _nat_pair(r)
        old = before[26:34]
        new = after[26:34]
        total = ones_sum16(before[at:at + 2] + (~ones_sum16(old) & 0xFFFF).to_bytes(2, "big") + new)
        stored = ~total & 0xFFFF
        right = _check(after, at)
        if stored in (right, 0) or {stored, right} == {0, 0xFFFF}:
            continue
        got = _causes(before, _with(after, at, stored), at)
        assert "seed-not-complemented" in got, (before.hex(), got)
        tried += 1
        alone += got == ["seed-not-complemented"]
    assert tried > N * 0.9 and alone >= 0.99 * tried, (tried, alone)


@pytest.mark.parametrize("stale", [26, 30])
def test_one_address_stale(stale):
    """Both addresses rewritten, the L4 checksum the oracle's over the pseudo-header with one address as before;
    expected: l4-not-patched, alone on at least 99%."""
    r = random.Random(stale)
    tried = alone = 0
    for _ in range(N):
        before, after, at = _nat_pair(r)
        addresses = bytearray(after[26:34])
        addresses[stale - 26:stale - 22] = before[stale:stale + 4]
        seg = bytearray(after[34:])
        seg[at - 34:at - 32] = b"\0\0"
        stored = rfc1071_checksum(bytes(addresses) + bytes([0, after[23]]) + len(seg).to_bytes(2, "big") + seg)
        if after[23] == 17 and stored == 0:
            stored = 0xFFFF
        if stored == _check(after, at):
            continue
        got = _causes(before, _with(after, at, stored), at)
        assert "l4-not-patched" in got, (before.hex(), got)
        tried += 1
        alone += got == ["l4-not-patched"]
    assert tried > N * 0.9 and alone >= 0.99 * tried, (tried, alone)


def test_icmp_type_not_updated():
    """An echo request turned into a reply (type 8 -> 0), the checksum left as the request's; expected:
    l4-field-not-updated, naming byte 0."""
    r = random.Random(3)
    for _ in range(50):
        payload = r.randbytes(r.randrange(0, 30))
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / ICMP(type=8, id=r.randrange(65536)) / payload)
        after = bytearray(before)
        after[34] = 0
        got = explain_program(before, bytes(after))[36]
        assert [c for c, _ in got] == ["l4-field-not-updated"], got
        assert "byte 0 " in got[0][1]


def test_ipv4_header_short():
    """A header with options (Router Alert) and its checksum the oracle's over the first 20 bytes; expected:
    coverage-short."""
    r = random.Random(4)
    for _ in range(50):
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r), options=b"\x94\x04\x00\x00", ttl=r.randrange(2, 255))
                     / UDP(sport=1, dport=2) / b"x")
        header = bytearray(before[14:34])
        header[8] -= 1
        header[10:12] = b"\0\0"
        after = bytes(before[:14] + header + before[34:])
        stored = rfc1071_checksum(bytes(header))
        got = _causes(before, _with(after, 24, stored), 24)
        assert "coverage-short" in got, got


def test_udp6_zero():
    """A UDP-over-IPv6 header with checksum 0 (none); expected: udp6-zero."""
    r = random.Random(5)
    before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / TCP() / b"inner")
    after = raw(Ether(src=ETH.src, dst=ETH.dst) / IPv6(src="fc00::1", dst="fc00::2") / UDP(sport=1, dport=6080, chksum=0)
                / Ether(before)[IP])
    [(cause, detail)] = explain_program(before, after)[54 + 6]
    assert cause == "udp6-zero"
    # RFC 8200 8.1 requires the checksum except for a tunnel in zero-checksum mode (RFC 6935): the text says so
    assert "unless" in detail and "RFC 6935" in detail, detail


def test_udp6_zero_on_a_tunnel_port():
    """The same header on VXLAN's port 4789 (a tunnel port csum walks): a zero checksum there is allowed (RFC 6935,
    the inner packet carries its own); expected: not wrong, nothing to explain."""
    r = random.Random(5)
    inner = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / TCP() / b"inner")
    before = raw(Ether(src=ETH.src, dst=ETH.dst) / IPv6(src="fc00::1", dst="fc00::2") / UDP(sport=1, dport=4789)
                 / VXLAN(vni=1) / Ether(inner))
    after = before[:54 + 6] + b"\0\0" + before[54 + 8:]
    assert 54 + 6 not in explain_program(before, after)


def test_grown_header_without_length():
    """A Router Alert option inserted after a 20-byte header, the checksum the oracle's over the grown header with
    the total length as before; expected: tot-len-not-updated on every packet, alone on at least 90% (a 16-bit loop
    on a little-endian CPU that lost as many carries as the length grew by 256ths stores the same bytes: both are
    named)."""
    r = random.Random(6)
    alone = 0
    for _ in range(N):
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / UDP(sport=1, dport=2) / r.randbytes(r.randrange(1, 30)))
        pkt = Ether(before)
        pkt[IP].options = b"\x94\x04\x00\x00"
        del pkt[IP].ihl, pkt[IP].len, pkt[IP].chksum
        after = raw(pkt)
        header = bytearray(after[14:38])
        header[2:4] = before[16:18]
        header[10:12] = b"\0\0"
        got = _causes(before, _with(after, 24, rfc1071_checksum(bytes(header))), 24)
        assert "tot-len-not-updated" in got, (before.hex(), got)
        alone += got == ["tot-len-not-updated"]
    assert alone >= 0.9 * N, alone


def test_random_checksums_rarely_named():
    """Same-layout NAT pairs whose L4 checksum is a random value: a specific cause on at most 1% (a simulated mistake
    may hit a random value by chance)."""
    r = random.Random(7)
    named = 0
    for _ in range(N):
        before, after, at = _nat_pair(r)
        stored = r.randrange(1, 0xFFFF)
        if stored == _check(after, at):
            continue
        named += bool(_causes(before, _with(after, at, stored), at))
    assert named <= N // 100, named


def _icmp_error_pair(r: random.Random) -> tuple[bytes, bytes]:
    """An ICMP error quoting a TCP or UDP datagram, and the same one after a reverse SNAT of the quote's source address
    and port, every checksum right (scapy's, the quoted ones included): (before, after)."""
    layer = r.choice([TCP, UDP])
    outer = IP(src=_a4(r), dst=_a4(r))
    icmp = ICMP(type=r.choice([3, 11]), code=0)
    seg = layer(sport=r.randrange(1, 65536), dport=r.randrange(1, 65536)) / r.randbytes(r.randrange(0, 30))
    dst = _a4(r)
    before = raw(ETH / outer / icmp / IP(src=_a4(r), dst=dst) / seg)
    seg.sport = r.randrange(1, 65536)
    after = raw(ETH / outer / icmp / IP(src=_a4(r), dst=dst) / seg)
    return before, after


def _icmp_with(before: bytes, after: bytes, kept: list[tuple[int, int]]) -> int:
    """The oracle's ICMP checksum of ``after`` with the [start, end) ranges ``kept`` of the message as ``before``
    has them (an update that left those changes out)."""
    message = bytearray(after[34:])
    for a, b in kept:
        message[a - 34:b - 34] = before[a:b]
    message[2:4] = b"\0\0"
    return rfc1071_checksum(bytes(message))


@pytest.mark.parametrize("kept", ["port", "checksums"])
def test_icmp_error_carried_in_part(kept):
    """An ICMP error's checksum updated for the quote's changes but one: the quoted source port (bytes 62..63), or
    the quoted checksums' own changes (the IPv4 header's at 52, the TCP/UDP one's); expected: outer-not-carried."""
    r = random.Random(8)
    tried = 0
    for _ in range(N):
        before, after = _icmp_error_pair(r)
        l4 = 62 + (16 if after[51] == 6 else 6)
        ranges = [(62, 64)] if kept == "port" else [(52, 54), (l4, l4 + 2)]
        stored = _icmp_with(before, after, ranges)
        if stored == _check(after, 36):
            continue
        tried += 1
        assert _causes(before, _with(after, 36, stored), 36) == ["outer-not-carried"], before.hex()
    assert tried > N * 0.9, tried


def test_option_after_nop_window_short():
    """A SYN's MSS after a NOP (its value at bytes 23..24 of the segment) clamped, the checksum the oracle's with
    byte 24 as before (a bpf_csum_diff over the aligned word of bytes 20..23 only); expected: diff-size-wrong on
    every packet, alone on at least 97%: where the old MSS's low byte is one or two below the clamp's (0x14), the value
    is that many off the right one in the little-endian view, as a sum folded once or one that lost carries is, and
    both are named. The MSS is at
    least 1536: its high byte changes too (else byte 24 is all of the change: l4-field-not-updated says it)."""
    r = random.Random(9)
    tried = alone = 0
    for _ in range(N):
        syn = TCP(flags="S", sport=r.randrange(65536), dport=r.randrange(65536),
                  options=[("NOP", None), ("MSS", r.randrange(1536, 65536)), ("WScale", 7)])
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / syn / r.randbytes(r.randrange(0, 20)))
        pkt = Ether(before)
        pkt[TCP].options = [("NOP", None), ("MSS", 1300), ("WScale", 7)]
        del pkt[TCP].chksum
        after = raw(pkt)
        seg = bytearray(after[34:])
        seg[24] = before[34 + 24]
        seg[16:18] = b"\0\0"
        stored = rfc1071_checksum(after[26:34] + bytes([0, 6]) + len(seg).to_bytes(2, "big") + seg)
        if stored == _check(after, 50):
            continue
        got = _causes(before, _with(after, 50, stored), 50)
        assert "diff-size-wrong" in got, (before.hex(), got)
        tried += 1
        alone += got == ["diff-size-wrong"]
    assert tried > N * 0.9 and alone >= 0.97 * tried, (tried, alone)


def test_icmpv6_to_icmp_pseudo_header_kept():
    """An ICMPv6 echo request translated to an ICMP echo request (RFC 7915 5.1: type 128 -> 8, the addresses' last 4
    bytes), the ICMP checksum the oracle's over the message and the ICMPv6 pseudo-header (RFC 8200 8.1) of the
    packet before; expected: l4-not-patched."""
    r = random.Random(10)
    for _ in range(50):
        src, dst = (f"2001:db8:64::{r.randrange(65536):x}:{r.randrange(65536):x}" for _ in range(2))
        data = r.randbytes(r.randrange(0, 30))
        ident, seq = r.randrange(65536), r.randrange(65536)
        before = raw(ETH / IPv6(src=src, dst=dst) / ICMPv6EchoRequest(id=ident, seq=seq, data=data))
        after = raw(ETH / IP(src=_last4(before, 22), dst=_last4(before, 38)) / ICMP(type=8, id=ident, seq=seq) / data)
        message = bytearray(after[34:])
        message[2:4] = b"\0\0"
        pseudo = before[22:54] + len(message).to_bytes(4, "big") + bytes([0, 0, 0, 58])
        stored = rfc1071_checksum(pseudo + bytes(message))
        got = _causes(before, _with(after, 36, stored), 36)
        assert got == ["l4-not-patched"], (before.hex(), got)


def _last4(frame: bytes, at: int) -> str:
    """The last 4 bytes of the IPv6 address at ``at`` as an IPv4 address."""
    return ".".join(str(b) for b in frame[at + 12:at + 16])


def test_random_icmp_error_checksums_rarely_named():
    """ICMP error pairs whose ICMP checksum is a random value: a specific cause on at most 1%."""
    r = random.Random(11)
    named = 0
    for _ in range(N):
        before, after = _icmp_error_pair(r)
        stored = r.randrange(1, 0xFFFF)
        if stored != _check(after, 36):
            named += bool(_causes(before, _with(after, 36, stored), 36))
    assert named <= N // 100, named


def test_icmp_error_over_its_header_alone():
    """An ICMP error made from a TCP/UDP packet (its IPv4 header and 8 bytes quoted, RFC 792), the ICMP checksum the
    oracle's over the 8-byte ICMP header alone; expected: coverage-short."""
    r = random.Random(12)
    tried = 0
    for _ in range(N):
        quote = raw(IP(src=_a4(r), dst=_a4(r)) / r.choice([TCP, UDP])(sport=r.randrange(65536)) / r.randbytes(8))
        before = raw(ETH / IP(quote))
        after = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / ICMP(type=3, code=4, nexthopmtu=1400) / quote[:28])
        header = bytearray(after[34:42])
        header[2:4] = b"\0\0"
        stored = rfc1071_checksum(bytes(header))
        if stored == _check(after, 36):
            continue
        tried += 1
        assert _causes(before, _with(after, 36, stored), 36) == ["coverage-short"], before.hex()
    assert tried > N * 0.9, tried


def test_udp_tunnel_length_late():
    """An outer IPv4 + UDP pushed in front of a packet (port 5555, which csum does not walk into), the UDP checksum
    the oracle's over the pseudo-header (its length right) and the UDP header with its length still 0; expected:
    header-field-late, and length-wrong, which stores the same bytes (a pseudo-header length of 0)."""
    r = random.Random(13)
    for _ in range(50):
        before = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / TCP(sport=r.randrange(65536)) / r.randbytes(r.randrange(30)))
        after = raw(ETH / IP(src=_a4(r), dst=_a4(r)) / UDP(sport=40000, dport=5555) / Ether(before)[IP])
        seg = bytearray(after[34:])
        seg[4:8] = bytes(4)
        stored = rfc1071_checksum(after[26:34] + bytes([0, 17]) + len(seg).to_bytes(2, "big") + seg)
        got = _causes(before, _with(after, 40, stored or 0xFFFF), 40)
        assert sorted(got) == ["header-field-late", "length-wrong"], (before.hex(), got)

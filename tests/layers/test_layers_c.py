"""The C walker (csum/engine/_cwalk.c via csum/layers/accel.py) against the reference: csum.layers.walk + evaluate.

Every expected value here comes from the Python walker and csum/layers/check.py (the reference
implementation, itself tested against scapy and tshark in tests/layers/test_layers.py and
tests/capture/test_verify_jsonl.py) or, for the packets built below, from scapy's own checksums. Each
test compares all nine fields of every :class:`Result` (``field``, ``path`` and ``depth`` are
left out of ``Result.__eq__``, so the tests compare tuples).
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Callable

import pytest
from captures import epb, idb, python_report, shb
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scapy.all import GRE, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPOption_NOP, IPOption_Router_Alert, IPv6, Raw, fragment, raw
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.layers.inet6 import (
    HAO,
    ICMPv6DestUnreach,
    ICMPv6EchoRequest,
    ICMPv6PacketTooBig,
    ICMPv6ParamProblem,
    ICMPv6TimeExceeded,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    IPv6ExtHdrSegmentRouting,
    fragment6,
)
from scapy.layers.vxlan import VXLAN

from csum import engine
from csum.capture import checker, pcap
from csum.capture.checker import check
from csum.errors import CsumValueError
from csum.layers import accel, inet, verify_stack, walk
from csum.layers.check import Result
from csum.testing import buffers, frames

pytestmark = pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")

_FIELDS = Result.__slots__


def _row(r: Result) -> tuple:
    return tuple(getattr(r, name) for name in _FIELDS)


def _python(frame: bytes, link: object) -> list[tuple] | str:
    """The reference: the Python walker + evaluate (what inet.verify answers without C), or the error code."""
    view = memoryview(frame)
    try:
        return [_row(r) for r in verify_stack(view, walk(view, link, strict=True).fields)]
    except CsumValueError as exc:
        return exc.code


def _ones(data: bytes) -> int:
    """RFC 1071 section 4.1's sum, folded (a test-side copy; the oracle for the offload values below)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


@st.composite
def _mutated(draw) -> tuple[int, bytes, bool]:
    """A csum.testing.frames stack, maybe with one checksum field set to 0, 0xffff or transmit offload's
    pseudo-header sum (with the length or 0), and up to three bytes flipped (the last item: whether any was)."""
    link, frame = draw(frames(max_payload=60))
    data = bytearray(frame)
    fields = walk(memoryview(frame), link).fields
    if fields and draw(st.booleans()):
        f = draw(st.sampled_from(fields))
        if f.at is not None:
            values = [0, 0xFFFF]
            if f.pseudo is not None:
                src, dst, size, length, proto = f.pseudo
                addresses = frame[src : src + size] + frame[dst : dst + size]
                values += [_ones(addresses + bytes([0, proto]) + length.to_bytes(4, "big")),
                           _ones(addresses + bytes([0, proto]))]
            data[f.at : f.at + 2] = draw(st.sampled_from(values)).to_bytes(2, "big")
    flips = draw(st.lists(st.integers(0, len(data) - 1), max_size=3))
    for at in flips:
        data[at] ^= draw(st.sampled_from((0x01, 0x40, 0xFF)))
    return link, bytes(data), bool(flips)


_NEG_ZERO = (b"\x02" * 12 + b"\x08\x00" + bytes.fromhex("450000220000000040017cd97f0000017f000001")
             + b"\x08\x00\xff\xff\xf7\xff" + b"\0" * 8)


#: What the C walker judges: its layers, path parts (csum/engine/_cwalk_table.h, from the table) and reasons.
_C_LAYERS = set(engine.cwalk.LAYERS[1:]) if engine.cwalk is not None else set()
_C_PARTS = _C_LAYERS | {"vlan", "ipv6", "vxlan", "eth", "erspan", "raw", "mpls", "pppoe", "ppp", "ah", "gtp", "geneve"}
_C_REASONS = {"ok", "mismatch", "negative-zero", "offload", "udp-no-checksum", "udp6-zero-checksum", "udp6-zero-tunnel",
              "partial-quote"}


def _c_walks(rows: list[tuple] | str, frame: bytes, link: object) -> bool:
    """Whether the Python walker's answer is made only of what the C walker walks: its layers, its path parts, its
    reasons (so no fragment, no ICMP error quote, no UDP without a checksum, nothing malformed), and no layer the
    walker gave up on (a note)."""
    index = {name: k for k, name in enumerate(_FIELDS)}
    return not isinstance(rows, str) and bool(rows) and not walk(memoryview(frame), link).notes and all(
        row[index["layer"]] in _C_LAYERS and row[index["reason"]] in _C_REASONS
        and set(row[index["path"]].split("/")) <= _C_PARTS for row in rows)


def test_c_results_equal_the_walker():
    """Differential, all nine fields: wherever the C walker answers, its Results are the Python walker's, on
    generated stacks (VLAN/QinQ, MPLS, options, extension headers, IP-in-IP, GRE, VXLAN; TCP, UDP, UDP-Lite,
    ICMP/ICMPv6) with fields set to 0 / 0xffff / the offload value and bytes flipped, link given or "auto".
    And C must answer: for every stack the Python walker finds made only of what C walks, unless a byte flip
    moved it outside C's reach (a source route option, a UDP length ...), and for at least a third of all stacks
    (the floor: a C walker that declined everything would pass the differential alone)."""
    seen = {"all": 0, "answered": 0, "flipped walkable": 0, "flipped walkable answered": 0}

    @given(case=_mutated(), auto=st.booleans())
    @example(case=(1, _NEG_ZERO, False), auto=True)
    def check(case, auto):
        link, frame, flipped = case
        got = engine.cwalk.verify(frame, -1 if auto else link)
        ref = _python(frame, "auto" if auto else link)
        walkable = _c_walks(ref, frame, "auto" if auto else link)
        seen["all"] += 1
        seen["answered"] += got is not None
        seen["flipped walkable"] += walkable and flipped
        seen["flipped walkable answered"] += walkable and flipped and got is not None
        if got is not None:
            assert [_row(r) for r in got] == ref
        else:
            assert not walkable or flipped, f"the C walker declined a stack it walks: {ref}"

    check()
    assert seen["answered"] >= seen["all"] // 3, seen
    # declined walkable stacks are flipped ones only (asserted per example above); how many of those a byte flip moves
    # out of C's reach varies with the sample, and in clusters (Hypothesis mutates around an example it found): of
    # the flipped walkable stacks C answered 81-100 % in runs of 200 examples with seeds 0-19 (2026-12-05), so the
    # floor is set where a C walker that declined most flipped stacks would fail, not a sample's spread
    assert seen["flipped walkable answered"] >= 0.6 * seen["flipped walkable"], seen


@pytest.mark.parametrize("message", [
    bytes.fromhex("0000123400000000"),  # the rest all zero: Python's computed 0xffff (its sum 0, not 0xffff)
    bytes.fromhex("00001234000000000000"),
    bytes.fromhex("ffff1234ffffffff0000ffff00000000"),  # the rest sums to 2**64 - 1 as 64-bit words, not zero
    bytes.fromhex("ffffcccc"),
    bytes.fromhex("0000ffff0000"),
], ids=["zero", "zero-10", "ones-64", "ones-16", "stored-ffff"])
def test_c_judges_a_rest_that_sums_to_zero(message):
    """An ICMP message (no pseudo-header) whose bytes other than its checksum sum to 0 modulo 2**64 - 1: all zero,
    or not (the C walker sums the field's span once and takes the field out: csum/engine/_arith.h
    csum_ones16_without, which sums the two sides apart there). The Results are the Python walker's (the reference),
    all nine fields."""
    frame = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2", proto=1)
                / Raw(message))
    got = engine.cwalk.verify(frame, 1)
    assert got is not None and [_row(r) for r in got] == _python(frame, 1)


def _ones_sum16(data: bytes) -> int:
    """RFC 1071's end-around sum of big-endian 16-bit words (the last byte zero-padded), written here from the RFC:
    the test's own arithmetic, independent of csum's."""
    data += b"\0" * (len(data) & 1)
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


@pytest.mark.parametrize("v6", [False, True], ids=["v4", "v6"])
@pytest.mark.parametrize("proto", ["tcp", "udp", "icmp"])
@pytest.mark.parametrize("odd", [False, True], ids=["even", "odd"])
@pytest.mark.parametrize("stored", [0x0000, 0x0001, 0xFFFE, 0xFFFF])
@pytest.mark.parametrize("off", [0, 1], ids=["sums", "off-by-one"])
def test_c_judges_stored_values_at_the_edges(v6, proto, odd, stored, off):
    """The stored values the C walker's judge treats apart (0 and 0xffff, the others passing on one sum of the
    covered bytes: csum/engine/_arith.h csum_ones16_with), with the covered bytes made to sum with the field to
    0xffff (`sums`: RFC 1071's check, this test's own sum of scapy's pseudo-header and segment) or one off: the
    Results are the Python walker's (the reference), all nine fields, for TCP, UDP and ICMP(v6) over IPv4 and IPv6,
    even and odd lengths. A passing stored value shows the field can pass (the sum is right)."""
    ip = IPv6(src="2001:db8::1", dst="2001:db8::2") if v6 else IP(src="192.0.2.1", dst="198.51.100.2")
    l4 = {"tcp": TCP(sport=1234, dport=80), "udp": UDP(sport=1234, dport=5353),
          "icmp": ICMPv6EchoRequest() if v6 else ICMP()}[proto]
    field = {"tcp": 16, "udp": 6, "icmp": 2}[proto]
    payload = b"\x12\x34" + b"abcdefgh"[:7 if odd else 8]  # the first two bytes: the adjusting word
    frame = bytearray(raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip / l4 / Raw(payload)))
    l4at = 14 + (40 if v6 else 20)
    seg = frame[l4at:]
    seg[field:field + 2] = b"\0\0"
    seg[len(seg) - len(payload):len(seg) - len(payload) + 2] = b"\0\0"
    number = {"tcp": 6, "udp": 17, "icmp": 58 if v6 else 1}[proto]
    pseudo = b""
    if v6:
        pseudo = frame[22:54] + struct.pack("!IxxxB", len(seg), number)
    elif proto != "icmp":
        pseudo = frame[26:34] + struct.pack("!xBH", number, len(seg))
    rest = _ones_sum16(bytes(pseudo) + bytes(seg))
    want = (0xFFFF - stored - rest - off) % 0xFFFF  # the adjusting word: rest + word + stored = 0 (mod 0xffff)
    seg[field:field + 2] = struct.pack("!H", stored)
    seg[len(seg) - len(payload):len(seg) - len(payload) + 2] = struct.pack("!H", want)
    frame[l4at:] = seg
    total = _ones_sum16(bytes(pseudo) + bytes(seg))
    assert (total == 0xFFFF) == (off == 0), total
    got = engine.cwalk.verify(bytes(frame), 1)
    ref = _python(bytes(frame), 1)
    if got is not None:
        assert [_row(r) for r in got] == ref
    else:
        assert stored == 0 and proto == "udp" or off, ref  # only a zero UDP field or a failing one goes to Python


@settings(max_examples=500)
@given(data=buffers(max_size=120), link=st.sampled_from((-1, 0, 1, 12, 101, 108, 113, 276, 9999)))
def test_c_on_arbitrary_bytes(data, link):
    """Differential on arbitrary bytes (mostly not packets): C answers only where the walker agrees."""
    got = engine.cwalk.verify(data, link)
    if got is not None:
        assert [_row(r) for r in got] == _python(data, "auto" if link == -1 else link)


@settings(max_examples=200)
@given(proto=st.sampled_from((6, 17, 1)), v6=st.booleans(), size=st.integers(0, 300), fragsize=st.integers(1, 40),
       vlan=st.booleans(), flips=st.lists(st.tuples(st.integers(0, 63), st.integers(0, 80)), max_size=2))
def test_c_fragments_equal_the_walker(proto, v6, size, fragsize, vlan, flips):
    """Differential, all nine fields, on IPv4 fragments (scapy's fragment(); the first fragment sometimes too short
    to hold the transport checksum field) and IPv6 ones (fragment6()), VLAN-tagged or not, bytes flipped: the IPv4
    header judged, the transport field "needs-reassembly" (first) or "non-first-fragment" (later), as the Python
    walker says."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    payload = (bytes(range(256)) * 2)[:size]
    if v6:
        l4 = {6: TCP(), 17: UDP(), 1: ICMPv6EchoRequest()}[proto]
        datagram = IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrFragment(id=7) / l4 / payload
        pieces = fragment6(datagram, 56 + fragsize * 8)
    else:
        l4 = {6: TCP(), 17: UDP(), 1: ICMP()}[proto]
        pieces = fragment(IP(src="192.0.2.1", dst="198.51.100.2", id=7) / l4 / payload, fragsize=fragsize * 8)
    frames_ = [bytearray(raw((eth / Dot1Q(vlan=3) if vlan else eth) / f)) for f in pieces[:4]]
    for k, at in flips:
        if k < len(frames_) and at < len(frames_[k]):
            frames_[k][at] ^= 0x40
    answered = 0
    for frame in map(bytes, frames_):
        got = engine.cwalk.verify(frame, 1)
        if got is not None:
            answered += 1
            assert [_row(r) for r in got] == _python(frame, 1)
    assert answered or flips


def _shapes() -> list[bytes]:
    """The stacks bench/verify_pcap.py's mixed capture holds (fragments aside) and the IP-in-IP, GRE and ERSPAN
    tunnels the C walker walks too (and VLAN tags inside a tunnel, 11 path parts deep), checksums by scapy."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    v4, v6 = IP(src="10.0.0.1", dst="10.1.0.2"), IPv6(src="2001:db8::1", dst="2001:db8::2")
    return [raw(p) for p in (
        eth / v4 / TCP(sport=1000, dport=80) / b"payload",
        eth / v6 / UDP(sport=1000) / b"x",
        eth / IP(src="10.0.0.1", dst="10.1.0.2", options=[IPOption_Router_Alert(), IPOption_NOP()] * 2) / UDP(),
        eth / v6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP() / b"abc",
        eth / Dot1Q(vlan=5) / v4 / UDP(sport=7) / b"abcd",
        eth / Dot1Q(vlan=5) / Dot1Q(vlan=6) / v6 / ICMPv6EchoRequest() / b"q",
        eth / v4 / ICMP() / b"ping",
        eth / v4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / eth / IP(src="172.16.0.1", dst="172.16.0.2")
        / TCP() / b"in",
        eth / v4 / IP(src="172.16.0.1", dst="172.16.0.2") / TCP() / b"ipip",
        eth / v4 / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"6in4",
        eth / v4 / GRE(chksum_present=1, key_present=1, key=5) / IP(src="172.16.0.1", dst="172.16.0.2") / UDP()
        / b"gre",
        eth / v6 / GRE(proto=0x6558) / eth / IP(src="172.16.0.1", dst="172.16.0.2") / ICMP() / b"teb",
        eth / v4 / GRE(seqnum_present=1) / ERSPAN_II() / eth / Dot1Q(vlan=7) / IP(src="172.16.0.1", dst="172.16.0.2")
        / TCP() / b"erspan",
        eth / v4 / GRE(proto=0x22EB) / ERSPAN_III() / eth / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"3",
        eth / Dot1Q(vlan=5) / Dot1Q(vlan=6) / v4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / eth / Dot1Q(vlan=8)
        / Dot1Q(vlan=9) / IP(src="172.16.0.1", dst="172.16.0.2") / TCP() / b"deep",
    )]


def test_c_walks_the_common_stacks():
    """C answers (not None) for every common stack and agrees with scapy's checksums: each stored value (scapy's)
    is the computed one and passes; with the TCP/UDP/ICMP field broken, the same field is reported failing."""
    for frame in _shapes():
        results = inet.verify(frame)
        got = engine.cwalk.verify(frame, -1)
        assert got is not None and [_row(r) for r in got] == [_row(r) for r in results] == _python(frame, "auto")
        assert all(r.ok and r.stored == r.computed and r.reason == "ok" for r in results)
        last = results[-1]
        broken = bytearray(frame)
        broken[last.field] ^= 0x10
        again = engine.cwalk.verify(bytes(broken), -1)
        assert again is not None and [_row(r) for r in again] == _python(bytes(broken), "auto")
        assert again[-1].ok is False and again[-1].reason == "mismatch" and again[-1].computed == last.stored


def test_c_leaves_paths_too_long_for_it():
    """A stack of more path parts than the C walker's path holds (12) is left to the Python walker, never reported
    with a cut path: QinQ, VXLAN, three VLAN tags inside, IP-in-IP, TCP (13 parts, checksums by scapy); with two
    tags inside (12 parts) C answers, as the Python walker does."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")

    def deep(tags: int) -> bytes:
        inner = eth
        for vlan in range(tags):
            inner = inner / Dot1Q(vlan=8 + vlan)
        return raw(eth / Dot1Q(vlan=5) / Dot1Q(vlan=6) / IP(src="10.0.0.1", dst="10.1.0.2") / UDP(sport=4, dport=4789)
                   / VXLAN(vni=3) / inner / IP(src="172.16.0.1", dst="172.16.0.2") / IP(src="192.0.2.1", dst="192.0.2.2")
                   / TCP() / b"x")

    assert engine.cwalk.verify(deep(3), 1) is None
    assert _python(deep(3), 1)[-1][7] == "eth/vlan/vlan/ipv4/udp/vxlan/eth/vlan/vlan/vlan/ipv4/ipv4/tcp"
    got = engine.cwalk.verify(deep(2), 1)
    assert got is not None and [_row(r) for r in got] == _python(deep(2), 1)
    assert got[-1].path == "eth/vlan/vlan/ipv4/udp/vxlan/eth/vlan/vlan/ipv4/ipv4/tcp"


@pytest.mark.parametrize("broken", [False, True])
def test_c_judges_a_plain_udp_datagram_at_the_deepest_level(broken):
    """A UDP datagram that carries nothing further is judged in C at any depth, the deepest (table.MAX_DEPTH: 8) too:
    nine IPv6 headers in one another, then UDP (checksum by scapy; broken: its last byte flipped); C's Results equal
    the Python walker's, the UDP field at depth 8."""
    packet = IPv6(src="2001:db8::1", dst="2001:db8::2")
    for k in range(8):
        packet = packet / IPv6(src=f"2001:db8:{k}::1", dst=f"2001:db8:{k}::2")
    frame = bytearray(raw(packet / UDP(sport=1234, dport=5678) / b"deep"))
    if broken:
        frame[-1] ^= 1
    got = engine.cwalk.verify(bytes(frame), 101)
    assert got is not None and [_row(r) for r in got] == _python(bytes(frame), 101)
    assert (got[-1].layer, got[-1].depth, got[-1].ok) == ("udp", 8, not broken)


@pytest.mark.parametrize("link, header", [
    (113, b"\0\0\0\x01\0\x06" + b"\x02" * 6 + b"\0\0" + b"\x08\x00"),             # Linux SLL
    (276, b"\x08\x00\0\0" + b"\0\0\0\x02" + b"\0\x01\0\x06" + b"\x02" * 6 + b"\0\0"),  # SLL2
    (104, b"\x0f\x00\x08\x00"),                                                   # Cisco HDLC
    (242, bytes(40) + b"\x08\x00\0\0"),                                          # IPoIB (pcap form)
    (0, b"\x02\0\0\0"), (0, b"\0\0\0\x02"), (108, b"\0\0\0\x02"),                  # NULL / LOOP, both orders
    (101, b""), (12, b""), (228, b""),                                                # raw IP
])
def test_c_link_types(link, header):
    """The link types C walks (csum.layers.table.LINKTYPES kinds ethertype, family-*, ip): path and offsets as the
    Python walker gives them, on scapy-built IPv4/TCP and ICMP (checksums by scapy), good and with the field broken."""
    for packet in (IP(src="192.0.2.1", dst="192.0.2.2") / TCP() / b"data", IP() / ICMP() / b"x"):
        frame = header + raw(packet)
        for broken in (False, True):
            data = bytearray(frame)
            if broken:
                data[-1] ^= 1
            got = engine.cwalk.verify(bytes(data), link)
            assert got is not None and [_row(r) for r in got] == _python(bytes(data), link)
            assert [r.ok for r in got] == [True, not broken]


def test_inet_verify_link_argument_and_fallback(monkeypatch):
    """inet.verify takes the same ``link`` values with and without C, raises the same errors, and answers through
    the Python walker where C does not walk the packet (an ICMP error, a routing header of a type csum does not
    read the final destination of, a Jumbo Payload)."""
    frame = _shapes()[0]
    for link in ("auto", "ethernet", "ether", 1):
        assert [_row(r) for r in inet.verify(frame, link=link)] == _python(frame, link)
    assert [_row(r) for r in inet.verify(memoryview(frame))] == _python(frame, "auto")
    for link in (-1, True, "bogus", 2**70):
        with pytest.raises((CsumValueError, TypeError)) as with_c:
            inet.verify(frame, link=link)
        monkeypatch.setattr(engine, "cwalk", None)
        with pytest.raises(type(with_c.value)) as without:
            inet.verify(frame, link=link)
        monkeypatch.undo()
        assert str(with_c.value) == str(without.value)
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    routing = bytearray(raw(eth / IPv6() / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=1) / TCP()))
    routing[14 + 40 + 2] = 3  # routing type 3 (RPL, RFC 6554): its final destination is not read
    # an ICMP error whose RFC 4884 length says an extension follows its quote
    extended = eth / IP() / ICMP(type=3, length=32) / raw(IP() / UDP() / bytes(100)) / bytes.fromhex("20000000")
    for packet in (extended, Ether(bytes(routing))):
        frame = raw(packet)
        assert engine.cwalk.verify(frame, -1) is None
        assert [_row(r) for r in inet.verify(frame)] == _python(frame, "auto")


def _capture(items: list[tuple[int, bytes]]) -> pcap.Capture:
    links = sorted({link for link, _ in items})
    blocks = shb() + b"".join(idb(link) for link in links)
    return pcap.parse(blocks + b"".join(epb(f, links.index(link)) for link, f in items))


def _capture_equals_the_walker(cases: list[tuple[int, bytes]]) -> None:
    """The capture checker on ``cases`` (C's fast path and its jsonl path) against the Python walker's report: the
    jsonl Results, the bad and offload lists, the counts and the patches."""
    cap = _capture(cases)
    rows: list = []
    walked = python_report(cap, sink=lambda i, results: rows.append((i, [_row(r) for r in results])))
    report = check(cap)
    jsonl: list = []
    check(cap, sink=lambda i, results: jsonl.append((i, [_row(r) for r in results])))
    assert jsonl == rows
    for attr in ("bad", "offload"):
        assert [(i, _row(r)) for i, r in getattr(report, attr)] == [(i, _row(r)) for i, r in getattr(walked, attr)]
    assert report.counts == walked.counts and report.patches == walked.patches


@settings(max_examples=150)
@given(cases=st.lists(_mutated().map(lambda case: case[:2]), min_size=1, max_size=8))
def test_capture_results_from_c_equal_the_walker(cases):
    """Differential, all nine fields: the failing and offload Results the capture checker takes from C (csum
    verify's bad/offload lists, patches), and every Result of the jsonl path (where C judges the packets it walks),
    equal the Python walker's."""
    _capture_equals_the_walker(cases)


def _scapy_fixed(frame: bytes) -> bytes:
    """The frame with every IP/TCP/UDP/GRE checksum recomputed by scapy (fields deleted, packet rebuilt)."""
    packet = Ether(frame)
    for layer in (IP, TCP, UDP, GRE):
        k = 1
        while packet.getlayer(layer, k) is not None:
            del packet.getlayer(layer, k).chksum
            k += 1
    return raw(Ether(raw(packet)))


def test_capture_takes_failing_packets_from_c(monkeypatch):
    """Packets with wrong checksums on the stacks C walks, a VXLAN one and a GRE one with a wrong inner checksum
    among them, are judged without the Python walker at all, and the patches give scapy's checksums: the inner
    field and the outer UDP or GRE one that covers it (corrected after the inner one, as csum.layers.corrections
    does)."""
    frames_ = _shapes()
    vxlan, gre = frames_[7], frames_[10]
    assert vxlan.endswith(b"in") and gre.endswith(b"gre")
    broken = [bytearray(frames_[0]), bytearray(vxlan), bytearray(gre)]
    for frame in broken:
        frame[-1] ^= 1
        frame[-3] ^= 0x20
    cap = _capture([(1, f) for f in frames_ + [bytes(b) for b in broken]])
    # the chunk at once, as with numpy imported (a small chunk before numpy's import goes a packet at a time:
    # checker.one_by_one), so that the test does not depend on which tests ran before it in its process
    monkeypatch.setattr(checker, "one_by_one", lambda packets: False)
    monkeypatch.setattr(checker.Checker, "packet", lambda self, p, *_: pytest.fail(f"packet {p.number} walked in Python"))
    report = check(cap)
    n = len(frames_)
    assert report.fast == n and [i for i, _ in report.bad] == [n, n + 1, n + 1, n + 2, n + 2]
    assert [r.path for _, r in report.bad] == ["eth/ipv4/tcp", "eth/ipv4/udp", "eth/ipv4/udp/vxlan/eth/ipv4/tcp",
                                               "eth/ipv4/gre", "eth/ipv4/gre/ipv4/udp"]
    for k, frame in enumerate(broken):
        start = cap.base + int(cap.offsets[n + k])
        fixed = bytearray(frame)
        for at, new in report.patches:
            if start <= at < start + len(frame):
                fixed[at - start : at - start + 2] = new
        assert bytes(fixed) == _scapy_fixed(bytes(frame)) and bytes(fixed) != bytes(frame)


# --- the stacks of issue 21: MPLS, PPPoE, AH, every IPv6 extension header, UDP without a checksum, Geneve, GTP ------

_V6_EXTS = (lambda: IPv6ExtHdrHopByHop(), lambda: IPv6ExtHdrDestOpt(),
            lambda: IPv6ExtHdrDestOpt(options=[HAO(hoa="2001:db8::77")]),
            lambda: IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=1),
            lambda: IPv6ExtHdrRouting(type=2, addresses=["2001:db8::9"], segleft=1),
            lambda: IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=0),
            lambda: IPv6ExtHdrSegmentRouting(addresses=["2001:db8::9", "2001:db8::8"], segleft=1),
            lambda: IPv6ExtHdrFragment(offset=0, m=0, id=9))


@st.composite
def _issue21_stacks(draw) -> tuple[int, bytes]:
    """(link type, frame) of the stacks issue 21 adds to the C walker, checksums by scapy (over the pseudo-header with
    the final destination and the Home Address, as scapy's in6_chksum reads them): an inner IPv4 or IPv6 packet
    (TCP, UDP with or without its checksum, ICMP; IPv6 extension headers of every kind the walker walks; AH spliced
    in), maybe in GTP-U (with an extension header), GTPv0, Geneve, VXLAN or GRE-in-UDP, under Ethernet, a VLAN tag,
    an MPLS label stack, a PPPoE session (protocol field compressed or not, padding after its Length) or bare."""
    def packet(version: int) -> bytes:
        v4 = version == 4
        kind = draw(st.sampled_from(("tcp", "udp", "udp0", "icmp")))
        l4 = {"tcp": TCP(sport=5, dport=6), "udp": UDP(sport=5, dport=7), "udp0": UDP(sport=5, dport=7, chksum=0),
              "icmp": ICMP() if v4 else ICMPv6EchoRequest()}[kind] / draw(st.binary(max_size=30))
        ip = IP(src="10.0.0.1", dst="10.0.0.2") if v4 else IPv6(src="2001:db8::1", dst="2001:db8::2")
        if not v4:
            for make in draw(st.lists(st.sampled_from(_V6_EXTS), max_size=3, unique=True)):  # one Fragment header
                ip = ip / make()
        data = raw(ip / l4)
        if draw(st.booleans()):  # AH right after the IP header (RFC 4302), scapy's checksums kept
            head = 20 if v4 else 40
            ah = bytes([data[9] if v4 else data[6], 4]) + bytes(6) + b"\0\0\0\1" + bytes(12)  # 24 bytes
            data = bytearray(data[:head] + ah + data[head:])
            if v4:
                data[9], data[2:4] = 51, (len(data)).to_bytes(2, "big")
                header = IP(bytes(data[:head]))
                del header.chksum
                data[:head] = raw(header)[:head]
            else:
                data[6], data[4:6] = 51, (len(data) - 40).to_bytes(2, "big")
        return bytes(data)

    version = draw(st.sampled_from((4, 6)))
    inner = packet(version)
    tunnel = draw(st.sampled_from(("none", "gtp", "gtp-ext", "gtp0", "geneve", "geneve-ip", "vxlan", "gre-udp")))
    if tunnel != "none":
        payload = {"gtp": lambda: raw(GTP_U_Header(teid=1, gtp_type=255, length=len(inner))) + inner,
                   "gtp-ext": lambda: raw(GTP_U_Header(teid=1, E=1, next_ex=0x85, gtp_type=255)
                                          / GTPPDUSessionContainer(type=0, QFI=5) / Raw(inner)),
                   "gtp0": lambda: struct.pack("!BBHHHB3s8s", 0x1E, 0xFF, len(inner), 1, 0, 0xFF, b"\xff" * 3,
                                               b"\x11" * 8) + inner,
                   "geneve": lambda: raw(GENEVE(proto=0x6558) / Ether(src=_MAC1, dst=_MAC2) / Raw(inner)),
                   "geneve-ip": lambda: raw(GENEVE(proto=0x0800 if version == 4 else 0x86DD)) + inner,
                   "vxlan": lambda: raw(VXLAN(vni=4) / Ether(src=_MAC1, dst=_MAC2) / Raw(inner)),
                   "gre-udp": lambda: raw(GRE(proto=0x0800 if version == 4 else 0x86DD,
                                              chksum_present=draw(st.booleans())) / Raw(inner))}[tunnel]()
        if tunnel in ("geneve", "vxlan"):  # the inner Ethernet type, which scapy cannot know before a Raw: after the
            at = 8 + 12                    # 8-byte VXLAN or Geneve header and the two addresses
            payload = payload[:at] + (b"\x08\x00" if version == 4 else b"\x86\xdd") + payload[at + 2 :]
        port = {"gtp": 2152, "gtp-ext": 2152, "gtp0": 3386, "geneve": 6081, "geneve-ip": 6081, "vxlan": 4789,
                "gre-udp": 4754}[tunnel]
        outer6 = draw(st.booleans())
        udp = UDP(sport=40000, dport=port, chksum=0 if draw(st.booleans()) else None)
        inner = raw((IPv6(src="2001:db8::a", dst="2001:db8::b") if outer6 else IP(src="192.0.2.1", dst="192.0.2.2"))
                    / udp / Raw(payload))
        version = 6 if outer6 else 4
    ethertype = b"\x08\x00" if version == 4 else b"\x86\xdd"
    link = draw(st.sampled_from(("eth", "vlan", "mpls", "pppoe", "raw")))
    macs = bytes.fromhex(_MAC2.replace(":", "") + _MAC1.replace(":", ""))
    if link == "raw":
        return 101, inner
    if link == "eth":
        return 1, macs + ethertype + inner
    if link == "vlan":
        return 1, macs + b"\x81\x00\x00\x07" + ethertype + inner
    if link == "mpls":
        labels = draw(st.integers(1, 3))
        stack = b"".join((16 + k).to_bytes(3, "big")[:2] + bytes([0x40 | (k == labels - 1)]) + b"\x40"
                         for k in range(labels))
        return 1, macs + b"\x88\x47" + stack + inner
    ppp = (b"\x21" if version == 4 else b"\x57") if draw(st.booleans()) else (b"\x00\x21" if version == 4
                                                                              else b"\x00\x57")
    return 1, macs + b"\x88\x64" + struct.pack("!BBHH", 0x11, 0, 1, len(ppp) + len(inner)) + ppp + inner \
        + bytes(draw(st.integers(0, 8)))


_MAC1, _MAC2 = "02:00:00:00:00:01", "02:00:00:00:00:02"


def _differential(cases: st.SearchStrategy[tuple[int, bytes]], walkable: Callable[[list[tuple] | str, bytes, int], bool],
                  examples: int) -> dict[str, int]:
    """Each frame of ``cases`` and a copy with up to three bytes flipped: wherever C answers, its Results are the
    Python walker's in all nine fields; C answers every unflipped frame ``walkable`` says it walks. The counts."""
    seen = {"walkable": 0, "answered": 0}

    @settings(max_examples=examples)  # scapy builds each frame: about 2 ms an example
    @given(case=cases, flips=st.lists(st.tuples(st.integers(0, 240), st.sampled_from((1, 0x40, 0xFF))), max_size=3))
    def check(case, flips):
        link, frame = case
        flipped = bytearray(frame)
        for at, bit in flips:
            if at < len(flipped):
                flipped[at] ^= bit
        for data in (frame, bytes(flipped)):
            got = engine.cwalk.verify(data, link)
            ref = _python(data, link)
            if got is not None:
                assert [_row(r) for r in got] == ref
            if data is frame and walkable(ref, data, link):
                seen["walkable"] += 1
                seen["answered"] += got is not None
                assert got is not None, f"the C walker declined a stack it walks: {ref}"

    check()
    return seen


def test_c_walks_the_issue_21_stacks():
    """Differential, all nine fields, on the stacks of _issue21_stacks (checksums by scapy) and on copies with up to
    three bytes flipped: wherever C answers, its Results are the Python walker's; and the floor: C answers every
    unflipped stack made only of what it walks (by the Python walker's answer: its layers, path parts, reasons)."""
    seen = _differential(_issue21_stacks(), _c_walks, 400)
    assert seen["walkable"] >= 300, seen


def test_c_finds_an_old_sender_s_extension_as_the_walker_does():
    """Without an RFC 4884 length, the Python walker takes the bytes after a 128-byte quote for an old sender's
    extension only when the quoted datagram ends inside those 128 bytes with zeros after it (RFC 4884 5.5); the C
    walker decides the same way (csum/engine/_walk.c icmp_extension): it walks the error whose quote is longer than 128
    bytes and merely has a version-2 nibble at byte 128, and leaves the padded one (its extension's checksum) to the
    Python walker. Expected Results: the Python walker's; which packet has an extension: RFC 4884's rule, by hand."""
    eth = Ether(src=_MAC1, dst=_MAC2)
    ext = bytes.fromhex("20000000")
    long_quote = raw(IP(src="10.0.0.2", dst="10.0.0.1") / UDP(sport=53, dport=80) / (bytes(100) + b"\x20" + bytes(40)))
    padded = raw(IP(src="10.0.0.2", dst="10.0.0.1") / UDP(sport=53, dport=80) / bytes(20)).ljust(128, b"\0")
    walked = raw(eth / IP(src="10.0.0.9", dst="10.0.0.2") / ICMP(type=11) / Raw(long_quote + ext))
    assert long_quote[128] >> 4 == 2
    results = engine.cwalk.verify(walked, -1)
    assert results is not None and [_row(r) for r in results] == _python(walked, "auto")
    assert "icmp-ext" not in {r.layer for r in results}
    extended = raw(eth / IP(src="10.0.0.9", dst="10.0.0.2") / ICMP(type=11) / Raw(padded + ext))
    assert engine.cwalk.verify(extended, -1) is None
    assert "icmp-ext" in {row[0] for row in _python(extended, "auto")}


@st.composite
def _icmp_errors(draw) -> tuple[int, bytes]:
    """(link type, frame) of an ICMP or ICMPv6 error (the types that quote a datagram) quoting an IPv4 or IPv6
    TCP, UDP (with or without its checksum) or ICMP datagram, whole or cut anywhere (RFC 792's first 8 bytes, a
    router's 128 ...), maybe with IPv4 options or IPv6 extension headers in the quote, maybe an RFC 4884 length, the
    error itself maybe inside VXLAN or IP-in-IP; checksums by scapy."""
    v4 = draw(st.booleans())
    qv4 = draw(st.booleans())
    l4 = draw(st.sampled_from(("tcp", "udp", "udp0", "icmp")))
    body = {"tcp": TCP(sport=80, dport=1234), "udp": UDP(sport=53, dport=5353), "udp0": UDP(sport=53, chksum=0),
            "icmp": ICMP(id=7) if qv4 else ICMPv6EchoRequest(id=7)}[l4] / draw(st.binary(max_size=40))
    if qv4:
        quoted = IP(src="10.0.0.2", dst="10.0.0.1", ttl=1,
                    options=[IPOption_Router_Alert()] if draw(st.booleans()) else [])
    else:
        quoted = IPv6(src="2001:db8::2", dst="2001:db8::1", hlim=1)
        for make in draw(st.lists(st.sampled_from(_V6_EXTS[:2]), max_size=2)):
            quoted = quoted / make()
    datagram = raw(quoted / body)
    datagram = datagram[:draw(st.integers(1, len(datagram)))] if draw(st.booleans()) else datagram
    if v4:
        kind = draw(st.sampled_from((3, 4, 5, 11, 12)))
        length = draw(st.sampled_from((0, 0, 32)))
        error = IP(src="10.0.0.9", dst="10.0.0.2") / ICMP(type=kind, code=1, length=length if kind != 4 else 0)
    else:
        kind = draw(st.sampled_from((1, 2, 3, 4)))
        error = IPv6(src="2001:db8::9", dst="2001:db8::2") / {1: ICMPv6DestUnreach(), 2: ICMPv6PacketTooBig(),
                                                              3: ICMPv6TimeExceeded(), 4: ICMPv6ParamProblem()}[kind]
    frame = raw(error / Raw(datagram))
    where = draw(st.sampled_from(("eth", "eth", "vlan", "vxlan", "ipip")))
    eth = Ether(src=_MAC1, dst=_MAC2)
    if where == "vxlan":
        frame = raw(eth / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=40000, dport=4789) / VXLAN(vni=1) /
                    eth / Raw(frame))
        frame = frame[:50 + 12] + (b"\x08\x00" if v4 else b"\x86\xdd") + frame[50 + 14:]
    elif where == "ipip" and v4:
        frame = raw(eth / IP(src="192.0.2.1", dst="192.0.2.2", proto=4) / Raw(frame))
    else:
        frame = raw((eth / Dot1Q(vlan=3) if where == "vlan" else eth) / Raw(frame))
        at = 16 if where == "vlan" else 12
        frame = frame[:at] + (b"\x08\x00" if v4 else b"\x86\xdd") + frame[at + 2:]
    return 1, frame


def test_c_walks_icmp_errors():
    """Differential, all nine fields, on ICMP/ICMPv6 errors and the datagrams they quote (_icmp_errors, checksums by
    scapy; quoted checksums set to 0 or flipped, bytes flipped anywhere): wherever C answers, its Results are the
    Python walker's (the quoted IPv4 header judged, the quoted transport layer judged when whole, partial-quote when
    not); and C answers every unflipped error made only of what it walks but the start of a UDP datagram sent
    without a checksum (ok with nothing computed: the Python walker's)."""
    index = {name: k for k, name in enumerate(_FIELDS)}

    def walkable(ref: list[tuple] | str, data: bytes, link: int) -> bool:
        return _c_walks(ref, data, link) and not any(
            row[index["ok"]] and row[index["computed"]] is None for row in ref)

    seen = _differential(_icmp_errors(), walkable, 600)
    assert seen["walkable"] >= 300, seen


@settings(max_examples=150)
@given(cases=st.lists(_icmp_errors(), min_size=1, max_size=8))
def test_capture_icmp_errors_from_c_equal_the_walker(cases):
    """The capture checker on ICMP errors (C's fast path: counts, n/a partial quotes, bad and offload lists,
    patches, the jsonl path's Results) equals the Python walker's report."""
    _capture_equals_the_walker(cases)


@pytest.mark.parametrize("v6", [False, True], ids=["v4", "v6"])
@pytest.mark.parametrize("proto", ["tcp", "udp"])
@pytest.mark.parametrize("fill", [0x00, 0xFF], ids=["zeros", "ones"])
def test_capture_judges_the_pseudo_headers_of_extreme_addresses(monkeypatch, v6, proto, fill):
    """Addresses all zero or all ones: their 64-bit end-around sum, which the C walker's judge keeps unreduced until a
    field fails (csum/engine/_walk.c judge), is 0 or 2**64 - 1. The stored values judge treats apart (0, 0xffff), a
    plain wrong one, transmit offload's two forms (this test's own RFC 1071 sum of the pseudo-header, with the
    length and without) and scapy's right value: verify's Results and the capture checker's on the whole chunk (its
    first walk keeps no records, a failing packet is walked again with them; and its rows) are the Python walker's
    (the reference), all nine fields."""
    size = 16 if v6 else 4
    addr = bytes([fill]) * size
    text = str(ipaddress.ip_address(addr))
    ip = IPv6(src=text, dst=text) if v6 else IP(src=text, dst=text)
    l4 = TCP(sport=1234, dport=80) if proto == "tcp" else UDP(sport=1234, dport=5353)
    good = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip / l4 / Raw(b"abcdefg"))
    at, number = 14 + (40 if v6 else 20), 6 if proto == "tcp" else 17
    field = at + (16 if proto == "tcp" else 6)
    length = len(good) - at
    offload = [_ones(addr * 2 + bytes([0, number]) + length.to_bytes(4, "big")), _ones(addr * 2 + bytes([0, number]))]
    frames = []
    for stored in [0x0000, 0xFFFF, 0x0001, *offload, int.from_bytes(good[field : field + 2], "big")]:
        frame = bytearray(good)
        frame[field : field + 2] = stored.to_bytes(2, "big")
        got = engine.cwalk.verify(bytes(frame), 1)
        assert got is not None and [_row(r) for r in got] == _python(bytes(frame), 1), stored
        frames.append(bytes(frame))
    monkeypatch.setattr(checker, "one_by_one", lambda packets: False)  # the chunk at once: fast_check
    _capture_equals_the_walker([(1, f) for f in frames])
    assert check(_capture([(1, f) for f in frames])).bad  # failing fields: the second walk's records were read

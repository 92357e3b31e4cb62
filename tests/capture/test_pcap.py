"""csum/capture/pcap.py (reading pcap/pcapng whole or in chunks, patching) and csum/capture/checker.py (checking captures).

Independent sources: scapy's pcap/pcapng readers and writers, the test writers in
tests/captures.py (cross-checked here against scapy), the naive RFC 1071 model in
tests/oracle.py for checksum fields, and csum.inet.verify packet by packet as the
reference for the capture checker and its C fast path.
"""

from __future__ import annotations

import dataclasses
import io
import struct

import pytest
from captures import epb, idb, other, pb, pcap_bytes, pcapng_bytes, python_report, shb, spb
from fragmented import fragmented
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from oracle import rfc1071_checksum
from scapy.all import ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest, IPv6, PcapNgWriter, Raw, rdpcap, wrpcap
from scapy.utils import RawPcapNgReader, RawPcapReader

from csum import engine
from csum.capture import checker, pcap
from csum.capture.checker import check
from csum.errors import CsumValueError
from csum.layers import inet
from csum.layers.reasons import Reason
from csum.testing import buffers, frames, u16s

#: Fixed MAC addresses: scapy would otherwise look the destination up (ARP, routes).
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _scapy_packets():
    return [
        ETH / IP(src="192.0.2.1", dst="198.51.100.2") / TCP(sport=1, dport=2) / Raw(b"hello"),
        ETH / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=53, dport=5353) / Raw(b"odd"),
        ETH / IP(src="192.0.2.1", dst="198.51.100.2") / ICMP() / Raw(b"ping"),
        ETH / IPv6(src="2001:db8::1", dst="2001:db8::2") / ICMPv6EchoRequest(data=b"x"),
    ]


# --- reading --------------------------------------------------------------------------------

@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_pcap_both_byte_orders_and_nanosecond_magic(endian, nano, tmp_path):
    """Packets of a pcap file in either byte order, us or ns timestamps: the bytes scapy's rdpcap reads."""
    pkts = [bytes(p) for p in _scapy_packets()]
    path = tmp_path / "x.pcap"
    path.write_bytes(pcap_bytes(pkts, 1, endian=endian, nano=nano))
    cap = pcap.read(path)
    assert cap.format == "pcap" and len(cap) == 4
    assert [bytes(cap.packet(i)) for i in range(4)] == [bytes(p) for p in rdpcap(str(path))]
    assert cap.linktypes.tolist() == [1] * 4


def test_pcap_written_by_scapy(tmp_path):
    """wrpcap's output (linktype from the first layer) is indexed packet for packet."""
    path = tmp_path / "s.pcap"
    wrpcap(str(path), [IP(dst="192.0.2.9") / UDP() / Raw(b"a" * n) for n in range(5)])
    cap = pcap.read(path)
    assert cap.linktypes.tolist() == [228] * 5  # scapy 2.6+ writes IPv4 packets as LINKTYPE_IPV4
    assert [bytes(cap.packet(i)) for i in range(5)] == [bytes(p) for p in rdpcap(str(path))]


def test_pcapng_written_by_scapy(tmp_path):
    """PcapNgWriter output (SHB, IDB, EPB): same packets as scapy reads back."""
    path = tmp_path / "s.pcapng"
    with PcapNgWriter(str(path)) as w:
        for p in _scapy_packets():
            w.write(p)
    cap = pcap.read(path)
    assert cap.format == "pcapng"
    assert [bytes(cap.packet(i)) for i in range(len(cap))] == [bytes(p) for p in rdpcap(str(path))]


@pytest.mark.parametrize("endian", ["<", ">"])
def test_pcapng_blocks_sections_and_byte_orders(endian, tmp_path):
    """EPB, SPB (snap length of interface 0), obsolete PB, unknown blocks, a second section in the other byte order.

    Expected packets and link types: what scapy's pcapng reader returns for the same file.
    """
    a, b, c = (bytes(p) for p in _scapy_packets()[:3])
    flip = ">" if endian == "<" else "<"
    data = (shb(endian) + idb(1, endian, snaplen=40) + idb(101, endian) + epb(a, 0, endian)
            + other(5, b"\0" * 20, endian) + spb(b[:40], endian, origlen=len(b)) + pb(bytes(IP() / TCP()), 1, endian)
            + other(0x0BADC0DE, b"custom", endian)
            + shb(flip) + idb(276, flip) + epb(b"\x08\x00" + b"\0" * 18 + c[14:], 0, flip, origlen=10_000))
    path = tmp_path / "m.pcapng"
    path.write_bytes(data)
    cap = pcap.read(path)
    theirs = list(RawPcapNgReader(str(path)))
    assert [bytes(cap.packet(i)) for i in range(len(cap))] == [pkt for pkt, _ in theirs]
    assert cap.linktypes.tolist() == [1, 1, 101, 276]
    assert cap.caplens.tolist() == [len(a), 40, 40, 20 + len(c) - 14]
    assert [cap.is_cut(i) for i in range(4)] == [False, True, False, True]


@pytest.mark.parametrize("data,code", [
    (b"", "not-a-capture"),
    (b"GET / HTTP/1.1\r\n\r\n", "not-a-capture"),
    (pcap_bytes([])[:20], "truncated"),
    (pcap_bytes([b"x" * 60])[:-1], "truncated"),
    (pcap_bytes([b"x" * 60, b"y" * 60])[: 24 + 76 + 10], "truncated"),
    (shb() + idb(1) + epb(b"x" * 60)[:-4], "truncated"),
    (shb() + idb(1) + struct.pack("<II", 6, 13) + b"\0" * 5, "bad-block"),
    (shb() + idb(1) + epb(b"x" * 60)[:-4] + struct.pack("<I", 99), "bad-block"),
    (shb() + epb(b"x" * 60), "bad-block"),                       # no interface described
    (shb()[:8] + b"\0\0\0\0" + shb()[12:], "bad-block"),          # bad byte-order magic
])
def test_malformed_files_raise_with_a_code(data, code):
    """Garbage, truncated headers/records/blocks and inconsistent lengths: CsumValueError with its code."""
    with pytest.raises(CsumValueError) as info:
        pcap.parse(data)
    assert info.value.code == code


def test_missing_file_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        pcap.read(tmp_path / "nope.pcap")


# --- patching and writing -------------------------------------------------------------------

def test_patched_changes_only_the_given_bytes():
    """patched() returns the original bytes except at the patch offsets; the capture is not modified."""
    cap = pcap.parse(pcap_bytes([b"\x01" * 64, b"\x02" * 64]))
    before = cap.data
    out = pcap.patched(cap, [(40, b"\xab\xcd"), (130, b"\x99\x98")])
    assert cap.data is before
    diff = [i for i in range(len(out)) if out[i] != before[i]]
    assert diff == [40, 41, 130, 131]
    with pytest.raises(CsumValueError):
        pcap.patched(cap, [(len(before) - 1, b"\0\0")])


# --- checking: the capture checker against csum.inet ------------------------------------------

def _be(x: int) -> bytes:
    return x.to_bytes(2, "big")


# The strategies _ip_packet and _framed draw from, built once (a strategy is validated the first time it is drawn
# from: one built at each draw is validated at each draw).
_PROTOS = {v6: st.sampled_from([6, 6, 17, 17, 58 if v6 else 1, 1 if v6 else 58, 47]) for v6 in (False, True)}
_PAYLOADS = buffers(max_size=64)
_ADDRESSES = st.binary(min_size=16, max_size=16)
#: A stored checksum: None for the right one, else a 16-bit value biased to the corners.
_STORED = st.one_of(st.none(), u16s())
_OPTIONS = st.sampled_from([b""] * 5 + [b"\x01\x01\x01\x00"])
_FRAG = st.sampled_from([0, 0, 0, 0x4000, 0x4000, 0x2000, 0x0010])
_DAMAGE = st.sampled_from(["none"] * 12 + ["total+", "total-", "udp+", "udp-", "ihl", "pad"])


def _stored(draw: st.DrawFn, right: int) -> int:
    """The checksum to store: ``right`` half the time, else a :func:`csum.testing.u16s` value."""
    value = draw(_STORED)
    return right if value is None else value


@st.composite
def _ip_packet(draw) -> bytes:
    """An IPv4/IPv6 packet with TCP/UDP/ICMP/ICMPv6/GRE, checksums right, wrong or at 0/0xffff, lengths sometimes off."""
    v6 = draw(st.booleans())
    proto = draw(_PROTOS[v6])
    payload = draw(_PAYLOADS)
    src, dst = draw(_ADDRESSES), draw(_ADDRESSES)
    if not v6:
        src, dst = src[:4], dst[:4]
    head = {6: b"\0\x01\0\x02" + b"\0" * 8 + b"\x50\x10\xff\xff" + b"\0" * 4, 17: b"\0\x35\0\x35\0\0\0\0",
            1: b"\x08\0\0\0", 58: b"\x80\0\0\0", 47: b"\0\0\x08\0"}[proto]
    seg = bytearray(head + payload)
    if proto == 17:
        seg[4:6] = _be(len(seg))
    field = {6: 16, 17: 6, 1: 2, 58: 2}.get(proto)
    if field is not None:
        if proto == 1:
            pseudo = b""
        elif v6:
            pseudo = src + dst + len(seg).to_bytes(4, "big") + b"\0\0\0" + bytes([proto])
        else:
            pseudo = src + dst + bytes([0, proto]) + _be(len(seg))
        right = rfc1071_checksum(pseudo + bytes(seg))
        if proto == 17:
            right = right or 0xFFFF
        seg[field : field + 2] = _be(_stored(draw, right))
    ext = b""
    if v6:
        if draw(st.integers(0, 9)) == 0:  # a hop-by-hop header: the inet path
            ext, nh = bytes([proto, 0, 1, 4, 0, 0, 0, 0]), 0
        else:
            nh = proto
        ip = bytearray(b"\x60\0\0\0" + _be(len(ext) + len(seg)) + bytes([nh, 64]) + src + dst)
    else:
        options = draw(_OPTIONS)
        frag = draw(_FRAG)
        ihl = (20 + len(options)) // 4
        ip = bytearray(bytes([0x40 | ihl, 0]) + _be(4 * ihl + len(seg)) + b"\x12\x34" + _be(frag)
                       + bytes([64, proto]) + b"\0\0" + src + dst + options)
        ip[10:12] = _be(_stored(draw, rfc1071_checksum(bytes(ip))))
    pkt = bytearray(ip + ext + seg)
    damage = draw(_DAMAGE)
    if damage in ("total+", "total-"):
        at = 2 if not v6 else 4
        pkt[at : at + 2] = _be((int.from_bytes(pkt[at : at + 2], "big") + (3 if damage == "total+" else -3)) & 0xFFFF)
    elif damage in ("udp+", "udp-") and proto == 17:
        at = len(ip) + len(ext) + 4
        pkt[at : at + 2] = _be((int.from_bytes(pkt[at : at + 2], "big") + (2 if damage == "udp+" else -2)) & 0xFFFF)
    elif damage == "ihl" and not v6:
        pkt[0] = 0x43
    elif damage == "pad":
        pkt += b"\0" * 6
    return bytes(pkt)


_LINKS = {1: 14, 101: 0, 113: 16, 276: 20}
_LINK_TYPES = st.sampled_from(sorted(_LINKS))
_ETHERTYPES = {version: st.sampled_from([b"\x86\xdd" if version == 6 else b"\x08\x00"] * 5 + [b"\x08\x06"])
               for version in (4, 6)}
_VLANS = st.sampled_from([b""] * 4 + [b"\x81\x00\x00\x05"])
_CUTS = st.sampled_from([0] * 9 + [7])


@st.composite
def _framed(draw) -> tuple[int, bytes, int]:
    """(link type, frame, original length): an IP packet framed as Ethernet (maybe VLAN-tagged), raw, SLL or SLL2."""
    pkt = draw(_ip_packet())
    link = draw(_LINK_TYPES)
    etype = draw(_ETHERTYPES[6 if pkt[0] >> 4 == 6 else 4])
    if link == 1:
        vlan = draw(_VLANS)
        frame = b"\x02" * 6 + b"\x04" * 6 + vlan + etype + pkt
    elif link == 113:
        frame = b"\0\0\0\x01\0\x06" + b"\x02" * 6 + b"\0\0" + etype + pkt
    elif link == 276:
        frame = etype + b"\0\0" + b"\0\0\0\x02" + b"\0\x01\0\x06" + b"\x02" * 6 + b"\0\0" + pkt
    else:
        frame = pkt
    cut = draw(_CUTS)
    return link, frame[: len(frame) - cut], len(frame)


def _reference(link: int, frame: bytes) -> list[inet.Result] | str:
    """inet.verify on the frame with its capture link type; "not-ip" or "malformed" when it raises."""
    try:
        return inet.verify(frame, link=link)
    except CsumValueError as exc:
        return "not-ip" if exc.code == "not-ip" else "malformed"


def _fragment(frame: bytes, ref: list[inet.Result], captured: int) -> tuple[bytes, int, bytes] | None:
    """(source, destination, id and protocol; offset; data) of an IPv4 fragment that inet.verify walked (its ipv4 row
    gives where the header starts), else None; ``captured``: the bytes of ``frame`` the capture holds, its data cut
    there (a fragment cut inside its IP header is none)."""
    at = next((r.offset for r in ref if r.layer == "ipv4"), None)
    if at is None or not int.from_bytes(frame[at + 6 : at + 8], "big") & 0x3FFF:
        return None
    ihl, total = 4 * (frame[at] & 0xF), int.from_bytes(frame[at + 2 : at + 4], "big")
    if captured < at + ihl:
        return None
    key = frame[at + 12 : at + 20] + frame[at + 4 : at + 6] + frame[at + 9 : at + 10]
    return key, 8 * (int.from_bytes(frame[at + 6 : at + 8], "big") & 0x1FFF), frame[at + ihl : min(at + total, captured)]


def _datagram_model(frames: list[tuple[int, bytes, int]]) -> tuple[set[int], set[int]]:
    """(repeats, failed): the packets whose first-fragment field the capture reports nowhere (a byte-for-byte copy of
    the first fragment of the datagram pending under its key), and those whose field is "reassembly-failed" (every
    first fragment of a datagram a later fragment overlapped with other bytes; that fragment starts the next
    datagram under the key). The rule as docs/verify.md states it, on inet.verify's walk of each frame; no datagram
    of these frames completes (a last fragment starts at 128 bytes, past any first fragment's data). Cut fragments
    take part with their captured bytes (csum/layers/reassembly.py adds them; Hypothesis found the model without
    them, 2026-12-05)."""
    pending: dict[bytes, list[tuple[int, int, bytes]]] = {}
    repeats: set[int] = set()
    failed: set[int] = set()
    for i, (link, frame, orig) in enumerate(frames):
        # a cut frame's fragment joins its key with the bytes captured (they conflict like any others): its headers
        # are found on the frame zero-filled to its original length, which inet.verify walks whole
        whole = frame + bytes(orig - len(frame))
        ref = _reference(link, whole)
        piece = _fragment(whole, ref, len(frame)) if isinstance(ref, list) else None
        if piece is None:
            continue
        key, offset, data = piece
        pieces = pending.setdefault(key, [])
        if any(max(offset, o) < min(offset + len(data), o + len(d))
               and data[max(offset, o) - offset : min(offset + len(data), o + len(d)) - offset]
               != d[max(offset, o) - o : min(offset + len(data), o + len(d)) - o] for _, o, d in pieces):
            failed.update(j for j, o, _ in pieces if o == 0)
            pieces = pending[key] = []
        heads = [(j, d) for j, o, d in pieces if o == 0 and j not in repeats]
        if offset == 0 and heads and heads[-1][1] == data:
            repeats.add(i)
        pieces.append((i, offset, data))
    return repeats, failed


def _capture(frames: list[tuple[int, bytes, int]]) -> pcap.Capture:
    return pcap.parse(pcapng_bytes(frames))


#: Ethernet/IPv4/ICMP whose computed checksum is 0, stored as 0xffff (negative zero, RFC 1624 section 3):
#: 0x0800 + 0xf7ff = 0xffff, so the zeroed sum is all ones and the checksum 0.
_NEG_ZERO = (b"\x02" * 12 + b"\x08\x00" + bytes.fromhex("450000220000000040017cd97f0000017f000001")
             + b"\x08\x00\xff\xff\xf7\xff" + b"\0" * 8)



def _tcp_first_fragment(payload: bytes) -> bytes:
    """IPv4 (id 0x1234, MF set, offset 0) from 10.0.0.1 to 10.0.0.2 with a TCP header and ``payload``; the IPv4
    checksum from the RFC 1071 oracle, the TCP one left 0 (it cannot be judged from a first fragment)."""
    seg = b"\0\x01\0\x02" + b"\0" * 8 + b"\x50\x10\xff\xff" + b"\0" * 4 + payload
    ip = bytearray(b"\x45\0" + _be(20 + len(seg)) + b"\x12\x34\x20\x00\x40\x06\0\0" + bytes([10, 0, 0, 1, 10, 0, 0, 2]))
    ip[10:12] = _be(rfc1071_checksum(bytes(ip)))
    return bytes(ip) + seg


#: Found by Hypothesis (2026-12): a first fragment, another first fragment of the same key with other bytes, then
#: the first one again byte for byte, and an IPv6 UDP packet (its checksum from the RFC 1071 oracle). Each of the
#: second and third ends the datagram pending under the key (reassembly-failed on the first two) and starts the next
#: one: the third is the first fragment of a new datagram (needs-reassembly), not a repeat of the first.
_REPEAT_AROUND_CONFLICT = [(101, _tcp_first_fragment(b"\0" * 8), 48),
                           (1, b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + _tcp_first_fragment(b"\x01" * 8), 62),
                           (101, _tcp_first_fragment(b"\0" * 8), 48),
                           (101, b"\x60\0\0\0\0\x08\x11\x40" + bytes(32) + b"\0\x35\0\x35\0\x08\xff\x74", 48)]

#: Found by Hypothesis (2026-12-05): a first fragment, then one of the same key cut by the capture whose captured
#: bytes differ from it: the cut one still ends the pending datagram (reassembly-failed on the first).
_CUT_CONFLICT = [(101, _tcp_first_fragment(b"\0" * 8), 48), (101, _tcp_first_fragment(b"\x01" * 8)[:-4], 48)]


# each example builds and checks a capture twice (~10 ms), on every engine: 200 keep this near 4 s per engine
@pytest.mark.usefixtures("every_engine")
@settings(max_examples=200)
@given(frames=st.lists(_framed(), min_size=1, max_size=6))
@example(frames=[(1, _NEG_ZERO, len(_NEG_ZERO))])
@example(frames=_REPEAT_AROUND_CONFLICT)
@example(frames=_CUT_CONFLICT)
def test_capture_report_gives_inet_verify_results(frames):
    """Differential: the report of check() (the C fast path where built) equals the one from the walker alone
    (counts, bad, offload, malformed, cut, not IP, patches); whole, well-formed packets get exactly
    inet.verify's results. Checksums in the frames come from the RFC 1071 oracle (tests/oracle.py).
    Runs under every summing engine (the every_engine fixture)."""
    cap = _capture(frames)
    rows: list = []
    walked = python_report(cap, sink=lambda i, results: rows.append((i, results)))
    report = check(cap)
    for attr in ("counts", "bad", "offload", "malformed", "cut", "not_ip", "patches"):
        assert getattr(report, attr) == getattr(walked, attr), attr
    assert [i for i, _ in rows] == list(range(len(frames)))
    repeats, failed = _datagram_model(frames)
    for i, results in rows:
        link, frame, orig = frames[i]
        ref = _reference(link, frame)
        if len(frame) < orig:
            continue
        if isinstance(ref, list):
            if i in repeats:  # a byte-for-byte repeat of a first fragment: the datagram's field is reported once
                ref = [r for r in ref if r.reason is not Reason.NEEDS_REASSEMBLY]
            elif i in failed:
                ref = [dataclasses.replace(r, reason=Reason.REASSEMBLY_FAILED)
                       if r.reason is Reason.NEEDS_REASSEMBLY else r for r in ref]
            assert results == ref
        elif ref == "malformed":
            assert i in [j for j, _ in walked.malformed]
        elif ref == "not-ip":
            assert not results
    assert report.cut == [i for i, (_, f, o) in enumerate(frames) if len(f) < o]


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
def test_common_packets_take_the_fast_path():
    """Plain Ethernet/IPv4|IPv6 TCP/UDP/ICMP/ICMPv6 (scapy-built, checksums by scapy) are all judged by the C walker
    at once, and all ok."""
    cap = pcap.parse(pcap_bytes([bytes(p) for p in _scapy_packets()]))
    report = check(cap)
    assert report.fast == 4 and not report.bad and not report.malformed
    assert {k: v["ok"] for k, v in report.counts.items()} == {"ipv4": 2, "tcp": 1, "udp": 1, "icmp": 1, "icmpv6": 1}


def test_negative_zero_and_patches():
    """ICMP computed 0 stored 0xffff passes as negative zero; a wrong field's patch offset points at the field
    in the file and carries scapy's checksum."""
    assert rfc1071_checksum(_NEG_ZERO[14:34]) == 0  # the IPv4 header is right too
    report = check(pcap.parse(pcap_bytes([_NEG_ZERO])))
    assert report.fast == (engine.cwalk is not None) and report.counts["icmp"]["ok"] == 1
    assert report.counts["ipv4"]["ok"] == 1
    assert inet.verify(_NEG_ZERO, link="ether")[1].reason == inet.NEGATIVE_ZERO
    wrong = ETH / IP(src="192.0.2.1", dst="192.0.2.7") / TCP(chksum=0x1234)
    cap = pcap.parse(pcap_bytes([bytes(wrong)]))
    report = check(cap)
    fixed = Ether(bytes(wrong))
    del fixed[TCP].chksum
    (offset, new), = report.patches
    assert offset == 24 + 16 + 14 + 20 + 16 and new == bytes(fixed)[14 + 20 + 16 : 14 + 20 + 18]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(st.one_of(frames(), _framed().map(lambda f: (f[0], f[1]))), min_size=1, max_size=8),
       corrupt=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 300)), max_size=3),
       c_walker=st.booleans())
def test_fast_paths_equal_the_walker(monkeypatch, frames, corrupt, c_walker):
    """Differential: the report with the C fast path (csum/engine/_cwalk.c, where built) equals the walker-only
    report on stacks from csum.testing.frames (VLAN/QinQ, MPLS, options, extension
    headers, IP-in-IP, GRE, VXLAN) and the generated frames above, some bytes flipped."""
    if not c_walker or engine.cwalk is None:
        monkeypatch.setattr(engine, "cwalk", None)
    packets = [bytearray(f) for _, f in frames]
    for k, at in corrupt:
        if k < len(packets) and at < len(packets[k]):
            packets[k][at] ^= 0x40
    cap = _capture([(link, bytes(p), len(p)) for (link, _), p in zip(frames, packets)])
    walked = python_report(cap)
    report = check(cap)
    for attr in ("counts", "bad", "offload", "malformed", "cut", "not_ip", "unsupported", "patches"):
        assert getattr(report, attr) == getattr(walked, attr), attr
    # a small capture's path without numpy (here numpy is imported: the chunk goes to C at once): the C walker a
    # packet at a time, the same report, packets on the fast path and senders included (no fragments here: C
    # reassembles only at once)
    at_once = check(cap, hosts=True)
    monkeypatch.setattr(checker, "one_by_one", lambda packets: True)
    assert check(cap, hosts=True) == at_once


# --- reading in chunks ----------------------------------------------------------------------

def _chunks(data: bytes, chunk_bytes: int) -> tuple[list[pcap.Capture], pcap.Reader]:
    import io

    reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
    return list(reader), reader


def _flat(chunks: list[pcap.Capture]) -> list[tuple[int, bytes, int, int, int]]:
    """(capture-wide number, captured bytes, file offset, original length, link type) of every packet."""
    return [(c.first_index + i, bytes(c.packet(i)), c.base + int(c.offsets[i]), int(c.origlens[i]),
             int(c.linktypes[i])) for c in chunks for i in range(len(c))]


@pytest.mark.parametrize("chunk_bytes", [1, 7, 100, 1000, 1 << 20])
def test_reader_chunks_are_the_file_and_its_packets(chunk_bytes, tmp_path):
    """Chunks laid end to end are the file; their packets (numbered across chunks, file offsets) are parse()'s and
    scapy's, for pcap in both byte orders and a two-section pcapng, at any chunk size."""
    a, b, c, d = (bytes(p) for p in _scapy_packets())
    # interface 0 gets a snap length: scapy reads a Simple Packet Block as empty under snaplen 0 ("no limit")
    files = [pcap_bytes([a, b, c, d] * 3, endian=">", nano=True), pcap_bytes([a, b, c, d] * 3),
             shb() + idb(1, snaplen=65535) + idb(101) + epb(a) + other(5, b"\0" * 20) + epb(b[14:], 1) + spb(d)
             + shb(">") + idb(1, ">") + epb(c, 0, ">")]
    for data in files:
        chunks, reader = _chunks(data, chunk_bytes)
        assert b"".join(ch.data for ch in chunks) == data and reader.stop is None
        whole = pcap.parse(data)
        assert _flat(chunks) == _flat([whole])
        path = tmp_path / "x"
        path.write_bytes(data)
        theirs = RawPcapNgReader(str(path)) if data[:4] == shb()[:4] else RawPcapReader(str(path))
        assert [p for _, p, _, _, _ in _flat(chunks)] == [pkt for pkt, _ in theirs]


def test_reader_stops_at_a_truncated_or_damaged_record():
    """A file ending inside its last record, or a record announcing more than MAX_RECORD: every record before is
    yielded, stop says where, rest() gives the remaining bytes unchanged."""
    pkts = [bytes(p) for p in _scapy_packets()]
    data = pcap_bytes(pkts)
    chunks, reader = _chunks(data[:-3], 50)
    assert len(_flat(chunks)) == 3 and reader.stop.truncated and reader.stop.index == 3
    assert reader.stop.offset == len(data) - 16 - len(pkts[3])
    assert b"".join(ch.data for ch in chunks) + b"".join(reader.rest()) == data[:-3]
    bogus = data[:24] + struct.pack("<IIII", 0, 0, pcap.MAX_RECORD + 1, 0) + b"tail"
    chunks, reader = _chunks(bogus, 1 << 20)
    assert _flat(chunks) == [] and not reader.stop.truncated and "more than the 64 MiB" in reader.stop.reason
    assert b"".join(reader.rest()) == bogus[24:]


def test_reader_validates_the_header_before_reading_on():
    """Construction reads only the header: a non-capture stream is refused after its first 4 bytes."""
    import io

    class Endless(io.RawIOBase):
        served = 0

        def readable(self):
            return True

        def readinto(self, b):
            b[:] = bytes(len(b))
            Endless.served += len(b)
            return len(b)

    with pytest.raises(CsumValueError) as info:
        pcap.Reader(Endless())
    assert info.value.code == "not-a-capture" and Endless.served == 4


def _walks_agree(data: bytes, e: str) -> int:
    """Assert that the pcap record walk of csum/engine/_cwalk.c (pcap_records) finds the same records, stop offset and
    reason in ``data`` (records of byte order ``e``) as the Python loop it replaces (the reference); the records found."""
    from csum.capture import pcap as module

    if engine.cwalk is None:
        pytest.skip("csum.engine._cwalk is not built")
    c, saved = module._PcapWalker(e, 1).walk(data, 0), engine.cwalk
    try:
        engine.cwalk = None
        py = module._PcapWalker(e, 1).walk(data, 0)
    finally:
        engine.cwalk = saved
    assert (c.end, c.problem, c.short) == (py.end, py.problem, py.short)
    for name in ("offs", "caps", "origs"):
        assert list(getattr(c, name)) == list(getattr(py, name)), name
    return len(c.offs)


@settings(max_examples=200)
@given(records=st.lists(st.tuples(st.binary(max_size=40), st.integers(0, 80)), max_size=12),
       tail=st.binary(max_size=20), big=st.booleans())
def test_c_record_walk_equals_the_python_one(records, tail, big):
    """Differential: the C record walk equals the Python one (:func:`_walks_agree`) on records with random
    captured/original lengths and a random tail (sometimes a header announcing more than is left)."""
    e = ">" if big else "<"
    _walks_agree(b"".join(struct.pack(e + "IIII", 0, 0, len(body), orig) + body for body, orig in records) + tail, e)


@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000])
@pytest.mark.parametrize("big", [False, True])
def test_c_record_walk_grows_its_columns(count, big):
    """Differential (:func:`_walks_agree`): records far smaller than the 64 bytes pcap_records (csum/engine/_cwalk.c)
    sizes its columns for (bodies of 0 to 3 bytes), so that it grows them, by counts around each doubling, a cut
    record at the end included."""
    e = ">" if big else "<"
    data = b"".join(struct.pack(e + "IIII", k, 0, k % 4, 60) + bytes(k % 4) for k in range(count))
    assert _walks_agree(data + struct.pack(e + "IIII", 0, 0, 9, 9) + bytes(3), e) == count


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=fragmented(), corrupt=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 120)), max_size=2),
       plain=st.lists(frames(), max_size=3), one_by_one=st.booleans())
def test_c_reassembly_equals_the_walker(monkeypatch, frames, corrupt, plain, one_by_one):
    """Differential: fragments judged by the C walker (csum/engine/_cwalk.c reassembles the datagrams it can) give the
    same report as the walker-only run (csum/layers/reassembly.py), on fragments lost, repeated, reordered,
    overlapping, cut, sharing a key, corrupted, or mixed with csum.testing.frames stacks; the chunk checked at once or
    a packet at a time (csum.capture.checker.ONE_BY_ONE: C judges whole packets, the Python walker reassembles)."""
    if engine.cwalk is None:
        pytest.skip("csum.engine._cwalk is not built")
    packets = [(1, bytearray(f), orig) for f, orig in frames] + [(link, bytearray(f), len(f)) for link, f in plain]
    for k, at in corrupt:
        if k < len(packets) and at < len(packets[k][1]):
            packets[k][1][at] ^= 0x40
    cap = _capture([(link, bytes(p), max(orig, len(p))) for link, p, orig in packets])
    walked = python_report(cap)
    monkeypatch.setattr(checker, "one_by_one", lambda packets: one_by_one)  # a small capture's path, or at once
    report = check(cap)
    for attr in ("counts", "bad", "offload", "malformed", "cut", "not_ip", "unsupported", "patches"):
        assert getattr(report, attr) == getattr(walked, attr), attr


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_pcap_timestamps(endian, nano):
    """Capture.times: each record's seconds and fraction (microseconds, or nanoseconds with the a1b23c4d magic) in
    nanoseconds; expected from what tests/captures.py wrote (record i: 1_700_000_000 + i s, fraction 1000 i + 7),
    also with the chunks of a Reader(times=True) (without it, no column)."""
    frames = [bytes(ETH / IP() / UDP() / Raw(bytes(i))) for i in range(40)]
    data = pcap_bytes(frames, endian=endian, nano=nano)
    want = [(1_700_000_000 + i) * 10**9 + (1000 * i + 7) * (1 if nano else 1000) for i in range(40)]
    assert pcap.parse(data).times.tolist() == want
    got = [t for chunk in pcap.Reader(io.BytesIO(data), 300, times=True) for t in chunk.times.tolist()]
    assert all(chunk.times is None for chunk in pcap.Reader(io.BytesIO(data), 300))  # only when asked
    assert got == want


def _idb_clock(resol: int, offset: int | None = None, endian: str = "<") -> bytes:
    """An Interface Description Block (Ethernet) with if_tsresol ``resol`` and, when given, if_tsoffset (seconds),
    written from draft-ietf-opsawg-pcapng 4.2."""
    opts = struct.pack(endian + "HHB3x", 9, 1, resol)
    if offset is not None:
        opts += struct.pack(endian + "HHq", 14, 8, offset)
    body = struct.pack(endian + "HHI", 1, 0, 0) + opts + struct.pack(endian + "HH", 0, 0)
    body += b"\0" * (-len(body) % 4)
    return struct.pack(endian + "II", 1, 12 + len(body)) + body + struct.pack(endian + "I", 12 + len(body))


def test_pcapng_timestamps():
    """Enhanced and obsolete Packet Blocks in ticks of each interface's if_tsresol (10**-9 s, 10**-3 s, 2**-3 s;
    default 10**-6 s without the option) plus if_tsoffset; a Simple Packet Block has none (NO_TIME). Expected: the
    ticks written here, converted by hand."""
    frame = bytes(ETH / IP() / UDP())
    no_opt = struct.pack("<II", 1, 20) + struct.pack("<HHI", 1, 0, 0) + struct.pack("<I", 20)
    data = (shb() + idb(1) + _idb_clock(3) + _idb_clock(0x83, offset=100) + no_opt
            + epb(frame, 0, ts=5_000_000_123) + epb(frame, 1, ts=7) + epb(frame, 2, ts=9) + epb(frame, 3, ts=11)
            + pb(frame, 1) + spb(frame))
    assert pcap.parse(data).times.tolist() == [
        5_000_000_123, 7_000_000, 9 * 10**9 // 8 + 100 * 10**9, 11_000, (1 << 32 | 2) * 10**6, pcap.NO_TIME]


def test_pcapng_timestamps_out_of_range():
    """64 bits of ticks at a coarse if_tsresol (seconds here), or a large if_tsoffset, can name a time that 64-bit
    nanoseconds since the epoch cannot hold (before 1677-09-21 or after 2262-04-11): that packet's time is unknown
    (NO_TIME), the walk goes on (a fuzz find: it raised OverflowError). Expected: the int64 range, by hand; the last
    in-range nanosecond 2**63 - 1 is kept."""
    frame = bytes(ETH / IP() / UDP())
    data = (shb() + _idb_clock(0) + _idb_clock(9) + _idb_clock(9, offset=-(1 << 62))
            + epb(frame, 0, ts=1 << 40) + epb(frame, 0, ts=9_223_372_036) + epb(frame, 0, ts=9_223_372_037)
            + epb(frame, 1, ts=(1 << 63) - 1) + epb(frame, 1, ts=1 << 63) + epb(frame, 2, ts=5))
    cap = pcap.parse(data)
    assert len(cap) == 6
    assert cap.times.tolist() == [pcap.NO_TIME, 9_223_372_036 * 10**9, pcap.NO_TIME,
                                  (1 << 63) - 1, pcap.NO_TIME, pcap.NO_TIME]


def test_capture_columns_without_numpy_records_pickle_and_read_only():
    """Capture.records() (the packet-at-a-time path, no numpy) gives the numpy columns' values; a pickled Capture (what
    worker processes get) and with_data() keep every column; a Capture cannot be changed. Expected values: the record
    headers tests/captures.py wrote (offset 24 + 16 per header, the lengths given, link type 1, seconds 1.7e9 + i and
    1000 * i + 7 microseconds)."""
    import pickle

    cap = pcap.parse(pcap_bytes([b"x" * 30, b"y" * 41], origlens=[30, 60]))
    want = [(40, 30, 30, 1, 1_700_000_000_000_007_000), (86, 41, 60, 1, 1_700_000_001_001_007_000)]
    assert list(cap.records()) == want
    assert [cap.offsets.tolist(), cap.caplens.tolist(), cap.origlens.tolist(), cap.linktypes.tolist(),
            cap.times.tolist()] == [list(column) for column in zip(*want)]
    assert [cap.is_cut(0), cap.is_cut(1), bytes(cap.packet(1))] == [False, True, b"y" * 41]
    for other in (pickle.loads(pickle.dumps(cap)), cap.with_data(bytes(len(cap.data)))):
        assert list(other.records()) == want and other.format == "pcap"
    with pytest.raises(AttributeError):
        cap.base = 5  # type: ignore[misc]

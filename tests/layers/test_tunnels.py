"""csum/layers/tunnels.py and the length fields that bound a payload: against tshark's verdicts and scapy's checksums.

Every inner packet is scapy's (its checksums scapy's); the encapsulations scapy does not build come from
tests/encapsulations.py (written from their specifications). Where a length field says the payload is shorter than
the datagram it holds, Linux drops or trims it (drivers/net/ppp/pppoe.c ``pppoe_rcv``, then net/ipv4/ip_input.c
``ip_rcv_core``) and tshark 4.0 sums what the length leaves (a bad checksum) or gives no verdict; the rule checked
here is the one that matters: csum never calls such a checksum good, and reports what it cannot judge.
"""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest
from captures import pcap_bytes, pcapng_bytes
from encapsulations import capwap, ether, l2tp, packet_in, pppoe, sflow
from packets import A4, B4, C4, D4, ETH
from scapy.all import GRE, IP, LLC, SNAP, TCP, UDP, Dot11, Ether, IPv6, Raw, raw
from scapy.contrib.gtp import GTP_U_Header
from scapy.layers.vxlan import VXLAN

from csum.capture import pcap
from csum.capture.checker import check
from csum.capture.report import count_key
from csum.errors import CsumValueError
from csum.layers import corrections, inet, walk

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install "
                                  "tshark)")
INNER = raw(IP(src=C4, dst=D4) / TCP(sport=1, dport=2) / b"abcdef")  # 46 bytes, scapy's checksums


def _tshark(frames: list[tuple[int, bytes]], tmp_path, field: str) -> list[list[str]]:
    """tshark's verdicts (0 bad, 1 good, 2 unverified) in ``field`` for each frame, checksum validation on."""
    path = tmp_path / "frames.pcapng"
    path.write_bytes(pcapng_bytes([(link, f, len(f)) for link, f in frames]))
    cmd = ["tshark", "-r", str(path), "-T", "fields", "-E", "occurrence=a", "-e", field]
    for pref in ("ip.check_checksum:TRUE", "tcp.check_checksum:TRUE", "udp.check_checksum:TRUE"):
        cmd += ["-o", pref]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout.split("\n")
    return [[v for v in line.split(",") if v] for line in out[: len(frames)]]


def _csum(link: int, frame: bytes) -> tuple[list[tuple[str, str]], str | None, list[str]]:
    """csum verify's (layer@depth, status) of one frame, its malformed reason and the walk's notes."""
    report = check(pcap.parse(pcap_bytes([frame], linktype=link)))
    rows: list = []
    check(pcap.parse(pcap_bytes([frame], linktype=link)), sink=lambda i, res: rows.extend(res))
    return [(count_key(r), str(r.status)) for r in rows], (report.malformed or [(0, None)])[0][1], \
        walk(memoryview(frame), link).notes


# --- item 1: the PPPoE Length, and every length field on the way down ---------------------------------------------

def _cut_frames() -> list[tuple[str, int, bytes]]:
    """(name, link type, frame): a payload whose encapsulation's length leaves less than the datagram inside."""
    gtp = raw(GTP_U_Header(teid=1, gtp_type=255, length=30)) + INNER
    vxlan_short = bytearray(raw(ETH / IP(src=A4, dst=B4) / UDP(sport=5, dport=4789) / VXLAN(vni=1) / ETH / IP(INNER)))
    vxlan_short[38:40] = struct.pack("!H", 8 + 8 + 14 + 40)  # the UDP length leaves 40 of the inner 46 bytes
    return [
        ("pppoe", 1, ether(0x8864, pppoe(b"\x00\x21" + INNER, length=42))),  # the frame: 42 < 2 + 46
        ("pppoe-pfc", 1, ether(0x8864, pppoe(b"\x21" + INNER, length=41))),
        ("gtp", 1, raw(ETH / IP(src=A4, dst=B4) / UDP(sport=2152, dport=2152) / Raw(gtp))),
        ("l2tp", 1, raw(ETH / IP(src=A4, dst=B4) / UDP(sport=1701, dport=1701)
                        / Raw(l2tp(b"\xff\x03\x00\x21" + INNER, claimed=8 + 4 + 40)))),
        ("vxlan", 1, bytes(vxlan_short)),
    ]


@needs_tshark
def test_a_payload_cut_by_its_length_is_never_good(tmp_path):
    """The issue's frame (PPPoE Length 42, IPv4 total length 46) and its kin under GTP, L2TP and VXLAN: tshark
    calls the TCP checksum bad or gives none; csum gives no TCP verdict (the datagram is truncated by its
    encapsulation: malformed for the outer IP layer, a note inside a tunnel) and judges the IPv4 header as both
    tshark and Linux do (ip_rcv_core checks it before the lengths)."""
    frames = _cut_frames()
    theirs = _tshark([(link, f) for _, link, f in frames], tmp_path, "tcp.checksum.status")
    for (name, link, frame), tcp in zip(frames, theirs):
        assert "1" not in tcp[-1:], (name, tcp)  # tshark: the innermost TCP checksum is bad or not judged
        ours, malformed, notes = _csum(link, frame)
        assert not [s for layer, s in ours if layer.startswith("tcp")], (name, ours)
        assert ours[0] == ("ipv4", "ok") and (malformed or notes), name
        assert "truncated" in (malformed or notes[0]), (name, malformed, notes)
    assert _csum(1, frames[0][2])[1].startswith("packet: truncated: IPv4 total length 46")


def test_a_pppoe_length_past_the_frame_is_malformed():
    """RFC 2516's Length beyond the frame: Linux pppoe_rcv drops the frame (skb->len < len), so csum reports it
    malformed without a verdict inside; Ethernet padding after a Length that fits is not the datagram's (scapy's
    checksums pass)."""
    ours, malformed, _ = _csum(1, ether(0x8864, pppoe(b"\x00\x21" + INNER, length=60)))
    assert ours == [] and malformed == "packet: truncated: PPPoE Length 60 needs 80 bytes, its encapsulation ends at 68"
    ours, malformed, _ = _csum(1, ether(0x8864, pppoe(b"\x00\x21" + INNER)) + bytes(20))
    assert ours == [("ipv4", "ok"), ("tcp", "ok")] and malformed is None


def test_an_inner_header_past_its_encapsulation_is_not_read():
    """An L2TP Length that ends inside the inner IPv4 header: the bytes after it are not the header's (tshark 4.0:
    unverified); csum does not judge that header and says why, in the report's malformed packets."""
    frame = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=1701, dport=1701)
                / Raw(l2tp(b"\xff\x03\x00\x21" + INNER, claimed=8 + 4 + 18)))
    ours, malformed, notes = _csum(1, frame)
    assert ours == [("ipv4", "ok"), ("udp", "ok")]
    assert malformed == "inside eth/ipv4/udp: truncated: IPv4 header needs 74 bytes, its encapsulation ends at 72"
    assert notes == ["eth/ipv4/udp: packet: truncated: IPv4 header needs 74 bytes, its encapsulation ends at 72"]


@needs_tshark
def test_an_inner_datagram_longer_than_its_tunnel_is_malformed_not_passed(tmp_path):
    """IP in IP, 6in4 and GRE whose outer length ends 1-3 bytes before the inner datagram's end (the bytes are in the
    frame, past the outer IPv4 datagram): tshark 4.0 gives the expert error "... length exceeds ..." and a bad TCP
    checksum. csum judges the outer header, gives no inner TCP verdict, and lists the packet as malformed (it used to
    list nothing: a silent pass); csum.inet.verify raises, naming the tunnel and the inner layer's lengths."""
    inner6 = raw(IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=1, dport=2) / b"abcdef")
    frames = [raw(ETH / IP(src=A4, dst=B4, proto=4, len=20 + len(INNER) - 1) / Raw(INNER)),
              raw(ETH / IP(src=A4, dst=B4, proto=41, len=20 + len(inner6) - 2) / Raw(inner6)),
              raw(ETH / IP(src=A4, dst=B4, proto=47, len=20 + 4 + len(INNER) - 3) / GRE(proto=0x0800) / Raw(INNER))]
    theirs = _tshark([(1, f) for f in frames], tmp_path, "_ws.expert.message")
    status = _tshark([(1, f) for f in frames], tmp_path, "tcp.checksum.status")
    for frame, expert, tcp in zip(frames, theirs, status):
        assert any("length exceeds" in m for m in expert) and tcp == ["0"], (expert, tcp)
        ours, malformed, _ = _csum(1, frame)
        assert ours[0] == ("ipv4", "ok") and not [layer for layer, _ in ours if layer.startswith("tcp")], ours
        assert malformed is not None and malformed.startswith("inside eth/ipv4") and "truncated" in malformed
        with pytest.raises(CsumValueError, match=r"^inside eth/ipv4(/gre)?: truncated: IPv[46] "):
            inet.verify(frame)


_TUNNEL_PORTS = {"udp": (4789, 6081, 2152, 3386, 4754, 4790, 1701, 3544, 4341, 5072, 5247, 6343), "tcp": (6653, 6633)}


def _on_port(l4: str, port: int, payload: bytes, v6: bool = False) -> bytes:
    ip = IPv6(src="2001:db8::1", dst="2001:db8::2") if v6 else IP(src=A4, dst=B4)
    layer = UDP(sport=40000, dport=port) if l4 == "udp" else TCP(sport=40000, dport=port, flags="A")
    return raw(ETH / ip / layer / Raw(payload))


@needs_tshark
@pytest.mark.usefixtures("every_engine")
def test_a_payload_on_a_tunnel_port_that_is_not_the_tunnel(tmp_path):
    """A UDP datagram or TCP segment with no payload on a tunnel's or embedded protocol's port: tshark calls no
    dissector of that port and csum walks nothing into it (it used to list "AYIYA header needs 50 bytes" as a
    malformed packet). The start of a VXLAN, Geneve, AYIYA or GTP header on their ports: tshark flags a malformed
    packet; csum, which knows the protocol by its port only, notes that the payload is not that protocol and judges
    the datagram (no checksum inside went unjudged). A VXLAN whose inner IPv4 header is cut is malformed for both.
    Every engine (C walker or not)."""
    empty = [_on_port(l4, port, b"") for l4, ports in _TUNNEL_PORTS.items() for port in ports]
    short = [_on_port("udp", port, start) for port, start in ((4789, b"\x08"), (6081, b"\x00"), (5072, b"\x41"),
                                                               (2152, b"\x30\xff\x00\x10"))]  # GTP: from 4 bytes
    cut = _on_port("udp", 4789, raw(VXLAN(vni=1) / Ether(type=0x0800)) + raw(IP(src=C4, dst=D4))[:14])
    theirs = _tshark([(1, f) for f in empty + short + [cut]], tmp_path, "_ws.malformed")
    assert theirs[: len(empty)] == [[]] * len(empty) and all("_ws.malformed" in t for t in theirs[len(empty):])
    for frame in empty:
        ours, malformed, notes = _csum(1, frame)
        assert ours == [("ipv4", "ok"), (ours[1][0], "ok")] and malformed is None and notes == [], (frame, ours)
    for frame in short:
        ours, malformed, notes = _csum(1, frame)
        assert ours == [("ipv4", "ok"), ("udp", "ok")] and malformed is None, (ours, malformed)
        assert len(notes) == 1 and "truncated" in notes[0], notes
    ours, malformed, _ = _csum(1, cut)
    assert ours == [("ipv4", "ok"), ("udp", "ok")]
    assert malformed == "inside eth/ipv4/udp: truncated: IPv4 header needs 84 bytes, packet has 78", malformed
    # a GTP-U or L2TP Length one byte past the datagram (h43v's review): tshark judges the inner IPv4 checksum bad;
    # csum calls the packet malformed, never a note over an unjudged inner header
    bad = raw(IP(src=C4, dst=D4, chksum=0x1234) / UDP(sport=1, dport=2) / b"hello")
    long_gtp = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=2152, dport=2152)
                   / GTP_U_Header(teid=1, gtp_type=255, length=len(bad) + 1) / Raw(bad))
    long_l2tp = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=1701, dport=1701)
                    / Raw(l2tp(b"\xff\x03\x00\x21" + bad, claimed=8 + 4 + len(bad) + 1)))
    assert all("0" in t for t in _tshark([(1, long_gtp), (1, long_l2tp)], tmp_path, "ip.checksum.status"))
    for frame, what in ((long_gtp, "GTP"), (long_l2tp, "L2TP")):
        malformed = _csum(1, frame)[1]
        assert malformed is not None and malformed.startswith(f"inside eth/ipv4/udp: truncated: {what} Length "), malformed
    # Teredo's payload is IPv6 itself: 30 bytes starting 0x45 are not (a note), starting 0x60 a cut IPv6 header
    # (tshark: "[Malformed Packet: IPv6]"; on the first it flags "teredo:data" malformed, csum does not guess)
    not_v6, cut_v6 = (_on_port("udp", 3544, first + bytes(29)) for first in (b"\x45", b"\x60"))
    assert "[Malformed Packet: IPv6]" in _tshark([(1, cut_v6)], tmp_path, "_ws.malformed")[0]
    assert _csum(1, not_v6)[1] is None
    assert _csum(1, cut_v6)[1] == "inside eth/ipv4/udp: truncated: IPv6 header needs 82 bytes, packet has 72"


@pytest.mark.usefixtures("every_engine")
def test_an_empty_ipv6_datagram_with_zero_checksum_on_a_tunnel_port_is_none():
    """RFC 6935: a UDP checksum of 0 over IPv6 on a tunnel's port is allowed (status none), also when the datagram
    is empty; on any other port it is bad (RFC 8200 8.1). Every engine: the C walker keeps VXLAN's port, the Python
    walker AYIYA's."""
    for port, status in ((4789, "none"), (5072, "none"), (40001, "bad")):
        frame = bytearray(_on_port("udp", port, b"", v6=True))
        frame[14 + 40 + 6:14 + 40 + 8] = b"\0\0"
        ours, malformed, _ = _csum(1, bytes(frame))
        assert ours == [("udp", status)] and malformed is None, (port, ours)


# --- item 2: the encapsulations' details --------------------------------------------------------------------------

def test_capwap_reads_the_frame_control_field_either_way():
    """RFC 5416 sends the 802.11 frame as it is; Cisco's access points swap its Frame Control bytes (what tshark
    assumes). Either way csum finds the inner packet and its checksums are scapy's."""
    wlan = raw(Dot11(type=2, subtype=0, FCfield=1) / LLC() / SNAP(code=0x0800) / IP(INNER))
    for swap in (True, False):
        frame = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=40000, dport=5247) / Raw(capwap(wlan, swap=swap)))
        results = inet.verify(frame)
        assert [(count_key(r), str(r.status)) for r in results] == [
            ("ipv4", "ok"), ("udp", "ok"), ("ipv4@1", "ok"), ("tcp@1", "ok")], swap
        assert results[-1].path == "eth/ipv4/udp/capwap/wlan/llc/ipv4/tcp"


@needs_tshark
def test_a_tunnel_is_known_by_its_source_port_as_tshark_knows_it(tmp_path):
    """Wireshark's UDP dissector tries the lower port first: GTP-U from port 2152 to an ephemeral port is GTP, from
    an ephemeral port to port 53 it is DNS. csum walks the first (tshark's verdict on the inner TCP is scapy's:
    good) and not the second."""
    gtp = raw(GTP_U_Header(teid=1) / IP(INNER))
    frames = [(1, raw(ETH / IP(src=A4, dst=B4) / UDP(sport=2152, dport=40000) / Raw(gtp))),
              (1, raw(ETH / IP(src=A4, dst=B4) / UDP(sport=40000, dport=53) / Raw(gtp)))]
    assert _tshark(frames, tmp_path, "tcp.checksum.status") == [["1"], []]
    assert [count_key(r) for r in inet.verify(frames[0][1])] == ["ipv4", "udp", "ipv4@1", "tcp@1"]
    assert [count_key(r) for r in inet.verify(frames[1][1])] == ["ipv4", "udp"]


def test_gtp_without_the_pt_bit_is_not_walked():
    """GTPv1 with PT clear is GTP' (3GPP TS 32.295), which carries no T-PDU; tshark 4.0 does not dissect it either."""
    gtp = bytearray(raw(GTP_U_Header(teid=1) / IP(INNER)))
    gtp[0] &= ~0x10
    frame = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=2152, dport=2152) / Raw(bytes(gtp)))
    assert [count_key(r) for r in inet.verify(frame)] == ["ipv4", "udp"]
    assert walk(memoryview(frame), 1).notes == ["eth/ipv4/udp/gtp: GTP version 1 (flags 0x20) is not walked"]


# --- embedded packets ---------------------------------------------------------------------------------------------

def _sflow_frame(inner: bytes, frame_length: int) -> bytes:
    return raw(ETH / IP(src=A4, dst=B4) / UDP(sport=40000, dport=6343) / Raw(sflow([(1, inner, frame_length)])))


def test_an_embedded_packet_is_judged_at_its_depth_and_never_fixed_unless_asked():
    """An sFlow sample of a packet whose TCP checksum is wrong (scapy's, one bit flipped): reported bad at depth
    1, marked embedded; corrections leave it (and the sFlow datagram's UDP checksum) alone unless asked, and then
    set both: the sample's TCP field to scapy's value and the UDP checksum to scapy's over the corrected sample."""
    good = raw(ETH / IP(INNER))
    bad = bytearray(good)
    bad[14 + 20 + 16] ^= 0x01
    frame = _sflow_frame(bytes(bad), len(bad) + 4)
    view = memoryview(frame)
    stack = walk(view, 1)
    assert [(f.entry.name, f.depth, f.embedded) for f in stack.fields] == [
        ("ipv4", 0, False), ("udp", 0, False), ("ipv4", 1, True), ("tcp", 1, True)]
    assert [(count_key(r), str(r.status)) for r in inet.verify(frame)][-1] == ("tcp@1", "bad")
    assert corrections(view, stack.fields) == []
    fixed = bytearray(frame)
    for at, new in corrections(view, stack.fields, embedded=True):
        fixed[at : at + 2] = new
    assert bytes(fixed) == _sflow_frame(good, len(good) + 4)
    report = check(pcap.parse(pcap_bytes([frame])))
    assert [(i, count_key(r)) for i, r in report.bad] == [(0, "tcp@1")] and report.patches == []
    assert len(check(pcap.parse(pcap_bytes([frame])), fix_embedded=True).patches) == 2


def test_a_sampled_header_cut_short_is_not_captured():
    """sFlow samples the first bytes of a packet: the TCP checksum then covers bytes the sample does not hold
    (n/a, not-captured), the IPv4 header is judged; the frame length says how long the packet was."""
    whole = raw(ETH / IP(src=C4, dst=D4) / TCP() / (b"z" * 300))
    results = inet.verify(_sflow_frame(whole[:128], len(whole) + 4))
    assert [(count_key(r), str(r.reason)) for r in results] == [
        ("ipv4", "ok"), ("udp", "ok"), ("ipv4@1", "ok"), ("tcp@1", "not-captured")]


@needs_tshark
def test_a_truncated_packet_in_is_not_called_bad(tmp_path):
    """An OpenFlow 1.3 packet-in holding the first 100 bytes of a 254-byte frame (total_len 254): tshark 4.0 sums the
    100 bytes and calls the inner TCP checksum bad, though its segment is not all there; csum judges the inner IPv4
    header (good, as tshark) and reports the TCP checksum not-captured."""
    whole = raw(ETH / IP(src=C4, dst=D4) / TCP() / (b"z" * 200))
    frame = raw(ETH / IP(src=A4, dst=B4) / TCP(sport=6653, dport=40000, flags="PA")
                / Raw(packet_in(whole[:100], total=len(whole))))
    assert _tshark([(1, frame)], tmp_path, "tcp.checksum.status") == [["1", "0"]]
    assert _tshark([(1, frame)], tmp_path, "ip.checksum.status") == [["1", "1"]]
    results = inet.verify(frame)
    assert [(count_key(r), str(r.reason)) for r in results] == [
        ("ipv4", "ok"), ("tcp", "ok"), ("ipv4@1", "ok"), ("tcp@1", "not-captured")]


def test_every_openflow_message_of_a_segment_is_walked():
    """Two packet-ins (OpenFlow 1.3 and 1.0) in one TCP segment, and a third cut off by the segment's end (csum does
    not reassemble TCP): the two frames' checksums are scapy's, the cut one is not walked."""
    frames = [raw(ETH / IP(src=C4, dst=D4) / UDP(sport=k, dport=9) / b"of") for k in (1, 2, 3)]
    payload = packet_in(frames[0]) + packet_in(frames[1], version=1) + packet_in(frames[2])[:30]
    frame = raw(ETH / IP(src=A4, dst=B4) / TCP(sport=40000, dport=6653, flags="PA") / Raw(payload))
    results = inet.verify(frame)
    assert [count_key(r) for r in results] == ["ipv4", "tcp", "ipv4@1", "udp@1", "ipv4@1", "udp@1"]
    assert all(r.ok and r.stored == r.computed for r in results)


# --- item 4: link types without an Internet checksum --------------------------------------------------------------

def _802154(payload: bytes, frame_type: int = 1, security: bool = False) -> bytes:
    """An IEEE 802.15.4-2011 MAC frame (frame version 1, short addresses, PAN ID compression) with ``payload``."""
    fc = frame_type | (0x08 if security else 0) | 0x40 | (2 << 10) | (1 << 12) | (2 << 14)
    return struct.pack("<HB", fc, 5) + b"\xcd\xab" + b"\xff\xff" + b"\x01\x00" + payload


@pytest.mark.parametrize("link, frame, verdict", [
    (253, bytes(20), "none"),                                   # Netlink
    (189, bytes(64), "none"),                                   # USB (Linux)
    (187, b"\x04\x0e\x04\x01\x03\x0c\x00", "none"),            # Bluetooth HCI H4
    (230, _802154(b"\x08\x02" + bytes(8)), "none"),             # a ZigBee NWK frame: RFC 4944's NALP
    (230, _802154(b"", frame_type=2), "none"),                  # an acknowledgment
    (230, _802154(b"\x7a\x33\x3a" + bytes(8)), "unsupported"),  # 6LoWPAN IPHC (RFC 6282): might hold UDP
    (195, _802154(bytes(8), security=True), "unsupported"),     # encrypted: might be 6LoWPAN
    (147, bytes(20), "unsupported"),                            # LINKTYPE_USER0: anything
])
def test_a_link_type_without_checksums_is_nothing_to_check(link, frame, verdict):
    """Frames of link types that carry no Internet checksum csum could reach (tcpdump.org's LINKTYPE_ list) are
    counted as such; an 802.15.4 frame only when RFC 4944's dispatch (or the frame type) says it is not 6LoWPAN;
    an unknown link type stays unsupported."""
    report = check(pcap.parse(pcap_bytes([frame], linktype=link)))
    assert (report.no_checksum, report.unsupported) == (({link: 1}, {}) if verdict == "none" else ({}, {link: 1}))

"""Encapsulation headers scapy 2.8 does not build, written for the tests from their specifications.

Each builder returns bytes to put in front of (or around) a scapy-built inner packet, whose checksums stay scapy's.
Sources: GSM 09.60 6 (GTPv0), RFC 5415 4.3 (CAPWAP), draft-massar-v6ops-ayiya 5 (AYIYA), RFC 4380 5.1.1 (Teredo),
RFC 9300 5.3 (LISP), RFC 2661 3.1 (L2TPv2), RFC 2516 4 (PPPoE), sflow.org sflow_version_5.txt (sFlow), the
OpenFlow 1.0.0 and 1.3.0 specifications (packet-in), Cisco's VN-Tag, IEEE 802.1BR's E-Tag and Cisco MetaData as
Wireshark's packet-vntag.c, packet-etag.c and packet-cmd.c lay them out, and Cisco FabricPath as
packet-cisco-fp-mim.c does. None of them reads csum.
"""

from __future__ import annotations

import struct

MACS = bytes.fromhex("020000000002" "020000000001")


def ether(ethertype: int, body: bytes) -> bytes:
    """An Ethernet II frame's header (the tests' two MAC addresses) and ``body``."""
    return MACS + struct.pack("!H", ethertype) + body


def tag(ethertype: int, size: int, inner_type: int, body: bytes) -> bytes:
    """A tag of ``size`` bytes (VN-Tag 4, E-Tag 6, Cisco MetaData 6) under ``ethertype``, then ``inner_type``."""
    return ether(ethertype, bytes(range(1, size + 1)) + struct.pack("!H", inner_type) + body)


def fabricpath(frame: bytes) -> bytes:
    """Cisco FabricPath: outer addresses, EtherType 0x8903, FTag 1 and TTL 1, the frame, and 4 bytes of FCS (which
    Wireshark 4.0's dissector takes off the end)."""
    return ether(0x8903, b"\x00\x41" + frame) + b"\xde\xad\xbe\xef"


def pppoe(ppp: bytes, length: int | None = None) -> bytes:
    """A PPPoE session header (ver 1, type 1, code 0, session 1), Length ``length`` (default: the PPP frame's)."""
    return struct.pack("!BBHH", 0x11, 0, 1, len(ppp) if length is None else length) + ppp


def gtp_v0(payload: bytes, flags: int = 0x1E) -> bytes:
    """A GTPv0 T-PDU header (20 bytes: flags, type 255, Length, sequence, flow label, SNDCP N-PDU, spare, TID)."""
    return struct.pack("!BBHHHB3s8s", flags, 0xFF, len(payload), 1, 0, 0xFF, b"\xff" * 3, b"\x11" * 8) + payload


def capwap(frame: bytes, native: bool = True, swap: bool = True) -> bytes:
    """A CAPWAP data header (HLEN 2, WBID 1; T set for an 802.11 frame, clear for 802.3); ``swap`` byte-swaps the
    802.11 Frame Control field as Cisco's access points send it."""
    if native and swap:
        frame = frame[1:2] + frame[:1] + frame[2:]
    word = (2 << 19) | (1 << 9) | (0x100 if native else 0)
    return struct.pack("!I", word) + bytes(4) + frame


def ayiya(packet: bytes, next_header: int) -> bytes:
    """An AYIYA forward message: a 16-byte identity (IDLen 4), a 20-byte SHA-1 signature (SigLen 5), epoch time."""
    return bytes([0x41, 0x52, 0x21, next_header]) + b"\x5e\x00\x00\x00" + b"\xaa" * 16 + b"\xbb" * 20 + packet


def teredo(packet: bytes) -> bytes:
    """An IPv6 packet after a Teredo Authentication indication (2-byte client id, 3-byte value) and an Origin one."""
    auth = b"\x00\x01\x02\x03" + b"id" + b"abc" + b"\x11" * 8 + b"\x00"
    return auth + b"\x00\x00\xff\xff\xfe\xff\xff\xfe" + packet


def lisp(packet: bytes) -> bytes:
    """The 8-byte LISP data header (N bit, nonce; instance id) in front of the inner packet."""
    return b"\x80\x00\x00\x01\x00\x00\x00\x01" + packet


def l2tp(ppp: bytes, length: bool = True, sequence: bool = False, offset: int | None = None,
         claimed: int | None = None) -> bytes:
    """An L2TPv2 data message (tunnel 7, session 9) with the L, S and O fields asked for; ``claimed``: a Length
    other than the message's."""
    flags = 2 | (0x4000 if length else 0) | (0x0800 if sequence else 0) | (0x0200 if offset is not None else 0)
    body = b"\x00\x07\x00\x09" + (b"\x00\x01\x00\x02" if sequence else b"")
    if offset is not None:
        body += struct.pack("!H", offset) + bytes(offset)
    total = 2 + (2 if length else 0) + len(body) + len(ppp)
    return struct.pack("!H", flags) + (struct.pack("!H", total if claimed is None else claimed) if length else b"") \
        + body + ppp


def sflow(headers: list[tuple[int, bytes, int]], expanded: bool = False) -> bytes:
    """An sFlow version 5 datagram (agent 192.0.2.9) of one flow sample (or expanded flow sample) holding a raw packet
    header record for each (header protocol, header bytes, frame length); 4 bytes stripped from each frame."""
    records = b""
    for protocol, header, frame_length in headers:
        data = struct.pack("!IIII", protocol, frame_length, 4, len(header)) + header + bytes(-len(header) % 4)
        records += struct.pack("!II", 1, len(data)) + data
    if expanded:
        body = struct.pack("!IIIIIIIIIII", 1, 0, 3, 512, 1000, 0, 0, 1, 0, 2, len(headers)) + records
    else:
        body = struct.pack("!IIIIIIII", 1, 3, 512, 1000, 0, 1, 2, len(headers)) + records
    sample = struct.pack("!II", 3 if expanded else 1, len(body)) + body
    return struct.pack("!II4sIIII", 5, 1, bytes([192, 0, 2, 9]), 0, 7, 100, 1) + sample


def packet_in(frame: bytes, version: int = 4, total: int | None = None) -> bytes:
    """An OpenFlow packet-in (version 1: OpenFlow 1.0; 4: 1.3, with a 12-byte OXM match padded to 16) whose data
    is ``frame``; ``total``: its total_len (default: the frame's length)."""
    size = len(frame) if total is None else total
    if version == 1:
        body = struct.pack("!IHHBB", 0xFFFFFFFF, size, 1, 0, 0) + frame
    else:
        match = struct.pack("!HH", 1, 12) + struct.pack("!HBBI", 0x8000, 0, 4, 3) + bytes(4)
        body = struct.pack("!IHBBQ", 0xFFFFFFFF, size, 0, 0, 1) + match + b"\0\0" + frame
    return struct.pack("!BBHI", version, 10, 8 + len(body), 5) + body

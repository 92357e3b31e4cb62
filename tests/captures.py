"""Capture writers for the tests: pcap (both byte orders, us/ns) and pcapng (both byte orders, any blocks).

Written from the format drafts (draft-ietf-opsawg-pcap, draft-ietf-opsawg-pcapng)
independently of csum/capture/pcap.py; tests/capture/test_pcap.py checks that scapy reads back
what these write, so they can serve as inputs with known contents.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence


def pcap_bytes(packets: Sequence[bytes], linktype: int = 1, *, endian: str = "<", nano: bool = False,
               origlens: Sequence[int] | None = None, snaplen: int = 65535) -> bytes:
    """A pcap file holding ``packets``; ``origlens[i]`` > len(packets[i]) marks a snaplen-cut packet."""
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)]
    for i, pkt in enumerate(packets):
        orig = origlens[i] if origlens is not None else len(pkt)
        out.append(struct.pack(endian + "IIII", 1_700_000_000 + i, 1000 * i + 7, len(pkt), orig) + pkt)
    return b"".join(out)


def _block(endian: str, kind: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack(endian + "II", kind, length) + body + struct.pack(endian + "I", length)


def shb(endian: str = "<") -> bytes:
    """A Section Header Block (version 1.0, section length unknown) with a comment option."""
    option = struct.pack(endian + "HH", 1, 5) + b"hello\0\0\0" + struct.pack(endian + "HH", 0, 0)
    return _block(endian, 0x0A0D0D0A, struct.pack(endian + "IHHq", 0x1A2B3C4D, 1, 0, -1) + option)


def idb(linktype: int, endian: str = "<", snaplen: int = 0) -> bytes:
    """An Interface Description Block with an if_tsresol option (nanoseconds)."""
    option = struct.pack(endian + "HH", 9, 1) + b"\x09\0\0\0" + struct.pack(endian + "HH", 0, 0)
    return _block(endian, 1, struct.pack(endian + "HHI", linktype, 0, snaplen) + option)


def epb(data: bytes, iface: int = 0, endian: str = "<", origlen: int | None = None, ts: int = 123456789) -> bytes:
    """An Enhanced Packet Block."""
    head = struct.pack(endian + "IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(data),
                       len(data) if origlen is None else origlen)
    return _block(endian, 6, head + data)


def spb(data: bytes, endian: str = "<", origlen: int | None = None) -> bytes:
    """A Simple Packet Block (interface 0)."""
    return _block(endian, 3, struct.pack(endian + "I", len(data) if origlen is None else origlen) + data)


def pb(data: bytes, iface: int = 0, endian: str = "<") -> bytes:
    """The obsolete Packet Block (type 2)."""
    return _block(endian, 2, struct.pack(endian + "HHIIII", iface, 0, 1, 2, len(data), len(data)) + data)


def pcapng_bytes(frames: Sequence[tuple[int, bytes, int]]) -> bytes:
    """A pcapng file of (link type, frame, original length) records: one interface per link type."""
    links = sorted({link for link, _, _ in frames})
    blocks = shb() + b"".join(idb(link) for link in links)
    return blocks + b"".join(epb(f, links.index(link), origlen=orig) for link, f, orig in frames)


def other(kind: int, body: bytes, endian: str = "<") -> bytes:
    """Any other block (e.g. 5 Interface Statistics, or a custom type csum does not know)."""
    return _block(endian, kind, body)


def python_report(cap, sink=None):
    """csum verify's report of ``cap`` from the Python walker alone (csum/layers, the reference): the C walker
    (csum/engine/_cwalk.c) out of the way; ``sink`` as csum.capture.checker.check takes it."""
    from csum import engine
    from csum.capture import checker

    saved, engine.cwalk = engine.cwalk, None
    try:
        return checker.check(cap, sink=sink or (lambda i, results: None))
    finally:
        engine.cwalk = saved

"""``csum verify --annotate OUT.pcapng``: a copy of a capture with a comment on every packet that has a wrong checksum.

The copy is pcapng (draft-ietf-opsawg-pcapng): a Section Header Block, an Interface Description Block per link type
(timestamps in nanoseconds, ``if_tsresol`` 9), and an Enhanced Packet Block per packet with its bytes, lengths and
timestamp as read; a packet with a bad or transmit-offload field gets an ``opt_comment`` (option 1) per field:
``csum: tcp checksum at offset 50: stored 0xec01, expected 0x33fc (mismatch); cause l4-not-patched: ...``.
Wireshark shows the comments, and ``tshark -Y 'frame.comment contains "csum"'`` finds the packets.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable

from ..capture import pcap
from ..capture.pcap import NO_TIME
from ..capture.source import open_source
from ..layers import Result
from .capture import Explained

__all__ = ["annotate", "comment"]

_SHB, _IDB, _EPB = 0x0A0D0D0A, 1, 6
_COMMENT, _TSRESOL, _END = 1, 9, 0


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def _block(kind: int, body: bytes) -> bytes:
    size = 12 + len(body)
    return struct.pack("<II", kind, size) + body + struct.pack("<I", size)


def _option(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + _pad(value)


def comment(r: Result, why: Explained | None, index: int) -> str:
    """The comment for wrong field ``r`` of packet ``index``."""
    stored = "none" if r.stored is None else f"{r.stored:#06x}"
    expected = "unknown" if r.computed is None else f"{r.computed:#06x}"
    text = f"csum: {r.layer} checksum at offset {r.field}: stored {stored}, expected {expected} ({r.reason})"
    e = None if why is None else why.of(index, r)
    return text if e is None else f"{text}; cause {e.cause}: {e.detail}"


def annotate(name: str, wrong: Iterable[tuple[int, Result]], why: Explained | None,
             write: Callable[[bytes], object], chunk_bytes: int = pcap.CHUNK_BYTES) -> int:
    """Write the annotated pcapng copy of capture ``name`` through ``write``; ``wrong``: (packet index, Result) of
    its bad and offload fields. Returns how many packets got a comment."""
    notes: dict[int, list[str]] = {}
    for index, r in wrong:
        notes.setdefault(index, []).append(comment(r, why, index))
    write(_block(_SHB, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + _option(_END, b"")))
    interfaces: dict[int, int] = {}
    with open_source(name) as source:
        for chunk in pcap.Reader(source.stream, chunk_bytes, times=True):
            first = chunk.first_index
            for k, (_, caplen, origlen, link, when) in enumerate(chunk.records()):
                iface = interfaces.get(link)
                if iface is None:
                    iface = interfaces[link] = len(interfaces)
                    write(_block(_IDB, struct.pack("<HHI", link, 0, 0) + _option(_TSRESOL, bytes([9]))
                                 + _option(_END, b"")))
                ts = 0 if when == NO_TIME else when
                options = b"".join(_option(_COMMENT, text.encode()) for text in notes.get(first + k, ()))
                body = struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, caplen, origlen) \
                    + _pad(bytes(chunk.packet(k))) + (options + _option(_END, b"") if options else b"")
                write(_block(_EPB, body))
    return len(notes)

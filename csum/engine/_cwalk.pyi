"""Signatures of the C walker csum/engine/_cwalk.c (its reference: the Python walker of csum/layers)."""

from typing import Any

from typing_extensions import Buffer

#: The layer name of each code fast_check writes (code % DEPTH; None for 0).
LAYERS: tuple[str | None, ...]
#: Codes fast_check writes per packet (int16); a code's depth unit; the flags of a code counted "n/a", "none", "bad"
#: and "offload"; the bytes of a closed datagram's key.
SLOTS: int
DEPTH: int
NA: int
NONE: int
BAD: int
OFFLOAD: int
KEY_BYTES: int
#: Rows (csum/engine/_rows.h row_t): its size, (name, offset, size) of each field, the name of each reason code.
ROW_BYTES: int
ROW_LAYOUT: tuple[tuple[str, int, int], ...]
REASONS: tuple[str, ...]

def bind(result: type, reason: type, /) -> None:
    """Give the walker csum.layers.check.Result and csum.layers.reasons.Reason (csum/layers/accel.py)."""

def verify(packet: Buffer, linktype: int, /) -> list[Any] | None:
    """Every checksum field of one packet as csum.layers.check.Result objects, or None: the Python walker's."""

def fast_check(data: Buffer, offsets: Buffer, caplens: Buffer, linktypes: Buffer, out: Buffer, todo: Buffer,
               indices: Buffer, budget: int, window: int, rows: Buffer = ..., count: Buffer = ...,
               /) -> tuple[list[tuple[int, Any, int, int]], bytes, int]:
    """A chunk of a capture judged at once: (packet, its records kept, its bad and offload fields) of each packet with
    a failing field, the keys of the datagrams reassembled, their peak; with rows and count, every field of every
    packet judged as a row (csum/capture/rows.py c_rows; without rows, check_chunk counts as it judges)."""

def results(kept: Any, /) -> list[Any]:
    """The Results (csum.layers.check.Result) of a packet fast_check reported, from its records kept."""

def chunk_columns(offsets: Buffer, caplens: Buffer, origlens: Buffer, first: int, base: int,
                  /) -> tuple[bytes, bytes, bytes, bytes]:
    """A chunk's packet numbers, file offsets, whole-packet flags (int8) and cut packets' numbers (int64 as bytes)."""

def check_chunk(data: Buffer, offsets: Buffer, caplens: Buffer, origlens: Buffer, linktypes: Buffer, front: Buffer,
                first: int, budget: int, window: int,
                /) -> tuple[list[tuple[int, int]], int, bytes, list[tuple[int, Any, int, int]], bytes, int, bytes]:
    """A chunk judged and counted in one call (csum/capture/fastpath.py c_fast): (code, fields) of the codes of the
    packets judged, how many passed, the int64 numbers (as bytes) of the packets left to the Python walker, then
    fast_check's reported, closed and peak, and the int64 numbers (as bytes) of the chunk's cut packets."""

def finish_rows(slots: Buffer, count: Buffer, indices: Buffer, times: Buffer, layers: Buffer, reasons: Buffer,
                statuses: Buffer, /) -> int:
    """fast_check's rows moved to the front, frame, time, layer, reason and status set; how many."""

def path(key: int, /) -> str:
    """The path string of a row's path key."""

def format_rows(rows: Buffer, csv: bool, names: list[bytes], reasons: list[bytes], statuses: list[bytes],
                file: bytes | None, columns: bytes, /) -> bytes:
    """Rows as JSON Lines or CSV lines (csum/engine/_rowtext.c; csum/capture/rowtext.py is its twin)."""

def pcap_records(data: Buffer, pos: int, big_endian: bool, most: int, header: int = 16, swap: int = 0,
                 cut_lo: int = 0, cut_hi: int = 0, fcs: int = 0, /) -> tuple[bytes, bytes, bytes, int]:
    """The pcap record walk of csum/capture/pcap.py: record offsets, captured and original lengths, end."""

def pcap_times(data: Buffer, offsets: Buffer, header: int, big_endian: bool, nanos: bool, /) -> bytes:
    """Each pcap record's timestamp in nanoseconds (int64 as bytes), from the record headers in front of ``offsets``."""

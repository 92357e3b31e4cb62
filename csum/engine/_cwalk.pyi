"""Signatures of the C walker csum/engine/_cwalk.c (its reference: the Python walker of csum/layers)."""

from typing import Any

from typing_extensions import Buffer

#: The layer name of each code fast_check writes (code % 8; None for 0).
LAYERS: tuple[str | None, ...]
#: Codes fast_check writes per packet; the flag of a code counted "n/a"; the bytes of a closed datagram's key.
SLOTS: int
NA: int
KEY_BYTES: int

def bind(result: type, reason: type, /) -> None:
    """Give the walker csum.layers.check.Result and csum.layers.reasons.Reason (csum/layers/accel.py)."""

def verify(packet: Buffer, linktype: int, /) -> list[Any] | None:
    """Every checksum field of one packet as csum.layers.check.Result objects, or None: the Python walker's."""

def fast_check(data: Buffer, offsets: Buffer, caplens: Buffer, linktypes: Buffer, out: Buffer, todo: Buffer,
               indices: Buffer, budget: int, window: int, /) -> tuple[list[tuple[int, list[Any]]], bytes, int]:
    """A chunk of a capture judged at once (csum/capture/fastpath.py c_fast)."""

def pcap_records(data: Buffer, pos: int, big_endian: bool, most: int,
                 /) -> tuple[bytes, bytes, bytes, int]:
    """The pcap record walk of csum/capture/pcap.py: record offsets, captured and original lengths, end."""

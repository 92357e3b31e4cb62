"""Signatures of the C accelerator csum/_speedups.c (its pure-Python twins: csum/_native.py)."""

from typing_extensions import Buffer
from typing import Literal

BLOCK_BYTES_LOG2: int

def ones_sum(buf: Buffer, width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"], /) -> int:
    """The canonical ``width``-bit one's-complement sum of ``buf``; TypeError/BufferError/ValueError otherwise."""

def ones_sum_blocked(buf: Buffer, width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"],
                     block: int, /) -> int:
    """:func:`ones_sum` summing ``block`` bytes (a multiple of 8) per accumulator block (tests)."""

def ones_sum_many(buf: Buffer, offsets: Buffer, lengths: Buffer, out: Buffer,
                  width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"], /) -> None:
    """``out[i]`` = :func:`ones_sum` of ``buf[offsets[i] : offsets[i] + lengths[i]]`` (int64 offsets and
    lengths, uint64 out, one count); ValueError for a row outside ``buf``."""

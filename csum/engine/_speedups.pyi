"""Signatures of the C accelerator csum/engine/_speedups.c (its pure-Python twins: csum/engine/native.py)."""

from collections.abc import Callable
from types import NotImplementedType
from typing import Any, Literal

from typing_extensions import Buffer

BLOCK_BYTES_LOG2: int

def ones_sum(buf: object, width: object, byteorder: object, name: str = ..., /) -> int | NotImplementedType:
    """The canonical ``width``-bit sum of ``buf`` (a C-contiguous buffer; width 8/16/32/64, byte order
    little/big), or NotImplemented for anything else; ``name`` is ignored."""

def ones_sum_blocked(buf: Buffer, width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"],
                     block: int, /) -> int | NotImplementedType:
    """:func:`ones_sum` summing ``block`` bytes (a multiple of 8) per accumulator block (tests)."""

def ones_sum_many(buf: Buffer, offsets: Buffer, lengths: Buffer, out: Buffer,
                  width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"], /) -> None:
    """``out[i]`` = :func:`ones_sum` of ``buf[offsets[i] : offsets[i] + lengths[i]]`` (int64 offsets and
    lengths, uint64 out, one count); ValueError for a row outside ``buf``."""

def partial16le(buf: Buffer, seed: int = 0, *, align: int = 0) -> int:
    """lib/checksum.c ``csum_partial`` (little-endian) for arguments that cannot fail a check, else NotImplemented."""

class FastPath:
    """``fast(*args, **kwargs)`` unless that returns NotImplemented, else ``slow(*args, **kwargs)``."""

    fast: Callable[..., Any]
    slow: Callable[..., Any]

    def __init__(self, fast: Callable[..., Any], slow: Callable[..., Any], /) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

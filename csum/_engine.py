"""The summing engine: the one place where bytes become a one's-complement sum.

Every checksum in csum reduces to one primitive, :func:`ones_sum`: the
*canonical* ``width``-bit one's-complement sum of a buffer read as ``width``-bit
words in a given byte order, the last word zero-padded. Canonical means what an
end-around-carry accumulator of that width produces when it starts at zero:
0 only when every byte is 0, otherwise a value in 1..2**width-1. Because
``2**width == 1 (mod 2**width - 1)``, that sum is the whole buffer read as one
integer, reduced mod ``2**width - 1`` (RFC 1071 section 2: the sum is
independent of word grouping and, up to a byte swap, of byte order).

Three engines compute it, chosen once at import (``CSUM_ENGINE`` = ``c``,
``numpy`` or ``python``; unset or ``auto`` picks the best available) and named
by :data:`ENGINE` (``csum --version`` prints it):

* ``c``: the optional extension ``csum._speedups`` (csum/_speedups.c, built at
  install when a compiler is present) sums 64-bit words, for every size.
* ``numpy``: Python ints below :data:`NUMPY_MIN_BYTES`, above it a numpy
  reduction over 32-bit words (little-endian words, no per-element byte swap
  for the 16-bit sums every checksum uses).
* ``python``: ``int.from_bytes`` plus one ``%`` (both linear in CPython); the
  reference the other two are tested against, and the fallback.

All three give the same bits for every input. Inputs the C part does not take
(not a C-contiguous buffer, a width other than 8/16/32/64) go to the Python
code, which validates (csum/_check.py) and raises csum's errors.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Literal

from ._check import as_view
from .errors import CsumValueError

ByteOrder = Literal["little", "big"]

#: Buffers at least this long are summed with numpy by the ``numpy`` engine (crossover measured by bench/).
NUMPY_MIN_BYTES = 2048
#: Bytes per numpy reduction: 2**31 32-bit words, each < 2**32, sum below 2**63 in a uint64.
_NUMPY_CHUNK = 1 << 33
#: Bit length above which :func:`canonical` halves an integer by folding before its final ``%``.
_FOLD_BITS = 1 << 14
#: The numpy threshold in force (infinite while the ``python`` engine is active).
_numpy_min: float = NUMPY_MIN_BYTES

try:
    from . import _speedups
except ImportError:  # built without a compiler: numpy / pure Python only
    _speedups = None


def canonical(n: int, width: int) -> int:
    """Reduce a non-negative integer to the canonical ``width``-bit one's-complement value."""
    if n == 0:
        return 0
    if n.bit_length() > _FOLD_BITS:
        # n*2**k folds to n mod 2**width - 1 when width divides k: halve n until it is small,
        # since one long division by a two-digit modulus costs ~10x a shift-and-add pass.
        while n.bit_length() > _FOLD_BITS:
            half = n.bit_length() // (2 * width) * width
            n = (n >> half) + (n & ((1 << half) - 1))
    return (n - 1) % ((1 << width) - 1) + 1


def _int_sum(view: Any, width: int, byteorder: str) -> int:
    n = int.from_bytes(view, byteorder)
    if byteorder == "big":
        n <<= 8 * (-len(view) % (width // 8))
    return canonical(n, width)


def _numpy_sum(view: memoryview, width: int, byteorder: str) -> int:
    """Exact word sums with numpy, reduced like :func:`_int_sum` (same bits)."""
    import numpy as np

    whole = len(view) & ~7
    big = byteorder == "big"
    # 64-bit sums, and 32-bit big-endian ones, need the two 32-bit halves of each 64-bit word
    # apart; any width dividing 32 is the plain sum of little-endian 32-bit words (a 16-bit
    # big-endian sum is the little-endian one byte-swapped, RFC 1071 section 2(B)).
    lanes = width == 64 or (big and width == 32)
    order = "big" if lanes and big else "little"
    words = np.frombuffer(view, dtype=">u4" if order == "big" else "<u4", count=whole // 4)
    total = 0
    step = _NUMPY_CHUNK // 4
    for start in range(0, len(words), step):
        chunk = words[start : start + step]
        if lanes:
            first, second = int(chunk[0::2].sum(dtype=np.uint64)), int(chunk[1::2].sum(dtype=np.uint64))
            total += (first << 32) + second if big else first + (second << 32)
        else:
            total += int(chunk.sum(dtype=np.uint64))
    tail = bytes(view[whole:])
    total += int.from_bytes(tail + bytes(8 - len(tail)) if order == "big" and tail else tail, order)
    if big and width == 16:
        s = canonical(total, 16)
        return ((s & 0xFF) << 8) | (s >> 8)
    return canonical(total, width)


def _python_ones_sum(view: Any, width: int, byteorder: ByteOrder, name: str = "view") -> int:
    """Pure-Python / numpy ``ones_sum``: what the C engine hands over, and the non-C engines themselves."""
    kind = type(view)
    if kind is memoryview:
        if not (view.c_contiguous and view.ndim == 1 and view.format == "B"):
            view = as_view(view, name)
    elif kind is not bytes and kind is not bytearray:
        view = as_view(view, name)
    if width.__class__ is not int or width <= 0 or width & 7:
        raise CsumValueError(f"width must be a positive multiple of 8, got {width!r}", code="bad-width")
    if byteorder != "little" and byteorder != "big":
        raise CsumValueError(f"byteorder must be 'little' or 'big', got {byteorder!r}", code="bad-byteorder")
    if len(view) >= _numpy_min and 64 % width == 0:
        return _numpy_sum(memoryview(view), width, byteorder)
    return _int_sum(view, width, byteorder)


def available_engines() -> list[str]:
    """Names of the engines :func:`use_engine` can switch to, fastest first.

    All three when the extension is built and ``CSUM_ENGINE`` did not exclude it;
    ``CSUM_ENGINE=numpy`` leaves numpy and python, ``CSUM_ENGINE=python`` only python
    (then :func:`ones_sum` is the pure-Python function itself, the C part unused).
    """
    return _ENGINES[_ENGINES.index(ENGINE):]


def use_engine(name: str) -> str:
    """Make ``name`` the active engine for every caller of :func:`ones_sum`; returns the previous one.

    For tests and benchmarks: the engine chosen by ``CSUM_ENGINE`` at import is what
    :data:`ENGINE` reports.
    """
    global _numpy_min, _active
    if name not in available_engines():
        raise CsumValueError(f"engine must be one of {available_engines()}, got {name!r}", code="bad-engine")
    previous, _active = _active, name
    _numpy_min = float("inf") if name == "python" else NUMPY_MIN_BYTES
    if ENGINE == "c":
        _speedups.set_fallback(_python_ones_sum, name != "c")
    return previous


def active_engine() -> str:
    """The engine :func:`ones_sum` runs on now."""
    return _active


def _choose() -> str:
    wanted = os.environ.get("CSUM_ENGINE", "auto").strip().lower() or "auto"
    if wanted == "auto":
        return "c" if _speedups is not None else "numpy"
    if wanted not in _ENGINES:
        raise CsumValueError(f"CSUM_ENGINE must be auto, c, numpy or python, got {wanted!r}", code="bad-engine")
    if wanted == "c" and _speedups is None:
        raise CsumValueError("CSUM_ENGINE=c but csum._speedups is not built (reinstall with a C compiler)",
                             code="bad-engine")
    return wanted


_ENGINES = ["c", "numpy", "python"]
#: Which engine sums bytes (``c``, ``numpy`` or ``python``), chosen at import; ``csum --version`` prints it.
ENGINE: str = _choose()
_active = ENGINE
use_engine(ENGINE)

#: ``ones_sum(view, width, byteorder, name="view") -> int``: the canonical ``width``-bit sum of
#: ``view`` read as ``width``-bit words in ``byteorder`` ("little": each word least significant
#: byte first; a trailing partial word is zero-padded at its high-address end). ``view`` may be
#: any bytes-like object; one that is not is rejected by csum._check.as_view under ``name``.
ones_sum: Callable[..., int] = _speedups.ones_sum if ENGINE == "c" else _python_ones_sum

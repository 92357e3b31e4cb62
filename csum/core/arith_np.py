"""The numpy twin of csum/core/arith.py: the same unchecked primitives over uint64 arrays.

Each function takes and returns ``np.uint64`` arrays holding values of the
stated width and gives, element by element, the bits of its csum/core/arith.py
namesake (tests/core/test_arith.py checks each pair). csum/batch.py builds its
vectorized ``csum_partial`` forms from these.
"""

from __future__ import annotations

import numpy as np

M16 = np.uint64(0xFFFF)
M32 = np.uint64(0xFFFFFFFF)
_8, _16, _32 = np.uint64(8), np.uint64(16), np.uint64(32)


def add32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """csum/core/arith.py ``add32`` per element."""
    r = a + b
    return (r & M32) + (r >> _32)


def from32to16(x: np.ndarray) -> np.ndarray:
    """csum/core/arith.py ``from32to16`` per element."""
    x = x + (((x >> _16) | (x << _16)) & M32)
    return (x & M32) >> _16


def fold(x: np.ndarray) -> np.ndarray:
    """csum/core/arith.py ``fold`` per element."""
    return from32to16(x) ^ M16


def ror32(x: np.ndarray, n: int) -> np.ndarray:
    """csum/core/arith.py ``ror32`` per element (``n`` in 1..31)."""
    return ((x >> np.uint64(n)) | (x << np.uint64(32 - n))) & M32


def swab16(x: np.ndarray) -> np.ndarray:
    """csum/core/arith.py ``swab16`` per element."""
    return ((x & np.uint64(0xFF)) << _8) | (x >> _8)


def canonical(total: np.ndarray, nonzero: np.ndarray, width: int) -> np.ndarray:
    """csum/core/arith.py ``canonical`` per element, for ``width`` 16 or 32.

    ``total`` is any uint64 congruent to the integer sum mod ``2**width - 1``;
    ``nonzero`` says whether that integer sum was non-zero (0 stays 0).
    """
    m = np.uint64((1 << width) - 1)
    r = total % m
    return np.where((r == 0) & nonzero, m, r)

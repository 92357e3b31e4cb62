"""Unchecked one's-complement primitives on Python ints: the one home of every carry fold.

The verbs of include/net/checksum.h and include/asm-generic/checksum.h
(``add``, ``sub``, ``fold``, ``from32to16``, ``from64to32``, ``swab16``,
``ror32``) and :func:`canonical`, the reduction every end-around accumulator
lands on. Nothing here checks its arguments: callers pass integers of the
stated width (csum/core/ones.py is the checked public form). csum/core/arith_np.py
is the numpy twin over uint64 arrays; tests/core/test_arith.py checks the two agree.
"""

from __future__ import annotations

M16 = 0xFFFF
M32 = 0xFFFFFFFF
#: Bit length above which :func:`canonical` halves an integer by folding before its final ``%``.
_FOLD_BITS = 1 << 14


def add32(a: int, b: int) -> int:
    """include/net/checksum.h ``csum_add``: u32 + u32 with end-around carry."""
    r = a + b
    return (r & M32) + (r >> 32)


def sub32(a: int, b: int) -> int:
    """include/net/checksum.h ``csum_sub``: ``add32(a, ~b)``."""
    return add32(a, b ^ M32)


def add16(a: int, b: int) -> int:
    """include/net/checksum.h ``csum16_add``: u16 + u16 with end-around carry."""
    r = a + b
    return (r & M16) + (r >> 16)


def sub16(a: int, b: int) -> int:
    """include/net/checksum.h ``csum16_sub``: ``add16(a, ~b)``."""
    return add16(a, b ^ M16)


def from32to16(x: int) -> int:
    """include/net/checksum.h ``csum_from32to16``: a u32 folded to 16 bits, not complemented."""
    x += ((x >> 16) | (x << 16)) & M32
    return (x & M32) >> 16


def fold(x: int) -> int:
    """include/asm-generic/checksum.h ``csum_fold``: a u32 folded to 16 bits and complemented."""
    return from32to16(x) ^ M16


def from64to32(x: int) -> int:
    """lib/checksum.c ``from64to32``: a u64 folded to 32 bits with end-around carry."""
    x = (x & M32) + (x >> 32)
    return ((x & M32) + (x >> 32)) & M32


def ror32(x: int, n: int) -> int:
    """include/linux/bitops.h ``ror32``: a u32 rotated right by ``n`` bits."""
    n &= 31
    return ((x >> n) | (x << (32 - n))) & M32


def swab16(x: int) -> int:
    """include/uapi/linux/swab.h ``swab16``: the two bytes of a u16 exchanged."""
    return ((x & 0xFF) << 8) | (x >> 8)


def canonical(n: int, width: int) -> int:
    """A non-negative integer reduced to the canonical ``width``-bit one's-complement value.

    What an end-around-carry accumulator of that width holds after adding the
    integers whose total is ``n``: 0 only when ``n`` is 0, else ``n`` mod
    ``2**width - 1`` taken in 1..2**width-1.
    """
    if n == 0:
        return 0
    if n.bit_length() > _FOLD_BITS:
        # n*2**k folds to n mod 2**width - 1 when width divides k: halve n until it is small,
        # since one long division by a two-digit modulus costs ~10x a shift-and-add pass.
        while n.bit_length() > _FOLD_BITS:
            half = n.bit_length() // (2 * width) * width
            n = (n >> half) + (n & ((1 << half) - 1))
    return (n - 1) % ((1 << width) - 1) + 1

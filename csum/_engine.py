"""The summing engine: the one place where bytes become a one's-complement sum.

Every checksum in csum reduces to one primitive, :func:`ones_sum`: the
*canonical* ``width``-bit one's-complement sum of a buffer read as ``width``-bit
words in a given byte order, the last word zero-padded. Canonical means what an
end-around-carry accumulator of that width produces when it starts at zero:
0 only when every byte is 0, otherwise a value in 1..2**width-1. Because
``2**width == 1 (mod 2**width - 1)``, that sum is the whole buffer read as one
integer, reduced mod ``2**width - 1``: ``int.from_bytes`` plus one ``%`` (both
linear in CPython), with no per-word loop and no overflow to reason about.
"""

from __future__ import annotations

from typing import Literal

ByteOrder = Literal["little", "big"]

#: Which engine sums bytes; ``csum --version`` reports it.
ENGINE = "python-int"


def canonical(n: int, width: int) -> int:
    """Reduce a non-negative integer to the canonical ``width``-bit one's-complement value."""
    if n == 0:
        return 0
    return (n - 1) % ((1 << width) - 1) + 1


def ones_sum(view: memoryview | bytes, width: int, byteorder: ByteOrder) -> int:
    """Canonical ``width``-bit one's-complement sum of ``view`` as ``width``-bit words.

    ``byteorder`` is the CPU's: "little" reads each word least significant byte
    first; a trailing partial word is zero-padded at its high-address end.
    """
    n = int.from_bytes(view, byteorder)
    if byteorder == "big":
        n <<= 8 * (-len(view) % (width // 8))
    return canonical(n, width)

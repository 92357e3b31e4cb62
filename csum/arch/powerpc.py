"""64-bit PowerPC ``__csum_partial``: arch/powerpc/lib/checksum_64.S, big- and little-endian.

One 64-bit ``adde`` chain (add with the carry bit CA) accumulates, starting
from the zero-extended seed with CA cleared (``addic r0,r5,0``); ``addze``
collects the last carry and the 64-bit total is folded to 32 bits as
``(t + rotl64(t, 32)) >> 32``.

Why that is the canonical 32-bit sum of the integers added (proof sketch): as
for any end-around accumulator, the state ``r0 + CA`` stays congruent to the
running integer sum mod ``2**64 - 1``; (r0 = 2**64-1, CA = 1) is unreachable
from CA = 0 (it needs the previous state to be that same pair), so ``addze``
never overflows and ``t`` is the canonical 64-bit sum. The fold returns the
high half of ``t + rotl(t, 32)``, i.e. ``hi + lo`` with its carry added back:
a 32-bit end-around add, canonical again because ``2**32 - 1`` divides
``2**64 - 1``. So the result is ``canonical(seed + terms, 32)``.

What is added is modelled literally, native byte order for every load:

* ``len < 8``: straight to the tail.
* Otherwise, at an address that is 2, 4 or 6 mod 8, ``lhz`` halfwords until the
  address is 8-aligned (bits 1..2 of the address only; an *odd* address gets no
  special handling, its loads are simply unaligned and nothing is swapped).
* Doublewords (``ld``; the 64-byte loop for ``len >= 128`` adds the same words).
* Tail: one ``lwz`` word if 4 or more bytes remain, one ``lhz`` halfword, and a
  last byte, each added at the *low* end of the accumulator (the byte shifted
  left by 8 on big-endian, as is on little-endian).

The doublewords are summed by the engine (:func:`csum.engine.ones_sum`, width
64), whose canonical value can stand in for their integer sum inside
:func:`canonical` (congruent mod ``2**64 - 1``, hence mod ``2**32 - 1``, and 0
only when they are all 0).
"""

from __future__ import annotations

from typing import Literal

from ..core.arith import canonical
from ..engine import ones_sum
from . import register


def _terms(view: memoryview, align: int, order: Literal["big", "little"]) -> int:
    """The integer sum of every load ``__csum_partial`` adds, seed excluded."""
    n, pos, total = len(view), 0, 0
    if n >= 8:
        for _ in range(-(align >> 1) & 3):
            total += int.from_bytes(view[pos : pos + 2], order)
            pos += 2
        words = (n - pos) & ~7
        total += ones_sum(view[pos : pos + words], 64, order)
        pos += words
    for size in (4, 2):
        if n - pos >= size:
            total += int.from_bytes(view[pos : pos + size], order)
            pos += size
    if pos < n:
        total += view[pos] << 8 if order == "big" else view[pos]
    return total


@register("powerpc64")
def powerpc64(view: memoryview, seed: int, align: int) -> int:
    """arch/powerpc/lib/checksum_64.S ``__csum_partial`` on big-endian ppc64: unfolded 32-bit."""
    return canonical(seed + _terms(view, align, "big"), 32)


@register("powerpc64le")
def powerpc64le(view: memoryview, seed: int, align: int) -> int:
    """arch/powerpc/lib/checksum_64.S ``__csum_partial`` on little-endian ppc64: unfolded 32-bit."""
    return canonical(seed + _terms(view, align, "little"), 32)

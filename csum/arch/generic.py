"""lib/checksum.c ``csum_partial`` as built on little- and big-endian CPUs, and parisc's variant.

``do_csum`` yields the canonical 16-bit sum of native 16-bit words (its
odd-address path shifts the first byte and swaps the result back, landing on
the same value), then the seed is added with a 32-bit end-around carry.
"""

from __future__ import annotations

from ..core.arith import add32, from32to16
from ..engine import ones_sum
from . import register


@register("lib/checksum.c-le")
def generic_le(view: memoryview, seed: int, align: int) -> int:
    """lib/checksum.c ``csum_partial`` on a little-endian CPU."""
    return add32(ones_sum(view, 16, "little"), seed)


@register("lib/checksum.c-be")
def generic_be(view: memoryview, seed: int, align: int) -> int:
    """lib/checksum.c ``csum_partial`` on a big-endian CPU (result as that CPU holds it)."""
    return add32(ones_sum(view, 16, "big"), seed)


@register("parisc")
def parisc(view: memoryview, seed: int, align: int) -> int:
    """arch/parisc/lib/checksum.c ``csum_partial``: the big-endian sum plus seed, folded to 16 bits."""
    return from32to16(add32(ones_sum(view, 16, "big"), seed))

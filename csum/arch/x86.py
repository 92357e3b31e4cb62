"""x86_64 ``csum_partial``: arch/x86/lib/csum-partial_64.c, in its three forms.

Every form keeps a 64-bit end-around (``adcq``) accumulator and folds it with
``add32_with_carry`` (arch/x86/include/asm/checksum_64.h). An end-around
accumulator is canonical (0 only if everything added was 0), so each form is
the canonical 32-bit sum of the integers it adds; the forms differ in which
integers those are (where a byte lands in its word) and in their odd-address
handling (a 16-bit fold plus byte swap, which drops the unfolded sum).

* ``x86_64`` (Linux >= 6.7, and later 6.6.y stable releases): seed plus the
  buffer's little-endian 64-bit words, tail zero-padded; no odd-address path.
* ``x86_64-5.17`` (5.17 .. 6.6): the same, but at an odd address the seed is
  rotated, the first byte added as a high byte, and the result folded and swapped.
* ``x86_64-kleen`` (.. 5.16): ``do_csum`` aligns to 2, 4 and 8 bytes with
  u16/u32 steps, adds tail u32/u16/byte at the low end, and folds and swaps at
  odd addresses; the seed is added afterwards.
"""

from __future__ import annotations

from ..core.arith import add32, canonical, ror32, swab16
from ..engine import ones_sum
from . import register


@register("x86_64")
def x86_64(view: memoryview, seed: int, align: int) -> int:
    """arch/x86/lib/csum-partial_64.c ``csum_partial`` (Linux >= 6.7): unfolded, canonical 32-bit."""
    return add32(ones_sum(view, 32, "little"), seed)


@register("x86_64-5.17")
def x86_64_v5_17(view: memoryview, seed: int, align: int) -> int:
    """arch/x86/lib/csum-partial_64.c ``csum_partial`` (Linux 5.17 .. 6.6, Dumazet's rewrite)."""
    if not align & 1:
        return add32(ones_sum(view, 32, "little"), seed)
    if not len(view):
        return seed
    total = ror32(seed, 8) + (view[0] << 8) + int.from_bytes(view[1:], "little")
    return swab16(canonical(total, 16))


def _kleen_terms(view: memoryview, align: int) -> tuple[int, bool]:
    """The integer sum of the values Kleen's ``do_csum`` adds, and whether the start was odd."""
    n, pos, addr, total = len(view), 0, align, 0
    odd = bool(addr & 1) and n > 0
    if odd:
        total, pos, n, addr = view[0] << 8, 1, n - 1, addr + 1
    if n >> 1:
        if addr & 2:
            total += int.from_bytes(view[pos : pos + 2], "little")
            pos, n, addr = pos + 2, n - 2, addr + 2
        if n >> 2:
            if addr & 4:
                total += int.from_bytes(view[pos : pos + 4], "little")
                pos, n = pos + 4, n - 4
            words = 8 * (n >> 3)
            total += int.from_bytes(view[pos : pos + words], "little")
            pos += words
            if n & 4:
                total += int.from_bytes(view[pos : pos + 4], "little")
                pos += 4
        if n & 2:
            total += int.from_bytes(view[pos : pos + 2], "little")
            pos += 2
    if n & 1:
        total += view[pos]
    return total, odd


@register("x86_64-kleen")
def x86_64_kleen(view: memoryview, seed: int, align: int) -> int:
    """arch/x86/lib/csum-partial_64.c ``do_csum`` + ``csum_partial`` (Linux <= 5.16, Andi Kleen's)."""
    total, odd = _kleen_terms(view, align)
    do_csum = swab16(canonical(total, 16)) if odd else canonical(total, 32)
    return add32(do_csum, seed)

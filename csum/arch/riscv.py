"""rv64 with Zbb: lib/checksum.c ``csum_partial`` over arch/riscv/lib/csum.c ``do_csum``.

``do_csum`` sums native (little-endian) 64-bit words, the first and last
masked to the buffer, counting carries in a separate register and adding them
back with one end-around step. That is an end-around accumulator in disguise
(proof sketch: the result is ``lo + carries`` with one wrap, congruent to the
word sum mod ``2**64 - 1``; it is 0 only when ``lo`` and the carry count are
both 0, i.e. every word was 0), so it is the canonical 64-bit sum.

* ``do_csum_no_alignment`` (address 8-aligned, or any address when
  ``has_fast_unaligned_accesses()``): the words are read from the buffer start.
* ``do_csum_with_alignment`` (otherwise): the pointer is rounded down to 8
  and the leading bytes masked, so the buffer sits ``align`` bytes into its
  first word: the sum of ``int.from_bytes(view) << 8 * align``.

Both are the engine's canonical 64-bit little-endian sum
(:func:`csum.engine.ones_sum`), shifted left by ``8 * align`` bytes for the
second (a shift is a multiplication, so it keeps congruence and zero-ness).

The Zbb fold (the alternative patched in on CPUs with Zbb): ``rori``/``add``/
``srli`` take 64 to 32 bits with end-around carry (canonical: ``2**32 - 1``
divides ``2**64 - 1``); ``roriw``/``addw`` then add the u32 to itself rotated
by 16, whose high half is the canonical 16-bit sum. Not canonical, and
modelled exactly: ``addw`` sign-extends its 32-bit result, and the C code
returns ``csum >> 16`` of that 64-bit register truncated to ``unsigned int``,
so ``do_csum`` returns ``0xffff0000 | sum16`` whenever ``sum16 >= 0x8000``.
At an odd address the Zbb path instead byte-reverses the register (``rev8``)
and returns ``(csum << 16) >> 48``: the 16-bit sum byte-swapped, zero-extended.

lib/checksum.c ``csum_partial`` finally adds the seed with a 32-bit end-around
carry (:func:`csum.core.arith.add32`).
"""

from __future__ import annotations

from ..core.arith import M16, M32, add32, canonical, ror32, swab16
from ..engine import ones_sum
from . import register


def _zbb_do_csum(view: memoryview, align: int, fast_unaligned: bool, misaligned_zbb: bool = True) -> int:
    """arch/riscv/lib/csum.c ``do_csum`` on rv64 with the Zbb fold patched in.

    ``misaligned_zbb=False``: ``do_csum_with_alignment`` folds in C (its Zbb block is
    compiled only with CC_HAS_ASM_GOTO_TIED_OUTPUT): canonical 16 bits, no ``addw`` quirk.
    """
    if not len(view):
        return 0
    offset = 0 if fast_unaligned else align & 7
    sum32 = canonical(ones_sum(view, 64, "little") << (8 * offset), 32)
    folded = (sum32 + ror32(sum32, 16)) & M32
    sum16 = folded >> 16
    if offset & 1:
        return swab16(sum16)
    if folded >> 31 and (offset == 0 or misaligned_zbb):
        return (M16 << 16) | sum16
    return sum16


@register("riscv64-zbb")
def riscv64_zbb(view: memoryview, seed: int, align: int) -> int:
    """lib/checksum.c ``csum_partial`` with arch/riscv/lib/csum.c ``do_csum`` (Zbb, no fast unaligned access)."""
    return add32(_zbb_do_csum(view, align, False), seed)


@register("riscv64-zbb-fast-unaligned")
def riscv64_zbb_fast_unaligned(view: memoryview, seed: int, align: int) -> int:
    """As ``riscv64-zbb`` on a CPU where ``has_fast_unaligned_accesses()`` is true: alignment never matters."""
    return add32(_zbb_do_csum(view, align, True), seed)


@register("riscv64-zbb-cfold-misaligned")
def riscv64_zbb_cfold_misaligned(view: memoryview, seed: int, align: int) -> int:
    """As ``riscv64-zbb``, but a misaligned buffer's sum is folded in C (Debian's 7.2.13 kernel, booted)."""
    return add32(_zbb_do_csum(view, align, False, misaligned_zbb=False), seed)

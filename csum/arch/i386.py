"""i386 ``csum_partial``: the two assembly bodies of arch/x86/lib/checksum_32.S.

Both bodies keep a 32-bit ``adcl`` chain with an end-around carry, little-endian
words, the seed as the accumulator's starting value. They differ in their
alignment head, their tail, and one carry:

* ``i386`` (``CONFIG_X86_USE_PPRO_CHECKSUM=y``, what distributions build for
  i686): the 4-byte aligned body adds the rest of the buffer, its last 1-3
  bytes masked out of one little-endian word (so they sit at the low end).
* ``i386-nonppro`` (386/486/Pentium kernels): the 3-byte tail is added as
  ``(u16 << 16) | byte``, not in its little-endian place; and at an odd address
  the first byte is added by an ``adcl`` whose carry-out the following
  ``roll $8`` overwrites (rotates set CF). See :func:`i386_nonppro`.

Shared head (modelled per instruction, it is at most two steps): at an odd
address the first byte is added and the accumulator rotated left by 8; at an
address that is 2 mod 4 (after that byte, or from the start) one 16-bit word is
added to ``%ax`` with ``addw`` and its carry put back in bit 0 with
``adcl $0``: congruent mod 0xffff, *not* mod 2**32-1, so it is done exactly.
At an odd address the result is rotated left by 8 once more (a zero-length
buffer at an odd address returns the seed untouched: both bodies exit early).

Canonicality of the body (why ``canonical(acc + n, 32)`` is bit-exact): every
chain starts with CF = 0 (``testl``/``andl``/a ``shrl`` shifting out a zero
bit/a preceding ``adcl $0`` that cannot carry, see below) and ends with
``adcl $0``. Write the state as (eax, CF). A step ``adcl x`` maps it to
``eax' + CF'*2**32 = eax + CF + x``. The state (0xffffffff, 1) is unreachable:
it needs ``eax + CF + x = 2**33 - 1``, i.e. the previous state was that state
too, and chains start with CF = 0. Hence ``v = eax + CF`` always lies in
0..2**32-1, is congruent (mod 2**32-1, where 2**32 == 1) to the accumulator's
start plus everything added, and is 0 only if the previous ``v`` and ``x``
were 0; the closing ``adcl $0`` stores ``v`` with CF = 0. So the body's result
is the unique value in 1..2**32-1 congruent to the integer total (0 iff that
total is 0): ``canonical``. Summing the little-endian 32-bit words equals,
mod 2**32-1, the whole slice read as one little-endian integer (2**32 == 1),
which is also 0 iff every byte is 0. The engine's ``ones_sum(rest, 32,
"little")`` is the canonical value of that integer, so it can stand for it:
``canonical(a + canonical(n)) == canonical(a + n)`` (same residue, and both
are 0 only if ``a == n == 0``). No per-word loop runs in Python.
"""

from __future__ import annotations

from ..core.arith import M16, M32, add16, add32, canonical, ror32
from ..engine import ones_sum
from . import register


def _rol8(x: int) -> int:
    return ror32(x, 24)


def _addw(eax: int, word: int) -> int:
    """``addw word, %ax; adcl $0, %eax``: 16-bit add into the low half, its carry into bit 0.

    After a carry the low half is at most 0xfffe, so the ``adcl`` never carries out.
    """
    return (eax & ~M16 & M32) + add16(eax & M16, word)


def _le16(view: memoryview, pos: int) -> int:
    return view[pos] | (view[pos + 1] << 8)


@register("i386")
def i386_ppro(view: memoryview, seed: int, align: int) -> int:
    """arch/x86/lib/checksum_32.S ``csum_partial``, ``CONFIG_X86_USE_PPRO_CHECKSUM`` body."""
    n, pos, eax = len(view), 0, seed
    odd = bool(align & 1)
    if odd:
        if not n:
            return seed
        eax = _rol8(add32(eax, view[0]))  # addl; adcl $0; roll $8
        pos = 1
    if (align + pos) & 2 and n - pos >= 2:
        eax = _addw(eax, _le16(view, pos))
        pos += 2
    # The head's own short cases (0 or 1 byte left: a movzbl + addl + adcl $0,
    # or nothing) add the same as the body would, so they need no branch here.
    eax = canonical(eax + ones_sum(view[pos:], 32, "little"), 32)
    return _rol8(eax) if odd else eax


@register("i386-nonppro")
def i386_nonppro(view: memoryview, seed: int, align: int) -> int:
    """arch/x86/lib/checksum_32.S ``csum_partial``, the body built without ``CONFIG_X86_USE_PPRO_CHECKSUM``.

    Kernel bug reproduced here: at an odd address the first byte is added with
    ``adcl`` (CF is 0 there, so it is a plain add) and then ``roll $8`` runs,
    which overwrites CF with the rotated-out bit before anything adds it back.
    So when ``seed + first byte > 0xffffffff`` (odd address, length >= 1) the
    carry, worth 1 mod 2**32-1, is lost: the result is 1 less, mod 0xffff,
    than the true sum (the two rotations multiply the loss by 2**16 == 1).
    With a u32 seed and a byte this needs ``seed > 0xffffffff - first byte``,
    e.g. seed 0xffffffff and any non-zero first byte.
    """
    n, pos, eax = len(view), 0, seed
    odd = bool(align & 1)
    if odd:
        if not n:
            return seed
        eax = _rol8((eax + view[0]) & M32)  # adcl (CF=0); roll $8 drops the carry
        pos = 1
    if (align + pos) & 2 and n - pos >= 2:
        eax = _addw(eax, _le16(view, pos))
        pos += 2
    rest = n - pos  # from here on the position is 4-byte aligned, or fewer than 2 bytes remain
    words = pos + (rest & ~3)
    total = ones_sum(view[pos:words], 32, "little")
    tail = rest & 3
    if tail == 3:  # movw (%esi),%cx; shll $16,%ecx; movb 2(%esi),%cl
        total += (_le16(view, words) << 16) | view[words + 2]
    elif tail:  # movw (%esi),%cx  /  movb (%esi),%cl
        total += int.from_bytes(view[words:], "little")
    eax = canonical(eax + total, 32)
    return _rol8(eax) if odd else eax

"""MIPS ``csum_partial`` before R6: arch/mips/lib/csum_partial.S, 32-bit (both byte orders) and 64-bit.

The routine sums into a register that starts at 0 with ``ADDC`` (``addu``,
``sltu`` for the carry, ``addu`` of that carry): a 32-bit end-around add, so
the sum is canonical. Proof sketch: from ``v`` in 0..2**32-1, adding ``x``
gives ``v + x`` or, on overflow, ``v + x - 2**32 + 1``, which is in
1..2**32-1 (``v + x <= 2**33 - 2``); so ``v`` stays in 0..2**32-1, stays
congruent mod 2**32-1 to the total, and is 0 only while everything added is
0. The unrolled blocks first pair two words with ``ADDC`` and then add the
pair, which by the same argument is congruent and 0 only if both were. Hence
the register ends as ``canonical(sum of the added integers, 32)``, and the
native 32-bit words of an aligned run sum (2**32 == 1 mod 2**32-1) to the run
read as one native-order integer, whose canonical value the engine's
``ones_sum(run, 32, order)`` gives; it can stand for the integer since
``canonical(a + canonical(n)) == canonical(a + n)`` (same residue, 0 only if
``a == n == 0``). No per-word loop runs in Python.

What is added, in the CPU's byte order:

* length >= 8: at an odd address the first byte (big-endian: as is, i.e. at
  the low end; little-endian: ``<< 8``), then at a 2-mod-4 address one native
  halfword, which leaves the pointer 4-byte aligned; then the native 32-bit
  words (the 8/16-byte alignment steps and 32..128-byte blocks only regroup
  them); then the last ``len % 4`` bytes as a tail.
* length < 8: the odd-address flag is never set; a native (``ulw``) word if
  4 bytes remain, then the tail.
* tail: ``(halfword << 16) | byte``, the byte ``<< 8`` on big-endian; on
  either order only the halfword, or only the byte, may be present.

Then, if the odd-address flag is set, the bytes of each halfword are swapped
(``wsbh`` on R2+, an and/shift/or sequence before; same bits), and finally
the seed is added with one more end-around add (``ADDC32``). MIPS R6 does not
use this file (it selects GENERIC_CSUM, see the generic profiles).

The 64-bit build (``USE_DOUBLE``) gives the 32-bit build's bits, so it shares
the routine: ``ADDC`` is a 64-bit end-around add (``daddu``/``sltu``), words come
as ``ld`` (two native words, one at the high end), ``lwu`` (zero-extended) or,
for the short tail, ``ulw`` shifted ``<< 32``; the halfword tail's ``sll 16``
sign-extends (0xffffffff00000000 more when the halfword is >= 0x8000). All of
these are congruent mod 2**32-1 to the 32-bit build's addends (2**32 == 1) and
are 0 only when those are; the fold (``dsll32``/``daddu``/``sltu``/``dsra32``/
``addu``) is an end-around add of the two halves, so it ends at the same
``canonical(total, 32)``. The ``wsbh`` swap and ``ADDC32`` then act on that
32-bit value (sign-extended in the register, which orders as the u32 does for
``sltu``). Evidence: the boot of Debian's 6.1 mips64el kernel (tests/vectors/qemu), and
the 64-bit build compiled from Debian's linux-source 7.2.13 and 6.1.176 and run under
qemu-mips64el (tests/vectors/csum_partial/mips64el.txt: mipsel.txt's lines, odd
addresses and tails included).
"""

from __future__ import annotations

from ..core.arith import add32, canonical
from ..engine import ByteOrder, ones_sum
from . import register


def _wsbh(x: int) -> int:
    """MIPS ``wsbh``: swap the two bytes of each halfword."""
    return ((x & 0x00FF00FF) << 8) | ((x >> 8) & 0x00FF00FF)


def _tail(tail: memoryview, order: ByteOrder) -> int:
    """The value the ``.Lsmall_csumcpy`` tail adds for 0..3 remaining bytes."""
    half, pos = 0, 0
    if len(tail) & 2:
        half, pos = int.from_bytes(tail[:2], order), 2
    byte = tail[pos] if len(tail) & 1 else 0
    return (half << 16) | (byte << 8 if order == "big" else byte)


def _mips32(view: memoryview, seed: int, align: int, order: ByteOrder) -> int:
    """The 32-bit routine on a CPU of byte order ``order``: canonical sum, ``wsbh`` if flagged odd, seed last."""
    n, pos, total, odd = len(view), 0, 0, False
    if n < 8:
        if n & 4:
            total, pos = int.from_bytes(view[:4], order), 4
        return add32(canonical(total + _tail(view[pos:], order), 32), seed)
    if align & 1:
        odd, pos = True, 1
        total = view[0] if order == "big" else view[0] << 8
    if (align + pos) & 2:
        total += int.from_bytes(view[pos : pos + 2], order)
        pos += 2
    words = pos + ((n - pos) & ~3)
    total += ones_sum(view[pos:words], 32, order) + _tail(view[words:], order)
    acc = canonical(total, 32)
    return add32(_wsbh(acc) if odd else acc, seed)


@register("mips32-be")
def mips32_be(view: memoryview, seed: int, align: int) -> int:
    """arch/mips/lib/csum_partial.S ``csum_partial`` on 32-bit big-endian MIPS (result as the CPU holds it)."""
    return _mips32(view, seed, align, "big")


@register("mips32-le")
def mips32_le(view: memoryview, seed: int, align: int) -> int:
    """arch/mips/lib/csum_partial.S ``csum_partial`` on 32-bit little-endian MIPS."""
    return _mips32(view, seed, align, "little")


@register("mips64-le")
def mips64_le(view: memoryview, seed: int, align: int) -> int:
    """arch/mips/lib/csum_partial.S ``csum_partial`` on 64-bit little-endian MIPS: the 32-bit bits (see above)."""
    return _mips32(view, seed, align, "little")

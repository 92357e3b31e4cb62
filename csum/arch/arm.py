"""32-bit ARM ``csum_partial``: arch/arm/lib/csumpartial.S (little-endian, ARM state).

The seed *is* the accumulator: every load is added to it with ``adcs`` (a
32-bit add that takes in and sets the carry flag) and ``adc r0, sum, #0``
collects the last carry. The carry starts clear (``adds sum, sum, #0`` on the
long path; ``cmp len, #8`` leaving "lower" on the short one).

Why that chain is the canonical 32-bit sum of its terms (proof sketch): read
the state as ``sum + C`` (register plus pending carry), which is congruent to
``sum + C * 2**32`` mod ``2**32 - 1``. ``adcs`` of ``x <= 2**32 - 1`` maps
``(sum, C)`` to ``sum + x + C`` split into register and carry, so the
congruence is kept. The state (0xffffffff, C=1) would need ``sum + x + C =
2**33 - 1``, i.e. a previous state that was already (0xffffffff, 1): starting
from C=0 it is unreachable, so the final ``adc`` never overflows. The register
is 0 with C=0 only if every addend was 0 (otherwise the true sum is >= 1 and
a wrap to 0 leaves C=1). Hence ``sum + C`` is 0 for an all-zero input and
otherwise lies in 1..2**32-1: :func:`canonical` of the integer sum, width 32.

What is *not* canonical-of-the-buffer is which integers are added, and the
odd-address rotation; modelled literally:

* ``len == 0``: the seed is returned untouched (before any rotation).
* Odd address: the seed is rotated right by 8, the first byte is added shifted
  left by 8 (``put_byte_1``), and the final result is rotated right by 8.
* ``len < 8``: 16-bit loads (``ldrh``) each added as a 32-bit term, then a last
  odd byte added at the *low* end (``put_byte_0``).
* ``len >= 8``: a halfword to reach 4-byte alignment if needed, 32-byte
  ``ldmia`` blocks and 4-byte words (all little-endian u32s from 4-aligned
  addresses), then at most one tail halfword and a tail byte at the low end.

Only ``align % 4`` matters (the code tests address bits 0 and 1). The bulk of
4-byte words is summed by the engine (:func:`csum.engine.ones_sum`, width 32):
its canonical sum is congruent to their integer sum and 0 only when they are,
so it can stand in for them inside :func:`canonical`.
"""

from __future__ import annotations

from ..core.arith import canonical
from ..core.ones import ror32
from ..engine import ones_sum
from . import register


def _short_terms(view: memoryview, pos: int) -> int:
    """Integer sum of the ``ldrh`` halfwords and low-end last byte from ``pos`` on (fewer than 8 bytes)."""
    total, end = 0, len(view)
    while end - pos >= 2:
        total += view[pos] | (view[pos + 1] << 8)
        pos += 2
    if pos < end:
        total += view[pos]
    return total


@register("arm")
def arm(view: memoryview, seed: int, align: int) -> int:
    """arch/arm/lib/csumpartial.S ``csum_partial`` (little-endian): unfolded 32-bit, alignment-sensitive."""
    n = len(view)
    if n == 0:
        return seed
    odd = align & 1
    total = ror32(seed, 8) if odd else seed
    pos = 0
    if odd:
        total += view[0] << 8
        pos = 1
    if n >= 8 and (align + pos) & 2:
        total += view[pos] | (view[pos + 1] << 8)
        pos += 2
    if n >= 8:
        words = (n - pos) & ~3
        total += ones_sum(view[pos : pos + words], 32, "little")
        pos += words
    total += _short_terms(view, pos)
    result = canonical(total, 32)
    return ror32(result, 8) if odd else result

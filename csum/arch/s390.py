"""s390x ``csum_partial``: arch/s390/lib/csum-partial.c (vector ``VCKSM``).

The seed and every big-endian 32-bit word (tail zero-padded) go through
``VCKSM``'s end-around 32-bit adds: the canonical 32-bit big-endian sum.
"""

from __future__ import annotations

from ..core.arith import add32
from ..engine import ones_sum
from . import register


@register("s390x")
def s390x(view: memoryview, seed: int, align: int) -> int:
    """arch/s390/lib/csum-partial.c ``csum_partial``: unfolded, canonical 32-bit, big-endian."""
    return add32(ones_sum(view, 32, "big"), seed)

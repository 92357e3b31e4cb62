"""One's-complement arithmetic on ints: the include/net/checksum.h toolbox.

Models include/net/checksum.h and include/asm-generic/checksum.h (generic
versions; the arch overrides of ``csum_add``/``csum_fold`` give the same bits).
These are the checked wrappers: each validates its arguments and calls the
unchecked primitive of csum/core/arith.py, the one home of carry folding.
``csum_replace2``/``csum_replace4`` answer from C first (csum.engine.fast_path).
"""

from __future__ import annotations

from ..engine import fast_path
from ..types import Be16, Be32, Sum16, Wsum
from .arith import M16, M32, add16, add32, fold, ror32, sub16, sub32, swab16
from .arith import from32to16 as _from32to16
from .arith import from64to32 as _from64to32
from .inputs import check_uint

CSUM_MANGLED_0 = Sum16(0xFFFF)
__all__ = [
    "CSUM_MANGLED_0", "M16", "M32", "csum16_add", "csum16_sub", "csum_add", "csum_block_add", "csum_block_sub",
    "csum_fold", "csum_fold_bytes", "csum_neg", "csum_replace2", "csum_replace4", "csum_replace_by_diff", "csum_shift",
    "csum_sub", "csum_unfold", "from32to16", "from64to32", "ror32", "swab16",
]


def from32to16(x: Wsum) -> int:
    """include/net/checksum.h ``csum_from32to16``: fold a u32 sum to 16 bits, not complemented.

    0 stays 0; every other value lands in 1..0xffff (0xffff0000 -> 0xffff).
    """
    return _from32to16(check_uint(x, 32, "x"))


def from64to32(x: int) -> int:
    """lib/checksum.c ``from64to32``: fold a u64 sum to 32 bits with end-around carry."""
    return _from64to32(check_uint(x, 64, "x"))


def csum_fold(wsum: Wsum) -> Sum16:
    """include/asm-generic/checksum.h ``csum_fold``: fold to 16 bits and complement.

    0 folds to 0xffff; any sum that folds to 0xffff gives 0.
    """
    return fold(check_uint(wsum, 32, "wsum"))  # type: ignore[return-value]


def csum_fold_bytes(wsum: Wsum) -> bytes:
    """The two checksum-field bytes of :func:`csum_fold` (a little-endian CPU stores the ``__sum16`` as is)."""
    return csum_fold(wsum).to_bytes(2, "little")


def csum_unfold(sum16: Sum16) -> Wsum:
    """include/net/checksum.h ``csum_unfold``: a 16-bit checksum as a 32-bit sum (zero-extended)."""
    return check_uint(sum16, 16, "sum16")  # type: ignore[return-value]


def csum_add(a: Wsum, b: Wsum) -> Wsum:
    """include/net/checksum.h ``csum_add``: 32-bit add with end-around carry."""
    return add32(check_uint(a, 32, "a"), check_uint(b, 32, "b"))  # type: ignore[return-value]


def csum_sub(a: Wsum, b: Wsum) -> Wsum:
    """include/net/checksum.h ``csum_sub``: ``csum_add(a, ~b)``."""
    return sub32(check_uint(a, 32, "a"), check_uint(b, 32, "b"))  # type: ignore[return-value]


def csum_neg(wsum: Wsum) -> Wsum:
    """include/net/checksum.h ``csum_neg``: the 32-bit complement."""
    return check_uint(wsum, 32, "wsum") ^ M32  # type: ignore[return-value]


def csum16_add(csum: Sum16, addend: Be16) -> Sum16:
    """include/net/checksum.h ``csum16_add``: 16-bit add with end-around carry."""
    return add16(check_uint(csum, 16, "csum"), check_uint(addend, 16, "addend"))  # type: ignore[return-value]


def csum16_sub(csum: Sum16, addend: Be16) -> Sum16:
    """include/net/checksum.h ``csum16_sub``: ``csum16_add(csum, ~addend)``."""
    return sub16(check_uint(csum, 16, "csum"), check_uint(addend, 16, "addend"))  # type: ignore[return-value]


def csum_shift(wsum: Wsum, offset: int) -> Wsum:
    """include/net/checksum.h ``csum_shift``: a block summed at an odd offset is rotated by 8 bits."""
    value = check_uint(wsum, 32, "wsum")
    return ror32(value, 8) if check_uint(offset, 63, "offset") & 1 else value  # type: ignore[return-value]


def csum_block_add(csum: Wsum, csum2: Wsum, offset: int) -> Wsum:
    """include/net/checksum.h ``csum_block_add``: add the sum of a block that starts at ``offset``."""
    return add32(check_uint(csum, 32, "csum"), csum_shift(check_uint(csum2, 32, "csum2"), offset))  # type: ignore[return-value]


def csum_block_sub(csum: Wsum, csum2: Wsum, offset: int) -> Wsum:
    """include/net/checksum.h ``csum_block_sub``: remove the sum of a block that starts at ``offset``."""
    return csum_block_add(csum, check_uint(csum2, 32, "csum2") ^ M32, offset)  # type: ignore[arg-type]


def csum_replace_by_diff(sum16: Sum16, diff: Wsum) -> Sum16:
    """include/net/checksum.h ``csum_replace_by_diff``: apply a precomputed diff (e.g. bpf_csum_diff)."""
    return fold(sub32(check_uint(diff, 32, "diff"), csum_unfold(sum16)))  # type: ignore[return-value]


@fast_path("csum_replace4")
def csum_replace4(sum16: Sum16, frm: Be32, to: Be32) -> Sum16:
    """include/net/checksum.h ``csum_replace4``: a 32-bit field changed from ``frm`` to ``to``."""
    tmp = sub32(csum_unfold(sum16) ^ M32, check_uint(frm, 32, "frm"))
    return fold(add32(tmp, check_uint(to, 32, "to")))  # type: ignore[return-value]


@fast_path("csum_replace2")
def csum_replace2(sum16: Sum16, old: Be16, new: Be16) -> Sum16:
    """include/net/checksum.h ``csum_replace2``: RFC 1624 eqn. 3 in 16-bit arithmetic.

    ``HC' = ~(~HC + ~m + m')``; never yields the -0 that eqn. 2 can (RFC 1624 section 3).
    """
    tmp = sub16(check_uint(sum16, 16, "sum16") ^ M16, check_uint(old, 16, "old"))
    return add16(tmp, check_uint(new, 16, "new")) ^ M16  # type: ignore[return-value]

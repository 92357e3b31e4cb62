"""Generic ``csum_partial`` and friends: lib/checksum.c on a little-endian CPU.

lib/checksum.c is what every ``GENERIC_CSUM`` architecture builds (arm64,
riscv, loongarch ... with their own ``do_csum``, which give the same bits).
``do_csum`` returns the canonical folded 16-bit sum of the bytes read as
little-endian 16-bit words; its odd-address path adds the first byte shifted
and swaps the result back, which lands on the same value, so ``align`` is
validated but cannot change a result here (tests/test_partial.py shows it).
"""

from __future__ import annotations

from ._check import as_view, check_align, check_uint
from ._engine import ones_sum
from .errors import CsumValueError
from .ones import M16, M32
from .types import Sum16, WireSum, Wsum


def do_csum(buf: object, *, align: int = 0) -> int:
    """lib/checksum.c ``do_csum``: the folded 16-bit sum of ``buf`` (not complemented)."""
    check_align(align)
    return ones_sum(buf, 16, "little", "buf")


def csum_partial(buf: object, seed: Wsum = 0, *, align: int = 0) -> Wsum:
    """lib/checksum.c ``csum_partial``: ``do_csum(buf)`` plus the 32-bit ``seed``, end-around; a u32."""
    # The hot path: argument checks inlined for plain ints in range; with seed 0 the
    # end-around add cannot carry (do_csum <= 0xffff), so the folded sum is the answer.
    if not (seed.__class__ is int and 0 <= seed <= M32):
        seed = check_uint(seed, 32, "seed")
    if not (align.__class__ is int and 0 <= align <= 7):
        check_align(align)
    if not seed:
        return ones_sum(buf, 16, "little", "buf")
    r = ones_sum(buf, 16, "little", "buf") + seed
    return (r & M32) + (r >> 32)


def ip_compute_csum(buf: object) -> Sum16:
    """lib/checksum.c ``ip_compute_csum``: the complemented 16-bit checksum as a little-endian CPU holds it."""
    return ones_sum(buf, 16, "little", "buf") ^ M16


def ip_fast_csum(iph: object, ihl: int) -> Sum16:
    """lib/checksum.c ``ip_fast_csum``: checksum of an IPv4 header of ``ihl`` 32-bit words.

    A header whose checksum field is filled in correctly gives 0.
    """
    view = as_view(iph, "iph")
    ihl = check_uint(ihl, 4, "ihl")
    if ihl < 5:
        raise CsumValueError(f"ihl must be 5..15 (32-bit words), got {ihl}", code="out-of-range")
    if len(view) < 4 * ihl:
        raise CsumValueError(f"iph has {len(view)} bytes, ihl={ihl} needs {4 * ihl}", code="truncated")
    return ones_sum(view[: 4 * ihl], 16, "little") ^ M16


def internet_checksum(buf: object) -> WireSum:
    """The RFC 1071 checksum of ``buf`` as transmitted, read big-endian (== ``scapy.utils.checksum``)."""
    return ones_sum(buf, 16, "big", "buf") ^ M16


def verify_checksum(buf: object) -> bool:
    """True if ``buf`` (checksum field filled in) sums to all ones, i.e. its checksum is 0 (RFC 1071 section 1)."""
    return ones_sum(buf, 16, "big", "buf") == M16


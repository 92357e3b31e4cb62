"""Generic ``csum_partial`` and friends: lib/checksum.c on a little-endian CPU.

lib/checksum.c is what every ``GENERIC_CSUM`` architecture builds (arm64,
riscv, loongarch ... with their own ``do_csum``, which give the same bits).
``do_csum`` returns the canonical folded 16-bit sum of the bytes read as
little-endian 16-bit words; its odd-address path adds the first byte shifted
and swaps the result back, which lands on the same value, so ``align`` (checked
like everywhere else) cannot change a result here (tests/core/test_partial.py
and tests/arch/test_kernel_vectors.py check odd addresses against lib/checksum.c compiled outside the repository);
``do_csum``, like the kernel's, takes no alignment.
"""

from __future__ import annotations

from ..engine import fast_path, ones_sum
from ..errors import Code, CsumValueError
from ..types import Sum16, WireSum, Wsum
from .arith import M16, add32
from .inputs import as_view, check_align, check_uint


def do_csum(buf: object) -> int:
    """lib/checksum.c ``do_csum``: the folded 16-bit sum of ``buf`` (not complemented).

    The kernel function takes no alignment: its odd-address path shifts the first
    byte and swaps the result back, the same sum at every address.
    """
    return ones_sum(buf, 16, "little", "buf")


#: The name csum/arch registers this arithmetic under (csum/arch/generic.py) and C's shape for it.
GENERIC_LE = "lib/checksum.c-le"


@fast_path("partial", GENERIC_LE)
def csum_partial(buf: object, seed: Wsum = Wsum(0), *, align: int = 0) -> Wsum:
    """lib/checksum.c ``csum_partial``: ``do_csum(buf)`` plus the 32-bit ``seed``, end-around; a u32."""
    # With the C engine, csum/engine/_arith.c answers every call whose arguments pass these
    # checks before this function runs (csum.engine.fast_path).
    value = check_uint(seed, 32, "seed")
    check_align(align)
    return add32(ones_sum(buf, 16, "little", "buf"), value)  # type: ignore[return-value]


def ip_compute_csum(buf: object) -> Sum16:
    """lib/checksum.c ``ip_compute_csum``: the complemented 16-bit checksum as a little-endian CPU holds it."""
    return ones_sum(buf, 16, "little", "buf") ^ M16  # type: ignore[return-value]


def ip_fast_csum(iph: object, ihl: int) -> Sum16:
    """lib/checksum.c ``ip_fast_csum``: checksum of an IPv4 header of ``ihl`` 32-bit words.

    A header whose checksum field is filled in correctly gives 0.
    """
    view = as_view(iph, "iph")
    ihl = check_uint(ihl, 4, "ihl")
    if ihl < 5:
        raise CsumValueError(f"ihl must be 5..15 (32-bit words), got {ihl}", code=Code.OUT_OF_RANGE)
    if len(view) < 4 * ihl:
        raise CsumValueError(f"iph has {len(view)} bytes, ihl={ihl} needs {4 * ihl}", code=Code.TRUNCATED)
    return ones_sum(view[: 4 * ihl], 16, "little") ^ M16  # type: ignore[return-value]


def ip_fast_csum_bytes(iph: object, ihl: int) -> bytes:
    """The two checksum-field bytes of :func:`ip_fast_csum`: over a header whose field (offset 10) is
    zero, the bytes to store there."""
    return ip_fast_csum(iph, ihl).to_bytes(2, "little")


@fast_path("internet_checksum")
def internet_checksum(buf: object) -> WireSum:
    """The RFC 1071 checksum of ``buf`` as transmitted, read big-endian (== ``scapy.utils.checksum``)."""
    return ones_sum(buf, 16, "big", "buf") ^ M16  # type: ignore[return-value]


@fast_path("internet_checksum_bytes")
def internet_checksum_bytes(buf: object) -> bytes:
    """The two bytes to store in the checksum field: :func:`internet_checksum` in network order."""
    return (ones_sum(buf, 16, "big", "buf") ^ M16).to_bytes(2, "big")


def ip_compute_csum_bytes(buf: object) -> bytes:
    """The two checksum-field bytes of :func:`ip_compute_csum`: the field holds the same bytes on every
    CPU, so these are :func:`internet_checksum_bytes`."""
    return internet_checksum_bytes(buf)


def verify_checksum(buf: object) -> bool:
    """True if ``buf`` (checksum field filled in) sums to all ones, i.e. its checksum is 0 (RFC 1071 section 1)."""
    return ones_sum(buf, 16, "big", "buf") == M16


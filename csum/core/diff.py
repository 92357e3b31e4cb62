"""``bpf_csum_diff`` (net/core/filter.c, both forms) and ``inet_proto_csum_replace16`` (net/core/utils.c) over
any ``csum_partial``: the arithmetic the generic toolbox, every architecture's profile and csum.bpf share.

``bpf_csum_diff`` exists in two forms: the legacy one (Linux <= 6.12), which
copied ``~from`` and ``to`` into a 512-byte per-CPU scratch buffer and returned
the *arch* ``csum_partial`` of it, and the homogenized one (Linux >= 6.13,
"bpf: bpf_csum_diff: optimize and homogenize for all archs"), which works on
the two buffers in place and folds with ``csum_from32to16``. Both are written
here once, over a ``csum_partial`` implementation (:data:`PartialFn`).
"""

from __future__ import annotations

from typing import Callable

from ..errors import EINVAL
from ..types import Wsum
from .arith import M32, add32, fold, from32to16
from .inputs import as_view, check_align, check_callable, check_field, check_uint

__all__ = ["PartialFn", "SCRATCH_SIZE", "csum_diff", "csum_diff_legacy", "inet_proto_csum_replace16"]

#: Size of the legacy helper's scratch buffer (``MAX_BPF_STACK``), in bytes.
SCRATCH_SIZE = 512

#: A csum_partial implementation: (bytes view, u32 seed, align) -> u32.
PartialFn = Callable[[memoryview, int, int], int]


def csum_diff(partial: PartialFn, frm: object, to: object, seed: Wsum = Wsum(0), *, frm_align: int = 0,
              to_align: int = 0) -> int:
    """net/core/filter.c ``bpf_csum_diff`` (>= 6.13) over the given ``csum_partial``; a 16-bit result.

    This helper reads ``from`` and ``to`` in place: ``frm_align``/``to_align``
    are their addresses' offsets from an 8-byte boundary (0..7), handed to
    ``csum_partial`` as the kernel's pointers are. They matter only where the
    arch's ``csum_partial`` depends on the address (arm, powerpc, riscv-zbb,
    old x86_64, i386), and there only in the 0x0000-vs-0xffff corner.
    """
    check_callable(partial, "partial")
    f, t = as_view(frm, "frm"), as_view(to, "to")
    ret: int = check_uint(seed, 32, "seed")
    fa, ta = check_align(frm_align, "frm_align"), check_align(to_align, "to_align")
    if len(f) and len(t):
        ret = add32(partial(t, ret, ta), partial(f, 0, fa) ^ M32)
    elif len(t):
        ret = partial(t, ret, ta)
    elif len(f):
        ret = partial(f, ret ^ M32, fa) ^ M32
    return from32to16(ret)


def inet_proto_csum_replace16(partial: PartialFn, sum16: int, frm: object, to: object) -> int:
    """net/core/utils.c ``inet_proto_csum_replace16`` on a non-CHECKSUM_PARTIAL skb: a 16-byte field changed.

    The new checksum is ``csum_fold(csum_partial(~frm || to, ~csum_unfold(sum16)))`` with the
    given (the arch's) ``csum_partial``; the 32-byte ``diff`` array lives on the kernel stack,
    modelled at address 0 mod 8. ``sum16`` and the result are the 16-bit field as the CPU holds it.
    """
    check_callable(partial, "partial")
    old = check_field(frm, (16,), "frm")
    new = check_field(to, (16,), "to")
    seed = check_uint(sum16, 16, "sum16") ^ M32
    return fold(partial(memoryview(bytes(b ^ 0xFF for b in old) + new), seed, 0))


def csum_diff_legacy(partial: PartialFn, frm: object, to: object, seed: Wsum = Wsum(0)) -> int:
    """net/core/filter.c ``bpf_csum_diff`` (<= 6.12): ``csum_partial`` of the scratch buffer ``~frm || to``.

    The buffers' own addresses never matter: they are copied into the per-CPU
    scratch buffer, modelled at address 0 mod 8; the 6.1 kernels booted for
    tests/vectors/qemu (armhf and ppc64el included, whose csum_partial would show
    another address) agree. Returns -EINVAL (-22) when a size is not a multiple of 4 or the two exceed 512 bytes.
    """
    check_callable(partial, "partial")
    f, t = as_view(frm, "frm"), as_view(to, "to")
    seed = check_uint(seed, 32, "seed")
    if (len(f) | len(t)) & 3 or len(f) + len(t) > SCRATCH_SIZE:
        return -EINVAL
    inverted = (int.from_bytes(f, "little") ^ ((1 << (8 * len(f))) - 1)).to_bytes(len(f), "little")
    return partial(memoryview(inverted + t.tobytes()), seed, 0)

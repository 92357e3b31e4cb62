"""The BPF checksum helpers of net/core/filter.c, emulated.

``bpf_csum_diff`` in both forms (legacy, Linux <= 6.12; homogenized, >= 6.13) is written once over any
``csum_partial`` in csum/core/diff.py, which every profile reuses; this module exposes it with the rest.

``bpf_l3_csum_replace`` and ``bpf_l4_csum_replace`` patch a checksum field in a
mutable packet buffer and return the kernel's return code (0, -EINVAL, -EFAULT);
calls the kernel accepts but that are almost surely wrong raise a :class:`BpfMisuse`
warning (see :mod:`csum.bpf.misuse`). :class:`csum.skb.Skb` adds ``skb->csum``. With the C engine,
csum/engine/_arith.c answers the two first (csum.engine.fast_path) for the calls whose arguments pass every check
and that no :mod:`csum.bpf.misuse` check looks at; these functions answer, and warn about, the rest.
"""

from __future__ import annotations

from ..core.arith import M16, M32, add32, fold, from32to16
from ..core.diff import SCRATCH_SIZE, PartialFn, csum_diff, csum_diff_legacy, inet_proto_csum_replace16
from ..core.inputs import as_int, as_view, check_align, check_bool, check_field, check_int, check_uint
from ..core.ones import CSUM_MANGLED_0, csum_replace2, csum_replace4, csum_replace_by_diff
from ..engine import fast_path
from ..errors import EFAULT, EINVAL, BpfMisuse, Code, CsumTypeError, CsumValueError
from ..types import Be16, Be32, Sum16, Wsum
from .flags import (
    BPF_F_HDR_FIELD_MASK,
    BPF_F_IPV6,
    BPF_F_MARK_ENFORCE,
    BPF_F_MARK_MANGLED_0,
    BPF_F_PSEUDO_HDR,
    CHECKSUM_COMPLETE,
    CHECKSUM_NONE,
    CHECKSUM_PARTIAL,
    CHECKSUM_UNNECESSARY,
)
from .misuse import check_l3, check_l4

__all__ = ["BPF_F_HDR_FIELD_MASK", "BPF_F_IPV6", "BPF_F_MARK_ENFORCE", "BPF_F_MARK_MANGLED_0", "BPF_F_PSEUDO_HDR",
           "BpfMisuse", "CHECKSUM_COMPLETE", "CHECKSUM_NONE", "CHECKSUM_PARTIAL", "CHECKSUM_UNNECESSARY",
           "PartialFn", "SCRATCH_SIZE", "bpf_l3_csum_replace", "bpf_l4_csum_replace", "csum_diff",
           "csum_diff_legacy", "inet_proto_csum_replace16", "l3_csum_replace_at", "l4_csum_replace_skb"]


def _field_value(value: object, name: str) -> int:
    """A helper argument: an int as the helper's u64 register holds it (a numpy integer too), or the field's
    2 or 4 bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)) or getattr(value, "ndim", None):
        return int.from_bytes(check_field(value, (2, 4), name), "little")
    return check_uint(as_int(value, "an int (u64 register value) or 2/4 bytes", name), 64, name)


def _sum_field(pkt: object, offset: object) -> tuple[memoryview, int] | int:
    view = as_view(pkt, "pkt")
    if view.readonly:
        raise CsumTypeError("pkt must be a writable buffer (bytearray, memoryview of one, numpy array)",
                            code=Code.READ_ONLY)
    offset = check_uint(offset, 32, "offset")
    if offset > 0xFFFF or offset & 1 or offset + 2 > len(view):
        return -EFAULT
    return view, offset


@fast_path("l3_csum_replace")
def bpf_l3_csum_replace(pkt: object, offset: int, frm: object, to: object, flags: int) -> int:
    """net/core/filter.c ``bpf_l3_csum_replace``: patch the checksum at ``pkt[offset:offset+2]`` in place.

    Field size ``flags & 0xf`` is 0 (``to`` is a diff, e.g. from bpf_csum_diff), 2 or 4.
    Returns 0, -EINVAL (bad flags or size, non-zero ``frm`` with size 0) or -EFAULT
    (odd offset, offset > 0xffff, field outside the packet); the buffer is untouched on error.
    """
    return l3_csum_replace_at(pkt, offset, frm, to, flags)


def l3_csum_replace_at(pkt: object, offset: int, frm: object, to: object, flags: int, *, stacklevel: int = 3,
                       misuse: bool = True) -> int:
    """:func:`bpf_l3_csum_replace`; ``stacklevel`` places :class:`BpfMisuse` warnings at the caller's caller;
    ``misuse=False`` skips the :mod:`csum.bpf.misuse` checks (calls csum makes itself)."""
    flags = check_uint(flags, 64, "flags")
    f, t = _field_value(frm, "frm"), _field_value(to, "to")
    misuse = check_bool(misuse, "misuse")
    if flags & ~BPF_F_HDR_FIELD_MASK:
        return -EINVAL
    located = _sum_field(pkt, offset)
    if isinstance(located, int):
        return located
    view, off = located
    if misuse:
        check_l3(f, t, flags, stacklevel + 1)
    old = Sum16(int.from_bytes(view[off : off + 2], "little"))
    size = flags & BPF_F_HDR_FIELD_MASK
    if size == 0:
        if f:
            return -EINVAL
        new = csum_replace_by_diff(old, Wsum(t & M32))
    elif size == 2:
        new = csum_replace2(old, Be16(f & M16), Be16(t & M16))
    elif size == 4:
        new = csum_replace4(old, Be32(f & M32), Be32(t & M32))
    else:
        return -EINVAL
    view[off : off + 2] = new.to_bytes(2, "little")
    return 0


@fast_path("l4_csum_replace")
def bpf_l4_csum_replace(pkt: object, offset: int, frm: object, to: object, flags: int, *,
                        ip_summed: int = CHECKSUM_NONE) -> int:
    """net/core/filter.c ``bpf_l4_csum_replace`` (+ net/core/utils.c ``inet_proto_csum_replace*``).

    Flags: field size 0/2/4, BPF_F_PSEUDO_HDR, BPF_F_MARK_MANGLED_0 (a stored 0
    means "no checksum" and is left alone; a result of 0 is stored as 0xffff),
    BPF_F_MARK_ENFORCE (update a stored 0 too) and BPF_F_IPV6. ``ip_summed`` is
    the skb's state: NONE/UNNECESSARY/COMPLETE patch the field as shown here
    (what a COMPLETE skb's ``skb->csum`` becomes is modelled by :class:`csum.skb.Skb`);
    PARTIAL keeps the field as the pseudo-header seed and only changes it for
    pseudo-header fields. Return codes and errors as for :func:`bpf_l3_csum_replace`.
    """
    return l4_csum_replace_skb(pkt, offset, frm, to, flags, ip_summed, Wsum(0))[0]


def l4_csum_replace_skb(pkt: object, offset: int, frm: object, to: object, flags: int, ip_summed: int,
                        skb_csum: Wsum, *, stacklevel: int = 3, misuse: bool = True) -> tuple[int, Wsum]:
    """:func:`bpf_l4_csum_replace` on an skb whose ``skb->csum`` is ``skb_csum``: (return code, new skb->csum).

    net/core/utils.c: on a CHECKSUM_COMPLETE skb a pseudo-header change moves ``skb->csum``
    by minus the change (``inet_proto_csum_replace4``: ``~csum_add(csum_sub(~csum, from), to)``;
    ``inet_proto_csum_replace_by_diff``: ``~csum_sub(diff, csum)``, skipped with BPF_F_IPV6);
    a non-pseudo change leaves it alone (the field and its checksum cancel in the sum).
    ``misuse=False`` skips the :mod:`csum.bpf.misuse` checks (for calls csum itself makes, e.g. csum.rewrite's).
    """
    flags = check_uint(flags, 64, "flags")
    f, t = _field_value(frm, "frm"), _field_value(to, "to")
    skb_csum = check_uint(skb_csum, 32, "skb_csum")
    ip_summed = check_int(ip_summed, CHECKSUM_NONE, CHECKSUM_PARTIAL, "ip_summed")  # CHECKSUM_NONE..PARTIAL
    misuse = check_bool(misuse, "misuse")
    allowed = BPF_F_HDR_FIELD_MASK | BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE | BPF_F_IPV6
    if flags & ~allowed:
        return -EINVAL, skb_csum
    located = _sum_field(pkt, offset)
    if isinstance(located, int):
        return located, skb_csum
    view, off = located
    if misuse:
        check_l4(view, off, f, t, flags, stacklevel + 1)
    old = Sum16(int.from_bytes(view[off : off + 2], "little"))
    mangled0 = bool(flags & BPF_F_MARK_MANGLED_0)
    if mangled0 and not flags & BPF_F_MARK_ENFORCE and old == 0:
        return 0, skb_csum
    size = flags & BPF_F_HDR_FIELD_MASK
    if size not in (0, 2, 4) or (size == 0 and f):
        return -EINVAL, skb_csum
    mask = M16 if size == 2 else M32
    f, t = f & mask, t & mask
    pseudo = bool(flags & BPF_F_PSEUDO_HDR)
    new: int
    if ip_summed != CHECKSUM_PARTIAL:
        new = csum_replace_by_diff(old, Wsum(t)) if size == 0 else csum_replace4(old, Be32(f), Be32(t))
        if ip_summed == CHECKSUM_COMPLETE and pseudo:
            if size == 0:
                if not flags & BPF_F_IPV6:
                    skb_csum = Wsum(add32(t, skb_csum ^ M32) ^ M32)
            else:
                skb_csum = Wsum(add32(add32(skb_csum ^ M32, f ^ M32), t) ^ M32)
    elif not pseudo:
        new = old
    elif size == 0:
        new = from32to16(add32(t, old))
    else:
        new = from32to16(add32(add32(old, f ^ M32), t))
    if mangled0 and new == 0:
        new = CSUM_MANGLED_0
    view[off : off + 2] = new.to_bytes(2, "little")
    return 0, skb_csum

"""An skb as the tc BPF checksum helpers see it: the bytes from ``skb->data``, ``ip_summed``, ``skb->csum``, ``csum_level``.

Models include/linux/skbuff.h (``ip_summed``, ``csum_level``, ``__skb_postpull_rcsum`` /
``__skb_postpush_rcsum``, ``__skb_{incr,decr,reset}_checksum_unnecessary``) and the helpers of
net/core/filter.c that read or move ``skb->csum``: ``bpf_l3_csum_replace``, ``bpf_l4_csum_replace``
(net/core/utils.c ``inet_proto_csum_replace*``), ``bpf_skb_store_bytes`` with BPF_F_RECOMPUTE_CSUM,
``bpf_csum_update``, ``bpf_csum_level`` and ``bpf_csum_diff`` feeding them.

On a CHECKSUM_COMPLETE skb, ``skb->csum`` is the ``csum_partial`` (the architecture's own, so the
u32 differs between arches while its fold does not) of the bytes from the network header to the end.
:meth:`Skb.checksum_complete` builds one as BPF_PROG_TEST_RUN does with BPF_F_TEST_SKB_CHECKSUM_COMPLETE
(net/bpf/test_run.c, Linux >= 6.11), and :meth:`Skb.csum_valid` is the test run's closing check:
``csum_fold(skb->csum) == csum_fold(sum of the bytes now)``, else the run fails with EBADMSG, as the
stack would drop the packet ("hw csum failure").

On a CHECKSUM_PARTIAL skb (:meth:`Skb.checksum_partial`: a local sender's packet on its way out with checksum
offload, as a tc egress program or veth's peer gets it) the transport checksum is not done yet: its field holds
the folded pseudo-header sum, ``csum_start`` is where the NIC starts summing and ``csum_offset`` where in that
it stores the result (:meth:`Skb.skb_checksum_help`, net/core/dev.c, finishes it as the NIC would).
:meth:`Skb.offload_rule` says what a program rewriting given bytes of such an skb must do.
BPF_PROG_TEST_RUN never builds one, so this model is the only place csum shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Iterable, Literal

from .. import bpf
from ..arch.profiles import Profile, as_profile
from ..core.arith import add32, fold
from ..core.inputs import as_view, check_align, check_int, check_uint
from ..core.ones import csum_block_add, csum_block_sub
from ..core.partial import csum_partial as generic_csum_partial
from ..core.pseudo import csum_ipv6_magic, csum_tcpudp_magic
from ..errors import EFAULT, EINVAL, Code, CsumValueError
from ..layers import layout
from ..types import Wsum
from .flags import (
    BPF_F_INVALIDATE_HASH,
    BPF_F_RECOMPUTE_CSUM,
    CHECKSUM_COMPLETE,
    CHECKSUM_NONE,
    CHECKSUM_PARTIAL,
    CHECKSUM_UNNECESSARY,
)
from ..layers.table import ADDR_SIZES

__all__ = [
    "BPF_CSUM_LEVEL_DEC", "BPF_CSUM_LEVEL_INC", "BPF_CSUM_LEVEL_QUERY", "BPF_CSUM_LEVEL_RESET",
    "BPF_F_INVALIDATE_HASH", "BPF_F_RECOMPUTE_CSUM", "DIFF", "EACCES", "ENOTSUPP", "SKB_MAX_CSUM_LEVEL",
    "Op", "Skb",
]

#: include/uapi/linux/bpf.h: bpf_skb_store_bytes flags and bpf_csum_level levels.
BPF_CSUM_LEVEL_QUERY, BPF_CSUM_LEVEL_INC, BPF_CSUM_LEVEL_DEC, BPF_CSUM_LEVEL_RESET = 0, 1, 2, 3
#: include/linux/skbuff.h: the deepest csum_level an skb records.
SKB_MAX_CSUM_LEVEL = 3
#: errno values the helpers return negated: EACCES (csum_level query off CHECKSUM_UNNECESSARY) and the
#: kernel-internal ENOTSUPP (include/linux/errno.h, 524: bpf_csum_update off CHECKSUM_COMPLETE).
EACCES, ENOTSUPP = 13, 524
#: In an :data:`Op`, ``to=DIFF`` passes what the last ``bpf_csum_diff`` op returned (a program's ``diff`` variable).
DIFF: Literal["diff"] = "diff"

#: One helper call, as :meth:`Skb.run` and :func:`csum.kernel.skb_run` take it:
#: ("bpf_l3_csum_replace" | "bpf_l4_csum_replace", offset, from, to, flags) with ``to`` an int or DIFF,
#: ("bpf_skb_store_bytes", offset, bytes, flags), ("bpf_csum_update", csum), ("bpf_csum_level", level),
#: ("bpf_csum_diff", from_bytes, to_bytes, seed). Methods of :class:`Skb` carry the same names.
Op = tuple[Any, ...]
_NAMES = {CHECKSUM_NONE: "CHECKSUM_NONE", CHECKSUM_UNNECESSARY: "CHECKSUM_UNNECESSARY",
          CHECKSUM_COMPLETE: "CHECKSUM_COMPLETE", CHECKSUM_PARTIAL: "CHECKSUM_PARTIAL"}
_INT_MAX = (1 << 31) - 1


class Skb:
    """A mutable skb: ``data`` (bytearray from ``skb->data``), ``ip_summed``, ``csum`` (u32), ``csum_level``.

    ``network_offset``: where the network header starts in ``data`` (14 on Ethernet, as in tc);
    ``align``: ``skb->data``'s offset from an 8-byte boundary (the test run's is 0 on x86_64);
    ``arch``: whose ``csum_partial`` sums the bytes (a little-endian profile name or Profile).
    Methods return what the helpers return: 0 or a negative errno, or a value.
    """

    def __init__(self, data: object, *, ip_summed: int = CHECKSUM_NONE, csum: Wsum = Wsum(0), csum_level: int = 0,
                 network_offset: int = 14, align: int = 0, arch: str | Profile = "generic") -> None:
        self.data = bytearray(as_view(data, "data"))
        self.ip_summed = check_int(ip_summed, CHECKSUM_NONE, CHECKSUM_PARTIAL, "ip_summed")
        self.csum = check_uint(csum, 32, "csum")
        self.csum_level = check_uint(csum_level, 2, "csum_level")
        self.network_offset = check_uint(network_offset, 16, "network_offset")
        if self.network_offset > len(self.data):
            raise CsumValueError(f"network_offset {network_offset} is past the {len(self.data)}-byte data",
                                 code=Code.BAD_OFFSET)
        self.align = check_align(align)
        self.arch = as_profile(arch, "arch")
        #: CHECKSUM_PARTIAL only: where the pending checksum's sum starts in ``data``, and the checksum's offset
        #: from there (include/linux/skbuff.h); None when not known (an skb built with ip_summed=CHECKSUM_PARTIAL).
        self.csum_start: int | None = None
        self.csum_offset: int | None = None
        if self.arch.endian != "little":
            raise CsumValueError(f"arch: the skb helpers are modelled for little-endian CPUs, {self.arch.name} is "
                                 f"{self.arch.endian}-endian", code=Code.BAD_VALUE)

    @classmethod
    def checksum_complete(cls, data: object, *, network_offset: int = 14, align: int = 0,
                          arch: str | Profile = "generic") -> Skb:
        """A CHECKSUM_COMPLETE skb whose ``csum`` sums ``data[network_offset:]``, as net/bpf/test_run.c builds it."""
        skb = cls(data, network_offset=network_offset, align=align, arch=arch)
        skb.ip_summed, skb.csum = CHECKSUM_COMPLETE, skb.skb_checksum()
        return skb

    @classmethod
    def checksum_partial(cls, data: object, *, network_offset: int = 14, align: int = 0,
                         arch: str | Profile = "generic") -> Skb:
        """A CHECKSUM_PARTIAL skb of TCP/UDP packet ``data`` as the transmit path hands it on with checksum offload.

        The transport checksum field is set to the folded pseudo-header sum (not complemented), as
        net/ipv4/tcp_ipv4.c ``__tcp_v4_send_check``, net/ipv6/tcp_ipv6.c ``__tcp_v6_send_check`` and
        net/ipv4/udp.c ``udp4_hwcsum`` / net/ipv6/ip6_checksum.c ``udp6_set_csum`` write it
        (``~csum_tcpudp_magic(saddr, daddr, len, proto, 0)``, ``~csum_ipv6_magic(...)``); ``csum_start`` is the
        transport header and ``csum_offset`` the checksum's offset in it. Raises CsumValueError (``no-layer``) for
        a packet without a TCP/UDP/UDP-Lite checksum and a pseudo-header csum can read.
        """
        skb = cls(data, network_offset=network_offset, align=align, arch=arch)
        lay = layout(memoryview(skb.data), "ethernet" if network_offset else "ip")
        if lay.l4 is None or lay.l4_csum is None or not lay.pseudo or lay.pseudo_daddr is None or lay.l4_len is None:
            raise CsumValueError("data: CHECKSUM_PARTIAL needs a TCP/UDP packet whose checksum and pseudo-header "
                                 "csum can read", code=Code.NO_LAYER)
        size = ADDR_SIZES[lay.version]
        saddr = bytes(skb.data[lay.pseudo_saddr:lay.pseudo_saddr + size])
        daddr = bytes(skb.data[lay.pseudo_daddr:lay.pseudo_daddr + size])
        magic = csum_tcpudp_magic if lay.version == 4 else csum_ipv6_magic
        seed = magic(saddr, daddr, lay.l4_len, lay.proto, Wsum(0)) ^ 0xFFFF
        skb.data[lay.l4_csum:lay.l4_csum + 2] = seed.to_bytes(2, "little")
        skb.ip_summed, skb.csum_start, skb.csum_offset = CHECKSUM_PARTIAL, lay.l4, lay.l4_csum - lay.l4
        return skb

    def skb_checksum_help(self) -> int:
        """net/core/dev.c ``skb_checksum_help``: finish a CHECKSUM_PARTIAL skb's checksum as the NIC would.

        Sums ``data[csum_start:]`` (the field's pending seed included), stores ``csum_fold`` of it at ``csum_start +
        csum_offset`` and leaves the skb CHECKSUM_NONE; returns 0 (-EINVAL off CHECKSUM_PARTIAL or with csum_start
        unknown)."""
        if self.ip_summed != CHECKSUM_PARTIAL or self.csum_start is None or self.csum_offset is None:
            return -EINVAL
        at = self.csum_start + self.csum_offset
        total = self._partial(self.csum_start, len(self.data))
        self.data[at:at + 2] = fold(total).to_bytes(2, "little")
        self.ip_summed = CHECKSUM_NONE
        return 0

    def offload_rule(self, offset: int, size: int) -> str | None:
        """What a program rewriting ``data[offset:offset + size]`` must do for this skb's pending checksum offload
        (None off CHECKSUM_PARTIAL). Before ``csum_start`` (the IP header) the offload sums nothing: an address
        there enters the pending checksum only through the pseudo-header seed; from ``csum_start`` on the NIC sums
        the bytes as they are when it sends."""
        if self.ip_summed != CHECKSUM_PARTIAL or self.csum_start is None or self.csum_offset is None:
            return None
        at = self.csum_start + self.csum_offset
        if offset < at + 2 and at < offset + size:
            return ("the pending checksum itself: it holds the pseudo-header seed, not a checksum; leave it to "
                    "bpf_l4_csum_replace (BPF_F_PSEUDO_HDR for pseudo-header fields) and never patch it by hand")
        if offset >= self.csum_start:
            return ("covered by the pending offload: the NIC sums these bytes when it sends, so the checksum field "
                    "must not follow them; bpf_l4_csum_replace without BPF_F_PSEUDO_HDR leaves it alone (right), a "
                    "hand-written update adds the change a second time (wrong)")
        return ("before csum_start: the offload does not sum it; an address of the pseudo-header must move the seed "
                "(bpf_l4_csum_replace with BPF_F_PSEUDO_HDR does; without the flag the seed stays and the NIC's "
                "checksum is wrong), the IPv4 header checksum is updated as on any skb (bpf_l3_csum_replace)")

    def __repr__(self) -> str:
        return (f"Skb({len(self.data)} bytes, {_NAMES[self.ip_summed]}, csum={self.csum:#010x}, "
                f"csum_level={self.csum_level}, arch={self.arch.name!r})")

    def _partial(self, start: int, end: int) -> Wsum:
        return self.arch.csum_partial(memoryview(self.data)[start:end], Wsum(0), align=(self.align + start) & 7)

    def skb_checksum(self) -> Wsum:
        """net/core/skbuff.c ``skb_checksum(skb, network_offset, len - network_offset, 0)`` of the bytes now."""
        return self._partial(self.network_offset, len(self.data))

    def csum_valid(self) -> bool:
        """Whether ``skb->csum`` still describes the bytes: net/bpf/test_run.c's check (folded values equal).

        Always True off CHECKSUM_COMPLETE, where ``skb->csum`` carries no sum of the data. The fold of a sum is
        the same on every architecture (only the unfolded u32 differs), so the generic sum (the fast engine) serves.
        """
        return self.ip_summed != CHECKSUM_COMPLETE or \
            fold(self.csum) == fold(generic_csum_partial(memoryview(self.data)[self.network_offset:]))

    def bpf_l3_csum_replace(self, offset: int, frm: object, to: object, flags: int, *, misuse: bool = True) -> int:
        """``bpf_l3_csum_replace(skb, offset, from, to, flags)``: patches the field, never ``skb->csum``.

        ``misuse=False``: no :class:`csum.bpf.misuse.BpfMisuse` checks (calls csum makes itself)."""
        return bpf.l3_csum_replace_at(self.data, offset, frm, to, flags, stacklevel=3, misuse=misuse)

    def bpf_l4_csum_replace(self, offset: int, frm: object, to: object, flags: int, *, misuse: bool = True) -> int:
        """``bpf_l4_csum_replace(skb, offset, from, to, flags)``: the field, and ``skb->csum`` on a pseudo-header change.

        ``misuse=False``: no :class:`csum.bpf.misuse.BpfMisuse` checks (calls csum makes itself)."""
        rc, self.csum = bpf.l4_csum_replace_skb(self.data, offset, frm, to, flags, self.ip_summed, self.csum,
                                                stacklevel=3, misuse=misuse)
        return rc

    def bpf_skb_store_bytes(self, offset: int, frm: object, flags: int = 0) -> int:
        """``bpf_skb_store_bytes(skb, offset, from, len, flags)``; BPF_F_RECOMPUTE_CSUM carries ``skb->csum`` along.

        The kernel subtracts the old bytes' ``csum_partial`` and adds the new one's, each rotated by
        the offset's parity (``csum_block_sub`` / ``csum_block_add``). On a CHECKSUM_PARTIAL skb the flag does
        nothing (include/linux/skbuff.h ``__skb_postpull_rcsum`` acts on CHECKSUM_COMPLETE, and on PARTIAL only
        when csum_start lies before ``skb->data``, which a model skb's never does). Returns -EINVAL for other
        flags, -EFAULT for an offset past INT_MAX or bytes past the end.
        """
        new = as_view(frm, "from").tobytes()
        offset, flags = check_uint(offset, 32, "offset"), check_uint(flags, 64, "flags")
        if flags & ~(BPF_F_RECOMPUTE_CSUM | BPF_F_INVALIDATE_HASH):
            return -EINVAL
        if offset > _INT_MAX or offset + len(new) > len(self.data):
            return -EFAULT
        end = offset + len(new)
        recompute = flags & BPF_F_RECOMPUTE_CSUM and self.ip_summed == CHECKSUM_COMPLETE
        if recompute:
            self.csum = csum_block_sub(self.csum, self._partial(offset, end), offset)
        elif flags & BPF_F_RECOMPUTE_CSUM and self.ip_summed == CHECKSUM_PARTIAL and self.csum_start is None:
            raise CsumValueError("store_bytes with BPF_F_RECOMPUTE_CSUM on a CHECKSUM_PARTIAL skb is not modelled "
                                 "(the kernel may turn it into CHECKSUM_NONE)", code=Code.NOT_MODELLED)
        self.data[offset:end] = new
        if recompute:
            self.csum = csum_block_add(self.csum, self._partial(offset, end), offset)
        return 0

    def bpf_csum_update(self, csum: Wsum) -> int:
        """``bpf_csum_update(skb, csum)``: on CHECKSUM_COMPLETE ``skb->csum = csum_add(skb->csum, csum)``, returned;
        -ENOTSUPP otherwise. ``bpf_csum_update(0)`` reads ``skb->csum``."""
        csum = check_uint(csum, 32, "csum")
        if self.ip_summed != CHECKSUM_COMPLETE:
            return -ENOTSUPP
        self.csum = Wsum(add32(self.csum, csum))
        return self.csum

    def bpf_csum_level(self, level: int) -> int:
        """``bpf_csum_level(skb, level)``: INC / DEC / RESET move ``csum_level`` and ``ip_summed`` (0); QUERY
        returns ``csum_level`` on CHECKSUM_UNNECESSARY, else -EACCES; other levels -EINVAL."""
        level = check_uint(level, 64, "level")
        unnecessary = self.ip_summed == CHECKSUM_UNNECESSARY
        if level == BPF_CSUM_LEVEL_QUERY:
            return self.csum_level if unnecessary else -EACCES
        if level == BPF_CSUM_LEVEL_INC:
            if unnecessary:
                self.csum_level = min(self.csum_level + 1, SKB_MAX_CSUM_LEVEL)
            elif self.ip_summed == CHECKSUM_NONE:
                self.ip_summed, self.csum_level = CHECKSUM_UNNECESSARY, 0
        elif level == BPF_CSUM_LEVEL_DEC:
            if unnecessary and self.csum_level == 0:
                self.ip_summed = CHECKSUM_NONE
            elif unnecessary:
                self.csum_level -= 1
        elif level == BPF_CSUM_LEVEL_RESET:
            if unnecessary:
                self.ip_summed, self.csum_level = CHECKSUM_NONE, 0
        else:
            return -EINVAL
        return 0

    def bpf_csum_diff(self, frm: object, to: object, seed: Wsum = Wsum(0)) -> int:
        """``bpf_csum_diff`` (Linux >= 6.13) with this skb's architecture; the value to pass as a size-0 ``to``."""
        return self.arch.bpf_csum_diff(frm, to, seed)

    def run(self, ops: Iterable[Op], *, misuse: bool = True) -> list[int]:
        """Apply helper calls in order (see :data:`Op`); returns each call's return value.

        ``misuse=False``: the replace helpers make no :class:`csum.bpf.misuse.BpfMisuse` checks (calls csum made)."""
        results, diff = [], 0
        for op in ops:
            name, args = op[0], list(op[1:])
            if name in ("bpf_l3_csum_replace", "bpf_l4_csum_replace") and len(args) == 4 and args[2] == DIFF:
                args[2] = diff
            method = _OPS.get(name)
            if method is None:
                raise CsumValueError(f"ops: unknown helper {name!r} (one of {', '.join(_OPS)})", code=Code.BAD_VALUE)
            replace = name in ("bpf_l3_csum_replace", "bpf_l4_csum_replace")
            result = method(self, *args, misuse=False) if replace and not misuse else method(self, *args)
            if name == "bpf_csum_diff":
                diff = result
            results.append(result)
        return results


_OPS: dict[str, Callable[..., int]] = {
    "bpf_l3_csum_replace": Skb.bpf_l3_csum_replace, "bpf_l4_csum_replace": Skb.bpf_l4_csum_replace,
    "bpf_skb_store_bytes": Skb.bpf_skb_store_bytes, "bpf_csum_update": Skb.bpf_csum_update,
    "bpf_csum_level": Skb.bpf_csum_level, "bpf_csum_diff": Skb.bpf_csum_diff}

"""NAT-style packet rewrites with incremental checksum updates, as a tc BPF program makes them.

Every change patches the checksums through the emulated helpers of
net/core/filter.c (:func:`csum.bpf.bpf_l3_csum_replace`,
:func:`csum.bpf.bpf_l4_csum_replace`, arithmetic of net/core/utils.c and
include/net/checksum.h) and never recomputes a checksum from the packet, so:

* a checksum that was wrong before stays wrong by the same amount (RFC 1624:
  an incremental update carries the old error along);
* where the covered data becomes all zeros (possible only without a
  pseudo-header: an ICMPv4 echo reply with id, sequence and payload all 0),
  the helpers store 0x0000 where a full recomputation stores 0xffff; the
  message then sums to +0 and a strict receiver (Linux: csum_fold of the sum
  must be 0) rejects it. The kernel helpers do the same (RFC 1624 section 3);
* UDP over IPv4 with a zero checksum ("none computed") keeps it
  (BPF_F_MARK_MANGLED_0); a UDP result of 0 is stored as 0xffff (RFC 768);
  UDP over IPv6 and UDP-Lite add BPF_F_MARK_ENFORCE since 0 is illegal there;
* a non-first fragment has no L4 header: only the IPv4 header checksum changes.
  The L4 checksum of the datagram sits in the first fragment; rewrite that one too;
* ``quoted=`` / ``inner=`` rewrite the datagram an ICMP/ICMPv6 error quotes or the packet a tunnel
  carries (:func:`_inner_layer`); every byte changed there, inner checksums included, is carried into
  each enclosing checksum covering it (ICMP error, GRE, outer UDP; one that is 0 stays 0) as payload, with
  ``bpf_l4_csum_replace`` and no pseudo-header flag. Linux NAT of related ICMP
  (net/netfilter/nf_nat_proto.c ``nf_nat_icmp_reply_translation`` / ``nf_nat_ipv4_manip_pkt``) patches
  the quote the same way, leaves a quoted L4 checksum the quote does not hold, and recomputes the ICMP
  checksum in full (same bytes);
* an address enters the L4 checksum only where it is in the pseudo-header
  (:mod:`csum.layers.walk`): not the header's destination while a source route or
  routing header names the final one, not the IPv6 source when a Home Address
  option replaces it (RFC 6275 section 6.3).

:attr:`Rewrite.calls` lists the helper calls made, in order, with the arguments a
BPF program passes (offsets from the start of the buffer, as from ``skb->data``).
Pseudo-header updates on IPv6 carry BPF_F_IPV6 (include/uapi/linux/bpf.h, 2025);
kernels that predate it return -EINVAL for it: drop it there (it only steers the
``skb->csum`` of CHECKSUM_COMPLETE packets, never the bytes).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping, NamedTuple, Union

from .. import bpf
from ..arch.profiles import Profile, as_profile, profile
from ..bpf.flags import CHECKSUM_NONE, CHECKSUM_PARTIAL
from ..bpf.skb import BPF_F_RECOMPUTE_CSUM, DIFF, Op, Skb
from ..core.arith import M16, M32, add32, fold, ror32
from ..core.inputs import as_view, check_address, check_bool, check_list, check_uint
from ..core.partial import csum_partial as generic_csum_partial
from ..errors import Code, CsumTypeError, CsumValueError
from ..layers import UDP, UDPLITE, Field, IPLayer, Layout, Link, Stack, outer_layer, protocol_name, table
from ..layers import layout as parse
from ..layers.walk import raise_inner, walk_outer_strict
from ..types import Wsum
from .calls import Call, CsumDiffCall, CsumReplaceCall, StoreBytesCall
from ..layers.table import ADDR_SIZES

__all__ = ["Address", "Call", "CsumDiffCall", "CsumReplaceCall", "FieldChange", "Rewrite", "StoreBytesCall",
           "rewrite", "set_field"]

Address = Union[str, bytes, ipaddress.IPv4Address, ipaddress.IPv6Address]

@dataclass(frozen=True)
class FieldChange:
    """Set ``len(new)`` (2 or 4) bytes at ``offset``; ``pseudo_header``: the bytes also enter the L4 pseudo-header."""

    offset: int
    new: bytes
    pseudo_header: bool = False




@dataclass(frozen=True)
class Rewrite:
    """The rewritten packet (bytes, the caller's bytearray when in place, or a scapy packet) and the calls made."""

    packet: Any
    calls: tuple[Call, ...]
    #: The packet before the rewrite, as bytes (what :meth:`skb` replays the calls on).
    original: bytes = field(default=b"", repr=False)
    #: The keywords rewrite() was called with (what :mod:`csum.rewrite.program` re-runs on a variant of the packet).
    request: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def csum_diffs(self) -> tuple[CsumDiffCall, ...]:
        """The bpf_csum_diff calls (one per address change)."""
        return tuple(c for c in self.calls if isinstance(c, CsumDiffCall))

    def format(self, kind: Literal["calls", "tc", "xdp"] = "calls", *, name: str = "csum_rewrite") -> str:
        """The calls as C-like lines, one per call; or, for ``kind`` "tc" / "xdp", a complete C program
        (function ``name``) that makes the same change on the kernel (see :mod:`csum.rewrite.program`)."""
        if kind == "calls":
            return "\n".join(str(c) for c in self.calls)
        if kind not in ("tc", "xdp"):
            raise CsumValueError(f"kind must be 'calls', 'tc' or 'xdp', not {kind!r}", code=Code.BAD_VALUE)
        if not isinstance(name, str) or not name.isidentifier():
            raise CsumValueError(f"name must be a C identifier, not {name!r}", code=Code.BAD_VALUE)
        from .program import program

        return program(self, kind, name, again=rewrite)

    def ops(self) -> list[Op]:
        """The calls as :data:`csum.skb.Op` tuples, for :meth:`csum.skb.Skb.run` or :func:`csum.kernel.skb_run`."""
        return [_as_op(c) for c in self.calls]

    def skb(self, *, arch: str | Profile = "generic") -> Skb:
        """The CHECKSUM_COMPLETE skb the calls leave: ``skb->csum`` (``.csum``) as ``arch``'s kernel holds it.

        The calls are replayed (:mod:`csum.skb`) on the original packet as a CHECKSUM_COMPLETE skb
        whose ``skb->csum`` sums it from the network header (as BPF_PROG_TEST_RUN builds one);
        ``.csum_valid()`` says whether the stack would accept the result.
        """
        skb = Skb.checksum_complete(self.original, network_offset=parse(memoryview(self.original)).l3, arch=arch)
        skb.run(self.ops(), misuse=False)
        return skb


def _as_op(call: Call) -> Op:
    if isinstance(call, CsumDiffCall):
        return ("bpf_csum_diff", call.frm, call.to, call.seed)
    if isinstance(call, CsumReplaceCall):
        to = DIFF if call.flags & bpf.BPF_F_HDR_FIELD_MASK == 0 else call.to
        return (call.helper, call.offset, call.frm, to, call.flags)
    return ("bpf_skb_store_bytes", call.offset, call.to, call.flags)


def _le(data: bytes) -> int:
    return int.from_bytes(data, "little")


class _Shadow:
    """A CHECKSUM_COMPLETE skb sharing the editor's bytes, and the sum of those bytes from the network header as
    they are now: whether the two still agree tells which stores need BPF_F_RECOMPUTE_CSUM.

    Both are kept incrementally, the kernel's way (net/core/skbuff.c ``__skb_postpull_rcsum`` /
    ``__skb_postpush_rcsum``, net/core/filter.c ``bpf_skb_store_bytes``): a change of the bytes at ``offset``
    takes their old ``csum_partial`` out with ``csum_block_sub`` and puts the new one in with ``csum_block_add``,
    rotated by the offset's parity. The packet is summed once, when the skb is made.
    """

    def __init__(self, data: bytearray, network_offset: int, arch: Profile) -> None:
        #: On the rewrite's architecture: its csum_partial decides which zero skb->csum holds where the bytes sum to
        #: 0xffff (the corner where a store's BPF_F_RECOMPUTE_CSUM is right on one CPU and wrong on another). The skb
        #: helpers are modelled for little-endian CPUs (csum.skb); a big-endian one's shadow is generic's, and its
        #: stores' flags may be the other CPU's in that corner.
        shadow_arch = arch if arch.endian == "little" else profile("generic")
        self.skb = Skb.checksum_complete(data, network_offset=network_offset, arch=shadow_arch)
        self.skb.data = data  # the editor's bytes themselves: the helpers patch them in place
        #: The generic csum_partial of data[network_offset:] (lib/checksum.c: 1..0xffff for bytes not all zero,
        #: as an IP header never is), kept congruent to it mod 0xffff.
        self.sum: int = self.skb.csum

    def moved(self, offset: int, old: bytes, new: bytes) -> None:
        """The bytes at ``offset`` went from ``old`` to ``new``: csum_block_sub the old sum, csum_block_add the new."""
        odd = (offset - self.skb.network_offset) & 1
        was, now = generic_csum_partial(old), generic_csum_partial(new)
        if odd:
            was, now = Wsum(ror32(was, 8)), Wsum(ror32(now, 8))
        self.sum = add32(add32(self.sum, was ^ M32), now)

    def balanced(self) -> bool:
        """:meth:`csum.skb.Skb.csum_valid` without summing the packet again: the fold of ``skb->csum`` against the
        fold of the bytes' sum (canonical: 1..0xffff, as lib/checksum.c's ``do_csum`` returns it)."""
        return fold(self.skb.csum) == fold(self.sum % M16 or M16)


class Editor:
    """Applies changes to ``data`` in place through the emulated helpers.

    ``record``: keep each helper call made (:attr:`Rewrite.calls`) and the CHECKSUM_COMPLETE shadow that picks the
    stores' BPF_F_RECOMPUTE_CSUM; off, the same bytes come out with neither (a capture's packets, csum.capture).
    """

    def __init__(self, data: bytearray, layout: Layout, arch: Profile, *, record: bool = True) -> None:
        self.buf, self.layout, self.arch = data, layout, arch
        self.calls: list[Call] | None = [] if record else None
        self.shadow = _Shadow(data, layout.l3, arch) if record else None
        #: Checksums of enclosing layers that cover this layer's bytes (an ICMP error's, a tunnel's UDP or GRE).
        self.enclosing: tuple[Field, ...] = ()
        #: What the last bpf_csum_diff returned (the diff a size-0 replace takes).
        self.diff = 0
        #: Checksum fields holding transmit offload's pseudo-header sum (without ``record`` only).
        self.partial: frozenset[int] = frozenset()

    def nested(self, layer: Layout, enclosing: tuple[Field, ...]) -> Editor:
        """An editor of an inner IP layer (a quoted datagram, a tunnel's packet) sharing this one's bytes and calls."""
        editor = object.__new__(type(self))
        editor.__dict__.update(self.__dict__)  # the bytes, calls, shadow and whatever a subclass shares
        editor.layout, editor.enclosing, editor.diff = layer, enclosing, 0
        return editor

    def _replace(self, helper: str, offset: int, frm: int, to: int, flags: int, carries: int | None = None) -> None:
        if offset & 1:  # the kernel's helpers refuse it (-EFAULT, net/core/filter.c): a PPP protocol field of 1 byte
            raise CsumValueError(f"the checksum field at offset {offset} is at an odd offset, which "
                                 f"{helper} refuses", code=Code.BAD_OFFSET)
        old = bytes(self.buf[offset:offset + 2])
        # csum's own calls: no BpfMisuse checks (the l4 ones would walk the packet at every call)
        if helper == "bpf_l3_csum_replace":
            rc = bpf.l3_csum_replace_at(self.buf, offset, frm, to, flags, misuse=False) if self.shadow is None \
                else self.shadow.skb.bpf_l3_csum_replace(offset, frm, to, flags, misuse=False)
        elif self.shadow is None:  # a transmit-offload partial sum is updated as the kernel does on CHECKSUM_PARTIAL
            summed = CHECKSUM_PARTIAL if offset in self.partial else CHECKSUM_NONE
            rc = bpf.l4_csum_replace_skb(self.buf, offset, frm, to, flags, summed, Wsum(0), misuse=False)[0]
        else:
            rc = self.shadow.skb.bpf_l4_csum_replace(offset, frm, to, flags, misuse=False)
        if rc:
            raise AssertionError(f"csum.rewrite made a bad {helper} call (rc {rc}): offset {offset}, flags {flags:#x}")
        new = bytes(self.buf[offset:offset + 2])
        if self.shadow is not None and self.calls is not None:
            self.shadow.moved(offset, old, new)
            self.calls.append(CsumReplaceCall(helper, offset, frm, to, flags, carries))
        self.cover(offset, old, new)

    def cover(self, offset: int, old: bytes, new: bytes, diff: bool = False) -> None:
        """Carry a change of the bytes at ``offset`` into every enclosing checksum that covers them (as payload:
        no pseudo-header). ``diff``: the change is a 16-byte address whose bpf_csum_diff was just taken."""
        for outer in self.enclosing:
            start, at = outer.covers[0][0], outer.at
            if at is None:  # _inner_layer keeps only fields it can patch
                raise AssertionError(f"csum.rewrite: the enclosing {outer.entry.name} checksum has no field offset")
            if at == offset or not any(s <= offset < e for s, e in outer.covers):
                continue
            flags = bpf.BPF_F_MARK_MANGLED_0 if outer.entry.zero is not table.ZERO.VALUE else 0
            odd = (offset - start) & 1
            if odd and len(new) != 1:
                raise CsumValueError(f"the layer at offset {offset} sits at an odd distance from the {outer.entry.name} "
                                     f"header at {start} that covers it", code=Code.BAD_OFFSET)
            if diff:
                self._replace("bpf_l4_csum_replace", at, 0, self.diff, flags, offset)
                continue
            lo = offset - odd  # a 1-byte TTL / hop limit: the 16-bit word holding it
            hi = lo + len(new) + (len(new) & 1)
            was = bytes(self.buf[lo:offset]) + old + bytes(self.buf[offset + len(new):hi])
            now = bytes(self.buf[lo:offset]) + new + bytes(self.buf[offset + len(new):hi])
            self._replace("bpf_l4_csum_replace", at, _le(was), _le(now), flags | (hi - lo), lo)

    def l4_word(self, old: int, new: int) -> None:
        """The L4 checksum updated for a 16-bit word it covers going from ``old`` to ``new`` (their values as
        big-endian words), the bytes left to the caller: csum.rewrite.truncate takes the sum of the bytes it cuts off
        to 0."""
        self._replace("bpf_l4_csum_replace", self.layout.l4_csum, _le(old.to_bytes(2, "big")),  # type: ignore[arg-type]
                      _le(new.to_bytes(2, "big")), self.l4_flags(2, False))

    def l4_flags(self, size: int, pseudo: bool) -> int:
        flags = size
        if pseudo:
            flags |= bpf.BPF_F_PSEUDO_HDR | (bpf.BPF_F_IPV6 if self.layout.version == 6 else 0)
        if self.layout.proto == UDP:
            flags |= bpf.BPF_F_MARK_MANGLED_0 | (bpf.BPF_F_MARK_ENFORCE if self.layout.version == 6
                                                 and not self.udp_tunnel() else 0)
        elif self.layout.proto == UDPLITE:
            flags |= bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE
        return flags

    def udp_tunnel(self) -> bool:
        """A UDP tunnel (VXLAN, Geneve ...): sent without a checksum (0) over IPv6 too (RFC 6935, RFC 6936), which a
        rewrite keeps; so no BPF_F_MARK_ENFORCE (it acts on a 0 only), and the calls fit packets with and without."""
        lay = self.layout
        return lay.l4 is not None and int.from_bytes(self.buf[lay.l4 + 2:lay.l4 + 4], "big") in table.UDP_TUNNELS

    def store(self, offset: int, new: bytes, diff: bool = False) -> None:
        old = bytes(self.buf[offset:offset + len(new)])
        self.cover(offset, old, new, diff)
        if self.shadow is None or self.calls is None:
            self.buf[offset:offset + len(new)] = new
            return
        self.shadow.moved(offset, old, new)
        # no checksum patch balances this change: let the kernel carry it into skb->csum
        flags = 0 if self.shadow.balanced() else BPF_F_RECOMPUTE_CSUM
        self.shadow.skb.bpf_skb_store_bytes(offset, new, flags)
        self.calls.append(StoreBytesCall(offset, old, new, flags))

    def address(self, which: str, new: bytes) -> None:
        lay = self.layout
        offset = lay.saddr if which == "saddr" else lay.daddr
        old = bytes(self.buf[offset:offset + len(new)])
        frm_align = (self.arch.net_ip_align + offset) & 7
        diff = self.diff = self.arch.bpf_csum_diff(old, new, Wsum(0), frm_align=frm_align)
        if self.calls is not None:
            self.calls.append(CsumDiffCall(old, new, 0, diff, frm_align, 0))
        in_pseudo = lay.saddr_in_pseudo if which == "saddr" else lay.daddr_in_pseudo
        if lay.l4_csum is not None and lay.pseudo and in_pseudo:
            self._replace("bpf_l4_csum_replace", lay.l4_csum, 0, diff, self.l4_flags(0, True))
        if lay.ip_csum is not None:
            self._replace("bpf_l3_csum_replace", lay.ip_csum, 0, diff, 0)
        self.store(offset, new, diff=len(new) > 4)

    def port(self, offset: int, port: int) -> None:
        new = port.to_bytes(2, "big")
        old = bytes(self.buf[offset:offset + 2])
        if self.layout.l4_csum is not None:  # None only in a quote too short to hold it (Linux leaves it too)
            self._replace("bpf_l4_csum_replace", self.layout.l4_csum, _le(old), _le(new), self.l4_flags(2, False))
        self.store(offset, new)

    def decrement_ttl(self) -> None:
        lay = self.layout
        ttl = self.buf[lay.ttl]
        if lay.ip_csum is not None:
            old = bytes(self.buf[lay.ttl:lay.ttl + 2])
            new = bytes([ttl - 1, old[1]])
            self._replace("bpf_l3_csum_replace", lay.ip_csum, _le(old), _le(new), 2)
        self.store(lay.ttl, bytes([ttl - 1]))

    def field(self, change: FieldChange) -> None:
        lay, off, size = self.layout, change.offset, len(change.new)
        old = bytes(self.buf[off:off + size])
        if off < lay.l4_start:
            if lay.ip_csum is not None and off < lay.l3_header_end:
                self._replace("bpf_l3_csum_replace", lay.ip_csum, _le(old), _le(change.new), size)
            if change.pseudo_header and lay.l4_csum is not None and lay.pseudo:
                self._replace("bpf_l4_csum_replace", lay.l4_csum, _le(old), _le(change.new), self.l4_flags(size, True))
        elif lay.l4_csum is None:  # _check_field refuses such a change (no-l4-checksum)
            raise AssertionError(f"csum.rewrite: a field at offset {off} in the L4 layer without an L4 checksum")
        else:
            self._replace("bpf_l4_csum_replace", lay.l4_csum, _le(old), _le(change.new), self.l4_flags(size, False))
        self.store(off, change.new)


def _address(value: Address, version: int, name: str) -> bytes:
    """A new address for this IPv``version`` packet (:func:`csum.core.inputs.check_address`)."""
    return check_address(value, ADDR_SIZES[version], name)


def _check_field(change: object, lay: Layout) -> FieldChange:
    if not isinstance(change, FieldChange):
        raise CsumTypeError(f"fields must hold FieldChange objects, not {type(change).__name__}", code=Code.BAD_TYPE)
    off = check_uint(change.offset, 32, "field offset")
    new = as_view(change.new, "field new").tobytes()
    check_bool(change.pseudo_header, "field pseudo_header")
    where = f"field at offset {off}"
    if len(new) not in (2, 4):
        raise CsumValueError(f"{where}: new must be 2 or 4 bytes, got {len(new)}", code=Code.BAD_WIDTH)
    if off < lay.l3 or off + len(new) > lay.end:
        raise CsumValueError(f"{where}: outside the IP datagram (offsets {lay.l3}..{lay.end})", code=Code.BAD_OFFSET)
    if (off - lay.l3) & 1:
        raise CsumValueError(f"{where}: must start at an even distance from the IP header (a 16-bit word "
                             "boundary of every checksum covering it)", code=Code.BAD_OFFSET)
    for csum_off in (lay.ip_csum, lay.l4_csum):
        if csum_off is not None and off < csum_off + 2 and csum_off < off + len(new):
            raise CsumValueError(f"{where}: overlaps the checksum at offset {csum_off}", code=Code.BAD_OFFSET)
    for boundary in (lay.l3_header_end, lay.l4_start):
        if off < boundary < off + len(new):
            raise CsumValueError(f"{where}: straddles the header boundary at offset {boundary}", code=Code.BAD_OFFSET)
    if off >= lay.l4_start:
        if lay.l4_csum is None:
            raise CsumValueError(f"{where}: after the network headers of a packet whose L4 checksum is not "
                                 f"known here ({protocol_name(lay.proto)}, fragment: {lay.fragment})",
                                 code=Code.NO_L4_CHECKSUM)
        if change.pseudo_header:
            raise CsumValueError(f"{where}: in the {protocol_name(lay.proto)} header/payload, which is not part "
                                 "of the pseudo-header", code=Code.BAD_VALUE)
    return FieldChange(off, new, check_bool(change.pseudo_header, "field pseudo_header"))

#: The keywords ``quoted`` and ``inner`` accept: the outer packet's, for the inner one.
_NESTED_KEYWORDS = ("saddr", "daddr", "sport", "dport", "icmp_id", "decrement_ttl")


class _Plan(NamedTuple):
    """One IP layer's checked changes, applied in this order."""

    saddr: bytes | None
    daddr: bytes | None
    ports: list[tuple[int, int]]
    decrement_ttl: bool


def _keywords(request: object, name: str, nested: bool = False) -> dict[str, Any]:
    """``request``'s keywords, every accepted one present (None when absent); ``nested``: "quoted" is accepted too."""
    accepted = _NESTED_KEYWORDS + (("quoted",) if nested else ())
    if not isinstance(request, Mapping):
        raise CsumTypeError(f"{name} must be a dict of {', '.join(accepted)}, not {type(request).__name__}",
                            code=Code.BAD_TYPE)
    unknown = sorted(set(request) - set(accepted))
    if unknown:
        raise CsumValueError(f"{name}: unknown keyword {unknown[0]!r} (accepted: {', '.join(accepted)})",
                             code=Code.BAD_VALUE)
    return {key: request.get(key) for key in accepted}


def _plan(data: bytearray, lay: Layout, name: str, request: dict[str, Any]) -> _Plan:
    """Check one layer's requested changes (``name``: "" for the outer packet, "quoted" or "inner")."""
    prefix = f"{name} " if name else ""
    where = f"{name} packet" if name else "packet"
    new = [None if request[key] is None else _address(request[key], lay.version, prefix + key)
           for key in ("saddr", "daddr")]
    ports = [(i, check_uint(request[key], 16, prefix + key)) for i, key in ((0, "sport"), (2, "dport"))
             if request[key] is not None]
    # An inner layer may lack its L4 checksum (a quote of 8 TCP bytes): its ports still change, as in Linux NAT.
    held = lay.l4 is not None and lay.l4 + 4 <= len(data) and (bool(name) or lay.l4_csum is not None)
    if ports and not (lay.has_ports and held):
        raise CsumValueError(f"{where} has no ports to set ({protocol_name(lay.proto)}, fragment: {lay.fragment})",
                             code=Code.NO_PORTS)
    if request["icmp_id"] is not None:
        ports.append((4, _icmp_id(data, lay, where, check_uint(request["icmp_id"], 16, prefix + "icmp_id"))))
    ttl = request["decrement_ttl"]
    if ttl is not None and check_bool(ttl, prefix + "decrement_ttl") and data[lay.ttl] == 0:  # None: not asked (nested)
        what = "TTL" if lay.version == 4 else "hop limit"
        raise CsumValueError(f"{where}: the {what} is already 0 and cannot be decremented", code=Code.TTL_EXPIRED)
    return _Plan(new[0], new[1], ports, bool(request["decrement_ttl"]))


def _icmp_id(data: bytearray, lay: Layout, where: str, value: int) -> int:
    """``value`` once checked that ``lay`` is an ICMP/ICMPv6 query (:data:`csum.layers.table.ICMP_QUERIES`) holding
    its identifier and checksum (net/netfilter/nf_nat_proto.c ``icmp_manip_pkt`` / ``icmpv6_manip_pkt``)."""
    queries = table.ICMP_QUERIES.get(lay.proto) if lay.fragment != "later" else None
    if not (queries and lay.l4 is not None and lay.l4_csum is not None and lay.l4 + 6 <= len(data)
            and data[lay.l4] in queries):
        what = protocol_name(lay.proto) if queries is None or lay.l4 is None or lay.l4 >= len(data) \
            else f"{protocol_name(lay.proto)} type {data[lay.l4]}"
        raise CsumValueError(f"{where} is not an ICMP/ICMPv6 query with an identifier ({what}, fragment: "
                             f"{lay.fragment})", code=Code.NO_ICMP_ID)
    return value


def _apply(editor: Editor, plan: _Plan) -> None:
    for which, value in (("saddr", plan.saddr), ("daddr", plan.daddr)):
        if value is not None:
            editor.address(which, value)
    for offset, port in plan.ports:
        editor.port(editor.layout.l4 + offset, port)  # type: ignore[operator]
    if plan.decrement_ttl:
        editor.decrement_ttl()


def _inner_layer(data: bytearray, stack: Stack, outer: Layout, name: str) -> tuple[Layout, tuple[Field, ...]]:
    """The IP layer ``quoted`` (the datagram ``outer``'s ICMP/ICMPv6 error quotes) or ``inner`` (the packet
    ``outer``'s tunnel carries) edits, one encapsulation deeper than ``outer``, with its L4 checksum filled in, and
    the enclosing checksums covering it (a UDP one too when it is 0, none computed: its replaces carry
    BPF_F_MARK_MANGLED_0 and leave it 0, so that the calls fit the tunnel's packets with and without it)."""
    depth = outer.depth + 1
    errors = table.ICMP_QUOTES.get(outer.proto)
    is_error = errors is not None and outer.l4 is not None and outer.l4 < len(data) and data[outer.l4] in errors
    if name == "quoted":
        quote = outer.l4 + table.ICMP_QUOTE if outer.l4 is not None else None
        found = [ip for ip in stack.ips if is_error and ip.depth == depth and ip.l3 == quote]
        missing = "quoted: the packet is not an ICMP/ICMPv6 error quoting an IP datagram"
    else:
        found = [ip for ip in stack.ips if not is_error and ip.depth == depth and outer.l4_start <= ip.l3 < outer.end]
        missing = "inner: the packet carries no tunnelled IP packet (IP-in-IP, GRE, VXLAN, Geneve)"
    raise_inner(stack, found[0].l3 if found else None)  # what it edits, or looks for, is not in a malformed part
    if not found:
        if depth > 1:
            missing = "inner " + missing.replace("the packet", "the tunnelled packet")
        raise CsumValueError(missing, code=Code.NO_QUOTE if name == "quoted" else Code.NO_TUNNEL)
    layer, _, enclosing = edited(stack, found[0], outer.link)
    return layer, enclosing


def edited(stack: Stack, ip: IPLayer, link: str) -> tuple[Layout, Field | None, tuple[Field, ...]]:
    """``ip`` as an editor edits it: with its upper layer and L4 checksum filled in from ``stack`` (that field is the
    second item: None when the layer has none), and the enclosing checksums covering it (a UDP one too when it is 0,
    none computed: its replaces carry BPF_F_MARK_MANGLED_0 and leave it 0, so that the calls fit the tunnel's
    packets with and without it)."""
    l4 = next((f for f in stack.fields if f.depth == ip.depth and f.entry is not table.IPV4_HEADER
               and ip.l4_start <= f.header < ip.end), None)
    pseudo = l4 is not None and (l4.entry.pseudo is table.PSEUDO.ALWAYS
                                 or (l4.entry.pseudo is table.PSEUDO.IPV6 and ip.version == 6))
    layer = dataclasses.replace(ip, l4=None if l4 is None else l4.header, l4_csum=None if l4 is None else l4.at,
                                pseudo=pseudo, link=link)
    enclosing = tuple(f for f in stack.fields if f.depth < ip.depth and f.at is not None and f.covers
                      and any(s <= ip.l3 < e for s, e in f.covers))
    return layer, l4, enclosing


def _nested(data: bytearray, stack: Stack, editor: Editor, quoted: object,
            inner: object) -> list[tuple[Editor, _Plan]]:
    """The checked plans of ``quoted`` / ``inner`` under ``editor``'s layer, outer to inner; ``inner`` may hold a
    ``quoted`` dict of its own (an ICMP error carried in a tunnel)."""
    out: list[tuple[Editor, _Plan]] = []
    for name, request in (("quoted", quoted), ("inner", inner)):
        if request is None:
            continue
        layer, enclosing = _inner_layer(data, stack, editor.layout, name)
        keys = _keywords(request, name, nested=name == "inner")
        sub = editor.nested(layer, enclosing)
        out.append((sub, _plan(data, layer, name, keys)))
        if name == "inner" and keys["quoted"] is not None:
            out += _nested(data, stack, sub, keys["quoted"], None)
    return out


def _scapy_packet(packet: object) -> bool:
    module = sys.modules.get("scapy.packet")
    return module is not None and isinstance(packet, module.Packet)


def rewrite(packet: Any, *, saddr: Address | None = None, daddr: Address | None = None,
            sport: int | None = None, dport: int | None = None, icmp_id: int | None = None,
            decrement_ttl: bool = False,
            fields: Iterable[FieldChange] = (), quoted: Mapping[str, Any] | None = None,
            inner: Mapping[str, Any] | None = None, link: Link = "auto", inplace: bool = False,
            arch: str | Profile = "generic") -> Rewrite:
    """Rewrite addresses, ports, TTL/hop limit or any 2/4-byte header field, patching checksums incrementally.

    ``packet``: bytes-like (Ethernet or bare IP, see ``link``) or a scapy packet (Ether, IP or
    IPv6 on top; the result is the same class). Returns new bytes unless ``inplace=True``,
    which needs a bytearray and edits it (all checks run first: on error it is untouched).
    ``icmp_id``: the identifier of an ICMP/ICMPv6 query (echo, timestamp ...; code ``no-icmp-id`` otherwise),
    which Linux NAT rewrites as it does a port. Changes apply in the order saddr, daddr, sport, dport, icmp_id,
    TTL, fields. Raises CsumValueError naming the problem: a malformed packet with a code of :mod:`csum.layers.walk`
    (``truncated``, ``not-ip``, ``bad-length``, ``bad-option`` ...), a request it cannot
    satisfy with ``bad-address``, ``no-ports``, ``bad-offset`` ... Helper semantics:
    net/core/filter.c; see the module docstring. ``link``: "auto", "ethernet" (alias "ether") or "ip".

    ``quoted``: changes (keywords saddr, daddr, sport, dport, icmp_id, decrement_ttl) to the datagram quoted by an
    ICMP/ICMPv6 error (code ``no-quote`` if there is none); ``inner``: the same for the packet a VXLAN,
    Geneve, GRE or IP-in-IP tunnel carries (``no-tunnel``); ``inner`` may hold ``quoted`` for an ICMP/ICMPv6
    error the tunnel carries. They apply after the outer changes, outer to inner.

    ``arch`` (a csum profile name or :class:`~csum.profile.Profile`) picks whose ``csum_partial``
    the recorded ``bpf_csum_diff`` results come from (Linux >= 6.13 form). Architectures differ
    only in how they write a zero diff (0x0000 or 0xffff); the packet bytes are the same.
    """
    rebuild = None
    inplace, decrement_ttl = check_bool(inplace, "inplace"), check_bool(decrement_ttl, "decrement_ttl")
    if _scapy_packet(packet):
        names = [layer.__name__ for layer in packet.layers()]
        if names[0] not in ("Ether", "IP", "IPv6"):
            raise CsumValueError(f"packet: a scapy packet must start with Ether, IP or IPv6, not {names[0]}",
                                 code=Code.BAD_PACKET)
        if inplace:
            raise CsumTypeError("inplace=True needs a bytearray packet, not a scapy packet", code=Code.BAD_TYPE)
        rebuild, link = type(packet), "ethernet" if names[0] == "Ether" else "ip"
        data = bytearray(bytes(packet))
    else:
        if inplace and not isinstance(packet, bytearray):
            raise CsumTypeError(f"inplace=True needs a bytearray packet, not {type(packet).__name__}",
                                code=Code.BAD_TYPE)
        data = bytearray(as_view(packet, "packet"))
    stack = walk_outer_strict(memoryview(data), link)  # the one walk: every layer below is read from it
    lay = outer_layer(stack)
    original = bytes(data)
    editor = Editor(data, lay, as_profile(arch, "arch"))
    plan = _plan(data, lay, "", dict(saddr=saddr, daddr=daddr, sport=sport, dport=dport, icmp_id=icmp_id,
                                     decrement_ttl=decrement_ttl))
    changes = [_check_field(c, lay) for c in check_list(fields, "fields")]
    nested = _nested(data, stack, editor, quoted, inner)
    _apply(editor, plan)
    for change in changes:
        editor.field(change)
    for inner_editor, inner_plan in nested:
        _apply(inner_editor, inner_plan)
    if inplace:
        packet[:] = data
        result: Any = packet
    else:
        result = bytes(data) if rebuild is None else rebuild(bytes(data))
    request = dict(saddr=saddr, daddr=daddr, sport=sport, dport=dport, icmp_id=icmp_id, decrement_ttl=decrement_ttl,
                   fields=tuple(changes), quoted=quoted, inner=inner, link=link, arch=arch)
    return Rewrite(result, tuple(editor.calls or ()), original, request)


def set_field(packet: Any, offset: int, new: bytes, *, pseudo_header: bool = False, link: Link = "auto",
              inplace: bool = False) -> Rewrite:
    """Set one 2- or 4-byte field at ``offset`` (from the buffer start): ``rewrite(fields=[FieldChange(...)])``."""
    return rewrite(packet, fields=[FieldChange(offset, new, pseudo_header)], link=link, inplace=inplace)

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

import ipaddress
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Union

from . import bpf
from ._check import as_view, check_uint
from .layers import UDP, UDPLITE, Layout, Link, layout as parse, protocol_name
from .errors import CsumTypeError, CsumValueError
from .profile import Profile, profile
from .skb import BPF_F_RECOMPUTE_CSUM, DIFF, Op, Skb

Address = Union[str, bytes, ipaddress.IPv4Address, ipaddress.IPv6Address]

_FLAG_NAMES = ((bpf.BPF_F_PSEUDO_HDR, "BPF_F_PSEUDO_HDR"), (bpf.BPF_F_MARK_MANGLED_0, "BPF_F_MARK_MANGLED_0"),
               (bpf.BPF_F_MARK_ENFORCE, "BPF_F_MARK_ENFORCE"), (bpf.BPF_F_IPV6, "BPF_F_IPV6"))


@dataclass(frozen=True)
class FieldChange:
    """Set ``len(new)`` (2 or 4) bytes at ``offset``; ``pseudo_header``: the bytes also enter the L4 pseudo-header."""

    offset: int
    new: bytes
    pseudo_header: bool = False


@dataclass(frozen=True)
class CsumDiffCall:
    """``bpf_csum_diff(frm, len(frm), to, len(to), seed)`` and what it returned (Linux >= 6.13 form).

    ``frm_align``/``to_align``: the buffers' addresses mod 8 as the program passes them
    (``frm`` in place in the packet, at ``skb->data`` = the profile's NET_IP_ALIGN mod 8
    plus the field's offset; ``to`` from an 8-byte aligned stack slot). The homogenized
    helper reads both in place, so ``result`` is computed at these alignments.
    """

    frm: bytes
    to: bytes
    seed: int
    result: int
    frm_align: int = 0
    to_align: int = 0

    def __str__(self) -> str:
        return f"diff = bpf_csum_diff(&from /* {self.frm.hex()} */, {len(self.frm)}, &to /* {self.to.hex()} */, " \
               f"{len(self.to)}, {self.seed:#x});  /* {self.result:#06x} */"


@dataclass(frozen=True)
class CsumReplaceCall:
    """``helper(skb, offset, frm, to, flags)``: ``frm``/``to`` as the u64 registers hold them on little-endian."""

    helper: str
    offset: int
    frm: int
    to: int
    flags: int

    def __str__(self) -> str:
        names = [n for bit, n in _FLAG_NAMES if self.flags & bit]
        flags = " | ".join(([str(self.flags & bpf.BPF_F_HDR_FIELD_MASK)] if self.flags & 0xF or not names else [])
                           + names)
        to = "diff" if self.flags & bpf.BPF_F_HDR_FIELD_MASK == 0 else f"{self.to:#x}"
        return f"{self.helper}(skb, {self.offset}, {self.frm:#x}, {to}, {flags});"


@dataclass(frozen=True)
class StoreBytesCall:
    """``bpf_skb_store_bytes(skb, offset, &to, len(to), flags)``; ``frm`` is what was there.

    ``flags`` is BPF_F_RECOMPUTE_CSUM where no checksum patch balances the change in the sum of
    the bytes (an IPv6 hop limit, a field outside every checksum), so that a CHECKSUM_COMPLETE
    skb's ``skb->csum`` stays right; else 0.
    """

    offset: int
    frm: bytes
    to: bytes
    flags: int = 0

    def __str__(self) -> str:
        flags = "BPF_F_RECOMPUTE_CSUM" if self.flags & BPF_F_RECOMPUTE_CSUM else str(self.flags)
        return f"bpf_skb_store_bytes(skb, {self.offset}, &to /* {self.to.hex()}, was {self.frm.hex()} */, " \
               f"{len(self.to)}, {flags});"


Call = Union[CsumDiffCall, CsumReplaceCall, StoreBytesCall]


@dataclass(frozen=True)
class Rewrite:
    """The rewritten packet (bytes, the caller's bytearray when in place, or a scapy packet) and the calls made."""

    packet: Any
    calls: tuple[Call, ...]
    #: The packet before the rewrite, as bytes (what :meth:`skb` replays the calls on).
    original: bytes = field(default=b"", repr=False)

    @property
    def csum_diffs(self) -> tuple[CsumDiffCall, ...]:
        """The bpf_csum_diff calls (one per address change)."""
        return tuple(c for c in self.calls if isinstance(c, CsumDiffCall))

    def format(self, kind: Literal["calls", "tc", "xdp"] = "calls", *, name: str = "csum_rewrite") -> str:
        """The calls as C-like lines, one per call; or, for ``kind`` "tc" / "xdp", a complete C program
        (function ``name``) that makes the same change on the kernel (see :mod:`csum._rewrite_c`)."""
        if kind == "calls":
            return "\n".join(str(c) for c in self.calls)
        if kind not in ("tc", "xdp"):
            raise CsumValueError(f"kind must be 'calls', 'tc' or 'xdp', not {kind!r}", code="bad-value")
        if not isinstance(name, str) or not name.isidentifier():
            raise CsumValueError(f"name must be a C identifier, not {name!r}", code="bad-value")
        from ._rewrite_c import program

        return program(self, kind, name)

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
        skb.run(self.ops())
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


class _Editor:
    """Applies changes to a private copy, recording each helper call."""

    def __init__(self, data: bytearray, layout: Layout, arch: Profile) -> None:
        self.buf, self.layout, self.arch = data, layout, arch
        self.calls: list[Call] = []
        #: A CHECKSUM_COMPLETE copy, edited alongside: it tells which stores need BPF_F_RECOMPUTE_CSUM.
        self.shadow = Skb.checksum_complete(data, network_offset=layout.l3)

    def _replace(self, helper: str, offset: int, frm: int, to: int, flags: int) -> None:
        fn = self.shadow.bpf_l3_csum_replace if helper == "bpf_l3_csum_replace" else self.shadow.bpf_l4_csum_replace
        rc = fn(offset, frm, to, flags)
        if rc:
            raise AssertionError(f"csum.rewrite made a bad {helper} call (rc {rc}): offset {offset}, flags {flags:#x}")
        self.buf[offset:offset + 2] = self.shadow.data[offset:offset + 2]
        self.calls.append(CsumReplaceCall(helper, offset, frm, to, flags))

    def l4_flags(self, size: int, pseudo: bool) -> int:
        flags = size
        if pseudo:
            flags |= bpf.BPF_F_PSEUDO_HDR | (bpf.BPF_F_IPV6 if self.layout.version == 6 else 0)
        if self.layout.proto == UDP:
            flags |= bpf.BPF_F_MARK_MANGLED_0 | (bpf.BPF_F_MARK_ENFORCE if self.layout.version == 6 else 0)
        elif self.layout.proto == UDPLITE:
            flags |= bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE
        return flags

    def store(self, offset: int, new: bytes) -> None:
        old = bytes(self.buf[offset:offset + len(new)])
        self.buf[offset:offset + len(new)] = new
        self.shadow.bpf_skb_store_bytes(offset, new)
        flags = 0
        if not self.shadow.csum_valid():  # no checksum patch balances this change: let the kernel carry it
            self.shadow.data[offset:offset + len(new)] = old
            flags = BPF_F_RECOMPUTE_CSUM
            self.shadow.bpf_skb_store_bytes(offset, new, flags)
        self.calls.append(StoreBytesCall(offset, old, new, flags))

    def address(self, which: str, new: bytes) -> None:
        lay = self.layout
        offset = lay.saddr if which == "saddr" else lay.daddr
        old = bytes(self.buf[offset:offset + len(new)])
        frm_align = (self.arch.net_ip_align + offset) & 7
        diff = self.arch.bpf_csum_diff(old, new, 0, frm_align=frm_align)
        self.calls.append(CsumDiffCall(old, new, 0, diff, frm_align, 0))
        in_pseudo = lay.saddr_in_pseudo if which == "saddr" else lay.daddr_in_pseudo
        if lay.l4_csum is not None and lay.pseudo and in_pseudo:
            self._replace("bpf_l4_csum_replace", lay.l4_csum, 0, diff, self.l4_flags(0, True))
        if lay.ip_csum is not None:
            self._replace("bpf_l3_csum_replace", lay.ip_csum, 0, diff, 0)
        self.store(offset, new)

    def port(self, offset: int, port: int) -> None:
        new = port.to_bytes(2, "big")
        old = bytes(self.buf[offset:offset + 2])
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
        else:
            self._replace("bpf_l4_csum_replace", lay.l4_csum, _le(old), _le(change.new), self.l4_flags(size, False))
        self.store(off, change.new)


def _address(value: Address, version: int, name: str) -> bytes:
    if isinstance(value, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        packed = value.packed
    elif isinstance(value, str):
        try:
            packed = ipaddress.ip_address(value).packed
        except ValueError:
            raise CsumValueError(f"{name} is not an IP address: {value!r}", code="bad-address") from None
    elif isinstance(value, (bytes, bytearray, memoryview)):
        packed = bytes(value)
    else:
        raise CsumTypeError(f"{name} must be an address string, bytes or ipaddress object, not "
                            f"{type(value).__name__}", code="bad-type")
    if len(packed) != (4 if version == 4 else 16):
        raise CsumValueError(f"{name} must be an IPv{version} address for this IPv{version} packet, got "
                             f"{len(packed)} bytes", code="bad-address")
    return packed


def _check_field(change: object, lay: Layout) -> FieldChange:
    if not isinstance(change, FieldChange):
        raise CsumTypeError(f"fields must hold FieldChange objects, not {type(change).__name__}", code="bad-type")
    off = check_uint(change.offset, 32, "field offset")
    new = as_view(change.new, "field new").tobytes()
    where = f"field at offset {off}"
    if len(new) not in (2, 4):
        raise CsumValueError(f"{where}: new must be 2 or 4 bytes, got {len(new)}", code="bad-width")
    if off < lay.l3 or off + len(new) > lay.end:
        raise CsumValueError(f"{where}: outside the IP datagram (offsets {lay.l3}..{lay.end})", code="bad-offset")
    if (off - lay.l3) & 1:
        raise CsumValueError(f"{where}: must start at an even distance from the IP header (a 16-bit word "
                             "boundary of every checksum covering it)", code="bad-offset")
    for csum_off in (lay.ip_csum, lay.l4_csum):
        if csum_off is not None and off < csum_off + 2 and csum_off < off + len(new):
            raise CsumValueError(f"{where}: overlaps the checksum at offset {csum_off}", code="bad-offset")
    for boundary in (lay.l3_header_end, lay.l4_start):
        if off < boundary < off + len(new):
            raise CsumValueError(f"{where}: straddles the header boundary at offset {boundary}", code="bad-offset")
    if off >= lay.l4_start:
        if lay.l4_csum is None:
            raise CsumValueError(f"{where}: after the network headers of a packet whose L4 checksum is not "
                                 f"known here ({protocol_name(lay.proto)}, fragment: {lay.fragment})",
                                 code="no-l4-checksum")
        if change.pseudo_header:
            raise CsumValueError(f"{where}: in the {protocol_name(lay.proto)} header/payload, which is not part "
                                 "of the pseudo-header", code="bad-value")
    return FieldChange(off, new, bool(change.pseudo_header))


def _scapy_packet(packet: object) -> bool:
    module = sys.modules.get("scapy.packet")
    return module is not None and isinstance(packet, module.Packet)


def rewrite(packet: Any, *, saddr: Address | None = None, daddr: Address | None = None,
            sport: int | None = None, dport: int | None = None, decrement_ttl: bool = False,
            fields: Iterable[FieldChange] = (), link: Link = "auto", inplace: bool = False,
            arch: str | Profile = "generic") -> Rewrite:
    """Rewrite addresses, ports, TTL/hop limit or any 2/4-byte header field, patching checksums incrementally.

    ``packet``: bytes-like (Ethernet or bare IP, see ``link``) or a scapy packet (Ether, IP or
    IPv6 on top; the result is the same class). Returns new bytes unless ``inplace=True``,
    which needs a bytearray and edits it (all checks run first: on error it is untouched).
    Changes apply in the order saddr, daddr, sport, dport, TTL, fields. Raises
    CsumValueError naming the problem: a malformed packet with a code of :mod:`csum.layers.walk`
    (``truncated``, ``not-ip``, ``bad-length``, ``bad-option`` ...), a request it cannot
    satisfy with ``bad-address``, ``no-ports``, ``bad-offset`` ... Helper semantics:
    net/core/filter.c; see the module docstring. ``link``: "auto", "ethernet" (alias "ether") or "ip".

    ``arch`` (a csum profile name or :class:`~csum.profile.Profile`) picks whose ``csum_partial``
    the recorded ``bpf_csum_diff`` results come from (Linux >= 6.13 form). Architectures differ
    only in how they write a zero diff (0x0000 or 0xffff); the packet bytes are the same.
    """
    rebuild = None
    if _scapy_packet(packet):
        names = [layer.__name__ for layer in packet.layers()]
        if names[0] not in ("Ether", "IP", "IPv6"):
            raise CsumValueError(f"packet: a scapy packet must start with Ether, IP or IPv6, not {names[0]}",
                                 code="bad-packet")
        if inplace:
            raise CsumTypeError("inplace=True needs a bytearray packet, not a scapy packet", code="bad-type")
        rebuild, link = type(packet), "ethernet" if names[0] == "Ether" else "ip"
        data = bytearray(bytes(packet))
    else:
        if inplace and not isinstance(packet, bytearray):
            raise CsumTypeError(f"inplace=True needs a bytearray packet, not {type(packet).__name__}",
                                code="bad-type")
        data = bytearray(as_view(packet, "packet"))
    lay = parse(memoryview(data), link)
    original = bytes(data)
    editor = _Editor(data, lay, arch if isinstance(arch, Profile) else profile(arch))
    new_saddr = None if saddr is None else _address(saddr, lay.version, "saddr")
    new_daddr = None if daddr is None else _address(daddr, lay.version, "daddr")
    ports = [(i, check_uint(p, 16, name)) for i, p, name in ((0, sport, "sport"), (2, dport, "dport"))
             if p is not None]
    if ports and not (lay.has_ports and lay.l4 is not None and lay.l4_csum is not None):
        raise CsumValueError(f"packet has no ports to set ({protocol_name(lay.proto)}, fragment: {lay.fragment})",
                             code="no-ports")
    changes = [_check_field(c, lay) for c in fields]
    if decrement_ttl and data[lay.ttl] == 0:
        what = "TTL" if lay.version == 4 else "hop limit"
        raise CsumValueError(f"packet: the {what} is already 0 and cannot be decremented", code="ttl-expired")
    for which, value in (("saddr", new_saddr), ("daddr", new_daddr)):
        if value is not None:
            editor.address(which, value)
    for offset, port in ports:
        editor.port(lay.l4 + offset, port)  # type: ignore[operator]
    if decrement_ttl:
        editor.decrement_ttl()
    for change in changes:
        editor.field(change)
    if inplace:
        packet[:] = data
        result: Any = packet
    else:
        result = bytes(data) if rebuild is None else rebuild(bytes(data))
    return Rewrite(result, tuple(editor.calls), original)


def set_field(packet: Any, offset: int, new: bytes, *, pseudo_header: bool = False, link: Link = "auto",
              inplace: bool = False) -> Rewrite:
    """Set one 2- or 4-byte field at ``offset`` (from the buffer start): ``rewrite(fields=[FieldChange(...)])``."""
    return rewrite(packet, fields=[FieldChange(offset, new, pseudo_header)], link=link, inplace=inplace)

"""One walker: a packet -> its whole stack, outer to inner, with every checksum field it carries.

The walker reads :mod:`csum.layers.table` and nothing else for protocol facts. It follows link
layers (by capture link type), VLAN/QinQ tags, MPLS label stacks, PPPoE, LLC/SNAP, IPv4 options
and IPv6 extension headers, AH, tunnels (IP-in-IP, 6in4, GRE, VXLAN, Geneve, MPLS-in-UDP,
ERSPAN) and the datagram quoted in ICMP/ICMPv6 errors, and emits one :class:`Field` per checksum:
where it is, what bytes it covers, which pseudo-header enters it, or why it cannot be verified
from this packet (:class:`~csum.layers.reasons.Reason`).

The L4 pseudo-header (RFC 9293 3.1, RFC 768, RFC 8200 8.1) holds the source (the Home Address
option's address when a destination options header carries one, RFC 6275 6.3; Linux swaps it in,
net/ipv6/exthdrs.c ``ipv6_dest_hao``), the final destination (the last address of a live IPv4
source route; with an IPv6 routing header whose Segments Left is non-zero, its last address for
types 0 and 2 or Segment List[0] for type 4, RFC 8754; other types name an address csum does not
read) and the upper-layer length (32 bits in a jumbogram, RFC 2675).

Truncation: ``wire_len`` is the packet's length on the wire (a capture's original length). Bytes
past the captured ones but within ``wire_len`` were cut by the snap length: fields there are
reported not captured and the walk stops, no error. Lengths that run past ``wire_len`` make the
packet malformed. Malformed outer headers (IPv4/IPv6 and their TCP/UDP/ICMP header) raise
:class:`CsumValueError` in strict mode and are recorded in :attr:`Stack.malformed` otherwise,
with codes ``truncated``, ``not-ip``, ``bad-version``, ``bad-ihl``, ``bad-length``, ``bad-option`` (and
``bad-value`` for the ``link`` argument). Inside a tunnel, a malformed layer (not one that is merely not IP) ends
that branch of the walk: it raises the same way in strict mode, with its path, and is :attr:`Stack.inner_malformed`
otherwise, the fields found before it kept. Inside an ICMP error's quote, which may end anywhere, it is noted in
:attr:`Stack.notes` only.
"""

from __future__ import annotations

from typing import Literal, Union

from ..core.inputs import as_view, check_bool, check_int
from ..errors import Code, CsumValueError
from . import embedded, ip, transport, tunnels  # noqa: F401  (their handlers register in dissect's tables)
from . import table as T
from .dissect import Walker, _Bad, _Cut
from .link import link as _link
from .stack import Field, Fragment, IPLayer, Stack

__all__ = ["Field", "Fragment", "IPLayer", "Link", "Stack", "raise_inner", "resolve_link", "walk", "walk_outer_strict"]

Link = Union[Literal["auto", "ethernet", "ether", "ip"], int]


def _fits(buf: memoryview, at: int) -> bool:
    """Whether an IP header at ``at`` has version 4 or 6 and lengths that fit the buffer."""
    if len(buf) <= at:
        return False
    version, ihl, v4, v6 = buf[at] >> 4, (buf[at] & 0xF) * T.IHL_UNIT, T.IPHDR, T.IPV6HDR
    if version == 4:
        total = int.from_bytes(buf[at + v4.tot_len : at + v4.tot_len + 2], "big")
        return len(buf) >= at + v4.size and v4.size <= ihl <= total <= len(buf) - at
    plen = int.from_bytes(buf[at + v6.payload_len : at + v6.payload_len + 2], "big")
    return version == 6 and len(buf) >= at + v6.size and at + v6.size + plen <= len(buf)


def _auto(buf: memoryview) -> int:
    """link="auto": Ethernet when bytes 12..13 (past VLAN tags) are the IPv4/IPv6 EtherType, the version nibble
    agrees and, if the buffer also reads as a bare IP datagram, the frame's IP lengths fit; else bare IP."""
    at = T.ETHHDR.proto
    while len(buf) >= at + 2 and int.from_bytes(buf[at : at + 2], "big") in T.VLAN_TPIDS:
        at += T.ETHHDR.vlan_size
    if len(buf) >= at + 3:
        ethertype, version = int.from_bytes(buf[at : at + 2], "big"), buf[at + 2] >> 4
        if (ethertype, version) in ((T.ETH_IPV4, 4), (T.ETH_IPV6, 6)) and (_fits(buf, at + 2) or not _fits(buf, 0)):
            return T.LINKTYPE_ETHERNET
        if T.ETHERTYPES.get(ethertype) in ("mpls", "pppoe") and not _fits(buf, 0):
            return T.LINKTYPE_ETHERNET
    return T.LINKTYPE_RAW


def resolve_link(buf: memoryview, link: Link) -> int:
    """The capture link type number for ``link`` ("auto", "ethernet"/"ether", "ip" or a number in 0..2**31-1)."""
    if type(link) is int and 0 <= link < 1 << 31:
        return link
    if isinstance(link, str):
        if link == "auto":
            return _auto(buf)
        number = T.LINK_NAMES.get(link)
        if number is None:
            raise CsumValueError(f"link must be 'auto', 'ethernet' (or 'ether'), 'ip' or a link type number, "
                                 f"got {link!r}", code=Code.BAD_VALUE)
        return number
    return check_int(link, 0, (1 << 31) - 1, "link")  # a numpy integer; else the error naming link


def _walk(buf: memoryview, link: Link, wire_len: int | None, strict: bool) -> Stack:
    """:func:`walk`, a malformed layer inside a tunnel left in the stack."""
    if type(buf) is not memoryview or buf.format != "B" or not buf.c_contiguous:
        buf = as_view(buf, "buf")
    linktype = resolve_link(buf, link)
    if wire_len is not None:
        wire_len = check_int(wire_len, 0, (1 << 63) - 1, "wire_len")
    if strict is not False:
        strict = check_bool(strict, "strict")
    walker = Walker(buf, len(buf) if wire_len is None else max(wire_len, len(buf)), strict)
    stack = walker.stack
    try:
        _link(walker, linktype, 0)
        if stack.unsupported is not None and strict:
            raise CsumValueError(f"link type {linktype} is not supported", code=Code.UNSUPPORTED_LINK)
    except _Cut:
        stack.cut = True
    except _Bad as exc:
        if exc.code == Code.NOT_IP and not stack.ips:
            if strict:
                raise CsumValueError(str(exc), code=Code.NOT_IP) from None
            stack.not_ip = True
        elif strict:
            raise CsumValueError(str(exc), code=exc.code) from None
        else:
            stack.malformed = (exc.code, str(exc))
    stack.fields.sort(key=_position)
    return stack


def walk(buf: memoryview, link: Link = "auto", *, wire_len: int | None = None, strict: bool = False) -> Stack:
    """The whole stack of one packet: its layers and every checksum field, outer to inner.

    ``link``: "auto", "ethernet" (alias "ether"), "ip" or a capture link type number (see
    :data:`csum.layers.table.LINKTYPES`). ``wire_len``: the packet's length on the wire when only
    part was captured. ``strict``: raise :class:`CsumValueError` for a packet that is not IP or
    has a malformed header (outer, or inside a tunnel) instead of recording it in the stack.
    """
    stack = _walk(buf, link, wire_len, strict)
    if strict:
        raise_inner(stack)
    return stack


def walk_outer_strict(buf: memoryview, link: Link) -> Stack:
    """The strict walk, except that a malformed layer inside a tunnel stays in :attr:`Stack.inner_malformed`: for
    what reads or edits the layers in front of it (csum.rewrite: their checksums' incremental updates hold whatever
    the bytes behind them are; :func:`raise_inner` refuses an edit at or past it)."""
    return _walk(buf, link, None, True)


def raise_inner(stack: Stack, at: int | None = None) -> None:
    """Raise the malformed layer inside a tunnel of ``stack`` as :class:`CsumValueError` (its code and path) when the
    encapsulated part that holds it starts at ``at`` or before, so that it holds offset ``at`` (None: wherever)."""
    bad = stack.inner_malformed
    if bad is not None and stack.malformed is None and (at is None or bad[2] <= at):
        raise CsumValueError(bad[1], code=bad[0])


def _position(f: Field) -> int:
    return f.header if f.at is None else f.at

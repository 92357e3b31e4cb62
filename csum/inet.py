"""Compute and verify the checksums of a raw IPv4/IPv6 packet: IPv4 header, TCP, UDP, ICMP, ICMPv6.

Parses just deep enough to find each checksum and its pseudo-header
(RFC 791/768/793/792, RFC 8200 section 8.1, RFC 4443 section 2.3), the way the
kernel's receive path checks them (net/ipv4/ip_input.c, net/ipv4/udp.c
``udp4_csum_init``, net/ipv6/ip6_checksum.c ``udp6_csum_init``):

* IPv6 upper-layer length is 32 bits: a jumbogram (RFC 2675) takes it from the
  hop-by-hop Jumbo Payload option; UDP over a jumbogram has length field 0.
* The pseudo-header destination is the *final* destination: the last address
  of an IPv4 loose/strict source route (RFC 791, RFC 9293 section 3.1) while the
  route is not used up, of an IPv6 type 0 or type 2 routing header, or segment 0
  of a segment routing header (RFC 8754), while Segments Left is non-zero; the
  IPv6 source is the Home Address option's address when present (RFC 6275 6.3).
* UDP: a computed 0 is sent as 0xffff; a stored 0 means "no checksum" over IPv4
  and is an error over IPv6 unless ``udp6_zero_ok`` (RFC 6936 tunnels).
* Fragments: a non-first fragment has no transport header (``ok=None``,
  :data:`NON_FIRST_FRAGMENT`); the first fragment of a fragmented datagram cannot
  be verified without reassembly (:data:`NEEDS_REASSEMBLY`). An IPv6 atomic
  fragment (offset 0, M=0; RFC 6946) holds the whole datagram and is verified.

A stored checksum passes when the one's-complement sum over the covered bytes
(and pseudo-header) is all ones, the receiver's test (RFC 1071 section 1).
Malformed input (truncated, bogus IHL or lengths) raises :class:`CsumValueError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._check import as_view
from .errors import CsumValueError
from .ones import csum_fold
from .partial import internet_checksum, verify_checksum
from .pseudo import csum_ipv6_magic, csum_tcpudp_magic
from .stream import Checksum, _swab16
from .types import WireSum

__all__ = [
    "MISMATCH", "NEEDS_REASSEMBLY", "NEGATIVE_ZERO", "NON_FIRST_FRAGMENT", "OK", "UDP6_ZERO",
    "UDP6_ZERO_ALLOWED", "UDP_NO_CHECKSUM", "UNKNOWN_DESTINATION", "Result", "compute", "verify",
]

Link = Literal["ip", "ether"]

#: ``Result.reason`` values.
OK = "ok"
MISMATCH = "mismatch"
#: Stored 0xffff where 0x0000 is computed: the same number in one's complement, so receivers
#: accept it, but a full computation never yields it (RFC 1624 section 3); eqn. 2 updates do.
NEGATIVE_ZERO = "negative-zero"
UDP_NO_CHECKSUM = "udp-no-checksum"           # stored 0 over IPv4: not computed by the sender (RFC 768)
UDP6_ZERO = "udp6-zero-checksum"              # stored 0 over IPv6: invalid (RFC 8200 section 8.1)
UDP6_ZERO_ALLOWED = "udp6-zero-allowed"       # stored 0 over IPv6 accepted by the caller (RFC 6936)
NON_FIRST_FRAGMENT = "non-first-fragment"     # no transport header in this fragment: not applicable
NEEDS_REASSEMBLY = "needs-reassembly"         # first fragment: checksum covers bytes not here
UNKNOWN_DESTINATION = "unknown-final-destination"  # routing header type whose final address csum cannot read

_L4 = {6: ("tcp", 16, 20), 17: ("udp", 6, 8), 1: ("icmp", 2, 4), 58: ("icmpv6", 2, 4)}  # name, csum offset, min size
_VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
_IPV6_EXT = (0, 43, 44, 51, 60)  # hop-by-hop, routing, fragment, AH, destination options


@dataclass(frozen=True, slots=True)
class Result:
    """One checksum of a packet.

    ``layer``: "ipv4", "tcp", "udp", "icmp" or "icmpv6"; ``offset``: where that
    header starts in the packet; ``stored``: the field as sent, read big-endian
    (None when the fragment holds no such header); ``computed``: what a sender
    stores there (wire value, UDP's 0 already sent as 0xffff; None when not
    computable); ``ok``: True/False, or None when not applicable or unverifiable;
    ``reason``: one of this module's reason constants.
    """

    layer: str
    offset: int
    stored: int | None
    computed: int | None
    ok: bool | None
    reason: str


@dataclass(slots=True)
class _Transport:
    proto: int
    offset: int
    end: int  # the end of the IP payload (trailing link-layer padding excluded)
    src: bytes
    dst: bytes | None  # None: final destination unknown
    fragment: str | None  # None, NON_FIRST_FRAGMENT or NEEDS_REASSEMBLY


def _malformed(what: str, *, code: str) -> CsumValueError:
    return CsumValueError(f"packet: {what}", code=code)


def _need(view: memoryview, end: int, what: str) -> None:
    if end > len(view):
        raise _malformed(f"truncated: {what} needs {end} bytes, packet has {len(view)}", code="truncated")


def _u16(view: memoryview, at: int) -> int:
    return int.from_bytes(view[at : at + 2], "big")


def _l3_offset(view: memoryview, link: Link) -> int:
    if link == "ip":
        return 0
    if link != "ether":
        raise CsumValueError(f"link must be 'ip' or 'ether', got {link!r}", code="bad-link")
    at = 12
    _need(view, at + 2, "Ethernet header")
    while _u16(view, at) in _VLAN_TPIDS:
        at += 4
        _need(view, at + 2, "802.1Q tag")
    ethertype = _u16(view, at)
    if ethertype not in (0x0800, 0x86DD):
        raise _malformed(f"EtherType {ethertype:#06x} is neither IPv4 nor IPv6", code="not-ip")
    return at + 2


def _ipv4_options(view: memoryview, start: int, end: int, dst: bytes) -> bytes:
    """Walk IPv4 options; return the final destination (RFC 791 source routes, RFC 9293 3.1)."""
    at, final, routes = start, dst, 0
    while at < end:
        kind = view[at]
        if kind == 0:
            break
        if kind == 1:
            at += 1
            continue
        if at + 2 > end or not 2 <= view[at + 1] <= end - at:
            raise _malformed(f"IPv4 option {kind} at offset {at} has a bad length", code="bad-option")
        size = view[at + 1]
        if kind in (131, 137):  # loose / strict source and record route
            routes += 1
            pointer = view[at + 2] if size > 2 else 0
            if size < 3 or (size - 3) % 4 or pointer < 4:
                raise _malformed(f"source route option at offset {at} is malformed", code="bad-option")
            if routes > 1:
                raise _malformed("more than one IPv4 source route option (RFC 791)", code="bad-option")
            if size >= 7 and pointer <= size:  # route not used up: the final destination is its last address
                final = bytes(view[at + size - 4 : at + size])
        at += size
    return final


def _ipv4(view: memoryview, at: int, results: list[Result]) -> _Transport:
    _need(view, at + 20, "IPv4 header")
    ihl = view[at] & 0x0F
    if ihl < 5:
        raise _malformed(f"IPv4 IHL is {ihl}, below the minimum of 5", code="bad-ihl")
    hlen = 4 * ihl
    _need(view, at + hlen, f"IPv4 header with IHL {ihl}")
    total = _u16(view, at + 2)
    if total < hlen:
        raise _malformed(f"IPv4 total length {total} is shorter than its {hlen}-byte header", code="bad-length")
    _need(view, at + total, f"IPv4 total length {total}")
    header = view[at : at + hlen]
    computed = internet_checksum(bytes(header[:10]) + b"\0\0" + bytes(header[12:]))
    results.append(_result("ipv4", at, _u16(view, at + 10), computed, verify_checksum(header)))
    frag = _u16(view, at + 6)
    fragment = NON_FIRST_FRAGMENT if frag & 0x1FFF else NEEDS_REASSEMBLY if frag & 0x2000 else None
    src, dst = bytes(view[at + 12 : at + 16]), bytes(view[at + 16 : at + 20])
    dst = _ipv4_options(view, at + 20, at + hlen, dst)
    return _Transport(view[at + 9], at + hlen, at + total, src, dst, fragment)


def _ipv6_options(view: memoryview, start: int, end: int, wanted: int) -> bytes | None:
    """Return the data of the first option of type ``wanted`` in a hop-by-hop/destination header."""
    at = start
    while at < end:
        kind = view[at]
        if kind == 0:  # Pad1
            at += 1
            continue
        if at + 2 > end or at + 2 + view[at + 1] > end:
            raise _malformed(f"IPv6 option {kind:#04x} at offset {at} overruns its header", code="bad-option")
        if kind == wanted:
            return bytes(view[at + 2 : at + 2 + view[at + 1]])
        at += 2 + view[at + 1]
    return None


def _routing_destination(view: memoryview, at: int, size: int) -> bytes | None:
    """The final destination named by a routing header with Segments Left > 0 (RFC 8200 8.1)."""
    kind = view[at + 2]
    if kind in (0, 2) and size >= 24:  # type 0 (RFC 2460) and type 2 (RFC 6275): the last address
        return bytes(view[at + size - 16 : at + size])
    if kind == 4 and size >= 24:  # segment routing (RFC 8754): Segment List[0] is the final segment
        return bytes(view[at + 8 : at + 24])
    return None


def _ipv6(view: memoryview, at: int) -> _Transport:
    _need(view, at + 40, "IPv6 header")
    plen, nh = _u16(view, at + 4), view[at + 6]
    src, dst = bytes(view[at + 8 : at + 24]), bytes(view[at + 24 : at + 40])
    end = at + 40 + plen
    if plen:
        _need(view, end, f"IPv6 payload length {plen}")
    fragment, pos, first = None, at + 40, True
    while nh in _IPV6_EXT:
        _need(view, pos + 8, "IPv6 extension header")
        size = 8 if nh == 44 else (view[pos + 1] + 2) * 4 if nh == 51 else (view[pos + 1] + 1) * 8
        _need(view, pos + size, "IPv6 extension header")
        if nh == 0 and first:
            jumbo = _ipv6_options(view, pos + 2, pos + size, 0xC2)
            if jumbo is not None:
                if plen or len(jumbo) != 4:
                    why = "Jumbo Payload option needs payload length 0 and 4 bytes (RFC 2675)"
                    raise _malformed(why, code="bad-length")
                end = at + 40 + int.from_bytes(jumbo, "big")
                _need(view, end, f"jumbo payload length {end - at - 40}")
        elif nh == 43 and view[pos + 3]:
            dst = _routing_destination(view, pos, size)
        elif nh == 60:
            home = _ipv6_options(view, pos + 2, pos + size, 0xC9)
            if home is not None:
                if len(home) != 16:
                    raise _malformed("Home Address option must hold 16 bytes", code="bad-option")
                src = home
        elif nh == 44:
            word = _u16(view, pos + 2)
            fragment = NON_FIRST_FRAGMENT if word >> 3 else NEEDS_REASSEMBLY if word & 1 else fragment
        nh, pos, first = view[pos], pos + size, False
        if pos > end:
            raise _malformed(f"IPv6 extension headers run past the payload end ({end})", code="bad-length")
    if not plen and end == at + 40 and nh != 59:
        raise _malformed("IPv6 payload length 0 without a Jumbo Payload option", code="bad-length")
    return _Transport(nh, pos, end, src, dst, fragment)


def _result(layer: str, offset: int, stored: int, computed: int, passes: bool) -> Result:
    if not passes:
        return Result(layer, offset, stored, computed, False, MISMATCH)
    reason = NEGATIVE_ZERO if stored == 0xFFFF and computed == 0 else OK
    return Result(layer, offset, stored, computed, True, reason)


def _transport(view: memoryview, t: _Transport, ipv6: bool, udp6_zero_ok: bool) -> Result | None:
    if t.proto not in _L4 or t.proto == (1 if ipv6 else 58):
        return None
    layer, field, minimum = _L4[t.proto]
    if t.fragment == NON_FIRST_FRAGMENT:
        return Result(layer, t.offset, None, None, None, NON_FIRST_FRAGMENT)
    available = t.end - t.offset
    if t.fragment == NEEDS_REASSEMBLY:  # the header itself may be split (RFC 1858 tiny fragments)
        stored = _u16(view, t.offset + field) if available >= field + 2 else None
        return Result(layer, t.offset, stored, None, None, NEEDS_REASSEMBLY)
    if available < minimum:
        raise _malformed(f"{layer} segment has {available} bytes, below its {minimum}-byte header", code="truncated")
    stored = _u16(view, t.offset + field)
    if t.dst is None:
        return Result(layer, t.offset, stored, None, None, UNKNOWN_DESTINATION)
    length = t.end - t.offset
    if layer == "udp":
        ulen = _u16(view, t.offset + 4)
        if ulen or not ipv6 or length <= 0xFFFF:  # UDP length 0 only in a jumbogram (RFC 2675 section 4)
            if not 8 <= ulen <= length:
                raise _malformed(f"UDP length {ulen} outside 8..{length} (the IP payload)", code="bad-length")
            length = ulen
    seg = view[t.offset : t.offset + length]
    head = Checksum(seg[:field])
    tail = Checksum(seg[field + 2 :])
    zeroed = head.combine(Checksum(b"\0\0")).combine(tail).partial
    as_sent = head.combine(Checksum(seg[field : field + 2])).combine(tail).partial
    if layer == "icmp":
        fold, check = csum_fold(zeroed), csum_fold(as_sent)
    elif ipv6:
        fold = csum_ipv6_magic(t.src, t.dst, length, t.proto, zeroed)
        check = csum_ipv6_magic(t.src, t.dst, length, t.proto, as_sent)
    else:
        fold = csum_tcpudp_magic(t.src, t.dst, length, t.proto, zeroed)
        check = csum_tcpudp_magic(t.src, t.dst, length, t.proto, as_sent)
    computed = _swab16(fold)
    if layer == "udp":
        computed = computed or 0xFFFF  # RFC 768: a computed 0 is transmitted as all ones
        if stored == 0:
            if not ipv6:
                return Result(layer, t.offset, 0, computed, True, UDP_NO_CHECKSUM)
            reason = UDP6_ZERO_ALLOWED if udp6_zero_ok else UDP6_ZERO
            return Result(layer, t.offset, 0, computed, udp6_zero_ok, reason)
        return Result(layer, t.offset, stored, computed, check == 0, OK if check == 0 else MISMATCH)
    return _result(layer, t.offset, stored, computed, check == 0)


def verify(packet: object, *, link: Link = "ip", udp6_zero_ok: bool = False) -> list[Result]:
    """Check every checksum csum knows in ``packet``; one :class:`Result` per checksum, outermost first.

    ``link`` is "ip" (the packet starts with an IPv4 or IPv6 header) or "ether"
    (Ethernet II, with any number of 802.1Q/802.1ad tags). ``udp6_zero_ok``
    accepts a stored UDP checksum of 0 over IPv6 (RFC 6936 tunnel exception).
    Protocols without a checksum csum knows yield no result (an IPv6 packet
    carrying ESP yields none at all).
    """
    view = as_view(packet, "packet")
    at = _l3_offset(view, link)
    _need(view, at + 1, "IP header")
    version = view[at] >> 4
    results: list[Result] = []
    if version == 4:
        transport = _ipv4(view, at, results)
    elif version == 6:
        transport = _ipv6(view, at)
    else:
        raise _malformed(f"IP version {version} at offset {at} is neither 4 nor 6", code="not-ip")
    last = _transport(view, transport, version == 6, udp6_zero_ok)
    return results + ([last] if last else [])


def compute(packet: object, layer: str | None = None, *, link: Link = "ip") -> WireSum:
    """The checksum a sender stores for ``layer`` of ``packet`` (wire value, read big-endian).

    ``layer`` is "ipv4", "tcp", "udp", "icmp" or "icmpv6"; None means the
    transport layer. Raises :class:`CsumValueError` if the packet has no such
    layer or its checksum cannot be computed from this packet (a fragment).
    """
    results = verify(packet, link=link, udp6_zero_ok=True)
    for result in results:
        if layer == result.layer or (layer is None and result.layer != "ipv4"):
            if result.computed is None:
                why = f"{result.layer} checksum not computable here ({result.reason})"
                raise _malformed(why, code="not-applicable")
            return result.computed
    have = ", ".join(r.layer for r in results) or "none"
    raise CsumValueError(f"layer: packet has no {layer or 'transport'} checksum (layers: {have})", code="no-layer")

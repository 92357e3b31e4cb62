"""Compute and verify the checksums of a raw IPv4/IPv6 packet: IPv4 header, TCP, UDP, ICMP, ICMPv6.

The packet is parsed by :func:`csum._packet.parse` (link layer, IPv4 options,
IPv6 extension headers, fragments, and the pseudo-header's source, final
destination and 32-bit upper-layer length; RFC 791/768/9293/792, RFC 8200
section 8.1, RFC 2675, RFC 6275 6.3, RFC 8754). This module holds the rules a
receiver applies to what it finds, as the kernel's receive path checks them
(net/ipv4/ip_input.c, net/ipv4/udp.c ``udp4_csum_init``, net/ipv6/ip6_checksum.c
``udp6_csum_init``):

* UDP: a computed 0 is sent as 0xffff; a stored 0 means "no checksum" over IPv4
  and is an error over IPv6 unless ``udp6_zero_ok`` (RFC 6936 tunnels).
* Fragments: a non-first fragment has no transport header (``ok=None``,
  :data:`NON_FIRST_FRAGMENT`); the first fragment of a fragmented datagram cannot
  be verified without reassembly (:data:`NEEDS_REASSEMBLY`). An IPv6 atomic
  fragment (offset 0, M=0; RFC 6946) holds the whole datagram and is verified.
* A routing header type whose final destination csum does not read (with
  Segments Left non-zero) makes the transport checksum unverifiable
  (:data:`UNKNOWN_DESTINATION`).

A stored checksum passes when the one's-complement sum over the covered bytes
(and pseudo-header) is all ones, the receiver's test (RFC 1071 section 1).
Malformed input (truncated, bogus IHL or lengths) raises :class:`CsumValueError`
with the codes listed in :mod:`csum._packet`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import as_view
from ._packet import ICMP, ICMPV6, TCP, UDP, Layout, Link, parse
from .errors import CsumValueError
from .ones import csum_fold, swab16
from .partial import internet_checksum, verify_checksum
from .pseudo import csum_ipv6_magic, csum_tcpudp_magic
from .stream import Checksum
from .types import WireSum

__all__ = [
    "MISMATCH", "NEEDS_REASSEMBLY", "NEGATIVE_ZERO", "NON_FIRST_FRAGMENT", "OK", "UDP6_ZERO",
    "UDP6_ZERO_ALLOWED", "UDP_NO_CHECKSUM", "UNKNOWN_DESTINATION", "Result", "compute", "verify",
]

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

_LAYERS = {TCP: "tcp", UDP: "udp", ICMP: "icmp", ICMPV6: "icmpv6"}


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


def _u16(view: memoryview, at: int) -> int:
    return int.from_bytes(view[at : at + 2], "big")


def _result(layer: str, offset: int, stored: int, computed: int, passes: bool) -> Result:
    if not passes:
        return Result(layer, offset, stored, computed, False, MISMATCH)
    reason = NEGATIVE_ZERO if stored == 0xFFFF and computed == 0 else OK
    return Result(layer, offset, stored, computed, True, reason)


def _transport(view: memoryview, lay: Layout, udp6_zero_ok: bool) -> Result | None:
    layer = _LAYERS.get(lay.proto)
    if layer is None or lay.proto == (ICMP if lay.version == 6 else ICMPV6):
        return None
    if lay.fragment == "later":
        return Result(layer, lay.l4_start, None, None, None, NON_FIRST_FRAGMENT)
    assert lay.l4 is not None
    if lay.fragment == "first":  # the header itself may be split (RFC 1858 tiny fragments)
        stored = None if lay.l4_csum is None else _u16(view, lay.l4_csum)
        return Result(layer, lay.l4, stored, None, None, NEEDS_REASSEMBLY)
    assert lay.l4_csum is not None and lay.l4_len is not None
    stored = _u16(view, lay.l4_csum)
    if lay.pseudo_daddr is None:
        return Result(layer, lay.l4, stored, None, None, UNKNOWN_DESTINATION)
    field, length = lay.l4_csum - lay.l4, lay.l4_len
    seg = view[lay.l4 : lay.l4 + length]
    head = Checksum(seg[:field])
    tail = Checksum(seg[field + 2 :])
    zeroed = head.combine(Checksum(b"\0\0")).combine(tail).partial
    as_sent = head.combine(Checksum(seg[field : field + 2])).combine(tail).partial
    size = 16 if lay.version == 6 else 4
    src = bytes(view[lay.pseudo_saddr : lay.pseudo_saddr + size])
    dst = bytes(view[lay.pseudo_daddr : lay.pseudo_daddr + size])
    if layer == "icmp":
        fold, check = csum_fold(zeroed), csum_fold(as_sent)
    elif lay.version == 6:
        fold = csum_ipv6_magic(src, dst, length, lay.proto, zeroed)
        check = csum_ipv6_magic(src, dst, length, lay.proto, as_sent)
    else:
        fold = csum_tcpudp_magic(src, dst, length, lay.proto, zeroed)
        check = csum_tcpudp_magic(src, dst, length, lay.proto, as_sent)
    computed = swab16(fold)
    if layer == "udp":
        computed = computed or 0xFFFF  # RFC 768: a computed 0 is transmitted as all ones
        if stored == 0:
            if lay.version == 4:
                return Result(layer, lay.l4, 0, computed, True, UDP_NO_CHECKSUM)
            reason = UDP6_ZERO_ALLOWED if udp6_zero_ok else UDP6_ZERO
            return Result(layer, lay.l4, 0, computed, udp6_zero_ok, reason)
        return Result(layer, lay.l4, stored, computed, check == 0, OK if check == 0 else MISMATCH)
    return _result(layer, lay.l4, stored, computed, check == 0)


def verify(packet: object, *, link: Link = "ip", udp6_zero_ok: bool = False) -> list[Result]:
    """Check every checksum csum knows in ``packet``; one :class:`Result` per checksum, outermost first.

    ``link`` is "ip" (the packet starts with an IPv4 or IPv6 header), "ether" or
    "ethernet" (Ethernet II, with any number of 802.1Q/802.1ad tags) or "auto"
    (see :func:`csum._packet.parse`). ``udp6_zero_ok`` accepts a stored UDP
    checksum of 0 over IPv6 (RFC 6936 tunnel exception). Protocols without a
    checksum csum verifies (UDP-Lite, ESP ...) yield no result (an IPv6 packet
    carrying ESP yields none at all).
    """
    view = as_view(packet, "packet")
    lay = parse(view, link)
    results: list[Result] = []
    if lay.version == 4:
        assert lay.ip_csum is not None
        header = view[lay.l3 : lay.l3 + lay.header_len]
        computed = internet_checksum(bytes(header[:10]) + b"\0\0" + bytes(header[12:]))
        results.append(_result("ipv4", lay.l3, _u16(view, lay.ip_csum), computed, verify_checksum(header)))
    last = _transport(view, lay, udp6_zero_ok)
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
                why = f"packet: {result.layer} checksum not computable here ({result.reason})"
                raise CsumValueError(why, code="not-applicable")
            return result.computed
    have = ", ".join(r.layer for r in results) or "none"
    raise CsumValueError(f"layer: packet has no {layer or 'transport'} checksum (layers: {have})", code="no-layer")

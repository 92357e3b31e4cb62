"""Compute and verify every Internet checksum a raw packet carries, outer to inner.

The packet is walked by :func:`csum.layers.walk` (link layers, VLAN/QinQ, MPLS, PPPoE, IPv4
options, IPv6 extension headers, AH, tunnels, ICMP error quotes; the pseudo-header's source,
final destination and 32-bit length) and each checksum field it finds is judged by
:func:`csum.layers.evaluate`, with the rules a receiver applies (net/ipv4/ip_input.c,
net/ipv4/udp.c ``udp4_csum_init``, net/ipv6/ip6_checksum.c ``udp6_csum_init``):

* UDP: a computed 0 is sent as 0xffff; a stored 0 means "no checksum" over IPv4 and is an
  error over IPv6 unless ``udp6_zero_ok`` (RFC 6936) or on a tunnel port (RFC 6935).
* Fragments: a non-first fragment has no transport header (:data:`NON_FIRST_FRAGMENT`); the
  first fragment of a fragmented datagram cannot be verified alone (:data:`NEEDS_REASSEMBLY`;
  ``csum verify`` reassembles within a capture). An IPv6 atomic fragment (RFC 6946) is verified.
* A TCP/UDP field holding exactly the pseudo-header sum is transmit offload's (:data:`OFFLOAD`).

Malformed outer headers raise :class:`CsumValueError` with the codes of :mod:`csum.layers.walk`.

Where the C walker is built (:mod:`csum.layers.accel`), packets made only of the layers it walks
(Ethernet, VLAN tags, MPLS, PPPoE, SLL/SLL2, raw IP, BSD loopback; IPv4 with options, IPv6 with its
extension headers, AH; TCP, UDP, VXLAN, Geneve, GTP, GRE, ICMP/ICMPv6 other than errors; outer IPv4
fragments, IPv6 fragments: csum/engine/_cwalk.c's header comment) get their Results from C, equal in every field
to the Python walker's; everything else, ``udp6_zero_ok``, and every packet with ``CSUM_ENGINE`` other than ``c``,
goes through the Python walker.
"""

from __future__ import annotations

from .. import engine
from ..core.inputs import as_view, check_bool, check_str
from ..errors import Code, CsumValueError
from ..types import WireSum
from . import Link, Reason, Result, table, verify_stack, walk

__all__ = [
    "MISMATCH", "NEEDS_REASSEMBLY", "NEGATIVE_ZERO", "NON_FIRST_FRAGMENT", "OFFLOAD", "OK", "Reason", "Result",
    "UDP6_ZERO", "UDP6_ZERO_ALLOWED", "UDP_NO_CHECKSUM", "UNKNOWN_DESTINATION", "compute", "verify",
]

#: ``Result.reason`` values most callers test for (every reason is a :class:`Reason` member).
OK = Reason.OK
MISMATCH = Reason.MISMATCH
NEGATIVE_ZERO = Reason.NEGATIVE_ZERO
OFFLOAD = Reason.OFFLOAD
UDP_NO_CHECKSUM = Reason.UDP_NO_CHECKSUM
UDP6_ZERO = Reason.UDP6_ZERO
UDP6_ZERO_ALLOWED = Reason.UDP6_ZERO_ALLOWED
NON_FIRST_FRAGMENT = Reason.NON_FIRST_FRAGMENT
NEEDS_REASSEMBLY = Reason.NEEDS_REASSEMBLY
UNKNOWN_DESTINATION = Reason.UNKNOWN_DESTINATION


def verify(packet: object, *, link: Link = "auto", udp6_zero_ok: bool = False) -> list[Result]:
    """Check every checksum in ``packet``; one :class:`Result` per checksum field, in packet order.

    ``link``: "auto" (an Ethernet frame when it reads as one, else bare IP), "ethernet" (alias
    "ether"), "ip", or a capture link type number (1 Ethernet, 113 Linux SLL, 0 BSD loopback ...;
    :data:`csum.layers.table.LINKTYPES`). ``udp6_zero_ok`` accepts a stored UDP checksum of 0
    over IPv6 (RFC 6936). ESP yields one not-verifiable result ("esp", reason ``encrypted``).
    """
    udp6_zero_ok = check_bool(udp6_zero_ok, "udp6_zero_ok")
    cwalk = engine.cwalk
    if cwalk is not None and not udp6_zero_ok:  # the C walker (csum/layers/accel.py) when it walks all the packet holds
        number = _C_LINKS.get(link) if type(link) is str else link if type(link) is int and 0 <= link < 1 << 31 \
            else None
        if number is not None:
            results = cwalk.verify(packet if type(packet) in (bytes, bytearray) else as_view(packet, "packet"), number)
            if results is not None:
                return results
    view = as_view(packet, "packet")
    return verify_stack(view, walk(view, link, strict=True).fields, udp6_zero_ok)


#: ``link`` names -> csum/engine/_cwalk.c's link type argument (-1: "auto", decided as csum.layers.walk decides it).
_C_LINKS = {"auto": -1, **table.LINK_NAMES}


def compute(packet: object, layer: str | None = None, *, link: Link = "auto") -> WireSum:
    """The checksum a sender stores for ``layer`` of ``packet`` (wire value, read big-endian).

    ``layer`` is a :class:`Result` layer name ("ipv4", "tcp", "udp", "icmp", "gre" ...); None
    means the outer IP layer's transport. Raises :class:`CsumValueError` if the packet has no
    such layer or its checksum cannot be computed from this packet (a fragment). The first
    (outermost) match is taken.
    """
    if layer is not None:
        check_str(layer, "layer", "a layer name like 'tcp' or 'ipv4' (a str) or None")
    results = verify(packet, link=link, udp6_zero_ok=True)
    for result in results:
        if layer == result.layer or (layer is None and result.layer != "ipv4" and result.depth == 0):
            if result.computed is None:
                why = f"packet: {result.layer} checksum not computable here ({result.reason})"
                raise CsumValueError(why, code=Code.NOT_APPLICABLE)
            return WireSum(result.computed)
    have = ", ".join(r.layer for r in results) or "none"
    raise CsumValueError(f"layer: packet has no {layer or 'transport'} checksum (layers: {have})", code=Code.NO_LAYER)

"""Packet parsing just deep enough to find the fields a rewrite changes and the checksums covering them.

Ethernet (with up to two 802.1Q/802.1ad tags) or bare IP; IPv4 with options,
IPv6 with extension headers; TCP, UDP, UDP-Lite, ICMP and ICMPv6 checksums.
Offsets are from the start of the buffer, as a tc BPF program sees them from
``skb->data``. Which header fields enter the L4 pseudo-header follows RFC 9293
section 3.1 / RFC 768 (IPv4: the final destination of a source-route option)
and RFC 8200 section 8.1 (IPv6: the final destination of a Routing header).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from .errors import CsumValueError

Link = Literal["auto", "ethernet", "ip"]

_ETH_IPV4, _ETH_IPV6, _ETH_VLAN, _ETH_QINQ = 0x0800, 0x86DD, 0x8100, 0x88A8
TCP, UDP, UDPLITE, ICMP, ICMPV6 = 6, 17, 136, 1, 58

#: L4 protocol -> (checksum offset in the L4 header, minimum header length).
_L4_CSUM = {TCP: (16, 20), UDP: (6, 8), UDPLITE: (6, 8), ICMP: (2, 4), ICMPV6: (2, 4)}
#: IPv6 extension headers with the generic (next header, length in 8-byte units) layout, and AH.
_IPV6_EXT = {0, 43, 44, 60, 135, 139, 140}
_IPV6_AH, _IPV6_ROUTING, _IPV6_FRAGMENT = 51, 43, 44
#: IPv4 loose and strict source route options (RFC 791).
_IPV4_SOURCE_ROUTES = {0x83, 0x89}


@dataclass(frozen=True)
class Layout:
    """Where things are in one packet (absolute offsets into the buffer)."""

    version: Literal[4, 6]
    l3: int
    #: End of the IPv4 header (options included) or of the IPv6 fixed header.
    l3_header_end: int
    #: End of the network headers (IPv6 extension headers included): where the L4 header or fragment data starts.
    l4_start: int
    #: End of the IP datagram (l3 + total length); bytes after it (Ethernet padding) are not covered.
    end: int
    #: IPv4 header checksum offset; None for IPv6.
    ip_csum: int | None
    saddr: int
    daddr: int
    #: Offset of the TTL / hop limit byte.
    ttl: int
    #: "none" (not fragmented), "first" (offset 0, more fragments) or "later" (no L4 header here).
    fragment: Literal["none", "first", "later"]
    #: L4 protocol number and header offset; None when this packet carries no L4 header.
    proto: int | None
    l4: int | None
    #: Offset of the L4 checksum; None when the protocol's checksum is not known here.
    l4_csum: int | None
    #: Whether the L4 checksum covers a pseudo-header (TCP, UDP, UDP-Lite, ICMPv6; not ICMPv4).
    pseudo: bool
    #: Whether the header's destination address is the one in the pseudo-header (not with a source route).
    #: The source always is: the IPv6 Home Address option (RFC 6275), which would replace it, is not modelled.
    daddr_in_pseudo: bool

    @property
    def has_ports(self) -> bool:
        """Whether the L4 header starts with 16-bit source and destination ports."""
        return self.proto in (TCP, UDP, UDPLITE) and self.l4 is not None


def _truncated(what: str, need: int, have: int) -> CsumValueError:
    return CsumValueError(f"packet is truncated: {what} needs {need} bytes, the packet has {have}", code="truncated")


def _link_start(buf: memoryview, link: Link) -> int:
    """Offset of the IP header: past the Ethernet header and VLAN tags, or 0 for bare IP."""
    if link not in ("auto", "ethernet", "ip"):
        raise CsumValueError(f"link must be 'auto', 'ethernet' or 'ip', got {link!r}", code="bad-value")
    if link == "ip":
        return 0
    off = 12
    while len(buf) >= off + 2 and int.from_bytes(buf[off:off + 2], "big") in (_ETH_VLAN, _ETH_QINQ) and off < 20:
        off += 4
    if len(buf) >= off + 3:
        ethertype, version = int.from_bytes(buf[off:off + 2], "big"), buf[off + 2] >> 4
        if (ethertype, version) in ((_ETH_IPV4, 4), (_ETH_IPV6, 6)):
            return off + 2
        if link == "ethernet":
            raise CsumValueError(f"packet: ethertype {ethertype:#06x} at offset {off} is not IPv4 or IPv6 "
                                 f"(or its IP version nibble {version} does not match)", code="bad-packet")
    elif link == "ethernet":
        raise _truncated("an Ethernet header", off + 3, len(buf))
    return 0


def _ipv4_dst_in_pseudo(buf: memoryview, start: int, end: int) -> bool:
    """False when the one source-route option names the final destination (that enters the pseudo-header).

    Several source-route options (RFC 791 allows one) leave the header's destination in the pseudo-header.
    """
    routes, with_addresses, off = 0, False, start
    while off < end:
        kind = buf[off]
        if kind == 0:
            break
        if kind == 1:
            off += 1
            continue
        length = buf[off + 1] if off + 1 < end else 0
        if length < 2 or off + length > end:
            break
        if kind in _IPV4_SOURCE_ROUTES:
            routes, with_addresses = routes + 1, length >= 7
        off += length
    return not (routes == 1 and with_addresses)


def _parse_ipv4(buf: memoryview, l3: int) -> Layout:
    if len(buf) < l3 + 20:
        raise _truncated(f"an IPv4 header at offset {l3}", l3 + 20, len(buf))
    ihl = (buf[l3] & 0xF) * 4
    total = int.from_bytes(buf[l3 + 2:l3 + 4], "big")
    if ihl < 20 or total < ihl:
        raise CsumValueError(f"packet: malformed IPv4 header (header length {ihl}, total length {total})",
                             code="bad-packet")
    end = l3 + total
    if len(buf) < end:
        raise _truncated(f"IPv4 total length {total} at offset {l3}", end, len(buf))
    frag = int.from_bytes(buf[l3 + 6:l3 + 8], "big")
    fragment: Literal["none", "first", "later"] = "later" if frag & 0x1FFF else "first" if frag & 0x2000 else "none"
    proto, l4 = buf[l3 + 9], l3 + ihl
    dst_in_pseudo = _ipv4_dst_in_pseudo(buf, l3 + 20, l3 + ihl)
    layout = Layout(version=4, l3=l3, l3_header_end=l3 + ihl, l4_start=l3 + ihl, end=end, ip_csum=l3 + 10,
                    saddr=l3 + 12, daddr=l3 + 16, ttl=l3 + 8, fragment=fragment, proto=None, l4=None,
                    l4_csum=None, pseudo=False, daddr_in_pseudo=dst_in_pseudo)
    return _with_l4(buf, layout, proto, l4, fragment)


def _parse_ipv6(buf: memoryview, l3: int) -> Layout:
    if len(buf) < l3 + 40:
        raise _truncated(f"an IPv6 header at offset {l3}", l3 + 40, len(buf))
    end = l3 + 40 + int.from_bytes(buf[l3 + 4:l3 + 6], "big")
    if len(buf) < end:
        raise _truncated(f"IPv6 payload length {end - l3 - 40} at offset {l3}", end, len(buf))
    nxt, off = buf[l3 + 6], l3 + 40
    fragment: Literal["none", "first", "later"] = "none"
    dst_in_pseudo = True
    while nxt in _IPV6_EXT or nxt == _IPV6_AH:
        if off + 8 > end:
            raise _truncated(f"IPv6 extension header {nxt} at offset {off}", off + 8, end)
        size = (buf[off + 1] + 2) * 4 if nxt == _IPV6_AH else (buf[off + 1] + 1) * 8
        if nxt == _IPV6_FRAGMENT:
            size = 8
            frag = int.from_bytes(buf[off + 2:off + 4], "big")
            fragment = "later" if frag >> 3 else "first" if frag & 1 else fragment
        if off + size > end:
            raise _truncated(f"IPv6 extension header {nxt} at offset {off}", off + size, end)
        if nxt == _IPV6_ROUTING and buf[off + 2] in (0, 2, 4) and buf[off + 3] and size >= 24:
            dst_in_pseudo = False
        nxt, off = buf[off], off + size
        if fragment == "later":
            break
    layout = Layout(version=6, l3=l3, l3_header_end=l3 + 40, l4_start=off, end=end, ip_csum=None,
                    saddr=l3 + 8, daddr=l3 + 24, ttl=l3 + 7, fragment=fragment, proto=None, l4=None,
                    l4_csum=None, pseudo=False, daddr_in_pseudo=dst_in_pseudo)
    return _with_l4(buf, layout, nxt, off, fragment)


def _with_l4(buf: memoryview, layout: Layout, proto: int, l4: int, fragment: str) -> Layout:
    if fragment == "later":
        return layout
    known = _L4_CSUM.get(proto)
    if known is None or (proto == ICMP and layout.version != 4) or (proto == ICMPV6 and layout.version != 6):
        return replace(layout, proto=proto, l4=l4)
    csum_off, min_len = known
    if proto == TCP and l4 + 13 <= layout.end:
        min_len = max(min_len, (buf[l4 + 12] >> 4) * 4)
    if l4 + min_len > layout.end:
        raise _truncated(f"the {_NAMES[proto]} header at offset {l4}", l4 + min_len, layout.end)
    return replace(layout, proto=proto, l4=l4, l4_csum=l4 + csum_off, pseudo=proto != ICMP)


_NAMES = {TCP: "TCP", UDP: "UDP", UDPLITE: "UDP-Lite", ICMP: "ICMP", ICMPV6: "ICMPv6"}


def protocol_name(proto: int | None) -> str:
    """A readable name for an L4 protocol number."""
    return "no L4 header" if proto is None else _NAMES.get(proto, f"protocol {proto}")


def parse(buf: memoryview, link: Link = "auto") -> Layout:
    """Locate the IP header, addresses, TTL and the checksums of a packet; raise CsumValueError if malformed.

    ``link="auto"`` takes an Ethernet frame when bytes 12..13 (past VLAN tags) are the IPv4/IPv6
    ethertype and the IP version nibble agrees, else bare IP; pass ``"ethernet"`` or ``"ip"`` to decide.
    """
    l3 = _link_start(buf, link)
    if len(buf) <= l3:
        raise _truncated("an IP header", l3 + 20, len(buf))
    version = buf[l3] >> 4
    if version == 4:
        return _parse_ipv4(buf, l3)
    if version == 6:
        return _parse_ipv6(buf, l3)
    raise CsumValueError(f"packet: IP version {version} at offset {l3} is neither 4 nor 6", code="bad-packet")

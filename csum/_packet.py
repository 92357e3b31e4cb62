"""One packet parser for csum.inet (verification) and csum.rewrite (incremental updates).

Link layer: Ethernet II with any number of VLAN tags (TPIDs 0x8100 and 0x88a8 of IEEE 802.1Q,
and 0x9100, the pre-802.1ad QinQ TPID Linux names ETH_P_QINQ1), or bare IP. IPv4 with options
(RFC 791); IPv6 with the extension headers of RFC 8200 section 4 and RFC 7045's list (hop-by-hop,
routing, fragment, AH, destination options, Mobility, HIP, Shim6); TCP, UDP, UDP-Lite, ICMP and
ICMPv6 checksums. Offsets are from the start of the buffer, as a tc BPF program sees them from
``skb->data``.

The L4 pseudo-header (RFC 9293 section 3.1, RFC 768, RFC 8200 section 8.1, RFC 3828, RFC 4443
section 2.3) holds:

* the source: the Home Address option's address when a destination options header carries one
  (RFC 6275 section 6.3; Linux swaps it into the header on receipt, net/ipv6/exthdrs.c
  ``ipv6_dest_hao``), else the header's source;
* the final destination: the last address of the one IPv4 loose/strict source route while the
  route is not used up; with an IPv6 routing header whose Segments Left is non-zero, its last
  address (type 0, RFC 2460; type 2, RFC 6275) or Segment List[0] (type 4, RFC 8754), and for
  other types an address csum does not read (the header's destination is then not the final one);
* the upper-layer length, 32 bits in a jumbogram (RFC 2675; UDP's length field is 0 there).

Malformed packets raise :class:`CsumValueError` with one of these codes: ``bad-value`` (the
``link`` argument), ``truncated`` (the buffer ends before a header or length says),
``not-ip`` (EtherType or IP version), ``bad-ihl``, ``bad-length`` (IPv4 total length, IPv6
payload or Jumbo Payload length, UDP length, extension headers past the payload) and
``bad-option`` (IPv4 options, including a second source route, which RFC 791 forbids and Linux's
net/ipv4/ip_options.c ``__ip_options_compile`` rejects; IPv6 options).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from .errors import CsumValueError

#: Link-layer names; "ether" is an alias of "ethernet" (csum.inet's original spelling).
Link = Literal["auto", "ethernet", "ether", "ip"]
#: "none"; "first" (offset 0, more fragments: the L4 checksum covers bytes not here); "later" (offset > 0:
#: no L4 header here); "atomic" (an IPv6 fragment header with offset 0 and M=0, RFC 6946: the whole datagram).
Fragment = Literal["none", "first", "later", "atomic"]

TCP, UDP, UDPLITE, ICMP, ICMPV6 = 6, 17, 136, 1, 58
_NAMES = {TCP: "TCP", UDP: "UDP", UDPLITE: "UDP-Lite", ICMP: "ICMP", ICMPV6: "ICMPv6"}
#: L4 protocol -> (checksum offset in the L4 header, minimum header length).
_L4_CSUM = {TCP: (16, 20), UDP: (6, 8), UDPLITE: (6, 8), ICMP: (2, 4), ICMPV6: (2, 4)}

_ETH_IPV4, _ETH_IPV6 = 0x0800, 0x86DD
_VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
_HOP_BY_HOP, _ROUTING, _FRAGMENT, _AH, _DEST_OPTS, _NO_NEXT = 0, 43, 44, 51, 60, 59
#: IPv6 extension headers walked to reach the L4 header: the above and Mobility, HIP, Shim6 (RFC 7045).
_IPV6_EXT = frozenset({_HOP_BY_HOP, _ROUTING, _FRAGMENT, _AH, _DEST_OPTS, 135, 139, 140})
_JUMBO, _HOME_ADDRESS = 0xC2, 0xC9
#: IPv4 loose and strict source route options (RFC 791).
_IPV4_SOURCE_ROUTES = (0x83, 0x89)


@dataclass(frozen=True)
class Layout:
    """Where things are in one packet (absolute offsets into the buffer) and what its checksums cover."""

    #: The link layer found: "ethernet" (l3 is past the Ethernet header and tags) or "ip" (l3 is 0).
    link: Literal["ethernet", "ip"]
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
    #: Offset of the source address the pseudo-header uses (saddr, or the Home Address option's).
    pseudo_saddr: int
    #: Offset of the final destination the pseudo-header uses; None when it is one csum cannot read.
    pseudo_daddr: int | None
    #: Whether the IPv6 length came from a Jumbo Payload option (RFC 2675).
    jumbo: bool
    fragment: Fragment
    #: The L4 protocol number (IPv4 protocol, or the next header after the extension headers).
    proto: int
    #: L4 header offset; None in a non-first fragment.
    l4: int | None = None
    #: The upper-layer length in the pseudo-header (UDP: its length field); None in a fragment.
    l4_len: int | None = None
    #: Offset of the L4 checksum; None when unknown here (other protocol, later fragment, cut first fragment).
    l4_csum: int | None = None
    #: Whether the L4 checksum covers a pseudo-header (TCP, UDP, UDP-Lite, ICMPv6; not ICMPv4).
    pseudo: bool = False

    @property
    def header_len(self) -> int:
        """The IPv4 header length (IHL * 4) or 40 for IPv6."""
        return self.l3_header_end - self.l3

    @property
    def saddr_in_pseudo(self) -> bool:
        """Whether the header's source address is the pseudo-header's (not with a Home Address option)."""
        return self.pseudo_saddr == self.saddr

    @property
    def daddr_in_pseudo(self) -> bool:
        """Whether the header's destination is the pseudo-header's (not with a live source route / routing header)."""
        return self.pseudo_daddr == self.daddr

    @property
    def has_ports(self) -> bool:
        """Whether the L4 header starts with 16-bit source and destination ports."""
        return self.proto in (TCP, UDP, UDPLITE) and self.l4 is not None


def protocol_name(proto: int) -> str:
    """A readable name for an L4 protocol number."""
    return _NAMES.get(proto, f"protocol {proto}")


def _malformed(what: str, code: str) -> CsumValueError:
    return CsumValueError(f"packet: {what}", code=code)


def _need(buf: memoryview, end: int, what: str) -> None:
    if end > len(buf):
        raise _malformed(f"truncated: {what} needs {end} bytes, packet has {len(buf)}", "truncated")


def _u16(buf: memoryview, at: int) -> int:
    return int.from_bytes(buf[at:at + 2], "big")


def _ether_l3(buf: memoryview, strict: bool) -> int | None:
    """Offset of the IP header past the Ethernet header and VLAN tags; None (or an error if strict) if not IP."""
    at = 12
    if strict:
        _need(buf, at + 2, "Ethernet header")
    while len(buf) >= at + 2 and _u16(buf, at) in _VLAN_TPIDS:
        at += 4
        if strict:
            _need(buf, at + 2, "802.1Q tag")
    if len(buf) < at + 3:
        if strict:
            _need(buf, at + 3, "IP header")
        return None
    ethertype, version = _u16(buf, at), buf[at + 2] >> 4
    if (ethertype, version) in ((_ETH_IPV4, 4), (_ETH_IPV6, 6)):
        return at + 2
    if not strict:
        return None
    if ethertype not in (_ETH_IPV4, _ETH_IPV6):
        raise _malformed(f"EtherType {ethertype:#06x} at offset {at} is neither IPv4 (ethertype 0x0800) nor IPv6 "
                         "(0x86dd)", "not-ip")
    raise _malformed(f"EtherType {ethertype:#06x} at offset {at} but IP version {version}", "not-ip")


def _fits(buf: memoryview, at: int) -> bool:
    """Whether an IP header at ``at`` has version 4 or 6 and lengths that fit the buffer."""
    if len(buf) <= at:
        return False
    version, ihl = buf[at] >> 4, (buf[at] & 0xF) * 4
    if version == 4:
        return len(buf) >= at + 20 and 20 <= ihl <= _u16(buf, at + 2) <= len(buf) - at
    return version == 6 and len(buf) >= at + 40 and at + 40 + _u16(buf, at + 4) <= len(buf)


def _link(buf: memoryview, link: Link) -> tuple[Literal["ethernet", "ip"], int]:
    if link not in ("auto", "ethernet", "ether", "ip"):
        raise CsumValueError(f"link must be 'auto', 'ethernet' (or 'ether') or 'ip', got {link!r}", code="bad-value")
    if link == "ip":
        return "ip", 0
    at = _ether_l3(buf, strict=link != "auto")  # strict: an int or an error
    if at is not None and (link != "auto" or _fits(buf, at) or not _fits(buf, 0)):
        return "ethernet", at
    return "ip", 0


def _ipv4_final_destination(buf: memoryview, start: int, end: int, daddr: int) -> int:
    """Walk the IPv4 options; return the offset of the final destination (RFC 791 source routes)."""
    at, final, routes = start, daddr, 0
    while at < end:
        kind = buf[at]
        if kind == 0:
            break
        if kind == 1:
            at += 1
            continue
        if at + 2 > end or not 2 <= buf[at + 1] <= end - at:
            raise _malformed(f"IPv4 option {kind} at offset {at} has a bad length", "bad-option")
        size = buf[at + 1]
        if kind in _IPV4_SOURCE_ROUTES:
            routes += 1
            pointer = buf[at + 2] if size > 2 else 0
            if size < 3 or (size - 3) % 4 or pointer < 4:
                raise _malformed(f"source route option at offset {at} is malformed", "bad-option")
            if routes > 1:
                raise _malformed("more than one IPv4 source route option (RFC 791)", "bad-option")
            if size >= 7 and pointer <= size:  # route not used up: the final destination is its last address
                final = at + size - 4
        at += size
    return final


def _ipv6_option(buf: memoryview, start: int, end: int, wanted: int) -> tuple[int, int] | None:
    """(offset, length) of the data of the first option of type ``wanted`` in a hop-by-hop/destination header."""
    at = start
    while at < end:
        kind = buf[at]
        if kind == 0:  # Pad1
            at += 1
            continue
        if at + 2 > end or at + 2 + buf[at + 1] > end:
            raise _malformed(f"IPv6 option {kind:#04x} at offset {at} overruns its header", "bad-option")
        if kind == wanted:
            return at + 2, buf[at + 1]
        at += 2 + buf[at + 1]
    return None


def _routing_destination(buf: memoryview, at: int, size: int) -> int | None:
    """Offset of the final destination named by a routing header with Segments Left > 0 (RFC 8200 8.1)."""
    kind = buf[at + 2]
    if kind in (0, 2) and size >= 24:  # type 0 (RFC 2460) and type 2 (RFC 6275): the last address
        return at + size - 16
    if kind == 4 and size >= 24:  # segment routing (RFC 8754): Segment List[0] is the final segment
        return at + 8
    return None


def _parse_ipv4(buf: memoryview, link: Literal["ethernet", "ip"], l3: int) -> Layout:
    _need(buf, l3 + 20, "IPv4 header")
    ihl = buf[l3] & 0x0F
    if ihl < 5:
        raise _malformed(f"IPv4 IHL is {ihl}, below the minimum of 5", "bad-ihl")
    _need(buf, l3 + 4 * ihl, f"IPv4 header with IHL {ihl}")
    total = _u16(buf, l3 + 2)
    if total < 4 * ihl:
        raise _malformed(f"IPv4 total length {total} is shorter than its {4 * ihl}-byte header", "bad-length")
    _need(buf, l3 + total, f"IPv4 total length {total}")
    frag = _u16(buf, l3 + 6)
    fragment: Fragment = "later" if frag & 0x1FFF else "first" if frag & 0x2000 else "none"
    final = _ipv4_final_destination(buf, l3 + 20, l3 + 4 * ihl, l3 + 16)
    layout = Layout(link=link, version=4, l3=l3, l3_header_end=l3 + 4 * ihl, l4_start=l3 + 4 * ihl,
                    end=l3 + total, ip_csum=l3 + 10, saddr=l3 + 12, daddr=l3 + 16, ttl=l3 + 8, pseudo_saddr=l3 + 12,
                    pseudo_daddr=final, jumbo=False, fragment=fragment, proto=buf[l3 + 9])
    return _with_l4(buf, layout)


def _parse_ipv6(buf: memoryview, link: Literal["ethernet", "ip"], l3: int) -> Layout:
    _need(buf, l3 + 40, "IPv6 header")
    plen, nh = _u16(buf, l3 + 4), buf[l3 + 6]
    end = l3 + 40 + plen
    if plen:
        _need(buf, end, f"IPv6 payload length {plen}")
    src, dst, pos, jumbo = l3 + 8, l3 + 24, l3 + 40, False
    fragment: Fragment = "none"
    while nh in _IPV6_EXT:
        _need(buf, pos + 8, "IPv6 extension header")
        size = 8 if nh == _FRAGMENT else (buf[pos + 1] + 2) * 4 if nh == _AH else (buf[pos + 1] + 1) * 8
        _need(buf, pos + size, "IPv6 extension header")
        if nh == _HOP_BY_HOP and pos == l3 + 40:
            option = _ipv6_option(buf, pos + 2, pos + size, _JUMBO)
            if option is not None:
                length = int.from_bytes(buf[option[0]:option[0] + option[1]], "big")
                if plen or option[1] != 4 or length <= 0xFFFF:
                    raise _malformed("Jumbo Payload option needs payload length 0, 4 bytes and a length above "
                                     "65535 (RFC 2675)", "bad-length")
                end, jumbo = l3 + 40 + length, True
                _need(buf, end, f"jumbo payload length {length}")
        elif nh == _ROUTING and buf[pos + 3]:
            dst = _routing_destination(buf, pos, size)
        elif nh == _DEST_OPTS:
            option = _ipv6_option(buf, pos + 2, pos + size, _HOME_ADDRESS)
            if option is not None:
                if option[1] != 16:
                    raise _malformed("Home Address option must hold 16 bytes", "bad-option")
                src = option[0]
        elif nh == _FRAGMENT:
            word = _u16(buf, pos + 2)
            fragment = "later" if word >> 3 else "first" if word & 1 else "atomic"
        nh, pos = buf[pos], pos + size
        if pos > end:
            raise _malformed(f"IPv6 extension headers run past the payload end ({end})", "bad-length")
        if fragment == "later":  # what follows is fragment data, not headers (RFC 8200 section 4.5)
            break
    if not plen and not jumbo and nh != _NO_NEXT:
        raise _malformed("IPv6 payload length 0 without a Jumbo Payload option", "bad-length")
    layout = Layout(link=link, version=6, l3=l3, l3_header_end=l3 + 40, l4_start=pos, end=end, ip_csum=None,
                    saddr=l3 + 8, daddr=l3 + 24, ttl=l3 + 7, pseudo_saddr=src, pseudo_daddr=dst, jumbo=jumbo,
                    fragment=fragment, proto=nh)
    return _with_l4(buf, layout)


def _with_l4(buf: memoryview, layout: Layout) -> Layout:
    """Add the L4 header, checksum and pseudo-header length; check the header fits the datagram."""
    proto, l4, fragment = layout.proto, layout.l4_start, layout.fragment
    if fragment == "later":
        return layout
    known = _L4_CSUM.get(proto)
    if known is None or proto == (ICMP if layout.version == 6 else ICMPV6):
        return replace(layout, l4=l4)
    field, minimum = known
    pseudo = proto != ICMP
    if fragment == "first":  # the header itself may be cut short (RFC 1858 tiny fragments)
        csum = l4 + field if l4 + field + 2 <= layout.end else None
        return replace(layout, l4=l4, l4_csum=csum, pseudo=pseudo)
    available = layout.end - l4
    if proto == TCP and available >= 13:
        minimum = max(minimum, (buf[l4 + 12] >> 4) * 4)
    if available < minimum:
        name = _NAMES[proto]
        raise _malformed(f"truncated: the {name} header at offset {l4} needs {l4 + minimum} bytes, the "
                         f"{name.lower()} segment has {available} bytes", "truncated")
    length = available
    if proto == UDP:
        ulen = _u16(buf, l4 + 4)
        if ulen or layout.version == 4 or length <= 0xFFFF:  # length 0 only in a jumbogram (RFC 2675 section 4)
            if not 8 <= ulen <= length:
                raise _malformed(f"UDP length {ulen} outside 8..{length} (the IP payload)", "bad-length")
            length = ulen
    return replace(layout, l4=l4, l4_len=length, l4_csum=l4 + field, pseudo=pseudo)


def parse(buf: memoryview, link: Link = "auto") -> Layout:
    """Locate the IP header, addresses, TTL, pseudo-header fields and checksums; raise CsumValueError if malformed.

    ``link="auto"`` takes an Ethernet frame when bytes 12..13 (past VLAN tags) are the IPv4/IPv6
    ethertype, the IP version nibble agrees and, if the buffer also reads as a bare IP datagram,
    the frame's IP lengths fit the buffer; else bare IP. Pass ``"ethernet"`` (or ``"ether"``) or
    ``"ip"`` to decide.
    """
    kind, l3 = _link(buf, link)
    _need(buf, l3 + 1, "IP header")
    version = buf[l3] >> 4
    if version == 4:
        return _parse_ipv4(buf, kind, l3)
    if version == 6:
        return _parse_ipv6(buf, kind, l3)
    raise _malformed(f"IP version {version} at offset {l3} is neither 4 nor 6", "not-ip")

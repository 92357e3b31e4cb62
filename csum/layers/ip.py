"""The walker's IP layers: IPv4 with its options, IPv6 with its extension headers, and the pseudo-header's
addresses they name (RFC 791 source routes; RFC 8200 routing headers, RFC 6275 Home Address, RFC 2675 jumbograms).
Table "ip.version" chooses between them where the version nibble decides; table "ip.proto" what follows
(csum/layers/transport.py).
"""

from __future__ import annotations

from ..errors import Code
from . import table as T
from .dissect import Walker, _Bad, _Cut, handles
from .reasons import R
from .stack import Field, Fragment, IPLayer
from .transport import partial, upper

_VERSIONS = T.DISSECTORS["ip.version"]


@handles("ip")
def h_ip(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    w.need(at + 1, "IP header")
    version = w.b[at] >> 4
    name = _VERSIONS.get(version)
    if name is None:
        w.not_ip(f"IP version {version} at offset {at} is neither 4 nor 6")
    w.dispatch(name, at, end, depth, path)


@handles("ipv4")
def h_ipv4(w: Walker, at: int, end: int, depth: int, path: str, quote: bool = False) -> None:
    path += "/ipv4" if path else "ipv4"
    if at < w.n and w.b[at] >> 4 == 4:  # an IPv4 header, however it ends (Walker.inner: not a port's failed guess)
        w.known += 1
    b, h = w.b, T.IPHDR
    if not quote:
        w.inside(at + h.size, end, "IPv4 header")
    if at + h.size > w.n:
        if quote:
            return
        if at + h.size <= w.wire:
            w.emit(Field(T.IPV4_HEADER, path, depth, at, w.stored_or_none(at + h.check),
                            na=R.NOT_CAPTURED))
        w.need(at + h.size, "IPv4 header")
    if b[at] >> 4 != 4:
        w.not_ip(f"IP version {b[at] >> 4} at offset {at} is not 4")
    ihl = (b[at] & 0x0F) * T.IHL_UNIT
    if ihl < h.size:
        raise _Bad(Code.BAD_IHL, f"packet: IPv4 IHL is {ihl // T.IHL_UNIT}, below the minimum of 5")
    if not quote:
        w.inside(at + ihl, end, f"IPv4 header with IHL {ihl // T.IHL_UNIT}")
    if at + ihl > w.n:
        if quote:
            return
        if at + ihl <= w.wire:
            w.emit(Field(T.IPV4_HEADER, path, depth, at, at + h.check, na=R.NOT_CAPTURED))
        w.need(at + ihl, f"IPv4 header with IHL {ihl // T.IHL_UNIT}")
    # the header is whole: its checksum is judged even if the lengths that follow are not
    w.emit(Field(T.IPV4_HEADER, path, depth, at, at + h.check, ((at, at + ihl),)))
    total, big = w.u16(at + h.tot_len), False
    if total == 0 and not quote and end - at > ihl:  # BIG TCP / TSO super-packet: the captured length
        big, stop = True, end
        w.stack.notes.append(f"{path}: total length 0: a BIG TCP / TSO super-packet, taken at its length")
    else:
        if total < ihl:
            raise _Bad(Code.BAD_LENGTH, f"packet: IPv4 total length {total} is shorter than its {ihl}-byte header")
        stop = at + total
        if stop > end:
            if not quote:
                raise _Bad(Code.TRUNCATED, f"packet: truncated: IPv4 total length {total} needs {stop} bytes, "
                           f"{w.has(end)}")
    final = ipv4_final_destination(w, at + h.size, at + ihl, at + h.daddr)
    frag = w.u16(at + h.frag_off)
    offset, more = (frag & T.IP_OFFSET) * T.FRAG_UNIT, bool(frag & T.IP_MF)
    fragment: Fragment = "later" if offset else "first" if more else "none"
    ip = IPLayer(4, at, at + ihl, at + ihl, stop, at + h.check, at + h.saddr, at + h.daddr, at + h.ttl,
                 at + h.saddr, final, False, fragment, b[at + h.protocol], depth, big, frag_id=w.u16(at + h.id),
                 frag_offset=offset, frag_more=more, frag_data=at + ihl, path=path, copy=quote or w.embedded)
    w.stack.ips.append(ip)
    if quote and stop > end:  # the quote holds part of the datagram: its transport checksum is out of reach
        partial(w, ip, at + ihl, end, depth, path, R.PARTIAL_QUOTE)
        return
    upper(w, ip, ip.proto, at + ihl, stop, depth, path)


def ipv4_final_destination(w: Walker, start: int, end: int, daddr: int) -> int:
    """Walk the IPv4 options; the offset of the final destination (RFC 791 source routes)."""
    b, at, final, routes = w.b, start, daddr, 0
    while at < end:
        kind = b[at]
        if kind == T.IPOPT_END:
            break
        if kind == T.IPOPT_NOOP:
            at += 1
            continue
        if at + 2 > end or not 2 <= b[at + 1] <= end - at:
            raise _Bad(Code.BAD_OPTION, f"packet: IPv4 option {kind} at offset {at} has a bad length")
        size = b[at + 1]
        if kind in T.IPV4_SOURCE_ROUTES:
            routes += 1
            pointer = b[at + 2] if size > 2 else 0
            if size < 3 or (size - 3) % 4 or pointer < 4:
                raise _Bad(Code.BAD_OPTION, f"packet: source route option at offset {at} is malformed")
            if routes > 1:
                raise _Bad(Code.BAD_OPTION, "packet: more than one IPv4 source route option (RFC 791)")
            if size >= 7 and pointer <= size:  # route not used up: its last address is the final destination
                final = at + size - 4
        at += size
    return final


def ipv6_option(w: Walker, start: int, end: int, wanted: int) -> tuple[int, int] | None:
    """(offset, length) of the data of the first option ``wanted`` in a hop-by-hop/destination header."""
    b, at = w.b, start
    while at < end:
        kind = b[at]
        if kind == T.IPV6_TLV_PAD1:
            at += 1
            continue
        if at + 2 > end or at + 2 + b[at + 1] > end:
            raise _Bad(Code.BAD_OPTION, f"packet: IPv6 option {kind:#04x} at offset {at} overruns its header")
        if kind == wanted:
            return at + 2, b[at + 1]
        at += 2 + b[at + 1]
    return None

@handles("ipv6")
def h_ipv6(w: Walker, at: int, end: int, depth: int, path: str, quote: bool = False) -> None:
    path += "/ipv6" if path else "ipv6"
    if at < w.n and w.b[at] >> 4 == 6:  # an IPv6 header, however it ends (Walker.inner: not a port's failed guess)
        w.known += 1
    b, h = w.b, T.IPV6HDR
    if not quote:
        w.inside(at + h.size, end, "IPv6 header")
    if at + h.size > w.n:
        if quote:
            return
        w.need(at + h.size, "IPv6 header")
    if b[at] >> 4 != 6:
        w.not_ip(f"IP version {b[at] >> 4} at offset {at} is not 6")
    plen, nh = w.u16(at + h.payload_len), b[at + h.nexthdr]
    stop = at + h.size + plen
    if plen and stop > end and not quote:
        raise _Bad(Code.TRUNCATED, f"packet: truncated: IPv6 payload length {plen} needs {stop} bytes, "
                   f"{w.has(end)}")
    ip = IPLayer(6, at, at + h.size, at + h.size, stop, None, at + h.saddr, at + h.daddr, at + h.hop_limit,
                 at + h.saddr, at + h.daddr, False, "none", nh, depth, path=path, copy=quote or w.embedded)
    inner_path = path  # the extension headers add to it (AH)
    if nh in T.IPV6_EXT:
        try:
            inner_path = _extensions(w, ip, plen, end, quote, path)
        except _Cut:
            if quote:
                return
            raise
    if not plen and not ip.jumbo and not quote:
        if ip.proto == T.NO_NEXT or ip.l4_start >= end:
            if ip.proto != T.NO_NEXT:
                raise _Bad(Code.BAD_LENGTH, "packet: IPv6 payload length 0 without a Jumbo Payload option")
        else:  # BIG TCP (Linux >= 5.19 without the hop-by-hop header) / GSO super-packet: the captured length
            ip.big, ip.end = True, end
            w.stack.notes.append(f"{inner_path}: payload length 0: a BIG TCP / GSO super-packet, taken at its length")
    w.stack.ips.append(ip)
    if quote and ip.end > end:
        partial(w, ip, ip.l4_start, end, depth, inner_path, R.PARTIAL_QUOTE)
        return
    upper(w, ip, ip.proto, ip.l4_start, ip.end, depth, inner_path)


def _extensions(w: Walker, ip: IPLayer, plen: int, end: int, quote: bool, path: str) -> str:
    """Walk the extension headers from ``ip.l4_start`` (RFC 8200 4, RFC 7045) to the upper layer, setting on ``ip``
    where it starts and its protocol, and what the headers change: the payload's end (Jumbo Payload, RFC 2675),
    the pseudo-header's addresses (a routing header's final destination, a Home Address option), the fragment.
    The path to the upper layer (AH adds to it)."""
    b, unit, pos, nh = w.b, T.IPV6_EXT_UNIT, ip.l4_start, ip.proto
    while nh in T.IPV6_EXT:
        w.need(pos + unit, "IPv6 extension header")
        size = T.FRAG_HDR.size if nh == T.FRAGMENT else (b[pos + 1] + T.AH_BIAS) * T.AH_UNIT if nh == T.AH else \
            (b[pos + 1] + 1) * unit
        w.need(pos + size, "IPv6 extension header")
        read = _EXTENSIONS.get(nh)
        if read is not None:
            read(w, ip, pos, size, plen, end, quote)
        elif nh == T.AH:
            path += f"/{T.AH_NAME}"
        nh, pos = b[pos], pos + size
        ip.l4_start, ip.proto = pos, nh
        if pos > ip.end and (plen or ip.jumbo):
            raise _Bad(Code.BAD_LENGTH, f"packet: IPv6 extension headers run past the payload end ({ip.end})")
        if ip.fragment == "later":  # fragment data follows, not headers (RFC 8200 section 4.5)
            break
    return path


def _hop_by_hop(w: Walker, ip: IPLayer, pos: int, size: int, plen: int, end: int, quote: bool) -> None:
    """The first header's Jumbo Payload option (RFC 2675): the payload's 32-bit length."""
    if pos != ip.l3_header_end:
        return
    option = ipv6_option(w, pos + 2, pos + size, T.JUMBO_OPTION)
    if option is None:
        return
    length = int.from_bytes(w.b[option[0] : option[0] + option[1]], "big")
    if plen or option[1] != 4 or length <= 0xFFFF:
        raise _Bad(Code.BAD_LENGTH, "packet: Jumbo Payload option needs payload length 0, 4 bytes "
                   "and a length above 65535 (RFC 2675)")
    ip.end, ip.jumbo = ip.l3_header_end + length, True
    if ip.end > end and not quote:
        raise _Bad(Code.TRUNCATED, f"packet: truncated: jumbo payload length {length} needs "
                   f"{ip.end} bytes, {w.has(end)}")


def _routing(w: Walker, ip: IPLayer, pos: int, size: int, plen: int, end: int, quote: bool) -> None:
    """A routing header with segments left names the final destination (RFC 8200 8.1)."""
    if w.b[pos + T.IPV6_RT_SEGMENTS_LEFT]:
        ip.pseudo_daddr = routing_destination(w, pos, size)


def _destination_options(w: Walker, ip: IPLayer, pos: int, size: int, plen: int, end: int, quote: bool) -> None:
    """A Home Address option (RFC 6275 6.3) is the pseudo-header's source."""
    option = ipv6_option(w, pos + 2, pos + size, T.HOME_ADDRESS_OPTION)
    if option is not None:
        if option[1] != 16:
            raise _Bad(Code.BAD_OPTION, "packet: Home Address option must hold 16 bytes")
        ip.pseudo_saddr = option[0]


def _fragment(w: Walker, ip: IPLayer, pos: int, size: int, plen: int, end: int, quote: bool) -> None:
    """The Fragment header (RFC 8200 4.5): the fragment's place and its datagram's identification."""
    fh = T.FRAG_HDR
    word = w.u16(pos + fh.frag_off)
    ip.fragment = "later" if word & T.IP6_OFFSET else "first" if word & T.IP6_MF else "atomic"
    ip.frag_id = int.from_bytes(w.b[pos + fh.identification : pos + fh.size], "big")
    ip.frag_offset, ip.frag_more, ip.frag_data = word & T.IP6_OFFSET, bool(word & T.IP6_MF), pos + fh.size


#: The extension headers whose contents the walk reads (the others are only walked past).
_EXTENSIONS = {T.HOP_BY_HOP: _hop_by_hop, T.ROUTING: _routing, T.DEST_OPTS: _destination_options,
               T.FRAGMENT: _fragment}



def routing_destination(w: Walker, at: int, size: int) -> int | None:
    """Offset of the final destination named by a routing header with Segments Left > 0 (RFC 8200 8.1)."""
    kind = w.b[at + T.IPV6_RT_TYPE]
    if size < T.ROUTING_ADDRESSED:
        return None
    if kind in T.ROUTING_LAST_ADDRESS:
        return at + size - T.IPV6HDR.addr_size
    return at + T.SRH_SEGMENT0_AT if kind == T.ROUTING_SRH else None

# --- above IP ------------------------------------------------------------------------------

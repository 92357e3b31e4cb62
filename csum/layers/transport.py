"""What an IP header carries (table "ip.proto"): the protocols with the Internet checksum (:data:`table.TRANSPORTS`),
what they carry in turn (tables "udp.port" and "tcp.port", a PIM Register's packet, an ICMP error's quote), IP in IP,
Ethernet in IP, AH walked past, ESP. GRE's handler is csum/layers/tunnels.py's.

The checksum's cover follows its table entry's :class:`~csum.layers.table.Cover`; the pseudo-header's addresses are
those the IP layer names (csum/layers/ip.py).
"""

from __future__ import annotations

from ..errors import Code
from . import table as T
from .dissect import LAYERS, Walker, _Bad, _Cut, carries, handles
from .reasons import R, Reason
from .stack import Field, IPLayer

_VERSIONS = T.DISSECTORS["ip.version"]


def entry_for(w: Walker, ip: IPLayer, proto: int, at: int, stop: int) -> T.Protocol | None:
    """The table entry for ``proto`` here: by version and type where one number has several layouts."""
    if proto in (T.IPV6_ONLY if ip.version == 4 else T.IPV4_ONLY):
        return None
    entry = T.TRANSPORTS.get(proto)
    if entry is None or at >= w.n:
        return entry
    first = w.b[at]
    if proto == T.PIM and first == 0x21:  # version 2, type 1: Register
        return T.PIM_REGISTER
    if proto == T.VRRP:
        if first >> 4 == 3:
            return T.VRRP3_ENTRY
        if stop - at == 36 and at + 4 <= w.n and w.b[at + 3] == 7:  # CARP: 36 bytes, authlen 7
            return T.CARP_ENTRY
    if proto == T.OSPF and first == 3:
        return T.OSPF3_ENTRY
    if proto == T.PGM and at + 5 <= w.n and w.b[at + 4] in T.PGM_DATA_TYPES:
        return T.PGM_DATA_ENTRY
    return entry


def partial(w: Walker, ip: IPLayer, at: int, end: int, depth: int, path: str, reason: Reason) -> None:
    """The transport field of a datagram only partly here (a quote, a fragment): reported, not verified."""
    entry = entry_for(w, ip, ip.proto, at, end) if reason is not R.NON_FIRST_FRAGMENT else \
        (None if ip.proto in (T.IPV6_ONLY if ip.version == 4 else T.IPV4_ONLY) else T.TRANSPORTS.get(ip.proto))
    if entry is None:
        return
    if reason is R.NON_FIRST_FRAGMENT:
        w.emit(Field(entry, f"{path}/{entry.name}", depth, at, None, na=reason))
        return
    field_at = at + entry.field
    w.emit(Field(entry, f"{path}/{entry.name}", depth, at, field_at if field_at + 2 <= min(end, w.n) else None,
                 na=reason))
    if depth == 0 and ip is w.stack.ips[0]:
        ip.l4 = at
        ip.l4_csum = field_at if field_at + 2 <= end else None
        ip.pseudo = entry.pseudo is not T.PSEUDO.NEVER


def upper(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """What ``ip`` carries from ``at`` to ``stop``: a fragment's transport field, else table "ip.proto"'s layer."""
    if ip.fragment != "later" and ip is w.stack.ips[0]:
        ip.l4 = at
    if ip.fragment == "later":
        partial(w, ip, at, stop, depth, path, R.NON_FIRST_FRAGMENT)
        return
    if ip.fragment == "first":
        partial(w, ip, at, stop, depth, path, R.NEEDS_REASSEMBLY)
        return
    w.carry(ip, proto, at, stop, depth, path)


@carries("ipv4", "ipv6", "eth")
def encapsulated(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """IP in IP (RFC 2003), IPv6 in IPv4 (RFC 4213), Ethernet in IP (RFC 8986 End.DX2): one encapsulation deeper."""
    w.inner(T.IP_PROTOCOLS[proto], at, stop, depth + 1, path)


@carries(T.AH_NAME)
def authentication_header(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """IPv4's AH (RFC 4302), walked past to what it protects (IPv6's is an extension header, csum/layers/ip.py)."""
    if ip.version != 4:
        return
    w.need(at + 2, "AH header")
    size = (w.b[at + 1] + T.AH_BIAS) * T.AH_UNIT
    w.need(at + size, "AH header")
    upper(w, ip, w.b[at], at + size, stop, depth, f"{path}/{T.AH_NAME}")


@carries(T.ESP_ENTRY.name)
def encrypted(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """ESP (RFC 4303): what it carries is encrypted, reported as not verifiable."""
    w.emit(Field(T.ESP_ENTRY, path + "/esp", depth, at, None, na=R.ENCRYPTED))


@carries(*{entry.name for entry in T.TRANSPORTS.values()})
def checksummed(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """A protocol with the Internet checksum at ``at``, its datagram ending at ``stop``: its field, then what it
    carries."""
    entry = entry_for(w, ip, proto, at, stop)
    if entry is None:
        return
    path = f"{path}/{entry.name}"
    if not _whole_header(w, entry, proto, at, stop, depth, path):
        return
    field_at = at + entry.field
    end, length, na = _cover(w, ip, entry, proto, at, stop)
    pseudo = None
    if entry.pseudo is T.PSEUDO.ALWAYS or (entry.pseudo is T.PSEUDO.IPV6 and ip.version == 6):
        if ip.pseudo_daddr is None:
            na = na or R.UNKNOWN_DESTINATION
        else:
            pseudo = (ip.pseudo_saddr, ip.pseudo_daddr, T.ADDR_SIZES[ip.version], length, proto)
    skip = entry.skip
    covers: tuple[tuple[int, int], ...]
    if skip is not None and na is None and entry is T.OSPF2_ENTRY:
        if w.u16(at + 14) == 2:  # cryptographic authentication: the checksum is not computed (RFC 2328 D.4.3)
            na = R.CRYPTO_AUTH
        covers = ((at, at + skip[0]), (at + skip[1], end))
    else:
        covers = ((at, end),)
    if na is None and end > w.n:
        na = R.NOT_CAPTURED
    if depth == 0 and ip is w.stack.ips[0]:
        ip.l4, ip.l4_len, ip.l4_csum, ip.pseudo = at, length, field_at, entry.pseudo is not T.PSEUDO.NEVER
    w.emit(Field(entry, path, depth, at, field_at if field_at + 2 <= w.n else None, covers, pseudo,
                 ip.version == 6, na, tunnel=False,  # the whole message's alternative only where captured
                 alt_end=stop if entry.cover is T.COVER.PREFIX and stop <= w.n else None,
                 big=ip.big))
    if na is R.NOT_CAPTURED and field_at + 2 > w.n:
        raise _Cut
    above = _ABOVE.get(proto)
    if above is not None:
        above(w, entry, at, end, stop, depth, path)


def _whole_header(w: Walker, entry: T.Protocol, proto: int, at: int, stop: int, depth: int, path: str) -> bool:
    """Whether the header of ``entry`` at ``at`` is whole; if not, its field is reported (not captured, a bad
    length) or the packet is malformed (TCP, UDP, ICMP, ICMPv6: what the old checkers refused)."""
    available = stop - at
    minimum = entry.minimum
    if at + minimum > w.n and at + minimum <= w.wire and available >= minimum:
        w.emit(Field(entry, path, depth, at, w.stored_or_none(at + entry.field), na=R.NOT_CAPTURED))
        raise _Cut
    if proto == T.TCP and available > T.TCP_DOFF_AT and at + T.TCP_DOFF_AT < w.n:
        minimum = max(minimum, (w.b[at + T.TCP_DOFF_AT] >> 4) * T.TCP_DOFF_UNIT)
    if available >= minimum:
        return True
    if proto in (T.TCP, T.UDP, T.ICMP, T.ICMPV6):
        raise _Bad(Code.TRUNCATED, f"packet: truncated: the {entry.name.upper()} header at offset {at} needs "
                   f"{at + minimum} bytes, the {entry.name} segment has {available} bytes")
    w.emit(Field(entry, path, depth, at, w.stored_or_none(at + entry.field) if available >= entry.field
                 + 2 else None, na=R.BAD_LENGTH))
    return False


def _cover(w: Walker, ip: IPLayer, entry: T.Protocol, proto: int, at: int,
           stop: int) -> tuple[int, int, Reason | None]:
    """(end, upper-layer length, why not verifiable or None) of the checksum of ``entry`` at ``at``."""
    available = stop - at
    cover, length, na, end = entry.cover, available, None, stop
    if cover is T.COVER.LENGTH_FIELD:
        length = w.u16(at + entry.length_at)
        if proto == T.UDP:
            if not length and ip.version == 6 and available > 0xFFFF:  # 0 only in a jumbogram (RFC 2675 4)
                length = available
            elif not 8 <= length <= available:
                raise _Bad(Code.BAD_LENGTH, f"packet: UDP length {length} outside 8..{available} (the IP payload)")
        elif not entry.minimum <= length <= available:
            na = R.BAD_LENGTH
        end = at + length
    elif cover is T.COVER.COVERAGE:
        covered = coverage(w, proto, at, available)
        if covered is None:
            na = R.BAD_COVERAGE  # the end stays at stop
        else:
            end = covered
    elif cover is T.COVER.PREFIX:
        end, length = at + entry.prefix, entry.prefix
    return end, length, na


def _udp(w: Walker, entry: T.Protocol, at: int, end: int, stop: int, depth: int, path: str) -> None:
    """Table "udp.port": a tunnel by the destination port (or by the source port, the lower of the two, for
    table.UDP_TUNNELS_BY_SOURCE) one encapsulation deeper, or an embedded packet's protocol. An empty datagram
    carries neither (tshark calls no port's dissector on it either)."""
    source, destination, payload = w.u16(at), w.u16(at + 2), at + T.UDP_ENTRY.minimum
    tunnel = T.UDP_TUNNELS.get(destination)
    if tunnel is None and source < destination and source in T.UDP_TUNNELS_BY_SOURCE:
        tunnel = T.UDP_TUNNELS[source]
    if tunnel is not None:
        w.stack.fields[-1].tunnel = True
        if payload < end:
            w.inner(tunnel, payload, end, depth + 1, path, guessed=True)
    elif destination in T.UDP_EMBEDDED and payload < end:
        w.inner(T.UDP_EMBEDDED[destination], payload, end, depth, path, guessed=True)


def _tcp(w: Walker, entry: T.Protocol, at: int, end: int, stop: int, depth: int, path: str) -> None:
    """Table "tcp.port": an embedded packet's protocol by either port, in a segment that has a payload."""
    name = T.TCP_EMBEDDED.get(w.u16(at + 2)) or T.TCP_EMBEDDED.get(w.u16(at))
    payload = at + (w.b[at + T.TCP_DOFF_AT] >> 4) * T.TCP_DOFF_UNIT
    if name is not None and payload < end:
        w.inner(name, payload, end, depth, path, guessed=True)


def _pim(w: Walker, entry: T.Protocol, at: int, end: int, stop: int, depth: int, path: str) -> None:
    """A PIM Register's multicast packet (RFC 7761 4.9.3), one encapsulation deeper."""
    if entry is T.PIM_REGISTER:
        w.inner("ip", at + T.PIM_REGISTER.prefix, stop, depth + 1, path)


_ICMP_TYPES, _ICMPV6_TYPES = T.DISSECTORS["icmp.type"], T.DISSECTORS["icmpv6.type"]


def _icmp(w: Walker, entry: T.Protocol, at: int, end: int, stop: int, depth: int, path: str) -> None:
    """Tables "icmp.type" and "icmpv6.type": an ICMP or ICMPv6 error's quote (table.ICMP_QUOTES)."""
    layer = (_ICMP_TYPES if entry is T.ICMP_ENTRY else _ICMPV6_TYPES).get(w.b[at])
    if layer is not None:
        w.dispatch(layer, at, stop, depth, path)


@handles("icmp-quote")
def h_icmp_quote(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """The datagram an ICMP error at ``at`` quotes, its message ending at ``end`` (table.ICMP_ERRORS)."""
    quote(w, T.ICMP_ERRORS[w.b[at]], at, end, depth, path)


@handles("icmpv6-quote")
def h_icmpv6_quote(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """The datagram an ICMPv6 error at ``at`` quotes, its message ending at ``end`` (table.ICMPV6_ERRORS)."""
    quote(w, T.ICMPV6_ERRORS[w.b[at]], at, end, depth, path)


#: IP protocol -> what reads what its message carries.
_ABOVE = {T.UDP: _udp, T.TCP: _tcp, T.PIM: _pim, T.ICMP: _icmp, T.ICMPV6: _icmp}


def coverage(w: Walker, proto: int, at: int, available: int) -> int | None:
    """End of the bytes a UDP-Lite (RFC 3828 3.1) or DCCP (RFC 4340 9.2) checksum covers; None if invalid."""
    if proto == T.UDPLITE:
        cov = w.u16(at + 4)
        if cov == 0:
            return at + available
        return at + cov if 8 <= cov <= available else None
    offset = w.b[at + 4] * 4
    cscov = w.b[at + 5] & 0x0F
    if not 12 <= offset <= available:
        return None
    if cscov == 0:
        return at + available
    cov = offset + (cscov - 1) * 4
    return at + min(cov, available)


def quote(w: Walker, spec: tuple[int, int] | None, at: int, stop: int, depth: int, path: str) -> None:
    """The datagram quoted by an ICMP error at ``at`` (RFC 792, RFC 4443) and an RFC 4884 extension."""
    start, end, ext, guessed = at + T.ICMP_QUOTE, stop, None, False
    if spec is not None and at + spec[0] < w.n:
        length = w.b[at + spec[0]] * spec[1]
        if not length:  # RFC 4884 5.5: extensions of older senders follow a 128-byte quote, length 0
            length, guessed = T.ICMP_EXT_MIN_QUOTE, True
        if start + length + T.ICMP_EXT_HLEN <= min(stop, w.n) and length >= T.ICMP_EXT_MIN_QUOTE \
                and w.b[start + length] >> 4 == T.ICMP_EXT_VERSION \
                and (not guessed or padded_quote(w, start, length)):
            end = ext = start + length
    if start < min(end, w.n):
        version = w.b[start] >> 4
        if version in _VERSIONS and depth < T.MAX_DEPTH:
            try:
                LAYERS[_VERSIONS[version]](w, start, min(end, w.wire), depth + 1, path, True)
            except _Bad as exc:
                w.stack.notes.append(f"{path}: quoted datagram: {exc}")
    if ext is not None:
        entry = T.ICMP_EXT_ENTRY
        na = R.NOT_CAPTURED if stop > w.n else None
        w.emit(Field(entry, f"{path}/{entry.name}", depth, ext, ext + 2, ((ext, stop),), na=na))


def padded_quote(w: Walker, start: int, length: int) -> bool:
    """Whether a quoted IP datagram ends inside ``length`` bytes, zeros after it (RFC 4884 5.5's old senders)."""
    version = w.b[start] >> 4
    v4, v6 = T.IPHDR, T.IPV6HDR
    if version == 4 and start + v4.tot_len + 2 <= w.n:
        size = w.u16(start + v4.tot_len)
    elif version == 6 and start + v6.payload_len + 2 <= w.n:
        size = v6.size + w.u16(start + v6.payload_len)
    else:
        return False
    return size <= length and not any(w.b[start + size : start + length])

"""The walker's link layers and what an EtherType names: capture link types (table "link.type"), Ethernet and its
tags, LLC/SNAP, MPLS, PPPoE and PPP, IEEE 802.11 and its capture headers, Frame Relay, MACsec, Arista's timestamp.

Each handler registers under its table.DISSECTORS layer name (csum/layers/dissect.py); every number is
:mod:`csum.layers.table`'s, with its source there.
"""

from __future__ import annotations

from ..errors import Code
from . import table as T
from .dissect import LINK_KINDS, Walker, _Bad, handles, link_kind
from .reasons import R
from .stack import Field


def link(w: Walker, linktype: int, at: int, depth: int = 0, path: str = "") -> None:
    """Follow table "link.type": the capture link type ``linktype``'s layer at ``at``."""
    entry = T.LINKTYPES.get(linktype)
    if entry is None:
        if not path:
            unknown_link(w, linktype, at)
            return
        w.not_ip(f"link type {linktype} inside {path} is not walked")
    if entry.kind != "ip":  # a raw IP capture has no link layer in the path
        path = f"{path}/{entry.name}" if path else entry.name
    if not w.stack.link:
        w.stack.link = entry.name
    read = LINK_KINDS.get(entry.kind)
    if read is not None:
        read(w, entry, at, depth, path)
    else:
        w.dispatch(entry.kind, at, w.wire, depth, path)


@link_kind("ethertype")
def k_ethertype(w: Walker, entry: T.LinkType, at: int, depth: int, path: str) -> None:
    """A link header with an EtherType at ``entry.at`` (Cisco HDLC, Linux cooked captures, IPoIB)."""
    w.need(at + entry.header, f"{entry.name} header")
    ethertype(w, w.u16(at + entry.at), at + entry.at, at + entry.header, w.wire, depth, path)


@link_kind("family-host", "family-net")
def k_family(w: Walker, entry: T.LinkType, at: int, depth: int, path: str) -> None:
    """DLT_NULL / DLT_LOOP: a 4-byte BSD address family (table "null.family"), in either byte order."""
    w.need(at + 4, f"{entry.name} header")
    word = w.b[at : at + 4]
    family = int.from_bytes(word, "little")
    name = T.BSD_FAMILIES.get(family) or T.BSD_FAMILIES.get(int.from_bytes(word, "big"))
    if name is None:
        w.not_ip(f"address family {family} in the {entry.name} header")
    w.dispatch(name, at + 4, w.wire, depth, path)


@link_kind("arcnet")
def k_arcnet(w: Walker, entry: T.LinkType, at: int, depth: int, path: str) -> None:
    """ARCNET: the protocol id (table "arcnet.protocol"), RFC 1201's split flag and sequence after it."""
    w.need(at + entry.header, "ARCNET header")
    proto = T.ARCNET_PROTOCOLS.get(w.b[at + entry.at])
    if proto is None:
        w.not_ip(f"ARCNET protocol {w.b[at + entry.at]:#04x}")
    w.dispatch(proto[0], at + entry.header + proto[1], w.wire, depth, path)


@link_kind("ipnet")
def k_ipnet(w: Walker, entry: T.LinkType, at: int, depth: int, path: str) -> None:
    """Solaris IPNET: its family byte (table "ipnet.family")."""
    w.need(at + entry.header, "IPNET header")
    name = T.IPNET_FAMILIES.get(w.b[at + entry.at])
    if name is None:
        w.not_ip(f"IPNET family {w.b[at + entry.at]}")
    w.dispatch(name, at + entry.header, w.wire, depth, path)


def unknown_link(w: Walker, linktype: int, at: int) -> None:
    """A capture link type the table has no layout for: one whose frames hold no Internet checksum csum could
    reach (an 802.15.4 frame by its contents), or unsupported."""
    if linktype in T.NO_CHECKSUM_LINKTYPES or (linktype in T.IEEE802154_LINKTYPES and not lowpan(w, at)):
        w.stack.no_checksum = linktype
    else:
        w.stack.unsupported = linktype


def lowpan(w: Walker, at: int) -> bool:
    """Whether the IEEE 802.15.4 MAC frame at ``at`` may carry 6LoWPAN (so an Internet checksum): a data frame
    (IEEE 802.15.4-2011 5.2.1) whose payload is encrypted, laid out as the 2015 revision has it, cut short, or does
    not start with RFC 4944's "Not a LoWPAN frame" dispatch 00xxxxxx."""
    if at + 2 > w.n:
        return at + 2 <= w.wire
    fc = w.b[at] | (w.b[at + 1] << 8)
    if fc & T.IEEE802154_TYPE != T.IEEE802154_DATA:
        return False
    dst, src = (fc >> T.IEEE802154_DST_MODE) & 3, (fc >> T.IEEE802154_SRC_MODE) & 3
    if fc & T.IEEE802154_SECURITY or (fc >> T.IEEE802154_VERSION) & 3 >= T.IEEE802154_V2015 \
            or dst not in T.IEEE802154_ADDRESSES or src not in T.IEEE802154_ADDRESSES:
        return True
    pan = T.IEEE802154_PAN_ID
    size = T.IEEE802154_HLEN + T.IEEE802154_ADDRESSES[dst] + T.IEEE802154_ADDRESSES[src] + (pan if dst else 0) \
        + (pan if src and not fc & T.IEEE802154_PANID_COMPRESSION else 0)
    return at + size >= w.n or w.b[at + size] & T.LOWPAN_NALP_MASK != 0


@handles("ethernet")
def h_ethernet(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    eth = T.ETHHDR
    w.need(at + eth.size, "Ethernet header", end)
    ethertype(w, w.u16(at + eth.proto), at + eth.proto, at + eth.size, end, depth, path)


@handles("eth")
def h_eth(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    h_ethernet(w, at, end, depth, f"{path}/eth")


@handles("fabricpath")
def h_fabricpath(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """Cisco FabricPath: its FTag and TTL, then the original Ethernet frame."""
    h_eth(w, at + T.FABRICPATH_TAG, end, depth, f"{path}/fabricpath")


def ethertype(w: Walker, value: int, where: int, at: int, end: int, depth: int, path: str) -> None:
    """Dispatch on an EtherType read at ``where``; the payload starts at ``at`` and ends by ``end``. Tags (VLAN,
    VN-Tag, E-Tag, Cisco MetaData) are walked past, each to the EtherType that follows it."""
    while value in T.VLAN_TPIDS or value in T.ETHER_TAGS:
        tag, size = T.ETHER_TAGS.get(value, ("vlan", T.ETHHDR.vlan_size - 2))
        where = at + size
        w.need(where + 2, f"{tag} tag", end)
        path += f"/{tag}"
        value, at = w.u16(where), where + 2
    if value < 0x0600:  # an 802.3 length: LLC
        llc(w, at, at + value, end, depth, path)
        return
    name = T.ETHERTYPES.get(value)
    if name is None:
        w.not_ip(f"EtherType {value:#06x} at offset {where} is neither IPv4 (ethertype 0x0800) nor IPv6 "
                    "(0x86dd)")
    if name in ("ipv4", "ipv6") and at < w.n and w.b[at] >> 4 != (4 if name == "ipv4" else 6):
        raise _Bad(Code.BAD_VERSION, f"packet: EtherType {value:#06x} at offset {where} but IP version "
                   f"{w.b[at] >> 4}")
    w.dispatch(name, at, end, depth, path)


def llc(w: Walker, at: int, stop: int, end: int, depth: int, path: str) -> None:
    """802.2 LLC ending at ``stop`` (an 802.3 length's end) by ``end``: SNAP with an EtherType (RFC 1042), or
    Cisco's OUI with CDP."""
    w.need(at + 3, "LLC header", end)
    if w.b[at : at + 3] != b"\xaa\xaa\x03":
        w.not_ip(f"LLC {bytes(w.b[at:at + 3]).hex()} at offset {at} (no SNAP)")
    w.need(at + 8, "SNAP header", end)
    path += "/llc"
    if w.b[at + 3 : at + 6] == T.CISCO_OUI and w.u16(at + 6) == T.CDP_PID:
        cdp(w, at + 8, stop, depth, path)
    else:
        ethertype(w, w.u16(at + 6), at + 6, at + 8, min(stop, end), depth, path)


@handles("fddi")
def h_fddi(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """FDDI: frame control and two addresses (13 bytes), then LLC."""
    w.need(at + 13, "FDDI header")
    llc(w, at + 13, w.wire, w.wire, depth, path)


@handles("token-ring")
def h_token_ring(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """IEEE 802.5: access and frame control, two addresses, routing information when the source address's
    top bit says so (its length in the low 5 bits of its first byte); then LLC."""
    w.need(at + 14, "Token Ring header")
    size = 14
    if w.b[at + 8] & 0x80:
        w.need(at + 15, "Token Ring routing information")
        size += w.b[at + 14] & 0x1F
    llc(w, at + size, w.wire, w.wire, depth, path)


@handles("cdp")
def h_cdp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """CDP by EtherType (Cisco HDLC, Ethernet II): to the end of the frame."""
    cdp(w, at, end, depth, path)


def cdp(w: Walker, at: int, stop: int, depth: int, path: str) -> None:
    """A CDP PDU from ``at`` to ``stop`` (the end the 802.3 length gives); its checksum covers all of it."""
    entry = T.CDP_ENTRY
    path += "/cdp"
    if stop - at < entry.minimum:
        raise _Bad(Code.BAD_LENGTH, f"packet: 802.3 length leaves {stop - at} bytes for CDP at offset {at}")
    w.need(at + entry.minimum, "CDP header")
    if stop > w.wire:
        raise _Bad(Code.TRUNCATED, f"packet: truncated: CDP needs {stop} bytes, packet has {w.wire}")
    w.emit(Field(entry, path, depth, at, at + entry.field, ((at, stop),),
                    na=R.NOT_CAPTURED if stop > w.n else None))


@handles("vlan")
def h_vlan(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """A VLAN tag reached through a protocol type (GRE's): TCI, then the EtherType."""
    ethertype(w, min(T.VLAN_TPIDS), at - 2, at, end, depth, path)


@handles("mpls")
def h_mpls(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 3032 label stack; after the bottom of stack: IPv4/IPv6 by the first nibble, 0: RFC 4385 control
    word + Ethernet (RFC 4448 pseudowire)."""
    path += "/mpls"
    while True:
        w.need(at + T.MPLS_LABEL, "MPLS label", end)
        bottom = w.b[at + T.MPLS_BOTTOM_AT] & 1
        at += T.MPLS_LABEL
        if bottom:
            break
    w.need(at + 1, "MPLS payload", end)
    name = T.MPLS_NIBBLES.get(w.b[at] >> 4)
    if name is None:
        w.not_ip(f"MPLS payload starting with {w.b[at]:#04x} at offset {at}")
    w.dispatch(name, at, end, depth, path)


@handles("pw")
def h_pw(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """An RFC 4448 Ethernet pseudowire: the RFC 4385 control word, then the frame."""
    h_eth(w, at + T.MPLS_CONTROL_WORD, end, depth, path)


@handles("pppoe")
def h_pppoe(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 2516 4: the session header, then a PPP frame of Length bytes (the protocol field compressed or not).
    A frame shorter than Length is malformed (Linux ``pppoe_rcv`` drops it); bytes past Length are padding, and
    a datagram longer than Length is cut by it (Linux trims the payload to Length, then ``ip_rcv_core`` drops the
    datagram as truncated)."""
    hdr = T.PPPOE_HDR
    w.need(at + hdr.size, "PPPoE session header", end)
    length = w.u16(at + hdr.length)
    stop = w.bounded(f"PPPoE Length {length}", at + hdr.size + length, end)
    ppp_frame(w, at + hdr.size, stop, depth, f"{path}/pppoe")


def ppp_frame(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """A PPP protocol field (1 byte when its first is odd: Protocol-Field-Compression, RFC 1661 6.5), then the
    payload it names."""
    w.need(at + 1, "PPP protocol field", end)
    if w.b[at] & 1:
        ppp_protocol(w, w.b[at], at + 1, end, depth, path)
    else:
        w.need(at + 2, "PPP protocol field", end)
        ppp_protocol(w, w.u16(at), at + 2, end, depth, path)


def ppp_protocol(w: Walker, proto: int, at: int, end: int, depth: int, path: str) -> None:
    name = T.PPP_PROTOCOLS.get(proto)
    if name is None:
        w.not_ip(f"PPP protocol {proto:#06x} at offset {at - 2}")
    w.dispatch(name, at, end, depth, f"{path}/ppp" if not path.endswith("ppp") else path)


@handles("ppp")
def h_ppp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 1661 (address/control 0xff 0x03 optional, RFC 1662; protocol field compression)."""
    control = T.PPP_ADDRESS_CONTROL
    w.need(at + len(control), "PPP header", end)
    if w.b[at : at + len(control)] == control:
        at += len(control)
    ppp_frame(w, at, end, depth, path)


@handles("ppp-hdlc")
def h_ppp_hdlc(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """A PPP frame, or Cisco HDLC framing (address, control, EtherType) in a PPP or PPP_HDLC capture."""
    w.need(at + 1, "PPP header", end)
    if w.b[at] in T.CHDLC_ADDRESSES:
        w.need(at + T.CHDLC_HLEN, "Cisco HDLC header", end)
        ethertype(w, w.u16(at + 2), at + 2, at + T.CHDLC_HLEN, end, depth, path)
    else:
        h_ppp(w, at, end, depth, path)


@handles("wlan")
def h_wlan(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """IEEE 802.11 data frames: 24-byte header, 30 with four addresses, +2 QoS, +4 HT control; LLC/SNAP."""
    w.need(at + 24, "802.11 header", end)
    wlan(w, at, end, depth, path, w.b[at], w.b[at + 1])


@handles("wlan-in")
def h_wlan_in(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """An IEEE 802.11 frame inside a tunnel (Aruba's GRE)."""
    h_wlan(w, at, end, depth, f"{path}/wlan")


def is_wlan_data(fc: int) -> bool:
    """Whether an 802.11 frame control's first byte is a data frame's that carries data (not a Null frame)."""
    return (fc >> 2) & 3 == 2 and not (fc >> 4) & 4


def wlan(w: Walker, at: int, end: int, depth: int, path: str, fc: int, flags: int) -> None:
    """The 802.11 frame at ``at`` whose frame control field is ``fc`` and ``flags`` (read by the caller: CAPWAP's
    may be byte-swapped)."""
    kind, subtype = (fc >> 2) & 3, fc >> 4
    if not is_wlan_data(fc):
        w.not_ip(f"802.11 frame of type {kind} subtype {subtype} (no data)")
    if flags & 0x40:
        w.not_ip("protected (encrypted) 802.11 data frame")
    size = 24 + (6 if flags & 3 == 3 else 0)
    if subtype & 8:
        size += 2 + (4 if flags & 0x80 else 0)
    w.need(at + size + 8, "802.11 LLC/SNAP header", end)
    snap = at + size
    if w.b[snap : snap + 3] != b"\xaa\xaa\x03":
        w.not_ip(f"802.11 payload without LLC/SNAP at offset {snap}")
    ethertype(w, w.u16(snap + 6), snap + 6, snap + 8, end, depth, path + "/llc")


@handles("radiotap")
def h_radiotap(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    w.need(at + 4, "radiotap header")
    size = int.from_bytes(w.b[at + 2 : at + 4], "little")
    h_wlan(w, at + size, end, depth, path + "/wlan")


@handles("ppi")
def h_ppi(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    w.need(at + 8, "PPI header")
    size = int.from_bytes(w.b[at + 2 : at + 4], "little")
    link(w, int.from_bytes(w.b[at + 4 : at + 8], "little"), at + size, depth, path)


@handles("pktap")
def h_pktap(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    w.need(at + 12, "PKTAP header")
    size = int.from_bytes(w.b[at : at + 4], "little")
    link(w, int.from_bytes(w.b[at + 8 : at + 12], "little"), at + size, depth, path)


@handles("nflog")
def h_nflog(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """Linux NFLOG: family, version, resource id; then TLVs (length, type in host order, 4-byte aligned)."""
    w.need(at + 4, "NFLOG header")
    name = T.LINUX_FAMILIES.get(w.b[at])
    if name is None:
        w.not_ip(f"NFLOG address family {w.b[at]}")
    pos = at + 4
    while pos + 4 <= w.n:
        size = int.from_bytes(w.b[pos : pos + 2], "little")
        kind = int.from_bytes(w.b[pos + 2 : pos + 4], "little") & 0x7FFF
        if size < 4:
            break
        if kind == T.NFULA_PAYLOAD:
            w.dispatch(name, pos + 4, min(pos + size, w.wire), depth, path)
            return
        pos += (size + 3) & ~3
    w.need(pos + 4, "NFLOG payload TLV")
    w.not_ip("NFLOG record without a payload TLV")


@handles("frame-relay")
def h_frame_relay(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """Q.922 address (EA bit ends it), control 0x03, optional pad, NLPID (RFC 2427); SNAP with an EtherType; or,
    without the control byte, Cisco's encapsulation: the EtherType right after the address."""
    pos = at
    while True:
        w.need(pos + 1, "Frame Relay address")
        pos += 1
        if w.b[pos - 1] & 1 and pos - at >= 2:
            break
    w.need(pos + 2, "Frame Relay control and NLPID")
    if w.b[pos] != T.FR_UI:
        ethertype(w, w.u16(pos), pos, pos + 2, end, depth, path)
        return
    pos += 1
    if w.b[pos] == 0 and pos + 1 < w.n:
        pos += 1
    nlpid = w.b[pos]
    if nlpid == T.NLPID_SNAP:
        w.need(pos + 6, "SNAP header")
        ethertype(w, w.u16(pos + 4), pos + 4, pos + 6, end, depth, path)
        return
    name = T.NLPIDS.get(nlpid)
    if name is None:
        w.not_ip(f"Frame Relay NLPID {nlpid:#04x}")
    w.dispatch(name, pos + 1, end, depth, path)


@handles("macsec")
def h_macsec(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """IEEE 802.1AE SecTAG: TCI/AN, short length, packet number, the SCI when TCI's SC bit is set; then the
    user data's EtherType, unless E or C says the data is encrypted (the ICV trails the frame)."""
    path += "/macsec"
    w.need(at + 6, "MACsec SecTAG")
    tci = w.b[at]
    size = 14 if tci & 0x20 else 6
    if tci & 0x0C:
        w.emit(Field(T.MACSEC_ENTRY, path, depth, at, None, na=R.ENCRYPTED))
        return
    w.need(at + size + 2, "MACsec SecTAG")
    ethertype(w, w.u16(at + size), at + size, at + size + 2, end, depth, path)


@handles("arista")
def h_arista(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """Arista's timestamp tag (EtherType 0xd28b), then the frame's own EtherType."""
    w.need(at + 4, "Arista timestamp header")
    size = T.ARISTA_FORMATS.get(w.b[at + 3] >> 4)
    if w.u16(at) != T.ARISTA_TIMESTAMP or size is None:
        w.not_ip(f"Arista header subtype {w.u16(at):#06x} format {w.b[at + 3] >> 4} at offset {at}")
    where = at + 4 + size
    w.need(where + 2, "Arista timestamp header")
    ethertype(w, w.u16(where), where, where + 2, end, depth, path + "/arista")

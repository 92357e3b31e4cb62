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
``bad-value`` for the ``link`` argument). Inside a tunnel or quote, a malformed layer ends that
branch of the walk and is noted in :attr:`Stack.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NoReturn, Union

from ..core.inputs import as_view, check_bool, check_int
from ..errors import Code, CsumValueError
from . import table as T
from .reasons import R, Reason
from .tunnels import HANDLERS as _ENCAPSULATIONS

Link = Union[Literal["auto", "ethernet", "ether", "ip"], int]
Fragment = Literal["none", "first", "later", "atomic"]


@dataclass(slots=True)
class Field:
    """One checksum field found by the walker (absolute offsets into the packet).

    ``covers``: byte ranges summed (the field itself inside the first), ``pseudo``: (source
    offset, destination offset, address size, upper-layer length, protocol) or None; ``alt_end``:
    another coverage end a receiver also accepts (PIM Register over the whole message, RFC 7761
    4.9); ``na``: why it is not verifiable here (None: verify it).
    """

    entry: T.Protocol
    path: str
    depth: int
    header: int
    at: int | None
    covers: tuple[tuple[int, int], ...] = ()
    pseudo: tuple[int, int, int, int, int] | None = None
    v6: bool = False
    na: Reason | None = None
    tunnel: bool = False
    alt_end: int | None = None
    #: In a BIG TCP / TSO super-packet (IP length 0, taken at its captured length).
    big: bool = False
    #: In a packet another one carries as data (an sFlow sample, an OpenFlow packet-in): checked, never corrected
    #: unless asked (``corrections(embedded=True)``).
    embedded: bool = False


@dataclass(slots=True)
class IPLayer:
    """One IPv4/IPv6 header of the stack (absolute offsets); what csum.rewrite needs to edit it.

    ``l3_header_end``: end of the IPv4 header (options included) or the IPv6 fixed header;
    ``l4_start``: where the upper layer or fragment data starts; ``end``: end of the datagram;
    ``ip_csum``: the IPv4 header checksum offset (None for IPv6); ``pseudo_saddr`` /
    ``pseudo_daddr``: the addresses the pseudo-header uses (``pseudo_daddr`` None when csum cannot
    read it); ``l4``, ``l4_len`` (the pseudo-header length), ``l4_csum``: the upper layer's
    header, length and checksum offset, set on the outer IP layer when known; ``pseudo``: whether
    that checksum covers a pseudo-header; ``depth``: 0 for the outer layer, +1 per encapsulation.
    """

    version: int
    l3: int
    l3_header_end: int
    l4_start: int
    end: int
    ip_csum: int | None
    saddr: int
    daddr: int
    ttl: int
    pseudo_saddr: int
    pseudo_daddr: int | None
    jumbo: bool
    fragment: Fragment
    proto: int
    depth: int
    big: bool = False
    l4: int | None = None
    l4_len: int | None = None
    l4_csum: int | None = None
    pseudo: bool = False
    frag_id: int = 0
    frag_offset: int = 0
    frag_more: bool = False
    #: Where the fragmentable part starts (IPv4: past the header; IPv6: past the Fragment header).
    frag_data: int = 0
    #: The link layer (set by :func:`csum.layers.layout`): "ethernet", "ip", "sll" ...
    link: str = ""
    #: The walk's path to this header ("eth/ipv4/udp/gtp/ipv4").
    path: str = ""
    #: A copy of (part of) a datagram sent before: quoted by an ICMP error, or an embedded packet (an sFlow sample,
    #: an OpenFlow packet-in); never reassembled.
    copy: bool = False

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
        """Whether the upper layer starts with 16-bit source and destination ports (TCP, UDP, UDP-Lite, DCCP)."""
        return self.proto in T.PORTED and self.l4 is not None


@dataclass(slots=True)
class Stack:
    """A packet's layers and checksum fields, outer to inner.

    ``link``: the outermost layer's name ("eth", "raw", "sll" ...); ``fields`` in the order they
    appear in the packet; ``ips``: every IP header; ``not_ip``: no IPv4/IPv6 found (ARP ...);
    ``unsupported``: a link type csum does not know whose frames might hold a checksum; ``no_checksum``: the
    link type of a frame that holds none csum could reach (USB, Bluetooth, Netlink, 802.15.4 without 6LoWPAN ...:
    table.NO_CHECKSUM_LINKTYPES); ``malformed``: (code, message) of a bad outer header; ``cut``: the walk stopped
    at the snap length; ``notes``: why inner layers were not walked.
    """

    link: str = ""
    fields: list[Field] = field(default_factory=list)
    ips: list[IPLayer] = field(default_factory=list)
    not_ip: bool = False
    unsupported: int | None = None
    no_checksum: int | None = None
    malformed: tuple[Code, str] | None = None
    cut: bool = False
    notes: list[str] = field(default_factory=list)


class _Bad(Exception):
    """A malformed header: ends the walk (strict: raised as CsumValueError with ``code``)."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Cut(Exception):
    """The captured bytes end here (the snap length)."""




class _Walker:
    __slots__ = ("b", "n", "wire", "stack", "strict", "embedded")

    def __init__(self, buf: memoryview, wire: int, strict: bool, embedded: bool = False) -> None:
        self.b, self.n, self.wire, self.strict, self.embedded = buf, len(buf), wire, strict, embedded
        self.stack = Stack()

    # --- helpers -------------------------------------------------------------------------------

    def u16(self, at: int) -> int:
        b = self.b
        return (b[at] << 8) | b[at + 1]

    def need(self, end: int, what: str, bound: int | None = None) -> None:
        """``what`` ends at ``end``: within ``bound`` (its encapsulation's end) and the packet, else malformed; past
        the captured bytes but within the packet's length: cut by the snap length (:class:`_Cut`)."""
        if bound is not None:
            self.inside(end, bound, what)
        if end > self.n:
            if end <= self.wire:
                raise _Cut
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {end} bytes, packet has {self.wire}")

    def inside(self, stop: int, end: int, what: str) -> None:
        """Malformed when ``what`` runs to ``stop``, past ``end``: the end its encapsulation gives it, when that is
        before the packet's."""
        if stop > end and end < self.wire:
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {stop} bytes, its encapsulation ends at {end}")

    def bounded(self, what: str, stop: int, end: int) -> int:
        """``stop``, the end a length field of ``what`` gives its payload, when the encapsulation holds it."""
        if stop > end:
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {stop} bytes, its encapsulation ends at {end}")
        return stop

    def emit(self, f: Field) -> None:
        if self.embedded:
            f.embedded = True
        self.stack.fields.append(f)

    def stored_or_none(self, at: int) -> int | None:
        return at if at + 2 <= self.n else None

    def inner(self, kind: str, at: int, end: int, depth: int, path: str) -> None:
        """Walk an encapsulated layer: its problems end this branch only."""
        if depth > T.MAX_DEPTH:
            self.stack.notes.append(f"{path}: more than {T.MAX_DEPTH} encapsulations, not walked further")
            return
        try:
            self.dispatch(kind, at, end, depth, path)
        except _Bad as exc:
            self.stack.notes.append(f"{path}: {exc}")

    def dispatch(self, kind: str, at: int, end: int, depth: int, path: str) -> None:
        _HANDLERS[kind](self, at, end, depth, path)

    def walk_embedded(self, kind: str, at: int, depth: int, path: str) -> None:
        """Walk an embedded packet (this walker's whole job, see csum.layers.tunnels): a cut ends it quietly, a
        malformed layer is a note."""
        try:
            self.dispatch(kind, at, self.wire, depth, path)
        except _Cut:
            pass
        except _Bad as exc:
            self.stack.notes.append(f"{path}: embedded packet: {exc}")

    def not_ip(self, what: str) -> NoReturn:
        raise _Bad(Code.NOT_IP, f"packet: {what}")

    # --- link layers ---------------------------------------------------------------------------

    def link(self, linktype: int, at: int, depth: int = 0, path: str = "") -> None:
        entry = T.LINKTYPES.get(linktype)
        if entry is None:
            if not path:
                self.unknown_link(linktype, at)
                return
            self.not_ip(f"link type {linktype} inside {path} is not walked")
        if entry.kind != "ip":  # a raw IP capture has no link layer in the path
            path = f"{path}/{entry.name}" if path else entry.name
        if not self.stack.link:
            self.stack.link = entry.name
        kind = entry.kind
        if kind == "ethertype":
            self.need(at + entry.header, f"{entry.name} header")
            self.ethertype(self.u16(at + entry.at), at + entry.at, at + entry.header, self.wire, depth, path)
        elif kind in ("family-host", "family-net"):
            self.need(at + 4, f"{entry.name} header")
            word = self.b[at : at + 4]
            family = int.from_bytes(word, "little")
            name = T.BSD_FAMILIES.get(family) or T.BSD_FAMILIES.get(int.from_bytes(word, "big"))
            if name is None:
                self.not_ip(f"address family {family} in the {entry.name} header")
            self.dispatch(name, at + 4, self.wire, depth, path)
        elif kind == "arcnet":
            self.need(at + entry.header, "ARCNET header")
            proto = T.ARCNET_PROTOCOLS.get(self.b[at + entry.at])
            if proto is None:
                self.not_ip(f"ARCNET protocol {self.b[at + entry.at]:#04x}")
            self.dispatch(proto[0], at + entry.header + proto[1], self.wire, depth, path)
        elif kind == "ipnet":
            self.need(at + entry.header, "IPNET header")
            name = T.IPNET_FAMILIES.get(self.b[at + entry.at])
            if name is None:
                self.not_ip(f"IPNET family {self.b[at + entry.at]}")
            self.dispatch(name, at + entry.header, self.wire, depth, path)
        else:
            self.dispatch(kind, at, self.wire, depth, path)

    def unknown_link(self, linktype: int, at: int) -> None:
        """A capture link type the table has no layout for: one whose frames hold no Internet checksum csum could
        reach (an 802.15.4 frame by its contents), or unsupported."""
        if linktype in T.NO_CHECKSUM_LINKTYPES or (linktype in T.IEEE802154_LINKTYPES and not self.lowpan(at)):
            self.stack.no_checksum = linktype
        else:
            self.stack.unsupported = linktype

    def lowpan(self, at: int) -> bool:
        """Whether the IEEE 802.15.4 MAC frame at ``at`` may carry 6LoWPAN (so an Internet checksum): a data frame
        (IEEE 802.15.4-2011 5.2.1) whose payload is encrypted, laid out as the 2015 revision has it, cut short, or does
        not start with RFC 4944's "Not a LoWPAN frame" dispatch 00xxxxxx."""
        if at + 2 > self.n:
            return at + 2 <= self.wire
        fc = self.b[at] | (self.b[at + 1] << 8)
        if fc & T.IEEE802154_TYPE != T.IEEE802154_DATA:
            return False
        dst, src = (fc >> T.IEEE802154_DST_MODE) & 3, (fc >> T.IEEE802154_SRC_MODE) & 3
        if fc & T.IEEE802154_SECURITY or (fc >> T.IEEE802154_VERSION) & 3 >= T.IEEE802154_V2015 \
                or dst not in T.IEEE802154_ADDRESSES or src not in T.IEEE802154_ADDRESSES:
            return True
        pan = T.IEEE802154_PAN_ID
        size = T.IEEE802154_HLEN + T.IEEE802154_ADDRESSES[dst] + T.IEEE802154_ADDRESSES[src] + (pan if dst else 0) \
            + (pan if src and not fc & T.IEEE802154_PANID_COMPRESSION else 0)
        return at + size >= self.n or self.b[at + size] & T.LOWPAN_NALP_MASK != 0

    def h_ethernet(self, at: int, end: int, depth: int, path: str) -> None:
        eth = T.ETHHDR
        self.need(at + eth.size, "Ethernet header", end)
        self.ethertype(self.u16(at + eth.proto), at + eth.proto, at + eth.size, end, depth, path)

    def h_eth(self, at: int, end: int, depth: int, path: str) -> None:
        self.h_ethernet(at, end, depth, f"{path}/eth")

    def h_fabricpath(self, at: int, end: int, depth: int, path: str) -> None:
        """Cisco FabricPath: its FTag and TTL, then the original Ethernet frame."""
        self.h_eth(at + T.FABRICPATH_TAG, end, depth, f"{path}/fabricpath")

    def ethertype(self, value: int, where: int, at: int, end: int, depth: int, path: str) -> None:
        """Dispatch on an EtherType read at ``where``; the payload starts at ``at`` and ends by ``end``. Tags (VLAN,
        VN-Tag, E-Tag, Cisco MetaData) are walked past, each to the EtherType that follows it."""
        while value in T.VLAN_TPIDS or value in T.ETHER_TAGS:
            tag, size = T.ETHER_TAGS.get(value, ("vlan", T.ETHHDR.vlan_size - 2))
            where = at + size
            self.need(where + 2, f"{tag} tag", end)
            path += f"/{tag}"
            value, at = self.u16(where), where + 2
        if value < 0x0600:  # an 802.3 length: LLC
            self.llc(at, at + value, end, depth, path)
            return
        name = T.ETHERTYPES.get(value)
        if name is None:
            self.not_ip(f"EtherType {value:#06x} at offset {where} is neither IPv4 (ethertype 0x0800) nor IPv6 "
                        "(0x86dd)")
        if name in ("ipv4", "ipv6") and at < self.n and self.b[at] >> 4 != (4 if name == "ipv4" else 6):
            raise _Bad(Code.BAD_VERSION, f"packet: EtherType {value:#06x} at offset {where} but IP version "
                       f"{self.b[at] >> 4}")
        self.dispatch(name, at, end, depth, path)

    def llc(self, at: int, stop: int, end: int, depth: int, path: str) -> None:
        """802.2 LLC ending at ``stop`` (an 802.3 length's end) by ``end``: SNAP with an EtherType (RFC 1042), or
        Cisco's OUI with CDP."""
        self.need(at + 3, "LLC header", end)
        if self.b[at : at + 3] != b"\xaa\xaa\x03":
            self.not_ip(f"LLC {bytes(self.b[at:at + 3]).hex()} at offset {at} (no SNAP)")
        self.need(at + 8, "SNAP header", end)
        path += "/llc"
        if self.b[at + 3 : at + 6] == T.CISCO_OUI and self.u16(at + 6) == T.CDP_PID:
            self.cdp(at + 8, stop, depth, path)
        else:
            self.ethertype(self.u16(at + 6), at + 6, at + 8, min(stop, end), depth, path)

    def h_fddi(self, at: int, end: int, depth: int, path: str) -> None:
        """FDDI: frame control and two addresses (13 bytes), then LLC."""
        self.need(at + 13, "FDDI header")
        self.llc(at + 13, self.wire, self.wire, depth, path)

    def h_token_ring(self, at: int, end: int, depth: int, path: str) -> None:
        """IEEE 802.5: access and frame control, two addresses, routing information when the source address's
        top bit says so (its length in the low 5 bits of its first byte); then LLC."""
        self.need(at + 14, "Token Ring header")
        size = 14
        if self.b[at + 8] & 0x80:
            self.need(at + 15, "Token Ring routing information")
            size += self.b[at + 14] & 0x1F
        self.llc(at + size, self.wire, self.wire, depth, path)

    def h_cdp(self, at: int, end: int, depth: int, path: str) -> None:
        """CDP by EtherType (Cisco HDLC, Ethernet II): to the end of the frame."""
        self.cdp(at, end, depth, path)

    def cdp(self, at: int, stop: int, depth: int, path: str) -> None:
        """A CDP PDU from ``at`` to ``stop`` (the end the 802.3 length gives); its checksum covers all of it."""
        entry = T.CDP_ENTRY
        path += "/cdp"
        if stop - at < entry.minimum:
            raise _Bad(Code.BAD_LENGTH, f"packet: 802.3 length leaves {stop - at} bytes for CDP at offset {at}")
        self.need(at + entry.minimum, "CDP header")
        if stop > self.wire:
            raise _Bad(Code.TRUNCATED, f"packet: truncated: CDP needs {stop} bytes, packet has {self.wire}")
        self.emit(Field(entry, path, depth, at, at + entry.field, ((at, stop),),
                        na=R.NOT_CAPTURED if stop > self.n else None))

    def h_vlan(self, at: int, end: int, depth: int, path: str) -> None:
        """A VLAN tag reached through a protocol type (GRE's): TCI, then the EtherType."""
        self.ethertype(min(T.VLAN_TPIDS), at - 2, at, end, depth, path)

    def h_mpls(self, at: int, end: int, depth: int, path: str) -> None:
        """RFC 3032 label stack; after the bottom of stack: IPv4/IPv6 by the first nibble, 0: RFC 4385 control
        word + Ethernet (RFC 4448 pseudowire)."""
        path += "/mpls"
        while True:
            self.need(at + T.MPLS_LABEL, "MPLS label", end)
            bottom = self.b[at + T.MPLS_BOTTOM_AT] & 1
            at += T.MPLS_LABEL
            if bottom:
                break
        self.need(at + 1, "MPLS payload", end)
        nibble = self.b[at] >> 4
        if nibble in (4, 6):
            self.dispatch("ipv4" if nibble == 4 else "ipv6", at, end, depth, path)
        elif nibble == 0:
            self.h_eth(at + T.MPLS_CONTROL_WORD, end, depth, path)
        else:
            self.not_ip(f"MPLS payload starting with {self.b[at]:#04x} at offset {at}")

    def h_pppoe(self, at: int, end: int, depth: int, path: str) -> None:
        """RFC 2516 4: the session header, then a PPP frame of Length bytes (the protocol field compressed or not).
        A frame shorter than Length is malformed (Linux ``pppoe_rcv`` drops it); bytes past Length are padding, and
        a datagram longer than Length is cut by it (Linux trims the payload to Length, then ``ip_rcv_core`` drops the
        datagram as truncated)."""
        hdr = T.PPPOE_HDR
        self.need(at + hdr.size, "PPPoE session header", end)
        length = self.u16(at + hdr.length)
        stop = self.bounded(f"PPPoE Length {length}", at + hdr.size + length, end)
        self.ppp_frame(at + hdr.size, stop, depth, f"{path}/pppoe")

    def ppp_frame(self, at: int, end: int, depth: int, path: str) -> None:
        """A PPP protocol field (1 byte when its first is odd: Protocol-Field-Compression, RFC 1661 6.5), then the
        payload it names."""
        self.need(at + 1, "PPP protocol field", end)
        if self.b[at] & 1:
            self.ppp_protocol(self.b[at], at + 1, end, depth, path)
        else:
            self.need(at + 2, "PPP protocol field", end)
            self.ppp_protocol(self.u16(at), at + 2, end, depth, path)

    def ppp_protocol(self, proto: int, at: int, end: int, depth: int, path: str) -> None:
        name = T.PPP_PROTOCOLS.get(proto)
        if name is None:
            self.not_ip(f"PPP protocol {proto:#06x} at offset {at - 2}")
        self.dispatch(name, at, end, depth, f"{path}/ppp" if not path.endswith("ppp") else path)

    def h_ppp(self, at: int, end: int, depth: int, path: str) -> None:
        """RFC 1661 (address/control 0xff 0x03 optional, RFC 1662; protocol field compression)."""
        control = T.PPP_ADDRESS_CONTROL
        self.need(at + len(control), "PPP header", end)
        if self.b[at : at + len(control)] == control:
            at += len(control)
        self.ppp_frame(at, end, depth, path)

    def h_ppp_hdlc(self, at: int, end: int, depth: int, path: str) -> None:
        """A PPP frame, or Cisco HDLC framing (address, control, EtherType) in a PPP or PPP_HDLC capture."""
        self.need(at + 1, "PPP header", end)
        if self.b[at] in T.CHDLC_ADDRESSES:
            self.need(at + T.CHDLC_HLEN, "Cisco HDLC header", end)
            self.ethertype(self.u16(at + 2), at + 2, at + T.CHDLC_HLEN, end, depth, path)
        else:
            self.h_ppp(at, end, depth, path)

    def h_wlan(self, at: int, end: int, depth: int, path: str) -> None:
        """IEEE 802.11 data frames: 24-byte header, 30 with four addresses, +2 QoS, +4 HT control; LLC/SNAP."""
        self.need(at + 24, "802.11 header", end)
        self.wlan(at, end, depth, path, self.b[at], self.b[at + 1])

    def h_wlan_in(self, at: int, end: int, depth: int, path: str) -> None:
        """An IEEE 802.11 frame inside a tunnel (Aruba's GRE)."""
        self.h_wlan(at, end, depth, f"{path}/wlan")

    def is_wlan_data(self, fc: int) -> bool:
        """Whether an 802.11 frame control's first byte is a data frame's that carries data (not a Null frame)."""
        return (fc >> 2) & 3 == 2 and not (fc >> 4) & 4

    def wlan(self, at: int, end: int, depth: int, path: str, fc: int, flags: int) -> None:
        """The 802.11 frame at ``at`` whose frame control field is ``fc`` and ``flags`` (read by the caller: CAPWAP's
        may be byte-swapped)."""
        kind, subtype = (fc >> 2) & 3, fc >> 4
        if not self.is_wlan_data(fc):
            self.not_ip(f"802.11 frame of type {kind} subtype {subtype} (no data)")
        if flags & 0x40:
            self.not_ip("protected (encrypted) 802.11 data frame")
        size = 24 + (6 if flags & 3 == 3 else 0)
        if subtype & 8:
            size += 2 + (4 if flags & 0x80 else 0)
        self.need(at + size + 8, "802.11 LLC/SNAP header", end)
        snap = at + size
        if self.b[snap : snap + 3] != b"\xaa\xaa\x03":
            self.not_ip(f"802.11 payload without LLC/SNAP at offset {snap}")
        self.ethertype(self.u16(snap + 6), snap + 6, snap + 8, end, depth, path + "/llc")

    def h_radiotap(self, at: int, end: int, depth: int, path: str) -> None:
        self.need(at + 4, "radiotap header")
        size = int.from_bytes(self.b[at + 2 : at + 4], "little")
        self.h_wlan(at + size, end, depth, path + "/wlan")

    def h_ppi(self, at: int, end: int, depth: int, path: str) -> None:
        self.need(at + 8, "PPI header")
        size = int.from_bytes(self.b[at + 2 : at + 4], "little")
        self.link(int.from_bytes(self.b[at + 4 : at + 8], "little"), at + size, depth, path)

    def h_pktap(self, at: int, end: int, depth: int, path: str) -> None:
        self.need(at + 12, "PKTAP header")
        size = int.from_bytes(self.b[at : at + 4], "little")
        self.link(int.from_bytes(self.b[at + 8 : at + 12], "little"), at + size, depth, path)

    def h_nflog(self, at: int, end: int, depth: int, path: str) -> None:
        """Linux NFLOG: family, version, resource id; then TLVs (length, type in host order, 4-byte aligned)."""
        self.need(at + 4, "NFLOG header")
        name = T.LINUX_FAMILIES.get(self.b[at])
        if name is None:
            self.not_ip(f"NFLOG address family {self.b[at]}")
        pos = at + 4
        while pos + 4 <= self.n:
            size = int.from_bytes(self.b[pos : pos + 2], "little")
            kind = int.from_bytes(self.b[pos + 2 : pos + 4], "little") & 0x7FFF
            if size < 4:
                break
            if kind == T.NFULA_PAYLOAD:
                self.dispatch(name, pos + 4, min(pos + size, self.wire), depth, path)
                return
            pos += (size + 3) & ~3
        self.need(pos + 4, "NFLOG payload TLV")
        self.not_ip("NFLOG record without a payload TLV")

    def h_frame_relay(self, at: int, end: int, depth: int, path: str) -> None:
        """Q.922 address (EA bit ends it), control 0x03, optional pad, NLPID (RFC 2427); SNAP with an EtherType; or,
        without the control byte, Cisco's encapsulation: the EtherType right after the address."""
        pos = at
        while True:
            self.need(pos + 1, "Frame Relay address")
            pos += 1
            if self.b[pos - 1] & 1 and pos - at >= 2:
                break
        self.need(pos + 2, "Frame Relay control and NLPID")
        if self.b[pos] != T.FR_UI:
            self.ethertype(self.u16(pos), pos, pos + 2, end, depth, path)
            return
        pos += 1
        if self.b[pos] == 0 and pos + 1 < self.n:
            pos += 1
        nlpid = self.b[pos]
        if nlpid == T.NLPID_SNAP:
            self.need(pos + 6, "SNAP header")
            self.ethertype(self.u16(pos + 4), pos + 4, pos + 6, end, depth, path)
            return
        name = T.NLPIDS.get(nlpid)
        if name is None:
            self.not_ip(f"Frame Relay NLPID {nlpid:#04x}")
        self.dispatch(name, pos + 1, end, depth, path)

    def h_ip(self, at: int, end: int, depth: int, path: str) -> None:
        self.need(at + 1, "IP header")
        version = self.b[at] >> 4
        if version == 4:
            self.h_ipv4(at, end, depth, path)
        elif version == 6:
            self.h_ipv6(at, end, depth, path)
        else:
            self.not_ip(f"IP version {version} at offset {at} is neither 4 nor 6")

    # --- IP ------------------------------------------------------------------------------------

    def h_ipv4(self, at: int, end: int, depth: int, path: str, quote: bool = False) -> None:
        path += "/ipv4" if path else "ipv4"
        b, h = self.b, T.IPHDR
        if not quote:
            self.inside(at + h.size, end, "IPv4 header")
        if at + h.size > self.n:
            if quote:
                return
            if at + h.size <= self.wire:
                self.emit(Field(T.IPV4_HEADER, path, depth, at, self.stored_or_none(at + h.check),
                                na=R.NOT_CAPTURED))
            self.need(at + h.size, "IPv4 header")
        if b[at] >> 4 != 4:
            self.not_ip(f"IP version {b[at] >> 4} at offset {at} is not 4")
        ihl = (b[at] & 0x0F) * 4
        if ihl < h.size:
            raise _Bad(Code.BAD_IHL, f"packet: IPv4 IHL is {ihl // 4}, below the minimum of 5")
        if not quote:
            self.inside(at + ihl, end, f"IPv4 header with IHL {ihl // 4}")
        if at + ihl > self.n:
            if quote:
                return
            if at + ihl <= self.wire:
                self.emit(Field(T.IPV4_HEADER, path, depth, at, at + h.check, na=R.NOT_CAPTURED))
            self.need(at + ihl, f"IPv4 header with IHL {ihl // 4}")
        # the header is whole: its checksum is judged even if the lengths that follow are not
        self.emit(Field(T.IPV4_HEADER, path, depth, at, at + h.check, ((at, at + ihl),)))
        total, big = self.u16(at + h.tot_len), False
        if total == 0 and not quote and end - at > ihl:  # BIG TCP / TSO super-packet: the captured length
            big, stop = True, end
            self.stack.notes.append(f"{path}: total length 0: a BIG TCP / TSO super-packet, taken at its length")
        else:
            if total < ihl:
                raise _Bad(Code.BAD_LENGTH, f"packet: IPv4 total length {total} is shorter than its {ihl}-byte header")
            stop = at + total
            if stop > end:
                if not quote:
                    raise _Bad(Code.TRUNCATED, f"packet: truncated: IPv4 total length {total} needs {stop} bytes, "
                               f"packet has {end}")
        final = self.ipv4_final_destination(at + h.size, at + ihl, at + h.daddr)
        frag = self.u16(at + h.frag_off)
        offset, more = (frag & T.IP_OFFSET) * T.FRAG_UNIT, bool(frag & T.IP_MF)
        fragment: Fragment = "later" if offset else "first" if more else "none"
        ip = IPLayer(4, at, at + ihl, at + ihl, stop, at + h.check, at + h.saddr, at + h.daddr, at + h.ttl,
                     at + h.saddr, final, False, fragment, b[at + h.protocol], depth, big, frag_id=self.u16(at + h.id),
                     frag_offset=offset, frag_more=more, frag_data=at + ihl, path=path, copy=quote or self.embedded)
        self.stack.ips.append(ip)
        if quote and stop > end:  # the quote holds part of the datagram: its transport checksum is out of reach
            self.partial(ip, at + ihl, end, depth, path, R.PARTIAL_QUOTE)
            return
        self.transport(ip, ip.proto, at + ihl, stop, depth, path)

    def ipv4_final_destination(self, start: int, end: int, daddr: int) -> int:
        """Walk the IPv4 options; the offset of the final destination (RFC 791 source routes)."""
        b, at, final, routes = self.b, start, daddr, 0
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

    def ipv6_option(self, start: int, end: int, wanted: int) -> tuple[int, int] | None:
        """(offset, length) of the data of the first option ``wanted`` in a hop-by-hop/destination header."""
        b, at = self.b, start
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

    def h_ipv6(self, at: int, end: int, depth: int, path: str, quote: bool = False) -> None:
        path += "/ipv6" if path else "ipv6"
        ip_path = path  # the extension headers add to ``path`` (AH)
        b, h, unit = self.b, T.IPV6HDR, T.IPV6_EXT_UNIT
        if not quote:
            self.inside(at + h.size, end, "IPv6 header")
        if at + h.size > self.n:
            if quote:
                return
            self.need(at + h.size, "IPv6 header")
        if b[at] >> 4 != 6:
            self.not_ip(f"IP version {b[at] >> 4} at offset {at} is not 6")
        plen, nh = self.u16(at + h.payload_len), b[at + h.nexthdr]
        stop, jumbo, big = at + h.size + plen, False, False
        if plen and stop > end and not quote:
            raise _Bad(Code.TRUNCATED, f"packet: truncated: IPv6 payload length {plen} needs {stop} bytes, packet has "
                       f"{end}")
        src, pos = at + h.saddr, at + h.size
        dst: int | None = at + h.daddr  # None: a routing header names a final destination csum does not read
        fragment: Fragment = "none"
        frag_id = frag_offset = frag_data = 0
        frag_more = False
        try:
            while nh in T.IPV6_EXT:
                self.need(pos + unit, "IPv6 extension header")
                size = T.FRAG_HDR.size if nh == T.FRAGMENT else (b[pos + 1] + T.AH_BIAS) * T.AH_UNIT if nh == T.AH else \
                    (b[pos + 1] + 1) * unit
                self.need(pos + size, "IPv6 extension header")
                if nh == T.HOP_BY_HOP and pos == at + h.size:
                    option = self.ipv6_option(pos + 2, pos + size, T.JUMBO_OPTION)
                    if option is not None:
                        length = int.from_bytes(b[option[0] : option[0] + option[1]], "big")
                        if plen or option[1] != 4 or length <= 0xFFFF:
                            raise _Bad(Code.BAD_LENGTH, "packet: Jumbo Payload option needs payload length 0, 4 bytes "
                                       "and a length above 65535 (RFC 2675)")
                        stop, jumbo = at + h.size + length, True
                        if stop > end and not quote:
                            raise _Bad(Code.TRUNCATED, f"packet: truncated: jumbo payload length {length} needs "
                                       f"{stop} bytes, packet has {end}")
                elif nh == T.ROUTING and b[pos + T.IPV6_RT_SEGMENTS_LEFT]:
                    dst = self.routing_destination(pos, size)
                elif nh == T.DEST_OPTS:
                    option = self.ipv6_option(pos + 2, pos + size, T.HOME_ADDRESS_OPTION)
                    if option is not None:
                        if option[1] != 16:
                            raise _Bad(Code.BAD_OPTION, "packet: Home Address option must hold 16 bytes")
                        src = option[0]
                elif nh == T.FRAGMENT:
                    fh = T.FRAG_HDR
                    word = self.u16(pos + fh.frag_off)
                    fragment = "later" if word & T.IP6_OFFSET else "first" if word & T.IP6_MF else "atomic"
                    frag_id = int.from_bytes(b[pos + fh.identification : pos + fh.size], "big")
                    frag_offset, frag_more, frag_data = word & T.IP6_OFFSET, bool(word & T.IP6_MF), pos + fh.size
                if nh == T.AH:
                    path += f"/{T.AH_NAME}"
                nh, pos = b[pos], pos + size
                if pos > stop and (plen or jumbo):
                    raise _Bad(Code.BAD_LENGTH, f"packet: IPv6 extension headers run past the payload end ({stop})")
                if fragment == "later":  # fragment data follows, not headers (RFC 8200 section 4.5)
                    break
        except _Cut:
            if quote:
                return
            raise
        if not plen and not jumbo and not quote:
            if nh == T.NO_NEXT or pos >= end:
                if nh != T.NO_NEXT:
                    raise _Bad(Code.BAD_LENGTH, "packet: IPv6 payload length 0 without a Jumbo Payload option")
            else:  # BIG TCP (Linux >= 5.19 without the hop-by-hop header) / GSO super-packet: the captured length
                big, stop = True, end
                self.stack.notes.append(f"{path}: payload length 0: a BIG TCP / GSO super-packet, taken at its length")
        ip = IPLayer(6, at, at + h.size, pos, stop, None, at + h.saddr, at + h.daddr, at + h.hop_limit, src, dst, jumbo,
                     fragment, nh, depth, big, frag_id=frag_id, frag_offset=frag_offset, frag_more=frag_more,
                     frag_data=frag_data, path=ip_path, copy=quote or self.embedded)
        self.stack.ips.append(ip)
        if quote and stop > end:
            self.partial(ip, pos, end, depth, path, R.PARTIAL_QUOTE)
            return
        self.transport(ip, nh, pos, stop, depth, path)

    def routing_destination(self, at: int, size: int) -> int | None:
        """Offset of the final destination named by a routing header with Segments Left > 0 (RFC 8200 8.1)."""
        kind = self.b[at + T.IPV6_RT_TYPE]
        if size < T.ROUTING_ADDRESSED:
            return None
        if kind in T.ROUTING_LAST_ADDRESS:
            return at + size - T.IPV6HDR.addr_size
        return at + T.SRH_SEGMENT0_AT if kind == T.ROUTING_SRH else None

    # --- above IP ------------------------------------------------------------------------------

    def entry_for(self, ip: IPLayer, proto: int, at: int, stop: int) -> T.Protocol | None:
        """The table entry for ``proto`` here: by version and type where one number has several layouts."""
        if proto in (T.IPV6_ONLY if ip.version == 4 else T.IPV4_ONLY):
            return None
        entry = T.TRANSPORTS.get(proto)
        if entry is None or at >= self.n:
            return entry
        first = self.b[at]
        if proto == T.PIM and first == 0x21:  # version 2, type 1: Register
            return T.PIM_REGISTER
        if proto == T.VRRP:
            if first >> 4 == 3:
                return T.VRRP3_ENTRY
            if stop - at == 36 and at + 4 <= self.n and self.b[at + 3] == 7:  # CARP: 36 bytes, authlen 7
                return T.CARP_ENTRY
        if proto == T.OSPF and first == 3:
            return T.OSPF3_ENTRY
        if proto == T.PGM and at + 5 <= self.n and self.b[at + 4] in T.PGM_DATA_TYPES:
            return T.PGM_DATA_ENTRY
        return entry

    def partial(self, ip: IPLayer, at: int, end: int, depth: int, path: str, reason: Reason) -> None:
        """The transport field of a datagram only partly here (a quote, a fragment): reported, not verified."""
        entry = self.entry_for(ip, ip.proto, at, end) if reason is not R.NON_FIRST_FRAGMENT else \
            (None if ip.proto in (T.IPV6_ONLY if ip.version == 4 else T.IPV4_ONLY) else T.TRANSPORTS.get(ip.proto))
        if entry is None:
            return
        if reason is R.NON_FIRST_FRAGMENT:
            self.emit(Field(entry, f"{path}/{entry.name}", depth, at, None, na=reason))
            return
        field_at = at + entry.field
        self.emit(Field(entry, f"{path}/{entry.name}", depth, at, field_at if field_at + 2 <= min(end, self.n) else None,
                        na=reason))
        if depth == 0 and ip is self.stack.ips[0]:
            ip.l4 = at
            ip.l4_csum = field_at if field_at + 2 <= end else None
            ip.pseudo = entry.pseudo is not T.PSEUDO.NEVER

    def transport(self, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
        if ip.fragment != "later" and ip is self.stack.ips[0]:
            ip.l4 = at
        if ip.fragment == "later":
            self.partial(ip, at, stop, depth, path, R.NON_FIRST_FRAGMENT)
            return
        if ip.fragment == "first":
            self.partial(ip, at, stop, depth, path, R.NEEDS_REASSEMBLY)
            return
        if proto == T.IPIP:
            self.inner("ipv4", at, stop, depth + 1, path)
        elif proto == T.IPV6_IN:
            self.inner("ipv6", at, stop, depth + 1, path)
        elif proto == T.GRE:
            self.gre(at, stop, depth, path)
        elif proto == T.AH and ip.version == 4:
            self.need(at + 2, "AH header")
            size = (self.b[at + 1] + T.AH_BIAS) * T.AH_UNIT
            self.need(at + size, "AH header")
            self.transport(ip, self.b[at], at + size, stop, depth, f"{path}/{T.AH_NAME}")
        elif proto == T.ETHERNET_IN:  # RFC 8986 End.DX2 and other Ethernet-in-IP (IANA protocol 143)
            self.inner("eth", at, stop, depth + 1, path)
        elif proto == T.ESP:
            self.emit(Field(T.ESP_ENTRY, path + "/esp", depth, at, None,
                            na=R.ENCRYPTED))
        else:
            entry = self.entry_for(ip, proto, at, stop)
            if entry is not None:
                self.checksummed(ip, entry, proto, at, stop, depth, path)

    def checksummed(self, ip: IPLayer, entry: T.Protocol, proto: int, at: int, stop: int, depth: int,
                    path: str) -> None:
        """A protocol with the Internet checksum (table entry ``entry``) at ``at``, its datagram ending at ``stop``."""
        path = f"{path}/{entry.name}"
        available = stop - at
        legacy = proto in (T.TCP, T.UDP, T.ICMP, T.ICMPV6)  # malformed: these are what the old checkers refused
        minimum = entry.minimum
        if at + minimum > self.n and at + minimum <= self.wire and available >= minimum:
            self.emit(Field(entry, path, depth, at, self.stored_or_none(at + entry.field), na=R.NOT_CAPTURED))
            raise _Cut
        if proto == T.TCP and available > T.TCP_DOFF_AT and at + T.TCP_DOFF_AT < self.n:
            minimum = max(minimum, (self.b[at + T.TCP_DOFF_AT] >> 4) * 4)
        if available < minimum:
            if legacy:
                raise _Bad(Code.TRUNCATED, f"packet: truncated: the {entry.name.upper()} header at offset {at} needs "
                           f"{at + minimum} bytes, the {entry.name} segment has {available} bytes")
            self.emit(Field(entry, path, depth, at, self.stored_or_none(at + entry.field) if available >= entry.field
                            + 2 else None, na=R.BAD_LENGTH))
            return
        field_at = at + entry.field
        cover, length, na = entry.cover, available, None
        end = stop
        if cover is T.COVER.LENGTH_FIELD:
            length = self.u16(at + entry.length_at)
            if proto == T.UDP:
                if not length and ip.version == 6 and available > 0xFFFF:  # 0 only in a jumbogram (RFC 2675 4)
                    length = available
                elif not 8 <= length <= available:
                    raise _Bad(Code.BAD_LENGTH, f"packet: UDP length {length} outside 8..{available} (the IP payload)")
            elif not entry.minimum <= length <= available:
                na = R.BAD_LENGTH
            end = at + length
        elif cover is T.COVER.COVERAGE:
            covered = self.coverage(proto, at, available)
            if covered is None:
                na = R.BAD_COVERAGE  # the end stays at stop
            else:
                end = covered
        elif cover is T.COVER.PREFIX:
            end, length = at + entry.prefix, entry.prefix
        pseudo = None
        if entry.pseudo is T.PSEUDO.ALWAYS or (entry.pseudo is T.PSEUDO.IPV6 and ip.version == 6):
            if ip.pseudo_daddr is None:
                na = na or R.UNKNOWN_DESTINATION
            else:
                pseudo = (ip.pseudo_saddr, ip.pseudo_daddr, 4 if ip.version == 4 else 16, length, proto)
        skip = entry.skip
        covers: tuple[tuple[int, int], ...]
        if skip is not None and na is None and entry is T.OSPF2_ENTRY:
            if self.u16(at + 14) == 2:  # cryptographic authentication: the checksum is not computed (RFC 2328 D.4.3)
                na = R.CRYPTO_AUTH
            covers = ((at, at + skip[0]), (at + skip[1], end))
        else:
            covers = ((at, end),)
        if na is None and end > self.n:
            na = R.NOT_CAPTURED
        if depth == 0 and ip is self.stack.ips[0]:
            ip.l4, ip.l4_len, ip.l4_csum, ip.pseudo = at, length, field_at, entry.pseudo is not T.PSEUDO.NEVER
        self.emit(Field(entry, path, depth, at, field_at if field_at + 2 <= self.n else None, covers, pseudo,
                        ip.version == 6, na, tunnel=False,  # the whole message's alternative only where captured
                        alt_end=stop if cover is T.COVER.PREFIX and stop <= self.n else None,
                        big=ip.big))
        if na is R.NOT_CAPTURED and field_at + 2 > self.n:
            raise _Cut
        if proto == T.UDP:
            self.udp_payload(at, end, depth, path)
        elif proto == T.TCP:
            name = T.TCP_EMBEDDED.get(self.u16(at + 2)) or T.TCP_EMBEDDED.get(self.u16(at))
            if name is not None:
                self.inner(name, at + (self.b[at + T.TCP_DOFF_AT] >> 4) * 4, end, depth, path)
        elif entry is T.PIM_REGISTER:  # the multicast packet it encapsulates (RFC 7761 4.9.3)
            self.inner("ip", at + 8, stop, depth + 1, path)
        elif proto in (T.ICMP, T.ICMPV6):
            errors = T.ICMP_ERRORS if proto == T.ICMP else T.ICMPV6_ERRORS
            if self.b[at] in errors:
                self.quote(errors[self.b[at]], at, stop, depth, path)

    def udp_payload(self, at: int, end: int, depth: int, path: str) -> None:
        """What the UDP datagram at ``at`` (ending at ``end``) carries: a tunnel by its destination port (or by its
        source port, the lower of the two, for table.UDP_TUNNELS_BY_SOURCE), or an embedded packet's protocol."""
        source, destination = self.u16(at), self.u16(at + 2)
        tunnel = T.UDP_TUNNELS.get(destination)
        if tunnel is None and source < destination and source in T.UDP_TUNNELS_BY_SOURCE:
            tunnel = T.UDP_TUNNELS[source]
        if tunnel is not None:
            self.stack.fields[-1].tunnel = True
            self.inner(tunnel, at + 8, end, depth + 1, path)
        elif destination in T.UDP_EMBEDDED:
            self.inner(T.UDP_EMBEDDED[destination], at + 8, end, depth, path)

    def coverage(self, proto: int, at: int, available: int) -> int | None:
        """End of the bytes a UDP-Lite (RFC 3828 3.1) or DCCP (RFC 4340 9.2) checksum covers; None if invalid."""
        if proto == T.UDPLITE:
            cov = self.u16(at + 4)
            if cov == 0:
                return at + available
            return at + cov if 8 <= cov <= available else None
        offset = self.b[at + 4] * 4
        cscov = self.b[at + 5] & 0x0F
        if not 12 <= offset <= available:
            return None
        if cscov == 0:
            return at + available
        cov = offset + (cscov - 1) * 4
        return at + min(cov, available)

    def quote(self, spec: tuple[int, int] | None, at: int, stop: int, depth: int, path: str) -> None:
        """The datagram quoted by an ICMP error at ``at`` (RFC 792, RFC 4443) and an RFC 4884 extension."""
        start, end, ext, guessed = at + 8, stop, None, False
        if spec is not None and at + spec[0] < self.n:
            length = self.b[at + spec[0]] * spec[1]
            if not length:  # RFC 4884 5.5: extensions of older senders follow a 128-byte quote, length 0
                length, guessed = T.ICMP_EXT_MIN_QUOTE, True
            if start + length + T.ICMP_EXT_HLEN <= min(stop, self.n) and length >= T.ICMP_EXT_MIN_QUOTE \
                    and self.b[start + length] >> 4 == T.ICMP_EXT_VERSION \
                    and (not guessed or self.padded_quote(start, length)):
                end = ext = start + length
        if start < min(end, self.n):
            version = self.b[start] >> 4
            if version in (4, 6) and depth < T.MAX_DEPTH:
                try:
                    (self.h_ipv4 if version == 4 else self.h_ipv6)(start, min(end, self.wire), depth + 1, path,
                                                                    quote=True)
                except _Bad as exc:
                    self.stack.notes.append(f"{path}: quoted datagram: {exc}")
        if ext is not None:
            entry = T.ICMP_EXT_ENTRY
            na = R.NOT_CAPTURED if stop > self.n else None
            self.emit(Field(entry, f"{path}/{entry.name}", depth, ext, ext + 2, ((ext, stop),), na=na))

    def padded_quote(self, start: int, length: int) -> bool:
        """Whether a quoted IP datagram ends inside ``length`` bytes, zeros after it (RFC 4884 5.5's old senders)."""
        version = self.b[start] >> 4
        if version == 4 and start + 4 <= self.n:
            size = self.u16(start + 2)
        elif version == 6 and start + 6 <= self.n:
            size = 40 + self.u16(start + 4)
        else:
            return False
        return size <= length and not any(self.b[start + size : start + length])

    # --- tunnels -------------------------------------------------------------------------------

    def gre(self, at: int, stop: int, depth: int, path: str) -> None:
        """GRE (RFC 2784, RFC 2890 key and sequence; version 1 is PPTP's, RFC 2637): its optional checksum, then
        the payload by protocol type (Aruba's IEEE 802.11 frames: table.GRE_WLAN)."""
        path += "/gre"
        self.need(at + T.GRE_HLEN, "GRE header", stop)
        flags, version, proto = self.b[at], self.b[at + 1] & T.GRE_VERSION, self.u16(at + 2)
        checksum, key, seq = flags & T.GRE_CSUM, flags & T.GRE_KEY, flags & T.GRE_SEQ
        if flags & T.GRE_ROUTING:
            self.stack.notes.append(f"{path}: GRE with routing present (RFC 1701) is not walked")
            return
        size = T.GRE_HLEN + T.GRE_WORD * (bool(checksum) + bool(key) + bool(seq))
        if version == 1:
            size += 4 if self.b[at + 1] & 0x80 else 0  # PPTP acknowledgment number
        if checksum:
            na = R.NOT_CAPTURED if stop > self.n else None
            field = at + T.GRE_ENTRY.field
            self.emit(Field(T.GRE_ENTRY, path, depth, at, field if field + 2 <= self.n else None, ((at, stop),), na=na))
        self.need(at + size, "GRE header", stop)
        payload = at + size
        if version == 1:
            self.inner("ppp", payload, stop, depth + 1, path)
        elif proto == T.ETH_ERSPAN2 and not seq:  # ERSPAN type I: Ethernet right after the GRE header
            self.inner("eth", payload, stop, depth + 1, path)
        elif proto in T.GRE_WLAN:
            self.inner("wlan-in", payload, stop, depth + 1, path)
        else:
            name = T.ETHERTYPES.get(proto)
            if name is None:
                self.stack.notes.append(f"{path}: GRE protocol {proto:#06x} is not walked")
                return
            self.inner(name, payload, stop, depth + 1, path)

    def h_erspan(self, at: int, end: int, depth: int, path: str) -> None:
        """ERSPAN type II: an 8-byte header, then the mirrored Ethernet frame."""
        self.h_eth(at + T.ERSPAN2_HLEN, end, depth, path + "/erspan")

    def h_erspan3(self, at: int, end: int, depth: int, path: str) -> None:
        """ERSPAN type III: 12 bytes, 8 more with the platform sub-header (O bit), then Ethernet."""
        self.need(at + T.ERSPAN3_HLEN, "ERSPAN type III header")
        size = T.ERSPAN3_HLEN + (T.ERSPAN3_PLATFORM if self.b[at + T.ERSPAN3_O_AT] & 1 else 0)
        self.h_eth(at + size, end, depth, path + "/erspan")

    def h_vxlan(self, at: int, end: int, depth: int, path: str) -> None:
        self.need(at + T.VXLAN_HLEN, "VXLAN header")
        self.h_eth(at + T.VXLAN_HLEN, end, depth, path + "/vxlan")

    def h_vxlan_gpe(self, at: int, end: int, depth: int, path: str) -> None:
        """draft-ietf-nvo3-vxlan-gpe: flags, 2 reserved bytes, Next Protocol, VNI; no P flag: Ethernet as VXLAN."""
        self.need(at + 8, "VXLAN-GPE header")
        path += "/vxlan-gpe"
        name = T.NEXT_PROTOCOLS.get(self.b[at + 3]) if self.b[at] & 0x04 else "eth"
        if name is None:
            self.not_ip(f"VXLAN-GPE next protocol {self.b[at + 3]} at offset {at + 3}")
        self.dispatch(name, at + 8, end, depth, path)

    def h_nsh(self, at: int, end: int, depth: int, path: str) -> None:
        """RFC 8300 Network Service Header: base header (length in 4-byte words), service path, context; then
        the Next Protocol's packet."""
        self.need(at + 8, "NSH header")
        size = (self.b[at + 1] & 0x3F) * 4
        if size < 8:
            raise _Bad(Code.BAD_LENGTH, f"packet: NSH length {size} bytes at offset {at} is below its 8-byte header")
        self.need(at + size, "NSH header")
        name = T.NEXT_PROTOCOLS.get(self.b[at + 3])
        if name is None:
            self.not_ip(f"NSH next protocol {self.b[at + 3]} at offset {at + 3}")
        self.dispatch(name, at + size, end, depth, path + "/nsh")

    def h_macsec(self, at: int, end: int, depth: int, path: str) -> None:
        """IEEE 802.1AE SecTAG: TCI/AN, short length, packet number, the SCI when TCI's SC bit is set; then the
        user data's EtherType, unless E or C says the data is encrypted (the ICV trails the frame)."""
        path += "/macsec"
        self.need(at + 6, "MACsec SecTAG")
        tci = self.b[at]
        size = 14 if tci & 0x20 else 6
        if tci & 0x0C:
            self.emit(Field(T.MACSEC_ENTRY, path, depth, at, None, na=R.ENCRYPTED))
            return
        self.need(at + size + 2, "MACsec SecTAG")
        self.ethertype(self.u16(at + size), at + size, at + size + 2, end, depth, path)

    def h_arista(self, at: int, end: int, depth: int, path: str) -> None:
        """Arista's timestamp tag (EtherType 0xd28b), then the frame's own EtherType."""
        self.need(at + 4, "Arista timestamp header")
        size = T.ARISTA_FORMATS.get(self.b[at + 3] >> 4)
        if self.u16(at) != T.ARISTA_TIMESTAMP or size is None:
            self.not_ip(f"Arista header subtype {self.u16(at):#06x} format {self.b[at + 3] >> 4} at offset {at}")
        where = at + 4 + size
        self.need(where + 2, "Arista timestamp header")
        self.ethertype(self.u16(where), where, where + 2, end, depth, path + "/arista")

    def h_geneve(self, at: int, end: int, depth: int, path: str) -> None:
        """RFC 8926: 8 bytes + options (length in 4-byte words), protocol type an EtherType."""
        self.need(at + T.GENEVE_HLEN, "Geneve header", end)
        size = T.GENEVE_HLEN + (self.b[at] & T.GENEVE_OPT_LEN) * T.GENEVE_UNIT
        self.need(at + size, "Geneve options", end)
        where = at + T.GENEVE_PROTOCOL
        self.ethertype(self.u16(where), where, at + size, end, depth, path + "/geneve")


#: Layer name (as the table's dispatch values and link kinds spell it) -> its handler.
_HANDLERS = {**{name[2:].replace("_", "-"): fn for name, fn in vars(_Walker).items() if name.startswith("h_")},
             **_ENCAPSULATIONS}


def _fits(buf: memoryview, at: int) -> bool:
    """Whether an IP header at ``at`` has version 4 or 6 and lengths that fit the buffer."""
    if len(buf) <= at:
        return False
    version, ihl, v4, v6 = buf[at] >> 4, (buf[at] & 0xF) * 4, T.IPHDR, T.IPV6HDR
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
            return 1
        if T.ETHERTYPES.get(ethertype) in ("mpls", "pppoe") and not _fits(buf, 0):
            return 1
    return 101


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


def walk(buf: memoryview, link: Link = "auto", *, wire_len: int | None = None, strict: bool = False) -> Stack:
    """The whole stack of one packet: its layers and every checksum field, outer to inner.

    ``link``: "auto", "ethernet" (alias "ether"), "ip" or a capture link type number (see
    :data:`csum.layers.table.LINKTYPES`). ``wire_len``: the packet's length on the wire when only
    part was captured. ``strict``: raise :class:`CsumValueError` for a packet that is not IP or
    has a malformed outer header instead of recording it in the stack.
    """
    if type(buf) is not memoryview or buf.format != "B" or not buf.c_contiguous:
        buf = as_view(buf, "buf")
    linktype = resolve_link(buf, link)
    if wire_len is not None:
        wire_len = check_int(wire_len, 0, (1 << 63) - 1, "wire_len")
    if strict is not False:
        strict = check_bool(strict, "strict")
    walker = _Walker(buf, len(buf) if wire_len is None else max(wire_len, len(buf)), strict)
    stack = walker.stack
    try:
        walker.link(linktype, 0)
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


def _position(f: Field) -> int:
    return f.header if f.at is None else f.at

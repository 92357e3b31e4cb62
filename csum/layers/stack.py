"""What the walker finds: a packet's :class:`Stack` of :class:`IPLayer` headers and checksum :class:`Field` s
(csum/layers/walk.py makes them; csum.layers.check judges the fields, csum.rewrite edits the IP layers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import Code
from . import table as T
from .reasons import Reason

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
    at the snap length; ``notes``: why inner layers were not walked; ``inner_malformed``: (code, message, start) of
    the first malformed layer inside a tunnel (its path in the message; start: the offset where the encapsulated part
    that holds it starts), whose checksums went unjudged.
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
    inner_malformed: tuple[Code, str, int] | None = None

"""csum's one protocol model: a declarative table (:mod:`.table`), one walker (:mod:`.walk`) and the
verdict on each checksum field (:mod:`.check`). csum.inet, the capture checker behind ``csum
verify``/``csum fix`` and csum.rewrite all consume the same :class:`Stack`.

Adding a protocol is one entry in :mod:`.table` (plus, where its layout varies with a type or
version field, a line in ``_Walker.entry_for``) and its tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import table
from .check import Result, corrections, evaluate, verify_stack
from .reasons import Reason, Status
from .walk import Field, Fragment, IPLayer, Link, Stack, walk

__all__ = ["Field", "Fragment", "IPLayer", "Layout", "Link", "Reason", "Result", "Stack", "Status", "corrections", "evaluate",
           "layout", "protocol_name", "table", "verify_stack", "walk"]

TCP, UDP, UDPLITE, ICMP, ICMPV6 = table.TCP, table.UDP, table.UDPLITE, table.ICMP, table.ICMPV6


def protocol_name(proto: int) -> str:
    """A readable name for an IP protocol number ("TCP", "UDP-Lite", ... or "protocol 47")."""
    entry = table.TRANSPORTS.get(proto)
    names = {TCP: "TCP", UDP: "UDP", UDPLITE: "UDP-Lite", ICMP: "ICMP", ICMPV6: "ICMPv6"}
    return names.get(proto) or (entry.name.upper() if entry else f"protocol {proto}")


@dataclass(frozen=True)
class Layout:
    """The outer IP layer of a packet as csum.rewrite edits it (absolute offsets into the buffer).

    ``link``: "ethernet", "ip" or the link layer's name; ``l3_header_end``: end of the IPv4 header
    (options included) or the IPv6 fixed header; ``l4_start``: where the upper layer or fragment
    data starts; ``end``: end of the datagram; ``ip_csum``: the IPv4 header checksum offset (None
    for IPv6); ``pseudo_saddr`` / ``pseudo_daddr``: the addresses the pseudo-header uses
    (``pseudo_daddr`` None when csum cannot read it); ``l4``, ``l4_len`` (the pseudo-header
    length), ``l4_csum``: the upper layer's header, length and checksum offset when known here;
    ``pseudo``: whether that checksum covers a pseudo-header.
    """

    link: str
    version: Literal[4, 6]
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
    l4: int | None = None
    l4_len: int | None = None
    l4_csum: int | None = None
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
        return self.proto in (TCP, UDP, UDPLITE, table.DCCP) and self.l4 is not None


_LINK_NAMES = {"eth": "ethernet", "raw": "ip"}


def layout(buf: memoryview, link: Link = "auto") -> Layout:
    """The outer IP layer of ``buf`` (see :class:`Layout`); raise CsumValueError if malformed or not IP."""
    stack = walk(buf, link, strict=True)
    ip: IPLayer = stack.ips[0]
    return Layout(_LINK_NAMES.get(stack.link, stack.link), ip.version, ip.l3, ip.l3_header_end,  # type: ignore[arg-type]
                  ip.l4_start, ip.end, ip.ip_csum, ip.saddr, ip.daddr, ip.ttl, ip.pseudo_saddr, ip.pseudo_daddr,
                  ip.jumbo, ip.fragment, ip.proto, ip.l4, ip.l4_len, ip.l4_csum, ip.pseudo)

"""Building blocks of the protocol tests: documentation addresses (RFC 5737, RFC 3849), pseudo-headers written
from the RFC text (RFC 9293 3.1 / RFC 768 for IPv4, RFC 8200 8.1 for IPv6), the naive RFC 1071 checksum over
them (tests/oracle.py), and scapy-built packets of every kind csum verifies."""

import struct
from ipaddress import ip_address

from hypothesis import strategies as st
from oracle import rfc1071_checksum
from scapy.all import (
    HAO,
    ICMP,
    IP,
    TCP,
    UDP,
    Dot1Q,
    Ether,
    ICMPv6EchoRequest,
    IPOption_LSRR,
    IPOption_NOP,
    IPOption_Router_Alert,
    IPOption_SSRR,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    IPv6ExtHdrSegmentRouting,
    Raw,
    raw,
)

from csum.testing import u16s

A4, B4, C4, D4 = "192.0.2.1", "198.51.100.7", "203.0.113.5", "203.0.113.9"
A6, B6, C6, D6 = "2001:db8::1", "2001:db8:1::2", "2001:db8:2::5", "2001:db8:3::9"
MAC = "02:00:00:00:00:01"
ETH = Ether(src=MAC, dst="02:00:00:00:00:02")


def pseudo4(src: str, dst: str, proto: int, length: int) -> bytes:
    """RFC 793 section 3.1 / RFC 768: source, destination, zero, protocol, 16-bit length."""
    return ip_address(src).packed + ip_address(dst).packed + struct.pack("!BBH", 0, proto, length)


def pseudo6(src: str, dst: str, proto: int, length: int) -> bytes:
    """RFC 8200 section 8.1: source, destination, 32-bit upper-layer length, 3 zero bytes, next header."""
    return ip_address(src).packed + ip_address(dst).packed + struct.pack("!I3xB", length, proto)


def oracle_l4(pseudo: bytes, segment: bytes, field: int) -> int:
    """The naive RFC 1071 checksum of pseudo-header + segment with its checksum field zeroed."""
    return rfc1071_checksum(pseudo + segment[:field] + b"\0\0" + segment[field + 2 :])


V4_OPTIONS = {
    "none": [], "nop": [IPOption_NOP()] * 4, "router-alert": [IPOption_Router_Alert()],
    "lsrr": [IPOption_LSRR(routers=[C4, D4])], "ssrr": [IPOption_SSRR(routers=[C4])],
}


V6_EXT = {
    "none": lambda: [], "hbh": lambda: [IPv6ExtHdrHopByHop()], "dest": lambda: [IPv6ExtHdrDestOpt()],
    "rh0": lambda: [IPv6ExtHdrRouting(addresses=[C6, D6], segleft=2)],
    "srh": lambda: [IPv6ExtHdrSegmentRouting(addresses=[C6, D6])],
    "atomic-fragment": lambda: [IPv6ExtHdrFragment(m=0, offset=0)],
    "hao": lambda: [IPv6ExtHdrDestOpt(options=[HAO(hoa=D6)])],
}


@st.composite
def scapy_packets(draw):
    """(packet object, transport layer name, ipv6?, link) for every kind csum verifies."""
    ipv6 = draw(st.booleans())
    payload = Raw(draw(st.binary(max_size=1500)))
    if ipv6:
        layer = draw(st.sampled_from(["tcp", "udp", "icmpv6"]))
        pkt = IPv6(src=A6, dst=B6)
        for ext in V6_EXT[draw(st.sampled_from(sorted(V6_EXT)))]():
            pkt = pkt / ext
    else:
        layer = draw(st.sampled_from(["tcp", "udp", "icmp"]))
        pkt = IP(src=A4, dst=B4, id=draw(u16s()), options=V4_OPTIONS[draw(st.sampled_from(sorted(V4_OPTIONS)))])
    l4 = {"tcp": lambda: TCP(sport=draw(u16s()), dport=draw(u16s()), seq=draw(st.integers(0, 2**32 - 1))),
          "udp": lambda: UDP(sport=draw(u16s()), dport=draw(u16s())),
          "icmp": lambda: ICMP(id=draw(u16s()), seq=draw(u16s())),
          "icmpv6": lambda: ICMPv6EchoRequest(id=draw(u16s()), seq=draw(u16s()))}[layer]()
    pkt = pkt / l4 / payload
    tags = draw(st.integers(0, 2))
    if tags or draw(st.booleans()):
        outer = Ether(src=MAC, dst=MAC)
        for vlan in range(tags):
            outer = outer / Dot1Q(vlan=vlan + 1)
        return outer / pkt, layer, ipv6, "ether"
    return pkt, layer, ipv6, "ip"


def offload_tcp() -> bytes:
    """IPv4/TCP as a host using transmit checksum offload captures it: the TCP field holds the folded
    pseudo-header sum (~csum_tcpudp_magic(saddr, daddr, len, IPPROTO_TCP, 0)); oracle over RFC 9293's
    pseudo-header: the complement of its checksum."""
    good = raw(IP(src=A4, dst=B4) / TCP(sport=1, dport=2) / b"offloaded")
    seg = good[20:]
    partial = rfc1071_checksum(pseudo4(A4, B4, 6, len(seg))) ^ 0xFFFF
    return good[:36] + partial.to_bytes(2, "big") + good[38:]

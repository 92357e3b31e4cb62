"""csum.layers.layout: the outer IP layer as csum.rewrite edits it, from the one walker behind csum.inet too
(it replaced csum/_packet.py, the parser these regressions were first written against).

Independent sources: scapy 2.8 (layer offsets of the packets it builds, its pseudo-header
builders ``in4_pseudoheader`` / ``in6_pseudoheader``, its full checksum recomputation), the naive
RFC 1071 model in tests/oracle.py over pseudo-headers written from the RFC text (helpers shared
with tests/layers/test_inet.py), and the RFC clauses named in each docstring.

The tests named ``*_was_*`` pin packets on which the two parsers this module replaces
(csum.inet's private one and csum._packet's own) disagreed, decided by the RFC named.
"""

import struct
from ipaddress import ip_address

import pytest
from hypothesis import given, settings
from packets import A4, A6, B4, B6, C4, C6, D4, D6, MAC, oracle_l4, pseudo4, pseudo6, scapy_packets
from scapy.all import (
    HAO,
    ICMP,
    IP,
    TCP,
    UDP,
    Dot1AD,
    Dot1Q,
    Ether,
    ICMPv6EchoRequest,
    IPOption_LSRR,
    IPOption_SSRR,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    Jumbo,
    Raw,
    raw,
)
from scapy.layers.inet import in4_pseudoheader
from scapy.layers.inet6 import in6_pseudoheader

from csum.errors import CsumValueError
from csum.layers import inet
from csum.layers import layout as parse
from csum.rewrite import CsumReplaceCall, rewrite

R1, R2, S1, S2 = C4, D4, C6, D6

L4_CLASSES = {"tcp": (TCP, 16), "udp": (UDP, 6), "icmp": (ICMP, 2), "icmpv6": (ICMPv6EchoRequest, 2)}


def layout(data: bytes, link: str = "auto"):
    return parse(memoryview(data), link)


def l4_calls(result) -> list:
    return [c for c in result.calls if isinstance(c, CsumReplaceCall) and c.helper == "bpf_l4_csum_replace"]


@settings(max_examples=300)  # scapy builds each packet and its pseudo-header (~3 ms): 300 keeps this ~1 s
@given(scapy_packets())
def test_layout_agrees_with_scapy(case):
    """Invariant: for every packet kind csum.inet verifies (IPv4 with options and source routes, IPv6 with
    hop-by-hop, destination options, routing type 0/4, Home Address option, atomic fragment; Ethernet with
    0..2 VLAN tags or bare IP), the IP and L4 offsets, protocol and length, and the pseudo-header's source and
    final destination are scapy's. Expected: scapy's layer lengths and in4_pseudoheader / in6_pseudoheader."""
    pkt, layer, ipv6, link = case
    data = raw(pkt)
    lay = layout(data, {"ether": "ethernet", "ip": "ip"}[link])
    auto = layout(data)
    assert auto == lay and lay.link == ("ethernet" if link == "ether" else "ip")
    ip_layer = pkt[IPv6] if ipv6 else pkt[IP]
    cls, field = L4_CLASSES[layer]
    l4_bytes = raw(pkt[cls])
    assert (lay.version, lay.l3, lay.end) == (6 if ipv6 else 4, len(data) - len(raw(ip_layer)), len(data))
    assert (lay.l4, lay.l4_len, lay.l4_csum) == (len(data) - len(l4_bytes), len(l4_bytes),
                                                 len(data) - len(l4_bytes) + field)
    assert lay.proto == {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58}[layer]
    assert lay.pseudo is (layer != "icmp")
    size = 16 if ipv6 else 4
    src = data[lay.pseudo_saddr:lay.pseudo_saddr + size]
    dst = data[lay.pseudo_daddr:lay.pseudo_daddr + size]
    if ipv6:
        ph = in6_pseudoheader(lay.proto, pkt[cls], len(l4_bytes))
        want_src, want_dst = ip_address(ph.src).packed, ip_address(ph.dst).packed
    else:
        ph = in4_pseudoheader(lay.proto, ip_layer, len(l4_bytes))
        want_src, want_dst = ph[:4], ph[4:8]
    assert (src, dst) == (want_src, want_dst)
    assert lay.fragment == ("atomic" if IPv6ExtHdrFragment in pkt else "none")


def test_home_address_option_rewrite_was_ignored():
    """RFC 6275 section 6.3: with a Home Address option the pseudo-header source is the home address, so a
    rewrite of the IPv6 source (the care-of address) leaves the UDP checksum alone. csum._packet did not
    read the option (and patched it); csum.inet did. Expected: scapy's build, whose in6_pseudoheader uses the
    home address for a header holding just that option."""
    def build(src: str) -> bytes:
        return raw(IPv6(src=src, dst=B6) / IPv6ExtHdrDestOpt(options=[HAO(hoa=S2)]) / UDP(sport=1, dport=2) / b"mip")

    lay = layout(build(A6))
    assert not lay.saddr_in_pseudo and lay.daddr_in_pseudo
    out = rewrite(build(A6), saddr=S1)
    assert out.packet == build(S1) and not l4_calls(out)
    assert [r.ok for r in inet.verify(out.packet)] == [True]


def test_unreadable_routing_type_destination_was_in_pseudo_header():
    """RFC 8200 section 8.1: with a Routing header whose Segments Left is non-zero, the pseudo-header holds
    the final destination, whatever the routing type. For a type csum does not read (3, RPL) csum._packet
    kept the header's destination in the pseudo-header and patched the checksum on a daddr rewrite; now it
    is left alone (csum.inet: final destination unknown). Expected: scapy's build (it takes the routing
    header's last address, which RFC 6554 with CmprI = CmprE = 0 makes the final destination)."""
    def build(dst: str) -> bytes:
        rh = IPv6ExtHdrRouting(type=3, segleft=1, addresses=[S1])
        return raw(IPv6(src=A6, dst=dst) / rh / UDP(sport=1, dport=2) / b"rpl")

    lay = layout(build(B6))
    assert lay.pseudo_daddr is None and not lay.daddr_in_pseudo
    out = rewrite(build(B6), daddr=S2)
    assert out.packet == build(S2) and not l4_calls(out)
    assert inet.verify(out.packet)[0].reason == inet.UNKNOWN_DESTINATION


@pytest.mark.parametrize("option", [IPOption_LSRR, IPOption_SSRR])
def test_used_up_source_route_destination_was_not_in_pseudo_header(option):
    """RFC 791 / RFC 9293 section 3.1: once a source route is used up (pointer past its length, as received
    at the final destination) the header's destination is the final one and enters the pseudo-header.
    csum._packet took the route's last address regardless of the pointer; csum.inet followed the RFC. A
    daddr rewrite must now patch the UDP checksum. Expected: the oracle over the RFC 793 pseudo-header with
    the new destination (scapy 2.8 takes routers[-1] here, see tests/layers/test_inet.py)."""
    def build(chksum: int) -> bytes:
        return raw(IP(src=A4, dst=B4, options=[option(routers=[R1, R2], pointer=12)])
                   / UDP(sport=1, dport=2, chksum=chksum) / b"sr")

    right = oracle_l4(pseudo4(A4, B4, 17, 10), build(0)[-10:], 6) or 0xFFFF  # scapy would use R2
    data = build(right)
    assert layout(data).daddr_in_pseudo and [r.ok for r in inet.verify(data)] == [True, True]
    out = rewrite(data, daddr="192.0.2.99").packet
    seg = out[-10:]
    assert int.from_bytes(seg[6:8], "big") == (oracle_l4(pseudo4(A4, "192.0.2.99", 17, 10), seg, 6) or 0xFFFF)
    assert [r.ok for r in inet.verify(out)] == [True, True]


def test_two_source_routes_were_accepted_by_rewrite():
    """RFC 791: a source route option "appears at most once in a datagram" (Linux's __ip_options_compile
    rejects a second). csum.inet refused such packets, csum._packet let rewrite fall back to the header's
    destination (as scapy does, with a warning); both now refuse with code bad-option."""
    data = raw(IP(src=A4, dst=B4, options=[IPOption_LSRR(routers=[R1]), IPOption_SSRR(routers=[R2])]) / UDP())
    for call in (lambda: inet.verify(data), lambda: rewrite(data, daddr="192.0.2.99")):
        with pytest.raises(CsumValueError, match="more than one IPv4 source route") as err:
            call()
        assert err.value.code == "bad-option"


@pytest.mark.parametrize("tags", [
    [Dot1Q(vlan=3), Dot1Q(vlan=4), Dot1Q(vlan=5)],            # three tags: csum._packet stopped at two
    "qinq1",                                                  # pre-802.1ad TPID 0x9100 outside an 802.1Q tag
    [Dot1AD(vlan=6), Dot1Q(vlan=7)],                          # 802.1ad S-tag + C-tag: both parsers knew it
])
def test_vlan_tags_were_parsed_differently(tags):
    """Ethernet with VLAN tags: csum.inet walked any number of tags with TPIDs 0x8100, 0x88a8 and 0x9100;
    csum._packet two tags of 0x8100/0x88a8. No RFC covers the tags; IEEE 802.1Q defines 0x8100 and 0x88a8
    and 0x9100 stays in deployed QinQ gear (Linux: ETH_P_QINQ1), so all three, any number, for both.
    Expected: scapy's recomputation after a port rewrite, and scapy's layer offset of the IP header."""
    def build(sport: int) -> bytes:
        ip = IP(src=A4, dst=B4) / UDP(sport=sport, dport=2) / b"tagged"
        if tags == "qinq1":
            return raw(Ether(src=MAC, dst=MAC, type=0x9100) / Dot1Q(vlan=9) / ip)
        outer = Ether(src=MAC, dst=MAC)
        for tag in tags:
            outer = outer / tag
        return raw(outer / ip)

    data = build(1)
    lay = layout(data, "ether")
    assert layout(data) == lay and (lay.link, lay.l3) == ("ethernet", len(data) - len(raw(IP(data[lay.l3:]))))
    assert lay.l3 == 14 + 4 * (1 if tags == "qinq1" else len(tags))
    assert rewrite(data, sport=99).packet == build(99)
    assert [r.ok for r in inet.verify(data, link="ether")] == [True, True]
    assert inet.verify(data, link="auto") == inet.verify(data, link="ethernet")


def test_auto_link_took_bare_ip_for_ethernet():
    """link="auto": csum._packet took any buffer whose bytes 12..13 (here the IPv4 source 8.0.x.x) read as
    the IPv4 ethertype, with a 4 in the next nibble, for an Ethernet frame, and refused this bare datagram.
    Auto now prefers the reading whose IP lengths fit the buffer; when both fit (a frame whose destination
    MAC also reads as a fitting IPv4 header), Ethernet. Expected: scapy's build and layer offsets."""
    bare = raw(IP(src="8.0.69.1", dst=B4) / UDP(sport=1, dport=2) / b"bare")
    assert (layout(bare).link, layout(bare).l3) == ("ip", 0)
    assert rewrite(bare, sport=7).packet == raw(IP(src="8.0.69.1", dst=B4) / UDP(sport=7, dport=2) / b"bare")
    inner = IP(src=A4, dst=B4) / UDP(sport=1, dport=2) / b"frame"
    size = 14 + len(raw(inner))
    frame = raw(Ether(dst=f"45:00:{size >> 8:02x}:{size & 0xFF:02x}:00:01", src=MAC) / inner)
    assert layout(frame, "ip").end == len(frame)  # the bare reading fits too
    assert (layout(frame).link, layout(frame).l3) == ("ethernet", 14)


def test_jumbogram_was_refused_by_rewrite():
    """RFC 2675: an IPv6 jumbogram (payload length 0, Jumbo Payload option) carries a 32-bit length.
    csum._packet had no Jumbo Payload support and called it truncated; now rewrite patches it like any
    packet. Expected: scapy 2.8's full recomputation (which tests/layers/test_inet.py checks against the oracle)."""
    body = bytes(range(256)) * 273

    def build(sport: int, src: str) -> bytes:
        hbh = IPv6ExtHdrHopByHop(options=[Jumbo(jumboplen=8 + 20 + len(body))])
        return raw(IPv6(src=src, dst=B6, plen=0) / hbh / TCP(sport=sport, dport=2) / body)

    lay = layout(build(1, A6))
    assert lay.jumbo and lay.l4_len == 20 + len(body) > 0xFFFF
    moved = rewrite(build(1, A6), sport=9, saddr=S1).packet
    assert moved == build(9, S1) != build(1, A6)
    assert inet.verify(moved)[0].ok is True


def test_shim6_extension_header_was_not_walked_by_inet():
    """RFC 7045 / RFC 5533 section 5.1: the Shim6 header (next header 140) is an IPv6 extension header in the
    common format; csum._packet walked it (with Mobility and HIP) to the transport header, csum.inet stopped
    and reported nothing. Expected: the oracle over the RFC 8200 pseudo-header."""
    udp = struct.pack("!HHHH", 5, 6, 8 + 5, 0) + b"shim6"
    ext = bytes([17, 0, 0x80, 0, 0, 0, 0, 1])  # next header UDP, length 0, P = 1 (payload extension header)
    want = oracle_l4(pseudo6(A6, B6, 17, len(udp)), udp, 6) or 0xFFFF
    udp = udp[:6] + want.to_bytes(2, "big") + udp[8:]
    data = raw(IPv6(src=A6, dst=B6, nh=140) / Raw(ext + udp))
    assert inet.verify(data) == [inet.Result("udp", 48, want, want, True, inet.OK)]


def test_non_first_ipv6_fragment_data_was_parsed_as_headers():
    """RFC 8200 section 4.5: after the Fragment header of a non-first fragment comes fragment data, even when
    its next header names an extension header (here destination options, the fragmentable part).
    csum.inet walked on into the data and called this valid fragment truncated. Expected: the RFC; no
    checksum is found (the transport header is in the first fragment) and the IPv6 source rewrite needs
    no checksum call."""
    data = raw(IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(offset=100, nh=60, m=1) / Raw(b"\x11\xff" + bytes(14)))
    lay = layout(data)
    assert (lay.fragment, lay.proto, lay.l4, lay.l4_start) == ("later", 60, None, 48)
    assert inet.verify(data) == []
    assert not [c for c in rewrite(data, saddr=S1).calls if isinstance(c, CsumReplaceCall)]


def test_tiny_first_fragment_was_refused_by_rewrite():
    """RFC 791 lets a first fragment end inside the TCP header (RFC 1858's tiny fragments): csum._packet
    called it truncated, csum.inet reported "needs reassembly". The checksum field is not in this fragment,
    so a saddr rewrite patches only the IPv4 header checksum. Expected: scapy's IPv4 recomputation."""
    def build(src: str) -> bytes:
        return raw(IP(src=src, dst=B4, flags="MF", proto=6) / Raw(raw(TCP(sport=1, dport=2))[:8]))

    lay = layout(build(A4))
    assert (lay.fragment, lay.l4, lay.l4_csum) == ("first", 20, None)
    out = rewrite(build(A4), saddr="192.0.2.77")
    assert out.packet == build("192.0.2.77") and not l4_calls(out)
    tcp = inet.verify(build(A4))[1]
    assert (tcp.stored, tcp.reason) == (None, inet.NEEDS_REASSEMBLY)


def _jumbo_too_small() -> bytes:
    hbh = IPv6ExtHdrHopByHop(options=[Jumbo(jumboplen=1000)])
    return raw(IPv6(src=A6, dst=B6, plen=0) / hbh / UDP(len=0) / bytes(992))


@pytest.mark.parametrize(("data", "link", "code", "clause"), [
    (raw(IP(src=A4, dst=B4) / TCP())[:30], "ip", "truncated", "RFC 791 total length"),
    (raw(Ether(src=MAC, dst=MAC, type=0x0806) / bytes(30)), "ether", "not-ip", "EtherType 0x0806 (ARP)"),
    (b"\x55" + bytes(40), "ip", "not-ip", "IP version 5"),
    (raw(IP(ihl=4, src=A4, dst=B4)), "ip", "bad-ihl", "RFC 791 IHL >= 5"),
    (raw(IP(len=12, src=A4, dst=B4)), "ip", "bad-length", "RFC 791 total length >= header"),
    (raw(IP(src=A4, dst=B4) / UDP(len=40) / b"x"), "ip", "bad-length", "RFC 768 UDP length"),
    (_jumbo_too_small(), "ip", "bad-length", "RFC 2675 section 2: jumbo length > 65535"),
    (raw(IP(src=A4, dst=B4, options=b"\x07\x09\x04" + bytes(5)) / UDP()), "ip", "bad-option",
     "RFC 791 option length"),
    (raw(IPv6(src=A6, dst=B6) / IPv6ExtHdrDestOpt(options=[HAO(hoa=S2, optlen=8)]) / UDP()), "ip", "bad-option",
     "RFC 6275 6.3 Home Address option length"),
    (raw(IP(src=A4, dst=B4) / UDP()), "wifi", "bad-value", "the link argument"),
])
def test_one_error_vocabulary(data, link, code, clause):
    """csum.inet and csum.rewrite raise the same CsumValueError code for the same malformed packet (before:
    inet's not-ip/bad-ihl/bad-option/bad-link against _packet's bad-packet/bad-value, and _packet ignored
    bad options and UDP lengths). Expected: the RFC clause in the test id makes the packet malformed."""
    for call in (lambda: inet.verify(data, link=link), lambda: rewrite(data, link=link, decrement_ttl=True)):
        with pytest.raises(CsumValueError) as err:
            call()
        assert err.value.code == code, (clause, str(err.value))

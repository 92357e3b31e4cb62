"""csum/layers/inet.py: checksums of IPv4 headers, TCP, UDP, ICMP and ICMPv6 in raw packets.

Independent sources: scapy 2.8 (packets built and checksummed by scapy), the naive RFC 1071
model in tests/oracle.py over pseudo-headers written here from the RFC text (RFC 793/768
for IPv4, RFC 8200 section 8.1 for IPv6), and RFC 1624's worked example. Where scapy
departs from the RFCs the test says so and shows scapy's value.
"""

import dataclasses
import struct
from ipaddress import ip_address

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import rfc1071_checksum
from packets import A4, A6, B4, B6, C4, C6, D4, D6, MAC, V4_OPTIONS, V6_EXT, oracle_l4, pseudo4, pseudo6, scapy_packets
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
    Jumbo,
    Raw,
    fragment,
    raw,
)

import csum
from csum.errors import CsumValueError
from csum.layers import inet
from csum.testing import u16s

R1, R2, S1, S2 = C4, D4, C6, D6


def by_layer(results):
    return {r.layer: r for r in results}


# --- agreement with scapy on every packet kind -------------------------------------------------

L4_FIELD = {"tcp": (TCP, 16, "chksum"), "udp": (UDP, 6, "chksum"), "icmp": (ICMP, 2, "chksum"),
            "icmpv6": (ICMPv6EchoRequest, 2, "cksum")}
@settings(max_examples=400)  # scapy builds each packet twice (~3 ms): 400 keeps this under 3 s
@given(scapy_packets(), st.one_of(st.none(), u16s()))
def test_verify_agrees_with_scapy(case, corrupt):
    """verify() computes what scapy computes for every layer (IPv4 with/without options, TCP, UDP,
    ICMP, IPv6 with extension headers + TCP/UDP/ICMPv6, Ethernet with 0..2 VLAN tags, payload
    0..1500 bytes); a stored value passes exactly when it equals scapy's, or is its one's-complement
    twin (0xffff for 0) outside UDP, or is UDP's 0 over IPv4 (RFC 768). Expected: scapy."""
    pkt, layer, ipv6, link = case
    good = raw(pkt)
    cls, field, name = L4_FIELD[layer]
    l4_at = len(good) - len(raw(pkt[cls]))  # scapy's own checksums, read from the bytes it built
    right = int.from_bytes(good[l4_at + field : l4_at + field + 2], "big")
    if corrupt is not None:
        pkt = pkt.copy()
        setattr(pkt[cls], name, corrupt)
    data = raw(pkt)
    results = by_layer(inet.verify(data, link=link))
    assert set(results) == ({layer} if ipv6 else {"ipv4", layer})
    if not ipv6:
        ip_at = len(good) - len(raw(pkt[IP]))
        ip_sum = int.from_bytes(good[ip_at + 10 : ip_at + 12], "big")
        assert results["ipv4"].computed == results["ipv4"].stored == ip_sum
        assert results["ipv4"].ok is True
    res = results[layer]
    stored = right if corrupt is None else corrupt
    assert (res.stored, res.computed) == (stored, right)
    twin = layer != "udp" and right == 0 and stored == 0xFFFF  # one's-complement -0 for +0
    udp_off = layer == "udp" and stored == 0 and not ipv6  # RFC 768: no checksum
    assert res.ok is (stored == right or twin or udp_off)
    assert inet.compute(data, link=link) == right


# --- regressions named after peers' bugs -------------------------------------------------------

def udp_with_zero_sum(ipv6: bool) -> bytes:
    """A raw IP/UDP packet whose checksum computes to 0x0000 (before RFC 768's mapping), field 0.

    The last payload word is chosen, with the oracle, so that pseudo-header + segment sum to 0xffff.
    """
    src, dst = (A6, B6) if ipv6 else (A4, B4)
    seg = bytearray(struct.pack("!HHHH", 1234, 5678, 8 + 6, 0) + b"abcd\0\0")
    pseudo = pseudo6(src, dst, 17, len(seg)) if ipv6 else pseudo4(src, dst, 17, len(seg))
    seg[-2:] = rfc1071_checksum(pseudo + bytes(seg)).to_bytes(2, "big")
    assert rfc1071_checksum(pseudo + bytes(seg)) == 0
    ip = IPv6(src=src, dst=dst, nh=17) if ipv6 else IP(src=src, dst=dst, proto=17)
    return raw(ip / Raw(bytes(seg)))


def test_udp6_computed_zero_sent_as_ffff_dpkt_libpnet_585():
    """Regression, libpnet/libpnet#585 (pnet's UDP checksum helpers return the raw one's-complement
    result, so a computed 0 is stored as 0 and read as "no checksum") and dpkt 1.9.8's IPv6
    ``__bytes__`` (maps 0 to 0xffff for IPv4 only). RFC 768 / RFC 8200 section 8.1: a computed 0
    is sent as 0xffff. Expected: the oracle's 0 for the sum, mapped per the RFC; scapy agrees."""
    for ipv6 in (False, True):
        data = udp_with_zero_sum(ipv6)
        assert inet.compute(data) == 0xFFFF
        parse = IPv6 if ipv6 else IP
        rebuilt = parse(data)
        del rebuilt[UDP].chksum
        assert parse(raw(rebuilt))[UDP].chksum == 0xFFFF  # scapy maps too
        fixed = bytearray(data)
        at = by_layer(inet.verify(data))["udp"].offset + 6
        fixed[at : at + 2] = b"\xff\xff"
        assert by_layer(inet.verify(bytes(fixed)))["udp"] == inet.Result("udp", at - 6, 0xFFFF, 0xFFFF, True, inet.OK)


def test_udp_stored_zero_ipv4_vs_ipv6_rfc8200_rfc6936():
    """A stored UDP checksum of 0 means "none computed" over IPv4 (RFC 768) and is invalid over IPv6
    (RFC 8200 section 8.1) unless the caller accepts RFC 6936's tunnel exception. Expected: the RFCs."""
    (v4,) = [r for r in inet.verify(udp_with_zero_sum(False)) if r.layer == "udp"]
    assert (v4.stored, v4.ok, v4.reason) == (0, True, inet.UDP_NO_CHECKSUM)
    data6 = raw(IPv6(src=A6, dst=B6) / UDP(chksum=0) / b"tunnel")
    (v6,) = inet.verify(data6)
    assert (v6.stored, v6.ok, v6.reason) == (0, False, inet.UDP6_ZERO)
    (v6_ok,) = inet.verify(data6, udp6_zero_ok=True)
    assert (v6_ok.ok, v6_ok.reason) == (True, inet.UDP6_ZERO_ALLOWED)
    assert v6.computed == IPv6(raw(IPv6(src=A6, dst=B6) / UDP() / b"tunnel"))[UDP].chksum


def test_icmp_zero_vs_ffff_after_incremental_update_rfc1624_tcpdump_855():
    """Regression, the-tcpdump-group/tcpdump#855 (open): the reporter cites RFC 1624 section 3, a
    correct checksum field never holds 0xffff (-0), and asks tcpdump to flag it. RFC 1624 section 4's
    example: other words sum to 0xcd7a, field m changes 0x5555 -> 0x3285; HC 0xdd2f becomes 0x0000 by
    recomputation or eqn. 3, 0xffff by eqn. 2. Here m is an ICMP echo id (0x0800 + seq 0xc57a =
    0xcd7a). csum computes 0x0000 and csum_replace2 (eqn. 3) agrees; a stored 0xffff passes the
    receiver's sum test (as Linux and scapy accept it) but is reported as ``negative-zero``."""
    def packet(ident: int, stored: int) -> bytes:
        icmp = struct.pack("!BBHHH", 8, 0, stored, ident, 0xC57A)
        return raw(IP(src=A4, dst=B4, proto=1) / Raw(icmp))

    assert inet.compute(packet(0x5555, 0)) == 0xDD2F  # RFC 1624 section 4: HC
    assert inet.compute(packet(0x3285, 0)) == 0x0000  # HC' by recomputation
    assert csum.csum_replace2(0xDD2F, 0x5555, 0x3285) == 0x0000  # eqn. 3
    assert by_layer(inet.verify(packet(0x3285, 0x0000)))["icmp"].reason == inet.OK
    eqn2 = by_layer(inet.verify(packet(0x3285, 0xFFFF)))["icmp"]
    assert (eqn2.stored, eqn2.computed, eqn2.ok, eqn2.reason) == (0xFFFF, 0, True, inet.NEGATIVE_ZERO)


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_ipv6_jumbogram_32bit_length_rfc2675(proto):
    """An IPv6 jumbogram (payload length 0, hop-by-hop Jumbo Payload option, RFC 2675) with a
    70001-byte payload: the pseudo-header carries the 32-bit upper-layer length (RFC 8200 8.1);
    UDP's length field is 0 (RFC 2675 section 4). dpkt 1.9.8 packs that length as 16 bits ('H'),
    scapy before PR #3427 declared it 16 bits. Expected: oracle over the RFC 8200 pseudo-header;
    scapy 2.8 agrees."""
    body = bytes(range(256)) * 273 + b"\x01"  # 70001 bytes, odd
    l4, size, field = (TCP(), 20, 16) if proto == "tcp" else (UDP(len=0), 8, 6)
    hbh = IPv6ExtHdrHopByHop(options=[Jumbo(jumboplen=8 + size + len(body))])
    pkt = IPv6(src=A6, dst=B6, plen=0) / hbh / l4 / body
    data = raw(pkt)
    seg = data[48:]
    assert len(seg) > 0xFFFF
    want = oracle_l4(pseudo6(A6, B6, 6 if proto == "tcp" else 17, len(seg)), seg, field)
    (res,) = inet.verify(data)
    assert (res.layer, res.computed, res.ok) == (proto, want, True)
    assert IPv6(data)[TCP if proto == "tcp" else UDP].chksum == want


def test_ipv6_routing_header_final_destination_scapy_858_tcpdump_101():
    """Regression, secdev/scapy#858 (segment routing: the pseudo-header address is Segment List[0],
    the final segment) and the-tcpdump-group/tcpdump#101 (type 0: the last address). RFC 8200 8.1:
    while Segments Left > 0 the final destination is in the routing header; at the last hop it is
    the IPv6 destination. Expected: oracle over the RFC pseudo-header; scapy agrees."""
    cases = [(IPv6ExtHdrRouting(addresses=[S1, S2], segleft=2), S2),
             (IPv6ExtHdrRouting(addresses=[S1, S2], segleft=0), B6),
             (IPv6ExtHdrSegmentRouting(addresses=[S1, S2]), S1),
             (IPv6ExtHdrSegmentRouting(addresses=[S1, S2], segleft=0), B6)]
    for ext, final in cases:
        data = raw(IPv6(src=A6, dst=B6) / ext / UDP(sport=7, dport=9) / b"routed")
        seg = data[-14:]
        want = oracle_l4(pseudo6(A6, final, 17, len(seg)), seg, 6) or 0xFFFF
        (res,) = inet.verify(data)
        assert (res.computed, res.ok) == (want, True), final
        assert IPv6(data)[UDP].chksum == want


def test_ipv4_source_route_final_destination_scapy_3074_3076():
    """Regression, secdev/scapy#3074 (UDP checksum ignored an LSRR option; fixed by PR #3076, which
    uses the option's last router). RFC 791 / RFC 9293 3.1: the pseudo-header holds the final
    destination: the route's last address while the route is not used up. Once the pointer is past
    the end (as received at the final destination, the list now holds recorded hops) the IP
    destination is final; scapy 2.8 still takes routers[-1] there, csum follows the RFC. Expected:
    oracle over the RFC 793 pseudo-header; scapy where it follows the RFC."""
    for opt in (IPOption_LSRR, IPOption_SSRR):
        live = raw(IP(src=A4, dst=B4, options=[opt(routers=[R1, R2])]) / UDP() / b"sr")
        seg = live[-10:]
        assert by_layer(inet.verify(live))["udp"].computed == oracle_l4(pseudo4(A4, R2, 17, 10), seg, 6)
        assert IP(live)[UDP].chksum == oracle_l4(pseudo4(A4, R2, 17, 10), seg, 6)  # scapy agrees
        done_pkt = IP(src=A4, dst=B4, options=[opt(routers=[R1, R2], pointer=12)]) / UDP() / b"sr"
        done = raw(done_pkt)
        want = oracle_l4(pseudo4(A4, B4, 17, 10), done[-10:], 6) or 0xFFFF
        assert by_layer(inet.verify(done))["udp"].computed == want
        scapy_rule = oracle_l4(pseudo4(A4, R2, 17, 10), done[-10:], 6) or 0xFFFF  # routers[-1]
        assert IP(done)[UDP].chksum == scapy_rule != want


def test_home_address_option_with_padding_scapy_dissected():
    """RFC 6275 section 6.3: with a Home Address destination option the pseudo-header source is the
    home address. scapy 2.8's in6_pseudoheader honours it only when the header holds exactly one
    option, so a dissected packet (the PadN that aligns the option is then a second option) is
    re-checksummed with the IPv6 source. Expected: oracle over the RFC pseudo-header; scapy's
    build-time value agrees, its re-computation from the dissected packet does not."""
    data = raw(IPv6(src=A6, dst=B6) / IPv6ExtHdrDestOpt(options=[HAO(hoa=S2)]) / UDP() / b"home")
    seg = data[-12:]
    want = oracle_l4(pseudo6(S2, B6, 17, 12), seg, 6) or 0xFFFF
    (res,) = inet.verify(data)
    assert (res.computed, res.ok) == (want, True)
    assert IPv6(data)[UDP].chksum == want
    again = IPv6(data)
    del again[UDP].chksum
    assert IPv6(raw(again))[UDP].chksum == (oracle_l4(pseudo6(A6, B6, 17, 12), seg, 6) or 0xFFFF)


def test_fragments_tcprewrite_190():
    """Regression, appneta/tcpreplay#190: ``tcprewrite -C`` recomputed the UDP checksum of a
    fragmented datagram over one fragment and corrupted it (PR #294: skip fragments). A non-first
    fragment has no UDP header: not applicable; the first covers bytes it does not hold: needs
    reassembly; neither is an error, and compute() refuses. Fragments built by scapy.fragment; the
    IPv4 header checksums still verify (expected: scapy's)."""
    frags = [raw(f) for f in fragment(IP(src=A4, dst=B4) / UDP() / (b"x" * 3000), fragsize=1000)]
    assert len(frags) > 2
    reasons = []
    for data in frags:
        res = by_layer(inet.verify(data))
        assert res["ipv4"].ok is True and res["ipv4"].computed == IP(data).chksum
        assert res["udp"].ok is None and res["udp"].computed is None
        reasons.append(res["udp"].reason)
        with pytest.raises(CsumValueError, match="not computable"):
            inet.compute(data)
    assert reasons == [inet.NEEDS_REASSEMBLY] + [inet.NON_FIRST_FRAGMENT] * (len(frags) - 1)
    six = [IPv6ExtHdrFragment(m=1, offset=0), IPv6ExtHdrFragment(m=0, offset=100),
           IPv6ExtHdrFragment(m=0, offset=0)]
    got = [inet.verify(raw(IPv6(src=A6, dst=B6) / f / UDP() / b"frag"))[0].reason for f in six]
    assert got == [inet.NEEDS_REASSEMBLY, inet.NON_FIRST_FRAGMENT, inet.OK]  # RFC 6946 atomic fragment


def test_little_endian_crafted_checksum_is_a_mismatch():
    """A checksum stored with the bytes swapped (packed '<H' on a little-endian host) fails unless
    its two bytes are equal; the same sum packed '>H' passes. RFC 1071 section 2(B): the sum is
    byte-order independent, so csum_fold of the little-endian-held csum_partial, stored
    little-endian, gives the very same bytes. Expected: oracle over the RFC 793 pseudo-header."""
    seg = bytearray(struct.pack("!HHIIBBHHH", 80, 443, 1, 2, 0x50, 0x18, 512, 0, 0) + b"odd")
    want = oracle_l4(pseudo4(A4, B4, 6, len(seg)), bytes(seg), 16)
    le_held = csum.csum_tcpudp_magic(A4, B4, len(seg), 6, csum.csum_partial(bytes(seg)))
    assert le_held.to_bytes(2, "little") == want.to_bytes(2, "big")
    for order, passes in ((">H", True), ("<H", want >> 8 == want & 0xFF)):
        seg[16:18] = struct.pack(order, want)
        (_, tcp) = inet.verify(raw(IP(src=A4, dst=B4, proto=6) / Raw(bytes(seg))))
        assert (tcp.computed, tcp.ok) == (want, passes)
        assert tcp.stored == int.from_bytes(struct.pack(order, want), "big")


def test_link_padding_and_udp_length_trim():
    """Bytes after the IPv4 total length (Ethernet minimum-frame padding) are not checksummed, and
    UDP covers its own length field's bytes only (RFC 768). Expected: scapy's checksums."""
    data = raw(Ether(src=MAC, dst=MAC) / IP(src=A4, dst=B4) / UDP() / b"hi")
    for pad in (b"\0" * 16, b"\xff" * 16):
        res = inet.verify(data + pad, link="ether")
        assert [r.ok for r in res] == [True, True]
    inner = raw(UDP(sport=1, dport=2) / b"abc")
    extra = raw(IP(src=A4, dst=B4, proto=17) / Raw(inner + b"\x99\x98"))  # IP payload longer than UDP
    alone = IP(raw(IP(src=A4, dst=B4) / UDP(sport=1, dport=2) / b"abc"))[UDP].chksum
    assert by_layer(inet.verify(extra))["udp"].computed == alone


@pytest.mark.parametrize("data, what", [
    (b"\x45\x00\x00", "IPv4 header"),
    (raw(IP(ihl=3, src=A4, dst=B4)), "IHL is 3"),
    (raw(IP(ihl=15, src=A4, dst=B4)), "IHL 15"),
    (raw(IP(len=200, src=A4, dst=B4)), "total length 200"),
    (raw(IP(len=12, src=A4, dst=B4)), "shorter than its 20-byte header"),
    (raw(IP(src=A4, dst=B4) / UDP(len=40) / b"x"), "UDP length 40"),
    (raw(IP(src=A4, dst=B4) / UDP(len=4)), "UDP length 4"),
    (raw(IP(src=A4, dst=B4, proto=6) / b"short"), "tcp segment has 5 bytes"),
    (raw(IPv6(plen=100, src=A6, dst=B6) / UDP()), "payload length 100"),
    (raw(IPv6(plen=0, nh=6, src=A6, dst=B6)), "without a Jumbo"),
    (b"\x55" + bytes(40), "IP version 5"),
    (raw(IP(src=A4, dst=B4, options=[IPOption_LSRR(routers=[R1]), IPOption_SSRR(routers=[R2])]) / UDP()),
     "more than one"),
])
def test_malformed_packets_raise_named_errors(data, what):
    """Truncated packets and bogus IHL/lengths raise CsumValueError naming the problem, never
    IndexError or struct.error."""
    with pytest.raises(CsumValueError, match=what):
        inet.verify(data)


def test_bad_link_and_non_ip_ethertype():
    """link must be 'ip' or 'ether'; an Ethernet frame that is not IP is refused by name."""
    with pytest.raises(CsumValueError, match="link"):
        inet.verify(raw(IP()), link="ppp")
    with pytest.raises(CsumValueError, match="EtherType 0x0806"):
        inet.verify(raw(Ether(src=MAC, dst=MAC, type=0x0806) / (b"arp" * 10)), link="ether")
    with pytest.raises(CsumValueError, match="no icmp"):
        inet.compute(raw(IP(src=A4, dst=B4) / UDP()), "icmp")


@settings(max_examples=300)  # scapy builds the base packet: 300 keeps this near a second
@given(scapy_packets(), st.integers(0, 1600),
       st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=3))
def test_mangled_packets_raise_only_csum_errors(case, cut, edits):
    """Invariant: truncated or byte-mangled packets give results or CsumValueError, nothing else."""
    pkt, _, _, link = case
    data = bytearray(raw(pkt)[:cut])
    for at, value in edits:
        if at < len(data):
            data[at] = value
    try:
        results = inet.verify(bytes(data), link=link)
    except CsumValueError:
        return
    assert all(isinstance(r, inet.Result) for r in results)


def test_unreadable_final_destination_and_unknown_transports():
    """A routing header type csum cannot read (type 3, RPL, compressed addresses) with Segments
    Left > 0 hides the final destination: unverifiable, not an error. ESP (IPv6) gives one result
    that is not verifiable (encrypted); protocols without a known checksum give none; compute("ipv4") is the header checksum
    (expected: scapy's)."""
    rpl = raw(IPv6(src=A6, dst=B6) / IPv6ExtHdrRouting(type=3, segleft=1, addresses=[S1]) / UDP() / b"x")
    (res,) = inet.verify(rpl)
    assert (res.layer, res.ok, res.computed, res.reason) == ("udp", None, None, inet.UNKNOWN_DESTINATION)
    (esp,) = inet.verify(raw(IPv6(src=A6, dst=B6, nh=50) / bytes(16)))
    assert (esp.layer, esp.ok, esp.reason, esp.status, esp.path) == ("esp", None, inet.Reason.ENCRYPTED, "n/a", "ipv6/esp")
    gre = raw(IP(src=A4, dst=B4, proto=47) / bytes(8))
    assert [r.layer for r in inet.verify(gre)] == ["ipv4"]
    assert inet.compute(gre, "ipv4") == IP(gre).chksum


def test_result_is_frozen():
    """Results are immutable value objects: no field can be set or deleted, nothing can be added, and two
    verifications of the same packet give equal, equally hashed Results (usable as dict keys)."""
    packet = raw(IP(src=A4, dst=B4) / TCP())
    (ipv4, tcp) = inet.verify(packet)
    before = dataclasses.astuple(ipv4)
    for field in dataclasses.fields(ipv4):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ipv4, field.name, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(ipv4, field.name)
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        ipv4.extra = 1
    assert dataclasses.astuple(ipv4) == before and ipv4.ok is True
    again = inet.verify(packet)
    assert again == [ipv4, tcp] and {ipv4: 1}[again[0]] == 1 and again[0] is not ipv4

"""The C capture rewriter (csum/engine/_rewrite.c, through csum/rewrite/fast.py) against the Python engine
(csum/rewrite/apply.py), its reference: on random and mutated frames of every link type and stack the C takes or
declines, under random rules, every byte and every count of the Outcome are the same.

The reference's own bytes are checked elsewhere against independent sources (scapy's rebuild, tcprewrite, the
kernel's NAT and helpers: tests/rewrite/test_rewrite_capture.py, test_rewrite_kernel.py); here the frames are built
with scapy and mutated at random, and the question is only whether the two engines agree.
"""

from __future__ import annotations

import functools
import struct
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.contrib.mpls import MPLS
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP, ICMPExtension_Header, ICMPExtension_Object, IPerror, \
    IPOption_LSRR, IPOption_NOP, IPOption_Router_Alert, IPOption_RR, UDPerror, fragment
from scapy.layers.inet6 import HAO, ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS, \
    ICMPv6ND_Redirect, ICMPv6NDOptSrcLLAddr, ICMPv6PacketTooBig, ICMPv6TimeExceeded, IPv6, IPv6ExtHdrDestOpt, \
    IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, IPv6ExtHdrSegmentRouting
from scapy.layers.ipsec import AH
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.layers.ppp import PPP, PPPoE
from scapy.layers.vxlan import VXLAN

import csum.engine
from csum.capture import pcap
from csum.rewrite.fast import NO_C_ENGINE, rewrite_chunk
from csum.rewrite.rules import Rules

pytestmark = pytest.mark.skipif(csum.engine.crewrite is None,
                                reason="the C extension csum.engine._rewrite is not built or CSUM_ENGINE is not c")

V4 = ["10.1.2.3", "10.200.0.9", "172.16.5.4", "192.0.2.55"]
V6 = ["2001:db8::1", "2001:db8:1::2", "fd00::5", "2001:db9::7"]
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"


def _eth(*tags: int):
    frame = Ether(src=MAC_A, dst=MAC_B)
    for i, vid in enumerate(tags):
        frame = frame / (Dot1AD(vlan=vid) if i == 0 and len(tags) > 1 else Dot1Q(vlan=vid))
    return frame


@functools.cache
def templates() -> tuple[tuple[str, bytes], ...]:
    """(kind, Ethernet frame) of every stack the C takes, and of stacks it must decline; checksums by scapy."""
    out: list[tuple[str, object]] = []
    pay = bytes(range(37))
    for k in range(2):
        a, b = V4[k], V4[k + 2]
        a6, b6 = V6[k], V6[k + 2]
        inner_eth = Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04")
        out += [
            ("tcp4", _eth() / IP(src=a, dst=b, ttl=k) / TCP(sport=80, dport=1234 + k) / pay),
            ("udp4", _eth(10) / IP(src=b, dst=a, tos=0xB9) / UDP(sport=53, dport=80) / pay),
            ("udp4-zero", _eth() / IP(src=a, dst=b) / UDP(sport=443, dport=80, chksum=0) / pay),
            ("icmp4", _eth() / IP(src=a, dst=b, ttl=1) / ICMP(id=7, seq=k) / pay),
            ("options", _eth() / IP(src=a, dst=b, options=[IPOption_RR(), IPOption_Router_Alert(), IPOption_NOP()])
             / TCP(dport=80) / pay),
            ("lsrr", _eth() / IP(src=a, dst=b, options=[IPOption_LSRR(routers=[V4[3]])]) / TCP(dport=80) / pay),
            ("tcp6", _eth(10, 20) / IPv6(src=a6, dst=b6, tc=0x2D, fl=0x12345) / TCP(sport=80) / pay),
            ("udp6", _eth() / IPv6(src=b6, dst=a6, hlim=k) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() /
             UDP(sport=53, dport=80) / pay),
            ("icmp6", _eth() / IPv6(src=a6, dst=b6) / ICMPv6EchoRequest(id=9) / pay),
            ("rh6", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrRouting(addresses=[V6[3]], segleft=1) / UDP() / pay),
            ("frag6", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrFragment(m=1, id=5) / UDP() / pay),
            ("hao", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrDestOpt(options=[HAO(hoa=V6[3])]) / TCP() / pay),
            # the other IPv6 extension headers: segment routing, routing type 2 used up, AH, later and atomic
            # fragments, a routing type whose final destination csum does not read (to Python)
            ("srh6", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrSegmentRouting(addresses=[V6[3], V6[1]], segleft=1) /
             TCP(sport=80) / pay),
            ("rh2-used", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrRouting(type=2, addresses=[V6[3]], segleft=0) /
             UDP(dport=80) / pay),
            ("ah6", _eth() / IPv6(src=a6, dst=b6) / AH(nh=6, payloadlen=4, spi=7, seq=k, icv=bytes(12)) /
             TCP(dport=80) / pay),
            ("frag6-later", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrFragment(offset=8, id=5) / pay),
            ("frag6-atomic", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrFragment(id=6) / ICMPv6EchoRequest() / pay),
            ("rh-unknown", _eth() / IPv6(src=a6, dst=b6) / IPv6ExtHdrRouting(type=5, addresses=[V6[3]], segleft=1) /
             UDP() / pay),
            ("vxlan4", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=4789) / VXLAN(vni=5) / inner_eth /
             IP(src=b, dst=a) / TCP(sport=80, dport=443) / pay),
            ("vxlan4-zero", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=4789, chksum=0) / VXLAN(vni=5) /
             inner_eth / Dot1Q(vlan=10) / IPv6(src=a6, dst=b6) / UDP(sport=80) / pay),
            ("vxlan6", _eth() / IPv6(src=a6, dst=b6) / UDP(sport=49152, dport=4789) / VXLAN(vni=5) / inner_eth /
             IPv6(src=b6, dst=a6) / ICMPv6EchoRequest() / pay),
            ("icmp-error", _eth() / IP(src=a, dst=b) / ICMP(type=3, code=3) / IPerror(src=b, dst=a) /
             UDPerror(sport=80, dport=53) / pay[:8]),
            ("icmp6-error", _eth() / IPv6(src=a6, dst=b6) / ICMPv6DestUnreach() / IPv6(src=b6, dst=a6) / UDP() / pay),
            # ICMP errors: whole quotes, quotes of a datagram's start only (RFC 792's 8 bytes: TCP's checksum is
            # not there, UDP's is), a quoted echo, an error in a tunnel, RFC 4884 extensions (rfc4884() below)
            ("icmp-error-tcp", _eth() / IP(src=b, dst=a) / ICMP(type=11) / IP(src=a, dst=b, ttl=1) /
             TCP(sport=80, dport=1234) / pay),
            ("icmp-error-short", _eth() / IP(src=b, dst=a) / ICMP(type=3, code=4) /
             raw(IP(src=a, dst=b) / TCP(sport=1234, dport=80) / pay)[:28]),
            ("icmp-error-short-udp", _eth(10) / IP(src=b, dst=a) / ICMP(type=3, code=3) /
             raw(IP(src=a, dst=b) / UDP(sport=53, dport=80) / pay)[:28]),
            ("icmp-error-echo", _eth() / IP(src=b, dst=a) / ICMP(type=3, code=1) / IP(src=a, dst=b) / ICMP(id=3) / pay),
            ("icmp6-error-tcp", _eth() / IPv6(src=b6, dst=a6) / ICMPv6TimeExceeded() /
             IPv6(src=a6, dst=b6, hlim=1) / IPv6ExtHdrHopByHop() / TCP(sport=80, dport=1234) / pay),
            ("icmp6-error-short", _eth() / IPv6(src=b6, dst=a6) / ICMPv6PacketTooBig() /
             raw(IPv6(src=a6, dst=b6) / UDP(sport=80, dport=53) / pay)[:48]),
            ("icmp-error-ext", _eth() / IP(src=b, dst=a) / ICMP(type=11, length=32) /
             raw(IP(src=a, dst=b) / UDP(sport=53, dport=80) / pay)[:128] / bytes.fromhex("20000000")),
            *rfc4884(a, b, a6, b6, pay),
            ("icmp-error-vxlan", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=4789) / VXLAN(vni=5) / inner_eth /
             IP(src=b, dst=a) / ICMP(type=3, code=3) / IP(src=a, dst=b) / UDP(sport=53, dport=80) / pay),
            ("gre", _eth() / IP(src=a, dst=b) / GRE() / IP(src=b, dst=a) / UDP(dport=80) / pay),
            ("geneve-not-ip", _eth() / IP(src=a, dst=b) / UDP(dport=6081) / pay),
            *tunnels(k, pay, inner_eth),
            ("arp", _eth() / ARP(psrc=a, pdst=b)),
            # Neighbor Discovery: with addresses mapped, the C hands it to Python (its target is mapped there)
            ("ns6", _eth() / IPv6(src=a6, dst=b6) / ICMPv6ND_NS(tgt=V6[k + 1]) / ICMPv6NDOptSrcLLAddr(lladdr=MAC_A)),
            ("na6", _eth(10) / IPv6(src=b6, dst=a6) / ICMPv6ND_NA(tgt=b6)),
            ("redirect6", _eth() / IPv6(src=a6, dst=b6) / ICMPv6ND_Redirect(tgt=V6[3], dst=V6[k + 1])),
        ]
        out += [(f"fragment{i}", _eth() / f) for i, f in enumerate(fragment(
            IP(src=a, dst=b, id=99 + k) / UDP(sport=80, dport=9) / (pay * 30), fragsize=400))]
    return tuple((kind, raw(frame)) for kind, frame in out)


def rfc4884(a: str, b: str, a6: str, b6: str, pay: bytes) -> list[tuple[str, object]]:
    """(kind, Ethernet frame) of ICMP and ICMPv6 errors with an RFC 4884 extension structure (its own checksum, an
    MPLS label stack object: RFC 4950; scapy builds both): the quoted datagram whole and zero-padded
    to the length the message gives (RFC 4884 5.1: 128 bytes at least), or its start; an old sender's, without a
    length (5.5: the walker finds the extension after a padded 128-byte quote); a length over 128 bytes."""
    ext = raw(ICMPExtension_Header() / ICMPExtension_Object(classnum=1, classtype=1) / MPLS(label=16, s=1, ttl=1))
    udp4 = raw(IP(src=a, dst=b) / UDP(sport=53, dport=80) / pay)
    tcp4 = raw(IP(src=a, dst=b, ttl=1) / TCP(sport=80, dport=1234) / pay)
    udp6 = raw(IPv6(src=a6, dst=b6) / UDP(sport=80, dport=53) / pay)
    long4 = raw(IP(src=a, dst=b) / UDP(sport=53, dport=80) / (pay * 4))
    return [
        ("icmp-ext-udp", _eth() / IP(src=b, dst=a) / ICMP(type=3, code=3, length=32) / udp4.ljust(128, b"\0") / ext),
        ("icmp-ext-tcp", _eth() / IP(src=b, dst=a) / ICMP(type=11, length=32) / tcp4.ljust(128, b"\0") / ext),
        ("icmp-ext-long", _eth() / IP(src=b, dst=a) / ICMP(type=3, code=4, length=48) / long4.ljust(192, b"\0") /
         ext),
        ("icmp-ext-start", _eth() / IP(src=b, dst=a) / ICMP(type=11, length=32) / long4[:128] / ext),
        ("icmp-ext-old", _eth() / IP(src=b, dst=a) / ICMP(type=11) / udp4.ljust(128, b"\0") / ext),
        ("icmp6-ext-udp", _eth() / IPv6(src=b6, dst=a6) / ICMPv6DestUnreach(length=16) / udp6.ljust(128, b"\0") /
         ext),
        ("icmp6-ext-time", _eth() / IPv6(src=b6, dst=a6) / ICMPv6TimeExceeded(length=16) / udp6.ljust(128, b"\0") /
         ext),
    ]


def tunnels(k: int, pay: bytes, inner_eth) -> list[tuple[str, object]]:
    """(kind, Ethernet frame) of the encapsulations the C walker walks (csum/engine/_encap.h), and of some it hands
    to Python; checksums (IPv4, TCP, UDP, ICMP, GRE's) by scapy."""
    a, b, a6, b6 = V4[k], V4[k + 2], V6[k], V6[k + 2]
    tcp, udp = TCP(sport=80, dport=1234 + k) / pay, UDP(sport=53, dport=80) / pay
    gtp_ext = GTP_U_Header(teid=5, E=1, next_ex=0x85) / GTPPDUSessionContainer(QFI=5)
    gtp_v0 = struct.pack("!BBHHHB3s8s", 0x1E, 0xFF, 0, 7, 0, 0, bytes(3), bytes(8))  # GSM 09.60 6: 20 bytes
    error = ICMP(type=3, code=3) / IP(src=a, dst=b) / UDP(sport=53, dport=80) / pay
    out: list[tuple[str, object]] = [
        ("qinq3", _eth(10, 20, 30) / IP(src=a, dst=b) / tcp),
        ("mpls4", _eth() / MPLS(label=16, s=0, ttl=64) / MPLS(label=17, s=1, ttl=64) / IP(src=a, dst=b) / tcp),
        ("mpls6", _eth(10) / MPLS(label=16, s=1) / IPv6(src=a6, dst=b6) / udp),
        ("mpls-pw", _eth() / MPLS(label=16, s=1) / bytes(4) / inner_eth / IP(src=b, dst=a) / udp),
        ("pppoe4", _eth() / PPPoE(sessionid=3) / PPP(proto=0x21) / IP(src=a, dst=b) / tcp),
        ("pppoe6", _eth(10) / PPPoE(sessionid=3) / PPP(proto=0x57) / IPv6(src=a6, dst=b6) / udp),
        ("pppoe-mpls", _eth() / PPPoE(sessionid=3) / PPP(proto=0x281) / MPLS(s=1) / IP(src=a, dst=b) / tcp),
        # a 1-byte PPP protocol: the IP header at an odd offset, its checksum fields too (the helpers refuse them)
        ("pppoe-odd", _eth() / PPPoE(sessionid=3) / b"\x21" / IP(src=a, dst=b) / tcp),
        ("ipip", _eth() / IP(src=a, dst=b) / IP(src=b, dst=a, ttl=9) / tcp),
        ("6in4", _eth() / IP(src=a, dst=b) / IPv6(src=a6, dst=b6) / udp),
        ("4in6", _eth() / IPv6(src=a6, dst=b6) / IP(src=b, dst=a) / ICMP(id=4) / pay),
        ("gre-csum", _eth() / IP(src=a, dst=b) / GRE(chksum_present=1) / IP(src=b, dst=a) / tcp),
        ("gre-key-seq", _eth() / IP(src=a, dst=b) / GRE(chksum_present=k, key_present=1, seqnum_present=1, key=9)
         / IPv6(src=b6, dst=a6) / udp),
        ("gre6", _eth() / IPv6(src=a6, dst=b6) / GRE(chksum_present=1) / IP(src=b, dst=a) / udp),
        ("gre-teb", _eth() / IP(src=a, dst=b) / GRE(proto=0x6558, chksum_present=1) / inner_eth /
         IP(src=b, dst=a) / tcp),
        ("erspan2", _eth() / IP(src=a, dst=b) / GRE(proto=0x88BE, seqnum_present=1) / bytes.fromhex("1000000100000000")
         / inner_eth / IP(src=b, dst=a) / tcp),
        ("gre-error", _eth() / IP(src=a, dst=b) / GRE(chksum_present=1) / IP(src=b, dst=a) / error),
        ("gre-routing", _eth() / IP(src=a, dst=b) / GRE(routing_present=1) / IP(src=b, dst=a) / tcp),
        ("geneve", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=6081) / GENEVE(proto=0x6558, vni=7) /
         inner_eth / IP(src=b, dst=a) / tcp),
        ("geneve-ip", _eth() / IPv6(src=a6, dst=b6) / UDP(sport=49152, dport=6081) / GENEVE(proto=0x86DD) /
         IPv6(src=b6, dst=a6) / udp),
        ("geneve-opt", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=6081, chksum=0) /
         GENEVE(proto=0x0800, optionlen=2) / bytes(8) / IP(src=b, dst=a) / error),
        # a protocol type naming no IP (found by fuzz/fuzz_rewrite.py: regressions/rewrite/geneve-protocol-not-ip)
        ("geneve-0804", _eth() / IPv6(src=a6, dst=b6) / UDP(sport=49152, dport=6081) / GENEVE(proto=0x0804) /
         IP(src=b, dst=a) / error),
        ("gtp", _eth() / IP(src=a, dst=b) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=5) / IP(src=b, dst=a)
         / tcp),
        ("gtp-ext", _eth() / IPv6(src=a6, dst=b6) / UDP(sport=2152, dport=2152) / gtp_ext / IP(src=b, dst=a) / udp),
        ("gtp-v0", _eth() / IP(src=a, dst=b) / UDP(sport=3386, dport=3386) /
         (gtp_v0[:2] + struct.pack("!H", len(IP() / udp)) + gtp_v0[4:]) / IP(src=b, dst=a) / udp),
        ("gre-udp", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=4754) / GRE(chksum_present=1) /
         IP(src=b, dst=a) / tcp),
        ("vxlan-vxlan", _eth() / IP(src=a, dst=b) / UDP(sport=49152, dport=4789) / VXLAN(vni=5) / inner_eth /
         IP(src=b, dst=a) / UDP(sport=49153, dport=4789) / VXLAN(vni=6) / inner_eth / IPv6(src=a6, dst=b6) / udp),
    ]
    return out


#: The kinds every engine must take when unmutated on every link type (the C's claim, fast.py's docstring).
TAKEN = {"tcp4", "udp4", "udp4-zero", "icmp4", "options", "tcp6", "udp6", "icmp6", "vxlan4", "vxlan4-zero", "vxlan6",
         "fragment0", "fragment1", "fragment2", "icmp-error", "icmp6-error", "icmp-error-tcp", "icmp-error-short",
         "icmp-error-short-udp", "icmp-error-echo", "icmp6-error-tcp", "icmp6-error-short", "rh6", "frag6", "hao",
         "srh6", "rh2-used", "ah6", "frag6-later", "frag6-atomic", "icmp-error-vxlan", "gre", "qinq3", "mpls4", "mpls6",
         "mpls-pw", "pppoe4", "pppoe6", "pppoe-mpls", "ipip", "6in4", "4in6", "gre-csum", "gre-key-seq", "gre6",
         "gre-teb", "erspan2", "gre-error", "geneve", "geneve-ip", "geneve-opt", "gtp", "gtp-ext", "gtp-v0", "gre-udp",
         "vxlan-vxlan", "icmp-error-ext", "icmp-ext-udp", "icmp-ext-tcp", "icmp-ext-long", "icmp-ext-start",
         "icmp-ext-old", "icmp6-ext-udp", "icmp6-ext-time"}

#: The kinds whose link header's EtherType names no IP packet (MPLS, PPPoE): IP only behind an EtherType.
NOT_IP = {"mpls4", "mpls6", "mpls-pw", "pppoe4", "pppoe6", "pppoe-mpls"}
ETHERTYPE_LINKS = {1, 113, 276}


def on_link(frame: bytes, linktype: int) -> bytes:
    """The Ethernet ``frame`` as a frame of ``linktype`` (its IP packet behind that link's header)."""
    tags = 0
    while frame[12 + 4 * tags:14 + 4 * tags] in (b"\x81\x00", b"\x88\xa8"):
        tags += 1
    ethertype, ip = frame[12 + 4 * tags:14 + 4 * tags], frame[14 + 4 * tags:]
    family = {b"\x08\x00": 2, b"\x86\xdd": 10}.get(ethertype, 0)
    if linktype == 1:
        return frame
    if linktype in (12, 14, 101, 228, 229):
        return ip
    if linktype == 113:  # Linux cooked v1: packet type, ARPHRD, address length, 8 address bytes, protocol
        return struct.pack("!HHH8s", 0, 1, 6, bytes(8)) + ethertype + ip
    if linktype == 276:  # Linux cooked v2: protocol, reserved, ifindex, ARPHRD, packet type, address length, address
        return ethertype + struct.pack("!HIHBB8s", 0, 1, 1, 0, 6, bytes(8)) + ip
    if linktype == 0:  # BSD loopback: the family in the capturing host's byte order (here little-endian)
        return struct.pack("<I", 24 if family == 10 else family) + ip
    if linktype == 108:  # OpenBSD loopback: the family in network byte order
        return struct.pack(">I", 24 if family == 10 else family) + ip
    raise AssertionError(linktype)


def _whole(kind: str) -> tuple[bytes, int]:
    """The first template of ``kind``, captured whole: (bytes, length on the wire)."""
    frame = next(f for k, f in templates() if k == kind)
    return frame, len(frame)


LINKS = [1, 101, 113, 276, 0, 108, 12, 14, 228, 229]
_maps4 = ["10.0.0.0/8=192.168.0.0/16", "10.1.2.3=203.0.113.9", "172.16.0.0/12=10.0.0.0/8", "0.0.0.0/0=198.51.100.0/24"]
_maps6 = ["2001:db8::/32=2001:db9::/48", "fd00::/8=2001:db8:ff::/64", "::/0=2001:db8:aaaa::/96"]


# What rules() and frames() draw from, built once (a strategy is validated the first time it is drawn from: one
# built at each draw is validated at each draw).
_MAP4 = st.lists(st.sampled_from(_maps4), max_size=1, unique=True)
_MAP6 = st.lists(st.sampled_from(_maps6), max_size=1, unique=True)
_RULE_VALUES = dict(
    tclass=st.none() | st.integers(0, 255),
    map_port=st.sampled_from([(), ("80=8080",), ("tcp:443=8443", "udp:53=5353"), ("4789=4790",),
                              ("1234=0", "udp:80=65535"), ("80=8080", "53=80")]),
    ttl=st.none() | st.sampled_from([-1, -2, 0, 1, 64, 255]),
    dscp=st.none() | st.integers(0, 63), ecn=st.none() | st.integers(0, 3),
    flowlabel=st.none() | st.sampled_from([0, 1, 0xFFFFF]),
    mac_src=st.sampled_from([(), "02:aa:00:00:00:01", f"{MAC_A}=02:bb:00:00:00:01", f"{MAC_B}=02:cc:00:00:00:01"]),
    mac_dst=st.sampled_from([(), f"{MAC_B}=02:dd:00:00:00:01", MAC_A]),
    vlan_retag=st.sampled_from([(), ["10=11"], ["20=4095", "10=0"]]),
    anonymize=st.none() | st.just("ab" * 32),
    level=st.sampled_from(["all", "outer", "inner"]))


@st.composite
def rules(draw) -> Rules:
    """Rules of every kind the C plan holds, each present or not (non-overlapping maps per direction)."""
    ip4, src4, dst4 = (draw(_MAP4) for _ in range(3))
    ip6 = draw(_MAP6)
    if ip4:  # map_ip and map_src/map_dst of one direction must not overlap
        src4 = dst4 = []
    value = _RULE_VALUES  # one strategy per field
    tclass = draw(value["tclass"])
    return Rules(
        map_ip=ip4 + ip6, map_src=src4, map_dst=dst4,
        map_port=draw(value["map_port"]),
        ttl=draw(value["ttl"]),
        dscp=None if tclass is not None else draw(value["dscp"]),
        ecn=None if tclass is not None else draw(value["ecn"]),
        tclass=tclass, flowlabel=draw(value["flowlabel"]),
        mac_src=draw(value["mac_src"]),
        mac_dst=draw(value["mac_dst"]),
        vlan_retag=draw(value["vlan_retag"]),
        anonymize=draw(value["anonymize"]),
        level=draw(value["level"]))


_LINK_TYPES = st.sampled_from(LINKS)
_BYTES = st.sampled_from([0, 1, 0x45, 0x60, 0xFF, 17, 6]) | st.integers(0, 255)
_HOW = st.sampled_from(["whole", "whole", "whole", "cut", "padded"])


@functools.cache
def _templates() -> st.SearchStrategy[tuple[str, bytes]]:
    """One of :func:`templates`, the strategy built once (at the first draw: the templates are built then)."""
    return st.sampled_from(templates())


@st.composite
def frames(draw) -> tuple[int, bytes, int]:
    """(link type, captured bytes, length on the wire): a template on a link type, maybe mutated or cut."""
    kind, frame = draw(_templates())
    link = draw(_LINK_TYPES)
    data = bytearray(on_link(frame, link))
    for _ in range(draw(st.integers(0, 3))):  # overwrite a byte anywhere (lengths, versions, options, ports ...)
        data[draw(st.integers(0, len(data) - 1))] = draw(_BYTES)
    wire = len(data)
    how = draw(_HOW)
    if how == "cut":
        data = data[:draw(st.integers(1, len(data)))]
    elif how == "padded":  # Ethernet padding, or bytes after the datagram
        data += bytes(draw(st.integers(1, 20)))
        wire = len(data)
    return link, bytes(data), wire


def _chunk(packets: list[tuple[int, bytes, int]]) -> pcap.Capture:
    """A pcapng chunk holding ``packets`` (an interface per link type), as the capture reader makes it."""
    links = sorted({link for link, _, _ in packets})
    blocks = [struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28)]
    for link in links:
        blocks.append(struct.pack("<IIHHII", 1, 20, link, 0, 0, 20))
    for link, data, wire in packets:
        pad = (-len(data)) % 4
        size = 32 + len(data) + pad
        blocks.append(struct.pack("<IIIIIII", 6, size, links.index(link), 0, 0, len(data), wire) + data + bytes(pad)
                      + struct.pack("<I", size))
    return pcap.parse(b"".join(blocks))


def _both(chunk: pcap.Capture, r: Rules):
    """Both engines' answers for ``chunk``, their outcomes without the count of packets the C engine handed to the
    Python one (checked here: every packet it did not take, once)."""
    c_data, c_out, taken = rewrite_chunk(chunk, r)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(csum.engine, "crewrite", None)
        py_data, py_out, none = rewrite_chunk(chunk, r)
    assert none == 0
    assert py_out.declined == Counter({NO_C_ENGINE: len(chunk)})
    assert sum(c_out.declined.values()) == len(chunk) - taken
    c_out.declined.clear()
    py_out.declined.clear()
    return c_data, c_out, py_data, py_out, taken


@settings(max_examples=1000)
# templates are built once; an example rewrites up to 6 frames twice (C, Python), ~10 ms: 1,000 (the default profile)
@given(packets=st.lists(frames(), min_size=1, max_size=6), r=rules())
@example(packets=[(1, *_whole("tcp4"))], r=Rules(ttl=-1))  # its TTL is 0: ttl-expired, declined to Python
@example(packets=[(1, *_whole("vxlan4"))], r=Rules(map_port=["4789=4790"]))  # the tunnel's port itself mapped
def test_the_c_engine_equals_the_python_engine(packets, r):
    """Every byte of the rewritten chunk and every count of the Outcome (packets, changed, kept, fixed, left alone
    by reason) are the same with the C engine and with the Python engine alone."""
    chunk = _chunk(packets)
    c_data, c_out, py_data, py_out, _ = _both(chunk, r)
    for i in range(len(chunk)):
        s, n = int(chunk.offsets[i]), int(chunk.caplens[i])
        assert c_data[s:s + n].hex() == py_data[s:s + n].hex(), (i, packets[i])
    assert c_data == py_data
    assert c_out == py_out


@pytest.mark.parametrize("link", LINKS)
def test_the_c_engine_takes_the_common_stacks(link):
    """The differential above is not vacuous: unmutated, every template of the kinds fast.py names is rewritten by
    the C engine on every link type it walks (and equals the Python engine's bytes), every other kind declined."""
    r = Rules(map_ip=["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"], map_port=["80=8080"], ttl=5)
    for kind, frame in templates():
        data = on_link(frame, link)
        if kind == "arp" and link != 1:
            continue  # ARP has no IP packet to put behind another link's header
        chunk = _chunk([(link, data, len(data))])
        c_data, c_out, py_data, py_out, taken = _both(chunk, r)
        assert (c_data, c_out) == (py_data, py_out), kind
        expected = kind in TAKEN and (link in ETHERTYPE_LINKS or kind not in NOT_IP)
        assert taken == expected, kind
        assert c_out.changed == 1 or not expected, kind


def _offload(frame: bytes) -> bytes:
    """The Ethernet/IPv4/TCP ``frame`` with its TCP checksum field holding transmit offload's value: the
    pseudo-header's sum, folded, not complemented (RFC 1071 arithmetic written out here)."""
    data = bytearray(frame)
    words = data[26:34] + bytes([0, 6]) + (len(data) - 34).to_bytes(2, "big")
    total = sum(int.from_bytes(words[k:k + 2], "big") for k in range(0, len(words), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    data[50:52] = total.to_bytes(2, "big")
    return bytes(data)


_MAP = Rules(map_ip=["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"])
_V4 = IP(src="10.0.0.1", dst="10.0.0.2")
_ICMP_ERROR = IP(src="10.0.0.9", dst="10.0.0.2") / ICMP(type=3, code=3)


@pytest.mark.parametrize("reason, link, frame, wire, r", [
    ("cut", 1, *(lambda f: (f[:-3], len(f)))(raw(_eth() / _V4 / TCP() / b"abc")), _MAP),
    ("link-type", 147, *(lambda f: (f, len(f)))(raw(_V4 / TCP())), _MAP),  # LINKTYPE_USER0
    ("not-walked", 1, *_whole("arp"), _MAP),
    ("not-walked", 1, *_whole("lsrr"), _MAP),
    ("odd-offset", 1, *_whole("pppoe-odd"), _MAP),
    ("ipv4-ah", 1, *(lambda f: (f, len(f)))(raw(_eth() / _V4 / AH(nh=6, payloadlen=4, spi=1, icv=bytes(12))
                                                / TCP() / b"x")), _MAP),
    ("in-quote", 1, *(lambda f: (f, len(f)))(raw(_eth() / _ICMP_ERROR / IP(src="10.0.0.2", dst="10.0.0.9")
                                                 / IP(src="10.1.0.1", dst="10.1.0.2") / UDP() / b"abcd")), _MAP),
    ("fragment", 1, *(lambda f: (f, len(f)))(raw(_eth() / IP(src="10.0.0.9", dst="10.0.0.2", flags="MF")
                                                 / ICMP(type=3, code=3) / IP(src="10.0.0.2", dst="10.0.0.9")
                                                 / UDP() / bytes(16))), _MAP),
    ("offload", 1, *(lambda f: (f, len(f)))(_offload(raw(_eth() / _V4 / TCP() / b"hello"))), _MAP),
    ("ttl-expired", 1, *_whole("tcp4"), Rules(ttl=-1)),  # the first tcp4 template's TTL is 0
    ("neighbor-discovery", 1, *_whole("ns6"), _MAP),
    ("neighbor-discovery", 1, *_whole("redirect6"), _MAP),
])
def test_the_c_engine_says_why_it_declines(reason, link, frame, wire, r):
    """Each packet the C engine hands to the Python one is counted under the reason docs/rewrite.md states for it
    (each frame built by scapy to be that case), and the bytes are the Python engine's."""
    if csum.engine.crewrite is None:
        pytest.skip("the C rewriter is not built (python setup.py build_ext --inplace)")
    chunk = _chunk([(link, frame, wire)])
    c_data, c_out, taken = rewrite_chunk(chunk, r)
    assert (taken, c_out.declined) == (0, Counter({reason: 1}))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(csum.engine, "crewrite", None)
        assert rewrite_chunk(chunk, r)[0] == c_data

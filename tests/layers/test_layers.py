"""csum/layers: the one protocol model, case by case, against scapy and tshark.

Every case is built with scapy (its own checksums, read from the bytes it built) or, where scapy
lacks the layer, by hand with the checksum from the naive RFC 1071 oracle (tests/oracle.py) over
the RFC's pseudo-header. Each case then goes three ways: csum.inet.verify must pass every
checksum it lists, with scapy's value as ``computed``; a corrupted copy of each field must fail
with that value; and, where tshark is installed, tshark 4's own checksum verdicts on a pcapng of
all cases (checksum validation on) must agree with csum's wherever both give one.
"""

from __future__ import annotations

import pickle
import shutil
import struct
import subprocess
from dataclasses import dataclass

import numpy as np
import pytest
from captures import epb, idb, pcap_bytes, shb
from encapsulations import (
    ayiya,
    capwap,
    ether,
    fabricpath,
    gtp_v0,
    l2tp,
    lisp,
    packet_in,
    pppoe,
    sflow,
    tag,
    teredo,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import rfc1071_checksum
from packets import A4, A6, B4, B6, C4, C6, D4, D6, ETH, offload_tcp, pseudo4, pseudo6
from scapy.all import (
    AH,
    ESP,
    GRE,
    ICMP,
    IP,
    LLC,
    PPP,
    SNAP,
    TCP,
    UDP,
    CookedLinux,
    CookedLinuxV2,
    Dot1AD,
    Dot1Q,
    Dot3,
    Dot11,
    Dot11QoS,
    Ether,
    ICMPv6DestUnreach,
    ICMPv6EchoRequest,
    IPerror,
    IPOption_RR,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    PPPoE,
    RadioTap,
    Raw,
    UDPerror,
    fragment,
    fragment6,
    raw,
)
from scapy.contrib.cdp import CDPMsgDeviceID, CDPv2_HDR
from scapy.contrib.eigrp import EIGRP
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III
from scapy.contrib.geneve import GENEVE
from scapy.contrib.igmp import IGMP
from scapy.contrib.igmpv3 import IGMPv3, IGMPv3gr, IGMPv3mr
from scapy.contrib.mpls import MPLS
from scapy.contrib.ospf import OSPF_Hdr, OSPF_Hello, OSPFv3_Hdr, OSPFv3_Hello
from scapy.contrib.pim import PIMv2Hdr, PIMv2Hello
from scapy.layers.inet import ICMPExtension_Header, ICMPExtension_InterfaceInformation
from scapy.layers.l2 import GRE_PPTP
from scapy.layers.vrrp import VRRP, VRRPv3
from scapy.layers.vxlan import VXLAN

from csum.capture import pcap
from csum.capture.checker import check
from csum.capture.report import Report
from csum.errors import CsumValueError
from csum.layers import Reason, Status, evaluate, inet, table, walk


def carp() -> bytes:
    """OpenBSD CARP advertisement (version 2, type 1, authlen 7, 36 bytes); checksum over the message (carp(4))."""
    msg = bytearray(struct.pack("!BBBBBBH", 0x21, 5, 0, 7, 0, 1, 0) + bytes(28))
    msg[6:8] = rfc1071_checksum(bytes(msg)).to_bytes(2, "big")
    return bytes(msg)


def l4_bytes(pkt) -> bytes:
    """The bytes scapy built after the IP header (so its checksum, pseudo-header included)."""
    return raw(pkt)[len(raw(pkt)) - len(raw(pkt.payload)):]




def udplite(cov: int, payload: bytes, v6: bool = False) -> bytes:
    """UDP-Lite (RFC 3828): coverage at 4, checksum over pseudo-header (IP payload length) + covered bytes."""
    seg = bytearray(struct.pack("!HHHH", 7000, 7001, cov, 0) + payload)
    covered = len(seg) if cov == 0 else cov
    pseudo = pseudo6(A6, B6, 136, len(seg)) if v6 else pseudo4(A4, B4, 136, len(seg))
    seg[6:8] = (rfc1071_checksum(pseudo + bytes(seg[:covered])) or 0xFFFF).to_bytes(2, "big")
    return bytes(seg)


def dccp(cscov: int, payload: bytes) -> bytes:
    """DCCP-Request (RFC 4340 5.1, X=1: 16-byte generic header + 4-byte service code); checksum per 9.1/9.2."""
    head = bytearray(struct.pack("!HHBBHBBHI", 5000, 80, 5, cscov, 0, 0x03, 0, 0, 1) + b"\0\0\0\x2a")
    seg = head + payload
    covered = len(seg) if cscov == 0 else min(len(seg), 20 + (cscov - 1) * 4)
    seg[6:8] = rfc1071_checksum(pseudo4(A4, B4, 33, len(seg)) + bytes(seg[:covered])).to_bytes(2, "big")
    return bytes(seg)


def pim_register(v6: bool) -> bytes:
    """PIMv2 Register (RFC 7761 4.9): checksum over the first 8 bytes (IPv6: plus the pseudo-header, length 8,
    as Linux net/ipv6/ip6mr.c computes it); the encapsulated packet is not covered."""
    inner = raw(IP(src=C4, dst=D4) / UDP(sport=1, dport=2) / b"mc")
    head = bytearray(b"\x21\x00\x00\x00\x00\x00\x00\x00")
    pseudo = pseudo6(A6, B6, 103, 8) if v6 else b""
    head[2:4] = rfc1071_checksum(pseudo + bytes(head)).to_bytes(2, "big")
    return bytes(head) + inner


def nflog(ip: bytes) -> bytes:
    """Linux NFLOG (LINKTYPE_NFLOG): AF_INET, version 0, resource 0; a NFULA_PACKET_HDR TLV, then NFULA_PAYLOAD."""
    hdr_tlv = struct.pack("<HH", 8, 1) + b"\x08\x00\x01\x00"
    payload = struct.pack("<HH", 4 + len(ip), 9) + ip
    return b"\x02\x00\x00\x00" + hdr_tlv + payload + b"\0" * (-len(payload) % 4)


def big_tcp() -> bytes:
    """IPv4 BIG TCP / TSO super-packet: total length 0 (Linux >= 6.3, net/ipv4/ip_output.c). scapy builds the
    header checksum over the 0; its TCP checksum takes the upper-layer length from that 0, so the TCP field is
    the oracle's over RFC 9293's pseudo-header with the segment's real length."""
    data = bytearray(raw(IP(src=A4, dst=B4, len=0) / TCP(sport=3, dport=4) / (b"x" * 300)))
    seg = bytes(data[20:36]) + b"\0\0" + bytes(data[38:])
    data[36:38] = rfc1071_checksum(pseudo4(A4, B4, 6, len(seg)) + seg).to_bytes(2, "big")
    return bytes(data)


def cdp(device: bytes, pad: int = 0) -> bytes:
    """An 802.3 CDP frame (LLC/SNAP OUI 00000c, PID 0x2000) as scapy's CDPv2_HDR builds it: scapy pads an odd
    PDU as Cisco does (the last byte as the low byte of the final word), so its checksum is the reference;
    ``pad`` Ethernet padding bytes follow (outside the 802.3 length)."""
    frame = Dot3(dst="01:00:0c:cc:cc:cc", src="02:00:00:00:00:01") / LLC(dsap=0xAA, ssap=0xAA, ctrl=3) / SNAP(
        OUI=0x0C, code=0x2000) / CDPv2_HDR(msg=[CDPMsgDeviceID(val=device)])
    return raw(frame) + bytes(pad)


def pgm(kind: int, body: bytes, checksum: bool = True, v6: bool = False) -> bytes:
    """A PGM packet (RFC 3208 8: ports, type, options, checksum, GSI, TSDU length) in IPv4/IPv6; scapy has no PGM
    layer, so the checksum is the oracle's over the whole PGM packet (no pseudo-header), 0 when ``checksum`` is
    False."""
    msg = bytearray(struct.pack("!HHBBH6sH", 7500, 7501, kind, 0, 0, b"gsi-01", len(body)) + body)
    if checksum:
        msg[6:8] = (rfc1071_checksum(bytes(msg)) or 0xFFFF).to_bytes(2, "big")
    return raw((IPv6(src=A6, dst=B6, nh=113) if v6 else IP(src=A4, dst=B4, proto=113)) / bytes(msg))


@dataclass
class Case:
    name: str
    data: bytes
    linktype: int
    layers: list[str]           # count keys csum must find, in packet order (protocol@depth)
    statuses: list[str] | None = None  # all "ok" when None


def _inner(kind: str = "tcp") -> bytes:
    """The inner packet of the encapsulation cases: IPv4 (C4 -> D4) with TCP or UDP, IPv6 (C6 -> D6) with TCP or
    UDP, checksums by scapy."""
    return raw({"tcp": IP(src=C4, dst=D4) / TCP(sport=7, dport=8) / b"inner", "udp": IP(src=C4, dst=D4) / UDP() / b"u",
                "tcp6": IPv6(src=C6, dst=D6) / TCP(sport=7, dport=8) / b"six", "udp6": IPv6(src=C6, dst=D6) / UDP()
                / b"6"}[kind])


def _udp(sport: int, dport: int, payload: bytes, v6: bool = False) -> bytes:
    """Ethernet, IPv4 (A4 -> B4) or IPv6, UDP from ``sport`` to ``dport`` carrying ``payload`` (checksums by scapy)."""
    return raw(ETH / (IPv6(src=A6, dst=B6) if v6 else IP(src=A4, dst=B4)) / UDP(sport=sport, dport=dport)
               / Raw(payload))


def _wlan(inner: bytes) -> bytes:
    """An IEEE 802.11 data frame to the distribution system (scapy's Dot11, LLC/SNAP) carrying ``inner``."""
    return raw(Dot11(type=2, subtype=0, FCfield=1) / LLC() / SNAP(code=0x0800 if inner[0] >> 4 == 4 else 0x86DD)
               / Raw(inner))


def _v4(*layers) -> object:
    return IP(src=A4, dst=B4) / layers[0] if layers else IP(src=A4, dst=B4)


CASES = [
    Case("eth-qinq", raw(ETH / Dot1AD(vlan=5) / Dot1Q(vlan=7) / IP(src=A4, dst=B4) / TCP()), 1, ["ipv4", "tcp"]),
    Case("eth-vlan-ipv6", raw(ETH / Dot1Q(vlan=3) / IPv6(src=A6, dst=B6) / UDP() / b"v6"), 1, ["udp"]),
    Case("null-le", struct.pack("<I", 2) + raw(IP(src=A4, dst=B4) / UDP() / b"lo"), 0, ["ipv4", "udp"]),
    Case("null-be-ipv6", struct.pack(">I", 30) + raw(IPv6(src=A6, dst=B6) / TCP()), 0, ["tcp"]),
    Case("loop", struct.pack(">I", 2) + raw(IP(src=A4, dst=B4) / ICMP()), 108, ["ipv4", "icmp"]),
    Case("raw-101", raw(IP(src=A4, dst=B4) / TCP() / b"r"), 101, ["ipv4", "tcp"]),
    Case("raw-228", raw(IP(src=A4, dst=B4) / UDP()), 228, ["ipv4", "udp"]),
    Case("raw-229", raw(IPv6(src=A6, dst=B6) / ICMPv6EchoRequest()), 229, ["icmpv6"]),
    Case("raw-12", raw(IP(src=A4, dst=B4) / TCP()), 12, ["ipv4", "tcp"]),
    Case("sll", raw(CookedLinux(proto=0x0800) / IP(src=A4, dst=B4) / TCP()), 113, ["ipv4", "tcp"]),
    Case("sll2", raw(CookedLinuxV2(proto=0x86DD) / IPv6(src=A6, dst=B6) / UDP() / b"2"), 276, ["udp"]),
    Case("ppp", b"\xff\x03\x00\x21" + raw(IP(src=A4, dst=B4) / UDP() / b"p"), 9, ["ipv4", "udp"]),
    Case("ppp-hdlc", b"\xff\x03\x00\x57" + raw(IPv6(src=A6, dst=B6) / TCP()), 50, ["tcp"]),
    Case("pppoe", raw(ETH / PPPoE(sessionid=1) / PPP(proto=0x21) / IP(src=A4, dst=B4) / TCP()), 1, ["ipv4", "tcp"]),
    Case("chdlc", b"\x0f\x00\x08\x00" + raw(IP(src=A4, dst=B4) / UDP() / b"c"), 104, ["ipv4", "udp"]),
    Case("nflog", nflog(raw(IP(src=A4, dst=B4) / TCP() / b"nf")), 239, ["ipv4", "tcp"]),
    # dli_version 1, dli_family AF_INET, dli_htype, then dli_pktlen (big-endian; tshark stops at it) and zeros
    Case("ipnet", bytes([1, 2, 0, 0]) + struct.pack(">I", 28) + bytes(16) + raw(IP(src=A4, dst=B4) / UDP()), 226,
         ["ipv4", "udp"]),
    Case("wlan-qos", raw(Dot11(type=2, subtype=8, FCfield=1) / Dot11QoS() / LLC() / SNAP()
                         / IP(src=A4, dst=B4) / UDP() / b"w"), 105, ["ipv4", "udp"]),
    Case("radiotap", raw(RadioTap() / Dot11(type=2, subtype=0) / LLC() / SNAP() / IP(src=A4, dst=B4) / TCP()), 127,
         ["ipv4", "tcp"]),
    Case("arcnet", b"\x01\x02\xd4\x00\x00\x00" + raw(IP(src=A4, dst=B4) / UDP()), 7, ["ipv4", "udp"]),
    Case("arcnet-linux", b"\x01\x02\x00\x00\xd4\x00\x00\x00" + raw(IP(src=A4, dst=B4) / UDP()), 129, ["ipv4", "udp"]),
    # LINKTYPE_IPOIB as tcpdump's tests/ipoib.pcap has it: 40 bytes (20 zero bytes: no GRH; the destination QPN
    # and GID) before the 4-byte RFC 4391 header; and with a GRH (version 6 in its first nibble)
    Case("ipoib", bytes(20) + bytes.fromhex("80000550fe800000000000000010e000664ab451") + b"\x08\x00\x00\x00"
         + raw(IP(src=A4, dst=B4) / TCP()), 242, ["ipv4", "tcp"]),
    Case("ipoib-grh", bytes.fromhex("6000000000000550") + bytes(16) + bytes.fromhex("fe800000000000000010e000664ab451")
         + b"\x86\xdd\x00\x00" + raw(IPv6(src=A6, dst=B6) / UDP()), 242, ["udp"]),
    Case("frame-relay", b"\x18\x41\x03\xcc" + raw(IP(src=A4, dst=B4) / UDP()), 107, ["ipv4", "udp"]),
    Case("ppi", struct.pack("<BBHI", 0, 0, 8, 1) + raw(ETH / IP(src=A4, dst=B4) / TCP()), 192, ["ipv4", "tcp"]),
    Case("pktap", struct.pack("<III", 108, 1, 1) + bytes(96) + raw(ETH / IP(src=A4, dst=B4) / TCP()), 258,
         ["ipv4", "tcp"]),
    Case("pptp-gre", raw(IP(src=A4, dst=B4) / GRE_PPTP(seqnum_present=1, seqence_number=1) / PPP(proto=0x21)
                         / IP(src=C4, dst=D4) / UDP() / b"pptp"), 101, ["ipv4", "ipv4@1", "udp@1"]),
    Case("mpls", raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x8847) / MPLS(label=16, s=0)
                     / MPLS(label=17, s=1) / IP(src=A4, dst=B4) / UDP() / b"m"), 1, ["ipv4", "udp"]),
    Case("ipv4-options", raw(ETH / IP(src=A4, dst=B4, options=[IPOption_RR()]) / TCP()), 1, ["ipv4", "tcp"]),
    Case("ipv6-ext", raw(ETH / IPv6(src=A6, dst=B6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP()), 1,
         ["tcp"]),
    Case("ah-ipv4", raw(IP(src=A4, dst=B4, proto=51) / AH(nh=6, payloadlen=4, spi=1, seq=1, icv=bytes(12))
                        / Raw(l4_bytes(IP(src=A4, dst=B4) / TCP(sport=9) / b"ah"))), 101, ["ipv4", "tcp"]),
    Case("ah-ipv6", raw(IPv6(src=A6, dst=B6, nh=51) / AH(nh=17, payloadlen=4, spi=1, seq=1, icv=bytes(12))
                        / Raw(l4_bytes(IPv6(src=A6, dst=B6) / UDP(sport=9) / b"ah"))), 101, ["udp"]),
    Case("esp", raw(IP(src=A4, dst=B4) / ESP(spi=1, seq=1, data=b"secret!!")), 101, ["ipv4", "esp"], ["ok", "n/a"]),
    Case("big-tcp", big_tcp(), 101, ["ipv4", "tcp"]),
    Case("ipip", raw(IP(src=A4, dst=B4) / IP(src=C4, dst=D4) / TCP()), 101, ["ipv4", "ipv4@1", "tcp@1"]),
    Case("6in4", raw(IP(src=A4, dst=B4) / IPv6(src=A6, dst=B6) / UDP() / b"6"), 101, ["ipv4", "udp@1"]),
    Case("gre-csum", raw(IP(src=A4, dst=B4) / GRE(chksum_present=1) / IP(src=C4, dst=D4) / UDP() / b"g"), 101,
         ["ipv4", "gre", "ipv4@1", "udp@1"]),
    Case("gre-teb", raw(IP(src=A4, dst=B4) / GRE(proto=0x6558, key_present=1, key=7) / ETH / IP(src=C4, dst=D4)
                        / TCP()), 101, ["ipv4", "ipv4@1", "tcp@1"]),
    Case("erspan", raw(IP(src=A4, dst=B4) / GRE(proto=0x88BE, seqnum_present=1) / ERSPAN_II() / ETH
                       / IP(src=C4, dst=D4) / UDP()), 101, ["ipv4", "ipv4@1", "udp@1"]),
    Case("erspan3", raw(IP(src=A4, dst=B4) / GRE(proto=0x22EB, seqnum_present=1) / ERSPAN_III() / ETH
                        / IP(src=C4, dst=D4) / UDP()), 101, ["ipv4", "ipv4@1", "udp@1"]),
    Case("erspan1", raw(IP(src=A4, dst=B4) / GRE(proto=0x88BE) / ETH / IP(src=C4, dst=D4) / TCP()), 101,
         ["ipv4", "ipv4@1", "tcp@1"]),
    Case("vxlan", raw(ETH / IP(src=A4, dst=B4) / UDP(sport=5000, dport=4789) / VXLAN(vni=42) / ETH
                      / IP(src=C4, dst=D4) / TCP() / b"inner"), 1, ["ipv4", "udp", "ipv4@1", "tcp@1"]),
    Case("vxlan-ipv6", raw(IPv6(src=A6, dst=B6) / UDP(sport=5000, dport=4789) / VXLAN(vni=42) / ETH
                           / IPv6(src=C6, dst=D6) / UDP() / b"i"), 101, ["udp", "udp@1"]),
    Case("geneve", raw(IP(src=A4, dst=B4) / UDP(sport=5000, dport=6081) / GENEVE(proto=0x6558) / ETH
                       / IP(src=C4, dst=D4) / UDP() / b"gen"), 101, ["ipv4", "udp", "ipv4@1", "udp@1"]),
    Case("mpls-udp", raw(IP(src=A4, dst=B4) / UDP(sport=5000, dport=6635) / MPLS(s=1) / IP(src=C4, dst=D4)
                         / ICMP()), 101, ["ipv4", "udp", "ipv4@1", "icmp@1"]),
    Case("icmp-quote-partial", raw(IP(src=A4, dst=B4) / ICMP(type=3, code=3)
                                   / Raw(raw(IP(src=B4, dst=A4) / UDP(sport=53, dport=9) / (b"q" * 100))[:28])), 101,
         ["ipv4", "icmp", "ipv4@1", "udp@1"], ["ok", "ok", "ok", "n/a"]),
    Case("icmp-quote-whole", raw(IP(src=A4, dst=B4) / ICMP(type=11)
                                 / Raw(raw(IP(src=B4, dst=A4, ttl=1) / UDP(sport=53, dport=9) / b"all"))), 101,
         ["ipv4", "icmp", "ipv4@1", "udp@1"]),
    Case("icmp-ext", raw(IP(src=A4, dst=B4) / ICMP(type=11, ext=ICMPExtension_Header()
                                                   / ICMPExtension_InterfaceInformation(has_ifindex=1, ifindex=3))
                         / IPerror(src=B4, dst=A4) / UDPerror(sport=4000, dport=33434) / (b"\0" * 12)), 101,
         ["ipv4", "icmp", "ipv4@1", "udp@1", "icmp-ext"]),
    Case("icmp-ext-length", raw(IP(src=A4, dst=B4) / ICMP(type=11, length=32)
                                / Raw(raw(IP(src=B4, dst=A4, ttl=1) / UDP(sport=4000, dport=33434)).ljust(128, b"\0"))
                                / ICMPExtension_Header() / ICMPExtension_InterfaceInformation(has_ifindex=1, ifindex=9)),
         101, ["ipv4", "icmp", "ipv4@1", "udp@1", "icmp-ext"]),
    Case("icmpv6-quote", raw(IPv6(src=A6, dst=B6) / ICMPv6DestUnreach()
                             / Raw(raw(IPv6(src=B6, dst=A6) / TCP(sport=80, dport=9))[:48])), 101,
         ["icmpv6", "tcp@1"], ["ok", "n/a"]),
    Case("igmp-v2", raw(IP(src=A4, dst="224.0.0.1", ttl=1) / IGMP(type=0x16, gaddr="239.1.1.1")), 101,
         ["ipv4", "igmp"]),
    Case("igmp-v3", raw(IP(src=A4, dst="224.0.0.22", ttl=1) / IGMPv3(type=0x22) / IGMPv3mr(records=[
        IGMPv3gr(rtype=1, maddr="239.1.1.1", srcaddrs=[C4])])), 101, ["ipv4", "igmp"]),
    Case("pim-hello", raw(IP(src=A4, dst="224.0.0.13", proto=103) / PIMv2Hdr() / PIMv2Hello()), 101, ["ipv4", "pim"]),
    Case("pim-hello-ipv6", raw(IPv6(src=A6, dst="ff02::d", nh=103) / PIMv2Hdr() / PIMv2Hello()), 101, ["pim"]),
    Case("pim-register", raw(IP(src=A4, dst=B4, proto=103) / Raw(pim_register(False))), 101,
         ["ipv4", "pim", "ipv4@1", "udp@1"]),
    Case("pim-register-ipv6", raw(IPv6(src=A6, dst=B6, nh=103) / Raw(pim_register(True))), 101,
         ["pim", "ipv4@1", "udp@1"]),
    Case("vrrp2", raw(IP(src=A4, dst="224.0.0.18", proto=112, ttl=255) / VRRP(vrid=1, addrlist=[C4])), 101,
         ["ipv4", "vrrp"]),
    Case("vrrp3-ipv4", raw(IP(src=A4, dst="224.0.0.18", proto=112, ttl=255) / VRRPv3(vrid=1, addrlist=[C4])), 101,
         ["ipv4", "vrrp"]),
    Case("vrrp3-ipv6", raw(IPv6(src="fe80::1", dst="ff02::12", nh=112, hlim=255) / VRRPv3(vrid=1, addrlist=["fe80::2"])),
         101, ["vrrp"]),
    Case("carp", raw(IP(src=A4, dst="224.0.0.18", proto=112, ttl=255) / Raw(carp())), 101, ["ipv4", "carp"]),
    Case("eigrp", raw(IP(src=A4, dst="224.0.0.10") / EIGRP(asn=100)), 101, ["ipv4", "eigrp"]),
    Case("ospf2", raw(IP(src=A4, dst="224.0.0.5") / OSPF_Hdr(src=A4) / OSPF_Hello()), 101, ["ipv4", "ospf"]),
    Case("ospf3", raw(IPv6(src="fe80::1", dst="ff02::5") / OSPFv3_Hdr(src=A4) / OSPFv3_Hello()), 101, ["ospf"]),
    Case("udplite-cov", raw(IP(src=A4, dst=B4, proto=136) / Raw(udplite(12, b"partial coverage"))), 101,
         ["ipv4", "udplite"]),
    Case("udplite-full-ipv6", raw(IPv6(src=A6, dst=B6, nh=136) / Raw(udplite(0, b"whole", True))), 101,
         ["udplite"]),
    Case("dccp", raw(IP(src=A4, dst=B4, proto=33) / Raw(dccp(0, b"dccp data"))), 101, ["ipv4", "dccp"]),
    Case("dccp-cscov", raw(IP(src=A4, dst=B4, proto=33) / Raw(dccp(1, b"not covered"))), 101, ["ipv4", "dccp"]),
    Case("offload", offload_tcp(), 101, ["ipv4", "tcp"], ["ok", "offload"]),
    Case("udp-none", raw(IP(src=A4, dst=B4) / UDP(chksum=0) / b"none"), 101, ["ipv4", "udp"], ["ok", "none"]),
    # VXLAN-GPE (UDP 4790; flags I+P, next protocol 4 = NSH) carrying NSH (RFC 8300: MD type 2, length 6 words,
    # next protocol 1 = IPv4), the bytes of tcpdump's tests/nsh-over-vxlan-gpe.pcap rebuilt with scapy's checksums
    Case("vxlan-gpe-nsh", raw(ETH / IP(src=A4, dst=B4) / UDP(sport=4790, dport=4790) / (
        bytes.fromhex("0c000004ffffff00" "30060201ffffffff" "0001020112345678" "0002030112345678")
        + raw(IP(src=C4, dst=D4) / UDP(sport=10000, dport=20000) / b"test"))), 1,
        ["ipv4", "udp", "ipv4@1", "udp@1"]),
    Case("vxlan-gpe-eth", raw(ETH / IPv6(src=A6, dst=B6) / UDP(sport=999, dport=4790) / (
        bytes.fromhex("0c00000300002a00") + raw(ETH / IP(src=C4, dst=D4) / TCP()))), 1, ["udp", "ipv4@1", "tcp@1"]),
    Case("nsh", raw(ETH) [:12] + b"\x89\x4f" + bytes.fromhex("0006010100000309") + bytes(16)
         + raw(IP(src=A4, dst=B4) / UDP(sport=5, dport=8000) / b"x"), 1, ["ipv4", "udp"]),
    # IEEE 802.1AE, integrity only (TCI 0x20: SC set, E and C clear): SecTAG 6 + SCI 8, EtherType, data, 16-byte ICV
    Case("macsec", raw(ETH)[:12] + b"\x88\xe5" + bytes.fromhex("2000000000442eb73f3995c30001") + b"\x08\x00"
         + raw(IP(src=A4, dst=B4) / ICMP() / b"ping") + bytes(range(16)), 1, ["ipv4", "icmp"]),
    Case("macsec-encrypted", raw(ETH)[:12] + b"\x88\xe5" + bytes.fromhex("2c00000000442eb73f3995c30001")
         + bytes(range(60)), 1, ["macsec"], ["n/a"]),
    # Arista's timestamp tag (tcpdump print-arista.c): subtype 1, timescale, format 1 (64-bit) or 2 (48-bit)
    Case("arista-64", raw(ETH)[:12] + bytes.fromhex("d28b000100105ceeed57384f59c8") + b"\x08\x00"
         + raw(IP(src=A4, dst=B4) / UDP() / b"a"), 1, ["ipv4", "udp"]),
    Case("arista-48", raw(ETH)[:12] + bytes.fromhex("d28b00010020ed57384f59c8") + b"\x81\x00\x00\x64\x86\xdd"
         + raw(IPv6(src=A6, dst=B6) / TCP()), 1, ["tcp"]),
    # Ethernet in IPv6 (IANA protocol 143; SRv6 End.DX2, RFC 8986), as tcpdump's tests/ipv6-srh-ipproto-ether.pcap
    Case("ether-in-ipv6", raw(ETH / IPv6(src=A6, dst=B6, nh=143) / ETH / IPv6(src=C6, dst=D6) / ICMPv6EchoRequest()),
         1, ["icmpv6@1"]),
    # FDDI (10): frame control + two addresses, then LLC/SNAP; Token Ring (6): AC, FC, two addresses, routing
    # information when the source address's top bit is set, then LLC/SNAP (Wireshark's test/captures/nfs.pcap
    # and tftp.pcap have these link types)
    Case("fddi", b"\x50" + bytes(6) + bytes(range(6)) + raw(LLC() / SNAP() / IP(src=A4, dst=B4) / UDP() / b"f"), 10,
         ["ipv4", "udp"]),
    Case("token-ring", b"\x10\x40" + bytes(6) + b"\x02" + bytes(5) + raw(LLC() / SNAP() / IP(src=A4, dst=B4) / TCP()),
         6, ["ipv4", "tcp"]),
    Case("token-ring-routed", b"\x10\x40" + bytes(6) + b"\x82" + bytes(5) + b"\x06\x30\x00\x10\x00\x20"
         + raw(LLC() / SNAP() / IP(src=A4, dst=B4) / UDP() / b"r"), 6, ["ipv4", "udp"]),
    Case("cdp-even", cdp(b"R1"), 1, ["cdp"]),
    Case("cdp-odd", cdp(b"R12", pad=20), 1, ["cdp"]),
    Case("cdp-odd-high", cdp(b"Rt\xfe"), 1, ["cdp"]),
    Case("cdp-chdlc", b"\x0f\x00\x20\x00" + cdp(b"R12")[22:], 104, ["cdp"]),
    Case("pgm-spm", pgm(0, struct.pack("!III", 1, 2, 3) + b"\x00\x01\x00\x00" + bytes([192, 0, 2, 1])), 101,
         ["ipv4", "pgm"]),
    Case("pgm-odata-v6", pgm(4, struct.pack("!II", 7, 1) + b"payload", v6=True), 101, ["pgm"]),
    Case("pgm-nak-no-checksum", pgm(8, bytes(20), checksum=False), 101, ["ipv4", "pgm"], ["ok", "none"]),
    Case("pgm-odata-zero", pgm(4, struct.pack("!II", 7, 1) + b"data", checksum=False), 101, ["ipv4", "pgm"],
         ["ok", "bad"]),
    # issue 21: what tshark checked in the public captures and csum did not (tests/encapsulations.py cites each spec)
    Case("pppoe-pfc", ether(0x8864, pppoe(b"\x21" + _inner())), 1, ["ipv4", "tcp"]),
    Case("pppoe-padded", ether(0x8864, pppoe(b"\x00\x21" + _inner("udp")) + bytes(12)), 1, ["ipv4", "udp"]),
    Case("chdlc-in-ppp", b"\x0f\x00\x08\x00" + _inner("udp"), 9, ["ipv4", "udp"]),
    Case("frame-relay-cisco", b"\x18\x41\x86\xdd" + _inner("udp6"), 107, ["udp"]),
    Case("vntag", tag(0x8926, 4, 0x0800, _inner()), 1, ["ipv4", "tcp"]),
    Case("etag", tag(0x893F, 6, 0x86DD, _inner("udp6")), 1, ["udp"]),
    Case("cisco-metadata", tag(0x8909, 6, 0x0800, _inner("udp")), 1, ["ipv4", "udp"]),
    Case("fabricpath", fabricpath(raw(ETH / IP(_inner("udp")))), 1, ["ipv4", "udp"]),
    Case("aruba-gre", raw(ETH / IP(src=A4, dst=B4) / GRE(proto=0x8200) / Raw(_wlan(_inner()))), 1,
         ["ipv4", "ipv4@1", "tcp@1"]),
    Case("gtp-u", _udp(2152, 2152, raw(GTP_U_Header(teid=1) / IP(_inner()))), 1, ["ipv4", "udp", "ipv4@1", "tcp@1"]),
    Case("gtp-u-ext", _udp(40000, 2152, raw(GTP_U_Header(teid=1, E=1, next_ex=0x85) / GTPPDUSessionContainer(
        type=0, QFI=9) / IPv6(_inner("udp6")))), 1, ["ipv4", "udp", "udp@1"]),
    Case("gtp-v0", _udp(3386, 3386, gtp_v0(_inner("udp"))), 1, ["ipv4", "udp", "ipv4@1", "udp@1"]),
    Case("capwap-wlan", _udp(40001, 5247, capwap(_wlan(_inner()))), 1, ["ipv4", "udp", "ipv4@1", "tcp@1"]),
    Case("capwap-8023", _udp(5247, 40002, capwap(raw(ETH / IPv6(_inner("tcp6"))), native=False), v6=True), 1,
         ["udp", "tcp@1"]),
    Case("ayiya", _udp(40003, 5072, ayiya(_inner("tcp6"), 41)), 1, ["ipv4", "udp", "tcp@1"]),
    Case("teredo", _udp(3544, 40004, teredo(_inner("udp6"))), 1, ["ipv4", "udp", "udp@1"]),
    Case("gre-in-udp", _udp(40005, 4754, raw(GRE(chksum_present=1) / IP(_inner()))), 1,
         ["ipv4", "udp", "gre", "ipv4@1", "tcp@1"]),
    Case("lisp", _udp(4341, 4341, lisp(_inner("udp6")), v6=True), 1, ["udp", "udp@1"]),
    Case("l2tp", _udp(1701, 1701, l2tp(b"\xff\x03\x00\x21" + _inner(), sequence=True)), 1,
         ["ipv4", "udp", "ipv4@1", "tcp@1"]),
    Case("l2tp-offset-pfc", _udp(1701, 1701, l2tp(b"\x57" + _inner("udp6"), length=False, offset=3)), 1,
         ["ipv4", "udp", "udp@1"]),
    Case("sflow", _udp(40006, 6343, sflow([(1, raw(ETH / IP(_inner())), 72)])), 1,
         ["ipv4", "udp", "ipv4@1", "tcp@1"]),
    Case("sflow-cut", _udp(40007, 6343, sflow([(11, _inner("udp")[:24], 1504)], expanded=True)), 1,
         ["ipv4", "udp", "ipv4@1", "udp@1"], ["ok", "ok", "ok", "n/a"]),
    Case("openflow-10", raw(ETH / IP(src=A4, dst=B4) / TCP(sport=40008, dport=6653, flags="PA")
                            / Raw(packet_in(raw(ETH / IP(_inner("udp"))), version=1))), 1,
         ["ipv4", "tcp", "ipv4@1", "udp@1"]),
    Case("openflow-13", raw(ETH / IP(src=A4, dst=B4) / TCP(sport=6653, dport=40009, flags="PA")
                            / Raw(packet_in(raw(ETH / IP(_inner()))))), 1, ["ipv4", "tcp", "ipv4@1", "tcp@1"]),
    Case("icmp-quote-udp-none", raw(IP(src=A4, dst=B4) / ICMP(type=3, code=3) / Raw(raw(
        IP(src=B4, dst=A4) / UDP(sport=53, dport=9, chksum=0) / (b"q" * 100))[:28])), 101,
         ["ipv4", "icmp", "ipv4@1", "udp@1"], ["ok", "ok", "ok", "none"]),
]


def _ids(cases):
    return [c.name for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_every_case_verifies_with_scapys_checksums(case):
    """csum finds exactly the listed checksums, in packet order, each with its status (ok unless listed), and
    its computed value is the one in scapy's (or the oracle's) bytes."""
    results = inet.verify(case.data, link=case.linktype)
    from csum.capture.report import count_key
    assert [count_key(r) for r in results] == case.layers
    assert [str(r.status) for r in results] == (case.statuses or ["ok"] * len(case.layers))
    for r in results:
        if r.status == "ok":
            assert r.computed == int.from_bytes(case.data[r.field : r.field + 2], "big") or (
                r.reason == Reason.NEGATIVE_ZERO)


def test_big_tcp_super_packet_is_named():
    """IPv4 total length 0 (BIG TCP): the TCP checksum over the captured length passes and says so."""
    (ip, tcp) = inet.verify(big_tcp(), link=101)
    assert (ip.reason, tcp.reason, str(tcp.status)) == (Reason.OK, Reason.SUPER_PACKET, "ok")


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_every_field_corrupted_is_bad(case):
    """Each verifiable field overwritten with another value fails, naming the value that was there before
    (scapy's); the other fields keep their verdict unless they cover the corrupted one."""
    for r in inet.verify(case.data, link=case.linktype):
        if r.status not in ("ok", "offload"):
            continue
        data = bytearray(case.data)
        data[r.field : r.field + 2] = ((r.stored or 0) ^ 0x5A5A).to_bytes(2, "big")
        again = {x.field: x for x in inet.verify(bytes(data), link=case.linktype)}
        assert again[r.field].status == "bad" and again[r.field].computed == r.computed, case.name


def test_paths_name_every_layer():
    """The jsonl path names each layer walked, outer to inner."""
    by_name = {c.name: c for c in CASES}
    paths = [r.path for r in inet.verify(by_name["vxlan"].data, link=1)]
    assert paths == ["eth/ipv4", "eth/ipv4/udp", "eth/ipv4/udp/vxlan/eth/ipv4", "eth/ipv4/udp/vxlan/eth/ipv4/tcp"]
    assert inet.verify(by_name["eth-qinq"].data, link=1)[1].path == "eth/vlan/vlan/ipv4/tcp"
    assert inet.verify(by_name["mpls"].data, link=1)[1].path == "eth/mpls/ipv4/udp"


def test_gre_checksum_covers_the_inner_packet():
    """RFC 2784 2.5: the GRE checksum covers the GRE header and payload; corrupting the inner UDP checksum
    breaks both, and csum fix repairs both (inner first). Expected: scapy's values."""
    case = {c.name: c for c in CASES}["gre-csum"]
    inner = inet.verify(case.data, link=101)[3]
    data = bytearray(case.data)
    data[inner.field : inner.field + 2] = b"\x12\x34"
    statuses = [str(r.status) for r in inet.verify(bytes(data), link=101)]
    assert statuses == ["ok", "bad", "ok", "bad"]
    report = check(pcap.parse(pcap_bytes([bytes(data)], linktype=101)))
    fixed = pcap.patched(pcap.parse(pcap_bytes([bytes(data)], linktype=101)), report.patches)
    assert fixed[24 + 16:] == case.data


def test_unknown_link_type_is_reported_by_number():
    """A link type csum does not walk is counted under its number, never passed silently."""
    report = check(pcap.parse(pcap_bytes([b"\0" * 40, b"\1" * 40], linktype=147)))
    assert report.unsupported == {147: 2} and not report.bad and sum(sum(c.values()) for c in report.counts.values()) == 0


def test_snaplen_cut_ipv4_header_is_still_verified():
    """Headers-only captures (tcpdump -s 54): the IPv4 header is whole, so its checksum is checked (a wrong one
    is bad), the TCP checksum covers bytes not captured (n/a). Expected: scapy's header checksum."""
    good = raw(ETH / IP(src=A4, dst=B4) / TCP() / (b"x" * 500))
    bad = bytearray(good)
    bad[24:26] = b"\xbe\xef"
    cap = pcap.parse(pcap_bytes([good[:54], bytes(bad[:54])], origlens=[len(good)] * 2))
    report = check(cap)
    assert report.cut == [0, 1] and not report.malformed
    assert report.counts["ipv4"]["ok"] == 1 and report.counts["ipv4"]["bad"] == 1
    assert report.counts["tcp"]["n/a"] == 2
    (i, r), = report.bad
    assert (i, r.layer, r.computed) == (1, "ipv4", IP(good[14:]).chksum)


def test_fragments_are_reassembled_in_a_capture():
    """IPv4 and IPv6 fragments (scapy.fragment / fragment6) of one datagram are reassembled: the UDP checksum
    of the whole datagram is verified on the first fragment; corrupting a byte of a later fragment makes it
    bad, and fix patches the field in the first fragment with scapy's value."""
    v4 = [raw(ETH / f) for f in fragment(IP(src=A4, dst=B4, id=7) / UDP(sport=1, dport=2) / (b"y" * 2000),
                                             fragsize=800)]
    v6 = [raw(ETH / f) for f in fragment6(IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(id=9) / UDP(sport=3, dport=4)
                                             / (b"z" * 2000), 900)]
    frames = [v4[0], v6[0], v4[1], v6[1], v4[2], v6[2]]
    report = check(pcap.parse(pcap_bytes(frames)))
    assert report.counts["udp"] == {"ok": 2, "bad": 0, "offload": 0, "none": 0, "n/a": 4}
    assert report.counts["ipv4"]["ok"] == 3 and not report.bad
    broken = list(frames)
    broken[4] = broken[4][:-1] + bytes([broken[4][-1] ^ 1])
    cap = pcap.parse(pcap_bytes(broken))
    report = check(cap)
    (i, r), = report.bad
    assert (i, r.layer) == (0, "udp")
    want = IP(raw(IP(src=A4, dst=B4, id=7) / UDP(sport=1, dport=2) / (b"y" * 1999 + bytes([ord("y") ^ 1]))))
    assert r.computed == want[UDP].chksum
    (offset, new), = report.patches
    assert offset == 24 + 16 + 14 + 20 + 6 and new == want[UDP].chksum.to_bytes(2, "big")


def test_overlapping_fragments_with_different_bytes_fail_reassembly():
    """RFC 5722 / Linux ip_fragment.c: overlapping fragments that disagree are not reassembled: reported as
    reassembly-failed (n/a), not as a checksum verdict."""
    frags = fragment(IP(src=A4, dst=B4, id=8) / UDP(sport=1, dport=2) / (b"w" * 100), fragsize=48)
    liar = frags[1].copy()
    liar[Raw].load = b"W" * len(liar[Raw].load)
    report = check(pcap.parse(pcap_bytes([raw(ETH / f) for f in [frags[0], frags[1], liar, *frags[2:]]])))
    assert report.counts["udp"]["n/a"] >= 1 and not report.bad
    rows = []
    check(pcap.parse(pcap_bytes([raw(ETH / f) for f in [frags[0], frags[1], liar, *frags[2:]]])),
          sink=lambda i, res: rows.extend(res))
    assert Reason.REASSEMBLY_FAILED in [r.reason for r in rows]


def test_report_merge_equals_whole_and_pickles():
    """Checking a capture in two chunks (Capture.first_index / base as the streaming reader sets them) and
    merging gives the report of the whole capture; reports survive pickling (they cross processes)."""
    frames = [c.data if c.linktype == 1 else raw(ETH / IP(src=A4, dst=B4) / TCP(chksum=k)) for k, c in
              enumerate(CASES)]
    whole_cap = pcap.parse(pcap_bytes(frames))
    whole = check(whole_cap)
    cut = 7
    parts = []
    for lo, hi in ((0, cut), (cut, len(frames))):
        start = int(whole_cap.offsets[lo]) - 16
        end = int(whole_cap.offsets[hi - 1] + whole_cap.caplens[hi - 1])
        sub = pcap.Capture(whole_cap.data[start:end], "pcap", whole_cap.offsets[lo:hi] - start,
                           whole_cap.caplens[lo:hi], whole_cap.origlens[lo:hi], whole_cap.linktypes[lo:hi],
                           first_index=lo, base=start)
        parts.append(check(sub))
    merged = parts[0].merge(parts[1])
    assert merged == whole and merged.bad and merged.patches
    assert pickle.loads(pickle.dumps(merged)) == merged
    assert isinstance(Report(0).merge(Report(0)), Report)


# --- tshark as the judge ----------------------------------------------------------------------

#: csum protocol -> tshark's checksum status field (tshark 4.0: 0 bad, 1 good, 2 unverified).
TSHARK_FIELDS = {"ipv4": "ip.checksum.status", "tcp": "tcp.checksum.status", "udp": "udp.checksum.status",
                 "udplite": "udp.checksum.status", "icmp": "icmp.checksum.status",
                 "icmpv6": "icmpv6.checksum.status", "igmp": "igmp.checksum.status", "pim": "pim.cksum.status",
                 "gre": "gre.checksum.status", "vrrp": "vrrp.checksum.status",
                 "carp": "vrrp.checksum.status",  # tshark 4.0 dissects these as VRRPv2: the same checksum rule
                 "eigrp": "eigrp.checksum.status", "dccp": "dccp.checksum.status",
                 "icmp-ext": "icmp.ext.checksum.status", "cdp": "cdp.checksum.status", "pgm": "pgm.hdr.cksum.status"}
#: Each case appears twice (as built, and corrupted): tshark's TCP sequence analysis would call the copy a
#: retransmission and leave its payload (OpenFlow) undissected.
TSHARK_PREFS = ["ip.check_checksum:TRUE", "tcp.check_checksum:TRUE", "udp.check_checksum:TRUE",
                "udplite.check_checksum:TRUE", "dccp.check_checksum:TRUE", "tcp.analyze_sequence_numbers:FALSE"]


def _corrupt_all(case: Case) -> bytes:
    data = bytearray(case.data)
    for r in inet.verify(case.data, link=case.linktype):
        if r.field is not None and r.status == "ok" and r.depth == 0 and r.layer != "ipv4":
            data[r.field : r.field + 2] = (r.stored ^ 0x0101).to_bytes(2, "big")
    return bytes(data)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_agrees_on_every_case(tmp_path):
    """tshark 4's checksum verdicts (validation on) equal csum's wherever both give one, on every case and on
    a copy with each outer transport checksum corrupted; every checksum tshark judges, csum judges too, and
    every ok/bad verdict csum gives (at any depth), tshark gives too."""
    frames = [(c, c.data) for c in CASES] + [(c, _corrupt_all(c)) for c in CASES]
    links = sorted({c.linktype for c, _ in frames})
    path = tmp_path / "cases.pcapng"
    path.write_bytes(shb() + b"".join(idb(link) for link in links)
                     + b"".join(epb(data, links.index(c.linktype)) for c, data in frames))
    fields = sorted(set(TSHARK_FIELDS.values()))
    cmd = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]
    for pref in TSHARK_PREFS:
        cmd += ["-o", pref]
    for name in fields:
        cmd += ["-e", name]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout.splitlines()
    assert len(out) == len(frames)
    compared = 0
    for (case, data), line in zip(frames, out):
        theirs = dict(zip(fields, line.split("\t")))
        ours: dict[str, list[str]] = {}
        for r in inet.verify(data, link=case.linktype):
            if r.layer in TSHARK_FIELDS:
                ours.setdefault(TSHARK_FIELDS[r.layer], []).append(str(r.status))
        for name in fields:
            verdicts = [v for v in theirs.get(name, "").split(",") if v]
            if name == "pgm.hdr.cksum.status" and len(verdicts) == 2:
                verdicts = verdicts[1:]  # Wireshark 4.0's packet-pgm.c also puts the checksum's value in this field
            mine = ours.get(name, [])
            judged = [(t, m) for t, m in zip(verdicts, [m for m in mine if m != "n/a"]) if t in ("0", "1")]
            for t, m in judged:
                compared += 1
                assert (t == "1") == (m in ("ok", "none")), (case.name, name, verdicts, mine)
            assert len([v for v in verdicts if v in ("0", "1")]) <= len([m for m in mine if m != "n/a"]), (
                case.name, name, verdicts, mine)
        for name in fields:  # and every ok/bad csum gives, tshark gives too (a layer misread leaves tshark silent)
            judged = [v for v in theirs.get(name, "").split(",") if v in ("0", "1")]
            if name == "pgm.hdr.cksum.status":
                judged = judged[-1:]
            assert len(judged) >= len([m for m in ours.get(name, []) if m in ("ok", "bad")]), (case.name, name)
    assert compared > 150


@settings(max_examples=1500)  # one walk per example (~50 us): about a second
@given(st.sampled_from(CASES), st.integers(0, 400), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 255)),
                                                           max_size=4), st.booleans())
def test_mangled_cases_never_crash_the_walker(case, cut, edits, strict):
    """Invariant: any truncation or byte edit of any case gives results (lenient walk, as csum verify does) or
    CsumValueError (strict, as csum.inet.verify does), never another exception; the wire length given as the
    original keeps cut packets from being called malformed."""
    data = bytearray(case.data[:cut])
    for at, value in edits:
        if at < len(data):
            data[at] = value
    view = memoryview(bytes(data))
    try:
        results = inet.verify(view, link=case.linktype) if strict else None
    except CsumValueError:
        return
    stack = walk(view, case.linktype, wire_len=len(case.data))
    for r in results or [evaluate(view, f) for f in stack.fields]:
        assert r.status in tuple(Status)
    if not edits:
        assert stack.malformed is None


@pytest.mark.parametrize("v6", [False, True])
def test_a_cut_pim_register_is_judged_on_its_header(v6):
    """A PIM Register cut inside its encapsulated packet: the checksum (over the first 8 bytes, pim_register's
    RFC 1071 oracle value) is judged on them, and the whole-message alternative, which the cut leaves uncaptured, is
    not tried (it read past the capture: found by the sanitized run's examples)."""
    ip = IPv6(src=A6, dst=B6, nh=103) if v6 else IP(src=A4, dst=B4, proto=103)
    data = raw(ip / Raw(pim_register(v6)))
    view = memoryview(data[: len(ip) + 8 + 4])
    stack = walk(view, 101, wire_len=len(data))
    pim = next(f for f in stack.fields if f.entry.name == "pim")
    assert pim.alt_end is None
    assert evaluate(view, pim).reason is Reason.OK


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_agrees_on_reassembled_fragments(tmp_path):
    """tshark reassembles IP fragments (ip.defragment and ipv6.defragment are on by default) and judges the
    UDP checksum of the whole datagram; csum verify's verdicts on the same datagrams, one of them with a
    payload byte flipped in a later fragment, are the same, in the same order."""
    datagrams = [fragment(IP(src=A4, dst=B4, id=11 + k) / UDP(sport=1, dport=2) / (bytes([k]) * 1500), fragsize=512)
                 for k in range(3)]
    datagrams += [fragment6(IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(id=21 + k) / UDP(sport=3, dport=4)
                            / (bytes([k + 7]) * 1500), 700) for k in range(2)]
    frames = [bytearray(raw(ETH / f)) for d in datagrams for f in d]
    frames[1][-1] ^= 0x01  # the first IPv4 datagram's second fragment
    frames[-1][-1] ^= 0x10  # the last IPv6 datagram's last fragment
    path = tmp_path / "frags.pcap"
    path.write_bytes(pcap_bytes([bytes(f) for f in frames]))
    out = subprocess.run(["tshark", "-r", str(path), "-o", "udp.check_checksum:TRUE", "-T", "fields", "-e",
                          "udp.checksum.status"], capture_output=True, text=True, check=True, timeout=120).stdout
    theirs = [v for v in out.split() if v in ("0", "1")]
    rows: list = []
    check(pcap.parse(path.read_bytes()), sink=lambda i, results: rows.extend(results))
    ours = ["1" if r.status == "ok" else "0" for r in rows if r.layer == "udp" and r.status in ("ok", "bad")]
    assert theirs == ours == ["0", "1", "1", "1", "0"]
    assert {r.path for r in rows if r.layer == "udp"} == {"eth/ipv4/udp", "eth/ipv6/udp"}


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_agrees_on_a_headers_only_capture(tmp_path):
    """tcpdump -s 64 style: every packet cut after its headers, every third IPv4 header checksum wrong. tshark
    verifies each captured IPv4 header; csum verify gives the same verdicts (and exits 1), the TCP/UDP
    checksums n/a (their bytes were not captured)."""
    frames, cut = [], []
    for k in range(12):
        full = bytearray(raw(ETH / IP(src=A4, dst=B4, id=k) / (TCP() if k % 2 else UDP()) / (bytes([k]) * 400)))
        if k % 3 == 0:
            full[24:26] = (int.from_bytes(full[24:26], "big") ^ 0x0100).to_bytes(2, "big")
        frames.append(bytes(full[:64]))
        cut.append(len(full))
    path = tmp_path / "cut.pcap"
    path.write_bytes(pcap_bytes(frames, origlens=cut, snaplen=64))
    out = subprocess.run(["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE", "-T", "fields", "-e",
                          "ip.checksum.status"], capture_output=True, text=True, check=True, timeout=120).stdout
    report = check(pcap.parse(path.read_bytes()))
    bad = {i for i, r in report.bad if r.layer == "ipv4"}
    assert ["0" if i in bad else "1" for i in range(12)] == out.split()
    assert bad == {0, 3, 6, 9} and report.counts["tcp"]["n/a"] + report.counts["udp"]["n/a"] == 12


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_judges_the_header_of_a_packet_whose_lengths_lie(tmp_path):
    """A whole IPv4 header whose total length is more than the frame holds (not a snap length cut: the frame is
    all there was) or less than the header: tshark 4 still verifies the header checksum (tcpdump's
    tests/icmp-cksum-oobr-*.pcap, kday*.pcap are such packets). csum verify judges it the same and reports the
    packet malformed; every second header checksum is wrong. tshark gives no verdict where the total length is
    below the header's (frames 2 and 3); Linux checks the header checksum before the lengths
    (net/ipv4/ip_input.c ``ip_rcv_core``), and so does csum: there the expected verdicts are scapy's (it wrote a
    right checksum; the test flips every second one)."""
    frames = []
    for k, total in enumerate((5000, 5000, 12, 12, 300, 300)):
        full = bytearray(raw(ETH / IP(src=A4, dst=B4, id=k, len=total) / ICMP() / (b"p" * 40)))
        if k % 2:
            full[24:26] = (int.from_bytes(full[24:26], "big") ^ 0x0100).to_bytes(2, "big")
        frames.append(bytes(full))
    path = tmp_path / "lies.pcap"
    path.write_bytes(pcap_bytes(frames))
    out = subprocess.run(["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE", "-T", "fields", "-e",
                          "ip.checksum.status"], capture_output=True, text=True, check=True, timeout=120).stdout
    report = check(pcap.parse(path.read_bytes()))
    bad = {i for i, r in report.bad if r.layer == "ipv4"}
    theirs = out.split("\n")[:6]
    assert theirs == ["1", "0", "", "", "1", "0"]
    assert ["0" if i in bad else "1" for i in range(6)] == [v or "10"[i % 2] for i, v in enumerate(theirs)]
    assert report.counts["ipv4"]["ok"] == 3 and len(report.malformed) == 6


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_accepts_csums_cdp_checksum_for_every_odd_tail(tmp_path):
    """CDP pads an odd PDU the Cisco way (Wireshark's packet-cdp.c): the last byte is the low byte of the final
    word, sign-extended and less one when its top bit is set. For each last byte, csum's computed value is
    stored and tshark 4 must call it good and the value one off bad; scapy 2.8 agrees except for the byte 0x80,
    which it treats as positive (its ``<= 0x80``), so there tshark is the only reference."""
    frames, computed = [], []
    for last in (0x00, 0x01, 0x7F, 0x80, 0x81, 0xFE, 0xFF):
        data = bytearray(cdp(b"Rt" + bytes([last])))
        [r] = inet.verify(bytes(data), link=1)
        computed.append(r.computed)
        data[24:26] = r.computed.to_bytes(2, "big")
        frames.append(bytes(data))
        data[24:26] = (r.computed ^ 1).to_bytes(2, "big")
        frames.append(bytes(data))
        scapys = int.from_bytes(cdp(b"Rt" + bytes([last]))[24:26], "big")
        assert (scapys == r.computed) == (last != 0x80), hex(last)
    path = tmp_path / "cdp.pcap"
    path.write_bytes(pcap_bytes(frames))
    out = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "cdp.checksum.status"],
                         capture_output=True, text=True, check=True, timeout=120).stdout.split()
    assert out == ["1", "0"] * 7


@pytest.mark.parametrize("port", sorted(table.UDP_TUNNELS))
def test_capture_checker_walks_into_every_udp_tunnel(port):
    """Every UDP tunnel port of the table, outer checksums right and the inner TCP checksum wrong (scapy wrote
    it, the test flips it): csum verify's fast paths must leave such a packet to the walker, which finds it; a
    tunnel also known by its source port (table.UDP_TUNNELS_BY_SOURCE) is found from there too."""
    tcp4, tcp6 = raw(IP(src=C4, dst=D4) / TCP()), raw(IPv6(src=C6, dst=D6) / TCP())
    inner = {"vxlan": bytes.fromhex("0800000000002a00") + raw(ETH / IP(tcp4)),
             "vxlan-gpe": bytes.fromhex("0c00000100002a00") + tcp4,
             "geneve": bytes.fromhex("0000080000002a00") + tcp4,
             "mpls": bytes.fromhex("00001140") + tcp4,
             "gtp": raw(GTP_U_Header(teid=3, gtp_type=255, length=len(tcp4))) + tcp4, "gtp-prime": gtp_v0(tcp4),
             "capwap": capwap(raw(ETH / IPv6(tcp6)), native=False), "ayiya": ayiya(tcp6, 41), "teredo": teredo(tcp6),
             "gre-udp": raw(GRE(proto=0x0800)) + tcp4, "lisp": lisp(tcp6), "l2tp": l2tp(b"\x00\x21" + tcp4)}
    bad = bytearray(inner[table.UDP_TUNNELS[port]])
    bad[-4] ^= 0x01  # TCP's checksum sits 4 bytes before the end of a bare 20-byte TCP header
    ports = [(1234, port)] + ([(port, 40000)] if port in table.UDP_TUNNELS_BY_SOURCE else [])
    for sport, dport in ports:
        frame = raw(ETH / IP(src=A4, dst=B4) / UDP(sport=sport, dport=dport) / bytes(bad))
        report = check(pcap.parse(pcap_bytes([frame])))
        assert [(r.layer, r.depth) for _, r in report.bad] == [("tcp", 1)], (sport, dport)

"""Write the committed seed corpus of the fuzz targets: ``python fuzz/seeds.py`` (scapy builds every frame).

fuzz/corpus/<target>/<name>: one file per seed, named after what it holds; beside them, named after the SHA-1 of their
bytes, the inputs ``python fuzz/run.py TARGET --merge`` kept from fuzz runs, which this script leaves alone.
tests/fuzz/test_fuzz_inputs.py checks that this script still writes exactly the committed seeds, and replays every
file through its target.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_command import COMMANDS  # noqa: E402
from fuzz_command import encode as command_input  # noqa: E402
from fuzz_common import MAX_FRAMES, capture_bytes, decode, encode  # noqa: E402
from run import merged  # noqa: E402
from fuzz_rewrite import encode as rewrite_input  # noqa: E402
from fuzz_walker import encode as walker_input  # noqa: E402
from scapy.all import GRE, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, fragment, raw  # noqa: E402
from scapy.layers.inet import ICMPExtension_Header, ICMPExtension_Object  # noqa: E402
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III  # noqa: E402
from scapy.contrib.geneve import GENEVE  # noqa: E402
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer  # noqa: E402
from scapy.contrib.mpls import MPLS  # noqa: E402
from scapy.layers.inet6 import (  # noqa: E402
    HAO,
    ICMPv6DestUnreach,
    ICMPv6EchoRequest,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    IPv6ExtHdrSegmentRouting,
    Jumbo,
    fragment6,
)
from scapy.layers.ipsec import AH  # noqa: E402
from scapy.layers.ppp import PPP, PPPoE  # noqa: E402
from scapy.layers.vxlan import VXLAN  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
V4 = IP(src="10.0.0.1", dst="10.1.0.2", id=7)
V6 = IPv6(src="2001:db8::1", dst="2001:db8::2")
IN4 = IP(src="172.16.0.1", dst="172.16.0.2")

#: Link-layer headers in front of an IPv4 packet, per link type C walks (the Ethernet ones are built whole).
HEADERS = {0: b"\x02\0\0\0", 108: b"\0\0\0\x02", 12: b"", 14: b"", 101: b"", 228: b"", 104: b"\x0f\x00\x08\x00",
           113: b"\0\0\0\x01\0\x06" + b"\x02" * 6 + b"\0\0" + b"\x08\x00",
           276: b"\x08\x00\0\0" + b"\0\0\0\x02" + b"\0\x01\0\x06" + b"\x02" * 6 + b"\0\0",
           242: bytes(40) + b"\x08\x00\0\0"}


def _ipv6_header(link: int, header: bytes) -> bytes:
    """The link-layer header of HEADERS for IPv6: the EtherType 0x86dd, or the BSD family 24 (AF_INET6 on NetBSD)."""
    at = {104: 2, 113: 14, 242: 40, 276: 0}.get(link)
    if at is not None:
        return header[:at] + b"\x86\xdd" + header[at + 2 :]
    return {0: b"\x18\0\0\0", 108: b"\0\0\0\x18"}.get(link, header)


def _broken(frame: bytes, at: int = -1) -> bytes:
    data = bytearray(frame)
    data[at] ^= 0x5A
    return bytes(data)


def _offload(frame: bytes, with_length: bool = True) -> bytes:
    """The TCP checksum of an Ethernet/IPv4/TCP frame set to transmit offload's value (the pseudo-header sum, with the
    segment's length or 0)."""
    packet = Ether(frame)
    ip = packet[IP]
    length = len(ip[TCP]) if with_length else 0
    words = ip.src.split(".") + ip.dst.split(".")
    total = sum(int(words[k]) << 8 | int(words[k + 1]) for k in range(0, 8, 2)) + 6 + length
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    ip[TCP].chksum = total
    return raw(packet)


def _stacks() -> dict[str, bytes]:
    """Ethernet frames of the stacks C walks, checksums by scapy."""
    return {
        "ipv4-tcp": raw(ETH / V4 / TCP(sport=1000, dport=80) / b"payload"),
        "ipv6-udp": raw(ETH / V6 / UDP(sport=1000) / b"x"),
        "ipv4-options-udp": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", options=b"\x94\x04\0\0\x01\x01\x01\0")
                                / UDP() / b"o"),
        "ipv6-hbh-dest-tcp": raw(ETH / V6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / TCP() / b"abc"),
        "ipv6-routing-done-udp": raw(ETH / V6 / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=0) / UDP()),
        "qinq-ipv6-icmpv6": raw(ETH / Dot1Q(vlan=5) / Dot1Q(vlan=6) / V6 / ICMPv6EchoRequest() / b"q"),
        "vlan-ipv4-icmp": raw(ETH / Dot1Q(vlan=5) / V4 / ICMP() / b"ping"),
        "vxlan-tcp": raw(ETH / V4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / ETH / IN4 / TCP() / b"in"),
        "ipip-tcp": raw(ETH / V4 / IN4 / TCP() / b"ipip"),
        "6in4-udp": raw(ETH / V4 / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"6in4"),
        "gre-csum-key-udp": raw(ETH / V4 / GRE(chksum_present=1, key_present=1, key=5) / IN4 / UDP() / b"gre"),
        "gre-teb-icmp": raw(ETH / V6 / GRE(proto=0x6558) / ETH / IN4 / ICMP() / b"teb"),
        "erspan2-vlan-tcp": raw(ETH / V4 / GRE(seqnum_present=1) / ERSPAN_II() / ETH / Dot1Q(vlan=7) / IN4 / TCP()
                                / b"erspan"),
        "erspan3-ipv6-udp": raw(ETH / V4 / GRE(proto=0x22EB) / ERSPAN_III() / ETH
                                / IPv6(src="2001:db8::3", dst="2001:db8::4") / UDP() / b"3"),
        "icmp-error-quote": raw(ETH / V4 / ICMP(type=3, code=3) / IN4 / UDP(sport=53)),
        "udp-no-checksum": raw(ETH / V4 / UDP(chksum=0) / b"z"),
        **_more_stacks(),
    }


def _more_stacks() -> dict[str, bytes]:
    """Ethernet frames of the rest of what C walks, or hands to the Python walker after a look: MPLS, PPPoE, Geneve,
    GTP, GRE in UDP, AH, IPv6 routing and destination options, tunnels' limits (checksums by scapy where it can)."""
    in6 = IPv6(src="2001:db8::3", dst="2001:db8::4")
    gtp_ext = GTP_U_Header(teid=9, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=5)
    return {
        "mpls-two-labels-ipv4-udp": raw(ETH / MPLS(label=16, s=0) / MPLS(label=17, s=1) / V4 / UDP() / b"m"),
        "mpls-ipv6-tcp": raw(ETH / MPLS(label=18, s=1) / V6 / TCP() / b"m6"),
        "mpls-control-word-eth": raw(ETH / MPLS(label=19, s=1) / bytes(4) / ETH / IN4 / UDP() / b"pw"),
        "mpls-cut-stack": raw(ETH)[:12] + b"\x88\x47" + MPLS(label=20, s=0).build(),
        "pppoe-ipv4-tcp": raw(ETH / PPPoE(sessionid=1) / PPP(proto=0x21) / V4 / TCP() / b"p"),
        "pppoe-ipv6-udp": raw(ETH / PPPoE(sessionid=1) / PPP(proto=0x57) / V6 / UDP() / b"p6"),
        "pppoe-mpls-ipv4": raw(ETH / PPPoE(sessionid=2) / PPP(proto=0x281) / MPLS(s=1) / V4 / UDP() / b"pm"),
        "pppoe-short-protocol": raw(ETH)[:12] + b"\x88\x64" + bytes.fromhex("110000010000")[:4]
        + (1 + len(raw(V4 / UDP()))).to_bytes(2, "big") + b"\x21" + raw(V4 / UDP()),
        "geneve-eth-icmp": raw(ETH / V4 / UDP(sport=50000, dport=6081) / GENEVE(proto=0x6558) / ETH / IN4 / ICMP()),
        "geneve-options-ipv6": raw(ETH / V4 / UDP(sport=50000, dport=6081) / GENEVE(proto=0x86DD, optionlen=2,
                                                                                 options=bytes(8)) / in6 / UDP()),
        "gtp-u-ipv4-udp": raw(ETH / V4 / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=7) / IN4 / UDP() / b"g"),
        "gtp-u-extension-ipv6": raw(ETH / V6 / UDP(sport=2152, dport=2152) / gtp_ext / in6 / TCP() / b"e"),
        "gtp-v0-ipv4": raw(ETH / V4 / UDP(sport=3386, dport=3386)
                           / (b"\x1e\xff" + len(raw(IN4 / UDP())).to_bytes(2, "big") + bytes(16)) / IN4 / UDP()),
        "gre-in-udp-ipv4": raw(ETH / V4 / UDP(sport=50000, dport=4754) / GRE(proto=0x0800) / IN4 / TCP() / b"gu"),
        "ipv4-ah-tcp": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", proto=51)
                           / AH(nh=6, payloadlen=4, spi=1, icv=bytes(12)) / TCP() / b"ah"),
        "ipv6-ah-udp": raw(ETH / IPv6(src="2001:db8::1", dst="2001:db8::2", nh=51)
                           / AH(nh=17, payloadlen=4, spi=1, icv=bytes(12)) / UDP() / b"ah6"),
        "ipv6-routing-type0-left-udp": raw(ETH / V6 / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=1)
                                           / UDP() / b"r0"),
        "ipv6-routing-type2-tcp": raw(ETH / V6 / IPv6ExtHdrRouting(type=2, addresses=["2001:db8::a"], segleft=1)
                                      / TCP() / b"r2"),
        "ipv6-srh-udp": raw(ETH / V6 / IPv6ExtHdrSegmentRouting(addresses=["2001:db8::b", "2001:db8::c"], segleft=1)
                            / UDP() / b"srh"),
        "ipv6-routing-type3": raw(ETH / V6 / IPv6ExtHdrRouting(type=3, addresses=["2001:db8::d"], segleft=1) / UDP()),
        "ipv6-home-address-udp": raw(ETH / V6 / IPv6ExtHdrDestOpt(options=[HAO(hoa="2001:db8::99")]) / UDP() / b"h"),
        "ipv6-jumbo-option": raw(ETH / V6 / IPv6ExtHdrHopByHop(options=[Jumbo(jumboplen=70000)]) / UDP()),
        "ipv6-atomic-fragment-tcp": raw(ETH / V6 / IPv6ExtHdrFragment(id=3, m=0, offset=0) / TCP() / b"a"),
        "ipv6-two-fragment-headers": raw(ETH / V6 / IPv6ExtHdrFragment(id=3) / IPv6ExtHdrFragment(id=4) / UDP()),
        "ipv4-source-route": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", options=b"\x83\x07\x04\x0a\x00\x00\x09\x00")
                                 / UDP() / b"lsrr"),
        "ipv4-udp-length-short": raw(ETH / V4 / UDP(len=9) / b"xyz"),
        "ipv4-tcp-bad-offset": raw(ETH / V4 / TCP(dataofs=15) / b"o"),
        "ipv4-openflow": raw(ETH / V4 / TCP(sport=40000, dport=6653) / b"\x04\x00\x00\x08\x00\x00\x00\x01"),
        "ipv4-l2tp-port": raw(ETH / V4 / UDP(sport=1701, dport=1701) / bytes(12)),
        "ipv6-udp-zero": raw(ETH / V6 / UDP(chksum=0) / b"z6"),
        "ipv6-vxlan-zero": raw(ETH / V6 / UDP(sport=40000, dport=4789, chksum=0) / VXLAN(vni=3) / ETH / IN4 / UDP()),
        "icmpv6-error-quote": raw(ETH / V6 / ICMPv6DestUnreach() / in6 / UDP() / b"q6"),
        "ipv4-gre-routing": raw(ETH / V4 / GRE(routing_present=1) / IN4 / UDP()),
        "ipv4-gre-ipv6-key-seq": raw(ETH / V4 / GRE(proto=0x86DD, key_present=1, seqnum_present=1) / in6 / UDP()),
        "ipv4-gre-erspan1": raw(ETH / V4 / GRE(proto=0x88BE) / ETH / IN4 / TCP()),
        "ipv4-gre-unknown": raw(ETH / V4 / GRE(proto=0x1234) / b"junk"),
        "ipv4-total-long": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", len=200) / UDP()),
        "ipv4-ihl-short": raw(ETH)[:14] + b"\x44" + raw(V4 / UDP())[1:],
        "ipv6-payload-zero": raw(ETH / IPv6(src="2001:db8::1", dst="2001:db8::2", plen=0) / UDP()),
        "ipv4-fragment-gre": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", flags=1, proto=47) / bytes(16)),
        "ipv6-in-ipv6-fragment": raw(ETH / V6 / in6 / IPv6ExtHdrFragment(id=5, m=1) / UDP() / bytes(8)),
        "deep-ipip": raw(ETH / V4 / IN4 / IN4 / IN4 / IN4 / IN4 / IN4 / IN4 / IN4 / UDP()),
    }


def _edge_stacks() -> dict[str, bytes]:
    """Ethernet frames at the edges real traffic reaches (issue 31's fuzzing, checksums by scapy): tunnels inside ICMP
    quotes, MPLS and PPPoE stacks, IPv6 extension-header chains and nesting at the depth limit, GRE variants, inner
    headers cut short, RFC 4884 extensions with odd lengths."""
    in6 = IPv6(src="2001:db8::3", dst="2001:db8::4")
    error = ICMP(type=3, code=4, length=0)
    vxlan = UDP(sport=40000, dport=4789) / VXLAN(vni=3) / ETH / IN4 / TCP(sport=80) / b"v"
    chain = (IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=0)
             / IPv6ExtHdrDestOpt(options=[HAO(hoa="2001:db8::99")]))
    ext = raw(ICMPExtension_Header() / ICMPExtension_Object(classnum=1, classtype=1) / MPLS(label=16, s=1, ttl=1))
    quoted = raw(IN4 / UDP(sport=53, dport=80) / b"quoted").ljust(128, b"\0")
    deep6 = V6
    for _ in range(7):
        deep6 = deep6 / IPv6ExtHdrDestOpt() / IPv6(src="2001:db8::5", dst="2001:db8::6")
    frames = {
        # tunnels an ICMP error quotes (whole and cut to the first 64 bytes of the datagram)
        "icmp-quote-vxlan": raw(ETH / V4 / ICMP(type=3, code=3) / IN4 / vxlan),
        "icmp-quote-vxlan-start": raw(ETH / V4 / ICMP(type=11) / raw(IN4 / vxlan)[:64]),
        "icmp-quote-gre-csum": raw(ETH / V4 / ICMP(type=3, code=1) / IN4 / GRE(chksum_present=1) / V4 / UDP() / b"g"),
        "icmp-quote-ipip": raw(ETH / V4 / ICMP(type=12) / IN4 / V4 / TCP() / b"i"),
        "icmp-quote-icmp-error": raw(ETH / V4 / ICMP(type=3, code=3) / IN4 / ICMP(type=11) / V4 / UDP() / b"n"),
        "icmpv6-quote-6in4": raw(ETH / V6 / ICMPv6DestUnreach() / in6 / IP(src="10.0.0.1", dst="10.1.0.2") / UDP()),
        "icmpv6-quote-ext-chain": raw(ETH / V6 / ICMPv6DestUnreach() / in6 / chain / UDP(sport=53) / b"c"),
        "icmp-quote-options": raw(ETH / V4 / ICMP(type=3, code=3) / IP(src="172.16.0.1", dst="172.16.0.2",
                                                                       options=b"\x94\x04\0\0") / TCP()),
        # MPLS and PPPoE stacks
        "vlan-pppoe-mpls-ipv6-tcp": raw(ETH / Dot1Q(vlan=9) / PPPoE(sessionid=3) / PPP(proto=0x281)
                                        / MPLS(label=30, s=0) / MPLS(label=31, s=1) / V6 / TCP() / b"pm6"),
        "mpls-pw-vlan-ipv6-udp": raw(ETH / MPLS(label=19, s=1) / bytes(4) / ETH / Dot1Q(vlan=4) / in6 / UDP() / b"w"),
        "mpls-eight-labels-ipv4": raw(ETH / MPLS(label=1, s=0) / MPLS(s=0) / MPLS(s=0) / MPLS(s=0) / MPLS(s=0)
                                      / MPLS(s=0) / MPLS(s=0) / MPLS(s=1) / V4 / UDP() / b"8"),
        "pppoe-length-past-frame": raw(ETH / PPPoE(sessionid=1, len=200) / PPP(proto=0x21) / V4 / UDP()),
        "pppoe-length-inside-ip": raw(ETH / PPPoE(sessionid=1, len=22) / PPP(proto=0x21) / V4 / UDP() / b"xyz"),
        "pppoe-lcp": raw(ETH / PPPoE(sessionid=1) / PPP(proto=0xC021) / bytes(8)),
        # IPv6 extension headers: a chain, IPv6 in IPv6 to the depth limit (8) with one at each level, one past it
        "ipv6-chain-tcp": raw(ETH / V6 / chain / TCP() / b"chain"),
        "ipv6-chain-ah-srh-udp": raw(ETH / V6 / IPv6ExtHdrHopByHop() / AH(nh=43, payloadlen=4, icv=bytes(12))
                                     / IPv6ExtHdrSegmentRouting(addresses=["2001:db8::b"], segleft=1) / UDP() / b"s"),
        "ipv6-nested-depth-8": raw(ETH / deep6 / UDP() / b"d8"),
        "ipv6-nested-depth-9": raw(ETH / deep6 / IPv6(src="2001:db8::7", dst="2001:db8::8") / UDP() / b"d9"),
        # GRE variants: everything present, version 1 (PPTP), ERSPAN III with a platform sub-header, over IPv6 with
        # its checksum, in UDP with its checksum and a key, a key but no payload
        "gre-csum-key-seq-ipv6": raw(ETH / V6 / GRE(chksum_present=1, key_present=1, seqnum_present=1, proto=0x86DD)
                                     / in6 / TCP() / b"gks"),
        "gre-pptp-v1": raw(ETH / V4 / (b"\x30\x81\x88\x0b" + bytes(8)) / b"ppp"),
        "gre-erspan3-platform": raw(ETH / V4 / GRE(proto=0x22EB, seqnum_present=1) / ERSPAN_III(o=1) / bytes(8)
                                    / ETH / IN4 / UDP() / b"o"),
        "gre-in-udp-csum-key": raw(ETH / V6 / UDP(sport=50000, dport=4754) / GRE(chksum_present=1, key_present=1)
                                   / IN4 / UDP() / b"gu"),
        "gre-key-no-payload": raw(ETH / V4 / GRE(key_present=1)),
        # inner headers cut short: a VXLAN's inner IPv4, a Geneve's options, a GTP extension, GRE's key word
        "vxlan-inner-ipv4-cut": raw(ETH / V4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / ETH / IN4 / TCP())[:64],
        "geneve-options-cut": raw(ETH / V4 / UDP(sport=50000, dport=6081) / (raw(GENEVE(proto=0x0800, optionlen=8))
                                                                            + bytes(4))),
        "gtp-extension-cut": raw(ETH / V4 / UDP(sport=2152, dport=2152)
                                 / raw(GTP_U_Header(teid=7, E=1, next_ex=0x85) / GTPPDUSessionContainer())[:13]),
        "gre-key-cut": raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", proto=47) / b"\x20\x00\x08\x00\x00\x01"),
        # RFC 4884: quote lengths of 1 and 33 words (the quote past 128 bytes by 4), beyond the message, an extension
        # header of another version, a guessed quote with bytes after the datagram, an ICMPv6 length of one unit
        "icmp-ext-length-1": raw(ETH / V4 / ICMP(type=11, length=1) / (quoted + ext)),
        "icmp-ext-length-33": raw(ETH / V4 / ICMP(type=3, code=3, length=33) / (quoted + bytes(4) + ext)),
        "icmp-ext-length-past-end": raw(ETH / V4 / ICMP(type=12, length=200) / (quoted + ext)),
        "icmp-ext-version-1": raw(ETH / V4 / ICMP(type=11, length=32) / (quoted + b"\x10" + ext[1:])),
        "icmp-ext-guessed-not-zero": raw(ETH / V4 / ICMP(type=11) / (quoted[:-1] + b"\x01" + ext)),
        "icmp-ext-object-odd": raw(ETH / V4 / ICMP(type=11, length=32) / (quoted + ext[:4] + b"\x00\x05\x01\x01\x07")),
        "icmpv6-ext-length-1": raw(ETH / V6 / ICMPv6DestUnreach(length=1) / (raw(in6 / UDP()).ljust(128, b"\0") + ext)),
        "icmp-error-with-extension-cut": raw(ETH / V4 / ICMP(type=11, length=32) / (quoted + ext))[:-6],
        "icmp-quote-short-ipv4": raw(ETH / V4 / error / raw(IN4 / TCP())[:12]),
    }
    return frames


def _fragments() -> dict[str, list[bytes]]:
    """Datagrams cut into fragments by scapy (IPv4 fragment(), IPv6 fragment6())."""
    v4 = [raw(ETH / f) for f in fragment(V4 / UDP(sport=7) / bytes(range(120)), fragsize=48)]
    v4_tcp = [raw(ETH / Dot1Q(vlan=3) / f) for f in fragment(V4 / TCP() / bytes(range(90)), fragsize=32)]
    v6 = [raw(ETH / f) for f in fragment6(V6 / IPv6ExtHdrFragment(id=9) / UDP() / bytes(range(160)), 120)]
    v6_icmp = [raw(ETH / f) for f in
               fragment6(V6 / IPv6ExtHdrFragment(id=10) / ICMPv6EchoRequest() / bytes(range(100)), 96)]
    return {"ipv4-udp-fragments": v4, "vlan-ipv4-tcp-fragments": v4_tcp, "ipv6-udp-fragments": v6,
            "ipv6-icmpv6-fragments": v6_icmp, "ipv4-fragments-reordered": v4[::-1],
            "ipv4-fragments-one-lost": v4[:1] + v4[2:]}


def _groups(frames: Iterable[bytes], size: int = MAX_FRAMES) -> list[list[bytes]]:
    """The frames in inputs of at most ``size`` (fuzz_common decodes at most MAX_FRAMES frames an input)."""
    frames = list(frames)
    return [frames[k : k + size] for k in range(0, len(frames), size)]


def _odd_fragments() -> dict[str, list[bytes]]:
    """Fragments the C reassembly judges or hands to the Python walker: a first fragment too short to hold the TCP
    checksum, overlaps and duplicates, a datagram past 65,535 bytes, ICMP and IPv6 TCP datagrams, and many datagrams
    open at once (the C's table of datagrams grown, its probes colliding)."""
    tiny = [raw(ETH / f) for f in fragment(V4 / TCP() / bytes(range(60)), fragsize=8)]
    v4 = [raw(ETH / f) for f in fragment(IP(src="10.0.0.1", dst="10.1.0.2", id=11) / UDP() / bytes(range(96)),
                                         fragsize=32)]
    overlap = raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", id=11, proto=17, flags=1, frag=2) / bytes(40))
    too_long = [raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", id=12, proto=17, flags=1) / UDP(len=8) / bytes(8)),
                raw(ETH / IP(src="10.0.0.1", dst="10.1.0.2", id=12, proto=17, frag=8190) / bytes(120))]
    icmp = [raw(ETH / f) for f in fragment(V4 / ICMP() / bytes(range(100)), fragsize=48)]
    v6_tcp = [raw(ETH / f) for f in fragment6(V6 / IPv6ExtHdrFragment(id=21) / TCP() / bytes(range(150)), 104)]
    many = [[raw(ETH / f) for f in fragment(IP(src="10.0.0.1", dst="10.1.0.2", id=100 + k) / UDP() / bytes(40),
                                             fragsize=24)] for k in range(8)]
    return {"ipv4-tcp-tiny-first-fragment": tiny, "ipv4-fragments-overlap": v4[:2] + [overlap] + v4[2:],
            "ipv4-fragments-duplicate": v4[:2] + v4[1:], "ipv4-fragment-too-long": too_long,
            "ipv4-icmp-fragments": icmp, "ipv6-tcp-fragments": v6_tcp,
            "many-datagrams-interleaved": [p for k in range(2) for pieces in many for p in pieces[k :: 2]][:MAX_FRAMES]}


def walker_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    seeds = {f"eth-{name}": walker_input(1, frame, auto=k % 3 == 0) for k, (name, frame) in enumerate(stacks.items())}
    seeds.update({f"eth-bad-{name}": walker_input(1, _broken(frame)) for name, frame in stacks.items()})
    seeds.update({f"edge-{name}": walker_input(1, frame, auto=k % 4 == 0) for k, (name, frame) in
                  enumerate(_edge_stacks().items())})
    for link, header in HEADERS.items():
        seeds[f"link{link}-ipv4-tcp"] = walker_input(link, header + raw(V4 / TCP() / b"data"))
        seeds[f"link{link}-ipv6-icmpv6"] = walker_input(link, _ipv6_header(link, header) + raw(V6 / ICMPv6EchoRequest()),
                                                        auto=True)
    seeds["link147-unwalked"] = walker_input(147, raw(V4 / TCP()))
    # the family word in network byte order, the BSDs' other AF_INET6 values, a family that is not IP
    seeds["link0-big-endian-ipv4-udp"] = walker_input(0, b"\0\0\0\x02" + raw(V4 / UDP() / b"be"))
    seeds["link0-family28-ipv6-udp"] = walker_input(0, b"\x1c\0\0\0" + raw(V6 / UDP() / b"28"))
    seeds["link108-family30-ipv6-tcp"] = walker_input(108, b"\0\0\0\x1e" + raw(V6 / TCP() / b"30"))
    seeds["link0-family7"] = walker_input(0, b"\x07\0\0\0" + raw(V4 / UDP()))
    seeds["link113-arp"] = walker_input(113, HEADERS[113][:14] + b"\x08\x06" + bytes(28))
    seeds["eth-offload-ipv4-tcp"] = walker_input(1, _offload(stacks["ipv4-tcp"]))
    seeds["eth-offload-length0-ipv4-tcp"] = walker_input(1, _offload(stacks["ipv4-tcp"], with_length=False))
    # an ICMP echo whose checksum computes to 0 and is stored as 0xffff (negative zero; RFC 1624)
    seeds["eth-negative-zero-icmp"] = walker_input(1, bytes(ETH)[:12] + b"\x08\x00" + bytes.fromhex(
        "450000220000000040017cd97f0000017f000001") + b"\x08\x00\xff\xff\xf7\xff" + bytes(8))
    for name, pieces in frags.items():
        if "lost" not in name and "reordered" not in name:
            seeds[f"{name}-first"] = walker_input(1, pieces[0])
            seeds[f"{name}-later"] = walker_input(1, pieces[-1])
    return seeds


def chunks_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    seeds = {name: encode([(1, p) for p in pieces]) for name, pieces in frags.items()}
    seeds.update({f"stacks-{k}": encode([(1, f) for f in group]) for k, group in enumerate(_groups(stacks.values()))})
    seeds.update({f"edge-{k}": encode([(1, f) for f in group]) for k, group in
                  enumerate(_groups(_edge_stacks().values()))})
    seeds.update({name: encode([(1, p) for p in pieces]) for name, pieces in _odd_fragments().items()})
    seeds["every-link"] = encode([(link, header + raw(V4 / UDP() / b"l")) for link, header in HEADERS.items()])
    seeds["mixed-fragments-and-bad"] = encode([(1, p) for p in frags["ipv4-udp-fragments"][:2]]
                                              + [(1, _broken(stacks["ipv4-tcp"]))]
                                              + [(1, p) for p in frags["ipv4-udp-fragments"][2:]])
    seeds["ipv6-fragments-interleaved"] = encode([(1, p) for pair in zip(frags["ipv6-udp-fragments"],
                                                                        frags["ipv6-icmpv6-fragments"]) for p in pair])
    return seeds


def fix_seeds() -> dict[str, bytes]:
    stacks = _stacks()
    broken = {name: _broken(frame) for name, frame in stacks.items()}
    seeds = {f"bad-{name}": encode([(1, frame)]) for name, frame in broken.items()}
    seeds["bad-ipv4-header"] = encode([(1, _broken(stacks["ipv4-tcp"], 24))])
    seeds["offload-ipv4-tcp"] = encode([(1, _offload(stacks["ipv4-tcp"]))])
    seeds["bad-inner-and-outer-vxlan"] = encode([(1, _broken(_broken(stacks["vxlan-tcp"]), -4))])
    seeds["bad-fragment-datagram"] = encode([(1, _broken(p, -1) if k == 1 else p)
                                             for k, p in enumerate(_fragments()["ipv4-udp-fragments"])])
    seeds.update({f"edge-bad-{name}": encode([(1, _broken(frame))]) for name, frame in _edge_stacks().items()})
    seeds["bad-sll-and-raw"] = encode([(113, HEADERS[113] + _broken(raw(V4 / UDP() / b"s"))),
                                       (101, _broken(raw(V6 / TCP() / b"r")))])
    return seeds


def _pcap(frames: list[bytes], endian: str = "<", nano: bool = False, link: int = 1, *, modified: bool = False,
          minor: int = 4, snap: int = 65535) -> bytes:
    """A pcap file (``modified``: magic a1b2cd34, 24-byte record headers; ``minor`` < 3: the lengths swapped)."""
    magic = 0xA1B2CD34 if modified else 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(endian + "IHHiIII", magic, 2, minor, 0, 0, snap, link)]
    for k, f in enumerate(frames):
        lengths = (len(f), len(f) + k % 2)
        out.append(struct.pack(endian + "IIII", k, 0, *(lengths[::-1] if minor < 3 else lengths))
                   + (struct.pack(endian + "iHBB", 1, 0x0800, 0, 0) if modified else b"") + f)
    return b"".join(out)


def records_seeds() -> dict[str, bytes]:
    frames = list(_stacks().values())[:6]
    ng = capture_bytes(decode(encode([(1, f) for f in frames[:3]] + [(113, HEADERS[113] + raw(V4 / UDP()))])))
    return {
        "pcap-le-us": _pcap(frames), "pcap-be-us": _pcap(frames, ">"), "pcap-le-ns": _pcap(frames, nano=True),
        "pcap-be-ns-raw": _pcap([raw(V4 / TCP())], ">", True, 101),
        "pcap-truncated-record": _pcap(frames)[:-5],
        "pcap-huge-caplen": _pcap(frames[:1]) + struct.pack("<IIII", 0, 0, 0xFFFFFFFF, 60) + bytes(8),
        "pcap-header-only": _pcap([]),
        "pcap-modified-be": _pcap(frames, ">", modified=True, snap=40),
        "pcap-v2.2-swapped": _pcap(frames, minor=2),
        "pcap-fcs-4": _pcap(frames, link=1 | 2 << 28 | 0x04000000),
        "pcapng-two-links": ng,
        "pcapng-cut-block": ng[:-7],
        "pcapng-bad-trailer": ng[:-4] + b"\0\0\0\0",
        "pcapng-two-sections": ng + ng,
        **_odd_captures(frames),
    }


def _block(kind: int, body: bytes, endian: str = "<", length: int | None = None) -> bytes:
    """A pcapng block, its body padded to 4 bytes (``length``: the total length it announces, else its own)."""
    body += bytes(-len(body) % 4)
    total = 12 + len(body) if length is None else length
    return struct.pack(endian + "II", kind, total) + body + struct.pack(endian + "I", total)


def _odd_captures(frames: list[bytes]) -> dict[str, bytes]:
    """pcapng files with odd block layouts and modified pcap (a1b2cd34) files: blocks libpcap and Wireshark read and
    blocks they refuse (docs: draft-ietf-opsawg-pcapng; libpcap's sf-pcap.c for the modified format)."""
    f = frames[0]

    def shb(endian: str = "<", length: int = -1) -> bytes:
        return _block(0x0A0D0D0A, struct.pack(endian + "IHHq", 0x1A2B3C4D, 1, 0, length), endian)

    def idb(link: int = 1, endian: str = "<", snap: int = 0, options: bytes = b"") -> bytes:
        return _block(1, struct.pack(endian + "HHI", link, 0, snap) + options, endian)

    def epb(data: bytes, iface: int = 0, endian: str = "<", caplen: int | None = None, options: bytes = b"") -> bytes:
        size = len(data) if caplen is None else caplen
        body = struct.pack(endian + "IIIII", iface, 0, 1, size, len(data)) + data + bytes(-len(data) % 4)
        return _block(6, body + options, endian)

    tsresol = struct.pack("<HH", 9, 1) + b"\x8a\0\0\0" + struct.pack("<HH", 0, 0)  # 2^-10 s
    epb_options = (struct.pack("<HH", 2, 4) + struct.pack("<I", 1) + struct.pack("<HH", 1, 3) + b"odd\0"
                   + struct.pack("<HH", 0, 0))
    section = idb() + epb(f)
    return {
        "pcapng-spb-without-idb": shb() + _block(3, struct.pack("<I", len(f)) + f),
        "pcapng-idb-after-epb": shb() + idb() + epb(f) + idb(101) + epb(f[14:], 1) + epb(f, 0),
        "pcapng-epb-options-odd-length": shb() + idb(options=tsresol) + epb(f, options=epb_options),
        "pcapng-block-length-not-4": shb() + idb() + _block(6, struct.pack("<IIIII", 0, 0, 1, 2, 2) + b"ab", length=34),
        "pcapng-block-length-short": shb() + idb() + _block(6, struct.pack("<IIIII", 0, 0, 1, 4, 4) + b"abcd", length=16),
        "pcapng-section-length-given": shb(length=len(section)) + section + shb(">") + idb(1, ">") + epb(f, 0, ">"),
        "pcapng-nrb-dsb-custom": shb() + idb() + _block(4, struct.pack("<HH", 0, 0)) + _block(10, bytes(8))
        + _block(0x40000BAD, struct.pack("<I", 32473) + b"custom") + epb(f),
        "pcapng-idb-snaplen-cut": shb() + idb(snap=40) + epb(f),
        "pcapng-epb-caplen-past-block": shb() + idb() + epb(f, caplen=len(f) + 64),
        "pcapng-epb-caplen-4g": shb() + idb() + epb(f, caplen=0xFFFFFFFF),
        "pcapng-big-then-little": shb(">") + idb(1, ">") + epb(f, 0, ">") + shb() + idb() + epb(f),
        "pcapng-section-version-2": _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 2, 0, -1)) + section,
        "pcap-modified-le-eth": _pcap(frames, modified=True, snap=40),
        "pcap-modified-le-cut-header": _pcap(frames[:2], modified=True)[:-len(frames[1]) - 10],
        "pcap-modified-header-only": _pcap([], ">", modified=True),
        "pcap-modified-raw-big-snap": _pcap([raw(V4 / UDP())], modified=True, link=101, snap=0),
        "pcap-caplen-over-snap": _pcap(frames, snap=30),
        "pcap-v543": _pcap(frames[:2])[:4] + struct.pack("<HH", 543, 0) + _pcap(frames[:2])[8:],
    }


def explain_seeds() -> dict[str, bytes]:
    """Every stack right, with a byte changed, with its last checksum field's bytes swapped, with a TTL of 1 and
    with 6 bytes of padding (not zero) after it."""
    seeds = {}
    for name, frame in _stacks().items():
        swapped = bytearray(frame)
        swapped[-2:] = swapped[-1:-3:-1]
        ttl = bytearray(frame)
        if frame[12:14] == b"\x08\x00":
            ttl[22] = 1
        for kind, data in (("right", frame), ("bad", _broken(frame)), ("swapped-tail", bytes(swapped)),
                           ("ttl1", bytes(ttl)), ("padded", frame + b"\x01\x02\0\0\xff\x07")):
            seeds[f"eth-{kind}-{name}"] = walker_input(1, data)
    for name, frame in _edge_stacks().items():
        seeds[f"edge-right-{name}"] = walker_input(1, frame)
        seeds[f"edge-bad-{name}"] = walker_input(1, _broken(frame))
    seeds["link0-ipv4-udp-odd"] = walker_input(0, b"\x02\0\0\0" + _broken(raw(V4 / UDP() / b"odd")))
    return seeds


def sums_seeds() -> dict[str, bytes]:
    def head(offset: int, width: int, big: bool, align: int, rows: int, seed: int, block: int) -> bytes:
        first = offset | (width << 3) | (32 if big else 0)
        return bytes([first, align | rows << 3]) + seed.to_bytes(4, "little") + bytes([block]) + \
            bytes([0, 40, 30, 200, 128, 128, 250, 10, 0])
    return {
        "empty": b"",
        "odd-3-offset1-w16": head(1, 1, False, 1, 2, 0, 0) + b"\x01\x02\x03",
        "all-ones-65-offset7-w64-big": head(7, 3, True, 7, 4, 0xFFFFFFFF, 3) + b"\xff" * 65,
        "ramp-257-offset3-w32": head(3, 2, False, 3, 3, 0x12345678, 1) + bytes(range(256)) + b"\x80",
        "zeros-24-w8-seed-ffff": head(0, 0, True, 0, 1, 0xFFFF, 0) + bytes(24),
        "ipv4-header-w16": head(2, 1, False, 2, 4, 0, 9) + raw(V4)[:20],
        # the loop helpers: the 40 bytes cut at 20 (bpf_csum_diff's 4-byte multiples), l3/l4_csum_replace at offset
        # 36 with size 4 and BPF_F_PSEUDO_HDR, then size 2 and BPF_F_MARK_MANGLED_0
        "helpers-ipv4-tcp-size4-pseudo": head(0, 1, False, 0, 0, 0x0A000001, 0)[:7]
        + bytes([128, 0x34, 0x12, 0xC0, 0xA8, 219, 0x14, 0, 0]) + raw(V4 / TCP())[:40],
        "helpers-ipv4-tcp-size2-mangled0": head(0, 1, False, 0, 0, 0xFFFF, 0)[:7]
        + bytes([128, 0, 0, 0, 0, 219, 0x22, 0, 0]) + raw(V4 / TCP())[:40],
        # every csum_partial shape C computes (byte 15 picks it), at an odd address and an odd length
        **{f"shape{k}-ramp-101-align{k % 8}": head(k % 8, 1, False, k % 8, 0, 0x9ABCDEF0, 0)[:15] + bytes([k])
           + bytes(range(101)) for k in range(1, 10)},
    }


#: Rule-picking bytes of fuzz_rewrite (one index per rule kind: address map, side map, port map, TTL, class, flow
#: label, link-layer rules, Crypto-PAn and level; see its lists).
RULES = {"nat4": bytes([1, 0, 1, 1, 0, 0, 0, 0]), "nat6-outer": bytes([3, 0, 0, 0, 0, 0, 0, 1]),
         "src-dst-ports-inner": bytes([0, 1, 2, 0, 1, 2, 0, 2]), "everything": bytes([4, 2, 5, 2, 3, 3, 5, 3]),
         "anonymize-retag": bytes([0, 0, 3, 5, 5, 1, 4, 4]), "tclass-flowlabel-dst": bytes([5, 4, 4, 6, 4, 1, 2, 0])}


def rewrite_seeds() -> dict[str, bytes]:
    stacks, frags = _stacks(), _fragments()
    groups = [encode([(1, f) for f in group]) for group in _groups(stacks.values())]
    seeds = {f"stacks-{k}-{name}": rewrite_input(rules, group) for name, rules in RULES.items()
             for k, group in enumerate(groups)}
    seeds["every-link-nat4"] = rewrite_input(RULES["nat4"], encode([(link, header + raw(V4 / UDP() / b"l"))
                                                                    for link, header in HEADERS.items()]))
    seeds["fragments-everything"] = rewrite_input(RULES["everything"], encode(
        [(1, p) for pieces in frags.values() for p in pieces]))
    seeds["bad-and-cut-nat6"] = rewrite_input(RULES["nat6-outer"], encode(
        [(1, _broken(stacks["ipv6-udp"]))]) + bytes([0x40]) + (30).to_bytes(2, "big") + stacks["vxlan-tcp"][:30])
    for name, rules in (("all", RULES["everything"]), ("inner", RULES["src-dst-ports-inner"])):
        seeds[f"tunnel-errors-{name}"] = rewrite_input(rules, encode([(1, f) for f in _tunnel_errors()]))
    seeds["icmp-extensions-all"] = rewrite_input(RULES["everything"], encode([(1, f) for f in _icmp_extensions()]))
    for k, group in enumerate(_groups(_edge_stacks().values())):
        for name in ("everything", "nat6-outer", "src-dst-ports-inner"):
            seeds[f"edge-{k}-{name}"] = rewrite_input(RULES[name], encode([(1, f) for f in group]))
    seeds["declined-everything"] = rewrite_input(RULES["everything"], encode([(1, f) for f in _rewrite_declined()]))
    return seeds


def _icmp_extensions() -> list[bytes]:
    """ICMP and ICMPv6 errors with an RFC 4884 extension structure (an MPLS label stack object, RFC 4950): the quote
    zero-padded to the length the message gives, an old sender's (no length, 128 bytes), the quote's start only."""
    ext = raw(ICMPExtension_Header() / ICMPExtension_Object(classnum=1, classtype=1) / MPLS(label=16, s=1, ttl=1))
    quoted = raw(IN4 / UDP(sport=53, dport=80) / b"quoted")
    return [
        raw(ETH / V4 / ICMP(type=11, length=32) / (quoted.ljust(128, b"\0") + ext)),
        raw(ETH / V4 / ICMP(type=3, code=3) / (quoted.ljust(128, b"\0") + ext)),
        raw(ETH / V4 / ICMP(type=3, code=4, length=32) / (raw(IN4 / TCP(sport=80) / bytes(120))[:128] + ext)),
        raw(ETH / V6 / ICMPv6DestUnreach(length=16) / (raw(V6 / UDP(sport=53) / b"q6").ljust(128, b"\0") + ext)),
    ]


def _rewrite_declined() -> list[bytes]:
    """Frames the C rewriter hands to the Python engine for a stated reason, or edits at its limits: a transmit-offload
    TCP checksum, a Neighbor Solicitation, the first fragment of an ICMP datagram, an IPv4 header at an odd distance
    from the VXLAN UDP checksum covering it (a one-byte PPP protocol inside), tunnels nested past the enclosing
    checksums kept (VXLAN in VXLAN in VXLAN in GRE with its checksum)."""
    from scapy.layers.inet6 import ICMPv6ND_NS

    odd_inner = ETH / PPPoE(sessionid=1) / b"\x21" / IN4 / UDP() / b"odd"
    nested = IN4 / UDP(sport=40003, dport=4789) / VXLAN(vni=4) / ETH / IN4 / UDP() / b"deep"
    for vni in (5, 6):
        nested = IN4 / UDP(sport=40000 + vni, dport=4789) / VXLAN(vni=vni) / ETH / nested
    return [
        _offload(raw(ETH / V4 / TCP(sport=1000, dport=80) / b"payload")),
        raw(ETH / V6 / ICMPv6ND_NS(tgt="2001:db8::2")),
        raw(ETH / fragment(V4 / ICMP() / bytes(range(100)), fragsize=48)[0]),
        raw(ETH / V4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / odd_inner),
        raw(ETH / V4 / GRE(chksum_present=1) / nested),
    ]


def _tunnel_errors() -> list[bytes]:
    """Frames whose every checksum a change reaches is nested: ICMP errors inside tunnels (GRE with its checksum,
    Geneve, GTP-U, VXLAN in VXLAN), GRE with its checksum inside UDP (the UDP checksum covering GRE's)."""
    error = ICMP(type=3, code=3) / V4 / UDP(sport=53, dport=80) / b"quoted"
    return [
        raw(ETH / V4 / GRE(chksum_present=1) / IN4 / error),
        raw(ETH / V6 / UDP(sport=50000, dport=6081) / GENEVE(proto=0x0800) / IN4 / error),
        raw(ETH / V4 / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=7) / IN4 / error),
        raw(ETH / V4 / UDP(sport=50000, dport=4754) / GRE(chksum_present=1) / IN4 / TCP(sport=80) / b"gu"),
        raw(ETH / V4 / UDP(sport=40000, dport=4789) / VXLAN(vni=3) / ETH / IN4 / UDP(sport=40001, dport=4789)
            / VXLAN(vni=4) / ETH / V6 / ICMPv6DestUnreach() / V6 / UDP(sport=53) / b"q6"),
    ]


def rowtext_seeds() -> dict[str, bytes]:
    """Rows laid out as csum/capture/rows.py's ROW, written by hand: every status and reason, IPv4, IPv6 and no
    addresses, a time and none, a field and none, stored and computed values and none."""
    import numpy as np

    from csum.capture.pcap import NO_TIME
    from csum.capture.rows import ROW

    v4, v6 = bytes([192, 0, 2, 1]).ljust(16, b"\0"), bytes.fromhex("20010db8000000000000000000000001")
    rows = [(1, 1_700_000_000_123_456_789, 0, 0, 14, 24, 0x1C46, 0x1C46, 1, 2, 0, 0, 0, 1, 0, 0, 4, v4, v4),
            (2, NO_TIME, 0, 1, 14, 60, 0, 0xFFFF, 3, 4, 0, 1, 0, 0, 1, 1, 6, v6, v6),
            (3, 0, 0, 2, 0, -1, -1, -1, 5, 6, 0, 2, 0, -1, 2, 2, 0, bytes(16), bytes(16))]
    every = [(k + 1, k, 0, k, 14, 24, k, 0xFFFF - k, k, k, 0, k % 3, 0, k % 3 - 1, k, k, 4 if k % 2 else 6, v4, v6)
             for k in range(24)]

    def laid_out(values: list[tuple]) -> bytes:
        table = np.zeros(len(values), dtype=ROW)  # zeros: the padding between fields too
        table[:] = values
        return table.tobytes()

    fields = bytes([5, 0, 12, 1, 3, 9])  # file, reason, frame, src, stored (--fields), then the file name
    return {"three-rows": laid_out(rows), "every-status-and-reason": laid_out(every),
            "file-and-fields": laid_out(rows) + fields + 'dir/a "b",c\n.pcap'.encode()}


def command_seeds() -> dict[str, bytes]:
    """Capture files for whole commands (fuzz_command's first byte: command, pcap or pcapng, rules, chunk size): every
    command on each group of stacks, on the same with wrong checksums, and on fragments in small chunks."""
    stacks, frags = _stacks(), _fragments()
    groups = _groups(stacks.values())
    seeds = {}
    for k in range(len(COMMANDS)):
        for g, group in enumerate(groups):
            first = k | ((k + g) & 1) << 3 | (g & 3) << 4 | ((k + g) & 3) << 6
            seeds[f"command{k}-stacks-{g}"] = command_input(first, encode([(1, f) for f in group]))
        bad = [_broken(f) for f in list(stacks.values())[k::len(COMMANDS)]]
        seeds[f"command{k}-bad"] = command_input(k | (k & 1) << 3 | (k & 3) << 4, encode([(1, f) for f in bad]))
        seeds[f"command{k}-fragments-chunk64"] = command_input(
            k | 1 << 6, encode([(1, p) for pair in zip(frags["ipv6-udp-fragments"], frags["ipv4-udp-fragments"])
                                for p in pair]))
    seeds["every-link-verify-jsonl"] = command_input(0, encode([(link, header + raw(V4 / UDP() / b"l"))
                                                                for link, header in HEADERS.items()]))
    seeds["every-link-pcap-fix"] = command_input(4 | 8, encode([(113, HEADERS[113] + _broken(raw(V4 / UDP() / b"s")))]))
    return seeds


SEEDS = {"walker": walker_seeds, "chunks": chunks_seeds, "fix": fix_seeds, "records": records_seeds, "sums": sums_seeds,
         "rewrite": rewrite_seeds, "rowtext": rowtext_seeds, "command": command_seeds, "explain": explain_seeds}


def main() -> None:
    for target, make in SEEDS.items():
        where = CORPUS / target
        where.mkdir(parents=True, exist_ok=True)
        for old in where.iterdir():
            if not merged(old):  # the inputs fuzz/run.py --merge kept stay
                old.unlink()
        for name, data in make().items():
            (where / name).write_bytes(data)


if __name__ == "__main__":
    main()

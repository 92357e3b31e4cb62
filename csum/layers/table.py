"""The protocol facts: one table entry per link type, EtherType and IP protocol csum walks, and the header layouts
the two walkers share.

The Python walker (:mod:`csum.layers.walk`) reads these entries and follows the layer graph (:data:`DISSECTORS`),
the checker (:mod:`csum.layers.check`) applies the zero rules, and the C walker (csum/engine/_cwalk.c) gets every fact it uses from here:
tools/gen_cwalk_table.py writes them into csum/engine/_cwalk_table.h, and tests/layers/test_cwalk_table.py
fails on any difference. A layer only the Python walker reads (PPPoE, MPLS, radiotap ...) keeps its small header
layout in its handler.

Sources: the link types are tcpdump.org's LINKTYPE_ list (pcap-linktype(7)); EtherTypes and IP
protocol numbers are IANA's registries; each :class:`Protocol` names the RFC that defines its
checksum. Linux counterparts (where Linux checks the field on receive) are cited by file.
"""

from __future__ import annotations

from enum import Enum
from types import SimpleNamespace
from typing import NamedTuple

# --- what a checksum covers -------------------------------------------------------------------


class Cover(Enum):
    """What bytes a checksum covers, from its header start."""

    HEADER = "header"          # the header only (IPv4: IHL * 4)
    PAYLOAD = "payload"        # the whole IP payload (TCP, ICMP, IGMP, EIGRP ...)
    LENGTH_FIELD = "length"    # a 16-bit length field of the header itself (UDP at 4, OSPF at 2)
    COVERAGE = "coverage"      # a coverage field (UDP-Lite RFC 3828, DCCP CsCov RFC 4340)
    PREFIX = "prefix"          # a fixed number of bytes (PIM Register: the first 8, RFC 7761 4.9)
    REST = "rest"              # from the field's structure start to the end of its message (RFC 4884)


class Pseudo(Enum):
    """Whether an IP pseudo-header enters the sum (RFC 9293 3.1, RFC 768, RFC 8200 8.1)."""

    NEVER = "never"
    ALWAYS = "always"
    IPV6 = "ipv6"              # over IPv6 only (PIM, RFC 7761 4.9)


class Zero(Enum):
    """What a stored or computed 0x0000 means."""

    VALUE = "value"            # an ordinary value; 0xffff where 0 is computed is "negative zero" (RFC 1624)
    UDP = "udp"                # computed 0 sent as 0xffff; stored 0 = none over IPv4 (RFC 768), bad over IPv6
    NONZERO = "nonzero"        # computed 0 sent as 0xffff; stored 0 is wrong (UDP-Lite RFC 3828 3.1)
    OPTIONAL = "optional"      # computed 0 sent as 0xffff; stored 0 = none over IPv4 and IPv6 (PGM, RFC 3208 8)


#: The members as plain attributes, for the per-packet code (see csum.layers.reasons.R).
COVER = SimpleNamespace(**Cover.__members__)
PSEUDO = SimpleNamespace(**Pseudo.__members__)
ZERO = SimpleNamespace(**Zero.__members__)


class Protocol(NamedTuple):
    """One protocol that carries the Internet checksum.

    ``field``: the checksum's offset from the header start; ``minimum``: the bytes that must be
    there to read the header; ``length_at``: offset of the 16-bit length (Cover.LENGTH_FIELD) or of
    the coverage field (Cover.COVERAGE); ``prefix``: bytes covered with Cover.PREFIX; ``skip``:
    (start, end) offsets left out of the sum (OSPFv2 authentication, RFC 2328 D.4.3);
    ``offload``: whether transmit checksum offload (CHECKSUM_PARTIAL) leaves the pseudo-header sum
    in the field (TCP, UDP: include/linux/skbuff.h); ``odd_tail``: the last byte of an odd-length
    cover enters as the low byte of a word, sign-extended and less one when its top bit is set
    (Cisco's CDP; Wireshark's packet-cdp.c models the same), not as RFC 1071's high byte.
    """

    name: str
    field: int
    minimum: int
    cover: Cover
    pseudo: Pseudo = Pseudo.NEVER
    zero: Zero = Zero.VALUE
    length_at: int = 0
    prefix: int = 0
    skip: tuple[int, int] | None = None
    offload: bool = False
    odd_tail: bool = False
    rfc: str = ""


# IP protocol numbers (IANA)
ICMP, IGMP, IPIP, TCP, UDP, DCCP, IPV6_IN, GRE, ESP, AH = 1, 2, 4, 6, 17, 33, 41, 47, 50, 51
ICMPV6, EIGRP, OSPF, PIM, VRRP, PGM, UDPLITE, ETHERNET_IN = 58, 88, 89, 103, 112, 113, 136, 143

IPV4_HEADER = Protocol("ipv4", 10, 20, Cover.HEADER, rfc="RFC 791")
TCP_ENTRY = Protocol("tcp", 16, 20, Cover.PAYLOAD, Pseudo.ALWAYS, offload=True, rfc="RFC 9293 3.1")
UDP_ENTRY = Protocol("udp", 6, 8, Cover.LENGTH_FIELD, Pseudo.ALWAYS, Zero.UDP, length_at=4, offload=True,
                     rfc="RFC 768, RFC 8200 8.1")
UDPLITE_ENTRY = Protocol("udplite", 6, 8, Cover.COVERAGE, Pseudo.ALWAYS, Zero.NONZERO, length_at=4, offload=True,
                         rfc="RFC 3828")
DCCP_ENTRY = Protocol("dccp", 6, 12, Cover.COVERAGE, Pseudo.ALWAYS, length_at=5, rfc="RFC 4340 9")
ICMP_ENTRY = Protocol("icmp", 2, 4, Cover.PAYLOAD, rfc="RFC 792")
ICMPV6_ENTRY = Protocol("icmpv6", 2, 4, Cover.PAYLOAD, Pseudo.ALWAYS, rfc="RFC 4443 2.3")
IGMP_ENTRY = Protocol("igmp", 2, 4, Cover.PAYLOAD, rfc="RFC 1112, RFC 2236, RFC 9776")
PIM_ENTRY = Protocol("pim", 2, 4, Cover.PAYLOAD, Pseudo.IPV6, rfc="RFC 7761 4.9")
PIM_REGISTER = Protocol("pim", 2, 8, Cover.PREFIX, Pseudo.IPV6, prefix=8, rfc="RFC 7761 4.9 (Register)")
VRRP2_ENTRY = Protocol("vrrp", 6, 8, Cover.PAYLOAD, rfc="RFC 3768 5.3.8")
VRRP3_ENTRY = Protocol("vrrp", 6, 8, Cover.PAYLOAD, Pseudo.ALWAYS, rfc="RFC 5798 5.2.8")
CARP_ENTRY = Protocol("carp", 6, 36, Cover.PAYLOAD, rfc="OpenBSD carp(4)")
EIGRP_ENTRY = Protocol("eigrp", 2, 20, Cover.PAYLOAD, rfc="RFC 7868 6.3")
OSPF2_ENTRY = Protocol("ospf", 12, 24, Cover.LENGTH_FIELD, length_at=2, skip=(16, 24), rfc="RFC 2328 D.4")
OSPF3_ENTRY = Protocol("ospf", 12, 16, Cover.LENGTH_FIELD, Pseudo.ALWAYS, length_at=2, rfc="RFC 5340 A.3.1")
GRE_ENTRY = Protocol("gre", 4, 8, Cover.PAYLOAD, rfc="RFC 2784 2.5")
ICMP_EXT_ENTRY = Protocol("icmp-ext", 2, 4, Cover.REST, rfc="RFC 4884 7")
#: PGM: no pseudo-header (RFC 3208 8, for NAT); 0 = not computed, but ODATA/RDATA (types 4, 5) always carry one
#: (as Wireshark's packet-pgm.c judges them).
PGM_ENTRY = Protocol("pgm", 6, 16, Cover.PAYLOAD, zero=Zero.OPTIONAL, rfc="RFC 3208 8")
PGM_DATA_ENTRY = Protocol("pgm", 6, 16, Cover.PAYLOAD, zero=Zero.NONZERO, rfc="RFC 3208 8 (ODATA, RDATA)")
PGM_DATA_TYPES = frozenset({4, 5})
#: Cisco Discovery Protocol over LLC/SNAP (OUI 00000c, PID 0x2000): version, TTL, checksum over the whole PDU.
CDP_ENTRY = Protocol("cdp", 2, 4, Cover.PAYLOAD, odd_tail=True, rfc="Cisco CDP (no RFC)")
CISCO_OUI, CDP_PID = b"\x00\x00\x0c", 0x2000
#: ESP has no checksum of its own and hides what it carries: reported as not verifiable.
ESP_ENTRY = Protocol("esp", 0, 8, Cover.PAYLOAD, rfc="RFC 4303")
#: MACsec with the E or C bit (encrypted or changed text): reported as not verifiable, like ESP.
MACSEC_ENTRY = Protocol("macsec", 0, 6, Cover.PAYLOAD, rfc="IEEE 802.1AE")

#: IP protocol -> entry, for the protocols whose entry does not depend on the message's contents
#: (the walker picks PIM Register, VRRP v2/v3/CARP and OSPFv2/v3 by version and type).
TRANSPORTS: dict[int, Protocol] = {
    TCP: TCP_ENTRY, UDP: UDP_ENTRY, UDPLITE: UDPLITE_ENTRY, DCCP: DCCP_ENTRY, ICMP: ICMP_ENTRY,
    ICMPV6: ICMPV6_ENTRY, IGMP: IGMP_ENTRY, PIM: PIM_ENTRY, VRRP: VRRP2_ENTRY, EIGRP: EIGRP_ENTRY,
    OSPF: OSPF2_ENTRY, PGM: PGM_ENTRY,
}
#: Protocols whose header starts with 16-bit source and destination ports.
PORTED = frozenset({TCP, UDP, UDPLITE, DCCP})
#: Protocols that exist on one IP version only (the other version's number means something else or nothing).
IPV4_ONLY = frozenset({ICMP, IGMP})
IPV6_ONLY = frozenset({ICMPV6})

#: ICMP error types whose body quotes the offending datagram (RFC 792, RFC 4443 2.1), and for the RFC 4884
#: ones, the byte holding the quote's length and its unit: type -> (length offset, unit) or None.
ICMP_ERRORS: dict[int, tuple[int, int] | None] = {3: (5, 4), 4: None, 5: None, 11: (5, 4), 12: (5, 4)}
ICMPV6_ERRORS: dict[int, tuple[int, int] | None] = {1: (4, 8), 2: None, 3: (4, 8), 4: None}
#: The ICMP quote choice, by IP protocol: the error types above (the layer graph's tables "icmp.type" and
#: "icmpv6.type", which both walkers follow; csum/rewrite reads it here).
ICMP_QUOTES = {ICMP: ICMP_ERRORS, ICMPV6: ICMPV6_ERRORS}
#: Where an ICMP/ICMPv6 error's quote starts: after type, code, checksum and 4 more bytes (RFC 792, RFC 4443 3).
ICMP_QUOTE = 8
#: ICMP/ICMPv6 queries whose identifier (bytes 4..5) Linux NAT rewrites like a port (the types of invmap[] in
#: net/netfilter/nf_conntrack_proto_icmp.c / nf_conntrack_proto_icmpv6.c): echo, timestamp, info, mask; echo, NI.
ICMP_QUERIES = {ICMP: frozenset({0, 8, 13, 14, 15, 16, 17, 18}), ICMPV6: frozenset({128, 129, 139, 140})}
#: RFC 4884 section 5.1: with an extension the quoted datagram field is at least 128 bytes.
ICMP_EXT_MIN_QUOTE = 128
#: RFC 4884 section 7: the extension structure starts with a 4-byte header whose version (its first 4 bits) is 2.
ICMP_EXT_HLEN, ICMP_EXT_VERSION = 4, 2

# --- IP: options and extension headers ---------------------------------------------------------

#: IPv4 loose and strict source route options (RFC 791).
IPV4_SOURCE_ROUTES = (0x83, 0x89)
HOP_BY_HOP, ROUTING, FRAGMENT, DEST_OPTS, NO_NEXT = 0, 43, 44, 60, 59
#: IPv6 extension headers walked to reach the upper layer: RFC 8200 4 and RFC 7045 (Mobility, HIP, Shim6).
IPV6_EXT = frozenset({HOP_BY_HOP, ROUTING, FRAGMENT, AH, DEST_OPTS, 135, 139, 140})
JUMBO_OPTION, HOME_ADDRESS_OPTION = 0xC2, 0xC9

# --- header layouts: offsets from the header's start, named as the kernel's structs name their members ----------


class EthHdr(NamedTuple):
    """include/uapi/linux/if_ether.h ``struct ethhdr`` and a ``struct vlan_hdr`` tag (IEEE 802.1Q)."""

    size: int = 14
    proto: int = 12
    vlan_size: int = 4


class IPHdr(NamedTuple):
    """include/uapi/linux/ip.h ``struct iphdr`` (RFC 791 3.1): the fixed 20 bytes; IHL counts 32-bit words."""

    size: int = 20
    tot_len: int = 2
    id: int = 4
    frag_off: int = 6
    ttl: int = 8
    protocol: int = 9
    check: int = 10
    saddr: int = 12
    daddr: int = 16
    addr_size: int = 4


class IPv6Hdr(NamedTuple):
    """include/uapi/linux/ipv6.h ``struct ipv6hdr`` (RFC 8200 3)."""

    size: int = 40
    payload_len: int = 4
    nexthdr: int = 6
    hop_limit: int = 7
    saddr: int = 8
    daddr: int = 24
    addr_size: int = 16


class FragHdr(NamedTuple):
    """include/net/ipv6.h ``struct frag_hdr`` (RFC 8200 4.5): 8 bytes, the offset word at 2, the identification
    at 4."""

    size: int = 8
    frag_off: int = 2
    identification: int = 4


ETHHDR, IPHDR, IPV6HDR, FRAG_HDR = EthHdr(), IPHdr(), IPv6Hdr(), FragHdr()
#: include/net/ip.h: the flags and offset of ``frag_off`` (the offset in 8-byte units, FRAG_UNIT).
IP_DF, IP_MF, IP_OFFSET, FRAG_UNIT = 0x4000, 0x2000, 0x1FFF, 8
#: include/net/ipv6.h: the fragment header's M flag and offset (in bytes: already a multiple of 8).
IP6_MF, IP6_OFFSET = 0x0001, 0xFFF8
#: IPv4 options (RFC 791): end of list, no-operation; IPv6 option Pad1 (RFC 8200 4.2).
IPOPT_END, IPOPT_NOOP, IPV6_TLV_PAD1 = 0, 1, 0
#: An IPv6 extension header's length byte (at 1) counts 8-byte units after the first 8 (RFC 8200 4.3); a routing
#: header's Segments Left is at 3 (RFC 8200 4.4), its type at 2.
IPV6_EXT_UNIT, IPV6_RT_SEGMENTS_LEFT, IPV6_RT_TYPE = 8, 3, 2
#: Routing header types whose last address is the final destination (0, RFC 2460; 2, RFC 6275 6.4) and the segment
#: routing header (4, RFC 8754 2: Segment List[0], at 8, is the final segment); either must hold an address (24 bytes).
ROUTING_LAST_ADDRESS, ROUTING_SRH, SRH_SEGMENT0_AT, ROUTING_ADDRESSED = frozenset({0, 2}), 4, 8, 24
#: RFC 4302 2.2: AH's Payload Len (at 1) is its length in 4-byte words, minus 2; its path part.
AH_UNIT, AH_BIAS, AH_NAME = 4, 2, "ah"
#: ``struct tcphdr``: data offset in the high nibble of byte 12, in 32-bit words (RFC 9293 3.1).
TCP_DOFF_AT, TCP_DOFF_UNIT = 12, 4
#: ``struct gre_base_hdr`` (RFC 2784, RFC 2890): flags in byte 0, version in the low bits of byte 1, protocol at 2;
#: each of checksum (+reserved), key and sequence number adds a 4-byte word after the base 4 bytes.
GRE_CSUM, GRE_ROUTING, GRE_KEY, GRE_SEQ, GRE_VERSION = 0x80, 0x40, 0x20, 0x10, 0x07
GRE_HLEN, GRE_WORD = 4, 4
#: ERSPAN (draft-foschiano-erspan): type II's header is 8 bytes; type III's 12, and 8 more when the O bit (byte 11,
#: bit 0) announces the platform-specific sub-header.
ERSPAN2_HLEN, ERSPAN3_HLEN, ERSPAN3_PLATFORM, ERSPAN3_O_AT = 8, 12, 8, 11
#: VXLAN (RFC 7348): an 8-byte header, then Ethernet.
VXLAN_HLEN = 8
#: Geneve (RFC 8926 3.4): 8 bytes, then options whose length (the low 6 bits of byte 0) counts 4-byte words; the
#: protocol type (an EtherType) at 2.
GENEVE_HLEN, GENEVE_OPT_LEN, GENEVE_UNIT, GENEVE_PROTOCOL = 8, 0x3F, 4, 2
#: What says what is inside, at these offsets of the transport header: the ICMP/ICMPv6 type (an error quotes a
#: datagram), and a UDP tunnel's or TCP's destination port (OpenFlow's) or GRE's protocol type (RFC 792, RFC 4443,
#: RFC 768, RFC 793, RFC 2784 2).
ICMP_TYPE_AT, TUNNEL_DEMUX_AT = 0, 2

#: Encapsulations walked into (each IP-in-something, tunnel or quote counts one): deeper is not walked.
MAX_DEPTH = 8
#: The bytes a datagram's reassembly key takes (csum/layers/reassembly.py Key, as csum/engine/_cwalk.c and
#: csum/capture/stitch.py exchange it): the IP version, then IPv4's source, destination, identification and
#: protocol, or IPv6's source, destination and identification; zeros after. The IPv6 form's length.
REASSEMBLY_KEY_BYTES = 1 + 2 * 16 + 4

# --- above UDP ---------------------------------------------------------------------------------

VXLAN_PORT, VXLAN_GPE_PORT, GENEVE_PORT, MPLS_UDP_PORT = 4789, 4790, 6081, 6635
GTP_U_PORT, GTP_V0_PORT, CAPWAP_DATA_PORT, AYIYA_PORT, TEREDO_PORT = 2152, 3386, 5247, 5072, 3544
GRE_UDP_PORT, LISP_DATA_PORT, L2TP_PORT = 4754, 4341, 1701
#: UDP destination port -> encapsulation: RFC 7348 VXLAN, draft-ietf-nvo3-vxlan-gpe VXLAN-GPE, RFC 8926 Geneve,
#: RFC 7510 MPLS-in-UDP, 3GPP TS 29.281 GTP-U, GSM 09.60 GTPv0 (the GTP' port, 3GPP TS 32.295), RFC 5415 CAPWAP
#: data, draft-massar-v6ops-ayiya AYIYA, RFC 4380 Teredo, RFC 8086 GRE-in-UDP, RFC 9300 LISP data, RFC 2661 L2TPv2.
UDP_TUNNELS = {VXLAN_PORT: "vxlan", VXLAN_GPE_PORT: "vxlan-gpe", GENEVE_PORT: "geneve", MPLS_UDP_PORT: "mpls",
               GTP_U_PORT: "gtp", GTP_V0_PORT: "gtp-prime", CAPWAP_DATA_PORT: "capwap", AYIYA_PORT: "ayiya",
               TEREDO_PORT: "teredo", GRE_UDP_PORT: "gre-udp", LISP_DATA_PORT: "lisp", L2TP_PORT: "l2tp"}
#: The tunnels whose answers come from their port (a GTP peer, a CAPWAP controller, a Teredo server or relay, an L2TP
#: peer, a LISP router, an AYIYA server): recognised by the source port too when the destination port is no tunnel's
#: and the source port is the lower of the two (Wireshark's packet-udp.c tries the lower port first).
UDP_TUNNELS_BY_SOURCE = frozenset({GTP_U_PORT, GTP_V0_PORT, CAPWAP_DATA_PORT, AYIYA_PORT, TEREDO_PORT,
                                   LISP_DATA_PORT, L2TP_PORT})
SFLOW_PORT, OPENFLOW_PORTS = 6343, frozenset({6633, 6653})
#: Protocols that carry copies of other packets ("embedded packets": judged at their own depth, never corrected
#: unless asked): sFlow version 5 sampled headers (sflow.org sflow_version_5.txt) by UDP destination port, and
#: OpenFlow packet-in messages (OpenFlow 1.0 5.4.1, 1.3 7.4.1) by either TCP port (IANA 6653, and the older 6633).
UDP_EMBEDDED = {SFLOW_PORT: "sflow"}
TCP_EMBEDDED = {port: "openflow" for port in OPENFLOW_PORTS}


class GtpHdr(NamedTuple):
    """3GPP TS 29.281 5.1 GTPv1-U: flags (version in the top 3 bits, PT, E, S, PN), message type, Length (the octets
    after the 8 mandatory ones), TEID; 4 more octets (sequence number, N-PDU number, next extension header type)
    when any of E, S or PN is set; extension headers of ``ext_unit``-octet units (the count in their first octet),
    each ending with the type of the next (0: none). GSM 09.60 6 GTPv0: a 20-byte header, Length after it."""

    size: int = 8
    type: int = 1
    length: int = 2
    optional: int = 4
    ext_unit: int = 4
    v0_size: int = 20


GTP_HDR = GtpHdr()
#: GTP flags: the version's shift, PT (GTP, not GTP'), E/S/PN (the optional octets present), E alone; T-PDU / G-PDU.
GTP_VERSION_SHIFT, GTP_PT, GTP_OPTIONAL_FLAGS, GTP_E, GTP_TPDU = 5, 0x10, 0x07, 0x04, 0xFF
#: RFC 5415 4.3 CAPWAP: the first 32 bits hold the preamble (version and type; 0: not DTLS) in the top byte, then
#: HLEN (the header's length in 4-byte words), RID, WBID (1: IEEE 802.11, RFC 5416; 5 bits each), T (the frame is
#: the binding's native one, else IEEE 802.3) and F (a fragment).
CAPWAP_PREAMBLE, CAPWAP_HLEN_SHIFT, CAPWAP_WBID_SHIFT, CAPWAP_FIELD_MASK = 0x00, 19, 9, 0x1F
CAPWAP_T, CAPWAP_F, CAPWAP_WBID_80211, CAPWAP_UNIT, CAPWAP_MIN_HLEN = 0x100, 0x80, 1, 4, 8
#: RFC 4380 5.1.1 Teredo: the Authentication indicator (0x0001: ID-len, AU-len, client id, authentication value,
#: nonce 8, confirmation 1) and the Origin indication (0x0000, 8 bytes) that may precede the IPv6 packet.
TEREDO_AUTH, TEREDO_ORIGIN, TEREDO_AUTH_FIXED, TEREDO_ORIGIN_SIZE = 0x0001, 0x0000, 13, 8
#: draft-massar-v6ops-ayiya 5: identity length 2**IDLen, signature length SigLen * 4, the opcode (1: forward) and
#: the payload's IP protocol at 3 of its 8 fixed bytes.
AYIYA_HLEN, AYIYA_FORWARD, AYIYA_NEXT_HEADER, AYIYA_SIG_UNIT = 8, 1, 3, 4
#: RFC 9300 5.3: the LISP data header is 8 bytes, then the inner IPv4 or IPv6 packet.
LISP_HLEN = 8
#: RFC 2661 3.1 L2TPv2: T (control), L (Length present), S (Ns, Nr present), O (Offset Size present) and the version
#: (2) of the first 16 bits; Tunnel ID and Session ID follow (with the Length first when L is set).
L2TP_T, L2TP_L, L2TP_S, L2TP_O, L2TP_VERSION_MASK, L2TP_V2 = 0x8000, 0x4000, 0x0800, 0x0200, 0x000F, 2
#: sFlow version 5: the datagram starts with its version and agent address type (1 IPv4, 2 IPv6: the address's
#: size), then the address and 16 bytes (sub-agent id, sequence number, uptime, sample count); each sample and each
#: flow record starts with 8 (format, length). Flow samples (enterprise 0, format 1; expanded, format 3) have a fixed
#: part ending with their record count; a raw packet header record (format 1) has 16 bytes (header protocol: 1
#: Ethernet, 11 IPv4, 12 IPv6; frame length; bytes stripped; header length) before the header's bytes.
SFLOW_VERSION, SFLOW_ADDRESS, SFLOW_HLEN, SFLOW_AFTER_ADDRESS, SFLOW_ITEM = 5, {1: 4, 2: 16}, 8, 16, 8
SFLOW_FLOW_SAMPLES, SFLOW_RAW_HEADER, SFLOW_RECORD_HLEN = {1: 32, 3: 44}, 1, 16
SFLOW_HEADER_PROTOCOLS = {1: "eth", 11: "ip", 12: "ip"}
#: OpenFlow: the 8-byte header (version, type, length, xid), packet-in (type 10) and where its frame starts: OpenFlow
#: 1.0 at 18; 1.3, 1.4 and 1.5 after the match at 24 (its length at 2, padded to 8) and 2 bytes of padding.
OPENFLOW_HLEN, OPENFLOW_PACKET_IN, OPENFLOW_10, OPENFLOW_10_DATA = 8, 10, 1, 18
OPENFLOW_MATCH_VERSIONS, OPENFLOW_MATCH_AT, OPENFLOW_MATCH_UNIT, OPENFLOW_MATCH_PAD = frozenset({4, 5, 6}), 24, 8, 2
#: The Next Protocol of VXLAN-GPE and NSH (one IANA registry, RFC 8300 11.2.5) -> next layer.
NEXT_PROTOCOLS = {1: "ipv4", 2: "ipv6", 3: "eth", 4: "nsh", 5: "mpls"}

# --- link layers -------------------------------------------------------------------------------

ETH_IPV4, ETH_IPV6, ETH_TEB, ETH_MPLS, ETH_MPLS_MC = 0x0800, 0x86DD, 0x6558, 0x8847, 0x8848
ETH_PPPOE_SESSION, ETH_ERSPAN2, ETH_ERSPAN3, ETH_PPP = 0x8864, 0x88BE, 0x22EB, 0x880B
ETH_MACSEC, ETH_NSH, ETH_ARISTA = 0x88E5, 0x894F, 0xD28B
ETH_FABRICPATH, ETH_VNTAG, ETH_ETAG, ETH_CMD = 0x8903, 0x8926, 0x893F, 0x8909
#: Tags between the MAC addresses and the frame's EtherType: EtherType -> (name, bytes before the next EtherType):
#: Cisco VN-Tag (IEEE 802.1Qbh draft), IEEE 802.1BR E-Tag, Cisco MetaData (TrustSec SGT; Wireshark packet-cmd.c).
ETHER_TAGS = {ETH_VNTAG: ("vntag", 4), ETH_ETAG: ("etag", 6), ETH_CMD: ("cmd", 6)}
#: Cisco FabricPath: the outer addresses, EtherType 0x8903 and 2 bytes of FTag and TTL, then the original frame
#: (Wireshark packet-cisco-fp-mim.c).
FABRICPATH_TAG = 2
#: GRE protocol types Aruba's access points and controllers carry IEEE 802.11 frames under (Wireshark
#: packet-gre.h GRE_ARUBA_8200 ... 8370).
GRE_WLAN = frozenset(range(0x8200, 0x8380, 0x10))
#: 802.1Q C-tag, 802.1ad S-tag, and 0x9100 (pre-802.1ad QinQ, Linux ETH_P_QINQ1).
ETH_8021Q, ETH_8021AD, ETH_QINQ1 = 0x8100, 0x88A8, 0x9100
VLAN_TPIDS = frozenset({ETH_8021Q, ETH_8021AD, ETH_QINQ1})
#: EtherType -> next layer name (the walker's dispatch keys).
ETHERTYPES = {ETH_IPV4: "ipv4", ETH_IPV6: "ipv6", ETH_TEB: "eth", ETH_MPLS: "mpls", ETH_MPLS_MC: "mpls",
              ETH_PPPOE_SESSION: "pppoe", ETH_ERSPAN2: "erspan", ETH_ERSPAN3: "erspan3", ETH_PPP: "ppp",
              ETH_MACSEC: "macsec", ETH_NSH: "nsh", ETH_ARISTA: "arista", CDP_PID: "cdp",
              ETH_FABRICPATH: "fabricpath"}
#: Arista's vendor EtherType: subtype 1 (timestamp), then the timestamp's size by its format nibble
#: (tcpdump print-arista.c: 1 = 64-bit, 2 = 48-bit); the frame's EtherType follows.
ARISTA_TIMESTAMP, ARISTA_FORMATS = 0x0001, {1: 8, 2: 6}
ETHERTYPES.update({tpid: "vlan" for tpid in VLAN_TPIDS})
#: PPP protocol field (RFC 1661; IANA PPP DLL protocol numbers) -> next layer.
PPP_PROTOCOLS = {0x0021: "ipv4", 0x0057: "ipv6", 0x0281: "mpls", 0x0283: "mpls"}
#: RFC 1662 3.1: the All-Stations address and Unnumbered Information control in front of a PPP frame (optional:
#: Address-and-Control-Field-Compression); a protocol field whose first byte is odd is 1 byte (RFC 1661 6.5,
#: Protocol-Field-Compression).
PPP_ADDRESS_CONTROL = b"\xff\x03"
#: Cisco HDLC's address byte (unicast, multicast), in front of its control byte and an EtherType; also what a
#: LINKTYPE_PPP or LINKTYPE_PPP_HDLC frame starting with it holds (Wireshark packet-ppp.c).
CHDLC_ADDRESSES, CHDLC_HLEN = frozenset({0x0F, 0x8F}), 4


class PppoeHdr(NamedTuple):
    """RFC 2516 4 (include/uapi/linux/if_pppox.h ``struct pppoe_hdr``): version and type, code, session id, and the
    Length of the payload (from the PPP protocol field on) at 4; 6 bytes. Linux ``pppoe_rcv`` drops a frame
    shorter than Length and trims the payload to it (drivers/net/ppp/pppoe.c)."""

    size: int = 6
    length: int = 4


PPPOE_HDR = PppoeHdr()
#: RFC 3032 2.1: a 4-byte label stack entry, bottom of stack in the low bit of its third byte; RFC 4385 3: a
#: pseudowire control word (first nibble 0) of 4 bytes.
MPLS_LABEL, MPLS_BOTTOM_AT, MPLS_CONTROL_WORD = 4, 2, 4
#: BSD address families in DLT_NULL / DLT_LOOP headers: AF_INET 2; AF_INET6 24 (NetBSD, OpenBSD), 28 (FreeBSD),
#: 30 (macOS, iOS); AF_INET6 10 (Linux) appears in NFLOG.
BSD_FAMILIES = {2: "ipv4", 24: "ipv6", 28: "ipv6", 30: "ipv6"}
LINUX_FAMILIES = {2: "ipv4", 10: "ipv6"}
#: Solaris IPNET families (IPH_AF_INET, IPH_AF_INET6).
IPNET_FAMILIES = {2: "ipv4", 26: "ipv6"}
#: Frame Relay NLPIDs (RFC 2427): IPv4, IPv6; 0x80 is SNAP. A frame whose address is not followed by the UI control
#: byte 0x03 is Cisco's encapsulation: an EtherType right after the address (Wireshark packet-fr.c).
NLPIDS = {0xCC: "ipv4", 0x8E: "ipv6"}
FR_UI, NLPID_SNAP = 0x03, 0x80
#: ARCNET protocol ids (RFC 1201 with split flag and sequence, RFC 1051 without) -> (next layer, header extra).
ARCNET_PROTOCOLS = {0xD4: ("ipv4", 3), 0xC4: ("ipv6", 3), 0xF0: ("ipv4", 0)}
#: NFLOG TLV type of the packet payload (NFULA_PAYLOAD, include/uapi/linux/netfilter/nfnetlink_log.h).
NFULA_PAYLOAD = 9


class LinkType(NamedTuple):
    """How a capture link type's header is laid out.

    ``kind`` names the walker's handler; ``header``: fixed header length; ``at``: offset of the
    protocol word (EtherType, PPP protocol, family ...) where the handler reads one.
    """

    name: str
    kind: str
    header: int = 0
    at: int = 0


#: tcpdump.org link type number -> layout.
LINKTYPES: dict[int, LinkType] = {
    0: LinkType("null", "family-host", 4),
    1: LinkType("eth", "ethernet"),
    6: LinkType("tr", "token-ring"),
    7: LinkType("arcnet", "arcnet", 3, 2),
    9: LinkType("ppp", "ppp-hdlc"),
    10: LinkType("fddi", "fddi"),
    12: LinkType("raw", "ip"),
    14: LinkType("raw", "ip"),
    50: LinkType("ppp", "ppp-hdlc"),
    101: LinkType("raw", "ip"),
    104: LinkType("chdlc", "ethertype", 4, 2),
    105: LinkType("wlan", "wlan"),
    107: LinkType("fr", "frame-relay"),
    108: LinkType("loop", "family-net", 4),
    113: LinkType("sll", "ethertype", 16, 14),
    127: LinkType("radiotap", "radiotap"),
    129: LinkType("arcnet", "arcnet", 5, 4),
    192: LinkType("ppi", "ppi"),
    226: LinkType("ipnet", "ipnet", 24, 1),
    228: LinkType("raw", "ip"),
    229: LinkType("raw", "ip"),
    239: LinkType("nflog", "nflog"),
    # the pcap form: a 40-byte pseudo-header (GRH or, unicast, 20 zero bytes and the destination address)
    # before the 4-byte RFC 4391 header (tcpdump print-ipoib.c, Wireshark packet-ipoib.c)
    242: LinkType("ipoib", "ethertype", 44, 40),
    258: LinkType("pktap", "pktap"),
    276: LinkType("sll2", "ethertype", 20, 0),
}
#: Link types whose frames hold no Internet checksum csum can reach: reported as having nothing to check, not as
#: unsupported (tcpdump.org LINKTYPE_USB_FREEBSD, _BLUETOOTH_HCI_H4, _USB_LINUX, _BLUETOOTH_HCI_H4_WITH_PHDR,
#: _USB_LINUX_MMAPPED, _CAN_SOCKETCAN, _USBPCAP, _BLUETOOTH_LE_LL, _NETLINK, _BLUETOOTH_LINUX_MONITOR,
#: _BLUETOOTH_BREDR_BB, _BLUETOOTH_LE_LL_WITH_PHDR, _USB_DARWIN, _NORDIC_BLE, _USB_2_0).
NO_CHECKSUM_LINKTYPES = frozenset({186, 187, 189, 201, 220, 227, 249, 251, 253, 254, 255, 256, 266, 272, 288})
#: IEEE 802.15.4 MAC frames (LINKTYPE_IEEE802_15_4_LINUX 191, _WITHFCS 195, _NOFCS 230), judged frame by frame: only
#: a data frame whose payload may be 6LoWPAN (RFC 4944 5.1: a first byte other than 00xxxxxx, "Not a LoWPAN frame";
#: or a payload encrypted, or a 2015 frame csum does not parse) might hold one.
IEEE802154_LINKTYPES = frozenset({191, 195, 230})
#: IEEE 802.15.4-2011 5.2.1.1: the frame control field (2 bytes, little-endian): frame type (data: 1) in bits 0-2,
#: security enabled, PAN ID compression, the destination and source addressing modes (bits 10-11, 14-15: 0 none,
#: 2 short, 3 extended) and the frame version (bits 12-13; 2 is IEEE 802.15.4-2015's); a sequence number follows.
IEEE802154_DATA, IEEE802154_TYPE, IEEE802154_SECURITY, IEEE802154_PANID_COMPRESSION = 1, 0x0007, 0x0008, 0x0040
IEEE802154_DST_MODE, IEEE802154_VERSION, IEEE802154_SRC_MODE, IEEE802154_V2015 = 10, 12, 14, 2
IEEE802154_ADDRESSES, IEEE802154_PAN_ID, IEEE802154_HLEN = {0: 0, 2: 2, 3: 8}, 2, 3
LOWPAN_NALP_MASK = 0xC0
#: The names csum.inet.verify / csum.rewrite accept for ``link`` besides "auto" and a link type number.
LINK_NAMES = {"ethernet": 1, "ether": 1, "ip": 101}

# --- header fields a capture rewrite sets (csum.rewrite.rules) -----------------------------------

#: IPv4 (RFC 791, RFC 2474, RFC 3168): the DSCP/ECN byte and the TTL, from the header start.
IPV4_TOS, IPV4_TTL = 1, 8
#: IPv4 (RFC 791 3.1, :class:`IPHdr`): each header field of whole bytes, (name, offset, size) from the header start
#: (the version/IHL byte and the checksum left out; flags and fragment offset are one field).
IPV4_FIELDS = (("tos", IPV4_TOS, 1), ("total length", IPHDR.tot_len, 2), ("id", IPHDR.id, 2),
               ("fragment field", IPHDR.frag_off, 2), ("ttl", IPV4_TTL, 1), ("protocol", IPHDR.protocol, 1),
               ("source address", IPHDR.saddr, IPHDR.addr_size), ("destination address", IPHDR.daddr, IPHDR.addr_size))
#: IPv6 (RFC 8200 3): the first 32-bit word holds version (4 bits), traffic class (8), flow label (20).
IPV6_FLOW_WORD_BITS = (4, 8, 20)
#: Ethernet (IEEE 802.3): destination and source MAC offsets, the type / TPID at 12; an 802.1Q tag is 4 bytes,
#: its TCI's low 12 bits the VLAN ID.
ETH_DST, ETH_SRC, ETH_TYPE, VLAN_TAG_LEN, VLAN_VID_MASK = 0, 6, 12, 4, 0x0FFF
#: The bytes of a MAC address (include/uapi/linux/if_ether.h ETH_ALEN).
ETH_ALEN = 6
#: ARP (RFC 826, EtherType 0x0806; include/uapi/linux/if_arp.h ``struct arphdr``): hardware type at 0, protocol
#: type at 2 (an EtherType: IPv4's for IPv4 ARP), their address lengths at 4 and 5, the 8-byte header; then the
#: sender hardware and protocol addresses and the target hardware and protocol addresses, of those lengths.
#: No checksum covers it.
ETH_ARP, ARP_PRO, ARP_HLN, ARP_PLN, ARP_HLEN = 0x0806, 2, 4, 5, 8
#: IPv6 Neighbor Discovery (RFC 4861 4.2-4.5): the ICMPv6 types whose message holds IPv6 addresses -> the offsets
#: from the ICMPv6 header of those after its 4 bytes and 4 reserved ones: Neighbor Solicitation and Advertisement's
#: Target Address; Redirect's Target and Destination Address; a Router Advertisement's are in its options. The
#: ICMPv6 checksum covers them.
NDP_ADDRESSES = {134: (), 135: (8,), 136: (8,), 137: (8, 24)}
#: Where the options of those messages start, from the ICMPv6 header (RFC 4861 4.2-4.5): Router Advertisement
#: (no address of its own: its options hold them), Neighbor Solicitation and Advertisement, Redirect.
NDP_OPTIONS_AT = {134: 16, 135: 24, 136: 24, 137: 40}
#: Neighbor Discovery options (type, then length in units of 8 bytes, RFC 4861 4.6) holding IPv6 addresses ->
#: (offset of the first from the option's start, bytes of each): Prefix Information's Prefix (RFC 4861 4.6.2),
#: Route Information's Prefix (RFC 4191 2.3: 0, 8 or 16 bytes, as the length says), the Recursive DNS Servers'
#: addresses (RFC 8106 5.1: as many as the length holds). The link-layer address options (1, 2) hold MACs.
NDP_OPT_PREFIX_INFO, NDP_OPT_ROUTE_INFO, NDP_OPT_RDNSS = 3, 24, 25
NDP_OPT_ADDRESSES = {NDP_OPT_PREFIX_INFO: (16, 16), NDP_OPT_ROUTE_INFO: (8, 16), NDP_OPT_RDNSS: (8, 16)}
#: The Redirected Header option (RFC 4861 4.6.3): 8 bytes (type, length, 6 reserved), then the start of the packet
#: that caused the Redirect, which its sender (the Redirect's destination) sent to the Redirect's Destination Address.
NDP_OPT_REDIRECTED, NDP_OPT_REDIRECTED_DATA = 4, 8
#: The unit of an option's length byte (RFC 4861 4.6).
NDP_OPT_UNIT = 8
#: RFC 4861 4.4: a Neighbor Advertisement's Target Address is the sender's own (the others name a destination).
NDP_NEIGHBOR_ADVERT = 136

# --- names the other wings read (issue 31: no protocol fact outside this file) ----------------------------------

#: An IP address's bytes by IP version (RFC 791, RFC 8200).
ADDR_SIZES = {4: IPHDR.addr_size, 6: IPV6HDR.addr_size}
#: RFC 791 3.1: the IPv4 IHL counts 32-bit words.
IHL_UNIT = 4
#: tcpdump.org link type numbers csum reads and writes by name (pcap-linktype(7)).
LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL = 1, 101, 113
LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL2 = 228, 229, 276

# --- the layer graph ---------------------------------------------------------------------------

#: The payloads an IP header names by its protocol (IANA protocol numbers): IP in IP (RFC 2003), IPv6 in IPv4
#: (RFC 4213), GRE, AH walked past (RFC 4302), Ethernet in IP (RFC 8986 End.DX2), ESP (encrypted), and every
#: protocol of :data:`TRANSPORTS` (its checksum).
IP_PROTOCOLS: dict[int, str] = {IPIP: "ipv4", IPV6_IN: "ipv6", GRE: "gre", AH: AH_NAME, ETHERNET_IN: "eth",
                                ESP: ESP_ENTRY.name, **{proto: entry.name for proto, entry in TRANSPORTS.items()}}
#: RFC 3032 bottom of stack: what follows by its first nibble (IPv4, IPv6; 0: an RFC 4385 control word, then the
#: RFC 4448 pseudowire's Ethernet frame).
MPLS_NIBBLES = {4: "ipv4", 6: "ipv6", 0: "pw"}
#: GRE's protocol type (RFC 2784 2.4: an EtherType, and Aruba's IEEE 802.11 types; ERSPAN type I, protocol
#: 0x88be without a sequence number, and version 1 (PPTP, PPP) are chosen by the GRE handlers before it).
GRE_PROTOCOLS = {**ETHERTYPES, **{proto: "wlan-in" for proto in GRE_WLAN}}
#: draft-massar-v6ops-ayiya 5: the forwarded packet's IP protocol.
AYIYA_PROTOCOLS = {IPIP: "ipv4", IPV6_IN: "ipv6"}

#: The layer graph: each dissector table (a parent layer's field, keyed like Wireshark's and Zeek's dissector tables)
#: -> {value: child layer}. A child layer is the name its handler registers under: csum/layers/dissect.py ``handles``
#: (Python; "ip.proto"'s children under ``carries``, "link.type"'s kinds needing the link row under ``link_kind``) and
#: csum/engine/_cwalk.c's dispatch on ct_next_<table>() (generated by tools/gen_cwalk_table.py). A new protocol is an
#: entry here, a handler per walker, and tests (docs/design.md, "Adding a protocol").
DISSECTORS: dict[str, dict[int, str]] = {
    "link.type": {number: entry.kind for number, entry in LINKTYPES.items()},
    "ethertype": ETHERTYPES,
    "ppp.protocol": PPP_PROTOCOLS,
    "mpls.nibble": MPLS_NIBBLES,
    "gre.proto": GRE_PROTOCOLS,
    "ip.version": {4: "ipv4", 6: "ipv6"},
    "ip.proto": IP_PROTOCOLS,
    "udp.port": {**UDP_TUNNELS, **UDP_EMBEDDED},
    "tcp.port": TCP_EMBEDDED,
    "next.protocol": NEXT_PROTOCOLS,
    "ayiya.protocol": AYIYA_PROTOCOLS,
    "null.family": BSD_FAMILIES,
    "nflog.family": LINUX_FAMILIES,
    "ipnet.family": IPNET_FAMILIES,
    "fr.nlpid": NLPIDS,
    "arcnet.protocol": {proto: name for proto, (name, _) in ARCNET_PROTOCOLS.items()},
    "sflow.header": SFLOW_HEADER_PROTOCOLS,
    "icmp.type": {kind: "icmp-quote" for kind in ICMP_ERRORS},
    "icmpv6.type": {kind: "icmpv6-quote" for kind in ICMPV6_ERRORS},
}
#: The link kinds the C walker reads (an Ethernet frame, a header then an EtherType, bare IP, a BSD family word).
C_LINK_KINDS = frozenset({"ethernet", "ethertype", "ip", "family-host", "family-net"})
#: The edges the C walker takes through a generated ct_next_<table>() (csum/engine/_cwalk_table.h): table -> keys.
#: Every other edge of those tables sends the packet to the Python walker.
C_EDGES: dict[str, frozenset[int]] = {
    "link.type": frozenset(number for number, entry in LINKTYPES.items() if entry.kind in C_LINK_KINDS),
    "ethertype": frozenset({ETH_IPV4, ETH_IPV6, ETH_MPLS, ETH_MPLS_MC, ETH_PPPOE_SESSION, *VLAN_TPIDS}),
    "ppp.protocol": frozenset(PPP_PROTOCOLS),
    "mpls.nibble": frozenset(MPLS_NIBBLES),
    "gre.proto": frozenset({ETH_IPV4, ETH_IPV6, ETH_TEB, ETH_ERSPAN2, ETH_ERSPAN3}),
    "ip.proto": frozenset({IPIP, IPV6_IN, GRE, AH, TCP, UDP, ICMP, ICMPV6}),
    "udp.port": frozenset({VXLAN_PORT, GENEVE_PORT, GTP_U_PORT, GTP_V0_PORT, GRE_UDP_PORT}),
    "icmp.type": frozenset(ICMP_ERRORS),
    "icmpv6.type": frozenset(ICMPV6_ERRORS),
}

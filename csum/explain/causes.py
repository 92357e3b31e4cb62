"""The cause ids :mod:`csum.explain` names: one table, stable strings (docs/explain.md shows each with an example).

A cause is a mistake the explainer simulated and found to give the stored checksum exactly. The ids of program
mistakes are :class:`csum.rewrite.mistakes.Mistake`'s values (``csum prog`` names the same ones); their text is
taken from there. Three ids are not causes: :data:`UNEXPLAINED` (no single simulated mistake gives the stored
bytes), :data:`CORRUPTION` (wrong fields of one flow off by amounts that differ: a scattered pattern no rewrite
makes) and :data:`CANNOT_JUDGE` (the packet does not parse far enough to try anything).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bpf.mistakes import Mistake

__all__ = ["CANNOT_JUDGE", "CAUSES", "CORRUPTION", "NOT_CAUSES", "UNEXPLAINED", "Cause", "what"]


@dataclass(frozen=True)
class Cause:
    """One row of the table: the id, what the mistake is, and an example of the detail the explainer gives."""

    id: str
    what: str
    example: str


def _mistake(m: Mistake, example: str) -> Cause:
    return Cause(m.value, m.what, example)


#: Every cause id, in the order the explainer tries them (and the docs list them).
CAUSES: tuple[Cause, ...] = (
    Cause("offload", "the field holds the pseudo-header sum only: transmit checksum offload (CHECKSUM_PARTIAL) left "
          "it for the NIC, and the capture was taken on the sender before the NIC",
          "the pseudo-header sum (length 36): the NIC completes it (captured before the NIC)"),
    Cause("ttl-not-updated", "the IPv4 TTL decremented (by a router, a tc or XDP forwarder) without updating the "
          "header checksum",
          "the header checksum of TTL 64; the packet has 63 (decremented by 1 without an update)"),
    Cause("tos-not-updated", "the IPv4 TOS byte (DSCP or ECN) changed without updating the header checksum",
          "the header checksum of TOS 0x02 (ECN ECT(0)); the packet has 0x03 (CE)"),
    Cause("id-not-updated", "the IPv4 identification changed without updating the header checksum",
          "the header checksum of id 0x1c46; the packet has 0x0000"),
    Cause("tot-len-not-updated", "the IPv4 total length changed (a resize, GRO/GSO) without updating the header "
          "checksum",
          "the header checksum of total length 60; the packet has 52"),
    Cause("ip-field-not-updated", "another IPv4 header field (an address, the fragment field, the protocol, an "
          "option) changed without updating the header checksum",
          "the header checksum of source address 10.0.0.2; the packet has 192.0.2.7"),
    _mistake(Mistake.L4_NOT_PATCHED,
             "a stale pseudo-header for 10.0.0.2 (the address before the NAT, frame 17): the TCP checksum was not "
             "updated"),
    _mistake(Mistake.BYTE_ORDER, "the checksum 0x3a1f stored with its bytes swapped (0x1f3a)"),
    _mistake(Mistake.UDP0_NOT_MANGLED, "the UDP checksum computes to 0 and was stored as 0 (no checksum), not 0xffff"),
    Cause("padding-summed", "the frame's Ethernet padding (after the IP datagram) summed, and counted in the "
          "pseudo-header length",
          "the checksum over the segment and the frame's 6 bytes of padding, length 26 (the datagram's is 20)"),
    Cause("odd-byte-dropped", "the last byte of an odd-length coverage left out of the sum",
          "the checksum without the last byte (0x61) of the 21 covered"),
    _mistake(Mistake.SINGLE_FOLD, "the 16-bit words' sum 0x2fffe folded once (to 0x10000) and cut to 16 bits"),
    _mistake(Mistake.CARRY_LOST, "the 32-bit words summed in a 32-bit accumulator: 2 carries out of bit 31 lost"),
    Cause("not-complemented", "the sum stored without its final complement (one's complement of the checksum)",
          "the folded sum 0xc5e0 stored; the checksum is its complement 0x3a1f"),
    Cause("no-pseudo-header", "a TCP/UDP/ICMPv6 checksum computed from scratch over the segment alone, without the "
          "pseudo-header (addresses, protocol, length)",
          "the checksum over the 28 covered bytes alone, without the pseudo-header (addresses, protocol, length)"),
    Cause("diff-size-wrong", "(csum prog) a checksum updated with a bpf_csum_diff whose size or window leaves part "
          "of the change out: a translated packet's addresses (IPv4 <-> IPv6, bpf_skb_change_proto) given the other "
          "version's size, a changed field's bytes in a 4-byte word the diff does not cover (an MSS after a NOP)",
          "the TCP checksum updated with bpf_csum_diff (old, 8, new, 8): the first 8 bytes of the IPv6 addresses "
          "counted: part of the addresses left out (IPv4 translated to IPv6)"),
    Cause("seed-not-complemented", "(csum prog) an incremental update started from the old checksum itself, not "
          "its complement (RFC 1624 eqn. 3 takes ~HC): bpf_csum_diff's seed given check where ~check is due",
          "the update started from the old checksum 0x3a1f itself, not its complement 0xc5e0 (RFC 1624 eqn. 3 "
          "takes ~HC)"),
    Cause("l4-field-not-updated", "(csum prog) bytes a TCP/UDP/ICMP checksum covers changed (an option such as the "
          "MSS, an ICMP type) without updating the checksum for them",
          "the TCP checksum not updated for bytes 22..23 of the 32 it covers (05b4 -> 0514)"),
    Cause("coverage-short", "(csum prog) a checksum computed over part of what it covers: an IPv4 header's first "
          "bytes only (a loop bounded by sizeof(struct iphdr) on a header with options, a bpf_csum_diff size short "
          "of the header), a TCP/UDP segment's header alone (the payload or an encapsulated packet left out), an ICMP "
          "error's header alone (the quote left out)",
          "the IPv4 header checksum over its first 20 bytes only, not its 24 (a loop or a bpf_csum_diff size short "
          "of the header)"),
    Cause("udp6-zero", "(csum prog) a UDP checksum over IPv6 left 0 (none) on a port csum knows no tunnel on: RFC "
          "8200 8.1 requires one, except for a tunnel protocol whose endpoints enable zero-checksum mode for the port "
          "(RFC 6935, RFC 6936); a receiver not in that mode drops it: a tunnel's outer UDP header pushed without "
          "computing it",
          "the UDP checksum left 0 (none): IPv6 requires one unless the tunnel's endpoints enable zero-checksum mode "
          "for this port (RFC 8200 8.1, RFC 6935)"),
    Cause("fragment-only", "a checksum over the first fragment alone, not the whole datagram (the pseudo-header length "
          "the fragment's, or the whole datagram's)",
          "the checksum over the first fragment's 1480 bytes (length 1480); the datagram has 3000"),
    Cause("length-wrong", "the pseudo-header length wrong (another length than the segment's)",
          "pseudo-header length 40 (the IPv4 total length) instead of 20"),
    _mistake(Mistake.PSEUDO_HDR_MISSING, "(csum prog) skb->csum left stale: the stack drops the packet"),
    _mistake(Mistake.PSEUDO_HDR_ON_PORT, "(csum prog) skb->csum moved by a port change"),
    _mistake(Mistake.SIZE_BITS, "(csum prog) the address's replace with size 0: the IPv4 header checksum left as it "
             "was"),
    _mistake(Mistake.UDP0_NOT_KEPT, "a UDP checksum of 0 (none) turned into 0x4a1b by the update"),
    _mistake(Mistake.IPV6_FLAG_MISSING, "(csum prog) skb->csum moved as for IPv4"),
    _mistake(Mistake.IPV6_FLAG_ON_IPV4, "(csum prog) skb->csum not moved for the address"),
    _mistake(Mistake.OUTER_NOT_CARRIED, "the ICMP error's checksum not updated for the quoted header's change"),
    _mistake(Mistake.STORE_NO_RECOMPUTE, "(csum prog) skb->csum left stale by bpf_skb_store_bytes"),
    _mistake(Mistake.DIRECT_WRITE, "(csum prog) skb->csum left stale by a direct write"),
    _mistake(Mistake.HEADER_FIELD_LATE, "the added header's checksum matches it with the total length still 0"),
    _mistake(Mistake.HEADER_CSUM_UNSET, "the added IPv4 header's checksum is 0"),
)

UNEXPLAINED = "unexplained"
CORRUPTION = "corruption"
CANNOT_JUDGE = "cannot-judge"
#: The ids that name no cause.
NOT_CAUSES = (
    Cause(UNEXPLAINED, "no single simulated mistake gives the stored checksum exactly (or several different ones do)",
          "no simulated mistake gives 0x1234 (the checksum is 0x5678)"),
    Cause(CORRUPTION, "the flow's wrong fields are off by amounts that all differ: a scattered pattern, not a "
          "rewrite",
          "3 wrong TCP checksums in this flow, each off by a different amount"),
    Cause(CANNOT_JUDGE, "the packet is malformed or the field not verifiable: nothing was simulated",
          "the packet does not parse: truncated"),
)

_WHAT = {c.id: c.what for c in (*CAUSES, *NOT_CAUSES)}


def what(cause: str) -> str:
    """What cause id ``cause`` means (KeyError for an unknown id)."""
    return _WHAT[cause]

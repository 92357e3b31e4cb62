"""The usual mistakes of checksum updates in tc and XDP programs: their ids, what each is, and its fix in tc and in
XDP terms (one table: :mod:`csum.rewrite.mistakes` reproduces them on packets, :mod:`csum.explain.causes` names them
as causes; kept apart from the reproducer so that naming one does not import csum.rewrite)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Mistake"]


class Mistake(StrEnum):
    """A known checksum-update mistake: the id, what it is, the fix in tc terms and in XDP terms (None: cannot
    happen there)."""

    def __new__(cls, value: str, what: str, tc: str | None, xdp: str | None) -> Mistake:
        member = str.__new__(cls, value)
        member._value_ = value
        member.what, member.tc, member.xdp = what, tc, xdp
        return member

    what: str
    tc: str | None
    xdp: str | None

    PSEUDO_HDR_MISSING = (
        "pseudo-hdr-missing", "BPF_F_PSEUDO_HDR missing on the L4 checksum's update for an address: the bytes come "
        "out right, but skb->csum is not moved for the pseudo-header change and the stack drops the packet",
        "bpf_l4_csum_replace(skb, L4_CSUM_OFF, 0, diff, BPF_F_PSEUDO_HDR /* | BPF_F_MARK_MANGLED_0 for UDP */)", None)
    PSEUDO_HDR_ON_PORT = (
        "pseudo-hdr-on-port", "BPF_F_PSEUDO_HDR on a port or identifier, which is not in the pseudo-header: skb->csum "
        "moves by a change the packet does not have (cilium#9482's 'hw csum failure')",
        "bpf_l4_csum_replace(skb, L4_CSUM_OFF, old, new, 2) without BPF_F_PSEUDO_HDR", None)
    SIZE_BITS = (
        "size-bits", "the field size missing or wrong in the flags' low bits: size 0 with a non-zero from returns "
        "-EINVAL and leaves the checksum; size 2 takes only the low 16 bits of a 4-byte value",
        "put the field's size in the flags: bpf_l3_csum_replace(skb, off, old, new, 4) for an address, 2 for a "
        "16-bit field, or size 0 with from 0 and a bpf_csum_diff result as to", None)
    L4_NOT_PATCHED = (
        "l4-not-patched", "the TCP/UDP checksum not updated for an address change (the address is in its "
        "pseudo-header)",
        "bpf_l4_csum_replace(skb, L4_CSUM_OFF, 0, diff, BPF_F_PSEUDO_HDR) with the address's bpf_csum_diff",
        "update the TCP/UDP checksum for the address too, with the old and the new address, as the IPv4 header "
        "checksum is")
    SINGLE_FOLD = (
        "single-fold", "a sum folded once and cut to 16 bits: carries left above bit 15 are lost",
        "fold until no carry is left: while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);",
        "fold until no carry is left: while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);")
    CARRY_LOST = (
        "carry-lost", "a carry lost: a 32-bit sum overflowed, or 16-bit words added without the end-around carry",
        "sum in a __u64 and fold to the end, or add with the carry: s += a; s += s < a;",
        "sum in a __u64 and fold to the end, or add with the carry: s += a; s += s < a;")
    BYTE_ORDER = (
        "byte-order", "byte order slipped: a value summed (or the checksum stored) in the other byte order than "
        "the packet holds",
        "pass from and to as the packet holds them (bpf_htons / bpf_htonl on constants)",
        "sum the words as loaded from the packet, constants in network order (bpf_htons), and store the checksum "
        "as computed")
    UDP0_NOT_KEPT = (
        "udp0-not-kept", "a UDP checksum of 0 (none computed, RFC 768) updated into a non-zero value",
        "BPF_F_MARK_MANGLED_0 on the UDP checksum's bpf_l4_csum_replace",
        "leave a UDP checksum of 0 alone: if (udp->check) ...")
    UDP0_NOT_MANGLED = (
        "udp0-not-mangled", "a UDP checksum that computes to 0 stored as 0 (which says 'no checksum') instead of "
        "0xffff",
        "BPF_F_MARK_MANGLED_0 on the UDP checksum's bpf_l4_csum_replace",
        "store a computed 0 as 0xffff: if (!check) check = 0xffff; (RFC 768)")
    IPV6_FLAG_MISSING = (
        "ipv6-flag-missing", "an IPv6 pseudo-header diff without BPF_F_IPV6: skb->csum is moved as if an IPv4 header "
        "checksum had absorbed the change",
        "BPF_F_PSEUDO_HDR | BPF_F_IPV6 (Linux >= 6.16); before 6.16 store the address with BPF_F_RECOMPUTE_CSUM, "
        "which moves skb->csum back", None)
    IPV6_FLAG_ON_IPV4 = (
        "ipv6-flag-on-ipv4", "BPF_F_IPV6 on an IPv4 packet: skb->csum is left alone although the IPv4 header "
        "checksum absorbed the address change",
        "BPF_F_IPV6 only on IPv6 packets", None)
    OUTER_NOT_CARRIED = (
        "outer-not-carried", "an enclosing checksum (an ICMP error's over its quote, a tunnel's) not updated for "
        "bytes changed inside it (the quoted addresses and ports, the quoted checksum's own change)",
        "bpf_l4_csum_replace(skb, OUTER_CSUM_OFF, old, new, 4 or 2) for every word changed inside, the inner "
        "checksum's change included (read it before and after its own replace)",
        "update the enclosing checksum for every word changed inside it, the inner checksum's own change included")
    STORE_NO_RECOMPUTE = (
        "store-no-recompute", "bpf_skb_store_bytes without BPF_F_RECOMPUTE_CSUM for bytes no checksum update "
        "balances (an IPv6 hop limit, a pushed header, a payload byte)",
        "bpf_skb_store_bytes(skb, off, &new, len, BPF_F_RECOMPUTE_CSUM)", None)
    DIRECT_WRITE = (
        "direct-write", "packet bytes written directly (not through the helpers) without moving skb->csum by "
        "their change (no bpf_csum_update, or one given another diff: reversed, or short of a byte written)",
        "write through bpf_skb_store_bytes(..., BPF_F_RECOMPUTE_CSUM) and bpf_l3/l4_csum_replace, or move "
        "skb->csum with bpf_csum_update(skb, bpf_csum_diff(old, n, new, n, 0)) over every byte changed", None)
    HEADER_FIELD_LATE = (
        "header-field-late", "an added header's checksum computed before one of its fields was set (an IPv4 "
        "header's total length, a UDP tunnel header's length)",
        "compute the header checksum last, over the finished header with its checksum field 0",
        "compute the header checksum last, over the finished header with its checksum field 0")
    HEADER_CSUM_UNSET = (
        "header-csum-unset", "an added IPv4 header's checksum never computed (left 0, as the pushed room was)",
        "compute the header checksum over the finished header (its checksum field 0) and store it",
        "compute the header checksum over the finished header (its checksum field 0) and store it")

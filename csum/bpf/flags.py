"""The flags and states the BPF checksum helpers take: include/uapi/linux/bpf.h and include/linux/skbuff.h."""

from __future__ import annotations

__all__ = ["BPF_F_HDR_FIELD_MASK", "BPF_F_INVALIDATE_HASH", "BPF_F_IPV6", "BPF_F_MARK_ENFORCE", "BPF_F_MARK_MANGLED_0",
           "BPF_F_PSEUDO_HDR", "BPF_F_RECOMPUTE_CSUM", "CHECKSUM_COMPLETE", "CHECKSUM_NONE", "CHECKSUM_PARTIAL",
           "CHECKSUM_UNNECESSARY"]

#: bpf_l3_csum_replace / bpf_l4_csum_replace: the field size (0, 2 or 4) in the low bits, then the flags.
BPF_F_HDR_FIELD_MASK = 0xF
BPF_F_PSEUDO_HDR = 1 << 4
BPF_F_MARK_MANGLED_0 = 1 << 5
BPF_F_MARK_ENFORCE = 1 << 6
BPF_F_IPV6 = 1 << 7
#: bpf_skb_store_bytes.
BPF_F_RECOMPUTE_CSUM, BPF_F_INVALIDATE_HASH = 1 << 0, 1 << 1

#: include/linux/skbuff.h ``ip_summed`` states of the skb a helper runs on.
CHECKSUM_NONE, CHECKSUM_UNNECESSARY, CHECKSUM_COMPLETE, CHECKSUM_PARTIAL = 0, 1, 2, 3

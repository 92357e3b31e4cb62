/* tc: SNAT with the L4 checksum's bpf_l4_csum_replace given old and new but no size (flags & 0xf == 0):
 * the kernel returns -EINVAL and leaves the checksum (the program does not look). */
#include "mistakes.h"

SEC("tc")
int size_bits(struct __sk_buff *skb)
{
	struct iphdr *ip = ip4((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u32 old, new = NEW4;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	old = ip->saddr;
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, BPF_F_PSEUDO_HDR);
	bpf_l3_csum_replace(skb, IP4 + offsetof(struct iphdr, check), old, new, 4);
	bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, saddr), &new, 4, 0);
	return TC_ACT_OK;
}

/* tc: SNAT with the IPv4 header checksum's bpf_l3_csum_replace given size 2 for the 4-byte address: only its low
 * 16 bits (the first two bytes as loaded) enter the update. */
#include "mistakes.h"

SEC("tc")
int size_2(struct __sk_buff *skb)
{
	struct iphdr *ip = ip4((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u32 old, new = NEW4;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	old = ip->saddr;
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, 4 | BPF_F_PSEUDO_HDR);
	bpf_l3_csum_replace(skb, IP4 + offsetof(struct iphdr, check), old, new, 2);
	bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, saddr), &new, 4, 0);
	return TC_ACT_OK;
}

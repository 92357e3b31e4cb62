/* tc: SNAT with the size bits wrong. By default the L4 checksum's bpf_l4_csum_replace gets old and new but no
 * size (flags & 0xf == 0): the kernel returns -EINVAL and leaves the checksum (the program does not look).
 * -DSIZE_2: the IPv4 header checksum's bpf_l3_csum_replace gets size 2 for the 4-byte address: only its low
 * 16 bits (the first two bytes as loaded) enter the update. */
#include "mistakes.h"

#ifdef SIZE_2
#define L4_SIZE 4
#define L3_SIZE 2
#else
#define L4_SIZE 0
#define L3_SIZE 4
#endif

SEC("tc")
int size_bits(struct __sk_buff *skb)
{
	struct iphdr *ip = ip4((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u32 old, new = NEW4;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	old = ip->saddr;
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, L4_SIZE | BPF_F_PSEUDO_HDR);
	bpf_l3_csum_replace(skb, IP4 + offsetof(struct iphdr, check), old, new, L3_SIZE);
	bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, saddr), &new, 4, 0);
	return TC_ACT_OK;
}

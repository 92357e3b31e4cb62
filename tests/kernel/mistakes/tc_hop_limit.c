/* tc: IPv6 hop limit - 1 (no checksum covers it). Written with bpf_skb_store_bytes without
 * BPF_F_RECOMPUTE_CSUM, or with -DDIRECT straight into the packet: either way skb->csum is left stale
 * (-DHOP_FLAGS=BPF_F_RECOMPUTE_CSUM: right). */
#include "mistakes.h"

#ifndef HOP_FLAGS
#define HOP_FLAGS 0
#endif

SEC("tc")
int hop_limit(struct __sk_buff *skb)
{
	struct ipv6hdr *ip = ip6((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u8 hops;

	if (!ip || ip->hop_limit < 2)
		return TC_ACT_OK;
	hops = ip->hop_limit - 1;
#ifdef DIRECT
	ip->hop_limit = hops;
#else
	bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct ipv6hdr, hop_limit), &hops, 1, HOP_FLAGS);
#endif
	return TC_ACT_OK;
}

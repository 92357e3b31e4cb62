/* tc MSS clamp: a TCP SYN whose first option is MSS (kind 2, len 4) gets MSS min(mss, 1300), the checksum moved with
 * bpf_l4_csum_replace(size 2). NO_UPDATE: MSS stored without an update; HOST_ORDER: values in host order;
 * PSEUDO: BPF_F_PSEUDO_HDR passed. */
#include "mistakes.h"
#define CLAMP 1300
SEC("tc")
int mss(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	struct tcphdr *t;
	__u8 *opt;
	__u16 old, new;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	t = (void *)(ip + 1);
	opt = (void *)(t + 1);
	if ((void *)(opt + 4) > end || t->doff < 6 || opt[0] != 2 || opt[1] != 4)
		return TC_ACT_OK;
	old = *(__u16 *)(opt + 2);
	if (bpf_ntohs(old) <= CLAMP)
		return TC_ACT_OK;
	new = bpf_htons(CLAMP);
	if (bpf_skb_store_bytes(skb, L4 + sizeof(*t) + 2, &new, 2, 0))
		return TC_ACT_SHOT;
#ifndef NO_UPDATE
#ifdef HOST_ORDER
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), bpf_ntohs(old), CLAMP, 2);
#elif defined(PSEUDO)
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, BPF_F_PSEUDO_HDR | 2);
#else
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, 2);
#endif
#endif
	return TC_ACT_OK;
}

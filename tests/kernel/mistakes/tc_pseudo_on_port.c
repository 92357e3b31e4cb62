/* tc: destination port -> 8080 with BPF_F_PSEUDO_HDR on the port's bpf_l4_csum_replace (cilium#9482). */
#include "mistakes.h"

SEC("tc")
int pseudo_on_port(struct __sk_buff *skb)
{
	struct iphdr *ip = ip4((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u16 old, new = bpf_htons(NEW_PORT);

	if (!ip || (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, L4 + 2, &old, 2))
		return TC_ACT_OK;
	if (ip->protocol == IPPROTO_TCP)
		bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, 2 | BPF_F_PSEUDO_HDR);
	else
		bpf_l4_csum_replace(skb, L4 + offsetof(struct udphdr, check), old, new,
				    2 | BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0);
	bpf_skb_store_bytes(skb, L4 + 2, &new, 2, 0);
	return TC_ACT_OK;
}

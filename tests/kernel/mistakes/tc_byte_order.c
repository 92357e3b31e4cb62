/* tc: destination port -> 8080 with the new port given to bpf_l4_csum_replace in host order (stored in network
 * order). */
#include "mistakes.h"

SEC("tc")
int byte_order_tc(struct __sk_buff *skb)
{
	struct iphdr *ip = ip4((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u16 old, new = bpf_htons(NEW_PORT);

	if (!ip || ip->protocol != IPPROTO_TCP || bpf_skb_load_bytes(skb, L4 + 2, &old, 2))
		return TC_ACT_OK;
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, NEW_PORT, 2);
	bpf_skb_store_bytes(skb, L4 + 2, &new, 2, 0);
	return TC_ACT_OK;
}

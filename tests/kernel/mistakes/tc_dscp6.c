/* tc: IPv6 DSCP remark (traffic class -> 46, EF; no checksum covers it), written directly into the packet, skb->csum
 * moved with bpf_csum_update(skb, bpf_csum_diff(old word, 4, new word, 4, 0)). REVERSED: the diff taken new -> old
 * (skb->csum moved twice the wrong way). */
#include "mistakes.h"
SEC("tc")
int dscp6(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ipv6hdr *ip = ip6(data, end);
	__be32 old, new;

	if (!ip)
		return TC_ACT_OK;
	old = *(__be32 *)ip;
	new = (old & bpf_htonl(0xF00FFFFF)) | bpf_htonl(46 << 22);
	if (old == new)
		return TC_ACT_OK;
	*(__be32 *)ip = new;
#ifdef REVERSED
	bpf_csum_update(skb, bpf_csum_diff(&new, 4, &old, 4, 0));
#else
	bpf_csum_update(skb, bpf_csum_diff(&old, 4, &new, 4, 0));
#endif
	return TC_ACT_OK;
}

/* XDP ICMP echo responder: swap addresses, type 8 -> 0, ICMP checksum patched with bpf_csum_diff of the first
 * header word seeded with ~check. SEED_RAW: seed = check; NO_COMPLEMENT: the folded sum stored; NO_UPDATE. */
#include "mistakes.h"
SEC("xdp")
int echo(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	struct icmp4 *ic;
	__u32 a, oldw, neww;
	__u32 s;

	if (!ip || ip->protocol != IPPROTO_ICMP)
		return XDP_PASS;
	ic = (void *)(ip + 1);
	if ((void *)(ic + 1) > end || ic->type != 8)
		return XDP_PASS;
	a = ip->saddr; ip->saddr = ip->daddr; ip->daddr = a;
	__u16 was = ic->check;
	ic->check = 0;
	oldw = *(__u32 *)ic;
	ic->type = 0;
	neww = *(__u32 *)ic;
#ifndef NO_UPDATE
#ifdef SEED_RAW
	s = bpf_csum_diff(&oldw, 4, &neww, 4, was);
#else
	s = bpf_csum_diff(&oldw, 4, &neww, 4, ~was & 0xffff);
#endif
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
#ifdef NO_COMPLEMENT
	ic->check = s;
#else
	ic->check = ~s;
#endif
#else
	ic->check = was;
#endif
	return XDP_TX;
}

/* XDP: destination port -> 8080, stored in network order, but summed into the checksum in host order. */
#include "mistakes.h"

SEC("xdp")
int byte_order(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	struct tcphdr *tcp;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return XDP_PASS;
	tcp = (void *)(ip + 1);
	if ((void *)(tcp + 1) > end)
		return XDP_PASS;
	tcp->check = update(tcp->check, tcp->dest, NEW_PORT);
	tcp->dest = bpf_htons(NEW_PORT);
	return XDP_PASS;
}

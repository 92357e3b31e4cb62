/* XDP: an IP-in-IP tunnel's egress. An IPv4 packet carrying IPv4 (protocol 4) loses its outer header
 * (bpf_xdp_adjust_head), and the inner packet's TTL is decremented, as the router it leaves by does. TTL_NOT_UPDATED:
 * its header checksum left as it was. None: updated (RFC 1624), the correct twin. */
#include "mistakes.h"

SEC("xdp")
int pop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end), *inner;
	struct ethhdr eth;

	if (!ip || ip->protocol != IPPROTO_IPIP || (void *)(ip + 2) > end)
		return XDP_PASS;
	inner = ip + 1;
	if (inner->ttl <= 1)
		return XDP_PASS;
	__builtin_memcpy(&eth, data, sizeof(eth));
	if (bpf_xdp_adjust_head(ctx, sizeof(*ip)))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	ip = (void *)((struct ethhdr *)data + 1);
	if ((void *)(ip + 1) > end)
		return XDP_ABORTED;
	__builtin_memcpy(data, &eth, sizeof(eth));
	ip->ttl--;
#ifndef TTL_NOT_UPDATED
	ip->check = update(ip->check, bpf_htons(0x0100), 0);
#endif
	return XDP_PASS;
}

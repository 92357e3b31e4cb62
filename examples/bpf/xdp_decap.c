/* An XDP IP-in-IP decapsulation: an IPv4 packet carrying IPv4 (protocol 4) loses its outer header; the Ethernet
 * header moves up and bpf_xdp_adjust_head drops the 20 bytes, so the inner packet, checksums and all, goes on
 * as it came. Other packets pass unchanged. csum prog judges the shorter output on its own.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_decap.c -o xdp_decap.o   Check: csum prog xdp_decap.o
 */
#include "nat.h"

SEC("xdp")
int xdp_ipip_decap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ipv4_header(data, data_end);
	struct ethhdr eth;

	if (!ip || ip->protocol != IPPROTO_IPIP || (void *)(ip + 2) > data_end)
		return XDP_PASS;
	__builtin_memcpy(&eth, data, sizeof(eth));
	if (bpf_xdp_adjust_head(ctx, sizeof(*ip)))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + sizeof(eth) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(data, &eth, sizeof(eth));
	return XDP_PASS;
}

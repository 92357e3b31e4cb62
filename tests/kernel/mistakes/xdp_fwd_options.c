/* XDP forwarder recomputing the IPv4 header checksum from scratch after TTL decrement, over ihl*4 bytes.
 * FIXED20: over sizeof(struct iphdr) = 20 bytes (options left out). Packets with options accepted. */
#include "mistakes.h"
SEC("xdp")
int fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u16 *w = (void *)ip;
	__u32 s = 0;
	int n;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ttl <= 1)
		return XDP_PASS;
	ip->ttl--;
	ip->check = 0;
#ifdef FIXED20
	n = 10;
#else
	n = ip->ihl * 2;
#endif
	for (int i = 0; i < 30; i++) {
		if (i >= n || (void *)(w + i + 1) > end)
			break;
		s += w[i];
	}
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->check = ~s;
	return XDP_TX;
}

/* XDP ICMP error generator (calico's icmp_v4_reply, xdp-tutorial style): an IPv4 TCP/UDP packet is answered with a
 * destination unreachable, fragmentation needed (type 3, code 4, MTU 1400) quoting its IPv4 header and first 8 bytes
 * of payload (RFC 792): bpf_xdp_adjust_tail cuts the packet after those, bpf_xdp_adjust_head makes room for a new
 * IPv4 and ICMP header; both checksums by loops over 16-bit words. HDR_ONLY: the ICMP checksum over the ICMP header
 * alone (the quote left out; over the header and the quoted IPv4 header it is the same: a right header sums to
 * zero); SCRAMBLED: the right ICMP checksum then XORed with a hash of the quoted source port. */
#include "mistakes.h"
#define QUOTE (sizeof(struct iphdr) + 8)
#define PUSH (sizeof(struct iphdr) + sizeof(struct icmp4))
#ifdef HDR_ONLY
#define ICMP_WORDS (sizeof(struct icmp4) / 2)
#else
#define ICMP_WORDS ((sizeof(struct icmp4) + QUOTE) / 2)
#endif
SEC("xdp")
int frag_needed(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end), *outer;
	struct ethhdr *eth;
	struct icmp4 *icmp;
	__be32 saddr, daddr;
	int len = end - data;

	if (!ip || (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP) || len < ETH_HLEN + (int)QUOTE)
		return XDP_PASS;
	saddr = ip->saddr;
	daddr = ip->daddr;
	if (len > ETH_HLEN + (int)QUOTE && bpf_xdp_adjust_tail(ctx, ETH_HLEN + (int)QUOTE - len))
		return XDP_DROP;
	if (bpf_xdp_adjust_head(ctx, -(int)PUSH))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	outer = (void *)(eth + 1);
	icmp = (void *)(outer + 1);
	if ((void *)(icmp + 1) + QUOTE > end)
		return XDP_DROP;
	__builtin_memmove(eth, (void *)eth + PUSH, sizeof(*eth));
	__builtin_memset(outer, 0, sizeof(*outer));
	outer->version = 4;
	outer->ihl = 5;
	outer->ttl = 64;
	outer->protocol = IPPROTO_ICMP;
	outer->tot_len = bpf_htons(PUSH + QUOTE);
	outer->saddr = daddr;
	outer->daddr = saddr;
	outer->check = csum16((__u16 *)outer, sizeof(*outer) / 2);
	icmp->type = 3;
	icmp->code = 4;
	icmp->check = 0;
	icmp->rest = bpf_htonl(1400);
	icmp->check = csum16((__u16 *)icmp, ICMP_WORDS);
#ifdef SCRAMBLED
	icmp->check ^= (__u16)((*(__u16 *)((void *)(icmp + 1) + sizeof(struct iphdr)) * 2654435761u) >> 16) | 1;
#endif
	return XDP_TX;
}

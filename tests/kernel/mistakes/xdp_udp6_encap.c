/* XDP GUE-like encap (katran-like): IPv6 + UDP (dport 6080) pushed in front of an IPv4 packet; the UDP checksum
 * computed by a loop: pseudo-header, UDP header, inner packet. ZERO: the UDP checksum left 0; HDR_ONLY: the sum over
 * the pseudo-header and the UDP header only (the inner packet left out); NO_PSEUDO: the pseudo-header left out. */
#include "mistakes.h"
#define PUSH (sizeof(struct ipv6hdr) + sizeof(struct udphdr))
SEC("xdp")
int gue(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *inner = ip4(data, end);
	struct ipv6hdr *o;
	struct udphdr *u;
	struct ethhdr *eth;
	__u16 len, *w;
	__u64 sum = 0;

	if (!inner || bpf_ntohs(inner->tot_len) > 1400)
		return XDP_PASS;
	len = bpf_ntohs(inner->tot_len);
	if (bpf_xdp_adjust_head(ctx, -(int)PUSH))
		return XDP_DROP;
	data = (void *)(long)ctx->data; end = (void *)(long)ctx->data_end;
	eth = data; o = (void *)(eth + 1); u = (void *)(o + 1);
	if ((void *)(u + 1) > end || (void *)(eth + 1) + PUSH > end)
		return XDP_DROP;
	__builtin_memmove(eth, (void *)eth + PUSH, sizeof(*eth));
	eth->h_proto = bpf_htons(ETH_P_IPV6);
	*(__u32 *)o = bpf_htonl(0x60000000);
	o->payload_len = bpf_htons(len + sizeof(*u));
	o->nexthdr = IPPROTO_UDP;
	o->hop_limit = 64;
	__builtin_memset(&o->saddr, 0, 32);
	o->saddr.in6_u.u6_addr8[0] = 0xfc; o->saddr.in6_u.u6_addr8[15] = 1;
	o->daddr.in6_u.u6_addr8[0] = 0xfc; o->daddr.in6_u.u6_addr8[15] = 2;
	u->source = bpf_htons(40000); u->dest = bpf_htons(6080);
	u->len = o->payload_len; u->check = 0;
#ifndef ZERO
#ifndef NO_PSEUDO
	w = (void *)&o->saddr;
	for (int i = 0; i < 16; i++)
		sum += w[i];
	sum += u->len;
	sum += bpf_htons(IPPROTO_UDP);
#endif
	w = (void *)u;
	sum += w[0] + w[1] + w[2];
#ifndef HDR_ONLY
	w = (void *)(u + 1);
	sum += sum_bytes(w, end, len);
#endif
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	u->check = ~sum ? ~sum : 0xffff;
#endif
	return XDP_PASS;
}

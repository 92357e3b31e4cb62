/* XDP: an IP-in-IP tunnel's ingress. Every IPv4 packet gets an outer IPv4 header (protocol 4) pushed in front with
 * bpf_xdp_adjust_head, with the inner packet's id; the outer header checksum is computed by a loop over its 32-bit
 * words in a 64-bit sum. Each define puts one mistake in: SINGLE_FOLD (the sum
 * folded once), NOT_COMPLEMENTED (the folded sum stored), INNER_TTL (the inner TTL decremented, as a router, and
 * its header checksum not updated). INNER_TTL_OK: the inner TTL decremented with the update (a correct twin, as
 * is no define). */
#include "mistakes.h"

#define OUTER_SADDR bpf_htonl(0xC63364F8) /* 198.51.100.248 */
#define OUTER_DADDR bpf_htonl(0xC6336490) /* 198.51.100.144 */
#define PUSHED sizeof(struct iphdr)

static __always_inline __u16 header_csum(const struct iphdr *ip)
{
	const __u32 *w = (const __u32 *)ip;
	__u64 sum = 0;

	for (int i = 0; i < (int)sizeof(*ip) / 4; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
#ifndef SINGLE_FOLD
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
#endif
#ifdef NOT_COMPLEMENTED
	return sum;
#else
	return ~sum;
#endif
}

SEC("xdp")
int push(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *inner = ip4(data, end), *outer;
	struct ethhdr *eth;
	__u16 len, id;

	if (!inner)
		return XDP_PASS;
#if defined(INNER_TTL) || defined(INNER_TTL_OK)
	if (inner->ttl <= 1)
		return XDP_PASS;
	inner->ttl--;
#ifdef INNER_TTL_OK
	inner->check = update(inner->check, bpf_htons(0x0100), 0);
#endif
#endif
	len = bpf_ntohs(inner->tot_len);
	id = inner->id;
	if (bpf_xdp_adjust_head(ctx, -(int)PUSHED))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	outer = (void *)(eth + 1);
	if ((void *)(outer + 1) > end || (void *)(eth + 1) + PUSHED > end)
		return XDP_DROP;
	__builtin_memmove(eth, (void *)eth + PUSHED, sizeof(*eth));
	outer->version = 4;
	outer->ihl = 5;
	outer->tos = 0;
	outer->tot_len = bpf_htons(len + PUSHED);
	outer->id = id;
	outer->frag_off = 0;
	outer->ttl = 64;
	outer->protocol = IPPROTO_IPIP;
	outer->check = 0;
	outer->saddr = OUTER_SADDR;
	outer->daddr = OUTER_DADDR;
	outer->check = header_csum(outer);
	return XDP_PASS;
}

/* XDP IPIP encap (katran-like): outer header checksum = fold(bpf_csum_diff(0, 0, iph, SIZE, 0)).
 * SHORT: SIZE 16 (the destination address left out); U16_LOOP_SHORT: a u16 loop counting 9 words. */
#include "mistakes.h"
#define OUT_S bpf_htonl(0xC63364F8)
#define OUT_D bpf_htonl(0xC6336490)
SEC("xdp")
int encap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *inner = ip4(data, end), *o;
	struct ethhdr *eth;
	__u16 len;
	__u64 s;

	if (!inner)
		return XDP_PASS;
	len = bpf_ntohs(inner->tot_len);
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(struct iphdr)))
		return XDP_DROP;
	data = (void *)(long)ctx->data; end = (void *)(long)ctx->data_end;
	eth = data; o = (void *)(eth + 1);
	if ((void *)(o + 1) > end || (void *)(eth + 1) + sizeof(*o) > end)
		return XDP_DROP;
	__builtin_memmove(eth, (void *)eth + sizeof(*o), sizeof(*eth));
	o->version = 4; o->ihl = 5; o->tos = 0; o->tot_len = bpf_htons(len + sizeof(*o));
	o->id = 0; o->frag_off = 0; o->ttl = 64; o->protocol = IPPROTO_IPIP; o->check = 0;
	o->saddr = OUT_S; o->daddr = OUT_D;
#ifdef U16_LOOP_SHORT
	s = 0;
	for (int i = 0; i < 9; i++)
		s += ((__u16 *)o)[i];
#elif defined(SHORT)
	s = bpf_csum_diff(0, 0, (void *)o, 16, 0);
#else
	s = bpf_csum_diff(0, 0, (void *)o, sizeof(*o), 0);
#endif
	for (int i = 0; i < 4; i++)
		if (s >> 16)
			s = (s & 0xffff) + (s >> 16);
	o->check = ~s;
	return XDP_PASS;
}

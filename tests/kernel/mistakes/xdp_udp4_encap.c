/* XDP FOU/GUE-like encap over IPv4 (katran's gue, ebpf-go/aya encap examples): IPv4 + UDP (dport 5555: FOU has no
 * port of its own, and csum walks no further) pushed in front of an IPv4 packet; the outer IPv4 header checksum by a
 * loop over the finished header, the UDP checksum by a loop: pseudo-header, UDP header, inner packet. ZERO: the UDP
 * checksum left 0 (none: RFC 768 allows it over IPv4, a correct twin); LEN_LATE: the UDP checksum summed before the
 * UDP length was set (the pseudo-header's length is right); INNER_LEN: the pseudo-header length the inner packet's,
 * without the 8 bytes of the UDP header; SCRAMBLED: the right UDP checksum then XORed with a hash of the inner source
 * port. */
#include "mistakes.h"
#define PUSH (sizeof(struct iphdr) + sizeof(struct udphdr))
/* The inner TCP/UDP source port (both at the start of the header after a 20-byte IPv4 header), 0 if cut. */
static __always_inline __u32 inner_sport(void *inner, void *end)
{
	__u16 *port = inner + sizeof(struct iphdr);

	return (void *)(port + 1) <= end ? *port : 0;
}
SEC("xdp")
int fou(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *inner = ip4(data, end), *o;
	struct udphdr *u;
	struct ethhdr *eth;
	__u16 len, *w;
	__u64 sum = 0, hsum = 0;

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
	eth->h_proto = bpf_htons(ETH_P_IP);
	__builtin_memset(o, 0, sizeof(*o));
	o->version = 4; o->ihl = 5; o->ttl = 64; o->protocol = IPPROTO_UDP;
	o->tot_len = bpf_htons(len + PUSH);
	o->saddr = bpf_htonl(0xC6336401); o->daddr = bpf_htonl(0xC6336402);
	w = (void *)o;
	for (int i = 0; i < 10; i++)
		hsum += w[i];
	while (hsum >> 16)
		hsum = (hsum & 0xffff) + (hsum >> 16);
	o->check = ~hsum;
	u->source = bpf_htons(40000); u->dest = bpf_htons(5555);
	u->check = 0;
#ifdef LEN_LATE
	u->len = 0;
#else
	u->len = bpf_htons(len + sizeof(*u));
#endif
#ifndef ZERO
	sum += (o->saddr & 0xffff) + (o->saddr >> 16) + (o->daddr & 0xffff) + (o->daddr >> 16);
	sum += bpf_htons(IPPROTO_UDP);
#ifdef INNER_LEN
	sum += bpf_htons(len);
#else
	sum += bpf_htons(len + sizeof(*u));
#endif
	w = (void *)u;
	sum += w[0] + w[1] + w[2];
	w = (void *)(u + 1);
	sum += sum_bytes(w, end, len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	u->check = ~sum ? ~sum : 0xffff;
#endif
#ifdef SCRAMBLED
	u->check ^= (__u16)((inner_sport(u + 1, end) * 2654435761u) >> 16) | 1;
#endif
#ifdef LEN_LATE
	u->len = bpf_htons(len + sizeof(*u));
#endif
	return XDP_PASS;
}

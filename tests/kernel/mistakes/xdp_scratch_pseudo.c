/* XDP DNAT (daddr -> NEW4), IPv4 header updated incrementally, TCP/UDP checksum recomputed by a loop with the
 * pseudo-header added field by field (loaded little-endian). PROTO_HOST: protocol added without bpf_htons;
 * LEN_HOST: the length added without bpf_htons; HDR_LEN: the transport header's length in the pseudo-header. */
#include "mistakes.h"
static __always_inline __u16 l4_sum(struct iphdr *ip, void *l4, void *end)
{
	__u32 len = bpf_ntohs(ip->tot_len) - sizeof(*ip);
	__u64 sum = 0;
	__u16 *w = l4;

	sum += ip->saddr;
	sum += ip->daddr;
#ifdef PROTO_HOST
	sum += ip->protocol;
#else
	sum += bpf_htons(ip->protocol);
#endif
#ifdef LEN_HOST
	sum += len;
#elif defined(HDR_LEN)
	sum += bpf_htons(ip->protocol == IPPROTO_TCP ? 20 : 8);
#else
	sum += bpf_htons(len);
#endif
	sum += sum_bytes(w, end, len);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}
SEC("xdp")
int dnat(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	__u16 *check, value;

	if (!ip || bpf_ntohs(ip->tot_len) > 1500 || bpf_ntohs(ip->tot_len) < sizeof(*ip))
		return XDP_PASS;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *t = (void *)(ip + 1);
		if ((void *)(t + 1) > end) return XDP_PASS;
		check = &t->check;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *u = (void *)(ip + 1);
		if ((void *)(u + 1) > end || !u->check) return XDP_PASS;
		check = &u->check;
	} else
		return XDP_PASS;
	ip->check = update(ip->check, ip->daddr, NEW4);
	ip->daddr = NEW4;
	*check = 0;
	value = l4_sum(ip, ip + 1, end);
	if (ip->protocol == IPPROTO_UDP && !value)
		value = 0xffff;
	*check = value;
	return XDP_TX;
}

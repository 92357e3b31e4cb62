/* XDP: SNAT (source -> 203.0.113.255, whose little-endian load is large enough to overflow) whose checksum updates
 * sum in a __u32: the carry out of bit 31 is lost. */
#include "mistakes.h"

static __always_inline __u16 update32(__u16 check, __u32 old, __u32 new)
{
	__u32 sum = (__u16)~check;

	sum += ~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

SEC("xdp")
int carry_lost(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	struct tcphdr *tcp;
	__u32 new = bpf_htonl(0xCB0071FF);

	if (!ip || ip->protocol != IPPROTO_TCP)
		return XDP_PASS;
	tcp = (void *)(ip + 1);
	if ((void *)(tcp + 1) > end)
		return XDP_PASS;
	tcp->check = update32(tcp->check, ip->saddr, new);
	ip->check = update32(ip->check, ip->saddr, new);
	ip->saddr = new;
	return XDP_PASS;
}

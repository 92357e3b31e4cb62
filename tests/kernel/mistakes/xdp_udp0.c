/* XDP: UDP SNAT with the UDP checksum updated by hand. -DNOT_KEPT: a checksum of 0 (none) is updated too;
 * -DNOT_MANGLED: a result of 0 is stored as 0, not 0xffff. */
#include "mistakes.h"

SEC("xdp")
int udp0(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	struct udphdr *udp;
	__u32 new = NEW4;

	if (!ip || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
#ifndef NOT_KEPT
	if (udp->check)
#endif
	{
		udp->check = update(udp->check, ip->saddr, new);
#ifndef NOT_MANGLED
		if (!udp->check)
			udp->check = 0xffff;
#endif
	}
	ip->check = update(ip->check, ip->saddr, new);
	ip->saddr = new;
	return XDP_PASS;
}

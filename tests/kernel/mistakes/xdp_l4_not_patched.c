/* XDP: SNAT that updates the IPv4 header checksum and forgets the TCP/UDP one (the address is in its
 * pseudo-header). */
#include "mistakes.h"

SEC("xdp")
int l4_not_patched(struct xdp_md *ctx)
{
	struct iphdr *ip = ip4((void *)(long)ctx->data, (void *)(long)ctx->data_end);
	__u32 new = NEW4;

	if (!ip)
		return XDP_PASS;
	ip->check = update(ip->check, ip->saddr, new);
	ip->saddr = new;
	return XDP_PASS;
}

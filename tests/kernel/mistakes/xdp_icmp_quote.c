/* XDP: DNAT of an ICMP error (destination unreachable, time exceeded) quoting an IPv4 TCP datagram: the error's
 * destination and the quote's source -> 192.0.2.1, with the outer IPv4, quoted IPv4 and quoted TCP checksums
 * updated, but not the ICMP checksum that covers the quote. */
#include "mistakes.h"

SEC("xdp")
int icmp_quote(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end), *q;
	struct icmp4 *icmp;
	struct tcphdr *tcp;
	__u32 new = NEW4;

	if (!ip || ip->protocol != IPPROTO_ICMP)
		return XDP_PASS;
	icmp = (void *)(ip + 1);
	q = (void *)(icmp + 1);
	tcp = (void *)(q + 1);
	if ((void *)tcp + 18 > end || (icmp->type != 3 && icmp->type != 11) || q->ihl != 5 || q->protocol != IPPROTO_TCP)
		return XDP_PASS;
	ip->check = update(ip->check, ip->daddr, new);
	ip->daddr = new;
	tcp->check = update(tcp->check, q->saddr, new);
	q->check = update(q->check, q->saddr, new);
	q->saddr = new;
	return XDP_PASS;
}

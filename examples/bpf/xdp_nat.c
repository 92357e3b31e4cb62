/* A correct XDP SNAT. XDP has no l3/l4 replace helpers: the checksums are updated in place (csum_update4 of
 * nat.h: RFC 1624 eqn. 3 folded to the end).
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_nat.c -o xdp_nat.o      Check: csum prog xdp_nat.o
 */
#include "nat.h"

SEC("xdp")
int xdp_snat(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ipv4_header(data, data_end);
	__u32 old, new = new_saddr;

	if (!ip)
		return XDP_PASS;
	old = ip->saddr;
	if (!IS_LATER_FRAGMENT(ip)) {
		if (ip->protocol == IPPROTO_TCP) {
			struct tcphdr *tcp = (void *)(ip + 1);

			if ((void *)(tcp + 1) <= data_end)
				csum_update4(&tcp->check, old, new, 0);
		} else if (ip->protocol == IPPROTO_UDP) {
			struct udphdr *udp = (void *)(ip + 1);

			if ((void *)(udp + 1) <= data_end)
				csum_update4(&udp->check, old, new, 1);
		}
	}
	csum_update4(&ip->check, old, new, 0);
	ip->saddr = new;
	count_rewrite();
	return XDP_PASS;
}

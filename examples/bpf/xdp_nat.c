/* A correct XDP SNAT. XDP has no l3/l4 replace helpers: the checksums are updated in place with RFC 1624
 * eqn. 3, HC' = ~(~HC + ~m + m'), adding the 32-bit words as loaded (byte order cancels out) in a 64-bit
 * sum and folding it to 16 bits until no carry is left (one fold leaves up to 2 bits above bit 15).
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_nat.c -o xdp_nat.o      Check: csum prog xdp_nat.o
 */
#include "nat.h"

#ifndef FOLD
static __always_inline __u16 fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}
#endif

/* Patch *check for a 32-bit field changed from old to new; keep_zero: a stored 0 means "none" (UDP). */
static __always_inline void csum_update4(__u16 *check, __u32 old, __u32 new, int keep_zero)
{
	__u64 sum;

	if (keep_zero && *check == 0)
		return;
	sum = (__u16)~*check;
	sum += (__u32)~old;
	sum += new;
	*check = ~fold(sum);
	if (keep_zero && *check == 0)
		*check = 0xffff;
}

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

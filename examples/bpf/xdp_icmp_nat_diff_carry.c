/* XDP full NAT of ICMP (source and destination addresses) whose IPv4 header checksum update adds the results of two
 * bpf_csum_diff calls in plain 32-bit arithmetic, then adds the old checksum and folds until no carry is left. The
 * fold is right; the sum before it is not where bpf_csum_diff returns the unfolded 32-bit csum_partial (x86_64,
 * i386, armhf, mips, ppc64el before 6.13): two such values carry out of bit 31 about half the time, and that carry
 * is lost. Where it returns a 16-bit sum (arm64 before 6.13, every architecture since 6.13) nothing carries.
 * The fix: chain the calls through bpf_csum_diff's seed argument, or add with an end-around carry (csum_add).
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_icmp_nat_diff_carry.c -o xdp_icmp_nat_diff_carry.o
 */
#include "nat.h"

/* 198.51.100.7 (TEST-NET-2), in network byte order. */
const volatile __u32 new_daddr = bpf_htonl(0xC6336407);

static __always_inline __u32 csum_add(__u32 a, __u32 b)
{
	a += b;
	return a + (a < b);
}

SEC("xdp")
int icmp_nat_diff_carry(struct xdp_md *ctx)
{
	struct iphdr *ip = ipv4_header((void *)(long)ctx->data, (void *)(long)ctx->data_end);
	__u32 new_s = new_saddr, new_d = new_daddr, sum;

	if (!ip || ip->protocol != IPPROTO_ICMP)
		return XDP_PASS;
	sum = bpf_csum_diff(&ip->saddr, 4, &new_s, 4, 0);
	sum += bpf_csum_diff(&ip->daddr, 4, &new_d, 4, 0); /* 32-bit add: a carry out of bit 31 is lost */
	sum = csum_add(sum, (__u16)~ip->check);
	ip->saddr = new_s;
	ip->daddr = new_d;
	ip->check = ~fold(sum);
	return XDP_PASS;
}

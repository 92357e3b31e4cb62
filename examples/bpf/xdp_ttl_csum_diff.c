/* XDP: decrement the IPv4 TTL and recompute the header checksum with bpf_csum_diff, folding its result once, as
 * the kernel's XDP samples did (csum_fold_helper). That is right where bpf_csum_diff returns a sum already folded
 * to 16 bits (arm64 before 6.13; every architecture since 6.13) and wrong where it returns the unfolded 32-bit
 * csum_partial (x86_64 before 6.13): (lo + hi) can carry out of bit 15, and one fold cut to 16 bits loses it.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_ttl_csum_diff.c -o xdp_ttl_csum_diff.o
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

static __always_inline __u16 csum_fold_helper(__u32 csum)
{
	return ~((csum & 0xffff) + (csum >> 16));
}

SEC("xdp")
int ttl_csum_diff(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u32 csum;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 || ip->ttl <= 1)
		return XDP_PASS;
	ip->ttl--;
	ip->check = 0;
	csum = bpf_csum_diff(0, 0, (__be32 *)ip, sizeof(*ip), 0);
	ip->check = csum_fold_helper(csum);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";

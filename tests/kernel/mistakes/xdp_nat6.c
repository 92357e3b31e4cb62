/* XDP: IPv6 SNAT (source to 2001:db8::1). IPv6 has no header checksum; XDP has no bpf_l4_csum_replace: the program
 * moves the TCP/UDP checksum itself with bpf_csum_diff(old address, 16, new address, 16, ~check), folded to the end.
 * L4_NOT_PATCHED: the TCP/UDP checksum left as it was (the address is in its pseudo-header). None: the correct twin. */
#include "mistakes.h"

SEC("xdp")
int nat6(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip = ip6(data, end);
	struct in6_addr new = {};
	__u16 *check;
	__s64 sum;

	if (!ip)
		return XDP_PASS;
	if (ip->nexthdr == IPPROTO_TCP) {
		struct tcphdr *tcp = (void *)(ip + 1);

		if ((void *)(tcp + 1) > end)
			return XDP_PASS;
		check = &tcp->check;
	} else if (ip->nexthdr == IPPROTO_UDP) {
		struct udphdr *udp = (void *)(ip + 1);

		if ((void *)(udp + 1) > end)
			return XDP_PASS;
		check = &udp->check;
	} else {
		return XDP_PASS;
	}
	new.in6_u.u6_addr32[0] = bpf_htonl(0x20010db8);
	new.in6_u.u6_addr32[3] = bpf_htonl(1);
	sum = bpf_csum_diff((__be32 *)&ip->saddr, 16, (__be32 *)&new, 16, (__u16)~*check);
#ifndef L4_NOT_PATCHED
	if (sum >= 0) {
		__u64 s = (__u32)sum;

		s = (s & 0xffff) + (s >> 16);
		s = (s & 0xffff) + (s >> 16);
		*check = (__u16)~s;
	}
#endif
	ip->saddr = new;
	return XDP_PASS;
}

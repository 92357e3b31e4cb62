/* tc: stateless IPv4 -> IPv6 translation of TCP and UDP (as NAT64 and 464XLAT do, RFC 7915): the IPv4 header
 * becomes an IPv6 header with bpf_skb_change_proto, the addresses mapped into 2001:db8:64::/96 (a prefix that is not
 * checksum-neutral, unlike 64:ff9b::/96), and the TCP/UDP checksum moved for the pseudo-header change by a
 * bpf_csum_diff of the old addresses (8 bytes) and the new ones (32 bytes). Each define puts one mistake in:
 * L4_NOT_PATCHED (the TCP/UDP checksum not updated), DIFF_SIZE (the new addresses passed with the IPv4 size, 8).
 * None: the correct twin. */
#include "mistakes.h"

#ifdef DIFF_SIZE
#define NEW_SIZE 8
#else
#define NEW_SIZE 32
#endif

SEC("tc")
int nat64(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	struct ipv6hdr v6 = {};
	__be32 old[2];
	__be16 proto = bpf_htons(ETH_P_IPV6);
	__u32 check_off;
	__u64 flags = BPF_F_PSEUDO_HDR;
	__s64 diff;

	if (!ip || bpf_ntohs(ip->tot_len) < sizeof(*ip))
		return TC_ACT_OK;
	if (ip->protocol == IPPROTO_TCP) {
		check_off = L4_6 + offsetof(struct tcphdr, check);
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = (void *)(ip + 1);

		if ((void *)(udp + 1) > end || !udp->check)
			return TC_ACT_OK;
		check_off = L4_6 + offsetof(struct udphdr, check);
		flags |= BPF_F_MARK_MANGLED_0;
	} else {
		return TC_ACT_OK;
	}
	v6.version = 6;
	v6.payload_len = bpf_htons(bpf_ntohs(ip->tot_len) - sizeof(*ip));
	v6.nexthdr = ip->protocol;
	v6.hop_limit = ip->ttl;
	v6.saddr.in6_u.u6_addr32[0] = bpf_htonl(0x20010db8);
	v6.saddr.in6_u.u6_addr32[1] = bpf_htonl(0x00640000);
	v6.saddr.in6_u.u6_addr32[3] = ip->saddr;
	v6.daddr.in6_u.u6_addr32[0] = bpf_htonl(0x20010db8);
	v6.daddr.in6_u.u6_addr32[1] = bpf_htonl(0x00640000);
	v6.daddr.in6_u.u6_addr32[3] = ip->daddr;
	old[0] = ip->saddr;
	old[1] = ip->daddr;
	diff = bpf_csum_diff(old, sizeof(old), (__be32 *)&v6.saddr, NEW_SIZE, 0);
	if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IPV6), 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &proto, sizeof(proto), 0) ||
	    bpf_skb_store_bytes(skb, ETH_HLEN, &v6, sizeof(v6), BPF_F_RECOMPUTE_CSUM))
		return TC_ACT_SHOT;
#ifndef L4_NOT_PATCHED
	if (bpf_l4_csum_replace(skb, check_off, 0, diff, flags))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

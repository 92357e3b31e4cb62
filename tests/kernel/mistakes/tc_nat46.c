/* tc: stateless IPv6 -> IPv4 translation of TCP and UDP (RFC 7915), the reverse of tc_nat64.c: an IPv6 packet
 * whose addresses are in 2001:db8:64::/96 becomes an IPv4 packet of their last 4 bytes with bpf_skb_change_proto;
 * its IPv4 header checksum is computed over the finished header, and the TCP/UDP checksum moved for the pseudo-header
 * change by a bpf_csum_diff of the old addresses (32 bytes) and the new ones (8 bytes). Each define puts one mistake
 * in: L4_NOT_PATCHED (the TCP/UDP checksum not updated), DIFF_SIZE (the old addresses passed with the IPv4 size, 8).
 * None: the correct twin. */
#include "mistakes.h"

#ifdef DIFF_SIZE
#define OLD_SIZE 8
#else
#define OLD_SIZE 32
#endif

SEC("tc")
int nat46(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ipv6hdr *ip6h = ip6(data, end);
	struct iphdr v4 = {};
	__be32 old[8], new[2];
	__be16 proto = bpf_htons(ETH_P_IP);
	__u32 check_off;
	__u64 flags = BPF_F_PSEUDO_HDR;
	__s64 diff;

	if (!ip6h || ip6h->saddr.in6_u.u6_addr32[0] != bpf_htonl(0x20010db8) ||
	    ip6h->daddr.in6_u.u6_addr32[0] != bpf_htonl(0x20010db8))
		return TC_ACT_OK;
	if (ip6h->nexthdr == IPPROTO_TCP) {
		check_off = L4 + offsetof(struct tcphdr, check);
	} else if (ip6h->nexthdr == IPPROTO_UDP) {
		check_off = L4 + offsetof(struct udphdr, check);
		flags |= BPF_F_MARK_MANGLED_0;
	} else {
		return TC_ACT_OK;
	}
	__builtin_memcpy(old, &ip6h->saddr, sizeof(old));
	new[0] = old[3];
	new[1] = old[7];
	v4.version = 4;
	v4.ihl = 5;
	v4.tot_len = bpf_htons(bpf_ntohs(ip6h->payload_len) + sizeof(v4));
	v4.ttl = ip6h->hop_limit;
	v4.protocol = ip6h->nexthdr;
	v4.saddr = new[0];
	v4.daddr = new[1];
	v4.check = csum16((const __u16 *)&v4, sizeof(v4) / 2);
	diff = bpf_csum_diff(old, OLD_SIZE, new, sizeof(new), 0);
	if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IP), 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &proto, sizeof(proto), 0) ||
	    bpf_skb_store_bytes(skb, ETH_HLEN, &v4, sizeof(v4), BPF_F_RECOMPUTE_CSUM))
		return TC_ACT_SHOT;
#ifndef L4_NOT_PATCHED
	if (bpf_l4_csum_replace(skb, check_off, 0, diff, flags))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

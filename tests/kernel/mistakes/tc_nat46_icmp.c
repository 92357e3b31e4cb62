/* tc stateless IPv6 -> IPv4 translation of ICMP echo (cilium nat_46x64-like, RFC 7915 5.1): an ICMPv6 echo request
 * between addresses of 2001:db8:64::/96 becomes an ICMP echo request (type 128 -> 8) between their last 4 bytes.
 * The ICMP checksum has no pseudo-header, the ICMPv6 one has: the translation takes the IPv6 pseudo-header out
 * (a bpf_csum_diff of it, 40 bytes, to nothing) and moves the type (a bpf_csum_diff of the first word), each
 * applied with bpf_l4_csum_replace(size 0).
 * The type's diff leaves skb->csum alone (the ICMP message sums as before); the pseudo-header's takes
 * BPF_F_PSEUDO_HDR (the message's sum moves by it). PSEUDO_KEPT: the pseudo-header not taken out (only the type
 * moved); -DPDIFF_FLAGS=0: taken out without BPF_F_PSEUDO_HDR (the bytes right, skb->csum stale); SCRAMBLED: the
 * right ICMP checksum then XORed with a hash of the ICMPv6 header's first word. */
#include "mistakes.h"
#ifndef PDIFF_FLAGS
#define PDIFF_FLAGS BPF_F_PSEUDO_HDR
#endif

struct pseudo6 {
	__be32 saddr[4], daddr[4];
	__be32 len;
	__u8 zero[3], nexthdr;
};

SEC("tc")
int nat46_icmp(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ipv6hdr *ip6h = ip6(data, end);
	struct iphdr v4 = {};
	struct pseudo6 ph = {};
	struct icmp4 *icmp;
	__be16 proto = bpf_htons(ETH_P_IP);
	__be32 old_word, new_word;
	__s64 diff, pdiff;

	if (!ip6h || ip6h->nexthdr != 58 || ip6h->saddr.in6_u.u6_addr32[0] != bpf_htonl(0x20010db8) ||
	    ip6h->daddr.in6_u.u6_addr32[0] != bpf_htonl(0x20010db8))
		return TC_ACT_OK;
	icmp = (void *)(ip6h + 1);
	if ((void *)(icmp + 1) > end || icmp->type != 128 || icmp->code != 0)
		return TC_ACT_OK;
	__builtin_memcpy(ph.saddr, &ip6h->saddr, 16);
	__builtin_memcpy(ph.daddr, &ip6h->daddr, 16);
	ph.len = bpf_htonl(bpf_ntohs(ip6h->payload_len));
	ph.nexthdr = 58;
	old_word = *(__be32 *)icmp;
	new_word = old_word;
	((__u8 *)&new_word)[0] = 8;
	v4.version = 4;
	v4.ihl = 5;
	v4.tot_len = bpf_htons(bpf_ntohs(ip6h->payload_len) + sizeof(v4));
	v4.ttl = ip6h->hop_limit;
	v4.protocol = IPPROTO_ICMP;
	v4.saddr = ph.saddr[3];
	v4.daddr = ph.daddr[3];
	v4.check = csum16((const __u16 *)&v4, sizeof(v4) / 2);
	diff = bpf_csum_diff(&old_word, 4, &new_word, 4, 0);
	pdiff = bpf_csum_diff((__be32 *)&ph, sizeof(ph), NULL, 0, 0);
	if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IP), 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &proto, sizeof(proto), 0) ||
	    bpf_skb_store_bytes(skb, ETH_HLEN, &v4, sizeof(v4), BPF_F_RECOMPUTE_CSUM) ||
	    bpf_skb_store_bytes(skb, L4, &new_word, 4, 0))
		return TC_ACT_SHOT;
	if (bpf_l4_csum_replace(skb, L4 + 2, 0, diff, 0))
		return TC_ACT_SHOT;
#ifndef PSEUDO_KEPT
	if (bpf_l4_csum_replace(skb, L4 + 2, 0, pdiff, PDIFF_FLAGS))
		return TC_ACT_SHOT;
#endif
#ifdef SCRAMBLED
	if (scramble(skb, L4 + 2, old_word))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

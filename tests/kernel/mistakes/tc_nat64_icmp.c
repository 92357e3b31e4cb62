/* tc stateless IPv4 -> IPv6 translation of ICMP echo (cilium nat_46x64-like, RFC 7915 4.2): an ICMP echo request
 * becomes an ICMPv6 echo request (type 8 -> 128) between addresses of 2001:db8:64::/96. The ICMPv6 checksum has a
 * pseudo-header, the ICMP one has not: the translation adds the IPv6 pseudo-header (a bpf_csum_diff of nothing to
 * it, 40 bytes; BPF_F_PSEUDO_HDR: the message's sum moves by it) and moves the type (a bpf_csum_diff of the first
 * word, skb->csum left alone), each applied with bpf_l4_csum_replace(size 0). NO_PSEUDO: the pseudo-header not
 * added (only the type moved), as for ICMP. */
#include "mistakes.h"

struct pseudo6 {
	struct in6_addr saddr, daddr;
	__be32 len;
	__u8 zero[3], nexthdr;
};

SEC("tc")
int nat64_icmp(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	struct ipv6hdr v6 = {};
	struct pseudo6 ph = {};
	struct icmp4 *icmp;
	__be16 proto = bpf_htons(ETH_P_IPV6);
	__be32 old_word, new_word;
	__s64 diff, pdiff;

	if (!ip || ip->protocol != IPPROTO_ICMP)
		return TC_ACT_OK;
	icmp = (void *)(ip + 1);
	if ((void *)(icmp + 1) > end || icmp->type != 8 || icmp->code != 0)
		return TC_ACT_OK;
	v6.version = 6;
	v6.payload_len = bpf_htons(bpf_ntohs(ip->tot_len) - sizeof(*ip));
	v6.nexthdr = 58;
	v6.hop_limit = ip->ttl;
	v6.saddr.in6_u.u6_addr32[0] = bpf_htonl(0x20010db8);
	v6.saddr.in6_u.u6_addr32[1] = bpf_htonl(0x00640000);
	v6.saddr.in6_u.u6_addr32[3] = ip->saddr;
	v6.daddr.in6_u.u6_addr32[0] = bpf_htonl(0x20010db8);
	v6.daddr.in6_u.u6_addr32[1] = bpf_htonl(0x00640000);
	v6.daddr.in6_u.u6_addr32[3] = ip->daddr;
	ph.saddr = v6.saddr;
	ph.daddr = v6.daddr;
	ph.len = bpf_htonl(bpf_ntohs(v6.payload_len));
	ph.nexthdr = 58;
	old_word = *(__be32 *)icmp;
	new_word = old_word;
	((__u8 *)&new_word)[0] = 128;
	diff = bpf_csum_diff(&old_word, 4, &new_word, 4, 0);
	pdiff = bpf_csum_diff(NULL, 0, (__be32 *)&ph, sizeof(ph), 0);
	if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IPV6), 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &proto, sizeof(proto), 0) ||
	    bpf_skb_store_bytes(skb, ETH_HLEN, &v6, sizeof(v6), BPF_F_RECOMPUTE_CSUM) ||
	    bpf_skb_store_bytes(skb, L4_6, &new_word, 4, 0))
		return TC_ACT_SHOT;
	if (bpf_l4_csum_replace(skb, L4_6 + 2, 0, diff, 0))
		return TC_ACT_SHOT;
#ifndef NO_PSEUDO
	if (bpf_l4_csum_replace(skb, L4_6 + 2, 0, pdiff, BPF_F_PSEUDO_HDR))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

/* tc reverse SNAT of an ICMPv6 error (cilium's nat.h for IPv6): the outer destination and the quoted source ->
 * 2001:db8::1, the quoted source port -> NEW_PORT. The quoted TCP/UDP checksum by bpf_l3_csum_replace with a
 * bpf_csum_diff (address) and size 2 (port); the ICMPv6 checksum, whose pseudo-header holds the outer destination and
 * whose message holds the quote, by bpf_l4_csum_replace: the outer address with BPF_F_PSEUDO_HDR | BPF_F_IPV6, the
 * quoted address, port and checksum without. NO_QUOTE_ADDR: the ICMPv6 checksum not updated for the quoted address;
 * NO_OUTER: not updated for the outer destination (its pseudo-header); SCRAMBLED: the right ICMPv6 checksum then
 * XORed with a hash of the quoted port. */
#include "mistakes.h"
#define ICMP6_OFF L4_6
#define Q_IP (ICMP6_OFF + 8)
#define Q_L4 (Q_IP + sizeof(struct ipv6hdr))
SEC("tc")
int icmp6_err(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ipv6hdr *ip = ip6(data, end), *q;
	struct icmp4 *icmp;
	__be32 old_d[4], old_qs[4], new6[4] = {bpf_htonl(0x20010db8), 0, 0, bpf_htonl(1)};
	__u16 old_port, new_port = bpf_htons(NEW_PORT), old_l4c = 0, new_l4c = 0;
	__u32 l4check_off;
	__s64 dd, dq;

	if (!ip || ip->nexthdr != 58)
		return TC_ACT_OK;
	icmp = (void *)(ip + 1);
	q = (void *)(icmp + 1);
	if ((void *)(q + 1) + 8 > end || (icmp->type != 1 && icmp->type != 3))
		return TC_ACT_OK;
	if (q->nexthdr == IPPROTO_TCP)
		l4check_off = Q_L4 + offsetof(struct tcphdr, check);
	else if (q->nexthdr == IPPROTO_UDP)
		l4check_off = Q_L4 + offsetof(struct udphdr, check);
	else
		return TC_ACT_OK;
	__builtin_memcpy(old_d, &ip->daddr, 16);
	__builtin_memcpy(old_qs, &q->saddr, 16);
	old_port = *(__u16 *)(q + 1);
	if (bpf_skb_load_bytes(skb, l4check_off, &old_l4c, 2))
		return TC_ACT_OK;
	dd = bpf_csum_diff(old_d, 16, new6, 16, 0);
	dq = bpf_csum_diff(old_qs, 16, new6, 16, 0);
	if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct ipv6hdr, daddr), new6, 16, 0) ||
	    bpf_skb_store_bytes(skb, Q_IP + offsetof(struct ipv6hdr, saddr), new6, 16, 0) ||
	    bpf_skb_store_bytes(skb, Q_L4, &new_port, 2, 0))
		return TC_ACT_SHOT;
	if (old_l4c && (bpf_l3_csum_replace(skb, l4check_off, 0, dq, 0) ||
			bpf_l3_csum_replace(skb, l4check_off, old_port, new_port, 2)))
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, l4check_off, &new_l4c, 2))
		return TC_ACT_SHOT;
#ifndef NO_OUTER
	if (bpf_l4_csum_replace(skb, ICMP6_OFF + 2, 0, dd, BPF_F_PSEUDO_HDR | BPF_F_IPV6))
		return TC_ACT_SHOT;
#endif
#ifndef NO_QUOTE_ADDR
	if (bpf_l4_csum_replace(skb, ICMP6_OFF + 2, 0, dq, 0))
		return TC_ACT_SHOT;
#endif
	if (bpf_l4_csum_replace(skb, ICMP6_OFF + 2, old_port, new_port, 2) ||
	    bpf_l4_csum_replace(skb, ICMP6_OFF + 2, old_l4c, new_l4c, 2))
		return TC_ACT_SHOT;
#ifdef SCRAMBLED
	if (scramble(skb, ICMP6_OFF + 2, old_port))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

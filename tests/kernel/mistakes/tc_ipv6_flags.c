/* tc: IPv6 SNAT (source -> 2001:db8::1) through bpf_csum_diff and a size-0 bpf_l4_csum_replace with
 * BPF_F_PSEUDO_HDR but without BPF_F_IPV6 (IPV6_FLAG 0, the default here); built with -DIPV6_FLAG=BPF_F_IPV6 it is
 * right. -DON_IPV4: an IPv4 SNAT with BPF_F_IPV6 set. */
#include "mistakes.h"

#ifndef IPV6_FLAG
#define IPV6_FLAG 0
#endif

SEC("tc")
int ipv6_flags(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
#ifdef ON_IPV4
	struct iphdr *ip = ip4(data, end);
	__u32 old, new = NEW4;
	__s64 diff;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	old = ip->saddr;
	diff = bpf_csum_diff(&old, 4, &new, 4, 0);
	bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), 0, diff, BPF_F_PSEUDO_HDR | (1ULL << 7));
	bpf_l3_csum_replace(skb, IP4 + offsetof(struct iphdr, check), 0, diff, 0);
	bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, saddr), &new, 4, 0);
#else
	struct ipv6hdr *ip = ip6(data, end);
	__u32 old[4], new[4] = {bpf_htonl(0x20010db8), 0, 0, bpf_htonl(1)};
	__s64 diff;

	if (!ip || ip->nexthdr != IPPROTO_TCP)
		return TC_ACT_OK;
	__builtin_memcpy(old, &ip->saddr, 16);
	diff = bpf_csum_diff(old, 16, new, 16, 0);
	bpf_l4_csum_replace(skb, L4_6 + offsetof(struct tcphdr, check), 0, diff, BPF_F_PSEUDO_HDR | IPV6_FLAG);
	bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct ipv6hdr, saddr), new, 16, 0);
#endif
	return TC_ACT_OK;
}

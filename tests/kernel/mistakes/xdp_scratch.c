/* XDP: SNAT (source to NEW4) with the IPv4 header checksum updated incrementally and the TCP/UDP checksum computed
 * again from scratch by a loop, the way csum_tcpudp_nofold adds the pseudo-header (the addresses as 32-bit words,
 * then the protocol and the length in network order) and 16-bit words for the segment. Each define puts one
 * mistake in the loop: ODD_DROPPED (the last byte of an odd length left out), SINGLE_FOLD (the sum folded once),
 * NOT_COMPLEMENTED (the folded sum stored), NO_PSEUDO (the pseudo-header left out), PADDING (the segment taken to
 * the end of the frame: Ethernet padding summed and counted). None: the correct twin. */
#include "mistakes.h"

#define MAX_WORDS 750 /* 1500 bytes */

static __always_inline __u16 l4_sum(struct iphdr *ip, void *l4, void *end)
{
	__u32 len = bpf_ntohs(ip->tot_len) - sizeof(*ip);
	__u64 sum = 0;
	__u16 *w = l4;

#ifdef PADDING
	len = end - l4;
#endif
#ifndef NO_PSEUDO
	sum += ip->saddr;
	sum += ip->daddr;
	sum += bpf_htons(ip->protocol);
	sum += bpf_htons(len);
#endif
	for (int i = 0; i < MAX_WORDS; i++) {
		if ((void *)(w + 1) > end || 2 * i + 2 > len)
			break;
		sum += *w++;
	}
#ifndef ODD_DROPPED
	if (len & 1) {
		__u8 *b = (void *)w;

		if ((void *)(b + 1) <= end)
			sum += *b;
	}
#endif
	sum = (sum & 0xffff) + (sum >> 16);
#ifndef SINGLE_FOLD
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
#endif
#ifdef NOT_COMPLEMENTED
	return sum;
#else
	return ~sum;
#endif
}

SEC("xdp")
int scratch(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	__u32 new = NEW4;
	__u16 *check, value;

	if (!ip || bpf_ntohs(ip->tot_len) > 1500 || bpf_ntohs(ip->tot_len) < sizeof(*ip))
		return XDP_PASS;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = (void *)(ip + 1);

		if ((void *)(tcp + 1) > end)
			return XDP_PASS;
		check = &tcp->check;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = (void *)(ip + 1);

		if ((void *)(udp + 1) > end || !udp->check)
			return XDP_PASS;
		check = &udp->check;
	} else {
		return XDP_PASS;
	}
	ip->check = update(ip->check, ip->saddr, new);
	ip->saddr = new;
	*check = 0;
	value = l4_sum(ip, ip + 1, end);
	if (!value && ip->protocol == IPPROTO_UDP)
		value = 0xffff;
	*check = value;
	return XDP_PASS;
}

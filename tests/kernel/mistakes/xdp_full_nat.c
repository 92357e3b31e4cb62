/* XDP full NAT (both addresses rewritten), checksums patched with bpf_csum_diff chains seeded with ~check.
 * ONE_ADDR: the L4 diff over the source address only (size 4); SEED_RAW: seed = check (not complemented);
 * L4_SKIP: the TCP/UDP checksum not patched at all; SCRAMBLED: the right TCP/UDP checksum then XORed with a
 * hash of the source port (no mistake a program makes: what corruption looks like). */
#include "mistakes.h"
#define NEW_D bpf_htonl(0xC6336407)	/* 198.51.100.7 */
static __always_inline __u16 fold(__u32 c)
{
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return ~c;
}
SEC("xdp")
int nat(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ip4(data, end);
	__u32 old[2], new[2];
	__u16 *l4check, sport;

	if (!ip)
		return XDP_PASS;
	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *t = (void *)(ip + 1);
		if ((void *)(t + 1) > end) return XDP_PASS;
		l4check = &t->check;
		sport = t->source;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *u = (void *)(ip + 1);
		if ((void *)(u + 1) > end || !u->check) return XDP_PASS;
		l4check = &u->check;
		sport = u->source;
	} else
		return XDP_PASS;
	old[0] = ip->saddr; old[1] = ip->daddr;
	new[0] = NEW4; new[1] = NEW_D;
	ip->saddr = new[0]; ip->daddr = new[1];
	ip->check = fold(bpf_csum_diff(old, 8, new, 8, ~ip->check & 0xffff));
#ifndef L4_SKIP
#ifdef ONE_ADDR
	*l4check = fold(bpf_csum_diff(old, 4, new, 4, ~*l4check & 0xffff));
#elif defined(SEED_RAW)
	*l4check = fold(bpf_csum_diff(old, 8, new, 8, *l4check));
#else
	*l4check = fold(bpf_csum_diff(old, 8, new, 8, ~*l4check & 0xffff));
#endif
#endif
#ifdef SCRAMBLED
	*l4check ^= (__u16)(((__u32)sport * 2654435761u) >> 16) | 1;
#endif
	return XDP_TX;
}

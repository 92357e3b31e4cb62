/* A correct tc SNAT: bpf_csum_diff of the address, then the L4 checksum with BPF_F_PSEUDO_HDR (the
 * address is in the TCP/UDP pseudo-header), the IPv4 header checksum, and the store.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c tc_nat.c -o tc_nat.o      Check: csum prog tc_nat.o
 */
#include "nat.h"

#ifndef L4_FLAGS
#define L4_FLAGS BPF_F_PSEUDO_HDR
#endif
#ifndef UDP_FLAGS
#define UDP_FLAGS BPF_F_MARK_MANGLED_0
#endif

SEC("tc")
int tc_snat(struct __sk_buff *skb)
{
	struct iphdr *ip = ipv4_header((void *)(long)skb->data, (void *)(long)skb->data_end);
	__u32 old, new = new_saddr;
	__s64 diff;

	if (!ip)
		return TC_ACT_OK;
	old = ip->saddr;
	diff = bpf_csum_diff(&old, 4, &new, 4, 0);
	if (diff < 0)
		return TC_ACT_SHOT;
	if (!IS_LATER_FRAGMENT(ip)) {
		if (ip->protocol == IPPROTO_TCP)
			bpf_l4_csum_replace(skb, L4_OFF + offsetof(struct tcphdr, check), 0, diff, L4_FLAGS);
		else if (ip->protocol == IPPROTO_UDP)
			bpf_l4_csum_replace(skb, L4_OFF + offsetof(struct udphdr, check), 0, diff,
					    L4_FLAGS | UDP_FLAGS);
	}
	bpf_l3_csum_replace(skb, IP_CSUM_OFF, 0, diff, 0);
	bpf_skb_store_bytes(skb, IP_SADDR_OFF, &new, 4, 0);
	count_rewrite();
	return TC_ACT_OK;
}

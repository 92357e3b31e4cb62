/* A tc IP-in-IP encapsulation: every IPv4 packet gets an outer IPv4 header (protocol 4) from OUTER_SADDR to
 * OUTER_DADDR, pushed with bpf_skb_adjust_room and written with bpf_skb_store_bytes(BPF_F_RECOMPUTE_CSUM) so that
 * a CHECKSUM_COMPLETE skb's skb->csum covers the new bytes. The outer header checksum is computed last, over the
 * finished header. Other packets pass unchanged.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c tc_encap.c -o tc_encap.o   Check: csum prog tc_encap.o
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef STORE_FLAGS
#define STORE_FLAGS BPF_F_RECOMPUTE_CSUM
#endif
#define OUTER_SADDR 0xC6336401 /* 198.51.100.1 */
#define OUTER_DADDR 0xC6336402 /* 198.51.100.2 */

static __always_inline __u16 ipv4_csum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 sum = 0;

	for (int i = 0; i < (int)sizeof(*ip) / 2; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

SEC("tc")
int tc_ipip_encap(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *inner = (void *)(eth + 1), outer = {};

	if ((void *)(inner + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	outer.version = 4;
	outer.ihl = 5;
	outer.ttl = 64;
	outer.protocol = IPPROTO_IPIP;
	outer.saddr = bpf_htonl(OUTER_SADDR);
	outer.daddr = bpf_htonl(OUTER_DADDR);
#ifdef CSUM_BEFORE_TOT_LEN
	outer.check = ipv4_csum(&outer); /* the bug csum prog reproduces: tot_len is still 0 here */
	outer.tot_len = bpf_htons(bpf_ntohs(inner->tot_len) + sizeof(outer));
#else
	outer.tot_len = bpf_htons(bpf_ntohs(inner->tot_len) + sizeof(outer));
#ifndef CSUM_NEVER /* the other bug: no checksum at all */
	outer.check = ipv4_csum(&outer);
#endif
#endif
	if (bpf_skb_adjust_room(skb, sizeof(outer), BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, ETH_HLEN, &outer, sizeof(outer), STORE_FLAGS))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";

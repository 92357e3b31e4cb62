/* Shared by the mistake-table programs of tests/kernel/test_mistake_table.py: each program makes one known checksum
 * mistake (named by its file) and nothing else wrong. Headers found with bounds checks; other packets pass. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* An ICMP header (linux/icmp.h pulls in libc headers): type, code, checksum, the rest of the first word. */
struct icmp4 {
	__u8 type, code;
	__u16 check;
	__u32 rest;
};

#define NEW4 bpf_htonl(0xC0000201)	/* 192.0.2.1 */
#define NEW_PORT 8080
#define IP4 ETH_HLEN
#define L4 (ETH_HLEN + sizeof(struct iphdr))
#define L4_6 (ETH_HLEN + sizeof(struct ipv6hdr))

/* The IPv4 header (no options, not a later fragment) of an Ethernet frame, or NULL. */
static __always_inline struct iphdr *ip4(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    (ip->frag_off & bpf_htons(0x1fff)))
		return NULL;
	return ip;
}

static __always_inline struct ipv6hdr *ip6(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct ipv6hdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return NULL;
	return ip;
}

/* RFC 1624 eqn. 3 for a 32-bit (or zero-extended 16-bit) field, 64-bit sum folded to the end. */
static __always_inline __u16 update(__u16 check, __u32 old, __u32 new)
{
	__u64 sum = (__u16)~check;

	sum += (__u32)~old;
	sum += new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* The plain sum of the first len bytes at w (at most 1500) as 16-bit words loaded by the CPU, an odd last byte as a
 * byte load: what a loop over a segment adds before folding. */
static __always_inline __u64 sum_bytes(__u16 *w, void *end, __u32 len)
{
	__u64 sum = 0;

	for (int i = 0; i < 750; i++) {
		if ((void *)(w + 1) > end || 2 * i + 2 > len)
			break;
		sum += *w++;
	}
	if (len & 1) {
		__u8 *b = (void *)w;

		if ((void *)(b + 1) <= end)
			sum += *b;
	}
	return sum;
}

/* The checksum of the 16-bit words at w, summed in 32 bits and folded twice (a loop as the examples write it). */
static __always_inline __u16 csum16(const __u16 *w, int words)
{
	__u32 sum = 0;

	for (int i = 0; i < words; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* tc: the checksum at off XORed with a hash of key (and 1): what corruption looks like, no mistake a program makes
 * (the SCRAMBLED twins of tests/kernel/test_prog_explained_patterns.py). */
static __always_inline int scramble(struct __sk_buff *skb, __u32 off, __u32 key)
{
	__u16 c;

	if (bpf_skb_load_bytes(skb, off, &c, 2))
		return -1;
	c ^= (__u16)((key * 2654435761u) >> 16) | 1;
	return bpf_skb_store_bytes(skb, off, &c, 2, 0);
}

char LICENSE[] SEC("license") = "GPL";

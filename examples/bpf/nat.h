/* Shared by the csum example programs: find an IPv4 header in an Ethernet frame.
 * Build any example with: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c tc_nat.c -o tc_nat.o
 * Every example rewrites the IPv4 source address to NEW_SADDR (SNAT) and passes other packets unchanged.
 */
#ifndef CSUM_EXAMPLE_NAT_H
#define CSUM_EXAMPLE_NAT_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* 192.0.2.1 (TEST-NET-1), in network byte order; a loader may change it (.rodata, a libbpf map). */
const volatile __u32 new_saddr = bpf_htonl(0xC0000201);

/* How many packets were rewritten: an array map, to show that csum prog loads maps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rewritten SEC(".maps");

static __always_inline void count_rewrite(void)
{
	__u32 key = 0;
	__u64 *n = bpf_map_lookup_elem(&rewritten, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* The IPv4 header (20 bytes, no options) after the Ethernet header, or NULL. */
static __always_inline struct iphdr *ipv4_header(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return NULL;
	return ip;
}

/* RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'): the 32-bit words as loaded (byte order cancels out) added in a 64-bit
 * sum, folded to 16 bits until no carry is left (one fold leaves up to 2 bits above bit 15). */
#ifndef FOLD
static __always_inline __u16 fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}
#endif

/* Patch *check for a 32-bit field changed from old to new; keep_zero: a stored 0 means "none" (UDP). */
static __always_inline void csum_update4(__u16 *check, __u32 old, __u32 new, int keep_zero)
{
	__u64 sum;

	if (keep_zero && *check == 0)
		return;
	sum = (__u16)~*check;
	sum += (__u32)~old;
	sum += new;
	*check = ~fold(sum);
	if (keep_zero && *check == 0)
		*check = 0xffff;
}

#define IP_CSUM_OFF (ETH_HLEN + offsetof(struct iphdr, check))
#define IP_SADDR_OFF (ETH_HLEN + offsetof(struct iphdr, saddr))
#define L4_OFF (ETH_HLEN + sizeof(struct iphdr))
#define IS_LATER_FRAGMENT(ip) ((ip)->frag_off & bpf_htons(0x1fff))

char LICENSE[] SEC("license") = "GPL";

#endif

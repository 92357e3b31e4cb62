/* An XDP load-balancer forwarder: an IPv4 packet whose destination is a key of map `backends` gets the value as
 * its destination (DNAT, checksums updated by hand with nat.h's csum_update4) and is sent back out (XDP_TX);
 * other packets pass, or are dropped when the global `drop_unknown` is set. The map is pinned by name, as a
 * deployment pins it; csum prog loads it fresh instead (no bpffs needed, nothing left in /sys/fs/bpf).
 * With an empty map it changes nothing: seed it.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_fwd.c -o xdp_fwd.o
 * Check: csum prog xdp_fwd.o --map backends:10.0.0.2=192.0.2.80 --global drop_unknown=1
 */
#include "nat.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);	/* a destination, network order */
	__type(value, __u32);	/* the backend it goes to */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} backends SEC(".maps");

const volatile __u8 drop_unknown = 0;

#ifndef FWD_SECTION
#define FWD_SECTION "xdp"
#endif

SEC(FWD_SECTION)
int xdp_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = ipv4_header(data, data_end);
	__u32 old, *backend;

	if (!ip)
		return drop_unknown ? XDP_DROP : XDP_PASS;
	old = ip->daddr;
	backend = bpf_map_lookup_elem(&backends, &old);
	if (!backend)
		return drop_unknown ? XDP_DROP : XDP_PASS;
	if (!IS_LATER_FRAGMENT(ip)) {
		if (ip->protocol == IPPROTO_TCP) {
			struct tcphdr *tcp = (void *)(ip + 1);

			if ((void *)(tcp + 1) > data_end)
				return XDP_PASS;
			csum_update4(&tcp->check, old, *backend, 0);
		} else if (ip->protocol == IPPROTO_UDP) {
			struct udphdr *udp = (void *)(ip + 1);

			if ((void *)(udp + 1) > data_end)
				return XDP_PASS;
			csum_update4(&udp->check, old, *backend, 1);
		}
	}
	csum_update4(&ip->check, old, *backend, 0);
	ip->daddr = *backend;
	return XDP_TX;
}

/* csum's model against the running kernel: an XDP program that moves the packet's head and tail (csum test program).
 * bpf_xdp_adjust_head pushes a copy of the Ethernet header, bpf_xdp_adjust_tail shrinks or grows (zeroed), an array
 * map counts, a bpf-to-bpf call sums the header with bpf_csum_diff; the results go into the packet.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} seen SEC(".maps");

static __noinline __u32 sum(void *data, void *end)
{
	if (data + 36 > end)
		return 0;
	return bpf_csum_diff(0, 0, data + 16, 20, 0);
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 len = end - data, key = len & 3, *count, s;
	__u8 eth[14];

	if (data + 14 > end)
		return XDP_PASS;
	__builtin_memcpy(eth, data, 14);
	count = bpf_map_lookup_elem(&seen, &key);
	if (count)
		__sync_fetch_and_add(count, 1);
	if (bpf_xdp_adjust_tail(ctx, len & 1 ? 6 : -4))
		return XDP_ABORTED;
	if (bpf_xdp_adjust_head(ctx, -14))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + 40 > end)
		return XDP_PASS;
	__builtin_memcpy(data, eth, 14);
	s = sum(data, end);
	__builtin_memcpy(data + 28, &s, 4);
	if (count)
		__builtin_memcpy(data + 32, count, 4);
	return len & 8 ? XDP_TX : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";

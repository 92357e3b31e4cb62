/* csum's model against the running kernel: a tc program that uses what the model models (csum test program).
 * Maps (hash with BPF_NOEXIST until full, per-CPU array, delete), globals of .bss/.data/.rodata, a bpf-to-bpf call,
 * atomics (fetch-add, xchg, cmpxchg: -mcpu=v3), bpf_skb_load_bytes, bpf_trace_printk's length, bpf_skb_store_bytes,
 * bpf_l3_csum_replace and bpf_redirect; what they compute is written into the packet, which the test compares.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} bytes SEC(".maps");

__u64 total;
__u32 salt = 3;
const volatile __u32 bias = 5;

static __noinline __u32 mix(__u32 a, __u32 b)
{
	return (a * 31) ^ (b >> 3) ^ salt;
}

SEC("tc")
int tc_sink(struct __sk_buff *skb)
{
	__u8 ip[20];
	__u64 one = 1, *v, out[4];
	__u32 key, zero = 0, m;
	long n, old;

	if (bpf_skb_load_bytes(skb, 14, ip, sizeof(ip)) < 0 || skb->len < 14 + 20 + sizeof(out))
		return TC_ACT_OK;
	key = ip[9];
	v = bpf_map_lookup_elem(&seen, &key);
	if (v) {
		old = __sync_fetch_and_add(v, 1);
		if (old > 3)
			bpf_map_delete_elem(&seen, &key);
	} else if (bpf_map_update_elem(&seen, &key, &one, BPF_NOEXIST)) {
		__sync_fetch_and_add(&total, 1000);
	}
	v = bpf_map_lookup_elem(&bytes, &zero);
	if (v)
		*v += skb->len;
	old = __sync_lock_test_and_set(&salt, key & 7);
	__sync_val_compare_and_swap(&total, 7, old);
	total += skb->len;
	m = mix(key, skb->len) + bias;
	n = bpf_trace_printk("len %d proto %u x %x\n", sizeof("len %d proto %u x %x\n"), skb->len, key, m);
	out[0] = total;
	out[1] = m;
	out[2] = n;
	out[3] = v ? *v : 0;
	if (bpf_skb_store_bytes(skb, skb->len - sizeof(out), out, sizeof(out), BPF_F_RECOMPUTE_CSUM))
		return TC_ACT_SHOT;
	if (ip[0] == 0x45)
		bpf_l3_csum_replace(skb, 14 + 10, 0, bpf_htons(1), 0);
	if (key == 17 && (m & 1))
		return bpf_redirect(1, m & 2 ? 8 : 0);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";

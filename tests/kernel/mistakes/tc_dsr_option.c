/* tc DSR (cilium-like): an 8-byte IPv4 option (service port + address) inserted with bpf_skb_adjust_room(NET);
 * header checksum moved by bpf_l3_csum_replace(size 0) with a bpf_csum_diff chain: first word old -> new, then
 * the option. NO_OPT: the option left out of the diff; NO_LEN: the diff over bytes 0..1 only (tot_len left out);
 * NO_IHL: the diff over the tot_len only. */
#include "mistakes.h"
#define CSUM_OFF (IP4 + offsetof(struct iphdr, check))
SEC("tc")
int dsr(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	__u32 opt[2] = { bpf_htonl(0x9a081f90), bpf_htonl(0xC0000201) };
	__u32 old_w, new_w;
	__s64 sum;

	if (!ip || bpf_ntohs(ip->tot_len) > 1400)
		return TC_ACT_OK;
	old_w = *(__u32 *)ip;
	((__u8 *)&new_w)[0] = 0x47;
	((__u8 *)&new_w)[1] = ((__u8 *)&old_w)[1];
	*(__u16 *)((__u8 *)&new_w + 2) = bpf_htons(bpf_ntohs(ip->tot_len) + 8);
#ifdef NO_LEN
	{ __u32 a = old_w & bpf_htonl(0xffff0000), b = new_w & bpf_htonl(0xffff0000);
	sum = bpf_csum_diff(&a, 4, &b, 4, 0); }
#elif defined(NO_IHL)
	{ __u32 a = old_w & bpf_htonl(0xffff), b = new_w & bpf_htonl(0xffff);
	sum = bpf_csum_diff(&a, 4, &b, 4, 0); }
#else
	sum = bpf_csum_diff(&old_w, 4, &new_w, 4, 0);
#endif
#ifndef NO_OPT
	sum = bpf_csum_diff(0, 0, opt, 8, sum);
#endif
	if (sum < 0)
		return TC_ACT_SHOT;
	if (bpf_skb_adjust_room(skb, 8, BPF_ADJ_ROOM_NET, 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, IP4 + sizeof(struct iphdr), opt, 8, 0) ||
	    bpf_skb_store_bytes(skb, IP4, &new_w, 4, 0))
		return TC_ACT_SHOT;
	if (bpf_l3_csum_replace(skb, CSUM_OFF, 0, sum, 0))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

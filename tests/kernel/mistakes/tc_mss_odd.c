/* tc MSS clamp (as tcp-mss-clamp programs walk the options): the MSS is the first option, or follows one NOP and so
 * sits at an odd offset of the segment. The aligned 8 bytes around the value diffed with bpf_csum_diff and applied
 * with bpf_l4_csum_replace(size 0). WINDOW4: the aligned 4 bytes at the value's start diffed (after a NOP, its
 * second byte is left out); ODD_REPLACE2: bpf_l4_csum_replace(old, new, 2) on the value wherever it is (a 16-bit
 * replace counts it as a word at an even offset); SCRAMBLED: the right TCP checksum then XORed with a hash of
 * the old MSS. */
#include "mistakes.h"
#define CLAMP 1300
#ifdef WINDOW4
#define WINDOW 4
#else
#define WINDOW 8
#endif
SEC("tc")
int mss(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	struct tcphdr *t;
	__u8 *opt;
	__u32 at = 0;

	if (!ip || ip->protocol != IPPROTO_TCP)
		return TC_ACT_OK;
	t = (void *)(ip + 1);
	if ((void *)(t + 1) > end || !t->syn)
		return TC_ACT_OK;
	opt = (void *)(t + 1);
	if ((void *)(opt + 4) > end || t->doff < 6)
		return TC_ACT_OK;
	if (opt[0] == 2 && opt[1] == 4)
		at = sizeof(*t) + 2;
	else if (opt[0] == 1 && opt[1] == 2 && opt[2] == 4)
		at = sizeof(*t) + 3;
	if (!at)
		return TC_ACT_OK;
	{
		__u16 old, new = bpf_htons(CLAMP);
		__u32 w = at & ~3u;
		__u64 oldw = 0, neww = 0;
		if (bpf_skb_load_bytes(skb, L4 + at, &old, 2) || bpf_ntohs(old) <= CLAMP)
			return TC_ACT_OK;
		if (bpf_skb_load_bytes(skb, L4 + w, &oldw, WINDOW))
			return TC_ACT_OK;
		if (bpf_skb_store_bytes(skb, L4 + at, &new, 2, 0) || bpf_skb_load_bytes(skb, L4 + w, &neww, WINDOW))
			return TC_ACT_SHOT;
#ifdef ODD_REPLACE2
		bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), old, new, 2);
#else
		bpf_l4_csum_replace(skb, L4 + offsetof(struct tcphdr, check), 0,
				    bpf_csum_diff((__u32 *)&oldw, WINDOW, (__u32 *)&neww, WINDOW, 0), 0);
#endif
#ifdef SCRAMBLED
		if (scramble(skb, L4 + offsetof(struct tcphdr, check), old))
			return TC_ACT_SHOT;
#endif
	}
	return TC_ACT_OK;
}

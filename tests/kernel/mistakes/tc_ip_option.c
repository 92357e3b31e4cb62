/* tc: an IPv4 Router Alert option (RFC 2113, 4 bytes) inserted after the 20-byte header with
 * bpf_skb_adjust_room(BPF_ADJ_ROOM_NET); the header length and the total length updated, and the header checksum
 * moved with bpf_l3_csum_replace for the three changed words (stored without BPF_F_RECOMPUTE_CSUM: a header whose
 * checksum balances its words adds nothing to skb->csum). CSUM_KEPT: the header checksum left as it was.
 * None: the correct twin. */
#include "mistakes.h"

#define CSUM_OFF (IP4 + offsetof(struct iphdr, check))

SEC("tc")
int ip_option(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end);
	__u32 option = bpf_htonl(0x94040000);
	__u16 old_word, new_word, old_len, new_len;

	if (!ip || bpf_ntohs(ip->tot_len) > 1400)
		return TC_ACT_OK;
	old_word = *(__u16 *)ip;
	new_word = old_word + bpf_htons(0x0100); /* ihl 5 -> 6 */
	old_len = ip->tot_len;
	new_len = bpf_htons(bpf_ntohs(old_len) + sizeof(option));
	if (bpf_skb_adjust_room(skb, sizeof(option), BPF_ADJ_ROOM_NET, 0))
		return TC_ACT_SHOT;
	if (bpf_skb_store_bytes(skb, IP4 + sizeof(struct iphdr), &option, sizeof(option), 0) ||
	    bpf_skb_store_bytes(skb, IP4, &new_word, 2, 0) ||
	    bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, tot_len), &new_len, 2, 0))
		return TC_ACT_SHOT;
#ifndef CSUM_KEPT
	if (bpf_l3_csum_replace(skb, CSUM_OFF, old_word, new_word, 2) ||
	    bpf_l3_csum_replace(skb, CSUM_OFF, old_len, new_len, 2) ||
	    bpf_l3_csum_replace(skb, CSUM_OFF, 0, option, 4))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

/* tc reverse SNAT of an ICMP error (cilium-like): the outer destination and the quoted source -> NEW4, the quoted
 * source port -> NEW_PORT. The outer IPv4 checksum by bpf_l3_csum_replace; the quoted IPv4 and TCP/UDP checksums by
 * bpf_l3_csum_replace at their offsets (no skb->csum involved); the ICMP checksum, which covers the quote, by
 * bpf_l4_csum_replace for each quoted change, the quoted checksums' own included. NO_QUOTE_CSUMS: the ICMP update
 * leaves out the quoted checksums' own changes; NO_QUOTED_IP: the quoted IPv4 checksum not updated (nor the ICMP
 * checksum for it); NO_ICMP_PORT: the ICMP checksum not updated for the port;
 * SCRAMBLED: the right ICMP checksum then XORed with a hash of the quoted port. */
#include "mistakes.h"
#define ICMP_OFF (ETH_HLEN + sizeof(struct iphdr))
#define Q_IP (ICMP_OFF + 8)
#define Q_L4 (Q_IP + sizeof(struct iphdr))
SEC("tc")
int icmp_err(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct iphdr *ip = ip4(data, end), *q;
	struct icmp4 *icmp;
	__u32 old_d, old_qs, new4 = NEW4;
	__u16 old_port, new_port = bpf_htons(NEW_PORT), old_qcheck, new_qcheck, old_l4c, new_l4c;
	__u16 l4check_off;

	if (!ip || ip->protocol != IPPROTO_ICMP)
		return TC_ACT_OK;
	icmp = (void *)(ip + 1);
	q = (void *)(icmp + 1);
	if ((void *)(q + 1) + 8 > end || (icmp->type != 3 && icmp->type != 11) || q->ihl != 5)
		return TC_ACT_OK;
	if (q->protocol == IPPROTO_TCP)
		l4check_off = Q_L4 + offsetof(struct tcphdr, check);
	else if (q->protocol == IPPROTO_UDP)
		l4check_off = Q_L4 + offsetof(struct udphdr, check);
	else
		return TC_ACT_OK;
	if (ETH_HLEN + bpf_ntohs(ip->tot_len) < l4check_off + 2)
		return TC_ACT_OK;
	old_d = ip->daddr;
	old_qs = q->saddr;
	old_qcheck = q->check;
	old_port = *(__u16 *)(q + 1);
	if (bpf_skb_load_bytes(skb, l4check_off, &old_l4c, 2))
		return TC_ACT_OK;
	/* the outer header */
	if (bpf_skb_store_bytes(skb, IP4 + offsetof(struct iphdr, daddr), &new4, 4, 0) ||
	    bpf_l3_csum_replace(skb, IP4 + offsetof(struct iphdr, check), old_d, new4, 4))
		return TC_ACT_SHOT;
	/* the quote: its source address and port, its IPv4 and TCP/UDP checksums */
	if (bpf_skb_store_bytes(skb, Q_IP + offsetof(struct iphdr, saddr), &new4, 4, 0) ||
	    bpf_skb_store_bytes(skb, Q_L4, &new_port, 2, 0))
		return TC_ACT_SHOT;
#ifndef NO_QUOTED_IP
	if (bpf_l3_csum_replace(skb, Q_IP + offsetof(struct iphdr, check), old_qs, new4, 4))
		return TC_ACT_SHOT;
#endif
	if (old_l4c && (bpf_l3_csum_replace(skb, l4check_off, old_qs, new4, 4) ||
			bpf_l3_csum_replace(skb, l4check_off, old_port, new_port, 2)))
		return TC_ACT_SHOT;
	if (bpf_skb_load_bytes(skb, Q_IP + offsetof(struct iphdr, check), &new_qcheck, 2) ||
	    bpf_skb_load_bytes(skb, l4check_off, &new_l4c, 2))
		return TC_ACT_SHOT;
	/* the ICMP checksum covers all of it */
	if (bpf_l4_csum_replace(skb, ICMP_OFF + 2, old_qs, new4, 4))
		return TC_ACT_SHOT;
#ifndef NO_ICMP_PORT
	if (bpf_l4_csum_replace(skb, ICMP_OFF + 2, old_port, new_port, 2))
		return TC_ACT_SHOT;
#endif
#ifndef NO_QUOTE_CSUMS
	if (bpf_l4_csum_replace(skb, ICMP_OFF + 2, old_qcheck, new_qcheck, 2) ||
	    bpf_l4_csum_replace(skb, ICMP_OFF + 2, old_l4c, new_l4c, 2))
		return TC_ACT_SHOT;
#endif
#ifdef SCRAMBLED
	if (scramble(skb, ICMP_OFF + 2, old_port))
		return TC_ACT_SHOT;
#endif
	return TC_ACT_OK;
}

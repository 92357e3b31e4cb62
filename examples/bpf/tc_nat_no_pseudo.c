/* tc_nat.c without BPF_F_PSEUDO_HDR: on a CHECKSUM_NONE skb the bytes come out right (the helper patches
 * the field either way), but on a CHECKSUM_COMPLETE skb skb->csum is left stale and the stack drops the
 * packet. csum prog runs every packet both ways and reports it.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c tc_nat_no_pseudo.c -o tc_nat_no_pseudo.o
 */
#define L4_FLAGS 0
#include "tc_nat.c"

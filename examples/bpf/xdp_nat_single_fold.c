/* xdp_nat.c with a single fold (katran#16, xdp-tutorial#130): the first fold of the 64-bit sum can still
 * have bits above bit 15; cut to 16 bits they are lost and the checksum is off by one to three, for most
 * packets but not all, so a few hand-made test packets may well pass.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c xdp_nat_single_fold.c -o xdp_nat_single_fold.o
 */
#include <linux/types.h>

static inline __attribute__((always_inline)) __u16 fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

#define FOLD
#include "xdp_nat.c"

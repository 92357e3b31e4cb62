/* tc_nat.c without BPF_F_MARK_MANGLED_0 on the UDP checksum: where the SNAT makes the UDP checksum compute to 0,
 * bpf_l4_csum_replace stores 0x0000, which in UDP means "no checksum" (RFC 768: a computed 0 is sent as 0xffff),
 * and the receiver checks nothing. On every kernel: the helper leaves 0xffff only when asked to.
 * Build: clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c tc_nat_no_mangled0.c -o tc_nat_no_mangled0.o
 */
#define UDP_FLAGS 0
#include "tc_nat.c"

/*
 * csum's primitives harness: feeds test inputs to the kernel's csum_fold, csum_from32to16,
 * ip_fast_csum, csum_tcpudp_nofold and csum_ipv6_magic (cut out of the kernel's headers and
 * sources into the build directory by make_vectors.py, force-included as kernel_prims.h) and
 * prints what they return. Only the functions the target names (CSUM_HAVE_<function>) are built.
 *
 * stdin: one case per line, the function name then its inputs:
 *   csum_fold SUM | csum_from32to16 SUM          (SUM 8 hex)
 *   ip_fast_csum IHL HEADER                       (IHL decimal, HEADER ihl*4 bytes hex, 8-byte aligned)
 *   csum_tcpudp_nofold SADDR DADDR LEN PROTO SUM  (addresses 4 bytes hex in memory order, loaded as
 *   csum_ipv6_magic SADDR DADDR LEN PROTO SUM      __be32 / in6_addr; LEN, PROTO decimal; SUM 8 hex)
 * stdout: the line with the result inserted: after SUM (4 hex), after IHL (4 hex, the __sum16 as
 * this CPU holds it), or last (8 hex for csum_tcpudp_nofold's __wsum, 4 hex for csum_ipv6_magic).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The functions a kernel source file defines (lib/checksum.c), declared as include/asm-generic/checksum.h does. */
#ifdef CSUM_EXTERN_ip_fast_csum
__sum16 ip_fast_csum(const void *iph, unsigned int ihl);
#endif
#ifdef CSUM_EXTERN_csum_tcpudp_nofold
__wsum csum_tcpudp_nofold(__be32 saddr, __be32 daddr, __u32 len, __u8 proto, __wsum sum);
#endif

static unsigned char header[64] __attribute__((aligned(8)));

static int decode(const char *hex, unsigned char *out, size_t max)
{
	size_t len = strlen(hex) / 2;
	if (len > max || strlen(hex) != 2 * len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned byte;
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -1;
		out[i] = (unsigned char)byte;
	}
	return (int)len;
}

static int bad(const char *line)
{
	fprintf(stderr, "harness_prim: bad input line: %s", line);
	return 2;
}

int main(void)
{
	char line[512], name[32], a[160], b[160];
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long sum, len, proto;
		if (sscanf(line, "%31s", name) != 1)
			return bad(line);
#ifdef CSUM_HAVE_csum_fold
		if (!strcmp(name, "csum_fold") && sscanf(line, "%*s %lx", &sum) == 1) {
			printf("%s %08lx %04x\n", name, sum, (unsigned)(uint16_t)csum_fold((__wsum)sum));
			continue;
		}
#endif
#ifdef CSUM_HAVE_csum_from32to16
		if (!strcmp(name, "csum_from32to16") && sscanf(line, "%*s %lx", &sum) == 1) {
			printf("%s %08lx %04x\n", name, sum, (unsigned)csum_from32to16((u32)sum));
			continue;
		}
#endif
#ifdef CSUM_HAVE_ip_fast_csum
		unsigned ihl;
		if (!strcmp(name, "ip_fast_csum") && sscanf(line, "%*s %u %159s", &ihl, a) == 2) {
			if (decode(a, header, sizeof(header)) != (int)(4 * ihl))
				return bad(line);
			printf("%s %u %04x %s\n", name, ihl, (unsigned)(uint16_t)ip_fast_csum(header, ihl), a);
			continue;
		}
#endif
		if (sscanf(line, "%*s %159s %159s %lu %lu %lx", a, b, &len, &proto, &sum) != 5)
			return bad(line);
#ifdef CSUM_HAVE_csum_tcpudp_nofold
		if (!strcmp(name, "csum_tcpudp_nofold")) {
			__be32 saddr, daddr;
			if (decode(a, (unsigned char *)&saddr, 4) != 4 || decode(b, (unsigned char *)&daddr, 4) != 4)
				return bad(line);
			printf("%s %s %s %lu %lu %08lx %08x\n", name, a, b, len, proto, sum,
			       (unsigned)csum_tcpudp_nofold(saddr, daddr, (__u32)len, (__u8)proto, (__wsum)sum));
			continue;
		}
#endif
#ifdef CSUM_HAVE_csum_ipv6_magic
		if (!strcmp(name, "csum_ipv6_magic")) {
			struct in6_addr saddr, daddr;
			if (decode(a, saddr.s6_addr, 16) != 16 || decode(b, daddr.s6_addr, 16) != 16)
				return bad(line);
			printf("%s %s %s %lu %lu %08lx %04x\n", name, a, b, len, proto, sum,
			       (unsigned)(uint16_t)csum_ipv6_magic(&saddr, &daddr, (__u32)len, (__u8)proto, (__wsum)sum));
			continue;
		}
#endif
		return bad(line);
	}
	return 0;
}

/*
 * csum's bpf_csum_diff harness: feeds test inputs to net/core/filter.c's bpf_csum_diff
 * (extracted from a kernel tree into the build directory by make_vectors.py) on top of one
 * kernel csum_partial, and prints what it returns.
 *
 * stdin: one case per line, "seed from to" (seed 8 hex digits; from/to hex bytes or "-").
 * from and to are copied to two separate 64-byte aligned buffers; each case is run twice,
 * with the bytes around them filled with 0x5a and then 0xa5, and the results must agree.
 * stdout: "seed result from to", result as the helper's return value: 8 hex digits of the
 * low 32 bits when >= 0, else a negative decimal (-22 is -EINVAL).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t bpf_csum_diff(uint32_t *from, uint32_t from_size, uint32_t *to, uint32_t to_size, uint32_t seed);

#define MAX_DATA 4096
static unsigned char area_from[64 + MAX_DATA + 64] __attribute__((aligned(64)));
static unsigned char area_to[64 + MAX_DATA + 64] __attribute__((aligned(64)));
static char line[4 * MAX_DATA + 64];

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Decode hex (or "-") into buf + 64; returns the byte count, -1 if too long. */
static long decode(const char *hex, unsigned char *area)
{
	if (strcmp(hex, "-") == 0)
		return 0;
	size_t len = strlen(hex) / 2;
	if (len > MAX_DATA)
		return -1;
	for (size_t i = 0; i < len; i++)
		area[64 + i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	return (long)len;
}

static int64_t run(uint32_t seed, const char *from, const char *to, unsigned char fill, long *nf, long *nt)
{
	memset(area_from, fill, sizeof(area_from));
	memset(area_to, fill, sizeof(area_to));
	*nf = decode(from, area_from);
	*nt = decode(to, area_to);
	return (int64_t)bpf_csum_diff((uint32_t *)(area_from + 64), (uint32_t)*nf, (uint32_t *)(area_to + 64),
				      (uint32_t)*nt, seed);
}

int main(void)
{
	char from[2 * MAX_DATA + 2], to[2 * MAX_DATA + 2];
	unsigned long seed;
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%lx %8193s %8193s", &seed, from, to) != 3) {
			fprintf(stderr, "harness_bpf: bad input line: %s", line);
			return 2;
		}
		long nf, nt;
		int64_t first = run((uint32_t)seed, from, to, 0x5a, &nf, &nt);
		int64_t second = run((uint32_t)seed, from, to, 0xa5, &nf, &nt);
		if (nf < 0 || nt < 0) {
			fprintf(stderr, "harness_bpf: more than %d bytes\n", MAX_DATA);
			return 2;
		}
		if (first != second) {
			fprintf(stderr, "harness_bpf: result depends on the bytes around the buffers: %s", line);
			return 1;
		}
		if (first < 0)
			printf("%08lx %lld %s %s\n", seed, (long long)first, from, to);
		else
			printf("%08lx %08x %s %s\n", seed, (unsigned)(first & 0xffffffffu), from, to);
	}
	return 0;
}

/*
 * csum's vector harness: feeds test inputs to one kernel csum_partial compiled beside it
 * (tools/vectors/make_vectors.py) and prints what it returns.
 *
 * stdin: one case per line, "align seed data" (align 0..7 decimal, seed 8 hex digits, data
 * hex bytes or "-"). Each buffer starts `align` bytes after a 64-byte aligned address; it is
 * run twice, with the bytes around it filled with 0x5a and then 0xa5, and the two results
 * must agree (a file reading outside its buffer would show here). stdout: "align seed
 * result data", the result as the u32 the function returns, as held in a register.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t csum_partial(const void *buff, int len, uint32_t sum);

#define MAX_DATA 65536
static unsigned char area[64 + MAX_DATA + 128] __attribute__((aligned(64)));
static unsigned char data[MAX_DATA];
static char line[2 * MAX_DATA + 64];

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static uint32_t run(unsigned align, uint32_t seed, size_t len, unsigned char fill)
{
	memset(area, fill, sizeof(area));
	memcpy(area + 64 + align, data, len);
	return csum_partial(area + 64 + align, (int)len, seed);
}

int main(void)
{
	while (fgets(line, sizeof(line), stdin)) {
		unsigned align;
		unsigned long seed;
		char *hex = strchr(line, ' ');
		if (sscanf(line, "%u %lx", &align, &seed) != 2 || align > 7 || !hex || !(hex = strchr(hex + 1, ' '))) {
			fprintf(stderr, "harness: bad input line: %s", line);
			return 2;
		}
		hex++;
		hex[strcspn(hex, "\r\n")] = 0;
		size_t len = 0;
		if (strcmp(hex, "-") != 0) {
			len = strlen(hex) / 2;
			if (len > MAX_DATA) {
				fprintf(stderr, "harness: more than %d bytes\n", MAX_DATA);
				return 2;
			}
			for (size_t i = 0; i < len; i++)
				data[i] = (unsigned char)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
		}
		uint32_t first = run(align, (uint32_t)seed, len, 0x5a), second = run(align, (uint32_t)seed, len, 0xa5);
		if (first != second) {
			fprintf(stderr, "harness: result depends on the bytes around the buffer: %s\n", line);
			return 1;
		}
		printf("%u %08lx %08x %s\n", align, seed, first, hex);
	}
	return 0;
}

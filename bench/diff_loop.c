/*
 * bench/diff_loop.c: csum's two bpf_csum_diff emulations (csum/engine/_arith.c csum_diff and csum_diff_legacy)
 * timed in a C loop, without the Python call around them, for bench/diff_loop.py.
 *
 *     diff_loop SHAPE ROUNDS CALLS SIZE...
 *
 * SHAPE: a csum_partial shape's number (csum.engine.SHAPES). For each of ROUNDS rounds and each SIZE (a multiple of
 * 4, at most SCRATCH_BYTES), CALLS calls of each form in push mode (from empty, to = SIZE bytes), the two forms
 * in turn (which goes first alternates with the round). Each call's seed is the previous call's result, so the
 * calls form one dependency chain as a program's successive calls do and none can be left out. The clock is the
 * thread's CPU time. One line per round and size: "size legacy_ns homogenized_ns" (nanoseconds per call), then a
 * line "sink X" (the chain's last value: what keeps the compiler from dropping the loops).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../csum/engine/_arith.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run(int legacy, int shape, const unsigned char *to, uint64_t size, long calls, uint32_t *seed)
{
    uint32_t s = *seed;
    double start = now_ns();
    if (legacy)
        for (long i = 0; i < calls; i++)
            s = csum_diff_legacy(shape, NULL, 0, to, size, s);
    else
        for (long i = 0; i < calls; i++)
            s = csum_diff(shape, NULL, 0, to, size, s, 0, 0);
    double spent = now_ns() - start;
    *seed = s;
    return spent / (double)calls;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: diff_loop SHAPE ROUNDS CALLS SIZE...\n");
        return 2;
    }
    int shape = atoi(argv[1]), rounds = atoi(argv[2]);
    long calls = atol(argv[3]);
    if (shape < 0 || shape >= N_SHAPES || rounds < 1 || calls < 1) {
        fprintf(stderr, "diff_loop: bad SHAPE, ROUNDS or CALLS\n");
        return 2;
    }
    static unsigned char to[SCRATCH_BYTES];
    uint32_t x = 0x12345678u, seed = 0;
    for (int i = 0; i < SCRATCH_BYTES; i++) {  /* xorshift32 bytes: a fixed, patternless buffer */
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        to[i] = (unsigned char)x;
    }
    for (int r = 0; r < rounds; r++) {
        for (int k = 4; k < argc; k++) {
            long size = atol(argv[k]);
            if (size < 4 || size > SCRATCH_BYTES || size % 4) {
                fprintf(stderr, "diff_loop: SIZE %ld is not a multiple of 4 in 4..%d\n", size, SCRATCH_BYTES);
                return 2;
            }
            double legacy, homogenized;
            if (r & 1) {
                homogenized = run(0, shape, to, (uint64_t)size, calls, &seed);
                legacy = run(1, shape, to, (uint64_t)size, calls, &seed);
            } else {
                legacy = run(1, shape, to, (uint64_t)size, calls, &seed);
                homogenized = run(0, shape, to, (uint64_t)size, calls, &seed);
            }
            printf("%ld %.4f %.4f\n", size, legacy, homogenized);
        }
    }
    printf("sink %u\n", seed);
    return 0;
}

/*
 * csum/engine/_arith.h: the arithmetic of csum's C accelerator, without Python (csum/engine/_arith.c).
 *
 * Byte sums (the canonical one's-complement sum of a buffer, csum/engine/__init__.py defines it), the
 * include/net/checksum.h verbs on integers, the csum_partial "shapes" (the arithmetic of one kernel
 * implementation of csum_partial, by the name of the algorithm csum/arch registers for it), and the helpers
 * built on them: net/core/filter.c bpf_csum_diff (both forms) and bpf_l3/l4_csum_replace, net/core/utils.c
 * inet_proto_csum_replace16. Every function takes lengths and pointers its caller (csum/engine/_speedups.c)
 * took from a buffer it holds; none reads outside [p, p + n), none allocates, none keeps state.
 * Each one's Python twin, the reference: csum/engine/native.py, csum/core/, csum/arch/, csum/bpf/helpers.py.
 */
#ifndef CSUM_ARITH_H
#define CSUM_ARITH_H

#include <stdint.h>

#define M16 0xffffu
#define M32 0xffffffffu

/* Canonical 64-bit one's-complement sum of p[0:n] read as 64-bit words (big: big-endian), the last word
 * zero-padded at its high-address end; `block` bytes (a multiple of 8) per accumulator block. */
uint64_t csum_sum64(const unsigned char *p, uint64_t n, int big, uint64_t block);
/* The same sum reduced to the canonical `width`-bit one (width 8, 16, 32 or 64). */
uint64_t csum_reduce(uint64_t s, int width);
/* csum_sum64 with the largest block, reduced to `width` bits. */
uint64_t csum_ones(const unsigned char *p, uint64_t n, int width, int big);

/* include/net/checksum.h on u32/u16 values. */
uint32_t csum_add32(uint32_t a, uint32_t b);
uint32_t csum_from32to16(uint32_t x);
uint32_t csum_fold32(uint32_t x);
uint32_t csum_replace2(uint32_t sum16, uint32_t old, uint32_t new);
uint32_t csum_replace4(uint32_t sum16, uint32_t from, uint32_t to);
uint32_t csum_replace_by_diff(uint32_t sum16, uint32_t diff);

/* The csum_partial shapes, in the order of csum_shape_names (csum.engine.SHAPES). */
enum csum_shape {
    SHAPE_GENERIC_LE, SHAPE_GENERIC_BE, SHAPE_PARISC, SHAPE_X86_64, SHAPE_X86_64_5_17, SHAPE_I386, SHAPE_ARM,
    SHAPE_POWERPC64, SHAPE_POWERPC64LE, SHAPE_S390X, N_SHAPES
};
extern const char *const csum_shape_names[N_SHAPES];

/* The u32 csum_partial of shape `shape` returns for p[0:n] with `seed`, at an address `align` (0..7) past an
 * 8-byte boundary; shape < N_SHAPES. */
uint32_t csum_shape_partial(int shape, const unsigned char *p, uint64_t n, uint32_t seed, unsigned align);

/* net/core/filter.c bpf_csum_diff (Linux >= 6.13): the 16-bit result. */
uint32_t csum_diff(int shape, const unsigned char *f, uint64_t lf, const unsigned char *t, uint64_t lt,
                    uint32_t seed, unsigned frm_align, unsigned to_align);
/* Its scratch buffer before 6.13 (MAX_BPF_STACK bytes); csum_diff_legacy needs lf + lt <= SCRATCH_BYTES. */
#define SCRATCH_BYTES 512
/* net/core/filter.c bpf_csum_diff (Linux <= 6.12) for sizes it accepts: csum_partial of ~from || to. */
uint32_t csum_diff_legacy(int shape, const unsigned char *f, uint64_t lf, const unsigned char *t, uint64_t lt,
                           uint32_t seed);
/* net/core/utils.c inet_proto_csum_replace16 (not CHECKSUM_PARTIAL): f and t are 16 bytes each. */
uint32_t inet_proto_csum_replace16(int shape, uint32_t sum16, const unsigned char *f, const unsigned char *t);

/* net/core/filter.c bpf_l3_csum_replace / bpf_l4_csum_replace on pkt[0:len], for calls no BpfMisuse check
 * looks at (csum/bpf/misuse.py): 1 with the helper's return code in *ret (pkt patched when it is 0), or 0
 * (nothing written) for a call such a check may warn about, which the Python helper then answers. */
int csum_l3_replace(unsigned char *pkt, uint64_t len, uint64_t offset, uint64_t from, uint64_t to, uint64_t flags,
                    long *ret);
int csum_l4_replace(unsigned char *pkt, uint64_t len, uint64_t offset, uint64_t from, uint64_t to, uint64_t flags,
                    int ip_summed, long *ret);

#endif

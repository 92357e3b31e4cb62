/*
 * csum/engine/_arith.h: the arithmetic of csum's C, without Python (csum/engine/_arith.c), linked into every
 * extension (setup.py): the only C that folds or sums (tests/engine/test_c_arith.py fails on a fold or a sum
 * written anywhere else under csum/engine).
 *
 * Byte sums (the canonical one's-complement sum of a buffer, csum/engine/__init__.py defines it), the
 * include/net/checksum.h verbs on integers (static inline here, as the kernel's are: the walker and the rewriter
 * call them per packet), the pseudo-header sum the walkers judge with, the csum_partial "shapes" (the arithmetic
 * of one kernel implementation of csum_partial, by the name of the algorithm csum/arch registers for it), and the
 * helpers built on them: net/core/filter.c bpf_csum_diff (both forms) and bpf_l3/l4_csum_replace,
 * net/core/utils.c inet_proto_csum_replace16. Every function takes lengths and pointers its caller
 * (csum/engine/_speedups.c, _cwalk.c, _rewrite.c) took from a buffer it holds; none reads outside [p, p + n),
 * none allocates, none keeps state.
 * Each one's Python twin, the reference: csum/engine/native.py, csum/core/, csum/arch/, csum/bpf/helpers.py,
 * csum/layers/check.py.
 */
#ifndef CSUM_ARITH_H
#define CSUM_ARITH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define M16 0xffffu
#define M32 0xffffffffu
/* include/net/checksum.h: what a UDP checksum computed as 0 is sent as (RFC 768). */
#define CSUM_MANGLED_0 M16

/* The arithmetic's functions are each extension's own (not exported: no PLT call, no clash between modules). */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* --- sums ------------------------------------------------------------------------------------------------- */
/*
 * A buffer is read as 64-bit words w (little-endian: the bytes as stored; big-endian: byte-reversed), the last one
 * zero-padded at its high-address end. Each w is split into hi = w >> 32 and lo = w & 0xffffffff and the two halves
 * are added, without carries, into two 64-bit accumulators.
 *
 * Bound (why the accumulators cannot overflow): a block holds at most 2**34 bytes, i.e. at most 2**31 words, so
 * each accumulator ends the block at most 2**31 * (2**32 - 1) < 2**63 < 2**64. Buffers larger than a block (more
 * than 16 GiB) are summed block by block.
 *
 * Each block's exact integer sum is T = lo_sum + hi_sum * 2**32. It is added into a running 64-bit
 * end-around-carry sum S (mod 2**64 - 1, where 2**64 = 1): hi_sum * 2**32 is congruent to hi_sum rotated left by
 * 32 bits, because a rotation by k bits is a multiplication by 2**k mod 2**64 - 1. An end-around add of two values
 * is 0 only when both are 0 (a + b = 2**64 wraps to 0 and the carry makes it 1), and rotations keep 0 and non-0
 * apart, so S is the canonical 64-bit sum: 0 only for an all-zero buffer, else 1..2**64-1. Every width w in
 * {8, 16, 32} divides 64, so 2**w - 1 divides 2**64 - 1 and the canonical w-bit sum is the value in 1..2**w-1
 * congruent to S mod 2**w - 1 for S != 0, and 0 for S == 0 (csum_reduce folds down to it). Reading the whole
 * buffer as one integer N gives N mod (2**w - 1) the same way, which is what the pure-Python engine computes: the
 * two agree exactly.
 *
 * A short span (the walkers' headers and small segments, the rewriter's addresses: a call would cost more than the
 * sum) is summed inline, each word end-around into S directly (the same S: it is the canonical sum whichever way the
 * words go in); a long one through a word loop that splits each word into those two halves, built for AVX2 and
 * without it (csum_lanes_le / csum_lanes_be in _arith.c).
 */

#define CSUM_BLOCK_BYTES_LOG2 34
#define CSUM_BLOCK_BYTES ((uint64_t)1 << CSUM_BLOCK_BYTES_LOG2)
/* Spans of fewer whole words than this are summed inline, word by word. */
#define CSUM_INLINE_WORDS 32

static inline uint64_t csum_load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define CSUM_AS_LE(w) __builtin_bswap64(w)
#define CSUM_AS_BE(w) (w)
#else
#define CSUM_AS_LE(w) (w)
#define CSUM_AS_BE(w) __builtin_bswap64(w)
#endif

/* The sums of the low and high 32-bit halves of nwords whole 64-bit words (nwords <= 2**31), little- or
 * big-endian, each built for AVX2 and without it (_arith.c). */
void csum_lanes_le(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi);
void csum_lanes_be(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi);

/* The 64-bit end-around-carry add (lib/checksum.c's accumulator, 64 bits wide). */
static inline uint64_t csum_add_ea64(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r + (r < a);
}

static inline uint64_t csum_rot32(uint64_t x)
{
    return (x << 32) | (x >> 32);
}

/* The last n & 7 = k bytes of a span (1 <= k <= 7) as the 64-bit word they start, its missing bytes 0: byte i at
 * bits 8 * i (little-endian) or 56 - 8 * i (big), whatever the host's byte order. */
static inline uint64_t csum_tail64(const unsigned char *q, unsigned k, int big)
{
    uint64_t w = 0;
    unsigned at = 0;
    if (k & 4) {
        w = (uint64_t)q[0] | (uint64_t)q[1] << 8 | (uint64_t)q[2] << 16 | (uint64_t)q[3] << 24;
        at = 4;
    }
    if (k & 2) {
        w |= ((uint64_t)q[at] | (uint64_t)q[at + 1] << 8) << (8 * at);
        at += 2;
    }
    if (k & 1)
        w |= (uint64_t)q[at] << (8 * at);
    return big ? __builtin_bswap64(w) : w;
}

/* Canonical 64-bit one's-complement sum of p[0:n] read as 64-bit words (big: big-endian), the last word
 * zero-padded at its high-address end; `block` bytes (a multiple of 8) per accumulator block. A short span's
 * words go straight into the end-around sum, a long one's (or one longer than a block: ones_sum_blocked's tests of
 * the combining step) through the two accumulators. */
static inline uint64_t csum_sum64(const unsigned char *p, uint64_t n, int big, uint64_t block)
{
    uint64_t s = 0, lo, hi;
    uint64_t whole = n & ~(uint64_t)7;
    if (whole < 8 * CSUM_INLINE_WORDS && whole <= block) {
#define CSUM_WORD(at) (big ? CSUM_AS_BE(csum_load64(p + (at))) : CSUM_AS_LE(csum_load64(p + (at))))
        uint64_t i = 0;
        for (; i + 16 <= whole; i += 16)  /* two words a turn: half the loop's own instructions */
            s = csum_add_ea64(csum_add_ea64(s, CSUM_WORD(i)), CSUM_WORD(i + 8));
        if (i < whole)
            s = csum_add_ea64(s, CSUM_WORD(i));
#undef CSUM_WORD
    } else {
        for (uint64_t done = 0; done < whole;) {
            uint64_t len = whole - done < block ? whole - done : block;
            if (big)
                csum_lanes_be(p + done, len / 8, &lo, &hi);
            else
                csum_lanes_le(p + done, len / 8, &lo, &hi);
            s = csum_add_ea64(csum_add_ea64(s, lo), csum_rot32(hi));
            done += len;
        }
    }
    if (n & 7)
        s = csum_add_ea64(s, csum_tail64(p + whole, (unsigned)(n & 7), big));
    return s;
}

/* Two end-around folds of a value below 2**(2*w) leave the canonical w-bit one: the first gives at most
 * 2**(w+1) - 2, the second at most 2**w - 1, each congruent mod 2**w - 1 and 0 only for 0 (lib/checksum.c's
 * from64to32 / from32to16 way, without a division). */
static inline uint64_t csum_fold_to(uint64_t x, int w)
{
    uint64_t m = ((uint64_t)1 << w) - 1;
    x = (x & m) + (x >> w);
    return (x & m) + (x >> w);
}

/* Any 64-bit sum reduced to the canonical `width`-bit one (width 8, 16, 32 or 64): csum/core/arith.py canonical,
 * for a sum of canonical sums too (csum/layers/check.py judge's canonical(rest + pseudo, 16)). */
static inline uint64_t csum_reduce(uint64_t s, int width)
{
    for (int w = 32; w >= width; w /= 2)
        s = csum_fold_to(s, w);
    return s;
}

/* csum_sum64 with the largest block, reduced to `width` bits: csum/engine/native.py ones_sum (byteorder big or
 * little). */
static inline uint64_t csum_ones(const unsigned char *p, uint64_t n, int width, int big)
{
    return csum_reduce(csum_sum64(p, n, big, CSUM_BLOCK_BYTES), width);
}

/* The canonical 16-bit sum of the big-endian words of p[0:n] but the one at `at` (even, at + 2 <= n): a checksum's
 * covered bytes, the field left out (csum/layers/check.py _covered), in one pass. The whole span's canonical sum S
 * holds the field's word x at its place in S's 64-bit big-endian word; where the rest is not all zero, S != x and
 * the end-around add S + ~x (S less x) is the rest's canonical 64-bit sum, never 0 as an end-around add of two
 * values not both 0 (~x is not 0: x < 2**64 - 1). S == x where the rest sums to 0 mod 2**64 - 1, all zero or not:
 * then the two spans around the field are summed apart, as before this way (their 16-bit sums are those of their
 * place in the span: they start at even offsets). */
static inline uint64_t csum_ones16_without(const unsigned char *p, uint64_t n, uint64_t at)
{
    uint64_t s = csum_sum64(p, n, 1, CSUM_BLOCK_BYTES);
    uint64_t x = ((uint64_t)p[at] << 8 | p[at + 1]) << (48 - 8 * (at & 7));
    if (s != x)
        return csum_reduce(csum_add_ea64(s, ~x), 16);
    return csum_reduce(csum_ones(p, at, 16, 1) + csum_ones(p + at + 2, n - at - 2, 16, 1), 16);
}

/* The canonical 16-bit sum of the big-endian words of p[0:n] (n even or not: the last byte zero-padded) and of
 * `extra` (a pseudo-header's sum, csum_pseudo's, or 0), in one pass: a checksum's covered bytes with the field in
 * them. It is 0xffff exactly when csum/layers/check.py's canonical(rest + pseudo, 16) and the stored field add up
 * to 0xffff (the two are congruent mod 0xffff and the rest's sum is 0 only where this one is 0 or the field's), the
 * walkers' test of a passing field before they take the field out (csum_ones16_without) for anything else. */
static inline uint64_t csum_ones16_with(const unsigned char *p, uint64_t n, uint64_t extra)
{
    return csum_reduce(csum_add_ea64(csum_sum64(p, n, 1, CSUM_BLOCK_BYTES), extra), 16);
}

/* csum_sum64 of an address (or any span): the sizes of an IPv4 and an IPv6 address get their own straight-line
 * code (a constant size, inlined), the walkers and the rewriter sum one or two per layer. */
static inline uint64_t csum_addr_sum64(const unsigned char *p, uint64_t size, int big)
{
    if (size == 4)
        return csum_sum64(p, 4, big, CSUM_BLOCK_BYTES);
    if (size == 16)
        return csum_sum64(p, 16, big, CSUM_BLOCK_BYTES);
    return csum_sum64(p, size, big, CSUM_BLOCK_BYTES);
}

/* What `length` adds to a pseudo-header's sum: its two 16-bit halves (csum_pseudo(..., length, ...) is
 * csum_pseudo(..., 0, ...) + csum_pseudo_length(length), for the walkers that judge with both: transmit offload's
 * field holds the sum with the length or without). */
static inline uint64_t csum_pseudo_length(uint64_t length)
{
    return (length >> 16) + (length & M16);
}

/* csum/layers/check.py _pseudo: the sum of a pseudo-header (RFC 768, RFC 793, RFC 8200 8.1; the sum
 * csum_tcpudp_nofold and csum_ipv6_magic add, in network byte order), not reduced: the canonical big-endian
 * 16-bit sum of the `size`-byte addresses at saddr and daddr together, the two 16-bit halves of `length` and
 * `proto`. The twin adds the two addresses' canonical sums apart: the totals are congruent mod 0xffff and 0 only
 * together, so csum_reduce(_, 16) of either (all the walkers take of it, with or without more canonical sums
 * added) is the same. */
static inline uint64_t csum_pseudo(const unsigned char *saddr, const unsigned char *daddr, uint64_t size,
                                   uint64_t length, uint32_t proto)
{
    uint64_t both = csum_add_ea64(csum_addr_sum64(saddr, size, 1), csum_addr_sum64(daddr, size, 1));
    return csum_reduce(both, 16) + csum_pseudo_length(length) + proto;
}

/* --- plain sums (carries kept), for csum/engine/_explain.c's simulated mistakes --------------------------- */

/* csum/explain/sums.py sum16 / sum32: the plain (not end-around) sum of p[0:n] as big-endian words of `bytes` (2 or
 * 4) bytes, the last one zero-padded, the first byte taken at offset `phase` (0..bytes-1) of its word (a span
 * summed as part of a longer one): each byte weighed by its place in its word. Exact below 2**64: n < 2**32. */
static inline uint64_t csum_plain_words(const unsigned char *p, uint64_t n, unsigned bytes, unsigned phase)
{
    uint64_t lanes[4] = {0, 0, 0, 0}, s = 0;
    for (uint64_t i = 0; i < n; i++)
        lanes[(i + phase) & (bytes - 1)] += p[i];
    for (unsigned k = 0; k < bytes; k++)
        s += lanes[k] << (8 * (bytes - 1 - k));
    return s;
}

/* One end-around fold of x at `w` bits, not repeated (what a sender that folds once keeps: may exceed 2**w - 1). */
static inline uint64_t csum_fold_once(uint64_t x, int w)
{
    return (x & (((uint64_t)1 << w) - 1)) + (x >> w);
}

/* --- include/net/checksum.h on u32/u16 values, as csum/core/arith.py writes them ------------------------ */

/* csum_add (csum/core/arith.py add32): the 32-bit end-around-carry add. */
static inline uint32_t csum_add32(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a + b;
    return (uint32_t)((r & M32) + (r >> 32));
}

/* csum_sub (arith.py sub32): csum_add of the complement. */
static inline uint32_t csum_sub32(uint32_t a, uint32_t b)
{
    return csum_add32(a, ~b);
}

/* csum16_add (arith.py add16): the 16-bit end-around-carry add of two 16-bit values. */
static inline uint32_t csum16_add(uint32_t a, uint32_t b)
{
    uint32_t r = a + b;
    return (r & M16) + (r >> 16);
}

/* csum16_sub (arith.py sub16): csum16_add of the complement. */
static inline uint32_t csum16_sub(uint32_t a, uint32_t b)
{
    return csum16_add(a, b ^ M16);
}

/* csum_from32to16 (arith.py from32to16): a u32 folded to 16 bits, not complemented (x + ror32(x, 16), its high
 * half). */
static inline uint32_t csum_from32to16(uint32_t x)
{
    x += (x >> 16) | (x << 16);
    return x >> 16;
}

/* include/asm-generic/checksum.h csum_fold (arith.py fold): a u32 folded to 16 bits and complemented. */
static inline uint32_t csum_fold32(uint32_t x)
{
    return csum_from32to16(x) ^ M16;
}

/* csum_replace2 (csum/core/ones.py): ~csum16_add(csum16_sub(~sum, old), new). */
static inline uint32_t csum_replace2(uint32_t sum16, uint32_t old, uint32_t new)
{
    return csum16_add(csum16_sub(sum16 ^ M16, old), new) ^ M16;
}

/* csum_replace4 (ones.py): csum_fold(csum_add(csum_sub(~csum_unfold(sum), from), to)). */
static inline uint32_t csum_replace4(uint32_t sum16, uint32_t from, uint32_t to)
{
    return csum_fold32(csum_add32(csum_sub32(sum16 ^ M32, from), to));
}

/* csum_replace_by_diff (ones.py): csum_fold(csum_sub(diff, csum_unfold(sum))). */
static inline uint32_t csum_replace_by_diff(uint32_t sum16, uint32_t diff)
{
    return csum_fold32(csum_add32(diff, sum16 ^ M32));
}

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
/* csum_diff(SHAPE_GENERIC_LE, f, n, t, n, 0, ...) for n > 0, inline (the rewriter takes one per address it maps):
 * bpf_csum_diff over lib/checksum.c's csum_partial on a little-endian CPU, csum_from32to16(csum_sub(csum_partial(t),
 * csum_partial(f))), where that csum_partial with seed 0 is the canonical little-endian 16-bit sum. */
static inline uint32_t csum_diff_generic_le(const unsigned char *f, const unsigned char *t, uint64_t n)
{
    return csum_from32to16(csum_sub32((uint32_t)csum_reduce(csum_addr_sum64(t, n, 0), 16),
                                      (uint32_t)csum_reduce(csum_addr_sum64(f, n, 0), 16)));
}
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

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif

/*
 * csum/engine/_arith.c: the arithmetic of csum's C accelerator, without Python (declarations and contracts:
 * csum/engine/_arith.h). Each function is a transcription of its Python twin, named in its comment; the
 * tests compare the two on every shape, alignment and corner (tests/engine/test_fast_paths.py).
 *
 * Sums. A buffer is read as 64-bit words w (little-endian: the bytes as stored; big-endian:
 * byte-reversed), the last one zero-padded at its high-address end. Each w is split into
 * hi = w >> 32 and lo = w & 0xffffffff and the two halves are added, without carries, into two
 * 64-bit accumulators.
 *
 * Bound (why the accumulators cannot overflow): a block holds at most 2**34 bytes, i.e. at most 2**31
 * words, so each accumulator ends the block at most 2**31 * (2**32 - 1) < 2**63 < 2**64. Buffers
 * larger than a block (more than 16 GiB) are summed block by block.
 *
 * Each block's exact integer sum is T = lo_sum + hi_sum * 2**32. It is added into a running 64-bit
 * end-around-carry sum S (mod 2**64 - 1, where 2**64 = 1): hi_sum * 2**32 is congruent to hi_sum
 * rotated left by 32 bits, because a rotation by k bits is a multiplication by 2**k mod 2**64 - 1. An
 * end-around add of two values is 0 only when both are 0 (a + b = 2**64 wraps to 0 and the carry makes
 * it 1), and rotations keep 0 and non-0 apart, so S is the canonical 64-bit sum: 0 only for an all-zero
 * buffer, else 1..2**64-1. Every width w in {8, 16, 32} divides 64, so 2**w - 1 divides 2**64 - 1 and
 * the canonical w-bit sum is the value in 1..2**w-1 congruent to S mod 2**w - 1 for S != 0, and 0 for
 * S == 0 (csum_reduce folds down to it). Reading the whole
 * buffer as one integer N gives N mod (2**w - 1) the same way, which is what the pure-Python engine
 * computes: the two agree exactly.
 *
 * Shapes. The csum/arch algorithms add a few integers (head bytes, halfwords, a run of words, tail
 * pieces) into an end-around accumulator and reduce it (their docstrings prove each is canonical). Here
 * the same integers go into one 64-bit end-around sum (add_ea64): congruent to their total mod
 * 2**64 - 1, hence mod 2**32 - 1 and 2**16 - 1, and 0 only when every one is 0, so reducing it gives
 * the Python's canonical(total, width) bit for bit; a run of words enters as its csum_sum64 value,
 * which is congruent to the run read as one integer and 0 only when it is.
 */
#include "_arith.h"

#include <errno.h>
#include <string.h>

#define BLOCK_BYTES ((uint64_t)1 << 34)

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__)) && __GNUC__ >= 6
#define CSUM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CSUM_CLONES
#endif

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define AS_LE(w) __builtin_bswap64(w)
#define AS_BE(w) (w)
#else
#define AS_LE(w) (w)
#define AS_BE(w) __builtin_bswap64(w)
#endif

/* Sums of the low and high 32-bit halves of nwords whole 64-bit words (nwords <= 2**31), read in byte order big;
 * inlined into one loop per byte order, each built for AVX2 and without it. */
static inline __attribute__((always_inline)) void lanes(const unsigned char *p, uint64_t nwords, uint64_t *lo,
                                                        uint64_t *hi, int big)
{
    uint64_t a = 0, b = 0;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = big ? AS_BE(load64(p + 8 * i)) : AS_LE(load64(p + 8 * i));
        a += w & 0xffffffffu;
        b += w >> 32;
    }
    *lo = a;
    *hi = b;
}

CSUM_CLONES static void lanes_le(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    lanes(p, nwords, lo, hi, 0);
}

CSUM_CLONES static void lanes_be(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    lanes(p, nwords, lo, hi, 1);
}

static inline uint64_t add_ea64(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r + (r < a);
}

static inline uint64_t rot32(uint64_t x)
{
    return (x << 32) | (x >> 32);
}

uint64_t csum_sum64(const unsigned char *p, uint64_t n, int big, uint64_t block)
{
    uint64_t s = 0, lo, hi;
    uint64_t whole = n & ~(uint64_t)7;
    for (uint64_t done = 0; done < whole;) {
        uint64_t len = whole - done < block ? whole - done : block;
        if (big)
            lanes_be(p + done, len / 8, &lo, &hi);
        else
            lanes_le(p + done, len / 8, &lo, &hi);
        s = add_ea64(add_ea64(s, lo), rot32(hi));
        done += len;
    }
    if (n & 7) {
        unsigned char tail[8] = {0};
        memcpy(tail, p + whole, (size_t)(n & 7));
        uint64_t w = big ? AS_BE(load64(tail)) : AS_LE(load64(tail));
        s = add_ea64(s, w);
    }
    return s;
}

/* Two end-around folds of a value below 2**(2*w) leave the canonical w-bit one: the first gives at most
 * 2**(w+1) - 2, the second at most 2**w - 1, each congruent mod 2**w - 1 and 0 only for 0 (the kernel's
 * from64to32 / from32to16 way, without a division). */
static inline uint64_t fold_to(uint64_t x, int w)
{
    uint64_t m = ((uint64_t)1 << w) - 1;
    x = (x & m) + (x >> w);
    return (x & m) + (x >> w);
}

uint64_t csum_reduce(uint64_t s, int width)
{
    for (int w = 32; w >= width; w /= 2)
        s = fold_to(s, w);
    return s;
}

uint64_t csum_ones(const unsigned char *p, uint64_t n, int width, int big)
{
    return csum_reduce(csum_sum64(p, n, big, BLOCK_BYTES), width);
}

/* --- include/net/checksum.h, as csum/core/arith.py writes it --------------------------------------- */

uint32_t csum_add32(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a + b;
    return (uint32_t)((r & M32) + (r >> 32));
}

static inline uint32_t add16(uint32_t a, uint32_t b)
{
    uint32_t r = a + b;
    return (r & M16) + (r >> 16);
}

static inline uint32_t ror32(uint32_t x, unsigned n)
{
    n &= 31;
    return n ? (x >> n) | (x << (32 - n)) : x;
}

static inline uint32_t swab16(uint32_t x)
{
    return ((x & 0xff) << 8) | (x >> 8);
}

uint32_t csum_from32to16(uint32_t x)
{
    x += ror32(x, 16);
    return x >> 16;
}

uint32_t csum_fold32(uint32_t x)
{
    return csum_from32to16(x) ^ M16;
}

uint32_t csum_replace2(uint32_t sum16, uint32_t old, uint32_t new)
{
    return add16(add16(sum16 ^ M16, old ^ M16), new) ^ M16;
}

uint32_t csum_replace4(uint32_t sum16, uint32_t from, uint32_t to)
{
    return csum_fold32(csum_add32(csum_add32(sum16 ^ M32, from ^ M32), to));
}

uint32_t csum_replace_by_diff(uint32_t sum16, uint32_t diff)
{
    return csum_fold32(csum_add32(diff, sum16 ^ M32));
}

/* --- the csum_partial shapes (csum/arch/) ------------------------------------------------------ */

const char *const csum_shape_names[N_SHAPES] = {
    [SHAPE_GENERIC_LE] = "lib/checksum.c-le", [SHAPE_GENERIC_BE] = "lib/checksum.c-be", [SHAPE_PARISC] = "parisc",
    [SHAPE_X86_64] = "x86_64", [SHAPE_X86_64_5_17] = "x86_64-5.17", [SHAPE_I386] = "i386", [SHAPE_ARM] = "arm",
    [SHAPE_POWERPC64] = "powerpc64", [SHAPE_POWERPC64LE] = "powerpc64le", [SHAPE_S390X] = "s390x",
};

static inline uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t load32(const unsigned char *p, int big)
{
    return big ? be16(p) << 16 | be16(p + 2) : le16(p) | le16(p + 2) << 16;
}

/* csum/arch/x86.py x86_64_v5_17 at an odd address (n >= 1). */
static uint32_t x86_64_5_17_odd(const unsigned char *p, uint64_t n, uint32_t seed)
{
    uint64_t s = add_ea64(add_ea64(ror32(seed, 8), (uint64_t)p[0] << 8), csum_sum64(p + 1, n - 1, 0, BLOCK_BYTES));
    return swab16((uint32_t)csum_reduce(s, 16));
}

/* csum/arch/i386.py i386_ppro: the PPRO body of arch/x86/lib/checksum_32.S. */
static uint32_t i386_ppro(const unsigned char *p, uint64_t n, uint32_t seed, unsigned align)
{
    uint64_t pos = 0;
    uint32_t eax = seed;
    int odd = align & 1;
    if (odd) {
        if (!n)
            return seed;
        eax = ror32(csum_add32(eax, p[0]), 24);
        pos = 1;
    }
    if (((align + pos) & 2) && n - pos >= 2) {
        eax = (eax & ~M16) + add16(eax & M16, le16(p + pos));
        pos += 2;
    }
    eax = (uint32_t)csum_reduce(add_ea64(eax, csum_sum64(p + pos, n - pos, 0, BLOCK_BYTES)), 32);
    return odd ? ror32(eax, 24) : eax;
}

/* csum/arch/arm.py arm: arch/arm/lib/csumpartial.S (little-endian). */
static uint32_t arm(const unsigned char *p, uint64_t n, uint32_t seed, unsigned align)
{
    if (!n)
        return seed;
    int odd = align & 1;
    uint64_t s = odd ? ror32(seed, 8) : seed, pos = 0;
    if (odd) {
        s = add_ea64(s, (uint64_t)p[0] << 8);
        pos = 1;
    }
    if (n >= 8 && ((align + pos) & 2)) {
        s = add_ea64(s, le16(p + pos));
        pos += 2;
    }
    if (n >= 8) {
        uint64_t words = (n - pos) & ~(uint64_t)3;
        s = add_ea64(s, csum_sum64(p + pos, words, 0, BLOCK_BYTES));
        pos += words;
    }
    for (; n - pos >= 2; pos += 2)
        s = add_ea64(s, le16(p + pos));
    if (pos < n)
        s = add_ea64(s, p[pos]);
    uint32_t r = (uint32_t)csum_reduce(s, 32);
    return odd ? ror32(r, 8) : r;
}

/* csum/arch/powerpc.py _terms + canonical: arch/powerpc/lib/checksum_64.S __csum_partial. */
static uint32_t powerpc64(const unsigned char *p, uint64_t n, uint32_t seed, unsigned align, int big)
{
    uint64_t s = seed, pos = 0;
    if (n >= 8) {
        for (unsigned k = (4 - (align >> 1)) & 3; k; k--, pos += 2)
            s = add_ea64(s, big ? be16(p + pos) : le16(p + pos));
        uint64_t words = (n - pos) & ~(uint64_t)7;
        s = add_ea64(s, csum_sum64(p + pos, words, big, BLOCK_BYTES));
        pos += words;
    }
    if (n - pos >= 4) {
        s = add_ea64(s, load32(p + pos, big));
        pos += 4;
    }
    if (n - pos >= 2) {
        s = add_ea64(s, big ? be16(p + pos) : le16(p + pos));
        pos += 2;
    }
    if (pos < n)
        s = add_ea64(s, big ? (uint64_t)p[pos] << 8 : p[pos]);
    return (uint32_t)csum_reduce(s, 32);
}

uint32_t csum_shape_partial(int shape, const unsigned char *p, uint64_t n, uint32_t seed, unsigned align)
{
    switch (shape) {
    case SHAPE_GENERIC_LE:
        return csum_add32((uint32_t)csum_ones(p, n, 16, 0), seed);
    case SHAPE_GENERIC_BE:
        return csum_add32((uint32_t)csum_ones(p, n, 16, 1), seed);
    case SHAPE_PARISC:
        return csum_from32to16(csum_add32((uint32_t)csum_ones(p, n, 16, 1), seed));
    case SHAPE_X86_64_5_17:  /* at an even address, the current form */
        if (align & 1)
            return n ? x86_64_5_17_odd(p, n, seed) : seed;
        return csum_shape_partial(SHAPE_X86_64, p, n, seed, align);
    case SHAPE_X86_64:
        return csum_add32((uint32_t)csum_ones(p, n, 32, 0), seed);
    case SHAPE_S390X:
        return csum_add32((uint32_t)csum_ones(p, n, 32, 1), seed);
    case SHAPE_I386:
        return i386_ppro(p, n, seed, align);
    case SHAPE_ARM:
        return arm(p, n, seed, align);
    case SHAPE_POWERPC64:
        return powerpc64(p, n, seed, align, 1);
    default: /* SHAPE_POWERPC64LE: the caller passes shapes below N_SHAPES only */
        return powerpc64(p, n, seed, align, 0);
    }
}

/* --- the helpers over a shape (csum/core/diff.py) ---------------------------------------------------- */

uint32_t csum_diff(int shape, const unsigned char *f, uint64_t lf, const unsigned char *t, uint64_t lt,
                   uint32_t seed, unsigned frm_align, unsigned to_align)
{
    uint32_t ret = seed;
    if (lf && lt)
        ret = csum_add32(csum_shape_partial(shape, t, lt, ret, to_align),
                         csum_shape_partial(shape, f, lf, 0, frm_align) ^ M32);
    else if (lt)
        ret = csum_shape_partial(shape, t, lt, ret, to_align);
    else if (lf)
        ret = csum_shape_partial(shape, f, lf, ret ^ M32, frm_align) ^ M32;
    return csum_from32to16(ret);
}

uint32_t csum_diff_legacy(int shape, const unsigned char *f, uint64_t lf, const unsigned char *t, uint64_t lt,
                          uint32_t seed)
{
    unsigned char scratch[SCRATCH_BYTES];
    for (uint64_t i = 0; i < lf; i++)
        scratch[i] = (unsigned char)~f[i];
    memcpy(scratch + lf, t, (size_t)lt);
    return csum_shape_partial(shape, scratch, lf + lt, seed, 0);
}

uint32_t inet_proto_csum_replace16(int shape, uint32_t sum16, const unsigned char *f, const unsigned char *t)
{
    unsigned char diff[32];
    for (int i = 0; i < 16; i++)
        diff[i] = (unsigned char)~f[i];
    memcpy(diff + 16, t, 16);
    return csum_fold32(csum_shape_partial(shape, diff, 32, sum16 ^ M32, 0));
}

/* --- bpf_l3/l4_csum_replace (csum/bpf/helpers.py) ------------------------------------------------------ */

/* include/uapi/linux/bpf.h (csum/bpf/flags.py) and include/linux/skbuff.h. */
#define BPF_F_HDR_FIELD_MASK 0xfu
#define BPF_F_PSEUDO_HDR (1u << 4)
#define BPF_F_MARK_MANGLED_0 (1u << 5)
#define BPF_F_MARK_ENFORCE (1u << 6)
#define BPF_F_IPV6 (1u << 7)
#define CHECKSUM_PARTIAL 3

/* The checks csum/bpf/misuse.py makes of every call, on the values alone (its _common). */
static int misuse_common(uint64_t size, uint64_t from, uint64_t to)
{
    return (size == 0 && from) || (size == 2 && (from > M16 || to > M16));
}

/* csum/bpf/helpers.py _sum_field: 0, or -EFAULT for a field the helper does not reach. */
static long field_fault(uint64_t len, uint64_t offset)
{
    return offset > 0xffff || (offset & 1) || offset + 2 > len ? -EFAULT : 0;
}

static void store16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

int csum_l3_replace(unsigned char *pkt, uint64_t len, uint64_t offset, uint64_t from, uint64_t to, uint64_t flags,
                    long *ret)
{
    uint64_t size = flags & BPF_F_HDR_FIELD_MASK;
    if (flags & ~(uint64_t)BPF_F_HDR_FIELD_MASK) {
        *ret = -EINVAL;
        return 1;
    }
    if ((*ret = field_fault(len, offset)) != 0)
        return 1;
    if (misuse_common(size, from, to))
        return 0;
    uint32_t old = le16(pkt + offset), new;
    if (size == 0)
        new = csum_replace_by_diff(old, (uint32_t)to);
    else if (size == 2)
        new = csum_replace2(old, (uint32_t)from & M16, (uint32_t)to & M16);
    else if (size == 4)
        new = csum_replace4(old, (uint32_t)from, (uint32_t)to);
    else {
        *ret = -EINVAL;
        return 1;
    }
    store16(pkt + offset, new);
    *ret = 0;
    return 1;
}

int csum_l4_replace(unsigned char *pkt, uint64_t len, uint64_t offset, uint64_t from, uint64_t to, uint64_t flags,
                    int ip_summed, long *ret)
{
    const uint64_t allowed = BPF_F_HDR_FIELD_MASK | BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE |
                             BPF_F_IPV6;
    uint64_t size = flags & BPF_F_HDR_FIELD_MASK;
    int pseudo = (flags & BPF_F_PSEUDO_HDR) != 0;
    if (flags & ~allowed) {
        *ret = -EINVAL;
        return 1;
    }
    if ((*ret = field_fault(len, offset)) != 0)
        return 1;
    /* The cases csum/bpf/misuse.py check_l4 parses the packet for: left to it. */
    if (misuse_common(size, from, to) || (flags & BPF_F_MARK_MANGLED_0) || (pseudo && size == 2 && from != to) ||
        (pseudo && size == 0))
        return 0;
    if (size != 0 && size != 2 && size != 4) {
        *ret = -EINVAL;
        return 1;
    }
    uint32_t mask = size == 2 ? M16 : M32, f = (uint32_t)from & mask, t = (uint32_t)to & mask;
    uint32_t old = le16(pkt + offset), new;
    if (ip_summed != CHECKSUM_PARTIAL)
        new = size == 0 ? csum_replace_by_diff(old, t) : csum_replace4(old, f, t);
    else if (!pseudo)
        new = old;
    else
        new = csum_from32to16(csum_add32(csum_add32(old, f ^ M32), t));
    store16(pkt + offset, new);
    *ret = 0;
    return 1;
}

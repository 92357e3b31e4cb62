/*
 * csum/engine/_arith.c: the arithmetic of csum's C, without Python, linked into every extension (declarations and
 * contracts: csum/engine/_arith.h). Each function is a transcription of its Python twin, named in its comment; the
 * tests compare the two on every shape, alignment and corner (tests/engine/test_fast_paths.py), and the walker's and
 * the rewriter's differential tests the sums and verbs they call (tests/layers, tests/rewrite).
 *
 * Sums, folds and the include/net/checksum.h verbs are static inline in _arith.h (with the proof that the sums
 * are canonical); here: the word loop of long spans built for AVX2, the shapes and the helpers over them.
 *
 * Shapes. The csum/arch algorithms add a few integers (head bytes, halfwords, a run of words, tail
 * pieces) into an end-around accumulator and reduce it (their docstrings prove each is canonical). Here
 * the same integers go into one 64-bit end-around sum (csum_add_ea64): congruent to their total mod
 * 2**64 - 1, hence mod 2**32 - 1 and 2**16 - 1, and 0 only when every one is 0, so reducing it gives
 * the Python's canonical(total, width) bit for bit; a run of words enters as its csum_sum64 value,
 * which is congruent to the run read as one integer and 0 only when it is.
 */
#include "_arith.h"

#include <errno.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__)) && __GNUC__ >= 6
#define CSUM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CSUM_CLONES
#endif

/* --- the word loop of long spans (csum_sum64, _arith.h) --------------------------------------------------- */

/* Sums of the low and high 32-bit halves of nwords whole 64-bit words (nwords <= 2**31), read in byte order big. */
static inline __attribute__((always_inline)) void lanes(const unsigned char *p, uint64_t nwords, uint64_t *lo,
                                                        uint64_t *hi, int big)
{
    uint64_t a = 0, b = 0;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = big ? CSUM_AS_BE(csum_load64(p + 8 * i)) : CSUM_AS_LE(csum_load64(p + 8 * i));
        a += w & M32;
        b += w >> 32;
    }
    *lo = a;
    *hi = b;
}

CSUM_CLONES void csum_lanes_le(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    lanes(p, nwords, lo, hi, 0);
}

CSUM_CLONES void csum_lanes_be(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    lanes(p, nwords, lo, hi, 1);
}

/* --- the csum_partial shapes (csum/arch/) ------------------------------------------------------ */

const char *const csum_shape_names[N_SHAPES] = {
    [SHAPE_GENERIC_LE] = "lib/checksum.c-le", [SHAPE_GENERIC_BE] = "lib/checksum.c-be", [SHAPE_PARISC] = "parisc",
    [SHAPE_X86_64] = "x86_64", [SHAPE_X86_64_5_17] = "x86_64-5.17", [SHAPE_I386] = "i386", [SHAPE_ARM] = "arm",
    [SHAPE_POWERPC64] = "powerpc64", [SHAPE_POWERPC64LE] = "powerpc64le", [SHAPE_S390X] = "s390x",
};

static inline uint32_t ror32(uint32_t x, unsigned n)
{
    n &= 31;
    return n ? (x >> n) | (x << (32 - n)) : x;
}

static inline uint32_t swab16(uint32_t x)
{
    return ((x & 0xff) << 8) | (x >> 8);
}

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
    uint64_t s = csum_add_ea64(csum_add_ea64(ror32(seed, 8), (uint64_t)p[0] << 8),
                               csum_sum64(p + 1, n - 1, 0, CSUM_BLOCK_BYTES));
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
        eax = (eax & ~M16) + csum16_add(eax & M16, le16(p + pos));
        pos += 2;
    }
    eax = (uint32_t)csum_reduce(csum_add_ea64(eax, csum_sum64(p + pos, n - pos, 0, CSUM_BLOCK_BYTES)), 32);
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
        s = csum_add_ea64(s, (uint64_t)p[0] << 8);
        pos = 1;
    }
    if (n >= 8 && ((align + pos) & 2)) {
        s = csum_add_ea64(s, le16(p + pos));
        pos += 2;
    }
    if (n >= 8) {
        uint64_t words = (n - pos) & ~(uint64_t)3;
        s = csum_add_ea64(s, csum_sum64(p + pos, words, 0, CSUM_BLOCK_BYTES));
        pos += words;
    }
    for (; n - pos >= 2; pos += 2)
        s = csum_add_ea64(s, le16(p + pos));
    if (pos < n)
        s = csum_add_ea64(s, p[pos]);
    uint32_t r = (uint32_t)csum_reduce(s, 32);
    return odd ? ror32(r, 8) : r;
}

/* csum/arch/powerpc.py _terms + canonical: arch/powerpc/lib/checksum_64.S __csum_partial. */
static uint32_t powerpc64(const unsigned char *p, uint64_t n, uint32_t seed, unsigned align, int big)
{
    uint64_t s = seed, pos = 0;
    if (n >= 8) {
        for (unsigned k = (4 - (align >> 1)) & 3; k; k--, pos += 2)
            s = csum_add_ea64(s, big ? be16(p + pos) : le16(p + pos));
        uint64_t words = (n - pos) & ~(uint64_t)7;
        s = csum_add_ea64(s, csum_sum64(p + pos, words, big, CSUM_BLOCK_BYTES));
        pos += words;
    }
    if (n - pos >= 4) {
        s = csum_add_ea64(s, load32(p + pos, big));
        pos += 4;
    }
    if (n - pos >= 2) {
        s = csum_add_ea64(s, big ? be16(p + pos) : le16(p + pos));
        pos += 2;
    }
    if (pos < n)
        s = csum_add_ea64(s, big ? (uint64_t)p[pos] << 8 : p[pos]);
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

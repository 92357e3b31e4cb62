/*
 * csum's own shims for compiling one kernel checksum file as a user-space object
 * (tools/vectors/make_vectors.py force-includes this header; the kernel's own headers
 * are never used). Only what the compiled files need: fixed-width types, the sparse
 * annotations as no-ops, the byte-order macro, and the few helpers they call, each
 * written here from its documented behaviour (include/net/checksum.h,
 * include/asm-generic/checksum.h, include/linux/bitops.h, asm/word-at-a-time.h).
 */
#ifndef CSUM_SHIM_H
#define CSUM_SHIM_H

#define EXPORT_SYMBOL(sym)
/* IS_ENABLED(CONFIG_X): an arch shim defines CSUM_IS_ENABLED_CONFIG_X to 0 or 1 for the options its file tests. */
#define IS_ENABLED(option) CSUM_IS_ENABLED_##option
#ifdef __ASSEMBLER__
/* An assembler file needs only the macros of its arch shim (csum_<arch>.h, force-included after this one). */
#else
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef u32 __wsum;
typedef u16 __sum16;
typedef u32 __be32;
typedef u16 __be16;

#define __force
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __user
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define __BIG_ENDIAN 4321
#else
#define __LITTLE_ENDIAN 1234
#endif

static inline u32 ror32(u32 word, unsigned int shift)
{
	return (word >> (shift & 31)) | (word << ((-shift) & 31));
}

static inline u32 rol32(u32 word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

#ifndef CSUM_KERNEL_PRIMS /* the primitives targets take these from the kernel's own headers */
/* Fold a 32-bit sum to 16 bits, end-around (the value include/net/checksum.h's returns). */
static inline u16 csum_from32to16(u32 sum)
{
	u32 folded = (sum & 0xffff) + (sum >> 16);
	return (u16)((folded & 0xffff) + (folded >> 16));
}

static inline __sum16 csum_fold(__wsum sum)
{
	return (__sum16)~csum_from32to16(sum);
}
#endif

static inline u16 swab16(u16 x)
{
	return __builtin_bswap16(x);
}

static inline u32 swab32(u32 x)
{
	return __builtin_bswap32(x);
}

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define htonl(x) ((u32)(x))
#define htons(x) ((u16)(x))
#define be16_to_cpu(x) ((u16)(x))
#define le16_to_cpu(x) __builtin_bswap16(x)
#else
#define htonl(x) __builtin_bswap32(x)
#define htons(x) __builtin_bswap16(x)
#define be16_to_cpu(x) __builtin_bswap16(x)
#define le16_to_cpu(x) ((u16)(x))
#endif

struct in6_addr {
	union {
		unsigned char s6_addr[16];
		__be32 s6_addr32[4];
	};
};

#ifndef CSUM_KERNEL_PRIMS
/* x86's add32_with_carry (asm/checksum_64.h): a 32-bit add whose carry is added back in. */
static inline unsigned add32_with_carry(unsigned a, unsigned b)
{
	u64 r = (u64)a + b;
	return (u32)(r + (r >> 32));
}
#endif

/* What net/core/filter.c's bpf_csum_diff needs (tools/vectors/harness_bpf.c). */
#define EINVAL 22
#define MAX_BPF_STACK 512
#define BPF_CALL_5(name, t1, a1, t2, a2, t3, a3, t4, a4, t5, a5) u64 name(t1 a1, t2 a2, t3 a3, t4 a4, t5 a5)
#define DEFINE_PER_CPU(type, name) type name __attribute__((aligned(64)))
#define this_cpu_ptr(ptr) (ptr)
/* The scratch pad's bottom-half lock (v6.12 on): one thread here, nothing to lock. */
typedef struct { int unused; } local_lock_t;
#define INIT_LOCAL_LOCK(name) { 0 }
#define local_lock_nested_bh(lock) ((void)(lock))
#define local_unlock_nested_bh(lock) ((void)(lock))
__wsum csum_partial(const void *buff, int len, __wsum sum);

/* include/net/checksum.h csum_add / csum_sub: 32-bit add with end-around carry, and of the complement. */
static inline __wsum csum_add(__wsum csum, __wsum addend)
{
	u32 res = csum + addend;
	return res + (res < addend);
}

static inline __wsum csum_sub(__wsum csum, __wsum addend)
{
	return csum_add(csum, ~addend);
}

/* Instrumentation hooks: nothing to check outside the kernel. */
#define __no_sanitize_address
#define kasan_check_read(p, size) ((void)(p), (void)(size))

/* An arch file that defines do_csum (CSUM_ARCH_DO_CSUM): lib/checksum.c calls it instead of its own. */
#ifdef CSUM_ARCH_DO_CSUM
#define do_csum do_csum
unsigned int do_csum(const unsigned char *buff, int len);
#endif

/* The 8 bytes at addr as one native word; the harness keeps 64 readable bytes after every buffer. */
static inline unsigned long load_unaligned_zeropad(const void *addr)
{
	unsigned long word;
	memcpy(&word, addr, sizeof(word));
	return word;
}

#endif /* __ASSEMBLER__ */
#endif

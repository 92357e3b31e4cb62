/*
 * csum's shim for the csum_partial part of arch/mips/lib/csum_partial.S: the o32 register
 * names (asm/regdef.h; a 64-bit build, CONFIG_64BIT, renames t0..t7 to the same o32 numbers
 * itself), LEAF/END (asm/asm.h) and the LONG_/PTR_ instruction names (asm/asm.h): the 32-bit
 * instructions on a 32-bit kernel, the doubleword ones on a 64-bit (n64) kernel. For the C of
 * arch/mips/include/asm/checksum.h (the primitives targets): the IS_ENABLED options it tests,
 * from the compiler's ABI and byte order, and BUILD_BUG, which those options never reach.
 */
#ifdef __ASSEMBLER__
#define zero $0
#define AT $1
#define v0 $2
#define v1 $3
#define a0 $4
#define a1 $5
#define a2 $6
#define a3 $7
#define t0 $8
#define t1 $9
#define t2 $10
#define t3 $11
#define t4 $12
#define t5 $13
#define t6 $14
#define t7 $15
#define s0 $16
#define s1 $17
#define s2 $18
#define s3 $19
#define s4 $20
#define s5 $21
#define s6 $22
#define s7 $23
#define t8 $24
#define t9 $25
#define sp $29
#define ra $31
#define LEAF(name) .text; .globl name; .align 2; .type name, @function; .ent name, 0; name: .frame sp, 0, ra
#define END(name) .size name, . - name; .end name
#if _MIPS_SZLONG == 64
#define LONG_SUBU dsubu
#define LONG_SRL dsrl
#define PTR_ADDU daddu
#define PTR_ADDIU daddiu
#else
#define LONG_SUBU subu
#define LONG_SRL srl
#define PTR_ADDU addu
#define PTR_ADDIU addiu
#endif
#else /* C: arch/mips/include/asm/checksum.h */
#if _MIPS_SZLONG == 64
#define CSUM_IS_ENABLED_CONFIG_64BIT 1
#define CSUM_IS_ENABLED_CONFIG_32BIT 0
#else
#define CSUM_IS_ENABLED_CONFIG_64BIT 0
#define CSUM_IS_ENABLED_CONFIG_32BIT 1
#endif
#ifdef __MIPSEL__
#define CSUM_IS_ENABLED_CONFIG_CPU_LITTLE_ENDIAN 1
#else
#define CSUM_IS_ENABLED_CONFIG_CPU_LITTLE_ENDIAN 0
#endif
#define BUILD_BUG() __builtin_trap()
#endif

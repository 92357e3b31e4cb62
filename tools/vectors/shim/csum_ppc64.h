/*
 * csum's shim for the __csum_partial part of arch/powerpc/lib/checksum_64.S: register numbers
 * (rN, RN), the stack frame macros of asm/ppc_asm.h (a 256-byte frame, non-volatile GPR N saved at
 * 112 + (N - 14) * 8 inside it), and _GLOBAL for ELFv1 (big-endian: a function descriptor in .opd)
 * or ELFv2 (little-endian: a plain global). The C side calls __csum_partial directly, as the
 * kernel's inline csum_partial does for a length that is not a compile-time constant.
 */
#ifdef __ASSEMBLER__
#define r0 0
#define r1 1
#define r2 2
#define r3 3
#define r4 4
#define r5 5
#define r6 6
#define r7 7
#define r8 8
#define r9 9
#define r10 10
#define r11 11
#define r12 12
#define r13 13
#define r14 14
#define r15 15
#define r16 16
#define R14 14
#define R15 15
#define R16 16
#define STACKFRAMESIZE 256
#define STK_REG(i) (112 + ((i) - 14) * 8)
#if _CALL_ELF == 2
#define _GLOBAL(name) .text; .globl name; .type name, @function; .align 2; name:
#else
#define _GLOBAL(name) .section ".opd", "aw"; .align 3; .globl name; name: .quad .name, .TOC.@tocbase, 0; \
	.previous; .text; .globl .name; .type .name, @function; .align 2; .name:
#endif
#endif

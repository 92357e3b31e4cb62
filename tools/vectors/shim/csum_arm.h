/*
 * csum's shim for arch/arm/lib/csumpartial.S (32-bit ARM state, little-endian): the linkage and
 * assembler macros that file uses, written from their documented meaning (include/linux/linkage.h
 * ENTRY/ENDPROC, arch/arm/include/asm/assembler.h put_byte_N and ret).
 */
#ifdef __ASSEMBLER__
	.pushsection .note.GNU-stack, "", %progbits  /* no executable stack needed */
	.popsection
	.syntax unified
#define __LINUX_ARM_ARCH__ 7
#define ENTRY(name) .globl name; .type name, %function; .align 2; name:
#define ENDPROC(name) .size name, . - name
/* put_byte_N: the shift that places a byte at byte N of a little-endian word. */
#define put_byte_0 lsl #0
#define put_byte_1 lsl #8
	.macro ret, reg
	bx \reg
	.endm
#endif

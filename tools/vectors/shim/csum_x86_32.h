/*
 * csum's shim for the csum_partial part of arch/x86/lib/checksum_32.S (i386, asmlinkage: every
 * argument on the stack): SYM_FUNC_START/END (include/linux/linkage.h), RET, and JMP_NOSPEC
 * (asm/nospec-branch.h) as the plain indirect jump it is without retpolines.
 */
#ifdef __ASSEMBLER__
	.pushsection .note.GNU-stack, "", @progbits  /* no executable stack needed */
	.popsection
#define SYM_FUNC_START(name) .globl name; .type name, @function; .p2align 4; name:
#define SYM_FUNC_END(name) .size name, . - name
#define RET ret
#define JMP_NOSPEC jmp_nospec
	.macro jmp_nospec reg:req
	jmp *%\reg
	.endm
#endif

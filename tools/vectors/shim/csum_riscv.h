/*
 * csum's shim for arch/riscv/lib/csum.c (rv64): the kernel configuration it tests and the
 * run-time answers it asks for, as the target chooses them. CSUM_ZBB=1 builds the Zbb fold
 * (CONFIG_RISCV_ISA_ZBB, CONFIG_TOOLCHAIN_HAS_ZBB and asm goto with outputs available; the
 * ALTERNATIVE / riscv_has_extension_likely check resolved to "Zbb present", as on a CPU with
 * Zbb); CSUM_FAST_UNALIGNED is what has_fast_unaligned_accesses() answers.
 */
#include <stdbool.h>
#define CONFIG_64BIT 1
#define CSUM_IS_ENABLED_CONFIG_RISCV_ISA_ZBB CSUM_ZBB
#define CSUM_IS_ENABLED_CONFIG_TOOLCHAIN_HAS_ZBB CSUM_ZBB
#define CSUM_IS_ENABLED_CONFIG_RISCV_ALTERNATIVE CSUM_ZBB
#if CSUM_ZBB
#define CC_HAS_ASM_GOTO_TIED_OUTPUT 1
#endif
#define RISCV_ISA_EXT_ZBB 0
#define riscv_has_extension_likely(ext) true
/* ALTERNATIVE(old, new, ...): the instructions patched in when the extension is present. */
#define ALTERNATIVE(old, new, vendor, patch_id, enable) new
#define asm_goto_output(x...) asm goto(x)
#define has_fast_unaligned_accesses() CSUM_FAST_UNALIGNED

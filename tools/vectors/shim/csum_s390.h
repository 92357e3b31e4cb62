/*
 * csum's shim for arch/s390/lib/csum-partial.c on its vector-facility path (cpu_has_vx() = 1):
 * each fpu_* helper of asm/fpu-insn.h is the one z/Architecture vector instruction its name
 * says (VLVGF, VZERO, VLM, VL, VLL, VCKSM, VLGVF, VSTM, VST, VSTL: Principles of Operation, chapter 21-22),
 * written here as a macro so the register numbers stay assembly-time constants; the kernel FPU
 * save area and begin/end are nothing in user space.
 */
#include <stdbool.h>
#define cpu_has_vx() 1
#define DECLARE_KERNEL_FPU_ONSTACK8(name) int name __attribute__((unused))
#define kernel_fpu_begin(state, flags) ((void)(state))
#define kernel_fpu_end(state, flags) ((void)(state))
#define KERNEL_VXR_V16V23 0
#define fpu_vzero(v) asm volatile("vzero %%v" #v ::: "memory")
#define fpu_vlvgf(v, val, index) asm volatile("vlvgf %%v" #v ",%0," #index :: "d"((u32)(val)) : "memory")
#define fpu_vlm(v1, v3, p) asm volatile("vlm %%v" #v1 ",%%v" #v3 ",0(%0)" :: "a"(p) : "memory")
#define fpu_vl(v, p) asm volatile("vl %%v" #v ",0(%0)" :: "a"(p) : "memory")
#define fpu_vll(v, index, p) asm volatile("vll %%v" #v ",%0,0(%1)" :: "d"((u32)(index)), "a"(p) : "memory")
/* The stores of the copying variant (csum_partial_copy_nocheck), compiled in but not called here. */
#define fpu_vstm(v1, v3, p) asm volatile("vstm %%v" #v1 ",%%v" #v3 ",0(%0)" :: "a"(p) : "memory")
#define fpu_vst(v, p) asm volatile("vst %%v" #v ",0(%0)" :: "a"(p) : "memory")
#define fpu_vstl(v, index, p) asm volatile("vstl %%v" #v ",%0,0(%1)" :: "d"((u32)(index)), "a"(p) : "memory")
#define fpu_vcksm(v1, v2, v3) asm volatile("vcksm %%v" #v1 ",%%v" #v2 ",%%v" #v3 ::: "memory")
#define fpu_vlgvf(v, index) ({ unsigned long _r; asm volatile("vlgvf %0,%%v" #v "," #index : "=d"(_r) :: "memory"); (u32)_r; })
/* The non-vector path (the CKSM instruction) is not built: cpu_has_vx() is 1. */
static inline __wsum cksm(const void *buff, int len, __wsum sum)
{
	(void)buff, (void)len, (void)sum;
	__builtin_trap();
}

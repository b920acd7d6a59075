/* SPDX-License-Identifier: MIT */
/*
 * The loader on 32-bit Arm (its stub for EABI, in either instruction
 * set): what arch.h asks of a machine.
 */
#ifndef NCB_LOADER_ARCH_ARM_H
#define NCB_LOADER_ARCH_ARM_H

#define NCB_ARCH_EM EM_ARM

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h).
 * COMPAT_ELF_ET_DYN_BASE, 2 * TASK_SIZE_32 / 3, under a 64-bit kernel;
 * TASK_SIZE / 3 * 2 under a 32-bit one with the usual 3G/1G split.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) \
	((kernel_64) ? (2 * ((1ULL << 32) - 4096)) / 3 : 0xbf000000ULL / 3 * 2)

#if !defined(__ARMEB__)
/*
 * The stack: on a 64-bit kernel (arch/arm64, compat) STACK_TOP is
 * AARCH32_VECTORS_BASE, STACK_RND_MASK 8 MiB of pages and
 * arch_align_stack() up to a page; on a 32-bit one (arch/arm) TASK_SIZE,
 * 16 MiB below PAGE_OFFSET (0xbf000000 with the default split: another
 * shows in own), 0x7ff pages and no offset (asm-generic).
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) ((k) ? 0xffff0000ULL : 0xbf000000ULL)
#define NCB_ARCH_STACK_RND_MASK(k, pg) \
	((k) ? (0x800ULL << 12) / (pg) - 1 : 0x7ffULL)
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) ((k) ? (pg) : 0u)

#define NCB_ARCH_RSEQ_SIG 0xe7f5def3
#endif

#if defined(__ARM_EABI__)
#define NCB_ARCH_HANDOVER 1
#endif

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/*
 * ARM state (entered with bx at an even address), the list in r8.
 * ldr to pc interworks: a Thumb entry (odd address) stays Thumb.
 */
#ifdef __thumb__
#define NCB_ARM_MODE ".thumb\n"
#else
#define NCB_ARM_MODE ".arm\n"
#endif
__asm__(NCB_STUB_BEGIN_AS(".arm\n.align 2\n")
	"1:	ldr r7, [r8], #4\n"
	"	cmn r7, #1\n"
	"	beq 2f\n"
	"	ldmia r8!, {r0-r5}\n"
	"	svc #0\n"
	"	b 1b\n"
	"2:	ldmia r8, {r9, r10}\n"
	"	mov sp, r9\n"
	"	str r10, [sp, #-4]\n"
	"	mov r0, #0\n	mov r1, #0\n	mov r2, #0\n"
	"	mov r3, #0\n	mov r4, #0\n	mov r5, #0\n"
	"	mov r6, #0\n	mov r7, #0\n	mov r8, #0\n"
	"	mov r9, #0\n	mov r10, #0\n	mov r11, #0\n"
	"	mov r12, #0\n	mov lr, #0\n"
	"	ldr pc, [sp, #-4]\n"
	NCB_STUB_END_AS(NCB_ARM_MODE));

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("r8") = list;

	__asm__ volatile("bx %1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

/* SPDX-License-Identifier: MIT */
/* The loader on i386: what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_I386_H
#define NCB_LOADER_ARCH_I386_H

#define NCB_ARCH_EM EM_386

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h).
 * A 64-bit kernel: COMPAT_ELF_ET_DYN_BASE, TASK_UNMAPPED_BASE (a third of
 * 4 GiB less a page, page-aligned) + 16 MiB.  A 32-bit one: 0x400000.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) \
	((kernel_64) ? 0x56555000ULL : 0x400000ULL)

/*
 * The stack (arch/x86/include/asm/page_32_types.h, page_64_types.h,
 * elf.h; process.c): STACK_TOP is TASK_SIZE, on a 64-bit kernel
 * IA32_PAGE_OFFSET (4 GiB less two pages), on a 32-bit one PAGE_OFFSET
 * (3 GiB with the default split: top_rules() sees another);
 * randomize_stack_top() takes STACK_RND_MASK (0x7ff) pages off,
 * arch_align_stack() up to 8 KiB.
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) ((k) ? 0xffffe000ULL : 0xc0000000ULL)
#define NCB_ARCH_STACK_RND_MASK(k, pg) 0x7ffULL
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) 8192u

#define NCB_ARCH_RSEQ_SIG 0x53053053

#define NCB_ARCH_HANDOVER 1

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/*
 * Seven registers carry a call: the list is walked with pop, the stack
 * pointer standing in for the eighth.  No handler is left to push onto
 * it (the caller reset them), and int $0x80 works on every kernel.
 */
__asm__(NCB_STUB_BEGIN
	"1:	popl %eax\n"
	"	cmpl $-1, %eax\n"
	"	je 2f\n"
	"	popl %ebx\n	popl %ecx\n	popl %edx\n"
	"	popl %esi\n	popl %edi\n	popl %ebp\n"
	"	int $0x80\n"
	"	jmp 1b\n"
	"2:	popl %eax\n"
	"	popl %ecx\n"
	"	movl %eax, %esp\n"
	"	movl %ecx, -4(%esp)\n"
	"	xorl %eax, %eax\n	xorl %ebx, %ebx\n"
	"	xorl %ecx, %ecx\n	xorl %edx, %edx\n"
	"	xorl %esi, %esi\n	xorl %edi, %edi\n"
	"	xorl %ebp, %ebp\n"
	"	jmp *-4(%esp)\n"
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	__asm__ volatile("movl %0, %%esp\n\tjmp *%1"
			 : : "r"(list), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

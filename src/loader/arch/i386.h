/* SPDX-License-Identifier: MIT */
/*
 * The loader on i386: what its ELF images say, where execve puts
 * them, what its C library registers, and the handover's stub.  One of
 * arch.h's; a port is one such file.
 */
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

/* The rseq signature its libc registers with (glibc's rseq.h). */
#define NCB_ARCH_RSEQ_SIG 0x53053053

/* What glibc's __rseq_offset is relative to: the thread pointer. */
static inline char *ncb__arch_tp(void)
{
	return __builtin_thread_pointer();
}

#define NCB_ARCH_HANDOVER 1

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/*
 * The handover's stub (handover.c): on entry one register points at the
 * call list (entries of seven words: number and six arguments); a number
 * of ~0 ends it and is followed by the stack pointer and the entry.  Only
 * relative branches: it runs from wherever it was copied.
 */
/*
 * Seven registers carry a call: the list is walked with pop, the stack
 * pointer standing in for the eighth.  No handler is left to push onto
 * it (the caller reset them), and int $0x80 works on every kernel.
 */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
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
	"ncb__stub_end:\n"
	".popsection\n");

/* The stub entered, the list in its register. */
static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	__asm__ volatile("movl %0, %%esp\n\tjmp *%1"
			 : : "r"(list), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

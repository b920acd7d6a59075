/* SPDX-License-Identifier: MIT */
/*
 * The loader on x86_64: what its ELF images say, where execve puts
 * them, what its C library registers, and the handover's stub.  One of
 * arch.h's; a port is one such file.
 */
#ifndef NCB_LOADER_ARCH_X86_64_H
#define NCB_LOADER_ARCH_X86_64_H

#define NCB_ARCH_EM EM_X86_64

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * DEFAULT_MAP_WINDOW / 3 * 2, the window being 47 bits less a page.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) ((((1ULL << 47) - 4096) / 3) * 2)

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
/* The list in r12, which the syscall instruction leaves alone. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	movq (%r12), %rax\n"
	"	cmpq $-1, %rax\n"
	"	je 2f\n"
	"	movq 8(%r12), %rdi\n"
	"	movq 16(%r12), %rsi\n"
	"	movq 24(%r12), %rdx\n"
	"	movq 32(%r12), %r10\n"
	"	movq 40(%r12), %r8\n"
	"	movq 48(%r12), %r9\n"
	"	syscall\n"
	"	addq $56, %r12\n"
	"	jmp 1b\n"
	"2:	movq 8(%r12), %rsp\n"
	"	movq 16(%r12), %rax\n"
	"	movq %rax, -8(%rsp)\n"
	"	xorl %eax, %eax\n	xorl %ebx, %ebx\n"
	"	xorl %ecx, %ecx\n	xorl %edx, %edx\n"
	"	xorl %esi, %esi\n	xorl %edi, %edi\n"
	"	xorl %ebp, %ebp\n	xorl %r8d, %r8d\n"
	"	xorl %r9d, %r9d\n	xorl %r10d, %r10d\n"
	"	xorl %r11d, %r11d\n	xorl %r12d, %r12d\n"
	"	xorl %r13d, %r13d\n	xorl %r14d, %r14d\n"
	"	xorl %r15d, %r15d\n"
	"	jmp *-8(%rsp)\n"
	"ncb__stub_end:\n"
	".popsection\n");

/* The stub entered, the list in its register. */
static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("r12") = list;

	__asm__ volatile("jmp *%1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

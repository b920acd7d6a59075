/* SPDX-License-Identifier: MIT */
/* The loader on x86_64: what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_X86_64_H
#define NCB_LOADER_ARCH_X86_64_H

#define NCB_ARCH_EM EM_X86_64

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * DEFAULT_MAP_WINDOW / 3 * 2, the window being 47 bits less a page.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) ((((1ULL << 47) - 4096) / 3) * 2)

/*
 * The stack (arch/x86/include/asm/page_64_types.h, elf.h; process.c):
 * STACK_TOP is TASK_SIZE_LOW, 47 bits less a page, whatever the paging
 * levels; randomize_stack_top() takes STACK_RND_MASK (0x3fffff) pages
 * off, arch_align_stack() up to 8 KiB.
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) ((1ULL << 47) - 4096)
#define NCB_ARCH_STACK_RND_MASK(k, pg) 0x3fffffULL
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) 8192u

#define NCB_ARCH_RSEQ_SIG 0x53053053

#define NCB_ARCH_HANDOVER 1

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/* The list in r12, which the syscall instruction leaves alone. */
__asm__(NCB_STUB_BEGIN
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
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("r12") = list;

	__asm__ volatile("jmp *%1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The loader on aarch64: what its ELF images say, where execve puts
 * them, what its C library registers, and the handover's stub.  One of
 * arch.h's; a port is one such file.
 */
#ifndef NCB_LOADER_ARCH_AARCH64_H
#define NCB_LOADER_ARCH_AARCH64_H

#define NCB_ARCH_EM EM_AARCH64

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * 2 * DEFAULT_MAP_WINDOW_64 / 3, 48 bits.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) ((2 * (1ULL << 48)) / 3)

/* The rseq signature its libc registers with (glibc's rseq.h). */
#define NCB_ARCH_RSEQ_SIG 0xd428bc00

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
/* The list in x9; x16, the intra-procedure scratch, keeps the entry. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	ldr x8, [x9], #8\n"
	"	cmn x8, #1\n"
	"	b.eq 2f\n"
	"	ldp x0, x1, [x9], #16\n"
	"	ldp x2, x3, [x9], #16\n"
	"	ldp x4, x5, [x9], #16\n"
	"	svc #0\n"
	"	b 1b\n"
	"2:	ldp x10, x16, [x9]\n"
	"	mov sp, x10\n"
	"	mov x0, #0\n	mov x1, #0\n	mov x2, #0\n"
	"	mov x3, #0\n	mov x4, #0\n	mov x5, #0\n"
	"	mov x6, #0\n	mov x7, #0\n	mov x8, #0\n"
	"	mov x9, #0\n	mov x10, #0\n	mov x11, #0\n"
	"	mov x12, #0\n	mov x13, #0\n	mov x14, #0\n"
	"	mov x15, #0\n	mov x17, #0\n	mov x18, #0\n"
	"	mov x19, #0\n	mov x20, #0\n	mov x21, #0\n"
	"	mov x22, #0\n	mov x23, #0\n	mov x24, #0\n"
	"	mov x25, #0\n	mov x26, #0\n	mov x27, #0\n"
	"	mov x28, #0\n	mov x29, #0\n	mov x30, #0\n"
	"	br x16\n"
	"ncb__stub_end:\n"
	".popsection\n");

/* The stub entered, the list in its register. */
static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("x9") = list;

	__asm__ volatile("br %1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

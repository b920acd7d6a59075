/* SPDX-License-Identifier: MIT */
/* The loader on ppc64le (ELFv2): what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_PPC64LE_H
#define NCB_LOADER_ARCH_PPC64LE_H

#define NCB_ARCH_EM EM_PPC64

/* ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h). */
#define NCB_ARCH_DYN_BASE(kernel_64) 0x100000000ULL

/*
 * The stack (arch/powerpc/include/asm/task_size_64.h, elf.h; process.c):
 * STACK_TOP is DEFAULT_MAP_WINDOW_USER64, 64 TiB with 4 KiB pages and
 * 128 TiB with 64 KiB ones; STACK_RND_MASK 1 GiB of pages;
 * arch_align_stack() up to a page.
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) \
	((pg) >= 65536 ? 1ULL << 47 : 1ULL << 46)
#define NCB_ARCH_STACK_RND_MASK(k, pg) ((0x40000ULL << 12) / (pg) - 1)
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) (pg)

#define NCB_ARCH_RSEQ_SIG 0x0fe5000b

/* gcc 12 has no __builtin_thread_pointer here. */
#define NCB_ARCH_TP
static inline char *ncb__arch_tp(void)
{
	char *tp;

	/* The ABI's r13. */
	__asm__("mr %0, 13" : "=r"(tp));
	return tp;
}

#if _CALL_ELF == 2
#define NCB_ARCH_HANDOVER 1
#endif

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/*
 * The list in r14, which sc preserves.  ELFv2: r12 holds the entry, from
 * which the global entry point finds its TOC (the kernel sets it so).
 */
__asm__(NCB_STUB_BEGIN
	"1:	ld 0, 0(14)\n"
	"	cmpdi 0, -1\n"
	"	beq 2f\n"
	"	ld 3, 8(14)\n	ld 4, 16(14)\n	ld 5, 24(14)\n"
	"	ld 6, 32(14)\n	ld 7, 40(14)\n	ld 8, 48(14)\n"
	"	sc\n"
	"	addi 14, 14, 56\n"
	"	b 1b\n"
	"2:	ld 1, 8(14)\n"
	"	ld 12, 16(14)\n"
	"	mtctr 12\n"
	"	li 0, 0\n	mtlr 0\n"
	"	li 2, 0\n	li 3, 0\n	li 4, 0\n"
	"	li 5, 0\n	li 6, 0\n	li 7, 0\n"
	"	li 8, 0\n	li 9, 0\n	li 10, 0\n"
	"	li 11, 0\n	li 13, 0\n	li 14, 0\n"
	"	li 15, 0\n	li 16, 0\n	li 17, 0\n"
	"	li 18, 0\n	li 19, 0\n	li 20, 0\n"
	"	li 21, 0\n	li 22, 0\n	li 23, 0\n"
	"	li 24, 0\n	li 25, 0\n	li 26, 0\n"
	"	li 27, 0\n	li 28, 0\n	li 29, 0\n"
	"	li 30, 0\n	li 31, 0\n"
	"	bctr\n"
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("r14") = list;

	__asm__ volatile("mtctr %1\n\tbctr" : : "r"(r), "r"(code)
			 : "memory", "ctr");
	__builtin_unreachable();
}
#endif

#endif

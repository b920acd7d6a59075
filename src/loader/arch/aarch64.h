/* SPDX-License-Identifier: MIT */
/* The loader on aarch64: what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_AARCH64_H
#define NCB_LOADER_ARCH_AARCH64_H

#define NCB_ARCH_EM EM_AARCH64

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * 2 * DEFAULT_MAP_WINDOW_64 / 3, 48 bits.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) ((2 * (1ULL << 48)) / 3)

/*
 * The stack (arch/arm64/include/asm/processor.h, elf.h; process.c):
 * STACK_TOP is DEFAULT_MAP_WINDOW_64, 48 bits with 4 and 64 KiB pages
 * (47 with 16 KiB pages and 52-bit addresses: own shows which);
 * STACK_RND_MASK is 1 GiB of pages, arch_align_stack() up to a page.
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) \
	((own) > (1ULL << 47) ? 1ULL << 48 : 1ULL << 47)
#define NCB_ARCH_STACK_RND_MASK(k, pg) ((0x40000ULL << 12) / (pg) - 1)
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) (pg)

#define NCB_ARCH_RSEQ_SIG 0xd428bc00

#define NCB_ARCH_HANDOVER 1

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/* The list in x9; x16, the intra-procedure scratch, keeps the entry. */
__asm__(NCB_STUB_BEGIN
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
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("x9") = list;

	__asm__ volatile("br %1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

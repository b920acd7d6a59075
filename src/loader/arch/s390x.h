/* SPDX-License-Identifier: MIT */
/* The loader on s390x: what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_S390X_H
#define NCB_LOADER_ARCH_S390X_H

#define NCB_ARCH_EM EM_S390

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * STACK_TOP / 3 * 2 rounded down to 4 GiB, STACK_TOP being 2^42.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) ((((1ULL << 42) / 3) * 2) & ~0xffffffffULL)

#define NCB_ARCH_RSEQ_SIG 0xb2ff0fff

#define NCB_ARCH_HANDOVER 1

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/* The list in r11; svc 0 takes the number from r1, which keeps the entry. */
__asm__(NCB_STUB_BEGIN
	"1:	lg %r1, 0(%r11)\n"
	"	cghi %r1, -1\n"
	"	je 2f\n"
	"	lg %r2, 8(%r11)\n	lg %r3, 16(%r11)\n"
	"	lg %r4, 24(%r11)\n	lg %r5, 32(%r11)\n"
	"	lg %r6, 40(%r11)\n	lg %r7, 48(%r11)\n"
	"	svc 0\n"
	"	aghi %r11, 56\n"
	"	j 1b\n"
	"2:	lg %r15, 8(%r11)\n"
	"	lg %r1, 16(%r11)\n"
	"	lghi %r0, 0\n	lghi %r2, 0\n	lghi %r3, 0\n"
	"	lghi %r4, 0\n	lghi %r5, 0\n	lghi %r6, 0\n"
	"	lghi %r7, 0\n	lghi %r8, 0\n	lghi %r9, 0\n"
	"	lghi %r10, 0\n	lghi %r11, 0\n	lghi %r12, 0\n"
	"	lghi %r13, 0\n	lghi %r14, 0\n"
	"	br %r1\n"
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("r11") = list;

	__asm__ volatile("br %1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

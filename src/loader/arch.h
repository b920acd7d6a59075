/* SPDX-License-Identifier: MIT */
/*
 * What the loader knows of each machine, one file each (arch/); a port is
 * one such file:
 *
 * NCB_ARCH_EM            the ELF machine it loads.
 * NCB_ARCH_DYN_BASE(k)   ELF_ET_DYN_BASE, k: whether the kernel is 64-bit.
 * The main stack's top, as fs/exec.c draws it (k: a 64-bit kernel; pg:
 * the page size; own: where this process's own stack ends, for a machine
 * whose window the kernel's configuration decides); none: mmap places it.
 * NCB_ARCH_STACK_TOP(k, pg, own)       STACK_TOP
 * NCB_ARCH_STACK_RND_MASK(k, pg)       STACK_RND_MASK, in pages
 * NCB_ARCH_STACK_ALIGN_RND(k, pg)      arch_align_stack()'s range, bytes
 * NCB_ARCH_RSEQ_SIG      the signature its C library registers rseq with
 *                        (glibc's rseq.h); none: rseq is left alone.
 * ncb__arch_tp()         the thread pointer, which glibc's __rseq_offset
 *                        is relative to (NCB_ARCH_TP where the compiler's
 *                        builtin will not do).
 * NCB_ARCH_HANDOVER      an in-process exec is done here, with:
 *   the stub             position-independent code (only relative
 *                        branches: it runs from wherever it was copied)
 *                        between ncb__stub_start and ncb__stub_end.  On
 *                        entry one register points at the call list
 *                        (entries of seven words: number and six
 *                        arguments); a number of ~0 ends it, followed by
 *                        the stack pointer and the entry, which it enters
 *                        with every general register zero.
 *   ncb__arch_jump()     the stub entered, the list in its register.
 *
 * The stub is code, defined once: handover.c alone asks for it and its
 * jump by defining NCB_ARCH_STUB first.
 */
#ifndef NCB_LOADER_ARCH_H
#define NCB_LOADER_ARCH_H

#include <elf.h>

/* One system call in the handover's list (handover.c). */
struct ncb__call;

/* The stub's bounds, hidden symbols in .text, and what comes around it. */
#define NCB_STUB_BEGIN_AS(directives)					\
	".pushsection .text\n" directives				\
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"		\
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"		\
	"ncb__stub_start:\n"
#define NCB_STUB_BEGIN NCB_STUB_BEGIN_AS("")
#define NCB_STUB_END_AS(directives)					\
	"ncb__stub_end:\n" directives ".popsection\n"
#define NCB_STUB_END NCB_STUB_END_AS("")

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__i386__)
#include "arch/i386.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#elif defined(__arm__)
#include "arch/arm.h"
#elif defined(__riscv)
#include "arch/riscv64.h"
#elif defined(__powerpc64__)
#include "arch/ppc64le.h"
#elif defined(__s390x__)
#include "arch/s390x.h"
#else
/* Unknown here: every file is then "for another machine"; no handover. */
#define NCB_ARCH_EM EM_NONE
#define NCB_ARCH_DYN_BASE(kernel_64) 0ULL
#endif

#ifndef NCB_ARCH_TP
static inline char *ncb__arch_tp(void)
{
	return __builtin_thread_pointer();
}
#endif

#endif

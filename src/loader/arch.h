/* SPDX-License-Identifier: MIT */
/*
 * What the loader knows of each machine, one file each (arch/): the ELF
 * machine it loads (NCB_ARCH_EM), ELF_ET_DYN_BASE (NCB_ARCH_DYN_BASE),
 * its C library's rseq signature and thread pointer (NCB_ARCH_RSEQ_SIG,
 * ncb__arch_tp), and, where an in-process exec is done (NCB_ARCH_HANDOVER),
 * the handover's stub and its jump, which handover.c alone asks for by
 * defining NCB_ARCH_STUB first.
 */
#ifndef NCB_LOADER_ARCH_H
#define NCB_LOADER_ARCH_H

#include <elf.h>

/* One system call in the handover's list (handover.c). */
struct ncb__call;

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

#endif

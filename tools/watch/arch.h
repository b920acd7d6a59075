/* SPDX-License-Identifier: MIT */
/*
 * The ptrace watcher's registers: all it reads and writes of a stopped
 * thread beyond what PTRACE_GET_SYSCALL_INFO gives, per architecture.  A
 * port is one file, arch-MACHINE.c (the Makefile builds the watcher only
 * where there is one), with the ABIs' numbers in calls.h.
 */
#ifndef NCB_WATCH_ARCH_H
#define NCB_WATCH_ARCH_H

#include <stdint.h>
#include <sys/types.h>

struct warch {
	uint32_t audit;			/* the native ABI's AUDIT_ARCH_ */
	uint32_t audit_compat;		/* a 32-bit ABI's on it; 0: none */
	uint32_t scmp_compat;		/* its libseccomp SCMP_ARCH_; 0 */
	/*
	 * An ABI that shares the native one's AUDIT_ARCH_, its calls told
	 * by a bit in their numbers (x32: __X32_SYSCALL_BIT), its calls
	 * the native ones; 0 none.
	 */
	uint32_t scmp_alias;
	uint64_t alias_bit;
};

extern const struct warch warch;

/* At a call's entry: skipped by the kernel, the caller seeing ret. */
int warch_skip(pid_t tid, long ret);
/* At a call's exit: its result, as the caller will see it. */
int warch_set_result(pid_t tid, long ret);
/*
 * At a call's entry: argument i (0-5) of the ABI the caller uses, its
 * bits in clear cleared and those in set set, the rest of the register
 * as it was.
 */
int warch_edit_arg(pid_t tid, int compat, unsigned int i, uint64_t clear,
		   uint64_t set);
/*
 * The system call a thread is in (at its entry, or an event stop in it):
 * its number, its six arguments and whether it is the 32-bit ABI's.
 */
int warch_call(pid_t tid, uint64_t *nr, uint64_t a[6], int *compat);

#endif

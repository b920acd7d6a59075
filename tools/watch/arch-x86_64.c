/* SPDX-License-Identifier: MIT */
/*
 * x86_64's registers (arch.h), and i386's calls on it: the kernel reads
 * the number from orig_rax, returns in rax, and takes the arguments in
 * rdi, rsi, rdx, r10, r8, r9, or a 32-bit caller's in ebx, ecx, edx, esi,
 * edi, ebp (arch/x86/entry/entry_64.S, entry_64_compat.S).
 */
#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include "arch.h"

#if !defined(__x86_64__)
#error "arch-x86_64.c is x86_64's registers"
#endif

const struct warch warch = {
	.audit = AUDIT_ARCH_X86_64,
	.audit_compat = AUDIT_ARCH_I386,
	.scmp_compat = SCMP_ARCH_X86,
	/* x32 (arch/x86/entry/syscalls/syscall_64.tbl): mmap, mremap and
	   shmat are the 64-bit ABI's own calls, with this bit set. */
	.scmp_alias = SCMP_ARCH_X32,
	.alias_bit = 0x40000000,
};

static unsigned long long *arg(struct user_regs_struct *r, int compat,
			       unsigned int i)
{
	unsigned long long *native[6] = { &r->rdi, &r->rsi, &r->rdx,
					  &r->r10, &r->r8, &r->r9 };
	unsigned long long *i386[6] = { &r->rbx, &r->rcx, &r->rdx,
					&r->rsi, &r->rdi, &r->rbp };

	return compat ? i386[i] : native[i];
}

int warch_skip(pid_t tid, long ret)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	/* No call: the kernel skips it and leaves rax as it is. */
	r.orig_rax = (unsigned long long)-1;
	r.rax = (unsigned long long)ret;
	return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -errno : 0;
}

int warch_set_result(pid_t tid, long ret)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	r.rax = (unsigned long long)ret;
	return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -errno : 0;
}

int warch_edit_arg(pid_t tid, int compat, unsigned int i, uint64_t clear,
		   uint64_t set)
{
	struct user_regs_struct r;
	unsigned long long *a;

	if (i > 5)
		return -EINVAL;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	a = arg(&r, compat, i);
	*a = (*a & ~clear) | set;
	return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -errno : 0;
}

int warch_call(pid_t tid, uint64_t *nr, uint64_t a[6], int *compat)
{
	struct user_regs_struct r;
	unsigned int i;
	/* PTRACE_GET_SYSCALL_INFO's first 8 bytes: op, pad, its arch. */
	struct { uint8_t op, pad[3]; uint32_t arch; uint64_t rest[12]; } si;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0)
		return -ESRCH;
	*compat = si.arch == AUDIT_ARCH_I386;
	*nr = r.orig_rax;
	for (i = 0; i < 6; i++)
		a[i] = *arg(&r, *compat, i) & (*compat ? 0xffffffff : ~0ULL);
	return 0;
}

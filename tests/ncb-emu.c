/* SPDX-License-Identifier: MIT */
/*
 * ncb-emu: run a program as if on a kernel that gets MAP_FIXED_NOREPLACE
 * wrong, to test the library's other paths on a modern kernel.
 *
 *   --mode=old   Linux < 4.17: the flag is unknown, so the address is a
 *                hint.  The bit is cleared at syscall entry.
 *   --mode=4.17  Linux 4.17 and 4.18: only a mapping *containing* addr was
 *                found (find_vma + vm_start <= addr); a mapping starting
 *                inside the range was replaced.  Fixed in 7aa867dd8952.
 *                Such calls are turned into MAP_FIXED.
 *
 * Unlike the kernel, the emulation is not atomic: the maps are read while
 * other threads of the tracee run, so a mapping made between that reading
 * and the call can be replaced although 4.17 would have reported EEXIST.
 * Tests that race other threads against multi-page NOREPLACE calls (only
 * the library's probe makes those in this mode) must probe first.
 *
 * Both kernels predate the PROCMAP_QUERY ioctl on /proc/PID/maps (6.11):
 * it fails with ENOTTY, as it does there (no ioctl for the file), so the
 * look-ups read the text.
 *
 * A seccomp filter (libseccomp) stops only the mmap calls that carry the
 * flag, and refuses the ioctl; the tracer follows every thread and child.
 * x86_64 only.  A test tool: the library never uses it.
 */
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* _IOWR('f', 17, struct procmap_query), a 104-byte struct (6.11 uapi). */
#define PROCMAP_QUERY_CMD 0xc0686611UL

enum { MODE_OLD, MODE_417 };

static int load_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int ret;

	if (!ctx)
		return -ENOMEM;
	ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(1), SCMP_SYS(mmap), 1,
			       SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_FIXED_NOREPLACE,
				       MAP_FIXED_NOREPLACE));
	/* The request is an unsigned int: its upper half is not looked at. */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY),
				       SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					       PROCMAP_QUERY_CMD));
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}

/* What 4.17 saw: is there a mapping containing addr, or starting inside? */
static void scan_maps(pid_t pid, unsigned long addr, unsigned long end,
		      int *contains, int *starts_inside)
{
	unsigned long s, e;
	char path[64], line[8192];
	FILE *f;

	*contains = *starts_inside = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		if (s <= addr && addr < e)
			*contains = 1;
		if (s > addr && s < end)
			*starts_inside = 1;
	}
	fclose(f);
}

static void emulate(pid_t pid, int mode)
{
	struct user_regs_struct r;
	unsigned long len;
	int contains, inside;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return;
	if (mode == MODE_OLD) {
		r.r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;
	} else {
		len = (r.rsi + 4095) & ~4095UL;
		scan_maps(pid, r.rdi, r.rdi + len, &contains, &inside);
		if (contains || !inside || (r.rdi & 4095) || !len)
			return;
		r.r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;
		r.r10 |= MAP_FIXED;
	}
	ptrace(PTRACE_SETREGS, pid, NULL, &r);
}

static int trace(pid_t child, int mode)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	int st, status = 1, sig;
	pid_t pid;

	if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st))
		return 127;
	if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)opts) ||
	    ptrace(PTRACE_CONT, child, NULL, NULL)) {
		perror("ncb-emu: ptrace");
		return 127;
	}
	while ((pid = waitpid(-1, &st, __WALL)) > 0) {
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (pid == child)
				status = WIFEXITED(st) ? WEXITSTATUS(st)
						       : 128 + WTERMSIG(st);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (st >> 16 == PTRACE_EVENT_SECCOMP)
			emulate(pid, mode);
		/* Event stops, and the stop of a newly attached tracee. */
		if (st >> 16 || sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	return status;
}

int main(int argc, char **argv)
{
	int mode, ret;
	pid_t child;

	if (argc < 3 || (strcmp(argv[1], "--mode=old") &&
			 strcmp(argv[1], "--mode=4.17"))) {
		fprintf(stderr,
			"usage: ncb-emu --mode=old|4.17 PROG [ARG...]\n");
		return 2;
	}
	mode = strcmp(argv[1], "--mode=old") ? MODE_417 : MODE_OLD;
	child = fork();
	if (child < 0) {
		perror("ncb-emu: fork");
		return 127;
	}
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP))
			_exit(127);
		ret = load_filter();
		if (ret) {
			fprintf(stderr, "ncb-emu: seccomp: %s\n",
				strerror(-ret));
			_exit(127);
		}
		execvp(argv[2], argv + 2);
		perror("ncb-emu: exec");
		_exit(127);
	}
	return trace(child, mode);
}

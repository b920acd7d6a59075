/* SPDX-License-Identifier: MIT */
/*
 * The floor under any watcher built on seccomp and ptrace, for b-watch:
 * runs PROG under a filter of noclobber watch's kind that stops at each
 * fixed mmap, mremap and shmat of an x86_64 program (watch stops at the
 * plain ones too, to record their makers), follows its processes and
 * threads the same way, and does nothing at a stop but resume the task.
 * What b-watch measures under it is what the kernel's stops at the fixed
 * placements and the tracer's start-up cost, with no judging at all.
 *
 * Usage: bare-trace PROG ARGS...; exits as PROG did (a death by signal
 * as 128 + the signal).
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAP_FIXED_BIT 0x10
#define MAP_NOREPLACE_BIT 0x100000
#define MREMAP_FIXED_BIT 2
#define SHM_REMAP_BIT 040000

static scmp_filter_ctx filter(void)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);

	if (!f)
		return NULL;
	if (seccomp_rule_add(f, SCMP_ACT_TRACE(0), SCMP_SYS(mmap), 1,
			     SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_FIXED_BIT |
				     MAP_NOREPLACE_BIT, MAP_FIXED_BIT)) ||
	    seccomp_rule_add(f, SCMP_ACT_TRACE(0), SCMP_SYS(mremap), 1,
			     SCMP_A3(SCMP_CMP_MASKED_EQ, MREMAP_FIXED_BIT,
				     MREMAP_FIXED_BIT)) ||
	    seccomp_rule_add(f, SCMP_ACT_TRACE(0), SCMP_SYS(shmat), 1,
			     SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_REMAP_BIT,
				     SHM_REMAP_BIT))) {
		seccomp_release(f);
		return NULL;
	}
	return f;
}

static void __attribute__((noreturn)) child(char **argv, int go)
{
	scmp_filter_ctx f = filter();
	char c;

	if (!f || read(go, &c, 1) != 1 || seccomp_load(f))
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

/* Every stop resumed; a signal's delivery stop passes the signal on. */
static int loop(pid_t main_pid)
{
	int status, main_status = 0, sig;
	pid_t tid;

	for (;;) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == main_pid)
				main_status = status;
			continue;
		}
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP)
			sig = sig == SIGTRAP ? 0 : -1;
		else if (status >> 16 || sig == SIGTRAP)
			sig = 0;
		if (sig < 0)
			ptrace(PTRACE_LISTEN, tid, 0, 0);
		else
			ptrace(PTRACE_CONT, tid, 0, sig);
	}
	return WIFSIGNALED(main_status) ? 128 + WTERMSIG(main_status) :
	       WEXITSTATUS(main_status);
}

int main(int argc, char **argv)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK |
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	int go[2];
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: bare-trace PROG ARGS...\n");
		return 2;
	}
	if (pipe2(go, O_CLOEXEC))
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid)
		child(argv + 1, go[0]);
	if (ptrace(PTRACE_SEIZE, pid, 0, opts)) {
		perror("bare-trace: PTRACE_SEIZE");
		kill(pid, SIGKILL);
		return 2;
	}
	if (write(go[1], "", 1) != 1)
		return 2;
	return loop(pid);
}

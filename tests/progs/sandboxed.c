/* SPDX-License-Identifier: MIT */
/*
 * ncb_exec where a sandbox answers unshare(2) itself: gVisor refuses
 * every unshare of CLONE_VM with EINVAL, Docker's default profile
 * denies it with EPERM.  Usage: sandboxed EINVAL|EPERM plain|vfork PROG.
 * plain: the program runs (exit with its status).  vfork: a vfork
 * child's call is refused with EBUSY and the parent goes on (exit 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "noclobber.h"

extern char **environ;

static int deny_unshare(int err)
{
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
	int r = f ? seccomp_rule_add(f, SCMP_ACT_ERRNO(err), SCMP_SYS(unshare),
				     0) : -ENOMEM;

	if (!r)
		r = seccomp_load(f);
	seccomp_release(f);
	return r;
}

static char why[256];
static volatile int child_err = 1;

int main(int argc, char **argv)
{
	char *av[] = { NULL, NULL };
	int st;
	pid_t pid;

	if (argc != 4)
		return 2;
	av[0] = argv[3];
	if (deny_unshare(strcmp(argv[1], "EINVAL") ? EPERM : EINVAL)) {
		fprintf(stderr, "sandboxed: seccomp failed\n");
		return 2;
	}
	if (!strcmp(argv[2], "plain")) {
		ncb_exec(argv[3], av, environ, NULL, why, sizeof(why));
		fprintf(stderr, "sandboxed: %s\n", why);
		return 126;
	}
	pid = vfork();
	if (pid == 0) {
		child_err = ncb_exec(argv[3], av, environ, NULL, why,
				     sizeof(why));
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	printf("vfork child: %s (%s)\n", strerror(-child_err), why);
	return child_err == -EBUSY ? 0 : 1;
}

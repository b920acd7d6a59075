/* SPDX-License-Identifier: MIT */
/*
 * Runs a program as on a kernel before 6.11, which has no PROCMAP_QUERY:
 * a seccomp filter answers the ioctl with ENOTTY, as such a kernel's
 * procfs does, so that the readers of /proc/PID/maps take their text
 * path.  Inherited by the program's children.  Usage: noquery PROG ARGS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* fs/proc/task_mmu.c, Linux 6.11 uapi: _IOWR('f', 17, procmap_query). */
#define PROCMAP_QUERY _IOWR('f', 17, char[104])

int main(int argc, char **argv)
{
	scmp_filter_ctx f;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: noquery PROG ARGS...\n");
		return 2;
	}
	f = seccomp_init(SCMP_ACT_ALLOW);
	r = f ? seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl),
				 1, SCMP_A1(SCMP_CMP_EQ, PROCMAP_QUERY))
	      : -ENOMEM;
	if (!r)
		r = seccomp_load(f);
	seccomp_release(f);
	if (r) {
		fprintf(stderr, "noquery: seccomp: %d\n", r);
		return 2;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}

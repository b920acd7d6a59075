/* SPDX-License-Identifier: MIT */
/*
 * Signal dispositions across an exec.  "sigs show" prints, for signals 1
 * to 64, every action that is not the plain default: its handler class,
 * flags and whether its mask is empty.  "sigs execve|ncb_exec PROG ARGS"
 * first sets actions that execve must reset (a caught SIGUSR1 and glibc's
 * own signal 33, flags on a default SIGCHLD, flags and a mask on an
 * ignored SIGUSR2), then runs PROG that way.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "noclobber.h"

extern char **environ;

static void handler(int sig)
{
	(void)sig;
}

static int show(void)
{
	unsigned long a[8];
	int sig, i, mask;

	for (sig = 1; sig <= 64; sig++) {
		memset(a, 0, sizeof(a));
		if (syscall(SYS_rt_sigaction, sig, NULL, a, 8))
			continue;
		for (i = 1, mask = 0; i < 8; i++)
			mask |= a[i] != 0;
		if (!a[0] && !mask)
			continue;
		/* Flags are the second word on every architecture built. */
		printf("%d: %s flags %#lx%s\n", sig, a[0] == 0 ? "default" :
		       a[0] == 1 ? "ignored" : "caught", a[1],
		       mask ? ", more set" : "");
	}
	return 0;
}

static int set(void)
{
	struct sigaction sa;
	unsigned long k[8] = { (unsigned long)handler };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_NOCLDWAIT | SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL))
		return -1;
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = SA_RESTART;
	sigaddset(&sa.sa_mask, SIGINT);
	if (sigaction(SIGUSR2, &sa, NULL) ||
	    signal(SIGUSR1, handler) == SIG_ERR)
		return -1;
	/* glibc's sigaction refuses 33, which it keeps for itself. */
	return (int)syscall(SYS_rt_sigaction, 33, k, NULL, 8);
}

int main(int argc, char **argv)
{
	char why[256];

	if (argc == 2 && !strcmp(argv[1], "show"))
		return show();
	if (argc < 3 || set())
		return 2;
	if (!strcmp(argv[1], "execve"))
		execv(argv[2], argv + 2);
	else
		ncb_exec(argv[2], argv + 2, environ, NULL, why, sizeof(why));
	fprintf(stderr, "sigs: %s: cannot run %s\n", argv[1], argv[2]);
	return 3;
}

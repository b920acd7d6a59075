/* SPDX-License-Identifier: MIT */
/*
 * "run-by HOW PROG ARG": PROG run with the one argument ARG by HOW, one
 * of the ways a program starts another: execl execle execlp execv execve
 * execvp execvpe fexecve posix_spawn posix_spawnp.  The exec calls
 * replace this process; a spawned child is waited for.  execle's and
 * execve's environment is this one's; "-env" after HOW (execle-env,
 * execve-env, posix_spawn-env) gives an empty one instead.  Its status is
 * PROG's, 127 if it could not be run (the error said).
 *
 * "run-by execve-null - -" calls execve(NULL, ...): the kernel's EFAULT.
 * "run-by raw-fork PROG ARG" runs PROG 50 times, each in a child of
 * syscall(SYS_fork) (no fork handler runs) while a thread maps memory
 * without pause; each child must end within 10 s: status 0, or 1.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int spawned(int r, pid_t pid)
{
	int st;

	if (r || waitpid(pid, &st, 0) != pid)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static volatile int stop;
/* A NULL path the compiler cannot see (execve is declared nonnull). */
static char *volatile nothing;

/* Fixed placements without pause: the watcher's lock often held. */
static void *hammer(void *arg)
{
	char *p = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	while (p != MAP_FAILED && !stop)
		mmap(p, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED, -1, 0);
	return arg;
}

static int raw_forks(char *prog, char *arg)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int i, k, st, bad = 0;
	pthread_t t;
	pid_t pid;

	if (pthread_create(&t, NULL, hammer, NULL))
		return 2;
	for (i = 0; i < 50 && !bad; i++) {
		pid = (pid_t)syscall(SYS_fork);
		if (!pid) {
			execl(prog, prog, arg, (char *)NULL);
			_exit(127);
		}
		for (k = 0; k < 1000 && waitpid(pid, &st, WNOHANG) != pid; k++)
			nanosleep(&tick, NULL);
		if (k == 1000) {
			fprintf(stderr, "raw-fork: child %d of %d hung\n",
				i + 1, 50);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			bad = 1;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	return bad;
}

int main(int argc, char **argv)
{
	static char *none[] = { NULL };
	char *how = argc > 3 ? argv[1] : "", *prog = argv[2];
	char *av[] = { prog, argv[3], NULL };
	char **env = strstr(how, "-env") ? none : environ;
	pid_t pid = 0;
	int fd, r;

	if (argc < 4) {
		fprintf(stderr, "usage: run-by HOW PROG ARG\n");
		return 2;
	}
	if (!strcmp(how, "raw-fork"))
		return raw_forks(prog, argv[3]);
	if (!strcmp(how, "execve-null"))
		execve(nothing, av, env);
	else if (!strcmp(how, "execl"))
		execl(prog, prog, argv[3], (char *)NULL);
	else if (!strncmp(how, "execle", 6))
		execle(prog, prog, argv[3], (char *)NULL, env);
	else if (!strcmp(how, "execlp"))
		execlp(prog, prog, argv[3], (char *)NULL);
	else if (!strcmp(how, "execv"))
		execv(prog, av);
	else if (!strncmp(how, "execve", 6))
		execve(prog, av, env);
	else if (!strcmp(how, "execvp"))
		execvp(prog, av);
	else if (!strcmp(how, "execvpe"))
		execvpe(prog, av, env);
	else if (!strcmp(how, "fexecve") &&
		 (fd = open(prog, O_RDONLY | O_CLOEXEC)) >= 0)
		fexecve(fd, av, env);
	else if (!strncmp(how, "posix_spawn", 11) && !strstr(how, "spawnp")) {
		r = posix_spawn(&pid, prog, NULL, NULL, av, env);
		return spawned(r, pid);
	} else if (!strcmp(how, "posix_spawnp")) {
		r = posix_spawnp(&pid, prog, NULL, NULL, av, env);
		return spawned(r, pid);
	}
	perror(how);
	return 127;
}

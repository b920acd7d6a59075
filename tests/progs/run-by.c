/* SPDX-License-Identifier: MIT */
/*
 * "run-by HOW PROG ARG": PROG run with the one argument ARG by HOW, one
 * of the ways a program starts another: execl execle execlp execv execve
 * execvp execvpe fexecve posix_spawn posix_spawnp.  The exec calls
 * replace this process; a spawned child is waited for.  execle's and
 * execve's environment is this one's; "-env" after HOW (execle-env,
 * execve-env, posix_spawn-env) gives an empty one instead.  Its status is
 * PROG's, 127 if it could not be run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int spawned(int r, pid_t pid)
{
	int st;

	if (r || waitpid(pid, &st, 0) != pid)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
	if (!strcmp(how, "execl"))
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

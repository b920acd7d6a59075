/* SPDX-License-Identifier: MIT */
/*
 * Starting a program: ncb_exec in a forked child against fork+execve of
 * the same binary, to the program's exit (waitpid).  For a static program
 * that exits at once this is the time from the call to the program's
 * entry plus a constant; for a dynamic one ld.so's work is in both.
 * Medians of repeated runs; the ratio is the median of per-run ratios.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"
#include "internal.h"

#define REPS 15

extern char **environ;

struct ctx {
	const char *path;
	char *argv[3];
};

static int wait_ok(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

static int run_execve(void *p)
{
	struct ctx *c = p;
	pid_t pid = fork();

	if (pid == 0) {
		execve(c->path, c->argv, environ);
		_exit(127);
	}
	return wait_ok(pid);
}

static int run_ncb(void *p)
{
	struct ctx *c = p;
	pid_t pid = fork();

	if (pid == 0) {
		ncb_exec(c->path, c->argv, environ, NULL, NULL, 0);
		_exit(126);
	}
	return wait_ok(pid);
}

/* A command run to its exit: argv[0] is the program. */
static int run_cmd(void *p)
{
	char **argv = p;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	return wait_ok(pid);
}

/* Two commands side by side: the second's cost against the first's. */
static void versus(FILE *csv, const char *label, char **base, char **cmd,
		   int *bad)
{
	double a[REPS], b[REPS], r[REPS];
	int i;

	for (i = 0; i < REPS; i++) {
		a[i] = time_op(run_cmd, base, 2e8, bad);
		b[i] = time_op(run_cmd, cmd, 2e8, bad);
		r[i] = b[i] / a[i];
	}
	printf("%-34s %10.1f %10.1f %7.2fx\n", label, median(a, REPS) / 1e3,
	       median(b, REPS) / 1e3, median(r, REPS));
	if (csv)
		fprintf(csv, "%s,%.1f,%.1f,%.3f\n", label,
			median(a, REPS) / 1e3, median(b, REPS) / 1e3,
			median(r, REPS));
}

/*
 * The tool: `noclobber exec` against the program run directly, and the
 * tool's own start against the watchers' program, which loads the
 * libraries only watch needs (what every command paid when they were
 * one program).
 */
static void tool_rows(FILE *csv, const char *prog, int *bad)
{
	char dir[PATH_MAX], tool[PATH_MAX + 16], helper[PATH_MAX + 32];
	char *direct[] = { (char *)prog, NULL };
	char *exec[] = { tool, "exec", (char *)prog, NULL };
	char *v[] = { tool, "-V", NULL }, *hv[] = { helper, "-V", NULL };

	if (bench_dir(dir))
		return;
	snprintf(tool, sizeof(tool), "%s/../noclobber", dir);
	snprintf(helper, sizeof(helper), "%s/../noclobber-watch", dir);
	if (access(tool, X_OK))
		return;
	printf("\nthe tool (us per run, median of %d runs)\n\n%-34s %10s "
	       "%10s %8s\n", REPS, "command", "base", "command", "ratio");
	versus(csv, "noclobber exec /bin/true", direct, exec, bad);
	if (!access(helper, X_OK))
		versus(csv, "-V: noclobber-watch over noclobber", hv, v, bad);
}

int main(int argc, char **argv)
{
	/* Static and tiny, dynamic, static and big (its applet true). */
	const char *progs[3] = { NULL, "/bin/true", "/usr/bin/busybox" };
	FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	double a[REPS], b[REPS], r[REPS];
	int i, k, bad = 0;
	struct ctx c;

	/* The first: a static program that exits at once, built beside. */
	progs[0] = argc > 2 ? argv[2] : NULL;
	printf("starting a program to its exit: us per start (median of %d "
	       "runs)\n\n%-34s %10s %10s %8s\n", REPS, "program",
	       "fork+execve", "ncb_exec", "ratio");
	if (csv)
		fprintf(csv, "program,execve_us,ncb_exec_us,ratio\n");
	for (k = 0; k < 3; k++) {
		if (!progs[k] || access(progs[k], X_OK))
			continue;
		c.path = progs[k];
		c.argv[0] = (char *)progs[k];
		c.argv[1] = k == 2 ? "true" : NULL;
		c.argv[2] = NULL;
		for (i = 0; i < REPS; i++) {
			a[i] = time_op(run_execve, &c, 2e8, &bad);
			b[i] = time_op(run_ncb, &c, 2e8, &bad);
			r[i] = b[i] / a[i];
		}
		printf("%-34s %10.1f %10.1f %7.2fx\n", progs[k],
		       median(a, REPS) / 1e3, median(b, REPS) / 1e3,
		       median(r, REPS));
		if (csv)
			fprintf(csv, "%s,%.1f,%.1f,%.3f\n", progs[k],
				median(a, REPS) / 1e3, median(b, REPS) / 1e3,
				median(r, REPS));
	}
	tool_rows(csv, "/bin/true", &bad);
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-exec: a start failed\n");
	return bad;
}

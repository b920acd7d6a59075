/* SPDX-License-Identifier: MIT */
/*
 * What noclobber watch --system costs the machine, side by side in one
 * run: mmap-churn (an mmap-heavy program) directly, while a system-wide
 * watcher runs (every process in scope: what it costs everyone), and under
 * the ptrace watcher; a parallel build of this project with and
 * without the system watcher; and how many events a second the watcher
 * takes in, and what a full ring buffer does.  The ways alternate in every
 * repetition, in an order that rotates; ratios are medians of per-run
 * ratios.
 *
 * Goals: at most 2% overhead, and at least 20x less than the ptrace
 * watcher on mmap-churn.  Needs root (it loads BPF programs): says SKIP
 * otherwise.  NCB_BENCH_REPEATS sets the repetitions (9 by default).
 * NCB_BENCH_BEFORE, the path of another build's noclobber, adds a way:
 * mmap-churn under its system watcher, for what a change costs, side by
 * side in the same run.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define REPS 9
#define MAX_REPS 51
#define BUILD_REPS 5
#define PAIRS "5000"
#define FIXED "500"
#define OVER 20000

enum { DIRECT, SYSTEM, PTRACE, BEFORE, WAYS };

static char tool[PATH_MAX + 32], churn[PATH_MAX + 16], top[PATH_MAX + 16];
static const char *before;		/* NCB_BENCH_BEFORE's tool, or NULL */
static char tmpdir[PATH_MAX], report[PATH_MAX + 16], out_dir[PATH_MAX + 16];

/* argv run to its end, its standard output in out (if given). */
static int run(char *const argv[], char *out, size_t len, double *ns)
{
	int fd[2], st, null;
	ssize_t n, got = 0;
	double t0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(out ? fd[1] : null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	while (out && (size_t)got < len - 1 &&
	       (n = read(fd[0], out + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	*ns = now_ns() - t0;
	if (out)
		out[got] = '\0';
	return st;
}

/* A system watcher (path), once it says it watches: its pid, or -1. */
static pid_t watcher_of(const char *path, const char *buffer)
{
	char line[256];
	double t0 = now_ns();
	pid_t pid;
	FILE *f;

	unlink(report);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 2);
		if (buffer)
			execl(path, path, "watch", "--system", "--json", "-O",
			      report, "--buffer", buffer, (char *)NULL);
		else
			execl(path, path, "watch", "--system", "--json", "-O",
			      report, (char *)NULL);
		_exit(127);
	}
	while (pid > 0 && now_ns() - t0 < 30e9) {
		f = fopen(report, "r");
		if (f && fgets(line, sizeof(line), f) &&
		    strstr(line, "\"start\"")) {
			fclose(f);
			return pid;
		}
		if (f)
			fclose(f);
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(10000);
	}
	if (pid > 0)
		kill(pid, SIGKILL);
	return -1;
}

static pid_t watcher(const char *buffer)
{
	return watcher_of(tool, buffer);
}

/*
 * Stops it; over the summaries of the programs named, the sum of the
 * fields named (a space-separated list), and of "lost".
 */
static int stop(pid_t pid, const char *program, const char *fields,
		long *sum, long *lost)
{
	char line[2048], key[64], name[80], list[256], *at, *f1, *sp;
	int st;
	FILE *f;

	kill(pid, SIGINT);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	*sum = *lost = 0;
	f = fopen(report, "r");
	snprintf(name, sizeof(name), "\"program\":\"%s\"", program);
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "\"summary\"") || !strstr(line, name))
			continue;
		snprintf(list, sizeof(list), "%s", fields);
		for (f1 = strtok_r(list, " ", &sp); f1;
		     f1 = strtok_r(NULL, " ", &sp)) {
			snprintf(key, sizeof(key), "\"%s\":", f1);
			at = strstr(line, key);
			if (at)
				*sum += atol(at + strlen(key));
		}
		at = strstr(line, "\"lost\":");
		if (at)
			*lost += atol(at + strlen("\"lost\":"));
	}
	if (f)
		fclose(f);
	return 0;
}

/* mmap-churn one way: its wall time and its own figures. */
static int churn_once(int way, double r[4])
{
	char out[128];
	char *direct[] = { churn, PAIRS, FIXED, NULL };
	char *traced[] = { tool, "watch", "-O", "/dev/null", churn, PAIRS,
			   FIXED, NULL };
	long n, lost;
	pid_t w = -1;
	int st;

	if ((way == SYSTEM || way == BEFORE) &&
	    (w = watcher_of(way == BEFORE ? before : tool, NULL)) < 0)
		return -1;
	st = run(way == PTRACE ? traced : direct, out, sizeof(out), &r[0]);
	if (w > 0 && stop(w, "mmap-churn", "fixed", &n, &lost))
		st = -1;
	if (st || sscanf(out, "%lf %lf %lf", &r[1], &r[2], &r[3]) != 3)
		return -1;
	return 0;
}

/* This project built (all tests) with make -j2 in a fresh directory. */
static int build_once(int with, double *ns)
{
	char o[PATH_MAX + 64], rm[PATH_MAX + 64];
	char *argv[] = { "make", "-s", "-j2", "-C", top, o, "all", "tests",
			 NULL };
	long n, lost;
	pid_t w = -1;
	int st;

	snprintf(o, sizeof(o), "O=%s", out_dir);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", out_dir);
	if (system(rm))
		return -1;
	if (with && (w = watcher(NULL)) < 0)
		return -1;
	st = run(argv, NULL, 0, ns);
	if (w > 0 && stop(w, "make", "fixed", &n, &lost))
		st = -1;
	return st;
}

static double med(const double *v, int n)
{
	double c[MAX_REPS];

	memcpy(c, v, sizeof(*v) * (size_t)n);
	return median(c, n);
}

static int find_paths(void)
{
	const char *t = getenv("TMPDIR");
	char self[PATH_MAX];

	if (bench_dir(self))
		return -1;
	snprintf(tool, sizeof(tool), "%s/../noclobber-watch", self);
	snprintf(churn, sizeof(churn), "%s/mmap-churn", self);
	snprintf(top, sizeof(top), "%s/../../..", self);
	snprintf(tmpdir, sizeof(tmpdir), "%s/b-system.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(report, sizeof(report), "%s/watch.json", tmpdir);
	snprintf(out_dir, sizeof(out_dir), "%s/build", tmpdir);
	return access(tool, X_OK) || access(churn, X_OK) ? -1 : 0;
}

static void clean(void)
{
	char rm[PATH_MAX + 16];

	snprintf(rm, sizeof(rm), "rm -rf '%s'", tmpdir);
	if (tmpdir[0] && system(rm))
		fprintf(stderr, "b-system: %s not removed\n", tmpdir);
}

static int repeats(void)
{
	const char *e = getenv("NCB_BENCH_REPEATS");
	int n = e ? atoi(e) : REPS;

	return n < 1 ? 1 : n > MAX_REPS ? MAX_REPS : n;
}

/* The events a second the watcher takes in, with a buffer of size. */
static int events(const char *size, FILE *csv)
{
	char over[32], out[128];
	char *argv[] = { churn, "0", "0", over, NULL };
	long got, lost;
	double ns;
	pid_t w;
	int st;

	snprintf(over, sizeof(over), "%d", OVER);
	w = watcher(size);
	if (w < 0)
		return -1;
	st = run(argv, out, sizeof(out), &ns);
	/* What the tool judged: all but what the programs counted. */
	if (stop(w, "mmap-churn", "loader own-image own-region own-stack "
		 "clobbers unjudged", &got, &lost) || st)
		return -1;
	printf("%-28s %8d %9ld %8ld %9.0f\n", size ? size : "4M (the default)",
	       OVER, got, lost, (double)(got + lost) / (ns / 1e9));
	if (csv)
		fprintf(csv, "events %s,%d,%ld,%ld,%.0f\n", size ? size : "4M",
			OVER, got, lost, (double)(got + lost) / (ns / 1e9));
	return 0;
}

/*
 * The system watcher against NCB_BENCH_BEFORE's: each a median, and the
 * median of the runs' differences.
 */
static void before_after(double r[][MAX_REPS][4], int reps,
			 const double *pairs, const double *fixed)
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = (r[SYSTEM][i][1] - r[BEFORE][i][1]) / atof(PAIRS);
	printf("\nthe system watcher, this build's and %s's:\n"
	       "%-26s %10.0f %10.0f   %+.0f ns (median of the runs' "
	       "differences)\n", before, "mmap+munmap pair, ns",
	       pairs[SYSTEM], pairs[BEFORE], med(v, reps));
	for (i = 0; i < reps; i++)
		v[i] = (r[SYSTEM][i][2] - r[BEFORE][i][2]) / atof(FIXED);
	printf("%-26s %10.0f %10.0f   %+.0f ns\n", "MAP_FIXED placement, ns",
	       fixed[SYSTEM], fixed[BEFORE], med(v, reps));
}

int main(int argc, char **argv)
{
	static double r[WAYS][MAX_REPS][4];
	double v[MAX_REPS], b[2][BUILD_REPS], ratio[MAX_REPS];
	double wall[WAYS], fixed[WAYS], pairs[WAYS], ovh_s, ovh_p, br;
	int reps = repeats(), i, j, w, bad = 0, ways = BEFORE;
	FILE *csv;
	pid_t p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("NCB_BENCH_RUN") && *getenv("NCB_BENCH_RUN")) {
		printf("SKIP b-system: it measures the machine; NCB_BENCH_RUN "
		       "does not apply\n");
		return 0;
	}
	if (find_paths()) {
		printf("SKIP b-system: noclobber, mmap-churn or a temporary "
		       "directory is missing\n");
		return 0;
	}
	atexit(clean);
	p = watcher(NULL);
	if (p < 0) {
		printf("SKIP b-system: noclobber watch --system cannot run "
		       "here (root, BTF and a 6.7+ kernel needed)\n");
		return 0;
	}
	kill(p, SIGINT);
	waitpid(p, NULL, 0);
	csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	before = getenv("NCB_BENCH_BEFORE");
	if (before && *before)
		ways = WAYS;

	for (i = 0; i < reps; i++)
		for (j = 0; j < ways; j++) {
			w = (i + j) % ways;
			bad |= churn_once(w, r[w][i]) != 0;
		}
	for (w = 0; w < ways; w++) {
		for (i = 0; i < reps; i++)
			v[i] = r[w][i][0];
		wall[w] = med(v, reps) / 1e6;
		for (i = 0; i < reps; i++)
			v[i] = r[w][i][2] / atof(FIXED);
		fixed[w] = med(v, reps);
		for (i = 0; i < reps; i++)
			v[i] = r[w][i][1] / atof(PAIRS);
		pairs[w] = med(v, reps);
	}
	for (i = 0; i < reps; i++)
		v[i] = r[SYSTEM][i][0] - r[DIRECT][i][0];
	ovh_s = med(v, reps) / 1e6;
	for (i = 0; i < reps; i++)
		v[i] = r[PTRACE][i][0] - r[DIRECT][i][0];
	ovh_p = med(v, reps) / 1e6;
	for (i = 0; i < reps; i++)
		ratio[i] = r[SYSTEM][i][3] / r[DIRECT][i][3];
	printf("\nmmap-churn: %s mmap+munmap pairs and %s MAP_FIXED "
	       "placements in its own\nreservation; medians of %d runs; "
	       "system: while watch --system watches\nevery process\n\n"
	       "%-26s %10s %10s %10s\n", PAIRS, FIXED, reps, "", "direct",
	       "system", "ptrace");
	printf("%-26s %10.0f %10.0f %10.0f\n", "mmap+munmap pair, ns",
	       pairs[DIRECT], pairs[SYSTEM], pairs[PTRACE]);
	printf("%-26s %10.0f %10.0f %10.0f\n", "MAP_FIXED placement, ns",
	       fixed[DIRECT], fixed[SYSTEM], fixed[PTRACE]);
	printf("%-26s %10.2f %10.2f %10.2f\n", "wall time, ms", wall[DIRECT],
	       wall[SYSTEM], wall[PTRACE]);
	if (ways == WAYS)
		before_after(r, reps, pairs, fixed);
	printf("\nits loop under the system watcher: %.3fx (goal <= "
	       "1.02x: %s)\n", med(ratio, reps),
	       med(ratio, reps) <= 1.02 ? "met" : "not met");
	printf("overhead, wall time: system %.2f ms, ptrace %.2f ms%s\n",
	       ovh_s, ovh_p, ovh_s > 0 ? "" : " (system's within the noise)");
	if (ovh_s > 0)
		printf("%.1fx less than the ptrace watcher (goal >= 20x: "
		       "%s)\n", ovh_p / ovh_s, ovh_p >= 20 * ovh_s ? "met" :
		       "not met");
	if (csv)
		fprintf(csv, "way,wall_ms,fixed_ns,pair_ns\ndirect,%.3f,%.0f,"
			"%.0f\nsystem,%.3f,%.0f,%.0f\nptrace,%.3f,%.0f,%.0f\n",
			wall[DIRECT], fixed[DIRECT], pairs[DIRECT],
			wall[SYSTEM], fixed[SYSTEM], pairs[SYSTEM],
			wall[PTRACE], fixed[PTRACE], pairs[PTRACE]);

	for (i = 0; i < BUILD_REPS; i++)
		for (j = 0; j < 2; j++) {
			w = (i + j) % 2;
			bad |= build_once(w, &b[w][i]) != 0;
		}
	for (i = 0; i < BUILD_REPS; i++)
		v[i] = b[1][i] / b[0][i];
	br = med(v, BUILD_REPS);
	printf("\nmake -j2 all tests (this project), medians of %d: %.2f s "
	       "without, %.2f s with\nthe system watcher: %.3fx (goal <= "
	       "1.02x: %s)\n", BUILD_REPS, med(b[0], BUILD_REPS) / 1e9,
	       med(b[1], BUILD_REPS) / 1e9, br, br <= 1.02 ? "met" :
	       "not met");
	if (csv)
		fprintf(csv, "build,%.3f,%.3f,%.4f\n",
			med(b[0], BUILD_REPS) / 1e9,
			med(b[1], BUILD_REPS) / 1e9, br);

	printf("\nevents: fixed placements over the program's own memory, "
	       "each sent to the\ntool; taken in, lost to a full ring "
	       "buffer, and a second (the program's)\n\n%-28s %8s %9s %8s "
	       "%9s\n", "ring buffer", "calls", "taken in", "lost",
	       "events/s");
	bad |= events(NULL, csv) != 0;
	/* The smallest the tool takes: about twenty records. */
	bad |= events("64K", csv) != 0;
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-system: a run failed\n");
	return bad;
}

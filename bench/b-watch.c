/* SPDX-License-Identifier: MIT */
/*
 * What noclobber watch costs a program: wall time from fork to waitpid of
 * real programs run directly, under `noclobber watch -O /dev/null` and
 * under `strace -f -e trace=mmap,mremap,munmap -o /dev/null`, and of
 * mmap-churn, an mmap-heavy program that also says how long its calls
 * took.  The three ways run one after the other in every repetition, in
 * an order that rotates, so that they share the machine's drift; ratios
 * are medians of the per-repetition ratios.  exit0 measures the start-up
 * alone: the watcher's fork, seizure and filter, or strace's.  A fourth
 * way, bare-trace, is the floor under any watcher of this kind: the same
 * filter and following, and nothing done at a stop but resuming; what
 * watch costs over it is the judging.
 *
 * Goals: at most 5% overhead on the real programs, and at least 10x less
 * overhead than strace on mmap-churn.  NCB_BENCH_REPEATS sets the number
 * of repetitions (fewer for a quick look).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define REPS 15
#define MAX_REPS 101
#define WAYS 4
#define MAX_ARGS 16
#define MAX_NEEDS 4

/* mmap-churn's work: one fixed placement for every ten pairs. */
#define CHURN_PAIRS "5000"
#define CHURN_FIXED "500"

enum { DIRECT, WATCH, STRACE, BARE };

struct prog {
	const char *label;
	const char *argv[8];
	const char *needs[MAX_NEEDS];	/* other programs it runs */
	int churn;			/* mmap-churn: its output is read */
	long stops, procs;		/* the watcher's, in its summaries */
};

/* One run's results: wall time, and mmap-churn's own figures. */
struct run {
	double wall;
	double pairs, fixed, loop;
};

/* Paths: a directory's, and a name in it. */
static char tmpdir[PATH_MAX], small_c[PATH_MAX + 16], small_o[PATH_MAX + 16];
static char tool[PATH_MAX + 32], churn[PATH_MAX + 16], report[PATH_MAX + 16];
static char bare[PATH_MAX + 16];
static int have_strace;

static const char *const strace_argv[] = {
	"strace", "-f", "-e", "trace=mmap,mremap,munmap", "-o", "/dev/null",
	NULL
};

/* Whether name is an executable file on PATH (or a path to one). */
static int on_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return !access(name, X_OK);
	for (p = path ? path : "/usr/bin:/bin"; *p; p = end + !!*end) {
		end = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p, name);
		if (end > p && !access(buf, X_OK))
			return 1;
	}
	return 0;
}

/*
 * The full command line of prog run one way; under the watcher with its
 * reports kept in report (as JSON) if asked, else thrown away.
 */
static void command(const struct prog *p, int way, int keep,
		    const char **argv)
{
	int n = 0, i;

	if (way == WATCH) {
		argv[n++] = tool;
		argv[n++] = "watch";
		if (keep)
			argv[n++] = "--json";
		argv[n++] = "-O";
		argv[n++] = keep ? report : "/dev/null";
	} else if (way == STRACE) {
		for (i = 0; strace_argv[i]; i++)
			argv[n++] = strace_argv[i];
	} else if (way == BARE) {
		argv[n++] = bare;
	}
	for (i = 0; p->argv[i]; i++)
		argv[n++] = p->argv[i];
	argv[n] = NULL;
}

/*
 * Runs prog one way: its wait status, or -1 if it could not be started.
 * Its output goes to /dev/null, but for mmap-churn's, which is read.
 */
static int run(const struct prog *p, int way, int keep, struct run *r)
{
	const char *argv[MAX_ARGS];
	char out[128];
	int fd[2] = { -1, -1 }, st, null;
	ssize_t n, got = 0;
	double t0;
	pid_t pid;

	command(p, way, keep, argv);
	if (p->churn && pipe2(fd, O_CLOEXEC))
		return -1;
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(fd[1] >= 0 ? fd[1] : null, 1);
		dup2(null, 2);
		execvp(argv[0], (char **)argv);
		_exit(127);
	}
	if (fd[1] >= 0)
		close(fd[1]);
	/* Read before the wait: the pipe's reader must be there. */
	while (fd[0] >= 0 && (size_t)got < sizeof(out) - 1 &&
	       (n = read(fd[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	r->wall = now_ns() - t0;
	if (fd[0] >= 0)
		close(fd[0]);
	out[got] = '\0';
	if (p->churn && !st &&
	    sscanf(out, "%lf %lf %lf", &r->pairs, &r->fixed, &r->loop) != 3)
		st = -1;
	return st;
}

/* The watcher's stops and processes, from its summaries in report. */
static void count_stops(struct prog *p)
{
	FILE *f = fopen(report, "r");
	char line[1024], *at;

	p->stops = p->procs = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "\"event\":\"summary\""))
			continue;
		at = strstr(line, "\"fixed\":");
		if (at)
			p->stops += atol(at + strlen("\"fixed\":"));
		p->procs++;
	}
	if (f)
		fclose(f);
	unlink(report);
}

/* What a run's wait status means, for a line saying why it was skipped. */
static const char *status_text(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "could not be run");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(st));
	return buf;
}

/* Whether prog can be measured: why not, or NULL. */
static const char *missing(const struct prog *p)
{
	static char why[PATH_MAX + 32];
	int i;

	for (i = -1; i < MAX_NEEDS && (i < 0 || p->needs[i]); i++) {
		const char *name = i < 0 ? p->argv[0] : p->needs[i];

		if (!on_path(name)) {
			snprintf(why, sizeof(why), "%s is %s", name,
				 strchr(name, '/') ? "missing" :
				 "not installed");
			return why;
		}
	}
	return NULL;
}

static double med(const double *v, int n)
{
	double c[MAX_REPS];

	memcpy(c, v, sizeof(*v) * (size_t)n);
	return median(c, n);
}

/* A row of mmap-churn's table: figures in ns or ms, and ratios. */
static void churn_row(const char *label, const double *x, int prec)
{
	static const int order[] = { DIRECT, BARE, WATCH, STRACE };
	int i;

	printf("%-20s", label);
	for (i = 0; i < WAYS; i++) {
		printf(" %8.*f", prec, x[order[i]]);
	}
	for (i = 1; i < WAYS; i++)
		printf(" %6.2fx", x[order[i]] / x[DIRECT]);
	putchar('\n');
}

/* How many times less overhead watch has than strace: "-" if none. */
static const char *less_text(double w, double s, char *buf, size_t len)
{
	if (s <= 1 || !have_strace)
		snprintf(buf, len, "-");
	else if (w <= 1)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%.1fx", (s - 1) / (w - 1));
	return buf;
}

static void remove_temporaries(void)
{
	unlink(report);
	unlink(small_o);
	unlink(small_c);
	rmdir(tmpdir);
}

/* The source gcc compiles: a few functions, as a small unit has. */
static int write_small(void)
{
	static const char src[] =
		"#include <stdio.h>\n"
		"struct point { int x, y; };\n"
		"static int dist2(struct point a, struct point b)\n"
		"{\n\treturn (a.x - b.x) * (a.x - b.x) + "
		"(a.y - b.y) * (a.y - b.y);\n}\n"
		"int nearest(const struct point *p, int n, struct point q)\n"
		"{\n\tint i, best = 0;\n\n\tfor (i = 1; i < n; i++)\n"
		"\t\tif (dist2(p[i], q) < dist2(p[best], q))\n"
		"\t\t\tbest = i;\n\treturn best;\n}\n"
		"void show(const struct point *p)\n"
		"{\n\tprintf(\"%d,%d\\n\", p->x, p->y);\n}\n";
	const char *t = getenv("TMPDIR");
	FILE *f;

	snprintf(tmpdir, sizeof(tmpdir), "%s/b-watch.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	atexit(remove_temporaries);
	snprintf(small_c, sizeof(small_c), "%s/small.c", tmpdir);
	snprintf(small_o, sizeof(small_o), "%s/small.o", tmpdir);
	snprintf(report, sizeof(report), "%s/watch.json", tmpdir);
	f = fopen(small_c, "w");
	if (!f)
		return -1;
	fputs(src, f);
	return fclose(f);
}

/*
 * The watchers' program (noclobber-watch, as `noclobber watch` runs it),
 * mmap-churn and bare-trace: beside this program's directory and in it.
 */
static int find_helpers(void)
{
	char self[PATH_MAX];

	if (bench_dir(self))
		return -1;
	snprintf(tool, sizeof(tool), "%s/../noclobber-watch", self);
	snprintf(churn, sizeof(churn), "%s/mmap-churn", self);
	snprintf(bare, sizeof(bare), "%s/bare-trace", self);
	return access(tool, X_OK) || access(bare, X_OK) ? -1 : 0;
}

static int repeats(void)
{
	const char *e = getenv("NCB_BENCH_REPEATS");
	int n = e ? atoi(e) : REPS;

	return n < 1 ? 1 : n > MAX_REPS ? MAX_REPS : n;
}

int main(int argc, char **argv)
{
	struct prog progs[] = {
		{ "exit0 (start-up)", .argv = { NULL } },
		{ "python3 -c import...",
		  .argv = { "python3", "-c", "import json, sqlite3, ssl" } },
		{ "perl -e 1", .argv = { "perl", "-e", "1" } },
		{ "java -version", .argv = { "java", "-version" } },
		{ "node -e 1", .argv = { "node", "-e", "1" } },
		{ "gcc -c small.c",
		  .argv = { "gcc", "-c", "-o", small_o, small_c } },
		{ "git --version", .argv = { "git", "--version" } },
		{ "make --version", .argv = { "make", "--version" } },
		{ "qemu-x86_64 /bin/true",
		  .argv = { "qemu-x86_64", "/bin/true" },
		  .needs = { "/bin/true" } },
		{ "valgrind -q /bin/true",
		  .argv = { "valgrind", "-q", "/bin/true" },
		  .needs = { "/bin/true" } },
		{ "sh -c seq|sort|head",
		  .argv = { "sh", "-c", "seq 1 1000 | sort -r | head -3" },
		  .needs = { "seq", "sort", "head" } },
		{ "mmap-churn", .argv = { churn, CHURN_PAIRS, CHURN_FIXED },
		  .churn = 1 },
	};
	const int nprogs = (int)(sizeof(progs) / sizeof(progs[0]));
	static struct run res[sizeof(progs) / sizeof(progs[0])][WAYS][MAX_REPS];
	double v[WAYS][MAX_REPS], ratio[WAYS][MAX_REPS], m[WAYS], rm[WAYS];
	double worst = 0, plus, judge, ovh_w, ovh_s;
	FILE *csv;
	int skip[sizeof(progs) / sizeof(progs[0])] = { 0 };
	int reps = repeats(), i, k, w, j, st, bad = 0, churn_k = -1;
	int real = 0, met = 0, floor_met = 0;
	const char *worst_label = NULL, *why;
	char buf[64], less[16];
	struct run scratch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("NCB_BENCH_RUN") && *getenv("NCB_BENCH_RUN")) {
		/* The programs it starts would run natively all the same. */
		printf("SKIP b-watch: it measures native programs; "
		       "NCB_BENCH_RUN does not apply\n");
		return 0;
	}
	if (find_helpers() || write_small()) {
		printf("SKIP b-watch: noclobber (the tool), bare-trace or a "
		       "temporary directory is missing\n");
		return 0;
	}
	progs[0].argv[0] = argc > 2 ? argv[2] : "exit0";
	csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	have_strace = on_path("strace");
	if (!have_strace)
		printf("SKIP strace column: strace is not installed\n");

	/* A first run of each way: the skips, and caches warmed. */
	for (k = 0; k < nprogs; k++) {
		why = missing(&progs[k]);
		st = why ? 0 : run(&progs[k], DIRECT, 0, &scratch);
		if (st)
			why = status_text(st, buf, sizeof(buf));
		st = why ? 0 : run(&progs[k], WATCH, 1, &scratch);
		if (st && !k) {
			printf("SKIP b-watch: noclobber watch cannot run here "
			       "(%s; ptrace or seccomp not permitted?)\n",
			       status_text(st, buf, sizeof(buf)));
			return 0;
		}
		if (st) {
			fprintf(stderr, "b-watch: %s: %s under noclobber "
				"watch, not directly\n", progs[k].label,
				status_text(st, buf, sizeof(buf)));
			why = "fails under noclobber watch";
			bad = 1;
		}
		count_stops(&progs[k]);
		st = why || !have_strace ? 0 :
		     run(&progs[k], STRACE, 0, &scratch);
		if (st)
			why = "fails under strace";
		st = why ? 0 : run(&progs[k], BARE, 0, &scratch);
		if (st)
			why = "fails under bare-trace";
		if (why) {
			printf("SKIP %s: %s\n", progs[k].label, why);
			skip[k] = 1;
		}
	}

	for (i = 0; i < reps; i++)
		for (k = 0; k < nprogs; k++)
			for (j = 0; !skip[k] && j < WAYS; j++) {
				w = (i + j) % WAYS;
				if (w == STRACE && !have_strace)
					continue;
				if (run(&progs[k], w, 0, &res[k][w][i]))
					bad = 1;
			}

	printf("\nwall time from fork to exit, ms (median of %d runs); "
	       "bare: bare-trace, the\nsame stops with nothing done at "
	       "them; +ms: watch's time over direct, judge:\nover bare "
	       "(medians of per-run differences); ratios to direct, medians "
	       "of\nper-run ratios; less: how many times less overhead watch "
	       "has than strace;\nprocs, stops: the processes the watcher "
	       "followed and its stops (fixed\nplacements)\n\n"
	       "%-21s %5s %5s %7s %7s %7s %7s %5s %5s %6s %6s %6s %5s\n",
	       reps, "program", "procs", "stops", "direct", "bare", "watch",
	       "strace", "+ms", "judge", "bare", "watch", "strace", "less");
	if (csv)
		fprintf(csv, "program,procs,stops,direct_ms,bare_ms,watch_ms,"
			"strace_ms,watch_plus_ms,judge_ms,bare_ratio,"
			"watch_ratio,strace_ratio,less\n");
	for (k = 0; k < nprogs; k++) {
		if (skip[k])
			continue;
		if (progs[k].churn)
			churn_k = k;
		for (w = 0; w < WAYS; w++) {
			for (i = 0; i < reps; i++) {
				v[w][i] = res[k][w][i].wall;
				ratio[w][i] = v[w][i] / res[k][DIRECT][i].wall;
			}
			m[w] = med(v[w], reps) / 1e6;
			rm[w] = med(ratio[w], reps);
		}
		for (i = 0; i < reps; i++) {
			v[0][i] = res[k][WATCH][i].wall -
				  res[k][DIRECT][i].wall;
			v[1][i] = res[k][WATCH][i].wall -
				  res[k][BARE][i].wall;
		}
		plus = med(v[0], reps) / 1e6;
		judge = med(v[1], reps) / 1e6;
		if (!have_strace)
			m[STRACE] = rm[STRACE] = 0;
		less_text(rm[WATCH], rm[STRACE], less, sizeof(less));
		printf("%-21s %5ld %5ld %7.2f %7.2f %7.2f %7.2f %5.2f %5.2f "
		       "%5.3fx %5.3fx %5.2fx %5s\n", progs[k].label,
		       progs[k].procs, progs[k].stops, m[DIRECT], m[BARE],
		       m[WATCH], m[STRACE], plus, judge, rm[BARE], rm[WATCH],
		       rm[STRACE], less);
		if (csv)
			fprintf(csv, "%s,%ld,%ld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
				"%.4f,%.4f,%.4f,%s\n", progs[k].label,
				progs[k].procs, progs[k].stops, m[DIRECT],
				m[BARE], m[WATCH], m[STRACE], plus, judge,
				rm[BARE], rm[WATCH], rm[STRACE], less);
		/* exit0 and mmap-churn are not real programs. */
		if (!k || progs[k].churn)
			continue;
		real++;
		if (rm[WATCH] <= 1.05)
			met++;
		if (rm[BARE] <= 1.05)
			floor_met++;
		if (rm[WATCH] > worst) {
			worst = rm[WATCH];
			worst_label = progs[k].label;
		}
	}
	if (real)
		printf("\nreal programs within 5%% under watch (the goal): "
		       "%d of %d; most overhead %.1f%%\n(%s): goal %s\n",
		       met, real, (worst - 1) * 100, worst_label,
		       met == real ? "met" : "not met");
	if (real)
		printf("within 5%% under bare-trace (stops that do nothing): "
		       "%d of %d\n", floor_met, real);

	if (churn_k >= 0) {
		struct run (*c)[MAX_REPS] = res[churn_k];
		const double pairs = atof(CHURN_PAIRS),
			     fixed = atof(CHURN_FIXED);
		double ow[MAX_REPS], os[MAX_REPS], p[WAYS], f[WAYS], l[WAYS];
		double dw, ds, dn;

		for (w = 0; w < WAYS; w++) {
			for (i = 0; i < reps; i++)
				v[w][i] = c[w][i].pairs / pairs;
			p[w] = med(v[w], reps);
			for (i = 0; i < reps; i++)
				v[w][i] = c[w][i].fixed / fixed;
			f[w] = med(v[w], reps);
			for (i = 0; i < reps; i++)
				v[w][i] = c[w][i].loop;
			l[w] = med(v[w], reps) / 1e6;
		}
		/* Overheads in ms, per run, so that drift cancels. */
		for (i = 0; i < reps; i++) {
			ow[i] = c[WATCH][i].wall - c[DIRECT][i].wall;
			os[i] = c[STRACE][i].wall - c[DIRECT][i].wall;
		}
		ovh_w = med(ow, reps) / 1e6;
		ovh_s = med(os, reps) / 1e6;
		printf("\nmmap-churn: %s anonymous mmap+munmap pairs (never "
		       "stopped at) and %s MAP_FIXED\nplacements in its own "
		       "reservation (stopped at); ns per op, median of %d "
		       "runs\n\n%-20s %8s %8s %8s %8s %7s %7s %7s\n",
		       CHURN_PAIRS, CHURN_FIXED, reps, "", "direct", "bare",
		       "watch", "strace", "bare", "watch", "strace");
		churn_row("mmap+munmap pair", p, 0);
		churn_row("MAP_FIXED placement", f, 0);
		churn_row("whole loop, ms", l, 2);
		printf("\na stop at a fixed placement: %.0f ns the kernel's "
		       "round trip (bare), %.0f ns\nthe watcher's judging "
		       "(watch over bare)\n", f[BARE] - f[DIRECT],
		       f[WATCH] - f[BARE]);
		/* In the time columns, in ns, under a name that says so. */
		if (csv) {
			fprintf(csv, "mmap-churn pair ns,,,%.0f,%.0f,%.0f,,"
				"%.4f,%.4f,\n", p[DIRECT], p[WATCH],
				p[STRACE], p[WATCH] / p[DIRECT],
				p[STRACE] / p[DIRECT]);
			fprintf(csv, "mmap-churn fixed ns,,,%.0f,%.0f,%.0f,,"
				"%.4f,%.4f,\n", f[DIRECT], f[WATCH],
				f[STRACE], f[WATCH] / f[DIRECT],
				f[STRACE] / f[DIRECT]);
		}
		if (have_strace) {
			printf("\nmmap-churn overhead, wall time: watch "
			       "%.1f ms, strace %.1f ms: %.1fx less; goal "
			       ">= 10x: %s\n", ovh_w, ovh_s, ovh_s / ovh_w,
			       ovh_s >= 10 * ovh_w ? "met" : "not met");
			/*
			 * Where the goal stops holding: fixed placements as
			 * a share x of the mmap-family calls, each stop at
			 * one costing watch dw and strace ds, each other
			 * call strace dn: 10 x dw = x ds + (1 - x) dn.
			 */
			dw = f[WATCH] - f[DIRECT];
			ds = f[STRACE] - f[DIRECT];
			dn = (p[STRACE] - p[DIRECT]) / 2;
			if (dw > 0 && 10 * dw - ds + dn > 0)
				printf("(10x holds while fixed placements "
				       "are under %.1f%% of mmap-family "
				       "calls)\n",
				       100 * dn / (10 * dw - ds + dn));
		}
	}
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-watch: a run failed\n");
	return bad;
}

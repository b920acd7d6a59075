/* SPDX-License-Identifier: MIT */
/*
 * What noclobber watch costs a program: wall time from fork to waitpid of
 * real programs run directly, under `noclobber watch -O /dev/null` and
 * under `strace -f -e trace=mmap,mremap,munmap -o /dev/null`, and of
 * mmap-churn, an mmap-heavy program that also says how long its calls
 * took.  The ways run one after the other in every repetition, in an
 * order that rotates, so that they share the machine's drift; ratios are
 * medians of the per-repetition ratios.  exit0 measures the start-up
 * alone: the watcher's fork, seizure and filter, or strace's.  A fourth
 * way, bare-trace, is the floor under any watcher of this kind: a stop at
 * each fixed placement, the same following, and nothing done at a stop
 * but resuming; what watch costs over it is the judging, and the stops
 * at plain placements whose makers it records.
 *
 * A sixth, where the build has it, is the watcher inside the process:
 * the program run with libnoclobber-preload.so in its environment, as
 * `noclobber watch --preload` runs it once the tool has started (whose
 * own start, a few milliseconds, is the tool's, not the watching's);
 * its goals are at most 2% on the real programs and at least 20x less
 * overhead than watch's on mmap-churn.  A seventh, "floor", preloads an
 * empty object instead (libempty-preload.so): what LD_PRELOAD costs by
 * itself, under which no watcher inside the process can go; the preload
 * watcher's own cost is its time over the floor's.
 *
 * NCB_BENCH_BASELINE=PATH adds a fifth way: another build's watcher
 * (its noclobber-watch, or noclobber) run as watch is, so that a change
 * to the watcher is measured against what it was in the same run; its
 * column is "base", and "w/base" is watch's time over its.
 *
 * Goals: at most 5% overhead on the real programs, and at least 10x less
 * overhead than strace on mmap-churn.  NCB_BENCH_REPEATS sets the number
 * of repetitions (fewer for a quick look).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define REPS 15
#define MAX_REPS 101
#define MAX_ARGS 16
#define MAX_NEEDS 4

/* mmap-churn's work: one fixed placement for every ten pairs. */
#define CHURN_PAIRS "5000"
#define CHURN_FIXED "500"

/* The ways a program is run, in the order of the tables' columns. */
enum { DIRECT, BARE, BASE, WATCH, FLOOR, PRELOAD, STRACE, WAYS };

static const struct way {
	const char *name;	/* its columns' */
	const char *under;	/* what runs the program so */
	int prec;		/* the decimals of its ratio to direct */
} ways[WAYS] = {
	[DIRECT] = { "direct", "nothing", 3 },
	[BARE] = { "bare", "bare-trace", 3 },
	[BASE] = { "base", "the baseline watcher", 3 },
	[WATCH] = { "watch", "noclobber watch", 3 },
	[FLOOR] = { "floor", "an empty preloaded object", 3 },
	[PRELOAD] = { "preload", "libnoclobber-preload.so", 3 },
	[STRACE] = { "strace", "strace", 2 },
};

/* The ways this run measures: has[way], and used[] in the columns' order. */
static int has[WAYS], used[WAYS], nused;

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

/* A program's figures: medians of wall time (ms) and of per-run ratios. */
struct row {
	double ms[WAYS], ratio[WAYS];	/* by way; ratios to direct */
	double plus, judge;		/* watch's ms over direct, over bare */
	double over_base;		/* watch's time over the baseline's */
	double over_floor;		/* preload's over the empty object's */
};

/* Paths: a directory's, and a name in it. */
static char tmpdir[PATH_MAX], small_c[PATH_MAX + 16], small_o[PATH_MAX + 16];
static char tool[PATH_MAX + 32], churn[PATH_MAX + 16], report[PATH_MAX + 16];
static char bare[PATH_MAX + 16], preload[PATH_MAX + 48];
static char floor_so[PATH_MAX + 32];
static const char *baseline;

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

	if (way == WATCH || way == BASE) {
		argv[n++] = way == BASE ? baseline : tool;
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

/* The preload watcher's environment, as watch --preload sets it. */
static void preload_env(int way, int keep)
{
	if (way == FLOOR) {
		setenv("LD_PRELOAD", floor_so, 1);
		return;
	}
	setenv("LD_PRELOAD", preload, 1);
	setenv("NCB_PRELOAD", "report", 1);
	setenv("NCB_PRELOAD_JSON", "1", 1);
	setenv("NCB_PRELOAD_OUTPUT", keep ? report : "/dev/null", 1);
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
		if (way == PRELOAD || way == FLOOR)
			preload_env(way, keep);
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

/* Over the repetitions: the median of a's wall time, or a's less b's. */
static double med_less(const struct run *a, const struct run *b, int reps)
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = a[i].wall - (b ? b[i].wall : 0);
	return median(v, reps);
}

/* The median of a's wall time over b's, run by run. */
static double med_over(const struct run *a, const struct run *b, int reps)
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = a[i].wall / b[i].wall;
	return median(v, reps);
}

/* A program's figures from its runs, r[way][repetition]. */
static void figures(struct run (*r)[MAX_REPS], int reps, struct row *x)
{
	int i, w;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < nused; i++) {
		w = used[i];
		x->ms[w] = med_less(r[w], NULL, reps) / 1e6;
		x->ratio[w] = med_over(r[w], r[DIRECT], reps);
	}
	x->plus = med_less(r[WATCH], r[DIRECT], reps) / 1e6;
	x->judge = med_less(r[WATCH], r[BARE], reps) / 1e6;
	if (has[BASE])
		x->over_base = med_over(r[WATCH], r[BASE], reps);
	if (has[FLOOR] && has[PRELOAD])
		x->over_floor = med_over(r[PRELOAD], r[FLOOR], reps);
}

/* The names of the ways measured, the first'th on, each as fmt says. */
static void names(FILE *f, const char *fmt, int first)
{
	int i;

	for (i = first; i < nused; i++)
		fprintf(f, fmt, ways[used[i]].name);
}

/* Their figures x[way], with prec decimals (< 0: the way's own). */
static void cells(FILE *f, const char *fmt, int prec, const double *x,
		  int first)
{
	int i, w;

	for (i = first; i < nused; i++) {
		w = used[i];
		fprintf(f, fmt, prec < 0 ? ways[w].prec : prec, x[w]);
	}
}

/* How many times less overhead watch has than strace: "-" if none. */
static const char *less_text(double w, double s, char *buf, size_t len)
{
	if (s <= 1 || !has[STRACE])
		snprintf(buf, len, "-");
	else if (w <= 1)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%.1fx", (s - 1) / (w - 1));
	return buf;
}

static void table_head(FILE *csv)
{
	printf("%-21s %5s %5s", "program", "procs", "stops");
	names(stdout, " %7s", 0);
	printf(" %5s %5s", "+ms", "judge");
	names(stdout, " %6s", 1);
	if (has[BASE])
		printf(" %6s", "w/base");
	if (has[FLOOR])
		printf(" %7s", "p/floor");
	printf(" %5s\n", "less");
	if (!csv)
		return;
	fputs("program,procs,stops", csv);
	names(csv, ",%s_ms", 0);
	fputs(",watch_plus_ms,judge_ms", csv);
	names(csv, ",%s_ratio", 1);
	if (has[BASE])
		fputs(",watch_base_ratio", csv);
	if (has[FLOOR])
		fputs(",preload_floor_ratio", csv);
	fputs(",less\n", csv);
}

static void table_row(FILE *csv, const struct prog *p, const struct row *x)
{
	char less[16];

	less_text(x->ratio[WATCH], x->ratio[STRACE], less, sizeof(less));
	printf("%-21s %5ld %5ld", p->label, p->procs, p->stops);
	cells(stdout, " %7.*f", 2, x->ms, 0);
	printf(" %5.2f %5.2f", x->plus, x->judge);
	cells(stdout, " %5.*fx", -1, x->ratio, 1);
	if (has[BASE])
		printf(" %5.3fx", x->over_base);
	if (has[FLOOR])
		printf(" %6.3fx", x->over_floor);
	printf(" %5s\n", less);
	if (!csv)
		return;
	fprintf(csv, "%s,%ld,%ld", p->label, p->procs, p->stops);
	cells(csv, ",%.*f", 3, x->ms, 0);
	fprintf(csv, ",%.3f,%.3f", x->plus, x->judge);
	cells(csv, ",%.*f", 4, x->ratio, 1);
	if (has[BASE])
		fprintf(csv, ",%.4f", x->over_base);
	if (has[FLOOR])
		fprintf(csv, ",%.4f", x->over_floor);
	fprintf(csv, ",%s\n", less);
}

/*
 * A row of mmap-churn's table: figures in ns or ms by way, and ratios;
 * in the CSV too if it has a name there, the figures in the time columns.
 */
static void churn_row(FILE *csv, const char *label, const char *csv_label,
		      const double *x, int prec)
{
	double r[WAYS];
	int w;

	for (w = 0; w < WAYS; w++)
		r[w] = x[w] / x[DIRECT];
	printf("%-20s", label);
	cells(stdout, " %8.*f", prec, x, 0);
	cells(stdout, " %6.*fx", 2, r, 1);
	putchar('\n');
	if (!csv || !csv_label)
		return;
	fprintf(csv, "%s,,", csv_label);
	cells(csv, ",%.*f", 0, x, 0);
	fputs(",,", csv);
	cells(csv, ",%.*f", 4, r, 1);
	if (has[BASE])
		fprintf(csv, ",%.4f", x[WATCH] / x[BASE]);
	if (has[FLOOR])
		fprintf(csv, ",%.4f", x[PRELOAD] / x[FLOOR]);
	fputs(",\n", csv);
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
	snprintf(preload, sizeof(preload), "%s/../libnoclobber-preload.so",
		 self);
	snprintf(floor_so, sizeof(floor_so), "%s/libempty-preload.so", self);
	return access(tool, X_OK) || access(bare, X_OK) ? -1 : 0;
}

static int repeats(void)
{
	const char *e = getenv("NCB_BENCH_REPEATS");
	int n = e ? atoi(e) : REPS;

	return n < 1 ? 1 : n > MAX_REPS ? MAX_REPS : n;
}

/*
 * The ways to measure: directly, under bare-trace and under watch, under
 * strace where it is installed, and under the baseline watcher where
 * NCB_BENCH_BASELINE names one; -1 if that is no program.
 */
static int choose_ways(void)
{
	const char *b = getenv("NCB_BENCH_BASELINE"), *why = NULL;
	struct stat sb;
	int w;

	has[DIRECT] = has[BARE] = has[WATCH] = 1;
	has[STRACE] = on_path("strace");
	if (!has[STRACE])
		printf("SKIP strace column: strace is not installed\n");
	has[PRELOAD] = !access(preload, R_OK);
	if (!has[PRELOAD])
		printf("SKIP preload column: no %s\n", preload);
	has[FLOOR] = has[PRELOAD] && !access(floor_so, R_OK);
	if (has[PRELOAD] && !has[FLOOR])
		printf("SKIP floor column: no %s\n", floor_so);
	if (b && *b) {
		if (stat(b, &sb) || access(b, X_OK))
			why = strerror(errno);
		else if (!S_ISREG(sb.st_mode))
			why = "not a program";
		if (why) {
			fprintf(stderr, "b-watch: NCB_BENCH_BASELINE: %s: %s\n",
				b, why);
			return -1;
		}
		baseline = b;
		has[BASE] = 1;
	}
	for (w = 0; w < WAYS; w++)
		if (has[w])
			used[nused++] = w;
	return 0;
}

/* The preload watcher on mmap-churn: its cost per call, its goal. */
static void preload_churn(const double *p, const double *f, double ovh_w,
			  double ovh_p)
{
	printf("under --preload: %.0f ns more a pair, %.0f ns more a fixed "
	       "placement\n", p[PRELOAD] - p[DIRECT], f[PRELOAD] - f[DIRECT]);
	if (ovh_p <= 0) {
		printf("mmap-churn overhead, wall time: watch %.1f ms, preload "
		       "none measurable; goal >= 20x less: met\n", ovh_w);
		return;
	}
	printf("mmap-churn overhead, wall time: watch %.1f ms, preload %.2f "
	       "ms: %.1fx less; goal >= 20x: %s\n", ovh_w, ovh_p,
	       ovh_w / ovh_p, ovh_w >= 20 * ovh_p ? "met" : "not met");
}

/*
 * mmap-churn's own figures from its runs, c[way][repetition]: ns per call
 * of each kind and ms of its loop, and where watch's 10x less overhead
 * than strace stops holding.
 */
static void churn_report(struct run (*c)[MAX_REPS], int reps, FILE *csv)
{
	const double pairs = atof(CHURN_PAIRS), fixed = atof(CHURN_FIXED);
	double v[MAX_REPS], p[WAYS] = { 0 }, f[WAYS] = { 0 }, l[WAYS] = { 0 };
	double ovh_w, ovh_s, dw, ds, dp, dn, a;
	int i, j, w;

	for (j = 0; j < nused; j++) {
		w = used[j];
		for (i = 0; i < reps; i++)
			v[i] = c[w][i].pairs / pairs;
		p[w] = median(v, reps);
		for (i = 0; i < reps; i++)
			v[i] = c[w][i].fixed / fixed;
		f[w] = median(v, reps);
		for (i = 0; i < reps; i++)
			v[i] = c[w][i].loop;
		l[w] = median(v, reps) / 1e6;
	}
	printf("\nmmap-churn: %s anonymous mmap+munmap pairs (watch stops at "
	       "each mmap to\nrecord its maker, bare-trace does not) and %s "
	       "MAP_FIXED placements in its own\nreservation (stopped at); "
	       "ns per op, median of %d runs\n\n%-20s", CHURN_PAIRS,
	       CHURN_FIXED, reps, "");
	names(stdout, " %8s", 0);
	names(stdout, " %7s", 1);
	putchar('\n');
	churn_row(csv, "mmap+munmap pair", "mmap-churn pair ns", p, 0);
	churn_row(csv, "MAP_FIXED placement", "mmap-churn fixed ns", f, 0);
	churn_row(csv, "whole loop, ms", NULL, l, 2);
	printf("\na stop at a fixed placement: %.0f ns the kernel's round "
	       "trip (bare), %.0f ns\nthe watcher's judging (watch over "
	       "bare)\n", f[BARE] - f[DIRECT], f[WATCH] - f[BARE]);
	printf("a plain mmap+munmap pair: %.0f ns more under watch than "
	       "directly", p[WATCH] - p[DIRECT]);
	if (has[BASE])
		printf(", %.0f ns more\nthan under the baseline",
		       p[WATCH] - p[BASE]);
	printf("\n");
	/* Overheads in ms, per run, so that drift cancels. */
	ovh_w = med_less(c[WATCH], c[DIRECT], reps) / 1e6;
	if (has[PRELOAD])
		preload_churn(p, f, ovh_w, med_less(c[PRELOAD], c[DIRECT],
						    reps) / 1e6);
	if (!has[STRACE])
		return;
	ovh_s = med_less(c[STRACE], c[DIRECT], reps) / 1e6;
	printf("\nmmap-churn overhead, wall time: watch %.1f ms, strace "
	       "%.1f ms: %.1fx less; goal >= 10x: %s\n", ovh_w, ovh_s,
	       ovh_s / ovh_w, ovh_s >= 10 * ovh_w ? "met" : "not met");
	/*
	 * Where the goal stops holding: fixed placements as a share x of
	 * the mmap-family calls, each stop at one costing watch dw and
	 * strace ds, each other call watch dp (the stop at a plain mmap,
	 * over its pair's two calls) and strace dn:
	 * 10 (x dw + (1 - x) dp) = x ds + (1 - x) dn.
	 */
	dw = f[WATCH] - f[DIRECT];
	ds = f[STRACE] - f[DIRECT];
	dp = (p[WATCH] - p[DIRECT]) / 2;
	dn = (p[STRACE] - p[DIRECT]) / 2;
	a = dn - 10 * dp;
	if (a <= 0)
		printf("(10x holds at no share of fixed placements: the stops "
		       "at plain mmaps\nalone cost watch over a tenth of what "
		       "strace's cost)\n");
	else if (10 * dw - ds + a > 0)
		printf("(10x holds while fixed placements are under %.1f%% of "
		       "mmap-family calls)\n", 100 * a / (10 * dw - ds + a));
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
	struct row x;
	double worst = 0, worst_p = 0, worst_pf = 0;
	FILE *csv;
	int skip[sizeof(progs) / sizeof(progs[0])] = { 0 };
	int reps = repeats(), i, k, w, j, st, bad = 0, churn_k = -1;
	int real = 0, met[WAYS] = { 0 }, met_p = 0, met_f = 0, met_pf = 0;
	const char *worst_label = NULL, *worst_p_label = NULL, *why;
	const char *worst_pf_label = NULL;
	char buf[64], fails[64];
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
	if (choose_ways())
		return 1;
	progs[0].argv[0] = argc > 2 ? argv[2] : "exit0";
	csv = argc > 1 ? fopen(argv[1], "w") : NULL;

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
		for (j = 1; !why && j < nused; j++) {
			w = used[j];
			if (w == WATCH || !run(&progs[k], w, 0, &scratch))
				continue;
			snprintf(fails, sizeof(fails), "fails under %s",
				 ways[w].under);
			why = fails;
		}
		if (why) {
			printf("SKIP %s: %s\n", progs[k].label, why);
			skip[k] = 1;
		}
	}

	for (i = 0; i < reps; i++)
		for (k = 0; k < nprogs; k++)
			for (j = 0; !skip[k] && j < nused; j++) {
				w = used[(i + j) % nused];
				if (run(&progs[k], w, 0, &res[k][w][i]))
					bad = 1;
			}

	printf("\nwall time from fork to exit, ms (median of %d runs); "
	       "bare: bare-trace, a stop\nat each fixed placement with "
	       "nothing done at it; +ms: watch's time over\ndirect, judge: "
	       "over bare (medians of per-run differences); ratios to "
	       "direct,\nmedians of per-run ratios; less: how many times "
	       "less overhead watch has than\nstrace; procs, stops: the "
	       "processes the watcher followed and its fixed\nplacements "
	       "(its stops at plain ones are not in its summaries)\n", reps);
	if (has[BASE])
		printf("base: the baseline watcher, %s;\nw/base: watch's "
		       "time over its (median of per-run ratios)\n", baseline);
	putchar('\n');
	table_head(csv);
	for (k = 0; k < nprogs; k++) {
		if (skip[k])
			continue;
		if (progs[k].churn)
			churn_k = k;
		figures(res[k], reps, &x);
		table_row(csv, &progs[k], &x);
		/* exit0 and mmap-churn are not real programs. */
		if (!k || progs[k].churn)
			continue;
		real++;
		for (w = 0; w < WAYS; w++)
			met[w] += has[w] && x.ratio[w] <= 1.05;
		if (x.ratio[WATCH] > worst) {
			worst = x.ratio[WATCH];
			worst_label = progs[k].label;
		}
		met_p += has[PRELOAD] && x.ratio[PRELOAD] <= 1.02;
		if (has[PRELOAD] && x.ratio[PRELOAD] > worst_p) {
			worst_p = x.ratio[PRELOAD];
			worst_p_label = progs[k].label;
		}
		met_f += has[FLOOR] && x.ratio[FLOOR] <= 1.02;
		met_pf += has[FLOOR] && x.over_floor <= 1.02;
		if (has[FLOOR] && x.over_floor > worst_pf) {
			worst_pf = x.over_floor;
			worst_pf_label = progs[k].label;
		}
	}
	if (real) {
		printf("\nreal programs within 5%% under watch (the goal): "
		       "%d of %d; most overhead %.1f%%\n(%s): goal %s\n",
		       met[WATCH], real, (worst - 1) * 100, worst_label,
		       met[WATCH] == real ? "met" : "not met");
		printf("within 5%% under bare-trace (stops that do nothing): "
		       "%d of %d\n", met[BARE], real);
		if (has[BASE])
			printf("within 5%% under the baseline: %d of %d\n",
			       met[BASE], real);
		if (has[PRELOAD])
			printf("within 2%% under --preload (its goal): %d of "
			       "%d; most overhead %.1f%% (%s): goal %s\n",
			       met_p, real, (worst_p - 1) * 100, worst_p_label,
			       met_p == real ? "met" : "not met");
		if (has[FLOOR])
			printf("within 2%% under the floor (an empty "
			       "preloaded object): %d of %d\n--preload over "
			       "the floor (the watcher's own cost) within "
			       "2%%: %d of %d;\nmost %.1f%% (%s)\n", met_f,
			       real, met_pf, real,
			       (worst_pf - 1) * 100, worst_pf_label);
	}
	if (churn_k >= 0)
		churn_report(res[churn_k], reps, csv);
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-watch: a run failed\n");
	return bad;
}

/* SPDX-License-Identifier: MIT */
/*
 * Reservations and maps reading against the techniques other projects use,
 * with 10, 1,000 and 30,000 mappings in the process (NCB_BENCH_MAPPINGS,
 * say "10 1000", picks others: valgrind 3.19 cannot hold 30,000).  Every
 * technique runs in every repetition, back to back; medians of times and
 * of per-repetition ratios are reported.
 *
 * window: 1 MiB in a 1 GiB window whose start is crowded with the
 *   process's mappings (a JIT near its runtime, an emulator's low space),
 *   each against both peers (medians of per-run ratios)
 *     ncb-any      ncb_resv_new, NCB_PLACE_ANY
 *     ncb-lowest   ncb_resv_new, NCB_PLACE_LOWEST
 *     ncb-highest  ncb_resv_new, NCB_PLACE_HIGHEST
 *     ncb-random   ncb_resv_new, NCB_PLACE_RANDOM
 *     lowest/ioctl, lowest/text  ncb-lowest with its walk made to read
 *                  the maps one way (ncb-lowest takes the one measured
 *                  cheaper here)
 *     maps+fixed   parse /proc/self/maps, MAP_FIXED into the first gap
 *                  (LLVM sanitizers, FEX; racy)
 *     hint-loop    hints at 1 MiB steps until one is honoured (LuaJIT,
 *                  Go arena hints)
 * aligned: 2 MiB aligned to 2 MiB, anywhere (allocators, collectors)
 *     ncb          ncb_resv_new with .align
 *     trim         over-allocate and trim by hand (V8, PartitionAlloc)
 *     try-then-trim  plain mmap, over-allocate only if misaligned (jemalloc)
 * read: every mapping of the process once
 *     query        ncb_maps_next over PROCMAP_QUERY
 *     text         ncb_maps_next over the parsed text
 *     walk         the reader placement walks use (ioctl, then text)
 *     stdio        fopen, fgets, sscanf
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bench.h"
#include "internal.h"

#define MB (1UL << 20)
#define REPS 21

static uintptr_t win_lo, win_hi;
static const int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

static int in_window(uintptr_t a)
{
	return a >= win_lo && a + MB <= win_hi;
}

static int reserve_place(int place)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .lo = win_lo,
				      .hi = win_hi, .place = place };
	struct ncb_resv *r;
	int bad;

	if (ncb_resv_new(&r, NULL, MB, &o))
		return 1;
	bad = !in_window((uintptr_t)ncb_resv_addr(r));
	ncb_resv_release(r);
	return bad;
}

static int op_ncb_lowest(void *arg)
{
	(void)arg;
	return reserve_place(NCB_PLACE_LOWEST);
}

static int op_ncb_any(void *arg)
{
	(void)arg;
	return reserve_place(NCB_PLACE_ANY);
}

static int op_ncb_random(void *arg)
{
	(void)arg;
	return reserve_place(NCB_PLACE_RANDOM);
}

static int op_ncb_highest(void *arg)
{
	(void)arg;
	return reserve_place(NCB_PLACE_HIGHEST);
}

/* The walk's reader imposed (1 ioctl, 2 text), then the measured one. */
static int lowest_by(int reader)
{
	int was = ncb__walk_reader(0), bad;

	ncb__walk_reader(reader);
	bad = reserve_place(NCB_PLACE_LOWEST);
	ncb__walk_reader(was);
	return bad;
}

static int op_lowest_query(void *arg)
{
	(void)arg;
	return ncb__probe()->procmap_query ? lowest_by(1) : 0;
}

static int op_lowest_text(void *arg)
{
	(void)arg;
	return lowest_by(2);
}

static int op_maps_fixed(void *arg)
{
	unsigned long s, e, prev = win_lo;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");
	void *p;

	(void)arg;
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && e > prev) {
			if (s >= prev + MB)
				break;
			prev = e;
		}
	fclose(f);
	p = mmap((void *)prev, MB, PROT_NONE, anon | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	munmap(p, MB);
	return !in_window((uintptr_t)p);
}

static int op_hint_loop(void *arg)
{
	uintptr_t a;
	void *p;

	(void)arg;
	for (a = win_lo; a + MB <= win_hi; a += MB) {
		p = mmap((void *)a, MB, PROT_NONE, anon, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		munmap(p, MB);
		if ((uintptr_t)p == a)
			return 0;
	}
	return 1;
}

static int op_ncb_aligned(void *arg)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .align = 2 * MB };
	struct ncb_resv *r;
	int bad;

	(void)arg;
	if (ncb_resv_new(&r, NULL, 2 * MB, &o))
		return 1;
	bad = (uintptr_t)ncb_resv_addr(r) & (2 * MB - 1);
	ncb_resv_release(r);
	return bad;
}

static void *trim(size_t len, size_t align)
{
	char *p = mmap(NULL, len + align, PROT_NONE, anon, -1, 0), *a;

	if (p == MAP_FAILED)
		return p;
	a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + len, (size_t)(p + len + align - (a + len)));
	return a;
}

static int op_trim(void *arg)
{
	void *p = trim(2 * MB, 2 * MB);

	(void)arg;
	if (p == MAP_FAILED)
		return 1;
	munmap(p, 2 * MB);
	return 0;
}

static int op_try_then_trim(void *arg)
{
	void *p = mmap(NULL, 2 * MB, PROT_NONE, anon, -1, 0);

	(void)arg;
	if (p != MAP_FAILED && (uintptr_t)p & (2 * MB - 1)) {
		munmap(p, 2 * MB);
		p = trim(2 * MB, 2 * MB);
	}
	if (p == MAP_FAILED)
		return 1;
	munmap(p, 2 * MB);
	return 0;
}

enum { QUERY, TEXT, WALK };

static int read_all(int how)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	int r, n = 0;

	r = how == TEXT	 ? ncb__maps_open_text(&maps, 0)
	    : how == WALK ? ncb__maps_walk(&maps, 0)
			  : ncb_maps_open(&maps, 0);
	if (r)
		return 1;
	while ((r = ncb_maps_next(maps, &m)) == 1)
		n++;
	ncb_maps_close(maps);
	return r || !n;
}

static int op_query(void *arg)
{
	(void)arg;
	return read_all(QUERY);
}

static int op_text(void *arg)
{
	(void)arg;
	return read_all(TEXT);
}

static int op_walk(void *arg)
{
	(void)arg;
	return read_all(WALK);
}

static int op_stdio(void *arg)
{
	unsigned long s, e;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");
	int n = 0;

	(void)arg;
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		n += sscanf(line, "%lx-%lx", &s, &e) == 2;
	fclose(f);
	return !n;
}

struct tech {
	const char *group;
	const char *name;
	int (*op)(void *);
};

/* The window group's peers, by index below. */
#define MAPS_FIXED 6
#define HINT_LOOP 7

static const struct tech techs[] = {
	{ "window", "ncb-any", op_ncb_any },
	{ "window", "ncb-lowest", op_ncb_lowest },
	{ "window", "ncb-highest", op_ncb_highest },
	{ "window", "ncb-random", op_ncb_random },
	{ "window", "lowest/ioctl", op_lowest_query },
	{ "window", "lowest/text", op_lowest_text },
	{ "window", "maps+fixed", op_maps_fixed },
	{ "window", "hint-loop", op_hint_loop },
	{ "aligned", "ncb", op_ncb_aligned },
	{ "aligned", "trim", op_trim },
	{ "aligned", "try-then-trim", op_try_then_trim },
	{ "read", "query", op_query },
	{ "read", "text", op_text },
	{ "read", "walk", op_walk },
	{ "read", "stdio", op_stdio },
};
#define NTECH (int)(sizeof(techs) / sizeof(techs[0]))

/* n mappings that cannot merge, at the start of a 1 GiB window. */
static int populate(int n)
{
	size_t pg = 4096;
	char *p;
	int i;

	if (n < 2)
		n = 2;
	p = mmap(NULL, 1UL << 30, PROT_NONE, anon, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	munmap(p + (size_t)n * pg, (1UL << 30) - (size_t)n * pg);
	for (i = 1; i < n; i += 2)
		mprotect(p + (size_t)i * pg, pg, PROT_READ);
	win_lo = (uintptr_t)p;
	win_hi = win_lo + (1UL << 30);
	return 0;
}

/* Median over the runs of technique k's time over technique ref's. */
static double ratio_to(double ns[][REPS], int k, int ref)
{
	double rt[REPS];
	int r;

	for (r = 0; r < REPS; r++)
		rt[r] = ns[k][r] / ns[ref][r];
	return median(rt, REPS);
}

/* The process sizes to measure at, increasing: *n of them. */
static void pick_sizes(int *sizes, int *n)
{
	const char *env = getenv("NCB_BENCH_MAPPINGS");
	char *end;
	long v;

	*n = 0;
	while (env && *n < 8 && (v = strtol(env, &end, 10)) > 0) {
		sizes[(*n)++] = (int)v;
		env = end;
	}
	if (!*n) {
		sizes[0] = 10;
		sizes[1] = 1000;
		sizes[2] = 30000;
		*n = 3;
	}
}

int main(int argc, char **argv)
{
	static double ns[NTECH][REPS];
	double med[NTECH], ratio, vs_hint, vs_maps;
	FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	int s, r, k, first, have, bad[NTECH] = { 0 }, failed = 0;
	int sizes[8], nsizes;

	if (csv)
		fprintf(csv, "mappings,group,technique,ns_per_op,ratio,"
			"vs_hint_loop,vs_maps_fixed\n");
	printf("reserve + release, and reading the maps: ns per call (median "
	       "of %d runs);\nratios are medians of per-run ratios: window "
	       "rows to both peers,\nthe others to their group's first "
	       "row\n", REPS);
	pick_sizes(sizes, &nsizes);
	for (s = 0; s < nsizes; s++) {
		have = ncb_maps_occupants(0, (void *)4096, SIZE_MAX / 2,
					  NULL, NULL);
		if (populate(sizes[s] - have))
			return 1;
		have = ncb_maps_occupants(0, (void *)4096, SIZE_MAX / 2,
					  NULL, NULL);
		for (r = 0; r < REPS; r++)
			for (k = 0; k < NTECH; k++)
				ns[k][r] = time_op(techs[k].op, NULL, 2e6,
						   &bad[k]);
		printf("\n%d mappings%*s ns/op  vs hint-loop  vs maps+fixed\n",
		       have, 20, "");
		for (k = 0, first = 0; k < NTECH; k++) {
			if (strcmp(techs[k].group, techs[first].group))
				first = k;
			ratio = ratio_to(ns, k, first);
			vs_hint = ratio_to(ns, k, HINT_LOOP);
			vs_maps = ratio_to(ns, k, MAPS_FIXED);
			med[k] = median(ns[k], REPS);
			if (techs[k].op == op_lowest_query &&
			    !ncb__probe()->procmap_query) {
				printf("  %-8s %-14s %12s\n", techs[k].group,
				       techs[k].name, "(no ioctl)");
				continue;
			}
			if (!strcmp(techs[k].group, "window"))
				printf("  %-8s %-14s %12.0f %11.2fx %13.2fx\n",
				       techs[k].group, techs[k].name, med[k],
				       vs_hint, vs_maps);
			else
				printf("  %-8s %-14s %12.0f %11.2fx\n",
				       techs[k].group, techs[k].name, med[k],
				       ratio);
			if (csv)
				fprintf(csv, "%d,%s,%s,%.1f,%.3f,%.4f,%.4f\n",
					have, techs[k].group, techs[k].name,
					med[k], ratio, vs_hint, vs_maps);
		}
		/* A tool that gives up later keeps what was measured. */
		fflush(stdout);
		if (csv)
			fflush(csv);
	}
	if (csv)
		fclose(csv);
	printf("\nwalks here read %s (measured at the first walk)\n",
	       ncb__walk_reader(0) == 1 ? "the ioctl" : "the text");
	for (k = 0; k < NTECH; k++) {
		if (bad[k])
			fprintf(stderr, "b-resv: %s %s misbehaved\n",
				techs[k].group, techs[k].name);
		failed |= bad[k];
	}
	return failed;
}

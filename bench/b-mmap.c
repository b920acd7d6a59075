/* SPDX-License-Identifier: MIT */
/*
 * ncb_mmap against the raw flag and against the techniques other projects
 * use to map at a fixed address, with 10, 1,000 and 30,000 mappings already
 * in the process, on the success path and the EEXIST path.  Every technique
 * is timed in every repetition, side by side; medians are reported.
 *
 *   raw          mmap(MAP_FIXED_NOREPLACE) (the kernel's own cost)
 *   ncb          ncb_mmap (the path the probe chose here)
 *   ncb-old      ncb_mmap's path for kernels that ignore the flag
 *   ncb-4.17     ncb_mmap's path for the 4.17 partial-overlap bug
 *   maps+fixed   parse /proc/self/maps, then MAP_FIXED (LLVM sanitizers;
 *                racy: another thread can map in between)
 *   mincore      probe each page with mincore, then MAP_FIXED (old Go
 *                runtime; racy)
 *   hint         hint and compare, unmap on mismatch (Go, jemalloc; stricter
 *                than the flag: refuses free ranges near a stack)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bench.h"
#include "internal.h"

#define LEN (4 * 4096UL)

struct target {
	char *addr;
	int occupied;
};

static int done(void *p, const struct target *t)
{
	if (p == MAP_FAILED)
		return !t->occupied;
	if (p != t->addr) {
		munmap(p, LEN);
		return 1;
	}
	munmap(p, LEN);
	return t->occupied;
}

static int op_raw(void *arg)
{
	struct target *t = arg;

	return done(mmap(t->addr, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0), t);
}

static int op_ncb(void *arg)
{
	struct target *t = arg;

	return done(ncb_mmap(t->addr, LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), t);
}

static int op_mode(struct target *t, int mode)
{
	return done(ncb__mmap_mode(t->addr, LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, mode),
		    t);
}

static int op_old(void *arg)
{
	return op_mode(arg, NCB_NOREPLACE_IGNORED);
}

static int op_417(void *arg)
{
	return op_mode(arg, NCB_NOREPLACE_PARTIAL);
}

static void *fixed(char *addr)
{
	return mmap(addr, LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static int op_maps(void *arg)
{
	struct target *t = arg;
	unsigned long s, e, a = (unsigned long)t->addr;
	char line[4096];
	int busy = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 1;
	while (!busy && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2)
			busy = s < a + LEN && e > a;
	fclose(f);
	return done(busy ? MAP_FAILED : fixed(t->addr), t);
}

static int op_mincore(void *arg)
{
	struct target *t = arg;
	unsigned char vec;
	unsigned long off;

	for (off = 0; off < LEN; off += 4096)
		if (mincore(t->addr + off, 4096, &vec) == 0 || errno != ENOMEM)
			return done(MAP_FAILED, t);
	return done(fixed(t->addr), t);
}

static int op_hint(void *arg)
{
	struct target *t = arg;
	void *p = mmap(t->addr, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED && p != t->addr) {
		munmap(p, LEN);
		p = MAP_FAILED;
	}
	return done(p, t);
}

static int bad[16];

static const struct {
	const char *name;
	int (*op)(void *);
} techs[] = {
	{ "raw", op_raw }, { "ncb", op_ncb }, { "ncb-old", op_old },
	{ "ncb-4.17", op_417 }, { "maps+fixed", op_maps },
	{ "mincore", op_mincore }, { "hint", op_hint },
};
#define NTECH (int)(sizeof(techs) / sizeof(techs[0]))
#define REPS 51

/*
 * n mappings that cannot merge: a PROT_NONE area with every other page
 * made readable.
 */
static char *populate(int n)
{
	size_t pg = 4096, len = (size_t)n * pg;
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);
	int i;

	if (p == MAP_FAILED)
		return NULL;
	for (i = 1; i < n; i += 2)
		mprotect(p + (size_t)i * pg, pg, PROT_READ);
	return p;
}

static int count_maps(void)
{
	int n = ncb_maps_occupants(0, (void *)4096, (size_t)-1 / 2, NULL, NULL);

	return n;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 10, 1000, 30000 };
	double ns[NTECH][REPS], rt[REPS], res[2][NTECH], ratio[2][NTECH];
	struct target t;
	FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	char *extra = NULL, *free_at;
	int s, path, r, k, have, failed = 0;

	if (csv)
		fprintf(csv,
			"mappings,path,technique,ns_per_op,ratio_to_raw\n");
	printf("map + munmap of 16 KiB, ns per call (median of %d runs); "
	       "ratio to raw\n(median of per-run ratios); kernel flag here: "
	       "%s\n", REPS,
	       ncb_noreplace_name(ncb__probe()->noreplace));
	free_at = mmap(NULL, 1UL << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS
		       | MAP_NORESERVE, -1, 0);
	munmap(free_at, 1UL << 30);
	free_at += 1UL << 29;
	/* Warm up every path once before measuring. */
	t.occupied = 0;
	t.addr = free_at;
	for (k = 0; k < NTECH; k++)
		time_op(techs[k].op, &t, 1e6, &bad[k]);
	for (s = 0; s < 3; s++) {
		have = sizes[s] - count_maps();
		/* At least two, so that there is an occupied target. */
		extra = populate(have > 2 ? have : 2);
		if (!extra)
			return 1;
		have = count_maps();
		for (path = 0; path < 2; path++) {
			t.occupied = path;
			t.addr = path ? extra + 4096 : free_at;
			for (r = 0; r < REPS; r++)
				for (k = 0; k < NTECH; k++)
					ns[k][r] = time_op(techs[k].op, &t,
							   1e6, &bad[k]);
			/*
			 * Ratios are medians of ratios within one repetition,
			 * where the techniques ran back to back: the machine's
			 * drift cancels.
			 */
			for (k = 0; k < NTECH; k++) {
				for (r = 0; r < REPS; r++)
					rt[r] = ns[k][r] / ns[0][r];
				ratio[path][k] = median(rt, REPS);
			}
			for (k = 0; k < NTECH; k++)
				res[path][k] = median(ns[k], REPS);
		}
		printf("\n%d mappings          success      ratio    EEXIST"
		       "       ratio\n", have);
		for (k = 0; k < NTECH; k++) {
			printf("  %-14s %10.0f %9.2fx %9.0f %10.2fx\n",
			       techs[k].name, res[0][k], ratio[0][k],
			       res[1][k], ratio[1][k]);
			for (path = 0; csv && path < 2; path++)
				fprintf(csv, "%d,%s,%s,%.1f,%.3f\n", have,
					path ? "eexist" : "success",
					techs[k].name, res[path][k],
					ratio[path][k]);
		}
	}
	if (csv)
		fclose(csv);
	for (k = 0; k < NTECH; k++) {
		if (bad[k])
			fprintf(stderr, "b-mmap: %s did not map as expected\n",
				techs[k].name);
		failed |= bad[k];
	}
	return failed;
}

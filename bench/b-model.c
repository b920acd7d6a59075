/* SPDX-License-Identifier: MIT */
/*
 * The address-space model's cost against the number of areas: map+unmap,
 * protect (there and back) and a gap search, at 1,000, 65,000 and
 * 1,000,000 areas; side by side with the kernel doing the same system calls
 * (up to vm.max_map_count) and with a sorted array of areas as baseline.
 * Then the cost of making 10,000 to 40,000 shared anonymous mappings, each
 * a file of its own, against as many private ones.  Medians of repeated
 * runs; ns per operation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "bench.h"
#include "internal.h"

#define PG 4096ULL
#define BASE (1ULL << 32)
#define REPS 9
#define OPS 2000

/* Baseline: areas in a sorted array, binary search, memmove. */
struct arr {
	uint64_t (*a)[2];
	size_t n;
};

static size_t arr_find(const struct arr *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->a[mid][1] > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void arr_insert(struct arr *s, uint64_t start, uint64_t end)
{
	size_t i = arr_find(s, start);

	memmove(s->a + i + 1, s->a + i, (s->n - i) * sizeof(s->a[0]));
	s->a[i][0] = start;
	s->a[i][1] = end;
	s->n++;
}

static void arr_erase(struct arr *s, uint64_t start)
{
	size_t i = arr_find(s, start);

	memmove(s->a + i, s->a + i + 1, (s->n - i - 1) * sizeof(s->a[0]));
	s->n--;
}

static uint64_t arr_gap(const struct arr *s, uint64_t len)
{
	size_t i;

	for (i = 1; i < s->n; i++)
		if (s->a[i][0] - s->a[i - 1][1] >= len)
			return s->a[i - 1][1];
	return s->n ? s->a[s->n - 1][1] : BASE;
}

static uint64_t seed = 88172645463325252ULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

struct ctx {
	struct ncb_as *as;
	struct arr arr;
	char *kernel;
	long n;
	int bad;
};

/* A free page between two areas: map it (it cannot merge), unmap it. */
static int model_map(void *p)
{
	struct ctx *c = p;
	uint64_t a = BASE + (2 * (rnd() % (uint64_t)c->n) + 1) * PG, got;

	if (ncb_as_mmap(c->as, a, PG, PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
			MAP_FIXED_NOREPLACE, 0, 0, &got))
		return 1;
	return ncb_as_munmap(c->as, a, PG) != 0;
}

static int model_protect(void *p)
{
	struct ctx *c = p;
	uint64_t a = BASE + 2 * (rnd() % (uint64_t)c->n) * PG;

	return ncb_as_mprotect(c->as, a, PG, PROT_NONE) ||
	       ncb_as_mprotect(c->as, a, PG, PROT_READ);
}

/* The first gap of two pages: past every area, found by the augmentation. */
static int model_gap(void *p)
{
	struct ctx *c = p;
	uint64_t a;

	return ncb_as_find_free(c->as, BASE, 0, 2 * PG, 0, NCB_PLACE_LOWEST,
				&a) ||
	       a != BASE + (2 * (uint64_t)c->n - 1) * PG;
}

static int arr_map(void *p)
{
	struct ctx *c = p;
	uint64_t a = BASE + (2 * (rnd() % (uint64_t)c->n) + 1) * PG;

	arr_insert(&c->arr, a, a + PG);
	arr_erase(&c->arr, a);
	return 0;
}

static int arr_protect(void *p)
{
	struct ctx *c = p;
	uint64_t a = BASE + 2 * (rnd() % (uint64_t)c->n) * PG;

	/* An area's protection is a field: finding it is the cost. */
	return arr_find(&c->arr, a) >= c->arr.n;
}

static int arr_gapop(void *p)
{
	struct ctx *c = p;

	/* Past the last area: the whole array is scanned. */
	return arr_gap(&c->arr, 2 * PG) != BASE + (2 * (uint64_t)c->n - 1) * PG;
}

static int kern_map(void *p)
{
	struct ctx *c = p;
	char *a = c->kernel + (2 * (rnd() % (uint64_t)c->n) + 1) * PG;

	if (mmap(a, PG, PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE, -1, 0) != a)
		return 1;
	return munmap(a, PG) != 0;
}

static int kern_protect(void *p)
{
	struct ctx *c = p;
	char *a = c->kernel + 2 * (rnd() % (uint64_t)c->n) * PG;

	return mprotect(a, PG, PROT_NONE) || mprotect(a, PG, PROT_READ);
}

static double measure(int (*op)(void *), struct ctx *c)
{
	double v[REPS];
	int r;

	for (r = 0; r < REPS; r++)
		v[r] = time_op(op, c, 2e6, &c->bad);
	return median(v, REPS);
}

static int setup(struct ctx *c, long n, long kernel_max)
{
	struct ncb_as_opts o = { .size = sizeof(o),
				 .max_map_count = 4000000 };
	long i;
	uint64_t got;

	if (ncb_as_new(&c->as, &o))
		return -1;
	c->n = n;
	c->arr.a = malloc((size_t)(n + 8) * sizeof(c->arr.a[0]));
	c->arr.n = 0;
	for (i = 0; i < n; i++) {
		uint64_t a = BASE + 2 * (uint64_t)i * PG;

		if (ncb_as_mmap(c->as, a, PG, PROT_READ, MAP_PRIVATE |
				MAP_ANONYMOUS | MAP_FIXED, 0, 0, &got))
			return -1;
		c->arr.a[i][0] = a;
		c->arr.a[i][1] = a + PG;
		c->arr.n++;
	}
	c->kernel = NULL;
	if (n > kernel_max)
		return 0;
	/* Alternate protections so that nothing merges. */
	c->kernel = mmap(NULL, 2 * (size_t)n * PG, PROT_NONE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->kernel == MAP_FAILED)
		return -1;
	for (i = 0; i < n; i++)
		munmap(c->kernel + (2 * i + 1) * PG, PG);
	for (i = 0; i < n; i++)
		mprotect(c->kernel + 2 * i * PG, PG, PROT_READ);
	return 0;
}

static void teardown(struct ctx *c)
{
	ncb_as_free(c->as);
	free(c->arr.a);
	if (c->kernel)
		munmap(c->kernel, 2 * (size_t)c->n * PG);
}

#define FILE_REPS 15

/*
 * ns to make n one-page anonymous mappings of the given type at every
 * other page, so that none merge; *bytes is what the model then holds
 * per mapping.  Each shared one is a file of its own, which the model
 * must register without going through the others.
 */
static double make_many(long n, int type, double *bytes)
{
	struct ncb_as_opts o = { .size = sizeof(o),
				 .max_map_count = 4000000 };
	struct ncb_as *as;
	uint64_t got;
	double t;
	long i;

	if (ncb_as_new(&as, &o))
		return -1;
	t = now_ns();
	for (i = 0; i < n; i++) {
		if (ncb_as_mmap(as, BASE + 2 * (uint64_t)i * PG, PG,
				PROT_READ | PROT_WRITE, type | MAP_ANONYMOUS |
				MAP_FIXED, 0, 0, &got)) {
			ncb_as_free(as);
			return -1;
		}
	}
	t = now_ns() - t;
	*bytes = (double)ncb__as_bytes(as) / (double)n;
	ncb_as_free(as);
	return t;
}

/* Shared against private, each repetition making both, side by side. */
static int bench_shared(FILE *csv)
{
	static const long sizes[] = { 10000, 20000, 40000 };
	double sh[FILE_REPS], pr[FILE_REPS], ratio[FILE_REPS], per[3];
	double sh_bytes, pr_bytes, s_ms, p_ms;
	int s, r;

	printf("\nmaking n one-page anonymous mappings: ms (median of %d "
	       "runs); ratio\nshared / private (median of per-run "
	       "ratios)\n\n%9s %10s %10s %8s %12s %12s\n", FILE_REPS,
	       "mappings", "shared", "private", "ratio", "ns/shared",
	       "bytes/shared");
	for (s = 0; s < 3; s++) {
		for (r = 0; r < FILE_REPS; r++) {
			sh[r] = make_many(sizes[s], MAP_SHARED, &sh_bytes);
			pr[r] = make_many(sizes[s], MAP_PRIVATE, &pr_bytes);
			if (sh[r] < 0 || pr[r] < 0)
				return 1;
			ratio[r] = sh[r] / pr[r];
		}
		s_ms = median(sh, FILE_REPS) / 1e6;
		p_ms = median(pr, FILE_REPS) / 1e6;
		per[s] = s_ms * 1e6 / (double)sizes[s];
		printf("%9ld %10.3f %10.3f %7.2fx %12.0f %12.1f\n", sizes[s],
		       s_ms, p_ms, median(ratio, FILE_REPS), per[s],
		       sh_bytes);
		if (csv)
			fprintf(csv, "%ld,mmap-shared,%.1f,,\n%ld,mmap-private,"
				"%.1f,,\n", sizes[s], per[s], sizes[s],
				p_ms * 1e6 / (double)sizes[s]);
	}
	printf("\nns per shared mapping at 20,000 / 40,000 against 10,000: "
	       "%.2fx / %.2fx (linear: 1x; a look-up through every file: "
	       "2x / 4x)\nbytes per private mapping: %.1f\n",
	       per[1] / per[0], per[2] / per[0], pr_bytes);
	return 0;
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 1000, 65000, 1000000 };
	FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	long kernel_max = 65000;
	struct ctx c;
	double m[3][3], k[2], a[3], bytes[3], a_look[3], k_all[3][2];
	int s, bad = 0;

	printf("model: ns per operation (median of %d runs); kernel up to "
	       "%ld areas\n\n%9s %-10s %10s %10s %10s\n", REPS, kernel_max,
	       "areas", "op", "model", "kernel", "array");
	if (csv)
		fprintf(csv, "areas,op,model_ns,kernel_ns,array_ns\n");
	for (s = 0; s < 3; s++) {
		memset(&c, 0, sizeof(c));
		if (setup(&c, sizes[s], kernel_max)) {
			fprintf(stderr, "b-model: setup of %ld areas failed\n",
				sizes[s]);
			return 1;
		}
		bytes[s] = (double)ncb__as_bytes(c.as) / (double)sizes[s];
		m[s][0] = measure(model_map, &c);
		m[s][1] = measure(model_protect, &c);
		m[s][2] = measure(model_gap, &c);
		k[0] = c.kernel ? measure(kern_map, &c) : 0;
		k[1] = c.kernel ? measure(kern_protect, &c) : 0;
		a[0] = measure(arr_map, &c);
		a[1] = measure(arr_protect, &c);
		a[2] = measure(arr_gapop, &c);
		a_look[s] = a[1];
		k_all[s][0] = k[0];
		k_all[s][1] = k[1];
		printf("%9ld %-10s %10.0f %10.0f %10.0f\n%9s %-10s %10.0f "
		       "%10.0f %10.0f\n%9s %-10s %10.0f %10s %10.0f\n",
		       sizes[s], "map+unmap", m[s][0], k[0], a[0], "",
		       "protect x2", m[s][1], k[1], a[1], "", "gap search",
		       m[s][2], "-", a[2]);
		if (csv)
			fprintf(csv, "%ld,map,%.1f,%.1f,%.1f\n%ld,protect,%.1f,"
				"%.1f,%.1f\n%ld,gap,%.1f,,%.1f\n", sizes[s],
				m[s][0], k[0], a[0], sizes[s], m[s][1], k[1],
				a[1], sizes[s], m[s][2], a[2]);
		bad |= c.bad;
		teardown(&c);
	}
	printf("\nmodel at 1,000,000 areas / at 1,000: map %.2fx, protect "
	       "%.2fx, gap %.2fx (target <= 2.5x)\n", m[2][0] / m[0][0],
	       m[2][1] / m[0][1], m[2][2] / m[0][2]);
	/* A plain binary search pays the same cache misses at scale. */
	printf("sorted array's look-up at 1,000,000 / at 1,000: %.2fx\n",
	       a_look[2] / a_look[0]);
	printf("model faster than the kernel at 1,000 / 65,000 areas: map "
	       "%.1fx / %.1fx, protect %.1fx / %.1fx (target >= 10x)\n",
	       k_all[0][0] / m[0][0], k_all[1][0] / m[1][0],
	       k_all[0][1] / m[0][1], k_all[1][1] / m[1][1]);
	printf("bytes per area: %.1f at 1,000, %.1f at 65,000, %.1f at "
	       "1,000,000 (target <= 64)\n", bytes[0], bytes[1], bytes[2]);
	bad |= bench_shared(csv);
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-model: an operation failed\n");
	return bad;
}

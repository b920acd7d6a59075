/* SPDX-License-Identifier: MIT */
/* Shared helpers for the benchmarks: clocks, medians, calibrated loops. */
#ifndef NCB_BENCH_H
#define NCB_BENCH_H

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * ns per call of op(arg), over enough calls to fill about budget_ns; op
 * returns non-zero when the measured operation did not behave as expected.
 */
static inline double time_op(int (*op)(void *), void *arg, double budget_ns,
			     int *bad)
{
	double start = now_ns(), t;
	long n = 0;

	do {
		*bad |= op(arg);
		n++;
		t = now_ns() - start;
	} while (t < budget_ns || n < 3);
	return t / (double)n;
}

/* The directory this benchmark's program is in (its helpers are): 0, or -1. */
static inline int bench_dir(char dir[PATH_MAX])
{
	ssize_t n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * An mmap-heavy program for b-watch: PAIRS anonymous mmap+munmap pairs at
 * addresses of the kernel's choosing (noclobber watch stops at each mmap
 * to record its maker, and lets the munmap run) and, spread evenly among
 * them, FIXED MAP_FIXED placements inside a reservation of its own (which
 * it stops at and judges: benign).  The
 * fixed placements alternate between committing a slot read-write and
 * giving it back as PROT_NONE, as a collector or a JIT does with its heap.
 *
 * Prints the nanoseconds spent inside each kind of call, timed around
 * each call (a tracer's stop is inside the call as the program sees it),
 * then the whole loop's: "pairs_ns fixed_ns loop_ns".
 *
 * A third argument, OVER, adds as many fixed placements over read-write
 * memory of its own, after the loop: each replaces something, which
 * watch --system sends to the tool to judge (benign: one mapping the
 * program made); for b-system's events per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define LEN (16UL << 10)
#define SLOTS 256

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 10000;
	long fixed = argc > 2 ? atol(argv[2]) : 1000;
	long over = argc > 3 ? atol(argv[3]) : 0;
	double t_pairs = 0, t_fixed = 0, t0, t1, start;
	long i, done = 0;
	char *resv;
	void *p;

	if (pairs < 0 || fixed < 0 || over < 0)
		return 2;
	resv = mmap(NULL, SLOTS * LEN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (resv == MAP_FAILED)
		return 1;
	start = now_ns();
	for (i = 0; i < pairs || done < fixed; i++) {
		if (i < pairs) {
			t0 = now_ns();
			p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED || munmap(p, LEN))
				return 1;
			t_pairs += now_ns() - t0;
		}
		/* The fixed ones spread evenly, the last at the end. */
		if (done < fixed && (pairs == 0 ||
				     (i + 1) * fixed >= (done + 1) * pairs)) {
			char *at = resv + (size_t)(done / 2 % SLOTS) * LEN;
			int commit = !(done & 1);

			t0 = now_ns();
			p = mmap(at, LEN, commit ? PROT_READ | PROT_WRITE :
				 PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED | (commit ? 0 : MAP_NORESERVE),
				 -1, 0);
			t1 = now_ns();
			if (p != at)
				return 1;
			t_fixed += t1 - t0;
			done++;
		}
	}
	t0 = now_ns() - start;
	if (over && mmap(resv, SLOTS * LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != resv)
		return 1;
	for (i = 0; i < over; i++) {
		char *at = resv + (size_t)(i % SLOTS) * LEN;

		if (mmap(at, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE |
			 MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at)
			return 1;
	}
	printf("%.0f %.0f %.0f\n", t_pairs, t_fixed, t0);
	return 0;
}

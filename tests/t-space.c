/* SPDX-License-Identifier: MIT */
/* Free-space queries: is a range free, where does a range fit. */
#include <fcntl.h>
#include "ncbtest.h"

#define PG test_page()

/* Window of 64 pages with pages [10, 12) and [30, 31) taken. */
static char *layout(void)
{
	char *w = free_window(64 * PG);

	map_sentinel(w + 10 * PG, 2 * PG, 1);
	map_sentinel(w + 30 * PG, PG, 1);
	return w;
}

static uint64_t find(char *lo, char *hi, size_t len, size_t align, int place)
{
	uint64_t a = 0;
	int r = ncb_find_free((uintptr_t)lo, (uintptr_t)hi, len, align, place,
			      &a);

	if (r)
		FAIL("ncb_find_free: %s", errname(-r));
	return a;
}

TEST(range_free)
{
	char *w = layout();

	ASSERT_EQ(ncb_range_free(w, 10 * PG), 1);
	ASSERT_EQ(ncb_range_free(w, 10 * PG + 1), 0);
	ASSERT_EQ(ncb_range_free(w + 11 * PG, 1), 0);
	ASSERT_EQ(ncb_range_free(w + 12 * PG, 18 * PG), 1);
	ASSERT_EQ(ncb_range_free(w, 0), -EINVAL);
}

TEST(lowest_and_highest)
{
	char *w = layout(), *end = w + 64 * PG;

	ASSERT_EQ(find(w, end, 4 * PG, 0, NCB_PLACE_LOWEST), (uintptr_t)w);
	ASSERT_EQ(find(w, end, 4 * PG, 0, NCB_PLACE_ANY), (uintptr_t)w);
	ASSERT_EQ(find(w + 9 * PG, end, 4 * PG, 0, NCB_PLACE_LOWEST),
		  (uintptr_t)w + 12 * PG);
	ASSERT_EQ(find(w, end, 11 * PG, 0, NCB_PLACE_LOWEST),
		  (uintptr_t)w + 12 * PG);
	ASSERT_EQ(find(w, end, 4 * PG, 0, NCB_PLACE_HIGHEST),
		  (uintptr_t)w + 60 * PG);
	ASSERT_EQ(find(w, w + 30 * PG, 4 * PG, 0, NCB_PLACE_HIGHEST),
		  (uintptr_t)w + 26 * PG);
	/* A gap that fits exactly. */
	ASSERT_EQ(find(w + 12 * PG, w + 30 * PG, 18 * PG, 0,
		       NCB_PLACE_HIGHEST), (uintptr_t)w + 12 * PG);
	/* The window is free space too if it starts inside a mapping. */
	ASSERT_EQ(find(w + 11 * PG, end, PG, 0, NCB_PLACE_LOWEST),
		  (uintptr_t)w + 12 * PG);
}

TEST(alignment)
{
	size_t align = 16 * PG;
	char *w = layout(), *end = w + 64 * PG;
	uint64_t a, want;

	a = find(w, end, 4 * PG, align, NCB_PLACE_LOWEST);
	ASSERT_EQ(a % align, 0);
	want = ((uintptr_t)w + align - 1) / align * align;
	while (!ncb_range_free((void *)(uintptr_t)want, 4 * PG))
		want += align;
	ASSERT_EQ(a, want);
	a = find(w, end, 4 * PG, align, NCB_PLACE_HIGHEST);
	ASSERT_EQ(a % align, 0);
	ASSERT_ULE(a + 4 * PG, (uintptr_t)end);
	ASSERT_UGT(a + align + 4 * PG, (uintptr_t)end);
}

TEST(random_spreads)
{
	char *w = layout(), *end = w + 64 * PG;
	uint64_t a, seen_lo = UINT64_MAX, seen_hi = 0;
	int i;

	for (i = 0; i < 200; i++) {
		a = find(w, end, 2 * PG, 0, NCB_PLACE_RANDOM);
		ASSERT_UGE(a, (uintptr_t)w);
		ASSERT_ULE(a + 2 * PG, (uintptr_t)end);
		ASSERT_EQ(ncb_range_free((void *)(uintptr_t)a, 2 * PG), 1);
		seen_lo = a < seen_lo ? a : seen_lo;
		seen_hi = a > seen_hi ? a : seen_hi;
	}
	/* 59 positions: 200 draws cover both ends of the window. */
	ASSERT_ULT(seen_lo, (uintptr_t)w + 10 * PG);
	ASSERT_UGT(seen_hi, (uintptr_t)w + 40 * PG);
}

/*
 * Like the kernel, placement keeps clear of the stack's growth gap.  Where
 * the stack has a guard mapping of its own below it (qemu-user's), there is
 * nothing to grow into and only the mappings themselves are avoided.
 */
TEST(keeps_below_stack_clear)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	uint64_t stack = 0, run = 0, prev_end = 0, a, floor;

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	while (ncb_maps_next(maps, &m) == 1) {
		if (m.start != prev_end)
			run = m.start;
		prev_end = m.end;
		if (!strcmp(m.path, "[stack]")) {
			stack = m.start;
			break;
		}
	}
	ncb_maps_close(maps);
	if (!stack)
		SKIP("no [stack] mapping here");
	floor = run == stack ? stack - 256 * 4096 : run;
	ASSERT_EQ(ncb_find_free(stack - (64UL << 20), stack, PG, 0,
				NCB_PLACE_HIGHEST, &a), 0);
	ASSERT_ULE(a + PG, floor);
}

TEST(errors)
{
	char *w = layout(), *end = w + 64 * PG;
	uint64_t a;

	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, PG, 0, 0, NULL),
		  -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, 0, 0, 0, &a),
		  -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, PG, 3 * PG, 0,
				&a), -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, PG, PG / 2, 0,
				&a), -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, PG, 0, 4, &a),
		  -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, PG, 0, -1, &a),
		  -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)end, (uintptr_t)w, PG, 0, 0, &a),
		  -EINVAL);
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, SIZE_MAX, 0, 0,
				&a), -ENOMEM);
	/* No gap of 35 pages in the window. */
	ASSERT_EQ(ncb_find_free((uintptr_t)w, (uintptr_t)end, 35 * PG, 0,
				NCB_PLACE_LOWEST, &a), -ENOMEM);
	ASSERT_EQ(ncb_find_free((uintptr_t)w + 10 * PG, (uintptr_t)w + 12 * PG,
				PG, 0, NCB_PLACE_RANDOM, &a), -ENOMEM);
}

/*
 * The descriptors of this process's own maps, as /proc/self/fd lists
 * them: how many, the last in *last.
 */
static int maps_fds(int *last)
{
	char link[64], want[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	ssize_t l;

	ASSERT_TRUE(d != NULL);
	snprintf(want, sizeof(want), "/proc/%d/maps", (int)getpid());
	while ((de = readdir(d))) {
		l = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (!strcmp(link, want)) {
			n++;
			*last = atoi(de->d_name);
		}
	}
	closedir(d);
	return n;
}

/*
 * The core's kept descriptor of /proc/self/maps (where PROCMAP_QUERY
 * answers): a child after fork looks at its own maps, never through its
 * parent's descriptor; one whose number the program reused is given up,
 * not misread, and another kept.
 */
TEST(kept_maps_descriptor)
{
	char *w = free_window(2 * PG), *p;
	int st, kept = -1, null;
	pid_t pid;

	if (!ncb_core_procmap_query())
		SKIP("no PROCMAP_QUERY here: nothing is kept");
	p = map_sentinel(w, PG, 1);
	ASSERT_EQ(ncb_core_occupied((uintptr_t)p, (uintptr_t)p + PG), 1);
	ASSERT_EQ(maps_fds(&kept), 1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/*
		 * The child's page is gone; the parent's is not.  The child
		 * asks its own maps each time and keeps none of its own.
		 */
		munmap(p, PG);
		if (ncb_core_occupied((uintptr_t)p, (uintptr_t)p + PG) != 0)
			_exit(1);
		_exit(maps_fds(&kept) == 0 ? 0 : 2);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	ASSERT_EQ(ncb_core_occupied((uintptr_t)p, (uintptr_t)p + PG), 1);
	/* Its number taken over by another file, as a daemon might. */
	null = open("/dev/null", O_RDONLY);
	ASSERT_TRUE(null >= 0);
	ASSERT_EQ(dup2(null, kept), kept);
	close(null);
	munmap(p, PG);
	ASSERT_EQ(ncb_core_occupied((uintptr_t)p, (uintptr_t)p + PG), 0);
	ASSERT_EQ(maps_fds(&null), 1);
	ASSERT_NE(null, kept);
	close(kept);
}

TEST_MAIN(T(range_free), T(lowest_and_highest), T(alignment),
	  T(random_spreads), T(keeps_below_stack_clear), T(errors),
	  T(kept_maps_descriptor))

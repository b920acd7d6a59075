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

/* ncb_find_free with the kernel's choice for ANY given: its end. */
static uint64_t find_any(char *lo, char *hi, size_t len, size_t align,
			 uint64_t kernel_end)
{
	uint64_t a = 0;
	int r = ncb__find_free((uintptr_t)lo, (uintptr_t)hi, len, align,
			       NCB_PLACE_ANY, kernel_end, &a);

	if (r)
		FAIL("ncb__find_free: %s", errname(-r));
	return a;
}

/* Where the kernel puts len bytes now: the end of its range. */
static uint64_t kernel_end(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	munmap(p, len);
	return (uintptr_t)p + len;
}

/*
 * NCB_PLACE_ANY goes as the kernel's top-down search would within the
 * window: the highest fit ending at or below the kernel's own choice,
 * else (it chose below the window, or nothing) the lowest.
 */
TEST(any_follows_the_kernel)
{
	char *w = layout(), *end = w + 64 * PG;
	uint64_t a, k;

	ASSERT_EQ(find_any(w, end, 4 * PG, 0, (uintptr_t)end + 8 * PG),
		  (uintptr_t)w + 60 * PG);
	ASSERT_EQ(find_any(w, end, 4 * PG, 0, (uintptr_t)w + 30 * PG),
		  (uintptr_t)w + 26 * PG);
	ASSERT_EQ(find_any(w, end, 4 * PG, 4 * PG, (uintptr_t)w + 31 * PG),
		  ((uintptr_t)w + 26 * PG) & ~(uintptr_t)(4 * PG - 1));
	ASSERT_EQ(find_any(w, end, 4 * PG, 0, (uintptr_t)w + 13 * PG),
		  (uintptr_t)w + 6 * PG);
	/* Nothing fits below it in the window: the lowest. */
	ASSERT_EQ(find_any(w, end, 4 * PG, 0, (uintptr_t)w + 3 * PG),
		  (uintptr_t)w);
	ASSERT_EQ(find_any(w, end, 4 * PG, 0, (uintptr_t)w - 8 * PG),
		  (uintptr_t)w);
	ASSERT_EQ(find_any(w, end, 4 * PG, 0, 0), (uintptr_t)w);
	/*
	 * The public call asks the kernel itself.  Its choice is the same
	 * from one call to the next where the kernel searches top-down;
	 * emulators may move on (qemu-user), and then only a fit is sure.
	 */
	k = kernel_end(4 * PG);
	a = find(w, end, 4 * PG, 0, NCB_PLACE_ANY);
	ASSERT_EQ(ncb_range_free((void *)(uintptr_t)a, 4 * PG), 1);
	ASSERT_UGE(a, (uintptr_t)w);
	ASSERT_ULE(a + 4 * PG, (uintptr_t)end);
	if (kernel_end(4 * PG) == k)
		ASSERT_EQ(a, find_any(w, end, 4 * PG, 0, k));
}

/* This process's /proc/self/maps, NUL-terminated, its length in *len. */
static char *read_maps(size_t *len)
{
	size_t cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(buf && fd >= 0);
	*len = 0;
	while ((n = read(fd, buf + *len, cap - *len - 1)) > 0) {
		*len += (size_t)n;
		if (cap - *len < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			ASSERT_TRUE(buf != NULL);
		}
	}
	ASSERT_TRUE(n == 0);
	close(fd);
	buf[*len] = '\0';
	return buf;
}

/*
 * 128 pages at a multiple of 32 pages, pages 0, 5, 7-8, 31, 48, 63, 72
 * and 100-101 taken: gaps of 4, 1, 22, 16 (an exact fit for 16 pages
 * aligned to 16), 14, 8 (exact for 8 aligned to 8), 27 and 26 pages.
 */
static char *agree_layout(void)
{
	static const unsigned int taken[][2] = {
		{ 0, 1 }, { 5, 1 }, { 7, 2 }, { 31, 1 }, { 48, 1 },
		{ 63, 1 }, { 72, 1 }, { 100, 2 },
	};
	char *w = free_window(160 * PG);
	size_t i;

	w = (char *)(((uintptr_t)w + 32 * PG - 1) & ~(uintptr_t)(32 * PG - 1));
	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		map_sentinel(w + taken[i][0] * PG, taken[i][1] * PG, 1);
	return w;
}

/* The process's maps as a model whose mmap would start below base. */
static struct ncb_as *model_of_self(uint64_t base)
{
	struct ncb_as_opts o = NCB_INIT(ncb_as_opts, .mmap_base = base);
	struct ncb_as *as;
	size_t len;
	char *text = read_maps(&len);

	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	ASSERT_EQ(ncb_as_load(as, text, len), 0);
	free(text);
	return as;
}

/*
 * One rule on both sides: the same layout in this process and in the
 * model loaded from its maps, and ncb_find_free and ncb_as_find_free give
 * the same answer for every place, length, alignment and window (the
 * exact aligned fits among them), RANDOM from the same draws and ANY with
 * the kernel's choice at the same place: at the top of a free range above,
 * inside or below the window (the model's mmap_base is put there).
 */
/* One reader for the walks of ncb_find_free: 1 the ioctl, 2 the text. */
static int use_reader(int reader)
{
	if (reader == 1 && !ncb__probe()->procmap_query)
		return 0;
	ncb__walk_reader(reader);
	return 1;
}

static void model_agrees_by(int reader)
{
	static const unsigned int lens[] = { 1, 3, 8, 16 };
	static const unsigned int aligns[] = { 1, 2, 8, 16, 32 };
	static const unsigned int wins[][2] = {
		{ 0, 128 }, { 2, 110 }, { 32, 48 }, { 33, 48 }, { 64, 72 },
	};
	char *w = agree_layout();
	uint64_t bases[3], got, want, draw = 1;
	struct ncb_as *as;
	size_t b, i, j, k;
	int place, rl, rm;

	if (!use_reader(reader))
		SKIP("no PROCMAP_QUERY here");
	/* Free ranges: the window's top margin, a gap, its bottom margin. */
	bases[0] = (uintptr_t)w + 160 * PG + (8UL << 20);
	bases[1] = (uintptr_t)w + 48 * PG;
	bases[2] = (uintptr_t)w - (8UL << 20);
	for (b = 0; b < 3; b++) {
		as = model_of_self(bases[b]);
		for (i = 0; i < sizeof(wins) / sizeof(wins[0]); i++)
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
		for (k = 0; k < sizeof(aligns) / sizeof(aligns[0]); k++)
		for (place = NCB_PLACE_ANY; place <= NCB_PLACE_RANDOM;
		     place++) {
			uint64_t lo = (uintptr_t)w + wins[i][0] * PG;
			uint64_t hi = (uintptr_t)w + wins[i][1] * PG;
			uint64_t len = lens[j] * PG, al = aligns[k] * PG;

			ncb__random_fixed(++draw);
			rl = ncb__find_free(lo, hi, len, al, place, bases[b],
					    &want);
			ncb__random_fixed(draw);
			rm = ncb_as_find_free(as, lo, hi, len, al, place,
					      &got);
			ncb__random_fixed(0);
			if (rl != rm || (!rl && got != want))
				FAIL("window %u-%u, %u pages aligned to %u, "
				     "place %d, kernel's choice below %#jx: "
				     "process %d %#jx, model %d %#jx",
				     wins[i][0], wins[i][1], lens[j],
				     aligns[k], place, (uintmax_t)bases[b],
				     rl, (uintmax_t)want, rm,
				     (uintmax_t)got);
		}
		ncb_as_free(as);
	}
	/* The exact fits. */
	ASSERT_EQ(ncb__find_free((uintptr_t)w, (uintptr_t)w + 128 * PG,
				 16 * PG, 16 * PG, NCB_PLACE_LOWEST, 0, &got),
		  0);
	ASSERT_EQ(got, (uintptr_t)w + 32 * PG);
	ASSERT_EQ(ncb__find_free((uintptr_t)w + 64 * PG,
				 (uintptr_t)w + 72 * PG, 8 * PG, 8 * PG,
				 NCB_PLACE_RANDOM, 0, &got), 0);
	ASSERT_EQ(got, (uintptr_t)w + 64 * PG);
}
TEST(model_agrees_ioctl) { model_agrees_by(1); }
TEST(model_agrees_text) { model_agrees_by(2); }

/*
 * A walk lists what ncb_maps_next lists, by either reader, from where it
 * starts: here 400 mappings (some 30 kilobytes of text, read a kilobyte
 * at a time) in a window, from inside one of them.
 */
static void walk_lists_by(int reader)
{
	struct ncb_mapping a = NCB_INIT(ncb_mapping), b = a;
	struct ncb_maps *walk, *all;
	char *w = free_window(800 * PG);
	int i, n = 0;

	if (!use_reader(reader))
		SKIP("no PROCMAP_QUERY here");
	for (i = 0; i < 400; i++)
		map_sentinel(w + 2 * i * PG, PG, 1);
	ASSERT_EQ(ncb__maps_walk(&walk, (uintptr_t)w + PG / 2), 0);
	ASSERT_EQ(ncb_maps_open(&all, 0), 0);
	ASSERT_EQ(ncb_maps_seek(all, (uintptr_t)w + PG / 2), 0);
	while (ncb_maps_next(all, &a) == 1 && a.start < (uintptr_t)w +
	       800 * PG) {
		ASSERT_EQ(ncb_maps_next(walk, &b), 1);
		ASSERT_UEQ(b.start, a.start);
		ASSERT_UEQ(b.end, a.end);
		ASSERT_EQ(b.prot, a.prot);
		ASSERT_TRUE(!strcmp(b.path, a.path));
		n++;
	}
	ASSERT_EQ(n, 400);
	ncb_maps_close(walk);
	ncb_maps_close(all);
}
TEST(walk_lists_ioctl) { walk_lists_by(1); }
TEST(walk_lists_text) { walk_lists_by(2); }

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
	  T(random_spreads), T(any_follows_the_kernel),
	  T(model_agrees_ioctl), T(model_agrees_text), T(walk_lists_ioctl),
	  T(walk_lists_text),
	  T(keeps_below_stack_clear), T(errors), T(kept_maps_descriptor))

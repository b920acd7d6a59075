/* SPDX-License-Identifier: MIT */
/*
 * Near placement (ncb_find_near): the window around an anchor, its free
 * space and largest gaps, the placement and why there is none, in this
 * process and another; and the symbol tables the tool names anchors by.
 */
#include <grp.h>
#include <sys/prctl.h>
#include "ncbtest.h"
#include "loader/loader.h"

#define PG ((uint64_t)test_page())

/*
 * The layout every case starts from: a free 64-page window w with the
 * anchor, one read-only page, at page 32.  Within 16 pages of it lies
 * [w + 17, w + 48) in pages.
 */
struct lay {
	uint64_t w;
	uint64_t a;		/* the anchor page */
};

static struct lay layout(void)
{
	struct lay l;

	l.w = (uintptr_t)free_window(64 * PG);
	l.a = l.w + 32 * PG;
	if (mmap((void *)(uintptr_t)l.a, PG, PROT_READ, MAP_PRIVATE |
		 MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		FAIL("mmap of the anchor: %s", errname(errno));
	return l;
}

/* Pages [from, to) of the layout, mapped read-write (they merge). */
static void fill(const struct lay *l, unsigned from, unsigned to)
{
	map_sentinel((void *)(uintptr_t)(l->w + from * PG), (to - from) * PG,
		     7);
}

static int near_in(pid_t pid, const struct lay *l, uint64_t within,
		   uint64_t len, uint64_t align, int place, struct ncb_near *r)
{
	struct ncb_near_opts o = NCB_INIT(ncb_near_opts, .align = align,
					  .place = place);

	*r = NCB_INIT(ncb_near);
	return ncb_find_near(pid, l->a, l->a + PG, within, len, &o, r);
}

static uint64_t place_at(const struct lay *l, uint64_t len, uint64_t align,
			 int place)
{
	struct ncb_near r;
	int ret = near_in(0, l, 16 * PG, len, align, place, &r);

	if (ret)
		FAIL("ncb_find_near: %s (why %d)", errname(-ret), r.why);
	ASSERT_EQ(r.why, NCB_NEAR_PLACED);
	return r.addr;
}

/* A fit: aligned, in the window, free. */
static void check_fit(const struct ncb_near *r, uint64_t len, uint64_t align)
{
	ASSERT_EQ(r->why, NCB_NEAR_PLACED);
	ASSERT_EQ(r->addr % align, 0);
	ASSERT_UGE(r->addr, r->lo);
	ASSERT_ULE(r->addr + len, r->hi);
	ASSERT_EQ(ncb_range_free((void *)(uintptr_t)r->addr, (size_t)len), 1);
}

/* Nothing mapped near the anchor: the window, its two gaps. */
TEST(nothing_near)
{
	struct lay l = layout();
	struct ncb_near r;

	ASSERT_EQ(near_in(0, &l, 16 * PG, PG, 0, NCB_PLACE_LOWEST, &r), 0);
	ASSERT_EQ(r.size, sizeof(r));
	ASSERT_UEQ(r.lo, l.w + 17 * PG);
	ASSERT_UEQ(r.hi, l.w + 48 * PG);
	ASSERT_UEQ(r.free, 30 * PG);
	ASSERT_EQ(r.ngaps, 2);
	ASSERT_EQ(r.nmaps, 1);
	/* Equally long: the lower first. */
	ASSERT_EQ(r.nlisted, 2);
	ASSERT_UEQ(r.gaps[0].start, l.w + 17 * PG);
	ASSERT_UEQ(r.gaps[0].end, l.a);
	ASSERT_UEQ(r.gaps[1].start, l.a + PG);
	ASSERT_UEQ(r.gaps[1].end, l.w + 48 * PG);
	ASSERT_UEQ(r.addr, l.w + 17 * PG);
	ASSERT_UEQ(place_at(&l, 4 * PG, 0, NCB_PLACE_HIGHEST),
		   l.w + 44 * PG);
	/* Every byte less than within from every byte of the anchor. */
	ASSERT_ULT(l.a + PG - 1 - r.lo, 16 * PG);
	ASSERT_ULT(r.hi - 1 - l.a, 16 * PG);
	/* One page more of reach is one page more each side. */
	ASSERT_EQ(near_in(0, &l, 17 * PG, PG, 0, NCB_PLACE_LOWEST, &r), 0);
	ASSERT_UEQ(r.lo, l.w + 16 * PG);
	ASSERT_UEQ(r.hi, l.w + 49 * PG);
	/* Reach not a whole number of pages: only whole pages count. */
	ASSERT_EQ(near_in(0, &l, 16 * PG + 1, PG, 0, NCB_PLACE_LOWEST, &r),
		  0);
	ASSERT_UEQ(r.lo, l.w + 17 * PG);
	ASSERT_UEQ(r.hi, l.w + 48 * PG);
}

/* The rules agree with what ncb_resv_new reserves in the same window. */
TEST(as_reserved)
{
	static const int rules[] = { NCB_PLACE_LOWEST, NCB_PLACE_HIGHEST };
	struct lay l = layout();
	struct ncb_resv_opts o;
	struct ncb_resv *res;
	struct ncb_near r;
	unsigned i;

	fill(&l, 40, 44);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG, 0, rules[i], &r),
			  0);
		o = NCB_INIT(ncb_resv_opts, .lo = r.lo, .hi = r.hi,
			     .place = rules[i]);
		ASSERT_EQ(ncb_resv_new(&res, NULL, 2 * PG, &o), 0);
		ASSERT_UEQ((uintptr_t)ncb_resv_addr(res), r.addr);
		ASSERT_EQ(ncb_resv_release(res), 0);
	}
	/* ANY and RANDOM: some fit. */
	ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG, 0, NCB_PLACE_ANY, &r), 0);
	check_fit(&r, 2 * PG, PG);
	ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG, 0, NCB_PLACE_RANDOM, &r),
		  0);
	check_fit(&r, 2 * PG, PG);
}

/*
 * The window filled but for a 2-page hole at pages [20, 22): three pages
 * have no room, and the mappings in the way are counted; two fit exactly,
 * whatever the rule.
 */
TEST(filled_and_exact)
{
	static const int rules[] = { NCB_PLACE_ANY, NCB_PLACE_LOWEST,
				     NCB_PLACE_HIGHEST, NCB_PLACE_RANDOM };
	struct lay l = layout();
	struct ncb_near r;
	unsigned i;

	fill(&l, 10, 20);
	fill(&l, 22, 32);
	fill(&l, 33, 50);
	r.addr = 1;
	ASSERT_EQ(near_in(0, &l, 16 * PG, 3 * PG, 0, NCB_PLACE_ANY, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_FULL);
	ASSERT_EQ(r.addr, 0);
	ASSERT_UEQ(r.free, 2 * PG);
	ASSERT_EQ(r.ngaps, 1);
	ASSERT_EQ(r.nlisted, 1);
	ASSERT_UEQ(r.gaps[0].start, l.w + 20 * PG);
	ASSERT_UEQ(r.gaps[0].end, l.w + 22 * PG);
	/* What is in the way: the anchor and three others. */
	ASSERT_EQ(r.nmaps, 4);
	ASSERT_EQ(r.nmaps, occupants((void *)(uintptr_t)r.lo,
				     (size_t)(r.hi - r.lo)));
	for (i = 0; i < 4; i++)
		ASSERT_UEQ(place_at(&l, 2 * PG, 0, rules[i]), l.w + 20 * PG);
	/* A byte more than fits is a page more. */
	ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG + 1, 0, NCB_PLACE_LOWEST,
			  &r), -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_FULL);
}

/* Alignment: aligned fits, and gaps long enough but none aligned. */
TEST(alignment)
{
	struct lay l = layout();
	uint64_t a = 8 * PG, want, g;
	struct ncb_near r;

	/* The lowest 8-page multiple with two pages free after it. */
	want = (l.w + 17 * PG + a - 1) / a * a;
	if (want <= l.a && want + 2 * PG > l.a)
		want += a;
	ASSERT_UEQ(place_at(&l, 2 * PG, a, NCB_PLACE_LOWEST), want);
	ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG, a, NCB_PLACE_HIGHEST, &r),
		  0);
	check_fit(&r, 2 * PG, a);
	ASSERT_UGT(r.addr + a + 2 * PG, r.hi);

	/* One 3-page hole at 2 pages past a multiple of 4 pages. */
	g = (l.w + 18 * PG + 4 * PG - 1) / (4 * PG) * (4 * PG) + 2 * PG;
	map_sentinel((void *)(uintptr_t)(l.w + 10 * PG), g - l.w - 10 * PG,
		     7);
	map_sentinel((void *)(uintptr_t)(g + 3 * PG),
		     l.a - g - 3 * PG, 7);
	fill(&l, 33, 50);
	ASSERT_EQ(near_in(0, &l, 16 * PG, 2 * PG, 4 * PG, NCB_PLACE_ANY, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_ALIGN);
	ASSERT_UEQ(r.gaps[0].start, g);
	ASSERT_UEQ(r.gaps[0].end, g + 3 * PG);
	ASSERT_UEQ(place_at(&l, 2 * PG, 0, NCB_PLACE_LOWEST), g);
	ASSERT_UEQ(place_at(&l, 2 * PG, 2 * PG, NCB_PLACE_ANY), g);
}

/* The window stops at the ends of the user address space. */
TEST(edges)
{
	uint64_t min = ncb__probe()->mmap_min_addr, top = ncb__user_top();
	struct ncb_near r = NCB_INIT(ncb_near);
	uint64_t g = 1ULL << 30;

	min = min > PG ? (min + PG - 1) / PG * PG : PG;
	/* At address 0: from vm.mmap_min_addr (never page 0). */
	ASSERT_EQ(ncb_find_near(0, 0, 0, g, PG, NULL, &r), 0);
	ASSERT_UEQ(r.lo, min);
	ASSERT_UEQ(r.hi, g);
	check_fit(&r, PG, PG);
	/* At the last byte below the top: up to the top. */
	r = NCB_INIT(ncb_near);
	ASSERT_EQ(ncb_find_near(0, top - 1, top, g, PG, NULL, &r), 0);
	ASSERT_UEQ(r.lo, top - g);
	ASSERT_UEQ(r.hi, top);
	/* All of reach: the whole space. */
	r = NCB_INIT(ncb_near);
	ASSERT_EQ(ncb_find_near(0, 0, 0, UINT64_MAX, PG, NULL, &r), 0);
	ASSERT_UEQ(r.lo, min);
	ASSERT_UEQ(r.hi, top);
	ASSERT_GT(r.nmaps, 0);
	ASSERT_UGT(r.free, 0);
	/* Beyond the top: no byte of the window is in the space. */
	r = NCB_INIT(ncb_near);
	ASSERT_EQ(ncb_find_near(0, top + 2 * g, top + 2 * g, g, PG, NULL, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_OUTSIDE);
	ASSERT_UEQ(r.lo, top);
	ASSERT_UEQ(r.hi, top);
	ASSERT_EQ(r.free, 0);
	ASSERT_EQ(r.nlisted, 0);
}

/* Windows shorter than the block: reach, anchor width, and absurd sizes. */
TEST(too_small)
{
	struct lay l = layout();
	struct ncb_near r = NCB_INIT(ncb_near);

	ASSERT_EQ(near_in(0, &l, 2 * PG, 8 * PG, 0, NCB_PLACE_ANY, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_SMALL);
	/* Its free space all the same. */
	ASSERT_UEQ(r.free, 2 * PG);
	ASSERT_EQ(r.ngaps, 2);
	/* An anchor twice as wide as the reach leaves no window. */
	r = NCB_INIT(ncb_near);
	ASSERT_EQ(ncb_find_near(0, l.w, l.w + 32 * PG, 16 * PG, PG, NULL, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_SMALL);
	ASSERT_EQ(r.free, 0);
	/* A length that overflows when rounded up. */
	r = NCB_INIT(ncb_near);
	ASSERT_EQ(ncb_find_near(0, l.a, l.a + PG, 16 * PG, SIZE_MAX, NULL, &r),
		  -ENOMEM);
	ASSERT_EQ(r.why, NCB_NEAR_SMALL);
}

static pid_t child_with_hole(const struct lay *l, int *fd)
{
	int fds[2];
	char c = 1;
	pid_t pid;

	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		/* Gone with the test, should an assertion end it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Its own layout: a hole of three pages at [24, 27). */
		munmap((void *)(uintptr_t)(l->w + 24 * PG), 3 * PG);
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(read(fds[0], &c, 1), 1);
	close(fds[1]);
	*fd = fds[0];
	return pid;
}

/* Another process's window: its mappings, not ours. */
TEST(other_process)
{
	struct lay l = layout();
	struct ncb_near r, mine;
	pid_t pid;
	int fd;

	/* There another process's maps are the emulator's host view. */
	require_prot_none_in_maps();
	fill(&l, 10, 32);
	fill(&l, 33, 50);
	pid = child_with_hole(&l, &fd);
	ASSERT_EQ(near_in(pid, &l, 16 * PG, 3 * PG, 0, NCB_PLACE_ANY, &r), 0);
	ASSERT_UEQ(r.addr, l.w + 24 * PG);
	ASSERT_UEQ(r.free, 3 * PG);
	ASSERT_EQ(r.nmaps, 4);
	ASSERT_EQ(near_in(pid, &l, 16 * PG, PG, 0, NCB_PLACE_HIGHEST, &r), 0);
	ASSERT_UEQ(r.addr, l.w + 26 * PG);
	/* Here the window is full; our own pid is this process. */
	ASSERT_EQ(near_in(0, &l, 16 * PG, PG, 0, NCB_PLACE_ANY, &mine),
		  -ENOMEM);
	ASSERT_EQ(mine.why, NCB_NEAR_FULL);
	ASSERT_EQ(near_in(getpid(), &l, 16 * PG, PG, 0, NCB_PLACE_ANY, &mine),
		  -ENOMEM);
	ASSERT_EQ(mine.nmaps, 3);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
}

/* A process that is gone, or has no address space. */
/* An anchor above every user address space. */
#define FAR 0xffff800000000000ULL

TEST(no_process)
{
	struct ncb_near r = NCB_INIT(ncb_near);
	siginfo_t si;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	/* A zombie: exited, not yet reaped. */
	ASSERT_EQ(ncb_find_near(pid, 1ULL << 30, 1ULL << 30, 1ULL << 30, PG,
				NULL, &r), -ESRCH);
	/* So too where the window has no page of the address space. */
	ASSERT_EQ(ncb_find_near(pid, FAR, FAR, PG, PG, NULL, &r), -ESRCH);
	ASSERT_EQ(waitpid(pid, NULL, 0), pid);
	/* Reaped: the process has vanished. */
	r.addr = 1;
	ASSERT_EQ(ncb_find_near(pid, 1ULL << 30, 1ULL << 30, 1ULL << 30, PG,
				NULL, &r), -ENOENT);
	ASSERT_EQ(ncb_find_near(pid, FAR, FAR, PG, PG, NULL, &r), -ENOENT);
	ASSERT_EQ(r.addr, 1);
}

/* Another user's process: its mappings may not be read. */
TEST(no_permission)
{
	struct ncb_near r = NCB_INIT(ncb_near);
	pid_t pid, reader;
	int st;

	if (geteuid() != 0)
		SKIP("needs root, to become another user");
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	reader = fork();
	if (reader == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(ncb_find_near(pid, 1ULL << 30, 1ULL << 30, 1ULL << 30,
				    PG, NULL, &r) != -EACCES);
	}
	ASSERT_EQ(waitpid(reader, &st, 0), reader);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

TEST(bad_arguments)
{
	struct ncb_near_opts o = NCB_INIT(ncb_near_opts);
	struct ncb_near r = NCB_INIT(ncb_near);
	struct {
		struct ncb_near_opts o;
		char more[16];
	} big = { .o = NCB_INIT(ncb_near_opts) };
	struct {
		struct ncb_near r;
		char more[16];
	} bigger;
	uint64_t at = 1ULL << 30, g = at;

	r.addr = 1;
	ASSERT_EQ(ncb_find_near(0, at, at, g, 0, NULL, &r), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, NULL, &r), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, at, at - 1, g, PG, NULL, &r), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, UINT64_MAX - 10, UINT64_MAX, 100, PG,
				NULL, &r), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, UINT64_MAX, UINT64_MAX, 1, PG, NULL, &r),
		  -EINVAL);
	ASSERT_EQ(ncb_find_near(-1, at, at, g, PG, NULL, &r), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, NULL, NULL), -EINVAL);
	o.align = 3 * PG;
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &o, &r), -EINVAL);
	o.align = PG / 2;
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &o, &r), -EINVAL);
	o = NCB_INIT(ncb_near_opts, .place = NCB_PLACE_RANDOM + 1);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &o, &r), -EINVAL);
	o = NCB_INIT(ncb_near_opts);
	o.size = sizeof(size_t);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &o, &r), -EINVAL);
	/* 1.1's struct, its padding (1.2's reserved) whatever it holds. */
	o = NCB_INIT(ncb_near_opts, .reserved = -1, .reach = -1);
	o.size = offsetof(struct ncb_near_opts, reach);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &o, &r), 0);
	r = NCB_INIT(ncb_near);
	r.addr = 1;
	/* A later release's option this one cannot honour. */
	big.o.size = sizeof(big);
	big.more[3] = 1;
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &big.o, &r), -EINVAL);
	r.size = offsetof(struct ncb_near, gaps);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, NULL, &r), -EINVAL);
	/* Nothing written on a bad argument. */
	ASSERT_EQ(r.addr, 1);
	/* Larger structs: options past ours zero, results as far as ours. */
	big.more[3] = 0;
	memset(&bigger, 0xa5, sizeof(bigger));
	bigger.r.size = sizeof(bigger);
	ASSERT_EQ(ncb_find_near(0, at, at, g, PG, &big.o, &bigger.r), 0);
	ASSERT_EQ(bigger.r.size, sizeof(struct ncb_near));
	ASSERT_EQ((unsigned char)bigger.more[0], 0xa5);
}

/* The address of a function, found by name in this program's tables. */
static uint64_t symbol(struct ncb_elf *e, const char *name)
{
	uint64_t v = 0, size = 0;

	if (ncb__elf_symbol(e, name, &v, &size) != 1)
		FAIL("%s not found", name);
	ASSERT_GT(size, 0);
	return v;
}

TEST(symbol_tables)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	struct ncb_elf *e;
	uint64_t v, size;
	char why[256];

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	ASSERT_EQ(ncb_maps_find(maps, (uintptr_t)&ncb_find_near, &m), 1);
	if (ncb_elf_open_flags(&e, m.path, NCB_ELF_ANY_ARCH, why, sizeof(why)))
		FAIL("%s: %s", m.path, why);
	ncb_maps_close(maps);
	/* Link addresses differ as the loaded ones do. */
	ASSERT_UEQ(symbol(e, "ncb_find_near") - symbol(e, "ncb_find_free"),
		   (uintptr_t)&ncb_find_near - (uintptr_t)&ncb_find_free);
	ASSERT_UEQ(symbol(e, "ncb_find_near") - symbol(e, "check_fit"),
		   (uintptr_t)&ncb_find_near - (uintptr_t)&check_fit);
	ASSERT_EQ(ncb__elf_symbol(e, "no_such_symbol_here", &v, &size), 0);
	ASSERT_EQ(ncb__elf_symbol(e, "ncb_find_nea", &v, &size), 0);
	ASSERT_EQ(ncb__elf_symbol(e, "", &v, &size), -EINVAL);
	ASSERT_EQ(ncb__elf_symbol(NULL, "main", &v, &size), -EINVAL);
	ncb_elf_close(e);
}

TEST_MAIN(T(nothing_near), T(as_reserved), T(filled_and_exact),
	  T(alignment), T(edges), T(too_small), T(other_process),
	  T(no_process), T(no_permission), T(bad_arguments),
	  T(symbol_tables))

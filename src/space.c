/* SPDX-License-Identifier: MIT */
/*
 * Free space: is a range free, and where in a window does a range of a
 * given size and alignment fit.  An answer is a snapshot: other threads may
 * map there next.  Callers that need the space claim it no-clobber and
 * retry on EEXIST, as ncb_resv_new does.  The placement rule itself
 * (ncb__place_gap) is shared with the address-space model.
 */
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "internal.h"

/*
 * The top of the user address space, as far as a hint can reach without
 * asking for more (x86_64 and aarch64 hand out 47 and 48 bits unless a hint
 * asks above; 32-bit processes on 64-bit kernels get 4 GiB).
 */
uint64_t ncb__user_top(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	return 0x7ffffffff000ULL;
#elif defined(__aarch64__) && !defined(__ILP32__)
	return 1ULL << 48;
#elif UINTPTR_MAX == 0xffffffffu
	return 0x100000000ULL - ncb__probe()->page_size;
#else
	return 1ULL << 47;
#endif
}

/*
 * The kernel keeps this much below a stack free for it to grow into:
 * stack_guard_gap, 256 pages of the machine's size (mm/mmap.c).
 */
#define STACK_GUARD (256 * (uint64_t)ncb__probe()->page_size)

/* The end of the free gap below mapping m, as placement sees it. */
uint64_t ncb__gap_end(const struct ncb_mapping *m)
{
	if (strcmp(m->path, "[stack]"))
		return m->start;
	return m->start > STACK_GUARD ? m->start - STACK_GUARD : 0;
}

int ncb_range_free(const void *addr, size_t len)
{
	int n;

	if (!len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	n = ncb__range_occupied((uintptr_t)addr, (uint64_t)(uintptr_t)addr +
				len);
	return n < 0 ? n : !n;
}

/* A test's fixed sequence of draws (splitmix64), per thread; 0: none. */
static _Thread_local uint64_t fixed_draws;

void ncb__random_fixed(uint64_t seed)
{
	fixed_draws = seed;
}

uint64_t ncb__random64(void)
{
	uint64_t r;
	struct timespec ts;

	if (fixed_draws) {
		r = fixed_draws += 0x9e3779b97f4a7c15ULL;
		r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ULL;
		r = (r ^ (r >> 27)) * 0x94d049bb133111ebULL;
		return r ^ (r >> 31);
	}
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* No entropy yet: placement, not secrecy, depends on it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
	return r ^ (r >> 29);
}

int ncb__place_gap(struct ncb__place *p, uint64_t s, uint64_t e)
{
	uint64_t mask = p->align - 1, first, last, n, r;

	if (s < p->lo)
		s = p->lo;
	if (e > p->hi)
		e = p->hi;
	if (s >= e || e - s < p->len || s > UINT64_MAX - mask)
		return 0;
	first = (s + mask) & ~mask;
	if (first > e - p->len)
		return 0;
	last = (e - p->len) & ~mask;
	switch (p->place) {
	case NCB_PLACE_HIGHEST:
		if (!p->have || last > p->found)
			p->found = last;
		break;
	case NCB_PLACE_RANDOM:
		n = (last - first) / p->align + 1;
		p->seen += n;
		r = ncb__random64() % p->seen;
		if (r < n)
			p->found = first + r * p->align;
		break;
	default:
		if (!p->have || first < p->found)
			p->found = first;
	}
	p->have = 1;
	return 1;
}

/*
 * Offer the free gaps of the window to the rule, upward from its start;
 * the lowest fit ends the walk.
 */
static int walk_gaps(struct ncb__place *p)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	uint64_t prev = p->lo;
	int ret;

	ret = ncb__maps_walk(&maps, p->lo);
	if (ret)
		return ret;
	while (prev < p->hi && (ret = ncb_maps_next(maps, &m)) == 1) {
		if (m.start > prev)
			ncb__place_gap(p, prev, ncb__gap_end(&m));
		if (p->have && p->place == NCB_PLACE_LOWEST)
			break;
		if (m.end > prev)
			prev = m.end;
	}
	ncb_maps_close(maps);
	if (ret < 0)
		return ret;
	if (!ret && prev < p->hi)
		ncb__place_gap(p, prev, p->hi);
	return 0;
}

/*
 * The highest fit is most often at the top of the window: where the ioctl
 * answers, one look-up says so without a walk (the text would cost as much
 * as the walk).  1 if it fits, 0 if not or not asked, -errno.
 */
static int top_fits(struct ncb__place *p)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	uint64_t t;
	int ret, fits;

	if (p->hi - p->lo < p->len || !ncb_core_procmap_query())
		return 0;
	t = (p->hi - p->len) & ~(p->align - 1);
	if (t < p->lo)
		return 0;
	ret = ncb__maps_walk(&maps, t);
	if (ret)
		return ret;
	ret = ncb_maps_next(maps, &m);
	/* Judged while the path, which the reader holds, is there. */
	fits = !ret || (ret == 1 && ncb__gap_end(&m) >= t + p->len);
	ncb_maps_close(maps);
	if (ret < 0)
		return ret;
	return fits ? ncb__place_gap(p, t, p->hi) : 0;
}

static int search(struct ncb__place *p)
{
	int ret;

	if (p->place == NCB_PLACE_HIGHEST) {
		ret = top_fits(p);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return walk_gaps(p);
}

/*
 * NCB_PLACE_ANY, as the kernel's top-down search would go within the
 * window: the highest fit ending no higher than the kernel's own choice,
 * else (it placed below the window, or nothing fits below it) the lowest.
 */
static int search_any(struct ncb__place *p, uint64_t kernel_end)
{
	uint64_t hi = p->hi, top = kernel_end < hi ? kernel_end : hi;
	int ret;

	p->place = NCB_PLACE_HIGHEST;
	if (top > p->lo && top - p->lo >= p->len) {
		p->hi = top;
		ret = search(p);
		p->hi = hi;
		if (ret || p->have)
			return ret;
	}
	p->place = NCB_PLACE_LOWEST;
	return search(p);
}

static int setup(struct ncb__place *p, uint64_t lo, uint64_t hi, size_t len,
		 size_t align, int place)
{
	const struct ncb_probe *pr = ncb__probe();

	if (!len || place < NCB_PLACE_ANY || place > NCB_PLACE_RANDOM)
		return -EINVAL;
	if (!align)
		align = pr->page_size;
	if (align & (align - 1) || align < pr->page_size)
		return -EINVAL;
	p->len = ncb__page_align(len);
	if (!p->len)
		return -ENOMEM;
	p->lo = lo > pr->mmap_min_addr ? lo : pr->mmap_min_addr;
	p->hi = hi && hi < ncb__user_top() ? hi : ncb__user_top();
	if (lo >= p->hi || (hi && hi <= lo))
		return -EINVAL;
	p->align = align;
	p->place = place;
	return 0;
}

static int find(struct ncb__place *p, uint64_t kernel_end, uint64_t *addr)
{
	int ret;

	ret = p->place == NCB_PLACE_ANY ? search_any(p, kernel_end)
					: search(p);
	if (ret)
		return ret;
	if (!p->have)
		return -ENOMEM;
	*addr = p->found;
	return 0;
}

int ncb__find_free(uint64_t lo, uint64_t hi, size_t len, size_t align,
		   int place, uint64_t kernel_end, uint64_t *addr)
{
	struct ncb__place p = { 0 };
	int ret = addr ? setup(&p, lo, hi, len, align, place) : -EINVAL;

	return ret ? ret : find(&p, kernel_end, addr);
}

/*
 * Where the kernel would put an anonymous mapping of len bytes: the end of
 * the range it gives one, made and at once removed; 0 if it gives none.
 * Only the kernel knows where its search starts (mmap_base, randomised).
 */
static uint64_t kernel_choice_end(uint64_t len)
{
	void *a = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	if (a == MAP_FAILED)
		return 0;
	(void)munmap(a, len);
	return (uintptr_t)a + len;
}

static uint64_t base_floor;
static pthread_once_t base_floor_once = PTHREAD_ONCE_INIT;

static void find_base_floor(void)
{
	base_floor = kernel_choice_end(ncb__probe()->page_size);
}

/*
 * An address at or below the kernel's mmap_base, which is fixed for the
 * life of the process: the end of the page its top-down search gave once
 * (searching down from mmap_base, it gives a page below it while one is
 * free there).  A window ending no higher lies wholly where that search
 * looks, where every fit ends no higher than the kernel's own choice for
 * the same length: there NCB_PLACE_ANY is the highest fit, found without
 * asking the kernel again.  (Under the legacy bottom-up layout, with an
 * unlimited stack, the kernel's choice is the lowest gap above a third of
 * the space instead; ANY in such a window is then still a fit.)
 */
uint64_t ncb__mmap_base_floor(void)
{
	(void)pthread_once(&base_floor_once, find_base_floor);
	return base_floor;
}

uint64_t ncb__kernel_end(uint64_t hi, uint64_t len)
{
	return hi <= ncb__mmap_base_floor() ? hi : kernel_choice_end(len);
}

int ncb_find_free(uint64_t lo, uint64_t hi, size_t len, size_t align,
		  int place, uint64_t *addr)
{
	struct ncb__place p = { 0 };
	uint64_t kernel_end = 0;
	int ret;

	if (!addr)
		return -EINVAL;
	ret = setup(&p, lo, hi, len, align, place);
	if (ret)
		return ret;
	if (place == NCB_PLACE_ANY)
		kernel_end = ncb__kernel_end(p.hi, p.len);
	return find(&p, kernel_end, addr);
}

/* SPDX-License-Identifier: MIT */
/*
 * Free space: is a range free, and where in a window does a range of a
 * given size and alignment fit.  An answer is a snapshot: other threads may
 * map there next.  Callers that need the space claim it no-clobber and
 * retry on EEXIST, as ncb_resv_new does.
 */
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

int ncb_range_free(const void *addr, size_t len)
{
	int n;

	if (!len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	n = ncb__range_occupied((uintptr_t)addr, (uint64_t)(uintptr_t)addr +
				len);
	return n < 0 ? n : !n;
}

uint64_t ncb__random64(void)
{
	uint64_t r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* No entropy yet: placement, not secrecy, depends on it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
	return r ^ (r >> 29);
}

struct search {
	uint64_t lo, hi, len, align;
	int place;
	uint64_t found;		/* candidate so far */
	uint64_t count;		/* RANDOM: positions seen so far */
	int have;
};

/* Consider the free gap [start, end). */
static void consider(struct search *s, uint64_t start, uint64_t end)
{
	uint64_t first, last, n;

	if (start < s->lo)
		start = s->lo;
	if (end > s->hi)
		end = s->hi;
	if (start >= end || end - start < s->len)
		return;
	first = (start + s->align - 1) & ~(s->align - 1);
	if (first < start || first > end - s->len)
		return;
	last = (end - s->len) & ~(s->align - 1);
	switch (s->place) {
	case NCB_PLACE_HIGHEST:
		s->found = last;
		s->have = 1;
		break;
	case NCB_PLACE_RANDOM:
		/* Reservoir sampling over all aligned positions. */
		n = (last - first) / s->align + 1;
		s->count += n;
		if (ncb__random64() % s->count < n) {
			s->found = first + ncb__random64() % n * s->align;
			s->have = 1;
		}
		break;
	default:
		if (!s->have) {
			s->found = first;
			s->have = 1;
		}
	}
}

static int walk_gaps(struct search *s)
{
	uint64_t prev = s->lo;
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	int ret;

	ret = ncb_maps_open(&maps, 0);
	if (ret)
		return ret;
	ret = ncb_maps_seek(maps, s->lo);
	while (!ret && prev < s->hi) {
		ret = ncb_maps_next(maps, &m);
		if (ret <= 0)
			break;
		ret = 0;
		if (m.start > prev) {
			uint64_t end = m.start;

			if (!strcmp(m.path, "[stack]"))
				end = end > STACK_GUARD ? end - STACK_GUARD : 0;
			consider(s, prev, end);
		}
		if (m.end > prev)
			prev = m.end;
		if (s->have && s->place == NCB_PLACE_LOWEST)
			break;
	}
	ncb_maps_close(maps);
	if (ret < 0)
		return ret;
	if (prev < s->hi)
		consider(s, prev, s->hi);
	return 0;
}

int ncb_find_free(uint64_t lo, uint64_t hi, size_t len, size_t align,
		  int place, uint64_t *addr)
{
	const struct ncb_probe *p = ncb__probe();
	struct search s = { 0 };
	int ret;

	if (!addr || !len || place < NCB_PLACE_ANY ||
	    place > NCB_PLACE_RANDOM)
		return -EINVAL;
	if (!align)
		align = p->page_size;
	if (align & (align - 1) || align < p->page_size)
		return -EINVAL;
	s.len = ncb__page_align(len);
	if (!s.len)
		return -ENOMEM;
	s.lo = lo > p->mmap_min_addr ? lo : p->mmap_min_addr;
	s.hi = hi && hi < ncb__user_top() ? hi : ncb__user_top();
	if (lo >= s.hi || (hi && hi <= lo))
		return -EINVAL;
	s.align = align;
	/* ANY takes the cheapest answer: the first fit. */
	s.place = place == NCB_PLACE_ANY ? NCB_PLACE_LOWEST : place;
	ret = walk_gaps(&s);
	if (ret)
		return ret;
	if (!s.have)
		return -ENOMEM;
	*addr = s.found;
	return 0;
}

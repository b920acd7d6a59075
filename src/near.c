/* SPDX-License-Identifier: MIT */
/*
 * Near placement: where len bytes can go with every byte of them within
 * reach of an anchor, as a JIT needs its code within rel32 reach of its
 * runtime, in this process or another; and what the window holds (its
 * free bytes, its largest gaps), so that "no room" says why.
 *
 * Reach: every byte of the block is less than within from every byte of
 * the anchor [a, b), so the block lies in [b - within, a + within).  With
 * within 2 GiB, a rel32 displacement, counted from the end of the
 * instruction, then reaches from any instruction in either to any byte of
 * the other: at most 2^31 - 2 forward, at least -2^31 back.
 *
 * A kind of instruction (ncb_reach) gives the window instead, or with
 * within too, the two together (reach.c).
 *
 * The answer is one walk of the maps with a fixed amount of state: the
 * placement rule of space.c, a count, and the NCB_NEAR_GAPS largest gaps.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

struct near {
	uint64_t lo, hi;	/* the window, clamped */
	uint64_t len;		/* whole pages */
	struct ncb__place rule;	/* the placement asked for */
	struct ncb__place low;	/* ANY: the lowest fit, if none below */
	int any;		/* ANY: rule is the highest fit below the
				   kernel's choice, low the fallback */
	struct ncb_near out;
};

/* The gap among the largest kept so far, the largest first. */
static void keep_largest(struct ncb_near *o, uint64_t s, uint64_t e)
{
	unsigned int i = o->nlisted;

	if (i == NCB_NEAR_GAPS) {
		if (e - s <= o->gaps[i - 1].end - o->gaps[i - 1].start)
			return;
		i--;
	} else {
		o->nlisted++;
	}
	/* Equal lengths keep the lower first: the walk goes upward. */
	for (; i > 0 && o->gaps[i - 1].end - o->gaps[i - 1].start < e - s;
	     i--)
		o->gaps[i] = o->gaps[i - 1];
	o->gaps[i].start = s;
	o->gaps[i].end = e;
}

static void gap(struct near *n, uint64_t s, uint64_t e)
{
	if (s < n->lo)
		s = n->lo;
	if (e > n->hi)
		e = n->hi;
	if (s >= e)
		return;
	n->out.free += e - s;
	n->out.ngaps++;
	keep_largest(&n->out, s, e);
	if (n->rule.lo < n->rule.hi)
		ncb__place_gap(&n->rule, s, e);
	if (n->any)
		ncb__place_gap(&n->low, s, e);
}

/* The window's gaps and occupants, from the mapping at or after lo. */
static int walk(struct near *n, struct ncb_maps *maps)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uint64_t prev = n->lo;
	int ret = 0;

	while (prev < n->hi && (ret = ncb_maps_next(maps, &m)) == 1) {
		if (m.start > prev)
			gap(n, prev, ncb__gap_end(&m));
		if (m.start < n->hi && m.end > n->lo)
			n->out.nmaps++;
		if (m.end > prev)
			prev = m.end;
	}
	if (ret < 0)
		return ret;
	if (prev < n->hi)
		gap(n, prev, n->hi);
	return 0;
}

/*
 * Where another process's kernel would start its top-down search cannot
 * be asked: its mmap_base lies at or above the end of the highest mapping
 * below its stack (the loader, mapped first, sits right under it).  0 if
 * there is no stack to tell by.
 */
static int search_start(pid_t pid, uint64_t *end)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	uint64_t below = 0;
	int ret;

	*end = 0;
	ret = ncb_maps_open(&maps, pid);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (!strcmp(m.path, "[stack]")) {
			*end = below;
			break;
		}
		below = m.end;
	}
	ncb_maps_close(maps);
	return ret < 0 ? ret : 0;
}

static int open_walk(pid_t pid, uint64_t lo, struct ncb_maps **maps)
{
	int ret;

	if (!pid)
		return ncb__maps_walk(maps, lo);
	ret = ncb_maps_open(maps, pid);
	if (ret)
		return ret;
	ret = ncb_maps_seek(*maps, lo);
	if (ret < 0) {
		ncb_maps_close(*maps);
		return ret;
	}
	return 0;
}

/* The rule over the window; ANY as the search from the kernel's choice. */
static int set_rule(struct near *n, pid_t pid, uint64_t align, int place)
{
	uint64_t end;
	int ret;

	n->rule = (struct ncb__place){ .lo = n->lo, .hi = n->hi,
				       .len = n->len, .align = align,
				       .place = place };
	if (place != NCB_PLACE_ANY)
		return 0;
	n->any = 1;
	n->low = n->rule;
	n->low.place = NCB_PLACE_LOWEST;
	n->rule.place = NCB_PLACE_HIGHEST;
	if (!pid) {
		end = ncb__kernel_end(n->hi, n->len);
	} else {
		ret = search_start(pid, &end);
		if (ret)
			return ret;
	}
	if (end < n->rule.hi)
		n->rule.hi = end;
	return 0;
}

/*
 * The top of another process's space: a 32-bit program's on a 64-bit
 * kernel ends at 4 GiB (its /proc/PID/exe tells the class); ours if
 * unknown.
 */
#if defined(__x86_64__)
#define COMPAT_TOP 0xffffe000ULL
#else
#define COMPAT_TOP (0x100000000ULL - ncb__probe()->page_size)
#endif

static uint64_t space_top(pid_t pid)
{
	unsigned char id[5];
	char path[32];
	ssize_t r;
	int fd;

	if (!pid || UINTPTR_MAX == 0xffffffffu)
		return ncb__user_top();
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ncb__user_top();
	r = pread(fd, id, sizeof(id), 0);
	close(fd);
	/*
	 * EI_CLASS, the byte after the magic, 1 for ELFCLASS32.  x86_64
	 * keeps the top two pages from a 32-bit task (IA32_PAGE_OFFSET,
	 * arch/x86/include/asm/page_64_types.h; 3 GiB under ADDR_LIMIT_3GB,
	 * not read here), arm64 one (TASK_SIZE_32).
	 */
	if (r == (ssize_t)sizeof(id) && !memcmp(id, "\177ELF\001", 5))
		return COMPAT_TOP;
	return ncb__user_top();
}

/*
 * The window [lo, hi) in the user address space, by whole pages, since
 * only those can be placed in; 0, or the reason nothing can fit.  An
 * empty window is shown where it meets the space.
 */
static int set_window(struct near *n, pid_t pid, uint64_t lo, uint64_t hi)
{
	uint64_t min = ncb__probe()->mmap_min_addr, top = space_top(pid);
	uint64_t mask = ncb__page_mask();
	int short_ = lo >= hi || hi - lo < n->len;

	/* Never page 0, whatever vm.mmap_min_addr: addr 0 means nowhere. */
	if (min <= mask)
		min = mask + 1;
	n->lo = lo > min ? lo : min;
	n->hi = hi < top ? hi : top;
	if (n->lo >= n->hi) {
		n->lo = n->hi = lo >= top ? top : hi <= min ? min : n->lo;
		return short_ ? NCB_NEAR_SMALL : NCB_NEAR_OUTSIDE;
	}
	/* Below the top, which is a page boundary: no overflow. */
	n->lo = (n->lo + mask) & ~mask;
	n->hi &= ~mask;
	if (n->hi < n->lo)
		n->hi = n->lo;
	return short_ || n->hi - n->lo < n->len ? NCB_NEAR_SMALL : 0;
}

static int check_args(pid_t pid, uint64_t near_lo, uint64_t near_hi,
		      uint64_t within, size_t len, struct ncb_near_opts *o,
		      const struct ncb_near_opts *opts, struct ncb_near *out)
{
	uint64_t pg = ncb__probe()->page_size, lo, hi;
	int err;

	if (ncb__out_size(out, NCB__END(ncb_near, gaps)) ||
	    ncb__opts_in(o, sizeof(*o), opts, NCB__END(ncb_near_opts, place)))
		return -EINVAL;
	/* A kind, or a machine, not known is said before any other fault. */
	if (o->reach || o->machine) {
		err = ncb__reach_window(o->machine, o->reach, 0, 1, &lo, &hi);
		if (err)
			return err;
	}
	if (!o->align)
		o->align = (size_t)pg;
	if (o->align & (o->align - 1) || o->align < pg ||
	    o->place < NCB_PLACE_ANY || o->place > NCB_PLACE_RANDOM)
		return -EINVAL;
	if (pid < 0 || !len || (!within && !o->reach) || near_hi < near_lo ||
	    within > UINT64_MAX - near_lo || near_lo == UINT64_MAX)
		return -EINVAL;
	return 0;
}

/*
 * The bytes less than within from every byte of the anchor [a, b), those
 * within the instruction's reach of it both ways, or both.  The machine
 * and kind were checked.
 */
static void window(uint64_t a, uint64_t b, uint64_t within,
		   const struct ncb_near_opts *o, uint64_t *lo, uint64_t *hi)
{
	uint64_t rlo, rhi;

	*lo = 0;
	*hi = UINT64_MAX;
	if (within) {
		*lo = b > within ? b - within : 0;
		*hi = a + within;
	}
	if (!o->reach ||
	    ncb__reach_window(o->machine, o->reach, a, b, &rlo, &rhi))
		return;
	*lo = rlo > *lo ? rlo : *lo;
	*hi = rhi < *hi ? rhi : *hi;
}

/* The result, and -ENOMEM if nothing fits. */
static int answer(struct near *n, int why, struct ncb_near *out)
{
	struct ncb_near *o = &n->out;
	const struct ncb__place *p = n->rule.have ? &n->rule : &n->low;

	o->lo = n->lo;
	o->hi = n->hi;
	if (!why && p->have) {
		o->addr = p->found;
	} else if (!why) {
		/* Without a gap as long as len, alignment is not the reason. */
		why = o->nlisted && o->gaps[0].end - o->gaps[0].start >= n->len
		      ? NCB_NEAR_ALIGN : NCB_NEAR_FULL;
	}
	o->why = why;
	ncb__out(out, o, sizeof(*o));
	return why ? -ENOMEM : 0;
}

int ncb_find_near(pid_t pid, uint64_t near_lo, uint64_t near_hi,
		  uint64_t within, size_t len,
		  const struct ncb_near_opts *opts, struct ncb_near *out)
{
	struct near n = { .out = NCB_INIT(ncb_near) };
	struct ncb_near_opts o;
	struct ncb_maps *maps;
	uint64_t lo, hi;
	int ret, why;

	ret = check_args(pid, near_lo, near_hi, within, len, &o, opts, out);
	if (ret)
		return ret;
	if (pid == getpid())
		pid = 0;
	/* A length that overflows in pages fits no window. */
	n.len = ncb__page_align(len) ? ncb__page_align(len) : UINT64_MAX;
	/* An empty anchor is the one byte at near_lo. */
	if (near_hi == near_lo)
		near_hi = near_lo + 1;
	window(near_lo, near_hi, within, &o, &lo, &hi);
	why = set_window(&n, pid, lo, hi);
	/*
	 * The maps are opened whatever the window: a process that is gone,
	 * or not the caller's to read, is said so even where nothing could
	 * fit.  A window too short still has its free space told.
	 */
	ret = open_walk(pid, n.lo, &maps);
	if (ret)
		return ret;
	if (n.lo < n.hi) {
		ret = why ? 0 : set_rule(&n, pid, o.align, o.place);
		if (!ret)
			ret = walk(&n, maps);
	}
	ncb_maps_close(maps);
	if (ret)
		return ret;
	return answer(&n, why, out);
}

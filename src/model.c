/* SPDX-License-Identifier: MIT */
/*
 * An address space with Linux's mmap rules, in memory: where mmap puts a
 * mapping (hint check, top-down gap search with the stack guard gap, THP
 * alignment of large anonymous mappings), what MAP_FIXED replaces, how
 * munmap and mprotect split areas and when adjacent areas merge, so that a
 * dump reads like /proc/PID/maps.  Sources: mm/mmap.c (do_mmap,
 * generic_get_unmapped_area_topdown, unmapped_area_topdown), mm/vma.c
 * (merging), mm/mprotect.c, Linux 6.x.
 *
 * Areas live in a treap keyed by start address.  Each node also carries the
 * free gap before it and the largest such gap in its subtree (as the
 * kernel's maple tree tracks gaps), so the gap search is logarithmic.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

/* Area flags (a subset of the kernel's vm_flags that decides merging). */
#define A_READ		0x01
#define A_WRITE		0x02
#define A_EXEC		0x04
#define A_SHARED	0x08
#define A_GROWSDOWN	0x10
#define A_ACCOUNT	0x20
#define A_NORESERVE	0x40
#define A_SPECIAL	0x80	/* [heap], [vdso], ...: never merges */
#define A_TOUCHED	0x100	/* loaded from maps: has pages, never merges */
#define A_PROT		(A_READ | A_WRITE | A_EXEC)

#define PMD_SIZE (2ULL << 20)

struct node {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;		/* in pages */
	uint64_t gap;		/* free bytes between the previous area and us */
	uint64_t max_gap;	/* largest gap in this subtree */
	uint32_t left;
	uint32_t right;
	uint32_t prio;
	uint32_t file;		/* 0: anonymous */
	uint16_t flags;
};

struct file {
	char *path;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
};

struct ncb_as {
	struct node *pool;	/* index 0 is "none" */
	uint32_t cap;
	uint32_t used;
	uint32_t free_list;
	uint32_t root;
	uint32_t count;
	uint32_t rng;
	struct file *files;	/* index 0 is "none" */
	uint32_t nfiles;
	uint32_t files_cap;
	uint64_t pg;
	uint64_t min_addr;
	uint64_t mmap_base;
	uint64_t task_size;
	uint64_t guard;
	uint32_t max_map_count;
	int thp;
	/* x86_64's [vsyscall]: above the user space, listed, never mapped. */
	struct ncb_mapping gate;
	char gate_path[16];
};

#define N(as, i) ((as)->pool[i])

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

static void pull(struct ncb_as *as, uint32_t i)
{
	struct node *n = &N(as, i);

	n->max_gap = max3(n->gap, n->left ? N(as, n->left).max_gap : 0,
			  n->right ? N(as, n->right).max_gap : 0);
}

static uint32_t rotate_right(struct ncb_as *as, uint32_t i)
{
	uint32_t l = N(as, i).left;

	N(as, i).left = N(as, l).right;
	N(as, l).right = i;
	pull(as, i);
	pull(as, l);
	return l;
}

static uint32_t rotate_left(struct ncb_as *as, uint32_t i)
{
	uint32_t r = N(as, i).right;

	N(as, i).right = N(as, r).left;
	N(as, r).left = i;
	pull(as, i);
	pull(as, r);
	return r;
}

static uint32_t t_insert(struct ncb_as *as, uint32_t t, uint32_t i)
{
	if (!t)
		return i;
	if (N(as, i).start < N(as, t).start) {
		N(as, t).left = t_insert(as, N(as, t).left, i);
		if (N(as, N(as, t).left).prio > N(as, t).prio)
			return rotate_right(as, t);
	} else {
		N(as, t).right = t_insert(as, N(as, t).right, i);
		if (N(as, N(as, t).right).prio > N(as, t).prio)
			return rotate_left(as, t);
	}
	pull(as, t);
	return t;
}

static uint32_t t_erase(struct ncb_as *as, uint32_t t, uint64_t start)
{
	uint32_t l, r;

	if (!t)
		return 0;
	if (start < N(as, t).start) {
		N(as, t).left = t_erase(as, N(as, t).left, start);
	} else if (start > N(as, t).start) {
		N(as, t).right = t_erase(as, N(as, t).right, start);
	} else {
		l = N(as, t).left;
		r = N(as, t).right;
		if (!l || !r)
			return l ? l : r;
		if (N(as, l).prio > N(as, r).prio) {
			t = rotate_right(as, t);
			N(as, t).right = t_erase(as, N(as, t).right, start);
		} else {
			t = rotate_left(as, t);
			N(as, t).left = t_erase(as, N(as, t).left, start);
		}
	}
	pull(as, t);
	return t;
}

/* Recompute the aggregates on the path to the area starting at start. */
static void t_refresh(struct ncb_as *as, uint32_t t, uint64_t start)
{
	if (!t)
		return;
	if (start < N(as, t).start)
		t_refresh(as, N(as, t).left, start);
	else if (start > N(as, t).start)
		t_refresh(as, N(as, t).right, start);
	pull(as, t);
}

/* The first area ending above addr (the kernel's find_vma). */
static uint32_t find_vma(const struct ncb_as *as, uint64_t addr)
{
	uint32_t t = as->root, best = 0;

	while (t) {
		if (N(as, t).end > addr) {
			best = t;
			t = N(as, t).left;
		} else {
			t = N(as, t).right;
		}
	}
	return best;
}

/* The last area starting below addr. */
static uint32_t find_prev(const struct ncb_as *as, uint64_t addr)
{
	uint32_t t = as->root, best = 0;

	while (t) {
		if (N(as, t).start < addr) {
			best = t;
			t = N(as, t).right;
		} else {
			t = N(as, t).left;
		}
	}
	return best;
}

static uint32_t next_of(const struct ncb_as *as, uint32_t i)
{
	uint32_t n = find_vma(as, N(as, i).end);

	return n && N(as, n).start >= N(as, i).end ? n : 0;
}

/* The gap before area i depends on its predecessor: set it. */
static void fix_gap(struct ncb_as *as, uint32_t i)
{
	uint32_t p;

	if (!i)
		return;
	p = find_prev(as, N(as, i).start);
	N(as, i).gap = N(as, i).start - (p ? N(as, p).end : 0);
	t_refresh(as, as->root, N(as, i).start);
}

static uint32_t node_alloc(struct ncb_as *as)
{
	struct node *pool;
	uint32_t i, cap;

	if (as->free_list) {
		i = as->free_list;
		as->free_list = N(as, i).left;
		return i;
	}
	if (as->used >= as->cap) {
		cap = as->cap ? 2 * as->cap : 64;
		pool = realloc(as->pool, (size_t)cap * sizeof(*pool));
		if (!pool)
			return 0;
		as->pool = pool;
		as->cap = cap;
	}
	return as->used++;
}

/* xorshift: treap priorities need only be well spread. */
static uint32_t next_prio(struct ncb_as *as)
{
	uint32_t x = as->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return as->rng = x;
}

static int area_insert(struct ncb_as *as, uint64_t start, uint64_t end,
		       uint64_t pgoff, uint32_t file, uint16_t flags)
{
	uint32_t i = node_alloc(as);

	if (!i)
		return -ENOMEM;
	memset(&N(as, i), 0, sizeof(N(as, i)));
	N(as, i).start = start;
	N(as, i).end = end;
	N(as, i).pgoff = pgoff;
	N(as, i).file = file;
	N(as, i).flags = flags;
	N(as, i).prio = next_prio(as);
	as->root = t_insert(as, as->root, i);
	as->count++;
	fix_gap(as, i);
	fix_gap(as, next_of(as, i));
	return 0;
}

static void area_erase(struct ncb_as *as, uint32_t i)
{
	uint32_t next = next_of(as, i);

	as->root = t_erase(as, as->root, N(as, i).start);
	N(as, i).left = as->free_list;
	as->free_list = i;
	as->count--;
	fix_gap(as, next);
}

static void area_set_end(struct ncb_as *as, uint32_t i, uint64_t end)
{
	uint32_t next = next_of(as, i);

	N(as, i).end = end;
	fix_gap(as, next ? next : next_of(as, i));
}

/*
 * A new start is a new key: take the node out and put it back.  The file
 * offset moves with the start (the area grows down or loses its head).
 */
static void area_set_start(struct ncb_as *as, uint32_t i, uint64_t start)
{
	struct node *n = &N(as, i);

	as->root = t_erase(as, as->root, n->start);
	if (start > n->start)
		n->pgoff += (start - n->start) / as->pg;
	else
		n->pgoff -= (n->start - start) / as->pg;
	n->start = start;
	n->left = n->right = 0;
	as->root = t_insert(as, as->root, i);
	fix_gap(as, i);
}

/* Could areas a (below) and b (above, adjacent) be one area? */
static int mergeable(const struct ncb_as *as, uint32_t a, uint16_t flags,
		     uint32_t file, uint64_t pgoff, uint64_t start)
{
	const struct node *n = &N(as, a);

	return n->end == start && n->flags == flags && n->file == file &&
	       !(flags & (A_SPECIAL | A_GROWSDOWN | A_TOUCHED)) &&
	       n->pgoff + (n->end - n->start) / as->pg == pgoff;
}

/* Could [start, end) join area b that begins right at end? */
static int mergeable_next(const struct ncb_as *as, uint32_t b, uint16_t flags,
			  uint32_t file, uint64_t pgoff, uint64_t start,
			  uint64_t end)
{
	const struct node *n = &N(as, b);

	return n->start == end && n->flags == flags && n->file == file &&
	       !(flags & (A_SPECIAL | A_GROWSDOWN | A_TOUCHED)) &&
	       pgoff + (end - start) / as->pg == n->pgoff;
}

/* Insert [start, end), merging with the neighbours as vma_merge does. */
static int area_add(struct ncb_as *as, uint64_t start, uint64_t end,
		    uint64_t pgoff, uint32_t file, uint16_t flags)
{
	uint32_t prev = find_prev(as, start), next = find_vma(as, end);
	int with_prev, with_next;

	with_prev = prev && mergeable(as, prev, flags, file, pgoff, start);
	with_next = next && mergeable_next(as, next, flags, file, pgoff, start,
					   end);
	if (with_prev && with_next) {
		uint64_t e = N(as, next).end;

		area_erase(as, next);
		area_set_end(as, prev, e);
		return 0;
	}
	if (with_prev) {
		area_set_end(as, prev, end);
		return 0;
	}
	if (with_next) {
		area_set_start(as, next, start);
		return 0;
	}
	return area_insert(as, start, end, pgoff, file, flags);
}

/* Remove [start, end) from every area, splitting those it cuts. */
static int remove_range(struct ncb_as *as, uint64_t start, uint64_t end)
{
	uint32_t i = find_vma(as, start), next;
	int err;

	while (i && N(as, i).start < end) {
		struct node n = N(as, i);

		next = next_of(as, i);
		if (n.start < start && n.end > end) {
			/* Shrink first: areas never overlap, not even here. */
			area_set_end(as, i, start);
			err = area_insert(as, end, n.end, n.pgoff +
					  (end - n.start) / as->pg, n.file,
					  n.flags);
			if (err)
				area_set_end(as, i, n.end);
			return err;
		}
		if (n.start < start)
			area_set_end(as, i, start);
		else if (n.end > end)
			area_set_start(as, i, end);
		else
			area_erase(as, i);
		i = next;
	}
	return 0;
}

int ncb_as_new(struct ncb_as **asp, const struct ncb_as_opts *o)
{
	const struct ncb_probe *p = ncb__probe();
	struct ncb_as *as;

	if (!asp || (o && o->size < offsetof(struct ncb_as_opts, thp) +
				    sizeof(int)))
		return -EINVAL;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->pg = o && o->page_size ? o->page_size : p->page_size;
	as->min_addr = o && o->mmap_min_addr ? o->mmap_min_addr
					     : p->mmap_min_addr;
	as->task_size = o && o->task_size ? o->task_size : ncb__user_top();
	as->mmap_base = o && o->mmap_base ? o->mmap_base
					  : as->task_size - (128ULL << 20);
	as->guard = o && o->stack_guard_gap ? o->stack_guard_gap
					    : 256 * as->pg;
	as->max_map_count = o && o->max_map_count ? o->max_map_count : 65530;
	as->thp = o && o->thp ? o->thp > 0 : sizeof(void *) == 8;
	if (as->pg & (as->pg - 1) || as->mmap_base > as->task_size) {
		free(as);
		return -EINVAL;
	}
	as->used = 1;
	as->nfiles = 1;
	as->rng = 0x9e3779b9u;
	*asp = as;
	return 0;
}

void ncb_as_free(struct ncb_as *as)
{
	uint32_t i;

	if (!as)
		return;
	for (i = 1; i < as->nfiles; i++)
		free(as->files[i].path);
	free(as->files);
	free(as->pool);
	free(as);
}

int ncb_as_file(struct ncb_as *as, const char *path, uint32_t dev_major,
		uint32_t dev_minor, uint64_t inode, uint32_t *id)
{
	struct file *f;
	uint32_t i;

	if (!as || !path || !id)
		return -EINVAL;
	for (i = 1; i < as->nfiles; i++) {
		f = &as->files[i];
		if (f->inode == inode && f->dev_major == dev_major &&
		    f->dev_minor == dev_minor && !strcmp(f->path, path)) {
			*id = i;
			return 0;
		}
	}
	if (as->nfiles >= as->files_cap) {
		uint32_t cap = as->files_cap ? 2 * as->files_cap : 16;

		f = realloc(as->files, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		as->files = f;
		as->files_cap = cap;
	}
	f = &as->files[as->nfiles];
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->dev_major = dev_major;
	f->dev_minor = dev_minor;
	f->inode = inode;
	*id = as->nfiles++;
	return 0;
}

static uint16_t prot_flags(int prot)
{
	return (prot & PROT_READ ? A_READ : 0) |
	       (prot & PROT_WRITE ? A_WRITE : 0) |
	       (prot & PROT_EXEC ? A_EXEC : 0);
}

/*
 * The free gap before area n, less a growing-down area's guard gap, within
 * [low, high): [*s, *e), and whether need bytes fit in it.
 */
static int gap_fits(const struct ncb_as *as, const struct node *n,
		    uint64_t low, uint64_t high, uint64_t need, uint64_t *s,
		    uint64_t *e)
{
	*s = n->start - n->gap;
	*e = n->start;
	if (n->flags & A_GROWSDOWN)
		*e = *e > as->guard ? *e - as->guard : 0;
	if (*s < low)
		*s = low;
	if (*e > high)
		*e = high;
	return *e > *s && *e - *s >= need;
}

/*
 * The highest gap in [low, high) that holds len bytes plus the alignment
 * padding, ending before any growing-down area's guard gap, as
 * unmapped_area_topdown finds it; the address is aligned down in it.
 */
static int search_rev(const struct ncb_as *as, uint32_t t, uint64_t low,
		      uint64_t high, uint64_t need, uint64_t *gap_end)
{
	const struct node *n;
	uint64_t s, e;

	if (!t || N(as, t).max_gap < need)
		return 0;
	n = &N(as, t);
	/* Gaps to the right all start at or above this area's end. */
	if (n->end < high && search_rev(as, n->right, low, high, need, gap_end))
		return 1;
	if (gap_fits(as, n, low, high, need, &s, &e)) {
		*gap_end = e;
		return 1;
	}
	/* Gaps to the left all end at or below the previous area's end. */
	if (n->start - n->gap <= low)
		return 0;
	return search_rev(as, n->left, low, high, need, gap_end);
}

/* The lowest gap in [low, high) holding need bytes (unmapped_area). */
static int search_fwd(const struct ncb_as *as, uint32_t t, uint64_t low,
		      uint64_t high, uint64_t need, uint64_t *gap_start)
{
	const struct node *n;
	uint64_t s, e;

	if (!t || N(as, t).max_gap < need)
		return 0;
	n = &N(as, t);
	if (n->start - n->gap > low &&
	    search_fwd(as, n->left, low, high, need, gap_start))
		return 1;
	if (gap_fits(as, n, low, high, need, &s, &e)) {
		*gap_start = s;
		return 1;
	}
	if (n->end >= high)
		return 0;
	return search_fwd(as, n->right, low, high, need, gap_start);
}

static int unmapped_area_topdown(const struct ncb_as *as, uint64_t len,
				 uint64_t align_mask, uint64_t low,
				 uint64_t high, uint64_t *out)
{
	uint64_t need = len + align_mask, end = 0, top, a;
	uint32_t last;

	if (need < len)
		return -ENOMEM;
	if (low < as->min_addr)
		low = as->min_addr;
	/* The space above the last area is a gap too. */
	last = find_prev(as, UINT64_MAX);
	top = last ? N(as, last).end : 0;
	if (high > top && high - (top > low ? top : low) >= need &&
	    high >= low)
		end = high;
	else if (!search_rev(as, as->root, low, high, need, &end))
		return -ENOMEM;
	a = end - len;
	a -= a & align_mask;
	*out = a;
	return 0;
}

/* The kernel's choice for a mapping without MAP_FIXED. */
static int get_unmapped_area(const struct ncb_as *as, uint64_t hint,
			     uint64_t len, int flags, uint32_t file,
			     uint64_t *out)
{
	uint32_t next, prev;
	uint64_t align = 0;
	int err;

	if (len > as->task_size - as->min_addr)
		return -ENOMEM;
	if (hint) {
		hint = (hint + as->pg - 1) & ~(as->pg - 1);
		next = find_vma(as, hint);
		prev = find_prev(as, hint);
		if (as->task_size - len >= hint && hint >= as->min_addr &&
		    (!next || hint + len <= N(as, next).start -
		     (N(as, next).flags & A_GROWSDOWN ? as->guard : 0)) &&
		    (!prev || hint >= N(as, prev).end)) {
			*out = hint;
			return 0;
		}
	}
	/*
	 * Linux 6.7: large private anonymous mappings of 64-bit tasks are
	 * THP-aligned: a gap one PMD larger is found, and the highest aligned
	 * place in it taken (__thp_get_unmapped_area); else the plain search.
	 */
	if (as->thp && !file && !(flags & MAP_SHARED) && !hint &&
	    !(len & (PMD_SIZE - 1)) &&
	    !unmapped_area_topdown(as, len + PMD_SIZE, 0, as->pg,
				   as->mmap_base, out)) {
		*out = (*out + PMD_SIZE) & ~(PMD_SIZE - 1);
		return 0;
	}
	err = unmapped_area_topdown(as, len, align, as->pg, as->mmap_base,
				    out);
	return err;
}

static int intersects(const struct ncb_as *as, uint64_t start, uint64_t end)
{
	uint32_t i = find_vma(as, start);

	return i && N(as, i).start < end;
}

int ncb_as_mmap(struct ncb_as *as, uint64_t addr, uint64_t len, int prot,
		int flags, uint32_t file, uint64_t offset, uint64_t *out)
{
	uint64_t alen, pgoff;
	uint16_t af;
	int err, type = flags & MAP_TYPE;

	if (!as || !out || (file && file >= as->nfiles))
		return -EINVAL;
	if (offset & (as->pg - 1))
		return -EINVAL;
	if (!len)
		return -EINVAL;
	if (flags & MAP_ANONYMOUS)
		file = 0;
	if (flags & NCB_MAP_FIXED_NOREPLACE)
		flags |= MAP_FIXED;
	if (!(flags & MAP_FIXED) && addr && addr < as->min_addr)
		addr = (as->min_addr + as->pg - 1) & ~(as->pg - 1);
	alen = (len + as->pg - 1) & ~(as->pg - 1);
	if (!alen)
		return -ENOMEM;
	pgoff = offset / as->pg;
	if (pgoff + alen / as->pg < pgoff)
		return -EOVERFLOW;
	if (as->count > as->max_map_count)
		return -ENOMEM;
	if (type != MAP_SHARED && type != MAP_PRIVATE &&
	    type != MAP_SHARED_VALIDATE)
		return -EINVAL;
	if (flags & MAP_FIXED) {
		if (alen > as->task_size - as->min_addr ||
		    addr > as->task_size - alen)
			return -ENOMEM;
		if (addr & (as->pg - 1))
			return -EINVAL;
		if (addr < as->min_addr)
			return -EPERM;
	} else {
		err = get_unmapped_area(as, addr, alen, flags, file, &addr);
		if (err)
			return err;
	}
	if ((flags & NCB_MAP_FIXED_NOREPLACE) &&
	    intersects(as, addr, addr + alen))
		return -EEXIST;
	af = prot_flags(prot);
	if (type != MAP_PRIVATE) {
		af |= A_SHARED;
		/* Each shared anonymous mapping is a file of its own. */
		if (!file) {
			err = ncb_as_file(as, "/dev/zero (deleted)", 0, 1,
					  as->nfiles, &file);
			if (err)
				return err;
			pgoff = 0;
		}
	} else if (!file) {
		pgoff = addr / as->pg;
	}
	if (flags & MAP_NORESERVE)
		af |= A_NORESERVE;
	else if ((af & (A_WRITE | A_SHARED)) == A_WRITE)
		af |= A_ACCOUNT;
	if (flags & MAP_GROWSDOWN)
		af |= A_GROWSDOWN;
	err = remove_range(as, addr, addr + alen);
	if (!err)
		err = area_add(as, addr, addr + alen, pgoff, file, af);
	if (!err)
		*out = addr;
	return err;
}

int ncb_as_munmap(struct ncb_as *as, uint64_t addr, uint64_t len)
{
	uint64_t alen;

	if (!as)
		return -EINVAL;
	if (addr & (as->pg - 1) || addr > as->task_size ||
	    len > as->task_size - addr)
		return -EINVAL;
	alen = (len + as->pg - 1) & ~(as->pg - 1);
	if (!alen)
		return -EINVAL;
	return remove_range(as, addr, addr + alen);
}

/* Change the protection of [start, end) within area i (mprotect_fixup). */
static int protect_piece(struct ncb_as *as, uint32_t i, uint64_t start,
			 uint64_t end, uint16_t prot)
{
	struct node n = N(as, i);
	uint16_t nf = (uint16_t)((n.flags & ~A_PROT) | prot);
	int err;

	/*
	 * Made writable, private memory is charged; made read-only, an
	 * anonymous area without pages is uncharged again (mprotect_fixup).
	 */
	if ((nf & A_WRITE) &&
	    !(n.flags & (A_ACCOUNT | A_WRITE | A_SHARED | A_NORESERVE)))
		nf |= A_ACCOUNT;
	else if (!(nf & A_WRITE) && (n.flags & A_ACCOUNT) && !n.file &&
		 !(n.flags & A_TOUCHED))
		nf &= (uint16_t)~A_ACCOUNT;
	if (nf == n.flags)
		return 0;
	/*
	 * The whole area, and neither neighbour can join it: the flags
	 * change in place, the tree and its gaps stay as they are.
	 */
	if (start == n.start && end == n.end) {
		uint32_t prev = find_prev(as, start), next = next_of(as, i);

		if (!(prev && mergeable(as, prev, nf, n.file, n.pgoff,
					start)) &&
		    !(next && mergeable_next(as, next, nf, n.file, n.pgoff,
					     start, end))) {
			N(as, i).flags = nf;
			return 0;
		}
	}
	err = remove_range(as, start, end);
	if (!err)
		err = area_add(as, start, end,
			       n.pgoff + (start - n.start) / as->pg, n.file,
			       nf);
	/* What is left of the area may now merge with the changed piece. */
	return err;
}

int ncb_as_mprotect(struct ncb_as *as, uint64_t addr, uint64_t len, int prot)
{
	uint64_t end, s, e;
	uint32_t i;
	int err;

	if (!as || addr & (as->pg - 1))
		return -EINVAL;
	if (!len)
		return 0;
	end = addr + ((len + as->pg - 1) & ~(as->pg - 1));
	if (end <= addr)
		return -ENOMEM;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	i = find_vma(as, addr);
	if (!i || N(as, i).start > addr)
		return -ENOMEM;
	for (s = addr; s < end; s = e) {
		i = find_vma(as, s);
		if (!i || N(as, i).start > s)
			return -ENOMEM;
		e = N(as, i).end < end ? N(as, i).end : end;
		err = protect_piece(as, i, s, e, prot_flags(prot));
		if (err)
			return err;
	}
	return 0;
}

static void fill(const struct ncb_as *as, uint32_t i, struct ncb_mapping *m)
{
	const struct node *n = &N(as, i);
	const struct file *f = n->file ? &as->files[n->file] : NULL;

	m->start = n->start;
	m->end = n->end;
	m->offset = f && f->path[0] != '[' && !(n->flags & A_SPECIAL)
		    ? n->pgoff * as->pg : 0;
	m->prot = (n->flags & A_READ ? PROT_READ : 0) |
		  (n->flags & A_WRITE ? PROT_WRITE : 0) |
		  (n->flags & A_EXEC ? PROT_EXEC : 0);
	m->shared = !!(n->flags & A_SHARED);
	m->dev_major = f ? f->dev_major : 0;
	m->dev_minor = f ? f->dev_minor : 0;
	m->inode = f ? f->inode : 0;
	m->path = f ? f->path : "";
}

/*
 * Where [lo, hi) has room for len bytes at the given alignment: the lowest
 * or the highest place, found through the gap augmentation.
 */
int ncb_as_find_free(const struct ncb_as *as, uint64_t lo, uint64_t hi,
		     uint64_t len, uint64_t align, int place, uint64_t *addr)
{
	uint64_t need, a, top, end;
	uint32_t last;

	if (!as || !addr || !len || (place != NCB_PLACE_LOWEST &&
				     place != NCB_PLACE_HIGHEST &&
				     place != NCB_PLACE_ANY))
		return -EINVAL;
	if (!align)
		align = as->pg;
	if (align & (align - 1) || align < as->pg)
		return -EINVAL;
	len = (len + as->pg - 1) & ~(as->pg - 1);
	if (!len)
		return -ENOMEM;
	if (!hi || hi > as->task_size)
		hi = as->task_size;
	if (lo < as->min_addr)
		lo = as->min_addr;
	if (lo >= hi)
		return -EINVAL;
	if (place == NCB_PLACE_HIGHEST)
		return unmapped_area_topdown(as, len, align - 1, lo, hi, addr);
	need = len + align - 1;
	if (need < len)
		return -ENOMEM;
	last = find_prev(as, UINT64_MAX);
	top = last ? N(as, last).end : 0;
	if (!search_fwd(as, as->root, lo, hi, need, &a)) {
		/* The space above the last area. */
		a = top > lo ? top : lo;
		end = hi;
		if (a >= end || end - a < need)
			return -ENOMEM;
	}
	*addr = (a + align - 1) & ~(align - 1);
	return 0;
}

int ncb_as_find(const struct ncb_as *as, uint64_t addr, struct ncb_mapping *m)
{
	uint32_t i;

	if (!as || !m)
		return -EINVAL;
	i = find_vma(as, addr);
	if (!i)
		return 0;
	fill(as, i, m);
	return 1;
}

int ncb__as_flags(const struct ncb_as *as, uint64_t addr)
{
	uint32_t i = find_vma(as, addr);

	return i ? N(as, i).flags : -1;
}

uint64_t ncb__as_pgoff(const struct ncb_as *as, uint64_t addr)
{
	uint32_t i = find_vma(as, addr);

	return i ? N(as, i).pgoff : 0;
}

struct check {
	uint64_t prev_end;
	uint32_t seen;
	int bad;
};

static uint64_t check_tree(const struct ncb_as *as, uint32_t t,
			   struct check *c)
{
	const struct node *n;
	uint64_t lmax, rmax;

	if (!t)
		return 0;
	n = &N(as, t);
	if ((n->left && N(as, n->left).prio > n->prio) ||
	    (n->right && N(as, n->right).prio > n->prio))
		c->bad = 1;
	lmax = check_tree(as, n->left, c);
	if (n->start < c->prev_end || n->start >= n->end ||
	    n->gap != n->start - c->prev_end)
		c->bad = 1;
	c->prev_end = n->end;
	c->seen++;
	rmax = check_tree(as, n->right, c);
	if (n->max_gap != max3(n->gap, lmax, rmax))
		c->bad = 1;
	return n->max_gap;
}

size_t ncb__as_node_size(void)
{
	return sizeof(struct node);
}

/* The tree's invariants, for tests: 0 if they hold. */
int ncb__as_check(const struct ncb_as *as)
{
	struct check c = { 0, 0, 0 };

	check_tree(as, as->root, &c);
	return c.bad || c.seen != as->count ? -EUCLEAN : 0;
}

size_t ncb_as_count(const struct ncb_as *as)
{
	return as ? as->count : 0;
}

/* Append n bytes to buf (of size bytes) at *total, as far as they fit. */
static void append(char *buf, size_t size, size_t *total, const char *s,
		   size_t n)
{
	if (buf && *total < size) {
		size_t room = size - *total;

		memcpy(buf + *total, s, n < room ? n : room);
	}
	*total += n;
}

/* One line as fs/proc/task_mmu.c prints it: the path from column 73. */
static void dump_line(const struct ncb_mapping *m, char *buf, size_t size,
		      size_t *total)
{
	static const char spaces[] = "                                        "
				     "                                  ";
	char head[128];
	int n;

	n = snprintf(head, sizeof(head), "%08llx-%08llx %c%c%c%c %08llx "
		     "%02x:%02x %llu ", (unsigned long long)m->start,
		     (unsigned long long)m->end,
		     m->prot & PROT_READ ? 'r' : '-',
		     m->prot & PROT_WRITE ? 'w' : '-',
		     m->prot & PROT_EXEC ? 'x' : '-', m->shared ? 's' : 'p',
		     (unsigned long long)m->offset, m->dev_major, m->dev_minor,
		     (unsigned long long)m->inode);
	append(buf, size, total, head, (size_t)n);
	if (*m->path) {
		if (n < 73)
			append(buf, size, total, spaces, (size_t)(73 - n));
		append(buf, size, total, m->path, strlen(m->path));
	}
	append(buf, size, total, "\n", 1);
}

size_t ncb_as_dump(const struct ncb_as *as, char *buf, size_t size)
{
	struct ncb_mapping m;
	uint64_t addr = 0;
	size_t total = 0;
	uint32_t i;

	if (!as)
		return 0;
	while ((i = find_vma(as, addr))) {
		fill(as, i, &m);
		dump_line(&m, buf, size, &total);
		addr = N(as, i).end;
	}
	if (as->gate.end)
		dump_line(&as->gate, buf, size, &total);
	/* Like snprintf: NUL-terminated when there is room, length needed. */
	if (buf && size)
		buf[total < size ? total : size - 1] = '\0';
	return total;
}

/* Areas from a /proc/PID/maps text. */
int ncb_as_load(struct ncb_as *as, const char *text, size_t len)
{
	struct ncb_mapping m;
	struct ncb_maps *maps;
	uint32_t file;
	uint16_t af;
	int ret;

	if (!as || (!text && len))
		return -EINVAL;
	ret = ncb__maps_from_text(&maps, text ? text : "", len);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		file = 0;
		/*
		 * Whether a loaded area's pages were touched (and, after
		 * fork, shared with a parent) decides whether the kernel
		 * merges it with a new neighbour; the maps do not say.  Such
		 * areas are taken as touched: they keep to themselves.
		 */
		af = prot_flags(m.prot) | (m.shared ? A_SHARED : 0) |
		     A_TOUCHED;
		if (*m.path) {
			ret = ncb_as_file(as, m.path, m.dev_major,
					  m.dev_minor, m.inode, &file);
			if (ret)
				break;
		}
		if (m.path[0] == '[')
			af |= A_SPECIAL;
		if (!strcmp(m.path, "[stack]"))
			af |= A_GROWSDOWN;
		/* Private writable memory was charged when it was mapped. */
		if ((af & (A_WRITE | A_SHARED)) == A_WRITE)
			af |= A_ACCOUNT;
		if (m.start >= as->task_size) {
			as->gate = m;
			snprintf(as->gate_path, sizeof(as->gate_path), "%s",
				 m.path);
			as->gate.path = as->gate_path;
			continue;
		}
		ret = area_insert(as, m.start, m.end, *m.path ?
				  m.offset / as->pg : m.start / as->pg,
				  file, af);
		if (ret)
			break;
	}
	ncb_maps_close(maps);
	return ret < 0 ? ret : 0;
}

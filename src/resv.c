/* SPDX-License-Identifier: MIT */
/*
 * Reservations: address space claimed no-clobber as PROT_NONE and
 * MAP_NORESERVE (it costs no memory), then committed and decommitted piece
 * by piece with MAP_FIXED, which is safe because every byte is ours.  The
 * handle remembers which pieces are committed so that overlapping commits
 * fail instead of replacing one another, and which pieces it can no longer
 * vouch for (lost), so that it never unmaps what may be another's.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "internal.h"

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

/* Window placement re-reads the maps and tries again this often. */
#define PLACE_TRIES 64

struct extent {
	uintptr_t start;
	uintptr_t end;
};

struct extents {
	struct extent *e;	/* sorted, disjoint */
	size_t n;
	size_t cap;
};

struct ncb_resv {
	uintptr_t start;
	size_t len;
	pthread_mutex_t lock;
	struct extents done;	/* committed */
	struct extents lost;	/* perhaps not ours any more */
	struct ncb_resv *prev, *next;	/* every live one */
};

/*
 * Every live reservation, so that fork can take their locks first: a
 * child forked while another thread held one would inherit it held by
 * a thread it does not have, and hang at its first use.  Nothing takes
 * live_lock while it holds a reservation's, so fork_prepare's order (the
 * list's, then each reservation's) cannot deadlock.
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncb_resv *live;
static int live_registered;		/* the handlers, under live_lock */

static void fork_prepare(void)
{
	struct ncb_resv *r;

	pthread_mutex_lock(&live_lock);
	for (r = live; r; r = r->next)
		pthread_mutex_lock(&r->lock);
}

/*
 * After the fork, on both sides: in the child, whose one thread is the
 * one that forked, the locks are its own too.
 */
static void fork_done(void)
{
	struct ncb_resv *r;

	for (r = live; r; r = r->next)
		pthread_mutex_unlock(&r->lock);
	pthread_mutex_unlock(&live_lock);
}

/*
 * The handlers, once: 0 or -ENOMEM (musl answers -1).  They go with the
 * library where dlclose unloads it (glibc's __cxa_finalize).
 */
static int live_register(void)
{
	int e;

	if (live_registered)
		return 0;
	e = pthread_atfork(fork_prepare, fork_done, fork_done);
	if (e)
		return e > 0 ? -e : -ENOMEM;
	live_registered = 1;
	return 0;
}

/*
 * Registered as the library is loaded, before the libraries built on it
 * and the program register theirs: fork runs prepare handlers newest
 * first, so theirs take their locks before ours, and a thread that
 * holds one of their locks while it calls into a reservation is never
 * left waiting on ours.  Linked statically, every constructor is the
 * program's: the first priority open to it (101) runs this one before
 * theirs.  Failing here, the first reservation tries again.
 */
__attribute__((constructor(101))) static void live_init(void)
{
	pthread_mutex_lock(&live_lock);
	(void)live_register();
	pthread_mutex_unlock(&live_lock);
}

static int live_add(struct ncb_resv *r)
{
	int err;

	pthread_mutex_lock(&live_lock);
	err = live_register();
	if (err) {
		pthread_mutex_unlock(&live_lock);
		return err;
	}
	r->next = live;
	if (live)
		live->prev = r;
	live = r;
	pthread_mutex_unlock(&live_lock);
	return 0;
}

static void live_remove(struct ncb_resv *r)
{
	pthread_mutex_lock(&live_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&live_lock);
}

static const int reserved = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

/*
 * Anywhere, aligned.  The kernel's own choice is often aligned already
 * (since Linux 6.7 it aligns large anonymous mappings for huge pages);
 * otherwise over-reserve and trim to the alignment: all of it is ours.
 */
static int reserve_aligned_once(size_t len, size_t align, uintptr_t *out)
{
	size_t pg = ncb__probe()->page_size, span = len + align - pg;
	uintptr_t p, a;

	if (span < len)
		return -ENOMEM;
	p = (uintptr_t)mmap(NULL, len, PROT_NONE, reserved, -1, 0);
	if ((void *)p == MAP_FAILED)
		return -errno;
	if (!(p & (align - 1))) {
		*out = p;
		return 0;
	}
	(void)munmap((void *)p, len);
	p = (uintptr_t)mmap(NULL, span, PROT_NONE, reserved, -1, 0);
	if ((void *)p == MAP_FAILED)
		return -errno;
	a = (p + align - 1) & ~(uintptr_t)(align - 1);
	if (a > p)
		(void)munmap((void *)p, a - p);
	if (p + span > a + len)
		(void)munmap((void *)(a + len), p + span - (a + len));
	*out = a;
	return 0;
}

/* Its mappings made and trimmed are strays for the moment. */
static int reserve_aligned(size_t len, size_t align, uintptr_t *out)
{
	int err;

	ncb__stray_begin();
	err = reserve_aligned_once(len, align, out);
	ncb__stray_end();
	return err;
}

/* The window with its defaults filled in: hi 0 is the top of the space. */
static void window(const struct ncb_resv_opts *o, uint64_t *lo, uint64_t *hi)
{
	uint64_t min = ncb__probe()->mmap_min_addr, top = ncb__user_top();

	*lo = o->lo > min ? o->lo : min;
	*hi = o->hi && o->hi < top ? o->hi : top;
}

/*
 * The kernel's own choice for NCB_PLACE_ANY, kept if it is the answer (it
 * lies in the window, aligned: the kernel's top-down search found nothing
 * higher below its start); else removed, and its end given for the search.
 * 1 if kept, 0 with *kernel_end set (0: the kernel gave nothing).
 */
static int take_kernel_choice(uint64_t lo, uint64_t hi, size_t len,
			      size_t align, uintptr_t *out,
			      uint64_t *kernel_end)
{
	uintptr_t p;

	int kept = 0;

	*kernel_end = 0;
	ncb__stray_begin();
	p = (uintptr_t)mmap(NULL, len, PROT_NONE, reserved, -1, 0);
	if ((void *)p == MAP_FAILED) {
		p = 0;
	} else if (p >= lo && p <= hi && hi - p >= len &&
		   !(p & (align - 1))) {
		*out = p;
		kept = 1;
	} else {
		(void)munmap((void *)p, len);
		*kernel_end = (uint64_t)p + len;
	}
	ncb__stray_end();
	return kept;
}

/*
 * The highest fit is most often the top of the window, [top - len, top)
 * aligned: a hint there is one atomic step that the kernel honours only
 * if the range is free and clear of a stack's guard gap, as the search
 * would judge it, and it never replaces anything.  1 if it was taken.
 */
static int take_top(uint64_t lo, uint64_t top, size_t len, size_t align,
		    uintptr_t *out)
{
	uintptr_t p, t;

	if (top < lo || top - lo < len)
		return 0;
	t = (uintptr_t)((top - len) & ~(uint64_t)(align - 1));
	if (t < lo)
		return 0;
	ncb__stray_begin();
	p = (uintptr_t)mmap((void *)t, len, PROT_NONE, reserved, -1, 0);
	if ((void *)p != MAP_FAILED && p != t)
		(void)munmap((void *)p, len);
	ncb__stray_end();
	if (p != t)
		return 0;
	*out = p;
	return 1;
}

/*
 * Where the maps hide PROT_NONE mappings (qemu-user's 32-bit guests), a
 * candidate they call free may be taken, and would be found again; one
 * the kernel will not place (EADDRNOTAVAIL, only where the flag is not
 * honoured) likewise: narrow the search past it.
 */
static void step_over(int place, uint64_t a, size_t len, size_t align,
		      uint64_t *lo, uint64_t *hi, uint64_t *kernel_end)
{
	if (place == NCB_PLACE_HIGHEST)
		*hi = a + len - align;
	else if (place == NCB_PLACE_LOWEST)
		*lo = a + align;
	else if (place == NCB_PLACE_ANY && *kernel_end >= a + len)
		*kernel_end = a + len - align;
	else if (place == NCB_PLACE_ANY)
		*lo = a + align;
}

/*
 * Candidates from the maps, each claimed no-clobber; a lost race re-reads
 * the maps.  NCB_PLACE_ANY and NCB_PLACE_HIGHEST first try the answers
 * that cost one system call: the kernel's own choice, the window's top.
 */
static int reserve_in_window(size_t len, const struct ncb_resv_opts *o,
			     size_t align, uintptr_t *out)
{
	uint64_t lo, hi, a, kernel_end = 0, top;
	int i, err = -ENOMEM;

	window(o, &lo, &hi);
	/* A window below the kernel's search start: ANY is the highest. */
	if (o->place == NCB_PLACE_ANY && hi <= ncb__mmap_base_floor())
		kernel_end = hi;
	else if (o->place == NCB_PLACE_ANY &&
		 take_kernel_choice(lo, hi, len, align, out, &kernel_end))
		return 0;
	top = o->place == NCB_PLACE_HIGHEST ? hi : 0;
	if (o->place == NCB_PLACE_ANY && kernel_end)
		top = kernel_end < hi ? kernel_end : hi;
	if (top && take_top(lo, top, len, align, out))
		return 0;
	for (i = 0; i < PLACE_TRIES; i++) {
		if (lo >= hi)
			return -ENOMEM;
		err = ncb__find_free(lo, hi, len, align, o->place, kernel_end,
				     &a);
		if (err)
			return err;
		err = ncb_core_claim((uintptr_t)a, len,
				     ncb__probe()->noreplace);
		if (!err) {
			*out = (uintptr_t)a;
			return 0;
		}
		if (err != -EEXIST && err != -EADDRNOTAVAIL)
			return err;
		if (err == -EADDRNOTAVAIL || ncb_core_maps_hide_prot_none())
			step_over(o->place, a, len, align, &lo, &hi,
				  &kernel_end);
	}
	return err == -EADDRNOTAVAIL ? -ENOMEM : -EAGAIN;
}

/*
 * Within reach of the anchor: the window narrowed to where every byte is
 * (reach.c), -ENOMEM where nothing of it is left.  An anchor without a
 * kind, or a machine without one, is a mistake.
 */
static int reach_opts(struct ncb_resv_opts *o)
{
	uint64_t lo, hi, b = o->near_hi > o->near_lo ? o->near_hi
						    : o->near_lo + 1;
	int err;

	if (!o->reach)
		return o->near_lo || o->near_hi || o->machine ? -EINVAL : 0;
	if (o->near_hi < o->near_lo || o->near_lo == UINT64_MAX)
		return -EINVAL;
	err = ncb__reach_window(o->machine, o->reach, o->near_lo, b, &lo,
				&hi);
	if (err)
		return err;
	if (lo > o->lo)
		o->lo = lo;
	if (!o->hi || hi < o->hi)
		o->hi = hi;
	/* hi 0 would mean no limit. */
	if (!o->hi || o->hi <= o->lo)
		return -ENOMEM;
	return 0;
}

static int check_opts(struct ncb_resv_opts *o,
		      const struct ncb_resv_opts *opts, size_t *align)
{
	size_t pg = ncb__probe()->page_size;

	if (ncb__opts_in(o, sizeof(*o), opts, NCB__END(ncb_resv_opts, place)))
		return -EINVAL;
	*align = o->align ? o->align : pg;
	if (*align & (*align - 1) || *align < pg)
		return -EINVAL;
	if (o->place < NCB_PLACE_ANY || o->place > NCB_PLACE_RANDOM ||
	    (o->hi && o->hi <= o->lo))
		return -EINVAL;
	return reach_opts(o);
}

static int place(void *addr, size_t len, const struct ncb_resv_opts *o,
		 size_t align, uintptr_t *out)
{
	uintptr_t a = (uintptr_t)addr;
	int err;

	if (addr) {
		if (a & (align - 1) || a < o->lo ||
		    (o->hi && (a + len > o->hi || a + len < a)))
			return -EINVAL;
		err = ncb_core_claim(a, len, ncb__probe()->noreplace);
		*out = a;
		return err;
	}
	if (o->lo || o->hi || o->place != NCB_PLACE_ANY)
		return reserve_in_window(len, o, align, out);
	return reserve_aligned(len, align, out);
}

int ncb_resv_new(struct ncb_resv **resv, void *addr, size_t len,
		 const struct ncb_resv_opts *opts)
{
	struct ncb_resv_opts o;
	struct ncb_resv *r;
	uintptr_t start = 0;
	size_t align;
	int err;

	if (!resv || !len)
		return -EINVAL;
	err = check_opts(&o, opts, &align);
	if (err)
		return err;
	len = ncb__page_align(len);
	if (!len)
		return -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	/* Listed first: a failure then has mapped nothing. */
	err = live_add(r);
	if (err)
		goto out_free;
	err = place(addr, len, &o, align, &start);
	if (err) {
		live_remove(r);
		goto out_free;
	}
	r->start = start;
	r->len = len;
	*resv = r;
	return 0;
out_free:
	pthread_mutex_destroy(&r->lock);
	free(r);
	return err;
}

void *ncb_resv_addr(const struct ncb_resv *r)
{
	return r ? (void *)r->start : NULL;
}

size_t ncb_resv_len(const struct ncb_resv *r)
{
	return r ? r->len : 0;
}

/* Index of the first extent ending above addr. */
static size_t first_after(const struct extents *x, uintptr_t addr)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->e[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Whether some extent meets [a, end). */
static int overlaps(const struct extents *x, uintptr_t a, uintptr_t end)
{
	size_t i = first_after(x, a);

	return i < x->n && x->e[i].start < end;
}

/* Room for one more extent, so that the next insert cannot fail. */
static int room_for_one(struct extents *x)
{
	struct extent *e;
	size_t cap;

	if (x->n < x->cap)
		return 0;
	cap = x->cap ? 2 * x->cap : 8;
	e = realloc(x->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	x->e = e;
	x->cap = cap;
	return 0;
}

static int insert_extent(struct extents *x, size_t at, uintptr_t start,
			 uintptr_t end)
{
	int err = room_for_one(x);

	if (err)
		return err;
	memmove(x->e + at + 1, x->e + at, (x->n - at) * sizeof(*x->e));
	x->e[at].start = start;
	x->e[at].end = end;
	x->n++;
	return 0;
}

static void remove_extent(struct extents *x, size_t at)
{
	memmove(x->e + at, x->e + at + 1, (x->n - at - 1) * sizeof(*x->e));
	x->n--;
}

/*
 * Arguments common to commit and decommit; *end is the range's end rounded
 * up to pages.  0 or -errno.
 */
static int check_range(const struct ncb_resv *r, uintptr_t a, size_t len,
		       uintptr_t *end)
{
	if (!r || !len || a & ncb__page_mask())
		return -EINVAL;
	if (a < r->start || a + len < a || a + len > r->start + r->len)
		return -ERANGE;
	*end = a + ncb__page_align(len);
	return *end > r->start + r->len ? -ERANGE : 0;
}

/*
 * A commit is made elsewhere and then moved onto its pages with mremap,
 * which takes the placeholder's place in one step.  A plain MAP_FIXED
 * over the placeholder would not do: on failure, kernels before 6.12
 * may already have unmapped it (mmap_region unmapped first, then could
 * fail in the overcommit check, in vm_area_alloc or in the file's own
 * mmap), and another thread could map in the hole before we took it back.
 * mremap with same-sized ranges fails before it unmaps the destination
 * but for ENOMEM (the map count near its limit, or no memory to copy the
 * VMA), and that is the one answer after which the pages are in doubt.
 *
 * Huge pages (mremap could not move them before 5.16, and refuses them
 * after unmapping the destination there) and device files (a driver may
 * refuse to be moved) are mapped over the placeholder directly.
 *
 * Since 6.12 (4f87153e82c4) mmap_region gathers the old mappings first
 * and puts them back when the new one is refused before they are cleared
 * (vms_gather_munmap_vmas, then the map count, may_expand_vm and the
 * overcommit check, then vms_clean_up_area).  After that only ENOMEM can
 * fail private anonymous memory (vm_area_alloc, vma_iter_prealloc: a
 * slab allocation), and it leaves the range empty.  There such memory
 * goes over the placeholder directly, in one call instead of two, and a
 * failure is looked into (kept).
 */
int ncb__resv_move_always;

/*
 * Whether a MAP_FIXED of this memory that fails leaves the old pages, or
 * an empty range only where the kernel found no memory for its own
 * structures (a VMA, the maple tree's nodes; charged to a memory cgroup,
 * to no commit limit).  Private anonymous memory since 6.12 (above: a
 * huge page's pool is reserved after the unmapping there too, and a
 * failure of it is read back like the rest); before, private anonymous
 * memory that is not charged to the commit limit, but huge pages.  A
 * mapping is charged only if writable and neither shared nor
 * MAP_NORESERVE (accountable_mapping in mm/mmap.c; overcommit_memory 2
 * ignores MAP_NORESERVE), and before 6.12 the charge, the one ENOMEM
 * after the unmapping but for the kernel's own structures, was taken
 * there (mmap_region: do_mas_munmap, then security_vm_enough_memory_mm,
 * 6.1).  A placeholder is PROT_NONE: never charged.  The map count,
 * RLIMIT_AS and the mlock limit are checked first everywhere.
 */
static int fails_cleanly(int prot, int flags)
{
	if (!(flags & MAP_ANONYMOUS) || (flags & MAP_TYPE) != MAP_PRIVATE)
		return 0;
	if (ncb_core_kernel_release() >= NCB__KERNEL(6, 12))
		return 1;
	/* hugetlb_reserve_pages comes after the unmapping. */
	return !(prot & PROT_WRITE) && !(flags & MAP_HUGETLB);
}

static int direct_safe(int prot, int flags)
{
	return !ncb__resv_move_always && fails_cleanly(prot, flags);
}

static int movable(int flags, int fd)
{
	struct statfs sfs;
	struct stat st;

	if (flags & MAP_HUGETLB)
		return 0;
	if (flags & MAP_ANONYMOUS)
		return 1;
	if (fstat(fd, &st))
		return 1;	/* EBADF: the first mmap says so */
	if (!S_ISREG(st.st_mode))
		return 0;
	/* f_type is signed on 32-bit machines; the magic is not. */
	return fstatfs(fd, &sfs) ||
	       (uint32_t)sfs.f_type != (uint32_t)HUGETLBFS_MAGIC;
}

/* Whether p was mergeable (KSM), cleared; madvise's EINTR is retried. */
static int unmerge(void *p, size_t len)
{
#ifdef MADV_UNMERGEABLE
	int r;

	do
		r = madvise(p, len, MADV_UNMERGEABLE);
	while (r && errno == EINTR);
	return !r && prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1;
#else
	(void)p;
	(void)len;
	return 0;
#endif
}

struct cover {
	uintptr_t at, end;	/* covered without a gap as far as at */
};

static int no_gap(const struct ncb_mapping *m, void *arg)
{
	struct cover *c = arg;

	if (m->start <= c->at && m->end > c->at)
		c->at = m->end;
	return 0;
}

/*
 * After a direct commit or decommit failed: whether [a, a + len) is as it
 * was (refused before the old pages were cleared: the map count, the
 * overcommit check) rather than left empty (a slab allocation failed
 * after).  Since 6.12 the kernel leaves no third state: covered without a
 * gap, it is as it was.  Another thread's mapping made in the hole since,
 * over all of it, would pass for ours: that needs a slab allocation to
 * fail and another thread to map exactly there in the same microseconds.
 * The maps unreadable: in doubt.
 */
static int kept(uintptr_t a, size_t len)
{
	struct cover c = { a, a + len };

	/*
	 * In one mapping, as a refused decommit or commit most often
	 * leaves it: the core's reader needs no memory, and answers at the
	 * map count's limit too, where ours would allocate (the maps' text,
	 * before 6.11) and find none.
	 */
	if (ncb_core_in_one_mapping(a, a + len) == 1)
		return 1;
	return ncb_maps_occupants(0, (void *)a, len, no_gap, &c) > 0 &&
	       c.at >= c.end;
}

/* Over the pages, directly: 0, or -errno with *doubt as for map_onto. */
static int map_over(uintptr_t a, size_t len, int prot, int flags, int fd,
		    off_t offset, int *doubt)
{
	int err;

	if (mmap((void *)a, len, prot, flags | MAP_FIXED, fd, offset) !=
	    MAP_FAILED)
		return 0;
	err = -errno;
	*doubt = !fails_cleanly(prot, flags) || !kept(a, len);
	return err;
}

/* Made elsewhere, then moved over the pages; as map_onto. */
static int map_moved(uintptr_t a, size_t len, int prot, int flags, int fd,
		     off_t offset, int *doubt)
{
	int err, merge, moved;
	sigset_t all, old;
	void *p;

	p = mmap(NULL, len, prot, flags, fd, offset);
	/* No room elsewhere: over the pages, then. */
	if (p == MAP_FAILED && errno == ENOMEM)
		return map_over(a, len, prot, flags, fd, offset, doubt);
	if (p == MAP_FAILED)
		return -errno;
	/*
	 * A mergeable source (PR_SET_MEMORY_MERGE makes every new VMA so)
	 * has move_vma break its KSM pages after mremap_to has discarded
	 * the destination, and that stops with -ERESTARTSYS on a signal:
	 * EINTR with a hole, or a restart that discards the destination
	 * again, whoever has mapped there since.  Unmerge it first (its
	 * own EINTR touches nothing: try again).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	merge = unmerge(p, len);
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		       (void *)a) != MAP_FAILED;
	err = moved ? 0 : -errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (moved) {
		if (merge)
			(void)madvise((void *)a, len, MADV_MERGEABLE);
		return 0;
	}
	(void)munmap(p, len);
	/* Any failure may come after the destination was discarded. */
	*doubt = 1;
	return err;
}

/*
 * 0, or -errno with *doubt set when the pages may have been unmapped.
 * The source of a move sits where the kernel chose until it moves: a
 * stray for the moment.
 */
static int map_onto(uintptr_t a, size_t len, int prot, int flags, int fd,
		    off_t offset, int *doubt)
{
	int err;

	*doubt = 0;
	if (direct_safe(prot, flags) || !movable(flags, fd))
		return map_over(a, len, prot, flags, fd, offset, doubt);
	ncb__stray_begin();
	err = map_moved(a, len, prot, flags, fd, offset, doubt);
	ncb__stray_end();
	return err;
}

/*
 * After a failure that may have unmapped [a, end): take it back
 * no-clobber.  Taken: ours again.  Refused: our placeholder may still be
 * there (the failure came first) or another thread may have mapped in
 * the hole; they cannot be told apart, so the pages are given up as lost
 * rather than risk unmapping another's memory at release.
 */
static void take_back(struct ncb_resv *r, uintptr_t a, uintptr_t end)
{
	size_t at;

	if (!ncb_core_claim(a, end - a, ncb__probe()->noreplace))
		return;
	at = first_after(&r->lost, a);
	/* Its room was made before the kernel was asked. */
	(void)insert_extent(&r->lost, at, a, end);
}

int ncb_resv_commit(struct ncb_resv *r, void *addr, size_t len, int prot,
		    int flags, int fd, off_t offset)
{
	uintptr_t a = (uintptr_t)addr, end;
	int err, doubt;
	size_t at;

	err = check_range(r, a, len, &end);
	if (err)
		return err;
	flags &= ~(MAP_FIXED | NCB_MAP_FIXED_NOREPLACE);
	pthread_mutex_lock(&r->lock);
	at = first_after(&r->done, a);
	if ((at < r->done.n && r->done.e[at].start < end) ||
	    overlaps(&r->lost, a, end)) {
		err = -EEXIST;
		goto out;
	}
	/*
	 * Room first, so that a mapping is never left untracked, nor pages
	 * given up unrecorded (release would unmap them).
	 */
	err = room_for_one(&r->lost);
	if (!err)
		err = insert_extent(&r->done, at, a, end);
	if (err)
		goto out;
	err = map_onto(a, end - a, prot, flags, fd, offset, &doubt);
	if (err) {
		remove_extent(&r->done, at);
		if (doubt)
			take_back(r, a, end);
	}
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* Whether forgetting [a, end) cuts an extent in two. */
static int splits(const struct extents *x, uintptr_t a, uintptr_t end)
{
	size_t i = first_after(x, a);

	return i < x->n && x->e[i].start < a && x->e[i].end > end;
}

/*
 * Forget [a, end) in the committed set, splitting an extent if need be:
 * the room for that was made first (splits), so nothing can fail.
 */
static void forget(struct extents *x, uintptr_t a, uintptr_t end)
{
	size_t i = first_after(x, a);

	if (splits(x, a, end)) {
		(void)insert_extent(x, i + 1, end, x->e[i].end);
		x->e[i].end = a;
		return;
	}
	if (i < x->n && x->e[i].start < a) {
		x->e[i].end = a;
		i++;
	}
	while (i < x->n && x->e[i].end <= end)
		remove_extent(x, i);
	if (i < x->n && x->e[i].start < end)
		x->e[i].start = end;
}

int ncb_resv_decommit(struct ncb_resv *r, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, end;
	int err, doubt;

	err = check_range(r, a, len, &end);
	if (err)
		return err;
	pthread_mutex_lock(&r->lock);
	if (overlaps(&r->lost, a, end)) {
		err = -EEXIST;
		goto out;
	}
	/*
	 * Room first (for a split, and for pages given up): the books
	 * change after the kernel's answer, and then cannot fail.  Refused
	 * cleanly, the pages are still committed, their contents intact,
	 * and the books say so; in doubt, they are committed no more: taken
	 * back, or given up.
	 */
	err = room_for_one(&r->lost);
	if (!err && splits(&r->done, a, end))
		err = room_for_one(&r->done);
	if (err)
		goto out;
	err = map_onto(a, end - a, PROT_NONE, reserved, -1, 0, &doubt);
	if (!err || doubt)
		forget(&r->done, a, end);
	if (err && doubt)
		take_back(r, a, end);
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* The reservation goes, but for the pages it can no longer vouch for. */
int ncb_resv_release(struct ncb_resv *r)
{
	uintptr_t a, end = r ? r->start + r->len : 0;
	size_t i;
	int err = 0;

	if (!r)
		return -EINVAL;
	live_remove(r);
	for (a = r->start, i = 0; a < end; i++) {
		uintptr_t to = i < r->lost.n ? r->lost.e[i].start : end;

		if (to > a && munmap((void *)a, to - a) && !err)
			err = -errno;
		a = i < r->lost.n ? r->lost.e[i].end : end;
	}
	pthread_mutex_destroy(&r->lock);
	free(r->done.e);
	free(r->lost.e);
	free(r);
	return err;
}

/* SPDX-License-Identifier: MIT */
/*
 * Reservations: address space claimed no-clobber as PROT_NONE and
 * MAP_NORESERVE (it costs no memory), then committed and decommitted piece
 * by piece with MAP_FIXED, which is safe because every byte is ours.  The
 * handle remembers which pieces are committed so that overlapping commits
 * fail instead of replacing one another.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Window placement re-reads the maps and tries again this often. */
#define PLACE_TRIES 64

struct extent {
	uintptr_t start;
	uintptr_t end;
};

struct ncb_resv {
	uintptr_t start;
	size_t len;
	pthread_mutex_t lock;
	struct extent *ext;	/* committed, sorted, disjoint */
	size_t n;
	size_t cap;
};

static const int reserved = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

/*
 * Anywhere, aligned.  The kernel's own choice is often aligned already
 * (since Linux 6.7 it aligns large anonymous mappings for huge pages);
 * otherwise over-reserve and trim to the alignment: all of it is ours.
 */
static int reserve_aligned(size_t len, size_t align, uintptr_t *out)
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

/* A hint answer that lies in [lo, hi) and is aligned is ours to keep. */
static int take_hint(uint64_t lo, uint64_t hi, size_t len, size_t align,
		     uintptr_t *out)
{
	uint64_t top = hi ? hi : ncb__user_top();
	uintptr_t p;

	if (lo < ncb__probe()->mmap_min_addr)
		lo = ncb__probe()->mmap_min_addr;
	lo = (lo + align - 1) & ~(uint64_t)(align - 1);
	if (lo >= top || top - lo < len || lo != (uintptr_t)lo)
		return 0;
	p = (uintptr_t)mmap((void *)(uintptr_t)lo, len, PROT_NONE, reserved,
			    -1, 0);
	if ((void *)p == MAP_FAILED)
		return 0;
	if (p >= lo && p + len <= top && !(p & (align - 1))) {
		*out = p;
		return 1;
	}
	(void)munmap((void *)p, len);
	return 0;
}

/*
 * Candidates from the maps, each claimed no-clobber; a lost race re-reads
 * the maps.  A candidate the kernel will not place (EADDRNOTAVAIL, only
 * where the flag is not honoured) is stepped over.
 */
static int reserve_in_window(size_t len, const struct ncb_resv_opts *o,
			     size_t align, uintptr_t *out)
{
	uint64_t lo = o->lo, hi = o->hi, a;
	int i, err = -ENOMEM;

	/*
	 * Any place will do: first ask the kernel for the window's start,
	 * in one atomic step; it may give that, or another place that
	 * happens to fit.  Walking the maps costs a step per mapping.
	 */
	if (o->place == NCB_PLACE_ANY && take_hint(lo, hi, len, align, out))
		return 0;
	for (i = 0; i < PLACE_TRIES; i++) {
		err = ncb_find_free(lo, hi, len, align, o->place, &a);
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
		/*
		 * Where the maps hide PROT_NONE mappings (qemu-user's 32-bit
		 * guests), a candidate they call free may be taken, and will
		 * be found again: step over it as over a refused one.
		 */
		if (err == -EADDRNOTAVAIL || ncb_core_maps_hide_prot_none()) {
			if (o->place == NCB_PLACE_HIGHEST)
				hi = a + len - align;
			else if (o->place != NCB_PLACE_RANDOM)
				lo = a + align;
		}
	}
	return err == -EADDRNOTAVAIL ? -ENOMEM : -EAGAIN;
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
	return 0;
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
	err = place(addr, len, &o, align, &start);
	if (err) {
		free(r);
		return err;
	}
	r->start = start;
	r->len = len;
	pthread_mutex_init(&r->lock, NULL);
	*resv = r;
	return 0;
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
static size_t first_after(const struct ncb_resv *r, uintptr_t addr)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ext[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int insert_extent(struct ncb_resv *r, size_t at, uintptr_t start,
			 uintptr_t end)
{
	struct extent *e;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;

		e = realloc(r->ext, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		r->ext = e;
		r->cap = cap;
	}
	memmove(r->ext + at + 1, r->ext + at, (r->n - at) * sizeof(*r->ext));
	r->ext[at].start = start;
	r->ext[at].end = end;
	r->n++;
	return 0;
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
 * After a failed MAP_FIXED over our own range, make sure the range is ours
 * again: kernels before 6.12 may already have removed the placeholder, and
 * a plain MAP_FIXED here could replace a mapping another thread just made.
 */
static void restore(uintptr_t a, size_t len)
{
	(void)ncb__mmap_mode((void *)a, len, PROT_NONE, reserved, -1, 0,
			     ncb__probe()->noreplace);
}

int ncb_resv_commit(struct ncb_resv *r, void *addr, size_t len, int prot,
		    int flags, int fd, off_t offset)
{
	uintptr_t a = (uintptr_t)addr, end;
	size_t at;
	void *p;
	int err;

	err = check_range(r, a, len, &end);
	if (err)
		return err;
	flags &= ~(MAP_FIXED | NCB_MAP_FIXED_NOREPLACE);
	pthread_mutex_lock(&r->lock);
	at = first_after(r, a);
	if (at < r->n && r->ext[at].start < end) {
		err = -EEXIST;
		goto out;
	}
	/* Room first, so that a mapping is never left untracked. */
	err = insert_extent(r, at, a, end);
	if (err)
		goto out;
	p = mmap(addr, len, prot, flags | MAP_FIXED, fd, offset);
	if (p == MAP_FAILED) {
		err = -errno;
		memmove(r->ext + at, r->ext + at + 1,
			(r->n - at - 1) * sizeof(*r->ext));
		r->n--;
		restore(a, end - a);
	}
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* Forget [a, end) in the committed set, splitting an extent if need be. */
static int forget(struct ncb_resv *r, uintptr_t a, uintptr_t end)
{
	size_t i = first_after(r, a);
	int err;

	if (i < r->n && r->ext[i].start < a && r->ext[i].end > end) {
		err = insert_extent(r, i + 1, end, r->ext[i].end);
		if (err)
			return err;
		r->ext[i].end = a;
		return 0;
	}
	if (i < r->n && r->ext[i].start < a) {
		r->ext[i].end = a;
		i++;
	}
	while (i < r->n && r->ext[i].end <= end) {
		memmove(r->ext + i, r->ext + i + 1,
			(r->n - i - 1) * sizeof(*r->ext));
		r->n--;
	}
	if (i < r->n && r->ext[i].start < end)
		r->ext[i].start = end;
	return 0;
}

int ncb_resv_decommit(struct ncb_resv *r, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, end;
	int err;

	err = check_range(r, a, len, &end);
	if (err)
		return err;
	pthread_mutex_lock(&r->lock);
	/* Bookkeeping first: it is the only step that can fail cleanly. */
	err = forget(r, a, end);
	if (!err && mmap(addr, end - a, PROT_NONE, reserved | MAP_FIXED, -1,
			 0) == MAP_FAILED)
		err = -errno;
	pthread_mutex_unlock(&r->lock);
	return err;
}

int ncb_resv_release(struct ncb_resv *r)
{
	int err = 0;

	if (!r)
		return -EINVAL;
	if (munmap((void *)r->start, r->len))
		err = -errno;
	pthread_mutex_destroy(&r->lock);
	free(r->ext);
	free(r);
	return err;
}

/* SPDX-License-Identifier: MIT */
/*
 * The placements that replace by rule: mremap with MREMAP_FIXED (and
 * MREMAP_DONTUNMAP), shmat with SHM_REMAP, and MAP_FIXED itself, which
 * replace exactly the pages of their range and nothing else; and the
 * errors that come before any replacement.
 */
#include <stdint.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include "conform.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef SHM_REMAP
#define SHM_REMAP 040000
#endif

#define MOVE (MREMAP_MAYMOVE | MREMAP_FIXED)

/* A source of two marked pages at w + pg and the window's 8 pages. */
static char *source(struct cctx *c, struct occ *src)
{
	char *w = free_window(c, 8 * c->pg);

	if (!w || occ_make(c, src, w + c->pg, 2 * c->pg, RW, 0))
		return NULL;
	return w;
}

/*
 * A move's answer: at dest with the source's bytes (over occ, if any:
 * replaced), the source gone unless kept (then mapped and empty).
 */
static void judge_move(struct cctx *c, long r, const struct occ *src,
		       char *dest, const struct occ *occ, int kept)
{
	struct occ moved = *src;

	if ((unsigned long)r >= -4095UL) {
		if (occ && !occ_intact(occ))
			got(c, A_REPLACED, "failed with %s, but the "
			    "destination's occupant was changed",
			    err_name((int)-r));
		else if (!occ_intact(src))
			got(c, A_BROKEN, "failed with %s, but the source "
			    "was changed", err_name((int)-r));
		else
			got_err(c, (int)-r);
		return;
	}
	moved.a = (char *)r;
	if ((char *)r != dest)
		got(c, A_ELSEWHERE, "moved to %p, not %p", (void *)r,
		    (void *)dest);
	else if (!occ_intact(&moved))
		got(c, A_BROKEN, "the moved pages lost their bytes");
	else if (kept && !mapped_all(src->a, src->len))
		got(c, A_BROKEN, "MREMAP_DONTUNMAP unmapped the source");
	else if (!kept && mapped_any(src->a, src->len))
		got(c, A_BROKEN, "the source is still mapped");
	else if (occ)
		got(c, A_REPLACED, "moved over the occupant at %p",
		    (void *)occ->a);
	else
		got(c, A_AT, NULL);
}

/*
 * The source moved with the case's flags (arg[0]: 0 for MREMAP_MAYMOVE |
 * MREMAP_FIXED) to the window's page arg[1] (plus arg[2] bytes), over an
 * occupant of two pages there if arg[3].
 */
static void move(struct cctx *c)
{
	const int *g = c->cc->arg;
	int flags = g[0] ? g[0] : MOVE;
	struct occ src, o;
	char *w = source(c, &src), *to;

	if (!w)
		return;
	to = w + (size_t)g[1] * c->pg + (size_t)g[2];
	if (g[3] && occ_make(c, &o, to + c->pg, 2 * c->pg, RW, 0))
		return;
	judge_move(c, sys_mremap(src.a, src.len, src.len, flags, to), &src,
		   to, g[3] ? &o : NULL, !!(flags & MREMAP_DONTUNMAP));
}

/* No source at all, and a destination past TASK_SIZE. */
static void mremap_dest_first(struct cctx *c)
{
	char *w = free_window(c, 2 * c->pg);
	char *last = (char *)(UINTPTR_MAX & ~(uintptr_t)(c->pg - 1));
	long r = sys_mremap(w, c->pg, c->pg, MOVE, last);

	if ((unsigned long)r >= -4095UL)
		got_err(c, (int)-r);
	else
		got(c, A_ELSEWHERE, "moved nothing to %p", (void *)r);
}

/* A segment of one page, marked for removal once attached. */
static int segment(struct cctx *c)
{
	int id = shmget(IPC_PRIVATE, c->pg, IPC_CREAT | 0600);

	if (id < 0)
		skip(c, "shmget: %s (no System V shared memory here)",
		     err_name(errno));
	return id;
}

/*
 * An address shmat takes: aligned to SHMLBA, which is more than a page
 * where caches alias (32-bit arm: four pages, as its compat ABI).
 */
static char *shm_addr(struct cctx *c)
{
	uintptr_t lba = (uintptr_t)SHMLBA;
	char *w = free_window(c, 3 * lba);

	return w ? (char *)(((uintptr_t)w + lba - 1) & ~(lba - 1)) : NULL;
}

/* shmat at an address, over an occupant's page if arg[0]; arg[1] its flags. */
static void shm(struct cctx *c)
{
	int occupied = c->cc->arg[0], flags = c->cc->arg[1];
	char *a = shm_addr(c);
	int id = a ? segment(c) : -1;
	struct occ o;
	void *p;

	if (id < 0)
		return;
	if (occupied && occ_make(c, &o, a, c->pg, RW, 0)) {
		shmctl(id, IPC_RMID, NULL);
		return;
	}
	p = shmat(id, a, flags);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		judge_place(c, -errno, a, c->pg, occupied ? &o : NULL);
		return;
	}
	if (p != a)
		got(c, A_ELSEWHERE, "attached at %p, not %p", p, (void *)a);
	else if (occupied && occ_intact(&o))
		got(c, A_BROKEN, "attached at %p, but the occupant's bytes "
		    "are still there", p);
	else if (occupied)
		got(c, A_REPLACED, "attached over the occupant at %p", p);
	else
		got(c, A_AT, NULL);
	shmdt(p);
}

/* The occupant's bytes gone: an answer of its address alone is not. */
static void fixed_replaces(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	struct occ o;
	long r;

	if (!w || occ_make(c, &o, w + c->pg, 2 * c->pg, RW, 0))
		return;
	r = sys_mmap(w + c->pg, 2 * c->pg, RW, PLACE_ANON | MAP_FIXED, -1, 0);
	if (r == (long)o.a && occ_intact(&o))
		got(c, A_BROKEN, "mapped at %p, but the occupant's bytes are "
		    "still there", (void *)o.a);
	else
		judge_place(c, r, o.a, o.len, &o);
}

/*
 * MAP_FIXED over part of a mapping replaces that part alone: the pages
 * either side keep their bytes.  With a length off a page (arg[0] bytes
 * more than one), the last page is replaced whole and the next one kept.
 */
static void fixed_part(struct cctx *c)
{
	size_t pg = c->pg, len = pg + (size_t)c->cc->arg[0],
	       n = (len + pg - 1) / pg;
	char *w = free_window(c, 8 * pg);
	struct occ o, head, tail;
	long r;

	if (!w || occ_make(c, &o, w + pg, (n + 2) * pg, RW, 0))
		return;
	head = tail = o;
	head.len = tail.len = pg;
	tail.a = w + (n + 2) * pg;
	r = sys_mmap(w + 2 * pg, len, PROT_READ, PLACE_ANON | MAP_FIXED, -1,
		     0);
	if ((char *)r != w + 2 * pg)
		got(c, A_BROKEN, "MAP_FIXED %s", (unsigned long)r >= -4095UL ?
		    err_name((int)-r) : "mapped elsewhere");
	else if (!occ_intact(&head) || !occ_intact(&tail))
		got(c, A_BROKEN, "a page %s the range was replaced too",
		    occ_intact(&head) ? "after" : "before");
	else if (!mapped_all(w + 2 * pg, n * pg) ||
		 mprotect(w + 2 * pg, n * pg, PROT_READ) ||
		 ((unsigned char *)w)[2 * pg + len - 1] != 0)
		got(c, A_BROKEN, "the range is not the new mapping's");
	else
		got(c, A_HOLDS, NULL);
}

#define MREMAP(n, fn, r, src, k, e, g, ...) { "mremap." n, G_MREMAP, r, \
	src, k, e, { __VA_ARGS__ }, fn, g }

const struct ccase move_cases[] = {
	MREMAP("fixed", move, "MREMAP_FIXED moves exactly to a free "
	       "destination", "mm/mremap.c: mremap_to", A_AT, 0,
	       ARG(0, 4, 0, 0), { 0 }),
	MREMAP("fixed-replaces", move, "MREMAP_FIXED replaces what is at "
	       "the destination", "mm/mremap.c: mremap_to (do_munmap of the "
	       "destination)", A_REPLACED, 0, ARG(0, 4, 0, 1), { 0 }),
	MREMAP("fixed-needs-maymove", move, "MREMAP_FIXED without "
	       "MREMAP_MAYMOVE: EINVAL", "mm/mremap.c: mremap", A_ERR, EINVAL,
	       ARG(MREMAP_FIXED, 4, 0, 0), { 0 }),
	MREMAP("overlap", move, "a destination overlapping the source: "
	       "EINVAL", "mm/mremap.c: mremap_to", A_ERR, EINVAL,
	       ARG(0, 2, 0, 0), { 0 }),
	MREMAP("unaligned", move, "a destination off a page boundary: "
	       "EINVAL", "mm/mremap.c: mremap_to", A_ERR, EINVAL,
	       ARG(0, 4, 1, 0), { 0 }),
	MREMAP("destination-first", mremap_dest_first, "a destination past "
	       "TASK_SIZE is EINVAL before the source is looked up",
	       "mm/mremap.c: check_mremap_params (6.17)", A_ERR, EINVAL,
	       ARG(0, 0, 0, 0), { 0, KV(6, 17), A_ERR, EFAULT, "before "
				  "Linux 6.17 the source is looked up first "
				  "(6.12's mremap: vma_lookup, then "
				  "mremap_to)" }),
	MREMAP("dontunmap", move, "MREMAP_DONTUNMAP moves the pages and "
	       "keeps the source mapped, empty", "mm/mremap.c: move_vma "
	       "(e346b3813067, 5.7)", A_AT, 0,
	       ARG(MOVE | MREMAP_DONTUNMAP, 4, 0, 0),
	       { 0, KV(5, 7), A_ERR, EINVAL, "MREMAP_DONTUNMAP is Linux "
		 "5.7's" }),
	{ "shm.free", G_SHM, "shmat at a free address attaches exactly "
	  "there", "ipc/shm.c: do_shmat", A_AT, 0, { { 0 } }, shm,
	  ARG(0, 0) },
	{ "shm.occupied", G_SHM, "shmat over a mapping without SHM_REMAP: "
	  "EINVAL", "ipc/shm.c: do_shmat (find_vma_intersection)", A_ERR,
	  EINVAL, { { 0 } }, shm, ARG(1, 0) },
	{ "shm.remap", G_SHM, "shmat with SHM_REMAP replaces what is there",
	  "ipc/shm.c: do_shmat (MAP_FIXED)", A_REPLACED, 0, { { 0 } }, shm,
	  ARG(1, SHM_REMAP) },
	{ "fixed.replaces", G_FIXED, "MAP_FIXED replaces what is in its "
	  "range", "mm/mmap.c: mmap_region (the old range unmapped)",
	  A_REPLACED, 0, { { 0 } }, fixed_replaces, { 0 } },
	{ "fixed.splits", G_FIXED, "MAP_FIXED over part of a mapping keeps "
	  "the pages either side", "mm/vma.c: vms_gather_munmap_vmas "
	  "(split at both ends)", A_HOLDS, 0, { { 0 } }, fixed_part,
	  ARG(0) },
	{ "fixed.rounds", G_FIXED, "a length off a page replaces its last "
	  "page whole, and no more", "mm/mmap.c: do_mmap (PAGE_ALIGN(len))",
	  A_HOLDS, 0, { { 0 } }, fixed_part, ARG(1) },
	{ NULL, 0, NULL, NULL, 0, 0, { { 0 } }, NULL, { 0 } },
};

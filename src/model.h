/* SPDX-License-Identifier: MIT */
/*
 * The address-space model's store: areas sorted by address in a B+ tree
 * whose inner nodes keep, for each child, its first start address and the
 * largest free gap inside it (as the kernel's maple tree keeps gaps), so
 * that look-ups, changes and gap searches all cost one root-to-leaf walk.
 */
#ifndef NCB_MODEL_H
#define NCB_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

/* Area flags (a subset of the kernel's vm_flags that decides merging). */
#define A_READ		0x01
#define A_WRITE		0x02
#define A_EXEC		0x04
#define A_SHARED	0x08
#define A_GROWSDOWN	0x10
#define A_ACCOUNT	0x20
#define A_NORESERVE	0x40
#define A_SPECIAL	0x80	/* [vdso], [vvar], ...: never merges */
#define A_TOUCHED	0x100	/* loaded from maps: has pages (an anon_vma) */
#define A_DROPPABLE	0x200	/* MAP_DROPPABLE memory */
#define A_PROT		(A_READ | A_WRITE | A_EXEC)

struct area {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;		/* in pages */
	uint32_t file;		/* 0: anonymous */
	uint16_t flags;
	/*
	 * A_TOUCHED: which loaded area this is (a piece of), standing for
	 * its anon_vma; 0 for none known.  Pieces of one share it and may
	 * merge again, as in the kernel; other touched areas never do.
	 */
	uint16_t origin;
};

struct mt_node;
struct mt_leaf;

struct mtree {
	struct mt_node *root;
	size_t count;
	size_t bytes;		/* held by nodes */
};

/* A position: an area, or the place before which one would go. */
struct mt_cur {
	struct mt_leaf *leaf;
	unsigned int i;
};

NCB_HIDDEN int ncb__mt_init(struct mtree *t);
NCB_HIDDEN void ncb__mt_destroy(struct mtree *t);

/* The first area ending above addr (the kernel's find_vma), or NULL. */
NCB_HIDDEN struct area *ncb__mt_find(const struct mtree *t, uint64_t addr,
				     struct mt_cur *c);
NCB_HIDDEN struct area *ncb__mt_at(const struct mt_cur *c);
NCB_HIDDEN struct area *ncb__mt_next(struct mt_cur *c);
NCB_HIDDEN struct area *ncb__mt_prev(struct mt_cur *c);
NCB_HIDDEN struct area *ncb__mt_last(const struct mtree *t,
				     struct mt_cur *c);

/*
 * Insert before the cursor (which must be where the area sorts); the
 * cursor is then invalid.  0 or -ENOMEM, the tree unchanged on failure.
 */
NCB_HIDDEN int ncb__mt_insert(struct mtree *t, const struct mt_cur *c,
			      const struct area *a);
/*
 * Remove the area at the cursor; the cursor is then invalid.  Every change
 * to an area before must have been reported with ncb__mt_changed: the gaps
 * are carried up from what changes here, not recomputed.
 */
NCB_HIDDEN void ncb__mt_erase(struct mtree *t, const struct mt_cur *c);
/* The area at the cursor changed its start or end (order kept). */
NCB_HIDDEN void ncb__mt_changed(struct mtree *t, const struct mt_cur *c);

/*
 * Gap searches over [low, high): the highest gap end, or the lowest gap
 * start, of a gap holding need bytes, where the gap before an area that
 * grows down stops guard bytes short of it.  1 found, 0 none.
 */
NCB_HIDDEN int ncb__mt_gap_rev(const struct mtree *t, uint64_t low,
			       uint64_t high, uint64_t need, uint64_t guard,
			       uint64_t *end);
NCB_HIDDEN int ncb__mt_gap_fwd(const struct mtree *t, uint64_t low,
			       uint64_t high, uint64_t need, uint64_t guard,
			       uint64_t *start);

/* The tree's invariants: 0 if they all hold. */
NCB_HIDDEN int ncb__mt_check(const struct mtree *t);

#endif /* NCB_MODEL_H */

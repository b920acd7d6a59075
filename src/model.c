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
 * Areas live in a B+ tree that also tracks free gaps (model-tree.c), so
 * look-ups, changes and the gap search are logarithmic.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model.h"

#define PMD_SIZE (2ULL << 20)

/* Linux 6.11's map type; Debian 12's headers lack it. */
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

/*
 * Files come in two kinds that never meet in a look-up: those the caller
 * names (ncb_as_file, and every path ncb_as_load reads), found by path,
 * device and inode; and those the model makes for shared anonymous
 * mappings, one per mmap as the kernel's shmem gives, which nothing can
 * find.  A made file still prints as the kernel's do, "/dev/zero
 * (deleted)" on 00:01, with an inode number no other file of that name
 * holds: the kernel's are unique, so a dump read back must not join them.
 */
struct file {
	const char *path;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	uint32_t hash;
	uint32_t made;		/* a shared anonymous mapping's own */
};

static const char anon_path[] = "/dev/zero (deleted)";

struct ncb_as {
	struct mtree t;
	struct file *files;	/* index 0 is "none" */
	uint32_t nfiles;
	uint32_t files_cap;
	/*
	 * Open addressing with linear probing over the files' printed keys
	 * (path, device, inode), each key once: file numbers, 0 for empty.
	 * Kept at most half full, so a probe ends within a few slots.
	 */
	uint32_t *index;
	size_t index_cap;	/* 0 or a power of two */
	size_t file_bytes;	/* held by the files and the index */
	uint64_t anon_ino;	/* the next inode to try for a made file */
	uint64_t pg;
	uint64_t min_addr;
	uint64_t mmap_base;
	uint64_t task_size;
	uint64_t guard;
	uint32_t max_map_count;
	uint32_t rel;		/* the release whose rules apply */
	int thp;
	uint64_t start_brk;	/* 0: no program break known */
	uint64_t brk;
	uint32_t origins;	/* loaded areas numbered so far */
	/* x86_64's [vsyscall]: above the user space, listed, never mapped. */
	struct ncb_mapping gate;
	char gate_path[16];
};

/*
 * The rules that differ between the releases the model knows, each by the
 * mainline release that first had the change and the stable releases it
 * was taken back to (the first patch level of each series with it).  A
 * release is major << 16 | minor << 8 | patch, as ncb_core_kernel_release
 * gives it.
 */
#define REL(major, minor, patch) \
	((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(patch))

struct change {
	uint32_t mainline;
	uint32_t stable[2];
};

/*
 * efa7df3e3bb5 ("mm: align larger anonymous mappings on THP boundaries"):
 * a private anonymous mapping of 2 MiB or more is placed on a PMD boundary.
 */
static const struct change thp_anon = { REL(6, 7, 0), { 0 } };

/*
 * 4ef9ad19e176 ("mm: huge_memory: don't force huge page alignment on 32
 * bit"), 6.8: not for 32-bit tasks.
 */
static const struct change thp_64bit_only = { REL(6, 8, 0), { 0 } };

/*
 * 96204e15310c ("mm: thp_get_unmapped_area must honour topdown
 * preference"), 6.8: a padded range found top-down that is already
 * aligned gives its highest aligned place, not its lowest.
 */
static const struct change thp_topdown = { REL(6, 8, 0), { 0 } };

/*
 * d4148aeab412 ("mm, mmap: limit THP alignment of anonymous mappings to
 * PMD-aligned sizes"): only lengths that are a multiple of 2 MiB.
 */
static const struct change thp_pmd_sizes = { REL(6, 12, 0), { 0 } };

/*
 * 249608ee4713 ("mm: respect mmap hint address when aligning for THP"):
 * a hint keeps the plain search (6.12.5 has it too).
 */
static const struct change thp_not_hint = { REL(6, 13, 0),
					    { REL(6, 12, 5) } };

/*
 * 9651fcedf7b9 ("mm: add MAP_DROPPABLE for designating always lazily
 * freeable mappings"), 6.11: a map type of private anonymous memory the
 * kernel may drop, never charged, merging only with its own kind.
 */
static const struct change map_droppable = { REL(6, 11, 0), { 0 } };

/*
 * 9b9143298585 ("mm/mprotect: allow unfaulted VMAs to be unaccounted on
 * mprotect()"): an anonymous area without pages made read-only gives up
 * its commit charge (VM_ACCOUNT), and so merges with uncharged neighbours.
 */
static const struct change mprotect_unaccount = { REL(6, 7, 0), { 0 } };

/*
 * 1d7ea9f7317b ("mm/mremap: refactor mremap() system call implementation"),
 * 6.15: the new place's alignment and the map count's margin are checked
 * (check_mremap_params) before the source is looked up; its TASK_SIZE
 * bound and the overlap stay in mremap_to, after.
 */
static const struct change mremap_args_first = { REL(6, 15, 0), { 0 } };

/*
 * 3215eaceca87 ("mm/mremap: refactor initial parameter sanity checks") and
 * a85dc37186a5 ("mm/mremap: check remap conditions earlier"): mremap
 * checks the new range (alignment, TASK_SIZE, overlap, the map count's
 * margin) before it looks the source up, and the source (its length
 * within one area, a zero old_len on private memory) before it unmaps
 * the destination or cuts the source's tail.  Before, a missing source
 * is EFAULT first, and a move that fails those checks has already
 * discarded what lay at the destination.
 */
static const struct change mremap_checks_first = { REL(6, 17, 0), { 0 } };

/*
 * d23cb648e365 ("mm/mremap: permit mremap() move of multiple VMAs"): a
 * move of the same size to a fixed place may span areas and gaps.
 */
static const struct change mremap_many = { REL(6, 17, 0), { 0 } };

/*
 * 00b2591b9f04 ("mm/mremap: fix locked_vm leak from MREMAP_DONTUNMAP
 * self-merge"): the copy an MREMAP_DONTUNMAP move makes of an anonymous
 * area without pages no longer merges with the area it was copied from
 * (6.1.191 and 6.12.114 have it; 6.18.44 does not).
 */
static const struct change dontunmap_apart = { REL(7, 3, 0),
					       { REL(6, 1, 191),
						 REL(6, 12, 114) } };

/* Whether the modelled release has the change. */
static int has(const struct ncb_as *as, const struct change *c)
{
	unsigned int i;

	if (as->rel >= c->mainline)
		return 1;
	for (i = 0; i < sizeof(c->stable) / sizeof(*c->stable); i++)
		if (c->stable[i] && as->rel >> 8 == c->stable[i] >> 8 &&
		    as->rel >= c->stable[i])
			return 1;
	return 0;
}

/*
 * PAGE_ALIGN in the modelled page size (a length that wraps becomes 0,
 * as in the kernel), and an address's offset in its page.
 */
static inline uint64_t page_up(const struct ncb_as *as, uint64_t v)
{
	return (v + as->pg - 1) & ~(as->pg - 1);
}

static inline uint64_t page_off(const struct ncb_as *as, uint64_t v)
{
	return v & (as->pg - 1);
}

/* The first area ending above addr (the kernel's find_vma). */
static struct area *find_vma(const struct ncb_as *as, uint64_t addr,
			     struct mt_cur *c)
{
	return ncb__mt_find(&as->t, addr, c);
}

static int area_insert(struct ncb_as *as, uint64_t start, uint64_t end,
		       uint64_t pgoff, uint32_t file, uint16_t flags,
		       uint16_t origin)
{
	struct area a = { start, end, pgoff, file, flags, origin };
	struct mt_cur c;

	ncb__mt_find(&as->t, start, &c);
	return ncb__mt_insert(&as->t, &c, &a);
}

/*
 * Whether area a and an area n of the same flags and file could be one
 * as far as their kind and pages go (is_mergeable_vma and
 * is_mergeable_anon_vma): never the specials or a stack; touched ones
 * only if they have the one anon_vma, pieces of one loaded area.  (A
 * touched area may take in an untouched one where its anon_vma has no
 * other process's chained to it, after fork; the maps do not say.)
 */
static int same_kind(const struct area *a, const struct area *n)
{
	if (a->flags != n->flags || a->file != n->file ||
	    (n->flags & (A_SPECIAL | A_GROWSDOWN)))
		return 0;
	return !(n->flags & A_TOUCHED) ||
	       (n->origin && a->origin == n->origin);
}

/* Could area a and n, which follows it right away, be one area? */
static int mergeable(const struct ncb_as *as, const struct area *a,
		     const struct area *n)
{
	return a->end == n->start && same_kind(a, n) &&
	       a->pgoff + (a->end - a->start) / as->pg == n->pgoff;
}

/*
 * Insert the free range [start, end), merging as vma_merge does, but not
 * with the area that starts where apart does, if given; c is where
 * find_vma(start) left off.
 */
static int area_join(struct ncb_as *as, struct mt_cur *c,
		     const struct area *a, const struct area *apart)
{
	uint64_t start = a->start, end = a->end;
	struct mt_cur pc = *c;
	struct area *prev, *next;
	int with_prev, with_next;

	next = ncb__mt_at(c);
	prev = ncb__mt_prev(&pc);
	with_prev = prev && mergeable(as, prev, a) &&
		    !(apart && prev->start == apart->start);
	with_next = next && mergeable(as, a, next) &&
		    !(apart && next->start == apart->start);
	if (with_prev && with_next) {
		/* next goes, then prev takes its place and the gap between. */
		uint64_t e = next->end;

		ncb__mt_erase(&as->t, c);
		prev = find_vma(as, start - 1, &pc);
		prev->end = e;
		ncb__mt_changed(&as->t, &pc);
		return 0;
	}
	if (with_prev) {
		prev->end = end;
		ncb__mt_changed(&as->t, &pc);
		return 0;
	}
	if (with_next) {
		next->start = start;
		next->pgoff = a->pgoff;
		ncb__mt_changed(&as->t, c);
		return 0;
	}
	return ncb__mt_insert(&as->t, c, a);
}

static int area_add_at(struct ncb_as *as, struct mt_cur *c,
		       const struct area *a)
{
	return area_join(as, c, a, NULL);
}

static int area_add(struct ncb_as *as, const struct area *a)
{
	struct mt_cur c;

	find_vma(as, a->start, &c);
	return area_add_at(as, &c, a);
}

/* Cut the area holding addr in two there, flags unchanged (no merging). */
static int split_at(struct ncb_as *as, uint64_t addr)
{
	struct mt_cur c;
	struct area *a = find_vma(as, addr, &c), tail = *a;
	int err;

	tail.start = addr;
	tail.pgoff += (addr - a->start) / as->pg;
	a->end = addr;
	ncb__mt_changed(&as->t, &c);
	find_vma(as, addr, &c);
	err = ncb__mt_insert(&as->t, &c, &tail);
	if (err) {
		a = find_vma(as, addr - 1, &c);
		a->end = tail.end;
		ncb__mt_changed(&as->t, &c);
	}
	return err;
}

/* Remove [start, end) from every area, splitting those it cuts. */
static int remove_range(struct ncb_as *as, uint64_t start, uint64_t end)
{
	struct area *a;
	struct mt_cur c;
	int err;

	for (a = find_vma(as, start, &c); a && a->start < end;
	     a = find_vma(as, start, &c)) {
		uint64_t a_end = a->end;

		if (a->start < start && a->end > end) {
			/*
			 * A hole in one area adds one: refused at the limit
			 * (vms_gather_munmap_vmas).  Cut at the hole's end,
			 * then the head gives up the hole.
			 */
			if (as->t.count >= as->max_map_count)
				return -ENOMEM;
			err = split_at(as, end);
			if (err)
				return err;
			a = find_vma(as, start, &c);
		}
		if (a->start < start) {
			a->end = start;
		} else if (a->end > end) {
			a->pgoff += (end - a->start) / as->pg;
			a->start = end;
		} else {
			ncb__mt_erase(&as->t, &c);
			if (a_end >= end)
				break;
			continue;
		}
		ncb__mt_changed(&as->t, &c);
		if (a_end >= end)
			break;
	}
	return 0;
}

/*
 * The release whose rules the model follows: the one asked for, else the
 * running kernel's, else (no release to be read) the newest rules known.
 */
static uint32_t model_release(uint32_t asked)
{
	unsigned long v = asked ? asked : ncb_core_kernel_release();

	return v && v <= 0xffffff ? (uint32_t)v : 0xffffff;
}

int ncb_as_new(struct ncb_as **asp, const struct ncb_as_opts *opts)
{
	const struct ncb_probe *p = ncb__probe();
	struct ncb_as_opts o;
	struct ncb_as *as;

	if (!asp || ncb__opts_in(&o, sizeof(o), opts,
				 NCB__END(ncb_as_opts, brk)) ||
	    o.release > 0xffffff)
		return -EINVAL;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->pg = o.page_size ? o.page_size : p->page_size;
	as->min_addr = o.mmap_min_addr ? o.mmap_min_addr : p->mmap_min_addr;
	as->task_size = o.task_size ? o.task_size : ncb__user_top();
	as->mmap_base = o.mmap_base ? o.mmap_base
				    : as->task_size - (128ULL << 20);
	as->guard = o.stack_guard_gap ? o.stack_guard_gap : 256 * as->pg;
	as->max_map_count = o.max_map_count ? o.max_map_count : 65530;
	as->rel = model_release(o.release);
	as->thp = o.thp ? o.thp > 0
			: has(as, &thp_anon) && (sizeof(void *) == 8 ||
						 !has(as, &thp_64bit_only));
	as->start_brk = o.start_brk;
	as->brk = o.brk > o.start_brk ? o.brk : o.start_brk;
	if (as->pg & (as->pg - 1) || as->mmap_base > as->task_size) {
		free(as);
		return -EINVAL;
	}
	if (ncb__mt_init(&as->t)) {
		free(as);
		return -ENOMEM;
	}
	as->nfiles = 1;
	as->anon_ino = 1;
	*asp = as;
	return 0;
}

void ncb_as_free(struct ncb_as *as)
{
	uint32_t i;

	if (!as)
		return;
	for (i = 1; i < as->nfiles; i++)
		if (!as->files[i].made)
			free((char *)as->files[i].path);
	free(as->files);
	free(as->index);
	ncb__mt_destroy(&as->t);
	free(as);
}

/* The last step of splitmix64: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint32_t file_hash(const char *path, uint32_t dev_major,
			  uint32_t dev_minor, uint64_t inode)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a over the path */

	while (*path)
		h = (h ^ (unsigned char)*path++) * 0x100000001b3ULL;
	h = mix64(h ^ ((uint64_t)dev_major << 32 | dev_minor));
	return (uint32_t)mix64(h ^ inode);
}

/*
 * The index slot of the file with this key, or the empty slot where it
 * would go.  The index must have room (it is never full).
 */
static uint32_t *file_slot(const struct ncb_as *as, const char *path,
			   uint32_t dev_major, uint32_t dev_minor,
			   uint64_t inode, uint32_t hash)
{
	size_t mask = as->index_cap - 1, i = hash & mask;
	const struct file *f;

	for (;; i = (i + 1) & mask) {
		if (!as->index[i])
			return &as->index[i];
		f = &as->files[as->index[i]];
		if (f->hash == hash && f->inode == inode &&
		    f->dev_major == dev_major && f->dev_minor == dev_minor &&
		    !strcmp(f->path, path))
			return &as->index[i];
	}
}

static uint32_t *file_slot_of(const struct ncb_as *as, const struct file *f)
{
	return file_slot(as, f->path, f->dev_major, f->dev_minor, f->inode,
			 f->hash);
}

/* Twice the slots, each file placed again by its kept hash. */
static int index_grow(struct ncb_as *as)
{
	size_t cap = as->index_cap ? 2 * as->index_cap : 64;
	uint32_t *old = as->index;
	uint32_t i;

	if (cap < as->index_cap)
		return -ENOMEM;
	as->index = calloc(cap, sizeof(*old));
	if (!as->index) {
		as->index = old;
		return -ENOMEM;
	}
	free(old);
	as->file_bytes += (cap - as->index_cap) * sizeof(*old);
	as->index_cap = cap;
	for (i = 1; i < as->nfiles; i++)
		*file_slot_of(as, &as->files[i]) = i;
	return 0;
}

/*
 * Room for one more file, in the index (which then stays at most half
 * full) and in the array, so that adding it cannot fail.
 */
static int files_reserve(struct ncb_as *as)
{
	struct file *f;
	uint32_t cap;

	if (2 * (size_t)as->nfiles > as->index_cap && index_grow(as))
		return -ENOMEM;
	if (as->nfiles < as->files_cap)
		return 0;
	if (as->nfiles == UINT32_MAX)
		return -ENOMEM;
	cap = as->files_cap > UINT32_MAX / 2 ? UINT32_MAX : 2 * as->files_cap;
	if (cap < 16)
		cap = 16;
	f = reallocarray(as->files, cap, sizeof(*f));
	if (!f)
		return -ENOMEM;
	as->file_bytes += (cap - as->files_cap) * sizeof(*f);
	as->files = f;
	as->files_cap = cap;
	return 0;
}

static uint32_t file_add(struct ncb_as *as, const char *path,
			 uint32_t dev_major, uint32_t dev_minor,
			 uint64_t inode, uint32_t hash, uint32_t made)
{
	struct file *f = &as->files[as->nfiles];

	f->path = path;
	f->dev_major = dev_major;
	f->dev_minor = dev_minor;
	f->inode = inode;
	f->hash = hash;
	f->made = made;
	return as->nfiles++;
}

/*
 * Give made file id the first inode number from anon_ino on that no file
 * of its name holds, and its slot.  Numbers are skipped only for the
 * caller's files, so this ends within as many steps as they are.
 */
static void anon_number(struct ncb_as *as, uint32_t id)
{
	struct file *f = &as->files[id];
	uint32_t *slot;

	for (;;) {
		f->inode = as->anon_ino++;
		f->hash = file_hash(anon_path, 0, 1, f->inode);
		slot = file_slot_of(as, f);
		if (!*slot)
			break;
	}
	*slot = id;
}

/* A new file of a shared anonymous mapping's own (shmem_zero_setup). */
static int anon_file(struct ncb_as *as, uint32_t *id)
{
	int err = files_reserve(as);

	if (err)
		return err;
	*id = file_add(as, anon_path, 0, 1, 0, 0, 1);
	anon_number(as, *id);
	return 0;
}

int ncb_as_file(struct ncb_as *as, const char *path, uint32_t dev_major,
		uint32_t dev_minor, uint64_t inode, uint32_t *id)
{
	uint32_t hash, *slot, was;
	char *copy;
	int err;

	if (!as || !path || !id)
		return -EINVAL;
	hash = file_hash(path, dev_major, dev_minor, inode);
	if (as->index_cap) {
		slot = file_slot(as, path, dev_major, dev_minor, inode, hash);
		if (*slot && !as->files[*slot].made) {
			*id = *slot;
			return 0;
		}
	}
	err = files_reserve(as);
	if (err)
		return err;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	as->file_bytes += strlen(path) + 1;
	slot = file_slot(as, path, dev_major, dev_minor, inode, hash);
	was = *slot;
	*id = file_add(as, copy, dev_major, dev_minor, inode, hash, 0);
	*slot = *id;
	/* A made file printed this key: it takes another number. */
	if (was)
		anon_number(as, was);
	return 0;
}

static uint16_t prot_flags(int prot)
{
	return (prot & PROT_READ ? A_READ : 0) |
	       (prot & PROT_WRITE ? A_WRITE : 0) |
	       (prot & PROT_EXEC ? A_EXEC : 0);
}

static int unmapped_area_topdown(const struct ncb_as *as, uint64_t len,
				 uint64_t align_mask, uint64_t low,
				 uint64_t high, uint64_t *out)
{
	uint64_t need = len + align_mask, end = 0, top, a;
	struct area *last;
	struct mt_cur c;

	if (need < len)
		return -ENOMEM;
	if (low < as->min_addr)
		low = as->min_addr;
	/* The space above the last area is a gap too. */
	last = ncb__mt_last(&as->t, &c);
	top = last ? last->end : 0;
	if (high > top && high - (top > low ? top : low) >= need &&
	    high >= low)
		end = high;
	else if (!ncb__mt_gap_rev(&as->t, low, high, need, as->guard, &end))
		return -ENOMEM;
	a = end - len;
	a -= a & align_mask;
	*out = a;
	return 0;
}

/* The lowest gap in [low, high) for len bytes (unmapped_area). */
static int unmapped_area_bottomup(const struct ncb_as *as, uint64_t len,
				  uint64_t low, uint64_t high, uint64_t *out)
{
	struct mt_cur c;
	struct area *last = ncb__mt_last(&as->t, &c);
	uint64_t top = last ? last->end : 0;

	if (low < as->min_addr)
		low = as->min_addr;
	if (ncb__mt_gap_fwd(&as->t, low, high, len, as->guard, out))
		return 0;
	/* The space above the last area is a gap too. */
	*out = top > low ? top : low;
	return *out < high && high - *out >= len ? 0 : -ENOMEM;
}

/*
 * The architecture's search (arch_get_unmapped_area_topdown): the hint if
 * the whole range is free and clear of a stack's guard gap, else the
 * highest gap below mmap_base.
 */
static int search(const struct ncb_as *as, uint64_t hint, uint64_t len,
		  uint64_t *out)
{
	struct area *next, *prev;
	struct mt_cur c;
	int err;

	if (hint) {
		hint = page_up(as, hint);
		next = find_vma(as, hint, &c);
		prev = ncb__mt_prev(&c);
		if (as->task_size - len >= hint && hint >= as->min_addr &&
		    (!next || hint + len <= next->start -
		     (next->flags & A_GROWSDOWN ? as->guard : 0)) &&
		    (!prev || hint >= prev->end)) {
			*out = hint;
			return 0;
		}
	}
	err = unmapped_area_topdown(as, len, 0, as->pg, as->mmap_base, out);
	/*
	 * Nothing below mmap_base: rather than fail, the kernel searches
	 * bottom-up from the legacy base, a third of the way up, to the top
	 * (generic_get_unmapped_area_topdown; x86's legacy base is also
	 * randomised, which a model cannot know).
	 */
	if (err)
		err = unmapped_area_bottomup(as, len,
					     page_up(as, as->task_size / 3),
					     as->task_size, out);
	return err;
}

/*
 * Whether __get_unmapped_area THP-aligns the mapping: private anonymous
 * memory of 64-bit tasks (as->thp), 2 MiB or more, then only multiples of
 * 2 MiB, and then only without a hint (the changes above).
 */
static int thp_aligns(const struct ncb_as *as, uint64_t hint, uint64_t len,
		      int flags, uint32_t file)
{
	if (!as->thp || file || (flags & MAP_SHARED) || len + PMD_SIZE < len)
		return 0;
	if (hint && has(as, &thp_not_hint))
		return 0;
	if (has(as, &thp_pmd_sizes))
		return !(len & (PMD_SIZE - 1));
	return len >= PMD_SIZE;
}

/*
 * The kernel's choice for a mapping without MAP_FIXED.  THP alignment
 * (__thp_get_unmapped_area) searches for a range one PMD longer, hint
 * included: a hint that holds it is taken as it is, else the highest
 * aligned place in what was found; if nothing holds it, the plain search.
 */
static int get_unmapped_area(const struct ncb_as *as, uint64_t hint,
			     uint64_t len, int flags, uint32_t file,
			     uint64_t *out)
{
	if (len > as->task_size - as->min_addr)
		return -ENOMEM;
	if (thp_aligns(as, hint, len, flags, file) &&
	    !search(as, hint, len + PMD_SIZE, out)) {
		if (hint && *out == page_up(as, hint))
			return 0;
		*out += has(as, &thp_topdown) ? PMD_SIZE : PMD_SIZE - 1;
		*out &= ~(PMD_SIZE - 1);
		return 0;
	}
	return search(as, hint, len, out);
}

/*
 * The map type's checks and flags (do_mmap's switch on it, once the range
 * is placed): a file may be shared, validated or private; anonymous
 * memory shared or private, or droppable where the release has it; and
 * neither a file nor shared memory grows down.
 */
static int type_flags(const struct ncb_as *as, int flags, uint32_t file,
		      uint16_t *af)
{
	int type = flags & MAP_TYPE, down = flags & MAP_GROWSDOWN;

	if (type == MAP_PRIVATE && !(file && down))
		return 0;
	if (type == MAP_SHARED || (file && type == MAP_SHARED_VALIDATE)) {
		*af |= A_SHARED;
		return down ? -EINVAL : 0;
	}
	if (file || type != MAP_DROPPABLE || !has(as, &map_droppable) ||
	    (flags & (MAP_LOCKED | MAP_HUGETLB)) || down)
		return -EINVAL;
	*af |= A_DROPPABLE | A_NORESERVE;
	return 0;
}

int ncb_as_mmap(struct ncb_as *as, uint64_t addr, uint64_t len, int prot,
		int flags, uint32_t file, uint64_t offset, uint64_t *out)
{
	uint64_t alen, pgoff;
	struct area *a, n;
	struct mt_cur c;
	uint16_t af;
	int err, busy;

	if (!as || !out || (file && file >= as->nfiles))
		return -EINVAL;
	if (page_off(as, offset))
		return -EINVAL;
	if (!len)
		return -EINVAL;
	if (flags & MAP_ANONYMOUS)
		file = 0;
	if (flags & NCB_MAP_FIXED_NOREPLACE)
		flags |= MAP_FIXED;
	if (!(flags & MAP_FIXED) && addr && addr < as->min_addr)
		addr = page_up(as, as->min_addr);
	alen = page_up(as, len);
	if (!alen)
		return -ENOMEM;
	pgoff = offset / as->pg;
	if (pgoff + alen / as->pg < pgoff)
		return -EOVERFLOW;
	if (as->t.count > as->max_map_count)
		return -ENOMEM;
	if (flags & MAP_FIXED) {
		if (alen > as->task_size - as->min_addr ||
		    addr > as->task_size - alen)
			return -ENOMEM;
		if (page_off(as, addr))
			return -EINVAL;
		if (addr < as->min_addr)
			return -EPERM;
	} else {
		err = get_unmapped_area(as, addr, alen, flags, file, &addr);
		if (err)
			return err;
	}
	a = find_vma(as, addr, &c);
	busy = a && a->start < addr + alen;
	if ((flags & NCB_MAP_FIXED_NOREPLACE) && busy)
		return -EEXIST;
	af = prot_flags(prot);
	err = type_flags(as, flags, file, &af);
	if (err)
		return err;
	if (af & A_SHARED) {
		/* Each shared anonymous mapping is a file of its own. */
		if (!file) {
			err = anon_file(as, &file);
			if (err)
				return err;
			pgoff = 0;
		}
	} else if (!file) {
		pgoff = addr / as->pg;
	}
	if (flags & MAP_NORESERVE)
		af |= A_NORESERVE;
	else if ((af & (A_WRITE | A_SHARED | A_NORESERVE)) == A_WRITE)
		af |= A_ACCOUNT;
	if (flags & MAP_GROWSDOWN)
		af |= A_GROWSDOWN;
	n = (struct area){ addr, addr + alen, pgoff, file, af, 0 };
	if (!busy)
		err = area_add_at(as, &c, &n);
	else if (!(err = remove_range(as, addr, addr + alen)))
		err = area_add(as, &n);
	if (!err)
		*out = addr;
	return err;
}

int ncb_as_munmap(struct ncb_as *as, uint64_t addr, uint64_t len)
{
	uint64_t alen;

	if (!as)
		return -EINVAL;
	if (page_off(as, addr) || addr > as->task_size ||
	    len > as->task_size - addr)
		return -EINVAL;
	alen = page_up(as, len);
	if (!alen)
		return -EINVAL;
	return remove_range(as, addr, addr + alen);
}

/*
 * mremap's growth in place (vma_expandable, vma_merge_extend): nothing in
 * [end, end + delta), the task's size respected; the area then joins the
 * next one if they are compatible.
 */
static int grow_in_place(struct ncb_as *as, uint64_t start, uint64_t end,
			 uint64_t delta)
{
	struct mt_cur c;
	struct area *a = find_vma(as, start, &c), *next, grown;
	struct mt_cur nc = c;

	if (delta > as->task_size || end > as->task_size - delta)
		return -ENOMEM;
	next = ncb__mt_next(&nc);
	if (next && next->start < end + delta)
		return -ENOMEM;
	grown = *a;
	grown.end = end + delta;
	if (next && mergeable(as, &grown, next)) {
		/* next goes, then the area takes its place and the gap. */
		end = next->end;
		ncb__mt_erase(&as->t, &nc);
		a = find_vma(as, start, &c);
		a->end = end;
		ncb__mt_changed(&as->t, &c);
		return 0;
	}
	a->end = end + delta;
	ncb__mt_changed(&as->t, &c);
	return 0;
}

/*
 * The checks of the arguments alone, before the source is looked up: the
 * flags, the source's alignment, a new length of 0 (a zero old_len
 * duplicates shared memory), and since 6.17 a new length past the task's
 * size whatever the flags.  Before 6.17 the lengths of an
 * MREMAP_DONTUNMAP move are compared as given, since as rounded to pages.
 */
static int mremap_args(const struct ncb_as *as, uint64_t addr,
		       uint64_t *old_len, uint64_t *new_len, int flags)
{
	int first = has(as, &mremap_checks_first);

	if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
		return -EINVAL;
	if ((flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) &&
	    !(flags & MREMAP_MAYMOVE))
		return -EINVAL;
	if (!first && (flags & MREMAP_DONTUNMAP) && *old_len != *new_len)
		return -EINVAL;
	/* PAGE_ALIGN: a length that wraps becomes 0, as in the kernel. */
	*old_len = page_up(as, *old_len);
	*new_len = page_up(as, *new_len);
	if ((flags & MREMAP_DONTUNMAP) && *old_len != *new_len)
		return -EINVAL;
	if (page_off(as, addr) || !*new_len)
		return -EINVAL;
	if (first && *new_len > as->task_size)
		return -EINVAL;
	return 0;
}

/*
 * The checks of a new place given (MREMAP_FIXED, or MREMAP_DONTUNMAP's
 * hint), those the mask names, in the kernel's order: its alignment, the
 * task's size, no overlap with the source, and room for both ranges to
 * split in three before anything moves.  Without those flags new_addr is
 * not looked at (78d2d32f0b78, "mm/mremap: fix regression in
 * vrm->new_addr check").
 */
#define DEST_ALIGN	1
#define DEST_RANGE	2	/* TASK_SIZE and the overlap */
#define DEST_COUNT	4
#define DEST_ALL	(DEST_ALIGN | DEST_RANGE | DEST_COUNT)

static int mremap_dest(const struct ncb_as *as, uint64_t addr,
		       uint64_t old_len, uint64_t new_len, uint64_t new_addr,
		       int mask)
{
	if ((mask & DEST_ALIGN) && page_off(as, new_addr))
		return -EINVAL;
	if ((mask & DEST_RANGE) &&
	    (new_len > as->task_size || new_addr > as->task_size - new_len ||
	     (addr < new_addr + new_len && new_addr < addr + old_len)))
		return -EINVAL;
	if ((mask & DEST_COUNT) &&
	    as->t.count + 2 >= (uint64_t)as->max_map_count - 3)
		return -ENOMEM;
	return 0;
}

/*
 * Which of the new place's checks come before the source is looked up:
 * all since 6.17, its alignment and the map count since 6.15, none
 * before.
 */
static int dest_first(const struct ncb_as *as)
{
	if (has(as, &mremap_checks_first))
		return DEST_ALL;
	return has(as, &mremap_args_first) ? DEST_ALIGN | DEST_COUNT : 0;
}

/* Whether a move may span areas and gaps (remap_move, Linux 6.17). */
static int moves_many(const struct ncb_as *as, int flags, uint64_t old_len,
		      uint64_t new_len)
{
	return (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) == MREMAP_FIXED &&
	       old_len == new_len && has(as, &mremap_many);
}

/*
 * The checks of the source when new space will be mapped (vma_to_resize,
 * remap_is_valid): a zero old_len only on shared memory, the range (as
 * far as it is kept) within its area unless the move may span areas.
 */
static int mremap_source(const struct area *a, uint64_t addr,
			 uint64_t old_len, uint64_t new_len, int many)
{
	uint64_t check = new_len < old_len ? new_len : old_len;

	if (!old_len && !(a->flags & A_SHARED))
		return -EINVAL;
	if (!many && check > a->end - addr)
		return -EFAULT;
	return 0;
}

/*
 * Put the copy n of area src in place (copy_vma).  The copy an
 * MREMAP_DONTUNMAP move makes of an anonymous area without pages keeps
 * apart from its source where the release says so: the backport to 6.1
 * (vma_merge) merges nothing next to the source, later ones merge with
 * any neighbour but the source.
 */
static int place_copy(struct ncb_as *as, const struct area *n,
		      const struct area *src, int flags)
{
	struct mt_cur c;

	if (!(flags & MREMAP_DONTUNMAP) || n->file ||
	    (n->flags & A_TOUCHED) || !has(as, &dontunmap_apart))
		return area_add(as, n);
	if (as->rel < REL(6, 12, 0) &&
	    (n->start == src->end || n->end == src->start))
		return area_insert(as, n->start, n->end, n->pgoff, n->file,
				   n->flags, n->origin);
	find_vma(as, n->start, &c);
	return area_join(as, &c, n, src);
}

/*
 * Move [addr, addr + old_len), within one area, to a new place of new_len
 * bytes (move_vma): the copy may merge there, the source goes unless
 * kept (MREMAP_DONTUNMAP, or a zero old_len duplicating shared memory).
 */
static int move_area(struct ncb_as *as, const struct area *src,
		     uint64_t addr, uint64_t old_len, uint64_t new_len,
		     uint64_t to, int flags)
{
	uint64_t pgoff = src->pgoff + (addr - src->start) / as->pg;
	struct area n = *src, was = *src;
	int err;

	if (as->t.count >= (uint64_t)as->max_map_count - 3)
		return -ENOMEM;
	/*
	 * An anonymous area without pages takes the offset of its new
	 * place, to merge more easily (copy_vma).
	 */
	if (!n.file && !(n.flags & A_TOUCHED))
		pgoff = to / as->pg;
	if (!(flags & MREMAP_DONTUNMAP) && old_len) {
		err = remove_range(as, addr, addr + old_len);
		if (err)
			return err;
	}
	err = remove_range(as, to, to + new_len);
	n.start = to;
	n.end = to + new_len;
	n.pgoff = pgoff;
	if (!err)
		err = place_copy(as, &n, &was, flags);
	return err;
}

/*
 * A move without resizing to a given place may span several areas and the
 * gaps between them (Linux 6.17, remap_move): each piece moves by the same
 * distance, replacing only what lies under it; what lies across from a
 * gap stays.
 */
static int move_pieces(struct ncb_as *as, uint64_t addr, uint64_t len,
		       uint64_t to)
{
	uint64_t s = addr, end = addr + len, e;
	struct area *a, src;
	struct mt_cur c;
	int err;

	while ((a = find_vma(as, s, &c)) && a->start < end) {
		src = *a;
		s = src.start > s ? src.start : s;
		e = src.end < end ? src.end : end;
		err = move_area(as, &src, s, e - s, e - s, to + (s - addr),
				0);
		if (err)
			return err;
		s = e;
	}
	return 0;
}

/* The area holding addr, or NULL (vma_lookup). */
static struct area *area_at(const struct ncb_as *as, uint64_t addr)
{
	struct mt_cur c;
	struct area *a = find_vma(as, addr, &c);

	return a && a->start <= addr ? a : NULL;
}

static int remap_flags(const struct area *a)
{
	return a->flags & A_SHARED ? MAP_SHARED : MAP_PRIVATE;
}

/*
 * mremap with a new place: MREMAP_FIXED, or MREMAP_DONTUNMAP with new_addr
 * as a hint (mremap_to).  The destination goes first, then what the source
 * sheds; before 6.17 the source is checked only then.
 */
static int mremap_to(struct ncb_as *as, uint64_t addr, uint64_t old_len,
		     uint64_t new_len, int flags, uint64_t new_addr,
		     uint64_t *out)
{
	struct area *a;
	int err;

	if (moves_many(as, flags, old_len, new_len)) {
		err = move_pieces(as, addr, old_len, new_addr);
		goto out;
	}
	if (flags & MREMAP_FIXED) {
		err = ncb_as_munmap(as, new_addr, new_len);
		if (err)
			return err;
	}
	if (old_len > new_len) {
		err = ncb_as_munmap(as, addr + new_len, old_len - new_len);
		if (err)
			return err;
		old_len = new_len;
	}
	a = area_at(as, addr);
	if (!a)
		return -EFAULT;
	if (!has(as, &mremap_checks_first)) {
		err = mremap_source(a, addr, old_len, new_len, 0);
		if (err)
			return err;
	}
	if (!(flags & MREMAP_FIXED)) {
		err = get_unmapped_area(as, new_addr, new_len, remap_flags(a),
					a->file, &new_addr);
		if (err)
			return err;
	}
	err = move_area(as, a, addr, old_len, new_len, new_addr, flags);
out:
	if (!err)
		*out = new_addr;
	return err;
}

/* mremap in place if it can be, else moved if allowed (mremap_at). */
static int mremap_at(struct ncb_as *as, struct area *a, uint64_t addr,
		     uint64_t old_len, uint64_t new_len, int flags,
		     uint64_t *out)
{
	int err;

	*out = addr;
	if (old_len == new_len)
		return 0;
	/* A shrink cuts whatever lies past new_len, one area or not. */
	if (old_len > new_len)
		return ncb_as_munmap(as, addr + new_len, old_len - new_len);
	if (old_len && a->end - addr == old_len &&
	    !grow_in_place(as, a->start, a->end, new_len - old_len))
		return 0;
	if (!(flags & MREMAP_MAYMOVE))
		return -ENOMEM;
	err = get_unmapped_area(as, 0, new_len, remap_flags(a), a->file, out);
	if (!err)
		err = move_area(as, a, addr, old_len, new_len, *out, 0);
	return err;
}

/*
 * The kernel's order: the arguments; the new place's checks that come
 * first in the release; the source looked up (EFAULT); the rest of the
 * new place's; since 6.17 the source's checks when new space will be
 * mapped (before, for a move to a place given, after the destination is
 * unmapped: mremap_to).
 */
int ncb_as_mremap(struct ncb_as *as, uint64_t addr, uint64_t old_len,
		  uint64_t new_len, int flags, uint64_t new_addr,
		  uint64_t *out)
{
	int implies = flags & (MREMAP_FIXED | MREMAP_DONTUNMAP), first, err;
	struct area *a;

	if (!as || !out)
		return -EINVAL;
	first = has(as, &mremap_checks_first);
	err = mremap_args(as, addr, &old_len, &new_len, flags);
	if (!err && implies)
		err = mremap_dest(as, addr, old_len, new_len, new_addr,
				  dest_first(as));
	if (err)
		return err;
	a = area_at(as, addr);
	if (!a)
		return -EFAULT;
	if (implies) {
		err = mremap_dest(as, addr, old_len, new_len, new_addr,
				  DEST_ALL & ~dest_first(as));
		if (err)
			return err;
	}
	if (first ? implies || new_len > old_len
		  : !implies && new_len > old_len) {
		err = mremap_source(a, addr, old_len, new_len,
				    moves_many(as, flags, old_len, new_len));
		if (err)
			return err;
	}
	if (implies)
		return mremap_to(as, addr, old_len, new_len, flags, new_addr,
				 out);
	return mremap_at(as, a, addr, old_len, new_len, flags, out);
}

/* Grow the heap by [oldbrk, newbrk) (do_brk_flags). */
static int brk_grow(struct ncb_as *as, uint64_t oldbrk, uint64_t newbrk)
{
	const uint16_t flags = A_READ | A_WRITE | A_ACCOUNT;
	struct area *next, *prev;
	struct mt_cur c;
	uint64_t gap;

	if (newbrk - oldbrk > as->task_size ||
	    oldbrk > as->task_size - (newbrk - oldbrk))
		return -ENOMEM;
	/* One page, and a stack's guard gap, must stay free above. */
	next = find_vma(as, oldbrk, &c);
	if (next) {
		gap = next->flags & A_GROWSDOWN ? as->guard : 0;
		gap = next->start > gap ? next->start - gap : 0;
		if (newbrk + as->pg > gap)
			return -ENOMEM;
	}
	if (as->t.count > as->max_map_count)
		return -ENOMEM;
	/*
	 * The area just below grows if it is the heap's own kind and has no
	 * pages shared with a parent (loaded areas are taken to have them):
	 * else a new area starts, unmerged.
	 */
	prev = ncb__mt_prev(&c);
	if (prev && prev->end == oldbrk && prev->start >= as->start_brk &&
	    !prev->file && prev->flags == flags &&
	    prev->pgoff + (prev->end - prev->start) / as->pg ==
	    oldbrk / as->pg) {
		prev->end = newbrk;
		ncb__mt_changed(&as->t, &c);
		return 0;
	}
	return area_insert(as, oldbrk, newbrk, oldbrk / as->pg, 0, flags, 0);
}

int ncb_as_brk(struct ncb_as *as, uint64_t brk, uint64_t *result)
{
	uint64_t newbrk, oldbrk;
	struct area *a;
	struct mt_cur c;

	if (!as || !result || !as->start_brk)
		return -EINVAL;
	/* Like the system call: the break it ends with, moved or not. */
	*result = as->brk;
	if (brk < as->start_brk)
		return 0;
	newbrk = page_up(as, brk);
	oldbrk = page_up(as, as->brk);
	if (newbrk < brk)
		return 0;
	if (newbrk == oldbrk) {
		as->brk = brk;
	} else if (brk <= as->brk) {
		/* Shrinking needs heap below the old break to cut. */
		a = find_vma(as, newbrk, &c);
		if (!a || a->start >= oldbrk ||
		    remove_range(as, newbrk, oldbrk))
			return 0;
		as->brk = brk;
	} else if (!brk_grow(as, oldbrk, newbrk)) {
		as->brk = brk;
	}
	*result = as->brk;
	return 0;
}

/* Change the protection of [start, end) within one area (mprotect_fixup). */
static int protect_piece(struct ncb_as *as, struct mt_cur c, uint64_t start,
			 uint64_t end, uint16_t prot)
{
	struct area *a = ncb__mt_at(&c), n = *a, *prev, *next;
	int joins_prev, joins_next;
	struct mt_cur pc;
	uint16_t nf = (uint16_t)((n.flags & ~A_PROT) | prot);
	int err;

	/*
	 * Made writable, private memory is charged; made read-only, an
	 * anonymous area without pages is uncharged again (mprotect_fixup,
	 * since 6.7).
	 */
	if ((nf & A_WRITE) &&
	    !(n.flags & (A_ACCOUNT | A_WRITE | A_SHARED | A_NORESERVE)))
		nf |= A_ACCOUNT;
	else if (!(nf & A_WRITE) && (n.flags & A_ACCOUNT) && !n.file &&
		 !(n.flags & A_TOUCHED) && has(as, &mprotect_unaccount))
		nf &= (uint16_t)~A_ACCOUNT;
	if (nf == n.flags)
		return 0;
	pc = c;
	prev = ncb__mt_prev(&pc);
	next = ncb__mt_next(&c);
	/* n becomes the changed piece. */
	n.pgoff += (start - n.start) / as->pg;
	n.start = start;
	n.end = end;
	n.flags = nf;
	joins_prev = start == a->start && prev && mergeable(as, prev, &n);
	joins_next = end == a->end && next && mergeable(as, &n, next);
	/*
	 * The whole area, and neither neighbour can join it: the flags
	 * change in place, the tree and its gaps stay as they are.
	 */
	if (start == a->start && end == a->end && !joins_prev && !joins_next) {
		a->flags = nf;
		return 0;
	}
	/*
	 * Each split is refused at the limit (split_vma); the first may
	 * succeed and the second fail, leaving the area cut in two.
	 */
	if (start > a->start && !joins_next &&
	    as->t.count >= as->max_map_count)
		return -ENOMEM;
	if (end < a->end && !joins_prev &&
	    as->t.count + (start > a->start) >= as->max_map_count) {
		if (start > a->start)
			split_at(as, start);
		return -ENOMEM;
	}
	err = remove_range(as, start, end);
	/* What is left of the area may now merge with the changed piece. */
	if (!err)
		err = area_add(as, &n);
	return err;
}

int ncb_as_mprotect(struct ncb_as *as, uint64_t addr, uint64_t len, int prot)
{
	uint64_t end, s, e;
	struct area *a;
	struct mt_cur c;
	int err;

	if (!as || page_off(as, addr))
		return -EINVAL;
	if (!len)
		return 0;
	end = addr + page_up(as, len);
	if (end <= addr)
		return -ENOMEM;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	for (s = addr; s < end; s = e) {
		a = find_vma(as, s, &c);
		if (!a || a->start > s)
			return -ENOMEM;
		e = a->end < end ? a->end : end;
		err = protect_piece(as, c, s, e, prot_flags(prot));
		if (err)
			return err;
	}
	return 0;
}

static void fill(const struct ncb_as *as, const struct area *a,
		 struct ncb_mapping *m)
{
	const struct file *f = a->file ? &as->files[a->file] : NULL;

	m->start = a->start;
	m->end = a->end;
	m->offset = f && f->path[0] != '[' && !(a->flags & A_SPECIAL)
		    ? a->pgoff * as->pg : 0;
	m->prot = (a->flags & A_READ ? PROT_READ : 0) |
		  (a->flags & A_WRITE ? PROT_WRITE : 0) |
		  (a->flags & A_EXEC ? PROT_EXEC : 0);
	m->shared = !!(a->flags & A_SHARED);
	m->dev_major = f ? f->dev_major : 0;
	m->dev_minor = f ? f->dev_minor : 0;
	m->inode = f ? f->inode : 0;
	m->path = f ? f->path : "";
	/* Anonymous memory across the program break (vma_is_initial_heap). */
	if (!f && a->start < as->brk && a->end > as->start_brk)
		m->path = "[heap]";
}

/* Where the free gap below area a ends: short of a stack's guard gap. */
static uint64_t gap_end(const struct ncb_as *as, const struct area *a)
{
	if (!(a->flags & A_GROWSDOWN))
		return a->start;
	return a->start > as->guard ? a->start - as->guard : 0;
}

/*
 * Offer the free gaps of the window that hold len bytes to the rule
 * (ncb__place_gap), upward, each found through the gap augmentation; the
 * lowest fit ends the search.  The same gaps, in the same order, as the
 * walk of a live process's maps (space.c) offers where they fit.
 */
static void gaps_up(const struct ncb_as *as, struct ncb__place *p)
{
	uint64_t s = p->lo, g, top;
	struct area *a;
	struct mt_cur c;

	while (ncb__mt_gap_fwd(&as->t, s, p->hi, p->len, as->guard, &g)) {
		/* An aligned start of a gap that holds len: the lowest fit. */
		if (p->place == NCB_PLACE_LOWEST && !(g & (p->align - 1))) {
			ncb__place_gap(p, g, g + p->len);
			return;
		}
		a = find_vma(as, g, &c);
		if (ncb__place_gap(p, g, gap_end(as, a)) &&
		    p->place == NCB_PLACE_LOWEST)
			return;
		if (a->end >= p->hi)
			return;
		s = a->end;
	}
	/* Past the last area: the space above it. */
	a = ncb__mt_last(&as->t, &c);
	top = a ? a->end : 0;
	ncb__place_gap(p, top > s ? top : s, p->hi);
}

/* The same downward, for the highest fit: the first one found is it. */
static void gaps_down(const struct ncb_as *as, struct ncb__place *p)
{
	uint64_t h = p->hi, s, e;
	struct area *a;
	struct mt_cur c;

	a = ncb__mt_last(&as->t, &c);
	s = a ? a->end : 0;
	if (s < h && ncb__place_gap(p, s, h))
		return;
	if (s < h)
		h = s;
	while (h > p->lo &&
	       ncb__mt_gap_rev(&as->t, p->lo, h, p->len, as->guard, &e)) {
		/* e - 1 is free: the area found is the one above the gap. */
		find_vma(as, e - 1, &c);
		a = ncb__mt_prev(&c);
		s = a ? a->end : 0;
		if (ncb__place_gap(p, s, e))
			return;
		h = s;
	}
}

/*
 * NCB_PLACE_ANY as in space.c: the highest fit ending no higher than the
 * model's own choice for an anonymous mapping of len bytes (what mmap
 * would do here), else the lowest.
 */
static void find_any(const struct ncb_as *as, struct ncb__place *p)
{
	uint64_t hi = p->hi, k;

	p->place = NCB_PLACE_HIGHEST;
	if (!get_unmapped_area(as, 0, p->len, MAP_PRIVATE | MAP_ANONYMOUS, 0,
			       &k)) {
		k += p->len;
		p->hi = k < hi ? k : hi;
		if (p->hi > p->lo)
			gaps_down(as, p);
		p->hi = hi;
	}
	if (p->have)
		return;
	p->place = NCB_PLACE_LOWEST;
	gaps_up(as, p);
}

/*
 * Where [lo, hi) has room for len bytes at the given alignment, by the
 * rule of ncb_find_free (internal.h): each gap found through the gap
 * augmentation, so the search costs a walk from the root per gap offered.
 */
int ncb_as_find_free(const struct ncb_as *as, uint64_t lo, uint64_t hi,
		     uint64_t len, uint64_t align, int place, uint64_t *addr)
{
	struct ncb__place p;

	if (!as || !addr || !len || (place != NCB_PLACE_LOWEST &&
				     place != NCB_PLACE_HIGHEST &&
				     place != NCB_PLACE_RANDOM &&
				     place != NCB_PLACE_ANY))
		return -EINVAL;
	if (!align)
		align = as->pg;
	if (align & (align - 1) || align < as->pg)
		return -EINVAL;
	len = page_up(as, len);
	if (!len)
		return -ENOMEM;
	if (!hi || hi > as->task_size)
		hi = as->task_size;
	if (lo < as->min_addr)
		lo = as->min_addr;
	if (lo >= hi)
		return -EINVAL;
	p = (struct ncb__place){ .lo = lo, .hi = hi, .len = len,
				 .align = align, .place = place };
	if (place == NCB_PLACE_ANY)
		find_any(as, &p);
	else if (place == NCB_PLACE_HIGHEST)
		gaps_down(as, &p);
	else
		gaps_up(as, &p);
	if (!p.have)
		return -ENOMEM;
	*addr = p.found;
	return 0;
}

int ncb_as_find(const struct ncb_as *as, uint64_t addr, struct ncb_mapping *m)
{
	struct ncb_mapping r = NCB_INIT(ncb_mapping);
	struct mt_cur c;
	struct area *a;

	if (!as || ncb__out_size(m, NCB__END(ncb_mapping, path)))
		return -EINVAL;
	a = find_vma(as, addr, &c);
	if (!a)
		return 0;
	fill(as, a, &r);
	ncb__out(m, &r, sizeof(r));
	return 1;
}

int ncb__as_flags(const struct ncb_as *as, uint64_t addr)
{
	struct mt_cur c;
	struct area *a = find_vma(as, addr, &c);

	return a ? a->flags : -1;
}

uint64_t ncb__as_pgoff(const struct ncb_as *as, uint64_t addr)
{
	struct mt_cur c;
	struct area *a = find_vma(as, addr, &c);

	return a ? a->pgoff : 0;
}

size_t ncb__as_bytes(const struct ncb_as *as)
{
	return as->t.bytes + as->file_bytes;
}

/* The tree's invariants, for tests: 0 if they hold. */
int ncb__as_check(const struct ncb_as *as)
{
	return ncb__mt_check(&as->t);
}

size_t ncb_as_count(const struct ncb_as *as)
{
	return as ? as->t.count : 0;
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
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	size_t total = 0;
	struct area *a;
	struct mt_cur c;

	if (!as)
		return 0;
	for (a = find_vma(as, 0, &c); a; a = ncb__mt_next(&c)) {
		fill(as, a, &m);
		dump_line(&m, buf, size, &total);
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
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
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
		 * areas are taken as touched: they keep to themselves, but
		 * for their own pieces.
		 */
		af = prot_flags(m.prot) | (m.shared ? A_SHARED : 0) |
		     A_TOUCHED;
		/* The heap is anonymous memory named by where brk is. */
		if (!strcmp(m.path, "[heap]")) {
			if (!as->start_brk)
				as->start_brk = m.start;
			if (as->brk < m.end)
				as->brk = m.end;
			m.path = "";
		}
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
		/* Numbered while 16 bits last; after, never merged. */
		if (as->origins < UINT16_MAX)
			as->origins++;
		ret = area_insert(as, m.start, m.end, *m.path ?
				  m.offset / as->pg : m.start / as->pg,
				  file, af, as->origins < UINT16_MAX ?
				  (uint16_t)as->origins : 0);
		if (ret)
			break;
	}
	ncb_maps_close(maps);
	return ret < 0 ? ret : 0;
}

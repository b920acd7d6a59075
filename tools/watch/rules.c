/* SPDX-License-Identifier: MIT */
/*
 * The watchers' rules: whether a fixed placement replaces what its caller
 * may replace (benign) or what is another's (a clobber).  The evidence for
 * each benign pattern is in noclobber(7).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include "rules.h"

static int mod_eq(struct ncb__wmod a, struct ncb__wmod b)
{
	return a.ino && a.dev == b.dev && a.ino == b.ino;
}

static struct ncb__wmod mod_of(const struct ncb_mapping *m)
{
	struct ncb__wmod r = { 0, 0 };

	if (m->inode) {
		r.dev = makedev(m->dev_major, m->dev_minor);
		r.ino = m->inode;
	}
	return r;
}

/*
 * The bracketed names the kernel gives mappings it made itself.  It names
 * [heap] any mapping that spans the program break, even one the program
 * made there without ever calling brk (valgrind's reservation for its
 * guest): a PROT_NONE one is no heap.
 */
static enum ncb__wkind kernel_name(const struct ncb_mapping *m)
{
	const char *path = m->path;

	if (!strcmp(path, "[heap]") && (m->prot || m->shared))
		return NCB__W_HEAP;
	if (!strcmp(path, "[heap]"))
		return NCB__W_ANON;
	if (!strcmp(path, "[stack]"))
		return NCB__W_STACK;
	/* "[anon:NAME]" and "[anon_shmem:NAME]" are the program's names. */
	if (path[0] == '[' && strncmp(path, "[anon", 5))
		return NCB__W_KERNEL;
	return NCB__W_ANON;
}

/*
 * The thread whose stack holds [s, e) of mapping m.  Stacks without guard
 * pages between them (HotSpot gives Java threads none) merge into one
 * mapping, and so may other memory next to a stack: a stack grows down,
 * so the range is the stack of the thread whose stack pointer is the
 * lowest above it; above them all, it is the live part of the highest
 * one's, but for a range above a stack's top where clone said it.
 */
static int thread_of(const struct ncb__wproc *p, const struct ncb_mapping *m,
		     uint64_t s, uint64_t e, pid_t *tid)
{
	const struct ncb__wthread *best = NULL, *top = NULL;
	size_t i;

	for (i = 0; i < p->nthreads; i++) {
		const struct ncb__wthread *t = &p->threads[i];

		/* Not above its top, where that is known (from clone). */
		if (t->sp < m->start || t->sp >= m->end ||
		    (t->top && s >= t->top))
			continue;
		if (t->sp >= e && (!best || t->sp < best->sp))
			best = t;
		if (!top || t->sp > top->sp)
			top = t;
	}
	best = best ? best : top;
	if (best)
		*tid = best->tid;
	return !!best;
}

/* The first of n regions in address order ending above a, by halves. */
static size_t first_above(const struct ncb__wregion *r, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ncb__wregion *ncb__wregions_at(const struct ncb__wregion *r,
					    size_t n, uint64_t a)
{
	size_t i = first_above(r, n, a);

	return i < n && r[i].start <= a ? &r[i] : NULL;
}

/*
 * The seen region holding address a, made by mod if mod is not NULL; a
 * record is believed only over a mapping of what it mapped (file: the
 * victim's), so that memory made again where the watcher could not see
 * (a loader's span of another object) is not taken for the record's.
 */
static int region_at(const struct ncb__wproc *p, uint64_t a,
		     const struct ncb__wmod *mod, struct ncb__wmod file,
		     size_t *r)
{
	const struct ncb__wregion *g = ncb__wregions_at(p->regions,
						       p->nregions, a);

	if (!g || (mod && !mod_eq(*mod, g->by)) || g->file.ino != file.ino ||
	    (file.ino && g->file.dev != file.dev))
		return 0;
	*r = (size_t)(g - p->regions);
	return 1;
}

/*
 * The seen regions holding [s, e), the part of a mapping replaced: one
 * module's, without a gap (the kernel merges one module's neighbouring
 * commits into one mapping).  *r the first.
 */
static int region_of(const struct ncb__wproc *p, uint64_t s, uint64_t e,
		     struct ncb__wmod file, size_t *r)
{
	uint64_t at;
	size_t i;

	if (!region_at(p, s, NULL, file, r))
		return 0;
	for (at = p->regions[*r].end; at < e; at = p->regions[i].end)
		if (!region_at(p, at, &p->regions[*r].by, file, &i))
			return 0;
	return 1;
}

/*
 * The seen regions holding [s, e) without a gap, each of a known module
 * but not all of one (the kernel merged their neighbouring mappings into
 * one): *r the first not the caller's.  Replacing them replaces several
 * makings.
 */
static int regions_mixed(const struct ncb__wproc *p,
			 const struct ncb__wcall *c, uint64_t s, uint64_t e,
			 struct ncb__wmod file, size_t *r)
{
	const struct ncb__wregion *g = p->regions;
	uint64_t at;
	size_t i, first;
	int mixed = 0;

	if (!region_at(p, s, NULL, file, &first))
		return 0;
	*r = first;
	for (at = s; at < e; at = g[i].end) {
		if (!region_at(p, at, NULL, file, &i) || !g[i].by.ino)
			return 0;
		mixed |= !mod_eq(g[i].by, g[first].by);
		if (mod_eq(g[*r].by, c->caller) && !mod_eq(g[i].by, c->caller))
			*r = i;
	}
	return mixed;
}

/*
 * Reservation pages another module was seen making: set aside for its
 * own use (glibc grows an arena into its reservation with mprotect, over
 * whatever another has mapped there), not free for the caller to take.
 * Of no record, or made by code in no file, they are nobody's known.
 */
static int others_reserve(const struct ncb__wproc *p,
			  const struct ncb__wcall *c, uint64_t s, uint64_t e,
			  struct ncb__wmod mod, size_t *r)
{
	const struct ncb__wregion *g;

	if (!region_of(p, s, e, mod, r))
		return 0;
	g = &p->regions[*r];
	return g->by.ino && !mod_eq(g->by, c->caller);
}

/* What one victim is, most telling first. */
static void kind_of(const struct ncb__wproc *p, const struct ncb__wcall *c,
		    struct ncb__wvictim *v)
{
	uint64_t s = v->m.start > c->start ? v->m.start : c->start;
	uint64_t e = v->m.end < c->end ? v->m.end : c->end;
	struct ncb__wmod mod = mod_of(&v->m);
	enum ncb__wkind k = kernel_name(&v->m);

	v->tid = 0;
	v->region = 0;
	v->mixed = 0;
	if (k == NCB__W_HEAP && p->sees_brk &&
	    region_of(p, s, e, mod, &v->region))
		v->kind = NCB__W_REGION;
	else if (k != NCB__W_ANON)
		v->kind = k;
	else if (mod_eq(mod, p->exe))
		v->kind = NCB__W_EXE;
	else if (mod_eq(mod, p->interp))
		v->kind = NCB__W_INTERP;
	else if (thread_of(p, &v->m, s, e, &v->tid))
		v->kind = NCB__W_THREAD_STACK;
	else if (mod.ino && v->file_end &&
		 v->m.offset + (s - v->m.start) >= v->file_end)
		v->kind = NCB__W_PAST_EOF;
	else if (!v->m.prot && !v->m.shared && !v->has_data &&
		 !others_reserve(p, c, s, e, mod, &v->region))
		v->kind = NCB__W_RESERVED;
	else if (region_of(p, s, e, mod, &v->region))
		v->kind = NCB__W_REGION;
	else if ((v->mixed = regions_mixed(p, c, s, e, mod, &v->region)))
		v->kind = NCB__W_REGION;
	else if (mod.ino && v->elf)
		v->kind = NCB__W_LIBRARY;
	else if (mod.ino)
		v->kind = NCB__W_FILE;
	else
		v->kind = NCB__W_ANON;
}

/*
 * Pages with nothing in them to lose: reservation pages, and a file
 * mapping's pages past the end of its file (touching them raises SIGBUS;
 * a loader maps an object's bss over them).
 */
static int empty(enum ncb__wkind k)
{
	return k == NCB__W_RESERVED || k == NCB__W_PAST_EOF;
}

/*
 * A module's own code: a program or library may move its text (onto huge
 * pages: node's --use-largepages copies it out, maps anonymous memory over
 * it and copies it back).  Its data stays its own to lose, not to replace.
 */
static int own_text(const struct ncb__wcall *c, const struct ncb__wvictim *v)
{
	return (v->m.prot & PROT_EXEC) && mod_eq(c->caller, mod_of(&v->m));
}

static int kernel_made(enum ncb__wkind k)
{
	return k == NCB__W_HEAP || k == NCB__W_STACK || k == NCB__W_KERNEL ||
	       k == NCB__W_EXE || k == NCB__W_INTERP;
}

/* Two victims' memory of one making: the same region, file or kind. */
static int same_making(const struct ncb__wproc *p,
		       const struct ncb__wvictim *a,
		       const struct ncb__wvictim *b)
{
	if (a->kind != b->kind)
		return 0;
	/* Regions one module made: its, however many calls made them. */
	if (a->kind == NCB__W_REGION)
		return mod_eq(p->regions[a->region].by,
			      p->regions[b->region].by);
	if (a->kind == NCB__W_THREAD_STACK)
		return a->tid == b->tid;
	if (a->kind == NCB__W_ANON)
		return a->m.shared == b->m.shared;
	return mod_eq(mod_of(&a->m), mod_of(&b->m));
}

/*
 * An object's span as the loader maps it: its file's mappings, the
 * anonymous pages of its bss after them, reservation pages between.
 */
static int in_span(const struct ncb__wproc *p, const struct ncb__wvictim *lib,
		   const struct ncb__wvictim *v)
{
	return empty(v->kind) || v->kind == NCB__W_ANON ||
	       same_making(p, lib, v);
}

/*
 * The victims other than reservation pages, one making: the benign class
 * for the caller, or OTHER_MODULE.  A library's file belongs to the loader
 * that maps it (and to itself), but a loader mapping another file over it
 * is a clobber all the same.  A thread's own stack below its stack
 * pointer is its to use (HotSpot commits its guard zones there).
 */
static enum ncb__wclass one_making(const struct ncb__wproc *p,
				   const struct ncb__wcall *c,
				   const struct ncb__wvictim *first, int text)
{
	struct ncb__wmod mod = mod_of(&first->m);

	if (text)
		return NCB__WC_OWN_IMAGE;
	switch (first->kind) {
	case NCB__W_THREAD_STACK:
		return NCB__WC_OWN_STACK;
	case NCB__W_REGION:
		/* Made from code in no file (a JIT's): whose, not known. */
		if (!p->regions[first->region].by.ino)
			return NCB__WC_UNKNOWN;
		return mod_eq(c->caller, p->regions[first->region].by) ?
		       NCB__WC_OWN_REGION : NCB__WC_OTHER_MODULE;
	case NCB__W_LIBRARY:
		/*
		 * Any loader (ld.so, an emulator's or a checker's own) maps
		 * an object's segments from its file over the span it
		 * mapped from it first; ld.so maps its bss there too.
		 */
		if (mod_eq(c->file, mod) ||
		    (!c->file.ino && mod_eq(c->caller, p->interp)))
			return NCB__WC_LOADER;
		return NCB__WC_OTHER_MODULE;
	default:
		/* Its maker not seen: neither the caller's nor another's. */
		return NCB__WC_UNKNOWN;
	}
}

enum ncb__wclass ncb__wjudge(const struct ncb__wproc *p,
			     const struct ncb__wcall *c,
			     struct ncb__wvictim *v, size_t n, size_t *culprit)
{
	uint64_t covered = 0;
	size_t i, first = n;
	int text = 1;

	*culprit = 0;
	for (i = 0; i < n; i++) {
		kind_of(p, c, &v[i]);
		covered += (v[i].m.end < c->end ? v[i].m.end : c->end) -
			   (v[i].m.start > c->start ? v[i].m.start : c->start);
	}
	for (i = 0; i < n; i++) {
		*culprit = i;
		if (kernel_made(v[i].kind) && !own_text(c, &v[i]))
			return NCB__WC_KERNEL;
		if (v[i].kind == NCB__W_THREAD_STACK &&
		    (v[i].tid != c->tid || c->end > c->sp))
			return NCB__WC_THREAD_STACK;
		if (v[i].mixed)
			return NCB__WC_SPANS;
	}
	for (i = 0; i < n && first == n; i++)
		if (!empty(v[i].kind))
			first = i;
	if (first == n)
		return n ? NCB__WC_RESERVATION : NCB__WC_NOTHING;
	*culprit = first;
	for (i = first + 1; i < n; i++) {
		if (v[first].kind == NCB__W_LIBRARY ?
		    in_span(p, &v[first], &v[i]) :
		    empty(v[i].kind) || same_making(p, &v[first], &v[i]))
			continue;
		*culprit = i;
		return NCB__WC_SPANS;
	}
	/* Memory replaced and free space taken: past what was there. */
	if (covered < c->end - c->start)
		return NCB__WC_SPANS;
	for (i = first; i < n; i++)
		text = text && (empty(v[i].kind) || own_text(c, &v[i]));
	return one_making(p, c, &v[first], text);
}

/* Room for one more region: 0, or -ENOMEM. */
static int regions_room(struct ncb__wregions *s)
{
	size_t cap = s->cap ? 2 * s->cap : 16;
	struct ncb__wregion *r;

	if (s->n < s->cap)
		return 0;
	if (s->max && s->n >= s->max)
		return -ENOMEM;
	if (s->max && cap > s->max)
		cap = s->max;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

/*
 * [start, end) taken from the set's regions, as a newer one takes it: 0
 * with *at where such a region would go, or -ENOMEM where an older region
 * around it found no room to be split (then it is given up whole).
 */
static int take(struct ncb__wregions *s, uint64_t start, uint64_t end,
		size_t *at)
{
	size_t i = first_above(s->r, s->n, start), j;

	*at = i;
	if (i < s->n && s->r[i].start < start && s->r[i].end > end) {
		if (regions_room(s)) {
			memmove(&s->r[i], &s->r[i + 1],
				(--s->n - i) * sizeof(*s->r));
			return -ENOMEM;
		}
		memmove(&s->r[i + 1], &s->r[i], (s->n++ - i) * sizeof(*s->r));
		s->r[i].end = start;
		s->r[i + 1].start = end;
		*at = i + 1;
		return 0;
	}
	if (i < s->n && s->r[i].start < start)
		s->r[i++].end = start;
	/* The older ones it covers go; one reaching past it is cut. */
	for (j = i; j < s->n && s->r[j].end <= end; j++)
		;
	if (j < s->n && s->r[j].start < end)
		s->r[j].start = end;
	memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(*s->r));
	s->n -= j - i;
	*at = i;
	return 0;
}

int ncb__wregions_add(struct ncb__wregions *s, const struct ncb__wregion *r)
{
	size_t i;

	if (r->end <= r->start)
		return 0;
	/* Room first: no arithmetic on an empty set's NULL. */
	if (!s->r && regions_room(s))
		return -ENOMEM;
	if (take(s, r->start, r->end, &i) || regions_room(s))
		return -ENOMEM;
	memmove(&s->r[i + 1], &s->r[i], (s->n++ - i) * sizeof(*s->r));
	s->r[i] = *r;
	return 0;
}

void ncb__wregions_cut(struct ncb__wregions *s, uint64_t start, uint64_t end)
{
	size_t i;

	if (s->n && end > start)
		take(s, start, end, &i);
}

void ncb__wregions_free(struct ncb__wregions *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}

const char *ncb__wclass_name(enum ncb__wclass c)
{
	static const char *const names[] = {
		[NCB__WC_NOTHING] = "nothing",
		[NCB__WC_RESERVATION] = "reservation",
		[NCB__WC_LOADER] = "loader",
		[NCB__WC_OWN_IMAGE] = "own-image",
		[NCB__WC_OWN_REGION] = "own-region",
		[NCB__WC_OWN_STACK] = "own-stack",
		[NCB__WC_UNKNOWN] = "unknown-maker",
		[NCB__WC_KERNEL] = "kernel-memory",
		[NCB__WC_THREAD_STACK] = "thread-stack",
		[NCB__WC_OTHER_MODULE] = "other-module",
		[NCB__WC_SPANS] = "spans-regions",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *ncb__wkind_name(enum ncb__wkind k)
{
	static const char *const names[] = {
		[NCB__W_RESERVED] = "reservation",
		[NCB__W_PAST_EOF] = "past-eof",
		[NCB__W_HEAP] = "heap",
		[NCB__W_STACK] = "stack",
		[NCB__W_KERNEL] = "kernel",
		[NCB__W_EXE] = "program",
		[NCB__W_INTERP] = "interpreter",
		[NCB__W_THREAD_STACK] = "thread-stack",
		[NCB__W_REGION] = "region",
		[NCB__W_LIBRARY] = "library",
		[NCB__W_FILE] = "file",
		[NCB__W_ANON] = "anonymous",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

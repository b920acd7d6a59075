/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * The watchers' rules, one copy: whether a fixed placement replaces what
 * its caller may replace (benign) or what is another's (a clobber), from
 * what the process's mappings are and what the watcher knows of their
 * history.  User space (rules.c: ncb__wjudge, for the ptrace engine, the
 * system watcher's reader and the tests) and the BPF programs that refuse
 * calls in the kernel (system.bpf.c) include this header alone for them,
 * as they do calls.h: plain C, static inline, no libc, every loop bounded
 * (WJ_MAX_*: the BPF side's arrays; no bound in user space).  The
 * evidence for each benign pattern is in noclobber(7).
 */
#ifndef NCB_WATCH_JUDGE_H
#define NCB_WATCH_JUDGE_H

#include "calls.h"

#ifdef __bpf__
typedef unsigned long wj_size;
/* The fields of a mapping the rules read (user space: ncb_mapping). */
struct wj_mapping {
	wc_u64 start, end;
	wc_u64 offset;
	int prot;
	int shared;
};
#define WJ_MAPPING struct wj_mapping
#else
#include <stddef.h>
#include "noclobber.h"
typedef size_t wj_size;
#define WJ_MAPPING struct ncb_mapping
#endif

#ifndef WJ_MAX_THREADS
#define WJ_MAX_THREADS (~(wj_size)0)
#endif
#ifndef WJ_MAX_REGIONS
#define WJ_MAX_REGIONS (~(wj_size)0)
#endif
#ifndef WJ_MAX_VICTIMS
#define WJ_MAX_VICTIMS (~(wj_size)0)
#endif

#define WJ_PROT_EXEC 4		/* PROT_EXEC (rules.c checks it) */

/* A module: the file a piece of code or memory comes from (0, 0: none). */
struct ncb__wmod {
	wc_u64 dev;			/* user space: makedev(major, minor);
					   BPF: the kernel's dev_t */
	wc_u64 ino;
};

/* A thread and an address in its stack (its stack pointer at clone). */
struct ncb__wthread {
	int tid;
	wc_u64 sp;
	wc_u64 top;			/* its stack's top; 0 if not known */
};

/*
 * A region whose making the watcher saw: the module whose code made it
 * (past the C library's system call wrappers: a malloc block is the C
 * library's) and what it maps.  A watcher records every placement, plain
 * or fixed, so that memory of no record was made where it could not see.
 */
struct ncb__wregion {
	wc_u64 start, end;
	struct ncb__wmod by;		/* the module that made it */
	struct ncb__wmod file;		/* what it maps (0, 0: anonymous) */
#ifndef __bpf__
	/* For reports: the rules ignore them. */
	wc_u64 by_off;			/* the call's offset in by's file */
	unsigned int call;		/* the call that made it (calls.h) */
	double when;			/* seconds into the watch */
#endif
};

/* What the watcher knows of one process. */
struct ncb__wproc {
	struct ncb__wmod exe;		/* the program the kernel loaded */
	struct ncb__wmod interp;	/* its interpreter (the loader) */
	const struct ncb__wthread *threads;
	wj_size nthreads;
	const struct ncb__wregion *regions;	/* in address order, */
	wj_size nregions;			/* none overlapping */
	/*
	 * The watcher follows brk: no record is of memory the break has
	 * grown over since, so a seen region in what the kernel names
	 * [heap] is that region, not the heap.  Linux before 6.6 names so
	 * a mapping that starts at the break or ends at its start too
	 * (show_map_vma: vm_start <= brk && vm_end >= start_brk; 6.6's
	 * vma_is_initial_heap() compares strictly), and a mapping merged
	 * with the heap is named with it.
	 */
	int sees_brk;
};

/* The call: its target range, who made it and what it maps. */
struct ncb__wcall {
	wc_u64 start, end;
	int tid;
	wc_u64 sp;			/* the calling thread's stack pointer */
	struct ncb__wmod caller;	/* the module of the calling code */
	struct ncb__wmod file;		/* the file mapped; 0, 0 if none */
};

enum ncb__wkind {
	NCB__W_RESERVED,	/* PROT_NONE private pages holding no data:
				   a reservation */
	NCB__W_PAST_EOF,	/* a file mapping's pages past its end */
	NCB__W_HEAP,		/* [heap]: the program break */
	NCB__W_STACK,		/* [stack]: the main thread's */
	NCB__W_KERNEL,		/* [vdso], [vvar], [vsyscall], [uprobes]... */
	NCB__W_EXE,		/* the program's image */
	NCB__W_INTERP,		/* the interpreter's image */
	NCB__W_THREAD_STACK,	/* a thread's stack */
	NCB__W_REGION,		/* a region whose making was seen */
	NCB__W_LIBRARY,		/* an ELF object's mapping: the loader's */
	NCB__W_FILE,		/* another file's mapping, making not seen */
	NCB__W_ANON,		/* anonymous memory, making not seen */
};

/* A mapping the call would replace (in), and what it is (out). */
struct ncb__wvictim {
	WJ_MAPPING m;			/* in: the whole mapping */
	int elf;			/* in: the file is an ELF object */
	wc_u64 file_end;		/* in: its size rounded up to a page;
					   0 if unknown or no file */
	int has_data;			/* in: a PROT_NONE private mapping's
					   pages replaced hold data */
	/*
	 * From m, by ncb__wjudge in user space (from its path and device
	 * numbers), by the BPF programs from the VMA: what m maps, and
	 * NCB__W_HEAP, _STACK or _KERNEL for the kernel's names, else ANON.
	 */
	struct ncb__wmod mod;
	enum ncb__wkind named;
	enum ncb__wkind kind;		/* out */
	int tid;			/* out: THREAD_STACK's thread */
	wj_size region;			/* out: REGION's index */
	struct ncb__wmod by;		/* out: REGION's maker */
};

enum ncb__wclass {
	NCB__WC_NOTHING,		/* free space only: not an event */
	/* benign */
	NCB__WC_RESERVATION,		/* only reservation pages */
	NCB__WC_LOADER,			/* the loader, in an object's span */
	NCB__WC_OWN_IMAGE,		/* a module over its own image */
	NCB__WC_OWN_REGION,		/* inside a region it made */
	NCB__WC_OWN_STACK,		/* a thread, below its stack pointer */
	/* neither: its maker not seen, refused where calls are refused */
	NCB__WC_UNKNOWN,
	/* clobbers */
	NCB__WC_KERNEL,			/* memory the kernel made */
	NCB__WC_THREAD_STACK,		/* a thread's stack */
	NCB__WC_OTHER_MODULE,		/* a region another module made */
	NCB__WC_SPANS,			/* several regions, or past one */
};

#define NCB__WC_BENIGN(c) ((c) > NCB__WC_NOTHING && (c) < NCB__WC_UNKNOWN)
#define NCB__WC_CLOBBER(c) ((c) > NCB__WC_UNKNOWN)

static inline int wj_mod_eq(struct ncb__wmod a, struct ncb__wmod b)
{
	return a.ino && a.dev == b.dev && a.ino == b.ino;
}

/*
 * The thread whose stack holds [s, e) of mapping m.  Stacks without guard
 * pages between them (HotSpot gives Java threads none) merge into one
 * mapping, and so may other memory next to a stack: a stack grows down,
 * so the range is the stack of the thread whose stack pointer is the
 * lowest above it; above them all, it is the live part of the highest
 * one's, but for a range above a stack's top where clone said it.
 */
static inline int wj_thread_of(const struct ncb__wproc *p,
			       const WJ_MAPPING *m, wc_u64 s, wc_u64 e,
			       int *tid)
{
	const struct ncb__wthread *best = 0, *top = 0;
	wj_size i;

	for (i = 0; i < p->nthreads && i < WJ_MAX_THREADS; i++) {
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

/*
 * The first of n regions in address order ending above a: by halves in
 * user space, where a process's regions are many; one by one in the
 * kernel, where an event's are few and the verifier wants a plain loop.
 */
static inline wj_size wj_first_above(const struct ncb__wregion *r, wj_size n,
				     wc_u64 a)
{
#ifdef __bpf__
	wj_size i;

	for (i = 0; i < n && i < WJ_MAX_REGIONS; i++)
		if (r[i].end > a)
			break;
	return i;
#else
	wj_size lo = 0, hi = n;

	while (lo < hi) {
		wj_size mid = lo + (hi - lo) / 2;

		if (r[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
#endif
}

/* Whether region g is of what a victim maps (file), by mod if not NULL. */
static inline int wj_region_fits(const struct ncb__wregion *g,
				 const struct ncb__wmod *mod,
				 struct ncb__wmod file)
{
	return !(mod && !wj_mod_eq(*mod, g->by)) && g->file.ino == file.ino &&
	       !(file.ino && g->file.dev != file.dev);
}

/*
 * The seen regions holding [s, e), the part of a mapping replaced: one
 * module's, without a gap (the kernel merges one module's neighbouring
 * commits into one mapping), each of what the mapping maps (file), so
 * that memory made again where the watcher could not see (a loader's
 * span of another object) is not taken for a record's.  *r the first:
 * the region holding s; the next holds the first's end if it starts
 * there (the regions are in order, none overlapping).
 */
static inline int wj_region_of(const struct ncb__wproc *p, wc_u64 s,
			       wc_u64 e, struct ncb__wmod file, wj_size *r)
{
	wj_size i = wj_first_above(p->regions, p->nregions, s), j;
	const struct ncb__wregion *g, *first;

	if (i >= p->nregions || i >= WJ_MAX_REGIONS)
		return 0;
	first = &p->regions[i];
	if (first->start > s || !wj_region_fits(first, 0, file))
		return 0;
	*r = i;
	g = first;
	for (j = i + 1; g->end < e; j++) {
		if (j >= p->nregions || j >= WJ_MAX_REGIONS)
			return 0;
		if (p->regions[j].start != g->end)
			return 0;
		g = &p->regions[j];
		if (!wj_region_fits(g, &first->by, file))
			return 0;
	}
	return 1;
}

/* What one victim is, most telling first. */
static inline void wj_kind_of(const struct ncb__wproc *p,
			      const struct ncb__wcall *c,
			      struct ncb__wvictim *v)
{
	wc_u64 s = v->m.start > c->start ? v->m.start : c->start;
	wc_u64 e = v->m.end < c->end ? v->m.end : c->end;
	struct ncb__wmod mod = v->mod;
	enum ncb__wkind k = v->named;
	int region = 0;

	v->tid = 0;
	v->region = 0;
	if (k == NCB__W_HEAP && p->sees_brk &&
	    wj_region_of(p, s, e, mod, &v->region))
		region = 1;
	else if (k != NCB__W_ANON)
		v->kind = k;
	else if (wj_mod_eq(mod, p->exe))
		v->kind = NCB__W_EXE;
	else if (wj_mod_eq(mod, p->interp))
		v->kind = NCB__W_INTERP;
	else if (wj_thread_of(p, &v->m, s, e, &v->tid))
		v->kind = NCB__W_THREAD_STACK;
	else if (mod.ino && v->file_end &&
		 v->m.offset + (s - v->m.start) >= v->file_end)
		v->kind = NCB__W_PAST_EOF;
	else if (!v->m.prot && !v->m.shared && !v->has_data)
		v->kind = NCB__W_RESERVED;
	else if (wj_region_of(p, s, e, mod, &v->region))
		region = 1;
	else if (mod.ino && v->elf)
		v->kind = NCB__W_LIBRARY;
	else if (mod.ino)
		v->kind = NCB__W_FILE;
	else
		v->kind = NCB__W_ANON;
	v->by.dev = v->by.ino = 0;
	if (region && v->region < WJ_MAX_REGIONS) {
		v->kind = NCB__W_REGION;
		v->by = p->regions[v->region].by;
	}
}

/*
 * Pages with nothing in them to lose: reservation pages, and a file
 * mapping's pages past the end of its file (touching them raises SIGBUS;
 * a loader maps an object's bss over them).
 */
static inline int wj_empty(enum ncb__wkind k)
{
	return k == NCB__W_RESERVED || k == NCB__W_PAST_EOF;
}

/*
 * A module's own code: a program or library may move its text (onto huge
 * pages: node's --use-largepages copies it out, maps anonymous memory over
 * it and copies it back).  Its data stays its own to lose, not to replace.
 */
static inline int wj_own_text(const struct ncb__wcall *c,
			      const struct ncb__wvictim *v)
{
	return (v->m.prot & WJ_PROT_EXEC) && wj_mod_eq(c->caller, v->mod);
}

static inline int wj_kernel_made(enum ncb__wkind k)
{
	return k == NCB__W_HEAP || k == NCB__W_STACK || k == NCB__W_KERNEL ||
	       k == NCB__W_EXE || k == NCB__W_INTERP;
}

/* Two victims' memory of one making: the same region, file or kind. */
static inline int wj_same_making(const struct ncb__wvictim *a,
				 const struct ncb__wvictim *b)
{
	if (a->kind != b->kind)
		return 0;
	/* Regions one module made: its, however many calls made them. */
	if (a->kind == NCB__W_REGION)
		return wj_mod_eq(a->by, b->by);
	if (a->kind == NCB__W_THREAD_STACK)
		return a->tid == b->tid;
	if (a->kind == NCB__W_ANON)
		return a->m.shared == b->m.shared;
	return wj_mod_eq(a->mod, b->mod);
}

/*
 * An object's span as the loader maps it: its file's mappings, the
 * anonymous pages of its bss after them, reservation pages between.
 */
static inline int wj_in_span(const struct ncb__wvictim *lib,
			     const struct ncb__wvictim *v)
{
	return wj_empty(v->kind) || v->kind == NCB__W_ANON ||
	       wj_same_making(lib, v);
}

/*
 * The victims other than reservation pages, one making: the benign class
 * for the caller, or OTHER_MODULE.  A library's file belongs to the loader
 * that maps it (and to itself), but a loader mapping another file over it
 * is a clobber all the same.  A thread's own stack below its stack
 * pointer is its to use (HotSpot commits its guard zones there).
 */
static inline enum ncb__wclass wj_one_making(const struct ncb__wproc *p,
					     const struct ncb__wcall *c,
					     const struct ncb__wvictim *first,
					     int text)
{
	if (text)
		return NCB__WC_OWN_IMAGE;
	switch (first->kind) {
	case NCB__W_THREAD_STACK:
		return NCB__WC_OWN_STACK;
	case NCB__W_REGION:
		/* Made from code in no file (a JIT's): whose, not known. */
		if (!first->by.ino)
			return NCB__WC_UNKNOWN;
		return wj_mod_eq(c->caller, first->by) ?
		       NCB__WC_OWN_REGION : NCB__WC_OTHER_MODULE;
	case NCB__W_LIBRARY:
		/*
		 * Any loader (ld.so, an emulator's or a checker's own) maps
		 * an object's segments from its file over the span it
		 * mapped from it first; ld.so maps its bss there too.
		 */
		if (wj_mod_eq(c->file, first->mod) ||
		    (!c->file.ino && wj_mod_eq(c->caller, p->interp)))
			return NCB__WC_LOADER;
		return NCB__WC_OTHER_MODULE;
	default:
		/* Its maker not seen: neither the caller's nor another's. */
		return NCB__WC_UNKNOWN;
	}
}

/*
 * The verdict on a call replacing victims v[0..n) (the mappings meeting
 * its range, in address order, each's kind known: wj_kind_of), and in
 * *culprit the index of the victim that decided a clobber.
 */
static inline enum ncb__wclass wj_verdict(const struct ncb__wproc *p,
					  const struct ncb__wcall *c,
					  const struct ncb__wvictim *v,
					  wj_size n, wj_size *culprit)
{
	wc_u64 covered = 0;
	wj_size i, first = n;
	int text = 1;

	if (n > WJ_MAX_VICTIMS)
		n = first = WJ_MAX_VICTIMS;
	*culprit = 0;
	for (i = 0; i < n && i < WJ_MAX_VICTIMS; i++) {
		covered += (v[i].m.end < c->end ? v[i].m.end : c->end) -
			   (v[i].m.start > c->start ? v[i].m.start :
			    c->start);
		*culprit = i;
		if (wj_kernel_made(v[i].kind) && !wj_own_text(c, &v[i]))
			return NCB__WC_KERNEL;
		if (v[i].kind == NCB__W_THREAD_STACK &&
		    (v[i].tid != c->tid || c->end > c->sp))
			return NCB__WC_THREAD_STACK;
	}
	for (i = 0; i < n && i < WJ_MAX_VICTIMS && first == n; i++)
		if (!wj_empty(v[i].kind))
			first = i;
	if (first >= n || first >= WJ_MAX_VICTIMS)
		return n ? NCB__WC_RESERVATION : NCB__WC_NOTHING;
	*culprit = first;
	for (i = first + 1; i < n && i < WJ_MAX_VICTIMS; i++) {
		if (v[first].kind == NCB__W_LIBRARY ?
		    wj_in_span(&v[first], &v[i]) :
		    wj_empty(v[i].kind) || wj_same_making(&v[first], &v[i]))
			continue;
		*culprit = i;
		return NCB__WC_SPANS;
	}
	/* Memory replaced and free space taken: past what was there. */
	if (covered < c->end - c->start)
		return NCB__WC_SPANS;
	for (i = first; i < n && i < WJ_MAX_VICTIMS; i++)
		text = text && (wj_empty(v[i].kind) ||
				wj_own_text(c, &v[i]));
	return wj_one_making(p, c, &v[first], text);
}

#endif

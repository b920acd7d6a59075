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
	 * grown over since (or, the preload's, the call meets no page of
	 * the heap), so a seen region in what the kernel names [heap] is
	 * that region, not the heap.  Linux before 6.6 names so
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
	wj_size region;			/* out: REGION's index (mixed: the
					   first not the caller's) */
	struct ncb__wmod by;		/* out: REGION's maker (of region) */
	int mixed;			/* out: REGION is regions of several
					   modules, which the kernel merged
					   into one mapping */
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
 * one's, but for a range above a stack's top where clone said it.  (The
 * best so far kept as values, not pointers: the kernel's verifier would
 * follow each thread's pointer apart.)
 */
static inline int wj_thread_of(const struct ncb__wproc *p,
			       const WJ_MAPPING *m, wc_u64 s, wc_u64 e,
			       int *tid)
{
	wc_u64 best_sp = 0, top_sp = 0;
	int best = 0, top = 0, best_tid = 0, top_tid = 0;
	wj_size i;

	for (i = 0; i < p->nthreads && i < WJ_MAX_THREADS; i++) {
		const struct ncb__wthread *t = &p->threads[i];

		/* Not above its top, where that is known (from clone). */
		if (t->sp < m->start || t->sp >= m->end ||
		    (t->top && s >= t->top))
			continue;
		if (t->sp >= e && (!best || t->sp < best_sp)) {
			best = 1;
			best_sp = t->sp;
			best_tid = t->tid;
		}
		if (!top || t->sp > top_sp) {
			top = 1;
			top_sp = t->sp;
			top_tid = t->tid;
		}
	}
	if (best || top)
		*tid = best ? best_tid : top_tid;
	return best || top;
}

#ifndef __bpf__
/* The first of n regions in address order ending above a, by halves. */
static inline wj_size wj_first_above(const struct ncb__wregion *r, wj_size n,
				     wc_u64 a)
{
	wj_size lo = 0, hi = n;

	while (lo < hi) {
		wj_size mid = lo + (hi - lo) / 2;

		if (r[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
#endif

/*
 * Where a look for address a starts among n regions in address order: by
 * halves in user space, where a process's regions are many; at the first
 * in the kernel, where an event's are few (those ending at a or below
 * are passed over one by one).
 */
static inline wj_size wj_from(const struct ncb__wregion *r, wj_size n,
			      wc_u64 a)
{
#ifdef __bpf__
	return 0;
#else
	return wj_first_above(r, n, a);
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
 * The seen regions holding [s, e), the part of a mapping replaced, each
 * of what the mapping maps (file), so that memory made again where the
 * watcher could not see (a loader's span of another object) is not
 * taken for a record's.  One module's without a gap: the kernel merges
 * one module's neighbouring commits into one mapping, which is its
 * region.  Several known modules' without a gap: the kernel merged
 * their mappings (replacing them replaces several makings).  A pass of
 * steps, one region a step, each next region where the last ended (they
 * are in order, none overlapping): its state kept here, not in a loop's
 * variables, so that the BPF programs run a step as a bpf_loop callback
 * with the state in a map, which the verifier looks at once instead of
 * following each way out of each turn (WJ_COVER).
 */
struct wj_cover {
	wc_u64 s, e;			/* in */
	struct ncb__wmod file;
	int whole;			/* out: they hold it without a gap */
	int one;			/* of one module (or one region) */
	int known;			/* each of a module known */
	wj_size first, other;		/* the first; the first not the
					   caller's (else the first) */
	struct ncb__wmod by, other_by;	/* their makers */
	wj_size k;			/* the pass: the next region */
	wc_u64 last;			/* where the last one ended */
	int found, seen_other;
};

static inline void wj_cover_begin(const struct ncb__wproc *p, wc_u64 s,
				  wc_u64 e, struct ncb__wmod file,
				  struct wj_cover *w)
{
	w->s = s;
	w->e = e;
	w->file = file;
	w->whole = w->one = w->known = 0;
	w->first = w->other = 0;
	w->by.dev = w->by.ino = w->other_by.dev = w->other_by.ino = 0;
	w->k = wj_from(p->regions, p->nregions, s);
	w->last = 0;
	w->found = w->seen_other = 0;
}

/* A step of the pass: 1 when it is over (w->whole says how). */
static inline int wj_cover_step(const struct ncb__wproc *p,
				const struct ncb__wcall *c,
				struct wj_cover *w)
{
	wj_size k = w->k;
	const struct ncb__wregion *g;

	if (k >= p->nregions || k >= WJ_MAX_REGIONS ||
	    (w->found && w->last >= w->e)) {
		w->whole = w->found && w->last >= w->e;
		return 1;
	}
	g = &p->regions[k];
	w->k = k + 1;
	if (!w->found && g->end <= w->s)
		return 0;
	if ((w->found ? g->start != w->last : g->start > w->s) ||
	    !wj_region_fits(g, 0, w->file))
		return 1;
	if (!w->found) {
		w->first = w->other = k;
		w->by = w->other_by = g->by;
		w->one = w->known = w->found = 1;
	} else {
		w->one = w->one && wj_mod_eq(w->by, g->by);
	}
	w->known = w->known && g->by.ino;
	if (!w->seen_other && !wj_mod_eq(g->by, c->caller)) {
		w->other = k;
		w->other_by = g->by;
		w->seen_other = 1;
	}
	w->last = g->end;
	return 0;
}

#ifndef WJ_COVER
/* The pass, every step (BPF: a bpf_loop over them, system.bpf.c). */
#define WJ_COVER(p, c, w)			\
	do {					\
		while (!wj_cover_step(p, c, w))	\
			;			\
	} while (0)
#endif

/*
 * Whether the seen regions holding [s, e) of v are one module's (the
 * result), or several known modules' (*mixed): the pass over the records,
 * made only for a victim whose kind needs it.
 */
static inline int wj_covered(const struct ncb__wproc *p,
			     const struct ncb__wcall *c,
			     const struct ncb__wvictim *v, wc_u64 s, wc_u64 e,
			     struct wj_cover *w, int *mixed)
{
	wj_cover_begin(p, s, e, v->mod, w);
	WJ_COVER(p, c, w);
	*mixed = w->whole && w->known && !w->one;
	return w->whole && w->one;
}

/*
 * The kinds told without the records, into v->kind: the kernel's names,
 * the program's and the interpreter's images, a thread's stack, a file's
 * pages past its end.  0 if v is none of them.
 */
static inline int wj_kind_known(const struct ncb__wproc *p,
				struct ncb__wvictim *v, wc_u64 s, wc_u64 e)
{
	if (v->named != NCB__W_ANON)
		v->kind = v->named;
	else if (wj_mod_eq(v->mod, p->exe))
		v->kind = NCB__W_EXE;
	else if (wj_mod_eq(v->mod, p->interp))
		v->kind = NCB__W_INTERP;
	else if (wj_thread_of(p, &v->m, s, e, &v->tid))
		v->kind = NCB__W_THREAD_STACK;
	else if (v->mod.ino && v->file_end &&
		 v->m.offset + (s - v->m.start) >= v->file_end)
		v->kind = NCB__W_PAST_EOF;
	else
		return 0;
	return 1;
}

/*
 * What one victim is, most telling first.  Reservation pages another
 * module was seen making are that module's region: set aside for its
 * own use (glibc grows an arena into its reservation with mprotect, over
 * whatever another has mapped there), not free for the caller to take;
 * several known modules' that the kernel merged, their regions (taking
 * them takes another's too); of no record, or made by code in no file,
 * they are nobody's known.
 */
static inline void wj_kind_of(const struct ncb__wproc *p,
			      const struct ncb__wcall *c,
			      struct ncb__wvictim *v, struct wj_cover *w)
{
	wc_u64 s = v->m.start > c->start ? v->m.start : c->start;
	wc_u64 e = v->m.end < c->end ? v->m.end : c->end;
	int own = 0, mixed = 0;

	v->tid = 0;
	v->region = 0;
	v->by.dev = v->by.ino = 0;
	v->mixed = 0;
	if (v->named == NCB__W_HEAP && p->sees_brk)
		own = wj_covered(p, c, v, s, e, w, &mixed);
	if (!own && wj_kind_known(p, v, s, e))
		return;
	if (!own)
		own = wj_covered(p, c, v, s, e, w, &mixed);
	if (!v->m.prot && !v->m.shared && !v->has_data && !mixed &&
	    !(own && w->by.ino && !wj_mod_eq(w->by, c->caller)))
		v->kind = NCB__W_RESERVED;
	else if (own || mixed)
		v->kind = NCB__W_REGION;
	else if (v->mod.ino && v->elf)
		v->kind = NCB__W_LIBRARY;
	else if (v->mod.ino)
		v->kind = NCB__W_FILE;
	else
		v->kind = NCB__W_ANON;
	if (v->kind == NCB__W_REGION) {
		v->mixed = mixed;
		v->region = mixed ? w->other : w->first;
		v->by = mixed ? w->other_by : w->by;
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
 * its range, in address order, each's kind known: wj_kind_of), one
 * victim a step: the kernel's verifier looks at a step once, where it
 * would follow a loop over the victims along every way out of it.  The
 * steps, in order: memory the kernel made or another thread's stack
 * (KERNEL); the first victim with something to lose (none: only
 * reservation pages); the others of its making, or SPANS; all of its
 * module's code (OWN_IMAGE), or its making's class for the caller.
 */
enum wj_phase { WJ_KERNEL, WJ_FIRST, WJ_SPANS, WJ_TEXT, WJ_DONE };

struct wj_verdict {
	enum wj_phase phase;
	int text;			/* the victims so far: the caller's
					   own code, or pages to lose none */
	wj_size i, first, n;
	wc_u64 covered;			/* bytes of the range mapped */
	enum ncb__wclass cls;		/* the verdict, once WJ_DONE */
	wj_size culprit;		/* the victim that decided it */
};

static inline void wj_verdict_begin(struct wj_verdict *s, wj_size n)
{
	s->phase = WJ_KERNEL;
	s->text = 1;
	s->i = s->first = s->culprit = 0;
	s->n = n < WJ_MAX_VICTIMS ? n : WJ_MAX_VICTIMS;
	s->covered = 0;
	s->cls = NCB__WC_NOTHING;
}

static inline int wj_done(struct wj_verdict *s, enum ncb__wclass cls)
{
	s->cls = cls;
	s->phase = WJ_DONE;
	return 1;
}

/* The step at victim s->i of the phase, or past the last: 1 when done. */
static inline int wj_verdict_step(struct wj_verdict *s,
				  const struct ncb__wproc *p,
				  const struct ncb__wcall *c,
				  const struct ncb__wvictim *v)
{
	wj_size i = s->i, f = s->first;
	const struct ncb__wvictim *x;

	if (s->phase == WJ_DONE || f >= s->n || f >= WJ_MAX_VICTIMS)
		return 1;
	if (i >= s->n || i >= WJ_MAX_VICTIMS) {
		switch (s->phase) {
		case WJ_KERNEL:
			s->phase = WJ_FIRST;
			s->i = 0;
			return 0;
		case WJ_FIRST:
			return wj_done(s, s->n ? NCB__WC_RESERVATION :
					   NCB__WC_NOTHING);
		case WJ_SPANS:
			/* Memory replaced and free space taken: past it. */
			if (s->covered < c->end - c->start)
				return wj_done(s, NCB__WC_SPANS);
			s->phase = WJ_TEXT;
			s->i = f;
			return 0;
		default:
			return wj_done(s, wj_one_making(p, c, &v[f],
							s->text));
		}
	}
	x = &v[i];
	s->i = i + 1;
	switch (s->phase) {
	case WJ_KERNEL:
		s->covered += (x->m.end < c->end ? x->m.end : c->end) -
			      (x->m.start > c->start ? x->m.start : c->start);
		s->culprit = i;
		if (wj_kernel_made(x->kind) && !wj_own_text(c, x))
			return wj_done(s, NCB__WC_KERNEL);
		if (x->kind == NCB__W_THREAD_STACK &&
		    (x->tid != c->tid || c->end > c->sp))
			return wj_done(s, NCB__WC_THREAD_STACK);
		if (x->mixed)
			return wj_done(s, NCB__WC_SPANS);
		return 0;
	case WJ_FIRST:
		if (wj_empty(x->kind))
			return 0;
		s->first = s->culprit = i;
		s->phase = WJ_SPANS;
		return 0;
	case WJ_SPANS:
		if (v[f].kind == NCB__W_LIBRARY ? wj_in_span(&v[f], x) :
		    wj_empty(x->kind) || wj_same_making(&v[f], x))
			return 0;
		s->culprit = i;
		return wj_done(s, NCB__WC_SPANS);
	default:
		s->text = s->text && (wj_empty(x->kind) || wj_own_text(c, x));
		return 0;
	}
}

/* The steps a verdict on n victims takes at most. */
#define WJ_VERDICT_STEPS(n) (4 * (n) + 4)

#ifndef __bpf__
/* The verdict, and in *culprit the index of the victim that decided. */
static inline enum ncb__wclass wj_verdict(const struct ncb__wproc *p,
					  const struct ncb__wcall *c,
					  const struct ncb__wvictim *v,
					  wj_size n, wj_size *culprit)
{
	struct wj_verdict s;

	wj_verdict_begin(&s, n);
	while (!wj_verdict_step(&s, p, c, v))
		;
	*culprit = s.culprit;
	return s.cls;
}
#endif

#endif

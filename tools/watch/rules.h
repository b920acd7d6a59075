/* SPDX-License-Identifier: MIT */
/*
 * What a fixed placement in a watched process would replace, and whether
 * replacing it is a clobber.  A pure function of the process's mappings and
 * of what the watcher knows of their history: no system call, so that the
 * rules can be tested from recorded maps, and shared by every watcher.  The
 * rules are written out in noclobber(7).
 */
#ifndef NCB_WATCH_RULES_H
#define NCB_WATCH_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "noclobber.h"

/* A module: the file a piece of code or memory comes from (0, 0: none). */
struct ncb__wmod {
	uint64_t dev;			/* makedev(major, minor) */
	uint64_t ino;
};

/* A thread and an address in its stack (its stack pointer at clone). */
struct ncb__wthread {
	pid_t tid;
	uint64_t sp;
	uint64_t top;			/* its stack's top; 0 if not known */
};

/*
 * A region whose making the watcher saw: the module whose code made it
 * (past the C library's system call wrappers: a malloc block is the C
 * library's) and what it maps.  A watcher records every placement, plain
 * or fixed, so that memory of no record was made where it could not see.
 */
struct ncb__wregion {
	uint64_t start, end;
	struct ncb__wmod by;		/* the module that made it */
	struct ncb__wmod file;		/* what it maps (0, 0: anonymous) */
	/* For reports: the rules ignore them. */
	uint64_t by_off;		/* the call's offset in by's file */
	unsigned int call;		/* the call that made it (calls.h) */
	double when;			/* seconds into the watch */
};

/*
 * A set of regions, in address order and never overlapping: a newer
 * region replaces what it covers of older ones, as the kernel replaces
 * their mappings.  At most max regions are kept (0: no bound); a region
 * that finds no room is not kept, but still takes from the older ones
 * what it covers, so that no record outlives the memory it was about.
 */
struct ncb__wregions {
	struct ncb__wregion *r;
	size_t n, cap, max;
};

/* 0, or -ENOMEM: then r's range is in no region of the set. */
int ncb__wregions_add(struct ncb__wregions *s, const struct ncb__wregion *r);
/* The region holding address a, or NULL. */
const struct ncb__wregion *ncb__wregions_at(const struct ncb__wregion *r,
					    size_t n, uint64_t a);
/* Memory made since where the watcher does not record makers: none. */
void ncb__wregions_cut(struct ncb__wregions *s, uint64_t start,
		       uint64_t end);
void ncb__wregions_free(struct ncb__wregions *s);

/* What the watcher knows of one process. */
struct ncb__wproc {
	struct ncb__wmod exe;		/* the program the kernel loaded */
	struct ncb__wmod interp;	/* its interpreter (the loader) */
	const struct ncb__wthread *threads;
	size_t nthreads;
	const struct ncb__wregion *regions;	/* in address order, */
	size_t nregions;			/* none overlapping */
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
	uint64_t start, end;
	pid_t tid;
	uint64_t sp;			/* the calling thread's stack pointer */
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
	struct ncb_mapping m;		/* in: the whole mapping */
	int elf;			/* in: the file is an ELF object */
	uint64_t file_end;		/* in: its size rounded up to a page;
					   0 if unknown or no file */
	int has_data;			/* in: a PROT_NONE private mapping's
					   pages replaced hold data */
	enum ncb__wkind kind;		/* out */
	pid_t tid;			/* out: THREAD_STACK's thread */
	size_t region;			/* out: REGION's index (mixed: the
					   first not the caller's) */
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

/*
 * The verdict on a call replacing victims v[0..n) (the mappings meeting
 * its range, in address order): the class, each victim's kind filled in,
 * and in *culprit the index of the victim that decided a clobber.
 */
enum ncb__wclass ncb__wjudge(const struct ncb__wproc *p,
					const struct ncb__wcall *c,
					struct ncb__wvictim *v, size_t n,
					size_t *culprit);
const char *ncb__wclass_name(enum ncb__wclass c);
const char *ncb__wkind_name(enum ncb__wkind k);

#endif

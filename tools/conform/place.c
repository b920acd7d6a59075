/* SPDX-License-Identifier: MIT */
/*
 * Placement with MAP_FIXED_NOREPLACE: exactly at the address on a free
 * range; EEXIST for an overlap of every kind, with nothing touched;
 * adjacency is no overlap; and the hint, which never replaces either but
 * takes another address where the flag fails.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "conform.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define HINT_BEFORE_417 BEFORE_417(A_ELSEWHERE)
#define MISSED_IN_417 { KV(4, 17), KV(4, 19), A_REPLACED, 0, \
	"Linux 4.17 and 4.18 looked only for a mapping containing the " \
	"address (find_vma); 7aa867dd8952 fixed it" }

/*
 * The flag over the case's [w + at, + len) pages with an occupant of
 * olen pages at w + oat (arg: at, len, oat, olen), in a window of 8.
 */
static void geometry(struct cctx *c, int prot, int flags)
{
	const int *g = c->cc->arg;
	size_t pg = c->pg;
	char *w = free_window(c, 8 * pg);
	struct occ o;
	long r;

	if (!w || occ_make(c, &o, w + (size_t)g[2] * pg, (size_t)g[3] * pg,
			   prot, flags))
		return;
	r = sys_mmap(w + (size_t)g[0] * pg, (size_t)g[1] * pg, RW, NOREPLACE,
		     -1, 0);
	judge_place(c, r, w + (size_t)g[0] * pg, (size_t)g[1] * pg, &o);
}

static void overlap(struct cctx *c)
{
	geometry(c, RW, 0);
}

static void prot_none(struct cctx *c)
{
	geometry(c, PROT_NONE, MAP_NORESERVE);
}

static void growsdown(struct cctx *c)
{
	geometry(c, RW, MAP_GROWSDOWN);
}

static void free_range(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);

	judge_place(c, sys_mmap(w + c->pg, 2 * c->pg, RW, NOREPLACE, -1, 0),
		    w + c->pg, 2 * c->pg, NULL);
}

/* A file's pages, at an offset: placed as exactly as anonymous ones. */
static void free_file(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	int fd = memfd_create("conform", MFD_CLOEXEC);
	long r;

	if (fd < 0 || ftruncate(fd, 4 * (off_t)c->pg)) {
		skip(c, "memfd_create: %s", err_name(errno));
		return;
	}
	r = sys_mmap(w, 2 * c->pg, PROT_READ, MAP_PRIVATE |
		     MAP_FIXED_NOREPLACE, fd, (long)c->pg);
	judge_place(c, r, w, 2 * c->pg, NULL);
	close(fd);
}

/* Guard regions (MADV_GUARD_INSTALL, 6.13) are mapped: nothing free. */
static void guard(struct cctx *c)
{
	size_t pg = c->pg;
	char *w = free_window(c, 8 * pg);
	struct occ o;
	long r;

	if (!w || occ_make(c, &o, w + 2 * pg, 3 * pg, RW, 0))
		return;
	if (madvise(w + 3 * pg, pg, MADV_GUARD_INSTALL)) {
		skip(c, "MADV_GUARD_INSTALL: %s (Linux 6.13)",
		     err_name(errno));
		return;
	}
	r = sys_mmap(w + 3 * pg, pg, RW, NOREPLACE, -1, 0);
	/* The guard page cannot be read: judged as a reservation. */
	o.a = w + 3 * pg;
	o.len = pg;
	o.prot = PROT_NONE;
	judge_place(c, r, w + 3 * pg, pg, &o);
}

/*
 * The flag over the first page of a mapping the process did not make
 * (what: the stack, the program), at s.  Its bytes are not this case's
 * to compare: replaced is mapped at the address.
 */
static void kernels_own(struct cctx *c, uintptr_t s, int prot,
			const char *what)
{
	long r = sys_mmap((void *)s, c->pg, prot, NOREPLACE, -1, 0);

	if ((unsigned long)r >= -4095UL)
		got_err(c, (int)-r);
	else if ((uintptr_t)r == s)
		got(c, A_REPLACED, "mapped over %s at %#lx", what,
		    (unsigned long)s);
	else
		got(c, A_ELSEWHERE, "mapped at %#lx, not over %s at %#lx",
		    (unsigned long)r, what, (unsigned long)s);
}

/* The process's stack (the bottom page, far below what is in use). */
static void stack(struct cctx *c)
{
	uintptr_t s, e;

	if (!maps_find("[stack]", &s, &e))
		skip(c, "no [stack] in /proc/self/maps");
	else
		kernels_own(c, s, RW, "the stack");
}

/* The program's own first page (its ELF header, read-only). */
static void image(struct cctx *c)
{
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uintptr_t s, e;

	if (n <= 0) {
		skip(c, "/proc/self/exe: %s", err_name(errno));
		return;
	}
	exe[n] = 0;
	if (!maps_find(exe, &s, &e))
		skip(c, "the program is not in /proc/self/maps");
	else
		kernels_own(c, s, PROT_READ, "the program");
}

/* x86_64's [vsyscall] page lies above TASK_SIZE: ENOMEM, not EEXIST. */
static void vsyscall(struct cctx *c)
{
	uintptr_t s, e;
	long r;

	if (!maps_find("[vsyscall]", &s, &e)) {
		skip(c, "no [vsyscall] page here");
		return;
	}
	r = sys_mmap((void *)s, c->pg, PROT_READ, NOREPLACE, -1, 0);
	judge_place(c, r, (char *)s, c->pg, NULL);
}

/* A one-page hole between two mappings takes a page exactly. */
static void hole(struct cctx *c)
{
	size_t pg = c->pg;
	char *w = free_window(c, 8 * pg);
	struct occ a, b;
	long r;

	if (!w || occ_make(c, &a, w + pg, 2 * pg, RW, 0) ||
	    occ_make(c, &b, w + 4 * pg, 2 * pg, RW, 0))
		return;
	r = sys_mmap(w + 3 * pg, pg, RW, NOREPLACE, -1, 0);
	judge_place(c, r, w + 3 * pg, pg, occ_intact(&a) ? &b : &a);
}

/*
 * The page below the stack: inside its guard gap, which the hint path
 * keeps (vm_start_gap) and a fixed placement does not.  Free before the
 * call (else skipped: the layout put something there).
 */
static char *below_stack(struct cctx *c)
{
	uintptr_t s, e;

	if (!maps_find("[stack]", &s, &e)) {
		skip(c, "no [stack] in /proc/self/maps");
		return NULL;
	}
	if (mapped_any((char *)(s - c->pg), c->pg)) {
		skip(c, "the page below the stack is mapped");
		return NULL;
	}
	return (char *)(s - c->pg);
}

static void stack_gap(struct cctx *c)
{
	char *a = below_stack(c);

	if (a)
		judge_place(c, sys_mmap(a, c->pg, RW, NOREPLACE, -1, 0), a,
			    c->pg, NULL);
}

static void hint_occupied(struct cctx *c)
{
	size_t pg = c->pg;
	char *w = free_window(c, 8 * pg);
	struct occ o;

	if (!w || occ_make(c, &o, w + 2 * pg, 2 * pg, RW, 0))
		return;
	judge_place(c, sys_mmap(w + 2 * pg, 2 * pg, RW, PLACE_ANON, -1, 0),
		    w + 2 * pg, 2 * pg, &o);
}

static void hint_stack_gap(struct cctx *c)
{
	char *a = below_stack(c);

	if (a)
		judge_place(c, sys_mmap(a, c->pg, RW, PLACE_ANON, -1, 0), a,
			    c->pg, NULL);
}

#define OVERLAP(n, fn, r, g, ...) { "overlap." n, G_OVERLAP, r, \
	"mm/mmap.c: do_mmap (find_vma_intersection)", A_ERR, EEXIST, \
	{ HINT_BEFORE_417, ##__VA_ARGS__ }, fn, g }

const struct ccase place_cases[] = {
	{ "place.free", G_PLACE, "the flag on a free range maps exactly at "
	  "the address", "mm/mmap.c: do_mmap (the flag implies MAP_FIXED; "
	  "a4ff8e8620d3, 4.17)", A_AT, 0, { { 0 } }, free_range, { 0 } },
	{ "place.file", G_PLACE, "a file's pages at an offset are placed "
	  "exactly too", "mm/mmap.c: do_mmap", A_AT, 0, { { 0 } },
	  free_file, { 0 } },
	OVERLAP("same", overlap, "a range equal to a mapping: EEXIST",
		ARG(2, 2, 2, 2)),
	OVERLAP("inside", overlap, "a range inside a mapping: EEXIST",
		ARG(3, 1, 2, 4)),
	OVERLAP("around", overlap, "a range around a whole mapping: "
		"EEXIST", ARG(1, 6, 3, 2), MISSED_IN_417),
	OVERLAP("start", overlap, "a mapping over the range's first page: "
		"EEXIST", ARG(2, 4, 1, 2)),
	OVERLAP("end", overlap, "a mapping starting inside the range and "
		"going on past it: EEXIST", ARG(1, 4, 4, 3), MISSED_IN_417),
	OVERLAP("last-page", overlap, "a mapping on the range's last page "
		"alone: EEXIST", ARG(0, 6, 5, 1), MISSED_IN_417),
	OVERLAP("prot-none", prot_none, "a PROT_NONE reservation is mapped: "
		"EEXIST", ARG(1, 4, 2, 2), MISSED_IN_417),
	OVERLAP("guard", guard, "pages made guard pages (MADV_GUARD_INSTALL) "
		"are mapped: EEXIST", ARG(0)),
	OVERLAP("growsdown", growsdown, "a MAP_GROWSDOWN mapping: EEXIST",
		ARG(2, 2, 2, 4)),
	OVERLAP("stack", stack, "the process's stack: EEXIST", ARG(0)),
	OVERLAP("image", image, "the program's own image: EEXIST", ARG(0)),
	{ "overlap.vsyscall", G_OVERLAP, "[vsyscall] lies above TASK_SIZE: "
	  "ENOMEM, never EEXIST", "mm/mmap.c: __get_unmapped_area "
	  "(TASK_SIZE)", A_ERR, ENOMEM, { HINT_BEFORE_417 }, vsyscall,
	  { 0 } },
	{ "adjacent.below", G_ADJACENT, "a range ending where a mapping "
	  "starts is free: mapped", "mm/mmap.c: do_mmap (half-open ranges)",
	  A_AT, 0, { { 0 } }, overlap, { 1, 2, 3, 2 } },
	{ "adjacent.above", G_ADJACENT, "a range starting where a mapping "
	  "ends is free: mapped", "mm/mmap.c: do_mmap (half-open ranges)",
	  A_AT, 0, { { 0 } }, overlap, { 3, 2, 1, 2 } },
	{ "adjacent.hole", G_ADJACENT, "a one-page hole between two "
	  "mappings takes one page", "mm/mmap.c: do_mmap", A_AT, 0,
	  { { 0 } }, hole, { 0 } },
	{ "adjacent.stack-gap", G_ADJACENT, "the flag maps in the stack's "
	  "guard gap, which only the hint keeps", "mm/mmap.c: "
	  "__get_unmapped_area (MAP_FIXED takes the address as it is)",
	  A_AT, 0, { HINT_BEFORE_417 }, stack_gap, { 0 } },
	{ "hint.occupied", G_HINT, "an occupied hint is placed elsewhere, "
	  "the occupant untouched", "mm/mmap.c: generic_get_unmapped_area",
	  A_ELSEWHERE, 0, { { 0 } }, hint_occupied, { 0 } },
	{ "hint.stack-gap", G_HINT, "a hint in the stack's guard gap is "
	  "placed elsewhere", "mm/mmap.c: generic_get_unmapped_area "
	  "(vm_start_gap; 1be7107fbe18, 4.12)", A_ELSEWHERE, 0,
	  { { 0, KV(4, 12), A_AT, 0, "before Linux 4.12 the stack's guard "
	      "was one page inside it (1be7107fbe18)" } }, hint_stack_gap,
	  { 0 } },
	{ NULL, 0, NULL, NULL, 0, 0, { { 0 } }, NULL, { 0 } },
};

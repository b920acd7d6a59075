/* SPDX-License-Identifier: MIT */
/*
 * Pictures of an address space (picture.c): the one SVG writer of every
 * command.  A picture is built in memory (areas, marks, notes), then
 * written whole: one self-contained SVG, the same bytes for the same
 * input.
 */
#ifndef NCB_PICTURE_H
#define NCB_PICTURE_H

#include <stdint.h>
#include <stdio.h>
#include "noclobber.h"

/* What an area is, which gives its colour (pic_kind_name). */
enum pic_kind {
	PK_PROGRAM, PK_INTERP, PK_LIBRARY, PK_HEAP, PK_STACK,
	PK_THREAD_STACK, PK_KERNEL, PK_ANON, PK_FILE, PK_RESERVED,
	PK_SHARED, PK_NKINDS
};

/* A mapping, or a planned one (dashed: not there yet). */
struct pic_area {
	uint64_t start, end, offset;
	int prot, shared;
	int kind;		/* enum pic_kind: pic_classify's, or set */
	int planned;
	char *path;		/* "" for none */
	char *note;		/* NULL, or what the title adds */
};

/* What a picture points at beside its areas. */
enum pic_mark_kind {
	PM_WINDOW,		/* a range of interest: a bracket */
	PM_ANCHOR,		/* what the window is around */
	PM_CLOBBER,		/* a range a call replaced */
	PM_POINT,		/* one address: the break, a caller */
	PM_NKINDS
};

struct pic_mark {
	uint64_t start, end;
	int kind;		/* enum pic_mark_kind */
	char *label;
};

#define PIC_NOTES 6

struct pic {
	char *title;
	char *subtitle;		/* NULL: none */
	uint64_t top;		/* the user address space ends here */
	char *top_name;		/* how it was known, for the picture */
	uint64_t lo, hi;	/* the part drawn; hi 0: up to top */
	struct pic_area *a;
	size_t n, cap;
	struct pic_mark *m;
	size_t nm, capm;
	char *notes[PIC_NOTES];
	int nnotes;
	int embed;		/* inside HTML: no XML declaration */
	int serial;		/* its ids' suffix: unique in a page */
	int err;		/* the first failure of a builder: -errno */
};

void pic_init(struct pic *p);
void pic_free(struct pic *p);
/* Builders: each failure is kept in p->err, which pic_svg returns. */
void pic_title(struct pic *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pic_subtitle(struct pic *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pic_note(struct pic *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Areas do not overlap; they come in address order, or pic_sort. */
void pic_add(struct pic *p, const struct ncb_mapping *m);
void pic_add_planned(struct pic *p, uint64_t start, uint64_t end, int prot,
		     int kind, const char *path, const char *note);
void pic_sort(struct pic *p);
/* [lo, hi) taken out of the areas, those across its ends cut there. */
void pic_cut(struct pic *p, uint64_t lo, uint64_t hi);
void pic_mark(struct pic *p, int kind, uint64_t start, uint64_t end,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/*
 * The kind of every area that is not planned, by its name and
 * neighbours; exe names the program's file (NULL: the first file
 * mapped, where the whole space is drawn).
 */
void pic_classify(struct pic *p, const char *exe);
/*
 * The user address space's end: that of this machine's processes for a
 * 64-bit one (the library's), 4 GiB for a 32-bit one, or for maps of
 * unknown origin the smallest an architecture gives that holds them.
 */
void pic_space(struct pic *p, int bits, uint64_t this_top);
/* The mappings of maps overlapping [lo, hi) (hi 0: all): 0, -errno. */
int pic_read(struct pic *p, struct ncb_maps *maps, uint64_t lo,
	     uint64_t hi);
/*
 * A live process's picture: WHAT, its name and PID as the title, the
 * time (SOURCE_DATE_EPOCH's, if set), its address space's end and the
 * kinds of its areas, its program known by /proc/PID/exe.
 */
void pic_process(struct pic *p, pid_t pid, const char *what);
/* The whole SVG: 0, or -errno (a builder's, or the write's). */
int pic_svg(const struct pic *p, FILE *out);
/* Text escaped for XML, at most max characters ("..." past them). */
void pic_text(FILE *f, const char *s, size_t max);
const char *pic_kind_name(int kind);

#endif

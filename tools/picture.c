/* SPDX-License-Identifier: MIT */
/*
 * Pictures of an address space: one SVG writer for every command.
 *
 * The space is drawn as a column, high addresses at the top.  A linear
 * scale would hide a page next to a 100 TiB gap, so heights follow
 * log2 of a mapping's size, a gap is drawn at one fixed height with its
 * size written in it, and consecutive mappings of one file make one
 * block.  Past PIC_BODY pixels everything is scaled down; marks that
 * would then be under a pixel are drawn together as one aggregate mark,
 * and the picture says how many.  A label sits beside what it names
 * where its line is free: labels are placed by rank (the window, the
 * anchor and points; then planned ones and those with a note, such as
 * a victim; then a replaced range; then the program, interpreter, heap,
 * stacks and kernel mappings; then the rest, the larger first) and
 * one that would overlap a placed one is left out; every mark keeps a
 * <title>, which a browser shows on hover.
 *
 * Colours: Paul Tol's "muted" qualitative scheme (made to stay apart
 * under the common colour-vision deficiencies), its pale grey for
 * reservations (hatched), a dark grey for shared mappings.  The picture
 * has its own white ground, so it reads on a dark page too.  Text is 11
 * px (the title 16), in the reader's sans-serif font: no font, script or
 * file is referred to.  The same input gives the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "noclobber_intree.h"
#include "picture.h"

#define PIC_W 960		/* width */
#define PIC_BODY 2400		/* the column's most height before scaling */
#define ADDR_X 150		/* addresses end here */
#define BAR_X 160
#define BAR_W 150
#define MARK_X 316
#define LABEL_X 334
#define LABEL_CHARS 88		/* what fits from LABEL_X to the edge */
#define TITLE_CHARS 90		/* what fits of the title */
#define GAP_H 22.0		/* a gap, whatever its size */
#define LINE 13			/* a label's rows */
#define FONT 11

static const struct {
	const char *name;
	const char *fill;
} kinds[PK_NKINDS] = {
	[PK_PROGRAM] = { "program", "#CC6677" },		/* rose */
	[PK_INTERP] = { "interpreter", "#AA4499" },		/* purple */
	[PK_LIBRARY] = { "library", "#332288" },		/* indigo */
	[PK_HEAP] = { "heap", "#DDCC77" },			/* sand */
	[PK_STACK] = { "stack", "#117733" },			/* green */
	[PK_THREAD_STACK] = { "thread stack", "#44AA99" },	/* teal */
	[PK_KERNEL] = { "vDSO, vvar", "#882255" },		/* wine */
	[PK_ANON] = { "anonymous", "#88CCEE" },			/* cyan */
	[PK_FILE] = { "file", "#999933" },			/* olive */
	[PK_RESERVED] = { "reservation (PROT_NONE)", NULL },	/* hatched */
	[PK_SHARED] = { "shared", "#555555" },
};

static const char *const mark_name[PM_NKINDS] = {
	[PM_WINDOW] = "window", [PM_ANCHOR] = "anchor",
	[PM_CLOBBER] = "replaced range", [PM_POINT] = "address",
};

/* A kind's fill; the hatch's name is the picture's own (pages hold many). */
static const char *fill(const struct pic *p, int kind, char buf[32])
{
	if (kinds[kind].fill)
		return kinds[kind].fill;
	snprintf(buf, 32, "url(#hatch%d)", p->serial);
	return buf;
}

const char *pic_kind_name(int kind)
{
	return kind >= 0 && kind < PK_NKINDS ? kinds[kind].name : "?";
}

void pic_init(struct pic *p)
{
	memset(p, 0, sizeof(*p));
}

void pic_free(struct pic *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->a[i].path);
		free(p->a[i].note);
	}
	for (i = 0; i < p->nm; i++)
		free(p->m[i].label);
	for (i = 0; i < (size_t)p->nnotes; i++)
		free(p->notes[i]);
	free(p->a);
	free(p->m);
	free(p->title);
	free(p->subtitle);
	free(p->top_name);
	pic_init(p);
}

static char *vformat(struct pic *p, const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0) {
		p->err = -ENOMEM;
		return NULL;
	}
	return s;
}

/* Formatted before the old text goes: it may be an argument. */
static void set_text(struct pic *p, char **dst, const char *fmt, va_list ap)
{
	char *t = vformat(p, fmt, ap);

	free(*dst);
	*dst = t;
}

void pic_title(struct pic *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_text(p, &p->title, fmt, ap);
	va_end(ap);
}

void pic_subtitle(struct pic *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_text(p, &p->subtitle, fmt, ap);
	va_end(ap);
}

void pic_note(struct pic *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nnotes == PIC_NOTES)
		return;
	va_start(ap, fmt);
	p->notes[p->nnotes] = vformat(p, fmt, ap);
	if (p->notes[p->nnotes])
		p->nnotes++;
	va_end(ap);
}

static struct pic_area *new_area(struct pic *p)
{
	struct pic_area *a;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;

		a = realloc(p->a, cap * sizeof(*a));
		if (!a) {
			p->err = -ENOMEM;
			return NULL;
		}
		p->a = a;
		p->cap = cap;
	}
	a = &p->a[p->n];
	memset(a, 0, sizeof(*a));
	return a;
}

void pic_add(struct pic *p, const struct ncb_mapping *m)
{
	struct pic_area *a = new_area(p);

	if (!a)
		return;
	a->start = m->start;
	a->end = m->end;
	a->offset = m->offset;
	a->prot = m->prot;
	a->shared = m->shared;
	a->kind = PK_ANON;
	a->path = strdup(m->path);
	if (!a->path) {
		p->err = -ENOMEM;
		return;
	}
	p->n++;
}

void pic_add_planned(struct pic *p, uint64_t start, uint64_t end, int prot,
		     int kind, const char *path, const char *note)
{
	struct pic_area *a = new_area(p);

	if (!a)
		return;
	*a = (struct pic_area){ .start = start, .end = end, .prot = prot,
				.kind = kind, .planned = 1 };
	a->path = strdup(path ? path : "");
	a->note = note ? strdup(note) : NULL;
	if (!a->path || (note && !a->note)) {
		free(a->path);
		free(a->note);
		p->err = -ENOMEM;
		return;
	}
	p->n++;
}

void pic_mark(struct pic *p, int kind, uint64_t start, uint64_t end,
	      const char *fmt, ...)
{
	struct pic_mark *m;
	va_list ap;

	if (p->nm == p->capm) {
		size_t cap = p->capm ? p->capm * 2 : 8;

		m = realloc(p->m, cap * sizeof(*m));
		if (!m) {
			p->err = -ENOMEM;
			return;
		}
		p->m = m;
		p->capm = cap;
	}
	m = &p->m[p->nm];
	m->start = start;
	m->end = end;
	m->kind = kind;
	va_start(ap, fmt);
	m->label = vformat(p, fmt, ap);
	va_end(ap);
	if (m->label)
		p->nm++;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return *path == '/' && s && s[1] ? s + 1 : path;
}

/* ld.so by any of its names: ld-linux-x86-64.so.2, ld-2.31.so, ld-musl. */
static int is_interp(const char *path)
{
	const char *b = base_name(path);

	return *path == '/' && !strncmp(b, "ld", 2) && strstr(b, ".so") &&
	       (b[2] == '-' || b[2] == '.');
}

static int is_kernel(const char *path)
{
	static const char *const names[] = {
		"[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]",
		"[vectors]", "[sigpage]", "[uprobes]",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(path, names[i]))
			return 1;
	return 0;
}

static int kind_of(const struct pic_area *a, const char *exe)
{
	if (!strcmp(a->path, "[heap]"))
		return PK_HEAP;
	if (!strcmp(a->path, "[stack]"))
		return PK_STACK;
	if (!strncmp(a->path, "[stack:", 7))
		return PK_THREAD_STACK;
	if (is_kernel(a->path))
		return PK_KERNEL;
	if (exe && *a->path && !strcmp(a->path, exe))
		return PK_PROGRAM;
	if (is_interp(a->path))
		return PK_INTERP;
	if (a->shared)
		return PK_SHARED;
	if (*a->path && *a->path != '[')
		return strstr(base_name(a->path), ".so") ? PK_LIBRARY
							 : PK_FILE;
	return a->prot ? PK_ANON : PK_RESERVED;
}

void pic_classify(struct pic *p, const char *exe)
{
	size_t i;

	/* A guess for a whole space only: a window may lack the program. */
	for (i = 0; !exe && !p->hi && i < p->n; i++)
		if (*p->a[i].path == '/' && !p->a[i].planned)
			exe = p->a[i].path;
	for (i = 0; i < p->n; i++) {
		struct pic_area *a = &p->a[i], *g = i ? a - 1 : NULL;

		if (a->planned)
			continue;
		a->kind = kind_of(a, exe);
		/*
		 * A thread's stack as the C library makes it: anonymous,
		 * writable, just above its PROT_NONE guard (a page, or what
		 * pthread_attr_setguardsize asked: at most 1 MiB here, so
		 * that a reservation below a malloc arena is none).
		 */
		if (a->kind == PK_ANON && g && g->kind == PK_RESERVED &&
		    g->end == a->start && a->end - a->start >= 64 << 10 &&
		    g->end - g->start <= 1 << 20 && (a->prot & PROT_WRITE)) {
			a->kind = PK_THREAD_STACK;
			g->kind = PK_THREAD_STACK;
		}
	}
}

/*
 * TASK_SIZE of each architecture's 64-bit processes, the smallest first
 * (arch/ * /include/asm/processor.h, pgtable.h): riscv64 Sv39, arm64
 * with 39, 42 and 47-bit VAs, x86_64 (4-level paging, less a page) and
 * riscv64 Sv48, arm64 48-bit, ppc64le (4 PiB), arm64 52-bit, x86_64 with
 * 5-level paging and riscv64 Sv57.
 */
static const struct {
	uint64_t top;
	const char *name;
} tops[] = {
	{ 1ULL << 38, "256 GiB, riscv64 Sv39" },
	{ 1ULL << 39, "512 GiB, a 39-bit arm64" },
	{ 1ULL << 42, "4 TiB, a 42-bit arm64" },
	{ 0x7ffffffff000ULL, "128 TiB less a page, x86_64" },
	{ 1ULL << 47, "128 TiB, riscv64 Sv48 or a 47-bit arm64" },
	{ 1ULL << 48, "256 TiB, a 48-bit arm64" },
	{ 1ULL << 52, "4 PiB, ppc64le or a 52-bit arm64" },
	{ (1ULL << 56) - 4096, "64 PiB less a page, x86_64 with 5-level "
	  "paging" },
	{ 1ULL << 56, "64 PiB, riscv64 Sv57" },
};

/* The end of the highest area below the gate area (x86_64's vsyscall). */
static uint64_t highest(const struct pic *p)
{
	size_t i = p->n;

	while (i > 0 && !strcmp(p->a[i - 1].path, "[vsyscall]"))
		i--;
	return i ? p->a[i - 1].end : 0;
}

void pic_space(struct pic *p, int bits, uint64_t this_top)
{
	uint64_t h = highest(p);
	const char *name = NULL;
	char buf[32];
	size_t i;

	free(p->top_name);
	p->top_name = NULL;
	if (bits == 32 || (!bits && h <= 1ULL << 32)) {
		p->top = 1ULL << 32;
		name = bits ? "4 GiB, a 32-bit process" :
			      "4 GiB: all below it, a 32-bit process";
	} else if (bits == 64 && this_top >= h) {
		p->top = this_top;
		if (asprintf(&p->top_name, "%s, this machine's",
			     human(this_top, 0, buf)) < 0)
			p->err = -ENOMEM;
		return;
	} else {
		for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
			if (tops[i].top >= h)
				break;
		p->top = i < sizeof(tops) / sizeof(tops[0]) ? tops[i].top : h;
		name = i < sizeof(tops) / sizeof(tops[0]) ? tops[i].name
							  : "its highest end";
	}
	p->top_name = strdup(name);
	if (!p->top_name)
		p->err = -ENOMEM;
}

static int area_cmp(const void *x, const void *y)
{
	const struct pic_area *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

void pic_sort(struct pic *p)
{
	qsort(p->a, p->n, sizeof(*p->a), area_cmp);
}

/* The part of area i from hi up, as an area of its own, at the end. */
static void split(struct pic *p, size_t i, uint64_t hi)
{
	struct pic_area *a = new_area(p), *o = &p->a[i];

	if (!a)
		return;
	*a = *o;
	a->start = hi;
	if (*o->path)
		a->offset += hi - o->start;
	a->path = strdup(o->path);
	a->note = o->note ? strdup(o->note) : NULL;
	if (!a->path || (o->note && !a->note)) {
		free(a->path);
		free(a->note);
		p->err = -ENOMEM;
		return;
	}
	p->n++;
	p->a[i].end = hi;
}

void pic_cut(struct pic *p, uint64_t lo, uint64_t hi)
{
	size_t i, n = p->n;
	struct pic_area *a;

	for (i = 0; i < n && !p->err; i++)
		if (p->a[i].start < hi && p->a[i].end > hi)
			split(p, i, hi);
	for (i = 0; i < p->n; ) {
		a = &p->a[i];
		if (a->end <= lo || a->start >= hi) {
			i++;
		} else if (a->start < lo) {
			a->end = lo;
			i++;
		} else {
			free(a->path);
			free(a->note);
			memmove(a, a + 1, (--p->n - i) * sizeof(*a));
		}
	}
	pic_sort(p);
}

int pic_read(struct pic *p, struct ncb_maps *maps, uint64_t lo,
	     uint64_t hi)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	int ret;

	while ((ret = ncb_maps_next(maps, &m)) == 1 && !p->err)
		if (m.end > lo && (!hi || m.start < hi))
			pic_add(p, &m);
	return ret < 0 ? ret : p->err;
}

/* A file of /proc/PID: its first line, or "". */
static void proc_line(pid_t pid, const char *name, char *buf, size_t len)
{
	ssize_t n = proc_read(pid, name, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The program's class: 32 or 64, 0 if it cannot be read. */
static int exe_bits(pid_t pid)
{
	unsigned char id[5];

	if (proc_read(pid, "exe", id, sizeof(id)) != (ssize_t)sizeof(id) ||
	    memcmp(id, "\177ELF", 4))
		return 0;
	return id[4] == 1 ? 32 : id[4] == 2 ? 64 : 0;
}

void pic_process(struct pic *p, pid_t pid, const char *what)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	char comm[64], link[64], exe[PATH_MAX], when[64];
	int bits;
	time_t t = epoch ? (time_t)strtoll(epoch, NULL, 10) : time(NULL);
	struct tm tm;
	ssize_t n;

	if (!pid)
		pid = getpid();
	proc_line(pid, "comm", comm, sizeof(comm));
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (!gmtime_r(&t, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(when, sizeof(when), "an unknown time");
	pic_title(p, "%s %s (PID %d)", what, comm, (int)pid);
	pic_subtitle(p, "at %s; its program %s", when, n > 0 ? exe :
		     "not readable");
	bits = exe_bits(pid);
	/* Another machine's program (qemu-user) has its own space. */
	pic_space(p, bits, bits == (int)sizeof(void *) * 8 ? ncb__user_top()
							 : 0);
	pic_classify(p, n > 0 ? exe : NULL);
}

/*
 * XML text: markup characters as entities; control characters and C1
 * controls as the C escape of each byte ("\012"), bytes that are no
 * UTF-8 as "\xNN", so that any name gives well-formed, visible text.
 */
static size_t utf8_len(const unsigned char *s)
{
	uint32_t c;
	size_t n, i;

	if (*s < 0x80)
		return 1;
	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4;
	else
		return 0;
	c = *s & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/*
	 * Overlong, surrogates, past U+10FFFF, C1, XML's non-characters,
	 * and the bidirectional controls, which would reorder the text
	 * around them (a name "\u202e" could show as another).
	 */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff ||
	    (c >= 0x80 && c <= 0x9f) || c == 0xfffe || c == 0xffff ||
	    c == 0x61c || c == 0x200e || c == 0x200f ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
		return 0;
	return n;
}

void pic_text(FILE *f, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, chars = 0;

	for (; *u; u += n) {
		if (chars++ == max) {
			fputs("...", f);
			return;
		}
		n = utf8_len(u);
		if (*u == '<')
			fputs("&lt;", f);
		else if (*u == '>')
			fputs("&gt;", f);
		else if (*u == '&')
			fputs("&amp;", f);
		else if (*u == '"')
			fputs("&quot;", f);
		else if (*u == '\'')
			fputs("&apos;", f);
		else if (*u < 0x20 || *u == 0x7f)
			fprintf(f, "\\%03o", *u);
		else if (!n)
			fprintf(f, "\\x%02x", *u);
		else
			fwrite(u, 1, n, f);
		n = n ? n : 1;
	}
}

/* The layout: units (a block of one file's mappings, or a gap). */
struct unit {
	uint64_t start, end;
	size_t a0, a1;		/* areas [a0, a1); a0 == a1: a gap */
	int beyond;		/* a gap past the user address space */
	double y, h;		/* top and height */
};

/* What is drawn: units [u0, u1), one mark if more than one. */
struct draw {
	size_t u0, u1;
};

struct lay {
	const struct pic *p;
	uint64_t lo, hi;
	struct unit *u;
	size_t nu;
	struct draw *d;
	size_t nd;
	double y0, body;	/* the column's top and height */
	size_t agg_maps, agg_gaps, agg_marks;
	unsigned char *busy[2];	/* label rows taken: addresses, names */
	int rows;
};

/* log2 of n (at least 1), straight between powers of two: no libm. */
static double lg(uint64_t n)
{
	int k;

	if (n < 2)
		return 0;
	k = 63 - __builtin_clzll(n);
	return k + (double)(n - (1ULL << k)) / (double)(1ULL << k);
}

static double natural(const struct unit *u)
{
	if (u->a0 == u->a1)
		return GAP_H;
	return 8 + 3 * lg((u->end - u->start) >> 12);
}

/* Whether area b continues the block of area a: one file, adjacent. */
static int same_block(const struct pic_area *a, const struct pic_area *b)
{
	return b->start == a->end && *a->path && !strcmp(a->path, b->path) &&
	       a->kind == b->kind && a->planned == b->planned &&
	       !a->note == !b->note && (!a->note || !strcmp(a->note, b->note));
}

static void push_unit(struct lay *l, uint64_t s, uint64_t e, size_t a0,
		      size_t a1, int beyond)
{
	struct unit *u;

	if (s >= e)
		return;
	/* Every area makes at most one block and one gap, and the top two. */
	u = &l->u[l->nu++];
	*u = (struct unit){ .start = s, .end = e, .a0 = a0, .a1 = a1,
			    .beyond = beyond };
}

static void gap_units(struct lay *l, uint64_t s, uint64_t e, size_t i)
{
	uint64_t top = l->p->top;

	if (s < top && e > top) {
		push_unit(l, s, top, i, i, 0);
		push_unit(l, top, e, i, i, 1);
	} else {
		push_unit(l, s, e, i, i, s >= top);
	}
}

static int make_units(struct lay *l)
{
	const struct pic *p = l->p;
	uint64_t prev = l->lo;
	size_t i, j;

	l->u = calloc(2 * p->n + 3, sizeof(*l->u));
	if (!l->u)
		return -ENOMEM;
	for (i = 0; i < p->n; i = j) {
		const struct pic_area *a = &p->a[i];

		j = i + 1;
		if (a->end <= l->lo || a->start >= l->hi || a->start < prev)
			continue;
		gap_units(l, prev, a->start, i);
		while (j < p->n && same_block(&p->a[j - 1], &p->a[j]) &&
		       p->a[j].end <= l->hi)
			j++;
		prev = p->a[j - 1].end < l->hi ? p->a[j - 1].end : l->hi;
		push_unit(l, a->start > l->lo ? a->start : l->lo, prev, i, j,
			  0);
	}
	gap_units(l, prev, l->hi, p->n);
	return 0;
}

static int size_cmp(const void *x, const void *y)
{
	const struct unit *a = *(const struct unit *const *)x;
	const struct unit *b = *(const struct unit *const *)y;

	if (a->end - a->start != b->end - b->start)
		return a->end - a->start < b->end - b->start ? 1 : -1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * Heights within PIC_BODY, and each unit's top.  Where the natural
 * heights pass it, the largest units keep theirs in half of it (a large
 * gap stays a labelled gap among thousands of pages), all of a size or
 * none, and the others share the rest.  h holds 1 for a unit kept,
 * first.
 */
static int place_units(struct lay *l)
{
	double total = 0, kept = 0, s = 1, y;
	struct unit **by;
	size_t i, j;

	for (i = 0; i < l->nu; i++) {
		total += natural(&l->u[i]);
		l->u[i].h = 0;
	}
	if (total > PIC_BODY) {
		by = malloc(l->nu * sizeof(*by));
		if (!by)
			return -ENOMEM;
		for (i = 0; i < l->nu; i++)
			by[i] = &l->u[i];
		qsort(by, l->nu, sizeof(*by), size_cmp);
		for (i = 0; i < l->nu; i = j) {
			double group = 0;

			/* Units of one size all or none: no favourite. */
			for (j = i; j < l->nu && by[j]->end - by[j]->start ==
			     by[i]->end - by[i]->start; j++)
				group += natural(by[j]);
			if (kept + group > PIC_BODY / 2)
				break;
			kept += group;
			for (j = i; j < l->nu && by[j]->end - by[j]->start ==
			     by[i]->end - by[i]->start; j++)
				by[j]->h = 1;
		}
		free(by);
		s = (PIC_BODY - kept) / (total - kept);
	}
	l->body = 0;
	for (i = 0; i < l->nu; i++) {
		l->u[i].h = natural(&l->u[i]) * (l->u[i].h ? 1 : s);
		l->body += l->u[i].h;
	}
	y = l->y0 + l->body;
	for (i = 0; i < l->nu; i++) {
		y -= l->u[i].h;
		l->u[i].y = y;
	}
	return 0;
}

/* Units under a pixel go together, into marks of two pixels or more. */
static int make_draws(struct lay *l)
{
	size_t i, k;
	double h;

	l->d = calloc(l->nu + 1, sizeof(*l->d));
	if (!l->d)
		return -ENOMEM;
	for (i = 0; i < l->nu; i = k) {
		k = i + 1;
		if (l->u[i].h >= 1) {
			l->d[l->nd++] = (struct draw){ i, k };
			continue;
		}
		for (h = l->u[i].h; k < l->nu && l->u[k].h < 1 && h < 2; k++)
			h += l->u[k].h;
		l->d[l->nd++] = (struct draw){ i, k };
		if (k - i == 1)
			continue;
		l->agg_marks++;
		for (; i < k; i++) {
			if (l->u[i].a0 == l->u[i].a1)
				l->agg_gaps++;
			else
				l->agg_maps += l->u[i].a1 - l->u[i].a0;
		}
	}
	return 0;
}

static double addr_y(const struct lay *l, uint64_t a)
{
	size_t lo = 0, hi = l->nu, m;
	const struct unit *u;

	if (!l->nu || a <= l->u[0].start)
		return l->y0 + l->body;
	while (hi - lo > 1) {
		m = (lo + hi) / 2;
		if (l->u[m].start <= a)
			lo = m;
		else
			hi = m;
	}
	u = &l->u[lo];
	if (a >= u->end)
		return u->y;
	return u->y + u->h - u->h * ((double)(a - u->start) /
				     (double)(u->end - u->start));
}

/* A label's rows [y - 6, y + 7) taken if free: 1, else 0. */
static int take(struct lay *l, int col, int y)
{
	int r0 = y - LINE / 2 + LINE, r;

	if (r0 < 0 || r0 + LINE > l->rows)
		return 0;
	for (r = r0; r < r0 + LINE; r++)
		if (l->busy[col][r])
			return 0;
	memset(&l->busy[col][r0], 1, LINE);
	return 1;
}

/*
 * The nearest free line within slack of y, on a whole pixel (so that
 * lines a label apart stay apart as drawn); NAN if none.
 */
static double take_near(struct lay *l, int col, double y, double slack)
{
	int d, at = (int)(y + 0.5);

	for (d = 0; d <= (int)slack; d++) {
		if (take(l, col, at - d))
			return at - d;
		if (d && take(l, col, at + d))
			return at + d;
	}
	return NAN;
}

static void print_size(FILE *f, uint64_t n)
{
	char buf[32];

	fputs(human(n, 0, buf), f);
}

static void area_title(FILE *f, const struct pic_area *a)
{
	char perms[5];
	struct ncb_mapping m = NCB_INIT(ncb_mapping, .prot = a->prot,
					.shared = a->shared);

	perm_string(&m, perms);
	fprintf(f, "<title>%#" PRIx64 "-%#" PRIx64 " %s ", a->start, a->end,
		perms);
	print_size(f, a->end - a->start);
	fprintf(f, " %s%s", a->planned ? "planned " : "",
		pic_kind_name(a->kind));
	if (*a->path) {
		fputc(' ', f);
		pic_text(f, a->path, 4096);
	}
	if (a->note) {
		fputs(": ", f);
		pic_text(f, a->note, 4096);
	}
	fputs("</title>", f);
}

static void rect(FILE *f, const struct lay *l, double y, double h,
		 const struct pic_area *a)
{
	char buf[32];

	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		"fill=\"%s\"", BAR_X, y, BAR_W, h, fill(l->p, a->kind, buf));
	if (a->planned)
		fputs(" fill-opacity=\"0.55\" stroke=\"#000\" "
		      "stroke-dasharray=\"5 3\"", f);
	else if (h >= 3)
		fputs(" stroke=\"#fff\" stroke-width=\"0.5\"", f);
}

/* A block: each mapping its own rect where each gets a pixel. */
static void draw_block(FILE *f, const struct lay *l, const struct unit *u)
{
	const struct pic_area *a = &l->p->a[u->a0];
	double w = 0, y = u->y + u->h, h;
	size_t i, n = u->a1 - u->a0;

	for (i = u->a0; i < u->a1; i++)
		w += 1 + lg((l->p->a[i].end - l->p->a[i].start) >> 12);
	if (u->h / (double)n < 1) {
		rect(f, l, u->y, u->h, a);
		fprintf(f, "><title>%#" PRIx64 "-%#" PRIx64 " %zu mappings ",
			u->start, u->end, n);
		print_size(f, u->end - u->start);
		fprintf(f, " %s ", pic_kind_name(a->kind));
		pic_text(f, a->path, 4096);
		fputs("</title></rect>\n", f);
		return;
	}
	for (i = u->a0; i < u->a1; i++) {
		a = &l->p->a[i];
		h = u->h * (1 + lg((a->end - a->start) >> 12)) / w;
		y -= h;
		rect(f, l, y, h, a);
		fputc('>', f);
		area_title(f, a);
		fputs("</rect>\n", f);
	}
}

static void draw_gap(FILE *f, const struct unit *u)
{
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		"fill=\"#fff\" stroke=\"#777\" stroke-dasharray=\"4 3\">"
		"<title>%#" PRIx64 "-%#" PRIx64 " ", BAR_X + 20, u->y + 1,
		BAR_W - 40, u->h > 2 ? u->h - 2 : u->h, u->start, u->end);
	print_size(f, u->end - u->start);
	fprintf(f, " %s</title></rect>\n", u->beyond ? "beyond the user "
		"address space" : "free");
	if (u->h < LINE)
		return;
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">",
		BAR_X + BAR_W / 2, u->y + u->h / 2 + 4);
	if (u->beyond)
		fputs("not user space", f);
	else
		print_size(f, u->end - u->start);
	fputs(u->beyond ? "</text>\n" : " free</text>\n", f);
}

/* Units [u0, u1) as one mark: the kind with the most bytes colours it. */
static void draw_aggregate(FILE *f, const struct lay *l,
			   const struct draw *d)
{
	uint64_t bytes[PK_NKINDS] = { 0 }, mapped = 0;
	size_t i, j, maps = 0, gaps = 0;
	char buf[32];
	int k, best = PK_ANON;
	const struct unit *lo = &l->u[d->u0], *hi = &l->u[d->u1 - 1];

	for (i = d->u0; i < d->u1; i++) {
		gaps += l->u[i].a0 == l->u[i].a1;
		for (j = l->u[i].a0; j < l->u[i].a1; j++) {
			const struct pic_area *a = &l->p->a[j];

			bytes[a->kind] += a->end - a->start;
			mapped += a->end - a->start;
			maps++;
		}
	}
	for (k = 0; k < PK_NKINDS; k++)
		if (bytes[k] > bytes[best])
			best = k;
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		"fill=\"%s\"><title>%#" PRIx64 "-%#" PRIx64 " aggregated: %zu "
		"mappings (", BAR_X, hi->y, BAR_W, lo->y + lo->h - hi->y,
		maps ? fill(l->p, best, buf) : "#fff", lo->start, hi->end,
		maps);
	print_size(f, mapped);
	fprintf(f, ", mostly %s) and %zu gaps</title></rect>\n",
		pic_kind_name(best), gaps);
}

static const char *area_name(const struct pic_area *a)
{
	if (a->note)
		return a->note;
	return *a->path ? base_name(a->path) : pic_kind_name(a->kind);
}

/*
 * Ranked: 0 first.  What the picture is about (a victim, a plan) before
 * the landmarks: a victim is often a page of the heap or the stack, whose
 * neighbours, of its kind and size, would otherwise take its line.
 */
static int rank(const struct pic_area *a)
{
	if (a->planned || a->note)
		return 0;
	return a->kind == PK_PROGRAM || a->kind == PK_INTERP ||
	       a->kind == PK_HEAP || a->kind == PK_STACK ||
	       a->kind == PK_KERNEL ? 1 : 2;
}

struct cand {
	size_t u;		/* the unit named */
	int rank;
	uint64_t size;
};

static int cand_cmp(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return a->u < b->u ? -1 : a->u > b->u;
}

static void name_label(FILE *f, const struct lay *l, const struct unit *u,
		       double y)
{
	const struct pic_area *a = &l->p->a[u->a0];

	fprintf(f, "<text x=\"%d\" y=\"%.0f\">", LABEL_X, y + 4);
	pic_text(f, area_name(a), LABEL_CHARS - 24);
	fputs(" \xc2\xb7 ", f);
	print_size(f, u->end - u->start);
	if (a->planned)
		fputs(" (planned)", f);
	fputs("</text>\n", f);
}

static void draw_marks(FILE *f, struct lay *l, int clobbers);

/*
 * Names beside blocks drawn alone, by rank, where their line is free;
 * a replaced range's after the first rank (its victims are named first).
 */
static int block_labels(FILE *f, struct lay *l)
{
	struct cand *c = calloc(l->nd + 1, sizeof(*c));
	size_t i, n = 0;
	int marked = 0;
	double y;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < l->nd; i++) {
		const struct unit *u = &l->u[l->d[i].u0];

		if (l->d[i].u1 - l->d[i].u0 != 1 || u->a0 == u->a1 ||
		    u->h < 1)
			continue;
		c[n++] = (struct cand){ l->d[i].u0, rank(&l->p->a[u->a0]),
					u->end - u->start };
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	for (i = 0; i <= n; i++) {
		const struct unit *u = &l->u[c[i].u];
		double slack = u->h > LINE ? (u->h - LINE) / 2 : 0;

		/* Once: at the first rank's end, or at the end. */
		if (!marked && (i == n || (c[i].rank && (!i ||
						       !c[i - 1].rank)))) {
			draw_marks(f, l, 1);
			marked = 1;
		}
		if (i == n)
			break;
		y = take_near(l, 1, u->y + u->h / 2, slack);
		if (!isnan(y))
			name_label(f, l, u, y);
	}
	free(c);
	return 0;
}

/* The address at each boundary, from the top, where its line is free. */
static void addr_labels(FILE *f, struct lay *l)
{
	size_t i;
	double y;

	fputs("<g font-family=\"monospace\" text-anchor=\"end\">\n", f);
	for (i = l->nd; i-- > 0;) {
		const struct unit *hi = &l->u[l->d[i].u1 - 1];
		const struct unit *lo = &l->u[l->d[i].u0];

		y = i == l->nd - 1 ? take_near(l, 0, hi->y, 0) : NAN;
		if (!isnan(y))
			fprintf(f, "<text x=\"%d\" y=\"%.0f\">%#" PRIx64
				"</text>\n", ADDR_X, y + 4, hi->end);
		y = take_near(l, 0, lo->y + lo->h, 0);
		if (!isnan(y))
			fprintf(f, "<text x=\"%d\" y=\"%.0f\">%#" PRIx64
				"</text>\n", ADDR_X, y + 4, lo->start);
	}
	fputs("</g>\n", f);
}

/* The marks that are replaced ranges, or the others. */
static void draw_marks(FILE *f, struct lay *l, int clobbers)
{
	size_t i;

	for (i = 0; i < l->p->nm; i++) {
		const struct pic_mark *m = &l->p->m[i];
		double y1 = addr_y(l, m->end), y0 = addr_y(l, m->start), y;
		int x = MARK_X + (m->kind == PM_ANCHOR ? 8 : 0);

		if ((m->kind == PM_CLOBBER) != clobbers)
			continue;

		if (m->kind == PM_POINT || y0 - y1 < 2) {
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
				"y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\""
				" stroke-dasharray=\"3 2\"/>\n", BAR_X - 6, y0,
				LABEL_X - 4, y0);
			y1 = y0 - 1;
			y0 += 1;
		} else {
			fprintf(f, "<path d=\"M%d %.1fh6V%.1fh-6\" "
				"fill=\"none\" stroke=\"%s\" "
				"stroke-width=\"%d\"/>\n", x, y1,
				y0, m->kind == PM_CLOBBER ? "#882255" : "#000",
				m->kind == PM_WINDOW ? 2 : 4);
		}
		/* A window's name at its top: its middle is its content's. */
		if (m->kind == PM_WINDOW)
			y = take_near(l, 1, y1 + LINE / 2 + 1, 2 * LINE);
		/* A point's just above its line, leaving what it ends. */
		else if (m->kind == PM_POINT)
			y = take_near(l, 1, y1 - LINE / 2 - 1, LINE);
		/* A replaced range's below it, leaving its victims'. */
		else if (m->kind == PM_CLOBBER)
			y = take_near(l, 1, y0 + LINE / 2 + 1, 2 * LINE);
		else
			y = take_near(l, 1, (y0 + y1) / 2, (y0 - y1) / 2 + 8);
		if (isnan(y))
			continue;
		fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-weight=\"bold\">"
			"<title>%#" PRIx64 "-%#" PRIx64 " %s</title>",
			LABEL_X, y + 4, m->start, m->end, mark_name[m->kind]);
		/* Bold: fewer characters fit. */
		pic_text(f, m->label, LABEL_CHARS - 8);
		fputs("</text>\n", f);
	}
}

static void swatch(FILE *f, int i, double y, const char *fill,
		   const char *extra, const char *name)
{
	int x = 10 + (i % 4) * 235;

	y += (i / 4) * 18;
	fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"12\" "
		"fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\"%s/>"
		"<text x=\"%d\" y=\"%.1f\">%s</text>\n", x, y, fill, extra,
		x + 20, y + 10, name);
}

/* The kinds the picture holds, then gaps and plans: the legend's end. */
static double legend(FILE *f, const struct pic *p, double y)
{
	int have[PK_NKINDS] = { 0 }, k, i = 0, planned = 0;
	char buf[32];
	size_t j;

	for (j = 0; j < p->n; j++) {
		have[p->a[j].kind] = 1;
		planned |= p->a[j].planned;
	}
	for (k = 0; k < PK_NKINDS; k++)
		if (have[k])
			swatch(f, i++, y, fill(p, k, buf), "", kinds[k].name);
	swatch(f, i++, y, "#fff", " stroke-dasharray=\"4 3\"",
	       "free gap (compressed, size written)");
	if (planned)
		swatch(f, i++, y, "#88CCEE", " fill-opacity=\"0.55\" "
		       "stroke-dasharray=\"5 3\"", "planned (not mapped yet)");
	return y + ((i + 3) / 4) * 18;
}

static double header(FILE *f, const struct pic *p, const struct lay *l)
{
	double y = 24;
	int i;

	fputs("<text x=\"10\" y=\"24\" font-size=\"16\" "
	      "font-weight=\"bold\">", f);
	/* Bold 16 px: what fits in the width, the rest in the <title>. */
	pic_text(f, p->title ? p->title : "address space", TITLE_CHARS);
	fputs("</text>\n", f);
	if (p->subtitle) {
		fprintf(f, "<text x=\"10\" y=\"%.0f\">", y += 18);
		pic_text(f, p->subtitle, 150);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"10\" y=\"%.0f\">user address space: ", y += 16);
	print_size(f, p->top);
	fputs(" (", f);
	pic_text(f, p->top_name ? p->top_name : "given", 100);
	fputs("); high addresses at the top; a mapping's height grows with "
	      "log2 of its size</text>\n", f);
	for (i = 0; i < p->nnotes; i++) {
		fprintf(f, "<text x=\"10\" y=\"%.0f\">", y += 16);
		pic_text(f, p->notes[i], 150);
		fputs("</text>\n", f);
	}
	if (l->agg_marks)
		fprintf(f, "<text x=\"10\" y=\"%.0f\" font-weight=\"bold\">"
			"%zu mappings and %zu gaps, each under a pixel at this "
			"scale, are drawn as %zu aggregate marks (hover for "
			"what each holds)</text>\n", y += 16, l->agg_maps,
			l->agg_gaps, l->agg_marks);
	return legend(f, p, y + 12) + 8;
}

static void svg_body(FILE *f, struct lay *l)
{
	size_t i;

	for (i = 0; i < l->nd; i++) {
		const struct unit *u = &l->u[l->d[i].u0];

		if (l->d[i].u1 - l->d[i].u0 > 1 || u->h < 1)
			draw_aggregate(f, l, &l->d[i]);
		else if (u->a0 == u->a1)
			draw_gap(f, u);
		else
			draw_block(f, l, u);
	}
}

/* The header's height: written once to nowhere, to know it. */
static double header_height(const struct pic *p, const struct lay *l)
{
	FILE *null = fopen("/dev/null", "w");
	double h;

	if (!null)
		return -1;
	h = header(null, p, l);
	fclose(null);
	return h;
}

static int write_svg(FILE *f, struct lay *l)
{
	const struct pic *p = l->p;
	double h = l->y0 + l->body + 24;

	if (!p->embed)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\""
		"sans-serif\" font-size=\"%d\">\n<title>", PIC_W, h, PIC_W, h,
		FONT);
	pic_text(f, p->title ? p->title : "address space", 200);
	fprintf(f, "</title>\n<desc>Drawn by noclobber.  Colours: Paul Tol's "
		"muted scheme, safe for colour-vision deficiencies.</desc>\n"
		"<defs><pattern id=\"hatch%d\" width=\"6\" height=\"6\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)"
		"\"><rect width=\"6\" height=\"6\" fill=\"#DDDDDD\"/><line x1="
		"\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#777\" stroke-width="
		"\"2\"/></pattern></defs>\n", p->serial);
	fprintf(f, "<rect width=\"%d\" height=\"%.0f\" fill=\"#fff\"/>\n",
		PIC_W, h);
	header(f, p, l);
	svg_body(f, l);
	draw_marks(f, l, 0);
	if (block_labels(f, l))
		return -ENOMEM;
	addr_labels(f, l);
	fputs("</svg>\n", f);
	return 0;
}

static int layout_svg(const struct pic *p, FILE *out)
{
	struct lay l = { .p = p };
	int ret;

	if (p->err)
		return p->err;
	l.lo = p->lo;
	l.hi = p->hi ? p->hi : p->top;
	if (!p->hi && p->n && p->a[p->n - 1].end > l.hi)
		l.hi = p->a[p->n - 1].end;
	ret = make_units(&l);
	if (ret)
		goto out;
	l.y0 = 0;
	ret = place_units(&l);
	if (!ret)
		ret = make_draws(&l);
	if (ret)
		goto out;
	l.y0 = header_height(p, &l);
	if (l.y0 < 0) {
		ret = -errno;
		goto out;
	}
	ret = place_units(&l);
	if (ret)
		goto out;
	l.rows = (int)(l.y0 + l.body) + 3 * LINE;
	l.busy[0] = calloc((size_t)l.rows, 1);
	l.busy[1] = calloc((size_t)l.rows, 1);
	ret = l.busy[0] && l.busy[1] ? write_svg(out, &l) : -ENOMEM;
out:
	free(l.busy[0]);
	free(l.busy[1]);
	free(l.u);
	free(l.d);
	return ret;
}

static int make_svg(FILE *f, const void *p)
{
	return layout_svg(p, f);
}

/* Built whole in memory, then written: never half a picture. */
int pic_svg(const struct pic *p, FILE *out)
{
	return write_whole(out, make_svg, p);
}

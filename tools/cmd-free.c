/* SPDX-License-Identifier: MIT */
/*
 * noclobber free: where N bytes can go within reach of an address, a
 * library or a symbol of a process (ncb_find_near), the free space and
 * largest gaps of that window, and what occupies it.
 */
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "noclobber_intree.h"
#include "picture.h"

/* Occupants are summed per path; past this many paths, as "others". */
#define OCC_NAMES 64
#define OCC_SHOWN 8

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber free [-p PID] -n ADDR|LIBRARY|SYMBOL "
		   "[-w WITHIN] [-r [ARCH:]KIND]\n"
		   "                      [--size N] [-a ALIGN] "
		   "[--json | --svg]\n\n"
		   "Where N bytes (default a page) can go in process PID "
		   "(default: this one)\nwith every byte less than WITHIN "
		   "(default 2G) from every byte of the\nanchor: an address, "
		   "the span of the first mapped file whose path contains\n"
		   "LIBRARY, or a symbol (malloc, or libc.so.6:malloc).  "
		   "With --reach, every\nbyte within reach of every byte of "
		   "the anchor, both ways, for an instruction\nof KIND "
		   "(branch, pcrel, or its name: rel32, bl, adrp, jal, auipc, "
		   "brasl...)\non ARCH (x86_64, i386, aarch64, armhf, ppc64le, "
		   "riscv64, s390x; default:\nthis one), and less than WITHIN "
		   "only if -w is given too.  Prints the\nwindow's free space "
		   "and largest gaps, where ncb_resv_new would reserve N\n"
		   "bytes, and what occupies the window; --svg draws it all as "
		   "one SVG\npicture.  Exit status: 0 placed, 1 no room, 2 "
		   "error.\n");
}

enum { SIZE_OPT = 256, SVG_OPT };

static const struct {
	const char *name;
	int machine;
} arches[] = {
	{ "x86_64", EM_X86_64 }, { "i386", EM_386 },
	{ "aarch64", EM_AARCH64 }, { "armhf", EM_ARM },
	{ "ppc64le", EM_PPC64 }, { "riscv64", EM_RISCV },
	{ "s390x", EM_S390 },
};

#define NARCHES (sizeof(arches) / sizeof(arches[0]))

/* This machine's name among them; NULL if it is none of them. */
static const char *host_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__i386__)
	return "i386";
#elif defined(__aarch64__)
	return "aarch64";
#elif defined(__arm__)
	return "armhf";
#elif defined(__powerpc64__)
	return "ppc64le";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#elif defined(__s390x__)
	return "s390x";
#else
	return NULL;
#endif
}

struct args {
	pid_t pid;
	const char *near;
	uint64_t within;
	int within_set;
	int reach;		/* enum ncb_reach_kind; 0: none */
	int machine;		/* its e_machine; 0: this one's */
	const char *arch;	/* its name, NULL for this one */
	struct ncb_reach figures;
	uint64_t size;
	uint64_t align;
	int json;
	int svg;
};

enum anchor_kind { ANCHOR_ADDRESS, ANCHOR_LIBRARY, ANCHOR_SYMBOL };

static const char *const kind_name[] = { "address", "library", "symbol" };

struct anchor {
	int kind;
	uint64_t lo, hi;	/* [lo, hi) */
	char *path;		/* the file; NULL for an address */
	const char *symbol;	/* NULL unless a symbol */
};

/* A mapped file: its first mapping, and the span of those of its path. */
struct file {
	char *path;
	uint64_t start, offset;	/* its first mapping */
	uint64_t lo, hi;
};

/* Is word one of the instruction's names ("b/bl", "call/jmp rel32")? */
static int names_insn(const char *name, const char *word)
{
	size_t n = strlen(word);

	while (*name) {
		size_t k = strcspn(name, "/+ ");

		if (k == n && !strncmp(name, word, n))
			return 1;
		name += k + (name[k] != '\0');
	}
	return 0;
}

/*
 * [ARCH:]KIND: branch, pcrel, or an instruction's name, on ARCH or this
 * machine.  0, or -ENOENT (no such kind there), -EINVAL (no such ARCH).
 */
static int parse_reach(const char *s, struct args *a)
{
	const char *colon = strchr(s, ':'), *kind = colon ? colon + 1 : s;
	size_t i;
	int k;

	if (colon) {
		for (i = 0; i < NARCHES; i++)
			if (strlen(arches[i].name) == (size_t)(colon - s) &&
			    !strncmp(arches[i].name, s, (size_t)(colon - s)))
				break;
		if (i == NARCHES)
			return -EINVAL;
		a->machine = arches[i].machine;
		a->arch = arches[i].name;
	}
	for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++) {
		a->figures = NCB_INIT(ncb_reach);
		if (ncb_reach(a->machine, k, &a->figures))
			continue;
		if (!strcmp(kind, k == NCB_REACH_BRANCH ? "branch" : "pcrel") ||
		    names_insn(a->figures.name, kind)) {
			a->reach = k;
			return 0;
		}
	}
	return -ENOENT;
}

/* 0 to go on, or an exit status + 1. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "near", required_argument, NULL, 'n' },
		{ "within", required_argument, NULL, 'w' },
		{ "reach", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, SIZE_OPT },
		{ "align", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", no_argument, NULL, SVG_OPT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	const char *reach = NULL;
	int c, bad = 0;

	*a = (struct args){ .within = 1ULL << 31, .size = pg, .align = pg };
	while ((c = getopt_long(argc, argv, "p:n:w:r:a:jh", opts, NULL)) !=
	       -1) {
		if (c == 'p')
			bad |= parse_pid(optarg, &a->pid) != 0;
		else if (c == 'n')
			a->near = optarg;
		else if (c == 'w')
			bad |= parse_u64(optarg, &a->within) || !a->within ||
			       !(a->within_set = 1);
		else if (c == 'r')
			reach = optarg;
		else if (c == SIZE_OPT)
			bad |= parse_u64(optarg, &a->size) || !a->size ||
			       a->size > SIZE_MAX;
		else if (c == 'a')
			bad |= parse_u64(optarg, &a->align) || a->align < pg ||
			       (a->align & (a->align - 1)) ||
			       a->align > SIZE_MAX;
		else if (c == 'j')
			a->json = 1;
		else if (c == SVG_OPT)
			a->svg = 1;
		else if (c == 'h')
			break;
		else
			bad = 1;
	}
	if (c == 'h') {
		usage(stdout);
		return 1;
	}
	if (reach && parse_reach(reach, a)) {
		fprintf(stderr, "noclobber free: no instruction '%s' known%s%s "
			"(KIND is branch, pcrel or an instruction's name; ARCH "
			"x86_64, i386, aarch64, armhf, ppc64le, riscv64 or "
			"s390x)\n", reach, a->arch ? " on " : " here",
			a->arch ? a->arch : "");
		if (a->json)
			jw_fail(stdout, EINVAL, "no such instruction to reach "
				"with: see noclobber free --help");
		return EXIT_USAGE + 1;
	}
	if (a->reach && !a->within_set)
		a->within = 0;
	if (bad || !a->near || optind != argc || (a->json && a->svg)) {
		if (bad)
			fprintf(stderr, "noclobber free: bad value (a PID is "
				"decimal; WITHIN and N are numbers above 0; "
				"ALIGN a power of two, at least a page)\n");
		usage(stderr);
		if (a->json)
			jw_fail(stdout, EINVAL, "usage: see noclobber free "
				"--help");
		return EXIT_USAGE + 1;
	}
	return 0;
}

/* An image at path, or NULL: what is not a program or library is none. */
static struct ncb_elf *try_image(const char *path)
{
	struct ncb_elf *e;

	if (ncb_elf_kind(path) != NCB_ELF_PROGRAM ||
	    ncb_elf_open_flags(&e, path, NCB_ELF_ANY_ARCH, NULL, 0))
		return NULL;
	return e;
}

/*
 * A file mapped in process pid, opened through the process's root
 * (/proc/PID/root), where the path means something when the process lives
 * in another mount namespace; else as it stands.
 */
static struct ncb_elf *open_image(pid_t pid, const char *path)
{
	struct ncb_elf *e = NULL;
	char *p;

	if (*path != '/')
		return NULL;
	if (pid && asprintf(&p, "/proc/%d/root%s", (int)pid, path) >= 0) {
		e = try_image(p);
		free(p);
	}
	return e ? e : try_image(path);
}

/*
 * Load bias: the mapping at start of file offset off shows where the
 * segment holding that offset went.  0 if no segment holds it.
 */
static int load_bias(const struct ncb_elf *e, uint64_t start, uint64_t off,
		     uint64_t *bias)
{
	struct ncb_elf_seg s = NCB_INIT(ncb_elf_seg);
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned int i;

	for (i = 0; !ncb_elf_segment(e, i, &s); i++) {
		if ((s.offset & ~(pg - 1)) <= off &&
		    off - (s.offset & ~(pg - 1)) < s.filesz + pg) {
			*bias = start - (s.vaddr - s.offset + off);
			return 1;
		}
	}
	return 0;
}

/*
 * The image's span in the process, where the file is an image whose
 * segments agree with its first mapping: its bss and gaps included.
 */
static int image_span(pid_t pid, const struct file *f, uint64_t *lo,
		      uint64_t *hi)
{
	struct ncb_elf_info info = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e = open_image(pid, f->path);
	uint64_t bias;
	int ok;

	if (!e)
		return 0;
	ok = load_bias(e, f->start, f->offset, &bias) &&
	     !ncb_elf_info(e, &info);
	ncb_elf_close(e);
	if (!ok || info.lo + bias > f->start || info.hi + bias < f->hi)
		return 0;
	*lo = info.lo + bias;
	*hi = info.hi + bias;
	return 1;
}

/*
 * The first mapped file whose path contains sub, and the span of every
 * mapping of that path.  1 found, 0 not, -errno.
 */
static int find_file(pid_t pid, const char *sub, struct file *f)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	int ret;

	f->path = NULL;
	ret = ncb_maps_open(&maps, pid);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (!f->path && *m.path && strstr(m.path, sub)) {
			f->path = strdup(m.path);
			if (!f->path) {
				ret = -ENOMEM;
				break;
			}
			f->start = f->lo = m.start;
			f->offset = m.offset;
			f->hi = m.end;
		} else if (f->path && !strcmp(m.path, f->path)) {
			f->hi = m.end > f->hi ? m.end : f->hi;
		}
	}
	ncb_maps_close(maps);
	if (ret < 0) {
		free(f->path);
		f->path = NULL;
		return ret;
	}
	return f->path != NULL;
}

/* The symbol in the image mapped at start (file offset off): 1, 0. */
static int symbol_in(pid_t pid, const char *path, uint64_t start,
		     uint64_t off, const char *name, struct anchor *an)
{
	struct ncb_elf *e = open_image(pid, path);
	uint64_t bias, value, size;
	int found;

	if (!e)
		return 0;
	found = load_bias(e, start, off, &bias) &&
		ncb__elf_symbol(e, name, &value, &size) == 1;
	ncb_elf_close(e);
	if (!found)
		return 0;
	an->lo = value + bias;
	an->hi = an->lo + (size ? size : 1);
	return 1;
}

/*
 * A symbol in the first file mapped, in address order, that defines it
 * (the program, then its libraries, as the dynamic linker looks).
 */
static int find_symbol(pid_t pid, const char *name, struct anchor *an)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	char *last = NULL;
	int ret;

	ret = ncb_maps_open(&maps, pid);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (*m.path != '/' || (last && !strcmp(last, m.path)))
			continue;
		free(last);
		last = strdup(m.path);
		if (!last) {
			ret = -ENOMEM;
			break;
		}
		if (symbol_in(pid, m.path, m.start, m.offset, name, an)) {
			an->path = last;
			last = NULL;
			break;
		}
	}
	ncb_maps_close(maps);
	free(last);
	return ret < 0 ? ret : ret == 1;
}

/* LIBRARY:SYMBOL: the symbol in that file only. */
static int lib_symbol(pid_t pid, const char *spec, struct anchor *an)
{
	const char *colon = strchr(spec, ':');
	struct file f;
	char *lib;
	int ret;

	lib = strndup(spec, (size_t)(colon - spec));
	if (!lib)
		return -ENOMEM;
	ret = find_file(pid, lib, &f);
	free(lib);
	if (ret <= 0)
		return ret;
	an->symbol = colon + 1;
	if (!symbol_in(pid, f.path, f.start, f.offset, an->symbol, an)) {
		free(f.path);
		return 0;
	}
	an->path = f.path;
	return 1;
}

/*
 * The anchor an argument names: an address; LIBRARY:SYMBOL; the span of
 * the first mapped file whose path contains it; or a symbol of the first
 * file that defines it.  1 found, 0 not, -errno.
 */
static int resolve(pid_t pid, const char *s, struct anchor *an)
{
	struct file f;
	int ret;

	*an = (struct anchor){ .kind = ANCHOR_ADDRESS };
	/* "" is in every path: it names nothing. */
	if (!*s)
		return 0;
	if (!parse_u64(s, &an->lo)) {
		/* The last byte is an anchor of one byte too. */
		an->hi = an->lo + (an->lo < UINT64_MAX);
		return 1;
	}
	an->kind = ANCHOR_SYMBOL;
	if (strchr(s, ':') && strchr(s, ':')[1]) {
		ret = lib_symbol(pid, s, an);
		if (ret)
			return ret;
	}
	an->kind = ANCHOR_LIBRARY;
	an->symbol = NULL;
	ret = find_file(pid, s, &f);
	if (ret < 0)
		return ret;
	if (ret) {
		an->path = f.path;
		if (!image_span(pid, &f, &an->lo, &an->hi)) {
			an->lo = f.lo;
			an->hi = f.hi;
		}
		return 1;
	}
	an->kind = ANCHOR_SYMBOL;
	an->symbol = s;
	return find_symbol(pid, s, an);
}

struct occ {
	char *path;		/* NULL: the others */
	uint64_t bytes;
	uint64_t maps;
};

struct occs {
	uint64_t lo, hi;
	size_t n;
	struct occ o[OCC_NAMES + 1];	/* the last: others */
};

static int occ_add(const struct ncb_mapping *m, void *arg)
{
	struct occs *c = arg;
	uint64_t s = m->start > c->lo ? m->start : c->lo;
	uint64_t e = m->end < c->hi ? m->end : c->hi;
	struct occ *o = &c->o[OCC_NAMES];
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->o[i].path, m->path))
			break;
	if (i < c->n) {
		o = &c->o[i];
	} else if (c->n < OCC_NAMES) {
		o = &c->o[c->n];
		o->path = strdup(m->path);
		if (!o->path)
			return -ENOMEM;
		c->n++;
	}
	o->bytes += e > s ? e - s : 0;
	o->maps++;
	return 0;
}

static int occ_cmp(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static void occ_free(struct occs *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->o[i].path);
}

/* The window's occupants summed per path, the most bytes first. */
static int occupants(pid_t pid, uint64_t lo, uint64_t hi, struct occs *c)
{
	struct occ rest;
	size_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	c->lo = lo;
	c->hi = hi;
	if (lo >= hi)
		return 0;
	ret = ncb_maps_occupants(pid, (const void *)(uintptr_t)lo,
				 (size_t)(hi - lo), occ_add, c);
	if (ret < 0) {
		occ_free(c);
		return ret;
	}
	qsort(c->o, c->n, sizeof(c->o[0]), occ_cmp);
	/* Those not shown join the others. */
	rest = c->o[OCC_NAMES];
	for (i = OCC_SHOWN; i < c->n; i++) {
		rest.bytes += c->o[i].bytes;
		rest.maps += c->o[i].maps;
	}
	c->o[OCC_NAMES] = rest;
	return 0;
}

static const char *const why_name[] = {
	[NCB_NEAR_PLACED] = "placed", [NCB_NEAR_OUTSIDE] = "outside",
	[NCB_NEAR_SMALL] = "small", [NCB_NEAR_FULL] = "full",
	[NCB_NEAR_ALIGN] = "align",
};

static void why_text(FILE *f, const struct ncb_near *r, uint64_t size,
		     uint64_t align)
{
	char a[32], b[32];

	human(size, 0, a);
	if (r->why == NCB_NEAR_OUTSIDE)
		fprintf(f, "no room: the window lies outside the user address "
			"space\n");
	else if (r->why == NCB_NEAR_SMALL)
		fprintf(f, "no room: the window is shorter than %s\n", a);
	else if (r->why == NCB_NEAR_FULL)
		fprintf(f, "no room: no free gap in the window holds %s (the "
			"largest: %s)\n", a, human(r->nlisted ?
			r->gaps[0].end - r->gaps[0].start : 0, 0, b));
	else
		fprintf(f, "no room: free gaps hold %s, but none at an "
			"alignment of %s\n", a, human(align, 0, b));
}

static void text_doc(FILE *f, const struct args *a, const struct anchor *an,
		     const struct ncb_near *r, const struct occs *c)
{
	char b1[32], b2[32];
	unsigned int i;
	size_t k;

	fprintf(f, "process %d: %s", a->pid ? (int)a->pid : (int)getpid(),
		human(a->size, 0, b1));
	if (a->within)
		fprintf(f, " within %s", human(a->within, 0, b2));
	if (a->reach)
		fprintf(f, "%s in %s reach", a->within ? " and" : "",
			a->figures.name);
	fprintf(f, " of [%#" PRIx64 ", %#" PRIx64 ")", an->lo, an->hi);
	if (an->symbol)
		fprintf(f, " %s", an->symbol);
	if (an->path) {
		fputs(an->symbol ? " in " : " ", f);
		print_path(f, an->path);
	}
	fprintf(f, "\nwindow [%#" PRIx64 ", %#" PRIx64 "): %s free in %"
		PRIu64 " gaps, %" PRIu64 " mappings\n", r->lo, r->hi,
		human(r->free, 0, b1), r->ngaps, r->nmaps);
	for (i = 0; i < r->nlisted; i++)
		fprintf(f, "  gap %#" PRIx64 "-%#" PRIx64 "  %s\n",
			r->gaps[i].start, r->gaps[i].end,
			human(r->gaps[i].end - r->gaps[i].start, 0, b1));
	if (r->why == NCB_NEAR_PLACED)
		fprintf(f, "placed at %#" PRIx64 " (where ncb_resv_new would "
			"reserve it)\n", r->addr);
	else
		why_text(f, r, a->size, a->align);
	if (c->n)
		fprintf(f, "occupied by:\n");
	for (k = 0; k < c->n && k < OCC_SHOWN; k++) {
		fprintf(f, "  %10s in %4" PRIu64 " mapping%s  ",
			human(c->o[k].bytes, 0, b1), c->o[k].maps,
			c->o[k].maps == 1 ? " " : "s");
		print_path(f, *c->o[k].path ? c->o[k].path : "(anonymous)");
		fputc('\n', f);
	}
	if (c->o[OCC_NAMES].maps)
		fprintf(f, "  %10s in %4" PRIu64 " mappings (others)\n",
			human(c->o[OCC_NAMES].bytes, 0, b1),
			c->o[OCC_NAMES].maps);
}

static void json_occ(struct jw *w, const struct occs *c)
{
	size_t k;

	jw_open(w, "occupants", '[');
	for (k = 0; k < c->n && k < OCC_SHOWN; k++) {
		jw_open(w, NULL, '{');
		jw_path(w, c->o[k].path);
		jw_hex(w, "bytes", c->o[k].bytes);
		jw_int(w, "mappings", (long long)c->o[k].maps);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_open(w, "others", '{');
	jw_hex(w, "bytes", c->o[OCC_NAMES].bytes);
	jw_int(w, "mappings", (long long)c->o[OCC_NAMES].maps);
	jw_close(w, '}');
}

static void json_anchor(struct jw *w, const struct anchor *an)
{
	jw_open(w, "anchor", '{');
	jw_str(w, "kind", kind_name[an->kind]);
	jw_hex(w, "start", an->lo);
	jw_hex(w, "end", an->hi);
	if (an->path)
		jw_path(w, an->path);
	else
		jw_str(w, "path", NULL);
	jw_str(w, "symbol", an->symbol);
	jw_close(w, '}');
}

/* The instruction whose reach the window is, or null. */
static void json_reach(struct jw *w, const struct args *a)
{
	const char *arch = a->arch ? a->arch : host_arch();

	if (!a->reach) {
		jw_str(w, "reach", NULL);
		return;
	}
	jw_open(w, "reach", '{');
	jw_str(w, "kind", a->reach == NCB_REACH_BRANCH ? "branch" : "pcrel");
	jw_str(w, "arch", arch);
	jw_str(w, "instruction", a->figures.name);
	jw_int(w, "min", (long long)a->figures.min);
	jw_int(w, "max", (long long)a->figures.max);
	jw_close(w, '}');
}

/* The free document, printed whole: 0 or -errno. */
static int json_doc(const struct args *a, const struct anchor *an,
		    const struct ncb_near *r, const struct occs *c)
{
	unsigned int i;
	struct jw w;
	int err;

	err = jw_begin(&w);
	if (err)
		return err;
	jw_int(&w, "pid", a->pid ? (int)a->pid : (int)getpid());
	json_anchor(&w, an);
	if (a->within)
		jw_hex(&w, "within", a->within);
	else
		jw_str(&w, "within", NULL);
	json_reach(&w, a);
	jw_hex(&w, "size", a->size);
	jw_hex(&w, "align", a->align);
	jw_open(&w, "window", '{');
	jw_hex(&w, "start", r->lo);
	jw_hex(&w, "end", r->hi);
	jw_close(&w, '}');
	jw_hex(&w, "free", r->free);
	jw_int(&w, "gaps", (long long)r->ngaps);
	jw_int(&w, "mappings", (long long)r->nmaps);
	jw_open(&w, "largest", '[');
	for (i = 0; i < r->nlisted; i++) {
		jw_open(&w, NULL, '{');
		jw_hex(&w, "start", r->gaps[i].start);
		jw_hex(&w, "end", r->gaps[i].end);
		jw_hex(&w, "size", r->gaps[i].end - r->gaps[i].start);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	if (r->why == NCB_NEAR_PLACED)
		jw_hex(&w, "address", r->addr);
	else
		jw_str(&w, "address", NULL);
	jw_str(&w, "reason", why_name[r->why]);
	json_occ(&w, c);
	jw_error(&w, "error", r->why == NCB_NEAR_PLACED ? 0 : ENOMEM,
		 "no room in the window");
	return jw_end(&w, stdout);
}

/* The anchor as the picture names it. */
static void anchor_name(struct pic *p, const struct anchor *an)
{
	const char *path = an->path ? an->path : "";
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (an->symbol)
		pic_mark(p, PM_ANCHOR, an->lo, an->hi, "anchor: %s in %s",
			 an->symbol, base);
	else if (an->path)
		pic_mark(p, PM_ANCHOR, an->lo, an->hi, "anchor: %s", base);
	else
		pic_mark(p, PM_ANCHOR, an->lo, an->hi, "anchor: %#" PRIx64,
			 an->lo);
}

/*
 * The window drawn: its mappings, its gaps, the anchor, and the block
 * where it would go or why it cannot.  0 or -errno.
 */
static int svg_doc(const struct args *a, const struct anchor *an,
		   const struct ncb_near *r)
{
	char b1[32], b2[32], *why = NULL;
	struct ncb_maps *maps;
	size_t len = 0;
	struct pic p;
	FILE *f;
	int ret;

	pic_init(&p);
	ret = ncb_maps_open(&maps, a->pid);
	if (ret)
		return ret;
	/* An empty window (outside, too small): the whole space. */
	p.lo = r->lo < r->hi ? r->lo : 0;
	p.hi = r->lo < r->hi ? r->hi : 0;
	ret = pic_read(&p, maps, p.lo, p.hi);
	ncb_maps_close(maps);
	if (ret)
		goto out;
	pic_process(&p, a->pid, "");
	pic_title(&p, "room for %s near %s in %s", human(a->size, 0, b1),
		  a->near, p.title ? p.title + 1 : "");
	pic_note(&p, "%s within %s of the anchor; the window [%#" PRIx64
		 ", %#" PRIx64 ") has %s free in %" PRIu64 " gaps",
		 human(a->size, 0, b1), human(a->within, 0, b2), r->lo, r->hi,
		 human(r->free, 0, b2), r->ngaps);
	if (r->why == NCB_NEAR_PLACED) {
		pic_add_planned(&p, r->addr, r->addr + a->size, PROT_READ |
				PROT_WRITE, PK_ANON, "", "the block");
		pic_sort(&p);
		pic_note(&p, "the block goes at %#" PRIx64 " (where "
			 "ncb_resv_new would reserve it)", r->addr);
	} else if ((f = open_memstream(&why, &len))) {
		why_text(f, r, a->size, a->align);
		if (!fclose(f) && len)
			why[len - 1] = '\0';
		pic_note(&p, "%s", why ? why : "no room");
		free(why);
	}
	if (r->lo < r->hi)
		pic_mark(&p, PM_WINDOW, r->lo, r->hi, "window: %s each side",
			 human(a->within, 0, b1));
	anchor_name(&p, an);
	ret = pic_svg(&p, stdout);
out:
	pic_free(&p);
	return ret;
}

/* A failure as a whole: the usual line on stderr, and the JSON error. */
static int free_fail(const struct args *a, int err, const char *what)
{
	if (what)
		fail("free", a->json, err, "%s: %s", what, strerror(err));
	else
		maps_error("free", a->json, a->pid, -err);
	return EXIT_USAGE;
}

static int answer(const struct args *a, const struct anchor *an)
{
	struct ncb_near_opts o = NCB_INIT(ncb_near_opts,
					  .align = (size_t)a->align,
					  .reach = a->reach,
					  .machine = a->machine);
	struct ncb_near r = NCB_INIT(ncb_near);
	struct occs *c;
	int ret;

	/*
	 * A window past 2^64 (an anchor as high as [vsyscall]) reaches as
	 * far as one to 2^64: beyond the address space either way, which
	 * the answer's reason says.
	 */
	uint64_t within = a->within > UINT64_MAX - an->lo ? UINT64_MAX - an->lo
							  : a->within;

	ret = ncb_find_near(a->pid, an->lo, an->hi,
			    within || a->reach ? within : 1, (size_t)a->size,
			    &o, &r);
	/* WITHIN was cut to fit: only an anchor at 2^64 - 1 is refused. */
	if (ret == -EINVAL)
		return free_fail(a, EINVAL, "an anchor at 2^64 - 1 would end "
			    "past 2^64");
	if (ret && (ret != -ENOMEM || !r.why))
		return free_fail(a, -ret, NULL);
	c = malloc(sizeof(*c));
	if (!c)
		return free_fail(a, ENOMEM, "memory");
	ret = occupants(a->pid, r.lo, r.hi, c);
	if (ret) {
		free(c);
		return free_fail(a, -ret, NULL);
	}
	if (a->json)
		ret = json_doc(a, an, &r, c);
	else if (a->svg)
		ret = svg_doc(a, an, &r);
	else
		text_doc(stdout, a, an, &r, c);
	occ_free(c);
	free(c);
	/* A picture's own failure (the process gone since) is no write's. */
	if (ret && a->svg && ret != -EIO)
		return free_fail(a, -ret, ret == -ENOMEM ? "memory" : NULL);
	if (ret) {
		print_error("free", ret);
		return EXIT_USAGE;
	}
	return r.why == NCB_NEAR_PLACED ? 0 : 1;
}

int cmd_free(int argc, char **argv)
{
	struct anchor an;
	struct args a;
	int ret;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret - 1;
	ret = resolve(a.pid, a.near, &an);
	if (ret < 0)
		return free_fail(&a, -ret, NULL);
	if (!ret) {
		fail("free", a.json, ENOENT, "'%s': not an address, a mapped "
		     "file or a symbol of process %d", a.near,
		     a.pid ? (int)a.pid : (int)getpid());
		return EXIT_USAGE;
	}
	ret = answer(&a, &an);
	free(an.path);
	return ret;
}

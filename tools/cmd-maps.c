/* SPDX-License-Identifier: MIT */
/* noclobber maps: a process's address space, mappings and the gaps between. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "noclobber_intree.h"
#include "picture.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber maps [-p PID | --maps FILE] [-o COLUMNS] "
		   "[--bytes]\n"
		   "                      [--json | --svg] [PID]\n\n"
		   "Lists the mappings of process PID (decimal; default: "
		   "this one) with their\nsizes and the free gaps between "
		   "them.  -o chooses the columns, in order,\nfrom start, "
		   "end, size, perms, offset, dev, inode, rss, pss, dirty, "
		   "swap\nand path (rss and the rest read /proc/PID/smaps, "
		   "as pmap -x does);\n--bytes prints sizes in bytes.  "
		   "--svg draws the address space as one SVG\npicture "
		   "instead (gaps compressed, each mapping labelled where it "
		   "fits).\n--maps reads a recorded /proc/PID/maps (- for "
		   "standard input) instead\nof a process.  Exit status: 0 "
		   "listed, 1 the process has no address\nspace, 2 "
		   "error.\n");
}

enum col {
	C_START, C_END, C_SIZE, C_PERMS, C_OFFSET, C_DEV, C_INODE,
	C_RSS, C_PSS, C_DIRTY, C_SWAP, C_PATH, NCOLS
};

/* Each column: its name (also its JSON key), heading and width. */
static const struct {
	const char *name;
	const char *head;
	int width;
} cols[NCOLS] = {
	[C_START] = { "start", "START", 12 },
	[C_END] = { "end", "END", 12 },
	[C_SIZE] = { "size", "SIZE", 9 },
	[C_PERMS] = { "perms", "PERM", 4 },
	[C_OFFSET] = { "offset", "OFFSET", 8 },
	[C_DEV] = { "dev", "DEV", 5 },
	[C_INODE] = { "inode", "INODE", 8 },
	[C_RSS] = { "rss", "RSS", 9 },
	[C_PSS] = { "pss", "PSS", 9 },
	[C_DIRTY] = { "dirty", "DIRTY", 9 },
	[C_SWAP] = { "swap", "SWAP", 9 },
	[C_PATH] = { "path", "PATH", 0 },
};

#define SMAPS_COLS (1u << C_RSS | 1u << C_PSS | 1u << C_DIRTY | 1u << C_SWAP)

struct opts {
	pid_t pid;
	const char *file;	/* --maps: recorded maps, or NULL */
	int svg;
	int json;
	int bytes;
	int ncol;		/* 0: the default layout */
	enum col col[NCOLS * 2];
	unsigned int want;	/* bit per column asked for */
};

struct totals {
	int n;
	uint64_t mapped;
	uint64_t prev_end;
	uint64_t mem[4];	/* rss, pss, dirty, swap */
};

/*
 * "start,size,rss,path" added to o->col (each -o adds its columns, as
 * ps(1)'s do); -1, said, for an unknown or empty column or too many.
 */
static int parse_cols(const char *s, struct opts *o)
{
	const char *p = s;
	size_t n;
	int c;

	do {
		n = strcspn(p, ",");
		for (c = 0; c < NCOLS; c++)
			if (n && strlen(cols[c].name) == n &&
			    !strncmp(p, cols[c].name, n))
				break;
		if (c == NCOLS || o->ncol == NCOLS * 2) {
			fprintf(stderr, "noclobber maps: -o '%s': %s\n", s,
				c < NCOLS ? "too many columns" : !n ?
				"an empty column" : "an unknown column");
			return -1;
		}
		o->col[o->ncol++] = (enum col)c;
		o->want |= 1u << c;
		p += n;
	} while (*p++);
	return 0;
}

/*
 * Free space lies between two mappings of the user address space; the
 * gate area ([vsyscall]) lies above it, beyond the unusable hole.
 */
static int gap_before(const struct ncb_mapping *m, const struct totals *t)
{
	return t->n && m->start > t->prev_end && strcmp(m->path, "[vsyscall]");
}

/* One column of a mapping's row (s: its smaps entry, or NULL). */
static void text_col(const struct opts *o, enum col c,
		     const struct ncb_mapping *m,
		     const struct smaps_entry *s)
{
	const uint64_t *mem = s ? &s->rss : NULL;
	int w = o->bytes && cols[c].width == 9 ? 14 : cols[c].width;
	char buf[32], perms[5];

	switch (c) {
	case C_START:
	case C_END:
		printf("%012" PRIx64, c == C_START ? m->start : m->end);
		return;
	case C_SIZE:
		printf("%*s", w, human(m->end - m->start, o->bytes, buf));
		return;
	case C_PERMS:
		perm_string(m, perms);
		printf("%s", perms);
		return;
	case C_OFFSET:
		printf("%08" PRIx64, m->offset);
		return;
	case C_DEV:
		snprintf(buf, sizeof(buf), "%02x:%02x", m->dev_major,
			 m->dev_minor);
		printf("%*s", w, buf);
		return;
	case C_INODE:
		printf("%*" PRIu64, w, m->inode);
		return;
	case C_PATH:
		print_path(stdout, m->path);
		return;
	default:
		printf("%*s", w, mem ? human(mem[c - C_RSS], o->bytes, buf)
				     : "-");
	}
}

static void text_row(const struct opts *o, const struct ncb_mapping *m,
		     const struct smaps_entry *s)
{
	int i;

	for (i = 0; i < o->ncol; i++) {
		fputs(i ? " " : "", stdout);
		text_col(o, o->col[i], m, s);
	}
	putchar('\n');
}

static void text_gap(const struct opts *o, uint64_t start, uint64_t end)
{
	struct ncb_mapping g = NCB_INIT(ncb_mapping, .start = start,
					.end = end);
	char buf[32];
	int i, w;

	if (!o->ncol) {
		printf("%26s gap %s\n", "", human(end - start, o->bytes, buf));
		return;
	}
	for (i = 0; i < o->ncol; i++) {
		enum col c = o->col[i];

		fputs(i ? " " : "", stdout);
		w = o->bytes && cols[c].width == 9 ? 14 : cols[c].width;
		if (c == C_START || c == C_END || c == C_SIZE)
			text_col(o, c, &g, NULL);
		else if (c == C_PATH)
			fputs("gap", stdout);
		else
			printf("%*s", w, "");
	}
	putchar('\n');
}

static void text_entry(const struct opts *o, const struct ncb_mapping *m,
		       const struct smaps_entry *s)
{
	char buf[32], perms[5];

	if (o->ncol) {
		text_row(o, m, s);
		return;
	}
	perm_string(m, perms);
	printf("  %012" PRIx64 "-%012" PRIx64 " %9s %s %08" PRIx64 " ",
	       m->start, m->end, human(m->end - m->start, o->bytes, buf),
	       perms, m->offset);
	print_path(stdout, m->path);
	putchar('\n');
}

static void json_entry(struct jw *w, const struct opts *o,
		       const struct ncb_mapping *m,
		       const struct smaps_entry *s)
{
	int c;

	jw_open(w, NULL, '{');
	jw_str(w, "type", "mapping");
	jw_mapping_fields(w, m);
	jw_hex(w, "size", m->end - m->start);
	for (c = C_RSS; c <= C_SWAP; c++) {
		if (!(o->want & 1u << c))
			continue;
		if (s)
			jw_int(w, cols[c].name,
			       (long long)(&s->rss)[c - C_RSS]);
		else
			jw_str(w, cols[c].name, NULL);
	}
	jw_close(w, '}');
}

static void json_gap(struct jw *w, uint64_t start, uint64_t end)
{
	jw_open(w, NULL, '{');
	jw_str(w, "type", "gap");
	jw_hex(w, "start", start);
	jw_hex(w, "end", end);
	jw_hex(w, "size", end - start);
	jw_close(w, '}');
}

static void entry(struct jw *w, const struct opts *o, struct totals *t,
		  const struct ncb_mapping *m, const struct smaps *sm)
{
	const struct smaps_entry *s = smaps_find(sm, m->start, m->end);
	int i;

	if (gap_before(m, t)) {
		if (o->json)
			json_gap(w, t->prev_end, m->start);
		else
			text_gap(o, t->prev_end, m->start);
	}
	if (o->json)
		json_entry(w, o, m, s);
	else
		text_entry(o, m, s);
	t->n++;
	t->mapped += m->end - m->start;
	t->prev_end = m->end;
	for (i = 0; s && i < 4; i++)
		t->mem[i] += (&s->rss)[i];
}

static void text_totals(const struct opts *o, const struct totals *t)
{
	char buf[32];
	int c;

	printf("%d mappings, %s mapped", t->n, human(t->mapped, o->bytes,
						      buf));
	for (c = C_RSS; c <= C_SWAP; c++)
		if (o->want & 1u << c)
			printf(", %s %s", cols[c].name,
			       human(t->mem[c - C_RSS], o->bytes, buf));
	putchar('\n');
}

static void json_totals(struct jw *w, const struct opts *o,
			const struct totals *t)
{
	int c;

	jw_int(w, "mappings", t->n);
	jw_hex(w, "mapped", t->mapped);
	for (c = C_RSS; c <= C_SWAP; c++)
		if (o->want & 1u << c)
			jw_int(w, cols[c].name, (long long)t->mem[c - C_RSS]);
}

static void text_heading(const struct opts *o)
{
	int i, w;

	for (i = 0; o->ncol && i < o->ncol; i++) {
		enum col c = o->col[i];

		w = o->bytes && cols[c].width == 9 ? 14 : cols[c].width;
		printf("%s%*s", i ? " " : "", c == C_PATH ? 0 : w,
		       cols[c].head);
	}
	if (o->ncol)
		putchar('\n');
}

/* -1 to go on, or the exit status. */
static int parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", no_argument, NULL, 's' },
		{ "maps", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bad_pid = NULL;
	int c, pid_given = 0;

	while ((c = getopt_long(argc, argv, "p:o:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			/* Said once every option is read: --json may follow. */
			if (parse_pid(optarg, &o->pid))
				bad_pid = optarg;
			pid_given = 1;
			break;
		case 'o':
			if (parse_cols(optarg, o))
				goto bad;
			break;
		case 'b':
			o->bytes = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 's':
			o->svg = 1;
			break;
		case 'f':
			o->file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	/* A PID after the options as well, as pmap takes it. */
	if (argc - optind > 1 || (argc - optind == 1 && pid_given))
		goto bad;
	/* A picture has no columns; a file is no process. */
	if ((o->svg && (o->json || o->ncol)) ||
	    (o->file && (pid_given || argc > optind ||
			 (o->want & SMAPS_COLS))))
		goto bad;
	if (argc - optind == 1 && parse_pid(argv[optind], &o->pid))
		bad_pid = argv[optind];
	if (bad_pid) {
		fail("maps", o->json, EINVAL, "'%s': not a PID (decimal)",
		     bad_pid);
		return EXIT_USAGE;
	}
	return -1;
bad:
	if (o->json)
		jw_fail(stdout, EINVAL, "bad usage (noclobber maps --help)");
	usage(stderr);
	return EXIT_USAGE;
}

static int list(struct ncb_maps *maps, const struct opts *o,
		const struct smaps *sm)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct totals t = { 0 };
	struct jw w;
	int ret;

	if (o->json && (ret = jw_begin(&w)))
		return ret;
	if (o->json) {
		/* A recorded file is of no process known here. */
		if (o->file)
			jw_null(&w, "pid");
		else
			jw_int(&w, "pid", o->pid ? (int)o->pid
						 : (int)getpid());
		jw_open(&w, "entries", '[');
	} else {
		text_heading(o);
	}
	while ((ret = ncb_maps_next(maps, &m)) == 1)
		entry(&w, o, &t, &m, sm);
	if (!o->json) {
		/* The totals of a list cut short would mislead. */
		if (!ret)
			text_totals(o, &t);
		return ret;
	}
	if (ret < 0) {
		jw_drop(&w);
		return ret;
	}
	jw_close(&w, ']');
	json_totals(&w, o, &t);
	ret = jw_end(&w, stdout);
	if (ret) {
		print_error("maps", ret);
		return PRINT_FAILED;
	}
	return 0;
}

/* A recorded maps text: all of it, at most 1 GiB.  0 or -errno. */
static int read_file(int fd, char **text, size_t *len)
{
	size_t cap = 0;
	ssize_t n = 1;
	char *t;

	while (n > 0) {
		if (cap - *len < 4096) {
			cap = cap ? cap * 2 : 1 << 16;
			t = cap <= 1ULL << 30 ? realloc(*text, cap) : NULL;
			if (!t)
				return cap > 1ULL << 30 ? -EFBIG : -ENOMEM;
			*text = t;
		}
		n = read(fd, *text + *len, cap - *len);
		if (n < 0)
			return -errno;
		*len += (size_t)n;
	}
	return 0;
}

static int open_file(const char *name, struct ncb_maps **maps)
{
	int fd = strcmp(name, "-") ? open(name, O_RDONLY | O_CLOEXEC) : 0;
	char *text = NULL;
	size_t len = 0;
	int ret = fd < 0 ? -errno : read_file(fd, &text, &len);

	if (fd > 0)
		close(fd);

	if (ret) {
		fprintf(stderr, "noclobber maps: %s: %s\n", name,
			strerror(-ret));
		free(text);
		return ret;
	}
	ret = ncb__maps_from_text(maps, text, len);
	free(text);
	if (ret == -ENOMEM)
		fprintf(stderr, "noclobber maps: %s: %s\n", name,
			strerror(-ret));
	else if (ret)
		fprintf(stderr, "noclobber maps: %s: not a maps text (each "
			"line as /proc/PID/maps's, in address order, each "
			"ended by a newline)\n", name);
	return ret;
}

static int picture(struct ncb_maps *maps, const struct opts *o)
{
	struct pic p;
	int ret;

	pic_init(&p);
	ret = pic_read(&p, maps, 0, 0);
	if (!ret && o->file) {
		pic_title(&p, "address space of %s", o->file);
		pic_space(&p, 0, 0);
		pic_classify(&p, NULL);
	} else if (!ret) {
		pic_process(&p, o->pid, "address space of");
	}
	if (!ret) {
		ret = pic_svg(&p, stdout);
		if (ret == -EIO) {
			print_error("maps", ret);
			ret = PRINT_FAILED;
		}
	}
	pic_free(&p);
	return ret;
}

int cmd_maps(int argc, char **argv)
{
	struct opts o = { 0 };
	struct smaps sm = { 0 };
	struct ncb_maps *maps;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (o.file) {
		if (open_file(o.file, &maps)) {
			if (o.json)
				jw_fail(stdout, EINVAL, "the maps file cannot "
					"be read");
			return EXIT_USAGE;
		}
		ret = 0;
	} else {
		ret = ncb_maps_open(&maps, o.pid);
	}
	if (!ret && (o.want & SMAPS_COLS) && (ret = smaps_read(&sm, o.pid)))
		ncb_maps_close(maps);
	if (ret) {
		maps_error("maps", o.json, o.pid, ret);
		/* Read, but there is nothing to list: that is no misuse. */
		return ret == -ESRCH ? 1 : EXIT_USAGE;
	}
	ret = o.svg ? picture(maps, &o) : list(maps, &o, &sm);
	ncb_maps_close(maps);
	smaps_free(&sm);
	if (ret == PRINT_FAILED)
		return EXIT_USAGE;
	if (ret < 0) {
		maps_error("maps", o.json, o.pid, ret);
		/* Gone while it was read: as at the start. */
		return ret == -ESRCH ? 1 : EXIT_USAGE;
	}
	return 0;
}

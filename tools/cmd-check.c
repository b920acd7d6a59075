/* SPDX-License-Identifier: MIT */
/*
 * noclobber check: lint ELF programs and libraries for loading without
 * clobbering, those of other machines by their own machine's rules.  A
 * directory is walked and what is no program or library in it (files
 * without the ELF magic, objects, core dumps, separate debug files) is
 * skipped and counted by kind; a file named on the command line gets a
 * verdict whatever it is.
 */
#define _XOPEN_SOURCE 700
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "noclobber_intree.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber check [--json] [--strict] [--quiet] "
		   "[--elf-only] FILE|DIR...\n\n"
		   "Checks each ELF program or library as the loader would "
		   "before mapping\nanything (those of other machines by "
		   "their own machine's rules) and\nlists what loads but "
		   "deserves a look (segments sharing pages, offsets\n"
		   "misaligned for their alignment or for larger pages, "
		   "writable code, an\nexecutable stack).  Directories are "
		   "walked, symbolic links in them not\nfollowed; what is "
		   "no program or library there is skipped and counted.\n"
		   "A FILE named that is none fails, unless --elf-only.  "
		   "Findings are lines\n\"FILE: error: ...\" and \"FILE: "
		   "note: ...\"; --quiet prints only failures;\n--strict "
		   "makes notes errors.  --json prints a JSON object per "
		   "file, a\nline each, then the summary's.  Exit status: "
		   "0 all pass, 1 some file\nfails, 2 error (usage, or "
		   "something unreadable).\n");
}

#define NKINDS (NCB_ELF_OTHER + 1)

/*
 * Each kind of file: its --json key, its name in the summary (one, more),
 * its verdict when named.
 */
static const struct {
	const char *key;
	const char *one;
	const char *more;
	const char *verdict;
} kinds[NKINDS] = {
	[NCB_ELF_NOT_ELF] = { "not_elf", "not ELF", "not ELF",
			      "not an ELF file" },
	[NCB_ELF_PROGRAM] = { "program", "program", "programs", "" },
	[NCB_ELF_OBJECT] = { "object", "relocatable object",
			     "relocatable objects", "relocatable object "
			     "(ET_REL): not a program or library" },
	[NCB_ELF_CORE] = { "core", "core dump", "core dumps", "core dump "
			   "(ET_CORE): not a program or library" },
	[NCB_ELF_DEBUG] = { "debug", "separate debug file",
			    "separate debug files", "separate debug file: a "
			    "program's headers without its code and data" },
	[NCB_ELF_OTHER] = { "other", "other ELF type", "other ELF types",
			    "ELF file of another type (not ET_EXEC or "
			    "ET_DYN), or for no machine (EM_NONE): not a "
			    "program or library" },
};

struct ctx {
	int json;
	int strict;
	int quiet;
	int elf_only;
	unsigned long checked;
	unsigned long failed;
	unsigned long noted;
	unsigned long foreign;
	unsigned long unreadable;
	unsigned long skipped[NKINDS];
	unsigned long special;	/* walked: links, FIFOs, sockets, devices */
};

static struct ctx g;

/*
 * "FILE: " at the head of a line: a newline in a name as "\012", as
 * /proc/PID/maps prints one, so that a finding stays one line.
 */
static void name(const char *path)
{
	print_path(stdout, path);
	fputs(": ", stdout);
}

/* "FILE: error: why", or "FILE: ok" and what it is. */
static void finding(const char *path, const char *what, const char *why)
{
	name(path);
	if (!strcmp(what, "ok"))
		printf("ok%s%s\n", why ? ", " : "", why ? why : "");
	else
		printf("%s: %s\n", what, why);
}

/* Each note, a line of its own: GCC's form; an error under --strict. */
static void print_notes(const char *path, const char *notes)
{
	const char *e;

	for (; *notes; notes = e + 1) {
		e = strchr(notes, '\n');
		if (!e)
			break;
		name(path);
		printf("%s: %.*s%s\n", g.strict ? "error" : "note",
		       (int)(e - notes), notes, g.strict ? " [--strict]" : "");
	}
}

static void json_notes(struct jw *w, const char *notes)
{
	const char *e;
	char line[256];

	jw_open(w, "notes", '[');
	for (; *notes; notes = e + 1) {
		e = strchr(notes, '\n');
		if (!e)
			break;
		snprintf(line, sizeof(line), "%.*s", (int)(e - notes), notes);
		jw_str(w, NULL, line);
	}
	jw_close(w, ']');
}

static void json_arch(struct jw *w, const struct ncb_elf_arch *a,
		      int library)
{
	jw_str(w, "machine", a->name);
	jw_int(w, "e_machine", a->machine);
	jw_int(w, "class", a->elf_class == ELFCLASS64 ? 64 : 32);
	jw_str(w, "byte_order", a->data == ELFDATA2MSB ? "big" : "little");
	jw_bool(w, "native", a->native);
	jw_hex(w, "page_size", a->page_size);
	jw_bool(w, "library", library);
}

/*
 * A line of NDJSON begun, and ended: one that cannot be made or printed
 * is said once and ends the run in status 2 (print_failed).
 */
static int begin(struct jw *w)
{
	int err = jw_begin(w);

	if (err)
		print_error("check", err);
	return err;
}

static void end(struct jw *w)
{
	int err = jw_end(w, stdout);

	if (err)
		print_error("check", err);
}

/* One file's line; a is NULL if it was not opened. */
static void json_result(const char *path, int kind, int err, const char *why,
			const struct ncb_elf_arch *a, int library,
			const char *notes)
{
	struct jw w;

	if (begin(&w))
		return;
	jw_str(&w, "type", "file");
	jw_named_path(&w, "file", path);
	jw_str(&w, "kind", kinds[kind].key);
	jw_bool(&w, "ok", !err && !(g.strict && *notes));
	jw_error(&w, "error", -err, err ? why : NULL);
	if (a)
		json_arch(&w, a, library);
	json_notes(&w, notes);
	end(&w);
}

/* What an image of another machine is, said once among its notes. */
static void print_foreign(const char *path, const struct ncb_elf_arch *a)
{
	char m[32];

	if (a->name)
		snprintf(m, sizeof(m), "%s", a->name);
	else
		snprintf(m, sizeof(m), "machine %d", a->machine);
	name(path);
	printf("note: for %s (%d-bit, %s-endian): checked by its own "
	       "rules (%llu KiB pages), cannot run here\n", m,
	       a->elf_class == ELFCLASS64 ? 64 : 32,
	       a->data == ELFDATA2MSB ? "big" : "little",
	       (unsigned long long)(a->page_size >> 10));
}

/* A program or library: every check, then the notes. */
/*
 * A program's interpreter as the loader takes it before mapping anything
 * (ncb_exec): there, an ELF shared object (ET_DYN) for the same machine
 * and class, with no interpreter of its own.  0, or -errno and why.
 */
static int check_interp(const struct ncb_elf_info *prog, char *why,
			size_t wl)
{
	/* A walk meets the same interpreter again and again: the last. */
	static char last[PATH_MAX], last_why[256];
	static int last_err;
	struct ncb_elf *ie = NULL;
	char inner[240];
	int err;

	if (!strcmp(last, prog->interp)) {
		snprintf(why, wl, "%s", last_why);
		return last_err;
	}
	err = ncb__interp_open(prog->interp, &ie, inner, sizeof(inner));
	if (err)
		snprintf(why, wl, "its %s", inner);
	ncb_elf_close(ie);
	snprintf(last, sizeof(last), "%s", prog->interp);
	snprintf(last_why, sizeof(last_why), "%s", err ? why : "");
	last_err = err;
	return err;
}

static void check_program(const char *path)
{
	struct ncb_elf_arch a = { .size = sizeof(a) };
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e = NULL;
	char why[256] = "";
	const char *notes = "";
	int err, fail, library = 0;

	g.checked++;
	err = ncb_elf_open_flags(&e, path, NCB_ELF_ANY_ARCH, why, sizeof(why));
	if (!err) {
		notes = ncb_elf_notes(e);
		ncb_elf_arch(e, &a);
		ncb_elf_info(e, &in);
		library = in.type == ET_DYN && !in.entry;
		g.noted += !!*notes;
		g.foreign += !a.native;
		/* Another machine's interpreter is that machine's to find. */
		if (a.native && in.interp)
			err = check_interp(&in, why, sizeof(why));
	}
	fail = err || (g.strict && *notes);
	g.failed += fail;
	if (g.json && (!g.quiet || fail))
		json_result(path, NCB_ELF_PROGRAM, err, why, err ? NULL : &a,
			    library, notes);
	else if (err)
		finding(path, "error", why);
	else if (!g.quiet || fail) {
		if (!fail)
			finding(path, "ok", library ? "a library" : NULL);
		if (!a.native)
			print_foreign(path, &a);
		print_notes(path, notes);
	}
	ncb_elf_close(e);
}

/* A file named that is no program or library: a verdict, a failure. */
static void reject_kind(const char *path, int kind)
{
	g.checked++;
	g.failed++;
	if (g.json)
		json_result(path, kind, -ENOEXEC, kinds[kind].verdict, NULL,
			    0, "");
	else
		finding(path, "error", kinds[kind].verdict);
}

/* Neither pass nor fail: an error (status 2), on standard error. */
static void unreadable(const char *path, int err)
{
	struct jw w;

	g.unreadable++;
	fprintf(stderr, "noclobber check: %s: %s: not checked\n", path,
		strerror(err));
	if (!g.json || begin(&w))
		return;
	jw_str(&w, "type", "unreadable");
	jw_named_path(&w, "file", path);
	jw_error(&w, "error", err, NULL);
	end(&w);
}

static void check_one(const char *path, int named)
{
	int kind = ncb_elf_kind(path);

	if (kind < 0) {
		unreadable(path, -kind);
		return;
	}
	if (kind == NCB_ELF_PROGRAM)
		check_program(path);
	else if (named && !g.elf_only)
		reject_kind(path, kind);
	else
		g.skipped[kind]++;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		check_one(path, 0);
	else if (type == FTW_DNR || type == FTW_NS)
		unreadable(path, type == FTW_DNR ? EACCES : ENOENT);
	else if (type == FTW_F || type == FTW_SL || type == FTW_SLN)
		g.special++;
	return 0;
}

/* A named argument that is neither a directory nor a regular file. */
/*
 * A directory: walked without following the links in it; one named by a
 * link is walked where the link leads, by that path.
 */
static void walk(const char *path)
{
	struct stat st;
	char *real = NULL;

	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (!real) {
			unreadable(path, errno);
			return;
		}
	}
	nftw(real ? real : path, walk_one, 32, FTW_PHYS);
	free(real);
}

static void reject_special(const char *path)
{
	const char *why = "not a regular file";

	g.checked++;
	g.failed++;
	if (g.json)
		json_result(path, NCB_ELF_NOT_ELF, -EACCES, why, NULL, 0, "");
	else
		finding(path, "error", why);
}

static void summary_text(void)
{
	const char *sep = "; skipped";
	int k;

	/* After everything on standard output, where both go together. */
	if (fflush(stdout))
		print_error("check", -errno);
	fprintf(stderr, "%lu file%s checked, %lu failed", g.checked,
		g.checked == 1 ? "" : "s", g.failed);
	if (g.noted)
		fprintf(stderr, ", %lu with notes", g.noted);
	if (g.foreign)
		fprintf(stderr, ", %lu for other machines", g.foreign);
	for (k = 0; k < NKINDS; k++) {
		if (!g.skipped[k])
			continue;
		fprintf(stderr, "%s %lu %s", sep, g.skipped[k],
			g.skipped[k] == 1 ? kinds[k].one : kinds[k].more);
		sep = ",";
	}
	if (g.special)
		fprintf(stderr, "%s %lu symbolic link%s or special file%s",
			sep, g.special, g.special == 1 ? "" : "s",
			g.special == 1 ? "" : "s");
	if (g.unreadable)
		fprintf(stderr, "; %lu unreadable", g.unreadable);
	fprintf(stderr, "\n");
}

static void summary_json(void)
{
	struct jw w;
	int k;

	if (begin(&w))
		return;
	jw_str(&w, "type", "summary");
	jw_int(&w, "checked", (long long)g.checked);
	jw_int(&w, "failed", (long long)g.failed);
	jw_int(&w, "with_notes", (long long)g.noted);
	jw_int(&w, "other_machines", (long long)g.foreign);
	jw_int(&w, "unreadable", (long long)g.unreadable);
	jw_open(&w, "skipped", '{');
	for (k = 0; k < NKINDS; k++)
		if (k != NCB_ELF_PROGRAM)
			jw_int(&w, kinds[k].key, (long long)g.skipped[k]);
	jw_int(&w, "special", (long long)g.special);
	jw_close(&w, '}');
	end(&w);
}

static int parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "elf-only", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			g.json = 1;
			break;
		case 'S':
			g.strict = 1;
			break;
		case 'q':
			g.quiet = 1;
			break;
		case 'e':
			g.elf_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_check(int argc, char **argv)
{
	struct stat st;
	int i, ret;

	memset(&g, 0, sizeof(g));
	ret = parse_options(argc, argv);
	if (ret >= 0)
		return ret;
	/* One that is not there is named and counted; the rest go on. */
	for (i = optind; i < argc; i++) {
		if (stat(argv[i], &st))
			unreadable(argv[i], errno);
		else if (S_ISDIR(st.st_mode))
			walk(argv[i]);
		else if (S_ISREG(st.st_mode))
			check_one(argv[i], 1);
		else
			reject_special(argv[i]);
	}
	if (g.json)
		summary_json();
	else
		summary_text();
	if (print_failed)
		return EXIT_USAGE;
	if (g.failed)
		return 1;
	return g.unreadable ? EXIT_USAGE : 0;
}

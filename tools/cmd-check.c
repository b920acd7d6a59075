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
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

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
		   "--quiet prints only\nfailures; --strict counts notes as "
		   "failures.  Exit status: 0 all pass,\n1 some file fails, "
		   "2 error (usage, or something unreadable).\n");
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
			    "ET_DYN): not a program or library" },
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
	int first;
};

static struct ctx g;

static void print_notes(const char *path, const char *notes)
{
	const char *e;

	for (; *notes; notes = e + 1) {
		e = strchr(notes, '\n');
		if (!e)
			break;
		printf("%s: note: %.*s\n", path, (int)(e - notes), notes);
	}
}

static void json_notes(const char *notes)
{
	const char *e;
	int first = 1;

	printf(", \"notes\": [");
	for (; *notes; notes = e + 1) {
		char line[256];

		e = strchr(notes, '\n');
		if (!e)
			break;
		snprintf(line, sizeof(line), "%.*s", (int)(e - notes), notes);
		printf("%s", first ? "" : ", ");
		json_string(stdout, line);
		first = 0;
	}
	printf("]}");
}

/* One file's object in the "files" array; a is NULL if not opened. */
static void json_result(const char *path, int kind, int err, const char *why,
			const struct ncb_elf_arch *a, int library,
			const char *notes)
{
	printf("%s\n  {\"file\": ", g.first ? "" : ",");
	g.first = 0;
	json_string(stdout, path);
	printf(", \"kind\": \"%s\", \"ok\": %s", kinds[kind].key,
	       err ? "false" : "true");
	if (err) {
		printf(", \"errno\": %d, \"error\": ", -err);
		json_string(stdout, why);
	}
	if (a) {
		printf(", \"machine\": ");
		if (a->name)
			json_string(stdout, a->name);
		else
			printf("null");
		printf(", \"e_machine\": %d, \"class\": %d, \"byte_order\": "
		       "\"%s\", \"native\": %s, \"page_size\": %llu, "
		       "\"library\": %s",
		       a->machine, a->elf_class == ELFCLASS64 ? 64 : 32,
		       a->data == ELFDATA2MSB ? "big" : "little",
		       a->native ? "true" : "false",
		       (unsigned long long)a->page_size,
		       library ? "true" : "false");
	}
	json_notes(notes);
}

/* What an image of another machine is, said once among its notes. */
static void print_foreign(const char *path, const struct ncb_elf_arch *a)
{
	char m[32];

	if (a->name)
		snprintf(m, sizeof(m), "%s", a->name);
	else
		snprintf(m, sizeof(m), "machine %d", a->machine);
	printf("%s: note: for %s (%d-bit, %s-endian): checked by its own "
	       "rules (%llu KiB pages), cannot run here\n", path, m,
	       a->elf_class == ELFCLASS64 ? 64 : 32,
	       a->data == ELFDATA2MSB ? "big" : "little",
	       (unsigned long long)(a->page_size >> 10));
}

/* A program or library: every check, then the notes. */
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
	}
	fail = err || (g.strict && *notes);
	g.failed += fail;
	if (g.json)
		json_result(path, NCB_ELF_PROGRAM, err, why, err ? NULL : &a,
			    library, notes);
	else if (err)
		printf("%s: rejected: %s\n", path, why);
	else if (!g.quiet || fail) {
		printf("%s: %s%s\n", path,
		       fail ? "fails: notes, under --strict" : "ok",
		       library ? ", a library" : "");
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
		printf("%s: rejected: %s\n", path, kinds[kind].verdict);
}

static void unreadable(const char *path, int err)
{
	g.unreadable++;
	fprintf(stderr, "noclobber check: %s: %s: not checked\n", path,
		strerror(err));
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
	return 0;
}

/* A named argument that is neither a directory nor a regular file. */
static void reject_special(const char *path)
{
	const char *why = "not a regular file";

	g.checked++;
	g.failed++;
	if (g.json)
		json_result(path, NCB_ELF_NOT_ELF, -EACCES, why, NULL, 0, "");
	else
		printf("%s: rejected: %s\n", path, why);
}

static void summary_text(void)
{
	const char *sep = "; skipped";
	int k;

	/* After everything on standard output, where both go together. */
	fflush(stdout);
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
	if (g.unreadable)
		fprintf(stderr, "; %lu unreadable", g.unreadable);
	fprintf(stderr, "\n");
}

static void summary_json(void)
{
	int k;

	printf("\n ],\n \"summary\": {\"checked\": %lu, \"failed\": %lu, "
	       "\"with_notes\": %lu, \"other_machines\": %lu, "
	       "\"unreadable\": %lu, \"skipped\": {", g.checked, g.failed,
	       g.noted, g.foreign, g.unreadable);
	for (k = 0; k < NKINDS; k++)
		if (k != NCB_ELF_PROGRAM)
			printf("%s\"%s\": %lu", k ? ", " : "", kinds[k].key,
			       g.skipped[k]);
	printf("}}\n}\n");
}

static int parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "elf-only", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "jsqeh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			g.json = 1;
			break;
		case 's':
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
	g.first = 1;
	ret = parse_options(argc, argv);
	if (ret >= 0)
		return ret;
	/* Every argument must exist before any output. */
	for (i = optind; i < argc; i++) {
		if (stat(argv[i], &st)) {
			fprintf(stderr, "noclobber check: %s: %s\n", argv[i],
				strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (g.json)
		printf("{\n \"files\": [");
	for (i = optind; i < argc; i++) {
		if (stat(argv[i], &st))
			unreadable(argv[i], errno);
		else if (S_ISDIR(st.st_mode))
			nftw(argv[i], walk_one, 32, FTW_PHYS);
		else if (S_ISREG(st.st_mode))
			check_one(argv[i], 1);
		else
			reject_special(argv[i]);
	}
	if (g.json)
		summary_json();
	else
		summary_text();
	if (g.failed)
		return 1;
	return g.unreadable ? EXIT_USAGE : 0;
}

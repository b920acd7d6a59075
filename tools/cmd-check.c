/* SPDX-License-Identifier: MIT */
/* noclobber check: lint ELF files for loading without clobbering. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber check [--json] [--strict] [--quiet] "
		   "[--elf-only] FILE|DIR...\n\n"
		   "Checks each ELF file (directories are walked, symbolic "
		   "links not followed)\nas the loader would before mapping "
		   "anything, and lists what loads but\ndeserves a look "
		   "(segments sharing pages, offsets misaligned for their\n"
		   "alignment, writable code, an executable stack).  "
		   "--elf-only skips files\nwithout the ELF magic; --quiet "
		   "prints only rejections; --strict counts\nnotes as "
		   "failures.  Exit status: 0 all pass, 1 some file fails, "
		   "2 error.\n");
}

struct ctx {
	int json;
	int strict;
	int quiet;
	int elf_only;
	unsigned long files;
	unsigned long failed;
	unsigned long skipped;
	int first;
};

static struct ctx g;

static int is_elf(const char *path)
{
	char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, m, sizeof(m));
	close(fd);
	return n == 4 && !memcmp(m, "\177ELF", 4);
}

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

static void json_result(const char *path, int err, const char *why,
			const char *notes)
{
	const char *e;
	int first = 1;

	printf("%s\n  {\"file\": ", g.first ? "" : ",");
	g.first = 0;
	json_string(stdout, path);
	printf(", \"ok\": %s", err ? "false" : "true");
	if (err) {
		printf(", \"errno\": %d, \"error\": ", -err);
		json_string(stdout, why);
	}
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

static void check_one(const char *path)
{
	struct ncb_elf *e = NULL;
	char why[256] = "";
	const char *notes = "";
	int err;

	if (g.elf_only && !is_elf(path)) {
		g.skipped++;
		return;
	}
	g.files++;
	err = ncb_elf_open(&e, path, why, sizeof(why));
	if (!err)
		notes = ncb_elf_notes(e);
	if (err || (g.strict && *notes))
		g.failed++;
	if (g.json)
		json_result(path, err, why, notes);
	else if (err)
		printf("%s: rejected: %s\n", path, why);
	else if (!g.quiet) {
		printf("%s: ok\n", path);
		print_notes(path, notes);
	}
	ncb_elf_close(e);
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		check_one(path);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "elf-only", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat st;
	int c, i;

	memset(&g, 0, sizeof(g));
	g.first = 1;
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
	if (g.json)
		printf("[");
	for (i = optind; i < argc; i++) {
		if (lstat(argv[i], &st)) {
			fprintf(stderr, "noclobber check: %s: %s\n", argv[i],
				strerror(errno));
			return EXIT_USAGE;
		}
		if (S_ISDIR(st.st_mode))
			nftw(argv[i], walk_one, 32, FTW_PHYS);
		else
			check_one(argv[i]);
	}
	if (g.json)
		printf("\n]\n");
	else
		fprintf(stderr, "%lu files checked, %lu failed, %lu skipped "
			"(not ELF)\n", g.files, g.failed, g.skipped);
	return g.failed ? 1 : 0;
}

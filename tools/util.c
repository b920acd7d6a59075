/* SPDX-License-Identifier: MIT */
/* Helpers shared by the noclobber subcommands. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* Decimal, 0x-hex or 0-octal, with an optional K, M, G or T suffix. */
int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;
	int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -EINVAL;
	*v = (uint64_t)n << shift;
	return 0;
}

/*
 * The options of a command that takes only --json and --help: -1 to go on,
 * or the exit status.
 */
int parse_json_only(int argc, char **argv, void (*usage)(FILE *f), int *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*json = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j') {
			*json = 1;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/*
 * An address, or the start of the first mapping whose path contains s
 * ("[stack]", "libc.so"): that names a place without knowing where ASLR
 * put it.
 */
int parse_target(const char *s, pid_t pid, uint64_t *addr)
{
	struct ncb_mapping m;
	struct ncb_maps *maps;
	int ret;

	if (!parse_u64(s, addr))
		return 0;
	ret = ncb_maps_open(&maps, pid);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (*m.path && strstr(m.path, s)) {
			*addr = m.start;
			break;
		}
	}
	ncb_maps_close(maps);
	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void perm_string(const struct ncb_mapping *m, char buf[5])
{
	buf[0] = m->prot & PROT_READ ? 'r' : '-';
	buf[1] = m->prot & PROT_WRITE ? 'w' : '-';
	buf[2] = m->prot & PROT_EXEC ? 'x' : '-';
	buf[3] = m->shared ? 's' : 'p';
	buf[4] = '\0';
}

void print_mapping(FILE *f, const struct ncb_mapping *m)
{
	char perms[5];

	perm_string(m, perms);
	fprintf(f, "  %012" PRIx64 "-%012" PRIx64 " %s %08" PRIx64 " %s\n",
		m->start, m->end, perms, m->offset,
		*m->path ? m->path : "(anonymous)");
}

void json_mapping(FILE *f, const struct ncb_mapping *m)
{
	char perms[5];

	perm_string(m, perms);
	fprintf(f, "{\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
		"\",\"perms\":\"%s\",\"offset\":%" PRIu64 ",\"dev\":\"%x:%x\""
		",\"inode\":%" PRIu64 ",\"path\":", m->start, m->end, perms,
		m->offset, m->dev_major, m->dev_minor, m->inode);
	json_string(f, m->path);
	fputc('}', f);
}

struct occ_ctx {
	FILE *f;
	int json;
	int n;
};

static int occ_one(const struct ncb_mapping *m, void *arg)
{
	struct occ_ctx *c = arg;

	if (c->json) {
		fputs(c->n++ ? "," : "", c->f);
		json_mapping(c->f, m);
	} else {
		print_mapping(c->f, m);
	}
	return 0;
}

/* The occupants of a range as a JSON array or as indented lines. */
int print_occupants(FILE *f, pid_t pid, uint64_t addr, uint64_t len, int json)
{
	struct occ_ctx c = { f, json, 0 };
	int ret;

	if (json)
		fputc('[', f);
	ret = ncb_occupants(pid, (const void *)(uintptr_t)addr, (size_t)len,
			    occ_one, &c);
	if (json)
		fputc(']', f);
	return ret;
}

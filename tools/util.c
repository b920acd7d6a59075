/* SPDX-License-Identifier: MIT */
/* Helpers shared by the noclobber subcommands. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* A PID is decimal, as the kernel prints it: "0x10" is no PID.  0: ours. */
int parse_pid(const char *s, pid_t *pid)
{
	uint64_t n = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > INT32_MAX)
			return -EINVAL;
	}
	*pid = (pid_t)n;
	return 0;
}

/*
 * An address, or the start of the first mapping whose path contains s
 * ("[stack]", "libc.so"): that names a place without knowing where ASLR
 * put it.  0, 1 if no mapping's path has s, or -errno if the mappings
 * cannot be read.
 */
int parse_target(const char *s, pid_t pid, uint64_t *addr)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
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
	return ret == 1 ? 0 : ret < 0 ? ret : 1;
}

/* Why the mappings of process pid cannot be read, in words. */
void maps_error(pid_t pid, int err)
{
	int id = pid ? (int)pid : (int)getpid();

	if (err == -ENOENT && pid)
		fprintf(stderr, "noclobber: process %d: no such process\n", id);
	else if (err == -ESRCH)
		fprintf(stderr, "noclobber: process %d has no user address "
			"space (a kernel thread, or it has exited)\n", id);
	else if (err == -EACCES || err == -EPERM)
		fprintf(stderr, "noclobber: process %d: permission denied "
			"(reading its mappings takes the right to ptrace "
			"it)\n", id);
	else
		fprintf(stderr, "noclobber: mappings of process %d: %s\n", id,
			strerror(-err));
}

/*
 * The well-formed UTF-8 sequence at s (Unicode table 3-7: no overlong
 * form, no surrogate, nothing above U+10FFFF): its length; or, negated,
 * that of the maximal subpart of a sequence cut short, which stands for
 * one U+FFFD (Unicode's recommended practice, Python's and browsers').
 * Stops at the first byte out of place, so never reads past a NUL.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return -1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -i;
	return n;
}

static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	for (; *p; p += n)
		if ((n = utf8_len(p)) < 0)
			return 0;
	return 1;
}

/*
 * One ASCII character in a JSON string: the short escapes where JSON has
 * them, \u00XX for the other control characters.
 */
static void json_ascii(FILE *f, unsigned char c)
{
	switch (c) {
	case '"':
	case '\\':
		fprintf(f, "\\%c", c);
		break;
	case '\b':
		fputs("\\b", f);
		break;
	case '\f':
		fputs("\\f", f);
		break;
	case '\n':
		fputs("\\n", f);
		break;
	case '\r':
		fputs("\\r", f);
		break;
	case '\t':
		fputs("\\t", f);
		break;
	default:
		if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/*
 * JSON text is Unicode; a path is bytes.  Valid UTF-8 passes through, and
 * what is not becomes U+FFFD: the output is valid UTF-8 that every JSON
 * parser takes.  What that loses, json_mapping gives back whole in
 * "path_hex".  (Python's surrogateescape, U+DC80 + byte, would keep one
 * lossless string, but a lone surrogate is no Unicode scalar value:
 * strict parsers refuse it, others replace it.)
 */
void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', f);
	for (; *p; p += n) {
		n = utf8_len(p);
		if (n < 0) {
			fputs("\\ufffd", f);
			n = -n;
		} else if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
		} else {
			json_ascii(f, *p);
		}
	}
	fputc('"', f);
}

/*
 * A path as /proc/PID/maps shows it: the kernel escapes '\n' as "\012"
 * (seq_file_path with "\n"), so that a mapping stays on one line.
 */
void print_path(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\012", f);
		else
			fputc(*s, f);
	}
}

void perm_string(const struct ncb_mapping *m, char buf[5])
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
	fprintf(f, "  %012" PRIx64 "-%012" PRIx64 " %s %08" PRIx64 " ",
		m->start, m->end, perms, m->offset);
	print_path(f, *m->path ? m->path : "(anonymous)");
	fputc('\n', f);
}

void json_mapping(FILE *f, const struct ncb_mapping *m)
{
	char perms[5];

	perm_string(m, perms);
	fprintf(f, "{\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
		"\",\"perms\":\"%s\",\"offset\":%" PRIu64 ",\"dev\":\"%x:%x\""
		",\"inode\":%" PRIu64 ",", m->start, m->end, perms,
		m->offset, m->dev_major, m->dev_minor, m->inode);
	json_path(f, m->path);
	fputc('}', f);
}

/* "path": the path, and "path_hex": its bytes if it is not UTF-8. */
void json_path(FILE *f, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;

	fputs("\"path\":", f);
	json_string(f, path);
	if (utf8_valid(path))
		return;
	fputs(",\"path_hex\":\"", f);
	for (; *p; p++)
		fprintf(f, "%02x", *p);
	fputc('"', f);
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
	ret = ncb_maps_occupants(pid, (const void *)(uintptr_t)addr,
				 (size_t)len, occ_one, &c);
	if (json)
		fputc(']', f);
	return ret;
}

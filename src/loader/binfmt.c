/* SPDX-License-Identifier: MIT */
/*
 * Foreign formats, as fs/binfmt_misc.c runs them: the kernel asks its
 * entries before any other handler (insert_binfmt), so a file whose first
 * bytes match an enabled entry's magic under its mask at its offset, or
 * whose name ends in its extension, runs through the entry's interpreter:
 * "INTERP PATH ARGV1...", with argv[0] kept after PATH under flag P.
 * Flag O hands the interpreter the file open as AT_EXECFD; flag C would
 * give the file's own set-user-ID credentials, which an in-process exec
 * cannot, so such a file is refused as ncb_exec refuses any.  The
 * entries are read from /proc/sys/fs/binfmt_misc in the order the
 * directory lists them; the kernel asks the newest registered first,
 * which the files do not tell.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader.h"

#define MISC "/proc/sys/fs/binfmt_misc"
#define HEAD NCB__HEAD

/* One entry, as entry_status() prints it. */
struct entry {
	char interp[PATH_MAX];
	unsigned int flags;		/* NCB__MISC_* */
	int magic;			/* 0: an extension */
	unsigned int offset, size;
	unsigned char bytes[HEAD], mask[HEAD];
	char ext[HEAD];
};

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Hex digits to bytes (bin2hex's lower case): their count, or -1. */
static int unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;
	int hi, lo;

	while (*s && *s != '\n') {
		hi = hex(s[0]);
		lo = hi < 0 ? -1 : hex(s[1]);
		if (lo < 0 || n == max)
			return -1;
		out[n++] = (unsigned char)(hi << 4 | lo);
		s += 2;
	}
	return (int)n;
}

static unsigned int flags_of(const char *s)
{
	unsigned int f = 0;

	for (; *s && *s != '\n'; s++) {
		f |= *s == 'P' ? NCB__MISC_ARGV0 : 0;
		f |= *s == 'O' ? NCB__MISC_OPEN : 0;
		f |= *s == 'C' ? NCB__MISC_CREDS : 0;
	}
	return f;
}

/* The rest of a line that starts with key, or NULL. */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n))
			return p + n;
	return NULL;
}

/* An entry's file parsed: 1 if it is enabled and whole, else 0. */
static int parse_entry(char *text, struct entry *e)
{
	const char *v;
	char *nl;
	int n, m;

	memset(e, 0, sizeof(*e));
	if (strncmp(text, "enabled\n", 8))
		return 0;
	v = field(text, "interpreter ");
	if (!v || !(nl = strchr(v, '\n')) || (size_t)(nl - v) >= PATH_MAX)
		return 0;
	memcpy(e->interp, v, (size_t)(nl - v));
	v = field(text, "flags: ");
	e->flags = v ? flags_of(v) : 0;
	v = field(text, "extension .");
	if (v) {
		nl = strchr(v, '\n');
		if (!nl || (size_t)(nl - v) >= sizeof(e->ext))
			return 0;
		memcpy(e->ext, v, (size_t)(nl - v));
		return 1;
	}
	v = field(text, "offset ");
	e->offset = v ? (unsigned int)strtoul(v, NULL, 10) : HEAD;
	v = field(text, "magic ");
	n = v ? unhex(v, e->bytes, sizeof(e->bytes)) : -1;
	v = field(text, "mask ");
	m = v ? unhex(v, e->mask, sizeof(e->mask)) : n;
	if (n <= 0 || m != n || e->offset > HEAD - (unsigned int)n)
		return 0;
	if (!field(text, "mask "))
		memset(e->mask, 0xff, (size_t)n);
	e->magic = 1;
	e->size = (unsigned int)n;
	return 1;
}

/* Whether the file (its first bytes in head, its name path) matches. */
static int matches(const struct entry *e, const unsigned char *head,
		   const char *path)
{
	const char *dot = strrchr(path, '.');
	unsigned int i;

	if (!e->magic)
		return dot && !strcmp(dot + 1, e->ext);
	for (i = 0; i < e->size; i++)
		if ((head[e->offset + i] ^ e->bytes[i]) & e->mask[i])
			return 0;
	return 1;
}

/* Whether binfmt_misc is mounted here and enabled as a whole. */
static int misc_enabled(void)
{
	char buf[16];

	return ncb__read_small(MISC "/status", buf, sizeof(buf)) > 0 &&
	       !strncmp(buf, "enabled", 7);
}

/* The entry for path, its first bytes in head: 1 found, 0 none. */
static int find_entry(const unsigned char *head, const char *path,
		      struct entry *e)
{
	char name[sizeof(MISC) + 256 + 1], *text;
	struct dirent *de;
	int found = 0;
	DIR *d;

	d = opendir(MISC);
	text = malloc(2 * PATH_MAX + 4 * HEAD);
	while (d && text && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "status") ||
		    !strcmp(de->d_name, "register"))
			continue;
		snprintf(name, sizeof(name), MISC "/%s", de->d_name);
		if (ncb__read_small(name, text, 2 * PATH_MAX + 4 * HEAD) > 0 &&
		    parse_entry(text, e))
			found = matches(e, head, path);
	}
	free(text);
	if (d)
		closedir(d);
	return found;
}

/*
 * The enabled entry that runs the file (its first bytes in head): 1 with
 * *out it (the caller's to free), 0 if none, -ENOMEM.
 */
static int entry_for(const unsigned char *head, const char *path,
		     struct entry **out)
{
	int ret;

	*out = NULL;
	if (!misc_enabled())
		return 0;
	*out = malloc(sizeof(**out));
	if (!*out)
		return -ENOMEM;
	ret = find_entry(head, path, *out);
	if (ret <= 0) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

int ncb__binfmt_interp(const char *path, char *out, size_t len)
{
	unsigned char head[HEAD];
	struct entry *e;
	int ret;

	if (ncb__read_head(path, head))
		return 0;
	ret = entry_for(head, path, &e);
	if (ret > 0 && strlen(e->interp) >= len)
		ret = -ENAMETOOLONG;
	else if (ret > 0)
		strcpy(out, e->interp);
	free(e);
	return ret;
}

int ncb__binfmt(const char *path, const unsigned char *head,
		char *const **argvp, char **line, unsigned int *flags,
		char *why, size_t wl)
{
	char *const *argv = *argvp;
	struct entry *e;
	size_t n = 0, i;
	char **nv;
	int ret = entry_for(head, path, &e);

	if (ret < 0)
		return ncb__why(why, wl, -ret, "out of memory");
	if (!ret)
		return 0;
	while (argv[n])
		n++;
	/* The interpreter's name, then the new vector. */
	*line = malloc(PATH_MAX + (n + 3) * sizeof(char *));
	if (!*line) {
		free(e);
		return ncb__why(why, wl, ENOMEM, "out of memory");
	}
	memcpy(*line, e->interp, PATH_MAX);
	nv = (char **)(void *)(*line + PATH_MAX);
	i = 0;
	nv[i++] = *line;
	nv[i++] = (char *)path;
	/* argv[0] given up for the path, unless flag P keeps it. */
	for (n = (e->flags & NCB__MISC_ARGV0) || !n ? 0 : 1; argv[n]; n++)
		nv[i++] = argv[n];
	nv[i] = NULL;
	*flags = e->flags;
	*argvp = nv;
	free(e);
	return 1;
}

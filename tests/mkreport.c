/* SPDX-License-Identifier: MIT */
/*
 * mkreport RECORDS: the HTML report (tools/report.c) of recorded
 * clobbers, on standard output, for tests/pictures.sh.  RECORDS holds
 * lines; a "clobber" line starts a record:
 *
 *   title TEXT
 *   clobber CALL START END PID TID
 *   caller MODULE SYMBOL ADDR          ("-" for a part not known)
 *   action TEXT
 *   victim START END PERMS KIND MAKER PATH   (MAKER "-": not known)
 *   maps FILE                          (beside RECORDS)
 *   after                              (the maps are read after it)
 *   unjudged                           (not judged)
 *   repeat N                           (N copies more of the record)
 *
 * Each record is kept as a watcher's is (rep_add), so that the limits
 * of what a page keeps are seen too.
 * Texts and paths take C escapes ("\012"), as /proc/PID/maps does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "report.h"

#define MAX 64

static struct rep_clobber c[MAX];
static struct rep_victim v[MAX][MAX];
static unsigned long repeat[MAX];
static size_t n;

static void __attribute__((noreturn)) die(const char *what,
					   const char *line)
{
	fprintf(stderr, "mkreport: %s: %s\n", what, line);
	exit(2);
}

/* A copy with "\ooo" made bytes. */
static char *unescape(const char *s)
{
	char *d = malloc(strlen(s) + 1), *o = d;

	if (!d)
		die("memory", s);
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return d;
}

static char *opt(const char *s)
{
	return strcmp(s, "-") ? unescape(s) : NULL;
}

static int perms(const char *s, int *shared)
{
	*shared = s[3] == 's';
	return (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
	       (s[2] == 'x' ? PROT_EXEC : 0);
}

static void read_maps(struct rep_clobber *r, const char *dir,
		      const char *name)
{
	char *path, *t;
	FILE *f;
	long len;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		die("memory", name);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		die("cannot read", path);
	t = malloc((size_t)len + 1);
	if (!t || fread(t, 1, (size_t)len, f) != (size_t)len)
		die("cannot read", path);
	fclose(f);
	free(path);
	r->maps = t;
	r->maps_len = (size_t)len;
}

static void victim(struct rep_clobber *r, char *line)
{
	char p[8], kind[64], maker[256];
	struct rep_victim *x;
	int at = 0;

	if (r->nvictims == MAX)
		die("too many victims", line);
	x = &v[r - c][r->nvictims];
	if (sscanf(line, "victim %lx %lx %7s %63s %255s %n",
		   (unsigned long *)&x->start, (unsigned long *)&x->end, p,
		   kind, maker, &at) != 5 || !at || strlen(p) != 4)
		die("bad victim", line);
	x->prot = perms(p, &x->shared);
	x->kind = unescape(kind);
	x->maker = opt(maker);
	x->path = unescape(line + at);
	r->victims = v[r - c];
	r->nvictims++;
}

static void parse(FILE *f, const char *dir, char **title)
{
	char line[8192], a[256], b[256], call[64];
	struct rep_clobber *r = NULL;
	unsigned long s, e, addr;
	int pid, tid;

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "title ", 6)) {
			*title = unescape(line + 6);
		} else if (sscanf(line, "clobber %63s %lx %lx %d %d", call, &s,
				  &e, &pid, &tid) == 5) {
			if (n == MAX)
				die("too many clobbers", line);
			r = &c[n++];
			*r = (struct rep_clobber){ .call = unescape(call),
						   .start = s, .end = e,
						   .pid = pid, .tid = tid };
		} else if (!r) {
			die("before a clobber line", line);
		} else if (sscanf(line, "caller %255s %255s %lx", a, b,
				  &addr) == 3) {
			r->module = opt(a);
			r->symbol = opt(b);
			r->caller = addr;
		} else if (!strncmp(line, "action ", 7)) {
			r->action = unescape(line + 7);
		} else if (!strncmp(line, "victim ", 7)) {
			victim(r, line);
		} else if (!strncmp(line, "maps ", 5)) {
			read_maps(r, dir, line + 5);
		} else if (!strcmp(line, "after")) {
			r->maps_after = 1;
		} else if (!strcmp(line, "unjudged")) {
			r->unjudged = 1;
		} else if (sscanf(line, "repeat %lu", &repeat[r - c]) == 1) {
			continue;
		} else {
			die("not understood", line);
		}
	}
}

int main(int argc, char **argv)
{
	char *title = "recorded", *dir, *slash;
	struct rep_book book = { 0 };
	unsigned long k;
	size_t i;
	FILE *f;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: mkreport RECORDS\n");
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f)
		die(strerror(errno), argv[1]);
	dir = strdup(argv[1]);
	slash = dir ? strrchr(dir, '/') : NULL;
	if (slash)
		*slash = '\0';
	parse(f, slash ? dir : ".", &title);
	fclose(f);
	for (i = 0; i < n; i++)
		for (k = 0; k <= repeat[i]; k++)
			if (rep_add(&book, &c[i]))
				die("memory", "rep_add");
	ret = report_html(stdout, title, book.c, book.n, book.more);
	rep_free(&book);
	if (ret) {
		fprintf(stderr, "mkreport: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

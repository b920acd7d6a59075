/* SPDX-License-Identifier: MIT */
/*
 * A watcher's report as one HTML page: a summary (clobbers by call, by
 * victim and by calling module), then each clobber: its range, its
 * caller, a table of its victims with who made them, and a picture of
 * the range as it was before the call (picture.c).  Everything a name
 * holds is escaped; the page has no script and refers to no file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "noclobber_intree.h"
#include "picture.h"
#include "report.h"

/* A count per name, for the summary. */
struct tally {
	const char **name;
	size_t *n;
	size_t len, cap;
};

static int count(struct tally *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (!strcmp(t->name[i], name)) {
			t->n[i]++;
			return 0;
		}
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		const char **nm = realloc(t->name, cap * sizeof(*nm));
		size_t *n;

		if (!nm)
			return -ENOMEM;
		t->name = nm;
		n = realloc(t->n, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->n = n;
		t->cap = cap;
	}
	t->name[t->len] = name;
	t->n[t->len++] = 1;
	return 0;
}

static void tally_free(struct tally *t)
{
	free(t->name);
	free(t->n);
}

static void text(FILE *f, const char *s)
{
	pic_text(f, s ? s : "", 4096);
}

static int before(const struct tally *t, size_t a, size_t b)
{
	return t->n[a] > t->n[b] ||
	       (t->n[a] == t->n[b] && strcmp(t->name[a], t->name[b]) < 0);
}

/* The most first, then by name: the same page for the same records. */
static void print_tally(FILE *f, const char *head, const struct tally *t)
{
	size_t i, j, best;
	char *done = calloc(t->len + 1, 1);

	fprintf(f, "<table><tr><th>%s</th><th>clobbers</th></tr>\n", head);
	for (i = 0; done && i < t->len; i++) {
		for (best = t->len, j = 0; j < t->len; j++)
			if (!done[j] && (best == t->len || before(t, j, best)))
				best = j;
		done[best] = 1;
		fputs("<tr><td>", f);
		text(f, t->name[best]);
		fprintf(f, "</td><td>%zu</td></tr>\n", t->n[best]);
	}
	fputs("</table>\n", f);
	free(done);
}

static const char *caller_module(const struct rep_clobber *c)
{
	return c->module ? c->module : "(not known)";
}

static int summary(FILE *f, const struct rep_clobber *c, size_t n)
{
	struct tally calls = { 0 }, kinds = { 0 }, mods = { 0 };
	size_t i, j;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		ret = count(&calls, c[i].call);
		if (!ret)
			ret = count(&mods, caller_module(&c[i]));
		for (j = 0; j < c[i].nvictims && !ret; j++)
			ret = count(&kinds, c[i].victims[j].kind);
	}
	if (!ret) {
		fputs("<h2>Summary</h2>\n<div class=\"sum\">\n", f);
		print_tally(f, "call", &calls);
		print_tally(f, "victim", &kinds);
		print_tally(f, "calling module", &mods);
		fputs("</div>\n", f);
	}
	tally_free(&calls);
	tally_free(&kinds);
	tally_free(&mods);
	return ret;
}

static void caller_text(FILE *f, const struct rep_clobber *c)
{
	text(f, caller_module(c));
	if (c->symbol) {
		fputc(':', f);
		text(f, c->symbol);
	}
	if (c->caller)
		fprintf(f, " at %#" PRIx64, c->caller);
}

static void victims(FILE *f, const struct rep_clobber *c)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	char perms[5], size[32];
	size_t i;

	fputs("<table><tr><th>range</th><th>size</th><th>perms</th>"
	      "<th>victim</th><th>path</th><th>made by</th></tr>\n", f);
	for (i = 0; i < c->nvictims; i++) {
		const struct rep_victim *v = &c->victims[i];

		m.prot = v->prot;
		m.shared = v->shared;
		perm_string(&m, perms);
		fprintf(f, "<tr><td><code>%#" PRIx64 "-%#" PRIx64 "</code></td>"
			"<td>%s</td><td><code>%s</code></td><td>", v->start,
			v->end, human(v->end - v->start, 0, size), perms);
		text(f, v->kind);
		fputs("</td><td><code>", f);
		text(f, *v->path ? v->path : "(anonymous)");
		fputs("</code></td><td>", f);
		text(f, v->maker ? v->maker : "(not known)");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The area holding a or the nearest below it; n if none. */
static size_t area_at(const struct pic *p, uint64_t a)
{
	size_t i = p->n;

	while (i > 0 && p->a[i - 1].start > a)
		i--;
	return i ? i - 1 : p->n;
}

/*
 * What the picture shows: the range and the caller's mapping, with one
 * mapping more each side (gaps are drawn compressed, so a caller far
 * away costs little room).
 */
static void view(struct pic *p, const struct rep_clobber *c)
{
	uint64_t lo = c->start, hi = c->end;
	size_t i;

	if (c->caller && c->caller < lo)
		lo = c->caller;
	if (c->caller && c->caller >= hi)
		hi = c->caller + 1;
	i = area_at(p, lo);
	if (i < p->n && p->a[i].end > lo && i > 0)
		i--;
	p->lo = i < p->n ? p->a[i].start : 0;
	for (i = 0; i < p->n && p->a[i].start < hi; i++)
		;
	p->hi = i < p->n ? p->a[i].end : hi;
	if (p->lo > c->start)
		p->lo = c->start;
}

/* Each victim's areas named as victims, with their maker. */
static void name_victims(struct pic *p, const struct rep_clobber *c)
{
	size_t i, j;

	for (i = 0; i < c->nvictims && !p->err; i++) {
		const struct rep_victim *v = &c->victims[i];

		for (j = 0; j < p->n; j++) {
			struct pic_area *a = &p->a[j];
			const char *b = strrchr(a->path, '/');

			if (a->end <= v->start || a->start >= v->end || a->note)
				continue;
			if (asprintf(&a->note, "victim (%s): %s, made by %s",
				     v->kind, b ? b + 1 : *a->path ? a->path :
				     pic_kind_name(a->kind), v->maker ?
				     v->maker : "(not known)") < 0) {
				a->note = NULL;
				p->err = -ENOMEM;
			}
		}
	}
}

static int picture(FILE *f, const struct rep_clobber *c, int serial)
{
	struct ncb_maps *maps;
	struct pic p;
	int ret;

	if (!c->maps) {
		fputs("<p>No maps were recorded before this call.</p>\n", f);
		return 0;
	}
	ret = ncb__maps_from_text(&maps, c->maps, c->maps_len);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		fputs("<p>The maps recorded before this call are no maps text: "
		      "not drawn.</p>\n", f);
		return 0;
	}
	pic_init(&p);
	p.embed = 1;
	p.serial = serial;
	ret = pic_read(&p, maps, 0, 0);
	ncb_maps_close(maps);
	if (!ret) {
		pic_space(&p, 0, 0);
		pic_classify(&p, NULL);
		view(&p, c);
		name_victims(&p, c);
		pic_title(&p, "before the %s of %#" PRIx64 "-%#" PRIx64
			  " (PID %d)", c->call, c->start, c->end, (int)c->pid);
		pic_mark(&p, PM_CLOBBER, c->start, c->end, "%s replaces this",
			 c->call);
		if (c->caller)
			pic_mark(&p, PM_POINT, c->caller, c->caller,
				 "caller: %s%s%s", caller_module(c),
				 c->symbol ? ":" : "", c->symbol ?
				 c->symbol : "");
		ret = pic_svg(&p, f);
	}
	pic_free(&p);
	return ret;
}

static int clobber(FILE *f, const struct rep_clobber *c, size_t i)
{
	char size[32];

	fprintf(f, "<section id=\"c%zu\">\n<h2>%zu. ", i + 1, i + 1);
	text(f, c->call);
	fprintf(f, " <code>%#" PRIx64 "-%#" PRIx64 "</code> (%s)</h2>\n"
		"<p>Process %d, thread %d; called from <code>", c->start,
		c->end, human(c->end - c->start, 0, size), (int)c->pid,
		(int)c->tid);
	caller_text(f, c);
	fputs("</code>", f);
	if (c->action) {
		fputs("; the watcher: ", f);
		text(f, c->action);
	}
	fputs(".</p>\n", f);
	victims(f, c);
	fputs("<figure>\n", f);
	if (picture(f, c, (int)i + 1))
		return -ENOMEM;
	fputs("</figure>\n</section>\n", f);
	return 0;
}

static const char style[] =
	"body{font-family:sans-serif;max-width:62em;margin:1em auto;"
	"padding:0 1em;color:#111;background:#fff}"
	"table{border-collapse:collapse;margin:.5em 1em .5em 0}"
	"td,th{border:1px solid #999;padding:2px 6px;text-align:left;"
	"vertical-align:top}th{background:#eee}"
	".sum{display:flex;flex-wrap:wrap}"
	"section{border-top:2px solid #333;margin-top:2em}"
	"figure{margin:1em 0}svg{max-width:100%;height:auto}";

static int page(FILE *f, const char *title, const struct rep_clobber *c,
		size_t n)
{
	size_t i;
	int ret;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n<title>noclobber watch: ", f);
	text(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n"
		"<h1>Clobbers: ", style);
	text(f, title);
	fprintf(f, "</h1>\n<p>%zu clobber%s: fixed placements that replaced "
		"memory their caller does not own (noclobber(7) has the "
		"rules).</p>\n", n, n == 1 ? "" : "s");
	ret = summary(f, c, n);
	if (ret)
		return ret;
	fputs("<ol>\n", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "<li><a href=\"#c%zu\">", i + 1);
		text(f, c[i].call);
		fprintf(f, " %#" PRIx64 "-%#" PRIx64 "</a> from ", c[i].start,
			c[i].end);
		caller_text(f, &c[i]);
		fputs("</li>\n", f);
	}
	fputs("</ol>\n", f);
	for (i = 0; i < n; i++) {
		ret = clobber(f, &c[i], i);
		if (ret)
			return ret;
	}
	fputs("</body>\n</html>\n", f);
	return 0;
}

struct doc {
	const char *title;
	const struct rep_clobber *c;
	size_t n;
};

static int make_page(FILE *f, const void *arg)
{
	const struct doc *d = arg;

	return page(f, d->title, d->c, d->n);
}

/* Built whole in memory, then written: never half a page. */
int report_html(FILE *out, const char *title, const struct rep_clobber *c,
		size_t n)
{
	struct doc d = { title, c, n };

	return write_whole(out, make_page, &d);
}

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
static void view(struct pic *p, const struct rep_clobber *c, uint64_t at)
{
	uint64_t lo = c->start, hi = c->end;
	size_t i;

	if (at && at < lo)
		lo = at;
	if (at && at >= hi)
		hi = at + 1;
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

/*
 * Maps read after the call: its range as its victims say it was (what
 * the call made there, and what it unmapped, are not drawn).
 */
static void before_from_victims(struct pic *p, const struct rep_clobber *c)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	size_t i;

	pic_cut(p, c->start, c->end);
	for (i = 0; i < c->nvictims; i++) {
		m.start = c->victims[i].start;
		m.end = c->victims[i].end;
		m.prot = c->victims[i].prot;
		m.shared = c->victims[i].shared;
		m.path = c->victims[i].path;
		pic_add(p, &m);
	}
	pic_sort(p);
	pic_note(p, "The maps were read after the call: its range is drawn "
		 "from what the kernel said it replaced.");
}

/* The caller's address, or where its module maps its offset; 0. */
static uint64_t caller_at(const struct pic *p, const struct rep_clobber *c)
{
	size_t i;

	if (c->caller || !c->module)
		return c->caller;
	for (i = 0; i < p->n; i++) {
		const struct pic_area *a = &p->a[i];

		if (!strcmp(a->path, c->module) && c->caller_off >= a->offset &&
		    c->caller_off - a->offset < a->end - a->start)
			return a->start + (c->caller_off - a->offset);
	}
	return 0;
}

static int picture(FILE *f, const struct rep_clobber *c, int serial)
{
	struct ncb_maps *maps;
	uint64_t at;
	struct pic p;
	int ret;

	if (!c->maps) {
		fputs(c->maps_dropped ? "<p>The maps before this call were "
		      "not kept: the report keeps 64 MiB of them.</p>\n" :
		      "<p>No maps were recorded before this call.</p>\n", f);
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
	if (!ret && c->maps_after)
		before_from_victims(&p, c);
	if (!ret) {
		at = caller_at(&p, c);
		pic_space(&p, 0, 0);
		pic_classify(&p, NULL);
		view(&p, c, at);
		name_victims(&p, c);
		pic_title(&p, "before the %s of %#" PRIx64 "-%#" PRIx64
			  " (PID %d)", c->call, c->start, c->end, (int)c->pid);
		pic_mark(&p, PM_CLOBBER, c->start, c->end, "%s replaces this",
			 c->call);
		if (at)
			pic_mark(&p, PM_POINT, at, at,
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
	if (c->unjudged)
		fputs("<p>Not judged: what it replaces, or who made that, is "
		      "not known; reported as a clobber may be.</p>\n", f);
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

/* How many were judged clobbers, and how many could not be judged. */
static void counts(FILE *f, const struct rep_clobber *c, size_t n,
		   size_t more)
{
	size_t i, unjudged = 0;

	for (i = 0; i < n; i++)
		unjudged += !!c[i].unjudged;
	fprintf(f, "<p>%zu clobber%s: fixed placements that replaced memory "
		"their caller does not own (noclobber(7) has the rules)",
		n - unjudged, n - unjudged == 1 ? "" : "s");
	if (unjudged)
		fprintf(f, "; %zu placement%s not judged, for what %s would "
			"replace, or who made it, is not known", unjudged,
			unjudged == 1 ? "" : "s", unjudged == 1 ? "it" :
			"they");
	fputs(".</p>\n", f);
	if (more)
		fprintf(f, "<p>%zu more were reported and are not shown: the "
			"page keeps the first %d.</p>\n", more, REP_KEEP);
}

static int page(FILE *f, const char *title, const struct rep_clobber *c,
		size_t n, size_t more)
{
	size_t i;
	int ret;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n<title>noclobber watch: ", f);
	text(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n"
		"<h1>Clobbers: ", style);
	text(f, title);
	fputs("</h1>\n", f);
	counts(f, c, n, more);
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
	size_t n, more;
};

static int make_page(FILE *f, const void *arg)
{
	const struct doc *d = arg;

	return page(f, d->title, d->c, d->n, d->more);
}

/* Built whole in memory, then written: never half a page. */
int report_html(FILE *out, const char *title, const struct rep_clobber *c,
		size_t n, size_t more)
{
	struct doc d = { title, c, n, more };

	return write_whole(out, make_page, &d);
}

/* ---- the records kept ---- */

static void free_record(struct rep_clobber *c)
{
	size_t i;

	free((char *)c->call);
	free((char *)c->module);
	free((char *)c->symbol);
	free((char *)c->action);
	free((char *)c->maps);
	for (i = 0; c->victims && i < c->nvictims; i++) {
		free((char *)c->victims[i].path);
		free((char *)c->victims[i].kind);
		free((char *)c->victims[i].maker);
	}
	free((struct rep_victim *)c->victims);
}

/* A copy of s, NULL for NULL; *bad set if there was no memory. */
static const char *dup_or_null(const char *s, int *bad)
{
	char *d = s ? strdup(s) : NULL;

	*bad |= s && !d;
	return d;
}

static int copy_victims(struct rep_clobber *d, const struct rep_clobber *c)
{
	struct rep_victim *v = calloc(c->nvictims ? c->nvictims : 1,
				      sizeof(*v));
	int bad = !v;
	size_t i;

	d->victims = v;
	for (i = 0; v && i < c->nvictims; i++) {
		v[i] = c->victims[i];
		v[i].path = dup_or_null(c->victims[i].path, &bad);
		v[i].kind = dup_or_null(c->victims[i].kind, &bad);
		v[i].maker = dup_or_null(c->victims[i].maker, &bad);
	}
	return bad ? -ENOMEM : 0;
}

/* The maps, if the book still has room for them. */
static int copy_maps(struct rep_book *b, struct rep_clobber *d,
		     const struct rep_clobber *c)
{
	char *m;

	d->maps = NULL;
	if (!c->maps)
		return 0;
	if (c->maps_len > REP_MAPS_BYTES - b->maps_bytes) {
		d->maps_dropped = 1;
		return 0;
	}
	m = malloc(c->maps_len ? c->maps_len : 1);
	if (!m)
		return -ENOMEM;
	memcpy(m, c->maps, c->maps_len);
	d->maps = m;
	b->maps_bytes += c->maps_len;
	return 0;
}

int rep_add(struct rep_book *b, const struct rep_clobber *c)
{
	struct rep_clobber *d;
	int bad = 0;

	if (b->n == REP_KEEP) {
		b->more++;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;

		d = realloc(b->c, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		b->c = d;
		b->cap = cap;
	}
	d = &b->c[b->n];
	*d = *c;
	d->maps = NULL;
	d->call = dup_or_null(c->call, &bad);
	d->module = dup_or_null(c->module, &bad);
	d->symbol = dup_or_null(c->symbol, &bad);
	d->action = dup_or_null(c->action, &bad);
	bad |= copy_victims(d, c) || copy_maps(b, d, c);
	if (bad) {
		free_record(d);
		return -ENOMEM;
	}
	b->n++;
	return 0;
}

void rep_free(struct rep_book *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free_record(&b->c[i]);
	free(b->c);
	*b = (struct rep_book){ 0 };
}

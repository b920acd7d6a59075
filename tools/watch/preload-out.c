/* SPDX-License-Identifier: MIT */
/*
 * The preload watcher's reports: the same lines and JSON documents as
 * the other watchers' (noclobber(1) gives their shape), made in a static
 * buffer under the space's lock and written with one write(2), so that
 * reports of processes sharing the file stay whole.  Nothing here
 * allocates: printf's family may, and no call here is made from a place
 * that could wait for malloc's locks.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../utf8.h"
#include "preload.h"

static int out_fd PL_HOT = 2;
static int json PL_HOT;
static const char *program PL_HOT = "";

/* What is being written: the report, or a phrase to be quoted. */
struct buf {
	char *b;
	size_t n, cap;
};

static char report_text[16384], phrase_text[1024];
static struct buf report = { report_text, 0, sizeof(report_text) };
static struct buf phrase = { phrase_text, 0, sizeof(phrase_text) };
static struct buf *cur = &report;
static int first PL_HOT;	/* no member yet in the JSON object open */

/* A report too long for the buffer is cut, never overrun. */
static void ch(char c)
{
	if (cur->n < cur->cap)
		cur->b[cur->n++] = c;
}

static void str(const char *s)
{
	while (*s)
		ch(*s++);
}

static void hex(uint64_t v)
{
	char d[16];
	int n = 0;

	str("0x");
	do
		d[n++] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	while (n)
		ch(d[--n]);
}

/* As printf's %#x: 0x before all but 0. */
static void alt(uint64_t v)
{
	if (v)
		hex(v);
	else
		ch('0');
}

/* As %08x. */
static void hex8(uint64_t v)
{
	int i;

	for (i = 60; i >= 0; i -= 4)
		if (i < 32 || v >> i)
			ch("0123456789abcdef"[v >> i & 15]);
}

static void dec(unsigned long long v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		ch(d[--n]);
}

static void sdec(long long v)
{
	if (v < 0)
		ch('-');
	dec(v < 0 ? -(unsigned long long)v : (unsigned long long)v);
}

/* Seconds to the microsecond, as %.6f. */
static void seconds(double s)
{
	unsigned long long us = s > 0 ? (unsigned long long)(s * 1e6 + 0.5) :
			       0;
	char d[6];
	int i;

	dec(us / 1000000);
	ch('.');
	for (i = 5, us %= 1000000; i >= 0; i--, us /= 10)
		d[i] = (char)('0' + us % 10);
	for (i = 0; i < 6; i++)
		ch(d[i]);
}

/* ---- JSON ---- */

static void jstr(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	ch('"');
	for (; *p; p += n) {
		n = utf8_len(p);
		if (n < 0) {
			str("\\ufffd");
			n = -n;
		} else if (n > 1) {
			while (n-- > 1)
				ch((char)*p++);
			n = 1;
			ch((char)*p);
		} else if (*p == '"' || *p == '\\') {
			ch('\\');
			ch((char)*p);
		} else if (*p < 0x20) {
			str("\\u00");
			ch("0123456789abcdef"[*p >> 4]);
			ch("0123456789abcdef"[*p & 15]);
		} else {
			ch((char)*p);
		}
	}
	ch('"');
}

static void open_(char brace)
{
	ch(brace);
	first = 1;
}

static void key(const char *k)
{
	if (!first)
		ch(',');
	first = 0;
	jstr(k);
	ch(':');
}

static void jhex(const char *k, uint64_t v)
{
	key(k);
	ch('"');
	hex(v);
	ch('"');
}

static void jkstr(const char *k, const char *s)
{
	key(k);
	jstr(s);
}

/* A path, and its bytes as hex where it is no UTF-8 (json.c's rule). */
static void jpath(const char *k, const char *path)
{
	const unsigned char *p = (const unsigned char *)path;
	int n;

	jkstr(k, path);
	for (; *p; p += n)
		if ((n = utf8_len(p)) < 0)
			break;
	if (!*p)
		return;
	str(",\"");
	str(k);
	str("_hex\":\"");
	for (p = (const unsigned char *)path; *p; p++) {
		ch("0123456789abcdef"[*p >> 4]);
		ch("0123456789abcdef"[*p & 15]);
	}
	ch('"');
}

/* ---- Words ---- */

/* An error's description (strerrordesc_np: no locale, no allocation). */
static const char *describe(int err)
{
	const char *d = strerrordesc_np(err);

	return d ? d : "Unknown error";
}

static void perms(const struct ncb_mapping *m)
{
	ch(m->prot & PROT_READ ? 'r' : '-');
	ch(m->prot & PROT_WRITE ? 'w' : '-');
	ch(m->prot & PROT_EXEC ? 'x' : '-');
	ch(m->shared ? 's' : 'p');
}

/* A region's maker, in the words of the other watchers' reports. */
static void made_by(const struct pl_event *e, size_t i)
{
	const struct ncb__wvictim *v = &e->vs->v[i];
	const struct ncb__wregion *r;
	struct pl_site s;

	switch (v->kind) {
	case NCB__W_HEAP: case NCB__W_STACK: case NCB__W_KERNEL:
	case NCB__W_EXE:
		str("the kernel");
		return;
	case NCB__W_INTERP:
		str("the kernel (execve)");
		return;
	case NCB__W_THREAD_STACK:
		str("pthread_create (thread ");
		if (v->tid)
			sdec(v->tid);
		else
			str("not yet running");
		ch(')');
		return;
	case NCB__W_LIBRARY:
		str("the loader");
		return;
	case NCB__W_REGION:
		break;
	default:
		str("not seen");
		return;
	}
	r = pl_region(v->region);
	str(wcall_name((enum wcall)r->call, 0));
	s.mod = r->by;
	if (!r->by.ino) {
		str(" from code in no file");
	} else {
		str(" from ");
		pl_module_path(r->by, s.path);
		str(s.path[0] ? s.path : "(a module since unmapped)");
		ch('+');
		alt(r->by_off);
		s.offset = r->by_off;
		pl_symbol(&s);
		if (s.symbol[0]) {
			str(" (");
			str(s.symbol);
			ch(')');
		}
	}
	str(" at ");
	seconds(r->when);
	str(" s");
}

static void site(const struct pl_site *s)
{
	str(s->path[0] ? s->path : "(anonymous code)");
	ch('+');
	alt(s->offset);
	if (s->symbol[0]) {
		str(" (");
		str(s->symbol);
		ch('+');
		alt(s->sym_off);
		ch(')');
	}
}

/* The arguments as the other watchers print each call's. */
static void args(const struct pl_event *e)
{
	const uint64_t *a = e->args;

	ch('(');
	switch (wcall_family(e->call)) {
	case WC_SHMAT:
		sdec((int)a[0]);
		str(", ");
		alt(a[1]);
		str(", ");
		alt(a[2]);
		break;
	case WC_MREMAP:
		alt(a[0]);
		str(", ");
		alt(a[1]);
		str(", ");
		alt(a[2]);
		str(", ");
		alt(a[3]);
		str(", ");
		alt(a[4]);
		break;
	default:
		alt(a[0]);
		str(", ");
		alt(a[1]);
		str(", ");
		dec(a[2]);
		str(", ");
		alt(a[3]);
		str(", ");
		sdec((int)a[4]);
		str(", ");
		alt(a[5]);
	}
	ch(')');
}

static void human(const struct pl_event *e)
{
	size_t i;

	str("noclobber watch: ");
	str(e->unjudged ? "unjudged" : ncb__wclass_name(e->cls));
	str(": ");
	str(program);
	ch('[');
	sdec(e->pid);
	if (e->tid != e->pid) {
		ch('/');
		sdec(e->tid);
	}
	str("] ");
	str(e->name);
	args(e);
	str(" on [");
	hex(e->start);
	str(", ");
	hex(e->end);
	str(")\n");
	for (i = 0; e->vs && i < e->vs->n; i++) {
		const struct ncb__wvictim *v = &e->vs->v[i];

		if (v->kind == NCB__W_RESERVED || v->kind == NCB__W_PAST_EOF)
			continue;
		str(i == e->culprit ? "  replaces [" : "  and      [");
		hex(v->m.start);
		str(", ");
		hex(v->m.end);
		str(") ");
		perms(&v->m);
		ch(' ');
		hex8(v->m.offset);
		ch(' ');
		str(v->m.path[0] ? v->m.path : "(anonymous)");
		str(": ");
		if (v->kind == NCB__W_THREAD_STACK && v->tid) {
			str("stack of thread ");
			sdec(v->tid);
		} else if (v->kind == NCB__W_THREAD_STACK) {
			str("stack of a thread not yet running");
		} else {
			str(ncb__wkind_name(v->kind));
		}
		str(", made by ");
		made_by(e, i);
		ch('\n');
	}
	if (e->unjudged && e->cls == NCB__WC_UNKNOWN)
		str("  who made what it would replace was not seen\n");
	else if (e->unjudged)
		str("  what it would replace could not be read\n");
	str("  called from ");
	site(&e->caller);
	str("; ");
	str(waction_name(e->action));
	if (e->have_result && e->result < 0 && e->result > -4096) {
		str(": failed with ");
		str(describe((int)-e->result));
	}
	ch('\n');
}

static void jsite(const char *k, const struct pl_site *s)
{
	key(k);
	open_('{');
	jkstr("module", s->path);
	jhex("offset", s->offset);
	jkstr("symbol", s->symbol);
	jhex("symbol_offset", s->sym_off);
	ch('}');
	first = 0;
}

/* Who made a region the watcher saw made: the call, where, when. */
static void jmaker(const struct ncb__wregion *r)
{
	struct pl_site s;

	memset(&s, 0, sizeof(s));
	s.mod = r->by;
	s.offset = r->by_off;
	pl_module_path(r->by, s.path);
	pl_symbol(&s);
	key("maker");
	open_('{');
	jkstr("call", wcall_name((enum wcall)r->call, 0));
	jkstr("module", s.path);
	jhex("offset", s.offset);
	jkstr("symbol", s.symbol);
	jhex("symbol_offset", s.sym_off);
	key("time");
	seconds(r->when);
	ch('}');
	first = 0;
}

/* A phrase of ours, made apart, quoted (a path in it may need it). */
static void jmade_by(const struct pl_event *e, size_t i)
{
	phrase.n = 0;
	cur = &phrase;
	made_by(e, i);
	ch('\0');
	phrase.b[phrase.cap - 1] = '\0';
	cur = &report;
	jkstr("creator", phrase.b);
}

static void jvictim(const struct pl_event *e, size_t i)
{
	const struct ncb__wvictim *v = &e->vs->v[i];

	if (i)
		ch(',');
	open_('{');
	jhex("start", v->m.start);
	jhex("end", v->m.end);
	key("perms");
	ch('"');
	perms(&v->m);
	ch('"');
	jhex("offset", v->m.offset);
	jpath("path", v->m.path);
	jkstr("kind", ncb__wkind_name(v->kind));
	if (v->kind == NCB__W_THREAD_STACK) {
		key("thread");
		sdec(v->tid);
	}
	jmade_by(e, i);
	if (v->kind == NCB__W_REGION)
		jmaker(pl_region(v->region));
	ch('}');
	first = 0;
}

static void jerror(long result)
{
	int err = (int)-result;
	const char *name = strerrorname_np(err);

	key("error");
	open_('{');
	jkstr("errno", name ? name : "?");
	key("code");
	sdec(err);
	jkstr("message", describe(err));
	ch('}');
	first = 0;
}

static void jevent(const struct pl_event *e)
{
	size_t i;

	open_('{');
	key("version");
	ch('1');
	jkstr("event", e->unjudged ? "unjudged" : NCB__WC_CLOBBER(e->cls) ?
	      "clobber" : "refused");
	jkstr("class", ncb__wclass_name(e->cls));
	key("pid");
	sdec(e->pid);
	key("tid");
	sdec(e->tid);
	jkstr("program", program);
	key("time");
	seconds(e->when);
	jkstr("call", e->name);
	key("args");
	ch('[');
	for (i = 0; i < 6; i++) {
		str(i ? ",\"" : "\"");
		hex(e->args[i]);
		ch('"');
	}
	ch(']');
	jhex("start", e->start);
	jhex("end", e->end);
	key("victims");
	ch('[');
	for (i = 0; e->vs && i < e->vs->n; i++)
		jvictim(e, i);
	ch(']');
	jsite("caller", &e->caller);
	jkstr("action", waction_name(e->action));
	if (e->have_result && e->result < 0 && e->result > -4096) {
		jerror(e->result);
	} else if (e->have_result) {
		key("error");
		str("null");
	}
	ch('}');
}

/* ---- Writing ---- */

/* The report made, ended by a newline even where it was cut, written. */
static void flush(void)
{
	if (report.n == report.cap)
		report.n--;
	if (report.n && report.b[report.n - 1] != '\n')
		report.b[report.n++] = '\n';
	pl_write_all(out_fd, report.b, report.n);
	report.n = 0;
}

void pl_out_init(int fd, int as_json, const char *prog)
{
	out_fd = fd;
	json = as_json;
	program = prog;
}

void pl_report(const struct pl_event *e)
{
	if (json)
		jevent(e);
	else
		human(e);
	flush();
}

void pl_summary(pid_t pid, const struct pl_counts *c)
{
	unsigned long benign = 0, clobbers = 0;
	int k, any = 0;

	for (k = NCB__WC_RESERVATION; k <= NCB__WC_SPANS; k++)
		if (NCB__WC_CLOBBER(k))
			clobbers += c->by_class[k];
		else if (NCB__WC_BENIGN(k))
			benign += c->by_class[k];
	if (json) {
		open_('{');
		key("version");
		ch('1');
		jkstr("event", "summary");
		key("pid");
		sdec(pid);
		jkstr("program", program);
		key("fixed");
		dec(c->fixed);
		key("free");
		dec(c->by_class[NCB__WC_NOTHING]);
		key("benign");
		open_('{');
		for (k = NCB__WC_RESERVATION; NCB__WC_BENIGN(k); k++) {
			key(ncb__wclass_name(k));
			dec(c->by_class[k]);
		}
		ch('}');
		first = 0;
		key("clobbers");
		dec(clobbers);
		key("invalid");
		dec(c->invalid);
		key("unjudged");
		dec(c->unjudged);
		key("escapes");
		ch('0');
		key("lost");
		ch('0');
		ch('}');
		flush();
		return;
	}
	if (!c->fixed)
		return;
	str("noclobber watch: ");
	str(program);
	ch('[');
	sdec(pid);
	str("]: ");
	dec(c->fixed);
	str(" fixed placements: ");
	dec(c->by_class[NCB__WC_NOTHING]);
	str(" over free space, ");
	dec(benign);
	str(" benign");
	for (k = NCB__WC_RESERVATION; NCB__WC_BENIGN(k); k++)
		if (c->by_class[k]) {
			str(any ? ", " : " (");
			str(ncb__wclass_name(k));
			ch(' ');
			dec(c->by_class[k]);
			any = 1;
		}
	str(any ? "), " : ", ");
	dec(clobbers);
	str(clobbers == 1 ? " clobber" : " clobbers");
	if (c->invalid) {
		str(", ");
		dec(c->invalid);
		str(" refused by the kernel itself");
	}
	if (c->unjudged) {
		str(", ");
		dec(c->unjudged);
		str(" not judged");
	}
	flush();
}

void pl_warn_for(const char *prog, const char *what)
{
	if (json) {
		open_('{');
		key("version");
		ch('1');
		jkstr("event", "warning");
		jkstr("program", prog);
		jkstr("message", what);
		ch('}');
	} else {
		str("noclobber watch: ");
		str(prog);
		str(": ");
		str(what);
	}
	flush();
}

void pl_warn(const char *what)
{
	pl_warn_for(program, what);
}

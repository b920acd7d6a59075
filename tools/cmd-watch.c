/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch: run a program and report (or refuse) every fixed
 * placement that would replace memory that is not the caller's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "noclobber_core.h"
#include "cli.h"
#include "report.h"
#include "watch/watch.h"

static void watch_usage(FILE *f)
{
	fprintf(f, "usage: noclobber watch [--deny | --upgrade] [--json] "
		   "[-O FILE] [--report-html FILE]\n"
		   "                       [--] PROG [ARGS...]\n"
		   "       noclobber watch [--deny | --upgrade] [--json] "
		   "[-O FILE] [--report-html FILE]\n"
		   "                       -p PID\n"
		   "       noclobber watch --preload [--deny | --upgrade] "
		   "[--emulate] [--json] [-O FILE]\n"
		   "                       [--] PROG [ARGS...]\n"
		   "       noclobber watch --system [--deny] [--json] "
		   "[-O FILE] [--report-html FILE]\n"
		   "                       [--cgroup DIR | --comm NAME | "
		   "--uid UID | -p PID]...\n\n"
		   "Runs PROG (or attaches to process PID and all its "
		   "threads), following every\nprocess and thread it makes, "
		   "and reports each\nMAP_FIXED mmap, MREMAP_FIXED mremap and "
		   "SHM_REMAP shmat that would replace\nmemory its caller does "
		   "not own: the heap, a stack, a program or library\nimage, "
		   "another module's region.  Placements over free space and "
		   "the benign\npatterns (reservations, the loader's own "
		   "span) are counted, not reported.\n\n"
		   "  --deny        a clobbering call fails with EEXIST; "
		   "nothing is replaced\n"
		   "  --upgrade     every fixed placement is made no-replace "
		   "but inside the\n                caller's own memory; what "
		   "then fails is reported\n"
		   "  --json        one JSON object per event (NDJSON)\n"
		   "  -O, --output-file FILE  reports to FILE, not stderr\n"
		   "  --report-html FILE  at the end, a page of every "
		   "reported placement with a\n                picture of "
		   "its range before the call (see noclobber(1))\n"
		   "  --preload     watch from inside PROG (a library it "
		   "loads first, LD_PRELOAD):\n                at the cost "
		   "of a function call, but blind to what the C\n"
		   "                library maps itself and to static "
		   "programs (said)\n"
		   "  --emulate     with --preload: MAP_FIXED_NOREPLACE kept "
		   "exactly for PROG,\n                whatever the kernel "
		   "or an emulator does with the flag\n"
		   "  -p, --pid PID       watch a running process; Ctrl-C "
		   "detaches and leaves\n                it running.  Without "
		   "a filter (none can be put in a\n                running "
		   "process) it stops at every system call, as strace\n"
		   "                does\n"
		   "  --system      every process on the machine, from the "
		   "kernel (eBPF), until\n                interrupted; "
		   "with --deny, clobbers are refused in the\n"
		   "                kernel where it allows that.  Needs root "
		   "(or CAP_BPF and\n                CAP_PERFMON) and a kernel "
		   "with BTF, Linux 6.1 or later.\n                With "
		   "--cgroup, --comm, --uid and -p (each may be\n"
		   "                repeated): only the processes in one of "
		   "them\n"
		   "  --buffer SIZE with --system: the ring buffer's size, a "
		   "power of two from\n                64K (default 4M); "
		   "events that find it full are counted\n"
		   "                as lost\n\n"
		   "Exit status: PROG's; 125 the watcher failed, 126 PROG "
		   "cannot run, 127 PROG\nnot found.  With -p: 0, or the "
		   "process's status if it ended while watched.\nWith "
		   "--system: 0 once interrupted.  See noclobber(1), and "
		   "noclobber(7) for\nthe rules.\n");
}

struct out {
	FILE *f;
	int json;
	int unmade;		/* documents that could not be made */
	struct rep_book *book;	/* --report-html's records, or NULL */
	unsigned long unkept;	/* records there was no memory for */
};

/* A JSON document begun: 0, or -1 counted (no memory for it). */
static int doc_begin(struct out *o, struct jw *w)
{
	if (!jw_begin(w))
		return 0;
	o->unmade++;
	return -1;
}

/* A document printed whole; one that could not be made is counted. */
static void doc_end(struct out *o, struct jw *w)
{
	/* A write error stays in o->f's error flag, for close_out. */
	if (jw_end(w, o->f) && !ferror(o->f))
		o->unmade++;
}

static const char *call_flags(const struct watch_event *e, char *buf,
			      size_t len)
{
	uint64_t f = e->args[wcall_family(e->call) == WC_SHMAT ? 2 : 3];

	snprintf(buf, len, "%#" PRIx64, f);
	return buf;
}

static void human_site(FILE *f, const struct watch_site *s)
{
	print_path(f, s->module[0] ? s->module : "(anonymous code)");
	fprintf(f, "+%#" PRIx64, s->offset);
	if (s->symbol[0])
		fprintf(f, " (%s+%#" PRIx64 ")", s->symbol, s->sym_off);
}

static void human_victim(FILE *f, const struct watch_event *e, size_t i)
{
	const struct ncb__wvictim *v = &e->victims[i];
	char perms[5];

	perm_string(&v->m, perms);
	fprintf(f, "  %s [%#" PRIx64 ", %#" PRIx64 ") %s %08" PRIx64 " ",
		i == e->culprit ? "replaces" : "and     ", v->m.start, v->m.end,
		perms, v->m.offset);
	print_path(f, v->m.path[0] ? v->m.path : "(anonymous)");
	if (v->kind == NCB__W_THREAD_STACK)
		fprintf(f, ": stack of thread %d", (int)v->tid);
	else
		fprintf(f, ": %s", ncb__wkind_name(v->kind));
	fprintf(f, ", made by %s\n", e->creators ? e->creators[i] : "?");
}

static void human_event(FILE *f, const struct watch_event *e)
{
	char flags[32];
	size_t i;

	fprintf(f, "noclobber watch: %s: ", e->unjudged ? "unjudged" :
		ncb__wclass_name(e->cls));
	print_path(f, e->program);
	fprintf(f, "[%d", (int)e->pid);
	if (e->tid != e->pid)
		fprintf(f, "/%d", (int)e->tid);
	fprintf(f, "] %s(", e->name);
	if (wcall_family(e->call) == WC_SHMAT)
		fprintf(f, "%" PRId64 ", %#" PRIx64 ", %s)", e->args[0],
			e->args[1], call_flags(e, flags, sizeof(flags)));
	else if (e->call == WC_MREMAP)
		fprintf(f, "%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64
			", %s, %#" PRIx64 ")", e->args[0], e->args[1],
			e->args[2], call_flags(e, flags, sizeof(flags)),
			e->args[4]);
	else
		fprintf(f, "%#" PRIx64 ", %#" PRIx64 ", %" PRIu64 ", %s, %d, %#"
			PRIx64 ")", e->args[0], e->args[1], e->args[2],
			call_flags(e, flags, sizeof(flags)), (int)e->args[4],
			e->args[5]);
	fprintf(f, " on [%#" PRIx64 ", %#" PRIx64 ")\n", e->start, e->end);
	for (i = 0; i < e->nvictims; i++)
		if (e->victims[i].kind != NCB__W_RESERVED &&
		    e->victims[i].kind != NCB__W_PAST_EOF)
			human_victim(f, e, i);
	if (e->unjudged && e->cls == NCB__WC_UNKNOWN)
		fputs("  who made what it would replace was not seen\n", f);
	else if (e->unjudged)
		fputs("  what it would replace could not be read\n", f);
	fputs("  called from ", f);
	human_site(f, &e->caller);
	fprintf(f, "; %s", waction_name(e->action));
	if (e->have_result && e->result < 0)
		fprintf(f, ": failed with %s", strerror((int)-e->result));
	if (e->gone)
		fputs(" (the process had exited when this was read)", f);
	fputc('\n', f);
}

/* Where code is: a caller's, a maker's members. */
static void json_site(struct jw *w, const struct watch_site *s)
{
	jw_str(w, "module", s->module);
	jw_hex(w, "offset", s->offset);
	jw_str(w, "symbol", s->symbol);
	jw_hex(w, "symbol_offset", s->sym_off);
}

static void json_made(struct jw *w, const struct watch_made *m)
{
	jw_open(w, "maker", '{');
	jw_str(w, "call", m->call);
	json_site(w, &m->site);
	jw_seconds(w, "time", m->when);
	jw_close(w, '}');
}

static void json_victim(struct jw *w, const struct watch_event *e,
			size_t i)
{
	const struct ncb__wvictim *v = &e->victims[i];
	char perms[5];

	perm_string(&v->m, perms);
	jw_open(w, NULL, '{');
	jw_hex(w, "start", v->m.start);
	jw_hex(w, "end", v->m.end);
	jw_str(w, "perms", perms);
	jw_hex(w, "offset", v->m.offset);
	jw_path(w, v->m.path);
	jw_str(w, "kind", ncb__wkind_name(v->kind));
	if (v->kind == NCB__W_THREAD_STACK)
		jw_int(w, "thread", (int)v->tid);
	jw_str(w, "creator", e->creators && e->creators[i] ?
	       e->creators[i] : "");
	if (e->made && e->made[i])
		json_made(w, e->made[i]);
	jw_close(w, '}');
}

static void json_event(struct out *o, const struct watch_event *e)
{
	struct jw w;
	size_t i;

	if (doc_begin(o, &w))
		return;
	if (e->escape) {
		jw_str(&w, "event", "escape");
		jw_str(&w, "what", wescape_name(e->escape));
	} else {
		jw_str(&w, "event", e->unjudged ? "unjudged" :
		       NCB__WC_CLOBBER(e->cls) ? "clobber" : "refused");
		jw_str(&w, "class", ncb__wclass_name(e->cls));
	}
	jw_int(&w, "pid", (int)e->pid);
	jw_int(&w, "tid", (int)e->tid);
	jw_str(&w, "program", e->program);
	jw_seconds(&w, "time", e->when);
	jw_str(&w, "call", e->name);
	jw_open(&w, "args", '[');
	for (i = 0; i < 6; i++)
		jw_hex(&w, NULL, e->args[i]);
	jw_close(&w, ']');
	if (!e->escape) {
		jw_hex(&w, "start", e->start);
		jw_hex(&w, "end", e->end);
		jw_open(&w, "victims", '[');
		for (i = 0; i < e->nvictims; i++)
			json_victim(&w, e, i);
		jw_close(&w, ']');
	}
	jw_open(&w, "caller", '{');
	json_site(&w, &e->caller);
	jw_close(&w, '}');
	jw_str(&w, "action", waction_name(e->action));
	if (e->have_result)
		jw_error(&w, "error", e->result < 0 ? (int)-e->result : 0,
			 NULL);
	if (e->gone)
		jw_bool(&w, "exited", 1);
	doc_end(o, &w);
}

/* A way around the watcher: what, by whom, and what was done. */
static void human_escape(FILE *f, const struct watch_event *e)
{
	fputs("noclobber watch: escape: ", f);
	print_path(f, e->program);
	fprintf(f, "[%d", (int)e->pid);
	if (e->tid != e->pid)
		fprintf(f, "/%d", (int)e->tid);
	fprintf(f, "] %s(%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 "): %s\n",
		e->name, e->args[0], e->args[1], e->args[2],
		e->escape == WE_LISTENER ?
		"a seccomp user notification listener would let the calls "
		"it takes run unwatched" :
		"a process it traces (a CLONE_UNTRACED child) would make "
		"calls unwatched");
	fputs("  called from ", f);
	human_site(f, &e->caller);
	fprintf(f, "; %s", waction_name(e->action));
	if (e->have_result && e->result < 0)
		fprintf(f, ": failed with %s", strerror((int)-e->result));
	fputc('\n', f);
}

/* What the watcher did, in words, as the page shows it. */
static void action_text(const struct watch_event *e, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", waction_name(e->action));

	if (e->have_result && e->result < 0 && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ": failed with %s",
			 strerror((int)-e->result));
}

/* A reported placement kept for the page (the event dies with us). */
static void keep(struct out *o, const struct watch_event *e)
{
	struct rep_victim *v = calloc(e->nvictims + 1, sizeof(*v));
	struct rep_clobber c = {
		.call = e->name, .start = e->start, .end = e->end,
		.pid = e->pid, .tid = e->tid, .caller = e->caller.addr,
		.caller_off = e->caller.offset,
		.module = e->caller.module[0] ? e->caller.module : NULL,
		.symbol = e->caller.symbol[0] ? e->caller.symbol : NULL,
		.unjudged = e->unjudged, .maps = e->maps,
		.maps_len = e->maps_len, .maps_after = e->maps_after,
	};
	char action[128];
	size_t i;

	action_text(e, action, sizeof(action));
	c.action = action;
	for (i = 0; v && i < e->nvictims; i++) {
		const struct ncb__wvictim *w = &e->victims[i];

		/* As the text says them: what is no victim is not shown. */
		if (w->kind == NCB__W_RESERVED || w->kind == NCB__W_PAST_EOF)
			continue;
		v[c.nvictims++] = (struct rep_victim){
			.start = w->m.start > e->start ? w->m.start : e->start,
			.end = w->m.end < e->end ? w->m.end : e->end,
			.prot = w->m.prot, .shared = w->m.shared,
			.path = w->m.path, .kind = ncb__wkind_name(w->kind),
			.maker = e->creators ? e->creators[i] : NULL,
		};
	}
	c.victims = v;
	if (!v || rep_add(o->book, &c))
		o->unkept++;
	free(v);
}

static void report(const struct watch_event *e, void *arg)
{
	struct out *o = arg;

	if (o->book && !e->escape)
		keep(o, e);
	if (o->json)
		json_event(o, e);
	else if (e->escape)
		human_escape(o->f, e);
	else
		human_event(o->f, e);
	fflush(o->f);
}

static void json_summary(struct out *o, const struct watch_summary *s,
			 unsigned long clobbers)
{
	struct jw w;
	int c;

	if (doc_begin(o, &w))
		return;
	jw_str(&w, "event", "summary");
	jw_int(&w, "pid", (int)s->pid);
	jw_str(&w, "program", s->program);
	jw_uint(&w, "fixed", s->fixed);
	jw_uint(&w, "free", s->by_class[NCB__WC_NOTHING]);
	jw_open(&w, "benign", '{');
	for (c = NCB__WC_RESERVATION; NCB__WC_BENIGN(c); c++)
		jw_uint(&w, ncb__wclass_name(c), s->by_class[c]);
	jw_close(&w, '}');
	jw_uint(&w, "clobbers", clobbers);
	jw_uint(&w, "invalid", s->invalid);
	jw_uint(&w, "unjudged", s->unjudged);
	jw_uint(&w, "escapes", s->escapes);
	jw_uint(&w, "lost", s->lost);
	doc_end(o, &w);
}

static void summary(const struct watch_summary *s, void *arg)
{
	struct out *o = arg;
	unsigned long benign = 0, clobbers = 0;
	int c, first = 1;

	for (c = NCB__WC_RESERVATION; c <= NCB__WC_SPANS; c++)
		if (NCB__WC_CLOBBER(c))
			clobbers += s->by_class[c];
		else if (NCB__WC_BENIGN(c))
			benign += s->by_class[c];
	if (o->json) {
		json_summary(o, s, clobbers);
	} else if (s->fixed) {
		fputs("noclobber watch: ", o->f);
		print_path(o->f, s->program);
		fprintf(o->f, "[%d]: %lu fixed placements: %lu over free "
			"space, %lu benign", (int)s->pid, s->fixed,
			s->by_class[NCB__WC_NOTHING], benign);
		for (c = NCB__WC_RESERVATION; NCB__WC_BENIGN(c); c++)
			if (s->by_class[c]) {
				fprintf(o->f, "%s%s %lu", first ? " (" : ", ",
					ncb__wclass_name(c), s->by_class[c]);
				first = 0;
			}
		fprintf(o->f, "%s, %lu clobber%s", first ? "" : ")",
			clobbers, clobbers == 1 ? "" : "s");
		if (s->invalid)
			fprintf(o->f, ", %lu refused by the kernel itself",
				s->invalid);
		if (s->unjudged)
			fprintf(o->f, ", %lu not judged", s->unjudged);
		if (s->escapes)
			fprintf(o->f, ", %lu way%s around the watcher tried",
				s->escapes, s->escapes == 1 ? "" : "s");
		if (s->lost)
			fprintf(o->f, ", %lu lost (the ring buffer was full)",
				s->lost);
		fputc('\n', o->f);
	}
	fflush(o->f);
}

/* The calls --system --deny may refuse in the kernel. */
static const enum wcall calls[] = { WC_MMAP, WC_MREMAP, WC_SHMAT };

/* Those it refuses, in words ("" for none). */
static void refused_calls(unsigned int refused, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (refused & 1U << calls[i] && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? ", " : "",
					       wcall_name(calls[i], 0));
}

static void started(unsigned int refused, void *arg)
{
	struct out *o = arg;
	char list[64];
	struct jw w;
	size_t i;

	refused_calls(refused, list, sizeof(list));
	if (!o->json && refused) {
		fprintf(o->f, "noclobber watch: watching the system, refusing "
			"clobbers by %s%s; interrupt to stop\n", list,
			refused & 1U << WC_MREMAP ? "" : " (mremap's: "
			"reported only, this kernel lets no program refuse "
			"them)");
	} else if (!o->json) {
		fputs("noclobber watch: watching the system; interrupt to "
		      "stop\n", o->f);
	} else if (!doc_begin(o, &w)) {
		jw_str(&w, "event", "start");
		jw_str(&w, "mode", "system");
		jw_open(&w, "refused", '[');
		for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (refused & 1U << calls[i])
				jw_str(&w, NULL, wcall_name(calls[i], 0));
		jw_close(&w, ']');
		doc_end(o, &w);
	}
	fflush(o->f);
}

static void lost(unsigned long n, unsigned long total, void *arg)
{
	struct out *o = arg;
	struct jw w;

	if (!o->json) {
		fprintf(o->f, "noclobber watch: %lu events lost (%lu in "
			"all): the ring buffer was full\n", n, total);
	} else if (!doc_begin(o, &w)) {
		jw_str(&w, "event", "lost");
		jw_uint(&w, "count", n);
		jw_uint(&w, "total", total);
		doc_end(o, &w);
	}
	fflush(o->f);
}

/* The program's status as ours: its exit code, or its signal. */
static int pass_status(int status)
{
	struct rlimit none = { 0, 0 };
	sigset_t set;
	int sig;

	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	sig = WTERMSIG(status);
	/* The program dumped core already, if it was to. */
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	/*
	 * Sent by the system call: glibc's raise() refuses the signals it
	 * keeps for itself (32, 33), whose default action is ours here.
	 */
	syscall(SYS_tgkill, getpid(), gettid(), sig);
	return 128 + sig;
}

/* The reports written out: 0, or -1 said (a full disk, /dev/full). */
static int close_out(struct out *o, const char *file)
{
	int bad = ferror(o->f);

	if (file)
		bad |= fclose(o->f) != 0;
	else
		bad |= fflush(o->f) != 0;
	if (bad)
		fprintf(stderr, "noclobber watch: %s: the reports could not "
			"be written\n", file ? file : "standard error");
	if (o->unmade)
		fprintf(stderr, "noclobber watch: %d reports could not be "
			"made: out of memory\n", o->unmade);
	bad |= !!o->unmade;
	return bad ? -1 : 0;
}

/* --report-html's page: its file, open from the start, and its records. */
struct page {
	const char *file;
	FILE *f;
	int made;		/* the file is this run's: gone if unwritten */
	struct rep_book book;
	char title[1024];
};

/* The page's title: the command watched, or what was watched. */
static void page_title(struct page *pg, char *const argv[], pid_t pid,
		       int sys)
{
	char comm[64] = "";
	size_t n = 0;
	ssize_t got;

	if (sys) {
		snprintf(pg->title, sizeof(pg->title), "the system");
	} else if (pid) {
		got = proc_read(pid, "comm", comm, sizeof(comm) - 1);
		comm[got > 0 ? got : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(pg->title, sizeof(pg->title), "process %d%s%s%s",
			 (int)pid, *comm ? " (" : "", comm, *comm ? ")" : "");
	} else {
		for (; *argv && n < sizeof(pg->title); argv++)
			n += (size_t)snprintf(pg->title + n,
					      sizeof(pg->title) - n, "%s%s",
					      n ? " " : "", *argv);
	}
}

/*
 * The page's file opened before anything runs (a name that cannot be
 * written is said at once), and the watcher asked for the maps.
 */
static int page_open(struct page *pg, struct out *out, struct watch_opts *o,
		     char *const argv[], pid_t pid, int sys)
{
	/* Made here, or there before (even /dev/null): only ours unlinked. */
	int fd = open(pg->file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		      0666);

	pg->made = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(pg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0666);
	pg->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!pg->f) {
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "noclobber watch: %s: %s\n", pg->file,
			strerror(errno));
		return -1;
	}
	page_title(pg, argv, pid, sys);
	out->book = &pg->book;
	o->want_maps = 1;
	return 0;
}

/* The page written (write) and closed: 0, or -1 said. */
static int page_close(struct page *pg, struct out *out, int write)
{
	int err = 0;

	if (!pg->f)
		return 0;
	if (write)
		err = report_html(pg->f, pg->title, pg->book.c, pg->book.n,
				  pg->book.more);
	if (fclose(pg->f) && !err)
		err = -errno;
	if (!write && pg->made)
		unlink(pg->file);
	else if (err)
		fprintf(stderr, "noclobber watch: %s: the page could not be "
			"written: %s\n", pg->file, strerror(-err));
	if (out->unkept)
		fprintf(stderr, "noclobber watch: %s: %lu reported placements "
			"could not be kept for the page: out of memory\n",
			pg->file, out->unkept);
	rep_free(&pg->book);
	pg->f = NULL;
	return err || out->unkept ? -1 : 0;
}

#ifndef NCB_HAVE_SYSTEM
int watch_system(const struct watch_sys_opts *so, const struct watch_opts *o,
		 char *why, size_t whylen)
{
	(void)so;
	(void)o;
	snprintf(why, whylen, "--system: this noclobber was built without "
		 "eBPF (it needs clang, bpftool and libbpf-dev at build "
		 "time, for x86_64)");
	return -ENOSYS;
}
#endif

#define SCOPE_MAX 64

struct scope {
	pid_t pids[SCOPE_MAX];
	uid_t uids[SCOPE_MAX];
	const char *comms[SCOPE_MAX], *cgroups[SCOPE_MAX];
	struct watch_sys_opts so;
};

/* A user by number or name: 0, or -1. */
static int parse_uid(const char *s, uid_t *uid)
{
	struct passwd *pw;
	uint64_t v;

	if (!parse_u64(s, &v) && v < (uid_t)-1) {
		*uid = (uid_t)v;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	return 0;
}

/* One more scope entry of option c: 0, or -1 (bad, or too many). */
static int add_scope(struct scope *sc, int c, const char *arg)
{
	struct watch_sys_opts *so = &sc->so;

	switch (c) {
	case 'p':
		return so->npids < SCOPE_MAX &&
		       !parse_pid(arg, &sc->pids[so->npids]) &&
		       sc->pids[so->npids++] > 0 ? 0 : -1;
	case 'U':
		return so->nuids < SCOPE_MAX &&
		       !parse_uid(arg, &sc->uids[so->nuids++]) ? 0 : -1;
	case 'c':
		if (so->ncomms == SCOPE_MAX || !*arg)
			return -1;
		sc->comms[so->ncomms++] = arg;
		return 0;
	default:
		/* The programs' cgroup array has room for 16. */
		if (so->ncgroups == 16 || !*arg)
			return -1;
		sc->cgroups[so->ncgroups++] = arg;
		return 0;
	}
}

/*
 * The ring buffer's size: a power of two pages, as the kernel wants it,
 * from 64 KiB (about twenty records) to 1 GiB.  0, or -1.
 */
static int parse_buffer(const char *s, size_t *size)
{
	uint64_t v;

	if (parse_u64(s, &v) || v < 65536 || v < (uint64_t)getpagesize() ||
	    v > (1ULL << 30) || (v & (v - 1)))
		return -1;
	*size = (size_t)v;
	return 0;
}

/* What the options allow: 0, or the usage error's status. */
static int check_use(const struct scope *sc, int sys, int mode,
		     int nargs)
{
	const struct watch_sys_opts *so = &sc->so;

	if (sys && (nargs || mode == WATCH_UPGRADE))
		return 125;
	if (!sys && so->buffer)
		return 125;
	if (!sys && (so->nuids || so->ncomms || so->ncgroups ||
		     so->npids > 1 || !nargs == !so->npids))
		return 125;
	return 0;
}

/*
 * The watcher's own failure: said on standard error and, under --json,
 * as a failure document in the report stream.
 */
static void watch_fail(struct out *o, int err, const char *why)
{
	fprintf(stderr, "noclobber watch: %s\n", why);
	if (o->json)
		jw_fail(o->f, err, why);
}

static int run_system(struct scope *sc, struct watch_opts *o)
{
	char why[512] = "";
	int r;

	sc->so.pids = sc->pids;
	sc->so.uids = sc->uids;
	sc->so.comms = sc->comms;
	sc->so.cgroups = sc->cgroups;
	r = watch_system(&sc->so, o, why, sizeof(why));
	if (!r)
		return 0;
	watch_fail(o->arg, -r, why[0] ? why : strerror(-r));
	return 125;
}

/* What the preload watcher cannot see in the program, as a report. */
static void preload_warn(const char *prog, const char *what, void *arg)
{
	struct out *o = arg;
	struct jw w;

	if (!o->json) {
		fputs("noclobber watch: ", o->f);
		print_path(o->f, prog);
		fprintf(o->f, ": %s\n", what);
	} else if (!doc_begin(o, &w)) {
		jw_str(&w, "event", "warning");
		jw_str(&w, "program", prog);
		jw_str(&w, "message", what);
		doc_end(o, &w);
	}
	/* Written before the program runs and appends its own. */
	fflush(o->f);
}

#ifndef NCB_PRELOAD_LIB
#define NCB_PRELOAD_LIB "/usr/lib/libnoclobber-preload.so"
#endif

/*
 * --preload: the program run with the library (beside this program in a
 * build tree, else where it is installed); back only on failure.
 */
static int run_preload(char *const argv[], int mode, int emulate,
		       struct out *o, const char *file, int *failed,
		       char *why, size_t whylen)
{
	struct watch_preload_opts po = { .json = o->json, .file = file,
					 .warn = preload_warn, .arg = o };
	char words[32], lib[PATH_MAX], prog[PATH_MAX];
	int err;

	if (beside_self("libnoclobber-preload.so", lib, sizeof(lib)) ||
	    access(lib, R_OK))
		snprintf(lib, sizeof(lib), "%s", NCB_PRELOAD_LIB);
	if (access(lib, R_OK)) {
		snprintf(why, whylen, "--preload: %.400s is not installed",
			 lib);
		return -ENOENT;
	}
	err = find_program(argv[0], prog, sizeof(prog));
	if (err) {
		*failed = 1;
		snprintf(why, whylen, "%s: %s", argv[0], strerror(-err));
		return err;
	}
	snprintf(words, sizeof(words), "%s%s", mode == WATCH_DENY ? "deny" :
		 mode == WATCH_UPGRADE ? "upgrade" : "report",
		 emulate ? ",emulate" : "");
	po.lib = lib;
	po.prog = prog;
	po.mode = words;
	return watch_preload(argv, &po, failed, why, whylen);
}

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "deny", no_argument, NULL, 'd' },
		{ "upgrade", no_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "output-file", required_argument, NULL, 'O' },
		{ "pid", required_argument, NULL, 'p' },
		{ "system", no_argument, NULL, 'S' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "comm", required_argument, NULL, 'c' },
		{ "uid", required_argument, NULL, 'U' },
		{ "buffer", required_argument, NULL, 'B' },
		{ "report-html", required_argument, NULL, 'H' },
		{ "preload", no_argument, NULL, 'P' },
		{ "emulate", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct out out = { .f = stderr };
	struct watch_opts o = { .mode = WATCH_REPORT, .report = report,
				.summary = summary, .started = started,
				.lost = lost, .arg = &out };
	static struct scope sc;
	struct page page = { .file = NULL };
	const char *file = NULL;
	char why[512] = "";
	int c, r, failed = 0, sys = 0, preload = 0, emulate = 0;
	pid_t pid;

	/* '+': the program's own options are its own. */
	while ((c = getopt_long(argc, argv, "+O:p:h", opts, NULL)) != -1) {
		if (c == 'd' && o.mode == WATCH_REPORT) {
			o.mode = WATCH_DENY;
		} else if (c == 'u' && o.mode == WATCH_REPORT) {
			o.mode = WATCH_UPGRADE;
		} else if (c == 'j') {
			out.json = 1;
		} else if (c == 'O') {
			file = optarg;
		} else if (c == 'S') {
			sys = 1;
		} else if (c == 'H' && *optarg) {
			page.file = optarg;
		} else if (c == 'P') {
			preload = 1;
		} else if (c == 'E') {
			emulate = 1;
		} else if (c == 'B' && !parse_buffer(optarg, &sc.so.buffer)) {
			continue;
		} else if (strchr("pgcU", c) && c &&
			   !add_scope(&sc, c, optarg)) {
			continue;
		} else if (c == 'h') {
			watch_usage(stdout);
			return 0;
		} else {
			watch_usage(stderr);
			return 125;
		}
	}
	if (check_use(&sc, sys, o.mode, argc - optind) ||
	    (emulate && !preload) ||
	    (preload && (sys || sc.so.npids || page.file))) {
		watch_usage(stderr);
		return 125;
	}
	pid = sc.so.npids && !sys ? sc.pids[0] : 0;
	/* The preload's upgrade is the core's: exact on any kernel. */
	if (o.mode == WATCH_UPGRADE && !preload &&
	    ncb_core_probe() != NCB_NOREPLACE_HONOURED) {
		fprintf(stderr, "noclobber watch: --upgrade: this kernel does "
			"not honour MAP_FIXED_NOREPLACE (see noclobber "
			"probe)\n");
		return 125;
	}
	if (page.file && page_open(&page, &out, &o, argv + optind, pid, sys))
		return 125;
	if (file) {
		out.f = fopen(file, "we");
		if (!out.f) {
			fprintf(stderr, "noclobber watch: %s: %s\n", file,
				strerror(errno));
			page_close(&page, &out, 0);
			return 125;
		}
	}
	if (sys) {
		r = run_system(&sc, &o);
		r = page_close(&page, &out, 1) ? 125 : r;
		return close_out(&out, file) ? 125 : r;
	}
	if (preload)
		r = run_preload(argv + optind, o.mode, emulate, &out, file,
				&failed, why, sizeof(why));
	else if (pid)
		r = watch_attach(pid, &o, why, sizeof(why));
	else
		r = watch_run(argv + optind, &o, &failed, why, sizeof(why));
	if (r < 0)
		watch_fail(&out, -r, why[0] ? why : strerror(-r));
	/* The page not written: the watcher's failure, as a report's. */
	if (page_close(&page, &out, 1) && r >= 0)
		r = -EIO;
	if (close_out(&out, file) && r >= 0)
		return 125;
	if (r >= 0 && pid)
		return WIFSIGNALED(r) ? 128 + WTERMSIG(r) : WEXITSTATUS(r);
	if (r >= 0)
		return pass_status(r);
	/* As env(1): not found, found but not run, the watcher's own. */
	if (failed)
		return r == -ENOENT ? 127 : 126;
	return 125;
}

/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch: run a program and report (or refuse) every fixed
 * placement that would replace memory that is not the caller's.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "watcher.h"

static void watch_usage(FILE *f)
{
	fprintf(f, "usage: noclobber watch [--deny | --upgrade] [--json] "
		   "[-o FILE] [--] PROG [ARGS...]\n"
		   "       noclobber watch [--deny | --upgrade] [--json] "
		   "[-o FILE] -p PID\n\n"
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
		   "  -o, --output FILE   reports to FILE, not stderr\n"
		   "  -p, --pid PID       watch a running process; Ctrl-C "
		   "detaches and leaves\n                it running.  Without "
		   "a filter (none can be put in a\n                running "
		   "process) it stops at every system call, as strace\n"
		   "                does\n\n"
		   "Exit status: PROG's; 125 the watcher failed, 126 PROG "
		   "cannot run, 127 PROG\nnot found.  With -p: 0, or the "
		   "process's status if it ended while watched.\nSee "
		   "noclobber(1), and noclobber(7) for the rules.\n");
}

struct out {
	FILE *f;
	int json;
};

static const char *call_flags(const struct watch_event *e, char *buf,
			      size_t len)
{
	uint64_t f = e->args[e->call == CALL_SHMAT ? 2 : 3];

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
	if (e->call == CALL_SHMAT)
		fprintf(f, "%" PRId64 ", %#" PRIx64 ", %s)", e->args[0],
			e->args[1], call_flags(e, flags, sizeof(flags)));
	else if (e->call == CALL_MREMAP)
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
	if (e->unjudged)
		fputs("  what it would replace could not be read\n", f);
	fputs("  called from ", f);
	human_site(f, &e->caller);
	fprintf(f, "; %s", e->action);
	if (e->have_result && e->result < 0)
		fprintf(f, ": failed with %s", strerror((int)-e->result));
	fputc('\n', f);
}

static void json_victim(FILE *f, const struct watch_event *e, size_t i)
{
	const struct ncb__wvictim *v = &e->victims[i];
	char perms[5];

	perm_string(&v->m, perms);
	fprintf(f, "{\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
		"\",\"perms\":\"%s\",\"offset\":\"0x%" PRIx64 "\",",
		v->m.start, v->m.end, perms, v->m.offset);
	json_path(f, v->m.path);
	fprintf(f, ",\"kind\":\"%s\"", ncb__wkind_name(v->kind));
	if (v->kind == NCB__W_THREAD_STACK)
		fprintf(f, ",\"thread\":%d", (int)v->tid);
	fputs(",\"creator\":", f);
	json_string(f, e->creators && e->creators[i] ? e->creators[i] : "");
	fputc('}', f);
}

static void json_event(FILE *f, const struct watch_event *e)
{
	size_t i;

	fprintf(f, "{\"version\":1,\"event\":\"%s\",\"class\":\"%s\","
		"\"pid\":%d,\"tid\":%d,\"program\":",
		e->unjudged ? "unjudged" : NCB__WC_CLOBBER(e->cls) ?
		"clobber" : "refused", ncb__wclass_name(e->cls), (int)e->pid,
		(int)e->tid);
	json_string(f, e->program);
	fprintf(f, ",\"time\":%.6f,\"call\":\"%s\",\"args\":[", e->when,
		e->name);
	for (i = 0; i < 6; i++)
		fprintf(f, "%s\"0x%" PRIx64 "\"", i ? "," : "", e->args[i]);
	fprintf(f, "],\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64
		"\",\"victims\":[", e->start, e->end);
	for (i = 0; i < e->nvictims; i++) {
		if (i)
			fputc(',', f);
		json_victim(f, e, i);
	}
	fputs("],\"caller\":{\"module\":", f);
	json_string(f, e->caller.module);
	fprintf(f, ",\"offset\":\"0x%" PRIx64 "\",\"symbol\":",
		e->caller.offset);
	json_string(f, e->caller.symbol);
	fprintf(f, ",\"symbol_offset\":\"0x%" PRIx64 "\"},\"action\":\"%s\"",
		e->caller.sym_off, e->action);
	if (e->have_result && e->result < 0)
		fprintf(f, ",\"error\":\"%s\"",
			strerrorname_np((int)-e->result));
	else if (e->have_result)
		fputs(",\"error\":null", f);
	fputs("}\n", f);
}

static void report(const struct watch_event *e, void *arg)
{
	struct out *o = arg;

	if (o->json)
		json_event(o->f, e);
	else
		human_event(o->f, e);
	fflush(o->f);
}

static void summary(const struct watch_summary *s, void *arg)
{
	struct out *o = arg;
	unsigned long benign = 0, clobbers = 0;
	int c, first = 1;

	for (c = NCB__WC_RESERVATION; c <= NCB__WC_SPANS; c++)
		if (NCB__WC_CLOBBER(c))
			clobbers += s->by_class[c];
		else
			benign += s->by_class[c];
	if (o->json) {
		fprintf(o->f, "{\"version\":1,\"event\":\"summary\",\"pid\":%d,"
			"\"program\":", (int)s->pid);
		json_string(o->f, s->program);
		fprintf(o->f, ",\"fixed\":%lu,\"free\":%lu,\"benign\":{",
			s->fixed, s->by_class[NCB__WC_NOTHING]);
		for (c = NCB__WC_RESERVATION; c < NCB__WC_KERNEL; c++)
			fprintf(o->f, "%s\"%s\":%lu", c > 1 ? "," : "",
				ncb__wclass_name(c), s->by_class[c]);
		fprintf(o->f, "},\"clobbers\":%lu,\"invalid\":%lu,"
			"\"unjudged\":%lu}\n", clobbers, s->invalid,
			s->unjudged);
	} else if (s->fixed) {
		fputs("noclobber watch: ", o->f);
		print_path(o->f, s->program);
		fprintf(o->f, "[%d]: %lu fixed placements: %lu over free "
			"space, %lu benign", (int)s->pid, s->fixed,
			s->by_class[NCB__WC_NOTHING], benign);
		for (c = NCB__WC_RESERVATION; c < NCB__WC_KERNEL; c++)
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
		fputc('\n', o->f);
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

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "deny", no_argument, NULL, 'd' },
		{ "upgrade", no_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct out out = { stderr, 0 };
	struct watch_opts o = { WATCH_REPORT, report, summary, &out };
	const char *file = NULL;
	char why[512] = "";
	int c, r, failed = 0;
	pid_t pid = 0;

	/* '+': the program's own options are its own. */
	while ((c = getopt_long(argc, argv, "+o:p:h", opts, NULL)) != -1) {
		if (c == 'd' && o.mode == WATCH_REPORT) {
			o.mode = WATCH_DENY;
		} else if (c == 'u' && o.mode == WATCH_REPORT) {
			o.mode = WATCH_UPGRADE;
		} else if (c == 'j') {
			out.json = 1;
		} else if (c == 'o') {
			file = optarg;
		} else if (c == 'p' && !parse_pid(optarg, &pid) && pid > 0) {
			continue;
		} else if (c == 'h') {
			watch_usage(stdout);
			return 0;
		} else {
			watch_usage(stderr);
			return 125;
		}
	}
	if ((optind == argc) == !pid) {
		watch_usage(stderr);
		return 125;
	}
	if (o.mode == WATCH_UPGRADE &&
	    ncb_core_probe() != NCB_NOREPLACE_HONOURED) {
		fprintf(stderr, "noclobber watch: --upgrade: this kernel does "
			"not honour MAP_FIXED_NOREPLACE (see noclobber "
			"probe)\n");
		return 125;
	}
	if (file) {
		out.f = fopen(file, "we");
		if (!out.f) {
			fprintf(stderr, "noclobber watch: %s: %s\n", file,
				strerror(errno));
			return 125;
		}
	}
	if (pid)
		r = watch_attach(pid, &o, why, sizeof(why));
	else
		r = watch_run(argv + optind, &o, &failed, why, sizeof(why));
	if (file)
		fclose(out.f);
	if (r >= 0 && pid)
		return WIFSIGNALED(r) ? 128 + WTERMSIG(r) : WEXITSTATUS(r);
	if (r >= 0)
		return pass_status(r);
	fprintf(stderr, "noclobber watch: %s\n", why[0] ? why :
		strerror(-r));
	/* As env(1): not found, found but not run, the watcher's own. */
	if (failed)
		return r == -ENOENT ? 127 : 126;
	return 125;
}

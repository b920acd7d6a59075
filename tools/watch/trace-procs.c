/* SPDX-License-Identifier: MIT */
/*
 * The ptrace watcher's tables: the processes and threads of the watched
 * tree as it forks, clones, execs and exits, with what the rules need of
 * each (its program, interpreter, threads' stacks and regions), and each
 * process's maps kept open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "cli.h"
#include "trace.h"

/*
 * A task goes on: to its next seccomp stop, or attached, to its next
 * system call's entry or exit.
 */
void trace_resume(const struct tracer *t, pid_t tid, int sig)
{
	ptrace(t->attached ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, sig);
}

/* An event no longer wanted: its victims' paths and creators too. */
void trace_free_event(struct watch_event *e)
{
	size_t i;

	for (i = 0; i < e->nvictims; i++) {
		free((void *)e->victims[i].m.path);
		if (e->creators)
			free(e->creators[i]);
		if (e->made)
			free(e->made[i]);
	}
	free(e->victims);
	free(e->creators);
	free(e->made);
	free(e->maps);
	free(e);
}

void trace_forget_maps(struct proc *p)
{
	if (p->maps)
		ncb_maps_close(p->maps);
	p->maps = NULL;
}

/*
 * Whether a reader's each look is a fresh one: PROCMAP_QUERY (6.11) asks
 * the kernel at each; elsewhere the reader holds the text it read when
 * it was opened.
 */
static int looks_fresh(void)
{
	static int fresh = -1;
	struct ncb_probe pr = { .size = sizeof(pr) };

	if (fresh < 0)
		fresh = !ncb_kernel_probe(&pr) && pr.procmap_query;
	return fresh;
}

/*
 * The process's maps, opened through the calling thread (the leader may
 * have exited: a zombie has no address space to show), for the call at
 * hand.  Where each look is a fresh one, kept for the next calls; the
 * file stays bound to the address space it was opened on, so execve
 * closes it.  At most MAPS_KEPT are kept, the least recently used closed
 * first, so that a thousand live processes do not take a thousand
 * descriptors.  Elsewhere read again for each call.
 */
#define MAPS_KEPT 64

struct ncb_maps *trace_proc_maps(struct tracer *t, struct proc *p,
				  pid_t tid)
{
	static unsigned long clock;
	struct proc *old = NULL;
	size_t i, kept = 0;

	p->used = ++clock;
	if (p->maps && !looks_fresh())
		trace_forget_maps(p);
	if (p->maps)
		return p->maps;
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->maps) {
			kept++;
			if (!old || t->procs[i]->used < old->used)
				old = t->procs[i];
		}
	if (kept >= MAPS_KEPT)
		trace_forget_maps(old);
	if (ncb_maps_open(&p->maps, tid))
		p->maps = NULL;
	return p->maps;
}

/* Room in *p (*cap elements) for one more after n: 0, or -ENOMEM. */
int trace_room(void *p, size_t *cap, size_t n, size_t size)
{
	void **pp = p, *q;
	size_t c = *cap ? 2 * *cap : 4;

	if (n < *cap)
		return 0;
	q = realloc(*pp, c * size);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = c;
	return 0;
}

struct task *trace_find_task(struct tracer *t, pid_t tid, size_t *at)
{
	size_t i;

	for (i = 0; i < t->ntasks; i++)
		if (t->tasks[i]->tid == tid) {
			if (at)
				*at = i;
			return t->tasks[i];
		}
	return NULL;
}

struct proc *trace_find_proc(struct tracer *t, pid_t tgid)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->tgid == tgid)
			return t->procs[i];
	return NULL;
}

/*
 * Where the process's break started (its start_brk: /proc/PID/stat's
 * 47th field, proc(5)); 0 if not known.
 */
uint64_t trace_start_brk(pid_t tid)
{
	char buf[1024], *s;
	unsigned long long v = 0;
	ssize_t n = proc_read(tid, "stat", buf, sizeof(buf) - 1);
	int i;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* After the command's name, which may hold anything but its end. */
	s = strrchr(buf, ')');
	for (i = 2; s && i < 47; i++)
		s = strchr(s + 1, ' ');
	if (!s || sscanf(s + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

/* Whether a task has exited (a leader waits so for its threads). */
int trace_zombie(pid_t tid)
{
	char buf[512], c;

	trace_read_status(tid, buf, sizeof(buf));
	c = *trace_status_value(buf, "State:");
	return c == 'Z' || c == 'X';
}

/* /proc/PID/status, NUL-terminated in buf ("" if unreadable). */
void trace_read_status(pid_t pid, char *buf, size_t len)
{
	ssize_t n = proc_read(pid, "status", buf, len - 1);

	buf[n > 0 ? n : 0] = 0;
}

/* The value after key ("Tgid:", "State:") in a status text, or "". */
const char *trace_status_value(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? p + strlen(key) + strspn(p + strlen(key), " \t") : "";
}

pid_t trace_status_field(pid_t pid, const char *key)
{
	char buf[4096];

	trace_read_status(pid, buf, sizeof(buf));
	return (pid_t)atoi(trace_status_value(buf, key));
}

struct ncb__wmod trace_file_mod(const char *path)
{
	struct ncb__wmod m = { 0, 0 };
	struct stat st;

	if (!stat(path, &st)) {
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	return m;
}

/*
 * The interpreter: the mapping at AT_BASE, from the process's auxiliary
 * vector, whose words are the program's (a 32-bit program's are 32-bit:
 * the class of its ELF header says).  None (a static program, or ld.so run
 * as the program): the program, its own loader.
 */
static struct ncb__wmod interp_mod(pid_t pid, struct ncb__wmod exe)
{
	struct ncb_mapping map = NCB_INIT(ncb_mapping);
	unsigned char ident[5] = { 0 }, v[16 * 64];
	uint64_t base = 0, key, val;
	struct ncb__wmod m = exe;
	struct ncb_maps *maps;
	size_t i, word;
	ssize_t len;

	proc_read(pid, "exe", ident, sizeof(ident));
	word = ident[4] == 1 ? 4 : 8;
	len = proc_read(pid, "auxv", v, sizeof(v));
	for (i = 0; len > 0 && i + 2 * word <= (size_t)len; i += 2 * word) {
		key = val = 0;
		/* Little-endian words, as on the machines watched. */
		memcpy(&key, v + i, word);
		memcpy(&val, v + i + word, word);
		if (key == 7 /* AT_BASE */)
			base = val;
	}
	if (!base || ncb_maps_open(&maps, pid))
		return m;
	if (ncb_maps_find(maps, base, &map) == 1 && map.inode) {
		m.dev = makedev(map.dev_major, map.dev_minor);
		m.ino = map.inode;
	}
	ncb_maps_close(maps);
	return m;
}

/* What a process is after execve (or when first seen). */
void trace_identify(struct proc *p)
{
	char path[64], exe[4096];
	ssize_t n;
	const char *b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->tgid);
	p->w.exe = trace_file_mod(path);
	p->w.interp = interp_mod(p->tgid, p->w.exe);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	b = strrchr(exe, '/');
	b = b ? b + 1 : exe;
	/* A long name is cut, as the kernel's comm is. */
	memset(p->program, 0, sizeof(p->program));
	memcpy(p->program, b, strnlen(b, sizeof(p->program) - 1));
	p->sum.program = p->program;
}

/* An address space of no record yet, or a copy of from's records. */
static struct space *space_new(const struct space *from)
{
	struct space *s = calloc(1, sizeof(*s));
	size_t n = from ? from->regions.n : 0;

	if (!s)
		return NULL;
	s->regions.max = TRACE_REGIONS;
	s->users = 1;
	if (!n)
		return s;
	s->regions.r = malloc(n * sizeof(*s->regions.r));
	if (!s->regions.r) {
		free(s);
		return NULL;
	}
	memcpy(s->regions.r, from->regions.r, n * sizeof(*s->regions.r));
	s->regions.n = s->regions.cap = n;
	return s;
}

static void space_leave(struct space *s)
{
	if (s && !--s->users) {
		ncb__wregions_free(&s->regions);
		free(s);
	}
}

/* A new address space for p, of no record (execve): 0, or -ENOMEM. */
int trace_new_space(struct proc *p)
{
	struct space *s = space_new(NULL);

	if (!s)
		return -ENOMEM;
	space_leave(p->space);
	p->space = s;
	return 0;
}

/*
 * A new process's memory as its maker's clone made it, once the maker's
 * event says which (its first stop may come first, its records then
 * copied from its parent's by PPid, another process under CLONE_PARENT):
 * the maker's own address space (share: CLONE_VM), or a copy of its
 * records.  What the child recorded since it was first seen goes over
 * them.  Left as it is where memory is short.
 */
void trace_adopt(struct proc *child, struct proc *parent, int share)
{
	const struct ncb__wregions *own = &child->space->regions;
	struct space *s;
	size_t i;

	if (child->from < 0 || (share ? child->space == parent->space :
	    child->from == parent->tgid && child->space->users == 1))
		return;
	s = share ? parent->space : space_new(parent->space);
	if (!s)
		return;
	if (share)
		s->users++;
	for (i = 0; i < own->n; i++)
		if (own->r[i].when >= child->born)
			ncb__wregions_add(&s->regions, &own->r[i]);
	space_leave(child->space);
	child->space = s;
	child->from = parent->tgid;
	child->brk = parent->brk;
}

/* A process in the table, not yet identified. */
struct proc *trace_add_proc(struct tracer *t, pid_t tgid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p || !(p->space = space_new(NULL)) ||
	    trace_room(&t->procs, &t->cprocs, t->nprocs, sizeof(p))) {
		if (p)
			space_leave(p->space);
		free(p);
		return NULL;
	}
	p->tgid = tgid;
	p->sum.pid = tgid;
	p->born = trace_since(t);
	t->procs[t->nprocs++] = p;
	return p;
}

/*
 * A process first seen: a child of fork has its parent's memory, and its
 * history (its maker known for sure at the maker's event: trace_adopt).
 */
static struct proc *new_proc(struct tracer *t, pid_t tgid,
			     struct proc *parent)
{
	struct proc *p = trace_add_proc(t, tgid);

	if (!p)
		return NULL;
	if (parent)
		trace_adopt(p, parent, 0);
	trace_identify(p);
	return p;
}

void trace_drop_thread(struct proc *p, pid_t tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid) {
			p->threads[i] = p->threads[--p->nthreads];
			return;
		}
}

/* A thread's stack pointer, and its stack's top if known (else 0). */
void trace_add_thread(struct proc *p, pid_t tid, uint64_t sp, uint64_t top)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid) {
			p->threads[i].sp = sp;
			p->threads[i].top = top ? top : p->threads[i].top;
			return;
		}
	if (trace_room(&p->threads, &p->cthreads, p->nthreads,
		       sizeof(*p->threads)))
		return;
	p->threads[p->nthreads].tid = tid;
	p->threads[p->nthreads].sp = sp;
	p->threads[p->nthreads++].top = top;
}

struct task *trace_add_task(struct tracer *t, pid_t tid, struct proc *p)
{
	struct task *k = calloc(1, sizeof(*k));

	if (!k || trace_room(&t->tasks, &t->ctasks, t->ntasks, sizeof(k))) {
		free(k);
		return NULL;
	}
	k->tid = tid;
	k->proc = p;
	p->tasks++;
	t->tasks[t->ntasks++] = k;
	return k;
}

/* A task seen for the first time: its process found or made. */
struct task *trace_new_task(struct tracer *t, pid_t tid)
{
	char status[4096];
	pid_t tgid;
	struct proc *p;

	/* One read: its thread group, and its parent for a new process. */
	trace_read_status(tid, status, sizeof(status));
	tgid = (pid_t)atoi(trace_status_value(status, "Tgid:"));
	tgid = tgid ? tgid : tid;
	p = trace_find_proc(t, tgid);
	if (!p)
		p = new_proc(t, tgid, trace_find_proc(t, atoi(
			trace_status_value(status, "PPid:"))));
	return p ? trace_add_task(t, tid, p) : NULL;
}

static void end_proc(struct tracer *t, struct proc *p)
{
	size_t i;

	if (t->o->summary && !p->before_exec)
		t->o->summary(&p->sum, t->o->arg);
	watch_caller_forget(p->tgid);
	trace_forget_maps(p);
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i] == p)
			t->procs[i] = t->procs[--t->nprocs];
	free(p->threads);
	space_leave(p->space);
	free(p);
}

void trace_end_task(struct tracer *t, pid_t tid)
{
	size_t at;
	struct task *k = trace_find_task(t, tid, &at);
	struct proc *p;

	if (!k)
		return;
	p = k->proc;
	if (k->awaits && k->started)
		t->awaiting--;
	trace_hold_gone(t, k);
	t->tasks[at] = t->tasks[--t->ntasks];
	trace_drop_thread(p, tid);
	if (k->pending)
		trace_free_event(k->pending);
	free(k);
	if (!--p->tasks)
		end_proc(t, p);
}

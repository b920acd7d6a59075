/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch's mechanics: a seccomp filter that stops a process tree
 * only at fixed placements (everything else runs at full speed), and the
 * ptrace loop that looks at each, judges it with the library's rules and
 * lets it run, refuses it or makes it no-replace.  Processes and threads
 * are followed through fork, vfork, clone and execve; signals, stops and
 * the exit status pass through as without the watcher.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "watcher.h"

#if !defined(__x86_64__)
#error "noclobber watch reads x86_64 registers; other hosts are not done yet"
#endif

/* PTRACE_GET_SYSCALL_INFO's answer (Linux 5.3), as the kernel lays it out. */
struct syscall_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	union {
		struct {
			uint64_t nr, args[6];
			uint32_t ret_data;
		} seccomp;
		struct {
			int64_t rval;
			uint8_t is_error;
		} exit;
	};
};

#define INFO_ENTRY 1
#define INFO_EXIT 2
#define INFO_SECCOMP 3

/*
 * The calls the filter stops at.  A stop says what it is for by its
 * architecture and number, not by the rule's tag: libseccomp makes i386's
 * ipc(2) rules for a shmat rule, with shmat's tag and other arguments.
 */
enum { TAG_MMAP = 1, TAG_OLD_MMAP, TAG_MREMAP, TAG_SHMAT, TAG_IPC };

static int call_of(const struct syscall_info *si)
{
	/* Each ABI's numbers (syscall_64.tbl, syscall_32.tbl). */
	if (si->arch == AUDIT_ARCH_X86_64)
		switch (si->seccomp.nr) {
		case 9: return TAG_MMAP;
		case 25: return TAG_MREMAP;
		case 30: return TAG_SHMAT;
		}
	if (si->arch == AUDIT_ARCH_I386)
		switch (si->seccomp.nr) {
		case 90: return TAG_OLD_MMAP;
		case 192: return TAG_MMAP;
		case 163: return TAG_MREMAP;
		case 397: return TAG_SHMAT;
		case 117: return TAG_IPC;
		}
	return 0;
}

#define MAP_FIXED_BIT 0x10
#define MREMAP_FIXED_BIT 2
#define IPC_SHMAT 21

struct proc {
	pid_t tgid;
	char program[64];
	struct ncb__wproc w;
	struct ncb__wthread *threads;
	struct ncb__wregion *regions;
	size_t nthreads, nregions, cthreads, cregions;
	struct watch_summary sum;
	int tasks;
	int before_exec;		/* still the watcher's child */
	struct ncb_maps *maps;		/* kept open: its address space's */
	unsigned long used;		/* when maps was last used */
};

static void forget_maps(struct proc *p)
{
	if (p->maps)
		ncb_maps_close(p->maps);
	p->maps = NULL;
}

struct task {
	pid_t tid;
	struct proc *proc;
	struct watch_event *pending;	/* reported at the call's exit */
	int started;			/* its first stop seen */
	int refused;			/* -EEXIST to set at the call's exit */
};

struct tracer {
	const struct watch_opts *o;
	struct task **tasks;
	size_t ntasks, ctasks;
	struct proc **procs;
	size_t nprocs, cprocs;
	struct timespec t0;
	long page;
	int attached;			/* no filter: every call stops */
	long opts;			/* a thread's options; 0 attached */
};

/*
 * A task goes on: to its next seccomp stop, or attached, to its next
 * system call's entry or exit.
 */
static void resume(const struct tracer *t, pid_t tid, int sig)
{
	ptrace(t->attached ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, sig);
}

/*
 * The process's maps, opened through the calling thread (the leader may
 * have exited: a zombie has no address space to show) and kept: the
 * reader asks the kernel at each look (PROCMAP_QUERY, or the text read
 * again), but the file stays bound to the address space it was opened on,
 * so execve closes it.  At most MAPS_KEPT are kept, the least recently
 * used closed first, so that a thousand live processes do not take a
 * thousand descriptors.
 */
#define MAPS_KEPT 64

static struct ncb_maps *proc_maps(struct tracer *t, struct proc *p,
				  pid_t tid)
{
	static unsigned long clock;
	struct proc *old = NULL;
	size_t i, kept = 0;

	p->used = ++clock;
	if (p->maps)
		return p->maps;
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->maps) {
			kept++;
			if (!old || t->procs[i]->used < old->used)
				old = t->procs[i];
		}
	if (kept >= MAPS_KEPT)
		forget_maps(old);
	if (ncb_maps_open(&p->maps, tid))
		p->maps = NULL;
	return p->maps;
}


/*
 * What the filter tests, for a process watched without one (attached):
 * whether a call's entry is a fixed placement.  The entry's number and
 * arguments are where a seccomp stop has them.
 */
static int wanted(const struct syscall_info *si)
{
	const uint64_t *a = si->seccomp.args;

	switch (call_of(si)) {
	case TAG_MMAP:
		return (a[3] & (MAP_FIXED_BIT | 0x100000)) == MAP_FIXED_BIT;
	case TAG_OLD_MMAP:
		return 1;
	case TAG_MREMAP:
		return !!(a[3] & MREMAP_FIXED_BIT);
	case TAG_SHMAT:
		return !!(a[2] & SHM_REMAP);
	case TAG_IPC:
		return (a[0] & 0xffff) == IPC_SHMAT && (a[2] & SHM_REMAP);
	}
	return 0;
}

/* ---- the filter ---- */

static int rule(scmp_filter_ctx f, int tag, int nr, unsigned int argc,
		struct scmp_arg_cmp a, struct scmp_arg_cmp b)
{
	if (argc == 2)
		return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 2, a, b);
	if (argc == 1)
		return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 1, a);
	return seccomp_rule_add(f, SCMP_ACT_TRACE(tag), nr, 0);
}

/*
 * The calls that place at a fixed address, tested in the filter itself:
 * mmap with MAP_FIXED but not MAP_FIXED_NOREPLACE, mremap with
 * MREMAP_FIXED, shmat with SHM_REMAP.  Masked tests only: libseccomp
 * compares the upper half of a 64-bit argument too, and an int flag's is
 * whatever the caller left there.  One filter per architecture, merged:
 * rules added to a filter of two architectures are copied by name, and
 * i386's mmap (old_mmap) takes a pointer to its arguments, so it stops
 * always; its shmat may come through ipc(2), whose call number the
 * kernel reads from the low 16 bits only.
 */
static scmp_filter_ctx build_filter(void)
{
	struct scmp_arg_cmp none = SCMP_A0(SCMP_CMP_MASKED_EQ, 0, 0);
	scmp_filter_ctx n = seccomp_init(SCMP_ACT_ALLOW);
	scmp_filter_ctx x = seccomp_init(SCMP_ACT_ALLOW);
	struct scmp_arg_cmp fixed = SCMP_A3(SCMP_CMP_MASKED_EQ,
					    MAP_FIXED_BIT | 0x100000,
					    MAP_FIXED_BIT);
	struct scmp_arg_cmp mfixed = SCMP_A3(SCMP_CMP_MASKED_EQ,
					     MREMAP_FIXED_BIT,
					     MREMAP_FIXED_BIT);
	struct scmp_arg_cmp remap = SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_REMAP,
					    SHM_REMAP);
	int r;

	if (!n || !x)
		goto fail;
	r = rule(n, TAG_MMAP, SCMP_SYS(mmap), 1, fixed, none) ||
	    rule(n, TAG_MREMAP, SCMP_SYS(mremap), 1, mfixed, none) ||
	    rule(n, TAG_SHMAT, SCMP_SYS(shmat), 1, remap, none) ||
	    seccomp_arch_remove(x, SCMP_ARCH_NATIVE) ||
	    seccomp_arch_add(x, SCMP_ARCH_X86) ||
	    rule(x, TAG_MMAP, SCMP_SYS(mmap2), 1, fixed, none) ||
	    rule(x, TAG_OLD_MMAP, SCMP_SYS(mmap), 0, none, none) ||
	    rule(x, TAG_MREMAP, SCMP_SYS(mremap), 1, mfixed, none) ||
	    rule(x, TAG_SHMAT, SCMP_SYS(shmat), 1, remap, none) ||
	    rule(x, TAG_IPC, SCMP_SYS(ipc), 2,
		 SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffff, IPC_SHMAT), remap);
	if (r || seccomp_merge(n, x))
		goto fail;
	/* x is n's now. */
	if (seccomp_attr_set(n, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) ||
	    seccomp_attr_set(n, SCMP_FLTATR_API_SYSRAWRC, 1))
		goto fail_n;
	return n;
fail:
	if (x)
		seccomp_release(x);
fail_n:
	if (n)
		seccomp_release(n);
	return NULL;
}

/*
 * In the child, before execve: the filter, without no_new_privs where
 * this process may (CAP_SYS_ADMIN), so that set-user-ID programs keep
 * their privileges as without the watcher; with it otherwise, as the
 * kernel requires.  0, or -errno.
 */
static int load_filter(scmp_filter_ctx f)
{
	int r;

	if (!f)
		return -ENOMEM;
	r = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
	if (!r)
		r = seccomp_load(f);
	if (r == -EACCES)
		r = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 1) ?:
		    seccomp_load(f);
	seccomp_release(f);
	return r;
}

/* ---- processes and threads ---- */

/* Room in *p (*cap elements) for one more after n: 0, or -ENOMEM. */
static int room(void *p, size_t *cap, size_t n, size_t size)
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

static struct task *find_task(struct tracer *t, pid_t tid, size_t *at)
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

static struct proc *find_proc(struct tracer *t, pid_t tgid)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i]->tgid == tgid)
			return t->procs[i];
	return NULL;
}

/* A small file of /proc: its length, or -1. */
static ssize_t read_proc(pid_t pid, const char *name, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

/* /proc/PID/status, NUL-terminated in buf ("" if unreadable). */
static void read_status(pid_t pid, char *buf, size_t len)
{
	ssize_t n = read_proc(pid, "status", buf, len - 1);

	buf[n > 0 ? n : 0] = 0;
}

/* The value after key ("Tgid:", "State:") in a status text, or "". */
static const char *status_value(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p ? p + strlen(key) + strspn(p + strlen(key), " \t") : "";
}

static pid_t status_field(pid_t pid, const char *key)
{
	char buf[4096];

	read_status(pid, buf, sizeof(buf));
	return (pid_t)atoi(status_value(buf, key));
}

static struct ncb__wmod file_mod(const char *path)
{
	struct ncb__wmod m = { 0, 0 };
	struct stat st;

	if (!stat(path, &st)) {
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	return m;
}

/* The interpreter: the mapping at AT_BASE, from the process's auxv. */

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

	read_proc(pid, "exe", ident, sizeof(ident));
	word = ident[4] == 1 ? 4 : 8;
	len = read_proc(pid, "auxv", v, sizeof(v));
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
static void identify(struct proc *p)
{
	char path[64], exe[4096];
	ssize_t n;
	const char *b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->tgid);
	p->w.exe = file_mod(path);
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

/* A process in the table, not yet identified. */
static struct proc *add_proc(struct tracer *t, pid_t tgid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p || room(&t->procs, &t->cprocs, t->nprocs, sizeof(p))) {
		free(p);
		return NULL;
	}
	p->tgid = tgid;
	p->sum.pid = tgid;
	t->procs[t->nprocs++] = p;
	return p;
}

static struct proc *new_proc(struct tracer *t, pid_t tgid,
			     const struct proc *parent)
{
	struct proc *p = add_proc(t, tgid);

	if (!p)
		return NULL;
	/* A child of fork has its parent's memory, and its history. */
	if (parent && parent->nregions) {
		p->regions = malloc(parent->cregions * sizeof(*p->regions));
		if (p->regions) {
			memcpy(p->regions, parent->regions,
			       parent->nregions * sizeof(*p->regions));
			p->nregions = parent->nregions;
			p->cregions = parent->cregions;
		}
	}
	identify(p);
	return p;
}

static void drop_thread(struct proc *p, pid_t tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid) {
			p->threads[i] = p->threads[--p->nthreads];
			return;
		}
}

/* A thread's stack pointer, and its stack's top if known (else 0). */
static void add_thread(struct proc *p, pid_t tid, uint64_t sp, uint64_t top)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid) {
			p->threads[i].sp = sp;
			p->threads[i].top = top ? top : p->threads[i].top;
			return;
		}
	if (room(&p->threads, &p->cthreads, p->nthreads, sizeof(*p->threads)))
		return;
	p->threads[p->nthreads].tid = tid;
	p->threads[p->nthreads].sp = sp;
	p->threads[p->nthreads++].top = top;
}

static struct task *add_task(struct tracer *t, pid_t tid, struct proc *p)
{
	struct task *k = calloc(1, sizeof(*k));

	if (!k || room(&t->tasks, &t->ctasks, t->ntasks, sizeof(k))) {
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
static struct task *new_task(struct tracer *t, pid_t tid)
{
	char status[4096];
	pid_t tgid;
	struct proc *p;

	/* One read: its thread group, and its parent for a new process. */
	read_status(tid, status, sizeof(status));
	tgid = (pid_t)atoi(status_value(status, "Tgid:"));
	tgid = tgid ? tgid : tid;
	p = find_proc(t, tgid);
	if (!p)
		p = new_proc(t, tgid, find_proc(t, atoi(status_value(status,
							"PPid:"))));
	return p ? add_task(t, tid, p) : NULL;
}

static void end_proc(struct tracer *t, struct proc *p)
{
	size_t i;

	if (t->o->summary && !p->before_exec)
		t->o->summary(&p->sum, t->o->arg);
	watch_caller_forget(p->tgid);
	forget_maps(p);
	for (i = 0; i < t->nprocs; i++)
		if (t->procs[i] == p)
			t->procs[i] = t->procs[--t->nprocs];
	free(p->threads);
	free(p->regions);
	free(p);
}

static void free_event(struct watch_event *e);

static void end_task(struct tracer *t, pid_t tid)
{
	size_t at;
	struct task *k = find_task(t, tid, &at);
	struct proc *p;

	if (!k)
		return;
	p = k->proc;
	t->tasks[at] = t->tasks[--t->ntasks];
	drop_thread(p, tid);
	if (k->pending)
		free_event(k->pending);
	free(k);
	if (!--p->tasks)
		end_proc(t, p);
}

/* ---- a call ---- */

static double since(const struct tracer *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->t0.tv_sec) +
	       (double)(now.tv_nsec - t->t0.tv_nsec) / 1e9;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	if (v + to - 1 < v)
		return UINT64_MAX & ~(to - 1);
	return (v + to - 1) & ~(to - 1);
}

/* An attached segment's size, rounded to pages; a page if unknown. */
/*
 * The size of segment id as the thread tid sees it, asked in its IPC
 * namespace (a container's, or one it unshared) when that is not ours:
 * 0, with *err: -EINVAL where the segment is not there (the kernel's
 * answer too), -errno where its namespace could not be entered.
 */
static uint64_t shm_size(int id, pid_t tid, int *err)
{
	static int own = -1;
	struct shmid_ds ds;
	struct stat ours, theirs;
	char path[64];
	int fd, r;

	*err = 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int)tid);
	if (stat("/proc/self/ns/ipc", &ours) || stat(path, &theirs) ||
	    (ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev)) {
		r = shmctl(id, IPC_STAT, &ds);
		*err = r ? -EINVAL : 0;
		return r ? 0 : ds.shm_segsz;
	}
	if (own < 0)
		own = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0 || fd < 0 || setns(fd, CLONE_NEWIPC)) {
		*err = -errno;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	r = shmctl(id, IPC_STAT, &ds);
	*err = r ? -EINVAL : 0;
	/* Back home; failing that, the watcher's own IPC is not used. */
	setns(own, CLONE_NEWIPC);
	return r ? 0 : ds.shm_segsz;
}

/*
 * The call in the stop, as the caller asked it: its kind, its arguments
 * (old_mmap's read from its block), its target range.  0, or -errno.
 */
static int decode(struct tracer *t, pid_t tid, const struct syscall_info *si,
		  struct watch_event *e)
{
	const uint64_t *a = si->seccomp.args;
	uint64_t mask = si->arch == AUDIT_ARCH_I386 ? 0xffffffff : ~0ULL;
	uint64_t page = (uint64_t)t->page;
	uint32_t blk[6];
	size_t i;
	int err;

	e->compat = si->arch == AUDIT_ARCH_I386;
	for (i = 0; i < 6; i++)
		e->args[i] = a[i] & mask;
	switch (call_of(si)) {
	case TAG_OLD_MMAP: {
		struct iovec local = { blk, sizeof(blk) };
		struct iovec remote = { (void *)(uintptr_t)e->args[0],
					sizeof(blk) };

		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)sizeof(blk))
			return -EFAULT;
		for (i = 0; i < 6; i++)
			e->args[i] = blk[i];
		/* Fixed but for the flag's new form: not a clobber. */
		if ((blk[3] & (MAP_FIXED_BIT | 0x100000)) != MAP_FIXED_BIT)
			return -ENOENT;
		e->name = "old_mmap";
	}	/* fall through */
	case TAG_MMAP:
		if (!e->name)
			e->name = e->compat ? "mmap2" : "mmap";
		e->call = CALL_MMAP;
		e->start = e->args[0];
		e->end = e->start + round_up(e->args[1], page);
		break;
	case TAG_MREMAP:
		e->name = "mremap";
		e->call = CALL_MREMAP;
		e->start = e->args[4];
		e->end = e->start + round_up(e->args[2], page);
		break;
	case TAG_IPC:
		/* ipc(SHMAT | version << 16, shmid, shmflg, &result, addr) */
		e->ipc_version = (int)(e->args[0] >> 16 & 0xffff);
		e->args[0] = e->args[1];
		e->args[1] = e->args[4];
		e->name = "ipc";
		/* fall through */
	case TAG_SHMAT:
		if (!e->name)
			e->name = "shmat";
		e->call = CALL_SHMAT;
		e->start = e->args[1];
		if (e->args[2] & SHM_RND)
			e->start &= ~(uint64_t)(SHMLBA - 1);
		e->end = e->start + round_up(shm_size((int)e->args[0], tid,
						       &err), page);
		/* A segment not there: the kernel refuses the call. */
		e->shm_bad = err == -EINVAL;
		e->unjudged = err && err != -EINVAL;
		if (err)
			e->end = e->start + page;
		break;
	default:
		return -ENOENT;
	}
	/* A range that wraps is the kernel's EINVAL: nothing replaced. */
	return e->end > e->start ? 0 : -ENOENT;
}

struct victims {
	struct watch_event *e;
	size_t cap;
	uint64_t page;
};

/*
 * What the rules need of a mapping's file, if its path still names that
 * file (same device and inode): its size now, rounded up to a page (0:
 * unknown), and whether it is an ELF object, kept by device and inode (a
 * stop would otherwise read the same libraries' headers again and again).
 */
struct file_kind {
	uint64_t dev, ino;
	int elf;
};

static struct file_kind kinds[64];
static unsigned int kinds_next;

/*
 * The mapping's file, by its path if that still names it (same device and
 * inode), else through /proc/TID/map_files (a file deleted or replaced on
 * disk since, a memfd; that needs CAP_SYS_ADMIN): 0 with *st, or -1.  *fd
 * the file opened, or -1 where a stat of the path was enough.
 */
static int find_mapped(const struct ncb_mapping *m, pid_t tid,
		       struct stat *st, int *fd)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor);
	char path[96];

	*fd = -1;
	if (m->path[0] == '/' && !stat(m->path, st) &&
	    st->st_ino == m->inode && st->st_dev == dev)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%"
		 PRIx64, (int)tid, m->start, m->end);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0 && !fstat(*fd, st) && st->st_ino == m->inode &&
	    st->st_dev == dev)
		return 0;
	if (*fd >= 0)
		close(*fd);
	return -1;
}

/* Whether the file (fd, else path) starts with the ELF magic. */
static int is_elf(int fd, const char *path)
{
	unsigned char magic[4];
	int own = fd < 0, r;

	if (own)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	r = fd >= 0 && pread(fd, magic, 4, 0) == 4 &&
	    !memcmp(magic, "\177ELF", 4);
	if (own && fd >= 0)
		close(fd);
	return r;
}

static void file_facts(const struct ncb_mapping *m, uint64_t page, pid_t tid,
		       int *elf, uint64_t *end)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor);
	struct file_kind *f = NULL;
	struct stat st;
	size_t i;
	int fd;

	*elf = 0;
	*end = 0;
	if (!m->inode || find_mapped(m, tid, &st, &fd))
		return;
	*end = st.st_size > 0 ? round_up((uint64_t)st.st_size, page) : 0;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !f; i++)
		if (kinds[i].ino == m->inode && kinds[i].dev == dev)
			f = &kinds[i];
	if (!f) {
		f = &kinds[kinds_next++ % (sizeof(kinds) / sizeof(kinds[0]))];
		f->dev = dev;
		f->ino = m->inode;
		f->elf = is_elf(fd, m->path);
	}
	*elf = f->elf;
	if (fd >= 0)
		close(fd);
}

static int one_victim(const struct ncb_mapping *m, void *arg)
{
	struct victims *vs = arg;
	struct watch_event *e = vs->e;
	struct ncb__wvictim *v;

	if (e->nvictims == vs->cap) {
		v = realloc(e->victims, (vs->cap ? 2 * vs->cap : 8) *
			    sizeof(*v));
		if (!v)
			return -ENOMEM;
		e->victims = v;
		vs->cap = vs->cap ? 2 * vs->cap : 8;
	}
	v = &e->victims[e->nvictims];
	memset(v, 0, sizeof(*v));
	v->m = *m;
	v->m.path = strdup(m->path);
	if (!v->m.path)
		return -ENOMEM;
	file_facts(m, vs->page, e->tid, &v->elf, &v->file_end);
	e->nvictims++;
	return 0;
}

/* The mappings meeting the call's range, as victims: 0, or -errno. */
static int victims_of(struct ncb_maps *maps, struct watch_event *e,
		      struct victims *vs)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	int r = ncb_maps_seek(maps, e->start);

	while (!r && (r = ncb_maps_next(maps, &m)) == 1 && m.start < e->end)
		r = one_victim(&m, vs);
	return r < 0 ? r : 0;
}

static void free_event(struct watch_event *e)
{
	size_t i;

	for (i = 0; i < e->nvictims; i++) {
		free((void *)e->victims[i].m.path);
		if (e->creators)
			free(e->creators[i]);
	}
	free(e->victims);
	free(e->creators);
	free(e);
}

static int is_mod(const struct ncb_mapping *m, void *arg)
{
	struct ncb__wmod *mod = arg;

	return m->inode == mod->ino &&
	       makedev(m->dev_major, m->dev_minor) == mod->dev;
}

/* The path of a module of the process, from its maps; "" if gone. */
static void mod_path(pid_t pid, struct ncb__wmod mod, char *buf, size_t len)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;

	buf[0] = 0;
	if (ncb_maps_open(&maps, pid))
		return;
	while (ncb_maps_next(maps, &m) == 1)
		if (is_mod(&m, &mod)) {
			snprintf(buf, len, "%s", m.path);
			break;
		}
	ncb_maps_close(maps);
}

/* Who made each victim, in words, for the report. */
static void describe_creators(const struct proc *p, struct watch_event *e)
{
	size_t i;

	e->creators = calloc(e->nvictims, sizeof(*e->creators));
	for (i = 0; e->creators && i < e->nvictims; i++) {
		const struct ncb__wvictim *v = &e->victims[i];
		char buf[320], path[256];

		if (v->kind == NCB__W_REGION) {
			mod_path(p->tgid, p->regions[v->region].by, path,
				 sizeof(path));
			snprintf(buf, sizeof(buf), "a fixed mmap from %s at "
				 "%.6f s", path[0] ? path :
				 "a module since unmapped",
				 p->regions[v->region].when);
		} else {
			watch_creator(v, buf, sizeof(buf));
		}
		e->creators[i] = strdup(buf);
	}
}

/* A placement by a known module: its region from now on. */
static void note_region(struct proc *p, const struct watch_event *e)
{
	size_t i;

	if (e->call != CALL_MMAP || !e->caller.mod.ino ||
	    watch_is_libc(e->caller.module))
		return;
	/* What the new one replaces leaves the older records. */
	for (i = 0; i < p->nregions; i++) {
		struct ncb__wregion *r = &p->regions[i];

		if (r->start >= e->end || r->end <= e->start)
			continue;
		if (r->start < e->start && r->end > e->end) {
			/* The middle: the older record split in two. */
			if (room(&p->regions, &p->cregions, p->nregions,
				 sizeof(*p->regions)))
				return;
			r = &p->regions[i];
			p->regions[p->nregions] = *r;
			p->regions[p->nregions++].start = e->end;
			r->end = e->start;
		} else if (r->start < e->start) {
			r->end = e->start;
		} else if (r->end > e->end) {
			r->start = e->end;
		} else {
			p->regions[i--] = p->regions[--p->nregions];
		}
	}
	if (room(&p->regions, &p->cregions, p->nregions, sizeof(*p->regions)))
		return;
	p->regions[p->nregions].start = e->start;
	p->regions[p->nregions].end = e->end;
	p->regions[p->nregions].when = e->when;
	p->regions[p->nregions++].by = e->caller.mod;
}

static enum ncb__wclass judge(struct proc *p, struct watch_event *e)
{
	struct ncb__wcall c = { e->start, e->end, e->tid, e->sp,
				e->caller.mod, { 0, 0 } };
	char path[64];

	if (e->call == CALL_MMAP && !(e->args[3] & MAP_ANONYMOUS) &&
	    (int)e->args[4] >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)e->pid,
			 (int)e->args[4]);
		c.file = file_mod(path);
	}
	p->w.threads = p->threads;
	p->w.nthreads = p->nthreads;
	p->w.regions = p->regions;
	p->w.nregions = p->nregions;
	return ncb__wjudge(&p->w, &c, e->victims, e->nvictims, &e->culprit);
}

/* Whether the class depends on who called: then a walk may change it. */
static int caller_matters(const struct watch_event *e)
{
	size_t i;

	for (i = 0; i < e->nvictims; i++)
		if (e->victims[i].kind == NCB__W_REGION ||
		    e->victims[i].kind == NCB__W_LIBRARY)
			return 1;
	return 0;
}

/* ---- registers: refusing a call, or making it no-replace ---- */

static int refuse(pid_t tid)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	/* Skipped by the kernel; the caller sees -EEXIST. */
	r.orig_rax = (unsigned long long)-1;
	r.rax = (unsigned long long)-EEXIST;
	return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -errno : 0;
}

/*
 * The flags argument rewritten: MAP_FIXED to MAP_FIXED_NOREPLACE for
 * mmap (the fourth argument: r10, or a 32-bit caller's esi), SHM_REMAP
 * cleared for shmat (the third: rdx; ipc's is its third too).  The
 * filter is run again on the new arguments, which it lets through.
 */
static int make_noreplace(pid_t tid, const struct watch_event *e)
{
	struct user_regs_struct r;
	unsigned long long *reg;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	if (e->call == CALL_MMAP)
		reg = e->compat ? &r.rsi : &r.r10;
	else
		reg = &r.rdx;
	if (e->call == CALL_MMAP)
		*reg = (*reg & ~(unsigned long long)MAP_FIXED_BIT) | 0x100000;
	else
		*reg &= ~(unsigned long long)SHM_REMAP;
	return ptrace(PTRACE_SETREGS, tid, 0, &r) ? -errno : 0;
}

/*
 * Whether the kernel will refuse the call for its arguments before it
 * looks at the range (mremap_to's and shmat's checks, old_mmap's
 * alignment): then it is left to say so itself, with its own error.  An
 * mmap is never refused here: made no-replace, the kernel checks it all.
 */
static int kernel_refuses(const struct watch_event *e, uint64_t page,
			  struct ncb_maps *maps)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	const uint64_t *a = e->args;

	switch (e->call) {
	case CALL_MREMAP:
		return (a[3] & ~7ULL) || !(a[3] & 1) || ((a[0] | a[4]) &
							 (page - 1)) ||
		       !a[2] || ((a[3] & 4) && a[1] != a[2]) ||
		       ncb_maps_find(maps, a[0], &m) != 1;
	case CALL_SHMAT:
		return ((a[1] & (SHMLBA - 1)) && !(a[2] & SHM_RND)) ||
		       e->ipc_version == 1 || e->shm_bad;
	default:
		return (a[0] & (page - 1)) || !a[1] || (a[5] & (page - 1));
	}
}

/*
 * What the mode does with a call: 0 let it run, 1 refused, 2 made
 * no-replace, its result then wanted.  An mmap is made no-replace (the
 * kernel decides atomically: EEXIST for what is there by then, or its
 * own error first); so is every fixed placement under --upgrade but over
 * the caller's own memory.  mremap has no such form, shmat's (without
 * SHM_REMAP) answers EINVAL, not EEXIST, and i386's old_mmap keeps its
 * arguments in memory: a clobber there is refused.
 */
static int act(struct tracer *t, struct watch_event *e,
	       struct ncb_maps *maps)
{
	int clobber = NCB__WC_CLOBBER(e->cls);
	int mmap = e->call == CALL_MMAP && strcmp(e->name, "old_mmap");

	if (t->o->mode == WATCH_REPORT || (!clobber && (t->o->mode ==
		WATCH_DENY || e->cls != NCB__WC_NOTHING)))
		return 0;
	/*
	 * No-replace, the kernel would find the collision before a missing
	 * mapping type (EEXIST, not EINVAL): such a call is left to fail.
	 * It refuses MAP_SHARED_VALIDATE with the flag (EOPNOTSUPP): such a
	 * call is refused here instead.
	 */
	if (mmap && !(e->args[3] & 3))
		return 0;
	mmap = mmap && (e->args[3] & 3) != 3;
	if (mmap || (e->call == CALL_SHMAT && !clobber))
		return make_noreplace(e->tid, e) ? 0 : 2;
	if (!clobber || kernel_refuses(e, (uint64_t)t->page, maps))
		return 0;
	return refuse(e->tid) ? 0 : 1;
}

/*
 * A call done: counted by class, and reported if it clobbered (or, made
 * no-replace, was refused).  A clobber's result says whether it was one:
 * refused by the kernel for its arguments, it replaced nothing (counted
 * as invalid); made no-replace and placed after all, what was there had
 * gone meanwhile.
 */
static void finish(struct tracer *t, struct task *k, struct watch_event *e)
{
	struct proc *p = k->proc;
	int as_asked = !strcmp(e->action, "reported");

	if (NCB__WC_CLOBBER(e->cls) && e->have_result) {
		if (e->result < 0 && (as_asked || e->result != -EEXIST)) {
			p->sum.invalid++;
			free_event(e);
			return;
		}
		if (e->result >= 0 && !as_asked)
			e->cls = NCB__WC_NOTHING;
	}
	p->sum.by_class[e->cls]++;
	/* Upgraded over free space and refused: another mapped there. */
	if (NCB__WC_CLOBBER(e->cls) ||
	    (e->have_result && e->result == -EEXIST)) {
		if (!e->creators)
			describe_creators(p, e);
		t->o->report(e, t->o->arg);
	}
	free_event(e);
}

/*
 * A call that could not be judged (the process's maps unreadable):
 * reported, and but for the report mode refused, since what it would
 * replace is unknown.
 */
static void unjudged(struct tracer *t, struct task *k, struct watch_event *e)
{
	e->unjudged = 1;
	e->action = "reported";
	if (t->o->mode != WATCH_REPORT && !refuse(k->tid)) {
		e->action = "denied";
		k->refused = t->attached;
	}
	k->proc->sum.unjudged++;
	t->o->report(e, t->o->arg);
	free_event(e);
	resume(t, k->tid, 0);
}

/* At a call's exit: a refused one's answer set, an upgraded one's read. */
static void on_syscall_exit_fix(struct tracer *t, struct task *k,
				const struct syscall_info *si)
{
	struct watch_event *e = k->pending;
	struct user_regs_struct r;

	k->pending = NULL;
	if (k->refused && !ptrace(PTRACE_GETREGS, k->tid, 0, &r)) {
		r.rax = (unsigned long long)-EEXIST;
		ptrace(PTRACE_SETREGS, k->tid, 0, &r);
	}
	k->refused = 0;
	if (e) {
		e->have_result = 1;
		e->result = si->exit.rval;
		finish(t, k, e);
	}
}

static void on_syscall_exit(struct tracer *t, struct task *k,
			    const struct syscall_info *si)
{
	on_syscall_exit_fix(t, k, si);
	resume(t, k->tid, 0);
}

/*
 * A fixed placement stopped at (a seccomp stop, or attached, its entry):
 * judged, acted on, reported.
 */
static void on_call(struct tracer *t, struct task *k,
		    const struct syscall_info *si)
{
	struct watch_event *e = calloc(1, sizeof(*e));
	struct victims vs = { e, 0, (uint64_t)t->page };
	struct proc *p = k->proc;
	struct ncb_maps *maps;
	int how, walked = 0;

	if (!e)
		goto cont;
	e->pid = p->tgid;
	e->tid = k->tid;
	e->program = p->program;
	e->when = since(t);
	e->pc = si->ip;
	e->sp = si->sp;
	if (decode(t, k->tid, si, e))
		goto cont;
	p->sum.fixed++;
	maps = proc_maps(t, p, k->tid);
	if (e->unjudged || !maps || victims_of(maps, e, &vs)) {
		unjudged(t, k, e);
		return;
	}
	watch_caller(maps, p->tgid, k->tid, e->pc, e->sp, e->compat,
		     &e->caller, 0);
	e->cls = judge(p, e);
	if (caller_matters(e) && watch_is_libc(e->caller.module)) {
		watch_caller(maps, p->tgid, k->tid, e->pc, e->sp, e->compat,
			     &e->caller, 1);
		walked = 1;
		e->cls = judge(p, e);
	}
	if (NCB__WC_CLOBBER(e->cls) && !walked)
		watch_caller(maps, p->tgid, k->tid, e->pc, e->sp, e->compat,
			     &e->caller, 1);
	/* Who made what, while the records still say it. */
	if (NCB__WC_CLOBBER(e->cls))
		describe_creators(p, e);
	how = act(t, e, maps);
	e->action = how == 1 || (how == 2 && t->o->mode == WATCH_DENY) ?
		    "denied" : how == 2 ? "upgraded" : "reported";
	/* Attached, a refused call's -EEXIST is set again at its exit. */
	k->refused = how == 1 && t->attached;
	if (how != 1)
		note_region(p, e);
	if (how == 1) {
		e->have_result = 1;
		e->result = -EEXIST;
	} else if (how == 2 || NCB__WC_CLOBBER(e->cls)) {
		/* The result at the call's exit, then reported. */
		k->pending = e;
		ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
		return;
	}
	finish(t, k, e);
	resume(t, k->tid, 0);
	return;
cont:
	if (e)
		free_event(e);
	resume(t, k->tid, 0);
}

/* A system call stop: the filter's, or attached, an entry or an exit. */
static void on_syscall_stop(struct tracer *t, struct task *k, int seccomp)
{
	struct syscall_info si = { 0 };

	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) < 0) {
		resume(t, k->tid, 0);
		return;
	}
	if (si.op == INFO_EXIT) {
		on_syscall_exit(t, k, &si);
		return;
	}
	if ((seccomp && si.op == INFO_SECCOMP) ||
	    (si.op == INFO_ENTRY && wanted(&si))) {
		on_call(t, k, &si);
		return;
	}
	resume(t, k->tid, 0);
}

/* ---- the loop ---- */

#define CLONE_THREAD_BIT 0x10000

/*
 * A new thread's stack, from the arguments of the clone that made it, read
 * while its maker is stopped in the call: before the maker can go on to
 * use the address, which the thread's own first stop may come after.
 * clone(flags, stack, ...) and clone3(args, size), whose struct clone_args
 * has the flags first and the stack and its size as its sixth and seventh
 * 64-bit fields.  The top of the stack, or 0.
 */
static uint64_t clone_stack(pid_t tid)
{
	struct user_regs_struct r;
	struct syscall_info si = { 0 };
	uint64_t args[7] = { 0 }, flags, a0, a1;
	struct iovec local = { args, sizeof(args) }, remote;
	int compat;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0)
		return 0;
	compat = si.arch == AUDIT_ARCH_I386;
	a0 = compat ? r.rbx & 0xffffffff : r.rdi;
	a1 = compat ? r.rcx & 0xffffffff : r.rsi;
	if (r.orig_rax == 435) {
		remote.iov_base = (void *)(uintptr_t)a0;
		remote.iov_len = sizeof(args);
		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)sizeof(args))
			return 0;
		flags = args[0];
		a1 = args[5] + args[6];
	} else if (r.orig_rax == (compat ? 120U : 56U)) {
		flags = a0;
	} else {
		return 0;
	}
	return flags & CLONE_THREAD_BIT ? a1 : 0;
}

static void on_new_child(struct tracer *t, struct task *k, int ev)
{
	unsigned long msg = 0;
	struct task *c;
	uint64_t top;

	ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &msg);
	/* It may have reported already; it is found or made now. */
	c = msg ? find_task(t, (pid_t)msg, NULL) : NULL;
	if (msg && !c)
		c = new_task(t, (pid_t)msg);
	top = ev == PTRACE_EVENT_CLONE ? clone_stack(k->tid) : 0;
	/* Just below the top: inside the stack's mapping. */
	if (c && top && c->proc == k->proc)
		add_thread(k->proc, c->tid, top - 1, top);
}

/*
 * After execve: a new address space, and one thread left, under the
 * process's id (the thread that called it took that id).
 */
static void on_exec(struct tracer *t, struct task *k)
{
	unsigned long former = 0;
	struct proc *p = k->proc;
	struct syscall_info si = { 0 };
	size_t i;

	ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &former);
	for (i = 0; i < t->ntasks;)
		if (t->tasks[i] != k && t->tasks[i]->proc == p)
			end_task(t, t->tasks[i]->tid);
		else
			i++;
	p->nthreads = p->nregions = 0;
	p->before_exec = 0;
	watch_caller_forget(p->tgid);
	forget_maps(p);
	identify(p);
	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) >= 0)
		add_thread(p, k->tid, si.sp, 0);
}

/*
 * The options a task is traced with: its creator's, but for the exit
 * stop, which only a thread other than the leader needs (its stack stops
 * being one before its exit is reported); a process's leader goes without
 * it and its stop, a process's exit costing one stop fewer.
 */
static long task_opts(const struct tracer *t, const struct task *k)
{
	return k->tid == k->proc->tgid ? t->opts & ~PTRACE_O_TRACEEXIT :
	       t->opts;
}

/*
 * A task's first stop, before it has run: its options, and a thread's
 * stack pointer is its stack.
 */
static void on_first_stop(const struct tracer *t, struct task *k)
{
	struct syscall_info si = { 0 };

	if (t->opts)
		ptrace(PTRACE_SETOPTIONS, k->tid, 0, task_opts(t, k));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) >= 0)
		add_thread(k->proc, k->tid, si.sp, 0);
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

static void on_stop(struct tracer *t, pid_t tid, int status)
{
	struct task *k = find_task(t, tid, NULL);
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (!k) {
		resume(t, tid, 0);
		return;
	}
	if (!k->started) {
		k->started = 1;
		on_first_stop(t, k);
	}
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_stop(t, k, 0);
		return;
	}
	switch (ev) {
	case PTRACE_EVENT_SECCOMP:
		on_syscall_stop(t, k, 1);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		on_new_child(t, k, ev);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t, k);
		break;
	case PTRACE_EVENT_EXIT:
		/*
		 * Its stack is no longer a thread's: a thread joining it
		 * may reuse or free it before the exit is reported (the
		 * kernel clears the thread id that pthread_join waits on
		 * first).
		 */
		drop_thread(k->proc, k->tid);
		break;
	case PTRACE_EVENT_STOP:
		/* A group-stop: stay stopped, as without the watcher. */
		if (is_stop_signal(sig)) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		break;
	case 0:
		/* A signal on its way: delivered as it was sent. */
		resume(t, tid, sig);
		return;
	}
	resume(t, tid, 0);
}

static int detach_asked;

/*
 * The next stop or exit of a task.  Attached, SIGINT, SIGTERM and SIGHUP
 * end the watch: they are blocked and waited for with SIGCHLD (a tracee's
 * stop sends its tracer one), each wait first asking without blocking, so
 * that neither a stop nor the signal can be missed in between.  -1 with
 * EINTR once detaching is asked.
 */
static pid_t next_stop(const struct tracer *t, int *status)
{
	sigset_t set;
	pid_t tid;
	int sig;

	if (!t->attached)
		return waitpid(-1, status, __WALL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	for (;;) {
		tid = waitpid(-1, status, __WALL | WNOHANG);
		if (tid || detach_asked) {
			if (!tid)
				errno = EINTR;
			return tid ? tid : -1;
		}
		sig = sigwaitinfo(&set, NULL);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			detach_asked = 1;
	}
}

/*
 * Attached, every task is left as it was: stopped where it is (a call in
 * flight finished first, a refused one returning EEXIST), then detached,
 * a signal on its way delivered.  Children not yet known go too.
 */
static void detach_all(struct tracer *t)
{
	struct syscall_info si = { 0 };
	struct task *k;
	int status, sig;
	size_t i;
	pid_t tid;

	for (i = 0; i < t->ntasks; i++)
		ptrace(PTRACE_INTERRUPT, t->tasks[i]->tid, 0, 0);
	while (t->ntasks) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			end_task(t, tid);
			continue;
		}
		k = find_task(t, tid, NULL);
		sig = status >> 16 ? 0 : WSTOPSIG(status);
		if (k && sig == (SIGTRAP | 0x80)) {
			sig = 0;
			if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si),
				    &si) > 0 && si.op == INFO_EXIT)
				on_syscall_exit_fix(t, k, &si);
		}
		ptrace(PTRACE_DETACH, tid, 0, sig);
		end_task(t, tid);
	}
}

static volatile sig_atomic_t main_child, passed;

/*
 * To the program while it lives; after, to what it left running (a
 * daemon), from the loop: the handler cannot walk the task table.
 */
static void pass_on(int sig)
{
	if (main_child > 0)
		kill(main_child, sig);
	else
		passed = sig;
}

static void pass_to_all(struct tracer *t)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		kill(t->procs[i]->tgid, passed);
	passed = 0;
}

static int loop(struct tracer *t, pid_t child)
{
	int status, main_status = 0;
	pid_t tid;

	while (t->ntasks) {
		tid = next_stop(t, &status);
		if (tid < 0 && errno == EINTR && detach_asked) {
			detach_all(t);
			break;
		}
		if (tid < 0 && errno == EINTR && passed)
			pass_to_all(t);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == child) {
				main_status = status;
				/* Its pid may be another's from now on. */
				main_child = 0;
			}
			end_task(t, tid);
			/* Attached: the process watched is gone; so are we. */
			if (t->attached && !find_proc(t, child)) {
				detach_all(t);
				break;
			}
			continue;
		}
		if (!find_task(t, tid, NULL))
			new_task(t, tid);
		on_stop(t, tid, status);
	}
	return main_status;
}

/*
 * The watcher's own signals: the terminal's (SIGINT, SIGQUIT) reach the
 * whole foreground group, the program included, and the watcher waits for
 * it to act on them; SIGTERM and SIGHUP sent to the watcher go on to it.
 * Set after the fork: the program keeps the dispositions it was given.
 */
static void own_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = pass_on;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * The child: builds the filter while the watcher seizes it (the two run
 * side by side), waits to be seized, loads the filter, runs the program.
 * On failure it says which step failed (0 the filter, 1 execve) and why.
 */
static void __attribute__((noreturn)) child(char *const argv[], int go,
					    int err)
{
	scmp_filter_ctx f = build_filter();
	int msg[2] = { 0, 0 };
	char c;

	if (read(go, &c, 1) != 1)
		_exit(127);
	msg[1] = load_filter(f);
	if (!msg[1]) {
		execvp(argv[0], argv);
		msg[0] = 1;
		msg[1] = -errno;
	}
	if (write(err, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		_exit(127);
	_exit(126);
}

int watch_run(char *const argv[], const struct watch_opts *o,
	      int *exec_failed, char *why, size_t whylen)
{
	struct tracer t = { .o = o };
	int go[2], err[2], msg[2], e = 0, status;
	struct proc *p;
	pid_t pid;

	t.opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK |
		 PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		 PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
		 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT;
	t.page = sysconf(_SC_PAGESIZE);
	clock_gettime(CLOCK_MONOTONIC, &t.t0);
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		e = -errno;
		goto close_go;
	}
	pid = fork();
	if (pid < 0) {
		e = -errno;
		goto close_err;
	}
	if (!pid)
		child(argv, go[0], err[1]);
	main_child = pid;
	own_signals();
	close(err[1]);
	err[1] = -1;
	/* A leader: without the exit stop (task_opts). */
	if (ptrace(PTRACE_SEIZE, pid, 0, t.opts & ~PTRACE_O_TRACEEXIT)) {
		e = -errno;
		snprintf(why, whylen, "cannot trace the program: %s%s",
			 strerror(-e), e == -EPERM ? " (ptrace is not "
			 "permitted here: Yama's ptrace_scope, or a "
			 "container's seccomp profile)" : "");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		goto close_err;
	}
	/* The watcher's own child: what it is, execve will say. */
	p = add_proc(&t, pid);
	if (!p || !add_task(&t, pid, p)) {
		e = -ENOMEM;
		kill(pid, SIGKILL);
		goto close_err;
	}
	p->before_exec = 1;
	if (write(go[1], "", 1) != 1)
		e = -errno;
	status = loop(&t, pid);
	if (read(err[0], msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		e = msg[1] < 0 ? msg[1] : -EIO;
		*exec_failed = msg[0];
		if (msg[0])
			snprintf(why, whylen, "%s: %s", argv[0],
				 strerror(-e));
		else
			snprintf(why, whylen, "cannot load the seccomp "
				 "filter: %s", strerror(-e));
	} else {
		e = status;
	}
	free(t.tasks);
	free(t.procs);
close_err:
	close(err[0]);
	if (err[1] >= 0)
		close(err[1]);
close_go:
	close(go[0]);
	close(go[1]);
	return e;
}

static int zombie(pid_t tid)
{
	char buf[512], c;

	read_status(tid, buf, sizeof(buf));
	c = *status_value(buf, "State:");
	return c == 'Z' || c == 'X';
}

/* Every thread of pid, seized and stopped; threads made meanwhile too. */
static int seize_all(struct tracer *t, pid_t pid, long opts, char *why,
		     size_t whylen)
{
	struct dirent *de;
	char path[64];
	int added, e;
	pid_t tid;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		added = 0;
		d = opendir(path);
		if (!d) {
			e = -errno;
			snprintf(why, whylen, "no process %d: %s", (int)pid,
				 strerror(-e));
			return e;
		}
		while ((de = readdir(d))) {
			tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || find_task(t, tid, NULL))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, opts)) {
				e = -errno;
				/*
				 * A thread that ended meanwhile is none, nor
				 * is a leader that exited before its threads
				 * (a zombie); one made since by a thread
				 * seized is ours by then (TRACECLONE).
				 */
				if (e == -ESRCH || (e == -EPERM && zombie(tid)))
					continue;
				if (e == -EPERM && status_field(tid,
				    "TracerPid:") == getpid()) {
					added |= !!new_task(t, tid);
					continue;
				}
				closedir(d);
				snprintf(why, whylen, "cannot trace process "
					 "%d: %s%s", (int)pid, strerror(-e),
					 e == -EPERM ? " (another tracer, "
					 "Yama's ptrace_scope, or a process "
					 "with more privileges)" : "");
				return e;
			}
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			if (!new_task(t, tid)) {
				closedir(d);
				return -ENOMEM;
			}
			added = 1;
		}
		closedir(d);
	} while (added);
	return 0;
}

int watch_attach(pid_t pid, const struct watch_opts *o, char *why,
		 size_t whylen)
{
	struct tracer t = { .o = o, .attached = 1 };
	long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT;
	sigset_t set;
	int e, status;

	t.page = sysconf(_SC_PAGESIZE);
	clock_gettime(CLOCK_MONOTONIC, &t.t0);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	e = seize_all(&t, pid, opts, why, whylen);
	if (e) {
		detach_all(&t);
		status = e;
	} else {
		status = loop(&t, pid);
	}
	free(t.tasks);
	free(t.procs);
	return status;
}

/* SPDX-License-Identifier: MIT */
/*
 * The ptrace watcher at a fixed placement: the call decoded, what it
 * would replace read from the process's maps, judged by the rules, and
 * acted on as the mode says (let run, refused, or made no-replace), its
 * result read at its exit, and reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include "noclobber.h"
#include "noclobber_intree.h"
#include "arch.h"
#include "files.h"
#include "pagemap.h"
#include "trace.h"

/* Seconds into the watch. */
double trace_since(const struct tracer *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->t0.tv_sec) +
	       (double)(now.tv_nsec - t->t0.tv_nsec) / 1e9;
}

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

/* old_mmap's arguments, from the block its first points to: 0, -EFAULT. */
static int old_mmap_args(pid_t tid, struct watch_event *e)
{
	uint32_t blk[6];
	struct iovec local = { blk, sizeof(blk) };
	struct iovec remote = { (void *)(uintptr_t)e->args[0], sizeof(blk) };
	size_t i;

	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)sizeof(blk))
		return -EFAULT;
	for (i = 0; i < 6; i++)
		e->args[i] = blk[i];
	return 0;
}

/*
 * What a fixed call's length is rounded up to: for an mmap a huge page
 * with MAP_HUGETLB or of a file on hugetlbfs (ksys_mmap_pgoff:
 * is_file_hugepages), for an mremap one where its source is a huge page
 * mapping (mremap_to and vma_to_resize align both lengths to it since
 * 5.16: mm/mremap.c), else a page.
 */
static uint64_t granule(struct tracer *t, struct task *k,
			const struct watch_event *e)
{
	uint64_t g = wcall_mmap_granule(e->args, (uint64_t)t->page, t->huge);
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	char path[96];

	if (wcall_family(e->call) == WC_MREMAP) {
		maps = trace_proc_maps(t, k->proc, k->tid);
		if (!maps || ncb_maps_find(maps, e->args[0], &m) != 1)
			return (uint64_t)t->page;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64
			 "-%" PRIx64, (int)k->tid, m.start, m.end);
		return wfile_huge_page(path) ?: (uint64_t)t->page;
	}
	if (wcall_family(e->call) != WC_MMAP ||
	    (e->args[3] & WC_MAP_ANONYMOUS))
		return g;
	/* A file's own, whatever the flags (MAP_HUGETLB: EINVAL else). */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)k->tid,
		 (int)e->args[4]);
	return wfile_huge_page(path) ?: g;
}

/*
 * The call in the stop, as the caller asked it: its kind, its arguments
 * (old_mmap's read from its block, ipc's made shmat's), its target range.
 * 0, or -errno.
 */
static int decode(struct tracer *t, struct task *k,
		  const struct syscall_info *si, struct watch_event *e)
{
	pid_t tid = k->tid;
	uint64_t page = (uint64_t)t->page, seg = 0;
	size_t i;
	int err;

	e->call = trace_call_of(si, &e->compat);
	for (i = 0; i < 6; i++)
		e->args[i] = si->seccomp.args[i] &
			     (e->compat ? 0xffffffff : ~0ULL);
	e->name = wcall_name(e->call, e->compat);
	if (e->call == WC_NONE)
		return -ENOENT;
	if (e->call == WC_OLD_MMAP && (err = old_mmap_args(tid, e)))
		return err;
	if (e->call == WC_IPC)
		e->ipc_version = (int)wcall_ipc_args(e->args);
	if (wcall_family(e->call) == WC_SHMAT) {
		seg = shm_size((int)e->args[0], tid, &err);
		/* A segment not there: the kernel refuses the call. */
		e->shm_bad = err == -EINVAL;
		e->unjudged = err && err != -EINVAL;
		/* Not known: a page, for the report. */
		seg = err ? page : seg;
	}
	wcall_range(e->call, e->args, seg, page, granule(t, k, e), SHMLBA,
		    &e->start, &e->end);
	/* A range that wraps is the kernel's EINVAL: nothing replaced. */
	return e->end > e->start ? 0 : -ENOENT;
}

struct victims {
	struct watch_event *e;
	size_t cap;
	uint64_t page;
};

/*
 * Whether each file is an ELF object, kept by device and inode: a stop
 * would otherwise read the same libraries' headers again and again.
 */
static struct wfiles files;

void trace_files_free(void)
{
	wfiles_free(&files);
}

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
	int own = fd < 0, r;

	if (own)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	r = fd >= 0 && wfile_magic(fd);
	if (own && fd >= 0)
		close(fd);
	return r;
}

/*
 * What the rules need of a mapping's file, if its path still names that
 * file (same device and inode): its size now, rounded up to a page (0:
 * unknown), and whether it is an ELF object.
 */
static void file_facts(const struct ncb_mapping *m, uint64_t page, pid_t tid,
		       int *elf, uint64_t *end)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor);
	struct wfile *f;
	struct stat st;
	int fd;

	*elf = 0;
	*end = 0;
	if (!m->inode || find_mapped(m, tid, &st, &fd))
		return;
	*end = st.st_size > 0 ? wc_page_up((uint64_t)st.st_size, page) : 0;
	if (!files.slot)
		wfiles_init(&files, 1024, NULL, NULL);
	f = wfiles_add(&files, dev, m->inode);
	if (f && f->elf < 0)
		f->elf = is_elf(fd, m->path);
	*elf = f ? f->elf : is_elf(fd, m->path);
	if (fd >= 0)
		close(fd);
}

/*
 * Whether pages of [s, e) in tid's address space hold data (pagemap.h);
 * where its pagemap cannot be read, none known (the protection bits
 * decide, as before).
 */
static int holds_data(pid_t tid, uint64_t s, uint64_t e, uint64_t page)
{
	uint64_t ent[512];
	char path[64];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* Not to be read: data maybe, the safe side. */
	if (fd < 0)
		return 1;
	r = wpagemap_data(fd, s, e, page, ent, 512);
	close(fd);
	return r;
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
	if (!m->prot && !m->shared)
		v->has_data = holds_data(e->tid, m->start > e->start ?
					 m->start : e->start,
					 m->end < e->end ? m->end : e->end,
					 vs->page);
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

/*
 * A region's maker: the call, its module and symbol (read from the
 * module's symbol tables while the process still maps it), when.  NULL
 * where the module is not known, or no memory.
 */
static struct watch_made *region_maker(const struct proc *p,
				       const struct ncb__wregion *r)
{
	struct watch_made *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->call = wcall_name((enum wcall)r->call, 0);
	m->when = r->when;
	m->site.mod = r->by;
	m->site.offset = r->by_off;
	if (r->by.ino)
		mod_path(p->tgid, r->by, m->site.module,
			 sizeof(m->site.module));
	if (r->by.ino && !m->site.module[0])
		snprintf(m->site.module, sizeof(m->site.module),
			 "(a module since unmapped)");
	else if (m->site.module[0] == '/')
		watch_symbol(m->site.module, r->by_off, &m->site);
	return m;
}

/* Who made each victim, in words and for the report's record. */
static void describe_creators(const struct proc *p, struct watch_event *e)
{
	const struct ncb__wregions *rs = &p->space->regions;
	size_t i;

	e->creators = calloc(e->nvictims, sizeof(*e->creators));
	e->made = calloc(e->nvictims, sizeof(*e->made));
	for (i = 0; e->creators && e->made && i < e->nvictims; i++) {
		const struct ncb__wvictim *v = &e->victims[i];
		char buf[512];

		/*
		 * At the call's exit, the records may have changed since
		 * (another process in the address space, a thread not held).
		 */
		if (v->kind == NCB__W_REGION && v->region < rs->n)
			e->made[i] = region_maker(p, &rs->r[v->region]);
		if (e->made[i])
			watch_made_text(e->made[i], buf, sizeof(buf));
		else
			watch_creator(v, buf, sizeof(buf));
		e->creators[i] = strdup(buf);
	}
}

/*
 * Where a placement done put its mapping: its result, or for i386's
 * ipc(2) the word its fourth argument points to.  0, or -1.
 */
static int placed_at(pid_t tid, const struct watch_event *e, int64_t rval,
		     uint64_t *at)
{
	uint32_t word;
	struct iovec local = { &word, sizeof(word) };
	struct iovec remote = { (void *)(uintptr_t)e->args[3], sizeof(word) };

	if (rval < 0 && rval > -4096)
		return -1;
	*at = (uint64_t)rval & (e->compat ? 0xffffffff : ~0ULL);
	if (e->call != WC_IPC)
		return 0;
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
	    (ssize_t)sizeof(word))
		return -1;
	*at = word;
	return 0;
}

/*
 * Who asked for a plain placement, at its exit.  An i386 wrapper's caller
 * is seen only by a walk (its return address is below what it pushed);
 * an mremap's region is its source's maker's, whoever asks.
 */
static void plain_maker(struct task *k, const struct watch_event *e,
			struct ncb_maps *maps)
{
	struct watch_site site;

	k->maker = (struct ncb__wmod){ 0, 0 };
	k->maker_off = 0;
	if (!maps || e->call == WC_MREMAP ||
	    watch_maker(maps, k->proc->tgid, k->tid, e->pc, e->sp, e->compat,
			&site, e->compat))
		return;
	k->maker = site.mod;
	k->maker_off = site.offset;
}

/*
 * A process's records cut to the memory still mapped.  munmap is not
 * followed (it makes nothing), so a record outlives its memory until a
 * placement covers it, and a program that maps and unmaps at ever new
 * addresses (random hints, as V8 places its pages) would fill its set
 * with records of nothing, every placement after them of no maker.  One
 * walk of the maps beside the records, both in address order, when the
 * set is full; a record that finds no room is given up (its memory of
 * no maker, never another's).
 */
static void prune(struct space *sp, struct ncb_maps *maps)
{
	struct ncb__wregions keep = { .max = sp->regions.max };
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	const struct ncb__wregions *s = &sp->regions;
	size_t i = 0, j;
	int r = ncb_maps_seek(maps, 0);

	sp->prune_wait = TRACE_PRUNE;
	while (!r && i < s->n && (r = ncb_maps_next(maps, &m)) == 1) {
		r = 0;
		while (i < s->n && s->r[i].end <= m.start)
			i++;
		for (j = i; j < s->n && s->r[j].start < m.end; j++) {
			struct ncb__wregion g = s->r[j];

			g.start = g.start > m.start ? g.start : m.start;
			g.end = g.end < m.end ? g.end : m.end;
			ncb__wregions_add(&keep, &g);
		}
	}
	/* The maps not read to the end: the records kept as they are. */
	if (r < 0) {
		ncb__wregions_free(&keep);
		return;
	}
	ncb__wregions_free(&sp->regions);
	sp->regions = keep;
}

static int private_anon(const struct watch_event *e)
{
	return wcall_family(e->call) == WC_MMAP &&
	       (e->args[3] & WC_MAP_ANONYMOUS) &&
	       (e->args[3] & WC_MAP_TYPE_BITS) == MAP_PRIVATE;
}

/*
 * A placement done: the region it made, by the module that asked (an
 * mremap's by its source's maker: memory moved or grown is still its
 * maker's), mapping what the maps now show there.  Recorded for every
 * placement, plain or fixed, so that a mapping of no record was made
 * where the watcher could not see.
 */
static void record_region(struct tracer *t, struct task *k,
			  const struct watch_event *e, int64_t rval)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb__wregion r = { 0 };
	const struct ncb__wregion *old;
	struct proc *p = k->proc;
	struct space *sp = p->space;
	struct ncb_maps *maps;
	uint64_t at;

	if (placed_at(k->tid, e, rval, &at))
		return;
	maps = trace_proc_maps(t, p, k->tid);
	if (e->plain)
		plain_maker(k, e, maps);
	r.start = at;
	r.end = at + (e->end - e->start);
	r.by = k->maker;
	r.by_off = k->maker_off;
	r.call = wcall_family(e->call);
	r.when = trace_since(t);
	if (e->call == WC_MREMAP) {
		old = ncb__wregions_at(sp->regions.r, sp->regions.n,
				       e->args[0]);
		r.by = old ? old->by : (struct ncb__wmod){ 0, 0 };
		r.by_off = old ? old->by_off : 0;
	}
	/* Private anonymous memory maps no file: no look needed. */
	if (maps && !private_anon(e) && ncb_maps_find(maps, at, &m) == 1 &&
	    m.inode) {
		r.file.dev = makedev(m.dev_major, m.dev_minor);
		r.file.ino = m.inode;
	}
	/* Not known what it maps: a record of no maker, over older ones. */
	if (!maps)
		r.by = r.file = (struct ncb__wmod){ 0, 0 };
	if (sp->prune_wait)
		sp->prune_wait--;
	if (maps && sp->regions.n >= sp->regions.max && !sp->prune_wait)
		prune(sp, maps);
	ncb__wregions_add(&sp->regions, &r);
}

static enum ncb__wclass judge(struct proc *p, struct watch_event *e)
{
	struct ncb__wcall c = { e->start, e->end, e->tid, e->sp,
				e->caller.mod, { 0, 0 } };
	char path[64];

	if (wcall_family(e->call) == WC_MMAP &&
	    !(e->args[3] & WC_MAP_ANONYMOUS) &&
	    (int)e->args[4] >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)e->pid,
			 (int)e->args[4]);
		c.file = trace_file_mod(path);
	}
	p->w.threads = p->threads;
	p->w.nthreads = p->nthreads;
	p->w.regions = p->space->regions.r;
	p->w.nregions = p->space->regions.n;
	p->w.sees_brk = 1;
	return ncb__wjudge(&p->w, &c, e->victims, e->nvictims, &e->culprit);
}

/* ---- acting: refusing a call, or making it no-replace ---- */

/*
 * The flags argument rewritten: MAP_FIXED to MAP_FIXED_NOREPLACE for
 * mmap (its fourth), SHM_REMAP cleared for shmat (its third; ipc's is its
 * third too).  The filter is run again on the new arguments, which it
 * lets through.
 */
static int make_noreplace(pid_t tid, const struct watch_event *e)
{
	if (wcall_family(e->call) == WC_MMAP)
		return warch_edit_arg(tid, e->compat, 3, WC_MAP_FIXED,
				      NCB_MAP_FIXED_NOREPLACE);
	return warch_edit_arg(tid, e->compat, 2, WC_SHM_REMAP, 0);
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

	switch (wcall_family(e->call)) {
	case WC_MREMAP:
		return (a[3] & ~7ULL) || !(a[3] & WC_MREMAP_MAYMOVE) ||
		       ((a[0] | a[4]) & (page - 1)) || !a[2] ||
		       ((a[3] & WC_MREMAP_DONTUNMAP) && a[1] != a[2]) ||
		       ncb_maps_find(maps, a[0], &m) != 1;
	case WC_SHMAT:
		return ((a[1] & (SHMLBA - 1)) && !(a[2] & WC_SHM_RND)) ||
		       e->ipc_version == 1 || e->shm_bad;
	default:
		return (a[0] & (page - 1)) || !a[1] || (a[5] & (page - 1));
	}
}

/* What act() did with a call. */
enum act {
	ACT_RUN,		/* let it run as asked */
	ACT_REFUSED,		/* skipped: the caller sees EEXIST */
	ACT_NOREPLACE,		/* made no-replace: its result wanted */
};

/*
 * What the mode does with a call.  An mmap is made no-replace (the
 * kernel decides atomically: EEXIST for what is there by then, or its
 * own error first); so is every fixed placement under --upgrade but over
 * the caller's own memory.  mremap has no such form, shmat's (without
 * SHM_REMAP) answers EINVAL, not EEXIST, and i386's old_mmap keeps its
 * arguments in memory: a clobber there is refused.
 */
static enum act act(struct tracer *t, struct watch_event *e,
		    struct ncb_maps *maps)
{
	int clobber = NCB__WC_CLOBBER(e->cls) || e->cls == NCB__WC_UNKNOWN;
	int mmap = e->call == WC_MMAP;

	if (t->o->mode == WATCH_REPORT || (!clobber && (t->o->mode ==
		WATCH_DENY || e->cls != NCB__WC_NOTHING)))
		return ACT_RUN;
	/*
	 * No-replace, the kernel would find the collision before a missing
	 * mapping type (EEXIST, not EINVAL): such a call is left to fail.
	 * It refuses MAP_SHARED_VALIDATE with the flag (EOPNOTSUPP): such a
	 * call is refused here instead.
	 */
	if (mmap && !(e->args[3] & WC_MAP_TYPE_BITS))
		return ACT_RUN;
	mmap = mmap &&
	       (e->args[3] & WC_MAP_TYPE_BITS) != WC_MAP_SHARED_VALIDATE;
	if (mmap || (wcall_family(e->call) == WC_SHMAT && !clobber))
		return make_noreplace(e->tid, e) ? ACT_RUN : ACT_NOREPLACE;
	if (!clobber || kernel_refuses(e, (uint64_t)t->page, maps))
		return ACT_RUN;
	return warch_skip(e->tid, -EEXIST) ? ACT_RUN : ACT_REFUSED;
}

/*
 * A call done: counted by class, and reported if it clobbered, or its
 * maker unknown, or (made no-replace) was refused.  A clobber's result
 * says whether it was one: refused by the kernel for its arguments, it
 * replaced nothing (counted as invalid); made no-replace and placed after
 * all, what was there had gone meanwhile.
 */
static void finish(struct tracer *t, struct task *k, struct watch_event *e)
{
	struct proc *p = k->proc;
	int as_asked = e->action == WA_REPORTED;
	int judged = e->cls != NCB__WC_UNKNOWN;

	if (!NCB__WC_BENIGN(e->cls) && e->cls && e->have_result) {
		if (e->result < 0 && (as_asked || e->result != -EEXIST)) {
			p->sum.invalid++;
			trace_free_event(e);
			return;
		}
		if (e->result >= 0 && !as_asked)
			e->cls = NCB__WC_NOTHING;
	}
	if (e->cls == NCB__WC_UNKNOWN)
		p->sum.unjudged++;
	else
		p->sum.by_class[e->cls]++;
	/* Upgraded over free space and refused: another mapped there. */
	if (NCB__WC_CLOBBER(e->cls) || e->cls == NCB__WC_UNKNOWN ||
	    (e->have_result && e->result == -EEXIST)) {
		e->unjudged = !judged;
		if (!e->creators)
			describe_creators(p, e);
		t->o->report(e, t->o->arg);
	}
	trace_free_event(e);
}

/* A call let go: to its exit stop, where a hold it has is released. */
static void go_on(struct tracer *t, struct task *k)
{
	if (k->holding)
		ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
	else
		trace_resume(t, k->tid, 0);
}

/*
 * A call that could not be judged (the process's maps unreadable):
 * reported, and but for the report mode refused, since what it would
 * replace is unknown.
 */
static void unjudged(struct tracer *t, struct task *k, struct watch_event *e)
{
	e->unjudged = 1;
	e->action = WA_REPORTED;
	if (t->o->mode != WATCH_REPORT && !warch_skip(k->tid, -EEXIST)) {
		e->action = WA_DENIED;
		k->refused = t->attached ? -EEXIST : 0;
	}
	k->proc->sum.unjudged++;
	t->o->report(e, t->o->arg);
	trace_free_event(e);
	go_on(t, k);
}

/*
 * The break moved to brk (brk(2) answers where it is, moved or not):
 * memory it grew over was made by the kernel for the heap, whatever a
 * record of memory unmapped there before says.
 */
static void moved_brk(struct proc *p, pid_t tid, uint64_t brk)
{
	uint64_t from = p->brk ? p->brk : trace_start_brk(tid);

	if (from && brk > from)
		ncb__wregions_cut(&p->space->regions, from, brk);
	p->brk = brk;
}

/*
 * At a call's exit: a refused one's answer set; a placement's region
 * recorded, and a fixed one's result read and the call finished.
 */
void trace_syscall_exit_fix(struct tracer *t, struct task *k,
			    const struct syscall_info *si)
{
	struct watch_event *e = k->pending;

	k->pending = NULL;
	if (k->refused)
		warch_set_result(k->tid, k->refused);
	k->refused = 0;
	if (k->set_mm && !si->exit.rval)
		trace_exec_in_place(t, k);
	k->set_mm = 0;
	if (k->brk)
		moved_brk(k->proc, k->tid, (uint64_t)si->exit.rval);
	k->brk = 0;
	if (!e)
		return;
	record_region(t, k, e, si->exit.rval);
	if (e->plain) {
		trace_free_event(e);
		return;
	}
	e->have_result = 1;
	e->result = si->exit.rval;
	finish(t, k, e);
}

static void on_syscall_exit(struct tracer *t, struct task *k,
			    const struct syscall_info *si)
{
	trace_syscall_exit_fix(t, k, si);
	trace_resume(t, k->tid, 0);
	if (k->holding)
		trace_hold_release(t, k);
}


/*
 * A plain placement (no fixed address; the filter stops them all but a
 * loader's spans of ELF objects, MAP_DENYWRITE): its region and who asked
 * for it, recorded at its exit, where the stack and the code are as they
 * are now and one look at the maps serves both.
 */
static void on_plain(struct task *k, struct watch_event *e)
{
	e->plain = 1;
	k->pending = e;
	ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
}

/*
 * A fixed placement stopped at (a seccomp stop, or attached, its entry):
 * judged, acted on, reported.
 */
static void on_call(struct tracer *t, struct task *k,
		    const struct syscall_info *si, int seccomp)
{
	struct watch_event *e = calloc(1, sizeof(*e));
	struct victims vs = { e, 0, (uint64_t)t->page };
	struct proc *p = k->proc;
	struct ncb_maps *maps;
	enum act how;

	if (!e)
		goto cont;
	e->pid = p->tgid;
	e->tid = k->tid;
	e->program = p->program;
	e->when = trace_since(t);
	e->pc = si->ip;
	e->sp = si->sp;
	if (decode(t, k, si, e))
		goto cont;
	if (!wcall_fixed(wcall_family(e->call), e->args)) {
		on_plain(k, e);
		return;
	}
	/* Judged and run with the process's other threads held still. */
	if (trace_hold_wanted(t, k)) {
		trace_free_event(e);
		trace_hold(t, k, seccomp);
		return;
	}
	p->sum.fixed++;
	maps = trace_proc_maps(t, p, k->tid);
	if (e->unjudged || !maps || victims_of(maps, e, &vs)) {
		unjudged(t, k, e);
		return;
	}
	/*
	 * Judged by the module that asked: past the C library's wrappers,
	 * which may be the library itself (its malloc over its own arena).
	 */
	watch_maker(maps, p->tgid, k->tid, e->pc, e->sp, e->compat,
		    &e->caller, 1);
	k->maker = e->caller.mod;
	k->maker_off = e->caller.offset;
	e->cls = judge(p, e);
	/* Reported: from the first frame outside the C library. */
	if (!NCB__WC_BENIGN(e->cls) && e->cls) {
		watch_caller(maps, p->tgid, k->tid, e->pc, e->sp, e->compat,
			     &e->caller, 1);
		/* Who made what, while the records still say it. */
		describe_creators(p, e);
		/* The picture's: as it is before the call runs. */
		if (t->o->want_maps &&
		    ncb__maps_text(k->tid, &e->maps, &e->maps_len))
			e->maps = NULL;
	}
	how = act(t, e, maps);
	e->action = how == ACT_REFUSED || (how == ACT_NOREPLACE &&
		    t->o->mode == WATCH_DENY) ? WA_DENIED :
		    how == ACT_NOREPLACE ? WA_UPGRADED : WA_REPORTED;
	/* Attached, a refused call's -EEXIST is set again at its exit. */
	k->refused = how == ACT_REFUSED && t->attached ? -EEXIST : 0;
	if (how == ACT_REFUSED) {
		e->have_result = 1;
		e->result = -EEXIST;
		finish(t, k, e);
		go_on(t, k);
		return;
	}
	/* The result and the region made at the call's exit. */
	k->pending = e;
	ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
	return;
cont:
	if (e)
		trace_free_event(e);
	go_on(t, k);
}

/*
 * A way around the watcher (calls.h's wcall_escape): reported, and but in
 * the report mode refused with EPERM, the kernel's answer to a tracer it
 * does not allow.  Programs that trace others (debuggers) or answer their
 * own filters' notifications (some sandboxes) cannot run so watched.
 */
static void on_escape(struct tracer *t, struct task *k,
		      const struct syscall_info *si, enum wescape esc)
{
	struct watch_event *e = calloc(1, sizeof(*e));
	struct ncb_maps *maps = trace_proc_maps(t, k->proc, k->tid);
	size_t i;

	k->proc->sum.escapes++;
	if (e) {
		e->pid = k->proc->tgid;
		e->tid = k->tid;
		e->program = k->proc->program;
		e->when = trace_since(t);
		e->escape = esc;
		e->compat = si->arch != warch.audit;
		e->name = esc == WE_LISTENER ? "seccomp" : "ptrace";
		for (i = 0; i < 6; i++)
			e->args[i] = si->seccomp.args[i];
		e->pc = si->ip;
		e->sp = si->sp;
		if (maps)
			watch_caller(maps, e->pid, k->tid, e->pc, e->sp,
				     e->compat, &e->caller, 1);
		e->action = WA_REPORTED;
	}
	if (t->o->mode != WATCH_REPORT && !warch_skip(k->tid, -EPERM)) {
		k->refused = t->attached ? -EPERM : 0;
		if (e) {
			e->action = WA_DENIED;
			e->have_result = 1;
			e->result = -EPERM;
		}
	}
	if (e) {
		t->o->report(e, t->o->arg);
		trace_free_event(e);
	}
	trace_resume(t, k->tid, 0);
}

/* A system call stop: the filter's, or attached, an entry or an exit. */
void trace_syscall_stop(struct tracer *t, struct task *k, int seccomp)
{
	struct syscall_info si = { 0 };
	enum wescape esc;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) < 0) {
		trace_resume(t, k->tid, 0);
		return;
	}
	if (si.op == INFO_EXIT) {
		on_syscall_exit(t, k, &si);
		return;
	}
	if (((seccomp && si.op == INFO_SECCOMP) || si.op == INFO_ENTRY) &&
	    trace_brk(&si)) {
		/* Its exit says where the break is. */
		k->brk = 1;
		if (!t->attached) {
			ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
			return;
		}
	} else if (((seccomp && si.op == INFO_SECCOMP) ||
		    si.op == INFO_ENTRY) && trace_set_mm(&si)) {
		/* Its exit says whether a new program is in place. */
		k->set_mm = 1;
		if (!t->attached) {
			ptrace(PTRACE_SYSCALL, k->tid, 0, 0);
			return;
		}
	} else if (((seccomp && si.op == INFO_SECCOMP) ||
		    si.op == INFO_ENTRY) && (esc = trace_escape(&si))) {
		on_escape(t, k, &si, esc);
		return;
	} else if ((seccomp && si.op == INFO_SECCOMP) ||
		   (si.op == INFO_ENTRY && trace_wanted(&si))) {
		on_call(t, k, &si, seccomp);
		return;
	}
	trace_resume(t, k->tid, 0);
}

/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch --system: every process on the machine, or those in a
 * scope, watched from the kernel (system.bpf.c) without stopping
 * them.  The BPF programs record every placement a process makes, plain
 * or fixed, with where the call came from (its last WS_MAKERS, a ring:
 * the oldest fall out first), and send each fixed placement that
 * replaced something with the records that meet its range.  It is judged
 * here by the same rules as under ptrace (ncb__wjudge), with what the
 * kernel saw at the call's entry: each record's maker decided as the
 * ptrace watcher decides it, past the C library's wrappers.  Memory of no
 * record (made before the watcher started, or its record fallen out) is
 * of no known maker: "unknown-maker", reported as unjudged, never benign.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "noclobber_intree.h"
#include "files.h"
#include "system.h"
#include "watch.h"
#include "watch-system.skel.h"

#define PAGE 4096ULL
/* linux/magic.h's CGROUP2_SUPER_MAGIC */
#define CGROUP2_MAGIC 0x63677270

/* The kernel's dev_t (major << 20 | minor) as user space's, and back. */
static uint64_t user_dev(uint64_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

static uint64_t kernel_dev(uint64_t dev)
{
	return ((uint64_t)major(dev) << 20) | minor(dev);
}

/* ---- libbpf's messages: kept for the error that needs them ---- */

static char last_msg[512];

static int keep_msg(enum libbpf_print_level level, const char *fmt,
		    va_list ap)
{
	char buf[512];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n)
		memcpy(last_msg, buf, n + 1);
	return 0;
}

/* ---- what the machine must allow ---- */

static int has_cap(const struct __user_cap_data_struct *d, unsigned int v)
{
	return !!(d[v / 32].effective & (1U << (v % 32)));
}

/*
 * Root, or CAP_BPF with CAP_PERFMON (the programs read kernel memory,
 * walk tasks, and, without the iterators, do arithmetic on a kernel
 * pointer's value); the kernel's BTF, which CO-RE and tp_btf need.
 * tracefs is not: tp_btf programs attach by BTF id.  0, or -errno with
 * why.
 */
static int allowed(char *why, size_t len)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) || !(has_cap(d, CAP_SYS_ADMIN) ||
	    (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON)))) {
		snprintf(why, len, "--system needs root, or CAP_BPF and "
			 "CAP_PERFMON");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, len, "--system needs the kernel's BTF "
			 "(/sys/kernel/btf/vmlinux: %s; a kernel built with "
			 "CONFIG_DEBUG_INFO_BTF)", strerror(errno));
		return -ENOENT;
	}
	return 0;
}

/*
 * How the programs walk a process: with the open-coded task and VMA
 * iterators (Linux 6.7), if the kernel's BTF has their kfuncs (1); or
 * reading the address space's maple tree (6.1) and the thread group's
 * list themselves (0: on_enter_tree and on_exit_tree are loaded).  What
 * the kernel offers, not its version, which a distribution's backports
 * make say little.  NCB_TEST_SYSTEM_TREE set in the environment asks
 * for the second anywhere, for the tests to compare the two.  -errno,
 * with why, on a kernel that has neither.
 */
static int walk_kind(char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int iters, tree;

	if (!btf)
		return 1;	/* the load will say why */
	iters = btf__find_by_name_kind(btf, "bpf_iter_task_vma_new",
				       BTF_KIND_FUNC) > 0 &&
		btf__find_by_name_kind(btf, "bpf_iter_task_new",
				       BTF_KIND_FUNC) > 0;
	tree = btf__find_by_name_kind(btf, "maple_tree",
				      BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	if (tree && (!iters || getenv("NCB_TEST_SYSTEM_TREE")))
		return 0;
	if (iters)
		return 1;
	snprintf(why, len, "--system needs Linux 6.1 or later (the maple "
		 "tree of VMAs, or 6.7's task and VMA iterators)");
	return -ENOTSUP;
}

/*
 * Whether the kernel lets a program of type (fmod_ret, lsm) attach to
 * function fn: one that changes nothing (returns 0), loaded and attached
 * for a moment.  0, or -errno.
 */
static int attaches(struct btf *btf, const char *fn, enum bpf_prog_type type,
		    enum bpf_attach_type at)
{
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = at);
	int id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC), fd, link;

	if (id <= 0)
		return -ENOENT;
	lo.attach_btf_id = (unsigned int)id;
	fd = bpf_prog_load(type, "ncb_probe", "GPL", ret0, 2, &lo);
	if (fd < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0)
		link = -errno;
	else
		close(link);
	close(fd);
	return link < 0 ? link : 0;
}

/* None of the programs that refuse: the report mode's. */
static void no_refusers(struct watch_system *k)
{
	bpf_program__set_autoload(k->progs.deny_mmap, 0);
	bpf_program__set_autoload(k->progs.deny_shmat, 0);
	bpf_program__set_autoload(k->progs.deny_mmap_lsm, 0);
	bpf_program__set_autoload(k->progs.deny_shmat_lsm, 0);
	bpf_program__set_autoload(k->progs.deny_mremap, 0);
	bpf_program__set_autoload(k->progs.deny_mremap32, 0);
}

/*
 * With --deny, the programs that refuse: fmod_ret on the LSM hooks'
 * functions, else BPF LSM programs (mmap and shmat), and mremap's where
 * its system call may be made to fail; the calls refused (1 << family),
 * or -errno with why: nothing can be refused.  NCB_TEST_SYSTEM_LSM set
 * in the environment passes over fmod_ret.
 */
static int refusers(struct watch_system *k, char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	unsigned int calls = 1U << WC_MMAP | 1U << WC_SHMAT;
	int fmod, lsm = 0, mremap;

	if (!btf) {
		snprintf(why, len, "--deny: cannot read the kernel's BTF: %s",
			 strerror(errno));
		return -errno;
	}
	/* NCB_TEST_SYSTEM_LSM: the LSM programs, for the tests to try. */
	fmod = getenv("NCB_TEST_SYSTEM_LSM") ? -ENOTSUP :
	       attaches(btf, "security_mmap_file", BPF_PROG_TYPE_TRACING,
			BPF_MODIFY_RETURN);
	if (fmod)
		lsm = attaches(btf, "bpf_lsm_mmap_file", BPF_PROG_TYPE_LSM,
			       BPF_LSM_MAC);
	mremap = attaches(btf, "__x64_sys_mremap", BPF_PROG_TYPE_TRACING,
			  BPF_MODIFY_RETURN);
	bpf_program__set_autoload(k->progs.deny_mmap, !fmod);
	bpf_program__set_autoload(k->progs.deny_shmat, !fmod);
	bpf_program__set_autoload(k->progs.deny_mmap_lsm, fmod && !lsm);
	bpf_program__set_autoload(k->progs.deny_shmat_lsm, fmod && !lsm);
	bpf_program__set_autoload(k->progs.deny_mremap, !mremap);
	/* An i386 program's: where the kernel runs them. */
	bpf_program__set_autoload(k->progs.deny_mremap32, !mremap &&
		btf__find_by_name_kind(btf, "__ia32_sys_mremap",
				       BTF_KIND_FUNC) > 0);
	btf__free(btf);
	if (fmod && lsm) {
		snprintf(why, len, "--system --deny: this kernel lets no BPF "
			 "program refuse a call (fmod_ret on "
			 "security_mmap_file: %s; BPF LSM: %s); see "
			 "noclobber(7)", strerror(-fmod), strerror(-lsm));
		return -EOPNOTSUPP;
	}
	return (int)(calls | (mremap ? 0 : 1U << WC_MREMAP));
}

/* Why the programs would not load, in words. */
static void load_failed(int e, char *why, size_t len)
{
	const char *hint = "";

	if (e == -EPERM)
		hint = " (the kernel refused them: lockdown, a container, or "
		       "kernel.unprivileged_bpf_disabled)";
	snprintf(why, len, "cannot load the BPF programs: %s%s%s%s",
		 strerror(-e), hint, last_msg[0] ? ": " : "", last_msg);
}

/* ---- files: their paths and kinds, by device and inode ---- */

/*
 * The files the programs sent paths for (or that were found in a
 * process's maps), by device and inode (files.h), each with room for its
 * path.  Twice as many as the programs remember having sent (files_sent),
 * so that a path is here as long as they would not send it again; one
 * given up all the same is forgotten there too, to be sent again.
 */
#define KNOWN 16384
#define PATH_BYTES (WS_COMPONENTS * WS_COMPONENT + 8)

static struct wfiles known;
static int sent_fd = -1;		/* the programs' files_sent */

static void forget(const struct wfile *k, void *arg)
{
	struct ws_file_key key = { kernel_dev(k->dev), k->ino };

	(void)arg;
	if (sent_fd >= 0)
		bpf_map_delete_elem(sent_fd, &key);
}

/* The file's entry, if it has a path; NULL. */
static struct wfile *known_find(uint64_t dev, uint64_t ino)
{
	struct wfile *k = wfiles_find(&known, dev, ino);

	return k && k->path ? k : NULL;
}

/* The file's entry, found or made, with room for a path; NULL. */
static struct wfile *known_add(uint64_t dev, uint64_t ino)
{
	struct wfile *k = wfiles_add(&known, dev, ino);

	if (k && !k->path)
		k->path = calloc(1, PATH_BYTES);
	/* No room for its path: the slot stays free. */
	if (k && !k->path) {
		wfiles_drop(k);
		return NULL;
	}
	return k;
}

/* A path the programs sent: its names, leaf first, joined. */
static void on_file(const struct ws_file *f)
{
	struct wfile *k = known_add(user_dev(f->dev), f->ino);
	size_t at = 0;
	unsigned int i;

	if (!k)
		return;
	if (f->truncated)
		at += (size_t)snprintf(k->path, PATH_BYTES, "...");
	for (i = f->ncomp; i-- > 0 && at < PATH_BYTES;)
		at += (size_t)snprintf(k->path + at, PATH_BYTES - at,
				       "/%.*s", WS_COMPONENT, f->comp[i]);
	if (!f->ncomp && !f->truncated)
		snprintf(k->path, PATH_BYTES, "/");
}

/*
 * Whether the file is an ELF object: opened by its path as process pid
 * sees it (its root), or as this one does once it is gone, and only if
 * the path still names that file.
 */
static int is_elf(struct wfile *k, pid_t pid)
{
	char buf[PATH_BYTES + 32];
	struct stat st;
	int fd;

	if (k->elf >= 0 || k->path[0] != '/')
		return k->elf > 0;
	snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, k->path);
	fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		fd = open(k->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st) && st.st_ino == k->ino && st.st_dev == k->dev &&
	    S_ISREG(st.st_mode))
		k->elf = wfile_magic(fd);
	close(fd);
	return k->elf > 0;
}

/*
 * A file of process pid, by device and inode: its path and kind; NULL
 * if no path came for it (the programs' table forgot it, or their record
 * was lost) and the process has no mapping of it any more.
 */
static struct wfile *file_of(pid_t pid, uint64_t dev, uint64_t ino)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct wfile *k = known_find(dev, ino);
	struct ncb_maps *maps;

	if (k || !ino || ncb_maps_open(&maps, pid))
		return k;
	while (ncb_maps_next(maps, &m) == 1)
		if (m.inode == ino &&
		    makedev(m.dev_major, m.dev_minor) == dev) {
			k = known_add(dev, ino);
			if (k)
				snprintf(k->path, PATH_BYTES, "%.*s",
					 PATH_BYTES - 1, m.path);
			break;
		}
	ncb_maps_close(maps);
	return k;
}

/* ---- one event ---- */

struct sys {
	const struct watch_opts *o;
	struct watch_system *skel;
	uint64_t t0;			/* CLOCK_BOOTTIME at the start, ns */
	struct proc_count {
		struct ws_key key;
		unsigned long by_class[NCB__WC_SPANS + 1];
		unsigned long unjudged;
	} *procs;
	size_t nprocs, cprocs;
	unsigned long long lost_seen;
};

static struct proc_count *proc_count(struct sys *s, unsigned int tgid,
				     unsigned long long start)
{
	struct proc_count *p;
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].key.tgid == tgid &&
		    s->procs[i].key.start == start)
			return &s->procs[i];
	if (s->nprocs == s->cprocs) {
		p = realloc(s->procs, (s->cprocs ? 2 * s->cprocs : 64) *
			    sizeof(*p));
		if (!p)
			return NULL;
		s->procs = p;
		s->cprocs = s->cprocs ? 2 * s->cprocs : 64;
	}
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->key.tgid = tgid;
	p->key.start = start;
	return p;
}

/* A mapping the kernel saw, as the rules read mappings. */
static void victim(const struct ws_event *w, const struct ws_vma *v,
		   struct ncb__wvictim *out, char *path, size_t len)
{
	struct wfile *k = NULL;
	uint64_t dev = user_dev(v->dev);

	memset(out, 0, sizeof(*out));
	out->m.size = sizeof(out->m);
	out->m.start = v->start;
	out->m.end = v->end;
	out->m.prot = (v->flags & 1 ? PROT_READ : 0) |
		      (v->flags & 2 ? PROT_WRITE : 0) |
		      (v->flags & 4 ? PROT_EXEC : 0);
	out->m.shared = !!(v->flags & 0x80);
	out->has_data = !!(v->kind & WS_K_DATA);
	path[0] = '\0';
	if (v->kind & WS_K_FILE) {
		out->m.offset = v->pgoff * PAGE;
		out->m.inode = v->ino;
		out->m.dev_major = major(dev);
		out->m.dev_minor = minor(dev);
		out->file_end = wc_page_up(v->size, PAGE);
		k = file_of((pid_t)w->tgid, dev, v->ino);
		/* Mapped executable there, or by its header. */
		out->elf = (v->kind & WS_K_EXEC) ||
			   (k && is_elf(k, (pid_t)w->tgid));
		snprintf(path, len, "%.*s", (int)len - 1,
			 k ? k->path : v->name);
	} else if (v->kind & WS_K_HEAP) {
		snprintf(path, len, "[heap]");
	} else if (v->kind & WS_K_STACK) {
		snprintf(path, len, "[stack]");
	} else if (v->kind & WS_K_SPECIAL) {
		snprintf(path, len, "%.*s", WS_NAME, v->name);
	}
	out->m.path = path;
}

static void site(const struct ws_event *w, const struct ws_site *s,
		 struct watch_site *out)
{
	uint64_t dev = user_dev(s->dev);
	struct wfile *k = file_of((pid_t)w->tgid, dev, s->ino);

	memset(out, 0, sizeof(*out));
	out->addr = s->addr;
	out->offset = s->offset;
	if (s->ino) {
		out->mod.dev = dev;
		out->mod.ino = s->ino;
	}
	snprintf(out->module, sizeof(out->module), "%.*s",
		 (int)sizeof(out->module) - 1, k ? k->path : s->name);
}

/* A record's frame as a site: a return address names its call. */
static void frame_site(const struct ws_event *w, const struct ws_frame *f,
		       int ret, struct watch_site *out)
{
	uint64_t dev = user_dev(f->dev);
	struct wfile *k = f->ino ? file_of((pid_t)w->tgid, dev, f->ino) :
			  NULL;

	memset(out, 0, sizeof(*out));
	if (f->ino) {
		out->mod.dev = dev;
		out->mod.ino = f->ino;
	}
	out->offset = f->off - (ret && f->off);
	snprintf(out->module, sizeof(out->module), "%.*s",
		 (int)sizeof(out->module) - 1, k ? k->path : "");
}

/*
 * Whether an i386 frame past the C library's is the interpreter's, left
 * in a wrapper's frame by the lazy binding of its first call (glibc's
 * ld.so makes its own calls through wrappers of its own, not the C
 * library's): not the caller.
 */
static int lazy_binding(const struct ws_event *w, const struct watch_site *s,
			unsigned int i)
{
	return w->compat && i > 1 && w->interp_ino &&
	       s->mod.ino == w->interp_ino &&
	       s->mod.dev == user_dev(w->interp_dev);
}

/*
 * The caller: the call's own module, or past the C library's wrappers
 * (and, for an i386 program, the vDSO's entry) the first return address
 * outside it, as watch_caller() walks; the call's own if none is.
 */
static void caller(const struct ws_event *w, struct watch_site *out)
{
	unsigned int i, n = w->made.nframes < WS_FRAMES ? w->made.nframes :
			    WS_FRAMES;
	struct watch_site s;

	site(w, &w->pc, out);
	if (!(w->compat && !w->pc.ino) && !watch_is_libc(out->module))
		return;
	for (i = 1; i < n; i++) {
		frame_site(w, &w->made.f[i], 1, &s);
		if (!watch_is_libc(s.module) && !lazy_binding(w, &s, i)) {
			*out = s;
			return;
		}
	}
}

/*
 * The caller's symbol, for a report: its module opened as the process
 * sees it (its root), or as the tool does once the process is gone.
 */
static void symbol(const struct ws_event *w, struct watch_site *site)
{
	char buf[PATH_BYTES + 32];

	if (site->module[0] != '/')
		return;
	snprintf(buf, sizeof(buf), "/proc/%u/root%s", w->tgid, site->module);
	if (watch_symbol(buf, site->offset, site))
		watch_symbol(site->module, site->offset, site);
}

/* ---- who made a region ---- */

/*
 * Whether a frame in the C library is one of its wrappers' or their
 * helpers' (no symbol), by its symbol: remembered by where it is, the
 * same few calls making most regions.
 */
static int libc_wrapper(const struct ws_event *w, struct watch_site *s)
{
	static struct seen {
		uint64_t dev, ino, off;
		int wrapper;
	} seen[64];
	struct seen *c = &seen[(s->mod.ino ^ s->offset) % 64];

	if (c->ino != s->mod.ino || c->dev != s->mod.dev ||
	    c->off != s->offset) {
		symbol(w, s);
		c->dev = s->mod.dev;
		c->ino = s->mod.ino;
		c->off = s->offset;
		c->wrapper = !s->symbol[0] || watch_wrapper(s->symbol);
	}
	return c->wrapper;
}

/*
 * The module that made a record's region, as watch_maker() decides it
 * for a stopped call: the call's own, or past the C library's wrappers.
 * x86_64: the return address a leaf wrapper left, which may be the C
 * library itself (its malloc making a block).  i386: from the vDSO's
 * entry, the return addresses in order, past the C library's wrappers
 * and their helpers (by their symbols) to the first other code, else
 * the last of the C library's.  0, or -1: not known.
 */
static int maker(const struct ws_event *w, const struct ws_made *r,
		 struct watch_site *out)
{
	unsigned int i, n = r->nframes < WS_FRAMES ? r->nframes : WS_FRAMES;
	struct watch_site s;
	int libc = 0;

	if ((r->flags & WS_M_UNKNOWN) || !n)
		return -1;
	frame_site(w, &r->f[0], 0, out);
	if (!(w->compat && !r->f[0].ino) && !watch_is_libc(out->module))
		return 0;
	if (!w->compat) {
		if (n > 1)
			frame_site(w, &r->f[1], 1, out);
		return 0;
	}
	for (i = 1; i < n; i++) {
		frame_site(w, &r->f[i], 1, &s);
		if (libc && lazy_binding(w, &s, i))
			continue;
		*out = s;
		if (!watch_is_libc(s.module) || !libc_wrapper(w, &s))
			return 0;
		libc = 1;
	}
	return libc ? 0 : -1;
}

/*
 * The records meeting the call's range as the rules take them: in
 * address order, a newer one replacing what it covers of older ones
 * (the event has them newest first), each by the module that made it
 * (none, 0: not known).  0, or -ENOMEM.
 */
static int regions(struct sys *s, const struct ws_event *w,
		   struct ncb__wregions *set)
{
	size_t i = w->nregions < WS_EVENT_REGIONS ? w->nregions :
		   WS_EVENT_REGIONS;
	struct watch_site site;
	struct ncb__wregion g;

	while (i-- > 0) {
		const struct ws_made *r = &w->regions[i];

		memset(&g, 0, sizeof(g));
		g.start = r->start;
		g.end = r->end;
		g.file.ino = r->file_ino;
		g.file.dev = r->file_ino ? user_dev(r->file_dev) : 0;
		g.call = r->call;
		g.when = (double)((int64_t)(r->ns - s->t0)) / 1e9;
		if (!maker(w, r, &site)) {
			g.by = site.mod;
			g.by_off = site.offset;
		}
		if (ncb__wregions_add(set, &g))
			return -ENOMEM;
	}
	return 0;
}

/* Who made each region victim: its call, module, symbol; NULL. */
static void makers(const struct ws_event *w, const struct ncb__wproc *p,
		   const struct ncb__wvictim *v, size_t n,
		   struct watch_made *made, struct watch_made **out)
{
	const struct ncb__wregion *g;
	const struct wfile *k;
	size_t i;

	for (i = 0; i < n; i++) {
		out[i] = NULL;
		if (v[i].kind != NCB__W_REGION || v[i].region >= p->nregions)
			continue;
		g = &p->regions[v[i].region];
		if (!g->by.ino)
			continue;
		k = known_find(g->by.dev, g->by.ino);
		memset(&made[i], 0, sizeof(made[i]));
		made[i].site.mod = g->by;
		made[i].site.offset = g->by_off;
		snprintf(made[i].site.module, sizeof(made[i].site.module),
			 "%.*s", (int)sizeof(made[i].site.module) - 1,
			 k ? k->path : "");
		symbol(w, &made[i].site);
		made[i].call = wcall_name((enum wcall)g->call, 0);
		made[i].when = g->when;
		out[i] = &made[i];
	}
}

/* Who made each victim, in words. */
static void creators(const struct ncb__wvictim *v, size_t n,
		     struct watch_made *const *made, char **out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i] = malloc(320);
		if (!out[i])
			continue;
		if (v[i].kind != NCB__W_REGION)
			watch_creator(&v[i], out[i], 320);
		else if (made[i])
			watch_made_text(made[i], out[i], 320);
		else
			snprintf(out[i], 320, "a placement of no known "
				 "maker (code in no file, or an mremap of "
				 "memory of no record)");
	}
}

/* Whether plain anonymous memory is among the victims: a stack maybe. */
static int plain(const struct ws_event *w)
{
	unsigned int i;

	for (i = 0; i < w->nvictims && i < WS_VICTIMS; i++)
		if (!(w->v[i].kind & (WS_K_FILE | WS_K_HEAP | WS_K_STACK |
				      WS_K_SPECIAL)))
			return 1;
	return 0;
}

static void count_class(struct sys *s, const struct ws_event *w,
			enum ncb__wclass c, int unjudged)
{
	struct proc_count *p = proc_count(s, w->tgid, w->leader_start);

	if (!p)
		return;
	if (unjudged)
		p->unjudged++;
	else
		p->by_class[c]++;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sys *s = ctx;
	const struct ws_event *w = data;
	struct ncb__wvictim v[WS_VICTIMS];
	static char paths[WS_VICTIMS][PATH_BYTES];
	char program[17], *names[WS_VICTIMS];
	struct ncb__wthread th[WS_THREADS + 1];
	struct watch_made made[WS_VICTIMS], *madep[WS_VICTIMS];
	struct ncb__wregions rg = { 0 };
	struct watch_event e = { 0 };
	struct ncb__wproc p = { 0 };
	struct ncb__wcall c = { 0 };
	size_t i, n;

	if (size == sizeof(struct ws_file) &&
	    ((const struct ws_file *)data)->type == WS_FILE) {
		on_file(data);
		return 0;
	}
	if (size < sizeof(*w) || w->type != WS_EVENT)
		return 0;
	n = w->nvictims < WS_VICTIMS ? w->nvictims : WS_VICTIMS;
	for (i = 0; i < n; i++)
		victim(w, &w->v[i], &v[i], paths[i], sizeof(paths[i]));
	for (i = 0; i < w->nthreads && i < WS_THREADS; i++) {
		th[i].tid = (pid_t)w->threads[i].tid;
		th[i].sp = w->threads[i].sp;
		th[i].top = 0;
	}
	p.exe.dev = w->exe_ino ? user_dev(w->exe_dev) : 0;
	p.exe.ino = w->exe_ino;
	/* No interpreter: the program is its own loader (ld.so run so). */
	p.interp = p.exe;
	if (w->interp_ino) {
		p.interp.dev = user_dev(w->interp_dev);
		p.interp.ino = w->interp_ino;
	}
	/* The caller too: its own stack is its own (OWN_STACK). */
	th[i].tid = (pid_t)w->tid;
	th[i].sp = w->sp;
	th[i++].top = 0;
	p.threads = th;
	p.nthreads = i;
	/* No room for them: the memory they name is of no known maker. */
	if (regions(s, w, &rg))
		rg.n = 0;
	p.regions = rg.r;
	p.nregions = rg.n;
	snprintf(program, sizeof(program), "%.16s", w->comm);
	e.pid = (pid_t)w->tgid;
	e.tid = (pid_t)w->tid;
	e.program = program;
	e.call = (enum wcall)w->call;
	e.name = wcall_name(e.call, (int)w->compat);
	e.compat = (int)w->compat;
	memcpy(e.args, w->args, sizeof(e.args));
	e.start = w->start;
	e.end = w->end;
	e.pc = w->pc.addr;
	e.sp = w->sp;
	e.result = w->result;
	e.have_result = 1;
	e.when = (double)(w->ns - s->t0) / 1e9;
	e.action = w->refused ? WA_DENIED : WA_REPORTED;
	e.gone = kill((pid_t)w->tgid, 0) && errno == ESRCH;
	caller(w, &e.caller);
	c.start = w->start;
	c.end = w->end;
	c.tid = e.tid;
	c.sp = w->sp;
	c.caller = e.caller.mod;
	if (w->file_ino) {
		c.file.dev = user_dev(w->file_dev);
		c.file.ino = w->file_ino;
	}
	e.victims = v;
	e.nvictims = n;
	e.unjudged = w->err != 0;
	/*
	 * More mappings than were sent: judged up to the last one sent; a
	 * clobber there is one, anything else is not known.
	 */
	if (w->truncated && n && v[n - 1].m.end < c.end)
		c.end = v[n - 1].m.end;
	e.cls = e.unjudged ? NCB__WC_NOTHING :
		ncb__wjudge(&p, &c, v, n, &e.culprit);
	if ((w->truncated || (w->more_threads && plain(w))) &&
	    !NCB__WC_CLOBBER(e.cls))
		e.unjudged = 1;
	/* Who made what it replaces not known: neither benign nor not. */
	if (e.cls == NCB__WC_UNKNOWN)
		e.unjudged = 1;
	count_class(s, w, e.cls, e.unjudged);
	if (e.unjudged || NCB__WC_CLOBBER(e.cls) || w->refused) {
		symbol(w, &e.caller);
		makers(w, &p, v, n, made, madep);
		creators(v, n, madep, names);
		e.made = madep;
		e.creators = names;
		/* Read late: the victims say what the range held before. */
		if (s->o->want_maps && !e.gone &&
		    !ncb__maps_text(e.pid, &e.maps, &e.maps_len))
			e.maps_after = 1;
		s->o->report(&e, s->o->arg);
		free(e.maps);
		for (i = 0; i < n; i++)
			free(names[i]);
	}
	ncb__wregions_free(&rg);
	return 0;
}

/* ---- the scope ---- */

static int add_scope(struct watch_system *k,
		     const struct watch_sys_opts *so, char *why, size_t len)
{
	unsigned char one = 1;
	unsigned int i, v;
	struct statfs fs;
	char comm[16];
	int fd;

	for (i = 0; i < so->npids; i++) {
		v = (unsigned int)so->pids[i];
		if (bpf_map__update_elem(k->maps.scope_pids, &v, sizeof(v),
					 &one, 1, BPF_ANY))
			goto fail;
	}
	for (i = 0; i < so->nuids; i++) {
		v = (unsigned int)so->uids[i];
		if (bpf_map__update_elem(k->maps.scope_uids, &v, sizeof(v),
					 &one, 1, BPF_ANY))
			goto fail;
	}
	for (i = 0; i < so->ncomms; i++) {
		memset(comm, 0, sizeof(comm));
		/* As the kernel keeps it: 15 bytes and a NUL. */
		strncpy(comm, so->comms[i], sizeof(comm) - 1);
		if (bpf_map__update_elem(k->maps.scope_comms, comm,
					 sizeof(comm), &one, 1, BPF_ANY))
			goto fail;
	}
	for (i = 0; i < so->ncgroups; i++) {
		fd = open(so->cgroups[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(why, len, "--cgroup %s: %s", so->cgroups[i],
				 strerror(errno));
			return -errno;
		}
		if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_MAGIC) {
			close(fd);
			snprintf(why, len, "--cgroup %s: not a directory of "
				 "the cgroup v2 hierarchy", so->cgroups[i]);
			return -EINVAL;
		}
		v = i;
		if (bpf_map__update_elem(k->maps.scope_cgroups, &v, sizeof(v),
					 &fd, sizeof(fd), BPF_ANY)) {
			close(fd);
			snprintf(why, len, "--cgroup %s: %s (not a directory "
				 "of the cgroup v2 hierarchy?)",
				 so->cgroups[i], strerror(errno));
			return -EINVAL;
		}
		close(fd);
	}
	return 0;
fail:
	snprintf(why, len, "cannot set the scope: %s", strerror(errno));
	return -errno;
}

/* ---- the loop ---- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void own_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Events the ring buffer had no room for since the last look. */
static void note_lost(struct sys *s)
{
	unsigned long long now = s->skel->bss->lost;

	if (now != s->lost_seen && s->o->lost)
		s->o->lost((unsigned long)(now - s->lost_seen),
			   (unsigned long)now, s->o->arg);
	s->lost_seen = now;
}

/* A summary per process that made fixed placements in scope. */
static void summaries(struct sys *s)
{
	int fd = bpf_map__fd(s->skel->maps.counts);
	struct ws_key key, next, *at = NULL;
	struct watch_summary sum;
	struct proc_count *p;
	struct ws_count c;
	char program[17];

	while (!bpf_map_get_next_key(fd, at, &next)) {
		key = next;
		at = &key;
		if (bpf_map_lookup_elem(fd, &key, &c))
			continue;
		memset(&sum, 0, sizeof(sum));
		p = proc_count(s, key.tgid, key.start);
		if (p) {
			memcpy(sum.by_class, p->by_class,
			       sizeof(sum.by_class));
			sum.unjudged = p->unjudged;
		}
		snprintf(program, sizeof(program), "%.16s", c.comm);
		sum.pid = (pid_t)key.tgid;
		sum.program = program;
		sum.fixed = c.fixed;
		sum.by_class[NCB__WC_NOTHING] += c.free;
		sum.by_class[NCB__WC_RESERVATION] += c.reserved;
		sum.invalid = c.invalid;
		sum.lost = c.lost;
		s->o->summary(&sum, s->o->arg);
	}
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int watch_system(const struct watch_sys_opts *so, const struct watch_opts *o,
		 char *why, size_t whylen)
{
	struct sys s = { .o = o };
	struct ring_buffer *rb = NULL;
	int e, iters, refused = 0;

	e = allowed(why, whylen);
	if (e)
		return e;
	if (wfiles_init(&known, KNOWN, forget, NULL))
		return -ENOMEM;
	libbpf_set_print(keep_msg);
	s.skel = watch_system__open();
	if (!s.skel) {
		e = -errno;
		load_failed(e, why, whylen);
		goto out;
	}
	s.skel->rodata->self = (unsigned int)getpid();
	s.skel->rodata->huge_default = wfile_huge_default();
	s.skel->rodata->scoped = so->npids || so->nuids || so->ncomms ||
				 so->ncgroups;
	s.skel->rodata->ncgroups = (unsigned int)so->ncgroups;
	iters = walk_kind(why, whylen);
	if (iters < 0) {
		e = iters;
		goto out;
	}
	bpf_program__set_autoload(s.skel->progs.on_enter, iters);
	bpf_program__set_autoload(s.skel->progs.on_exit, iters);
	bpf_program__set_autoload(s.skel->progs.on_enter_tree, !iters);
	bpf_program__set_autoload(s.skel->progs.on_exit_tree, !iters);
	if (o->mode == WATCH_DENY) {
		refused = refusers(s.skel, why, whylen);
		if (refused < 0) {
			e = refused;
			goto out;
		}
		s.skel->rodata->deny = 1;
	} else {
		no_refusers(s.skel);
	}
	if (so->buffer)
		bpf_map__set_max_entries(s.skel->maps.events,
					 (unsigned int)so->buffer);
	e = watch_system__load(s.skel);
	if (e) {
		load_failed(e, why, whylen);
		goto out;
	}
	e = add_scope(s.skel, so, why, whylen);
	if (e)
		goto out;
	sent_fd = bpf_map__fd(s.skel->maps.files_sent);
	rb = ring_buffer__new(bpf_map__fd(s.skel->maps.events), on_record, &s,
			      NULL);
	if (!rb) {
		e = -errno;
		snprintf(why, whylen, "cannot read the ring buffer: %s",
			 strerror(-e));
		goto out;
	}
	own_signals();
	s.t0 = boot_ns();
	e = watch_system__attach(s.skel);
	if (e) {
		snprintf(why, whylen, "cannot attach the BPF programs: %s%s%s",
			 strerror(-e), last_msg[0] ? ": " : "", last_msg);
		goto out;
	}
	if (o->started)
		o->started((unsigned int)refused, o->arg);
	/*
	 * The programs wake the tool only when the ring buffer fills (each
	 * wake-up costs the call that sends it): read it every tenth of a
	 * second.
	 */
	while (!stop) {
		e = ring_buffer__poll(rb, 100);
		if (e >= 0 || e == -EINTR)
			e = ring_buffer__consume(rb);
		if (e < 0 && e != -EINTR) {
			snprintf(why, whylen, "reading the ring buffer: %s",
				 strerror(-e));
			goto out;
		}
		note_lost(&s);
	}
	/* What the programs sent before they were detached. */
	watch_system__detach(s.skel);
	ring_buffer__consume(rb);
	note_lost(&s);
	summaries(&s);
	e = 0;
out:
	ring_buffer__free(rb);
	watch_system__destroy(s.skel);
	free(s.procs);
	sent_fd = -1;
	wfiles_free(&known);
	return e;
}

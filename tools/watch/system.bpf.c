// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * noclobber watch --system, in the kernel.  At the entry of every fixed
 * mmap, mremap and shmat in scope: what the range holds (the VMA
 * iterator), the process's program and interpreter, its other threads'
 * stack pointers, and where the call comes from; kept in the task's
 * storage.  At the call's exit: one the kernel refused, or that replaced
 * nothing but free space and reservation pages, is counted and forgotten;
 * any other goes to the tool through the ring buffer with its result, to
 * be judged there (ncb__wjudge) and reported, with the records of who
 * made what it replaces: at the exit of every mmap, mremap and shmat,
 * plain or fixed, its region, its file and where it came from are kept
 * in the process's ring of records (history).  x86_64 programs, and i386
 * ones on it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kernel.h"
#include "system.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PAGE 4096ULL
#define AT_BASE 7
#define MAX_ERRNO 4095
#define PROT_ANY (VM_READ | VM_WRITE | VM_EXEC)

/* Set by the tool before loading. */
const volatile unsigned int scoped;	/* a scope was given */
const volatile unsigned int ncgroups;	/* entries in scope_cgroups */
const volatile unsigned int self;	/* the tool's own tgid */
const volatile __u64 huge_default;	/* the default huge page size */
const volatile unsigned int deny;	/* --deny: calls judged here */

/*
 * Not sent for want of room in the ring buffer: events, and paths (whose
 * files are then named by their last component); tasks with no storage.
 */
unsigned long long lost, lost_paths, no_storage;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/*
 * The tool is woken only once the ring buffer is a quarter full: it reads
 * it at least every tenth of a second anyway, and a wake-up for every
 * record would cost each call more than the record.
 */
static long wake_flags(unsigned long long size)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) + size >
	       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4 ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ws_event);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ws_key);
	__type(value, struct ws_count);
} counts SEC(".maps");

/*
 * Each process's placements, plain and fixed (system.h's ring), for who
 * made what a later call replaces.  A process whose records find no room
 * here has none: what it made is of no known maker.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct ws_key);
	__type(value, struct ws_makers);
} history SEC(".maps");

/* The files whose paths were sent. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ws_file_key);
	__type(value, unsigned char);
} files_sent SEC(".maps");

/* A new history, zeroed: too large for the stack. */
static const struct ws_makers history_zero;

/*
 * Room for a record being made, and for where one of its addresses is:
 * off the stack, which the calls that walk and look up share.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct ws_made);
} made_room SEC(".maps");

/* Where an address is, as a record needs it: ws_where()'s answer. */
struct where {
	unsigned long long addr;
	unsigned long long start, end;	/* its mapping */
	unsigned long long ino, off;	/* its file, the offset in it */
	unsigned int dev, flags;	/* VM_READ, VM_WRITE, VM_EXEC */
	unsigned long long file;	/* the struct file, for its path */
	unsigned long long huge;	/* a huge page mapping's page size */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct where);
} where_room SEC(".maps");

static struct where *where_room_of(void)
{
	unsigned int zero = 0;

	return bpf_map_lookup_elem(&where_room, &zero);
}

/* Room for a path record: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct ws_file);
} file_room SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, unsigned int);
	__type(value, unsigned char);
} scope_pids SEC(".maps"), scope_uids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, char[16]);
	__type(value, unsigned char);
} scope_comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, WS_SCOPE_CGROUPS);
	__type(key, unsigned int);
	__type(value, unsigned int);
} scope_cgroups SEC(".maps");

/*
 * The open-coded task and VMA iterators (Linux 6.7).  Weak: a kernel
 * without them loads the programs that do not call them (the tool picks
 * on_enter_tree and on_exit_tree there).
 */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it,
				 struct task_struct *task,
				 unsigned long long addr) __ksym __weak;
extern struct vm_area_struct *
bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void
bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;
extern int bpf_iter_task_new(struct bpf_iter_task *it,
			     struct task_struct *task,
			     unsigned int flags) __ksym __weak;
extern struct task_struct *
bpf_iter_task_next(struct bpf_iter_task *it) __ksym __weak;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym __weak;

static int is_compat(struct task_struct *t)
{
	return BPF_CORE_READ(t, thread_info.status) & TS_COMPAT;
}

/* The process's command name: its leader's (a thread may rename itself). */
static void proc_comm(struct task_struct *t, char *comm)
{
	struct task_struct *l = BPF_CORE_READ(t, group_leader);

	bpf_core_read(comm, 16, &l->comm);
}

/* Whether the calling task is one the tool was asked to watch. */
static int in_scope(struct task_struct *t)
{
	unsigned int tgid = bpf_get_current_pid_tgid() >> 32;
	unsigned int uid = (unsigned int)bpf_get_current_uid_gid();
	char comm[16] = {};
	unsigned int i;

	if (tgid == self)
		return 0;
	if (!scoped)
		return 1;
	if (bpf_map_lookup_elem(&scope_pids, &tgid) ||
	    bpf_map_lookup_elem(&scope_uids, &uid))
		return 1;
	proc_comm(t, comm);
	if (bpf_map_lookup_elem(&scope_comms, comm))
		return 1;
	for (i = 0; i < WS_SCOPE_CGROUPS && i < ncgroups; i++)
		if (bpf_current_task_under_cgroup(&scope_cgroups, i) == 1)
			return 1;
	return 0;
}

static struct ws_key key_of(struct task_struct *t)
{
	struct ws_key k = {};

	/* Loads, not helpers' reads (where_cb()): on every placement. */
	k.tgid = t->tgid;
	k.start = t->group_leader->start_time;
	return k;
}

/* The process's counts (its thread group, told apart by its start). */
static struct ws_count *count_of(struct task_struct *t)
{
	struct ws_key k = key_of(t);
	struct ws_count z = {}, *c;

	c = bpf_map_lookup_elem(&counts, &k);
	if (c)
		return c;
	proc_comm(t, z.comm);
	bpf_map_update_elem(&counts, &k, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&counts, &k);
}

/* A call's arguments as decoded, before the task's storage is taken. */
struct call {
	unsigned long long args[6];
	unsigned long long start, end;
	unsigned long long result_at;
};

/*
 * Whether the call's arguments make it a fixed placement (calls.h): its
 * kind, its range (for shmat its start alone, the end 0: the segment's
 * size is taken at the exit); 0 if not.  ipc's arguments are made
 * shmat's, where the address will be written kept.
 */
static int placement(enum wcall call, struct call *e)
{
	unsigned long long *a = e->args;

	if (!wcall_fixed(call, a))
		return 0;
	if (call == WC_IPC) {
		e->result_at = a[3];
		wcall_ipc_args(a);
		a[3] = a[4] = a[5] = 0;
	}
	wcall_range(call, a, 0, PAGE, wcall_mmap_granule(a, PAGE, huge_default),
		    PAGE, &e->start, &e->end);
	if (wcall_family(call) == WC_SHMAT)
		e->end = 0;
	return call;
}

/*
 * x86_64's calls: the arguments from the registers (the same at the
 * call's exit: the kernel gives back all but rax, rcx and r11).
 */
static enum wcall args64(struct pt_regs *r, long id, unsigned long long *a)
{
	a[0] = r->di;
	a[1] = r->si;
	a[2] = r->dx;
	a[3] = r->r10;
	a[4] = r->r8;
	a[5] = r->r9;
	return wcall_of(0, id);
}

/*
 * i386's: ebx, ecx, edx, esi, edi, ebp; old_mmap's six in a block in
 * memory.  WC_NONE if the block cannot be read.
 */
static enum wcall args32(struct pt_regs *r, long id, unsigned long long *a)
{
	enum wcall call = wcall_of(1, id);
	unsigned int blk[6] = {};
	int i;

	a[0] = (unsigned int)r->bx;
	a[1] = (unsigned int)r->cx;
	a[2] = (unsigned int)r->dx;
	a[3] = (unsigned int)r->si;
	a[4] = (unsigned int)r->di;
	a[5] = (unsigned int)r->bp;
	if (call == WC_OLD_MMAP) {
		if (bpf_probe_read_user(blk, sizeof(blk), (void *)a[0]))
			return WC_NONE;
		for (i = 0; i < 6; i++)
			a[i] = blk[i];
	}
	return call;
}

static int decode64(struct pt_regs *r, long id, struct call *e)
{
	return placement(args64(r, id, e->args), e);
}

static int decode32(struct pt_regs *r, long id, struct call *e)
{
	return placement(args32(r, id, e->args), e);
}

static struct file *mmap_file(struct task_struct *t,
			      const unsigned long long *a);
__noinline int ws_where(unsigned long long addr);

/*
 * A fixed call's range where the kernel rounds it to a huge page that
 * its flags do not say (trace-call.c's granule()): an mmap of a file on
 * hugetlbfs (ksys_mmap_pgoff: is_file_hugepages; the file system's block
 * size is its huge page size, hugetlbfs_fill_super), an mremap whose
 * source is a huge page mapping (its lengths aligned to it since 5.16,
 * mm/mremap.c).  The kernel replaces the whole huge page.
 */
static void huge_range(struct task_struct *t, struct call *e,
		       enum wcall call)
{
	unsigned long long *a = e->args, g = 0;
	struct super_block *sb;
	struct where *w;
	struct file *f;

	if (call == WC_MMAP) {
		/* A file's own (MAP_HUGETLB with any other file: EINVAL). */
		f = mmap_file(t, a);
		sb = f ? BPF_CORE_READ(f, f_inode, i_sb) : NULL;
		if (sb && BPF_CORE_READ(sb, s_magic) == HUGETLBFS_MAGIC)
			g = BPF_CORE_READ(sb, s_blocksize);
	} else if (call == WC_MREMAP && !ws_where(a[0])) {
		w = where_room_of();
		g = w && w->start <= a[0] && a[0] < w->end ? w->huge : 0;
	}
	if (g > PAGE && !(g & (g - 1)))
		wcall_range(call, a, 0, PAGE, g, PAGE, &e->start, &e->end);
}

/* The walk up a path, one step per bpf_loop call. */
struct walk {
	struct dentry *d;
	struct mount *m;
	struct vfsmount *vm;
	unsigned long long off;		/* of a mount's vfsmount in it */
	unsigned int n, done;
};

static long path_step(unsigned int i, struct walk *c)
{
	struct dentry *d = c->d, *up;
	struct vfsmount *vm = c->vm;
	struct mount *m = c->m, *pm;
	unsigned int zero = 0, n;
	struct ws_file *w;
	long len;

	if (d == BPF_CORE_READ(vm, mnt_root)) {
		/* A mount's root: on to where it is mounted. */
		pm = BPF_CORE_READ(m, mnt_parent);
		if (pm == m) {
			c->done = 1;
			return 1;
		}
		c->d = BPF_CORE_READ(m, mnt_mountpoint);
		c->m = pm;
		c->vm = (void *)pm + c->off;
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	w = bpf_map_lookup_elem(&file_room, &zero);
	n = c->n;
	if (!w || n >= WS_COMPONENTS)
		return 1;
	/*
	 * A dentry that is its own parent off a mount's root: a file of an
	 * internal mount (a memfd, shared anonymous memory, a SysV
	 * segment), named by itself.
	 */
	len = bpf_probe_read_kernel_str(w->comp[n], WS_COMPONENT,
					BPF_CORE_READ(d, d_name.name));
	if (len < 0 || BPF_CORE_READ(d, d_name.len) >= WS_COMPONENT) {
		/* A name cut short says so where it was cut. */
		w->comp[n][WS_COMPONENT - 4] = '.';
		w->comp[n][WS_COMPONENT - 3] = '.';
		w->comp[n][WS_COMPONENT - 2] = '.';
		w->comp[n][WS_COMPONENT - 1] = 0;
		w->truncated = 1;
	}
	c->n = n + 1;
	c->d = up;
	c->done = up == d;
	return c->done;
}

/*
 * A file's path, sent once: its dentries' names up to its mount's root,
 * then the mount point's, mount after mount, up to the root of the
 * namespace (as d_path walks, without its locks: a path renamed meanwhile
 * comes out as either).  Leaf first; the tool joins them.
 */
static void send_path(struct file *f, unsigned long long dev,
		      unsigned long long ino)
{
	struct ws_file_key k = { dev, ino };
	struct walk c = {};
	unsigned int zero = 0;
	unsigned char one = 1;
	struct ws_file *w;

	if (!f || bpf_map_lookup_elem(&files_sent, &k))
		return;
	w = bpf_map_lookup_elem(&file_room, &zero);
	if (!w)
		return;
	w->type = WS_FILE;
	w->dev = dev;
	w->ino = ino;
	w->truncated = 0;
	c.off = bpf_core_field_offset(struct mount, mnt);
	c.d = BPF_CORE_READ(f, f_path.dentry);
	c.vm = BPF_CORE_READ(f, f_path.mnt);
	c.m = (void *)c.vm - c.off;
	bpf_loop(2 * WS_COMPONENTS, path_step, &c, 0);
	w->ncomp = c.n;
	w->truncated |= !c.done;
	if (bpf_ringbuf_output(&events, w, sizeof(*w),
			       wake_flags(sizeof(*w))))
		__sync_fetch_and_add(&lost_paths, 1);
	else
		bpf_map_update_elem(&files_sent, &k, &one, BPF_ANY);
}

static void file_id(struct file *f, unsigned long long *dev,
		    unsigned long long *ino)
{
	*dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	*ino = BPF_CORE_READ(f, f_inode, i_ino);
	send_path(f, *dev, *ino);
}

static void file_name(struct file *f, char *name)
{
	bpf_probe_read_kernel_str(name, WS_NAME,
				  BPF_CORE_READ(f, f_path.dentry, d_name.name));
}

/*
 * Where addr is: its mapping's file and offset, or flags 0.  The helper
 * only tries the mmap lock: tried again while another thread holds it.
 */
#define ENOENT 2
#define EBUSY 16
#define EEXIST 17
#define FIND_TRIES 256

struct find {
	struct task_struct *t;
	struct ws_site *s;
	long r;
};

static long site_cb(struct task_struct *t, struct vm_area_struct *v,
		    struct find *c)
{
	struct file *f = BPF_CORE_READ(v, vm_file);
	struct ws_site *s = c->s;

	s->flags = (v->vm_flags & PROT_ANY) | WS_MAPPED;
	s->end = v->vm_end;
	if (f) {
		s->offset = s->addr - v->vm_start + v->vm_pgoff * PAGE;
		file_id(f, &s->dev, &s->ino);
		file_name(f, s->name);
	}
	return 0;
}

static long find_try(unsigned int i, struct find *c)
{
	c->r = bpf_find_vma(c->t, c->s->addr, site_cb, c, 0);
	return c->r != -EBUSY;
}

/*
 * 0 (flags 0 if nothing is mapped there), or -EBUSY: the helper only
 * tries the mmap lock, and another thread mapping holds it for a few
 * microseconds at a time.  Global, as the walks are (below): looked at
 * once by the verifier, not at each of its callers.
 */
__noinline int ws_site(struct ws_site *out, unsigned long long addr)
{
	struct find c = { bpf_get_current_task_btf(), out, -EBUSY };

	if (!out)
		return -22;
	__builtin_memset(out, 0, sizeof(*out));
	out->addr = out->offset = addr;
	bpf_loop(FIND_TRIES, find_try, &c, 0);
	return c.r == -EBUSY ? -EBUSY : 0;
}

/*
 * A kernel pointer's value, as a number, for arithmetic the verifier
 * refuses on a pointer: it keeps a pointer's type through any cast, not
 * through memory a helper copies.
 */
static unsigned long long addr_of(const void *p)
{
	unsigned long long a = 0;

	bpf_probe_read_kernel(&a, sizeof(a), &p);
	return a;
}

/* The helpers' contexts are on the stack: the answer's room, off it. */
struct where_at {
	struct where *w;
	long r;
};

static long where_cb(struct task_struct *t, struct vm_area_struct *v,
		     struct where_at *c)
{
	struct file *f = v->vm_file;
	struct where *w = c->w;
	unsigned long long dev = 0, ino = 0;

	/*
	 * Loads through the kernel's pointers, not bpf_probe_read_kernel():
	 * a placement's record is made on every call, and a helper's call
	 * costs more than the load.
	 */
	w->start = v->vm_start;
	w->end = v->vm_end;
	w->flags = v->vm_flags & PROT_ANY;
	w->off = w->addr;
	if (f) {
		dev = f->f_inode->i_sb->s_dev;
		ino = f->f_inode->i_ino;
		w->file = addr_of(f);
		w->off = w->addr - v->vm_start + v->vm_pgoff * PAGE;
		if (v->vm_flags & VM_HUGETLB)
			w->huge = f->f_inode->i_sb->s_blocksize;
	}
	w->dev = dev;
	w->ino = ino;
	return 0;
}

static long where_try(unsigned int i, struct where_at *c)
{
	struct where *w = c->w;

	c->r = bpf_find_vma(bpf_get_current_task_btf(), w->addr, where_cb, c,
			    0);
	return c->r != -EBUSY;
}

/*
 * ws_site()'s lean sibling, for the records every placement makes: into
 * where_room, what maps addr (end 0 if nothing does), its file's path
 * not sent (frames() sends those it keeps).  0, or -EBUSY.
 */
__noinline int ws_where(unsigned long long addr)
{
	struct where_at c = { where_room_of(), -EBUSY };

	if (!c.w)
		return -22;
	__builtin_memset(c.w, 0, sizeof(*c.w));
	c.w->addr = addr;
	bpf_loop(FIND_TRIES, where_try, &c, 0);
	return c.r == -EBUSY ? -EBUSY : 0;
}

/*
 * The interpreter's base: the auxiliary vector's AT_BASE, or 0.  A 32-bit
 * program's vector is of 32-bit words (compat_binfmt_elf's elf_addr_t).
 */
static unsigned long interp_base(struct mm_struct *mm, int compat)
{
	unsigned char *auxv = (void *)mm +
			      bpf_core_field_offset(mm->saved_auxv);
	unsigned int size = bpf_core_field_size(mm->saved_auxv), i;
	unsigned int word = compat ? 4 : 8;
	unsigned long pair[2];
	unsigned int half[2];

	for (i = 0; i < 32 && (i + 1) * 2 * word <= size; i++) {
		if (compat) {
			if (bpf_probe_read_kernel(half, sizeof(half),
						  auxv + 8 * i))
				return 0;
			pair[0] = half[0];
			pair[1] = half[1];
		} else if (bpf_probe_read_kernel(pair, sizeof(pair),
						 auxv + 16 * i)) {
			return 0;
		}
		if (!pair[0])
			return 0;
		if (pair[0] == AT_BASE)
			return pair[1];
	}
	return 0;
}

/* The file an mmap maps: its descriptor's. */
/* The file an mmap's arguments map, or NULL (anonymous, or no such fd). */
static struct file *mmap_file(struct task_struct *t,
			      const unsigned long long *a)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	int fd = (int)a[4];
	struct file **fds, *f = NULL;

	if (a[3] & WC_MAP_ANONYMOUS || fd < 0 || !fdt ||
	    fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), fds + fd))
		return NULL;
	return f;
}

static void call_file(struct task_struct *t, struct ws_event *e)
{
	struct file *f = mmap_file(t, e->args);

	if (!f)
		return;
	file_id(f, &e->file_dev, &e->file_ino);
	e->overlay = BPF_CORE_READ(f, f_inode, i_sb, s_magic) ==
		     OVERLAYFS_SUPER_MAGIC;
}

/* Whether a stack pointer the event knows of is inside [s, e). */
static int holds_sp(const struct ws_event *e, unsigned long long s,
		    unsigned long long end)
{
	unsigned int i;

	if (e->sp >= s && e->sp < end)
		return 1;
	for (i = 0; i < WS_THREADS && i < e->nthreads; i++)
		if (e->threads[i].sp >= s && e->threads[i].sp < end)
			return 1;
	return 0;
}

/*
 * A VMA's fields, read once: what looks at a mapping is the same however
 * the walk found it.
 */
struct mapping {
	unsigned long long start, end, flags, pgoff;
	struct file *file;
	const void *ops;
	void *priv;
	void *anon;			/* its anon_vma */
};

static void vma_read(struct vm_area_struct *v, struct mapping *w)
{
	w->start = BPF_CORE_READ(v, vm_start);
	w->end = BPF_CORE_READ(v, vm_end);
	w->flags = BPF_CORE_READ(v, vm_flags);
	w->pgoff = BPF_CORE_READ(v, vm_pgoff);
	w->file = BPF_CORE_READ(v, vm_file);
	w->ops = BPF_CORE_READ(v, vm_ops);
	w->priv = BPF_CORE_READ(v, vm_private_data);
	w->anon = BPF_CORE_READ(v, anon_vma);
}

/* The kernel's own names: [heap], [stack], a special mapping's. */
static unsigned int kind_of(struct mm_struct *mm, const struct mapping *v,
			    char *name)
{
	struct vm_special_mapping *sm;
	const char *s;

	if (v->file)
		return WS_K_FILE;
	if (v->start < mm->brk && v->end > mm->start_brk)
		return WS_K_HEAP;
	if (v->start <= mm->start_stack && v->end >= mm->start_stack)
		return WS_K_STACK;
	/*
	 * Anonymous memory with operations of its own: a special mapping
	 * ([vdso], [vvar], [uprobes]...), whose private data names it.
	 */
	if (!v->ops || !v->priv)
		return 0;
	sm = v->priv;
	s = BPF_CORE_READ(sm, name);
	if (bpf_probe_read_kernel_str(name, WS_NAME, s) <= 1 || name[0] != '[')
		return 0;
	return WS_K_SPECIAL;
}

struct pick {
	struct ws_makers *h;
	struct ws_event *e;
	unsigned long long end;
	unsigned int next, n;
};

/*
 * The ring looked at SCAN_STEP records a turn: a bpf_loop() turn costs
 * more than a record's test, and a fixed call looks at every record.
 */
#define SCAN_STEP 8

static long pick_region(unsigned int i, struct pick *c)
{
	struct ws_event *e = c->e;
	unsigned int j, n, at;
	struct ws_range *g;

	for (j = 0; j < SCAN_STEP; j++) {
		at = (c->next - 1 - i * SCAN_STEP - j) % WS_MAKERS;
		g = &c->h->rg[at];
		if (g->end <= e->start || g->start >= c->end ||
		    g->end <= g->start)
			continue;
		n = c->n;
		if (n >= WS_EVENT_REGIONS)
			return 1;
		barrier_var(n);		/* as in thread_step() */
		e->regions[n & (WS_EVENT_REGIONS - 1)] = c->h->r[at];
		c->n = n + 1;
	}
	return 0;
}

/* How many SCAN_STEP turns the ring's records written so far take. */
static unsigned int scan_turns(unsigned int next)
{
	return ((next < WS_MAKERS ? next : WS_MAKERS) + SCAN_STEP - 1) /
	       SCAN_STEP;
}

/*
 * The process's records that meet the call's range (up to end: shmat's
 * is known at its exit only), newest first.  Those left out for want of
 * room are the oldest: no newer one is, so that what the tool rebuilds
 * from them (system.c) holds no record a newer one replaced.  Global,
 * with a frame of its own: on_enter_tree's, with it, is too large for
 * 6.1's verifier along its deepest path (a victim's path sent).
 */
__noinline int ws_regions(struct ws_event *e, unsigned long long end)
{
	struct ws_key k = key_of(bpf_get_current_task_btf());
	struct pick c = { bpf_map_lookup_elem(&history, &k), e, end };

	if (!e)
		return -22;
	e->nregions = 0;
	if (!c.h)
		return 0;
	c.next = c.h->next;
	bpf_loop(scan_turns(c.next), pick_region, &c, 0);
	e->nregions = c.n;
	return 0;
}

/* Whether [s, end) meets a region the process's fixed mmaps made. */
static int in_regions(const struct ws_event *e, unsigned long long s,
		      unsigned long long end)
{
	unsigned int i;

	for (i = 0; i < WS_EVENT_REGIONS && i < e->nregions; i++)
		if (e->regions[i].start < end && e->regions[i].end > s)
			return 1;
	return 0;
}

/*
 * Whether the call meets the heap in what the kernel names [heap]: a
 * mapping that holds the break, with what merged with it past the break
 * (memory a program mapped there, whose records tell whose) or below the
 * heap's start.  That is the program's own only where a record says so:
 * without address randomisation the program's bss runs into the heap,
 * and merges with it.  (shmat's end is not known yet: 0.)
 */
static int heap_met(const struct ws_event *e, struct mm_struct *mm,
		    const struct mapping *v)
{
	unsigned long long s = v->start > e->start ? v->start : e->start;
	unsigned long long end = v->end < e->end ? v->end : e->end;

	if (s >= mm->brk)
		return 0;
	return e->end <= e->start || end > mm->start_brk ||
	       !in_regions(e, s, end);
}

/*
 * One mapping of the range, merged into the last if both are plain and
 * neither is part of a region a fixed mmap made (whose maker the rules
 * weigh apart).
 */
static int add_victim(struct ws_event *e, struct mm_struct *mm,
		      const struct mapping *v)
{
	unsigned int n = e->nvictims, k;
	struct ws_vma *w, *last;
	char name[WS_NAME] = {};
	struct file *f;

	k = kind_of(mm, v, name);
	if (k == WS_K_HEAP && !heap_met(e, mm, v))
		k = 0;
	/* Plain, but a stack: not merged, its bounds tell whose. */
	if (!k && holds_sp(e, v->start, v->end))
		k = WS_K_SP;
	/*
	 * No access, private, but pages were made in it (its anon_vma is
	 * set at the first, and kept by the parts it is split into): data
	 * maybe, no reservation (a secret kept PROT_NONE, a collector's
	 * protected page, a library's .data).  Pages since dropped
	 * (MADV_DONTNEED) still count: the kernel keeps no count of a
	 * mapping's pages to tell, and a refusal too many is the safe side.
	 */
	if (!(v->flags & (PROT_ANY | VM_MAYSHARE)) && v->anon)
		k |= WS_K_DATA;
	if (n && n <= WS_VICTIMS) {
		last = &e->v[(n - 1) & (WS_VICTIMS - 1)];
		if (!k && (last->kind == 0 || last->kind == WS_K_MERGED) &&
		    last->end == v->start &&
		    !in_regions(e, last->start, v->end)) {
			last->end = v->end;
			last->flags |= v->flags;
			last->kind = WS_K_MERGED;
			return 0;
		}
	}
	if (n >= WS_VICTIMS) {
		e->truncated = 1;
		return 1;
	}
	w = &e->v[n & (WS_VICTIMS - 1)];
	w->start = v->start;
	w->end = v->end;
	w->flags = v->flags;
	w->pgoff = v->pgoff;
	w->kind = k;
	w->dev = w->ino = w->size = 0;
	__builtin_memcpy(w->name, name, WS_NAME);
	if (k & WS_K_FILE) {
		f = v->file;
		file_id(f, &w->dev, &w->ino);
		w->size = BPF_CORE_READ(f, f_inode, i_size);
		file_name(f, w->name);
	}
	e->nvictims = n + 1;
	return 0;
}

/* A mapping of the process's whose file is a victim's: code, an object. */
static void exec_mark(struct ws_event *e, const struct mapping *v)
{
	struct file *f = v->file;
	unsigned long long dev, ino;
	unsigned int i;

	if (!(v->flags & VM_EXEC) || !f)
		return;
	dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	ino = BPF_CORE_READ(f, f_inode, i_ino);
	for (i = 0; i < WS_VICTIMS && i < e->nvictims; i++)
		if (e->v[i].ino == ino && e->v[i].dev == dev &&
		    (e->v[i].kind & WS_K_FILE))
			e->v[i].kind |= WS_K_EXEC;
}

/*
 * The pieces of a call's entry and exit that walk the process (its
 * threads, its mappings) are global functions: the verifier checks each
 * once, on its own, not again along every path of the program that calls
 * it, nor as the body of a loop (on 6.12 on_enter, all of it inlined,
 * passed the million instructions the verifier may look at).  They look
 * at the current task and take the event as plain memory; 0, or -errno.
 * The loops that walk are kept to a few instructions for the same
 * reason: the mappings are gathered first, 64 at a time, then looked at.
 */

#define BATCH 64

/*
 * Mappings gathered by a walk, in order, before they are looked at; and
 * where the walk is (in memory the verifier does not follow, so that the
 * loops' states do not differ from one turn to the next).
 */
struct batch {
	unsigned int n;
	unsigned int full;		/* more may follow */
	unsigned long long next;	/* the last one's end */
	unsigned int tries;
	int err;
	struct mapping m[BATCH];
	/* Without the iterator: where the walk is in the maple tree. */
	unsigned long long root;
	unsigned long long node;	/* to go down into, or 0: a leaf */
	unsigned long long hi;		/* its last index (a leaf's) */
	unsigned long long index, until;
	unsigned int np, off;		/* the leaf's pivots, its slot */
	unsigned long long piv[16], slot[16];	/* the node, as read */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct batch);
} batch_room SEC(".maps");

static struct batch *batch(void)
{
	unsigned int zero = 0;

	return bpf_map_lookup_elem(&batch_room, &zero);
}

/* What a walk over the process's mappings does at each. */
enum visit { V_VICTIMS, V_EXEC, V_SHM };

/*
 * The batch's mapping i, from the one holding from (or the next) up:
 * 1 when the walk is done.
 */
__noinline int ws_visit(struct ws_event *e, unsigned int i,
			unsigned long long from, int what)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	struct batch *b = batch();
	struct mapping *v;

	if (!e || !b || i >= BATCH)
		return 1;
	v = &b->m[i];
	switch (what) {
	case V_VICTIMS:
		return add_victim(e, mm, v);
	case V_EXEC:
		exec_mark(e, v);
		return 0;
	case V_SHM:
		/* The segment: the mapping that starts where it went. */
		if (v->start == from)
			e->end = v->end;
		return 1;
	}
	return 1;
}

/*
 * Into the batch: the mappings from the one holding from (or the next)
 * up to the first that starts at until or above, with the VMA iterator
 * (Linux 6.7), which only tries the mmap lock (EBUSY).  Their number, or
 * -errno.
 */
__noinline int ws_gather_iter(unsigned long long from,
			      unsigned long long until)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *v;
	struct batch *b = batch();
	unsigned int n = 0;
	int err;

	if (!b)
		return -22;
	b->full = 0;
	err = bpf_iter_task_vma_new(&it, t, from);
	while (!err && (v = bpf_iter_task_vma_next(&it))) {
		if (v->vm_start >= until)
			break;
		if (n >= BATCH) {
			b->full = 1;
			break;
		}
		vma_read(v, &b->m[n & (BATCH - 1)]);
		b->next = v->vm_end;
		n++;
	}
	bpf_iter_task_vma_destroy(&it);
	b->n = n;
	return err ? err : n;
}

/*
 * Without the VMA iterator (before Linux 6.7): the address space's maple
 * tree (6.1), read inside bpf_find_vma()'s callback, which holds the mmap
 * lock (only tried, EBUSY, as the iterator does) so that no writer
 * changes the tree meanwhile.  lib/maple_tree.c's encoding: a node
 * pointer's low 8 bits are not the address, bits 3-6 are its type (the
 * root's bit 1 says it is a node); pivot i is the last index of slot i,
 * the last slot's is the node's own (a 0 pivot past the data, or none);
 * a leaf's slots are the VMAs, NULL for the gaps between them.
 */
#define MT_NODE_MASK 255ULL
#define MT_TYPE(p) (((p) >> 3) & 15)
#define MT_STEPS 1024			/* descents and slots per batch */

/* Reads node p into the batch: its pivots' number, or 0. */
static unsigned int mt_read(struct batch *b, unsigned long long p)
{
	void *n = (void *)(p & ~MT_NODE_MASK);
	unsigned int type = MT_TYPE(p), np, ns;
	unsigned long po, so;

	if (type == bpf_core_enum_value(enum maple_type, maple_arange_64)) {
		po = bpf_core_field_offset(struct maple_arange_64, pivot);
		so = bpf_core_field_offset(struct maple_arange_64, slot);
		np = bpf_core_field_size(struct maple_arange_64, pivot) / 8;
		ns = bpf_core_field_size(struct maple_arange_64, slot) / 8;
	} else if (type == bpf_core_enum_value(enum maple_type,
					       maple_range_64) ||
		   type == bpf_core_enum_value(enum maple_type,
					       maple_leaf_64)) {
		po = bpf_core_field_offset(struct maple_range_64, pivot);
		so = bpf_core_field_offset(struct maple_range_64, slot);
		np = bpf_core_field_size(struct maple_range_64, pivot) / 8;
		ns = bpf_core_field_size(struct maple_range_64, slot) / 8;
	} else {
		return 0;
	}
	if (np >= 16 || ns > 16 ||
	    bpf_probe_read_kernel(b->piv, np * 8, n + po) ||
	    bpf_probe_read_kernel(b->slot, ns * 8, n + so))
		return 0;
	return np;
}

/*
 * One step: down a level towards index, or one slot of the leaf along.
 * 1 when the batch is done.
 */
static long mt_step(unsigned int i, void *unused)
{
	struct batch *b = batch();
	struct vm_area_struct *v;
	unsigned long long p, max;
	unsigned int np, k, at;

	if (!b)
		return 1;
	if (b->node) {
		p = b->node;
		np = mt_read(b, p);
		if (!np) {
			b->err = -22;
			return 1;
		}
		/* The slot that holds index. */
		for (k = 0; k < np && k < 15; k++)
			if (b->piv[k] >= b->index || (k && !b->piv[k]))
				break;
		if (MT_TYPE(p) == bpf_core_enum_value(enum maple_type,
						      maple_leaf_64)) {
			b->np = np;
			b->off = k;
			b->node = 0;
			return 0;
		}
		if (k < np && b->piv[k])
			b->hi = b->piv[k];
		b->node = b->slot[k & 15];
		return 0;
	}
	k = b->off & 15;
	max = k < b->np && b->piv[k] ? b->piv[k] : b->hi;
	p = b->slot[k];
	/* Internal values (below 4096, ending in binary 10) are no VMA. */
	if (p && (p & 3) != 2) {
		v = (void *)p;
		if (BPF_CORE_READ(v, vm_start) >= b->until)
			return 1;
		if (b->n >= BATCH) {
			b->full = 1;
			return 1;
		}
		at = b->n++;
		barrier_var(at);	/* as in thread_step() */
		vma_read(v, &b->m[at & (BATCH - 1)]);
		b->next = BPF_CORE_READ(v, vm_end);
	}
	if (max < b->hi) {
		b->off = k + 1;
		return 0;
	}
	/* The leaf's end: down again from the root to the next index. */
	if (b->hi == ~0ULL)
		return 1;
	b->index = b->hi + 1;
	b->node = b->root;
	b->hi = ~0ULL;
	return 0;
}

static long tree_cb(struct task_struct *t, struct vm_area_struct *anchor,
		    void *unused)
{
	struct batch *b = batch();
	unsigned long long root;

	if (!b)
		return 0;
	root = (unsigned long long)BPF_CORE_READ(t, mm, mm_mt.ma_root);
	/* An empty tree, or a single entry at 0: no VMA to walk. */
	if ((root & 3) != 2 || root <= 4096)
		return 0;
	b->root = b->node = root;
	bpf_loop(MT_STEPS, mt_step, NULL, 0);
	return 0;
}

/*
 * The same as ws_gather_iter(), from the maple tree.  bpf_find_vma()
 * needs an address that is mapped: the call's own (or its stack's).
 */
__noinline int ws_gather_tree(unsigned long long from,
			      unsigned long long until)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	struct batch *b = batch();
	long err;

	if (!b || !r)
		return -22;
	b->n = b->full = 0;
	b->err = 0;
	b->index = from;
	b->until = until;
	b->hi = ~0ULL;
	err = bpf_find_vma(t, r->ip, tree_cb, NULL, 0);
	if (err == -ENOENT)
		err = bpf_find_vma(t, r->sp, tree_cb, NULL, 0);
	if (!err)
		err = b->err;
	return err ? err : b->n;
}

/*
 * A walk only tries the process's mmap lock: another of its threads
 * mapping or unmapping meanwhile makes it fail (EBUSY).  Tried again a
 * few times, the holder being brief; else the walk fails.  A walk longer
 * than a batch lets go of the lock between batches.
 */
#define WALK_TRIES 256
#define WALK_BATCHES 1024		/* vm.max_map_count's 65530 */

struct walker {
	struct ws_event *e;
	unsigned long long from, until;
	int what, err, done;
};

static long visit_one(unsigned int i, struct walker *c)
{
	c->done = ws_visit(c->e, i, c->from, c->what) != 0;
	return c->done;
}

/* The batch gathered: each looked at; 1 when the walk is done. */
static long walk_batch(struct walker *c, int n)
{
	struct batch *b = batch();

	if (!b)
		return 1;
	if (n == -EBUSY && b->tries++ < WALK_TRIES)
		return 0;
	c->err = n < 0 ? n : 0;
	if (n <= 0)
		return 1;
	bpf_loop(n, visit_one, c, 0);
	if (c->done || !b->full)
		return 1;
	c->from = b->next;
	b->tries = 0;
	return 0;
}

static long walk_iter(unsigned int i, struct walker *c)
{
	return walk_batch(c, ws_gather_iter(c->from, c->until));
}

static long walk_tree(unsigned int i, struct walker *c)
{
	return walk_batch(c, ws_gather_tree(c->from, c->until));
}

/*
 * The process's mappings from the one holding from (or the next) up,
 * until one starts at until or above, or what looks at them is done;
 * with the iterator, or from the tree (a constant: a program calls only
 * what the kernel it is loaded into has).
 */
static __always_inline int walk(struct ws_event *e, unsigned long long from,
				unsigned long long until, enum visit what,
				int tree)
{
	struct walker c = { e, from, until, what, 0, 0 };
	struct batch *b = batch();

	if (!b)
		return -22;
	b->tries = 0;
	bpf_loop(WALK_BATCHES + WALK_TRIES, tree ? walk_tree : walk_iter, &c,
		 0);
	return c.err;
}

/* The other threads' stack pointers: whose stack a mapping is. */
__noinline int ws_threads_iter(struct ws_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf(), *th;
	struct bpf_iter_task it;
	struct pt_regs *r;
	int me = t->pid;
	unsigned int n = 0;

	if (!e)
		return -22;
	e->more_threads = 0;
	bpf_iter_task_new(&it, t, BPF_TASK_ITER_PROC_THREADS);
	while ((th = bpf_iter_task_next(&it))) {
		if (th->pid == me)
			continue;
		if (n >= WS_THREADS) {
			e->more_threads = 1;
			break;
		}
		r = (struct pt_regs *)bpf_task_pt_regs(th);
		if (!r)
			continue;
		e->threads[n & (WS_THREADS - 1)].tid = th->pid;
		e->threads[n & (WS_THREADS - 1)].sp = BPF_CORE_READ(r, sp);
		n++;
	}
	bpf_iter_task_destroy(&it);
	e->nthreads = n;
	return 0;
}

struct thread_walk {
	struct ws_event *e;
	unsigned long long head, at;	/* signal->thread_head, a thread */
	unsigned long long node;	/* thread_node's offset in a task */
	unsigned long long sp;		/* user sp's place in a stack */
	int me;
};

static long thread_step(unsigned int i, struct thread_walk *c)
{
	struct list_head *l = (void *)c->at;
	struct ws_event *e = c->e;
	struct task_struct *th;
	unsigned long long at, stack, sp;
	unsigned int n = e->nthreads;
	int pid;

	at = (unsigned long long)BPF_CORE_READ(l, next);
	if (!at || at == c->head)
		return 1;
	c->at = at;
	th = (void *)(at - c->node);
	pid = BPF_CORE_READ(th, pid);
	if (pid == c->me)
		return 0;
	if (n >= WS_THREADS) {
		e->more_threads = 1;
		return 1;
	}
	stack = (unsigned long long)BPF_CORE_READ(th, stack);
	if (!stack || bpf_probe_read_kernel(&sp, sizeof(sp),
					    (void *)(stack + c->sp)))
		return 0;
	e->nthreads = n + 1;
	/*
	 * The mask kept from the compiler, who knows it changes nothing:
	 * 6.1's verifier loses the bound when n goes through the stack.
	 */
	barrier_var(n);
	n &= WS_THREADS - 1;
	e->threads[n].tid = pid;
	e->threads[n].sp = sp;
	return 0;
}

/*
 * The same as ws_threads_iter(), without the task iterator (before Linux
 * 6.7): the thread group's list (under RCU, as the tracepoint runs), and
 * each thread's user registers where the kernel keeps them, at the same
 * place in every task's kernel stack as in the caller's.
 */
__noinline int ws_threads_list(struct ws_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct thread_walk c = {};

	if (!e)
		return -22;
	e->nthreads = e->more_threads = 0;
	c.e = e;
	c.head = (unsigned long long)BPF_CORE_READ(t, signal) +
		 bpf_core_field_offset(struct signal_struct, thread_head);
	c.at = c.head;
	c.node = bpf_core_field_offset(struct task_struct, thread_node);
	c.sp = addr_of((void *)bpf_task_pt_regs(t)) -
	       (unsigned long long)BPF_CORE_READ(t, stack) +
	       bpf_core_field_offset(struct pt_regs, sp);
	c.me = t->pid;
	bpf_loop(WS_THREADS + 2, thread_step, &c, 0);
	return 0;
}

/*
 * The mappings meeting the call's range, in e->v; e->err.  shmat's end
 * is not known yet: up to WS_VICTIMS of them.
 */
static __always_inline void victims_of(struct ws_event *e, int tree)
{
	e->nvictims = 0;
	e->truncated = 0;
	e->err = walk(e, e->start, e->end > e->start ? e->end : ~0ULL,
		      V_VICTIMS, tree);
}

/*
 * The victims whose file the process maps executable somewhere: code, an
 * object a loader mapped (what the tool would otherwise learn from the
 * file's header, by a path that may name another file by then).
 */
static __always_inline void mark_exec(struct ws_event *e, int tree)
{
	unsigned int i, files = 0;

	for (i = 0; i < WS_VICTIMS && i < e->nvictims; i++)
		files |= e->v[i].kind & WS_K_FILE;
	if (files)
		walk(e, 0, ~0ULL, V_EXEC, tree);
}

/*
 * Nothing replaced but free space and reservation pages of no record:
 * reservation pages a call was seen making may be another module's,
 * set aside for it to grow into, which the tool judges (rules.c).
 */
static int only_reserved(const struct ws_event *e)
{
	unsigned int i;

	for (i = 0; i < WS_VICTIMS && i < e->nvictims; i++)
		if ((e->v[i].kind & ~WS_K_MERGED) ||
		    (e->v[i].flags & (PROT_ANY | VM_MAYSHARE)))
			return 0;
	return !e->truncated && !e->nregions;
}

/*
 * The program: the file mapped at its start_code, the file the kernel
 * maps (under overlayfs, not exe_file's); and the interpreter: the file
 * mapped at AT_BASE (none: the program is its own loader, ld.so run
 * directly).  0, or -EBUSY.
 */
__noinline int ws_images(struct ws_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	struct mm_struct *mm = t->mm;
	struct ws_site s;
	unsigned long base;
	int words32;

	if (!e || !mm)
		return -22;
	if (ws_site(&s, mm->start_code))
		return -EBUSY;
	e->exe_dev = s.dev;
	e->exe_ino = s.ino;
	/* An x32 program's vector is of 32-bit words too: by its call. */
	words32 = is_compat(t) ||
		  (r && (BPF_CORE_READ(r, orig_ax) & WC_X32_BIT));
	base = interp_base(mm, words32);
	if (!base)
		return 0;
	if (ws_site(&s, base))
		return -EBUSY;
	e->interp_dev = s.dev;
	e->interp_ino = s.ino;
	return 0;
}

/*
 * ---- who made each placement ----
 *
 * Every mmap, mremap and shmat a process in scope makes, plain or fixed,
 * is recorded at its exit in the process's ring (history): its region,
 * what it maps, and where the call came from, so that a later fixed call
 * can be judged by who made what it replaces.  A plain call costs the
 * ring's slot and a few lookups of where an address is (the call's own,
 * the return address's, the region's file if it maps one).
 */

/* The process's records, made if it has none and is in scope; NULL. */
static struct ws_makers *makers_of(struct task_struct *t, int scope)
{
	struct ws_key k = key_of(t);
	struct ws_makers *h = bpf_map_lookup_elem(&history, &k);

	if (h || (scope && !in_scope(t)))
		return h;
	/* Zeroed, as a new value: too large for the stack. */
	bpf_map_update_elem(&history, &k, &history_zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&history, &k);
}

/* Whether name begins with the n bytes of prefix. */
static __always_inline int begins(const char *name, const char *prefix,
				  unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (name[i] != prefix[i])
			return 0;
	return 1;
}

/*
 * With --deny, whether a struct file (its address; 0: none) is the C
 * library's, by its name as watch_is_libc() (caller.c) knows one:
 * glibc's libc.so.6 (libc-2.NN.so before 2.34) and libpthread, musl's
 * ld-musl (its C library too).  The tool decides so from the path; the
 * kernel's verdict needs it at the call.
 */
static unsigned int libc_file(unsigned long long addr)
{
	struct file *f = (struct file *)addr;
	char n[16] = {};

	if (!deny || !f)
		return 0;
	bpf_probe_read_kernel_str(n, sizeof(n),
				  BPF_CORE_READ(f, f_path.dentry, d_name.name));
	return begins(n, "libc.so", 7) || begins(n, "libc-", 5) ||
	       begins(n, "libpthread", 10) || begins(n, "ld-musl", 7);
}

/* Whether the 6 bytes before a return address are a call (ws_caller). */
static int after_call(const unsigned char *code)
{
	return code[1] == 0xe8 || (code[0] == 0xff && code[1] == 0x15) ||
	       (code[4] == 0xff && (code[5] & 0xf8) == 0xd0);
}

/* Return addresses looked for on the stack: more than kept, some no code. */
#define WS_CANDIDATES 8

struct scan {
	unsigned long long at;		/* the stack word looked at */
	unsigned int n, compat;
	unsigned long long cand[WS_CANDIDATES];
};

/*
 * Off the stack, which 6.1's verifier finds too large along a fixed
 * call's entry to its caller's lookups; bpf_loop()'s context, on it,
 * points there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct scan);
} scan_room SEC(".maps");

struct scan_at {
	struct scan *c;
};

/*
 * One stack word: a candidate if it may be a return address (after a
 * call); 1 when no more are wanted.  Looked up after the scan, not from
 * here: a lookup from bpf_loop()'s callback is a call too deep for 6.1's
 * verifier.
 */
static long scan_word(unsigned int i, struct scan_at *a)
{
	unsigned long long w = 0;
	unsigned char code[8] = {};
	struct scan *c = a->c;
	unsigned int n = c->n;

	if (n >= WS_CANDIDATES ||
	    bpf_probe_read_user(&w, c->compat ? 4 : 8, (void *)c->at))
		return 1;
	c->at += c->compat ? 4 : 8;
	if (w < PAGE || bpf_probe_read_user(code, 6, (void *)(w - 6)) ||
	    !after_call(code))
		return 0;
	barrier_var(n);		/* as in thread_step() */
	c->cand[n & (WS_CANDIDATES - 1)] = w;
	c->n = n + 1;
	/* On top of an x86_64 stack: a leaf wrapper's caller, the one. */
	return n + 1 >= WS_CANDIDATES || (!c->compat && !i);
}

/*
 * A candidate made a frame if it is code: 0, 1 if it is not, or -EBUSY.
 * In the call's own mapping (malloc's: start, end), no lookup.
 */
static __always_inline int frame_of(struct ws_made *m, struct where *s,
				    unsigned long long w, unsigned long long ip,
				    unsigned long long start,
				    unsigned long long end)
{
	unsigned int n = m->nframes;
	struct ws_frame *f;

	if (n >= WS_FRAMES)
		return 1;
	barrier_var(n);		/* as in thread_step() */
	f = &m->f[n & (WS_FRAMES - 1)];
	if (w >= start && w < end) {
		f->ino = m->f[0].ino;
		f->dev = m->f[0].dev;
		f->off = m->f[0].off + (unsigned int)(w - ip);
		m->libc |= (m->libc & 1) << n;
	} else if (ws_where(w)) {
		return -EBUSY;
	} else if (!(s->flags & VM_EXEC)) {
		return 1;
	} else {
		f->ino = s->ino;
		f->dev = s->dev;
		f->off = s->off;
		m->libc |= libc_file(s->file) << n;
		if (s->file)
			send_path((struct file *)s->file, s->dev, s->ino);
	}
	m->nframes = n + 1;
	return 0;
}

/*
 * Where the call came from: its own address, and the return addresses
 * (code just after a call) that decide its maker and its caller, as the
 * stack has them.  x86_64: the one on top of the stack a leaf wrapper
 * leaves (glibc's mmap and shmat), else the first WS_FRAMES - 1 in
 * WS_SCAN64 words (a wrapper with a frame: its mremap).  i386: the
 * vDSO's entry pushes three registers, and the C library's wrappers call
 * it through a helper of their own, with frames of their own: the first
 * WS_FRAMES - 1 in WS_SCAN words past the three, for the tool to walk
 * past the wrappers by their symbols (system.c).  A word of a frame that
 * is no return address but looks like one (left by an earlier call) is
 * taken all the same.
 */
static __always_inline int frames(struct ws_made *m, unsigned long long ip,
				  unsigned long long sp, int compat)
{
	unsigned long long start = 0, end = 0;
	struct where *s = where_room_of();
	unsigned int i, zero = 0;
	struct scan_at a;
	struct scan *c;

	a.c = c = bpf_map_lookup_elem(&scan_room, &zero);
	if (!m || !s || !c)
		return -22;
	m->nframes = 0;
	m->libc = 0;
	if (ws_where(ip)) {
		m->flags |= WS_M_UNKNOWN;
		return -EBUSY;
	}
	m->f[0].ino = s->ino;
	m->f[0].dev = s->dev;
	m->f[0].off = s->off;
	m->libc = libc_file(s->file);
	m->nframes = 1;
	/* Its path sent once, as ws_site() sends one (not its name). */
	if (s->file)
		send_path((struct file *)s->file, s->dev, s->ino);
	/* Its mapping, and the address its offset is of. */
	if (s->flags & VM_EXEC) {
		start = s->start;
		end = s->end;
	}
	c->at = compat ? sp + 12 : sp;
	c->n = 0;
	c->compat = compat;
	bpf_loop(compat ? WS_SCAN : WS_SCAN64, scan_word, &a, 0);
	for (i = 0; i < WS_CANDIDATES && i < c->n; i++)
		if (frame_of(m, s, c->cand[i], ip, start, end) < 0) {
			m->flags |= WS_M_UNKNOWN;
			return -EBUSY;
		}
	return 0;
}

struct source {
	struct ws_makers *h;
	struct ws_made *m;
	unsigned long long at;
	unsigned int next, found;
};

static long source_step(unsigned int i, struct source *c)
{
	struct ws_made *m = c->m, *r;
	unsigned int j, at;
	struct ws_range *g;

	for (j = 0; j < SCAN_STEP; j++) {
		at = (c->next - 1 - i * SCAN_STEP - j) % WS_MAKERS;
		g = &c->h->rg[at];
		if (g->end <= g->start || c->at < g->start || c->at >= g->end)
			continue;
		r = &c->h->r[at];
		m->call = r->call;
		m->nframes = r->nframes;
		m->flags = r->flags;
		m->libc = r->libc;
		__builtin_memcpy(m->f, r->f, sizeof(m->f));
		c->found = 1;
		return 1;
	}
	return 0;
}

/*
 * A moved or resized region keeps its maker: the newest record holding
 * the source's address.  None: its maker is not known either.
 */
static void source_maker(struct ws_makers *h, struct ws_made *m,
			 unsigned long long src)
{
	struct source c = { h, m, src, h->next, 0 };

	bpf_loop(scan_turns(c.next), source_step, &c, 0);
	if (!c.found)
		m->flags |= WS_M_UNKNOWN;
}

/*
 * Into the ring's next slot, the oldest record's.  Threads of a process
 * take slots apart; a slot is marked empty while it is written, for a
 * reader on another CPU to skip it.
 */
static void keep(struct ws_makers *h, struct ws_made *m)
{
	unsigned int at = __sync_fetch_and_add(&h->next, 1) % WS_MAKERS;
	struct ws_range *g = &h->rg[at];

	g->end = 0;
	barrier();
	__builtin_memcpy(&h->r[at], m, sizeof(*m));
	g->start = m->start;
	barrier();
	g->end = m->end;
}

/* ws_keep()'s how: the call's family, and these. */
#define KEEP_ANON 0x100		/* private anonymous: no file to look up */
#define KEEP_PLAIN 0x200	/* a plain call: its process may have no
				   records yet, nor be in scope */

/*
 * A placement made, [start, end): recorded with what it maps and who
 * made it, or for an mremap its source's (src) maker.  end 0: the
 * mapping's (shmat's segment).  0, or -errno.
 */
__noinline int ws_keep(unsigned int how, unsigned long long start,
		       unsigned long long end, unsigned long long src)
{
	unsigned int call = how & 0xff;
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	struct ws_makers *h = makers_of(t, how & KEEP_PLAIN);
	struct where *s = where_room_of();
	struct ws_made *m;
	unsigned int zero = 0;

	m = bpf_map_lookup_elem(&made_room, &zero);
	if (!h || !m || !r || !s)
		return 0;
	m->start = start;
	m->end = end;
	m->ns = bpf_ktime_get_boot_ns();
	m->file_ino = m->file_dev = 0;
	m->call = call;
	m->flags = 0;
	if (!(how & KEEP_ANON) || !end) {
		if (!ws_where(start)) {
			m->file_ino = s->ino;
			m->file_dev = s->dev;
			if (!end)
				m->end = s->end;
		} else {
			/* What it maps not known: believed of nothing. */
			m->file_ino = ~0ULL;
		}
	}
	if (call == WC_MREMAP)
		source_maker(h, m, src);
	else
		frames(m, r->ip, r->sp, is_compat(t));
	if (m->end > m->start)
		keep(h, m);
	return 0;
}

/*
 * The caller: the call's own address, and its frames as a maker's are
 * taken (frames()), from which the tool decides who called: the first
 * code outside the C library.  0, or -EBUSY: not knowing the caller would
 * misjudge who made what.
 */
__noinline int ws_caller(struct ws_event *e, unsigned long long ip)
{
	int err = 0;

	if (!e)
		return -22;
	__builtin_memset(&e->pc, 0, sizeof(e->pc));
	if (ws_site(&e->pc, ip))
		err = -EBUSY;
	e->made.flags = 0;
	frames(&e->made, ip, e->sp, e->compat);
	if (e->made.flags & WS_M_UNKNOWN)
		err = -EBUSY;
	return err;
}

/*
 * ---- the verdict in the kernel (--deny) ----
 *
 * A fixed call in scope judged at its entry, from what take() gathered
 * for the tool, by the rules the tool judges it by (judge.h, included
 * as calls.h is), so that a call to refuse is refused before anything
 * is replaced: mmap at security_mmap_file, shmat at security_shm_shmat
 * (with its segment's size, known there), mremap at its system call's
 * entry where the kernel lets that be refused (error injection).  The
 * evidence as the tool takes it from the event (system.c), but for what
 * only the tool can find out (a file's ELF header, the C library's
 * symbols): a verdict the missing fact could make benign refuses
 * nothing (doubt()).
 */
/* Pieces of records: at most one more than their starts and ends. */
#define JUDGE_REGIONS (2 * WS_EVENT_REGIONS + 1)
#define JUDGE_ROOM 128			/* a power of two above it */
#define WJ_MAX_THREADS (WS_THREADS + 1)
#define WJ_MAX_REGIONS JUDGE_REGIONS
#define WJ_MAX_VICTIMS WS_VICTIMS
/* The regions' pass a bpf_loop callback a step, its state in the room. */
static void ws_cover(void);
#define WJ_COVER(p, c, w) ws_cover()
#include "judge.h"

/* What the rules are given, off the stack. */
struct judge {
	struct ncb__wcall call;
	struct ncb__wmod exe, interp;
	unsigned int nv, nth, nrg;
	unsigned int overlay;		/* the call's file is an overlay's */
	unsigned long long at;		/* the regions' sweep: where it is */
	struct wj_verdict verdict;
	struct wj_cover cover;
	struct ncb__wvictim v[WS_VICTIMS];
	struct ncb__wthread th[WS_THREADS + 1];
	struct ncb__wregion rg[JUDGE_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct judge);
} judge_room SEC(".maps");

static struct judge *judge_of(void)
{
	unsigned int zero = 0;

	return bpf_map_lookup_elem(&judge_room, &zero);
}

static __always_inline struct ncb__wmod mod_of(unsigned long long dev,
						unsigned long long ino)
{
	struct ncb__wmod m = { ino ? dev : 0, ino };

	return m;
}

/* An i386 return address the interpreter's lazy binding left (system.c). */
static int lazy(const struct ws_event *e, const struct ws_frame *f,
		unsigned int i)
{
	return e->compat && i > 1 && e->interp_ino &&
	       f->ino == e->interp_ino && f->dev == e->interp_dev;
}

/*
 * The module of the first frame past the C library's, from frame 1 (an
 * i386 caller's lazy binding passed), as the tool finds the caller
 * (system.c's caller(): else frame 0's) and, with maker, an i386
 * record's maker (its maker(): else the last of the C library's frames,
 * none if there are none).  The tool stops at the first of the C
 * library's functions that is no wrapper (malloc), by its symbols; the
 * kernel, without them, goes on past it to other code, if the frames
 * kept reach it: a region so made is taken for that code's, which can
 * only make a refusal one less.
 */
static __always_inline struct ncb__wmod
past_libc(const struct ws_event *e, const struct ws_made *m, int maker)
{
	unsigned int i, n = m->nframes, last = 0, seen = 0;
	const struct ws_frame *f = &m->f[0];
	struct ncb__wmod none = { 0, 0 };

	if (!(e->compat && !f->ino) && !(m->libc & 1))
		return mod_of(f->dev, f->ino);
	for (i = 1; i < WS_FRAMES && i < n; i++) {
		f = &m->f[i];
		if ((seen || !maker) && lazy(e, f, i))
			continue;
		if (!(m->libc >> i & 1))
			return mod_of(f->dev, f->ino);
		seen = 1;
		last = i;
	}
	if (!maker)
		return mod_of(m->f[0].dev, m->f[0].ino);
	f = &m->f[last & (WS_FRAMES - 1)];
	return seen ? mod_of(f->dev, f->ino) : none;
}

/*
 * A record's maker as the tool's maker() decides it: the call's module,
 * or for x86_64 past a leaf wrapper of the C library's, the return
 * address it left (which may be the C library's own: malloc's).  None
 * (0, 0) if not known.
 */
static __always_inline struct ncb__wmod
maker_of(const struct ws_event *e, const struct ws_made *r)
{
	struct ncb__wmod none = { 0, 0 };
	const struct ws_frame *f;

	if ((r->flags & WS_M_UNKNOWN) || !r->nframes)
		return none;
	if (e->compat)
		return past_libc(e, r, 1);
	f = &r->f[r->nframes > 1 && (r->libc & 1) ? 1 : 0];
	return mod_of(f->dev, f->ino);
}

/* A victim as system.c's victim() makes it for the rules. */
static void judge_victim(struct judge *j, const struct ws_vma *w,
			 struct ncb__wvictim *v)
{
	__builtin_memset(v, 0, sizeof(*v));
	v->m.start = w->start;
	v->m.end = w->end;
	v->m.prot = w->flags & PROT_ANY;
	v->m.shared = !!(w->flags & VM_MAYSHARE);
	v->has_data = !!(w->kind & WS_K_DATA);
	v->named = NCB__W_ANON;
	if (w->kind & WS_K_FILE) {
		v->m.offset = w->pgoff * PAGE;
		v->mod = mod_of(w->dev, w->ino);
		v->file_end = wc_page_up(w->size, PAGE);
		v->elf = !!(w->kind & WS_K_EXEC);
	} else if (w->kind & WS_K_HEAP) {
		v->named = v->m.prot || v->m.shared ? NCB__W_HEAP :
			   NCB__W_ANON;
	} else if (w->kind & WS_K_STACK) {
		v->named = NCB__W_STACK;
	} else if (w->kind & WS_K_SPECIAL) {
		v->named = NCB__W_KERNEL;
	}
}

/*
 * The records meeting the range as the rules take them (system.c's
 * regions(): a newer one replacing what it covers of older ones), swept
 * from the call's start: at each step, the newest record holding where
 * the sweep is, up to where it ends or a newer one begins.  Only the
 * call's range matters to the rules: the pieces are cut to it.
 */
struct sweep {
	struct ws_event *e;
};

static long sweep_step(unsigned int i, struct sweep *c)
{
	struct judge *j = judge_of();
	struct ws_event *e = c->e;
	unsigned long long at, end, next;
	unsigned int k, n, hit = WS_EVENT_REGIONS;
	const struct ws_made *r;

	if (!j || j->at >= j->call.end)
		return 1;
	at = j->at;
	end = next = j->call.end;
	n = e->nregions;
	/* Newest first: the first that holds at is the one. */
	for (k = 0; k < WS_EVENT_REGIONS && k < n; k++) {
		r = &e->regions[k];
		if (r->end <= r->start)
			continue;
		if (r->start <= at && at < r->end) {
			hit = k;
			if (r->end < end)
				end = r->end;
			break;
		}
		if (r->start > at && r->start < next)
			next = r->start;
	}
	/* No record: on to where the next one begins. */
	if (hit >= WS_EVENT_REGIONS) {
		j->at = next;
		return 0;
	}
	/* The newer ones beginning inside it cut it there. */
	if (next < end)
		end = next;
	n = j->nrg;
	if (n >= JUDGE_REGIONS)
		return 1;
	barrier_var(n);		/* as in thread_step() */
	n &= JUDGE_ROOM - 1;
	r = &e->regions[hit & (WS_EVENT_REGIONS - 1)];
	j->rg[n].start = at;
	j->rg[n].end = end;
	j->rg[n].by = maker_of(e, r);
	j->rg[n].file = mod_of(r->file_dev, r->file_ino);
	j->nrg = n + 1;
	j->at = end;
	return 0;
}

/* The process as the rules see it, its arrays in the room. */
static void judge_proc(struct judge *j, struct ncb__wproc *p)
{
	p->exe = j->exe;
	p->interp = j->interp;
	p->threads = j->th;
	p->nthreads = j->nth;
	p->regions = j->rg;
	p->nregions = j->nrg;
	p->sees_brk = 0;
}

/* A step of the regions' pass (judge.h's wj_cover_step). */
static long cover_step(unsigned int i, void *unused)
{
	struct judge *j = judge_of();
	struct ncb__wproc p;

	if (!j)
		return 1;
	judge_proc(j, &p);
	return wj_cover_step(&p, &j->call, &j->cover);
}

static void ws_cover(void)
{
	bpf_loop(JUDGE_REGIONS + 1, cover_step, NULL, 0);
}

/* Victim i's kind: global, the verifier looks at it once. */
__noinline int ws_kind(unsigned int i)
{
	struct judge *j = judge_of();
	struct ncb__wproc p;

	if (!j || i >= WS_VICTIMS)
		return 1;
	judge_proc(j, &p);
	wj_kind_of(&p, &j->call, &j->v[i], &j->cover);
	return 0;
}

static long kind_step(unsigned int i, void *unused)
{
	return ws_kind(i) != 0;
}

/* A step of the verdict: global, the verifier looks at it once. */
__noinline int ws_verdict_step(void)
{
	struct judge *j = judge_of();
	struct ncb__wproc p;

	if (!j)
		return 1;
	judge_proc(j, &p);
	return wj_verdict_step(&j->verdict, &p, &j->call, j->v);
}

static long verdict_step(unsigned int i, void *unused)
{
	return ws_verdict_step() != 0;
}

/* The class of the call the room holds: its victims' kinds, then it. */
static int ws_verdict(struct judge *j)
{
	bpf_loop(WS_VICTIMS, kind_step, NULL, 0);
	wj_verdict_begin(&j->verdict, j->nv);
	bpf_loop(WJ_VERDICT_STEPS(WS_VICTIMS), verdict_step, NULL, 0);
	return j->verdict.phase == WJ_DONE ? j->verdict.cls :
	       NCB__WC_NOTHING;
}

/* Whether the class is one a call is refused for. */
static int refused_class(int cls)
{
	return NCB__WC_CLOBBER(cls) || cls == NCB__WC_UNKNOWN;
}

/*
 * Judged again with what the kernel cannot know taken the caller's way:
 * every file an ELF object (the tool reads its header; the kernel knows
 * an object by its code mapped executable), the call's file, if an
 * overlay's (whose mappings are of the file below it), the one it
 * replaces, and a PROT_NONE mapping's pages none (its anon_vma says pages
 * were made in it or a mapping it merged with, not that they are there
 * still: V8 drops its pages and keeps the mapping).  Refused only if
 * still refused.
 */
static int doubt(struct judge *j)
{
	unsigned int i, changed = 0;

	for (i = 0; i < WS_VICTIMS && i < j->nv; i++) {
		if (j->v[i].mod.ino && !j->v[i].elf) {
			j->v[i].elf = 1;
			changed = 1;
			if (j->overlay)
				j->call.file = j->v[i].mod;
			j->overlay = 0;
		}
		if (j->v[i].has_data) {
			j->v[i].has_data = 0;
			changed = 1;
		}
	}
	return !changed || refused_class(ws_verdict(j));
}

/*
 * The verdict on the call the event holds, taken at its entry (e->end:
 * shmat's, known at its hook): the class to refuse it for, or 0.
 */
__noinline int ws_judge(struct ws_event *e)
{
	struct judge *j = judge_of();
	struct sweep c;
	unsigned int i, n;
	int cls;

	if (!e || !j)
		return 0;
	j->call.start = e->start;
	j->call.end = e->end;
	j->call.tid = (int)e->tid;
	j->call.sp = e->sp;
	j->call.caller = past_libc(e, &e->made, 0);
	j->call.file = mod_of(e->file_dev, e->file_ino);
	j->exe = mod_of(e->exe_dev, e->exe_ino);
	j->interp = e->interp_ino ? mod_of(e->interp_dev, e->interp_ino) :
		    j->exe;
	n = e->nthreads;
	for (i = 0; i < WS_THREADS && i < n; i++) {
		j->th[i].tid = (int)e->threads[i].tid;
		j->th[i].sp = e->threads[i].sp;
		j->th[i].top = 0;
	}
	/* The caller too: its own stack is its own (OWN_STACK). */
	i = n < WS_THREADS ? n : WS_THREADS;
	j->th[i].tid = (int)e->tid;
	j->th[i].sp = e->sp;
	j->th[i].top = 0;
	j->nth = i + 1;
	n = e->nvictims;
	j->nv = 0;
	for (i = 0; i < WS_VICTIMS && i < n; i++) {
		judge_victim(j, &e->v[i], &j->v[i]);
		j->nv = i + 1;
	}
	/* More mappings than were sent: judged up to the last one sent. */
	i = (j->nv - 1) & (WS_VICTIMS - 1);
	if (e->truncated && j->nv && j->v[i].m.end < j->call.end)
		j->call.end = j->v[i].m.end;
	j->overlay = e->overlay;
	j->nrg = 0;
	j->at = j->call.start;
	c.e = e;
	bpf_loop(JUDGE_REGIONS + 1, sweep_step, &c, 0);
	cls = ws_verdict(j);
	if (!refused_class(cls) || !doubt(j))
		return 0;
	return cls;
}

/* Everything the tool needs of the call, taken while it is at entry. */
static __always_inline void take(struct task_struct *t, struct pt_regs *r,
				 int compat, struct ws_event *e, int tree)
{
	unsigned long long id = bpf_get_current_pid_tgid();

	e->type = WS_EVENT;
	e->tgid = id >> 32;
	e->tid = (unsigned int)id;
	e->uid = (unsigned int)bpf_get_current_uid_gid();
	e->compat = compat;
	e->ns = bpf_ktime_get_boot_ns();
	e->leader_start = BPF_CORE_READ(t, group_leader, start_time);
	e->sp = r->sp;
	e->truncated = e->nthreads = 0;
	e->exe_dev = e->exe_ino = e->interp_dev = e->interp_ino = 0;
	e->file_dev = e->file_ino = 0;
	e->overlay = 0;
	proc_comm(t, e->comm);
	if (!t->mm) {
		e->err = -22;
		return;
	}
	if (tree)
		ws_threads_list(e);
	else
		ws_threads_iter(e);
	ws_regions(e, e->end > e->start ? e->end : ~0ULL);
	victims_of(e, tree);
	/* What only the tool needs: for a call it will be sent. */
	if (e->err || (e->nvictims && !only_reserved(e)) ||
	    wcall_family(e->call) == WC_SHMAT) {
		if (!e->err)
			e->err = ws_images(e);
		if (!e->err)
			mark_exec(e, tree);
		if (wcall_family(e->call) == WC_MMAP)
			call_file(t, e);
	}
	if (ws_caller(e, r->ip))
		e->err = -EBUSY;
}

/* An mmap of private anonymous memory: no file to look up. */
static int anon_private(const unsigned long long *a)
{
	return (a[3] & WC_MAP_ANONYMOUS) &&
	       (a[3] & WC_MAP_TYPE_BITS) == WC_MAP_PRIVATE;
}

/*
 * A plain placement's exit: recorded (ws_keep), never judged.  Its
 * arguments are the registers' still.
 */
static __always_inline int plain(struct task_struct *t, struct pt_regs *regs,
				 long id, long ret)
{
	unsigned long long a[6] = {}, at = 0, len;
	int compat = is_compat(t);
	enum wcall call;

	if (ret < 0 && ret >= -MAX_ERRNO)
		return 0;
	call = compat ? args32(regs, id, a) : args64(regs, id, a);
	if (!wcall_plain(call, a))
		return 0;
	switch (wcall_family(call)) {
	case WC_MMAP:
		/*
		 * A loader's span of an ELF object (glibc's ld.so maps them
		 * with MAP_DENYWRITE) is left unrecorded, as the ptrace
		 * watcher leaves it unseen: the rules know an object's
		 * mappings by their file, and whose they are.
		 */
		if ((a[3] & (WC_MAP_DENYWRITE | WC_MAP_ANONYMOUS)) ==
		    WC_MAP_DENYWRITE)
			return 0;
		len = wc_page_up(a[1], wcall_mmap_granule(a, PAGE,
							  huge_default));
		return ws_keep(WC_MMAP | KEEP_PLAIN |
			       (anon_private(a) ? KEEP_ANON : 0), ret,
			       ret + len, 0);
	case WC_MREMAP:
		return ws_keep(WC_MREMAP | KEEP_PLAIN, ret,
			       ret + wc_page_up(a[2], PAGE), a[0]);
	default:
		/* ipc's shmat writes the address where its fourth says. */
		if (call == WC_IPC &&
		    bpf_probe_read_user(&at, 4, (void *)a[3]))
			return 0;
		return ws_keep(WC_SHMAT | KEEP_PLAIN,
			       call == WC_IPC ? at : ret, 0, 0);
	}
}

/*
 * Room for a call's decoded arguments, off the stack: on_enter_tree's
 * frame with them is too large for 6.1's verifier along its deepest path
 * (a victim's path sent).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, unsigned int);
	__type(value, struct call);
} call_room SEC(".maps");

static __always_inline int enter(struct pt_regs *regs, long id, int tree)
{
	struct task_struct *t;
	unsigned int zero = 0;
	struct call *probe;
	struct ws_event *e;
	struct ws_count *c;
	int compat, call;

	/* Nothing more for the calls that are not placements. */
	if (!wcall_any(id))
		return 0;
	probe = bpf_map_lookup_elem(&call_room, &zero);
	if (!probe)
		return 0;
	__builtin_memset(probe, 0, sizeof(*probe));
	t = bpf_get_current_task_btf();
	compat = is_compat(t);
	call = compat ? decode32(regs, id, probe) : decode64(regs, id,
							     probe);
	if (!call || !in_scope(t))
		return 0;
	huge_range(t, probe, wcall_family(call));
	e = bpf_task_storage_get(&pending, t, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		/* Counted here, as it will not be at the exit. */
		c = count_of(t);
		if (c)
			__sync_fetch_and_add(&c->fixed, 1);
		__sync_fetch_and_add(&no_storage, 1);
		return 0;
	}
	__builtin_memcpy(e->args, probe->args, sizeof(e->args));
	e->call = call;
	e->start = probe->start;
	e->end = probe->end;
	e->result_at = probe->result_at;
	e->err = 0;
	take(t, regs, compat, e, tree);
	/*
	 * shmat's at its hook: its segment's size is known there.  An mmap
	 * of no mapping type is the kernel's EINVAL, after the hook: left
	 * to it.
	 */
	e->verdict = 0;
	if (deny && !e->err && e->nvictims && !only_reserved(e) &&
	    wcall_family(call) != WC_SHMAT &&
	    !(wcall_family(call) == WC_MMAP &&
	      !(e->args[3] & WC_MAP_TYPE_BITS)))
		e->verdict = ws_judge(e);
	e->armed = 1;
	return 0;
}

/*
 * Two of each program at the calls' entry and exit: with the task and
 * VMA iterators (Linux 6.7), and without (the maple tree and the thread
 * list read directly, for 6.1 to 6.6).  The tool loads the pair the
 * kernel can take, by what its BTF offers.
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_enter, struct pt_regs *regs, long id)
{
	return enter(regs, id, 0);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_enter_tree, struct pt_regs *regs, long id)
{
	return enter(regs, id, 1);
}

/* shmat's range: only the mappings the segment met. */
static __always_inline void shm_range(struct ws_event *e,
				      unsigned long long at, int tree)
{
	unsigned int i, n = 0;

	e->end = e->start;
	walk(e, at, at + 1, V_SHM, tree);
	for (i = 0; i < WS_VICTIMS && i < e->nvictims; i++)
		if (e->v[i].start < e->end)
			n = i + 1;
	e->nvictims = n;
	if (n < WS_VICTIMS)
		e->truncated = 0;
}

/* The event to the tool, counted. */
static __always_inline int send(struct ws_event *e, struct ws_count *c)
{
	if (bpf_ringbuf_output(&events, e, sizeof(*e),
			       wake_flags(sizeof(*e)))) {
		__sync_fetch_and_add(&lost, 1);
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
		return 0;
	}
	if (c)
		__sync_fetch_and_add(&c->sent, 1);
	return 0;
}

static __always_inline int leave(struct pt_regs *regs, long ret, int tree)
{
	long id = regs->orig_ax;
	unsigned int at = 0;
	struct where *s;
	struct task_struct *t;
	struct ws_event *e;
	struct ws_count *c;

	if (!wcall_any(id))
		return 0;
	t = bpf_get_current_task_btf();
	e = bpf_task_storage_get(&pending, t, NULL, 0);
	if (!e || !e->armed)
		return plain(t, regs, id, ret);
	e->armed = 0;
	e->result = ret;
	/* Its hook refused it for the verdict taken: sent as refused. */
	e->refused = e->verdict && ret == -EEXIST;
	/* Counted once, at the exit, with what became of it. */
	c = count_of(t);
	if (c)
		__sync_fetch_and_add(&c->fixed, 1);
	if (e->refused)
		return send(e, c);
	if (ret < 0 && ret >= -MAX_ERRNO) {
		if (c)
			__sync_fetch_and_add(&c->invalid, 1);
		return 0;
	}
	if (e->call == WC_IPC && e->result_at)
		bpf_probe_read_user(&at, 4, (void *)e->result_at);
	/* The records meeting shmat's range, now that its end is known. */
	if (wcall_family(e->call) == WC_SHMAT) {
		shm_range(e, e->call == WC_IPC ? at : (unsigned long)ret,
			  tree);
		ws_regions(e, e->end);
	}
	/* Its own record, once those it replaces were taken. */
	ws_keep(wcall_family(e->call) |
		(wcall_family(e->call) == WC_MMAP && anon_private(e->args) ?
		 KEEP_ANON : 0), e->start, e->end, e->args[0]);
	if (!e->err && !e->nvictims) {
		if (c)
			__sync_fetch_and_add(&c->free, 1);
		return 0;
	}
	if (!e->err && only_reserved(e)) {
		if (c)
			__sync_fetch_and_add(&c->reserved, 1);
		return 0;
	}
	/*
	 * The file the call mapped, as its mapping has it: under overlayfs
	 * the descriptor's file is the overlay's and the mapping's the file
	 * below, which is what the victims' are.
	 */
	s = where_room_of();
	if (e->file_ino && s && !ws_where(e->start) && s->ino) {
		e->file_dev = s->dev;
		e->file_ino = s->ino;
	}
	return send(e, c);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_exit, struct pt_regs *regs, long ret)
{
	return leave(regs, ret, 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_exit_tree, struct pt_regs *regs, long ret)
{
	return leave(regs, ret, 1);
}

/* A new program: a new address space, its history gone. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	struct ws_key k = key_of(p);

	bpf_map_delete_elem(&history, &k);
	return 0;
}

/* A child of fork has its parent's memory, and its history. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct ws_key pk = key_of(parent), ck = {};
	struct ws_makers *h;

	/* A thread shares the history; a process gets a copy. */
	if (BPF_CORE_READ(child, tgid) == BPF_CORE_READ(parent, tgid))
		return 0;
	h = bpf_map_lookup_elem(&history, &pk);
	if (!h)
		return 0;
	ck.tgid = BPF_CORE_READ(child, tgid);
	ck.start = BPF_CORE_READ(child, start_time);
	bpf_map_update_elem(&history, &ck, h, BPF_ANY);
	return 0;
}

/*
 * The process gone: its last thread exiting (the kernel counts them down
 * before this tracepoint; a leader may exit before its threads).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_proc_exit, struct task_struct *p)
{
	struct ws_key k;

	if (BPF_CORE_READ(p, signal, live.counter))
		return 0;
	k = key_of(p);
	bpf_map_delete_elem(&history, &k);
	return 0;
}

/*
 * ---- refusals (--deny) ----
 *
 * The tool loads one set, the first the kernel lets attach: fmod_ret
 * programs on the LSM hooks' security_*() functions (a BPF trampoline:
 * no need for "bpf" among the active LSMs), or BPF LSM programs; and
 * mremap's where its system call's entry may be made to fail (a kernel
 * with error injection).  Each refuses the call its task is in if the
 * verdict taken at its entry says so, before the call takes the mmap
 * lock: what another thread maps in between is not seen.
 */
/*
 * The event of the fixed call of family the task is in, or NULL.  The
 * call is the one judged at its entry only if its arguments are the
 * same: an exit not seen would leave a verdict for a later call.
 */
static struct ws_event *judged(enum wcall family)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct ws_event *e = bpf_task_storage_get(&pending, t, NULL, 0);
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(t);
	unsigned long long a[6] = {};
	enum wcall call;
	unsigned int i;

	if (!e || !e->armed || wcall_family(e->call) != family || !r)
		return NULL;
	call = is_compat(t) ? args32(r, r->orig_ax, a) :
	       args64(r, r->orig_ax, a);
	if (call != e->call || !wcall_fixed(call, a))
		return NULL;
	/* ipc's were made shmat's at the entry. */
	for (i = 0; i < 6 && call != WC_IPC; i++)
		if (a[i] != e->args[i])
			return NULL;
	return e;
}

/*
 * The refusal of a call of family judged at its entry: mmap's at
 * security_mmap_file, before do_mmap (an mmap's only: shmat and exec
 * pass there too), mremap's at its system call's entry.
 */
static int refuse(enum wcall family)
{
	struct ws_event *e = judged(family);

	return e && e->verdict ? -EEXIST : 0;
}

/*
 * security_shm_shmat: the segment known, shmat judged here (its range is
 * the size of its file, as do_shmat takes it: a SHM_HUGETLB segment's is
 * rounded up to its huge page, newseg), before do_shmat maps it.
 */
static __always_inline int refuse_shmat(struct kern_ipc_perm *perm)
{
	struct ws_event *e = judged(WC_SHMAT);
	struct shmid_kernel *shp;
	unsigned long long size;
	unsigned int i, n = 0;

	if (!deny || !e || e->err)
		return 0;
	shp = (void *)(addr_of(perm) -
		       bpf_core_field_offset(struct shmid_kernel, shm_perm));
	size = BPF_CORE_READ(shp, shm_file, f_inode, i_size);
	if (!size)
		return 0;
	e->end = e->start + wc_page_up(size, PAGE);
	for (i = 0; i < WS_VICTIMS && i < e->nvictims; i++)
		if (e->v[i].start < e->end)
			n = i + 1;
	e->nvictims = n;
	if (n < WS_VICTIMS)
		e->truncated = 0;
	if (!n || only_reserved(e))
		return 0;
	e->verdict = ws_judge(e);
	return e->verdict ? -EEXIST : 0;
}

SEC("fmod_ret/security_mmap_file")
int BPF_PROG(deny_mmap, struct file *file)
{
	return refuse(WC_MMAP);
}

SEC("fmod_ret/security_shm_shmat")
int BPF_PROG(deny_shmat, struct kern_ipc_perm *perm)
{
	return refuse_shmat(perm);
}

SEC("lsm/mmap_file")
int BPF_PROG(deny_mmap_lsm, struct file *file)
{
	return refuse(WC_MMAP);
}

SEC("lsm/shm_shmat")
int BPF_PROG(deny_shmat_lsm, struct kern_ipc_perm *perm)
{
	return refuse_shmat(perm);
}

SEC("fmod_ret/__x64_sys_mremap")
int BPF_PROG(deny_mremap, struct pt_regs *regs)
{
	return refuse(WC_MREMAP);
}

SEC("fmod_ret/__ia32_sys_mremap")
int BPF_PROG(deny_mremap32, struct pt_regs *regs)
{
	return refuse(WC_MREMAP);
}

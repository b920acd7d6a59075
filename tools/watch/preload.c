/* SPDX-License-Identifier: MIT */
/*
 * libnoclobber-preload.so: the watcher inside the process.  Preloaded
 * (LD_PRELOAD), it takes the program's calls to mmap, mremap, shmat and
 * munmap, and syscall(2) naming them, before the C library's: every
 * region such a call makes is recorded with the module whose code asked;
 * every fixed placement is judged by the rules the other watchers use
 * (rules.c) and, by NCB_PRELOAD's mode, reported, refused, made
 * no-replace; with "emulate", MAP_FIXED_NOREPLACE is kept exactly by the
 * core, whatever the kernel or emulator does with the flag.
 *
 * What it cannot see: calls the C library makes itself (malloc's blocks,
 * thread stacks, the loader's mappings), which reach the kernel without
 * passing here, and a program's own system call instructions; memory
 * they made is of no known maker, and a placement over it unjudged.
 * noclobber(1) says what each mode does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "preload.h"

#define PL_API __attribute__((visibility("default")))

enum {
	M_JUDGE = 1,		/* fixed placements judged and reported */
	M_DENY = 2,		/* a clobber refused with EEXIST */
	M_UPGRADE = 4,		/* made no-replace, but over its own */
	M_EMULATE = 8,		/* MAP_FIXED_NOREPLACE kept by the core */
};

static struct {
	int state;		/* 0 not yet, 1 being set up, 2 set up */
	int mode;
	pid_t pid;		/* whose the counts are */
	struct pl_counts counts;
	int summarised;
	char program[64];
} pl PL_HOT;

/* The mappings a placement meets, as they are told (the lock held). */
static struct pl_victims victims;

/* ---- Set up: the environment's words ---- */

/*
 * Set up runs in every process the program starts, most of which make
 * no fixed placement: it calls nothing of the C library it can do
 * without (each function's first call has the loader look its name up in
 * every object), and leaves the rest to the first judgment.
 */
extern char **environ;

/* Whether a's first n bytes are b's (neither read past a difference). */
static int same_start(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Whether the n bytes at a are b's, and b has no more. */
static int word_is(const char *a, size_t n, const char *b)
{
	return same_start(a, b, n) && !b[n];
}

/* getenv(name), name of n bytes. */
static const char *env(const char *name, size_t n)
{
	char **e;

	for (e = environ; e && *e; e++)
		if (same_start(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

#define ENV(name) env(name, sizeof(name) - 1)

static int mode_word(const char *w, size_t n)
{
	static const struct {
		const char *name;
		int mode;
	} words[] = {
		{ "report", M_JUDGE },
		{ "deny", M_JUDGE | M_DENY },
		{ "upgrade", M_JUDGE | M_UPGRADE },
		{ "emulate", M_EMULATE },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (word_is(w, n, words[i].name))
			return words[i].mode;
	return -1;
}

/* NCB_PRELOAD: words joined by commas; unset or empty, "report". */
static int parse_mode(const char *s)
{
	int mode = 0, m;
	size_t n;

	if (!s || !*s)
		return M_JUDGE;
	for (; *s; s += n + !!s[n]) {
		for (n = 0; s[n] && s[n] != ','; n++)
			;
		m = mode_word(s, n);
		if (m < 0)
			return -1;
		mode |= m;
	}
	/* --deny and --upgrade, as the other watchers take them: one. */
	return (mode & M_DENY) && (mode & M_UPGRADE) ? -1 : mode;
}

/* The program's name as the kernel has it (comm), as the reports say. */
static void program_name(void)
{
	if (pl_name(pl.program))
		pl.program[0] = '\0';
}

/* The reports' file: NCB_PRELOAD_OUTPUT, appended to, or stderr. */
static int output(void)
{
	const char *f = ENV("NCB_PRELOAD_OUTPUT");
	int fd;

	if (!f || !*f)
		return 2;
	fd = pl_open_append(f);
	return fd < 0 ? 2 : fd;
}

/* NCB_PRELOAD_JSON: set, not empty and not "0". */
static int as_json(void)
{
	const char *j = ENV("NCB_PRELOAD_JSON");

	return j && *j && !(j[0] == '0' && !j[1]);
}

/* Whether this thread's fork took the lock (a handler's may not). */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	fork_locked = !pl_lock();
}

static void fork_parent(void)
{
	if (fork_locked)
		pl_unlock();
}

/* The child's own counts: its summary is of its own calls. */
static void fork_child(void)
{
	pl_space_child();
	pl.pid = pl_getpid();
	memset(&pl.counts, 0, sizeof(pl.counts));
	pl.summarised = 0;
}

static void set_up(void)
{
	int mode = parse_mode(ENV("NCB_PRELOAD"));

	program_name();
	pl.pid = pl_getpid();
	pl_out_init(output(), as_json(), pl.program);
	pl_space_init();
	if (mode < 0) {
		/* Watching less than asked would be worse than not at all. */
		pl_warn("NCB_PRELOAD: not a mode (report, deny, upgrade, "
			"emulate, joined by commas; deny and upgrade not "
			"together): the program is not run");
		_exit(125);
	}
	pl.mode = mode;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/*
 * Once, by whichever call comes first (a library's constructor may map
 * before ours runs); a call racing it waits.
 */
void pl_ensure(void)
{
	int none = 0;

	if (__atomic_load_n(&pl.state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (__atomic_compare_exchange_n(&pl.state, &none, 1, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		set_up();
		__atomic_store_n(&pl.state, 2, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&pl.state, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
}

__attribute__((constructor)) static void start(void)
{
	pl_ensure();
}

/*
 * Whether this process says summaries: set up, judging, and not a vfork
 * child (whose memory and counts are its parent's; nor a child of a fork
 * no handler saw, whose counts are its parent's too).
 */
static int summaries_here(void)
{
	return pl.state == 2 && (pl.mode & M_JUDGE) && pl.pid == pl_getpid();
}

/*
 * The process's summary, once, as it ends: by exit's destructors, or by
 * _exit and exit_group, which run none (qemu-user ends so).
 */
static void summarise(void)
{
	if (!summaries_here() || pl_lock())
		return;
	if (!pl.summarised)
		pl_summary(pl.pid, &pl.counts);
	pl.summarised = 1;
	pl_unlock();
}

__attribute__((destructor)) static void end(void)
{
	summarise();
}

/*
 * Before an exec (the lock held): the image it would replace says the
 * placements it made, which the new one, with memory and counts of its
 * own, could not; its summary at the end is then the new image's, under
 * the same process ID.  Should the exec fail, the counts start again, so
 * that the summaries add up.  An image that made none says nothing here.
 */
void pl_image_ends(void)
{
	static const struct pl_counts none;

	if (!summaries_here() || !memcmp(&pl.counts, &none, sizeof(none)))
		return;
	pl_summary(pl.pid, &pl.counts);
	pl.counts = none;
}

/* ---- A placement ---- */

/* A call taken: as the program made it, and where from. */
struct call {
	enum wcall c;
	long nr;			/* syscall(2)'s number; 0: the C
					   library's function */
	uint64_t a[6];			/* as mmap, mremap, shmat take them */
	uint64_t ret;			/* the return address in its caller */
	uint64_t sp;			/* about where its stack pointer was */
};

enum act { ACT_RUN, ACT_REFUSED, ACT_NOREPLACE };

static int is_mmap(const struct call *k)
{
	return wcall_family(k->c) == WC_MMAP;
}

static int noreplace(const struct call *k)
{
	return is_mmap(k) && (k->a[3] & WC_MAP_FIXED_NOREPLACE);
}

/* SHMLBA: four pages on arm (asm/shmparam.h), a page elsewhere. */
static uint64_t shmlba(void)
{
#ifdef __arm__
	return 4 * pl_page();
#else
	return pl_page();
#endif
}

static uint64_t seg_size(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) ? 0 : (uint64_t)ds.shm_segsz;
}

/* The range a fixed placement replaces: 0, or -1 if the kernel will
   refuse it (a huge page size not known, no such segment). */
static int range_of(const struct call *k, uint64_t *start, uint64_t *end)
{
	uint64_t page = pl_page(), gran = page, seg = 0;

	switch (wcall_family(k->c)) {
	case WC_MMAP:
		gran = pl_granule((int)k->a[3], (int)k->a[4]);
		break;
	case WC_MREMAP:
		gran = pl_page_at(k->a[0]);
		break;
	default:
		seg = seg_size((int)k->a[0]);
		break;
	}
	if (!gran || (wcall_family(k->c) == WC_SHMAT && !seg))
		return -1;
	wcall_range(k->c, k->a, seg, page, gran, shmlba(), start, end);
	return *end > *start ? 0 : -1;
}

/*
 * Whether the kernel refuses the call for its arguments before looking
 * at the range (mremap_to's and shmat's checks): it says so itself.
 */
static int kernel_refuses(const struct call *k)
{
	const uint64_t *a = k->a;
	uint64_t page = pl_page();

	if (wcall_family(k->c) == WC_MREMAP)
		return (a[3] & ~7ULL) || !(a[3] & WC_MREMAP_MAYMOVE) ||
		       ((a[0] | a[4]) & (page - 1)) || !a[2] ||
		       ((a[3] & WC_MREMAP_DONTUNMAP) && a[1] != a[2]) ||
		       !pl_mapped(a[0]);
	return (a[1] & (shmlba() - 1)) && !(a[2] & WC_SHM_RND);
}

static int names_heap(const struct pl_victims *vs)
{
	size_t i;

	for (i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].m.path, "[heap]"))
			return 1;
	return 0;
}

/* The process, the call and what it would replace, judged. */
static void judge(const struct call *k, struct pl_event *e)
{
	struct ncb__wcall c = { 0 };
	struct ncb__wthread self;
	struct ncb__wproc p;
	struct pl_victims *vs = &victims;

	pl_site_of(k->ret, &e->caller);
	if (range_of(k, &e->start, &e->end)) {
		e->cls = NCB__WC_NOTHING;
		return;
	}
	e->vs = vs;
	if (pl_victims(e->start, e->end, vs)) {
		e->vs = NULL;
		e->cls = NCB__WC_UNKNOWN;
		e->unjudged = 1;
		return;
	}
	self = (struct ncb__wthread){ e->tid, k->sp, 0 };
	pl_proc(&p, &self);
	c.start = e->start;
	c.end = e->end;
	/* Records are believed in what is named [heap] but is not heap. */
	p.sees_brk = names_heap(vs) && !pl_meets_heap(c.start, c.end);
	c.tid = e->tid;
	c.sp = k->sp;
	c.caller = e->caller.mod;
	if (is_mmap(k) && !(k->a[3] & WC_MAP_ANONYMOUS))
		c.file = pl_file((int)k->a[4]);
	/* Judged up to the last mapping read; past it, not known. */
	if (vs->truncated && vs->n && vs->v[vs->n - 1].m.end < c.end)
		c.end = vs->v[vs->n - 1].m.end;
	e->cls = ncb__wjudge(&p, &c, vs->v, vs->n, &e->culprit);
	if ((vs->truncated && !NCB__WC_CLOBBER(e->cls)) ||
	    e->cls == NCB__WC_UNKNOWN)
		e->unjudged = 1;
}

/*
 * What the mode does, as the ptrace watcher does it: under --deny a
 * clobber is refused (an mmap made no-replace by the core, so that the
 * kernel's own errors come first); under --upgrade every placement but
 * over the caller's own memory is made no-replace, and mremap and shmat,
 * which have no such form, refused where they would clobber.
 */
static enum act act(const struct call *k, const struct pl_event *e)
{
	int clobber = NCB__WC_CLOBBER(e->cls) || e->cls == NCB__WC_UNKNOWN;

	if (!(pl.mode & (M_DENY | M_UPGRADE)) ||
	    (!clobber && ((pl.mode & M_DENY) || e->cls != NCB__WC_NOTHING)))
		return ACT_RUN;
	/* No mapping type: the kernel's EINVAL, nothing replaced. */
	if (is_mmap(k) && !(k->a[3] & WC_MAP_TYPE_BITS))
		return ACT_RUN;
	if (is_mmap(k))
		return ACT_NOREPLACE;
	if (!clobber || kernel_refuses(k))
		return ACT_RUN;
	return ACT_REFUSED;
}

static long kernel(const struct call *k, int exact)
{
	const uint64_t *a = k->a;
	int flags = (int)a[3];

	/* As the program asked it (an x32 number stays x32's). */
	if (k->nr && !exact)
		return pl_sys(k->nr, (long)a[0], (long)a[1], (long)a[2],
			      (long)a[3], (long)a[4], (long)a[5]);

	switch (wcall_family(k->c)) {
	case WC_MMAP:
		if (exact)
			return pl_mmap_exact(a[0], a[1], (int)a[2], flags,
					     (int)a[4], (int64_t)a[5]);
		return pl_mmap(a[0], a[1], (int)a[2], flags, (int)a[4],
			       (int64_t)a[5]);
	case WC_MREMAP:
		return pl_mremap(a[0], a[1], a[2], flags, a[4]);
	default:
		return pl_shmat((int)a[0], a[1], (int)a[2]);
	}
}

/* What a call made, recorded with its maker; what it moved, forgotten. */
static void made(const struct call *k, long r)
{
	const struct ncb__wmod none = { 0, 0 };
	const uint64_t *a = k->a;
	uint64_t at = (uint64_t)r, page = pl_page(), len;

	switch (wcall_family(k->c)) {
	case WC_MMAP:
		len = pl_granule((int)a[3], (int)a[4]);
		len = wc_page_up(a[1], len ? len : page);
		/* Shared anonymous memory is a file of its own. */
		pl_record(at, at + len, k->ret, !(a[3] & WC_MAP_ANONYMOUS) ?
			  pl_file((int)a[4]) : (a[3] & WC_MAP_TYPE_BITS) !=
			  WC_MAP_PRIVATE ? pl_file_at(at) : none, WC_MMAP);
		break;
	case WC_MREMAP:
		len = wc_page_up(a[2], page);
		if (at != a[0] && !(a[3] & WC_MREMAP_DONTUNMAP))
			pl_forget(a[0], a[0] + wc_page_up(a[1], page));
		else if (at == a[0] && a[2] < a[1])
			pl_forget(a[0] + len, a[0] + wc_page_up(a[1], page));
		pl_record(at, at + len, k->ret, pl_file_at(at), WC_MREMAP);
		break;
	default:
		len = wc_page_up(seg_size((int)a[0]), page);
		pl_record(at, at + len, k->ret, pl_file_at(at), WC_SHMAT);
		break;
	}
}

/* Counted, and reported if a clobber, not judged, or refused. */
static void finish(struct pl_event *e)
{
	int as_asked = e->action == WA_REPORTED;

	pl.counts.fixed++;
	if (!NCB__WC_BENIGN(e->cls) && e->cls) {
		/* Refused by the kernel for its arguments: it replaced none. */
		if (e->result < 0 && (as_asked || e->result != -EEXIST)) {
			pl.counts.invalid++;
			return;
		}
		/* Made no-replace and placed: what was there had gone. */
		if (e->result >= 0 && !as_asked)
			e->cls = NCB__WC_NOTHING;
	}
	if (e->cls == NCB__WC_UNKNOWN)
		pl.counts.unjudged++;
	else
		pl.counts.by_class[e->cls]++;
	if (NCB__WC_CLOBBER(e->cls) || e->cls == NCB__WC_UNKNOWN ||
	    e->result == -EEXIST) {
		if (e->caller.path[0])
			pl_symbol(&e->caller);
		pl_report(e);
	}
}

static long fixed(const struct call *k)
{
	struct pl_event e = { 0 };
	enum act how;

	e.call = k->c;
	e.name = wcall_name(k->c, 0);
	memcpy(e.args, k->a, sizeof(e.args));
	e.pid = pl_getpid();
	e.tid = gettid();
	e.when = pl_since();
	judge(k, &e);
	how = act(k, &e);
	e.action = how == ACT_REFUSED ||
		   (how == ACT_NOREPLACE && (pl.mode & M_DENY)) ? WA_DENIED :
		   how == ACT_NOREPLACE ? WA_UPGRADED : WA_REPORTED;
	e.result = how == ACT_REFUSED ? -EEXIST :
		   kernel(k, how == ACT_NOREPLACE);
	e.have_result = 1;
	/* Reported first: its victims' records are of before the call. */
	finish(&e);
	if (e.result >= 0 || e.result < -4095)
		made(k, e.result);
	return e.result;
}

/*
 * A placement: judged if fixed, made, its region recorded.  A call from
 * a signal handler that interrupted this library's own work here finds
 * the lock taken: it runs unrecorded, or under --deny and --upgrade, a
 * fixed one, is refused, since it cannot be judged.
 */
static long placement(const struct call *k)
{
	int exact = (pl.mode & M_EMULATE) && noreplace(k);
	long r;

	pl_ensure();
	if (pl_lock()) {
		if (wcall_fixed(k->c, k->a) &&
		    (pl.mode & (M_DENY | M_UPGRADE)))
			return -EEXIST;
		return kernel(k, exact);
	}
	if (wcall_fixed(k->c, k->a) && (pl.mode & M_JUDGE)) {
		r = fixed(k);
	} else {
		r = kernel(k, exact);
		if (r >= 0 || r < -4095)
			made(k, r);
	}
	pl_unlock();
	return r;
}

static long unmap(uint64_t addr, uint64_t len)
{
	long r;

	pl_ensure();
	r = pl_munmap(addr, len);
	if (!r && !pl_lock()) {
		pl_forget(addr, addr + wc_page_up(len, pl_page()));
		pl_unlock();
	}
	return r;
}

/* ---- The calls taken ---- */

/* mmap's contract: the address, or MAP_FAILED with errno. */
static void *as_mmap(long r, int saved)
{
	if (r < 0 && r >= -4095) {
		errno = (int)-r;
		return MAP_FAILED;
	}
	errno = saved;
	return (void *)r;
}

/* Where the call taken was made from: its caller's return address. */
#define RET ((uint64_t)(uintptr_t)__builtin_return_address(0))
#define SP ((uint64_t)(uintptr_t)__builtin_frame_address(0))
#define HERE(k) ((k)->ret = RET, (k)->sp = SP)

/* mmap and mmap64, whose offsets differ in type on 32-bit machines. */
static void *mmap_from(uint64_t ret, uint64_t sp, void *addr, size_t len,
		       int prot, int flags, int fd, int64_t off)
{
	struct call k = { WC_MMAP, 0, { (uintptr_t)addr, len, (uint64_t)prot,
				     (uint64_t)flags, (uint64_t)fd,
				     (uint64_t)off }, ret, sp };
	int saved = errno;

	return as_mmap(placement(&k), saved);
}

PL_API void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	return mmap_from(RET, SP, addr, len, prot, flags, fd, off);
}

PL_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off64_t off)
{
	return mmap_from(RET, SP, addr, len, prot, flags, fd, off);
}

PL_API void *mremap(void *old, size_t old_len, size_t new_len, int flags,
		    ...)
{
	struct call k = { WC_MREMAP, 0, { (uintptr_t)old, old_len, new_len,
				       (uint64_t)flags, 0, 0 }, 0, 0 };
	int saved = errno;
	va_list ap;

	/* The fifth argument is there only with these (glibc's rule). */
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_start(ap, flags);
		k.a[4] = (uintptr_t)va_arg(ap, void *);
		va_end(ap);
	}
	HERE(&k);
	return as_mmap(placement(&k), saved);
}

PL_API void *shmat(int id, const void *addr, int flags)
{
	struct call k = { WC_SHMAT, 0, { (uint64_t)id, (uintptr_t)addr,
				      (uint64_t)flags, 0, 0, 0 }, 0, 0 };
	int saved = errno;
	long r;

	HERE(&k);
	r = placement(&k);
	if (r < 0 && r >= -4095) {
		errno = (int)-r;
		return (void *)-1;
	}
	errno = saved;
	return (void *)r;
}

PL_API int munmap(void *addr, size_t len)
{
	int saved = errno;
	long r = unmap((uintptr_t)addr, len);

	errno = r ? (int)-r : saved;
	return r ? -1 : 0;
}

/*
 * The process ends without exit's destructors: its summary first.  The
 * end itself as the C library makes it (exit_group; exit, were it
 * refused).
 */
static __attribute__((noreturn)) void ends(int status)
{
	summarise();
	for (;;) {
		pl_sys(SYS_exit_group, status, 0, 0, 0, 0, 0);
		pl_sys(SYS_exit, status, 0, 0, 0, 0, 0);
	}
}

PL_API void _exit(int status)
{
	ends(status);
}

PL_API void _Exit(int status)
{
	ends(status);
}

/*
 * The call a system call number names, its arguments as mmap, mremap and
 * shmat take them (mmap2's offset in 4096-byte units made bytes; the old
 * mmap's six read from the block its one argument points at); WC_NONE
 * for any other.
 */
static enum wcall syscall_call(long n, const long a[6], uint64_t out[6])
{
	int i;

#ifdef __x86_64__
	/* x32's numbers: the native ones with a bit set, the same calls. */
	n &= ~0x40000000L;
#endif
	for (i = 0; i < 6; i++)
		out[i] = (uint64_t)(unsigned long)a[i];
#ifdef SYS_mmap2
	if (n == SYS_mmap2) {
		out[5] <<= 12;
		return WC_MMAP;
	}
#endif
#if defined(SYS_mmap) && (defined(__i386__) || defined(__s390x__))
	if (n == SYS_mmap) {
		const unsigned long *block = (const unsigned long *)a[0];

		for (i = 0; i < 6; i++)
			out[i] = block ? block[i] : 0;
		return block ? WC_MMAP : WC_NONE;
	}
#elif defined(SYS_mmap)
	if (n == SYS_mmap)
		return WC_MMAP;
#endif
	if (n == SYS_mremap)
		return WC_MREMAP;
#ifdef SYS_shmat
	if (n == SYS_shmat)
		return WC_SHMAT;
#endif
	return WC_NONE;
}

/*
 * syscall(2) naming a call taken goes the same way; any other is made
 * as the C library would make it.
 */
PL_API long syscall(long n, ...)
{
	struct call k = { WC_NONE, 0, { 0 }, 0, 0 };
	int saved = errno, i;
	long a[6], r;
	va_list ap;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	HERE(&k);
	k.c = syscall_call(n, a, k.a);
#ifdef __x86_64__
	/* x32's made as asked: a kernel without x32 refuses it. */
	if (n & 0x40000000L)
		k.nr = n;
#endif
	if (k.c != WC_NONE)
		r = placement(&k);
	else if (n == SYS_munmap)
		r = unmap(k.a[0], k.a[1]);
	else if (n == SYS_exit_group)
		ends((int)a[0]);
	else
		r = pl_sys(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r < 0 && r >= -4095) {
		errno = (int)-r;
		return -1;
	}
	errno = saved;
	return r;
}

/*
 * dlclose: code may be unmapped by the loader, whose calls are not ours
 * to see, and another module loaded where it was; a caller's module is
 * then asked afresh.
 */
typedef int close_fn(void *);

PL_API int dlclose(void *handle)
{
	static close_fn *real;
	int r;

	if (!real)
		real = (close_fn *)dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1;
	r = real(handle);
	if (!pl_lock()) {
		pl_code_changed();
		pl_unlock();
	}
	return r;
}

/*
 * pthread_create: the thread started by a function of ours first, which
 * records where its stack is (the rules tell one thread's stack from
 * another's by that) until it ends.  Threads made otherwise (clone(2)
 * itself) are not known: their stacks are memory of no known maker.
 */
typedef int create_fn(pthread_t *, const pthread_attr_t *,
		      void *(*)(void *), void *);

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void thread_ends(void *unused)
{
	(void)unused;
	if (!pl_lock()) {
		pl_thread_end(gettid());
		pl_unlock();
	}
}

static void *thread_starts(void *p)
{
	struct start s = *(struct start *)p;
	void *r;

	free(p);
	if (!pl_lock()) {
		pl_thread_runs(gettid(),
			       (uintptr_t)__builtin_frame_address(0));
		pl_unlock();
	}
	pthread_cleanup_push(thread_ends, NULL);
	r = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return r;
}

/* The new thread's stack, known before it runs. */
static void known_stack(pthread_t t)
{
	pthread_attr_t at;
	size_t size;
	void *base;

	if (pthread_getattr_np(t, &at))
		return;
	if (!pthread_attr_getstack(&at, &base, &size) && !pl_lock()) {
		pl_thread_made((uintptr_t)base, (uintptr_t)base + size);
		pl_unlock();
	}
	pthread_attr_destroy(&at);
}

PL_API int pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	static create_fn *real;
	struct start *s;
	int r;

	if (!real)
		real = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	if (!real)
		return EAGAIN;
	s = malloc(sizeof(*s));
	if (!s)
		return real(t, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	r = real(t, attr, thread_starts, s);
	if (r)
		free(s);
	else
		known_stack(*t);
	return r;
}

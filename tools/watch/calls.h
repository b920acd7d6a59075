/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * The calls a watcher judges, one vocabulary for every watcher: the BPF
 * programs (system.bpf.c) and user space (the ptrace engine, the system
 * watcher's reader, the reports) include this header alone for them.
 * Plain C, no libc header and no kernel type, so that clang's BPF target
 * compiles it as it is.
 *
 * A fixed placement is one of three calls (mmap, mremap, shmat), reached
 * through five entries across the two ABIs watched: x86_64's, and i386's
 * on an x86_64 kernel.  A port to another ABI adds its numbers to
 * wcall_of() and its registers (arch.h).
 */
#ifndef NCB_WATCH_CALLS_H
#define NCB_WATCH_CALLS_H

#ifdef __bpf__
typedef unsigned long long wc_u64;
#else
#include <stdint.h>
typedef uint64_t wc_u64;
#endif

/*
 * The flag bits tested, as the kernel's uapi headers have them for x86
 * (asm-generic/mman-common.h, linux/mman.h, linux/shm.h, linux/ipc.h).
 * User space checks them against the C library's and noclobber.h's at
 * build time (trace-filter.c): the BPF target has neither header.
 */
#define WC_MAP_FIXED		0x10
#define WC_MAP_ANONYMOUS	0x20
#define WC_MAP_DENYWRITE	0x0800	/* ignored by the kernel; glibc's
					   ld.so maps objects with it */
#define WC_MAP_FIXED_NOREPLACE	0x100000
#define WC_MAP_TYPE_BITS	0x03	/* MAP_SHARED | MAP_PRIVATE */
#define WC_MAP_PRIVATE		0x02
#define WC_MAP_SHARED_VALIDATE	0x03
#define WC_MAP_HUGETLB		0x40000
#define WC_MAP_HUGE_SHIFT	26
#define WC_MAP_HUGE_MASK	0x3f
#define WC_MREMAP_MAYMOVE	1
#define WC_MREMAP_FIXED		2
#define WC_MREMAP_DONTUNMAP	4
#define WC_SHM_RND		020000
#define WC_SHM_REMAP		040000
#define WC_IPC_SHMAT		21	/* ipc(2)'s call number for shmat */
#define WC_CLONE_VM		0x100
#define WC_CLONE_VFORK		0x4000
#define WC_CLONE_THREAD		0x10000

/*
 * A call by what it is and how it takes its arguments.  The values are
 * the seccomp filter's trace tags and the BPF event's call field.
 */
enum wcall {
	WC_NONE,
	WC_MMAP,	/* mmap; i386's mmap2 (its offset in pages) */
	WC_OLD_MMAP,	/* i386's mmap: its six arguments in a block */
	WC_MREMAP,
	WC_SHMAT,
	WC_IPC,		/* i386's ipc(SHMAT | version << 16, shmid, shmflg,
			   &result, addr) */
};

/* What the call does, whichever entry it came by: mmap, mremap, shmat. */
static inline enum wcall wcall_family(enum wcall c)
{
	return c == WC_OLD_MMAP ? WC_MMAP : c == WC_IPC ? WC_SHMAT : c;
}

/* The call's name as strace gives it (compat: a 32-bit caller). */
static inline const char *wcall_name(enum wcall c, int compat)
{
	switch (c) {
	case WC_MMAP:
		return compat ? "mmap2" : "mmap";
	case WC_OLD_MMAP:
		return "old_mmap";
	case WC_MREMAP:
		return "mremap";
	case WC_SHMAT:
		return "shmat";
	case WC_IPC:
		return "ipc";
	default:
		return "?";
	}
}

/* The ABIs' system call numbers (syscall_64.tbl, syscall_32.tbl). */
#define WC_NR_MMAP		9
#define WC_NR_MREMAP		25
#define WC_NR_SHMAT		30
#define WC_NR_CLONE		56
#define WC_NR32_OLD_MMAP	90
#define WC_NR32_IPC		117
#define WC_NR32_CLONE		120
#define WC_NR32_MREMAP		163
#define WC_NR32_MMAP2		192
#define WC_NR32_SHMAT		397
#define WC_NR_CLONE3		435	/* both ABIs */
#define WC_NR_PRCTL		157
#define WC_NR32_PRCTL		172
#define WC_PR_SET_MM		35	/* prctl's: an address space's fields */

/*
 * x32's calls come by x86_64's entry, their numbers x86_64's with this
 * bit set (__X32_SYSCALL_BIT); mmap, mremap and shmat are "common" in
 * syscall_64.tbl: the same numbers, arguments and kernel functions.  A
 * kernel that takes no x32 call (syscall.x32=n, Debian's default) fails
 * them with ENOSYS, which a watcher sees at their exit.
 */
#define WC_X32_BIT		0x40000000

/* The call a system call number is in an ABI (x32's: x86_64's), or 0. */
static inline enum wcall wcall_of(int compat, wc_u64 nr)
{
	if (!compat)
		nr &= ~(wc_u64)WC_X32_BIT;
	if (!compat)
		return nr == WC_NR_MMAP ? WC_MMAP :
		       nr == WC_NR_MREMAP ? WC_MREMAP :
		       nr == WC_NR_SHMAT ? WC_SHMAT : WC_NONE;
	return nr == WC_NR32_OLD_MMAP ? WC_OLD_MMAP :
	       nr == WC_NR32_MMAP2 ? WC_MMAP :
	       nr == WC_NR32_MREMAP ? WC_MREMAP :
	       nr == WC_NR32_SHMAT ? WC_SHMAT :
	       nr == WC_NR32_IPC ? WC_IPC : WC_NONE;
}

/* Whether a number is one of those calls in either ABI (not yet known). */
static inline int wcall_any(wc_u64 nr)
{
	return wcall_of(0, nr) != WC_NONE || wcall_of(1, nr) != WC_NONE;
}

/* clone's number in an ABI. */
static inline wc_u64 wcall_nr_clone(int compat)
{
	return compat ? WC_NR32_CLONE : WC_NR_CLONE;
}

/*
 * Whether the call, with its arguments as it takes them (ipc's not yet
 * made shmat's), places at a fixed address over whatever is there: mmap
 * with MAP_FIXED but not MAP_FIXED_NOREPLACE, mremap with MREMAP_FIXED,
 * shmat with SHM_REMAP.  old_mmap's arguments are in memory: its block
 * is read first, and tested as mmap's.  The masks are the seccomp
 * filter's too (trace-filter.c).
 */
static inline int wcall_fixed(enum wcall c, const wc_u64 a[6])
{
	switch (c) {
	case WC_MMAP:
	case WC_OLD_MMAP:
		return (a[3] & (WC_MAP_FIXED | WC_MAP_FIXED_NOREPLACE)) ==
		       WC_MAP_FIXED;
	case WC_MREMAP:
		return !!(a[3] & WC_MREMAP_FIXED);
	case WC_SHMAT:
		return !!(a[2] & WC_SHM_REMAP);
	case WC_IPC:
		/* The kernel reads the call number from the low 16 bits. */
		return (a[0] & 0xffff) == WC_IPC_SHMAT &&
		       (a[2] & WC_SHM_REMAP);
	default:
		return 0;
	}
}

/*
 * Whether the call is a placement at no fixed address (a plain mmap, a
 * mremap without MREMAP_FIXED, a shmat without SHM_REMAP): the region it
 * makes is recorded, not judged.
 */
static inline int wcall_plain(enum wcall c, const wc_u64 a[6])
{
	if (c == WC_IPC && (a[0] & 0xffff) != WC_IPC_SHMAT)
		return 0;
	return c != WC_NONE && !wcall_fixed(c, a);
}

/*
 * ipc's arguments made shmat's (shmid, addr, shmflg): its version (the
 * high half of its first) returned; &result, where the kernel writes the
 * address, stays the fourth.
 */
static inline unsigned int wcall_ipc_args(wc_u64 a[6])
{
	unsigned int version = (unsigned int)(a[0] >> 16 & 0xffff);

	a[0] = a[1];
	a[1] = a[4];
	return version;
}

/* A length rounded up to pages; the last page's start if that wraps. */
static inline wc_u64 wc_page_up(wc_u64 n, wc_u64 page)
{
	if (n + page - 1 < n)
		return ~(wc_u64)0 & ~(page - 1);
	return (n + page - 1) & ~(page - 1);
}

/*
 * What an mmap's length is rounded up to: a page, or for MAP_HUGETLB a
 * huge page, of the size MAP_HUGE_SHIFT's bits give or else the default
 * (huge): ksys_mmap_pgoff, mm/mmap.c, len = ALIGN(len, huge_page_size).
 * The kernel replaces the whole huge page, not the length asked.
 */
static inline wc_u64 wcall_mmap_granule(const wc_u64 a[6], wc_u64 page,
					wc_u64 huge)
{
	wc_u64 lg = a[3] >> WC_MAP_HUGE_SHIFT & WC_MAP_HUGE_MASK;

	if (!(a[3] & WC_MAP_HUGETLB))
		return page;
	return lg ? (wc_u64)1 << lg : huge;
}

/*
 * The range [*start, *end) a fixed placement replaces, from its
 * arguments as mmap, mremap and shmat take them.  An mmap's length is
 * rounded up to gran (a page, or a huge page: wcall_mmap_granule, or a
 * hugetlbfs file's), an mremap's too (its source's huge page, where the
 * caller knows it; else a page), shmat's is its segment's (seg, in
 * bytes: 0 until known), its address rounded down to shmlba with SHM_RND.
 * A range whose end wraps is the kernel's EINVAL.
 */
static inline void wcall_range(enum wcall c, const wc_u64 a[6], wc_u64 seg,
			       wc_u64 page, wc_u64 gran, wc_u64 shmlba,
			       wc_u64 *start, wc_u64 *end)
{
	switch (wcall_family(c)) {
	case WC_MREMAP:
		*start = a[4];
		*end = a[4] + wc_page_up(a[2], gran);
		break;
	case WC_SHMAT:
		*start = a[2] & WC_SHM_RND ? a[1] & ~(shmlba - 1) : a[1];
		*end = *start + wc_page_up(seg, page);
		break;
	default:
		*start = a[0];
		*end = a[0] + wc_page_up(a[1], gran);
		break;
	}
}

/*
 * Ways around a tracer: a seccomp filter of the program's own with a user
 * notification listener (SECCOMP_RET_USER_NOTIF outranks the watcher's
 * SECCOMP_RET_TRACE, and the listener may let the call run), and the
 * program tracing a child that shares its memory (a CLONE_UNTRACED one,
 * which no watcher follows, answering its seccomp stops itself).
 * (include/uapi/linux/seccomp.h, ptrace.h; kernel/seccomp.c)
 */
#define WC_NR_BRK		12
#define WC_NR32_BRK		45
#define WC_NR_PTRACE		101
#define WC_NR32_PTRACE		26
#define WC_NR_SECCOMP		317
#define WC_NR32_SECCOMP		354
#define WC_PTRACE_ATTACH	16
#define WC_PTRACE_SEIZE		0x4206
#define WC_SECCOMP_SET_MODE_FILTER	1
#define WC_SECCOMP_FLAG_NEW_LISTENER	8

enum wescape {
	WE_NONE,
	WE_LISTENER,	/* seccomp(SET_MODE_FILTER, NEW_LISTENER) */
	WE_PTRACE,	/* ptrace(PTRACE_ATTACH or PTRACE_SEIZE) */
};

static inline enum wescape wcall_escape(int compat, wc_u64 nr,
					const wc_u64 a[6])
{
	if (nr == (compat ? WC_NR32_SECCOMP : WC_NR_SECCOMP) &&
	    (a[0] & 0xffffffff) == WC_SECCOMP_SET_MODE_FILTER &&
	    (a[1] & WC_SECCOMP_FLAG_NEW_LISTENER))
		return WE_LISTENER;
	if (nr == (compat ? WC_NR32_PTRACE : WC_NR_PTRACE) &&
	    ((a[0] & 0xffffffff) == WC_PTRACE_ATTACH ||
	     (a[0] & 0xffffffff) == WC_PTRACE_SEIZE))
		return WE_PTRACE;
	return WE_NONE;
}

static inline const char *wescape_name(enum wescape e)
{
	return e == WE_LISTENER ? "seccomp-listener" :
	       e == WE_PTRACE ? "ptrace" : "none";
}

/* What a watcher did with a call. */
enum waction {
	WA_REPORTED,	/* let run as asked, and reported */
	WA_DENIED,	/* refused with EEXIST (or made no-replace, by deny);
			   a way around the watcher, with EPERM */
	WA_UPGRADED,	/* made no-replace: EEXIST if something is there */
};

static inline const char *waction_name(enum waction a)
{
	return a == WA_DENIED ? "denied" : a == WA_UPGRADED ? "upgraded" :
	       "reported";
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * noclobber core: mmap and mremap at a fixed address that never replace
 * what is there, exact on every Linux kernel and emulator, in one file.
 *
 * Copyright (c) the noclobber authors.  Permission is hereby granted, free
 * of charge, to any person obtaining a copy of this software and associated
 * documentation files (the "Software"), to deal in the Software without
 * restriction, including without limitation the rights to use, copy,
 * modify, merge, publish, distribute, sublicense, and/or sell copies of the
 * Software, and to permit persons to whom the Software is furnished to do
 * so, subject to the following conditions: the above copyright notice and
 * this permission notice shall be included in all copies or substantial
 * portions of the Software.  THE SOFTWARE IS PROVIDED "AS IS", WITHOUT
 * WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE
 * WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 * NONINFRINGEMENT.  IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE
 * LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 * CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH
 * THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 *
 * Use: include it anywhere for the declarations; in exactly one
 * translation unit define NCB_CORE_IMPLEMENTATION first for the
 * definitions.  Define NCB_CORE_DEF as static there (and only include it
 * there) to keep every symbol private.  Nothing else is needed: no libc
 * (it compiles with -ffreestanding -nostdlib), no malloc, no locks, no
 * thread-local storage.  Every call is async-signal-safe and may be made
 * after fork in a threaded process, in a static -nostdlib program and
 * inside an allocator.  x86_64, i386, aarch64, armhf, riscv64, ppc64le
 * and s390x.
 *
 * Each call returns what the system call would: an address, or -errno.
 * An error is a value in [-4095, -1]; on 32-bit systems an address may
 * look negative as a long, so test with NCB_CORE_FAILED(ret).
 *
 * Where the kernel honours MAP_FIXED_NOREPLACE (Linux 4.19 and later)
 * ncb_core_mmap is that one system call.  Elsewhere (Linux before 4.17,
 * where the flag is a hint; 4.17 and 4.18, which miss a mapping that
 * starts inside the range; qemu-user and valgrind, which ignore it) the
 * range is first claimed with operations the kernel performs atomically
 * and that cannot replace anything (a plain hint, which the kernel takes
 * only if the range is free, and mremap growing in place), then mapped
 * with MAP_FIXED over that claim alone.  EEXIST is returned exactly when
 * something occupies the range, as /proc/self/maps says, and after what
 * the kernel checks first (the map count and the end of the address
 * space are asked of it, with a call that cannot map).
 */
#ifndef NCB_NOREPLACE_DEFINED
#define NCB_NOREPLACE_DEFINED
/* What the running kernel (or emulator) does with MAP_FIXED_NOREPLACE. */
enum ncb_noreplace {
	NCB_NOREPLACE_HONOURED = 1,	/* exact: maps at addr or EEXIST */
	NCB_NOREPLACE_IGNORED = 2,	/* treated as a hint: < 4.17, qemu-user,
					   valgrind */
	NCB_NOREPLACE_PARTIAL = 3,	/* 4.17, 4.18: misses a mapping that
					   starts inside the range */
	NCB_NOREPLACE_REJECTED = 4,	/* mmap fails when given the flag */
	NCB_NOREPLACE_REPLACES = 5,	/* behaves like MAP_FIXED */
};
#endif

/* noclobber.h takes the enum alone from here. */
#if !defined(NOCLOBBER_CORE_H) && !defined(NCB_CORE_ENUM_ONLY)
#define NOCLOBBER_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NCB_CORE_DEF
#define NCB_CORE_DEF extern
#endif

/* An error returned by a call of this file (the kernel's convention). */
#define NCB_CORE_FAILED(ret) ((unsigned long)(ret) >= -4095UL)

/*
 * mmap(addr, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off) with the
 * flag's promise kept: mapped exactly at addr, or -EEXIST if anything is
 * there, or the error the kernel gives with the flag.  MAP_FIXED and
 * MAP_FIXED_NOREPLACE in flags are ignored: the placement is always
 * fixed and never replaces.  off is in bytes.  One exception: the kernel
 * refuses MAP_SHARED_VALIDATE together with the flag (EOPNOTSUPP); here
 * such a mapping is made as the flag would make it if it were accepted.
 */
NCB_CORE_DEF long ncb_core_mmap(void *addr, unsigned long len, int prot,
				int flags, int fd, long long off);

/*
 * mremap(old_addr, old_len, new_len, MREMAP_MAYMOVE | MREMAP_FIXED |
 * (flags & MREMAP_DONTUNMAP), new_addr), but -EEXIST instead of replacing
 * anything at new_addr.
 */
NCB_CORE_DEF long ncb_core_mremap(void *old_addr, unsigned long old_len,
				  unsigned long new_len, int flags,
				  void *new_addr);

/*
 * What this kernel does with MAP_FIXED_NOREPLACE (enum ncb_noreplace),
 * found by experiment on memory of its own the first time, then
 * remembered.
 */
NCB_CORE_DEF int ncb_core_probe(void);

/*
 * The pieces, for callers that need them: the calls above as if the
 * kernel behaved as mode says (a test of the fallback paths on a new
 * kernel); claim [addr, addr + len) as a PROT_NONE placeholder without
 * replacing anything (0 or -errno); whether anything is mapped in
 * [start, end) (1, 0 or -errno) or [start, end) lies in one mapping; the
 * page size; /proc/sys/vm/mmap_min_addr (0 if unreadable); whether the
 * PROCMAP_QUERY ioctl answers (Linux 6.11); whether the maps leave out
 * PROT_NONE mappings (qemu-user's 32-bit guests).
 */
NCB_CORE_DEF long ncb_core_mmap_mode(void *addr, unsigned long len, int prot,
				     int flags, int fd, long long off,
				     int mode);
NCB_CORE_DEF long ncb_core_mremap_mode(void *old_addr, unsigned long old_len,
				       unsigned long new_len, int flags,
				       void *new_addr, int mode);
NCB_CORE_DEF int ncb_core_claim(unsigned long addr, unsigned long len,
				int mode);
NCB_CORE_DEF int ncb_core_occupied(unsigned long start, unsigned long end);
NCB_CORE_DEF int ncb_core_in_one_mapping(unsigned long start,
					 unsigned long end);
NCB_CORE_DEF unsigned long ncb_core_page_size(void);
NCB_CORE_DEF unsigned long ncb_core_mmap_min_addr(void);
NCB_CORE_DEF unsigned long ncb_core_kernel_release(void);
NCB_CORE_DEF int ncb_core_procmap_query(void);
NCB_CORE_DEF int ncb_core_maps_hide_prot_none(void);

#ifdef __cplusplus
}
#endif

#endif /* NOCLOBBER_CORE_H */

#if defined(NCB_CORE_IMPLEMENTATION) && !defined(NCB_CORE_ENUM_ONLY)
#ifndef NCB_CORE_IMPLEMENTED
#define NCB_CORE_IMPLEMENTED

/*
 * No stack protector, whatever the compiler's default: its check calls
 * __stack_chk_fail and reads a canary from the C library's thread block,
 * neither of which a freestanding program, or code running before the
 * C library is set up, has.  Define NCB_CORE_STACK_PROTECTOR to leave it
 * to the compiler's flags (a hosted build: the library's own).
 */
#ifdef NCB_CORE_STACK_PROTECTOR
#elif defined(__clang__) && defined(__has_attribute)
#if __has_attribute(no_stack_protector)
#define NCB__NO_SSP_CLANG
#pragma clang attribute push(__attribute__((no_stack_protector)), \
			     apply_to = function)
#endif
#elif defined(__GNUC__)
#define NCB__NO_SSP_GCC
#pragma GCC push_options
#pragma GCC optimize("no-stack-protector")
#endif

/*
 * Atomic read-modify-writes inline: aarch64's GCC calls libgcc's
 * __aarch64_ldadd* helpers for them by default (-moutline-atomics),
 * which a freestanding program does not link.
 */
#if defined(__aarch64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC target("no-outline-atomics")
#define NCB__INLINE_ATOMICS_GCC
#endif

/* Unused in a vendor's file when NCB_CORE_DEF is static: no warning. */
#define NCB__FN NCB_CORE_DEF __attribute__((unused))

/* System call numbers only: the uapi header every libc uses itself. */
#include <asm/unistd.h>
#include <linux/ioctl.h>

/*
 * The ABI values this file needs, the same on every architecture it
 * supports (asm-generic/mman-common.h, errno-base.h, errno.h, fcntl.h),
 * under names of its own: a caller's libc headers define the usual ones,
 * spelled differently.  ppc64le alone moves MAP_NORESERVE.
 */
#define NCB__MAP_SHARED		0x01
#define NCB__MAP_PRIVATE	0x02
#define NCB__MAP_SHARED_VALIDATE 0x03
#define NCB__MAP_TYPE		0x0f
#define NCB__MAP_FIXED		0x10
#define NCB__MAP_ANONYMOUS	0x20
#if defined(__powerpc__)
#define NCB__MAP_NORESERVE	0x40
#else
#define NCB__MAP_NORESERVE	0x4000
#endif
#define NCB__MAP_NOREPLACE	0x100000
#define NCB__MAP_HUGETLB	0x40000
#define NCB__MAP_HUGE_SHIFT	26
#if defined(__x86_64__)
#define NCB__MAP_32BIT		0x40
#else
#define NCB__MAP_32BIT		0
#endif
#define NCB__MREMAP_MAYMOVE	1
#define NCB__MREMAP_FIXED	2
#define NCB__MREMAP_DONTUNMAP	4
#define NCB__EPERM		1
#define NCB__ENOENT		2
#define NCB__EBADF		9
#define NCB__EAGAIN		11
#define NCB__ENOMEM		12
#define NCB__EACCES		13
#define NCB__EFAULT		14
#define NCB__EEXIST		17
#define NCB__ENODEV		19
#define NCB__EINVAL		22
#define NCB__ENOTTY		25
#define NCB__ETXTBSY		26
#define NCB__EOVERFLOW		75
#define NCB__EOPNOTSUPP		95
#define NCB__EADDRNOTAVAIL	99
#define NCB__O_RDONLY		0
#define NCB__O_CLOEXEC		02000000
#define NCB__O_NONBLOCK		04000
#define NCB__AT_FDCWD		(-100)
#define NCB__F_GETFD		1

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__) && \
	!defined(__arm__) && !(defined(__riscv) && __riscv_xlen == 64) && \
	!(defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)) && \
	!defined(__s390x__)
#error "noclobber_core.h: no system calls for this architecture"
#endif

/* ---- Raw system calls: six arguments, -errno on failure. ---- */

#if defined(__x86_64__)
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__i386__)
/*
 * int $0x80 takes the sixth argument in %ebp, which may be the frame
 * pointer: it is saved around the call, and the number and sixth
 * argument come through memory %eax points at.
 */
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	long nf[2] = { n, f }, ret;

	__asm__ volatile("push %%ebp\n\t"
			 "mov 4(%%eax), %%ebp\n\t"
			 "mov (%%eax), %%eax\n\t"
			 "int $0x80\n\t"
			 "pop %%ebp"
			 : "=a"(ret)
			 : "a"(nf), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
			   "r"(x5)
			 : "memory");
	return x0;
}
#elif defined(__arm__)
/*
 * EABI: the number in r7, which Thumb code may use as its frame pointer:
 * it is saved in ip, which the call list marks as clobbered.
 */
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;
	register long r3 __asm__("r3") = d;
	register long r4 __asm__("r4") = e;
	register long r5 __asm__("r5") = f;

	__asm__ volatile("mov ip, r7\n\t"
			 "mov r7, %[n]\n\t"
			 "svc 0\n\t"
			 "mov r7, ip"
			 : "+r"(r0)
			 : [n] "r"(n), "r"(r1), "r"(r2), "r"(r3), "r"(r4),
			   "r"(r5)
			 : "ip", "memory");
	return r0;
}
#elif defined(__riscv)
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long a7 __asm__("a7") = n;
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a3 __asm__("a3") = d;
	register long a4 __asm__("a4") = e;
	register long a5 __asm__("a5") = f;

	__asm__ volatile("ecall"
			 : "+r"(a0)
			 : "r"(a7), "r"(a1), "r"(a2), "r"(a3), "r"(a4),
			   "r"(a5)
			 : "memory");
	return a0;
}
#elif defined(__powerpc64__)
/* sc reports failure in cr0's summary-overflow bit, errno positive. */
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long r0 __asm__("r0") = n;
	register long r3 __asm__("r3") = a;
	register long r4 __asm__("r4") = b;
	register long r5 __asm__("r5") = c;
	register long r6 __asm__("r6") = d;
	register long r7 __asm__("r7") = e;
	register long r8 __asm__("r8") = f;

	__asm__ volatile("sc\n\t"
			 "bns+ 1f\n\t"
			 "neg %1, %1\n"
			 "1:"
			 : "+r"(r0), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6),
			   "+r"(r7), "+r"(r8)
			 :
			 : "r9", "r10", "r11", "r12", "cr0", "ctr", "xer",
			   "memory");
	return r3;
}
#elif defined(__s390x__)
static inline long ncb__sc(long n, long a, long b, long c, long d, long e,
			   long f)
{
	register long r1 __asm__("r1") = n;
	register long r2 __asm__("r2") = a;
	register long r3 __asm__("r3") = b;
	register long r4 __asm__("r4") = c;
	register long r5 __asm__("r5") = d;
	register long r6 __asm__("r6") = e;
	register long r7 __asm__("r7") = f;

	__asm__ volatile("svc 0"
			 : "+r"(r2)
			 : "r"(r1), "r"(r3), "r"(r4), "r"(r5), "r"(r6),
			   "r"(r7)
			 : "memory");
	return r2;
}
#endif

#define NCB__SC1(n, a) ncb__sc((n), (long)(a), 0, 0, 0, 0, 0)
#define NCB__SC2(n, a, b) ncb__sc((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define NCB__SC3(n, a, b, c)						\
	ncb__sc((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define NCB__SC4(n, a, b, c, d)						\
	ncb__sc((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define NCB__SC5(n, a, b, c, d, e)					\
	ncb__sc((n), (long)(a), (long)(b), (long)(c), (long)(d),	\
		(long)(e), 0)

static long ncb__mmap_raw(unsigned long addr, unsigned long len, int prot,
			  int flags, int fd, long long off)
{
#if defined(__i386__) || defined(__arm__)
	/* mmap2: the offset in 4096-byte units, whatever the page size. */
	if ((off & 4095) || off < 0 || (unsigned long long)off >> 12 > ~0UL)
		return -NCB__EINVAL;
	return ncb__sc(__NR_mmap2, (long)addr, (long)len, prot, flags, fd,
		       (long)(off >> 12));
#elif defined(__s390x__)
	/* old_mmap: the arguments in memory. */
	unsigned long args[6] = { addr, len, (unsigned long)prot,
				  (unsigned long)flags, (unsigned long)fd,
				  (unsigned long)off };

	return NCB__SC1(__NR_mmap, args);
#else
	return ncb__sc(__NR_mmap, (long)addr, (long)len, prot, flags, fd,
		       (long)off);
#endif
}

static long ncb__munmap(unsigned long addr, unsigned long len)
{
	return NCB__SC2(__NR_munmap, addr, len);
}

static long ncb__mremap_raw(unsigned long old, unsigned long old_len,
			    unsigned long new_len, int flags,
			    unsigned long new_addr)
{
	return NCB__SC5(__NR_mremap, old, old_len, new_len, flags, new_addr);
}

/*
 * The move onto a claim, with every signal blocked: moving a mergeable
 * source (KSM) breaks its merged pages after the destination, our claim,
 * has been discarded, and a signal stops that with -ERESTARTSYS: an
 * error with a hole where the claim was, or a restart that discards the
 * destination again, whatever another thread has mapped there since.  A
 * blocked signal is not pending for the kernel (recalc_sigpending).
 * SIG_BLOCK is 0 and SIG_SETMASK 2 on every architecture here.
 */
static long ncb__move(unsigned long old, unsigned long old_len,
		      unsigned long new_len, int flags, unsigned long new_addr)
{
	unsigned long long all = ~0ULL, was = 0;
	long p, m;

	m = NCB__SC4(__NR_rt_sigprocmask, 0, &all, &was, sizeof(all));
	p = ncb__mremap_raw(old, old_len, new_len, flags, new_addr);
	if (!m)
		(void)NCB__SC4(__NR_rt_sigprocmask, 2, &was, 0, sizeof(was));
	return p;
}

static long ncb__mincore(unsigned long addr, unsigned long len,
			 unsigned char *vec)
{
	return NCB__SC3(__NR_mincore, addr, len, vec);
}

static long ncb__open(const char *path)
{
	return NCB__SC4(__NR_openat, NCB__AT_FDCWD, path,
			NCB__O_RDONLY | NCB__O_CLOEXEC, 0);
}

static long ncb__read(int fd, void *buf, unsigned long n)
{
	return NCB__SC3(__NR_read, fd, buf, n);
}

static void ncb__close(int fd)
{
	(void)NCB__SC1(__NR_close, fd);
}

static long ncb__fd_valid(int fd)
{
	return NCB__SC3(__NR_fcntl, fd, NCB__F_GETFD, 0);
}

/* ---- What the process and kernel are like: found once, kept. ---- */

/* 0 until known.  Racing callers find the same answers: no lock. */
static unsigned long ncb__page;
static unsigned long ncb__min_addr;
static int ncb__min_addr_known;
static unsigned long ncb__release_v;
static int ncb__release_known;
static int ncb__mode;
static int ncb__query;		/* 0 unknown, 1 works, 2 does not */
static int ncb__dest_order;	/* 0 unknown, else what mremap checks
				   before the source (ncb__mremap_order) */
static int ncb__hide;		/* 0 unknown, 1 hides, 2 does not */

#define NCB__GET(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
#define NCB__SET(v, x) __atomic_store_n(&(v), (x), __ATOMIC_RELAXED)

/*
 * mincore fails with EINVAL for an address that is not page-aligned and
 * never changes anything: the page size is the first power of two from
 * 4 KiB at which it does not, measured beside a page of our own.
 */
NCB__FN unsigned long ncb_core_page_size(void)
{
	unsigned long pg = NCB__GET(ncb__page), p;
	unsigned char vec;
	long r;

	if (pg)
		return pg;
	p = (unsigned long)ncb__mmap_raw(0, 1, 0, NCB__MAP_PRIVATE |
					 NCB__MAP_ANONYMOUS, -1, 0);
	if (NCB_CORE_FAILED(p))
		return 4096;
	for (pg = 4096; pg < (1UL << 24); pg <<= 1) {
		r = ncb__mincore(p + pg, 1, &vec);
		if (r != -NCB__EINVAL)
			break;
	}
	ncb__munmap(p, 1);
	NCB__SET(ncb__page, pg);
	return pg;
}

static unsigned long ncb__align(unsigned long len)
{
	unsigned long pg = ncb_core_page_size();

	return (len + pg - 1) & ~(pg - 1);
}

/* ---- Reading /proc: a line at a time through the stack. ---- */

/* A line's first bytes: enough for a mapping's range or a field. */
#define NCB__LINE 64

/*
 * Each line of fd, as its first NCB__LINE bytes, to fn until it answers
 * other than -1; at the end fn(0, 0, arg).  A line of any length passes.
 * fn's answer, or -errno if reading fails.
 */
static int ncb__each_line(int fd, int (*fn)(const char *, int, void *),
			  void *arg)
{
	char buf[256], line[NCB__LINE];
	int len = 0, r;
	long n, i;

	while ((n = ncb__read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (len < NCB__LINE)
					line[len++] = buf[i];
				continue;
			}
			r = fn(line, len, arg);
			if (r != -1)
				return r;
			len = 0;
		}
	}
	if (n < 0)
		return (int)n;
	/* A last line without its newline is a line too. */
	if (len && (r = fn(line, len, arg)) != -1)
		return r;
	return fn(0, 0, arg);
}

/* A hexadecimal number at *p, advanced past it; -1 if none. */
static int ncb__hex(const char **p, const char *end, unsigned long long *v)
{
	const char *q = *p;
	int d;

	for (*v = 0; q < end; q++) {
		d = *q >= '0' && *q <= '9' ? *q - '0' :
		    *q >= 'a' && *q <= 'f' ? *q - 'a' + 10 : -1;
		if (d < 0)
			break;
		*v = *v << 4 | (unsigned)d;
	}
	if (q == *p)
		return -1;
	*p = q;
	return 0;
}

/* A mapping's line ("start-end ..."): 0 with its range, else -1. */
static int ncb__range_of(const char *line, int len, unsigned long long *a,
			 unsigned long long *b)
{
	const char *p = line, *end = line + len;

	if (ncb__hex(&p, end, a) || p == end || *p++ != '-' ||
	    ncb__hex(&p, end, b) || p == end || *p != ' ')
		return -1;
	return 0;
}

/* Whether line (len bytes) is the field key; its number in *v. */
static int ncb__field(const char *line, int len, const char *key,
		      unsigned long long *v)
{
	int k;

	for (k = 0; k < len && key[k] && line[k] == key[k]; k++)
		;
	if (key[k])
		return 0;
	for (*v = 0; k < len; k++)
		if (line[k] >= '0' && line[k] <= '9')
			*v = *v * 10 + (unsigned)(line[k] - '0');
	return 1;
}

/* A field's number. */
struct ncb__find {
	const char *key;
	unsigned long long v;
};

static int ncb__find_field(const char *line, int len, void *arg)
{
	struct ncb__find *f = arg;

	return line && !ncb__field(line, len, f->key, &f->v) ? -1 : 0;
}

/*
 * The number in path's line starting with key ("" for the first) in *v,
 * 0 if there is none; -errno if the file cannot be opened.
 */
static int ncb__proc_number(const char *path, const char *key,
			    unsigned long long *v)
{
	struct ncb__find f = { key, 0 };
	int fd = (int)ncb__open(path);

	*v = 0;
	if (fd < 0)
		return fd;
	(void)ncb__each_line(fd, ncb__find_field, &f);
	ncb__close(fd);
	*v = f.v;
	return 0;
}

/*
 * A decimal number at line[*k], advanced past it; -1 if none.  Held
 * below 2^31 however many digits follow: the file is not ours to trust.
 */
static long ncb__dec(const char *line, int len, int *k)
{
	long v = 0;
	int k0 = *k;

	for (; *k < len && line[*k] >= '0' && line[*k] <= '9'; (*k)++)
		if (v < 100000000L)
			v = v * 10 + (line[*k] - '0');
	return *k > k0 ? v : -1;
}

/* At most 255: a number of a release's field, as KERNEL_VERSION holds. */
static unsigned long ncb__byte(long v)
{
	return (unsigned long)(v > 255 ? 255 : v);
}

/* "major.minor[.patch]" at line[*k]: major << 16 | minor << 8 | patch. */
static unsigned long ncb__release_at(const char *line, int len, int *k)
{
	long maj, min = -1, pat = -1;

	maj = ncb__dec(line, len, k);
	if (maj >= 0 && *k < len && line[*k] == '.') {
		++*k;
		min = ncb__dec(line, len, k);
	}
	if (min >= 0 && *k < len && line[*k] == '.') {
		++*k;
		pat = ncb__dec(line, len, k);
	}
	if (min < 0)
		return 0;
	return ncb__byte(maj) << 16 | ncb__byte(min) << 8 |
	       (pat > 0 ? ncb__byte(pat) : 0);
}

/* osrelease's first line into *arg. */
static int ncb__release_line(const char *line, int len, void *arg)
{
	int k = 0;

	if (line)
		*(unsigned long *)arg = ncb__release_at(line, len, &k);
	return 0;
}

/*
 * A release of the same major and minor anywhere in the line raises
 * *arg's patch: Debian's osrelease names its ABI ("6.1.0-57-amd64") and
 * the version its upstream release ("... Debian 6.1.192-3 (...)"), and
 * Ubuntu's version_signature ends in it ("... 6.8.0-45-generic 6.8.12").
 */
static int ncb__version_line(const char *line, int len, void *arg)
{
	unsigned long *v = arg, r;
	int k = 0, at;

	if (!line)
		return 0;
	while (k < len) {
		at = k;
		if (line[k] < '0' || line[k] > '9' ||
		    (k && ((line[k - 1] >= '0' && line[k - 1] <= '9') ||
			   line[k - 1] == '.'))) {
			k++;
			continue;
		}
		r = ncb__release_at(line, len, &k);
		if (k == at)
			k++;
		if (r >> 8 == *v >> 8 && r > *v)
			*v = r;
	}
	return -1;
}

/* A kernel's version line: Debian's 6.12 has 61 bytes. */
#define NCB__SHORT_FILE 256

/*
 * A file of /proc/sys: fn on its first line, of NCB__SHORT_FILE bytes at
 * most, from one bounded read.  Such a file is one short line; whatever is
 * bound over it is read no further (a device) nor waited for (a FIFO:
 * O_NONBLOCK).  0, or -errno of the open.
 */
static int ncb__first_line(const char *path,
			   int (*fn)(const char *, int, void *), void *arg)
{
	char line[NCB__SHORT_FILE];
	long fd, n;
	int len = 0;

	fd = NCB__SC4(__NR_openat, NCB__AT_FDCWD, path,
		      NCB__O_RDONLY | NCB__O_CLOEXEC | NCB__O_NONBLOCK, 0);
	if (fd < 0)
		return (int)fd;
	n = ncb__read((int)fd, line, sizeof(line));
	ncb__close((int)fd);
	while (n > 0 && len < n && line[len] != '\n')
		len++;
	(void)fn(line, len, arg);
	return 0;
}

static unsigned long ncb__release_read(void)
{
	static const char *const more[] = {
		"/proc/sys/kernel/version", "/proc/version_signature",
	};
	const unsigned int n = sizeof(more) / sizeof(*more);
	unsigned long v = 0;
	unsigned int i;

	if (ncb__first_line("/proc/sys/kernel/osrelease", ncb__release_line,
			    &v))
		return 0;
	/* A distribution's patch 0 may stand for any patch of the series. */
	for (i = 0; v && !(v & 0xff) && i < n; i++)
		(void)ncb__first_line(more[i], ncb__version_line, &v);
	return v;
}

/*
 * The kernel's release as it names itself (osrelease, which no
 * personality changes: UNAME26 makes uname say 2.6.x), with the patch
 * level of the upstream release a distribution built it from; read
 * once; only for what no experiment can find out without risk.
 */
NCB__FN unsigned long ncb_core_kernel_release(void)
{
	unsigned long v;

	if (__atomic_load_n(&ncb__release_known, __ATOMIC_ACQUIRE))
		return NCB__GET(ncb__release_v);
	v = ncb__release_read();
	if (!v)
		return 0;
	NCB__SET(ncb__release_v, v);
	__atomic_store_n(&ncb__release_known, 1, __ATOMIC_RELEASE);
	return v;
}

NCB__FN unsigned long ncb_core_mmap_min_addr(void)
{
	unsigned long long v;

	if (__atomic_load_n(&ncb__min_addr_known, __ATOMIC_ACQUIRE))
		return NCB__GET(ncb__min_addr);
	(void)ncb__proc_number("/proc/sys/vm/mmap_min_addr", "", &v);
	NCB__SET(ncb__min_addr, (unsigned long)v);
	__atomic_store_n(&ncb__min_addr_known, 1, __ATOMIC_RELEASE);
	return (unsigned long)v;
}

/* ---- Occupancy: PROCMAP_QUERY, else the text through the stack. ---- */

/* The ioctl's argument (fs/proc/task_mmu.c, Linux 6.11 uapi). */
struct ncb__pmq {
	unsigned long long size, query_flags, query_addr;
	unsigned long long vma_start, vma_end, vma_flags, vma_page_size;
	unsigned long long vma_offset, inode;
	unsigned int dev_major, dev_minor, vma_name_size, build_id_size;
	unsigned long long vma_name_addr, build_id_addr;
};

#define NCB__PMQ _IOWR('f', 17, struct ncb__pmq)
#define NCB__PMQ_COVERING_OR_NEXT 0x10

/* qemu-user fakes the file, and its open fails now and then: EAGAIN. */
static int ncb__open_maps(void)
{
	long fd = -NCB__EAGAIN;
	int i;

	for (i = 0; i < 16 && fd == -NCB__EAGAIN; i++)
		fd = ncb__open("/proc/self/maps");
	return (int)fd;
}

/*
 * The mapping covering addr, or with next the first above it: 1 with
 * [*s, *e), 0 if none, -ENOTTY where the ioctl is unknown.
 */
static int ncb__query_at(int fd, unsigned long addr, int next,
			 unsigned long long *s, unsigned long long *e,
			 unsigned long long *page)
{
	struct ncb__pmq q;
	long r;

	/* Field by field: an aggregate's zeroing may become a memset call. */
	q.size = sizeof(q);
	q.query_flags = next ? NCB__PMQ_COVERING_OR_NEXT : 0;
	q.query_addr = addr;
	q.vma_start = q.vma_end = q.vma_flags = q.vma_page_size = 0;
	q.vma_offset = q.inode = 0;
	q.dev_major = q.dev_minor = q.vma_name_size = q.build_id_size = 0;
	q.vma_name_addr = q.build_id_addr = 0;
	r = NCB__SC3(__NR_ioctl, fd, NCB__PMQ, &q);
	if (r == -NCB__ENOENT)
		return 0;
	if (r < 0)
		return r == -NCB__EINVAL ? -NCB__ENOTTY : (int)r;
	*s = q.vma_start;
	*e = q.vma_end;
	if (page)
		*page = q.vma_page_size;
	return 1;
}

/* A walk of the text's ranges. */
struct ncb__walk {
	int (*fn)(unsigned long long, unsigned long long, void *);
	void *arg;
};

static int ncb__walk_line(const char *line, int len, void *arg)
{
	struct ncb__walk *w = arg;
	unsigned long long a, b;

	if (!line)
		return w->fn(0, 0, w->arg);
	return ncb__range_of(line, len, &a, &b) ? -1 : w->fn(a, b, w->arg);
}

/*
 * The text, a line at a time: each mapping's range to fn until it
 * answers other than -1.
 */
static int ncb__walk_text(int fd, int (*fn)(unsigned long long,
					    unsigned long long, void *),
			  void *arg)
{
	struct ncb__walk w = { fn, arg };

	return ncb__each_line(fd, ncb__walk_line, &w);
}

struct ncb__range {
	unsigned long long start, end;
	unsigned long long page;	/* the ioctl's answer: its page size */
};

/* A range meeting [start, end): 1; one wholly above: 0; the end: 0. */
static int ncb__meets(unsigned long long s, unsigned long long e, void *arg)
{
	struct ncb__range *r = arg;

	if (!s && !e)
		return 0;
	if (s >= r->end)
		return 0;
	return e > r->start ? 1 : -1;
}

/* The line covering start: whether it reaches end. */
static int ncb__covers(unsigned long long s, unsigned long long e, void *arg)
{
	struct ncb__range *r = arg;

	if ((!s && !e) || s > r->start)
		return 0;
	if (e <= r->start)
		return -1;
	return e >= r->end;
}

/*
 * A descriptor of /proc/self/maps kept for PROCMAP_QUERY: opening the
 * file costs several times the query itself.  It describes the process
 * that opened it, so only that process uses it: a child after fork or
 * vfork (which shares this memory) finds another pid and opens the file
 * for each look-up, touching nothing kept (its inherited copy goes at
 * exec, being close-on-exec).  After each query statx says whether the
 * number still names that open file (a program may close every
 * descriptor, or dup2 over it): if not, it is forgotten, never closed,
 * and the query asked again of a fresh one.  One per process.  Define
 * NCB_CORE_NO_KEPT_FD to open the file for each look-up (a checkpointer
 * that must not carry a /proc descriptor, say).
 */
static int ncb__mfd_state;	/* 0 free, 1 being set up, 2 kept */
static int ncb__mfd = -1;
static long ncb__mfd_pid;
static unsigned long long ncb__mfd_ino, ncb__mfd_dev;

/*
 * Compare and swap, acquiring.  aarch64 compilers call libgcc for it
 * (outline atomics): here it is the exclusive pair itself.
 */
static int ncb__cas(int *p, int old, int new_value)
{
#if defined(__aarch64__)
	int seen, failed;

	__asm__ volatile("1:	ldaxr	%w0, %2\n"
			 "	cmp	%w0, %w3\n"
			 "	b.ne	2f\n"
			 "	stlxr	%w1, %w4, %2\n"
			 "	cbnz	%w1, 1b\n"
			 "2:"
			 : "=&r"(seen), "=&r"(failed), "+Q"(*p)
			 : "r"(old), "r"(new_value)
			 : "cc", "memory");
	return seen == old;
#else
	return __atomic_compare_exchange_n(p, &old, new_value, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
#endif
}

#define NCB__AT_EMPTY_PATH 0x1000
#define NCB__STATX_INO 0x100

/* The inode and device of fd (statx, Linux 4.11): 0, or -errno. */
static int ncb__fd_id(int fd, unsigned long long *ino,
		      unsigned long long *dev)
{
	/* struct statx: stx_ino at byte 32, stx_dev_major/minor at 136. */
	unsigned long long stx[32];
	long r;

	stx[4] = stx[17] = 0;
	r = NCB__SC5(__NR_statx, fd, "", NCB__AT_EMPTY_PATH, NCB__STATX_INO,
		     stx);
	if (r < 0)
		return (int)r;
	*ino = stx[4];
	*dev = stx[17];
	return 0;
}

/* Give the kept place up (the number is no longer ours: not closed). */
static void ncb__forget_maps(void)
{
	if (ncb__cas(&ncb__mfd_state, 2, 1))
		__atomic_store_n(&ncb__mfd_state, 0, __ATOMIC_RELEASE);
}

/* The kept descriptor if this process kept it; else -1. */
static int ncb__kept_maps(void)
{
#ifdef NCB_CORE_NO_KEPT_FD
	return -1;
#endif
	if (__atomic_load_n(&ncb__mfd_state, __ATOMIC_ACQUIRE) != 2 ||
	    ncb__mfd_pid != NCB__SC1(__NR_getpid, 0))
		return -1;
	return ncb__mfd;
}

/* Whether fd, used as the kept one, still names the file kept. */
static int ncb__kept_still(int fd)
{
	unsigned long long ino = 0, dev = 0;

	if (!ncb__fd_id(fd, &ino, &dev) && ino == ncb__mfd_ino &&
	    dev == ncb__mfd_dev)
		return 1;
	ncb__forget_maps();
	return 0;
}

/* Keep fd, just opened, if nothing is kept yet: 1 if it was kept. */
static int ncb__keep_maps(int fd)
{
#ifdef NCB_CORE_NO_KEPT_FD
	return 0;
#endif
	if (!ncb__cas(&ncb__mfd_state, 0, 1))
		return 0;
	if (ncb__fd_id(fd, &ncb__mfd_ino, &ncb__mfd_dev)) {
		__atomic_store_n(&ncb__mfd_state, 0, __ATOMIC_RELEASE);
		return 0;
	}
	ncb__mfd = fd;
	ncb__mfd_pid = NCB__SC1(__NR_getpid, 0);
	__atomic_store_n(&ncb__mfd_state, 2, __ATOMIC_RELEASE);
	return 1;
}

/*
 * The maps for one look-up: the kept descriptor where the ioctl works,
 * else a fresh one; *fresh says whether to close it.  again: the kept
 * one just failed, a fresh one is wanted.
 */
static int ncb__maps_for_query(int *fresh, int again)
{
	int fd = !again && ncb_core_procmap_query() ? ncb__kept_maps() : -1;

	*fresh = 0;
	if (fd >= 0)
		return fd;
	fd = ncb__open_maps();
	if (fd >= 0 && !(ncb_core_procmap_query() && ncb__keep_maps(fd)))
		*fresh = 1;
	return fd;
}

NCB__FN int ncb_core_procmap_query(void)
{
	unsigned long long s = 0, e = 0;
	int q = NCB__GET(ncb__query), fd, r;

	if (q)
		return q == 1;
	fd = ncb__open_maps();
	if (fd < 0)
		return 0;
	r = ncb__query_at(fd, 0, 1, &s, &e, 0);
	ncb__close(fd);
	NCB__SET(ncb__query, r >= 0 ? 1 : 2);
	return r >= 0;
}

/*
 * The mapping covering rg->start (with next, or the first above it) asked
 * of the ioctl, else the text walked, judged by fn: 1, 0 or -errno.  The
 * kept descriptor is for the ioctl only: the text is read from a fresh one.
 */
static int ncb__look(struct ncb__range *rg, int next,
		     int (*fn)(unsigned long long, unsigned long long, void *))
{
	unsigned long long s = 0, e = 0;
	int fd, fresh, again = 0, r;

retry:
	r = -NCB__ENOTTY;
	fd = ncb__maps_for_query(&fresh, again);
	if (fd < 0)
		return fd;
	if (ncb_core_procmap_query())
		r = ncb__query_at(fd, (unsigned long)rg->start, next, &s, &e,
				  &rg->page);
	/* The kept number taken over meanwhile: ask a fresh descriptor. */
	if (!fresh && !again && !ncb__kept_still(fd)) {
		again = 1;
		goto retry;
	}
	if (r == 1)
		r = fn(s, e, rg) == 1;
	if (r == -NCB__ENOTTY && !fresh) {
		fd = ncb__open_maps();
		if (fd < 0)
			return fd;
		fresh = 1;
	}
	if (r == -NCB__ENOTTY)
		r = ncb__walk_text(fd, fn, rg);
	if (fresh)
		ncb__close(fd);
	return r;
}

NCB__FN int ncb_core_occupied(unsigned long start, unsigned long end)
{
	struct ncb__range rg = { start, end, 0 };

	return ncb__look(&rg, 1, ncb__meets);
}

NCB__FN int ncb_core_in_one_mapping(unsigned long start,
				    unsigned long end)
{
	struct ncb__range rg = { start, end, 0 };

	return ncb__look(&rg, 0, ncb__covers);
}

/* The mapping at addr in smaps, and its page size once found. */
struct ncb__smaps {
	unsigned long long addr, kb;
	int in;
};

static int ncb__smaps_line(const char *line, int len, void *arg)
{
	struct ncb__smaps *m = arg;
	unsigned long long a, b;

	if (!line)
		return 0;
	/* A mapping's first line: ours, or past it. */
	if (!ncb__range_of(line, len, &a, &b)) {
		if (m->in)
			return 0;
		m->in = a <= m->addr && m->addr < b;
		return -1;
	}
	return m->in && ncb__field(line, len, "KernelPageSize:", &m->kb) ?
	       0 : -1;
}

/*
 * The page size of the mapping at addr as /proc/self/smaps gives it
 * (KernelPageSize, for kernels without PROCMAP_QUERY); 0 if unknown.
 */
static unsigned long ncb__smaps_page(unsigned long addr)
{
	struct ncb__smaps m = { addr, 0, 0 };
	int fd = (int)ncb__open("/proc/self/smaps");

	if (fd < 0)
		return 0;
	(void)ncb__each_line(fd, ncb__smaps_line, &m);
	ncb__close(fd);
	return (unsigned long)(m.kb << 10);
}

/* ---- The probe: experiments on memory of its own. ---- */

#define NCB__PLACEHOLDER (NCB__MAP_PRIVATE | NCB__MAP_ANONYMOUS |	\
			  NCB__MAP_NORESERVE)
#define NCB__PROBE_TRIES 8

static int ncb__page_mapped(unsigned long page, unsigned long pg)
{
	unsigned char vec;

	/* mincore fails with ENOMEM exactly when the page is unmapped. */
	return ncb__mincore(page, pg, &vec) != -NCB__ENOMEM;
}

/*
 * The 4.17/4.18 bug: only a mapping containing addr was detected, so one
 * that starts inside the range was replaced (fixed by 7aa867dd8952, "mm:
 * don't clobber partially overlapping VMA with MAP_FIXED_NOREPLACE").
 * Layout: [hole][ours][ours]; ask for [hole, hole + 2 pages).
 */
static int ncb__probe_partial(unsigned long r, unsigned long pg, int *retry)
{
	long p;
	int mode;

	/* From here on the first page is not ours: never unmap it. */
	if (ncb__munmap(r, pg))
		return 0;
	p = ncb__mmap_raw(r, 2 * pg, 0, NCB__PLACEHOLDER | NCB__MAP_NOREPLACE,
			  -1, 0);
	if (NCB_CORE_FAILED(p)) {
		/*
		 * EEXIST is only conclusive if the hole was still empty: a
		 * concurrent mmap may have landed in it.  Try elsewhere.  No
		 * memory or mappings left says nothing about the flag.
		 */
		if ((p == -NCB__EEXIST && ncb__page_mapped(r, pg)) ||
		    p == -NCB__ENOMEM || p == -NCB__EAGAIN)
			*retry = 1;
		mode = p == -NCB__EEXIST ? NCB_NOREPLACE_HONOURED
					 : NCB_NOREPLACE_PARTIAL;
	} else if ((unsigned long)p == r) {
		/* Mapped over our own second page: the bug. */
		mode = NCB_NOREPLACE_PARTIAL;
		ncb__munmap(r, pg);
	} else {
		mode = NCB_NOREPLACE_IGNORED;
		ncb__munmap((unsigned long)p, 2 * pg);
	}
	ncb__munmap(r + pg, 2 * pg);
	return mode;
}

static int ncb__probe_once(unsigned long pg, int *retry)
{
	long r, p;

	r = ncb__mmap_raw(0, 3 * pg, 0, NCB__PLACEHOLDER, -1, 0);
	if (NCB_CORE_FAILED(r))
		return 0;
	/* An exact overlap with our own first page. */
	p = ncb__mmap_raw((unsigned long)r, pg, 0,
			  NCB__PLACEHOLDER | NCB__MAP_NOREPLACE, -1, 0);
	if (NCB_CORE_FAILED(p)) {
		if (p == -NCB__EEXIST)
			return ncb__probe_partial((unsigned long)r, pg, retry);
		ncb__munmap((unsigned long)r, 3 * pg);
		/* Out of memory or mappings: no verdict, try again later. */
		if (p == -NCB__ENOMEM || p == -NCB__EAGAIN)
			return 0;
		return NCB_NOREPLACE_REJECTED;
	}
	if (p != r)
		ncb__munmap((unsigned long)p, pg);
	ncb__munmap((unsigned long)r, 3 * pg);
	return p == r ? NCB_NOREPLACE_REPLACES : NCB_NOREPLACE_IGNORED;
}

NCB__FN int ncb_core_probe(void)
{
	unsigned long pg;
	int i, mode = NCB__GET(ncb__mode), retry;

	if (mode)
		return mode;
	pg = ncb_core_page_size();
	for (i = 0; i < NCB__PROBE_TRIES; i++) {
		retry = 0;
		mode = ncb__probe_once(pg, &retry);
		if (!retry && mode)
			break;
		mode = 0;
	}
	/*
	 * Could not tell (no memory, or always raced): assume the worst
	 * kernel that still honours exact overlaps, for this call only.  The
	 * paths used then are correct everywhere, only slower.
	 */
	if (!mode)
		return NCB_NOREPLACE_PARTIAL;
	NCB__SET(ncb__mode, mode);
	return mode;
}

/*
 * qemu-user keeps a 32-bit guest's whole address space reserved on the
 * host and derives the guest's maps from the host's: a PROT_NONE mapping
 * merges into that reservation and is not listed.  Look for a lone
 * PROT_NONE page of our own.
 */
NCB__FN int ncb_core_maps_hide_prot_none(void)
{
	unsigned long pg = ncb_core_page_size();
	int h = NCB__GET(ncb__hide), n;
	long r;

	if (h)
		return h == 1;
	r = ncb__mmap_raw(0, 3 * pg, 0, NCB__PLACEHOLDER, -1, 0);
	if (NCB_CORE_FAILED(r))
		return 0;
	ncb__munmap((unsigned long)r, pg);
	ncb__munmap((unsigned long)r + 2 * pg, pg);
	n = ncb_core_occupied((unsigned long)r + pg, (unsigned long)r + 2 * pg);
	ncb__munmap((unsigned long)r + pg, pg);
	if (n < 0)
		return 0;
	NCB__SET(ncb__hide, n == 0 ? 1 : 2);
	return n == 0;
}

/* ---- The claim: a placeholder taken without replacing anything. ---- */

/*
 * Unmap a mapping just made elsewhere than asked: len bytes, or where the
 * kernel refuses (a huge page mapping is unmapped in whole huge pages)
 * the rounded alen.  Never alen first: where an emulator made an ordinary
 * mapping of len bytes, alen would reach past it into others'.
 */
static void ncb__unmap_stray(long p, unsigned long len, unsigned long alen)
{
	if (ncb__munmap((unsigned long)p, len) == -NCB__EINVAL && alen > len)
		ncb__munmap((unsigned long)p, alen);
}

/* Claiming retries this often when the range was freed meanwhile. */
#define NCB__CLAIM_TRIES 4

/*
 * Hints in flight.  A hint the kernel cannot honour is placed wherever
 * it finds room, for the moment it takes to undo it: perhaps in a range
 * another thread is placing a mapping in, which then sees an occupant
 * gone a moment later.  A refusal (EEXIST) made while another call's
 * hint was in flight is asked again, so many times at most: a range
 * nothing else holds is not refused for a stray of our own.  A refusal
 * for a stray of the very call a signal handler interrupted stands.
 */
#define NCB__STRAY_TRIES 16

static unsigned long ncb__hints_begun, ncb__hints_ended;

/*
 * The counts as a call looked at them, and the hints the call has made
 * since: its own strays were undone before it looked for an occupant,
 * and cannot be what refused it.
 */
struct ncb__hints {
	unsigned long begun, ended, own;
};

static void ncb__hints_look(struct ncb__hints *h)
{
	h->begun = __atomic_load_n(&ncb__hints_begun, __ATOMIC_SEQ_CST);
	h->ended = __atomic_load_n(&ncb__hints_ended, __ATOMIC_SEQ_CST);
	h->own = 0;
}

/*
 * Whether another's hint was in flight at any time since h was looked
 * at (a signal handler's counts as another's).
 */
static int ncb__hints_flew(const struct ncb__hints *h)
{
	unsigned long begun, ended;

	begun = __atomic_load_n(&ncb__hints_begun, __ATOMIC_SEQ_CST);
	ended = __atomic_load_n(&ncb__hints_ended, __ATOMIC_SEQ_CST);
	return begun - h->begun != h->own || ended - h->ended != h->own ||
	       begun != ended;
}

/*
 * A hint at addr, undone (and -EADDRNOTAVAIL) if placed elsewhere; one
 * more of the call's own in h.
 */
static long ncb__hint(struct ncb__hints *h, unsigned long addr,
		      unsigned long len, unsigned long alen, int prot,
		      int flags, int fd, long long off)
{
	long p;

	h->own++;
	__atomic_add_fetch(&ncb__hints_begun, 1, __ATOMIC_SEQ_CST);
	p = ncb__mmap_raw(addr, len, prot, flags, fd, off);
	if (!NCB_CORE_FAILED(p) && (unsigned long)p != addr) {
		ncb__unmap_stray(p, len, alen);
		p = -NCB__EADDRNOTAVAIL;
	}
	__atomic_add_fetch(&ncb__hints_ended, 1, __ATOMIC_SEQ_CST);
	return p;
}

static void ncb__yield(void)
{
	(void)ncb__sc(__NR_sched_yield, 0, 0, 0, 0, 0, 0);
}

/* -EEXIST if the range is occupied now, else the error the call gave. */
static int ncb__classify(unsigned long addr, unsigned long len,
			 int err_if_free)
{
	int r = ncb_core_occupied(addr, addr + len);

	if (r < 0)
		return r;
	/*
	 * Where the maps hide PROT_NONE mappings, the emulator's placement
	 * has no guard gap: a refused hint was refused for an occupant.
	 */
	if (!r && err_if_free == -NCB__EADDRNOTAVAIL &&
	    ncb_core_maps_hide_prot_none())
		r = 1;
	return r ? -NCB__EEXIST : err_if_free;
}

/*
 * The placeholder's first len bytes, taken without replacing anything:
 * with the flag only where it is exact for one page, else as a hint.
 */
static int ncb__claim_first(struct ncb__hints *h, unsigned long addr,
			    unsigned long len, int mode)
{
	int fl = NCB__PLACEHOLDER;
	long p;

	/* One page is exact even on 4.17: a mapping inside it contains addr. */
	if (mode == NCB_NOREPLACE_PARTIAL && len == ncb_core_page_size())
		fl |= NCB__MAP_NOREPLACE;
	p = ncb__hint(h, addr, len, len, 0, fl, -1, 0);
	return NCB_CORE_FAILED(p) ? (int)p : 0;
}

/* The whole range as one hint first, then a page grown in place. */
static int ncb__claim_slow(struct ncb__hints *h, unsigned long addr,
			   unsigned long len, int mode)
{
	unsigned long pg = ncb_core_page_size();
	int i, err = 0;

	for (i = 0; i < NCB__CLAIM_TRIES; i++) {
		/*
		 * One step where the range is free and the hint rules allow
		 * it, and the only one that works where growing in place
		 * never does (qemu-user's 32-bit guests keep their whole
		 * space reserved).
		 */
		if (len > pg) {
			err = ncb__claim_first(h, addr, len, mode);
			if (!err)
				return 0;
			/*
			 * Where the maps hide PROT_NONE mappings, growing in
			 * place never works either: this refusal is the only
			 * word on an occupant past the first page.
			 */
			if (err == -NCB__EADDRNOTAVAIL &&
			    ncb_core_maps_hide_prot_none()) {
				err = ncb__classify(addr, len, err);
				if (err != -NCB__EADDRNOTAVAIL)
					return err;
			}
		}
		err = ncb__claim_first(h, addr, pg, mode);
		/* A placeholder is never locked: EAGAIN is qemu-user's. */
		if (err == -NCB__EAGAIN)
			continue;
		if (err == -NCB__EADDRNOTAVAIL) {
			err = ncb__classify(addr, len, err);
			if (err != -NCB__EADDRNOTAVAIL)
				return err;
			continue;
		}
		if (err || len == pg)
			return err;
		if (!NCB_CORE_FAILED(ncb__mremap_raw(addr, pg, len, 0, 0)))
			return 0;
		/* ENOMEM: some page after the first is taken, or no memory. */
		ncb__munmap(addr, pg);
		err = ncb__classify(addr, len, -NCB__ENOMEM);
		if (err != -NCB__ENOMEM)
			return err;
	}
	return err;
}

static int ncb__claim(struct ncb__hints *h, unsigned long addr,
		      unsigned long len, int mode)
{
	long p;

	if (mode == NCB_NOREPLACE_HONOURED) {
		p = ncb__mmap_raw(addr, len, 0,
				  NCB__PLACEHOLDER | NCB__MAP_NOREPLACE, -1, 0);
		if ((unsigned long)p == addr)
			return 0;
		if (NCB_CORE_FAILED(p))
			return (int)p;
		ncb__munmap((unsigned long)p, len);
	}
	return ncb__claim_slow(h, addr, len, mode);
}

NCB__FN int ncb_core_claim(unsigned long addr, unsigned long len,
				int mode)
{
	struct ncb__hints h;
	int err, i;

	for (i = 0;; i++) {
		ncb__hints_look(&h);
		err = ncb__claim(&h, addr, len, mode);
		if (err != -NCB__EEXIST || i == NCB__STRAY_TRIES ||
		    !ncb__hints_flew(&h))
			return err;
		ncb__yield();
	}
}

/* ---- mmap ---- */

static unsigned long ncb__huge_default;	/* bytes; 1: unknown */

/* The default huge page size, from /proc/meminfo (kB); 0 if unknown. */
static unsigned long ncb__hugepagesize(void)
{
	unsigned long v = NCB__GET(ncb__huge_default);
	unsigned long long kb;

	if (v)
		return v == 1 ? 0 : v;
	/* Unreadable (no /proc yet): asked again next time. */
	if (ncb__proc_number("/proc/meminfo", "Hugepagesize:", &kb))
		return 0;
	v = (unsigned long)(kb << 10);
	NCB__SET(ncb__huge_default, v ? v : 1);
	return v;
}

#define NCB__HUGETLBFS_MAGIC 0x958458f6

/*
 * A file's huge page size if it lies on hugetlbfs (fstatfs: f_type and
 * f_bsize lead the struct, two longs, or two 32-bit words on s390x and
 * 32-bit machines), else 0.
 */
static unsigned long ncb__hugetlbfs_page(int fd)
{
	unsigned long buf[32];
#if defined(__s390x__) || !defined(__LP64__)
	unsigned int *w = (unsigned int *)(void *)buf;
#else
	unsigned long *w = buf;
#endif

	w[0] = w[1] = 0;
	if (NCB__SC2(__NR_fstatfs, fd, buf) < 0 ||
	    w[0] != NCB__HUGETLBFS_MAGIC)
		return 0;
	return w[1];
}

/*
 * The alignment a mapping needs: a huge page's for a MAP_HUGETLB one
 * (MAP_HUGE_SHIFT's log2, else the default from /proc/meminfo) or a file
 * on hugetlbfs, else a page.  0 where a huge page size is asked for and
 * cannot be known: never a small page's, which would claim too little.
 */
static unsigned long ncb__granule(int flags, int fd)
{
	unsigned int lg = (unsigned int)flags >> NCB__MAP_HUGE_SHIFT & 0x3f;
	unsigned long pg = ncb_core_page_size(), h;

	if (!(flags & NCB__MAP_ANONYMOUS)) {
		h = ncb__hugetlbfs_page(fd);
		return h > pg ? h : pg;
	}
	if (!(flags & NCB__MAP_HUGETLB))
		return pg;
	if (lg)
		return lg < 8 * sizeof(long) ? 1UL << lg : 0;
	return ncb__hugepagesize();
}

/*
 * Whether the kernel has huge pages of size h (hstate_sizelog: EINVAL
 * before the collision check if not): their sysfs directory is there.
 * Without sysfs, assumed so.  Decimal by subtraction: no division helper
 * on 32-bit machines.
 */
static int ncb__huge_size_known(unsigned long h)
{
	static const char dir[] = "/sys/kernel/mm/hugepages/hugepages-";
	/* A digit per power of ten, 10^19 down: no division. */
	static const unsigned long long p10[] = {
		10000000000000000000ULL, 1000000000000000000ULL,
		100000000000000000ULL, 10000000000000000ULL,
		1000000000000000ULL, 100000000000000ULL, 10000000000000ULL,
		1000000000000ULL, 100000000000ULL, 10000000000ULL,
		1000000000ULL, 100000000ULL, 10000000ULL, 1000000ULL,
		100000ULL, 10000ULL, 1000ULL, 100ULL, 10ULL, 1ULL,
	};
	unsigned long long kb = h >> 10;
	char path[sizeof(dir) + 24];
	int i, k, digit, started = 0;

	for (i = 0; dir[i]; i++)
		path[i] = dir[i];
	for (k = 0; k < 20; k++) {
		for (digit = 0; kb >= p10[k]; digit++)
			kb -= p10[k];
		if (digit || started || k == 19) {
			path[i++] = (char)('0' + digit);
			started = 1;
		}
	}
	path[i++] = 'k';
	path[i++] = 'B';
	path[i] = '\0';
	if (!NCB__SC4(__NR_faccessat, NCB__AT_FDCWD, path, 0, 0))
		return 1;
	path[sizeof(dir) - 12] = '\0';
	return NCB__SC4(__NR_faccessat, NCB__AT_FDCWD, path, 0, 0) < 0;
}

/* len rounded up to g (a power of two); 0 if that overflows. */
static unsigned long ncb__round(unsigned long len, unsigned long g)
{
	return len > -g ? 0 : (len + g - 1) & ~(g - 1);
}

/*
 * v >> n (0 < n < 32) without a variable 64-bit shift, which 32-bit
 * machines leave to a libgcc helper.
 */
static unsigned long long ncb__shr64(unsigned long long v, int n)
{
#if defined(__LP64__)
	return v >> n;
#else
	unsigned long hi = (unsigned long)(v >> 32), lo = (unsigned long)v;

	return (unsigned long long)(hi >> n) << 32 |
	       (lo >> n | hi << (32 - n));
#endif
}

/*
 * The largest TASK_SIZE any kernel gives a process of this architecture:
 * 5-level paging's TASK_SIZE_MAX on x86_64 (arch/x86/include/asm/
 * page_64_types.h), 52-bit VAs on aarch64 and ppc64's 4 PB, Sv57 on
 * riscv64 (TASK_SIZE_64), all but the last page on s390x (TASK_SIZE_MAX is
 * -PAGE_SIZE: page tables grow on demand); a 32-bit process is bounded
 * only by its own width.  No real TASK_SIZE lies above it, so a range
 * beyond it is never one the kernel would map.
 */
#if defined(__x86_64__)
#define NCB__TASK_SIZE_MAX ((1UL << 56) - 4096)
#elif defined(__aarch64__) || defined(__powerpc64__)
#define NCB__TASK_SIZE_MAX (1UL << 52)
#elif defined(__riscv)
#define NCB__TASK_SIZE_MAX (1UL << 56)
#elif defined(__s390x__)
#define NCB__TASK_SIZE_MAX (-4096UL)
#else
#define NCB__TASK_SIZE_MAX (~0UL)
#endif

/*
 * The kernel's own verdict on the address space, asked without touching
 * it: a fixed anonymous mapping of no type (neither shared nor private).
 * do_mmap refuses that type with EINVAL in its switch on it, after the
 * map count (ENOMEM) and __get_unmapped_area (ENOMEM for a length or
 * range past TASK_SIZE, EINVAL for an address off a page, EPERM or an
 * LSM's EACCES from security_mmap_addr) and before mmap_region, which
 * alone unmaps or maps (mm/mmap.c; releases that checked mmap_min_addr
 * only after the type leave that to the bound in ncb__space_check).
 * qemu-user checks its guest's range before the type too; valgrind
 * refuses a fixed range it keeps from its client with EINVAL and passes
 * the rest to the kernel.
 */
static long ncb__ask_space(unsigned long addr, unsigned long len)
{
	return ncb__mmap_raw(addr, len, 0, NCB__MAP_ANONYMOUS | NCB__MAP_FIXED,
			     -1, 0);
}

/*
 * The address space's checks with the flag, in the kernel's order
 * (do_mmap, __get_unmapped_area; mm/mmap.c, 6.18): the map count past
 * vm.max_map_count (ENOMEM), the length past TASK_SIZE (ENOMEM), a huge
 * page's alignment (hugetlb_get_unmapped_area: EINVAL), the range past
 * TASK_SIZE (ENOMEM; x86_64's vsyscall page lies there, though the maps
 * list it), a page's alignment (EINVAL), security_mmap_addr (EPERM), all
 * before the collision check (EEXIST).  The kernel answers for the map
 * count and TASK_SIZE (ncb__ask_space; for a misaligned huge address, of
 * the length alone); the bound above stands in where an emulator does
 * not.  Below vm.mmap_min_addr it is EPERM even where CAP_SYS_RAWIO would
 * let the flag map: a hint there is raised to vm.mmap_min_addr
 * (round_hint_to_min), so no claim can be made without MAP_FIXED.
 */
static int ncb__space_check(unsigned long addr, unsigned long alen,
			    unsigned long g)
{
	unsigned long pg = ncb_core_page_size(), top = NCB__TASK_SIZE_MAX;
	int huge_off = !!(addr & (g - 1) & ~(pg - 1));
	long r = ncb__ask_space(huge_off ? 0 : addr, alen);

	if (r == -NCB__ENOMEM || alen > top)
		return -NCB__ENOMEM;
	if (huge_off)
		return -NCB__EINVAL;
	/*
	 * An address in the last 4095 bytes comes back from get_area looking
	 * like an error, and __get_unmapped_area returns it as one
	 * (IS_ERR_VALUE): -addr is the kernel's answer, where it is as wide.
	 */
	if (r == (long)addr)
		return (int)r;
	if (addr > top - alen)
		return -NCB__ENOMEM;
	if (addr & (pg - 1))
		return -NCB__EINVAL;
	if (r == -NCB__EPERM || r == -NCB__EACCES)
		return (int)r;
	if (addr < ncb_core_mmap_min_addr())
		return -NCB__EPERM;
	return 0;
}

/*
 * The checks the kernel makes before it looks for a collision (g: the
 * mapping's alignment, ncb__granule), in its order (arch sys_mmap,
 * ksys_mmap_pgoff, do_mmap, __get_unmapped_area), so that the emulated
 * paths fail like the real flag would.
 */
static int ncb__mmap_precheck(unsigned long addr, unsigned long len,
			      int flags, int fd, long long off, unsigned long g)
{
	unsigned long pg = ncb_core_page_size(), alen;
	unsigned long long pgoff;
	int shift = 0;

	/* Shifts, not division: no libgcc helper on 32-bit machines. */
	while ((1UL << shift) < pg)
		shift++;
	pgoff = ncb__shr64((unsigned long long)off, shift);
	if ((unsigned long long)off & (pg - 1))
		return -NCB__EINVAL;
#if !defined(__LP64__)
	/* mmap2's page offset is a long: the C library's EINVAL. */
	if (off < 0 || (unsigned long long)off >> 32 >> 12)
		return -NCB__EINVAL;
#endif
	if (!(flags & NCB__MAP_ANONYMOUS) && ncb__fd_valid(fd) < 0)
		return -NCB__EBADF;
	/* hstate_sizelog: a huge page size the kernel has, or EINVAL. */
	if ((flags & NCB__MAP_ANONYMOUS) && (flags & NCB__MAP_HUGETLB) &&
	    (g <= pg || !ncb__huge_size_known(g)))
		return -NCB__EINVAL;
	if (!len)
		return -NCB__EINVAL;
	alen = ncb__round(len, g);
	/* A huge length rounds to nothing before do_mmap sees it. */
	if (!alen)
		return g > pg ? -NCB__EINVAL : -NCB__ENOMEM;
	if (pgoff + (alen >> shift) < pgoff)
		return -NCB__EOVERFLOW;
	return ncb__space_check(addr, alen, g);
}

/*
 * Errors the kernel reports only after its collision check, so that an
 * occupied range wins over them: do_mmap's lock limits, file_mmap_ok's
 * EOVERFLOW, the mapping type's checks (EINVAL for no type or a shared
 * stack, the file's mode and operations), and ENOMEM from mmap_region:
 * RLIMIT_AS and RLIMIT_DATA (may_expand_vm), the commit charge
 * (__mmap_setup, mm/vma.c) and a huge page reservation; in 4.17 and
 * 4.18 too the flag's check came first in do_mmap.  The checks made
 * before it are made here first (ncb__mmap_precheck, the map count and
 * TASK_SIZE's ENOMEM included), except a MAP_HUGETLB's: there EINVAL (a
 * file not on hugetlbfs, an unknown size) comes first.
 */
static int ncb__after_collision_check(long err, int flags)
{
	if (err == -NCB__EINVAL)
		return !(flags & NCB__MAP_HUGETLB);
	return err == -NCB__ENOMEM ||
	       err == -NCB__EACCES || err == -NCB__EPERM ||
	       err == -NCB__EAGAIN || err == -NCB__ETXTBSY ||
	       err == -NCB__ENODEV || err == -NCB__EOPNOTSUPP ||
	       err == -NCB__EOVERFLOW;
}


/*
 * A plain hint: if the range is free the kernel places the mapping there
 * itself, atomically.  The mapping, 0 to go on, or -errno.
 */
static long ncb__try_hint(struct ncb__hints *h, unsigned long addr,
			  unsigned long len, unsigned long alen, int huge,
			  int prot, int flags, int fd, long long off)
{
	/*
	 * A huge page mapping is asked for whole: valgrind retries a refused
	 * hint at a hole of its own with MAP_FIXED, and a shorter length
	 * there lets the kernel tear down the rest of the huge page.
	 */
	long p = ncb__hint(h, addr, huge ? alen : len, alen, prot, flags,
			   fd, off);

	if ((unsigned long)p == addr)
		return p;
	if (p == -NCB__EADDRNOTAVAIL)
		return 0;
	/*
	 * qemu-user fails a hint now and then with EAGAIN; a real kernel
	 * reports EAGAIN only after the collision check (locked memory
	 * limits), and the claimed path reports it in that order.
	 */
	if (p == -NCB__EAGAIN)
		return 0;
	/* If the range cannot be checked, the kernel's own error stands. */
	if (ncb__after_collision_check(p, flags) &&
	    ncb__classify(addr, alen, 0) == -NCB__EEXIST)
		return -NCB__EEXIST;
	return p;
}

/*
 * Whether to look for an occupant before trying the mapping, as the flag
 * would: where PROCMAP_QUERY answers in one call, it costs less than a
 * mapping made and unmapped; where only the text can say, the hint is
 * tried first, as it costs the same however many mappings there are.  A
 * MAP_HUGETLB hint that fails is met by valgrind with the unmapping of
 * what is there: an anonymous one is looked for first always.  A file's
 * is refused before the collision check unless the file is on hugetlbfs:
 * the hint says which.
 */
static int ncb__look_first(int flags)
{
	int huge = flags & NCB__MAP_HUGETLB, anon = flags & NCB__MAP_ANONYMOUS;

	if (huge && !anon)
		return 0;
	return (huge && anon) || ncb_core_procmap_query();
}

static void ncb__unclaim(unsigned long new, unsigned long nl);

/* The mapping at a, by hint or claim, once: or -EEXIST, or -errno. */
static long ncb__mmap_once(struct ncb__hints *h, unsigned long a,
			   unsigned long len, unsigned long alen, int prot,
			   int flags, int fd, long long off, int mode)
{
	unsigned long g = ncb__granule(flags, fd);
	long p;
	int err;

	if (mode != NCB_NOREPLACE_HONOURED) {
		if (ncb__look_first(flags) &&
		    ncb_core_occupied(a, a + alen) == 1)
			return -NCB__EEXIST;
		p = ncb__try_hint(h, a, len, alen, g > ncb_core_page_size(),
				  prot, flags, fd, off);
		if (p)
			return p;
		if (ncb_core_occupied(a, a + alen) == 1)
			return -NCB__EEXIST;
	}
	err = ncb__claim(h, a, alen, mode);
	if (err)
		return err;
	/*
	 * The range is ours: MAP_FIXED replaces only our placeholder.  A
	 * failure may come after the kernel discarded it (before 6.12, a
	 * file's mmap or the commit charge after do_mas_munmap; since, a
	 * slab allocation), and another thread may have mapped in the hole
	 * since: undone only while a mapping of the placeholder's extent is
	 * there (one of exactly that extent made in the moment between
	 * passes for it).
	 */
	p = ncb__mmap_raw(a, len, prot, flags | NCB__MAP_FIXED, fd, off);
	if (NCB_CORE_FAILED(p))
		ncb__unclaim(a, alen);
	return p;
}

/* ncb__mmap_once, asked again where a stray of ours may have refused it. */
static long ncb__mmap_placed(unsigned long a, unsigned long len,
			     unsigned long alen, int prot, int flags, int fd,
			     long long off, int mode)
{
	struct ncb__hints h;
	long p;
	int i;

	for (i = 0;; i++) {
		ncb__hints_look(&h);
		p = ncb__mmap_once(&h, a, len, alen, prot, flags, fd, off,
				   mode);
		if (p != -NCB__EEXIST || i == NCB__STRAY_TRIES ||
		    !ncb__hints_flew(&h))
			return p;
		ncb__yield();
	}
}

/*
 * With the flag: the kernel's answer, asked again where a stray of this
 * process may have been what it refused.
 */
static long ncb__mmap_flagged(unsigned long a, unsigned long len, int prot,
			      int flags, int fd, long long off)
{
	struct ncb__hints h;
	long p;
	int i;

	for (i = 0;; i++) {
		ncb__hints_look(&h);
		p = ncb__mmap_raw(a, len, prot, flags | NCB__MAP_NOREPLACE, fd,
				  off);
		if (p != -NCB__EEXIST || i == NCB__STRAY_TRIES ||
		    !ncb__hints_flew(&h))
			return p;
		ncb__yield();
	}
}

NCB__FN long ncb_core_mmap_mode(void *addr, unsigned long len, int prot,
				     int flags, int fd, long long off,
				     int mode)
{
	unsigned long a = (unsigned long)addr, alen, g;
	long p;
	int err;

	/*
	 * MAP_32BIT only steers the kernel's choice of an address (x86_64's
	 * find_start_end); a fixed one is taken before it is looked at
	 * (arch_get_unmapped_area returns it first).  Kept, it would turn a
	 * hint above 2 GiB into a search of the first 2 GiB, and into ENOMEM
	 * once nothing is free there.
	 */
	flags &= ~(NCB__MAP_FIXED | NCB__MAP_NOREPLACE | NCB__MAP_32BIT);
	/* The kernel refuses MAP_SHARED_VALIDATE with the flag (EOPNOTSUPP). */
	if (mode == NCB_NOREPLACE_HONOURED &&
	    (flags & NCB__MAP_TYPE) != NCB__MAP_SHARED_VALIDATE) {
		p = ncb__mmap_flagged(a, len, prot, flags, fd, off);
		if ((unsigned long)p == a || NCB_CORE_FAILED(p))
			return p;
		/* Not honoured after all: treat it as the hint it was. */
		ncb__unmap_stray(p, len,
				 ncb__round(len, ncb__granule(flags, fd)));
		mode = NCB_NOREPLACE_IGNORED;
	}
	/* The alignment: a huge page's may take a statfs of the file. */
	g = ncb__granule(flags, fd);
	err = ncb__mmap_precheck(a, len, flags, fd, off, g);
	if (err)
		return err;
	alen = ncb__round(len, g);
	return ncb__mmap_placed(a, len, alen, prot, flags, fd, off, mode);
}

NCB__FN long ncb_core_mmap(void *addr, unsigned long len, int prot,
				int flags, int fd, long long off)
{
	return ncb_core_mmap_mode(addr, len, prot, flags, fd, off,
				  ncb_core_probe());
}

/* ---- mremap ---- */

#define NCB__MREMAP_FLAGS (NCB__MREMAP_MAYMOVE | NCB__MREMAP_FIXED |	\
			   NCB__MREMAP_DONTUNMAP)

/*
 * The lengths rounded up to g (a page, or a huge page: mremap's hugetlb
 * rounding) in *ol and *nl, and mremap_to's checks of them: none zero
 * unless old_len was, no wrap, no overlap.  0 or -EINVAL.
 */
static int ncb__mremap_lengths(unsigned long old, unsigned long old_len,
			       unsigned long new_len, unsigned long new,
			       unsigned long g, unsigned long *ol,
			       unsigned long *nl)
{
	*ol = ncb__round(old_len, g);
	*nl = ncb__round(new_len, g);
	if (!*nl || (old_len && !*ol))
		return -NCB__EINVAL;
	if (new + *nl < new || old + *ol < old)
		return -NCB__EINVAL;
	if (old + *ol > new && new + *nl > old)
		return -NCB__EINVAL;
	return 0;
}

/*
 * mremap's bound on the destination: a length or range past TASK_SIZE is
 * EINVAL (mm/mremap.c: mremap_to; check_mremap_params since 6.17, before
 * the source is looked at).  Asked of the kernel as mmap's is
 * (ncb__ask_space), whose ENOMEM may also be the map count past its
 * limit: a page at 0, which only that refuses with ENOMEM, tells them
 * apart, and the map count is left to the claim.  The range is asked
 * again after: another thread may have freed a mapping between the two
 * questions, and then only the range's answer holding says TASK_SIZE.
 */
static int ncb__mremap_space(unsigned long new, unsigned long nl)
{
	if (nl > NCB__TASK_SIZE_MAX || new > NCB__TASK_SIZE_MAX - nl)
		return -NCB__EINVAL;
	if (ncb__ask_space(new, nl) != -NCB__ENOMEM ||
	    ncb__ask_space(0, ncb_core_page_size()) == -NCB__ENOMEM ||
	    ncb__ask_space(new, nl) != -NCB__ENOMEM)
		return 0;
	return -NCB__EINVAL;
}

/*
 * What mremap checks of the new place before it looks the source up
 * (vma_lookup, EFAULT): all of it (its alignment, TASK_SIZE, the overlap)
 * since Linux 6.17, 3215eaceca87 ("mm/mremap: refactor initial parameter
 * sanity checks"): NCB__NEW_ALL; only its alignment since 6.15,
 * 1d7ea9f7317b ("mm/mremap: refactor mremap() system call
 * implementation"): NCB__NEW_ALIGN; nothing before, where mremap_to checks
 * it after: NCB__NEW_NONE.  Asked of the kernel once, with moves from the
 * last page of the address space, which no process can map, that change
 * nothing: onto itself, refused for its range (EINVAL) only where all
 * comes first; one byte further, for its alignment where that does.
 * Where something else answers (an emulator's own mremap), the release
 * says.
 */
#define NCB__NEW_NONE	1
#define NCB__NEW_ALIGN	2
#define NCB__NEW_ALL	3

static int ncb__mremap_order_by_release(void)
{
	unsigned long rel = ncb_core_kernel_release();

	if (rel >= (6UL << 16 | 17UL << 8))
		return NCB__NEW_ALL;
	return rel >= (6UL << 16 | 15UL << 8) ? NCB__NEW_ALIGN : NCB__NEW_NONE;
}

static long ncb__move_from_last(unsigned long to)
{
	unsigned long pg = ncb_core_page_size();

	return ncb__mremap_raw(0UL - pg, pg, pg, NCB__MREMAP_MAYMOVE |
			       NCB__MREMAP_FIXED, to);
}

static int ncb__mremap_order(void)
{
	unsigned long last = 0UL - ncb_core_page_size();
	int v = NCB__GET(ncb__dest_order);
	long r;

	if (v)
		return v;
	r = ncb__move_from_last(last);
	if (r == -NCB__EFAULT) {
		r = ncb__move_from_last(last + 1);
		v = r == -NCB__EINVAL ? NCB__NEW_ALIGN
		    : r == -NCB__EFAULT ? NCB__NEW_NONE
					: ncb__mremap_order_by_release();
	} else {
		v = r == -NCB__EINVAL ? NCB__NEW_ALL
				      : ncb__mremap_order_by_release();
	}
	NCB__SET(ncb__dest_order, v);
	return v;
}

/* Whether a mapping holds addr: 1, 0, or -errno of the look-up. */
static int ncb__mapped(unsigned long addr)
{
	struct ncb__range rg;

	rg.start = addr;
	rg.end = addr + 1;
	rg.page = 0;
	return ncb__look(&rg, 0, ncb__covers);
}

/* EFAULT if no mapping holds addr, 0 if one does, or -errno. */
static int ncb__source_missing(unsigned long addr)
{
	int err = ncb__mapped(addr);

	return err < 0 ? err : err ? 0 : -NCB__EFAULT;
}

/*
 * The argument checks of mremap(2) and mremap_to(), in the kernel's
 * order.  A missing source is EFAULT where the kernel looks it up: before
 * the new place's alignment until 6.15, before its range until 6.17 (see
 * ncb__mremap_order).  Since 6.17 the lengths of an MREMAP_DONTUNMAP move
 * are compared rounded to pages, before as given.
 */
static int ncb__mremap_precheck(unsigned long old, unsigned long old_len,
				unsigned long new_len, int flags,
				unsigned long new)
{
	unsigned long pg = ncb_core_page_size(), ol, nl;
	int order = ncb__mremap_order(), err;

	if (flags & ~NCB__MREMAP_FLAGS)
		return -NCB__EINVAL;
	if ((flags & NCB__MREMAP_DONTUNMAP) &&
	    (order == NCB__NEW_ALL
	     ? ncb__round(old_len, pg) != ncb__round(new_len, pg)
	     : old_len != new_len))
		return -NCB__EINVAL;
	if (old & (pg - 1))
		return -NCB__EINVAL;
	/* The kernel checks new's alignment between the two lengths. */
	if (!ncb__round(new_len, pg) ||
	    (old_len && !ncb__round(old_len, pg)))
		return -NCB__EINVAL;
	if (order == NCB__NEW_NONE && (err = ncb__source_missing(old)))
		return err;
	if (new & (pg - 1))
		return -NCB__EINVAL;
	if (order == NCB__NEW_ALIGN && (err = ncb__source_missing(old)))
		return err;
	err = ncb__mremap_lengths(old, old_len, new_len, new, pg, &ol, &nl);
	return err ? err : ncb__mremap_space(new, nl);
}

/*
 * Since 6.17 a move to a fixed address that keeps the length takes a
 * source of several mappings, and the holes between them, so long as its
 * first page is mapped ("mm/mremap: permit mremap() move of multiple
 * VMAs"); before, the kernel fails it with EFAULT after it has discarded
 * the destination, so it is not tried there.  Only where the flag is
 * honoured: an emulator's own mremap may not move many (valgrind 3.19
 * crashes on it).  Not with MREMAP_DONTUNMAP: a move that fails part-way
 * leaves the moved mappings' sources in place, empty, and what was moved
 * could not be told from what was not.
 */
static int ncb__moves_many(unsigned long ol, unsigned long nl, int flags,
			   int mode)
{
	return ol && ol == nl && mode == NCB_NOREPLACE_HONOURED &&
	       !(flags & NCB__MREMAP_DONTUNMAP) &&
	       ncb_core_kernel_release() >= (6UL << 16 | 17UL << 8);
}

/* The first mapping ending above start, into the span: 1; none: 0. */
struct ncb__span {
	struct ncb__range rg;		/* first: ncb__look passes it */
	unsigned long long s, e;
};

static int ncb__first_above(unsigned long long s, unsigned long long e,
			    void *arg)
{
	struct ncb__span *sp = arg;

	if (!s && !e)
		return 0;
	if (e <= sp->rg.start)
		return -1;
	sp->s = s;
	sp->e = e;
	return 1;
}

/*
 * The first mapping ending above a that starts below end, into sp (the
 * ioctl's page size in sp->rg.page): 1; none: 0; or -errno.
 */
static int ncb__next_in(struct ncb__span *sp, unsigned long a,
			unsigned long end)
{
	int r;

	sp->rg.start = a;
	sp->rg.end = end;
	sp->rg.page = 0;
	r = ncb__look(&sp->rg, 1, ncb__first_above);
	return r <= 0 ? r : sp->s < end;
}

/*
 * Whether every mapping of a source of many has pages of the base size,
 * as the ioctl says: 1, 0, or -errno.  The kernel rounds a huge page
 * mapping's part of a move up to its page, which for any but the first
 * would reach past the claim; such a source is not moved as many.
 */
static int ncb__base_pages(unsigned long old, unsigned long ol)
{
	struct ncb__span sp;
	unsigned long a, end = old + ol;
	int r = 0;

	for (a = old; a < end && (r = ncb__next_in(&sp, a, end)) == 1;
	     a = (unsigned long)sp.e)
		if (sp.rg.page != ncb_core_page_size())
			return 0;
	return r < 0 ? r : 1;
}

/*
 * The runs of consecutive mappings in [old, old + ol), each passed to fn
 * clipped to the range, in order.  0, or -errno of the look-up.
 */
static int ncb__runs(unsigned long old, unsigned long ol,
		     void (*fn)(unsigned long, unsigned long, void *),
		     void *arg)
{
	struct ncb__span sp;
	unsigned long a, end = old + ol, rs = 0, re = 0;
	int r = 0;

	for (a = old; a < end && (r = ncb__next_in(&sp, a, end)) == 1;
	     a = re) {
		if (re && sp.s > re) {
			fn(rs, re, arg);
			re = 0;
		}
		if (!re)
			rs = sp.s > a ? (unsigned long)sp.s : a;
		re = sp.e < end ? (unsigned long)sp.e : end;
	}
	if (r < 0)
		return r;
	if (re)
		fn(rs, re, arg);
	return 0;
}

struct ncb__moving {
	unsigned long old, end, new, done;
};

/* The destination's part facing the hole before [rs, re): given up. */
static void ncb__free_hole(unsigned long rs, unsigned long re, void *arg)
{
	struct ncb__moving *m = arg;

	if (rs > m->done)
		ncb__munmap(m->new + (m->done - m->old), rs - m->done);
	m->done = re;
}

/*
 * A source of many mappings moves piece by piece: the kernel leaves the
 * destination's parts across the source's holes as they were, here the
 * claim.  They are given up before the move (the move does not touch
 * them, as it would not without the claim), so that none of the claim
 * is left behind.  0, or -errno of the look-up.
 */
static int ncb__unclaim_holes(unsigned long old, unsigned long ol,
			      unsigned long new)
{
	struct ncb__moving m = { old, old + ol, new, old };
	int r = ncb__runs(old, ol, ncb__free_hole, &m);

	if (!r)
		ncb__free_hole(m.end, m.end, &m);
	return r;
}

/* A mapping of exactly [start, end) there: 1; another, or none: 0. */
static int ncb__is_exactly(unsigned long long s, unsigned long long e,
			   void *arg)
{
	struct ncb__range *r = arg;

	if ((!s && !e) || s > r->start)
		return 0;
	if (e <= r->start)
		return -1;
	return s == r->start && e == r->end;
}

/*
 * A failed move leaves the claim on the destination to undo.  Some
 * releases discard the destination before they look at the source
 * (mremap_to: do_munmap, then vma_to_resize, whose EFAULT, ENOMEM and
 * EAGAIN come after), so the claim may be gone and another thread may
 * have mapped there since: the range is unmapped only while a mapping of
 * exactly the claim's extent is there.  Where the maps hide PROT_NONE
 * mappings (qemu-user's 32-bit guests) the claim cannot be seen, and is
 * unmapped as before.
 */
static void ncb__unclaim(unsigned long new, unsigned long nl)
{
	struct ncb__range rg = { new, new + nl, 0 };

	if (ncb_core_maps_hide_prot_none() ||
	    ncb__look(&rg, 0, ncb__is_exactly) == 1)
		ncb__munmap(new, nl);
}

static void ncb__unclaim_run(unsigned long rs, unsigned long re, void *arg)
{
	struct ncb__moving *m = arg;

	ncb__unclaim(m->new + (rs - m->old), re - rs);
}

/*
 * A failed move of many mappings leaves a piece of the claim facing each
 * run of the source; the kernel may have moved some runs' mappings
 * before it failed.  A run still at the source was not moved: its piece,
 * if exactly that, is the claim's.  A moved one is no longer there to
 * be looked at, so what now holds its data is never touched.
 */
static void ncb__unclaim_many(unsigned long old, unsigned long ol,
			      unsigned long new)
{
	struct ncb__moving m = { old, old + ol, new, old };

	ncb__runs(old, ol, ncb__unclaim_run, &m);
}

NCB__FN long ncb_core_mremap_mode(void *old_addr, unsigned long old_len,
				       unsigned long new_len, int flags,
				       void *new_addr, int mode)
{
	unsigned long old = (unsigned long)old_addr;
	unsigned long new = (unsigned long)new_addr;
	unsigned long ol = ncb__align(old_len), nl = ncb__align(new_len), g;
	struct ncb__range rg;
	int err, many;
	long p;

	err = ncb__mremap_precheck(old, old_len, new_len, flags, new);
	if (err)
		return err;
	/*
	 * The kernel discards the destination before it looks at the source;
	 * check the source first so that the claim below is not given up for
	 * a mistake the kernel would report anyway.
	 */
	rg.start = old;
	rg.end = old + (ol ? ol : 1);
	rg.page = 0;
	err = ncb__look(&rg, 0, ncb__covers);
	many = !err && ncb__moves_many(ol, nl, flags, mode);
	if (many)
		err = ncb__base_pages(old, ol);
	if (many && err == 1) {
		rg.end = old + ncb_core_page_size();
		err = ncb__look(&rg, 0, ncb__covers);
	}
	if (err <= 0)
		return err < 0 ? err : -NCB__EFAULT;
	/*
	 * A huge page mapping moves in whole huge pages: both lengths are
	 * rounded up to them, and the destination must be aligned (mremap's
	 * hugetlb checks).  The claim must cover all the kernel will take.
	 */
	g = rg.page ? (unsigned long)rg.page : ncb__smaps_page(old);
	if (g > ncb_core_page_size()) {
		if ((old | new) & (g - 1))
			return -NCB__EINVAL;
		err = ncb__mremap_lengths(old, old_len, new_len, new, g, &ol,
					  &nl);
		if (err)
			return err;
	}
	err = ncb_core_claim(new, nl, mode);
	if (err)
		return err;
	if (many && (err = ncb__unclaim_holes(old, ol, new))) {
		ncb__unclaim(new, nl);
		return err;
	}
	p = ncb__move(old, old_len, new_len, NCB__MREMAP_MAYMOVE |
		      NCB__MREMAP_FIXED | (flags & NCB__MREMAP_DONTUNMAP), new);
	if (NCB_CORE_FAILED(p) && many)
		ncb__unclaim_many(old, ol, new);
	else if (NCB_CORE_FAILED(p))
		ncb__unclaim(new, nl);
	return p;
}

NCB__FN long ncb_core_mremap(void *old_addr, unsigned long old_len,
				  unsigned long new_len, int flags,
				  void *new_addr)
{
	return ncb_core_mremap_mode(old_addr, old_len, new_len, flags,
				    new_addr, ncb_core_probe());
}

#ifdef NCB__NO_SSP_CLANG
#pragma clang attribute pop
#endif
#ifdef NCB__NO_SSP_GCC
#pragma GCC pop_options
#endif
#ifdef NCB__INLINE_ATOMICS_GCC
#pragma GCC pop_options
#endif

#endif /* NCB_CORE_IMPLEMENTED */
#endif /* NCB_CORE_IMPLEMENTATION */

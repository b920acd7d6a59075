/* SPDX-License-Identifier: MIT */
/*
 * The preload watcher's system calls: the placements it takes, made to
 * the kernel directly, and the core's exact ones (noclobber_core.h, its
 * definitions hidden in this object).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF __attribute__((visibility("hidden")))
#include "noclobber_core.h"
#include "preload.h"

long pl_sys(long n, long a, long b, long c, long d, long e, long f)
{
	return ncb__sc(n, a, b, c, d, e, f);
}

long pl_mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd,
	     int64_t off)
{
	return ncb__mmap_raw((unsigned long)addr, (unsigned long)len, prot,
			     flags, fd, off);
}

long pl_mremap(uint64_t old, uint64_t old_len, uint64_t new_len, int flags,
	       uint64_t new_addr)
{
	return ncb__mremap_raw((unsigned long)old, (unsigned long)old_len,
			       (unsigned long)new_len, flags,
			       (unsigned long)new_addr);
}

long pl_munmap(uint64_t addr, uint64_t len)
{
	return ncb__munmap((unsigned long)addr, (unsigned long)len);
}

/*
 * shmat, or where the kernel has no call of its own for it (i386, s390x
 * and ppc64le before Linux 5.1) ipc(2)'s, version 0, which writes the
 * address to a word of ours.
 */
long pl_shmat(int id, uint64_t addr, int flags)
{
	long r = -ENOSYS;
#ifdef __NR_ipc
	unsigned long at = 0;
#endif

#ifdef __NR_shmat
	r = NCB__SC3(__NR_shmat, id, addr, flags);
#endif
#ifdef __NR_ipc
	if (r == -ENOSYS) {
		r = NCB__SC5(__NR_ipc, WC_IPC_SHMAT, id, flags, &at, addr);
		if (!r)
			r = (long)at;
	}
#endif
	return r;
}

long pl_mmap_exact(uint64_t addr, uint64_t len, int prot, int flags, int fd,
		   int64_t off)
{
	return ncb_core_mmap((void *)(uintptr_t)addr, (unsigned long)len, prot,
			     flags, fd, off);
}

long pl_mremap_exact(uint64_t old, uint64_t old_len, uint64_t new_len,
		     int flags, uint64_t new_addr)
{
	return ncb_core_mremap((void *)(uintptr_t)old, (unsigned long)old_len,
			       (unsigned long)new_len, flags,
			       (void *)(uintptr_t)new_addr);
}

uint64_t pl_page(void)
{
	return ncb_core_page_size();
}

/*
 * The calls every process makes as it starts and ends are made to the
 * kernel directly: through the C library, each would first be bound by
 * the loader (its name looked up in every object loaded), which costs a
 * short program more than the call itself.  errno is left alone.
 */
void pl_write_all(int fd, const char *buf, size_t len)
{
	long n;

	while (len) {
		n = NCB__SC3(__NR_write, fd, buf, len);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

pid_t pl_getpid(void)
{
	return (pid_t)NCB__SC1(__NR_getpid, 0);
}

int pl_open_append(const char *path)
{
	return (int)NCB__SC4(__NR_openat, NCB__AT_FDCWD, path,
			     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			     O_LARGEFILE, 0666);
}

int pl_name(char name[16])
{
	return (int)NCB__SC2(__NR_prctl, PR_GET_NAME, name);
}

double pl_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * pl_now's clock, asked of the kernel (the C library's would be bound
 * first, and may read the vDSO's page for the first time).  Where time_t
 * is 32 bits wide the call of 64-bit times (Linux 5.1) is tried first.
 */
double pl_now_direct(void)
{
#ifdef __NR_clock_gettime64
	struct { int64_t s, ns; } t64;
	struct { int32_t s, ns; } t32;

	if (!NCB__SC2(__NR_clock_gettime64, CLOCK_MONOTONIC, &t64))
		return (double)t64.s + (double)t64.ns / 1e9;
	if (!NCB__SC2(__NR_clock_gettime, CLOCK_MONOTONIC, &t32))
		return (double)t32.s + (double)t32.ns / 1e9;
#else
	struct { long s, ns; } t;

	if (!NCB__SC2(__NR_clock_gettime, CLOCK_MONOTONIC, &t))
		return (double)t.s + (double)t.ns / 1e9;
#endif
	return pl_now();
}

uint64_t pl_granule(int flags, int fd)
{
	return ncb__granule(flags, fd);
}

uint64_t pl_page_at(uint64_t addr)
{
	unsigned long long s, e, page = 0;
	int fd = ncb__open_maps();

	/* The ioctl where it answers (6.11), else smaps' KernelPageSize. */
	if (fd >= 0 && ncb__query_at(fd, (unsigned long)addr, 0, &s, &e,
				      &page) == 1 && page) {
		ncb__close(fd);
		return page;
	}
	if (fd >= 0)
		ncb__close(fd);
	page = ncb__smaps_page((unsigned long)addr);
	return page ? page : pl_page();
}

/*
 * The mapping covering addr (next: or the first above it), asked of the
 * PROCMAP_QUERY ioctl (Linux 6.11) on the core's kept descriptor: one
 * call, where the maps' text is read from its start.  1 with *m, 0 if
 * there is none, -ENOTTY where the ioctl does not answer it (an older
 * kernel, an emulator's maps, a name longer than m->path), or -errno.
 */
int pl_query(uint64_t addr, int next, struct pl_map *m)
{
	struct ncb__pmq q;
	int fd, fresh, again = 0;
	long r;

	if (!ncb_core_procmap_query())
		return -ENOTTY;
retry:
	fd = ncb__maps_for_query(&fresh, again);
	if (fd < 0)
		return fd;
	/* Field by field: an aggregate's zeroing may become a memset call. */
	q.size = sizeof(q);
	q.query_flags = next ? NCB__PMQ_COVERING_OR_NEXT : 0;
	q.query_addr = addr;
	q.vma_start = q.vma_end = q.vma_flags = q.vma_page_size = 0;
	q.vma_offset = q.inode = 0;
	q.dev_major = q.dev_minor = q.build_id_size = 0;
	q.vma_name_size = sizeof(m->path);
	q.vma_name_addr = (uintptr_t)m->path;
	q.build_id_addr = 0;
	m->path[0] = '\0';
	r = NCB__SC3(__NR_ioctl, fd, NCB__PMQ, &q);
	if (fresh)
		ncb__close(fd);
	/* The kept number taken over meanwhile: ask a fresh descriptor. */
	else if (!again && !ncb__kept_still(fd)) {
		again = 1;
		goto retry;
	}
	if (r == -ENOENT)
		return 0;
	/* ESRCH: a descriptor opened once the main thread had exited. */
	if (r < 0)
		return r == -EINVAL || r == -ENAMETOOLONG || r == -ESRCH ?
		       -ENOTTY : (int)r;
	m->start = q.vma_start;
	m->end = q.vma_end;
	m->offset = q.vma_offset;
	m->ino = q.inode;
	m->major = q.dev_major;
	m->minor = q.dev_minor;
	/* PROCMAP_QUERY_VMA_READABLE, _WRITABLE, _EXECUTABLE, _SHARED. */
	m->prot = (q.vma_flags & 1 ? PROT_READ : 0) |
		  (q.vma_flags & 2 ? PROT_WRITE : 0) |
		  (q.vma_flags & 4 ? PROT_EXEC : 0);
	m->shared = !!(q.vma_flags & 8);
	m->path[q.vma_name_size ? sizeof(m->path) - 1 : 0] = '\0';
	return 1;
}

/*
 * Not known, mapped: the call goes on to be judged.  The core reads
 * /proc/self, whose maps are empty once the main thread has exited.
 */
int pl_mapped(uint64_t addr)
{
	int r = ncb_core_occupied((unsigned long)addr,
				  (unsigned long)addr + 1);

	if (!r && pl_main_thread_gone())
		r = pl_mapped_text(addr);
	return r != 0;
}

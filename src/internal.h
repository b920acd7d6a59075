/* SPDX-License-Identifier: MIT */
/* Internal interfaces shared by the library's source files. */
#ifndef NCB_INTERNAL_H
#define NCB_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "noclobber.h"
#include "noclobber_core.h"

#define NCB_HIDDEN __attribute__((visibility("hidden")))

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

/*
 * Sized structs (opts.c).  NCB__END(type, field): the struct as far as
 * that field, the floor a caller's size must reach (the 1.0 struct).
 * ncb__opts_in: *dst (ours bytes) from the caller's options as far as their
 * size says, zero past it; NULL gives all zero; -EINVAL below the floor
 * or for a non-zero byte past what we know.  ncb__out_size: -EINVAL unless
 * the result struct's size reaches the floor.  ncb__out: our result into
 * the caller's struct, no further than its size, which becomes what was
 * written.
 */
#define NCB__END(type, field) \
	(offsetof(struct type, field) + sizeof(((struct type *)0)->field))
NCB_HIDDEN int ncb__opts_in(void *dst, size_t ours, const void *opts,
			    size_t floor);
NCB_HIDDEN int ncb__out_size(const void *out, size_t floor);
NCB_HIDDEN void ncb__out(void *out, const void *ours, size_t size);

/* The probe's verdict, computed once per process. */
NCB_HIDDEN const struct ncb_probe *ncb__probe(void);
/*
 * A small file of /proc or /proc/sys (one read), NUL-terminated in buf;
 * its length, or -errno.  A number from one: dflt if unreadable.
 */
NCB_HIDDEN ssize_t ncb__read_small(const char *path, char *buf, size_t len);
NCB_HIDDEN unsigned long ncb__read_ulong(const char *path,
					 unsigned long dflt);

/* ncb_mmap with the kernel behaviour given rather than probed. */
NCB_HIDDEN void *ncb__mmap_mode(void *addr, size_t len, int prot, int flags,
				int fd, off_t off, int mode);
/* ncb_mremap likewise. */
NCB_HIDDEN void *ncb__mremap_mode(void *old_addr, size_t old_len,
				  size_t new_len, int flags, void *new_addr,
				  int mode);

/* 1 if some page of [start, end) is mapped, 0 if none, -errno. */
NCB_HIDDEN int ncb__range_occupied(uint64_t start, uint64_t end);

/* The maps reader forced to parse text; and one over a given text. */
NCB_HIDDEN int ncb__maps_open_text(struct ncb_maps **maps, pid_t pid);
NCB_HIDDEN int ncb__maps_from_text(struct ncb_maps **maps, const char *text,
				   size_t len);


/* The model's flags of the area at or after addr, for tests. */
struct ncb_as;
NCB_HIDDEN int ncb__as_flags(const struct ncb_as *as, uint64_t addr);
NCB_HIDDEN uint64_t ncb__as_pgoff(const struct ncb_as *as, uint64_t addr);
NCB_HIDDEN int ncb__as_check(const struct ncb_as *as);
NCB_HIDDEN size_t ncb__as_bytes(const struct ncb_as *as);

/*
 * The version the kernel gives itself (osrelease): major << 16 | minor << 8
 * | patch, 0 if unknown.  Only for what no experiment can tell.
 */
NCB_HIDDEN unsigned int ncb__kernel_version(void);
#define NCB__KERNEL(major, minor) ((major) << 16 | (minor) << 8)

/* For tests: commits always made elsewhere and moved (resv.c). */
NCB_HIDDEN extern int ncb__resv_move_always;

/* 64 random bits for placement (not for secrets). */
NCB_HIDDEN uint64_t ncb__random64(void);

/* The top of the address space a hint can reach. */
NCB_HIDDEN uint64_t ncb__user_top(void);

static inline uintptr_t ncb__page_mask(void)
{
	return ncb__probe()->page_size - 1;
}

/* Round len up to whole pages; 0 if that overflows. */
static inline size_t ncb__page_align(size_t len)
{
	uintptr_t mask = ncb__page_mask();

	if (len > SIZE_MAX - mask)
		return 0;
	return (len + mask) & ~mask;
}

static inline void *ncb__fail(int err)
{
	errno = err < 0 ? -err : err;
	return MAP_FAILED;
}

#endif /* NCB_INTERNAL_H */

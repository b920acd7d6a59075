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

/*
 * The addresses [lo, hi) every byte of which is within a machine's reach
 * (ncb_reach) of every byte of the anchor [a, b), both ways (near.c,
 * resv.c); lo == hi where none is.  -errno as ncb_reach.
 */
NCB_HIDDEN int ncb__reach_window(int machine, int kind, uint64_t a,
				 uint64_t b, uint64_t *lo, uint64_t *hi);

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
/* The whole of /proc/PID/maps (pid 0: this process's), the caller's. */
NCB_HIDDEN int ncb__maps_text(pid_t pid, char **text, size_t *len);
/*
 * The caller's own mappings from the one covering or following lo, for a
 * walk upward that stops where its caller does: read by the reader that
 * costs less for a walk here (maps.c), without the gate area.  Iterated
 * with ncb_maps_next.
 */
NCB_HIDDEN int ncb__maps_walk(struct ncb_maps **maps, uint64_t lo);
/*
 * The reader walks use here, measured at the first walk: 1 the ioctl, 2
 * the text (0: not yet); set not 0 imposes one (tests, benchmarks).
 */
NCB_HIDDEN int ncb__walk_reader(int set);

/*
 * Placement: one rule for the live process (space.c) and the model
 * (model.c).  A fit is a multiple a of align with [a, a + len) inside the
 * window [lo, hi) and inside one free gap, the guard gap below a stack
 * not counting as free.  Every fitting address counts, an exact fit too.
 * The searches offer each free gap to ncb__place_gap, which keeps the
 * lowest (NCB_PLACE_LOWEST) or highest (NCB_PLACE_HIGHEST) fit whatever
 * the order, or (NCB_PLACE_RANDOM) one drawn uniformly over every fit of
 * every gap offered, in one pass: a gap with n of the s fits so far wins
 * with one draw below s, which also says which of its n fits.
 * NCB_PLACE_ANY is resolved by the searches into these: the highest fit
 * ending no higher than the kernel's own choice for len bytes (where mmap
 * would put an anonymous mapping of that length), else the lowest fit.
 * Returns 1 if the gap has a fit.
 */
struct ncb__place {
	uint64_t lo, hi;	/* the window */
	uint64_t len, align;	/* whole pages; a power of two, >= page */
	int place;		/* LOWEST, HIGHEST or RANDOM */
	int have;		/* found holds a fit */
	uint64_t found;
	uint64_t seen;		/* RANDOM: fits offered so far */
};

NCB_HIDDEN int ncb__place_gap(struct ncb__place *p, uint64_t gap_lo,
			      uint64_t gap_hi);
/*
 * ncb_find_free with the kernel's choice for NCB_PLACE_ANY given: the end
 * of the range it gave (kernel_end; 0 if it gave none).
 */
NCB_HIDDEN int ncb__find_free(uint64_t lo, uint64_t hi, size_t len,
			      size_t align, int place, uint64_t kernel_end,
			      uint64_t *addr);
/*
 * An address the kernel's top-down search starts above (its mmap_base is
 * no lower), learnt once per process; 0 if unknown.  Below it, ANY is the
 * highest fit.
 */
NCB_HIDDEN uint64_t ncb__mmap_base_floor(void);
/*
 * The end of the range the kernel's own search would give len bytes, for
 * NCB_PLACE_ANY in a window ending at hi: hi itself below the floor above,
 * else asked of the kernel (a mapping made and removed); 0 if none.
 */
NCB_HIDDEN uint64_t ncb__kernel_end(uint64_t hi, uint64_t len);
/*
 * The end of the free gap below mapping m, as placement sees it: the
 * guard gap below a [stack] is not free (stack_guard_gap, 256 pages).
 */
NCB_HIDDEN uint64_t ncb__gap_end(const struct ncb_mapping *m);


/* The model's flags of the area at or after addr, for tests. */
struct ncb_as;
NCB_HIDDEN int ncb__as_flags(const struct ncb_as *as, uint64_t addr);
NCB_HIDDEN uint64_t ncb__as_pgoff(const struct ncb_as *as, uint64_t addr);
NCB_HIDDEN int ncb__as_check(const struct ncb_as *as);
NCB_HIDDEN size_t ncb__as_bytes(const struct ncb_as *as);

/* Around the library's own short-lived mappings (core.c). */
NCB_HIDDEN void ncb__stray_begin(void);
NCB_HIDDEN void ncb__stray_end(void);
/*
 * For tests (core.c): the hints the core has begun, and the reader of
 * its occupancy checks imposed: 1 the ioctl, 2 the text, 0 measured again.
 */
NCB_HIDDEN unsigned long ncb__hints_made(void);
NCB_HIDDEN void ncb__core_reader(int set);

/* A release as ncb_core_kernel_release gives it. */
#define NCB__KERNEL(major, minor) ((major) << 16 | (minor) << 8)

/* For tests: commits always made elsewhere and moved (resv.c). */
NCB_HIDDEN extern int ncb__resv_move_always;

/*
 * 64 random bits for placement (not for secrets).  A test makes the
 * calling thread's draws a fixed sequence from seed (0: random again).
 */
NCB_HIDDEN uint64_t ncb__random64(void);
NCB_HIDDEN void ncb__random_fixed(uint64_t seed);

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

/* SPDX-License-Identifier: MIT */
/* Helpers for the noclobber tests: windows, sentinels, modes. */
#ifndef NCB_NCBTEST_H
#define NCB_NCBTEST_H

#include "internal.h"

/*
 * The core keeps one descriptor of /proc/self/maps per process once it
 * has looked a range up: have it kept before the harness counts a test's
 * descriptors, by the library's copy and by a test's own (core/shim.c).
 */
extern void ncb_test_core_warm(void) __attribute__((weak));
#define HARNESS_SETUP()							\
	do {								\
		(void)ncb_core_occupied(0, 1);				\
		if (ncb_test_core_warm)					\
			ncb_test_core_warm();				\
	} while (0)

#include "harness.h"

/* The paths ncb_mmap can take; 0 stands for "whatever the probe chose". */
#define MODE_PROBED 0

static inline void *mmap_in(int mode, void *addr, size_t len, int prot,
			    int flags, int fd, off_t off)
{
	if (mode == MODE_PROBED)
		return ncb_mmap(addr, len, prot, flags, fd, off);
	return ncb__mmap_mode(addr, len, prot, flags, fd, off, mode);
}

static inline void *mremap_in(int mode, void *old, size_t ol, size_t nl,
			      int flags, void *new_addr)
{
	if (mode == MODE_PROBED)
		return ncb_mremap(old, ol, nl, flags, new_addr);
	return ncb__mremap_mode(old, ol, nl, flags, new_addr, mode);
}

/* The flag's own path can only be tested where the flag works. */
static inline void require_mode(int mode)
{
	int here = ncb__probe()->noreplace;

	if (mode == NCB_NOREPLACE_HONOURED && here != mode)
		SKIP("MAP_FIXED_NOREPLACE is %s here: path not taken",
		     ncb_noreplace_name(here));
}

/*
 * A range that was free a moment ago, in the middle of a larger hole: the
 * kernel fills holes from the top and valgrind from the bottom, so the
 * window stays free while the test works (tests are single-threaded, or
 * make their own neighbours).
 */
#define WINDOW_MARGIN (32UL << 20)

static inline char *free_window(size_t len)
{
	char *p = mmap(NULL, len + 2 * WINDOW_MARGIN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		FAIL("mmap of a %zu-byte window: %s", len, errname(errno));
	munmap(p, len + 2 * WINDOW_MARGIN);
	return p + WINDOW_MARGIN;
}

/*
 * Give the calling thread its malloc arena now: glibc maps a 64 MiB heap at
 * a thread's first malloc, which could otherwise land in a test's window.
 * (A plain free(malloc(1)) is optimised away.)
 */
static inline void bind_malloc_arena(void)
{
	void *volatile p = malloc(1);

	free(p);
}

/*
 * The kernel's answer for a page at addr as do_mmap checks it before any
 * collision: a fixed anonymous mapping of no type, which it refuses with
 * EINVAL after the map count and __get_unmapped_area (ENOMEM past
 * TASK_SIZE) and before it maps anything.
 */
static inline int space_answer(uintptr_t addr)
{
	void *p = mmap((void *)addr, test_page(), PROT_NONE,
		       MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p != MAP_FAILED)
		FAIL("a mapping of no type was made at %p", p);
	return errno;
}

/*
 * TASK_SIZE as this process's kernel (or qemu-user) answers: the lowest
 * page refused with ENOMEM above a free one.  0 where the answers say
 * nothing (valgrind refuses ranges it keeps with EINVAL).
 */
static inline uintptr_t test_task_size(void)
{
	size_t pg = test_page();
	uintptr_t lo = (uintptr_t)free_window(pg);
	uintptr_t hi = UINTPTR_MAX & ~(uintptr_t)(pg - 1), mid;

	if (space_answer(hi) != ENOMEM || space_answer(lo) == ENOMEM)
		return 0;
	while (hi - lo > pg) {
		mid = lo + ((hi - lo) / 2 & ~(uintptr_t)(pg - 1));
		if (space_answer(mid) == ENOMEM)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static inline int occupants(const void *addr, size_t len)
{
	int n = ncb_maps_occupants(0, addr, len, NULL, NULL);

	if (n < 0)
		FAIL("ncb_maps_occupants: %s", errname(-n));
	return n;
}

static inline char *map_sentinel(void *addr, size_t len, unsigned char v)
{
	char *p = mmap(addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (addr ? MAP_FIXED : 0),
		       -1, 0);

	if (p == MAP_FAILED)
		FAIL("mmap sentinel: %s", errname(errno));
	memset(p, v, len);
	return p;
}

/*
 * Whether this process's maps list a PROT_NONE mapping standing alone.
 * qemu-user keeps a 32-bit guest's whole space reserved on the host and
 * builds the guest's /proc/self/maps from the host's: such a mapping
 * merges into the reservation and is not listed, and another process's
 * maps are the host's view.  Tests that look for one there skip.
 */
static inline int maps_show_prot_none(void)
{
	static int known = -1;
	size_t pg = test_page();
	char *w;
	int n;

	if (known >= 0)
		return known;
	w = mmap(free_window(3 * pg) + pg, pg, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (w == MAP_FAILED)
		FAIL("mmap of a PROT_NONE page: %s", errname(errno));
	n = ncb_maps_occupants(0, w, pg, NULL, NULL);
	munmap(w, pg);
	if (n < 0)
		FAIL("ncb_maps_occupants: %s", errname(-n));
	known = n == 1;
	return known;
}

static inline void require_prot_none_in_maps(void)
{
	if (!maps_show_prot_none())
		SKIP("this environment's maps do not list PROT_NONE "
		     "mappings (qemu-user with a reserved guest space)");
}

static inline void check_sentinel(const char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] != v)
			FAIL("byte %zu of %p is %#x, wanted %#x: clobbered",
			     i, (const void *)p, (unsigned char)p[i], v);
}

/* Define one test per path for a case taking the mode. */
#define FOR_MODES(name)							\
	TEST(name##_probed) { name(MODE_PROBED); }			\
	TEST(name##_honoured) { require_mode(NCB_NOREPLACE_HONOURED);	\
				name(NCB_NOREPLACE_HONOURED); }		\
	TEST(name##_ignored) { name(NCB_NOREPLACE_IGNORED); }		\
	TEST(name##_partial) { name(NCB_NOREPLACE_PARTIAL); }
#define T_MODES(name)							\
	T(name##_probed), T(name##_honoured), T(name##_ignored),	\
	T(name##_partial)

#endif

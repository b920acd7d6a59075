/* SPDX-License-Identifier: MIT */
/* ncb_mremap: moves like MREMAP_FIXED, but never over anything. */
#include "ncbtest.h"

static void moves_to_free(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x31);
	void *p;

	p = mremap_in(mode, src, 2 * pg, 2 * pg, 0, w + 4 * pg);
	ASSERT_PTR_EQ(p, w + 4 * pg);
	check_sentinel(p, 2 * pg, 0x31);
	ASSERT_EQ(occupants(w, 4 * pg), 0);
	ASSERT_EQ(munmap(p, 2 * pg), 0);
}
FOR_MODES(moves_to_free)

/* Growing and shrinking while moving, flags as mremap(2) takes them. */
static void grows_and_shrinks(int mode)
{
	size_t pg = test_page();
	char *w = free_window(16 * pg), *src = map_sentinel(w, 2 * pg, 0x32);
	char *p;

	p = mremap_in(mode, src, 2 * pg, 4 * pg, MREMAP_MAYMOVE | MREMAP_FIXED,
		      w + 8 * pg);
	ASSERT_PTR_EQ(p, w + 8 * pg);
	check_sentinel(p, 2 * pg, 0x32);
	/*
	 * memcheck 3.19 keeps the grown tail of a mapping moved onto an
	 * existing one marked inaccessible; the pages are there.
	 */
	if (!getenv("NCB_TEST_VALGRIND"))
		memset(p + 2 * pg, 0x32, 2 * pg);
	p = mremap_in(mode, p, 4 * pg, pg, MREMAP_MAYMOVE, w);
	ASSERT_PTR_EQ(p, w);
	check_sentinel(p, pg, 0x32);
	ASSERT_EQ(occupants(w, 16 * pg), 1);
	munmap(w, 16 * pg);
}
FOR_MODES(grows_and_shrinks)

/* Onto an occupied destination: EEXIST, source and occupant intact. */
static void refuses_occupied(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x33);
	char *occ = map_sentinel(w + 5 * pg, pg, 0x44);
	void *p;

	p = mremap_in(mode, src, 2 * pg, 2 * pg, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, EEXIST);
	p = mremap_in(mode, src, 2 * pg, 4 * pg, 0, w + 2 * pg);
	ASSERT_MAP_ERR(p, EEXIST);
	check_sentinel(src, 2 * pg, 0x33);
	check_sentinel(occ, pg, 0x44);
	ASSERT_EQ(occupants(w, 8 * pg), 2);
	munmap(w, 8 * pg);
}
FOR_MODES(refuses_occupied)

static void bad_arguments(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x34);
	void *p;

	/* Overlapping source and destination. */
	p = mremap_in(mode, src, 2 * pg, 2 * pg, 0, w + pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src + 1, pg, pg, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, pg, 0, w + 4 * pg + 1);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, 0, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, pg, 0x100, w + 4 * pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, 2 * pg, MREMAP_DONTUNMAP, w + 4 * pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, SIZE_MAX, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, EINVAL);
	p = mremap_in(mode, src, pg, 2 * pg, 0,
		      (void *)(UINTPTR_MAX & ~(pg - 1)));
	ASSERT_MAP_ERR(p, EINVAL);
	check_sentinel(src, 2 * pg, 0x34);
	ASSERT_EQ(occupants(w, 8 * pg), 1);
	munmap(w, 8 * pg);
}
FOR_MODES(bad_arguments)

/*
 * A destination past the end of the user address space: EINVAL, mremap's
 * own check, also over x86_64's vsyscall page, which the maps list.  Where
 * the kernel honours the flag it is asked too: it unmaps nothing there.
 */
static void beyond_to(int mode, void *src, size_t len, uintptr_t to,
		      int want)
{
	void *p = mremap_in(mode, src, len, len, 0, (void *)to);

	ASSERT_MAP_ERR(p, want);
	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		return;
	p = mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
	ASSERT_MAP_ERR(p, want);
}

/*
 * With no mapping at the source, what the kernel finds first: the
 * destination's fault (EINVAL) where it is checked before the source is
 * looked up, from the release given on, else the source's (EFAULT): its
 * range since 6.17 (3215eaceca87, "mm/mremap: refactor initial parameter
 * sanity checks"), its alignment since 6.15 (1d7ea9f7317b, "mm/mremap:
 * refactor mremap() system call implementation"); before, vma_lookup in
 * the system call came first and mremap_to checked the new place after.
 * The kernel is asked where it answers itself, and its answer must be the
 * one its release says.
 */
static int sourceless_error(void *none, uintptr_t to, unsigned long since)
{
	unsigned long rel = ncb_core_kernel_release();
	int want = rel >= since ? EINVAL : EFAULT;
	void *p;

	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		return want;
	p = mremap(none, test_page(), test_page(),
		   MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
	ASSERT_TRUE(p == MAP_FAILED);
	if (rel && errno != want)
		FAIL("Linux %lu.%lu.%lu: %s, wanted %s", rel >> 16,
		     rel >> 8 & 0xff, rel & 0xff, errname(errno),
		     errname(want));
	return errno;
}

#define NCB_6_15 (6UL << 16 | 15UL << 8)
#define NCB_6_17 (6UL << 16 | 17UL << 8)

static void beyond_task_size(int mode)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg), *src = map_sentinel(w, 2 * pg, 0x37);
	uintptr_t last = UINTPTR_MAX & ~(uintptr_t)(pg - 1);
	uintptr_t top = test_task_size();

	beyond_to(mode, src, pg, last, EINVAL);
#if defined(__x86_64__)
	beyond_to(mode, src, pg, 0xffffffffff600000UL, EINVAL);
	beyond_to(mode, src, 2 * pg, 0xffffffffff5ff000UL, EINVAL);
#endif
	if (top) {
		beyond_to(mode, src, pg, top, EINVAL);
		beyond_to(mode, src, 2 * pg, top - pg, EINVAL);
		beyond_to(mode, w + 2 * pg, pg, top,
			  sourceless_error(w + 2 * pg, top, NCB_6_17));
	}
	beyond_to(mode, w + 2 * pg, pg, last,
		  sourceless_error(w + 2 * pg, last, NCB_6_17));
	/* An unaligned one: found before the source since 6.15. */
	beyond_to(mode, w + 2 * pg, pg, (uintptr_t)src + 2 * pg + 1,
		  sourceless_error(w + 2 * pg, (uintptr_t)src + 2 * pg + 1,
				   NCB_6_15));
	check_sentinel(src, 2 * pg, 0x37);
	ASSERT_EQ(occupants(w, 4 * pg), 1);
	munmap(w, 4 * pg);
}
FOR_MODES(beyond_task_size)

/*
 * Whether the kernel itself moves a source of two mappings, asked of it
 * in memory of the test's own: since 6.17 it does (for a move that keeps
 * the length), before it fails with EFAULT.
 */
static int kernel_moves_many(void)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x3b);
	void *p;

	ASSERT_EQ(mprotect(src + pg, pg, PROT_READ), 0);
	p = mremap(src, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED,
		   w + 4 * pg);
	munmap(w, 8 * pg);
	return p != MAP_FAILED;
}

/* Where ncb_mremap moves many mappings: as the kernel, with the flag. */
static int moves_many(int mode)
{
	int honoured = mode == NCB_NOREPLACE_HONOURED ||
		       (mode == MODE_PROBED &&
			ncb__probe()->noreplace == NCB_NOREPLACE_HONOURED);

	return honoured && kernel_moves_many();
}

/*
 * A source that is not one mapping: EFAULT, and the destination untouched;
 * where the kernel moves a source of many mappings (and the holes between
 * them) and the flag is honoured, moved as the kernel moves it.
 */
static void source_not_mapped(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg);
	int many = moves_many(mode);
	void *p;

	p = mremap_in(mode, w, pg, pg, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, EFAULT);
	map_sentinel(w, pg, 0x35);
	p = mremap_in(mode, w, 2 * pg, 2 * pg, 0, w + 4 * pg);
	if (many) {
		ASSERT_PTR_EQ(p, w + 4 * pg);
		check_sentinel(p, pg, 0x35);
		ASSERT_EQ(occupants(w, 4 * pg), 0);
		ASSERT_EQ(occupants(w + 5 * pg, pg), 0);
	} else {
		ASSERT_MAP_ERR(p, EFAULT);
		ASSERT_EQ(occupants(w, 8 * pg), 1);
	}
	/* The first page unmapped: EFAULT from every kernel. */
	p = mremap_in(mode, w + 3 * pg, 2 * pg, 2 * pg, 0, w + 6 * pg);
	ASSERT_MAP_ERR(p, EFAULT);
	munmap(w, 8 * pg);
}
FOR_MODES(source_not_mapped)

/* Two mappings side by side: moved whole where the kernel would. */
static void two_mappings(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x3c);
	int many = moves_many(mode);
	void *p;

	ASSERT_EQ(mprotect(src + pg, pg, PROT_READ), 0);
	p = mremap_in(mode, src, 2 * pg, 2 * pg, 0, w + 4 * pg);
	if (!many) {
		ASSERT_MAP_ERR(p, EFAULT);
		check_sentinel(src, 2 * pg, 0x3c);
		ASSERT_EQ(occupants(w + 2 * pg, 6 * pg), 0);
	} else {
		ASSERT_PTR_EQ(p, w + 4 * pg);
		check_sentinel(p, 2 * pg, 0x3c);
		ASSERT_EQ(occupants(w, 4 * pg), 0);
	}
	/* Growing a source of two mappings: EFAULT everywhere. */
	src = many ? w + 4 * pg : src;
	p = mremap_in(mode, src, 2 * pg, 3 * pg, 0, w + (many ? 0 : 4) * pg);
	ASSERT_MAP_ERR(p, EFAULT);
	munmap(w, 8 * pg);
}
FOR_MODES(two_mappings)

/* MREMAP_DONTUNMAP (5.7) leaves the source mapped but empty. */
static void dont_unmap(int mode)
{
	size_t pg = test_page();
	char *w = free_window(8 * pg), *src = map_sentinel(w, 2 * pg, 0x36);
	void *p;
	int forgot;

	p = mremap(src, 2 * pg, 2 * pg,
		   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
		   w + 6 * pg);
	if (p == MAP_FAILED) {
		int err = errno;

		/* Older kernels and qemu-user 7.2 lack it: so do we. */
		p = mremap_in(mode, src, 2 * pg, 2 * pg, MREMAP_DONTUNMAP,
			      w + 4 * pg);
		ASSERT_MAP_ERR(p, err);
		ASSERT_EQ(occupants(w + 4 * pg, 2 * pg), 0);
		return;
	}
	munmap(p, 2 * pg);
	/*
	 * qemu-user 7.2 forgets a source kept by MREMAP_DONTUNMAP: with a
	 * 32-bit guest it faults on it even though the maps still list it.
	 */
	forgot = !occupants(src, 2 * pg) || !maps_show_prot_none();
	if (forgot)
		src = map_sentinel(src, 2 * pg, 0x36);
	/* The kernel's move left an empty source; refill and move again. */
	memset(src, 0x36, 2 * pg);
	p = mremap_in(mode, src, 2 * pg, 2 * pg, MREMAP_DONTUNMAP, w + 4 * pg);
	ASSERT_PTR_EQ(p, w + 4 * pg);
	check_sentinel(p, 2 * pg, 0x36);
	if (!forgot)
		check_sentinel(src, 2 * pg, 0);
	munmap(w, 8 * pg);
}
FOR_MODES(dont_unmap)

static long max_map_count(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/*
 * The process's map count filled up to vm.max_map_count, then room made
 * for room more: the filling's base (*len bytes), or a SKIP.  The test's
 * process is its own (the harness forks one per test).  Whatever the
 * path will want to know is to be asked before.
 */
static char *fill_map_count(size_t room, size_t *len)
{
	int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	long max = max_map_count();
	size_t pg = test_page(), n, i;
	char *b;

	if (max < 0 || max > 262144)
		SKIP("vm.max_map_count is %ld: too many mappings to make", max);
	if (test_slow())
		SKIP("the map count is filled where the tests run natively");
#ifdef HARNESS_ASAN
	SKIP("the sanitizer's allocator needs mappings of its own");
#endif
	n = (size_t)max + 64;
	b = mmap(NULL, n * pg, PROT_NONE, anon, -1, 0);
	if (b == MAP_FAILED)
		SKIP("no room to fill the map count: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (mmap(b + i * pg, pg, PROT_READ | (i & 1 ? PROT_WRITE : 0),
			 anon | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
	ASSERT_ERRNO(ENOMEM);
	ASSERT_EQ(munmap(b + (i - 2 * room) * pg, 2 * room * pg), 0);
	*len = n * pg;
	return b;
}

/*
 * Near vm.max_map_count the kernel refuses the move (mremap keeps a
 * margin of its own) with the claim on the destination made: the claim
 * goes, the source stays, nothing else is touched.
 */
static void at_map_limit(int mode)
{
	size_t pg = test_page(), len;
	char *w = free_window(8 * pg), *src = map_sentinel(w, pg, 0x3a), *b;
	void *p;

	ASSERT_EQ(occupants(w + 4 * pg, pg), 0);
	/* Room for the claim, not for the kernel's margin. */
	b = fill_map_count(2, &len);
	p = mremap_in(mode, src, pg, pg, 0, w + 4 * pg);
	ASSERT_MAP_ERR(p, ENOMEM);
	ASSERT_EQ(munmap(b, len), 0);
	check_sentinel(src, pg, 0x3a);
	ASSERT_EQ(occupants(w + pg, 7 * pg), 0);
	munmap(w, 8 * pg);
}
FOR_MODES(at_map_limit)

/*
 * The same with a source of two mappings and a hole, where the kernel
 * moves such a source: the claim is in pieces by then, one facing each
 * run of the source, and every piece goes.
 */
static void many_at_map_limit(int mode)
{
	size_t pg = test_page(), len;
	char *w = free_window(16 * pg), *src = map_sentinel(w, 3 * pg, 0x3b);
	char *b;
	void *p;

	if (!moves_many(mode))
		SKIP("the kernel does not move a source of many mappings");
	ASSERT_EQ(munmap(src + pg, pg), 0);
	ASSERT_EQ(occupants(w + 8 * pg, pg), 0);
	b = fill_map_count(2, &len);
	p = mremap_in(mode, src, 3 * pg, 3 * pg, 0, w + 8 * pg);
	ASSERT_MAP_ERR(p, ENOMEM);
	ASSERT_EQ(munmap(b, len), 0);
	check_sentinel(src, pg, 0x3b);
	check_sentinel(src + 2 * pg, pg, 0x3b);
	ASSERT_EQ(occupants(w + 3 * pg, 13 * pg), 0);
	munmap(w, 16 * pg);
}
FOR_MODES(many_at_map_limit)

/*
 * With MREMAP_DONTUNMAP a source of many is refused (EFAULT, as before
 * 6.17): a move failing part-way would leave moved sources in place.
 */
static void many_dont_unmap(int mode)
{
	size_t pg = test_page();
	char *w = free_window(16 * pg), *src = map_sentinel(w, 3 * pg, 0x3d);
	void *p;

	ASSERT_EQ(munmap(src + pg, pg), 0);
	p = mremap_in(mode, src, 3 * pg, 3 * pg, MREMAP_DONTUNMAP,
		      w + 8 * pg);
	ASSERT_MAP_ERR(p, EFAULT);
	check_sentinel(src, pg, 0x3d);
	check_sentinel(src + 2 * pg, pg, 0x3d);
	ASSERT_EQ(occupants(w + 3 * pg, 13 * pg), 0);
	munmap(w, 16 * pg);
}
FOR_MODES(many_dont_unmap)

/*
 * A huge page mapping after the first in a source of many: the kernel
 * would round its part up to its page, past the claim, so such a source
 * is refused (EFAULT) and nothing beyond the claim is touched.
 */
static void many_huge_later(int mode)
{
	size_t pg = test_page(), hp = 2UL << 20;
	int anon = MAP_PRIVATE | MAP_ANONYMOUS;
	char *w = free_window(16 * hp), *base, *h, *a, *dst, *other;
	void *p;

	if (!moves_many(mode))
		SKIP("the kernel does not move a source of many mappings");
	base = (char *)(((uintptr_t)w + hp - 1) & ~(hp - 1));
	h = base + 2 * hp;
	a = h - pg;
	if (mmap(h, hp, PROT_READ | PROT_WRITE,
		 anon | MAP_HUGETLB | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		SKIP("no 2 MiB huge page mapping here: %s", strerror(errno));
	a = map_sentinel(a, pg, 0x3e);
	dst = base + 8 * hp - pg;
	other = map_sentinel(dst + 64 * pg, pg, 0x3f);
	p = mremap_in(mode, a, 2 * pg, 2 * pg, 0, dst);
	ASSERT_MAP_ERR(p, EFAULT);
	check_sentinel(a, pg, 0x3e);
	check_sentinel(other, pg, 0x3f);
	ASSERT_EQ(occupants(dst, 64 * pg), 0);
	munmap(w, 16 * hp);
}
FOR_MODES(many_huge_later)

TEST_MAIN(T_MODES(moves_to_free), T_MODES(grows_and_shrinks),
	  T_MODES(refuses_occupied), T_MODES(bad_arguments),
	  T_MODES(source_not_mapped), T_MODES(dont_unmap),
	  T_MODES(beyond_task_size), T_MODES(at_map_limit),
	  T_MODES(two_mappings),
	  T_MODES(many_at_map_limit), T_MODES(many_dont_unmap),
	  T_MODES(many_huge_later))

/* SPDX-License-Identifier: MIT */
/*
 * The layouts of the kernel's selftest for the flag
 * (tools/testing/selftests/mm/map_fixed_noreplace.c), on every path
 * ncb_mmap can take, each checking the address, errno and that the
 * existing mapping kept every byte.
 */
#include <fcntl.h>
#include "ncbtest.h"

/* Window of 16 pages; the existing mapping is pages [4, 8). */
struct layout {
	int first;
	int pages;
	int collides;
};

static void try_layout(int mode, const struct layout *l)
{
	size_t pg = test_page();
	char *w = free_window(16 * pg), *e, *want = w + l->first * pg;
	size_t len = (size_t)l->pages * pg;
	void *p;

	e = map_sentinel(w + 4 * pg, 4 * pg, 0xa5);
	p = mmap_in(mode, want, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->collides) {
		ASSERT_MAP_ERR(p, EEXIST);
		/* Nothing new appeared around the existing mapping. */
		ASSERT_EQ(occupants(w, 16 * pg), 1);
	} else {
		ASSERT_PTR_EQ(p, want);
		memset(p, 0x5a, len);
		ASSERT_EQ(munmap(p, len), 0);
	}
	check_sentinel(e, 4 * pg, 0xa5);
	ASSERT_EQ(munmap(e, 4 * pg), 0);
	ASSERT_EQ(occupants(w, 16 * pg), 0);
}

#define LAYOUT(name, first, pages, collides)				\
	static void name(int mode)					\
	{								\
		const struct layout l = { first, pages, collides };	\
		try_layout(mode, &l);					\
	}								\
	FOR_MODES(name)

LAYOUT(free_range, 10, 2, 0)
LAYOUT(exact_overlap, 4, 4, 1)
LAYOUT(contained, 5, 1, 1)
LAYOUT(overlaps_start, 2, 3, 1)
LAYOUT(overlaps_end, 7, 2, 1)
LAYOUT(contains_whole, 3, 6, 1)
LAYOUT(adjacent_below, 2, 2, 0)
LAYOUT(adjacent_above, 8, 2, 0)

static int tmpfile_of(size_t len, unsigned char v)
{
	char path[] = "/tmp/ncb-layout-XXXXXX";
	int fd = mkstemp(path);
	char *buf;

	if (fd < 0)
		FAIL("mkstemp: %s", errname(errno));
	unlink(path);
	buf = malloc(len);
	memset(buf, v, len);
	if (write(fd, buf, len) != (ssize_t)len)
		FAIL("write: %s", errname(errno));
	free(buf);
	return fd;
}

/* A private file mapping over another file's mapping must fail. */
static void file_over_file(int mode)
{
	size_t pg = test_page();
	int a = tmpfile_of(4 * pg, 0x11), b = tmpfile_of(4 * pg, 0x22);
	char *pa, *w = free_window(8 * pg);
	void *p;

	pa = mmap(w + 2 * pg, 4 * pg, PROT_READ, MAP_SHARED | MAP_FIXED, a, 0);
	ASSERT_PTR_EQ(pa, w + 2 * pg);
	p = mmap_in(mode, w + pg, 2 * pg, PROT_READ, MAP_PRIVATE, b, 0);
	ASSERT_MAP_ERR(p, EEXIST);
	p = mmap_in(mode, w + 2 * pg, 4 * pg, PROT_READ, MAP_PRIVATE, b, 0);
	ASSERT_MAP_ERR(p, EEXIST);
	check_sentinel(pa, 4 * pg, 0x11);
	/* At a free place the file's contents appear. */
	p = mmap_in(mode, w + 6 * pg, 2 * pg, PROT_READ, MAP_PRIVATE, b,
		    (off_t)pg);
	ASSERT_PTR_EQ(p, w + 6 * pg);
	check_sentinel(p, 2 * pg, 0x22);
	ASSERT_EQ(occupants(w, 8 * pg), 2);
	munmap(w, 8 * pg);
	close(a);
	close(b);
}
FOR_MODES(file_over_file)

/*
 * The kernel refuses MAP_SHARED_VALIDATE together with the flag
 * (EOPNOTSUPP); ncb_mmap still gives the promise for it.
 */
static void shared_validate(int mode)
{
	size_t pg = test_page();
	int fd = tmpfile_of(2 * pg, 0x33);
	char *w = free_window(4 * pg), *e;
	void *p;

	p = mmap(NULL, pg, PROT_READ, MAP_SHARED_VALIDATE, fd, 0);
	if (p == MAP_FAILED) {
		/* qemu-user 7.2 refuses the map type: so must we. */
		int err = errno;

		p = mmap_in(mode, w, pg, PROT_READ, MAP_SHARED_VALIDATE, fd, 0);
		ASSERT_MAP_ERR(p, err);
		ASSERT_EQ(occupants(w, 4 * pg), 0);
		close(fd);
		return;
	}
	munmap(p, pg);
	e = map_sentinel(w, pg, 0x44);
	p = mmap_in(mode, w, 2 * pg, PROT_READ | PROT_WRITE,
		    MAP_SHARED_VALIDATE, fd, 0);
	ASSERT_MAP_ERR(p, EEXIST);
	check_sentinel(e, pg, 0x44);
	p = mmap_in(mode, w + 2 * pg, 2 * pg, PROT_READ | PROT_WRITE,
		    MAP_SHARED_VALIDATE, fd, 0);
	ASSERT_PTR_EQ(p, w + 2 * pg);
	check_sentinel(p, 2 * pg, 0x33);
	munmap(w, 4 * pg);
	close(fd);
}
FOR_MODES(shared_validate)

/* The caller's MAP_FIXED or MAP_FIXED_NOREPLACE never means "replace". */
static void fixed_flags_accepted(int mode)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg), *e = map_sentinel(w, pg, 0x77);
	static const int extra[] = { MAP_FIXED, MAP_FIXED_NOREPLACE,
				     MAP_FIXED | MAP_FIXED_NOREPLACE };
	unsigned i;
	void *p;

	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		p = mmap_in(mode, w, pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | extra[i], -1, 0);
		ASSERT_MAP_ERR(p, EEXIST);
		check_sentinel(e, pg, 0x77);
		p = mmap_in(mode, w + 2 * pg, pg, PROT_READ,
			    MAP_PRIVATE | MAP_ANONYMOUS | extra[i], -1, 0);
		ASSERT_PTR_EQ(p, w + 2 * pg);
		munmap(p, pg);
	}
	munmap(w, 4 * pg);
}
FOR_MODES(fixed_flags_accepted)

/* A length that is not a page multiple covers its last partial page. */
static void partial_page_length(int mode)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg), *e = map_sentinel(w + 2 * pg, pg, 1);
	void *p;

	p = mmap_in(mode, w + pg, pg + 1, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_MAP_ERR(p, EEXIST);
	p = mmap_in(mode, w + pg, pg - 1, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_PTR_EQ(p, w + pg);
	check_sentinel(e, pg, 1);
	munmap(w, 4 * pg);
}
FOR_MODES(partial_page_length)

TEST_MAIN(T_MODES(free_range), T_MODES(exact_overlap), T_MODES(contained),
	  T_MODES(overlaps_start), T_MODES(overlaps_end),
	  T_MODES(contains_whole), T_MODES(adjacent_below),
	  T_MODES(adjacent_above), T_MODES(file_over_file),
	  T_MODES(shared_validate), T_MODES(fixed_flags_accepted),
	  T_MODES(partial_page_length))

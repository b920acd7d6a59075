/* SPDX-License-Identifier: MIT */
/*
 * Every error ncb_mmap reports, in the kernel's order, on every path.  Where
 * the kernel honours the flag, each case is also put to the kernel itself
 * and both must agree.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include "ncbtest.h"

static const int anon = MAP_PRIVATE | MAP_ANONYMOUS;

/* ncb_mmap's answer, checked against the kernel's own where it can be. */
static void expect(int mode, void *addr, size_t len, int prot, int flags,
		   int fd, off_t off, int want)
{
	void *p = mmap_in(mode, addr, len, prot, flags, fd, off);

	ASSERT_MAP_ERR(p, want);
	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED ||
	    (flags & MAP_TYPE) == MAP_SHARED_VALIDATE)
		return;
	p = mmap(addr, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
	if (p != MAP_FAILED)
		FAIL("the kernel mapped at %p where ncb_mmap gave %s", p,
		     errname(want));
	ASSERT_ERRNO(want);
}

static int tmpfile_rdonly(size_t len)
{
	char path[] = "/tmp/ncb-errno-XXXXXX";
	int fd = mkstemp(path), ro;

	if (fd < 0 || ftruncate(fd, (off_t)len))
		FAIL("temporary file: %s", errname(errno));
	ro = open(path, O_RDONLY);
	unlink(path);
	close(fd);
	if (ro < 0)
		FAIL("open: %s", errname(errno));
	return ro;
}

static void zero_length(int mode)
{
	char *o = map_sentinel(NULL, test_page(), 1);

	expect(mode, o, 0, PROT_READ, anon, -1, 0, EINVAL);
	expect(mode, o + test_page(), 0, PROT_READ, anon, -1, 0, EINVAL);
}
FOR_MODES(zero_length)

static void unaligned_address(int mode)
{
	size_t pg = test_page();
	char *w = free_window(2 * pg);

	expect(mode, w + 1, pg, PROT_READ, anon, -1, 0, EINVAL);
	map_sentinel(w, pg, 1);
	expect(mode, w + 1, pg, PROT_READ, anon, -1, 0, EINVAL);
	ASSERT_EQ(occupants(w, 2 * pg), 1);
}
FOR_MODES(unaligned_address)

/* The offset is checked before the descriptor and before any collision. */
static void unaligned_offset(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1);
	int fd = tmpfile_rdonly(4 * pg);

	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, fd, 1, EINVAL);
	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, -1, 1, EINVAL);
	close(fd);
}
FOR_MODES(unaligned_offset)

static void bad_descriptor(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1);
	char *w = free_window(pg);
	int fd = tmpfile_rdonly(pg);

	close(fd);
	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, fd, 0, EBADF);
	expect(mode, w, pg, PROT_READ, MAP_PRIVATE, -1, 0, EBADF);
	check_sentinel(o, pg, 1);
}
FOR_MODES(bad_descriptor)

static void absurd_lengths(int mode)
{
	size_t pg = test_page();
	char *w = free_window(pg);

	expect(mode, w, SIZE_MAX, PROT_READ, anon, -1, 0, ENOMEM);
	expect(mode, w, SIZE_MAX - 2 * pg, PROT_READ, anon, -1, 0, ENOMEM);
	ASSERT_EQ(occupants(w, pg), 0);
}
FOR_MODES(absurd_lengths)

/* The kernel checks the collision before the file's open mode. */
static void collision_before_access(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1), *w = free_window(pg);
	int fd = tmpfile_rdonly(pg);

	expect(mode, o, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, EEXIST);
	expect(mode, w, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, EACCES);
	ASSERT_EQ(occupants(w, pg), 0);
	check_sentinel(o, pg, 1);
	close(fd);
}
FOR_MODES(collision_before_access)

static void drop_rawio(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		FAIL("capget: %s", errname(errno));
	d[0].effective &= ~(1u << CAP_SYS_RAWIO);
	if (syscall(SYS_capset, &h, d))
		FAIL("capset: %s", errname(errno));
}

/* Below vm.mmap_min_addr, without CAP_SYS_RAWIO: EPERM. */
static void below_mmap_min_addr(int mode)
{
	unsigned long min = ncb__probe()->mmap_min_addr;

	if (!min)
		SKIP("vm.mmap_min_addr is 0 or unreadable");
	drop_rawio();
	expect(mode, NULL, test_page(), PROT_READ, anon, -1, 0, EPERM);
}
FOR_MODES(below_mmap_min_addr)

/*
 * Just below the stack the hint path honours the stack guard gap while the
 * flag does not.  A free range there is never reported as taken: it maps,
 * or fails with EADDRNOTAVAIL.
 */
static void stack_guard_gap(int mode)
{
	struct ncb_mapping m;
	struct ncb_maps *maps;
	size_t pg = test_page();
	char *want = NULL;
	void *p;

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	while (ncb_maps_next(maps, &m) == 1)
		if (!strcmp(m.path, "[stack]"))
			want = (char *)(uintptr_t)m.start - 2 * pg;
	ncb_maps_close(maps);
	if (!want || occupants(want, pg))
		SKIP("no free page below the stack here");
	p = mmap_in(mode, want, pg, PROT_READ, anon, -1, 0);
	if (p == MAP_FAILED) {
		ASSERT_ERRNO(EADDRNOTAVAIL);
		ASSERT_NE(mode, NCB_NOREPLACE_HONOURED);
		ASSERT_EQ(occupants(want, pg), 0);
	} else {
		ASSERT_PTR_EQ(p, want);
	}
}
FOR_MODES(stack_guard_gap)

/*
 * An occupant past the first page is EEXIST, whatever it is: also a
 * reservation-style PROT_NONE one, which qemu-user's 32-bit guests leave
 * out of their maps.
 */
static void occupant_past_first_page(int mode)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg), *o;

	o = mmap(w + 2 * pg, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED, -1, 0);
	ASSERT_PTR_EQ(o, w + 2 * pg);
	expect(mode, w, 4 * pg, PROT_READ, anon, -1, 0, EEXIST);
	munmap(o, pg);
}
FOR_MODES(occupant_past_first_page)

TEST_MAIN(T_MODES(zero_length), T_MODES(unaligned_address),
	  T_MODES(unaligned_offset), T_MODES(bad_descriptor),
	  T_MODES(absurd_lengths), T_MODES(collision_before_access),
	  T_MODES(below_mmap_min_addr), T_MODES(stack_guard_gap),
	  T_MODES(occupant_past_first_page))

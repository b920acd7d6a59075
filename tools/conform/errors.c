/* SPDX-License-Identifier: MIT */
/*
 * mmap's errors with the flag, in the kernel's order: what it checks
 * before the collision (the length, the address, the descriptor, the
 * end of the address space, mmap_min_addr) wins over EEXIST, and what it
 * checks after (the file's mode, the mapping's type, the offset's reach)
 * loses to it.  Cases are in do_mmap's order.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "conform.h"
#include "oracle.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif
/* The kernel's ENOTSUPP, which user space has no name for. */
#define ENOTSUPP_KERNEL 524

#define HINT_BEFORE_417 BEFORE_417(A_ELSEWHERE)

/* An occupied window: two pages of its own at w + pg. */
static char *occupied(struct cctx *c, struct occ *o)
{
	char *w = free_window(c, 4 * c->pg);

	if (!w || occ_make(c, o, w + c->pg, 2 * c->pg, RW, 0))
		return NULL;
	return w + c->pg;
}

/* A descriptor of this program's file, read-only: no file is made. */
static int self_ro(struct cctx *c)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		skip(c, "/proc/self/exe: %s", err_name(errno));
	return fd;
}

static void zero_length(struct cctx *c)
{
	struct occ o;
	char *a = occupied(c, &o);

	if (a)
		judge_place(c, sys_mmap(a, 0, RW, NOREPLACE, -1, 0), a, 0,
			    &o);
}

static void unaligned(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);

	judge_place(c, sys_mmap(w + c->pg + 1, c->pg, RW, NOREPLACE, -1, 0),
		    w + c->pg + 1, c->pg, NULL);
}

static void unaligned_occupied(struct cctx *c)
{
	struct occ o;
	char *a = occupied(c, &o);

	if (a)
		judge_place(c, sys_mmap(a + 1, c->pg, RW, NOREPLACE, -1, 0),
			    a + 1, c->pg, &o);
}

static void length(struct cctx *c)
{
	struct occ o;
	char *a = occupied(c, &o);

	if (a)
		judge_place(c, sys_mmap(a, SIZE_MAX, RW, NOREPLACE, -1, 0), a,
			    c->pg, &o);
}

static void bad_descriptor(struct cctx *c)
{
	struct occ o;
	char *a = occupied(c, &o);
	int fd = open("/dev/null", O_RDONLY);

	close(fd);
	if (a)
		judge_place(c, sys_mmap(a, c->pg, PROT_READ, MAP_SHARED |
					MAP_FIXED_NOREPLACE, fd, 0), a, c->pg,
			    &o);
}

static void task_size(struct cctx *c)
{
	char *last = (char *)(UINTPTR_MAX & ~(uintptr_t)(c->pg - 1));

	judge_place(c, sys_mmap(last, c->pg, PROT_READ, NOREPLACE, -1, 0),
		    last, c->pg, NULL);
}

/* CAP_SYS_RAWIO out of the effective set: mmap_min_addr then binds. */
static int drop_rawio(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << CAP_SYS_RAWIO);
	return (int)syscall(SYS_capset, &h, d);
}

static void min_addr(struct cctx *c)
{
	unsigned long min = mmap_min();
	char *a = (char *)((min - 1) & ~(c->pg - 1));

	if (!min) {
		skip(c, "vm.mmap_min_addr is 0 or unreadable");
		return;
	}
	if (drop_rawio()) {
		skip(c, "CAP_SYS_RAWIO cannot be dropped: %s",
		     err_name(errno));
		return;
	}
	judge_place(c, sys_mmap(a, c->pg, PROT_READ, NOREPLACE, -1, 0), a,
		    c->pg, NULL);
}

/* Shared and writable from a read-only descriptor, at a free range. */
static void access_free(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	int fd = self_ro(c);

	if (fd < 0)
		return;
	judge_place(c, sys_mmap(w + c->pg, c->pg, RW, MAP_SHARED |
				MAP_FIXED_NOREPLACE, fd, 0), w + c->pg, c->pg,
		    NULL);
	close(fd);
}

static void access_occupied(struct cctx *c)
{
	struct occ o;
	char *a = occupied(c, &o);
	int fd = a ? self_ro(c) : -1;

	if (fd < 0)
		return;
	judge_place(c, sys_mmap(a, c->pg, RW, MAP_SHARED |
				MAP_FIXED_NOREPLACE, fd, 0), a, c->pg, &o);
	close(fd);
}

static void shared_validate(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	int fd = self_ro(c);

	if (fd < 0)
		return;
	judge_place(c, sys_mmap(w + c->pg, c->pg, PROT_READ,
				MAP_SHARED_VALIDATE | MAP_FIXED_NOREPLACE, fd,
				0), w + c->pg, c->pg, NULL);
	close(fd);
}

static void no_type(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);

	judge_place(c, sys_mmap(w + c->pg, c->pg, RW, MAP_ANONYMOUS |
				MAP_FIXED_NOREPLACE, -1, 0), w + c->pg, c->pg,
		    NULL);
}

/*
 * Whether the kernel is a 32-bit one: a 32-bit program whose machine is
 * no 64-bit one (a 64-bit kernel names its own, or armv8l to a 32-bit
 * personality).
 */
static int kernel_32bit(void)
{
	struct utsname u;

	return sizeof(long) == 4 && !uname(&u) && !strstr(u.machine, "64") &&
	       strcmp(u.machine, "s390x") && strcmp(u.machine, "armv8l");
}

/*
 * A 32-bit kernel has no VM_DROPPABLE (64-bit and 32-bit powerpc only):
 * EOPNOTSUPP there, ENOTSUPP (524) before its stable fix.  That is the
 * kernel's own choice, skipped with why; a 64-bit one must map.
 */
static void droppable(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	long r = sys_mmap(w + c->pg, c->pg, RW, MAP_DROPPABLE |
			  MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if ((r == -EOPNOTSUPP || r == -ENOTSUPP_KERNEL) && kernel_32bit())
		skip(c, "a 32-bit kernel has no MAP_DROPPABLE (%s)",
		     err_name((int)-r));
	else
		judge_place(c, r, w + c->pg, c->pg, NULL);
}

/* A regular file's pages end at MAX_LFS_FILESIZE (64-bit offsets). */
static void offset_reach(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	int fd = self_ro(c);

	if (fd < 0)
		return;
	if (sizeof(long) < 8) {
		skip(c, "a 32-bit mmap cannot name a page past "
		     "MAX_LFS_FILESIZE");
	} else {
		long off = (long)(INT64_MAX & ~(int64_t)(c->pg - 1));

		judge_place(c, sys_mmap(w + c->pg, c->pg, PROT_READ,
					MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd,
					off), w + c->pg, c->pg, NULL);
	}
	close(fd);
}


/*
 * A descriptor of each kind for the table: a memfd's pages (regular, as
 * a file's), read-only through its /proc/self/fd link; -errno if the
 * environment has no such thing.
 */
static int kind_open(int kind, size_t len, int fds[2])
{
	char path[64];
	int fd;

	fds[0] = fds[1] = -1;
	switch (kind) {
	case FD_RO:
	case FD_RW:
		fd = memfd_create("conform", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)len))
			return -errno;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		fds[0] = open(path, (kind == FD_RO ? O_RDONLY : O_RDWR) |
			      O_CLOEXEC);
		close(fd);
		break;
	case FD_DIR:
		fds[0] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		break;
	case FD_PIPE:
		if (pipe(fds))
			return -errno;
		break;
	case FD_ZERO:
		fds[0] = open("/dev/zero", O_RDWR | O_CLOEXEC);
		break;
	case FD_CLOSED:
		fds[0] = open("/dev/null", O_RDONLY);
		close(fds[0]);
		return 0;
	}
	return fds[0] < 0 && kind != FD_ANON ? -errno : 0;
}

static void kind_close(int kind, int fds[2])
{
	if (kind != FD_CLOSED && fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

/* One combination: 0 if the answer is the rules', else -1 (in why). */
static int table_one(struct cctx *c, char *a, int kind, int flags,
		     int prot, long off, int occ, char *why, size_t len)
{
	int fds[2], want, err;
	long r;

	want = oracle_kernel(kind, flags, prot, off, occ);
	err = kind_open(kind, c->pg, fds);
	if (err) {
		skip(c, "%s: %s", kind_name[kind], err_name(-err));
		return -1;
	}
	r = sys_mmap(a, c->pg, prot, flags | (kind == FD_ANON ? MAP_ANONYMOUS
					      : 0) | MAP_FIXED_NOREPLACE,
		     fds[0], off);
	kind_close(kind, fds);
	if ((unsigned long)r < -4095UL)
		munmap((void *)r, c->pg);
	if (want ? r == -want : r == (long)a)
		return 0;
	snprintf(why, len, "%s, flags %#x, prot %d, offset %#lx, %s: %s, "
		 "not %s", kind_name[kind], flags, prot, (unsigned long)off,
		 occ ? "occupied" : "free", (unsigned long)r >= -4095UL ?
		 err_name((int)-r) : (char *)r == a ? "mapped" :
		 "mapped elsewhere", want ? err_name(want) : "mapped");
	return 1;
}

/*
 * Every combination of descriptor, type, protection, offset and
 * occupancy, each answered as do_mmap's rules in their order say (the
 * table tests/t-errno.c puts the library to).
 */
static void table(struct cctx *c)
{
	long offs[2] = { 0, sizeof(long) == 8 ?
			 (long)(INT64_MAX & ~(int64_t)(c->pg - 1)) : 0 };
	char *w = free_window(c, 2 * c->pg), first[120] = "";
	int kind, occ, n = 0, bad = 0, r;
	size_t t, p, o;
	struct occ s;

	if (!w || occ_make(c, &s, w + c->pg, c->pg, RW, 0))
		return;
	for (kind = 0; kind < FD_KINDS; kind++)
		for (t = 0; t < ORACLE_TYPES; t++)
			for (p = 0; p < ORACLE_PROTS; p++)
				for (o = 0; o < 1 + !!offs[1]; o++)
					for (occ = 0; occ < 2; occ++, n++) {
						r = table_one(c, w + occ *
							      c->pg, kind,
							      oracle_types[t],
							      oracle_prots[p],
							      offs[o], occ,
							      bad ? NULL :
							      first, bad ? 0 :
							      sizeof(first));
						if (r < 0)
							return;
						bad += r;
					}
	if (bad)
		got(c, A_BROKEN, "%d of %d differ; first: %s", bad, n, first);
	else if (!occ_intact(&s))
		got(c, A_REPLACED, "the table's occupant was changed");
	else
		got(c, A_HOLDS, "%d combinations", n);
}

#define ERRNO(n, fn, r, src, e, ...) { "errno." n, G_ERRNO, r, src, \
	A_ERR, e, { __VA_ARGS__ }, fn, { 0 } }

const struct ccase error_cases[] = {
	ERRNO("zero-length", zero_length, "a zero length is EINVAL, even "
	      "where occupied", "mm/mmap.c: do_mmap (!len)", EINVAL,
	      { 0 }),
	ERRNO("length", length, "a length that wraps when rounded is "
	      "ENOMEM, even where occupied", "mm/mmap.c: do_mmap "
	      "(PAGE_ALIGN(len) is 0)", ENOMEM, { 0 }),
	ERRNO("bad-descriptor", bad_descriptor, "a closed descriptor is "
	      "EBADF, even where occupied", "mm/mmap.c: ksys_mmap_pgoff "
	      "(fget before do_mmap)", EBADF, { 0 }),
	ERRNO("unaligned", unaligned, "an address off a page boundary is "
	      "EINVAL", "mm/mmap.c: __get_unmapped_area (offset_in_page)",
	      EINVAL, HINT_BEFORE_417),
	ERRNO("unaligned-occupied", unaligned_occupied, "an address off a "
	      "page boundary is EINVAL, even where occupied", "mm/mmap.c: "
	      "__get_unmapped_area, before the collision", EINVAL,
	      HINT_BEFORE_417),
	ERRNO("task-size", task_size, "a range past TASK_SIZE is ENOMEM",
	      "mm/mmap.c: __get_unmapped_area (TASK_SIZE - len)", ENOMEM,
	      HINT_BEFORE_417),
	ERRNO("min-addr", min_addr, "below vm.mmap_min_addr without "
	      "CAP_SYS_RAWIO: EPERM", "security/commoncap.c: cap_mmap_addr "
	      "(from __get_unmapped_area)", EPERM, HINT_BEFORE_417),
	ERRNO("collision-before-access", access_occupied, "the collision "
	      "is checked before the file's mode: EEXIST, not EACCES",
	      "mm/mmap.c: do_mmap (the flag's check, then the file's)",
	      EEXIST, { 0, KV(4, 17), A_ERR, EACCES, "before Linux 4.17 "
			"the flag is unknown: only the file is checked" }),
	ERRNO("access", access_free, "shared and writable from a read-only "
	      "descriptor: EACCES", "mm/mmap.c: do_mmap (FMODE_WRITE)",
	      EACCES, { 0 }),
	ERRNO("no-type", no_type, "neither shared nor private: EINVAL",
	      "mm/mmap.c: do_mmap (the switch on MAP_TYPE)", EINVAL,
	      { 0 }),
	ERRNO("shared-validate", shared_validate, "MAP_SHARED_VALIDATE "
	      "refuses the flag: EOPNOTSUPP", "mm/mmap.c: do_mmap "
	      "(LEGACY_MAP_MASK lacks the flag)", EOPNOTSUPP,
	      { 0, KV(4, 15), A_ERR, EINVAL, "before Linux 4.15 there is no "
		"MAP_SHARED_VALIDATE (1c9725974074)" }),
	ERRNO("offset-reach", offset_reach, "a file's pages past "
	      "MAX_LFS_FILESIZE: EOVERFLOW", "mm/mmap.c: file_mmap_ok "
	      "(be83bbf80682, 4.17)", EOVERFLOW, { 0, KV(4, 17), A_AT, 0,
		"before Linux 4.17 a file's offset had no limit "
		"(be83bbf80682; some stable updates carry it)" }),
	{ "errno.table", G_ERRNO, "every descriptor, type, protection, "
	  "offset and occupancy answered in do_mmap's order",
	  "mm/mmap.c: ksys_mmap_pgoff, do_mmap, file_mmap_ok", A_HOLDS, 0,
	  { BEFORE_417(A_BROKEN) }, table, { 0 } },
	{ "errno.droppable", G_ERRNO, "MAP_DROPPABLE is a type of its own: "
	  "mapped", "mm/mmap.c: do_mmap (MAP_DROPPABLE; 9651fcedf7b9, "
	  "6.11)", A_AT, 0, { { 0, KV(6, 11), A_ERR, EINVAL, "before Linux "
			       "6.11 there is no MAP_DROPPABLE" } },
	  droppable, { 0 } },
	{ NULL, 0, NULL, NULL, 0, 0, { { 0 } }, NULL, { 0 } },
};

/* SPDX-License-Identifier: MIT */
/*
 * do_mmap's answers with MAP_FIXED_NOREPLACE for one page, as a table
 * of cases: kind of descriptor x type and flags x protection x offset x
 * occupancy.  The rules in the kernel's order (mm/mmap.c: ksys_mmap_pgoff
 * takes the descriptor, do_mmap checks the collision, then file_mmap_ok
 * and the switch on the mapping's type), shared by the library's tests
 * (tests/t-errno.c puts every path of ncb_mmap to it) and the conformance
 * suite (tools/conform/errors.c puts the environment to it).
 */
#ifndef NCB_CONFORM_ORACLE_H
#define NCB_CONFORM_ORACLE_H

#include <errno.h>
#include <sys/mman.h>
#include <sys/types.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

enum fd_kind { FD_ANON, FD_RO, FD_RW, FD_DIR, FD_PIPE, FD_ZERO, FD_CLOSED,
	       FD_KINDS };

static const char *const kind_name[FD_KINDS] __attribute__((unused)) = {
	"anonymous", "read-only file", "read-write file", "directory",
	"pipe", "/dev/zero", "closed descriptor",
};

/* The table's other axes: types (with MAP_GROWSDOWN), protections. */
static const int oracle_types[] __attribute__((unused)) = {
	MAP_PRIVATE, MAP_SHARED, MAP_SHARED_VALIDATE, 0,
	MAP_PRIVATE | MAP_GROWSDOWN, MAP_SHARED | MAP_GROWSDOWN,
};
#define ORACLE_TYPES (sizeof(oracle_types) / sizeof(oracle_types[0]))

static const int oracle_prots[] __attribute__((unused)) = {
	PROT_READ, PROT_READ | PROT_WRITE,
};
#define ORACLE_PROTS (sizeof(oracle_prots) / sizeof(oracle_prots[0]))

/*
 * The kernel's answer for a page at a free or occupied address (0:
 * mapped).  off is 0 or a page past any regular file's end
 * (MAX_LFS_FILESIZE).
 */
static inline int oracle(int kind, int flags, int prot, off_t off,
			 int occupied)
{
	int type = flags & MAP_TYPE, writable = kind == FD_RW ||
						kind == FD_ZERO;

	if (kind == FD_CLOSED)
		return EBADF;
	if (occupied)
		return EEXIST;
	if (kind == FD_ANON) {
		if (type == MAP_SHARED)
			return flags & MAP_GROWSDOWN ? EINVAL : 0;
		return type == MAP_PRIVATE ? 0 : EINVAL;
	}
	/* A regular file's pages end at MAX_LFS_FILESIZE. */
	if (off && (kind == FD_RO || kind == FD_RW))
		return EOVERFLOW;
	if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE &&
	    type != MAP_PRIVATE)
		return EINVAL;
	if (type != MAP_PRIVATE && (prot & PROT_WRITE) && !writable)
		return EACCES;
	if (kind == FD_DIR || kind == FD_PIPE)
		return ENODEV;
	return flags & MAP_GROWSDOWN ? EINVAL : 0;
}

/*
 * The kernel itself: MAP_SHARED_VALIDATE refuses the flag, which its
 * LEGACY_MAP_MASK lacks (EOPNOTSUPP, after file_mmap_ok); the library
 * maps such a file as the flag would, so oracle() says the mapping is
 * made.
 */
static inline int oracle_kernel(int kind, int flags, int prot, off_t off,
				int occupied)
{
	int err = oracle(kind, flags, prot, off, occupied);

	if (kind != FD_ANON && kind != FD_CLOSED && !occupied &&
	    (flags & MAP_TYPE) == MAP_SHARED_VALIDATE && err != EOVERFLOW)
		return EOPNOTSUPP;
	return err;
}

#endif

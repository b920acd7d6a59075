/* SPDX-License-Identifier: MIT */
/*
 * ncb_mmap: map exactly at addr or fail, never replacing anything.
 *
 * Where the kernel honours MAP_FIXED_NOREPLACE this is one system call.
 * Elsewhere nothing is ever mapped with MAP_FIXED except over a placeholder
 * this call owns, and the placeholder is taken with operations the kernel
 * performs atomically and that cannot replace: a hint (the kernel returns
 * the hint only if the range is free) and mremap growing in place (which
 * fails unless the pages after the mapping are free).
 */
#include <fcntl.h>
#include <unistd.h>
#include "internal.h"

/* Claiming retries this often when the range was freed meanwhile. */
#define CLAIM_TRIES 4

static const int placeholder = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

/* EEXIST if the range is occupied now, else the error the call gave. */
static int classify(uintptr_t addr, size_t len, int err_if_free)
{
	int r = ncb__range_occupied(addr, (uint64_t)addr + len);

	if (r < 0)
		return r;
	/*
	 * Where the maps hide PROT_NONE mappings, the emulator's placement
	 * has no guard gap: a refused hint was refused for an occupant.
	 */
	if (!r && err_if_free == -EADDRNOTAVAIL &&
	    ncb__maps_hide_prot_none())
		r = 1;
	return r ? -EEXIST : err_if_free;
}

/*
 * The placeholder's first len bytes, taken without replacing anything:
 * with the flag only where it is exact for one page, else as a hint.
 */
static int claim_first(uintptr_t addr, size_t len, int mode)
{
	int fl = placeholder;
	void *p;

	/* One page is exact even on 4.17: a mapping inside it contains addr. */
	if (mode == NCB_NOREPLACE_PARTIAL && len == ncb__probe()->page_size)
		fl |= NCB_MAP_FIXED_NOREPLACE;
	p = mmap((void *)addr, len, PROT_NONE, fl, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if ((uintptr_t)p == addr)
		return 0;
	(void)munmap(p, len);
	return -EADDRNOTAVAIL;
}

static int claim_slow(uintptr_t addr, size_t len, int mode)
{
	size_t pg = ncb__probe()->page_size;
	int i, err = 0;

	for (i = 0; i < CLAIM_TRIES; i++) {
		/*
		 * The whole range as a hint first: one step where the range
		 * is free and the hint rules allow it, and the only one that
		 * works where growing in place never does (qemu-user's
		 * 32-bit guests keep their whole space reserved).
		 */
		if (len > pg) {
			err = claim_first(addr, len, mode);
			if (!err)
				return 0;
			/*
			 * Where the maps hide PROT_NONE mappings, growing in
			 * place never works either: this refusal is the only
			 * word on an occupant past the first page.
			 */
			if (err == -EADDRNOTAVAIL &&
			    ncb__maps_hide_prot_none()) {
				err = classify(addr, len, err);
				if (err != -EADDRNOTAVAIL)
					return err;
			}
		}
		err = claim_first(addr, pg, mode);
		/* A placeholder is never locked: EAGAIN is qemu-user's. */
		if (err == -EAGAIN)
			continue;
		if (err == -EADDRNOTAVAIL) {
			err = classify(addr, len, err);
			if (err != -EADDRNOTAVAIL)
				return err;
			continue;
		}
		if (err || len == pg)
			return err;
		if (mremap((void *)addr, pg, len, 0) != MAP_FAILED)
			return 0;
		/* ENOMEM: some page after the first is taken, or no memory. */
		err = -errno;
		(void)munmap((void *)addr, pg);
		if (err != -ENOMEM)
			return err;
		err = classify(addr, len, err);
		if (err != -ENOMEM)
			return err;
	}
	return err;
}

int ncb__claim(uintptr_t addr, size_t len, int mode)
{
	void *p;

	if (mode == NCB_NOREPLACE_HONOURED) {
		p = mmap((void *)addr, len, PROT_NONE,
			 placeholder | NCB_MAP_FIXED_NOREPLACE, -1, 0);
		if ((uintptr_t)p == addr)
			return 0;
		if (p == MAP_FAILED)
			return -errno;
		(void)munmap(p, len);
	}
	return claim_slow(addr, len, mode);
}

/*
 * The checks the kernel makes before it looks for a collision, in its
 * order (arch sys_mmap, ksys_mmap_pgoff, do_mmap, __get_unmapped_area), so
 * that the emulated paths fail like the real flag would.
 */
static int precheck(uintptr_t addr, size_t len, int flags, int fd,
		    off_t off)
{
	const struct ncb_probe *p = ncb__probe();
	uintptr_t mask = p->page_size - 1;
	size_t alen;

	if ((uint64_t)off & mask)
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS) && fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (!len)
		return -EINVAL;
	alen = ncb__page_align(len);
	if (!alen)
		return -ENOMEM;
	if ((uint64_t)off / p->page_size + alen / p->page_size <
	    (uint64_t)off / p->page_size)
		return -EOVERFLOW;
	if (addr + alen < addr)
		return -ENOMEM;
	if (addr & mask)
		return -EINVAL;
	if (addr < p->mmap_min_addr)
		return -EPERM;
	return 0;
}

/*
 * Errors the kernel reports only after its collision check (do_mmap: lock
 * limits, then the file's mode and type): an occupied range wins over them.
 */
static int after_collision_check(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
	case EAGAIN:
	case ETXTBSY:
	case ENODEV:
	case EOPNOTSUPP:
		return 1;
	}
	return 0;
}

/*
 * A plain hint: if the range is free the kernel places the mapping there
 * itself, atomically.  Returns the mapping, NULL to go on, or MAP_FAILED.
 */
static void *try_hint(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);
	int err;

	if (p == addr)
		return p;
	if (p != MAP_FAILED) {
		(void)munmap(p, len);
		return NULL;
	}
	err = errno;
	/*
	 * qemu-user fails a hint now and then with EAGAIN; a real kernel
	 * reports EAGAIN only after the collision check (locked memory
	 * limits), and the claimed path below reports it in that order.
	 */
	if (err == EAGAIN)
		return NULL;
	/* If the range cannot be checked, the kernel's own error stands. */
	if (after_collision_check(err) &&
	    classify((uintptr_t)addr, ncb__page_align(len), 0) == -EEXIST)
		err = EEXIST;
	errno = err;
	return MAP_FAILED;
}

void *ncb__mmap_mode(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off, int mode)
{
	uintptr_t a = (uintptr_t)addr;
	size_t alen;
	void *p;
	int err;

	flags &= ~(MAP_FIXED | NCB_MAP_FIXED_NOREPLACE);
	/* The kernel refuses MAP_SHARED_VALIDATE with the flag (EOPNOTSUPP). */
	if (mode == NCB_NOREPLACE_HONOURED &&
	    (flags & MAP_TYPE) != MAP_SHARED_VALIDATE) {
		p = mmap(addr, len, prot, flags | NCB_MAP_FIXED_NOREPLACE, fd,
			 off);
		if (p == addr || p == MAP_FAILED)
			return p;
		/* Not honoured after all: treat it as the hint it was. */
		(void)munmap(p, len);
		mode = NCB_NOREPLACE_IGNORED;
	}
	err = precheck(a, len, flags, fd, off);
	if (err)
		return ncb__fail(err);
	alen = ncb__page_align(len);
	if (mode != NCB_NOREPLACE_HONOURED) {
		p = try_hint(addr, len, prot, flags, fd, off);
		if (p)
			return p;
		/* Usually the range is taken: say so without claiming. */
		if (ncb__range_occupied(a, (uint64_t)a + alen) == 1)
			return ncb__fail(-EEXIST);
	}
	err = ncb__claim(a, alen, mode);
	if (err)
		return ncb__fail(err);
	/* The range is ours: MAP_FIXED replaces only our placeholder. */
	p = mmap(addr, len, prot, flags | MAP_FIXED, fd, off);
	if (p == MAP_FAILED) {
		err = errno;
		(void)munmap(addr, alen);
		errno = err;
	}
	return p;
}

void *ncb_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return ncb__mmap_mode(addr, len, prot, flags, fd, off,
			      ncb__probe()->noreplace);
}

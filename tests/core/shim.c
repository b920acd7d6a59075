/* SPDX-License-Identifier: MIT */
/*
 * The mmap-shaped calls the mmap tests make, answered by a private copy of
 * the single-file core as a program that vendors it would have one: a
 * test linked with this before the library runs against the core alone
 * (t-errno-core and the like; the library's own copy is never called).
 */
#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF static
#include "noclobber_core.h"
#include "internal.h"

void *ncb__mmap_mode(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off, int mode)
{
	long r = ncb_core_mmap_mode(addr, len, prot, flags, fd, off, mode);

	return NCB_CORE_FAILED(r) ? ncb__fail((int)r) : (void *)r;
}

void *ncb_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return ncb__mmap_mode(addr, len, prot, flags, fd, off,
			      ncb_core_probe());
}

void *ncb__mremap_mode(void *old_addr, size_t old_len, size_t new_len,
		       int flags, void *new_addr, int mode)
{
	long r = ncb_core_mremap_mode(old_addr, old_len, new_len, flags,
				      new_addr, mode);

	return NCB_CORE_FAILED(r) ? ncb__fail((int)r) : (void *)r;
}

void *ncb_mremap(void *old_addr, size_t old_len, size_t new_len, int flags,
		 void *new_addr)
{
	return ncb__mremap_mode(old_addr, old_len, new_len, flags, new_addr,
				ncb_core_probe());
}

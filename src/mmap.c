/* SPDX-License-Identifier: MIT */
/*
 * ncb_mmap: map exactly at addr or fail, never replacing anything: the
 * core's call (core.c) with mmap's contract, MAP_FAILED and errno.
 */
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
			      ncb__probe()->noreplace);
}

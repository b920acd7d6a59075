/* SPDX-License-Identifier: MIT */
/*
 * ncb_mremap: MREMAP_FIXED that fails with EEXIST instead of replacing what
 * is at the destination: the core's call (core.c) with mremap's contract.
 */
#include "internal.h"

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
				ncb__probe()->noreplace);
}

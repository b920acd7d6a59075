/* SPDX-License-Identifier: MIT */
/*
 * ncb_mremap: MREMAP_FIXED that fails with EEXIST instead of replacing what
 * is at the destination.  The kernel has no such flag, so the destination is
 * first claimed no-clobber, and the mapping is then moved onto that claim.
 */
#include "internal.h"

#define VALID_FLAGS (MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP)

/* The argument checks of mremap(2) and mremap_to(), in the kernel's order. */
static int precheck(uintptr_t old, size_t old_len, size_t new_len, int flags,
		    uintptr_t new)
{
	uintptr_t mask = ncb__page_mask();
	size_t ol = ncb__page_align(old_len), nl = ncb__page_align(new_len);

	if (flags & ~VALID_FLAGS)
		return -EINVAL;
	if ((flags & MREMAP_DONTUNMAP) && old_len != new_len)
		return -EINVAL;
	if (old & mask)
		return -EINVAL;
	if (!nl || (old_len && !ol))
		return -EINVAL;
	if (new & mask)
		return -EINVAL;
	if (new + nl < new || old + ol < old)
		return -EINVAL;
	if (old + ol > new && new + nl > old)
		return -EINVAL;
	return 0;
}

void *ncb__mremap_mode(void *old_addr, size_t old_len, size_t new_len,
		       int flags, void *new_addr, int mode)
{
	uintptr_t old = (uintptr_t)old_addr, new = (uintptr_t)new_addr;
	size_t ol = ncb__page_align(old_len), nl = ncb__page_align(new_len);
	void *p;
	int err;

	err = precheck(old, old_len, new_len, flags, new);
	if (err)
		return ncb__fail(err);
	/*
	 * The kernel discards the destination before it looks at the source;
	 * check the source first so that the claim below is not given up for
	 * a mistake the kernel would report anyway.
	 */
	err = ncb__range_in_one_mapping(old, old + (ol ? ol : 1));
	if (err <= 0)
		return ncb__fail(err < 0 ? err : -EFAULT);
	err = ncb__claim(new, nl, mode);
	if (err)
		return ncb__fail(err);
	p = mremap(old_addr, old_len, new_len,
		   MREMAP_MAYMOVE | MREMAP_FIXED | (flags & MREMAP_DONTUNMAP),
		   new_addr);
	if (p == MAP_FAILED) {
		err = errno;
		(void)munmap(new_addr, nl);
		errno = err;
	}
	return p;
}

void *ncb_mremap(void *old_addr, size_t old_len, size_t new_len, int flags,
		 void *new_addr)
{
	return ncb__mremap_mode(old_addr, old_len, new_len, flags, new_addr,
				ncb__probe()->noreplace);
}

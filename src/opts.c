/* SPDX-License-Identifier: MIT */
/*
 * Structs that cross the interface with a size field (noclobber.h): one
 * rule for options read and one for results written, so that a program
 * built against any release works with any later one.
 */
#include <string.h>
#include "internal.h"

int ncb__opts_in(void *dst, size_t ours, const void *opts, size_t floor)
{
	const unsigned char *p = opts;
	size_t size, i;

	memset(dst, 0, ours);
	if (!opts) {
		*(size_t *)dst = ours;
		return 0;
	}
	memcpy(&size, opts, sizeof(size));
	/*
	 * No release will grow a struct by a page: a size past that is not
	 * a struct's, and its tail is not the caller's to read.
	 */
	if (size < floor || (size > ours && size - ours > 4096))
		return -EINVAL;
	/* A newer caller's option we cannot honour: refuse, not ignore. */
	for (i = ours; i < size; i++)
		if (p[i])
			return -EINVAL;
	memcpy(dst, opts, size < ours ? size : ours);
	*(size_t *)dst = ours;
	return 0;
}

int ncb__out_size(const void *out, size_t floor)
{
	size_t size;

	if (!out)
		return -EINVAL;
	memcpy(&size, out, sizeof(size));
	return size < floor ? -EINVAL : 0;
}

void ncb__out(void *out, const void *ours, size_t size)
{
	size_t n;

	memcpy(&n, out, sizeof(n));
	if (n > size)
		n = size;
	memcpy((char *)out + sizeof(size_t),
	       (const char *)ours + sizeof(size_t), n - sizeof(size_t));
	/* What was written: a newer caller learns which fields it has. */
	memcpy(out, &n, sizeof(n));
}

/* SPDX-License-Identifier: MIT */
/*
 * A library that keeps a file mapped (a cache), made with a plain mmap
 * by its own code: the watcher's corpus (clobber cache) maps over it.
 */
#include <stddef.h>
#include <sys/mman.h>

void *cache_map(int fd, size_t len);

void *cache_map(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

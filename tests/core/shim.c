/* SPDX-License-Identifier: MIT */
/*
 * The mmap-shaped calls the mmap tests make, answered by a private copy of
 * the single-file core as a program that vendors it would have one: a
 * test linked with this before the library runs against the core alone
 * (t-errno-core and the like; the library's own copy is never called).
 * The library's thin wrappers are compiled here over that copy.
 */
#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF static
#include "noclobber_core.h"
#include "../../src/mmap.c"
#include "../../src/mremap.c"

/* Its kept descriptor of /proc/self/maps, before the harness counts. */
void ncb_test_core_warm(void);

void ncb_test_core_warm(void)
{
	(void)ncb_core_occupied(0, 1);
}

/* SPDX-License-Identifier: MIT */
/*
 * The library's no-clobber mmap, mremap, claim, probe and occupancy
 * checks are the single-file core's (include/noclobber_core.h): one
 * implementation for the library and for those who vendor the core.
 * Its symbols are hidden here like every other internal one, and, the
 * library being hosted, it keeps the stack protector the build asks for.
 */
#define NCB_CORE_STACK_PROTECTOR
#define NCB_CORE_IMPLEMENTATION
#include "noclobber_core.h"
#include "internal.h"

/*
 * The library's own short-lived mappings (a kernel's choice tried and
 * undone, a commit's source before it moves: resv.c) are hints in flight
 * like the core's: a refusal made while one is may be asked again.
 */
void ncb__stray_begin(void)
{
	__atomic_add_fetch(&ncb__hints_begun, 1, __ATOMIC_SEQ_CST);
}

void ncb__stray_end(void)
{
	__atomic_add_fetch(&ncb__hints_ended, 1, __ATOMIC_SEQ_CST);
}

unsigned long ncb__hints_made(void)
{
	return __atomic_load_n(&ncb__hints_begun, __ATOMIC_SEQ_CST);
}

void ncb__core_reader(int set)
{
	NCB__SET(ncb__query, set);
}

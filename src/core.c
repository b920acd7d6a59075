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

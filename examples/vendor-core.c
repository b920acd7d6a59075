/* SPDX-License-Identifier: MIT */
/*
 * vendor-core: the single-file core copied into a program, no library.
 * An allocator wants its arena at a preferred address (so that pointers
 * into it stay small, or a snapshot can be mapped back where it was):
 * it asks for each 64 MiB slot from there up and takes the first that is
 * free, never replacing what another part of the process mapped.  The
 * core's calls need no libc, malloc or locks: this could run inside
 * malloc itself.
 *
 *   cp noclobber_core.h my-runtime/
 *   cc vendor-core.c -o vendor-core     (nothing to link)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The definitions here, every symbol private to this file. */
#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF static
#include <noclobber_core.h>

#define SLOT (64UL << 20)

int main(void)
{
	uintptr_t want = sizeof(void *) == 8 ? (uintptr_t)1 << 40 : 0x40000000;
	long got = -ENOMEM;
	int i;

	for (i = 0; i < 64; i++, want += SLOT) {
		got = ncb_core_mmap((void *)want, SLOT, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS |
				    MAP_NORESERVE, -1, 0);
		if (!NCB_CORE_FAILED(got))
			break;
		/* Taken: the next slot.  Anything else: give up. */
		if (got != -EEXIST)
			break;
		printf("slot %#jx is taken, next\n", (uintmax_t)want);
	}
	if (NCB_CORE_FAILED(got)) {
		fprintf(stderr, "vendor-core: no arena: %s\n",
			strerror((int)-got));
		return 1;
	}
	memset((void *)got, 0xa5, 4096);
	printf("arena at %#lx (the kernel %s MAP_FIXED_NOREPLACE here)\n",
	       (unsigned long)got,
	       ncb_core_probe() == NCB_NOREPLACE_HONOURED ? "honours"
							  : "does not honour");
	return 0;
}

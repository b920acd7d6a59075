/* SPDX-License-Identifier: MIT */
/*
 * A caller with two mappings far apart and far from everything else, then
 * ncb_exec of its arguments.  Under qemu-user the guest's maps show the
 * emulator's own memory nowhere: the program's handover must unmap each
 * of the caller's mappings alone, never a range that spans the hole
 * between them, where qemu itself lives.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "noclobber.h"

extern char **environ;

int main(int argc, char **argv)
{
#if UINTPTR_MAX > 0xffffffff
	uintptr_t far[2] = { (uintptr_t)5 << 44, (uintptr_t)6 << 44 };
#else
	uintptr_t far[2] = { (uintptr_t)5 << 28, (uintptr_t)6 << 28 };
#endif
	char why[256];
	void *p;
	int i, err;

	if (argc < 2)
		return 2;
	for (i = 0; i < 2; i++) {
		p = ncb_mmap((void *)far[i], 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS |
			     MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "far: %#lx: %s\n",
				(unsigned long)far[i], strerror(errno));
			return 90;
		}
		memset(p, 1, 4096);
	}
	err = ncb_exec(argv[1], argv + 1, environ, NULL, why, sizeof(why));
	fprintf(stderr, "far: %s (%d)\n", why, err);
	return 91;
}

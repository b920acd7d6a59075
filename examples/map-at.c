/* SPDX-License-Identifier: MIT */
/*
 * map-at: map a page at an exact address without replacing anything; if
 * something is in the way, say what.  Build against the installed library:
 *
 *   cc map-at.c $(pkg-config --cflags --libs noclobber) -o map-at
 *   ./map-at 0x200000000
 */
#include <errno.h>
#include <inttypes.h>
#include <noclobber.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int show(const struct ncb_mapping *m, void *arg)
{
	(void)arg;
	printf("  %" PRIx64 "-%" PRIx64 " %s\n", m->start, m->end,
	       *m->path ? m->path : "(anonymous)");
	return 0;
}

int main(int argc, char **argv)
{
	void *want, *p;

	if (argc != 2) {
		fprintf(stderr, "usage: map-at ADDRESS\n");
		return 2;
	}
	want = (void *)(uintptr_t)strtoull(argv[1], NULL, 0);
	p = ncb_mmap(want, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		printf("%p: %s\n", want, strerror(err));
		if (err == EEXIST)
			ncb_maps_occupants(0, want, 4096, show, NULL);
		return 1;
	}
	printf("%p: mapped\n", p);
	return 0;
}

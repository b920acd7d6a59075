/* SPDX-License-Identifier: MIT */
/*
 * gc-arena: a collector's heap of 2 MiB-aligned arenas, so that an object's
 * arena header is found by masking its address.  Arenas are reserved
 * aligned (over-reserve and trim, race-free), committed when used, and
 * decommitted when the collector frees them: the address range stays the
 * heap's, the memory goes back to the system.
 *
 *   cc gc-arena.c $(pkg-config --cflags --libs noclobber) -o gc-arena
 */
#include <noclobber.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ARENA (2UL << 20)
#define ARENAS 8

struct header {
	unsigned id;
	unsigned live;
};

static struct header *arena_of(void *obj)
{
	return (struct header *)((uintptr_t)obj & ~(uintptr_t)(ARENA - 1));
}

int main(void)
{
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .align = ARENA);
	struct ncb_resv *heap;
	char *base, *obj;
	unsigned i;
	int err;

	err = ncb_resv_new(&heap, NULL, ARENAS * ARENA, &o);
	if (err) {
		fprintf(stderr, "gc-arena: reserve: %s\n", strerror(-err));
		return 1;
	}
	base = ncb_resv_addr(heap);
	printf("heap of %d arenas at %p (2 MiB aligned)\n", ARENAS,
	       (void *)base);
	for (i = 0; i < ARENAS; i++) {
		err = ncb_resv_commit(heap, base + i * ARENA, ARENA,
				      PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (err) {
			fprintf(stderr, "gc-arena: commit: %s\n",
				strerror(-err));
			return 1;
		}
		((struct header *)(base + i * ARENA))->id = i;
	}
	obj = base + 5 * ARENA + 12345;
	printf("object %p lives in arena %u\n", (void *)obj,
	       arena_of(obj)->id);
	/* A collection empties arenas 2..7: give their memory back. */
	err = ncb_resv_decommit(heap, base + 2 * ARENA, 6 * ARENA);
	printf("decommitted 6 arenas: %s\n", err ? strerror(-err) : "ok");
	/* And reuse one: it comes back zeroed. */
	err = ncb_resv_commit(heap, base + 2 * ARENA, ARENA,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("arena 2 recommitted, id now %u\n",
	       ((struct header *)(base + 2 * ARENA))->id);
	ncb_resv_release(heap);
	return err || ((uintptr_t)base & (ARENA - 1)) ? 1 : 0;
}

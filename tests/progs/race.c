/* SPDX-License-Identifier: MIT */
/*
 * A fixed placement racing the heap: in each round one thread places a
 * page at the program break while a second grows the heap over the same
 * page and writes its mark there, started as the first makes its call.
 * Whichever comes first, the other must fail: the heap cannot grow over a
 * mapping, and under watch --deny a placement over the heap is refused.
 * The heap's page replaced is a clobber that got through.
 *
 *   mremap    the page moved there with mremap(MREMAP_FIXED)
 *   shmat     a segment attached there with SHM_REMAP
 *   own       a page of its own, made there first, mapped over again
 *             with MAP_FIXED, while the second thread unmaps it and
 *             grows the heap into the hole
 *   stale     a region of its own unmapped, then a page mapped over
 *             where it was (a stale pointer) with MAP_FIXED, as soon as
 *             the second thread's malloc has mapped a block there: the
 *             C library's, which the watcher must not take for the
 *             region whose record it has (a round counts only if the
 *             block is where the region was)
 *
 * "race CASE ROUNDS" prints "CASE: N lost in ROUNDS" (the heap's mark
 * gone after a round where both calls succeeded) and exits 0 if none was
 * lost, 1 else, 2 if the rounds could not be run.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/uio.h>
#include <unistd.h>

#define MARK 0x5a
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static size_t pg;
static const char *name;
static atomic_int armed, done;
static char *dest, *block;
static int grew;

/* A block the C library's malloc maps with a plain mmap, a page more. */
#define BLOCK (1 << 20)

/* The second thread: at each round's start, the heap grown over dest. */
static void *grower(void *arg)
{
	volatile int spin;
	int round = 0;

	(void)arg;
	/* Its malloc's arena made now, not over a round's region. */
	free(malloc(1));
	atomic_store(&done, -1);
	for (;;) {
		while (atomic_load(&armed) == round)
			;
		round = atomic_load(&armed);
		if (round < 0)
			return NULL;
		/*
		 * Later each round, up to 2^15 turns of a loop: some round
		 * meets the watcher's judgement, however long it takes here.
		 */
		for (spin = 0; spin < 1 << (round % 16); spin++)
			;
		if (!strcmp(name, "stale")) {
			block = malloc(BLOCK);
			atomic_store(&done, round);
			continue;
		}
		if (!strcmp(name, "own"))
			munmap(dest, pg);
		grew = sbrk((intptr_t)pg) == dest;
		if (grew)
			dest[0] = MARK;
		atomic_store(&done, round);
	}
}

/* The first thread's call, at dest. */
static int place(int id)
{
	void *p;

	if (!strcmp(name, "mremap")) {
		char *src = mmap(NULL, pg, PROT_READ | PROT_WRITE, ANON, -1,
				 0);

		if (src == MAP_FAILED)
			return -1;
		p = mremap(src, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
		if (p == MAP_FAILED)
			munmap(src, pg);
	} else if (!strcmp(name, "shmat")) {
		p = shmat(id, dest, SHM_REMAP);
		p = p == (void *)-1 ? MAP_FAILED : p;
	} else {
		p = mmap(dest, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED,
			 -1, 0);
	}
	return p == dest;
}

/*
 * Whether a page can be read (by the kernel, which says EFAULT rather
 * than raising SIGSEGV): mapped, and not reservation pages (the PROT_NONE
 * span the C library reserves for a thread's heap).
 */
static int readable(const char *at)
{
	char c;
	struct iovec local = { &c, 1 }, remote = { (void *)at, 1 };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

/*
 * A round of stale: the block's page replaced is lost.  The call is made
 * once the block is mapped there, or (mapped elsewhere) not at all.
 */
static int stale_once(int r)
{
	int placed = 0, lost;

	dest = mmap(NULL, BLOCK + pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	if (dest == MAP_FAILED || munmap(dest, BLOCK + pg))
		return -1;
	atomic_store(&armed, r);
	while (atomic_load(&done) != r && !readable(dest))
		;
	if (readable(dest))
		placed = place(-1);
	while (atomic_load(&done) != r)
		;
	if (!block)
		return -1;
	lost = placed && ((uintptr_t)block & ~(pg - 1)) == (uintptr_t)dest;
	/* A block whose header was replaced is unmapped, not freed. */
	if (lost)
		munmap(dest, BLOCK + pg);
	else
		free(block);
	if (placed && !lost)
		munmap(dest, pg);
	return lost;
}

/* One round: 1 if the heap's page was lost, 0 if not, -1 on failure. */
static int round_once(int r, int id)
{
	int placed, lost;

	if (!strcmp(name, "stale"))
		return stale_once(r);
	dest = sbrk(0);
	if (!strcmp(name, "own") &&
	    mmap(dest, pg, PROT_READ | PROT_WRITE,
		 ANON | MAP_FIXED_NOREPLACE, -1, 0) != dest)
		return -1;
	grew = 0;
	atomic_store(&armed, r);
	placed = place(id);
	while (atomic_load(&done) != r)
		;
	if (placed < 0)
		return -1;
	lost = placed && grew && dest[0] != MARK;
	/* Back as it was: the page placed, or the heap's, given back. */
	if (grew)
		sbrk(-(intptr_t)pg);
	if (placed && !strcmp(name, "shmat"))
		shmdt(dest);
	else if (placed || !strcmp(name, "own"))
		munmap(dest, pg);
	return lost;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 0, r, lost = 0, x, id = -1;
	pthread_t t;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	name = argc > 1 ? argv[1] : "";
	if (rounds <= 0 || (strcmp(name, "mremap") && strcmp(name, "shmat") &&
			    strcmp(name, "own") && strcmp(name, "stale"))) {
		fprintf(stderr, "usage: race mremap|shmat|own|stale ROUNDS\n");
		return 2;
	}
	/* Every block mapped on its own: no threshold raised by a free. */
	mallopt(M_MMAP_THRESHOLD, BLOCK / 2);
	if (!strcmp(name, "shmat"))
		id = shmget(IPC_PRIVATE, pg, IPC_CREAT | 0600);
	/* The output's buffer now: no malloc moves the break later. */
	printf("%s: ", name);
	if (id == -1 && !strcmp(name, "shmat"))
		return 2;
	if (pthread_create(&t, NULL, grower, NULL))
		return 2;
	while (atomic_load(&done) != -1)
		;
	for (r = 1; r <= rounds; r++) {
		x = round_once(r, id);
		if (x < 0)
			break;
		lost += x;
	}
	atomic_store(&armed, -1);
	pthread_join(t, NULL);
	if (id != -1)
		shmctl(id, IPC_RMID, NULL);
	if (r <= rounds) {
		printf("round %d could not be set up\n", r);
		return 2;
	}
	printf("%d lost in %d\n", lost, rounds);
	return lost ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * An unmodified program that relies on MAP_FIXED_NOREPLACE, as QEMU 8.1
 * and later do: each placement must land exactly where asked or fail
 * with EEXIST, and never replace anything.  One line a check, "ok" or
 * what went wrong; exit 0 if every check held, 1 if not.
 *
 *   occupied  over a page of its own: EEXIST, the page's bytes intact
 *   inside    a range whose last page only is taken (Linux 4.17 and 4.18
 *             replaced a mapping starting inside the range)
 *   free      a free range: placed exactly there
 *   race      threads racing for one free range, round after round:
 *             exactly one placed each round, no winner's bytes lost
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define THREADS 4
#define ROUNDS 200

static size_t pg;
static int bad;

static void say(const char *check, const char *what)
{
	printf("%s: %s\n", check, what);
	bad |= strcmp(what, "ok") != 0;
}

static const char *placed(void *p, void *want)
{
	if (p == want)
		return "placed";
	if (p == MAP_FAILED)
		return errno == EEXIST ? "EEXIST" : strerrorname_np(errno);
	return "placed elsewhere";
}

/* A fixed placement over [at, at + len) that must fail, bytes kept. */
static void refused(const char *check, char *at, size_t len, char *page)
{
	void *p;

	*page = 42;
	p = mmap(at, len, PROT_READ, ANON | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != MAP_FAILED && p != at)
		munmap(p, len);
	if (p != MAP_FAILED || errno != EEXIST)
		say(check, placed(p, at));
	else
		say(check, *page == 42 ? "ok" : "EEXIST, but the page lost");
}

static char *room;
static int winners, lost;
static pthread_barrier_t go;

static void *racer(void *arg)
{
	int i, me = (int)(intptr_t)arg;
	char *p;

	for (i = 0; i < ROUNDS; i++) {
		/* The last round's winner's, or at first main's own page. */
		if (me == 0)
			munmap(room, pg);
		pthread_barrier_wait(&go);
		p = mmap(room, pg, PROT_READ | PROT_WRITE,
			 ANON | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == room) {
			*p = (char)me;
			__atomic_add_fetch(&winners, 1, __ATOMIC_RELAXED);
		} else if (p != MAP_FAILED) {
			munmap(p, pg);
		}
		pthread_barrier_wait(&go);
		/* The winner's byte, still there once all have tried. */
		if (p == room && *p != (char)me)
			__atomic_add_fetch(&lost, 1, __ATOMIC_RELAXED);
		pthread_barrier_wait(&go);
	}
	return NULL;
}

static void race(void)
{
	pthread_t t[THREADS];
	char what[64];
	int i;

	pthread_barrier_init(&go, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, racer, (void *)(intptr_t)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (winners == ROUNDS && !lost)
		snprintf(what, sizeof(what), "ok");
	else
		snprintf(what, sizeof(what), "%d winners in %d rounds, %d "
			 "lost", winners, ROUNDS, lost);
	say("race", what);
}

int main(void)
{
	char *a, *p;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	if (a == MAP_FAILED)
		return 2;
	/* [a, a + pg) and [a + 2pg, a + 4pg) taken; a + pg free. */
	munmap(a + pg, pg);
	refused("occupied", a, pg, a);
	refused("inside", a + pg, 2 * pg, a + 2 * pg);
	p = mmap(a + pg, pg, PROT_READ, ANON | MAP_FIXED_NOREPLACE, -1, 0);
	say("free", p == a + pg ? "ok" : placed(p, a + pg));
	munmap(a, 4 * pg);
	/*
	 * The race's page is its own until its threads are there: their
	 * stacks could otherwise land on it (qemu-user's 32-bit guests
	 * take the lowest free addresses).
	 */
	room = mmap(NULL, pg, PROT_READ, ANON, -1, 0);
	if (room == MAP_FAILED)
		return 2;
	race();
	return bad;
}

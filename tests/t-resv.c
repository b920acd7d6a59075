/* SPDX-License-Identifier: MIT */
/* Reservations: reserve, commit, decommit, release, and their errors. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "ncbtest.h"

#define PG test_page()

static struct ncb_resv *reserve(void *addr, size_t len,
				const struct ncb_resv_opts *o)
{
	struct ncb_resv *r = NULL;
	int err = ncb_resv_new(&r, addr, len, o);

	if (err)
		FAIL("ncb_resv_new(%p, %zu): %s", addr, len, errname(-err));
	return r;
}

static struct ncb_mapping mapping_at(const void *addr)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	ASSERT_EQ(ncb_maps_seek(maps, (uintptr_t)addr), 0);
	ASSERT_EQ(ncb_maps_next(maps, &m), 1);
	ncb_maps_close(maps);
	m.path = NULL;
	return m;
}

TEST(exact)
{
	char *w = free_window(32 * PG);
	struct ncb_resv *r = reserve(w, 16 * PG, NULL), *r2;
	struct ncb_mapping m = NCB_INIT(ncb_mapping);

	ASSERT_PTR_EQ(ncb_resv_addr(r), w);
	ASSERT_EQ(ncb_resv_len(r), 16 * PG);
	if (maps_show_prot_none()) {
		m = mapping_at(w);
		ASSERT_EQ(m.start, (uintptr_t)w);
		ASSERT_EQ(m.end, (uintptr_t)w + 16 * PG);
		ASSERT_EQ(m.prot, PROT_NONE);
	}
	/* Over it, or overlapping it: refused. */
	ASSERT_EQ(ncb_resv_new(&r2, w + 8 * PG, 16 * PG, NULL), -EEXIST);
	ASSERT_EQ(ncb_resv_new(&r2, w + 1, PG, NULL), -EINVAL);
	/* A length that is not a page multiple is rounded up. */
	r2 = reserve(w + 16 * PG, PG + 1, NULL);
	ASSERT_EQ(ncb_resv_len(r2), 2 * PG);
	ASSERT_EQ(ncb_resv_release(r), 0);
	ASSERT_EQ(ncb_resv_release(r2), 0);
	ASSERT_EQ(occupants(w, 32 * PG), 0);
}

TEST(anywhere)
{
	struct ncb_resv *r = reserve(NULL, 1UL << 30, NULL);
	char *a = ncb_resv_addr(r);

	require_prot_none_in_maps();
	ASSERT_EQ(mapping_at(a).prot, PROT_NONE);
	ASSERT_EQ(occupants(a, 1UL << 30), 1);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

/* Over-reserve and trim: aligned, and nothing left around it. */
static void aligned(size_t align)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .align = align };
	struct ncb_resv *r = reserve(NULL, 3 * PG, &o);
	char *a = ncb_resv_addr(r);

	ASSERT_EQ((uintptr_t)a % align, 0);
	if (maps_show_prot_none()) {
		ASSERT_EQ(occupants(a, 3 * PG), 1);
		ASSERT_EQ(mapping_at(a).end, (uintptr_t)a + 3 * PG);
	}
	ASSERT_EQ(ncb_resv_release(r), 0);
	ASSERT_EQ(ncb_range_free(a, 3 * PG), 1);
}
TEST(aligned_2m) { aligned(2UL << 20); }
TEST(aligned_1g) { aligned(1UL << 30); }

static void in_window(int place)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .place = place };
	char *w = free_window(64 * PG);
	struct ncb_resv *r;
	char *a;

	map_sentinel(w + 10 * PG, PG, 0x11);
	o.lo = (uintptr_t)w;
	o.hi = (uintptr_t)w + 64 * PG;
	r = reserve(NULL, 8 * PG, &o);
	a = ncb_resv_addr(r);
	ASSERT_UGE((uintptr_t)a, (uintptr_t)w);
	ASSERT_ULE((uintptr_t)a + 8 * PG, (uintptr_t)w + 64 * PG);
	ASSERT_TRUE(a + 8 * PG <= w + 10 * PG || a >= w + 11 * PG);
	if (place == NCB_PLACE_LOWEST)
		ASSERT_PTR_EQ(a, w);
	if (place == NCB_PLACE_HIGHEST)
		ASSERT_PTR_EQ(a, w + 56 * PG);
	check_sentinel(w + 10 * PG, PG, 0x11);
	ASSERT_EQ(ncb_resv_release(r), 0);
	/* No room: ENOMEM. */
	o.hi = (uintptr_t)w + 12 * PG;
	ASSERT_EQ(ncb_resv_new(&r, NULL, 11 * PG, &o), -ENOMEM);
}
TEST(window_lowest) { in_window(NCB_PLACE_LOWEST); }
TEST(window_highest) { in_window(NCB_PLACE_HIGHEST); }
TEST(window_random) { in_window(NCB_PLACE_RANDOM); }
TEST(window_any) { in_window(NCB_PLACE_ANY); }

/* A second reservation in the window goes beside the first. */
static void two_in_window(int place)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .place = place };
	char *w = free_window(32 * PG), *a, *b;
	struct ncb_resv *r1, *r2;

	o.lo = (uintptr_t)w;
	o.hi = (uintptr_t)w + 32 * PG;
	r1 = reserve(NULL, 8 * PG, &o);
	r2 = reserve(NULL, 8 * PG, &o);
	a = ncb_resv_addr(r1);
	b = ncb_resv_addr(r2);
	ASSERT_TRUE(b + 8 * PG <= a || b >= a + 8 * PG);
	ASSERT_PTR_EQ(b, place == NCB_PLACE_LOWEST ? w + 8 * PG
						   : w + 16 * PG);
	ASSERT_EQ(ncb_resv_release(r1), 0);
	ASSERT_EQ(ncb_resv_release(r2), 0);
}
TEST(two_in_window_lowest) { two_in_window(NCB_PLACE_LOWEST); }
TEST(two_in_window_highest) { two_in_window(NCB_PLACE_HIGHEST); }

/* Where the kernel puts len bytes now: the start of its range. */
static uintptr_t kernel_choice(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	munmap(p, len);
	return (uintptr_t)p;
}

/*
 * A reservation in a window goes where ncb_find_free says, whether the
 * first answer tried (the kernel's choice, the window's top) fits or the
 * maps are walked; aligned or not.  ANY follows the kernel's choice, which
 * an emulator may move from one call to the next: then only a fit is sure.
 */
static void where_find_free_says(int place)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .place = place };
	char *w = free_window(64 * PG), *a;
	struct ncb_resv *r;
	uint64_t want;
	uintptr_t k;
	int i;

	map_sentinel(w + 10 * PG, PG, 0x11);
	o.lo = (uintptr_t)w;
	o.hi = (uintptr_t)w + 64 * PG;
	for (i = 0; i < 4; i++) {
		/* Then with the top taken, then aligned, then both. */
		if (i == 1)
			map_sentinel(w + 60 * PG, 4 * PG, 0x22);
		o.align = i >= 2 ? 4 * PG : 0;
		k = kernel_choice(8 * PG);
		ASSERT_EQ(ncb_find_free(o.lo, o.hi, 8 * PG, o.align, place,
					&want), 0);
		r = reserve(NULL, 8 * PG, &o);
		a = ncb_resv_addr(r);
		if (place != NCB_PLACE_ANY || kernel_choice(8 * PG) == k)
			ASSERT_UEQ((uintptr_t)a, want);
		ASSERT_UGE((uintptr_t)a, o.lo);
		ASSERT_ULE((uintptr_t)a + 8 * PG, o.hi);
		ASSERT_EQ((uintptr_t)a % (o.align ? o.align : PG), 0);
		ASSERT_EQ(ncb_resv_release(r), 0);
	}
	check_sentinel(w + 10 * PG, PG, 0x11);
	check_sentinel(w + 60 * PG, 4 * PG, 0x22);
}
TEST(where_find_free_says_any) { where_find_free_says(NCB_PLACE_ANY); }
TEST(where_find_free_says_lowest)
{
	where_find_free_says(NCB_PLACE_LOWEST);
}
TEST(where_find_free_says_highest)
{
	where_find_free_says(NCB_PLACE_HIGHEST);
}

TEST(window_and_alignment)
{
	struct ncb_resv_opts o = { .size = sizeof(o), .align = 16 * PG,
				      .place = NCB_PLACE_RANDOM };
	char *w = free_window(256 * PG);
	struct ncb_resv *r;
	int i;

	o.lo = (uintptr_t)w;
	o.hi = (uintptr_t)w + 256 * PG;
	for (i = 0; i < 20; i++) {
		r = reserve(NULL, 16 * PG, &o);
		ASSERT_EQ((uintptr_t)ncb_resv_addr(r) % (16 * PG), 0);
		ASSERT_UGE((uintptr_t)ncb_resv_addr(r), o.lo);
		ASSERT_ULE((uintptr_t)ncb_resv_addr(r) + 16 * PG, o.hi);
		ASSERT_EQ(ncb_resv_release(r), 0);
	}
	/* An exact address must honour the alignment and the window. */
	ASSERT_EQ(ncb_resv_new(&r, (char *)(uintptr_t)(o.lo + 16 * PG - 1 -
			       (o.lo + 16 * PG - 1) % (16 * PG) + PG), PG, &o),
		  -EINVAL);
	ASSERT_EQ(ncb_resv_new(&r, w + 256 * PG, 16 * PG, &o), -EINVAL);
}

TEST(bad_options)
{
	struct ncb_resv_opts o = { .size = sizeof(o) };
	struct ncb_resv *r;

	ASSERT_EQ(ncb_resv_new(NULL, NULL, PG, NULL), -EINVAL);
	ASSERT_EQ(ncb_resv_new(&r, NULL, 0, NULL), -EINVAL);
	ASSERT_EQ(ncb_resv_new(&r, NULL, SIZE_MAX, NULL), -ENOMEM);
	o.align = 3 * PG;
	ASSERT_EQ(ncb_resv_new(&r, NULL, PG, &o), -EINVAL);
	o.align = PG / 2;
	ASSERT_EQ(ncb_resv_new(&r, NULL, PG, &o), -EINVAL);
	o.align = 0;
	o.place = 9;
	ASSERT_EQ(ncb_resv_new(&r, NULL, PG, &o), -EINVAL);
	o.place = 0;
	o.lo = 2 * PG;
	o.hi = PG;
	ASSERT_EQ(ncb_resv_new(&r, NULL, PG, &o), -EINVAL);
	o.size = 4;
	ASSERT_EQ(ncb_resv_new(&r, NULL, PG, &o), -EINVAL);
	ASSERT_EQ(ncb_resv_release(NULL), -EINVAL);
	ASSERT_PTR_EQ(ncb_resv_addr(NULL), NULL);
	ASSERT_EQ(ncb_resv_len(NULL), 0);
}

TEST(commit_and_decommit)
{
	struct ncb_resv *r = reserve(NULL, 16 * PG, NULL);
	char *a = ncb_resv_addr(r);

	ASSERT_EQ(ncb_resv_commit(r, a + 4 * PG, 4 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	memset(a + 4 * PG, 0x5a, 4 * PG);
	ASSERT_EQ(mapping_at(a + 4 * PG).prot, PROT_READ | PROT_WRITE);
	/* Overlapping commits fail and leave the data alone. */
	ASSERT_EQ(ncb_resv_commit(r, a + 7 * PG, 2 * PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), -EEXIST);
	ASSERT_EQ(ncb_resv_commit(r, a, 16 * PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0), -EEXIST);
	check_sentinel(a + 4 * PG, 4 * PG, 0x5a);
	/* Adjacent commits are fine. */
	ASSERT_EQ(ncb_resv_commit(r, a + 8 * PG, PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	ASSERT_EQ(ncb_resv_commit(r, a + 3 * PG, PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	/* Decommit the middle: contents gone, pages back to reserved. */
	ASSERT_EQ(ncb_resv_decommit(r, a + 5 * PG, 2 * PG), 0);
	if (maps_show_prot_none())
		ASSERT_EQ(mapping_at(a + 5 * PG).prot, PROT_NONE);
	check_sentinel(a + 4 * PG, PG, 0x5a);
	check_sentinel(a + 7 * PG, PG, 0x5a);
	ASSERT_EQ(ncb_resv_commit(r, a + 5 * PG, 2 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	check_sentinel(a + 5 * PG, 2 * PG, 0);
	/* Decommit across several commits and reserved pages. */
	ASSERT_EQ(ncb_resv_decommit(r, a, 16 * PG), 0);
	if (maps_show_prot_none())
		ASSERT_EQ(occupants(a, 16 * PG), 1);
	ASSERT_EQ(ncb_resv_commit(r, a, 16 * PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	ASSERT_EQ(ncb_resv_release(r), 0);
	ASSERT_EQ(ncb_range_free(a, 16 * PG), 1);
}

TEST(commit_errors)
{
	struct ncb_resv *r = reserve(NULL, 8 * PG, NULL);
	char *a = ncb_resv_addr(r);
	int anon = MAP_PRIVATE | MAP_ANONYMOUS, rd = PROT_READ;

	ASSERT_EQ(ncb_resv_commit(NULL, a, PG, rd, anon, -1, 0), -EINVAL);
	ASSERT_EQ(ncb_resv_commit(r, a + 1, PG, rd, anon, -1, 0), -EINVAL);
	ASSERT_EQ(ncb_resv_commit(r, a, 0, rd, anon, -1, 0), -EINVAL);
	ASSERT_EQ(ncb_resv_commit(r, a - PG, 2 * PG, rd, anon, -1, 0),
		  -ERANGE);
	ASSERT_EQ(ncb_resv_commit(r, a + 7 * PG, 2 * PG, rd, anon, -1, 0),
		  -ERANGE);
	ASSERT_EQ(ncb_resv_commit(r, a + 7 * PG, PG + 1, rd, anon, -1, 0),
		  -ERANGE);
	ASSERT_EQ(ncb_resv_commit(r, a, SIZE_MAX, rd, anon, -1, 0), -ERANGE);
	/* The kernel's refusal leaves the pages reserved and committable. */
	ASSERT_EQ(ncb_resv_commit(r, a, PG, rd, MAP_PRIVATE, -1, 0), -EBADF);
	if (maps_show_prot_none())
		ASSERT_EQ(mapping_at(a).prot, PROT_NONE);
	ASSERT_EQ(ncb_resv_commit(r, a, PG, PROT_READ, anon, -1, 0), 0);
	ASSERT_EQ(ncb_resv_decommit(NULL, a, PG), -EINVAL);
	ASSERT_EQ(ncb_resv_decommit(r, a + 1, PG), -EINVAL);
	ASSERT_EQ(ncb_resv_decommit(r, a, 0), -EINVAL);
	ASSERT_EQ(ncb_resv_decommit(r, a + 8 * PG, PG), -ERANGE);
	ASSERT_EQ(ncb_resv_decommit(r, a + 7 * PG, PG + 1), -ERANGE);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

TEST(commit_file)
{
	char path[] = "/tmp/ncb-resv-XXXXXX";
	int fd = mkstemp(path);
	struct ncb_resv *r = reserve(NULL, 8 * PG, NULL);
	char *a = ncb_resv_addr(r), *buf = malloc(2 * PG);

	ASSERT_GE(fd, 0);
	unlink(path);
	memset(buf, 0x42, 2 * PG);
	ASSERT_EQ(write(fd, buf, 2 * PG), (ssize_t)(2 * PG));
	ASSERT_EQ(ncb_resv_commit(r, a + 2 * PG, PG, PROT_READ, MAP_SHARED, fd,
				  (off_t)PG), 0);
	check_sentinel(a + 2 * PG, PG, 0x42);
	ASSERT_EQ(mapping_at(a + 2 * PG).shared, 1);
	ASSERT_EQ(ncb_resv_decommit(r, a + 2 * PG, PG), 0);
	if (maps_show_prot_none())
		ASSERT_EQ(mapping_at(a + 2 * PG).shared, 0);
	ASSERT_EQ(ncb_resv_release(r), 0);
	close(fd);
	free(buf);
}

#define THREADS 8
#define ROUNDS 200

static struct ncb_resv_opts shared_window;
static atomic_int lost;
static pthread_barrier_t go;

static void *reserver(void *arg)
{
	unsigned char v = (unsigned char)(uintptr_t)arg;
	struct ncb_resv *r;
	char *a;
	int i, err, rounds = test_slow() ? ROUNDS / 10 : ROUNDS;

	/* This thread's malloc arena now, not inside the window later. */
	bind_malloc_arena();
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&go);
	for (i = 0; i < rounds; i++) {
		err = ncb_resv_new(&r, NULL, 4 * PG, &shared_window);
		if (err == -ENOMEM || err == -EAGAIN)
			continue;
		if (err) {
			atomic_fetch_add(&lost, 1000);
			break;
		}
		a = ncb_resv_addr(r);
		if (ncb_resv_commit(r, a, 4 * PG, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {
			atomic_fetch_add(&lost, 1000);
			break;
		}
		memset(a, v, 4 * PG);
		sched_yield();
		for (size_t j = 0; j < 4 * PG; j++)
			if ((unsigned char)a[j] != v) {
				atomic_fetch_add(&lost, 1);
				break;
			}
		ncb_resv_release(r);
	}
	return NULL;
}

static int show(const struct ncb_mapping *m, void *arg)
{
	(void)arg;
	printf("# left in the window: %jx-%jx prot %d %s\n",
	       (uintmax_t)m->start, (uintmax_t)m->end, m->prot, m->path);
	return 0;
}

/* Threads reserving in one window at once: nobody loses a byte. */
static void concurrent(int place)
{
	pthread_t t[THREADS];
	char *w;
	int i;

	pthread_barrier_init(&go, NULL, THREADS + 1);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, reserver,
					 (void *)(uintptr_t)(i + 1)), 0);
	/* Once every thread has its malloc arena. */
	pthread_barrier_wait(&go);
	w = free_window(64 * PG);
	shared_window.size = sizeof(shared_window);
	shared_window.lo = (uintptr_t)w;
	shared_window.hi = (uintptr_t)w + 64 * PG;
	shared_window.place = place;
	pthread_barrier_wait(&go);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(atomic_load(&lost), 0);
	ncb_maps_occupants(0, w, 64 * PG, show, NULL);
	pthread_barrier_destroy(&go);
	ASSERT_EQ(occupants(w, 64 * PG), 0);
}
TEST(concurrent_lowest) { concurrent(NCB_PLACE_LOWEST); }
TEST(concurrent_random) { concurrent(NCB_PLACE_RANDOM); }
TEST(concurrent_highest) { concurrent(NCB_PLACE_HIGHEST); }
TEST(concurrent_any) { concurrent(NCB_PLACE_ANY); }

/* After fork the child owns a copy; reserving there works too. */
TEST(after_fork)
{
	struct ncb_resv *r = reserve(NULL, 8 * PG, NULL), *c;
	char *a = ncb_resv_addr(r);
	pid_t pid;
	int st;

	ASSERT_EQ(ncb_resv_commit(r, a, PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	a[0] = 1;
	pid = fork();
	if (pid == 0) {
		if (ncb_resv_commit(r, a + PG, PG, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ||
		    a[0] != 1)
			_exit(1);
		a[PG] = 2;
		if (ncb_resv_new(&c, NULL, 4 * PG, NULL) ||
		    ncb_resv_commit(c, ncb_resv_addr(c), PG, PROT_READ,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
			_exit(2);
		_exit(ncb_resv_release(c) || ncb_resv_release(r) ? 3 : 0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	ASSERT_EQ(mapping_at(a + PG).prot, PROT_NONE);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

struct churn {
	struct ncb_resv *r;
	atomic_int stop;
};

/*
 * Commits and decommits with no pause but a yield: the lock is held most
 * of the time.  The yield is for schedulers that are not fair (valgrind
 * runs one thread at a time and may hand the lock straight back), where
 * a fork would otherwise wait for minutes.
 */
static void *churner(void *arg)
{
	struct churn *c = arg;
	char *a = ncb_resv_addr(c->r);

	while (!c->stop) {
		if (ncb_resv_commit(c->r, a, PG, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ||
		    ncb_resv_decommit(c->r, a, PG))
			break;
		sched_yield();
	}
	return NULL;
}

/*
 * A child forked while another thread is inside a call on a reservation
 * uses it at once: the lock was taken for the fork and given back on both
 * sides, so no child ever waits on the other thread's lock (it would
 * wait for ever: the alarm ends it and the test fails).
 */
TEST(fork_while_busy)
{
	struct churn c = { reserve(NULL, 8 * PG, NULL), 0 };
	int i, n = test_slow() ? 20 : 200, st;
	char *a = ncb_resv_addr(c.r);
	pthread_t t;
	pid_t pid;

	ASSERT_EQ(pthread_create(&t, NULL, churner, &c), 0);
	for (i = 0; i < n; i++) {
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			alarm(30);
			_exit(ncb_resv_commit(c.r, a + PG, PG, PROT_READ,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1,
					      0) ||
			      ncb_resv_decommit(c.r, a, 8 * PG) ||
			      ncb_resv_release(c.r) ? 1 : 0);
		}
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			FAIL("child %d of %d: status %#x", i + 1, n, st);
	}
	c.stop = 1;
	ASSERT_EQ(pthread_join(t, NULL), 0);
	ASSERT_EQ(ncb_resv_release(c.r), 0);
}

/*
 * A library built on reservations, linked into this program as the
 * library is (statically): a lock of its own, held across calls into a
 * reservation and taken by fork handlers it registers as it is loaded;
 * its prepare handler calls into reservations too, when asked.
 */
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncb_resv *app_resv;

static void app_prepare(void)
{
	struct ncb_resv *t;

	pthread_mutex_lock(&app_lock);
	if (!app_resv)
		return;
	(void)ncb_resv_decommit(app_resv, ncb_resv_addr(app_resv), PG);
	if (!ncb_resv_new(&t, NULL, PG, NULL))
		(void)ncb_resv_release(t);
}

static void app_done(void)
{
	pthread_mutex_unlock(&app_lock);
}

__attribute__((constructor)) static void app_init(void)
{
	pthread_atfork(app_prepare, app_done, app_done);
}

static void *app_user(void *arg)
{
	struct churn *c = arg;
	char *a = ncb_resv_addr(c->r);

	while (!c->stop) {
		pthread_mutex_lock(&app_lock);
		(void)ncb_resv_commit(c->r, a, PG, PROT_READ,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		(void)ncb_resv_decommit(c->r, a, PG);
		pthread_mutex_unlock(&app_lock);
		sched_yield();	/* as churner()'s */
	}
	return NULL;
}

/*
 * Forks beside such a library: its handlers run before the library's
 * (registered after them), so neither waits on the other's lock, and
 * its prepare handler's calls find no lock of ours taken.  A hang ends
 * with the alarm, and fails the test.
 */
TEST(fork_under_a_library)
{
	int i, n = test_slow() ? 20 : 500, st;
	pid_t pid, p;

	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct churn c = { reserve(NULL, 4 * PG, NULL), 0 };
		pthread_t t;

		alarm(120);
		app_resv = reserve(NULL, 4 * PG, NULL);
		if (pthread_create(&t, NULL, app_user, &c))
			_exit(2);
		for (i = 0; i < n; i++) {
			p = fork();
			if (p == 0)
				_exit(0);
			if (p < 0 || waitpid(p, &st, 0) != p || st)
				_exit(3);
		}
		c.stop = 1;
		pthread_join(t, NULL);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("forking beside a library: status %#x", st);
}

/* Most of a 32-bit process's space in one piece; any size on 64-bit. */
TEST(most_of_the_space)
{
	/* 32-bit: qemu-user's guests keep the stack at 1 GiB. */
	size_t len = sizeof(void *) == 4 ? 5UL << 29 : 16UL << 30;
	struct ncb_resv_opts o = { .size = sizeof(o),
				      .place = NCB_PLACE_LOWEST };
	struct ncb_resv *r = reserve(NULL, len, &o);

	ASSERT_EQ(ncb_resv_len(r), len);
	if (maps_show_prot_none())
		ASSERT_EQ(occupants(ncb_resv_addr(r), len), 1);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

/*
 * Mappings split page by page until the kernel's map count is reached:
 * the region, which goes back to one mapping with restore_count().
 */
static char *fill_map_count(size_t *len)
{
	unsigned long max = ncb__read_ulong("/proc/sys/vm/max_map_count", 0);
	size_t i;
	char *p;

	if (!max || max > 300000)
		SKIP("vm.max_map_count is %lu: too many to fill", max);
	if (getenv("NCB_TEST_VALGRIND"))
		SKIP("valgrind keeps its own mappings and limits");
	if (test_qemu())
		SKIP("qemu-user's own memory counts against the same limit");
#ifdef HARNESS_ASAN
	SKIP("the sanitizer's allocator needs mappings of its own");
#endif
	*len = (max + 64) * PG;
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	for (i = 1; i < max + 64; i += 2)
		if (mprotect(p + i * PG, PG, PROT_NONE))
			break;
	if (i >= max + 64 || errno != ENOMEM)
		SKIP("the map count could not be filled (%s)",
		     strerror(errno));
	return p;
}

/*
 * The map count past its limit: single pages mapped until mmap itself
 * refuses (do_mmap: more than vm.max_map_count), so that every call that
 * needs a mapping or a split of one is refused.  Their number; unmapped
 * by untop_map_count.
 */
#define TOP_MAX 256

static size_t top_map_count(char *top[TOP_MAX])
{
	size_t n;

	for (n = 0; n < TOP_MAX; n++) {
		/* Alternating protections: no page merges with the last. */
		top[n] = mmap(NULL, PG, n & 1 ? PROT_READ : PROT_NONE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (top[n] == MAP_FAILED)
			break;
	}
	if (n == TOP_MAX || errno != ENOMEM)
		SKIP("the map count could not be topped up (%s)",
		     strerror(errno));
	return n;
}

static void untop_map_count(char *top[TOP_MAX], size_t n)
{
	while (n--)
		ASSERT_EQ(munmap(top[n], PG), 0);
}

/*
 * A commit that fails with the map count at its limit (the kernel must
 * split the placeholder) either leaves the pages reserved or gives them up;
 * it never leaves a hole that release would then unmap from under another.
 */
TEST(commit_at_map_limit)
{
	struct ncb_resv *r = reserve(NULL, 16 * PG, NULL);
	char *a = (char *)ncb_resv_addr(r) + 8 * PG, *fill, *other;
	size_t fill_len;
	int err;

	fill = fill_map_count(&fill_len);
	err = ncb_resv_commit(r, a, PG, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_EQ(mprotect(fill, fill_len, PROT_READ), 0);
	ASSERT_EQ(munmap(fill, fill_len), 0);
	if (!err) {
		printf("# the commit succeeded at the limit\n");
		ASSERT_EQ(ncb_resv_release(r), 0);
		return;
	}
	ASSERT_EQ(err, -ENOMEM);
	/* Another's mapping, no-clobber: it lands only in a hole. */
	other = ncb_mmap(a, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (other != MAP_FAILED)
		other[0] = 0x5a;
	/*
	 * Pages in doubt are given up: nothing is committed over them.
	 * Pages known to be ours (the kernel put the placeholder back, as
	 * since 6.12 for private anonymous memory) can be committed.
	 */
	err = ncb_resv_commit(r, a, PG, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (other != MAP_FAILED || err)
		ASSERT_EQ(err, -EEXIST);
	ASSERT_EQ(ncb_resv_release(r), 0);
	if (other != MAP_FAILED) {
		printf("# the kernel left a hole; the page was given up\n");
		ASSERT_EQ(other[0], 0x5a);
		ASSERT_EQ(munmap(other, PG), 0);
	} else if (!err) {
		printf("# the page stayed reserved, known to be ours\n");
		ASSERT_EQ(occupants(a, PG), 0);
	} else {
		/* Still ours, in doubt: kept mapped, never unmapped. */
		printf("# the page stayed reserved, and was given up\n");
		if (maps_show_prot_none())
			ASSERT_EQ(occupants(a, PG), 1);
		ASSERT_EQ(munmap(a, PG), 0);
	}
}

/*
 * A decommit refused at the map count's limit changes nothing: the pages
 * stay committed with their contents, and the books say so (a commit
 * over them is refused, not made over the data); once the limit is
 * away, the decommit goes through.  The same with every commit moved:
 * no room elsewhere, it is made over the pages, and refused there.
 */
TEST(decommit_at_map_limit)
{
	struct ncb_resv *r = reserve(NULL, 16 * PG, NULL);
	char *a = ncb_resv_addr(r), *fill, *top[TOP_MAX];
	size_t fill_len, ntop;
	int err, again;

	ASSERT_EQ(ncb_resv_commit(r, a + 4 * PG, 2 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	memset(a + 4 * PG, 0x5a, 2 * PG);
	fill = fill_map_count(&fill_len);
	ntop = top_map_count(top);
	err = ncb_resv_decommit(r, a + 4 * PG, PG);
	again = err ? ncb_resv_commit(r, a + 4 * PG, PG, PROT_READ |
				      PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				      -1, 0) : 0;
	untop_map_count(top, ntop);
	ASSERT_EQ(mprotect(fill, fill_len, PROT_READ), 0);
	ASSERT_EQ(munmap(fill, fill_len), 0);
	check_sentinel(a + 5 * PG, PG, 0x5a);
	if (!err) {
		printf("# the decommit succeeded at the limit\n");
		ASSERT_EQ(ncb_resv_release(r), 0);
		return;
	}
	/*
	 * Refused by the kernel before it cleared anything (mmap itself
	 * refuses past the limit), and seen to be: the page is still
	 * committed, and the books say so.
	 */
	ASSERT_EQ(err, -ENOMEM);
	check_sentinel(a + 4 * PG, PG, 0x5a);
	ASSERT_EQ(again, -EEXIST);
	ASSERT_EQ(ncb_resv_decommit(r, a + 4 * PG, PG), 0);
	ASSERT_EQ(ncb_resv_commit(r, a + 4 * PG, PG, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	check_sentinel(a + 4 * PG, PG, 0);
	check_sentinel(a + 5 * PG, PG, 0x5a);
	ASSERT_EQ(ncb_resv_release(r), 0);
	ASSERT_EQ(ncb_range_free(a, 16 * PG), 1);
}

/* One test case in a process of its own, every commit moved. */
static void moved(void (*fn)(void), const char *name)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		ncb__resv_move_always = 1;
		fn();
		fflush(stdout);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("%s, every commit moved: status %#x", name, st);
}

/* The same where every commit is made elsewhere and moved (before 6.12). */
TEST(commits_moved)
{
	moved(commit_and_decommit, "commit_and_decommit");
	moved(commit_errors, "commit_errors");
	moved(commit_file, "commit_file");
	moved(after_fork, "after_fork");
}

TEST(commit_moved_at_map_limit)
{
	ncb__resv_move_always = 1;
	commit_at_map_limit();
}

TEST(decommit_moved_at_map_limit)
{
	ncb__resv_move_always = 1;
	decommit_at_map_limit();
}

/* A JIT's code within rel32 reach of its runtime. */
TEST(near_code)
{
	uintptr_t here = (uintptr_t)&near_code, reach = 1UL << 30;
	struct ncb_resv_opts o = { .size = sizeof(o),
				      .place = NCB_PLACE_RANDOM };
	struct ncb_resv *r;

	o.lo = here > reach ? here - reach : 0;
	o.hi = here + reach;
	r = reserve(NULL, 64UL << 20, &o);
	ASSERT_UGE((uintptr_t)ncb_resv_addr(r), o.lo);
	ASSERT_ULE((uintptr_t)ncb_resv_addr(r) + (64UL << 20), o.hi);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

TEST_MAIN(T(exact), T(anywhere), T(aligned_2m), T(aligned_1g),
	  T(window_lowest), T(window_highest), T(window_random),
	  T(window_any), T(where_find_free_says_any),
	  T(where_find_free_says_lowest), T(where_find_free_says_highest),
	  T(window_and_alignment),
	  T(two_in_window_lowest), T(two_in_window_highest), T(bad_options),
	  T(commit_and_decommit), T(commit_errors), T(commit_file),
	  T(concurrent_lowest), T(concurrent_random),
	  T(concurrent_highest), T(concurrent_any), T(after_fork),
	  T(fork_while_busy), T(fork_under_a_library),
	  T(most_of_the_space), T(near_code), T(commit_at_map_limit),
	  T(decommit_at_map_limit), T(commits_moved),
	  T(commit_moved_at_map_limit), T(decommit_moved_at_map_limit))

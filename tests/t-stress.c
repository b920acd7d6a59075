/* SPDX-License-Identifier: MIT */
/*
 * Concurrency: racers fight for overlapping fixed ranges while churners map
 * and unmap wherever the kernel puts them.  Every mapping carries sentinel
 * bytes that its owner checks before unmapping: a clobber anywhere shows.
 * Exactly one racer may win each round.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "ncbtest.h"

#define RACERS 4
#define CHURNERS 2
#define ARENA_PAGES 64

static struct {
	int mode;
	char *_Atomic arena;
	size_t pg;
	pthread_barrier_t bar;
	pthread_barrier_t go;
	atomic_int stop;
	atomic_int clobbers;
	atomic_int bad_errno;
	atomic_int multi_winner;
	atomic_int rounds_won;
	int rounds;
	int center;
	int reported;
	void *got[RACERS];
	int err[RACERS];
} S;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static int intact(const unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i += 512)
		if (p[i] != v)
			return 0;
	return p[len - 1] == v;
}

/* Who held the arena in a round nobody won (the first such only). */
static int report(const struct ncb_mapping *m, void *arg)
{
	(void)arg;
	printf("# round lost to %jx-%jx prot %d '%s'\n", (uintmax_t)m->start,
	       (uintmax_t)m->end, m->prot, m->path);
	return 0;
}

static void race_round(int id, int round)
{
	size_t len = (size_t)(1 + id) * S.pg;
	char *want = S.arena + (size_t)(S.center - id % 3) * S.pg;
	unsigned char v = (unsigned char)(1 + id + 8 * (round & 15));
	int i, winners = 0;

	S.got[id] = mmap_in(S.mode, want, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	S.err[id] = errno;
	if (S.got[id] != MAP_FAILED) {
		if (S.got[id] != want)
			atomic_fetch_add(&S.bad_errno, 1);
		memset(S.got[id], v, len);
	}
	pthread_barrier_wait(&S.bar);
	if (id == 0) {
		for (i = 0; i < RACERS; i++) {
			if (S.got[i] != MAP_FAILED)
				winners++;
			else if (S.err[i] != EEXIST) {
				printf("# racer %d: %s\n", i,
				       errname(S.err[i]));
				atomic_fetch_add(&S.bad_errno, 1);
			}
		}
		if (winners > 1)
			atomic_fetch_add(&S.multi_winner, 1);
		if (!winners && !S.reported++)
			ncb_maps_occupants(0, S.arena + (size_t)(S.center - 2) *
					   S.pg, 6 * S.pg, report, NULL);
		atomic_fetch_add(&S.rounds_won, winners);
	}
	pthread_barrier_wait(&S.bar);
	if (S.got[id] != MAP_FAILED) {
		if (!intact(S.got[id], len, v))
			atomic_fetch_add(&S.clobbers, 1);
		munmap(S.got[id], len);
	}
}

static void *racer(void *arg)
{
	int id = (int)(intptr_t)arg, r;
	unsigned seed = 7;

	bind_malloc_arena();
	pthread_barrier_wait(&S.go);
	pthread_barrier_wait(&S.go);
	for (r = 0; r < S.rounds; r++) {
		if (id == 0)
			S.center = 8 + (int)(next_rand(&seed) %
					     (ARENA_PAGES - 16));
		pthread_barrier_wait(&S.bar);
		race_round(id, r);
		pthread_barrier_wait(&S.bar);
	}
	return NULL;
}

static void *churner(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	unsigned char v;
	size_t len;
	char *p, *hint;

	/* This thread's malloc arena now, not later inside the arena. */
	bind_malloc_arena();
	pthread_barrier_wait(&S.go);
	pthread_barrier_wait(&S.go);
	while (!atomic_load(&S.stop)) {
		len = (1 + next_rand(&seed) % 4) * S.pg;
		v = (unsigned char)(0x80 | (next_rand(&seed) & 0x7f));
		/* Now and then a hint into the arena: a legal neighbour. */
		hint = atomic_load(&S.arena);
		if (hint && next_rand(&seed) % 4)
			hint = NULL;
		else if (hint)
			hint += (next_rand(&seed) % ARENA_PAGES) * S.pg;
		p = mmap(hint, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		memset(p, v, len);
		sched_yield();
		if (!intact((unsigned char *)p, len, v))
			atomic_fetch_add(&S.clobbers, 1);
		munmap(p, len);
	}
	return NULL;
}

static void stress(int mode)
{
	pthread_t r[RACERS], c[CHURNERS];
	int i;

	/*
	 * Probe first: on a 4.17 kernel the probe's experiment is atomic,
	 * under ncb-emu it is not (see tests/ncb-emu.c), and churners would
	 * race into its hole.
	 */
	ncb__probe();
	S.mode = mode;
	S.pg = test_page();
	S.rounds = test_slow() ? 150 : 3000;
	pthread_barrier_init(&S.bar, NULL, RACERS);
	pthread_barrier_init(&S.go, NULL, RACERS + CHURNERS + 1);
	for (i = 0; i < CHURNERS; i++)
		ASSERT_EQ(pthread_create(&c[i], NULL, churner,
					 (void *)(intptr_t)(i + 1)), 0);
	for (i = 0; i < RACERS; i++)
		ASSERT_EQ(pthread_create(&r[i], NULL, racer,
					 (void *)(intptr_t)i), 0);
	/*
	 * After the threads' stacks exist, so that only the churners' hints
	 * land in the arena (see free_window).
	 */
	pthread_barrier_wait(&S.go);
	atomic_store(&S.arena, free_window(ARENA_PAGES * S.pg));
	pthread_barrier_wait(&S.go);
	for (i = 0; i < RACERS; i++)
		pthread_join(r[i], NULL);
	atomic_store(&S.stop, 1);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(c[i], NULL);
	printf("# %d rounds, %d won, %d clobbers, %d multiple winners, "
	       "%d bad results\n", S.rounds, atomic_load(&S.rounds_won),
	       atomic_load(&S.clobbers), atomic_load(&S.multi_winner),
	       atomic_load(&S.bad_errno));
	ASSERT_EQ(atomic_load(&S.clobbers), 0);
	ASSERT_EQ(atomic_load(&S.multi_winner), 0);
	ASSERT_EQ(atomic_load(&S.bad_errno), 0);
	/* Churners leave most rounds alone: someone must have won. */
	ASSERT_GT(atomic_load(&S.rounds_won), S.rounds / 2);
}
FOR_MODES(stress)

/* ncb_mremap and ncb_mmap racing for overlapping destinations. */
static struct {
	int mode;
	char *w;
	void *moved;
	void *mapped;
	int mapped_err;
} M;

static void *mapper(void *arg)
{
	size_t pg = test_page();

	(void)arg;
	M.mapped = mmap_in(M.mode, M.w + 9 * pg, pg, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	M.mapped_err = errno;
	if (M.mapped != MAP_FAILED)
		memset(M.mapped, 0x62, pg);
	return NULL;
}

static void mremap_race(int mode)
{
	size_t pg = test_page();
	int round, rounds = test_slow() ? 50 : 1000, moves = 0, err;
	pthread_t t;

	M.mode = mode;
	M.w = free_window(16 * pg);
	for (round = 0; round < rounds; round++) {
		char *src = map_sentinel(M.w, 2 * pg, 0x61);

		ASSERT_EQ(pthread_create(&t, NULL, mapper, NULL), 0);
		M.moved = mremap_in(mode, src, 2 * pg, 2 * pg, 0,
				    M.w + 8 * pg);
		err = errno;
		pthread_join(t, NULL);
		if (M.moved != MAP_FAILED) {
			moves++;
			ASSERT_PTR_EQ(M.moved, M.w + 8 * pg);
			errno = M.mapped_err;
			ASSERT_MAP_ERR(M.mapped, EEXIST);
			check_sentinel(M.moved, 2 * pg, 0x61);
			munmap(M.moved, 2 * pg);
		} else {
			errno = err;
			ASSERT_ERRNO(EEXIST);
			ASSERT_PTR_EQ(M.mapped, M.w + 9 * pg);
			check_sentinel(M.mapped, pg, 0x62);
			check_sentinel(src, 2 * pg, 0x61);
			munmap(M.mapped, pg);
			munmap(src, 2 * pg);
		}
	}
	printf("# %d of %d rounds won by the move\n", moves, rounds);
}
FOR_MODES(mremap_race)

/*
 * Bystanders: while racers fight for one hot range (their refused hints
 * are placed anywhere for a moment, wherever the kernel finds room: as
 * large, in the windows' free gap, the highest that fits them), each
 * bystander maps and unmaps ranges of a window of its own, which nothing
 * else ever holds: never refused.
 */
#define BYSTANDERS 3
#define BY_PAGES 64
#define HOT_PAGES 48

static struct {
	int mode, rounds;
	char *hot, *win;
	pthread_barrier_t go;
	atomic_int refused, stop;
} B;

static void *hot_racer(void *arg)
{
	size_t pg = test_page();
	unsigned s = (unsigned)(uintptr_t)arg;
	size_t len;
	void *p;

	pthread_barrier_wait(&B.go);
	while (!atomic_load(&B.stop)) {
		len = (HOT_PAGES - next_rand(&s) % 8) * pg;
		p = mmap_in(B.mode, B.hot + (next_rand(&s) % 8) * pg, len,
			    PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	return NULL;
}

static void *bystander(void *arg)
{
	size_t pg = test_page(), len;
	int id = (int)(uintptr_t)arg, i;
	unsigned s = (unsigned)id * 7919u + 1;
	char *w, *want, *p;

	pthread_barrier_wait(&B.go);
	w = B.win + (size_t)id * BY_PAGES * pg;
	for (i = 0; i < B.rounds; i++) {
		len = (1 + next_rand(&s) % 4) * pg;
		want = w + (next_rand(&s) % (BY_PAGES - 4)) * pg;
		p = mmap_in(B.mode, want, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			if (atomic_fetch_add(&B.refused, 1) < 3)
				printf("# bystander %d: %s for its own %p\n",
				       id, errname(errno), (void *)want);
			continue;
		}
		if (p != want)
			FAIL("bystander %d: %p placed at %p", id,
			     (void *)want, (void *)p);
		memset(p, 0x40 + id, len);
		munmap(p, len);
	}
	return NULL;
}

static void bystanders(int mode)
{
	pthread_t r[2], b[BYSTANDERS];
	size_t pg = test_page();
	int i;

	B.mode = mode;
	B.rounds = test_slow() ? 300 : 5000;
	atomic_store(&B.refused, 0);
	atomic_store(&B.stop, 0);
	ASSERT_EQ(pthread_barrier_init(&B.go, NULL, 3 + BYSTANDERS), 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&r[i], NULL, hot_racer,
					 (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < BYSTANDERS; i++)
		ASSERT_EQ(pthread_create(&b[i], NULL, bystander,
					 (void *)(uintptr_t)i), 0);
	/*
	 * The hot range and the windows side by side, free, on top, once
	 * the threads' stacks are made (they would land there).
	 */
	B.hot = free_window((HOT_PAGES + 8 + BYSTANDERS * BY_PAGES) * pg);
	B.win = B.hot + (HOT_PAGES + 8) * pg;
	pthread_barrier_wait(&B.go);
	for (i = 0; i < BYSTANDERS; i++)
		pthread_join(b[i], NULL);
	atomic_store(&B.stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	pthread_barrier_destroy(&B.go);
	printf("# %d bystanders' calls, %d refused\n",
	       BYSTANDERS * B.rounds, atomic_load(&B.refused));
	ASSERT_EQ(atomic_load(&B.refused), 0);
}
FOR_MODES(bystanders)

/*
 * The library's own strays: threads reserving in a window whose top is
 * taken has its hint placed where the kernel finds room for a moment, the
 * very range another thread asks for next (the kernel's next choice):
 * that range, free before and after, is not refused.
 */
static struct {
	char *taken;
	atomic_int stop;
} R;

void ncb_test_core_warm(void) __attribute__((weak));

static void *reserver(void *arg)
{
	size_t len = 3 * test_page();
	struct ncb_resv_opts o = { .size = sizeof(o),
				      .place = NCB_PLACE_HIGHEST };
	struct ncb_resv *r;

	(void)arg;
	o.lo = (uintptr_t)R.taken;
	o.hi = (uintptr_t)R.taken + len;
	while (!atomic_load(&R.stop))
		if (!ncb_resv_new(&r, NULL, len, &o))
			ncb_resv_release(r);
	return NULL;
}

TEST(reservation_strays)
{
	size_t len = 3 * test_page();
	int i, n = test_slow() ? 2000 : 20000, refused = 0, free_after = 0;
	pthread_t t[2];
	char *x, *p;

	if (test_runtime_maps())
		SKIP("the runtime maps and unmaps memory of its own at will: "
		     "a refusal may be for its mapping");
	/* tests/core/shim.c: ncb_mmap is a vendored copy of the core. */
	if (ncb_test_core_warm)
		SKIP("a vendored core does not see the library's own strays: "
		     "each copy counts its own");
	R.taken = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	ASSERT_TRUE(R.taken != MAP_FAILED);
	atomic_store(&R.stop, 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, reserver, NULL), 0);
	for (i = 0; i < n; i++) {
		x = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		ASSERT_TRUE(x != MAP_FAILED);
		munmap(x, len);
		p = ncb_mmap(x, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			ASSERT_PTR_EQ(p, x);
			munmap(p, len);
			continue;
		}
		ASSERT_ERRNO(EEXIST);
		refused++;
		free_after += ncb_range_free(x, len) == 1;
	}
	atomic_store(&R.stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	munmap(R.taken, len);
	printf("# %d placements at the kernel's next choice: %d refused, "
	       "%d of them free right after\n", n, refused, free_after);
	/*
	 * Each is asked again a few times at most: a few may be refused
	 * while the reservers keep a stray there; asked once, 1 in 150 is
	 * refused though free right after.
	 */
	ASSERT_LE(free_after, n / 500);
}

/*
 * A refusal where the flag is ignored and the maps' text is read: the
 * hint the call made itself, placed elsewhere and undone, is no stray of
 * another's that may have refused it, and the call is not asked again
 * (it was, sixteen times, each a read of the maps).  In each mode that
 * hints, a free range placed and an occupied one refused, one hint each.
 */
static void own_hints(int mode)
{
	size_t pg = test_page();
	unsigned long before;
	char *p, *q;

	if (ncb_test_core_warm)
		SKIP("a vendored core keeps its own count of hints");
	ncb__core_reader(2);
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(munmap(p + pg, pg), 0);
	before = ncb__hints_made();
	ASSERT_MAP_ERR(ncb__mmap_mode(p, pg, PROT_READ, MAP_PRIVATE |
				      MAP_ANONYMOUS, -1, 0, mode), EEXIST);
	ASSERT_EQ(ncb__hints_made() - before, 1);
	before = ncb__hints_made();
	q = ncb__mmap_mode(p + pg, pg, PROT_READ, MAP_PRIVATE |
			   MAP_ANONYMOUS, -1, 0, mode);
	ASSERT_PTR_EQ(q, p + pg);
	ASSERT_EQ(ncb__hints_made() - before, 1);
	ncb__core_reader(0);
	munmap(p, 2 * pg);
}
TEST(own_hints_ignored) { own_hints(NCB_NOREPLACE_IGNORED); }
TEST(own_hints_partial) { own_hints(NCB_NOREPLACE_PARTIAL); }

TEST_MAIN(T_MODES(stress), T_MODES(mremap_race), T_MODES(bystanders),
	  T(reservation_strays), T(own_hints_ignored), T(own_hints_partial))

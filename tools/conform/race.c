/* SPDX-License-Identifier: MIT */
/*
 * The flag's promise under concurrency: threads racing for one range
 * (exactly one wins, the others get EEXIST, nothing is lost), threads
 * taking neighbouring pages at once, a fork in the middle of another
 * thread's placements, and placements interrupted by signals.  No case
 * depends on timing: each repeats its rounds and checks invariants that
 * hold for every interleaving the kernel allows, and each has a part
 * that does not depend on the interleaving at all.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conform.h"

#define THREADS 8
#define ROUNDS 100

#define HINT_BEFORE_417 BEFORE_417(A_BROKEN)

static int is_err(long r)
{
	return (unsigned long)r >= -4095UL;
}

/* The threads' rounds: each round's address, what each thread got. */
struct race {
	pthread_barrier_t start, end;
	char *volatile a;	/* this round's range; NULL: stop */
	size_t pg;
	int neighbours;		/* each thread its own page */
	long r[THREADS];
};

struct racer {
	struct race *rc;
	int id;
};

/*
 * One thread's rounds: the placement, then its mark on what it won,
 * after every thread has placed (so a second winner cannot hide by
 * writing last).
 */
static void *racer(void *arg)
{
	struct racer *me = arg;
	struct race *rc = me->rc;
	char *a;

	for (;;) {
		pthread_barrier_wait(&rc->start);
		a = rc->a;
		if (!a)
			break;
		if (rc->neighbours)
			a += (size_t)me->id * rc->pg;
		rc->r[me->id] = sys_mmap(a, rc->pg, RW, NOREPLACE, -1, 0);
		pthread_barrier_wait(&rc->end);
		if (rc->r[me->id] == (long)a)
			memset(a, 'a' + me->id, rc->pg);
		pthread_barrier_wait(&rc->end);
	}
	return NULL;
}

/* A round's invariant for one range: one winner, EEXIST for the rest. */
static int one_winner(struct cctx *c, struct race *rc, int round)
{
	int i, wins = 0, winner = -1;

	for (i = 0; i < THREADS; i++) {
		if (rc->r[i] == (long)rc->a) {
			wins++;
			winner = i;
		} else if (!is_err(rc->r[i])) {
			got(c, A_BROKEN, "round %d: a thread mapped at %p, "
			    "not %p", round, (void *)rc->r[i],
			    (void *)rc->a);
			munmap((void *)rc->r[i], rc->pg);
			return -1;
		} else if (rc->r[i] != -EEXIST) {
			got(c, A_BROKEN, "round %d: a loser got %s, not "
			    "EEXIST", round, err_name((int)-rc->r[i]));
			return -1;
		}
	}
	if (wins != 1) {
		got(c, A_BROKEN, "round %d: %d threads won one range", round,
		    wins);
		return -1;
	}
	if (rc->a[0] != 'a' + winner || rc->a[rc->pg - 1] != 'a' + winner) {
		got(c, A_BROKEN, "round %d: the winner's bytes are lost",
		    round);
		return -1;
	}
	return 0;
}

/* A round's invariant for neighbours: each its own page, kept. */
static int all_won(struct cctx *c, struct race *rc, int round)
{
	int i;

	for (i = 0; i < THREADS; i++) {
		char *a = rc->a + (size_t)i * rc->pg;

		if (rc->r[i] != (long)a) {
			got(c, A_BROKEN, "round %d: a thread's free page "
			    "gave %s", round, is_err(rc->r[i]) ?
			    err_name((int)-rc->r[i]) : "another address");
			return -1;
		}
		if (a[0] != 'a' + i) {
			got(c, A_BROKEN, "round %d: a page lost its bytes",
			    round);
			return -1;
		}
	}
	return 0;
}

static void race(struct cctx *c, int neighbours)
{
	static struct race rc;
	struct racer who[THREADS];
	pthread_t t[THREADS];
	int i, n = 0, round, bad = 0;
	size_t span = (neighbours ? THREADS : 1) * c->pg;

	memset(&rc, 0, sizeof(rc));
	rc.pg = c->pg;
	rc.neighbours = neighbours;
	pthread_barrier_init(&rc.start, NULL, THREADS + 1);
	pthread_barrier_init(&rc.end, NULL, THREADS + 1);
	for (; n < THREADS; n++) {
		who[n].rc = &rc;
		who[n].id = n;
		if (pthread_create(&t[n], NULL, racer, &who[n]))
			break;
	}
	/* The threads made wait at the barrier until the process ends. */
	if (n < THREADS) {
		skip(c, "only %d threads could be made", n);
		return;
	}
	for (round = 0; round < ROUNDS && !bad; round++) {
		rc.a = free_window(c, span);
		pthread_barrier_wait(&rc.start);
		pthread_barrier_wait(&rc.end);
		pthread_barrier_wait(&rc.end);
		bad = neighbours ? all_won(c, &rc, round)
				 : one_winner(c, &rc, round);
		for (i = 0; i < THREADS && !neighbours; i++)
			if (!is_err(rc.r[i]) && rc.r[i] != (long)rc.a)
				munmap((void *)rc.r[i], c->pg);
		munmap(rc.a, span);
	}
	rc.a = NULL;
	pthread_barrier_wait(&rc.start);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (!bad)
		got(c, A_HOLDS, "%d rounds of %d threads", ROUNDS, THREADS);
}

static void race_one(struct cctx *c)
{
	race(c, 0);
}

static void race_neighbours(struct cctx *c)
{
	race(c, 1);
}

/*
 * What a child inherits is mapped for it: the flag there is EEXIST, and
 * what the child maps is its own, free again for the parent.
 */
static void fork_inherits(struct cctx *c)
{
	char *w = free_window(c, 4 * c->pg);
	struct occ o;
	pid_t pid;
	long r;
	int st;

	if (!w || occ_make(c, &o, w + c->pg, c->pg, RW, 0))
		return;
	pid = fork();
	if (pid == 0) {
		r = sys_mmap(o.a, c->pg, RW, NOREPLACE, -1, 0);
		if (r != -EEXIST || !occ_intact(&o))
			_exit(1);
		r = sys_mmap(w + 2 * c->pg, c->pg, RW, NOREPLACE, -1, 0);
		_exit(r == (long)(w + 2 * c->pg) ? 0 : 2);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		skip(c, "fork: %s", err_name(errno));
		return;
	}
	r = sys_mmap(w + 2 * c->pg, c->pg, RW, NOREPLACE, -1, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 1)
		got(c, A_BROKEN, "the child's flag over an inherited mapping "
		    "was not EEXIST");
	else if (WEXITSTATUS(st))
		got(c, A_BROKEN, "the child could not map a free page");
	else if (r != (long)(w + 2 * c->pg))
		got(c, A_BROKEN, "the child's page is not free again for "
		    "the parent");
	else
		got(c, A_HOLDS, NULL);
}

/*
 * The placing thread's state, shared with the forking one.  Threads are
 * made before any range is chosen: a new thread's stack would take the
 * free range the kernel offered last.
 */
struct placer {
	pthread_barrier_t ready;
	char *r;		/* two pages, placed and unplaced in turn */
	size_t pg;
	volatile int stop;
	volatile long bad;	/* a placement's wrong answer, or 0 */
	long rounds;
};

static void *placer(void *arg)
{
	struct placer *p = arg;
	long r;

	pthread_barrier_wait(&p->ready);
	while (!p->stop && !p->bad) {
		r = sys_mmap(p->r, 2 * p->pg, RW, NOREPLACE, -1, 0);
		if (r != (long)p->r) {
			p->bad = is_err(r) ? r : 1;
			break;
		}
		munmap(p->r, 2 * p->pg);
		p->rounds++;
	}
	return NULL;
}

/*
 * In the child: the range whole or absent (and the flag's answer to
 * match), the sentinel inherited and refused.  The exit status says
 * which failed.
 */
static int child_sees(const struct placer *p, const struct occ *s)
{
	int all = mapped_all(p->r, 2 * p->pg), any = mapped_any(p->r,
								2 * p->pg);
	long r;

	if (all != any)
		return 1;
	r = sys_mmap(p->r, 2 * p->pg, RW, NOREPLACE, -1, 0);
	if (all ? r != -EEXIST : r != (long)p->r)
		return 2;
	r = sys_mmap(s->a, p->pg, RW, NOREPLACE, -1, 0);
	return r == -EEXIST && occ_intact(s) ? 0 : 3;
}

static void fork_midcall(struct cctx *c)
{
	static const char *const why[] = {
		"", "the child saw half a placement",
		"the child's flag disagreed with what it inherited",
		"the child's flag over the inherited sentinel was not EEXIST",
	};
	static struct placer p;
	struct occ s;
	pthread_t t;
	int i, st = 0, code = 0;
	char *w;
	pid_t pid;

	memset(&p, 0, sizeof(p));
	p.pg = c->pg;
	pthread_barrier_init(&p.ready, NULL, 2);
	if (pthread_create(&t, NULL, placer, &p)) {
		skip(c, "no thread could be made");
		return;
	}
	w = free_window(c, 4 * c->pg);
	p.r = w + c->pg;
	if (!w || occ_make(c, &s, w + 3 * c->pg, c->pg, RW, 0))
		p.stop = 1;
	pthread_barrier_wait(&p.ready);
	for (i = 0; i < ROUNDS && !code && !p.stop; i++) {
		pid = fork();
		if (pid == 0)
			_exit(child_sees(&p, &s));
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			break;
		code = WIFEXITED(st) ? WEXITSTATUS(st) : 3;
	}
	p.stop = 1;
	pthread_join(t, NULL);
	if (c->skip_why[0])
		return;
	if (code)
		got(c, A_BROKEN, "fork %d: %s", i, why[code > 3 ? 3 : code]);
	else if (p.bad)
		got(c, A_BROKEN, "a free range's placement gave %s",
		    p.bad == 1 ? "another address" : err_name((int)-p.bad));
	else if (i < ROUNDS)
		skip(c, "fork: %s", err_name(errno));
	else
		got(c, A_HOLDS, "%d forks, %ld placements", ROUNDS,
		    p.rounds);
}

/* The interrupted thread's ranges: one occupied, one free. */
static char *sig_taken, *sig_free;
static size_t sig_pg;
static volatile sig_atomic_t sig_seen, sig_bad;

/*
 * A placement inside the handler: async-signal-safe, judged the same.
 * errno is kept: the interrupted thread may be about to read its own.
 */
static void on_signal(int sig)
{
	int saved = errno;
	long r = sys_mmap(sig_taken, sig_pg, RW, NOREPLACE, -1, 0);

	(void)sig;
	sig_seen++;
	if (r != -EEXIST) {
		sig_bad = 1;
		if (!is_err(r))
			munmap((void *)r, sig_pg);
	}
	r = sys_mmap(sig_free, sig_pg, RW, NOREPLACE, -1, 0);
	if (r != (long)sig_free)
		sig_bad = 2;
	munmap(sig_free, sig_pg);
	errno = saved;
}

struct interrupted {
	pthread_barrier_t ready;
	char *r;
	size_t pg;
	volatile int done;
	long bad;
};

/*
 * Placements without SA_RESTART while signals arrive: each answers as
 * if uninterrupted (never EINTR, never elsewhere).  The first signal is
 * the thread's own, so at least one lands inside the loop.
 */
static void *interrupted(void *arg)
{
	struct interrupted *it = arg;
	long r;
	int i;

	pthread_barrier_wait(&it->ready);
	if (!it->r) {
		it->done = 1;
		return NULL;
	}
	pthread_kill(pthread_self(), SIGUSR1);
	for (i = 0; i < 20 * ROUNDS && !it->bad; i++) {
		r = sys_mmap(it->r, it->pg, RW, NOREPLACE, -1, 0);
		if (r != (long)it->r) {
			it->bad = is_err(r) ? r : 1;
			break;
		}
		r = sys_mmap(it->r, it->pg, RW, NOREPLACE, -1, 0);
		if (r != -EEXIST)
			it->bad = is_err(r) ? r : 2;
		munmap(it->r, it->pg);
	}
	it->done = 1;
	return NULL;
}

static void signals(struct cctx *c)
{
	static struct interrupted it;
	struct sigaction sa;
	struct occ o;
	pthread_t t;
	char *w;

	memset(&it, 0, sizeof(it));
	pthread_barrier_init(&it.ready, NULL, 2);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&t, NULL, interrupted, &it)) {
		skip(c, "no thread could be made");
		return;
	}
	w = free_window(c, 8 * c->pg);
	if (w && !occ_make(c, &o, w + 5 * c->pg, c->pg, RW, 0)) {
		it.r = w + c->pg;
		it.pg = sig_pg = c->pg;
		sig_taken = o.a;
		sig_free = w + 3 * c->pg;
	}
	pthread_barrier_wait(&it.ready);
	while (!it.done)
		pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	if (c->skip_why[0])
		return;
	if (sig_bad)
		got(c, A_BROKEN, "a placement in the handler %s",
		    sig_bad == 1 ? "was not EEXIST over a mapping"
				 : "did not map a free page exactly");
	else if (it.bad)
		got(c, A_BROKEN, "an interrupted placement gave %s",
		    it.bad == 1 ? "another address" : it.bad == 2 ?
		    "no EEXIST over itself" : err_name((int)-it.bad));
	else if (!occ_intact(&o))
		got(c, A_BROKEN, "the occupant was changed");
	else
		got(c, A_HOLDS, "%d signals", (int)sig_seen);
}

const struct ccase race_cases[] = {
	{ "race.one-range", G_RACE, "threads racing for one range: one "
	  "wins, the others get EEXIST, nothing is lost", "mm/mmap.c: "
	  "do_mmap under mmap_write_lock (the check and the mapping are "
	  "one step)", A_HOLDS, 0, { HINT_BEFORE_417 }, race_one, { 0 } },
	{ "race.neighbours", G_RACE, "threads taking neighbouring pages "
	  "at once all get their own", "mm/mmap.c: do_mmap under "
	  "mmap_write_lock", A_HOLDS, 0, { { 0 } }, race_neighbours, { 0 } },
	{ "process.fork-inherits", G_PROCESS, "a child's inherited "
	  "mappings are occupied for it, its own are not its parent's",
	  "kernel/fork.c: dup_mmap", A_HOLDS, 0, { HINT_BEFORE_417 },
	  fork_inherits, { 0 } },
	{ "process.fork-midcall", G_PROCESS, "a fork while another thread "
	  "places: the child sees each placement whole or not at all",
	  "kernel/fork.c: dup_mmap (under mmap_write_lock)", A_HOLDS, 0,
	  { HINT_BEFORE_417 }, fork_midcall, { 0 } },
	{ "process.signals", G_PROCESS, "placements interrupted by signals "
	  "answer as uninterrupted, in the handler too", "mm/mmap.c: "
	  "vm_mmap_pgoff (mmap_write_lock_killable: fatal signals only)",
	  A_HOLDS, 0, { HINT_BEFORE_417 }, signals, { 0 } },
	{ NULL, 0, NULL, NULL, 0, 0, { { 0 } }, NULL, { 0 } },
};

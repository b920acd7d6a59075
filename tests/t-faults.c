/* SPDX-License-Identifier: MIT */
/*
 * The promise when the kernel runs out: under tests/ncb-emu's injected
 * ENOMEM (the matrix's faults rows, tests/faults.h) every call either
 * does what it says or fails leaving things as they were, and never
 * replaces anything.  Each case checks invariants, not success: the
 * sentinels around each range intact, a failed call's range as before
 * (nothing leaked: no placeholder, no mapping), a refusal for a free
 * range never EEXIST, committed pages' bytes never lost unless the call
 * reports it.  Natively nothing is injected and every call succeeds.
 * Faults are armed around the call under test only: the harness's own
 * allocations are not the subject.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "ncbtest.h"
#include "faults.h"

#define ROUNDS 150

#define pg test_page()

/* What is at a page: PROT_NONE, readable and writable, or nothing. */
enum state { UNMAPPED, RESERVED, WRITABLE, OTHER };

/*
 * A file of /proc/self, read through a buffer of its own (faults may be
 * armed: no allocation).
 */
static char *read_proc(const char *path)
{
	/* One for each thread: the soak reads from several. */
	static __thread char buf[1 << 16];
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", path, strerror(errno));
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

static char *read_maps(void)
{
	return read_proc("/proc/self/maps");
}

static char *read_maps_status(void)
{
	return read_proc("/proc/self/status");
}

/* The state of the page at a. */
static enum state state_of(uintptr_t a)
{
	unsigned long lo, hi;
	char perms[5], *p, *nl;

	for (p = read_maps(); p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (sscanf(p, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (a < lo || a >= hi)
			continue;
		return !strncmp(perms, "---", 3) ? RESERVED :
		       !strncmp(perms, "rw-", 3) ? WRITABLE : OTHER;
	}
	return UNMAPPED;
}

/* Mappings of the file whose path ends so. */
static int mappings_of(const char *name)
{
	int count = 0;
	char *p;

	for (p = read_maps(); (p = strstr(p, name)); p++)
		count++;
	return count;
}

/* Pages [i, i + n) of base all in state s. */
static int all_in(char *base, size_t i, size_t n, enum state s)
{
	for (; n; n--, i++)
		if (state_of((uintptr_t)base + i * pg) != s)
			return 0;
	return 1;
}

static void fill(char *p, size_t len, int v)
{
	memset(p, v, len);
}

static int holds(const char *p, size_t len, int v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (char)v)
			return 0;
	return 1;
}

/*
 * Four pages: sentinels at the first and the last, the two between
 * unmapped (the range under test).  Made with faults disarmed.
 */
static char *area(void)
{
	char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (a == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	fill(a, pg, 0x5a);
	fill(a + 3 * pg, pg, 0xa5);
	if (munmap(a + pg, 2 * pg))
		FAIL("munmap: %s", strerror(errno));
	return a;
}

static void sentinels_intact(char *a)
{
	check_sentinel(a, pg, 0x5a);
	check_sentinel(a + 3 * pg, pg, 0xa5);
}

/* An errno a call may fail with for want of memory. */
static int out_of_memory(int e)
{
	return e == ENOMEM || e == EAGAIN;
}

/* A free range: mapped exactly, or refused with it left free. */
TEST(mmap_free_range)
{
	char *a, *p;
	int i, e, won = 0, armed = 0;

	for (i = 0; i < ROUNDS; i++) {
		a = area();
		armed = test_faults(1);
		p = ncb_mmap(a + pg, 2 * pg, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		e = errno;
		test_faults(0);
		sentinels_intact(a);
		if (p == a + pg) {
			won++;
			if (!all_in(a, 1, 2, WRITABLE) || !holds(p, 2 * pg, 0))
				FAIL("round %d: mapped, not as asked", i);
		} else if (p != MAP_FAILED) {
			FAIL("round %d: mapped at %p, asked %p", i, (void *)p,
			     (void *)(a + pg));
		} else if (!out_of_memory(e)) {
			FAIL("round %d: a free range refused with %s", i,
			     errname(e));
		} else if (!all_in(a, 1, 2, UNMAPPED)) {
			FAIL("round %d: refused, and the range is not free: "
			     "a placeholder left behind", i);
		}
		munmap(a, 4 * pg);
	}
	printf("# %d of %d mapped (%s)\n", won, ROUNDS,
	       armed ? "faults injected" : "no faults injected here");
}

/* A range of our own: refused, never replaced. */
TEST(mmap_taken_range)
{
	char *a, *p, *q;
	int i, e;

	for (i = 0; i < ROUNDS; i++) {
		a = area();
		q = mmap(a + pg, 2 * pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (q != a + pg)
			FAIL("mmap: %s", strerror(errno));
		fill(q, 2 * pg, 0x77);
		test_faults(1);
		p = ncb_mmap(a + pg, 2 * pg, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		e = errno;
		test_faults(0);
		sentinels_intact(a);
		if (p != MAP_FAILED)
			FAIL("round %d: mapped over a taken range", i);
		if (e != EEXIST && !out_of_memory(e))
			FAIL("round %d: %s", i, errname(e));
		if (!holds(q, 2 * pg, 0x77))
			FAIL("round %d: the taken range's bytes are lost", i);
		munmap(a, 4 * pg);
	}
}

/*
 * A shared mapping with MAP_SHARED_VALIDATE, which the kernel refuses
 * with the flag: the library's fallback paths, on every kernel.
 */
/* A two-page memfd that MAP_SHARED_VALIDATE maps here, or a SKIP. */
static int validated_file(void)
{
	int fd = memfd_create("t-faults", MFD_CLOEXEC);
	char *a;

	if (fd < 0)
		SKIP("memfd_create: %s", strerror(errno));
	if (ftruncate(fd, (off_t)(2 * pg)))
		FAIL("ftruncate: %s", strerror(errno));
	/* qemu-user 7.2 knows no MAP_SHARED_VALIDATE: EINVAL. */
	a = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED_VALIDATE, fd, 0);
	if (a == MAP_FAILED)
		SKIP("mmap(MAP_SHARED_VALIDATE): %s", errname(errno));
	munmap(a, 2 * pg);
	return fd;
}

TEST(mmap_shared_validate)
{
	int fd = validated_file(), i, e;
	char *a, *p;

	for (i = 0; i < ROUNDS; i++) {
		a = area();
		test_faults(1);
		p = ncb_mmap(a + pg, 2 * pg, PROT_READ | PROT_WRITE,
			     MAP_SHARED_VALIDATE, fd, 0);
		e = errno;
		test_faults(0);
		sentinels_intact(a);
		if (p == MAP_FAILED && !out_of_memory(e))
			FAIL("round %d: a free range refused with %s", i,
			     errname(e));
		if (p == MAP_FAILED && !all_in(a, 1, 2, UNMAPPED))
			FAIL("round %d: refused, and a placeholder is left", i);
		if (p != MAP_FAILED && p != a + pg)
			FAIL("round %d: mapped elsewhere", i);
		munmap(a, 4 * pg);
	}
	close(fd);
}

static struct {
	char *at;
	atomic_int stop, lost, made;
} H;

/*
 * Maps the first page of H.at for itself, faults disarmed, and checks it
 * stays mapped.  Not the whole range: a mapping of exactly the claim's
 * extent, made in the moment between the kernel's failure and the look,
 * passes for the claim.
 */
static void *hole_bystander(void *arg)
{
	unsigned char v;
	char *p;
	int k;

	(void)arg;
	while (!atomic_load(&H.stop)) {
		p = ncb_mmap(H.at, pg, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		atomic_fetch_add(&H.made, 1);
		/* mincore: ENOMEM once the page is not mapped. */
		for (k = 0; k < 200; k++)
			if (mincore(p, pg, &v) && errno == ENOMEM) {
				atomic_fetch_add(&H.lost, 1);
				break;
			}
		munmap(p, pg);
	}
	return NULL;
}

/*
 * A placement whose MAP_FIXED over its own placeholder fails may find the
 * placeholder gone (before 6.12 the kernel discards it first: the
 * injector's --unmap-first), and another thread's mapping made in the
 * hole since: the failed call never unmaps that.  A shared mapping with
 * MAP_SHARED_VALIDATE, which always takes the claimed path.
 */
TEST(failed_placement_spares_the_hole)
{
	int fd = validated_file(), i;
	pthread_t t;
	char *p;

	ncb__probe();
	H.at = area() + pg;
	ASSERT_EQ(pthread_create(&t, NULL, hole_bystander, NULL), 0);
	for (i = 0; i < 10 * ROUNDS && !atomic_load(&H.lost); i++) {
		test_faults(1);
		p = ncb_mmap(H.at, 2 * pg, PROT_READ | PROT_WRITE,
			     MAP_SHARED_VALIDATE, fd, 0);
		test_faults(0);
		if (p != MAP_FAILED)
			munmap(p, 2 * pg);
	}
	atomic_store(&H.stop, 1);
	pthread_join(t, NULL);
	close(fd);
	printf("# the other thread mapped the range %d times\n",
	       atomic_load(&H.made));
	ASSERT_EQ(atomic_load(&H.lost), 0);
}

/* A move to a free range: done, or the source as it was. */
TEST(mremap_to_free_range)
{
	char *a, *src, *p;
	int i, e;

	for (i = 0; i < ROUNDS; i++) {
		/* The source first: else it could land in the hole. */
		src = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (src == MAP_FAILED)
			FAIL("mmap: %s", strerror(errno));
		fill(src, 2 * pg, 0x3c);
		a = area();
		test_faults(1);
		p = ncb_mremap(src, 2 * pg, 2 * pg,
			       MREMAP_MAYMOVE | MREMAP_FIXED, a + pg);
		e = errno;
		test_faults(0);
		sentinels_intact(a);
		if (p == a + pg) {
			if (!holds(p, 2 * pg, 0x3c))
				FAIL("round %d: moved, bytes lost", i);
			if (state_of((uintptr_t)src) != UNMAPPED)
				FAIL("round %d: moved, the source stays", i);
		} else if (p != MAP_FAILED) {
			FAIL("round %d: moved to %p", i, (void *)p);
		} else {
			if (!out_of_memory(e))
				FAIL("round %d: a free range refused with %s",
				     i, errname(e));
			if (!holds(src, 2 * pg, 0x3c))
				FAIL("round %d: refused, the source lost", i);
			if (!all_in(a, 1, 2, UNMAPPED))
				FAIL("round %d: refused, and a placeholder "
				     "is left at the destination", i);
			munmap(src, 2 * pg);
		}
		munmap(a, 4 * pg);
	}
}

#define RPAGES 16

/*
 * What the test knows of a reservation's page.  P_UNSURE: reserved to
 * look at after a failure that may have unmapped it first, which the
 * handle took back, or gave up though its own claim's page is there
 * (ncb_resv_commit(3): it cannot tell its own from another's); either
 * way nothing to lose, and a call that meets it may fail with EEXIST.
 */
enum page { P_RESERVED, P_COMMITTED, P_GIVEN_UP, P_UNSURE };

struct books {
	char *base;
	enum page st[RPAGES];
	int val[RPAGES];
	int unmap_first;	/* the injector may unmap a failed MAP_FIXED */
	int doubtful;		/* the maps may be unreadable in the call */
	int refused;		/* calls that failed */
	void (*arm)(int on);	/* around each call; else test_faults */
};

/*
 * Whether the library may doubt pages that a failed call left as they
 * were, taking them back reserved or giving them up: where the injector
 * unmaps first, and for a commit of writable private memory before 6.12,
 * which it makes elsewhere and moves, or makes over the pages, either of
 * which may have discarded them when it fails (src/resv.c, fails_cleanly).
 */
static int may_doubt(const struct books *b, int commit)
{
	return b->unmap_first || b->doubtful ||
	       (commit && ncb_core_kernel_release() < (6 << 16 | 12 << 8));
}

/*
 * After a failed call on [i, i + n): each page as it was, or, where the
 * library may doubt it, taken back reserved or given up.
 */
static void after_failure(struct books *b, size_t i, size_t n, int commit,
			  int round)
{
	int doubt = may_doubt(b, commit);
	enum state s;

	for (; n; n--, i++) {
		char *p = b->base + i * pg;

		if (b->st[i] == P_GIVEN_UP || b->st[i] == P_UNSURE)
			continue;
		s = state_of((uintptr_t)p);
		if (b->st[i] == P_COMMITTED && s == WRITABLE &&
		    holds(p, pg, b->val[i]))
			continue;
		if (b->st[i] == P_COMMITTED && s == WRITABLE)
			FAIL("round %d: page %zu committed, its bytes lost",
			     round, i);
		if (!doubt && b->st[i] == P_RESERVED && s == RESERVED)
			continue;
		if (!doubt)
			FAIL("round %d: page %zu changed by a failed call "
			     "(state %d)", round, i, (int)s);
		/* Perhaps discarded: taken back, or given up. */
		b->st[i] = s == RESERVED ? P_UNSURE : P_GIVEN_UP;
		if (s != RESERVED && s != UNMAPPED)
			FAIL("round %d: page %zu is something else (%d)",
			     round, i, (int)s);
	}
}

static void check_books(struct books *b, int round)
{
	size_t i;

	for (i = 0; i < RPAGES; i++) {
		char *p = b->base + i * pg;
		enum state s;

		if (b->st[i] == P_GIVEN_UP)
			continue;
		s = state_of((uintptr_t)p);
		if (b->st[i] == P_COMMITTED &&
		    (s != WRITABLE || !holds(p, pg, b->val[i])))
			FAIL("round %d: committed page %zu lost (state %d)",
			     round, i, (int)s);
		if (b->st[i] == P_RESERVED && s != RESERVED)
			FAIL("round %d: reserved page %zu is %d", round, i,
			     (int)s);
	}
}

static int meets(const struct books *b, size_t i, size_t n, enum page p)
{
	for (; n; n--, i++)
		if (b->st[i] == p)
			return 1;
	return 0;
}

/* One commit or decommit of [i, i + n), armed, and its books. */
static void resv_step(struct ncb_resv *r, struct books *b, size_t i,
		      size_t n, int commit, int round)
{
	int err, given = meets(b, i, n, P_GIVEN_UP), k;

	if (b->arm)
		b->arm(1);
	else
		test_faults(1);
	err = commit ? ncb_resv_commit(r, b->base + i * pg, n * pg,
				       PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		     : ncb_resv_decommit(r, b->base + i * pg, n * pg);
	if (b->arm)
		b->arm(0);
	else
		test_faults(0);
	b->refused += err != 0;
	if (!err && given)
		FAIL("round %d: a call met pages given up and succeeded",
		     round);
	if (!err) {
		for (k = 0; k < (int)n; k++) {
			b->st[i + k] = commit ? P_COMMITTED : P_RESERVED;
			if (commit && !holds(b->base + (i + k) * pg, pg, 0))
				FAIL("round %d: a commit gave page %zu with "
				     "bytes in it", round, i + k);
			if (commit) {
				b->val[i + k] = (round + k) % 250 + 1;
				fill(b->base + (i + k) * pg, pg,
				     b->val[i + k]);
			}
		}
	} else if (err == -EEXIST) {
		if (!given && !meets(b, i, n, P_UNSURE) &&
		    !(commit && meets(b, i, n, P_COMMITTED)))
			FAIL("round %d: EEXIST for pages of its own (%s of "
			     "pages %zu-%zu, the first %d, state %d)", round,
			     commit ? "a commit" : "a decommit", i, i + n - 1,
			     (int)b->st[i], (int)state_of((uintptr_t)b->base +
							  i * pg));
	} else if (!out_of_memory(-err)) {
		FAIL("round %d: %s", round, errname(-err));
	} else {
		after_failure(b, i, n, commit, round);
	}
	check_books(b, round);
}

/*
 * rounds commits and decommits at random, drawn from *seed, in a
 * reservation of its own, the books checked after each; released.
 */
static void books_run(struct books *b, unsigned int *seed, int rounds)
{
	struct ncb_resv *r;
	size_t i, n;
	int round;

	if (ncb_resv_new(&r, NULL, RPAGES * pg, NULL))
		FAIL("ncb_resv_new");
	b->base = ncb_resv_addr(r);
	for (round = 0; round < rounds; round++) {
		*seed = *seed * 1103515245 + 12345;
		i = (*seed >> 8) % RPAGES;
		n = 1 + (*seed >> 16) % 4;
		if (i + n > RPAGES)
			n = RPAGES - i;
		resv_step(r, b, i, n, (*seed >> 24) & 1, round);
	}
	if (ncb_resv_release(r))
		FAIL("ncb_resv_release");
}

/*
 * Commits and decommits at random in a reservation of 16 pages: the
 * books and the address space agree after every call, and a committed
 * page keeps its bytes unless a call on it reports failure and the
 * kernel may have unmapped it.
 */
TEST(reservation_books)
{
	struct books b = { 0 };
	unsigned int seed = 12345;

	require_prot_none_in_maps();
	b.unmap_first = getenv("NCB_FAULTS_UNMAP_FIRST") != NULL;
	books_run(&b, &seed, 4 * ROUNDS);
}

/* A thread of the soak: a reservation of its own, ops calls on it. */
struct soaker {
	pthread_t t;
	unsigned int seed;
	int ops, unmap_first;
};

static void *soak_thread(void *arg)
{
	struct soaker *k = arg;
	struct books b = { 0 };

	b.unmap_first = k->unmap_first;
	books_run(&b, &k->seed, k->ops);
	return NULL;
}

/*
 * A soak: threads with reservations of their own, commits and
 * decommits at random, the books checked after every call, then a
 * forked child doing the same with its copy of the library's state.
 * NCB_SOAK_OPS calls a thread (make soak: many; make check: a few).
 */
TEST(soak)
{
	const char *e = getenv("NCB_SOAK_OPS");
	int ops = e ? atoi(e) : 200, i, st, unmap_first;
	struct soaker k[4];
	pid_t pid;

	require_prot_none_in_maps();
	/*
	 * Under injection, make soak's (it sets NCB_SOAK_OPS): its threads
	 * draw the failures in an order no seed fixes, so a run there is
	 * not repeatable, as every check's must be.
	 */
	if (!e && test_faults(1)) {
		test_faults(0);
		SKIP("under injection, the soak is make soak's");
	}
	/* Seen with plain mmap and mremap in four threads, no library. */
	if (test_qemu())
		SKIP("qemu-user's /proc/self/maps can miss a thread's "
		     "mapping while another thread maps");
	unmap_first = getenv("NCB_FAULTS_UNMAP_FIRST") != NULL;
	for (i = 0; i < 4; i++) {
		k[i].seed = (unsigned int)(i + 1) * 7919;
		k[i].ops = ops;
		k[i].unmap_first = unmap_first;
		ASSERT_EQ(pthread_create(&k[i].t, NULL, soak_thread, &k[i]),
			  0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(k[i].t, NULL);
	pid = fork();
	ASSERT_NE(pid, -1);
	if (!pid) {
		k[0].ops = ops / 4 + 1;
		soak_thread(&k[0]);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_EQ(st, 0);
	printf("# 4 threads of %d calls, and a child of %d, the books "
	       "right after each\n", ops, ops / 4 + 1);
}

/* Nothing of a program is left when loading it fails. */
TEST(load_leaves_nothing)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	char why[256];
	int i, err, loaded = 0, before = mappings_of("/true\n");

	if (ncb_elf_open(&e, "/bin/true", why, sizeof(why)))
		SKIP("/bin/true: %s", why);
	for (i = 0; i < ROUNDS; i++) {
		test_faults(1);
		err = ncb_elf_load(e, NULL, &img, why, sizeof(why));
		test_faults(0);
		if (!err) {
			loaded++;
			if (state_of((uintptr_t)img.start) == UNMAPPED)
				FAIL("round %d: loaded, not there", i);
			ASSERT_EQ(ncb_elf_unload(&img), 0);
		} else if (!out_of_memory(-err)) {
			FAIL("round %d: %s (%s)", i, errname(-err), why);
		}
		if (mappings_of("/true\n") != before)
			FAIL("round %d: %s, and the program's mappings are "
			     "left", i, err ? "refused" : "unloaded");
	}
	ncb_elf_close(e);
	printf("# loaded %d of %d\n", loaded, ROUNDS);
}

/* This process's address space, in bytes (VmSize). */
static size_t vm_size(void)
{
	char *p = strstr(read_maps_status(), "VmSize:");

	return p ? (size_t)strtoul(p + 7, NULL, 10) << 10 : 0;
}

/*
 * The address space's limit (RLIMIT_AS), a real one: with a page of room
 * left, a two-page placement fails with ENOMEM and leaves its range free
 * (the claim's growing and its cleanup meet the limit too), a move
 * leaves its source, and a reservation's commits, which need no more
 * room than their pages take, succeed (where the room to map elsewhere
 * is missing, over the pages).
 */
TEST(address_space_limit)
{
	struct rlimit rl;
	struct ncb_resv *r;
	char *a[8], *src, *base, *p;
	int i;

	if (test_runtime_maps() || test_qemu())
		SKIP("the runtime maps memory of its own as it goes");
	/* Made first: else they could land in an area's hole. */
	src = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(src != MAP_FAILED);
	fill(src, 2 * pg, 0x3c);
	ASSERT_EQ(ncb_resv_new(&r, NULL, 8 * pg, NULL), 0);
	base = ncb_resv_addr(r);
	for (i = 0; i < 8; i++)
		a[i] = area();
	/* Warm: what the calls below use of the library is set up. */
	ncb__probe();
	rl.rlim_cur = rl.rlim_max = vm_size() + pg;
	if (setrlimit(RLIMIT_AS, &rl))
		SKIP("setrlimit(RLIMIT_AS): %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		p = ncb_mmap(a[i] + pg, 2 * pg, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(p == MAP_FAILED);
		ASSERT_ERRNO(ENOMEM);
		sentinels_intact(a[i]);
		if (!all_in(a[i], 1, 2, UNMAPPED))
			FAIL("a refused placement left its range taken");
	}
	for (i = 4; i < 8; i++) {
		p = ncb_mremap(src, 2 * pg, 2 * pg,
			       MREMAP_MAYMOVE | MREMAP_FIXED, a[i] + pg);
		if (p == MAP_FAILED) {
			if (!holds(src, 2 * pg, 0x3c))
				FAIL("a refused move lost its source");
			if (!all_in(a[i], 1, 2, UNMAPPED))
				FAIL("a refused move left its destination "
				     "taken");
		} else {
			ASSERT_TRUE(p == a[i] + pg);
			src = p;
		}
		sentinels_intact(a[i]);
	}
	for (i = 0; i < 8; i += 2) {
		ASSERT_EQ(ncb_resv_commit(r, base + i * pg, 2 * pg,
					  PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
			  0);
		fill(base + i * pg, 2 * pg, 0x40 + i);
	}
	for (i = 0; i < 8; i += 2)
		if (!holds(base + i * pg, 2 * pg, 0x40 + i))
			FAIL("committed pages %d-%d lost", i, i + 1);
	ASSERT_EQ(ncb_resv_decommit(r, base, 8 * pg), 0);
	ASSERT_EQ(ncb_resv_release(r), 0);
}

/* A number of /proc/sys, or -1. */
static long sysctl_get(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static int sysctl_set(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n, ok;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	ok = write(fd, buf, (size_t)n) == n;
	close(fd);
	return ok ? 0 : -1;
}

#define OVERCOMMIT "/proc/sys/vm/overcommit_memory"
#define OVERCOMMIT_KB "/proc/sys/vm/overcommit_kbytes"
#define OVERCOMMIT_RATIO "/proc/sys/vm/overcommit_ratio"

/* What the machine has committed (/proc/meminfo), in KiB; 0 unknown. */
static long committed_kb(void)
{
	char *p = strstr(read_proc("/proc/meminfo"), "Committed_AS:");

	return p ? strtol(p + 13, NULL, 10) : 0;
}

#define BIG (1UL << 30)

/* A free range of len bytes: mapped and unmapped again. */
static char *free_range(size_t len)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(munmap(p, len), 0);
	return p;
}

/*
 * The kernel's own answer, for the record (the library's is asserted):
 * a plain MAP_FIXED over a range of our own, refused its charge.
 */
static void plain_fixed_over_charge(void)
{
	char *p = mmap(NULL, BIG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0), *q;

	ASSERT_TRUE(p != MAP_FAILED);
	q = mmap(p, BIG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (q != MAP_FAILED)
		FAIL("a plain MAP_FIXED of 1 GiB past the commit limit "
		     "succeeded");
	printf("# a plain MAP_FIXED refused its charge (%s) and %s\n",
	       errname(errno), state_of((uintptr_t)p) == UNMAPPED ?
	       "had unmapped the old range first (as before 6.12)" :
	       "left the old range (as since 6.12)");
	(void)munmap(p, BIG);
}

/* commit_limit's calls, in a process of their own: the limit is set. */
static void commit_limit_calls(void)
{
	struct ncb_resv *r;
	char *base, *src, *at, *p;
	long kb;
	int err;

	/* Made before the limit: the reservation's placeholder is free. */
	ASSERT_EQ(ncb_resv_new(&r, NULL, BIG + 32 * pg, NULL), 0);
	base = ncb_resv_addr(r);
	ASSERT_EQ(ncb_resv_commit(r, base, 16 * pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 0);
	fill(base, 16 * pg, 0x77);
	src = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(src != MAP_FAILED);
	fill(src, 16 * pg, 0x33);
	ncb__probe();
	kb = committed_kb();
	ASSERT_GT(kb, 0);
	/*
	 * Room for what the calls need besides the 1 GiB: the kernel keeps
	 * back a 32nd of the process's size (its total_vm, the reservation
	 * included), at most vm.user_reserve_kbytes (__vm_enough_memory).
	 */
	ASSERT_EQ(sysctl_set(OVERCOMMIT_KB, kb + (256 << 10)), 0);
	ASSERT_EQ(sysctl_set(OVERCOMMIT, 2), 0);

	/* A reservation's commit: refused, nothing of it lost. */
	err = ncb_resv_commit(r, base + 16 * pg, BIG, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_EQ(err, -ENOMEM);
	if (!holds(base, 16 * pg, 0x77))
		FAIL("a refused commit lost the committed pages' bytes");
	if (state_of((uintptr_t)base + 16 * pg) == WRITABLE ||
	    state_of((uintptr_t)base + BIG) == WRITABLE)
		FAIL("a refused commit left writable pages");
	err = ncb_resv_commit(r, base + 16 * pg, 16 * pg,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (err && err != -EEXIST)
		FAIL("a commit within the limit: %s", errname(-err));
	printf("# after the refusal the pages were %s\n", err ?
	       "given up (the kernel may have unmapped them)" :
	       "the reservation's still");

	/* A placement: refused, its range free. */
	at = free_range(BIG);
	p = ncb_mmap(at, BIG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p == MAP_FAILED);
	ASSERT_ERRNO(ENOMEM);
	ASSERT_EQ(ncb_range_free(at, BIG), 1);

	/* A move that grows past the limit: refused, the source kept. */
	at = free_range(BIG);
	p = ncb_mremap(src, 16 * pg, BIG, MREMAP_MAYMOVE | MREMAP_FIXED, at);
	ASSERT_TRUE(p == MAP_FAILED);
	ASSERT_ERRNO(ENOMEM);
	if (!holds(src, 16 * pg, 0x33))
		FAIL("a refused move lost its source");
	ASSERT_EQ(ncb_range_free(at, BIG), 1);

	plain_fixed_over_charge();
	ASSERT_EQ(ncb_resv_release(r), 0);
}

/*
 * Strict overcommit (vm.overcommit_memory=2), the limit 256 MiB above
 * what the machine has committed: writable private memory past it is
 * refused at its charge, which kernels before 6.12 take after a
 * MAP_FIXED has unmapped the old range (mmap_region, 6.1: do_mas_munmap,
 * then security_vm_enough_memory_mm) and 6.12 before it touches anything
 * (__mmap_region's vms_gather_munmap_vmas).  On either, a reservation's
 * commit of 1 GiB fails with ENOMEM, its committed pages keep their
 * bytes and the rest stays reserved or is given up; ncb_mmap of 1 GiB
 * leaves its range free; ncb_mremap growing a mapping to 1 GiB elsewhere
 * keeps the source.  The setting is the machine's: only where the
 * machine is the test's own (the VM rows), put back whatever happens.
 */
TEST(commit_limit)
{
	long mode, kb, ratio;
	pid_t pid;
	int st;

	if (!test_vm())
		SKIP("strict overcommit is the whole machine's: the VM rows "
		     "set it");
	mode = sysctl_get(OVERCOMMIT);
	kb = sysctl_get(OVERCOMMIT_KB);
	ratio = sysctl_get(OVERCOMMIT_RATIO);
	if (mode < 0 || kb < 0 || ratio < 0 || access(OVERCOMMIT, W_OK))
		SKIP("vm.overcommit_* cannot be read and set here");
	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		commit_limit_calls();
		fflush(stdout);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	/* overcommit_kbytes and _ratio: setting one clears the other. */
	ASSERT_EQ(sysctl_set(OVERCOMMIT, mode), 0);
	ASSERT_EQ(kb ? sysctl_set(OVERCOMMIT_KB, kb) :
		       sysctl_set(OVERCOMMIT_RATIO, ratio), 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("the calls under the limit: status %#x", st);
}

#define CGROOT "/sys/fs/cgroup"

static char memcg[64];

static int put(const char *dir, const char *file, const char *text)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * The group's limit at what it uses now around each call (any charge
 * the call makes past the CPU's stock is refused: a VMA, a maple node,
 * the maps' buffer), and lifted for the checks: a page fault at the
 * limit with no task to kill would retry for ever.
 */
static void memcg_arm(int on)
{
	char path[96], buf[32];
	long cur;

	if (!on) {
		if (put(memcg, "memory.max", "max"))
			FAIL("memory.max: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/memory.current", memcg);
	cur = strtol(read_proc(path), NULL, 10);
	snprintf(buf, sizeof(buf), "%ld", cur);
	if (put(memcg, "memory.max", buf))
		FAIL("memory.max: %s", strerror(errno));
}

/* Pages of stack the calls may reach, faulted in before any limit. */
static void __attribute__((noinline)) stack_touched(void)
{
	volatile char deep[256 << 10];

	memset((char *)deep, 1, sizeof(deep));
}

/* memory_cgroup's calls, in the group. */
static void memcg_calls(void)
{
	struct books b = { .doubtful = 1, .arm = memcg_arm };
	unsigned int seed = 4242;

	if (put(memcg, "cgroup.procs", "0") ||
	    put("/proc/self", "oom_score_adj", "-1000"))
		FAIL("joining the group: %s", strerror(errno));
	(void)put(memcg, "memory.swap.max", "0");
	stack_touched();
	books_run(&b, &seed, 4 * ROUNDS);
	printf("# %d of %d calls refused at the group's limit\n", b.refused,
	       4 * ROUNDS);
}

/* The child's status, or -1 if it had to be killed after 300 s. */
static int wait_or_kill(pid_t pid)
{
	int st, i;

	for (i = 0; i < 3000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(100 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/*
 * A memory cgroup (v2) at its limit: the kernel's own allocations for a
 * call (VMAs, maple tree nodes, charged to the group) fail with ENOMEM,
 * at any step of the call, as the injector's do, and a reservation's
 * books and pages agree after every commit and decommit; a page given
 * up may be, as the maps may be unreadable in the call.  In a group
 * made in the machine's root (the memory controller turned on there):
 * only where the machine is the test's own (the VM rows).
 */
TEST(memory_cgroup)
{
	pid_t pid;
	int st;

	if (!test_vm())
		SKIP("the memory controller is turned on in the machine's "
		     "root group: the VM rows do it");
	if (access(CGROOT "/cgroup.controllers", R_OK))
		SKIP("no cgroup v2 hierarchy at " CGROOT);
	snprintf(memcg, sizeof(memcg), CGROOT "/ncb-faults-%d", (int)getpid());
	if (put(CGROOT, "cgroup.subtree_control", "+memory") ||
	    mkdir(memcg, 0755))
		SKIP("no memory cgroup of our own: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		memcg_calls();
		fflush(stdout);
		_exit(0);
	}
	st = wait_or_kill(pid);
	rmdir(memcg);
	if (st == -1)
		FAIL("the calls did not end in 300 s (at the group's limit)");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("the calls in the group: status %#x", st);
}

TEST_MAIN(T(mmap_free_range), T(mmap_taken_range),
	  T(mmap_shared_validate), T(failed_placement_spares_the_hole),
	  T(mremap_to_free_range),
	  T(reservation_books), T(soak), T(load_leaves_nothing),
	  T(address_space_limit), T(commit_limit), T(memory_cgroup))

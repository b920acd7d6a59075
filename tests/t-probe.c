/* SPDX-License-Identifier: MIT */
/* The kernel probe: its verdict, its API, and its thread safety. */
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include "ncbtest.h"

static int expected_mode(void)
{
	const char *e = getenv("NCB_EXPECT_NOREPLACE");
	int m;

	if (!e)
		return 0;
	for (m = NCB_NOREPLACE_HONOURED; m <= NCB_NOREPLACE_REPLACES; m++)
		if (!strcmp(e, ncb_noreplace_name(m)))
			return m;
	FAIL("NCB_EXPECT_NOREPLACE=%s names no behaviour", e);
}

/* The matrix says what each row really does; the probe must agree. */
TEST(verdict_matches_environment)
{
	struct ncb_probe p = { .size = sizeof(p) };
	int want = expected_mode();

	ASSERT_EQ(ncb_kernel_probe(&p), 0);
	if (want)
		ASSERT_EQ(p.noreplace, want);
	else
		ASSERT_TRUE(p.noreplace >= NCB_NOREPLACE_HONOURED &&
			    p.noreplace <= NCB_NOREPLACE_REPLACES);
	ASSERT_EQ(p.page_size, test_page());
}

#define MAX_AREAS 4096

struct areas {
	int n;
	uint64_t none_bytes;	/* anonymous PROT_NONE: the probe's kind */
	struct ncb_mapping a[MAX_AREAS];
};

/* The maps into static storage: reading them must not change them. */
static void snapshot(struct areas *s)
{
	struct ncb_maps *m;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	int r;

	s->n = 0;
	s->none_bytes = 0;
	ASSERT_EQ(ncb_maps_open(&m, 0), 0);
	while ((r = ncb_maps_next(m, &e)) == 1) {
		if (s->n == MAX_AREAS)
			FAIL("more than %d mappings", MAX_AREAS);
		if (e.prot == PROT_NONE && !e.inode && !*e.path)
			s->none_bytes += e.end - e.start;
		/* The stack may grow while we look; its path is static. */
		e.path = strcmp(e.path, "[stack]") ? "" : "[stack]";
		s->a[s->n++] = e;
	}
	ASSERT_EQ(r, 0);
	ncb_maps_close(m);
}

static struct areas before, after;

/*
 * The probe leaves no mapping behind: the maps around it are the same,
 * mapping for mapping (but the stack's growth).  Under an emulator its
 * own mappings come and go in the same maps: there only the anonymous
 * PROT_NONE mappings the probe makes are compared, byte for byte.
 */
TEST(probe_leaves_nothing)
{
	struct ncb_probe p = { .size = sizeof(p) };
	int i;

	/* Warm the reader: its buffers come from malloc once. */
	snapshot(&after);
	snapshot(&before);
	ASSERT_EQ(ncb_kernel_probe(&p), 0);
	snapshot(&after);
	ASSERT_EQ(after.none_bytes, before.none_bytes);
	if (test_slow())
		return;
	ASSERT_EQ(after.n, before.n);
	for (i = 0; i < before.n; i++) {
		struct ncb_mapping *x = &before.a[i], *y = &after.a[i];

		if (!strcmp(x->path, "[stack]") && !strcmp(y->path, "[stack]"))
			continue;
		if (x->start != y->start || x->end != y->end ||
		    x->prot != y->prot)
			FAIL("mapping %d: %#" PRIx64 "-%#" PRIx64 " %d, now %#"
			     PRIx64 "-%#" PRIx64 " %d", i, x->start, x->end,
			     x->prot, y->start, y->end, y->prot);
	}
}

TEST(bad_arguments)
{
	struct ncb_probe p = { .size = 0 };

	ASSERT_EQ(ncb_kernel_probe(NULL), -EINVAL);
	ASSERT_EQ(ncb_kernel_probe(&p), -EINVAL);
	p.size = sizeof(size_t);
	ASSERT_EQ(ncb_kernel_probe(&p), -EINVAL);
}

/*
 * The release read from osrelease is the one uname gives, patch and all,
 * or a later patch of the same series where a distribution's version
 * names the upstream release it was built from.
 */
TEST(kernel_release)
{
	unsigned int maj = 0, min = 0, pat = 0;
	unsigned long want, got;
	struct utsname u;

	ASSERT_EQ(uname(&u), 0);
	if (sscanf(u.release, "%u.%u.%u", &maj, &min, &pat) < 2)
		SKIP("uname's release \"%s\" has no version", u.release);
	if (maj == 2 && min == 6 && personality(0xffffffff) & UNAME26)
		SKIP("UNAME26: uname says 2.6");
	want = maj << 16 | (min > 255 ? 255 : min) << 8 |
	       (pat > 255 ? 255 : pat);
	got = ncb_core_kernel_release();
	if (pat)
		ASSERT_UEQ(got, want);
	ASSERT_UEQ(got >> 8, want >> 8);
	ASSERT_UGE(got, want);
}

struct release_case {
	const char *osrelease, *version, *signature;
	unsigned long want;
	int bound;		/* over version: 1 a FIFO, 2 /dev/zero */
};

#define REL(a, b, c) ((a) << 16 | (b) << 8 | (c))

static const struct release_case release_cases[] = {
	{ "6.1.0-57-amd64",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-03-04)", NULL,
	  REL(6, 1, 192), 0 },
	{ "6.12.57+deb12-amd64",
	  "#1 SMP PREEMPT_DYNAMIC Debian 6.12.57-1~deb12u1 (2025-11-05)",
	  NULL, REL(6, 12, 57), 0 },
	{ "4.19.0-27-amd64", "#1 SMP Debian 4.19.316-1 (2024-06-25)", NULL,
	  REL(4, 19, 255), 0 },
	{ "6.8.0-45-generic",
	  "#45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024",
	  "Ubuntu 6.8.0-45.45-generic 6.8.12", REL(6, 8, 12), 0 },
	{ "6.18.0", "#1 SMP PREEMPT_DYNAMIC @0", NULL, REL(6, 18, 0), 0 },
	{ "6.6.92-arch1-1", "#1 SMP PREEMPT_DYNAMIC 6.6.93", NULL,
	  REL(6, 6, 92), 0 },
	/* Another series named in the version changes nothing. */
	{ "6.1.0-1-amd64", "#1 SMP Debian 5.10.226-1 6.10.3 16.1.9", NULL,
	  REL(6, 1, 0), 0 },
	/* Hostile contents: held in range, never overflowed. */
	{ "6.1.0", "#1 6.1.99999999999999999999999999999999 6.1.", NULL,
	  REL(6, 1, 255), 0 },
	{ "99999999999999999999.300.7", "", NULL, REL(255, 255, 7), 0 },
	{ "6.1.0", "6.1.3.6.1.7", NULL, REL(6, 1, 3), 0 },
	{ "linux", "#1 6.1.20", NULL, 0, 0 },
	{ "", NULL, NULL, 0, 0 },
	/* Neither waited for nor read for ever. */
	{ "6.1.0", "", NULL, REL(6, 1, 0), 1 },
	{ "6.1.0", "", NULL, REL(6, 1, 0), 2 },
};

static int put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static const char *const no_fake_proc[] = {
	"no mount namespace here",
	"cannot mount a tmpfs over /proc",
	"cannot write the tmpfs",
};

/* A /proc of the case's files only, or the reason why not (an index). */
static int fake_proc(const struct release_case *c)
{
	if (unshare(CLONE_NEWNS) && unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return 0;
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("ncb", "/proc", "tmpfs", 0, NULL))
		return 1;
	if (mkdir("/proc/sys", 0755) || mkdir("/proc/sys/kernel", 0755) ||
	    put_file("/proc/sys/kernel/osrelease", c->osrelease) ||
	    (c->version &&
	     put_file("/proc/sys/kernel/version", c->version)) ||
	    (c->signature &&
	     put_file("/proc/version_signature", c->signature)))
		return 2;
	if (c->bound == 1 && (unlink("/proc/sys/kernel/version") ||
			      mkfifo("/proc/sys/kernel/version", 0644)))
		return 2;
	if (c->bound == 2 && mount("/dev/zero", "/proc/sys/kernel/version",
				   "none", MS_BIND, NULL))
		return 2;
	return -1;
}

/*
 * In a child of its own (the answer is read once per process) under
 * fake_proc: the release, or -1 with the reason in *why.
 */
static long release_under(const struct release_case *c, const char **why)
{
	unsigned long v = 0;
	int p[2], st, no;
	pid_t pid;

	ASSERT_EQ(pipe(p), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		no = fake_proc(c);
		if (no >= 0)
			_exit(77 + no);
		v = ncb_core_kernel_release();
		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	st = WEXITSTATUS(st);
	if (st >= 77 && st < 80) {
		close(p[0]);
		*why = no_fake_proc[st - 77];
		return -1;
	}
	ASSERT_EQ(st, 0);
	ASSERT_EQ(read(p[0], &v, sizeof(v)), (ssize_t)sizeof(v));
	close(p[0]);
	return (long)v;
}

/* Distributions' names for their kernels, and files not to be trusted. */
TEST(release_of_distributions)
{
	const char *why = NULL;
	unsigned int i;
	long v;

	for (i = 0; i < sizeof(release_cases) / sizeof(*release_cases); i++) {
		v = release_under(&release_cases[i], &why);
		if (v < 0)
			SKIP("%s", why);
		if ((unsigned long)v != release_cases[i].want)
			FAIL("osrelease \"%s\", version \"%s\": %#lx, "
			     "want %#lx", release_cases[i].osrelease,
			     release_cases[i].version ?
			     release_cases[i].version : "(none)",
			     (unsigned long)v, release_cases[i].want);
	}
}

TEST(names)
{
	ASSERT_EQ(strcmp(ncb_noreplace_name(NCB_NOREPLACE_HONOURED),
			 "honoured"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(NCB_NOREPLACE_IGNORED),
			 "ignored"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(NCB_NOREPLACE_PARTIAL),
			 "partial"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(NCB_NOREPLACE_REJECTED),
			 "rejected"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(NCB_NOREPLACE_REPLACES),
			 "replaces"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(0), "unknown"), 0);
	ASSERT_EQ(strcmp(ncb_noreplace_name(99), "unknown"), 0);
}

#define RACERS 8

static pthread_barrier_t start;

static void *racer(void *arg)
{
	struct ncb_probe *p = arg;

	pthread_barrier_wait(&start);
	p->size = sizeof(*p);
	return (void *)(intptr_t)ncb_kernel_probe(p);
}

/* The first use from many threads at once: one verdict for all. */
TEST(first_use_from_threads)
{
	struct ncb_probe p[RACERS];
	pthread_t t[RACERS];
	void *ret;
	int i;

	pthread_barrier_init(&start, NULL, RACERS);
	for (i = 0; i < RACERS; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, racer, &p[i]), 0);
	for (i = 0; i < RACERS; i++) {
		ASSERT_EQ(pthread_join(t[i], &ret), 0);
		ASSERT_EQ((intptr_t)ret, 0);
		ASSERT_EQ(p[i].noreplace, p[0].noreplace);
		ASSERT_EQ(p[i].procmap_query, p[0].procmap_query);
	}
}

/* The compatibility defines. */
TEST(compat_defines)
{
#ifdef __alpha__
	ASSERT_EQ(NCB_MAP_FIXED_NOREPLACE, 0x200000);
#else
	ASSERT_EQ(NCB_MAP_FIXED_NOREPLACE, 0x100000);
#endif
	ASSERT_EQ(MAP_FIXED_NOREPLACE, NCB_MAP_FIXED_NOREPLACE);
	ASSERT_EQ(MAP_FIXED_SAFE, MAP_FIXED_NOREPLACE);
}

TEST_MAIN(T(verdict_matches_environment), T(probe_leaves_nothing),
	  T(bad_arguments), T(kernel_release),
	  T(release_of_distributions), T(names),
	  T(first_use_from_threads), T(compat_defines))

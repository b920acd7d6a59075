/* SPDX-License-Identifier: MIT */
/* The kernel probe: its verdict, its API, and its thread safety. */
#include <pthread.h>
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

/* The release read from osrelease is the one uname gives, patch and all. */
TEST(kernel_release)
{
	unsigned int maj = 0, min = 0, pat = 0;
	unsigned long want;
	struct utsname u;

	ASSERT_EQ(uname(&u), 0);
	if (sscanf(u.release, "%u.%u.%u", &maj, &min, &pat) < 2)
		SKIP("uname's release \"%s\" has no version", u.release);
	if (maj == 2 && min == 6 && personality(0xffffffff) & UNAME26)
		SKIP("UNAME26: uname says 2.6");
	want = maj << 16 | (min > 255 ? 255 : min) << 8 |
	       (pat > 255 ? 255 : pat);
	ASSERT_UEQ(ncb_core_kernel_release(), want);
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
	  T(bad_arguments), T(kernel_release), T(names),
	  T(first_use_from_threads), T(compat_defines))

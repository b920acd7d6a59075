/* SPDX-License-Identifier: MIT */
/*
 * The address-space model: layouts by hand, then differential testing:
 * random operations run in a real child process and in the model, and the
 * whole maps are compared after every one.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ncbtest.h"

#define PG 4096ULL

/* A release as ncb_core_kernel_release gives it. */
#define REL(major, minor, patch) \
	((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(patch))

/*
 * A 47-bit x86-64 space without ASLR under the rules of a release, THP
 * alignment as that release does it (thp 0) or forced (1).
 */
static struct ncb_as *model_of(uint32_t release, int thp)
{
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = PG,
				 .mmap_min_addr = 0x10000,
				 .task_size = 0x7ffffffff000ULL,
				 .mmap_base = 0x7ffff7fff000ULL, .thp = thp,
				 .release = release };
	struct ncb_as *as;

	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	return as;
}

/* The hand-made layouts: Linux 6.18's rules, whatever the kernel. */
static struct ncb_as *model(void)
{
	return model_of(REL(6, 18, 0), 1);
}

static uint64_t map(struct ncb_as *as, uint64_t addr, uint64_t len, int prot,
		    int flags)
{
	uint64_t got = 0;
	int err = ncb_as_mmap(as, addr, len, prot, flags | MAP_ANONYMOUS, 0, 0,
			      &got);

	if (err)
		FAIL("ncb_as_mmap(%#jx, %#jx): %s", (uintmax_t)addr,
		     (uintmax_t)len, errname(-err));
	return got;
}

static void expect_dump(struct ncb_as *as, const char *want)
{
	char buf[4096];

	ncb_as_dump(as, buf, sizeof(buf));
	if (strcmp(buf, want))
		FAIL("dump:\n%s\nwanted:\n%s", buf, want);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define P (MAP_PRIVATE)
#define RW (PROT_READ | PROT_WRITE)

TEST(fixed_split_merge)
{
	struct ncb_as *as = model();
	uint64_t a = 0x100000000ULL;

	map(as, a, 4 * PG, PROT_READ, P | MAP_FIXED);
	map(as, a + 4 * PG, 4 * PG, PROT_READ, P | MAP_FIXED);
	/* Adjacent, compatible: one area. */
	expect_dump(as, "100000000-100008000 r--p 00000000 00:00 0 \n");
	/* Replacing the middle splits it in three. */
	map(as, a + 2 * PG, 2 * PG, RW, P | MAP_FIXED);
	expect_dump(as, "100000000-100002000 r--p 00000000 00:00 0 \n"
			"100002000-100004000 rw-p 00000000 00:00 0 \n"
			"100004000-100008000 r--p 00000000 00:00 0 \n");
	ASSERT_EQ(ncb_as_count(as), 3);
	/* mprotect back: all merges again. */
	ASSERT_EQ(ncb_as_mprotect(as, a + 2 * PG, 2 * PG, PROT_READ), 0);
	ASSERT_EQ(ncb_as_count(as), 1);
	ncb_as_free(as);
}

/*
 * Loaded areas have pages: the pieces of one share its anon_vma and merge
 * again, as in the kernel; two loaded areas, or a loaded one and a new
 * one, never do (the maps cannot say whether a fork chained others).
 */
TEST(loaded_pieces_merge_again)
{
	static const char maps[] =
		"100000000-100008000 rw-p 00000000 00:00 0 \n"
		"100008000-100010000 r--p 00000000 00:00 0 \n";
	struct ncb_as *as = model();
	uint64_t a = 0x100000000ULL;

	ASSERT_EQ(ncb_as_load(as, maps, sizeof(maps) - 1), 0);
	ASSERT_EQ(ncb_as_mprotect(as, a + 2 * PG, 2 * PG, PROT_READ), 0);
	ASSERT_EQ(ncb_as_count(as), 4);
	ASSERT_EQ(ncb_as_mprotect(as, a + 2 * PG, 2 * PG, RW), 0);
	expect_dump(as, "100000000-100008000 rw-p 00000000 00:00 0 \n"
			"100008000-100010000 r--p 00000000 00:00 0 \n");
	/* Made alike, two loaded areas stay two. */
	ASSERT_EQ(ncb_as_mprotect(as, a + 8 * PG, 8 * PG, RW), 0);
	ASSERT_EQ(ncb_as_count(as), 2);
	/* A piece moved away and back joins its own area again. */
	ASSERT_EQ(ncb_as_mprotect(as, a + 12 * PG, 4 * PG, PROT_READ), 0);
	ASSERT_EQ(ncb_as_count(as), 3);
	ASSERT_EQ(ncb_as_mprotect(as, a + 12 * PG, 4 * PG, RW), 0);
	ASSERT_EQ(ncb_as_count(as), 2);
	/* A new area beside a loaded one keeps apart. */
	map(as, a + 16 * PG, 4 * PG, RW, P | MAP_FIXED);
	ASSERT_EQ(ncb_as_count(as), 3);
	ncb_as_free(as);
}

TEST(noreplace_and_errors)
{
	struct ncb_as *as = model();
	uint64_t a = 0x100000000ULL, got;

	map(as, a + 2 * PG, 2 * PG, PROT_READ, P | MAP_FIXED);
	ASSERT_EQ(ncb_as_mmap(as, a, 3 * PG, PROT_READ, P | MAP_ANONYMOUS |
			      MAP_FIXED_NOREPLACE, 0, 0, &got), -EEXIST);
	ASSERT_EQ(ncb_as_mmap(as, a, 2 * PG, PROT_READ, P | MAP_ANONYMOUS |
			      MAP_FIXED_NOREPLACE, 0, 0, &got), 0);
	ASSERT_EQ(ncb_as_mmap(as, a + 1, PG, PROT_READ, P | MAP_ANONYMOUS |
			      MAP_FIXED, 0, 0, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mmap(as, a, 0, PROT_READ, P | MAP_ANONYMOUS, 0, 0,
			      &got), -EINVAL);
	ASSERT_EQ(ncb_as_mmap(as, 0x1000, PG, PROT_READ, P | MAP_ANONYMOUS |
			      MAP_FIXED, 0, 0, &got), -EPERM);
	ASSERT_EQ(ncb_as_mmap(as, a, PG, PROT_READ, MAP_ANONYMOUS, 0, 0, &got),
		  -EINVAL);
	ASSERT_EQ(ncb_as_munmap(as, a + 1, PG), -EINVAL);
	ASSERT_EQ(ncb_as_munmap(as, a, 0), -EINVAL);
	ASSERT_EQ(ncb_as_mprotect(as, a, 0, PROT_READ), 0);
	ASSERT_EQ(ncb_as_mprotect(as, a + 6 * PG, PG, PROT_READ), -ENOMEM);
	ASSERT_EQ(ncb_as_mprotect(as, a, PG, 0x100), -EINVAL);
	ncb_as_free(as);
}

/* Top-down: below mmap_base, keeping clear of the stack's guard gap. */
TEST(topdown_and_hints)
{
	struct ncb_as *as = model();
	uint64_t base = 0x7ffff7fff000ULL, a;

	a = map(as, 0, PG, PROT_READ, P);
	ASSERT_EQ(a, base - PG);
	a = map(as, 0, 2 * PG, PROT_READ, P);
	ASSERT_EQ(a, base - 3 * PG);
	/* A free hint is taken, rounded up to a page. */
	a = map(as, 0x200000001ULL, PG, PROT_READ, P);
	ASSERT_EQ(a, 0x200001000ULL);
	/* An occupied one is not. */
	a = map(as, 0x200001000ULL, PG, PROT_READ, P);
	ASSERT_EQ(a, base - 4 * PG);
	/* THP: 2 MiB anonymous maps are aligned to 2 MiB. */
	a = map(as, 0, 2ULL << 20, PROT_READ, P);
	ASSERT_EQ(a & ((2ULL << 20) - 1), 0);
	ncb_as_free(as);
}

/* Nothing free below mmap_base: bottom-up from a third of the way up. */
TEST(bottom_up_fallback)
{
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = PG,
				 .mmap_min_addr = 0x10000,
				 .task_size = 1ULL << 32,
				 .mmap_base = 1ULL << 31, .thp = -1,
				 .release = REL(6, 18, 0) };
	struct ncb_as *as;
	uint64_t a;

	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	map(as, 0x10000, (1ULL << 31) - 0x10000, PROT_NONE, P | MAP_FIXED);
	map(as, 0x90000000ULL, PG, PROT_READ, P | MAP_FIXED);
	a = map(as, 0, PG, PROT_READ, P);
	ASSERT_EQ(a, 1ULL << 31);
	/* Lowest fit above the legacy base, not the highest. */
	a = map(as, 0, 2 * PG, PROT_WRITE, P);
	ASSERT_EQ(a, (1ULL << 31) + PG);
	ASSERT_EQ(ncb_as_mmap(as, 0, 1ULL << 31, PROT_READ, P | MAP_ANONYMOUS,
			      0, 0, &a), -ENOMEM);
	ncb_as_free(as);
}

TEST(guard_gap)
{
	static const char maps[] =
		"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0"
		"                          [stack]\n";
	struct ncb_as *as = model();
	uint64_t a;

	ASSERT_EQ(ncb_as_load(as, maps, strlen(maps)), 0);
	/* A hint just below the stack is refused: it is the guard gap. */
	a = map(as, 0x7ffffffde000ULL - 2 * PG, PG, PROT_READ, P);
	ASSERT_EQ(a, 0x7ffff7fff000ULL - PG);
	/* MAP_FIXED there is allowed. */
	a = map(as, 0x7ffffffde000ULL - 2 * PG, PG, PROT_READ,
		P | MAP_FIXED_NOREPLACE);
	ASSERT_EQ(a, 0x7ffffffde000ULL - 2 * PG);
	ncb_as_free(as);
}

/*
 * Cases the differential run found, cut down to the areas that matter;
 * each was checked against Linux 6.18.
 */
TEST(mremap_regressions)
{
	struct ncb_as *as = model();
	uint64_t a = 0x100000000ULL, t = 0x100100000ULL, got = 0;
	char before[4096], after[4096];

	/* A shrinking move whose kept part leaves the area: EFAULT, and
	 * neither the tail nor the target was unmapped first. */
	map(as, a, 2 * PG, PROT_READ, P | MAP_FIXED);
	map(as, a + 2 * PG, 4 * PG, RW, P | MAP_FIXED);
	map(as, t, 2 * PG, PROT_EXEC, P | MAP_FIXED);
	ncb_as_dump(as, before, sizeof(before));
	ASSERT_EQ(ncb_as_mremap(as, a, 6 * PG, 3 * PG, MREMAP_MAYMOVE |
				MREMAP_FIXED, t, &got), -EFAULT);
	ncb_as_dump(as, after, sizeof(after));
	ASSERT_EQ(strcmp(before, after), 0);
	/* Shrinking in place cuts across areas. */
	ASSERT_EQ(ncb_as_mremap(as, a, 6 * PG, PG, 0, 0, &got), 0);
	ASSERT_EQ(got, a);
	expect_dump(as, "100000000-100001000 r--p 00000000 00:00 0 \n"
			"100100000-100102000 --xp 00000000 00:00 0 \n");
	/* A fixed move of the same size spans areas and gaps; across from
	 * the gap the target keeps what it had (Linux 6.17). */
	map(as, a + 3 * PG, PG, RW, P | MAP_FIXED);
	ASSERT_EQ(ncb_as_mremap(as, a, 4 * PG, 4 * PG, MREMAP_MAYMOVE |
				MREMAP_FIXED, t, &got), 0);
	ASSERT_EQ(got, t);
	expect_dump(as, "100100000-100101000 r--p 00000000 00:00 0 \n"
			"100101000-100102000 --xp 00000000 00:00 0 \n"
			"100103000-100104000 rw-p 00000000 00:00 0 \n");
	/* Same size in place, past the area: nothing to do, no EFAULT. */
	ASSERT_EQ(ncb_as_mremap(as, t, 8 * PG, 8 * PG, MREMAP_MAYMOVE, 0,
				&got), 0);
	/* Errors in the kernel's order. */
	ASSERT_EQ(ncb_as_mremap(as, t, PG, PG, 0x10, 0, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, t + 1, PG, PG, 0, 0, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, t, PG, 0, 0, 0, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, t, PG, PG, MREMAP_FIXED, a, &got),
		  -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, t, PG, 2 * PG, MREMAP_MAYMOVE |
				MREMAP_DONTUNMAP, a, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, t, 2 * PG, PG, MREMAP_MAYMOVE |
				MREMAP_FIXED, t + PG, &got), -EINVAL);
	ASSERT_EQ(ncb_as_mremap(as, a, PG, PG, MREMAP_MAYMOVE |
				MREMAP_FIXED, t + 8 * PG, &got), -EFAULT);
	ASSERT_EQ(ncb_as_mremap(as, t, 0, PG, MREMAP_MAYMOVE, 0, &got),
		  -EINVAL);
	/* Growth: in place when free, else ENOMEM without MREMAP_MAYMOVE. */
	ASSERT_EQ(ncb_as_mremap(as, t, PG, 2 * PG, 0, 0, &got),
		  -ENOMEM);
	ASSERT_EQ(ncb_as_mremap(as, t + 3 * PG, PG, 3 * PG, 0, 0, &got), 0);
	ASSERT_EQ(got, t + 3 * PG);
	ASSERT_EQ(ncb__as_check(as), 0);
	ncb_as_free(as);
}

#define MB2 (2ULL << 20)
#define BASE 0x7ffff7fff000ULL

/* The dump's line of an anonymous area [start, end) of permissions p. */
#define LINE(start, end, p) #start "-" #end " " p " 00000000 00:00 0 \n"

/* The highest place below BASE for len bytes, THP-aligned or not. */
static uint64_t topdown(uint64_t len, int aligned)
{
	if (!aligned)
		return BASE - len;
	return (BASE - len - MB2 + MB2 - 1) & ~(MB2 - 1);
}

/*
 * THP alignment of private anonymous memory by release: none before 6.7
 * (efa7df3e3bb5), then for 2 MiB and more, from 6.12 only for multiples
 * of 2 MiB (d4148aeab412); the padded search takes a hint that holds it
 * as it is, and since 6.13 and 6.12.5 a hint keeps the plain search
 * (249608ee4713).
 */
TEST(thp_by_release)
{
	static const struct {
		uint32_t rel;
		uint64_t len;
		int aligned;
	} c[] = {
		{ REL(6, 1, 192), 2 * MB2, 0 },
		{ REL(6, 7, 0), 2 * MB2, 1 },
		{ REL(6, 7, 0), MB2 + PG, 1 },
		{ REL(6, 7, 0), MB2 - PG, 0 },
		{ REL(6, 12, 118), 2 * MB2, 1 },
		{ REL(6, 12, 118), MB2 + PG, 0 },
		{ REL(6, 18, 0), MB2, 1 },
		{ REL(6, 18, 0), MB2 + PG, 0 },
	};
	uint64_t hint = 0x200000000ULL, roomy = 0x300000000ULL, a;
	struct ncb_as *as;
	unsigned int i;
	int ignored;

	for (i = 0; i < sizeof(c) / sizeof(*c); i++) {
		as = model_of(c[i].rel, 0);
		a = map(as, 0, c[i].len, PROT_READ, P | MAP_NORESERVE);
		/* Only 64-bit tasks align since 6.8 (4ef9ad19e176). */
		if (a != topdown(c[i].len, c[i].aligned &&
				 (sizeof(void *) == 8 ||
				  c[i].rel < REL(6, 8, 0))))
			FAIL("%#x: %#jx bytes at %#jx", c[i].rel,
			     (uintmax_t)c[i].len, (uintmax_t)a);
		ncb_as_free(as);
	}
	/*
	 * A padded range found aligned: its lowest aligned place in 6.7, its
	 * highest since 6.8 (96204e15310c).
	 */
	for (i = 0; i < 2 && sizeof(void *) == 8; i++) {
		as = model_of(i ? REL(6, 8, 0) : REL(6, 7, 0), 0);
		map(as, BASE - 0x1ff000, 0x1ff000, PROT_READ, P | MAP_FIXED);
		a = map(as, 0, MB2, PROT_READ, P);
		ASSERT_EQ(a, BASE - 0x1ff000 - (i ? MB2 : 2 * MB2));
		ncb_as_free(as);
	}
	/* A hint with room for the mapping but not for the padding. */
	for (i = 0; i < 4; i++) {
		static const uint32_t rel[] = { REL(6, 12, 4), REL(6, 12, 5),
						REL(6, 13, 0), REL(6, 18, 0) };

		as = model_of(rel[i], 0);
		map(as, hint + MB2, PG, PROT_READ, P | MAP_FIXED);
		a = map(as, hint, MB2, PROT_READ, P);
		ignored = rel[i] == REL(6, 12, 4) && sizeof(void *) == 8;
		ASSERT_EQ(a, ignored ? topdown(MB2, 1) : hint);
		/* One with room for both is taken before 6.12.5 too. */
		ASSERT_EQ(map(as, roomy, MB2, PROT_READ, P), roomy);
		ncb_as_free(as);
	}
}

/*
 * Anonymous memory without pages made read-only gives up its commit
 * charge since 6.7 (9b9143298585), and then joins an uncharged neighbour.
 */
TEST(mprotect_charge_by_release)
{
	static const uint32_t rel[] = { REL(6, 1, 192), REL(6, 7, 0),
					REL(6, 12, 118), REL(6, 18, 0) };
	uint64_t a = 0x100000000ULL;
	struct ncb_as *as;
	unsigned int i;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		as = model_of(rel[i], 0);
		map(as, a, 2 * PG, PROT_READ, P | MAP_FIXED);
		map(as, a + 2 * PG, 2 * PG, RW, P | MAP_FIXED);
		ASSERT_EQ(ncb_as_count(as), 2);
		ASSERT_EQ(ncb_as_mprotect(as, a + 2 * PG, 2 * PG, PROT_READ),
			  0);
		ASSERT_EQ(ncb_as_count(as), rel[i] < REL(6, 7, 0) ? 2 : 1);
		ncb_as_free(as);
	}
}

/* Whether an area starts at addr. */
static int starts_at(struct ncb_as *as, uint64_t addr)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);

	return ncb_as_find(as, addr, &m) == 1 && m.start == addr;
}

static int remap(struct ncb_as *as, uint64_t addr, uint64_t old_len,
		 uint64_t new_len, int flags, uint64_t new_addr)
{
	uint64_t got = 0;
	int err = ncb_as_mremap(as, addr, old_len, new_len, flags, new_addr,
				&got);

	if (!err && (flags & MREMAP_FIXED))
		ASSERT_EQ(got, new_addr);
	return err;
}

#define MF (MREMAP_MAYMOVE | MREMAP_FIXED)
#define MD (MREMAP_MAYMOVE | MREMAP_DONTUNMAP)

/*
 * mremap's order by release.  Before 6.17 a missing source is EFAULT
 * before the new place is looked at, and a move to a fixed place discards
 * what lay there before the source's checks fail; since 6.17 every check
 * comes first (3215eaceca87, a85dc37186a5) and a move of the same size
 * may span areas (d23cb648e365).
 */
TEST(mremap_order_by_release)
{
	static const uint32_t rel[] = { REL(6, 1, 192), REL(6, 12, 118),
					REL(6, 16, 0), REL(6, 17, 0),
					REL(6, 18, 0) };
	uint64_t a = 0x100000000ULL, t = 0x100100000ULL, none = t - 16 * PG;
	uint64_t top = 0x7ffffffff000ULL;
	struct ncb_as *as;
	unsigned int i;
	int first, aligned_first;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		first = rel[i] >= REL(6, 17, 0);
		aligned_first = rel[i] >= REL(6, 15, 0);
		as = model_of(rel[i], -1);
		map(as, a, 2 * PG, PROT_READ, P | MAP_FIXED);
		map(as, a + 2 * PG, PG, RW, P | MAP_FIXED);
		map(as, t, 4 * PG, PROT_EXEC, P | MAP_FIXED);
		/*
		 * No source: the new place's faults first since 6.17, its
		 * alignment since 6.15 (1d7ea9f7317b).
		 */
		ASSERT_EQ(remap(as, none, PG, PG, MF, top),
			  first ? -EINVAL : -EFAULT);
		ASSERT_EQ(remap(as, none, PG, PG, MF, t + 1),
			  aligned_first ? -EINVAL : -EFAULT);
		ASSERT_EQ(remap(as, none, PG, PG, MF, none),
			  first ? -EINVAL : -EFAULT);
		/* With a source, EINVAL whatever the release. */
		ASSERT_EQ(remap(as, a, PG, PG, MF, top), -EINVAL);
		ASSERT_EQ(remap(as, a, PG, PG, MD, a), -EINVAL);
		/* The source's faults: the target survives since 6.17. */
		ASSERT_EQ(remap(as, a, 0, PG, MF, t), -EINVAL);
		ASSERT_EQ(starts_at(as, t), first);
		map(as, t, PG, PROT_EXEC, P | MAP_FIXED);
		ASSERT_EQ(remap(as, a, 3 * PG, 4 * PG, MF, t), -EFAULT);
		ASSERT_EQ(starts_at(as, t), first);
		map(as, t, 4 * PG, PROT_EXEC, P | MAP_FIXED);
		/* Two areas of the same size: moved since 6.17. */
		if (first) {
			ASSERT_EQ(remap(as, a, 3 * PG, 3 * PG, MF, t), 0);
			expect_dump(as,
				    LINE(100100000, 100102000, "r--p")
				    LINE(100102000, 100103000, "rw-p")
				    LINE(100103000, 100104000, "--xp"));
		} else {
			ASSERT_EQ(remap(as, a, 3 * PG, 3 * PG, MF, t), -EFAULT);
			expect_dump(as,
				    LINE(100000000, 100002000, "r--p")
				    LINE(100002000, 100003000, "rw-p")
				    LINE(100103000, 100104000, "--xp"));
		}
		ASSERT_EQ(ncb__as_check(as), 0);
		ncb_as_free(as);
	}
}

/*
 * The map count's margin for a move to a place given (ENOMEM) is checked
 * before the source is looked up since 6.15, after before (EFAULT first).
 */
TEST(mremap_map_count_by_release)
{
	static const uint32_t rel[] = { REL(6, 12, 118), REL(6, 15, 0),
					REL(6, 18, 0) };
	uint64_t a = 0x100000000ULL;
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = PG,
				 .mmap_min_addr = 0x10000,
				 .task_size = 0x7ffffffff000ULL,
				 .mmap_base = BASE, .thp = -1,
				 .max_map_count = 8 };
	struct ncb_as *as;
	unsigned int i, k;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		o.release = rel[i];
		ASSERT_EQ(ncb_as_new(&as, &o), 0);
		for (k = 0; k < 4; k++)
			map(as, a + 2 * k * PG, PG, PROT_READ, P | MAP_FIXED);
		ASSERT_EQ(remap(as, a + PG, PG, PG, MF, a + 64 * PG),
			  rel[i] >= REL(6, 15, 0) ? -ENOMEM : -EFAULT);
		ASSERT_EQ(remap(as, a, PG, PG, MF, a + 64 * PG), -ENOMEM);
		ncb_as_free(as);
	}
}

/*
 * Arguments whose meaning changed: a new length past the task's size
 * without a place given is EINVAL since 6.17, ENOMEM from the search for
 * room before; MREMAP_DONTUNMAP's lengths are compared rounded to pages
 * since 6.17, as given before; new_addr is only read with MREMAP_FIXED or
 * MREMAP_DONTUNMAP (78d2d32f0b78), which takes it as a hint.
 */
TEST(mremap_arguments_by_release)
{
	static const uint32_t rel[] = { REL(6, 1, 192), REL(6, 12, 118),
					REL(6, 18, 0) };
	uint64_t a = 0x100000000ULL, far = 0x300000000ULL, got;
	struct ncb_as *as;
	unsigned int i;
	int first;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		first = rel[i] >= REL(6, 17, 0);
		as = model_of(rel[i], -1);
		map(as, a, 2 * PG, PROT_READ, P | MAP_FIXED);
		ASSERT_EQ(remap(as, a, PG, 1ULL << 60, MREMAP_MAYMOVE, 0),
			  first ? -EINVAL : -ENOMEM);
		ASSERT_EQ(remap(as, a, PG, PG - 1, MD, far),
			  first ? 0 : -EINVAL);
		ASSERT_EQ(ncb_as_mremap(as, a + PG, PG, PG, MD, far + PG,
					&got), 0);
		ASSERT_EQ(got, far + PG);
		ASSERT_EQ(ncb_as_mremap(as, a, PG, 2 * PG, MREMAP_MAYMOVE,
					UINT64_MAX & ~(PG - 1), &got), 0);
		ASSERT_EQ(got, BASE - 2 * PG);
		ncb_as_free(as);
	}
}

/*
 * The copy an MREMAP_DONTUNMAP move makes of anonymous memory without
 * pages merged with its source until 00b2591b9f04 (7.3; 6.1.191 and
 * 6.12.114 took it, 6.18.44 has not): 6.1's backport then merges nothing
 * next to the source, later ones any neighbour but the source.
 */
TEST(dontunmap_copy_by_release)
{
	static const struct {
		uint32_t rel;
		const char *want;
	} c[] = {
		{ REL(6, 1, 190), LINE(100000000, 100007000, "rw-p") },
		{ REL(6, 1, 192), LINE(100000000, 100001000, "rw-p")
				  LINE(100001000, 100004000, "rw-p")
				  LINE(100004000, 100007000, "rw-p") },
		{ REL(6, 12, 113), LINE(100000000, 100007000, "rw-p") },
		{ REL(6, 12, 118), LINE(100000000, 100004000, "rw-p")
				   LINE(100004000, 100007000, "rw-p") },
		{ REL(6, 18, 44), LINE(100000000, 100007000, "rw-p") },
		{ REL(7, 3, 0), LINE(100000000, 100004000, "rw-p")
				LINE(100004000, 100007000, "rw-p") },
	};
	uint64_t n = 0x100000000ULL, s = n + 4 * PG;
	struct ncb_as *as;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(*c); i++) {
		as = model_of(c[i].rel, -1);
		map(as, n, PG, RW, P | MAP_FIXED);
		map(as, s, 3 * PG, RW, P | MAP_FIXED);
		ASSERT_EQ(remap(as, s, 3 * PG, 3 * PG, MD | MREMAP_FIXED,
				s - 3 * PG), 0);
		expect_dump(as, c[i].want);
		ncb_as_free(as);
	}
}

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

static int mmap_err(struct ncb_as *as, uint64_t addr, uint64_t len,
		    int flags)
{
	uint64_t got;

	return ncb_as_mmap(as, addr, len, RW, flags | MAP_ANONYMOUS, 0, 0,
			   &got);
}

/*
 * Map types: MAP_DROPPABLE since 6.11 (9651fcedf7b9), private anonymous
 * memory never charged that merges only with its own kind; in any
 * release the type is checked once the range is placed (ENOMEM and
 * EEXIST first), anonymous memory is only shared or private, and shared
 * memory does not grow down.
 */
TEST(map_types_by_release)
{
	static const uint32_t rel[] = { REL(6, 1, 192), REL(6, 11, 0),
					REL(6, 18, 0) };
	uint64_t a = 0x100000000ULL, top = 0x7ffffffff000ULL;
	struct ncb_as *as;
	unsigned int i;
	int drops;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		drops = rel[i] >= REL(6, 11, 0);
		as = model_of(rel[i], -1);
		ASSERT_EQ(mmap_err(as, a, PG, MAP_DROPPABLE | MAP_FIXED),
			  drops ? 0 : -EINVAL);
		map(as, a + PG, PG, RW, P | MAP_FIXED);
		ASSERT_EQ(mmap_err(as, a + 2 * PG, PG, MAP_DROPPABLE |
				   MAP_FIXED), drops ? 0 : -EINVAL);
		ASSERT_EQ(ncb_as_count(as), drops ? 3 : 1);
		if (drops) {
			/* Its own kind joins it, uncharged. */
			ASSERT_EQ(mmap_err(as, a + 3 * PG, PG, MAP_DROPPABLE |
					   MAP_FIXED), 0);
			ASSERT_EQ(ncb_as_count(as), 3);
			ASSERT_EQ(ncb__as_flags(as, a + 3 * PG) & 0x20, 0);
			expect_dump(as,
				    LINE(100000000, 100001000, "rw-p")
				    LINE(100001000, 100002000, "rw-p")
				    LINE(100002000, 100004000, "rw-p"));
		}
		ASSERT_EQ(mmap_err(as, 0, PG, MAP_DROPPABLE | MAP_GROWSDOWN),
			  -EINVAL);
		ASSERT_EQ(mmap_err(as, 0, PG, MAP_DROPPABLE | MAP_LOCKED),
			  -EINVAL);
		ASSERT_EQ(mmap_err(as, 0, PG, MAP_SHARED_VALIDATE), -EINVAL);
		ASSERT_EQ(mmap_err(as, 0, PG, 0), -EINVAL);
		ASSERT_EQ(mmap_err(as, 0, PG, MAP_SHARED | MAP_GROWSDOWN),
			  -EINVAL);
		ASSERT_EQ(mmap_err(as, top, PG, MAP_FIXED), -ENOMEM);
		ASSERT_EQ(mmap_err(as, a + PG, PG, MAP_FIXED_NOREPLACE),
			  -EEXIST);
		ncb_as_free(as);
	}
}

#define SH (MAP_SHARED)
#define ANON_PATH "/dev/zero (deleted)"

/*
 * Each shared anonymous mapping is a file of its own, whatever the
 * inodes of loaded ones: the differential run once loaded its own shared
 * page with the very inode the model printed next, and every shared
 * mapping after that took the loaded page's file.  Two pieces at
 * matching offsets show it: only pieces of one file merge.
 */
TEST(shared_anonymous_files)
{
	uint64_t x = 0x100000000ULL, got, ino;
	struct ncb_mapping a = NCB_INIT(ncb_mapping);
	struct ncb_mapping b = NCB_INIT(ncb_mapping);
	struct ncb_mapping l = NCB_INIT(ncb_mapping);
	struct ncb_as *as;
	char maps[160];

	for (ino = 1; ino <= 8; ino++) {
		as = model();
		snprintf(maps, sizeof(maps), "7f0000000000-7f0000001000 rw-s "
			 "00000000 00:01 %ju %40s" ANON_PATH "\n",
			 (uintmax_t)ino, "");
		ASSERT_EQ(ncb_as_load(as, maps, strlen(maps)), 0);
		/* [x + 2, x + 3) pages at offset 2, then [x, x + 1) at 0. */
		map(as, x, 3 * PG, RW, SH | MAP_FIXED);
		ASSERT_EQ(ncb_as_munmap(as, x, 2 * PG), 0);
		map(as, x, PG, RW, SH | MAP_FIXED);
		/* Grown in place to meet the other at offset 2. */
		ASSERT_EQ(ncb_as_mremap(as, x, PG, 2 * PG, 0, 0, &got), 0);
		ASSERT_EQ(ncb_as_count(as), 3);
		ASSERT_EQ(ncb_as_find(as, x, &a), 1);
		ASSERT_EQ(a.end, x + 2 * PG);
		ASSERT_EQ(ncb_as_find(as, x + 2 * PG, &b), 1);
		ASSERT_EQ(b.start, x + 2 * PG);
		ASSERT_EQ(ncb_as_find(as, 0x7f0000000000ULL, &l), 1);
		/* Printed as the kernel prints them, each inode once. */
		ASSERT_EQ(l.inode, ino);
		ASSERT_TRUE(a.inode != b.inode && a.inode != ino &&
			    b.inode != ino);
		ASSERT_TRUE(a.shared && a.dev_major == 0 && a.dev_minor == 1 &&
			    !strcmp(a.path, ANON_PATH) && a.offset == 0);
		ASSERT_EQ(b.offset, 2 * PG);
		ncb_as_free(as);
	}
}

/*
 * The other way round: a file registered with a made file's printed key
 * is a file of its own, and the made one takes another number.  Pieces
 * of one file, made or registered, still merge.
 */
TEST(registered_files_apart_from_made_ones)
{
	uint64_t x = 0x100000000ULL, got, ino;
	struct ncb_mapping a = NCB_INIT(ncb_mapping);
	struct ncb_mapping b = NCB_INIT(ncb_mapping);
	struct ncb_as *as = model();
	uint32_t f, g;

	map(as, x, 3 * PG, RW, SH | MAP_FIXED);
	ASSERT_EQ(ncb_as_mprotect(as, x + PG, PG, PROT_READ), 0);
	ASSERT_EQ(ncb_as_count(as), 3);
	ASSERT_EQ(ncb_as_mprotect(as, x + PG, PG, RW), 0);
	ASSERT_EQ(ncb_as_count(as), 1);
	ASSERT_EQ(ncb_as_munmap(as, x + PG, 2 * PG), 0);
	ASSERT_EQ(ncb_as_find(as, x, &a), 1);
	ino = a.inode;
	ASSERT_EQ(ncb_as_file(as, ANON_PATH, 0, 1, ino, &f), 0);
	ASSERT_EQ(ncb_as_file(as, ANON_PATH, 0, 1, ino, &g), 0);
	ASSERT_EQ(f, g);
	/* Right after the made file's page 0, at offset 1: apart. */
	ASSERT_EQ(ncb_as_mmap(as, x + PG, PG, RW, SH | MAP_FIXED, f, PG, &got),
		  0);
	ASSERT_EQ(ncb_as_count(as), 2);
	ASSERT_EQ(ncb_as_find(as, x, &a), 1);
	ASSERT_EQ(ncb_as_find(as, x + PG, &b), 1);
	ASSERT_EQ(b.inode, ino);
	ASSERT_TRUE(a.inode != ino && !strcmp(a.path, ANON_PATH));
	/* The registered file's next page joins it. */
	ASSERT_EQ(ncb_as_mmap(as, x + 2 * PG, PG, RW, SH | MAP_FIXED, f,
			      2 * PG, &got), 0);
	ASSERT_EQ(ncb_as_count(as), 2);
	ASSERT_EQ(ncb_as_find(as, x + PG, &b), 1);
	ASSERT_EQ(b.end, x + 3 * PG);
	/* A new shared mapping does not print the taken numbers either. */
	map(as, x + 8 * PG, PG, RW, SH | MAP_FIXED);
	ASSERT_EQ(ncb_as_find(as, x + 8 * PG, &b), 1);
	ASSERT_TRUE(b.inode != ino && b.inode != a.inode);
	ASSERT_EQ(ncb__as_check(as), 0);
	ncb_as_free(as);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Registered files through many growths of their index, made files in
 * between: each key keeps its number, different keys have different ones.
 */
TEST(file_index)
{
	enum { N = 5000 };
	static uint32_t ids[N], sorted[N];
	struct ncb_as *as = model();
	char path[32];
	uint32_t id;
	uint64_t got;
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < N; i++) {
			snprintf(path, sizeof(path), "/lib/f%d", i % 7);
			ASSERT_EQ(ncb_as_file(as, path, 8, (uint32_t)i % 3,
					      (uint64_t)i / 21, &id), 0);
			if (pass)
				ASSERT_EQ(id, ids[i]);
			ids[i] = id;
			if (!pass && i % 10 == 0)
				ASSERT_EQ(ncb_as_mmap(as, 0, PG, RW, SH |
						      MAP_ANONYMOUS, 0, 0,
						      &got), 0);
		}
	}
	memcpy(sorted, ids, sizeof(ids));
	qsort(sorted, N, sizeof(sorted[0]), cmp_u32);
	for (i = 1; i < N; i++)
		ASSERT_TRUE(sorted[i] != sorted[i - 1]);
	ASSERT_EQ(ncb_as_file(as, "/lib/f0", 8, 1, N, &id), 0);
	ASSERT_TRUE(bsearch(&id, sorted, N, sizeof(sorted[0]), cmp_u32) ==
		    NULL);
	ASSERT_EQ(ncb_as_file(NULL, "/lib/f0", 8, 0, 0, &id), -EINVAL);
	ASSERT_EQ(ncb_as_file(as, NULL, 8, 0, 0, &id), -EINVAL);
	ncb_as_free(as);
}

TEST(program_break)
{
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = PG,
				 .mmap_min_addr = 0x10000,
				 .task_size = 0x7ffffffff000ULL,
				 .mmap_base = 0x7ffff7fff000ULL,
				 .start_brk = 0x500000, .brk = 0x500000,
				 .release = REL(6, 18, 0) };
	struct ncb_as *as;
	uint64_t b;

	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	/* Growing makes the heap, one area however it grows. */
	ASSERT_EQ(ncb_as_brk(as, 0x501234, &b), 0);
	ASSERT_EQ(b, 0x501234);
	ASSERT_EQ(ncb_as_brk(as, 0x504000, &b), 0);
	expect_dump(as, "00500000-00504000 rw-p 00000000 00:00 0"
			"                                  [heap]\n");
	/* Below the start, or into a mapping's last page: refused. */
	ASSERT_EQ(ncb_as_brk(as, 0x4ff000, &b), 0);
	ASSERT_EQ(b, 0x504000);
	map(as, 0x508000, PG, PROT_READ, P | MAP_FIXED);
	ASSERT_EQ(ncb_as_brk(as, 0x508000, &b), 0);
	ASSERT_EQ(b, 0x504000);
	ASSERT_EQ(ncb_as_brk(as, 0x507000, &b), 0);
	ASSERT_EQ(b, 0x507000);
	/* Shrinking cuts the heap; a page of it made read-only stays apart,
	 * and anonymous memory over the break is named heap too. */
	ASSERT_EQ(ncb_as_mprotect(as, 0x501000, PG, PROT_READ), 0);
	ASSERT_EQ(ncb_as_brk(as, 0x502000, &b), 0);
	ASSERT_EQ(b, 0x502000);
	expect_dump(as, "00500000-00501000 rw-p 00000000 00:00 0"
			"                                  [heap]\n"
			"00501000-00502000 r--p 00000000 00:00 0"
			"                                  [heap]\n"
			"00508000-00509000 r--p 00000000 00:00 0 \n");
	ncb_as_free(as);
	/* No break known: nothing to move. */
	o.start_brk = o.brk = 0;
	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	ASSERT_EQ(ncb_as_brk(as, 0x500000, &b), -EINVAL);
	ncb_as_free(as);
}

/*
 * The answer by walking every gap, as the rule states it (internal.h): a
 * fit is an aligned start whose len bytes lie in one gap and the window,
 * an exact fit too.  ANY: the highest fit ending no higher than where the
 * model's mmap would put len bytes, else the lowest.
 */
static int brute_free(struct ncb_as *as, uint64_t lo, uint64_t hi,
		      uint64_t len, uint64_t align, int place, uint64_t *out)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uint64_t prev = lo, s, e, first, last, k;
	int found = 0;

	if (place == NCB_PLACE_ANY) {
		k = map(as, 0, len, PROT_NONE, P);
		ASSERT_EQ(ncb_as_munmap(as, k, len), 0);
		if (k + len > lo &&
		    !brute_free(as, lo, k + len < hi ? k + len : hi, len,
				align, NCB_PLACE_HIGHEST, out))
			return 0;
		return brute_free(as, lo, hi, len, align, NCB_PLACE_LOWEST,
				  out);
	}
	for (;;) {
		int more = ncb_as_find(as, prev, &m) == 1 && m.start < hi;

		s = prev;
		e = more ? m.start : hi;
		first = (s + align - 1) & ~(align - 1);
		last = e >= len ? (e - len) & ~(align - 1) : 0;
		if (e > s && e - s >= len && first <= last && last >= s) {
			if (place == NCB_PLACE_LOWEST) {
				*out = first;
				return 0;
			}
			*out = last;
			found = 1;
		}
		if (!more)
			break;
		prev = m.end > prev ? m.end : prev;
		if (prev >= hi)
			break;
	}
	return found ? 0 : -ENOMEM;
}

/*
 * Against the brute force, on random layouts and windows, every place and
 * alignments of 1 to 32 pages; the model's mmap_base lies inside the
 * layout, so that ANY finds the kernel's choice below, inside and above
 * the window.
 */
TEST(find_free_matches_brute_force)
{
	uint64_t seed = 42, base = 0x100000000ULL, got, want;
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = PG,
				 .mmap_min_addr = 0x10000,
				 .task_size = 0x7ffffffff000ULL,
				 .mmap_base = base + 3000 * PG, .thp = -1,
				 .release = REL(6, 18, 0) };
	struct ncb_as *as;
	int i, place, rg, rw;

	ASSERT_EQ(ncb_as_new(&as, &o), 0);
	for (i = 0; i < 3000; i++) {
		uint64_t a = base + rnd(&seed) % 4096 * PG;
		uint64_t l = (1 + rnd(&seed) % 64) * PG;

		if (rnd(&seed) % 3)
			map(as, a, l, PROT_READ << (rnd(&seed) % 2), P |
			    MAP_FIXED);
		else
			ASSERT_EQ(ncb_as_munmap(as, a, l), 0);
		if (i % 10)
			continue;
		for (place = NCB_PLACE_ANY; place <= NCB_PLACE_RANDOM;
		     place++) {
			uint64_t lo = base + rnd(&seed) % 2048 * PG;
			uint64_t hi = lo + (1 + rnd(&seed) % 4096) * PG;
			uint64_t len = (1 + rnd(&seed) % 128) * PG;
			uint64_t align = PG << (rnd(&seed) % 6);

			rg = ncb_as_find_free(as, lo, hi, len, align, place,
					      &got);
			rw = brute_free(as, lo, hi, len, align, place ==
					NCB_PLACE_RANDOM ? NCB_PLACE_LOWEST :
					place, &want);
			ASSERT_EQ(rg, rw);
			if (!rg && place != NCB_PLACE_RANDOM)
				ASSERT_EQ(got, want);
			/* A random place: aligned, inside, and free. */
			if (!rg && place == NCB_PLACE_RANDOM) {
				struct ncb_mapping m = NCB_INIT(ncb_mapping);

				ASSERT_EQ(got & (align - 1), 0);
				ASSERT_UGE(got, lo);
				ASSERT_ULE(got + len, hi);
				ASSERT_TRUE(ncb_as_find(as, got, &m) != 1 ||
					    m.start >= got + len);
			}
		}
	}
	ASSERT_EQ(ncb_as_find_free(as, 0, 0, 0, 0, NCB_PLACE_LOWEST, &got),
		  -EINVAL);
	ASSERT_EQ(ncb_as_find_free(as, 0, 0, PG, 3 * PG, NCB_PLACE_LOWEST,
				   &got), -EINVAL);
	ASSERT_EQ(ncb_as_find_free(as, 0, 0, PG, 0, NCB_PLACE_RANDOM + 1,
				   &got), -EINVAL);
	ASSERT_EQ(ncb_as_find_free(as, base, base, PG, 0, NCB_PLACE_LOWEST,
				   &got), -EINVAL);
	ASSERT_EQ(ncb__as_check(as), 0);
	ncb_as_free(as);
}

/*
 * The exact aligned fit: a gap of 16 pages starting at an odd multiple of
 * 16 pages holds 16 pages aligned to 16, with no slack to spare, and none
 * aligned to 32.
 */
TEST(find_free_exact_fit)
{
	struct ncb_as *as = model();
	uint64_t base = 0x100000000ULL + 16 * PG, got;
	int place;

	map(as, base - PG, PG, PROT_READ, P | MAP_FIXED);
	map(as, base + 16 * PG, PG, PROT_READ, P | MAP_FIXED);
	for (place = NCB_PLACE_ANY; place <= NCB_PLACE_RANDOM; place++) {
		ASSERT_EQ(ncb_as_find_free(as, base - PG, base + 17 * PG,
					   16 * PG, 16 * PG, place, &got), 0);
		ASSERT_EQ(got, base);
		ASSERT_EQ(ncb_as_find_free(as, base - PG, base + 17 * PG,
					   16 * PG, 32 * PG, place, &got),
			  -ENOMEM);
	}
	ncb_as_free(as);
}

/* Random places spread over every gap in proportion to its places. */
TEST(find_free_random_is_uniform)
{
	struct ncb_as *as = model();
	uint64_t base = 0x100000000ULL, got;
	unsigned int hits[3] = { 0, 0, 0 }, i;

	/* Gaps of 8, 8 and 16 pages: 7, 7 and 15 places for 2 pages. */
	map(as, base, PG, PROT_READ, P | MAP_FIXED);
	map(as, base + 9 * PG, PG, PROT_WRITE, P | MAP_FIXED);
	map(as, base + 18 * PG, PG, PROT_READ, P | MAP_FIXED);
	map(as, base + 35 * PG, PG, PROT_WRITE, P | MAP_FIXED);
	for (i = 0; i < 2900; i++) {
		ASSERT_EQ(ncb_as_find_free(as, base, base + 35 * PG, 2 * PG,
					   0, NCB_PLACE_RANDOM, &got), 0);
		hits[got < base + 9 * PG ? 0 : got < base + 18 * PG ? 1 : 2]++;
	}
	printf("# hits: %u %u %u (expected about 700 700 1500)\n", hits[0],
	       hits[1], hits[2]);
	ASSERT_GT(hits[0], 550);
	ASSERT_LT(hits[0], 850);
	ASSERT_GT(hits[1], 550);
	ASSERT_LT(hits[1], 850);
	ASSERT_GT(hits[2], 1300);
	ASSERT_LT(hits[2], 1700);
	ncb_as_free(as);
}

/* ---- differential testing against a real process ---- */

enum { OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MREMAP, OP_BRK, OP_FILL };

struct op {
	int type;
	int prot;
	int flags;
	int pad;
	uint64_t addr;
	uint64_t len;
	uint64_t new_len;
	uint64_t new_addr;
};

struct result {
	uint64_t ret;
	int err;
	int pad;
};

/*
 * Many areas: len bytes of PROT_NONE with every other page of the first
 * 2 * n made readable, 1 + 2 * n areas.  Run by the child and the model.
 */
static uint64_t fill(uint64_t len, uint64_t n)
{
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);
	uint64_t i;

	if (p == MAP_FAILED)
		return 0;
	for (i = 0; i < n; i++)
		if (mprotect(p + (2 * i + 1) * PG, PG, PROT_READ))
			return 0;
	return (uintptr_t)p;
}

static uint64_t model_fill(struct ncb_as *as, uint64_t len, uint64_t n)
{
	uint64_t p, i;

	ASSERT_EQ(ncb_as_mmap(as, 0, len, PROT_NONE, MAP_PRIVATE |
			      MAP_ANONYMOUS | MAP_NORESERVE, 0, 0, &p), 0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(ncb_as_mprotect(as, p + (2 * i + 1) * PG, PG,
					  PROT_READ), 0);
	return p;
}

/* The child: run each operation, untouched otherwise (no malloc). */
static void __attribute__((noreturn)) child(int in, int out)
{
	struct result r;
	struct op o;
	void *p;

	while (read(in, &o, sizeof(o)) == (ssize_t)sizeof(o)) {
		r.err = 0;
		if (o.type == OP_MMAP) {
			p = mmap((void *)(uintptr_t)o.addr, o.len, o.prot,
				 o.flags, -1, 0);
			r.ret = (uintptr_t)p;
			r.err = p == MAP_FAILED ? errno : 0;
		} else if (o.type == OP_MUNMAP) {
			r.ret = (uint64_t)munmap((void *)(uintptr_t)o.addr,
						 o.len);
			r.err = r.ret ? errno : 0;
		} else if (o.type == OP_MPROTECT) {
			r.ret = (uint64_t)mprotect((void *)(uintptr_t)o.addr,
						   o.len, o.prot);
			r.err = r.ret ? errno : 0;
		} else if (o.type == OP_MREMAP) {
			/*
			 * The system call itself: glibc's mremap in C (i386)
			 * passed new_addr only with MREMAP_FIXED until BZ
			 * #31968 was fixed (2024), losing MREMAP_DONTUNMAP's
			 * hint.
			 */
			p = (void *)syscall(SYS_mremap, (uintptr_t)o.addr,
					    (uintptr_t)o.len,
					    (uintptr_t)o.new_len, o.flags,
					    (uintptr_t)o.new_addr);
			r.ret = (uintptr_t)p;
			r.err = p == MAP_FAILED ? errno : 0;
		} else if (o.type == OP_BRK) {
			r.ret = (uint64_t)syscall(SYS_brk, o.addr);
		} else {
			r.ret = fill(o.len, o.new_len);
		}
		if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
	}
	_exit(0);
}

static size_t read_maps(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		FAIL("open %s: %s", path, errname(errno));
	while ((n = read(fd, buf + len, size - len - 1)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/*
 * Shared anonymous memory's inode number is the kernel's own: rewrite
 * those lines with inode 0, the rest unchanged.
 */
static void normalise(char *text)
{
	static char out[8 << 20];
	char *line = text, *eol, *o = out;
	char range[64], perms[8], off[32], dev[16], ino[32];

	for (; *line; line = eol + 1) {
		eol = strchr(line, '\n');
		if (!eol)
			break;
		if (memmem(line, (size_t)(eol - line), "/dev/zero (deleted)",
			   19) &&
		    sscanf(line, "%63s %7s %31s %15s %31s", range, perms, off,
			   dev, ino) == 5)
			o += sprintf(o, "%s %s %s %s 0 /dev/zero (deleted)\n",
				     range, perms, off, dev);
		else
			o += sprintf(o, "%.*s\n", (int)(eol - line), line);
	}
	*o = '\0';
	strcpy(text, out);
}


#define ARENA_PAGES 256
#define OWNED 32

struct diff {
	uint64_t seed;
	uint64_t arena;
	uint64_t start_brk;
	uint64_t first_brk;
	uint64_t owned[OWNED][2];
	int nowned;
};

/* mremap: mostly a piece of one area of the arena, sometimes anything. */
static void random_mremap(struct diff *d, struct ncb_as *as, struct op *o)
{
	static const int kinds[] = { 0, 0, MREMAP_MAYMOVE, MREMAP_MAYMOVE,
				     MREMAP_MAYMOVE, MREMAP_MAYMOVE |
				     MREMAP_FIXED, MREMAP_MAYMOVE |
				     MREMAP_FIXED, MREMAP_MAYMOVE |
				     MREMAP_DONTUNMAP };
	uint64_t *s = &d->seed, end = d->arena + ARENA_PAGES * PG;
	struct ncb_mapping m = NCB_INIT(ncb_mapping);

	o->type = OP_MREMAP;
	if (rnd(s) % 4 && ncb_as_find(as, o->addr, &m) == 1 &&
	    m.start >= d->arena && m.end <= end) {
		o->addr = m.start + rnd(s) % ((m.end - m.start) / PG) * PG;
		o->len = (1 + rnd(s) % ((m.end - o->addr) / PG)) * PG;
	}
	o->flags = kinds[rnd(s) % 8];
	o->new_len = (1 + rnd(s) % 24) * PG;
	if (o->flags & MREMAP_DONTUNMAP)
		o->new_len = o->len;
	o->new_addr = d->arena + (rnd(s) % ARENA_PAGES) * PG;
	if (o->new_addr + o->new_len > end)
		o->new_len = end - o->new_addr;
	/*
	 * new_addr is read with MREMAP_FIXED, and as MREMAP_DONTUNMAP's hint;
	 * otherwise now and then a wild one, which must not matter.
	 */
	if (!(o->flags & MREMAP_FIXED) &&
	    !((o->flags & MREMAP_DONTUNMAP) && rnd(s) % 2))
		o->new_addr = rnd(s) % 8 ? 0 : -PG;
	/* Now and then a bad argument, checked in the kernel's order. */
	switch (rnd(s) % 32) {
	case 0:
		o->flags |= 0x10;
		break;
	case 1:
		o->addr += 1;
		break;
	case 2:
		o->flags = MREMAP_FIXED;
		break;
	case 3:
		o->len = 0;
		break;
	case 4:
		/* Past the space: before 6.17 no source is EFAULT first. */
		o->new_addr = -PG;
		break;
	}
}

static void random_op(struct diff *d, struct ncb_as *as, struct op *o)
{
	uint64_t *s = &d->seed, r = rnd(s) % 100;
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_READ |
				     PROT_WRITE, PROT_READ | PROT_EXEC };
	int k;

	memset(o, 0, sizeof(*o));
	o->prot = prots[rnd(s) % 4];
	o->len = (1 + rnd(s) % 16) * PG;
	o->addr = d->arena + (rnd(s) % ARENA_PAGES) * PG;
	if (o->addr + o->len > d->arena + ARENA_PAGES * PG)
		o->len = d->arena + ARENA_PAGES * PG - o->addr;
	/* Now and then one of the mappings the kernel placed itself. */
	if (d->nowned && rnd(s) % 4 == 0) {
		k = (int)(rnd(s) % (uint64_t)d->nowned);
		o->addr = d->owned[k][0];
		o->len = d->owned[k][1];
	}
	/* Keep the space bounded: a full list gives one back. */
	if (d->nowned == OWNED) {
		d->nowned--;
		o->type = OP_MUNMAP;
		o->addr = d->owned[d->nowned][0];
		o->len = d->owned[d->nowned][1];
		return;
	}
	if (r < 45) {
		/*
		 * Now and then droppable memory (6.11), or a type anonymous
		 * memory cannot have.
		 */
		static const int types[] = {
			MAP_PRIVATE, MAP_PRIVATE, MAP_PRIVATE, MAP_PRIVATE,
			MAP_PRIVATE, MAP_PRIVATE, MAP_SHARED, MAP_SHARED,
			MAP_DROPPABLE, MAP_SHARED_VALIDATE,
		};

		o->type = OP_MMAP;
		o->flags = types[rnd(s) % 10] | MAP_ANONYMOUS |
			   (rnd(s) % 6 ? 0 : MAP_NORESERVE);
		r = rnd(s) % 10;
		if (r < 5)
			o->flags |= MAP_FIXED;
		else if (r < 7)
			o->flags |= MAP_FIXED_NOREPLACE;
		else if (r < 9)
			;	/* a hint */
		else
			o->addr = 0;
		if (!(o->flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) &&
		    rnd(s) % 8 == 0)
			o->len = (1 + rnd(s) % 2) * (2ULL << 20);
	} else if (r < 65) {
		o->type = OP_MUNMAP;
	} else if (r < 80) {
		random_mremap(d, as, o);
	} else if (r < 85) {
		/*
		 * The break: anywhere in 96 pages above where the child
		 * found it (below that, a static libc keeps its thread
		 * block), now and then below the heap's start.
		 */
		o->type = OP_BRK;
		o->addr = d->first_brk + rnd(s) % (96 * PG);
		if (rnd(s) % 2)
			o->addr &= ~(PG - 1);
		if (rnd(s) % 16 == 0)
			o->addr = d->start_brk - PG;
	} else {
		o->type = OP_MPROTECT;
	}
}

static void remember(struct diff *d, const struct op *o, uint64_t at)
{
	uint64_t len = o->type == OP_MREMAP ? o->new_len : o->len;
	uint64_t end = at + len;

	if ((at >= d->arena && end <= d->arena + ARENA_PAGES * PG) ||
	    d->nowned == OWNED)
		return;
	d->owned[d->nowned][0] = at;
	d->owned[d->nowned][1] = len;
	d->nowned++;
}

static int model_op(struct ncb_as *as, const struct op *o, uint64_t *ret)
{
	*ret = 0;
	if (o->type == OP_MMAP)
		return ncb_as_mmap(as, o->addr, o->len, o->prot, o->flags, 0,
				   0, ret);
	if (o->type == OP_MUNMAP)
		return ncb_as_munmap(as, o->addr, o->len);
	if (o->type == OP_MREMAP)
		return ncb_as_mremap(as, o->addr, o->len, o->new_len, o->flags,
				     o->new_addr, ret);
	if (o->type == OP_BRK)
		return ncb_as_brk(as, o->addr, ret);
	return ncb_as_mprotect(as, o->addr, o->len, o->prot);
}

static const char *op_name(const struct op *o)
{
	static char buf[128];

	static const char *const names[] = { "mmap", "munmap", "mprotect",
					     "mremap", "brk" };

	if (o->type == OP_MREMAP)
		snprintf(buf, sizeof(buf), "mremap(%#jx, %#jx, %#jx, flags "
			 "%#x, %#jx)", (uintmax_t)o->addr, (uintmax_t)o->len,
			 (uintmax_t)o->new_len, o->flags,
			 (uintmax_t)o->new_addr);
	else
		snprintf(buf, sizeof(buf), "%s(%#jx, %#jx, prot %d, flags "
			 "%#x)", names[o->type], (uintmax_t)o->addr,
			 (uintmax_t)o->len, o->prot, o->flags);
	return buf;
}

/* Where the child's heap starts: field 47 of /proc/PID/stat. */
static uint64_t start_brk(pid_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	ASSERT_GE(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	/* Fields count from after the command name, which may hold spaces. */
	p = strrchr(buf, ')');
	ASSERT_TRUE(p != NULL);
	for (i = 2; i < 47 && p; i++)
		p = strchr(p + 1, ' ');
	ASSERT_TRUE(p && sscanf(p, "%llu", &v) == 1);
	return v;
}

/* The end of the highest mapping below the stack: the kernel's mmap_base. */
static uint64_t infer_mmap_base(const char *maps)
{
	struct ncb_maps *m;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	uint64_t base = 0;

	ASSERT_EQ(ncb__maps_from_text(&m, maps, strlen(maps)), 0);
	while (ncb_maps_next(m, &e) == 1 && strcmp(e.path, "[stack]"))
		base = e.end;
	ncb_maps_close(m);
	return base;
}

/* Lines of a that b lacks, each prefixed with tag. */
static void print_missing(const char *a, const char *b, const char *tag)
{
	const char *l, *e, *f, *fe;
	size_t n;

	for (l = a; (e = strchr(l, '\n')); l = e + 1) {
		n = (size_t)(e - l + 1);
		for (f = b; (fe = strchr(f, '\n')); f = fe + 1)
			if ((size_t)(fe - f + 1) == n && !memcmp(f, l, n))
				break;
		if (!fe)
			printf("# %s %.*s", tag, (int)n, l);
	}
}

static long map_count_max(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long v = 65530;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

/*
 * Run ops random operations in a child and in the model, comparing after
 * each.  With areas given, both first get about that many areas in all,
 * and the operations play in the last part of them, at the map count
 * limit.  Returns how many operations the kernel refused with ENOMEM.
 */
static long differential(uint64_t seed, long ops, uint64_t areas)
{
	static char kern[8 << 20], mod[8 << 20], before[8 << 20];
	struct ncb_as_opts opts = { .size = sizeof(opts) };
	int to[2], from[2];
	struct diff d = { .seed = seed * 2654435761u + 1 };
	struct result res;
	struct ncb_as *as;
	struct op o;
	uint64_t mret;
	long i, enomem = 0, breaks = 0;
	pid_t pid;
	int merr;

	/* Each seed has its own time limit: a run is long but bounded. */
	alarm(600);
	d.arena = (uintptr_t)free_window(ARENA_PAGES * PG);
	ASSERT_EQ(pipe(to), 0);
	ASSERT_EQ(pipe(from), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		child(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	read_maps(pid, kern, sizeof(kern));
	opts.mmap_base = infer_mmap_base(kern);
	memset(&o, 0, sizeof(o));
	o.type = OP_BRK;
	ASSERT_EQ(write(to[1], &o, sizeof(o)), (ssize_t)sizeof(o));
	ASSERT_EQ(read(from[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	opts.brk = d.first_brk = res.ret;
	opts.start_brk = d.start_brk = start_brk(pid);
	opts.max_map_count = (uint32_t)map_count_max();
	ASSERT_EQ(ncb_as_new(&as, &opts), 0);
	ASSERT_EQ(ncb_as_load(as, kern, strlen(kern)), 0);
	if (areas) {
		uint64_t n = (areas - ncb_as_count(as)) / 2;

		memset(&o, 0, sizeof(o));
		o.type = OP_FILL;
		o.len = (2 * n + ARENA_PAGES) * PG;
		o.new_len = n;
		ASSERT_EQ(write(to[1], &o, sizeof(o)), (ssize_t)sizeof(o));
		ASSERT_EQ(read(from[0], &res, sizeof(res)),
			  (ssize_t)sizeof(res));
		ASSERT_EQ(model_fill(as, o.len, n), res.ret);
		/* The operations play in the fill's PROT_NONE tail. */
		d.arena = res.ret + 2 * n * PG;
		read_maps(pid, kern, sizeof(kern));
	}
	for (i = 0; i < ops; i++) {
		random_op(&d, as, &o);
		ASSERT_EQ(write(to[1], &o, sizeof(o)), (ssize_t)sizeof(o));
		ASSERT_EQ(read(from[0], &res, sizeof(res)),
			  (ssize_t)sizeof(res));
		merr = model_op(as, &o, &mret);
		enomem += res.err == ENOMEM;
		breaks += o.type == OP_BRK && res.ret == o.addr;
		if (merr != -res.err || ((o.type == OP_MMAP ||
					  o.type == OP_MREMAP ||
					  o.type == OP_BRK) && !res.err &&
					 mret != res.ret)) {
			printf("# maps before:\n%s", kern);
			FAIL("seed %ju op %ld %s: kernel %#jx %s, model %#jx "
			     "%s", (uintmax_t)seed, i, op_name(&o),
			     (uintmax_t)res.ret, errname(res.err),
			     (uintmax_t)mret, errname(-merr));
		}
		if (ncb__as_check(as))
			FAIL("seed %ju op %ld %s: the model's tree is broken",
			     (uintmax_t)seed, i, op_name(&o));
		if ((o.type == OP_MMAP || o.type == OP_MREMAP) && !res.err)
			remember(&d, &o, res.ret);
		if (getenv("NCB_MODEL_DEBUG"))
			strcpy(before, kern);
		read_maps(pid, kern, sizeof(kern));
		ncb_as_dump(as, mod, sizeof(mod));
		normalise(kern);
		normalise(mod);
		if (strcmp(kern, mod)) {
			for (uint64_t x = o.addr - 16 * PG;
			     x < o.addr + o.len + 16 * PG; x += PG)
				printf("# flags at %jx: %#x pgoff %jx\n",
				       (uintmax_t)x, ncb__as_flags(as, x),
				       (uintmax_t)ncb__as_pgoff(as, x));
			printf("# seed %ju op %ld %s diverged (- kernel only, "
			       "+ model only)\n", (uintmax_t)seed, i,
			       op_name(&o));
			printf("# before:\n%s", before);
			print_missing(kern, mod, "-");
			print_missing(mod, kern, "+");
			FAIL("divergence");
		}
	}
	close(to[1]);
	close(from[0]);
	waitpid(pid, NULL, 0);
	ncb_as_free(as);
	printf("# seed %ju: %ld operations, no divergence (%ld ENOMEM, %ld "
	       "breaks moved)\n", (uintmax_t)seed, ops, enomem, breaks);
	return enomem;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

TEST(differential_seeds)
{
	long seeds = env_long("NCB_MODEL_SEEDS", 4);
	long ops = env_long("NCB_MODEL_OPS", 5000);
	long first = env_long("NCB_MODEL_SEED", 1), s;

	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		SKIP("the model is Linux's; here MAP_FIXED_NOREPLACE is %s",
		     ncb_noreplace_name(ncb__probe()->noreplace));
	for (s = first; s < first + seeds; s++)
		differential((uint64_t)s, ops, 0);
}

#define MAX_MAP_COUNT "/proc/sys/vm/max_map_count"

static int set_map_count_max(long v)
{
	FILE *f = fopen(MAX_MAP_COUNT, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

static void at_the_limit(long max)
{
	/* The limit must have been met, or this tested nothing. */
	ASSERT_TRUE(differential(7, 100, (uint64_t)max - 24) +
		    differential(8, 100, (uint64_t)max - 3) > 0);
}

/*
 * At vm.max_map_count: new areas, splits by munmap, mprotect and MAP_FIXED,
 * and mremap's moves fail with ENOMEM where, and as far as, the kernel's do.
 * Where the machine is the test's own (the VM rows, whose user code runs
 * some 8 times slower), at a limit of 4096: tens of thousands of areas
 * compared after every call would take minutes there.  The limit is put
 * back whatever the calls do.
 */
TEST(map_count_limit)
{
	long max = map_count_max(), low = 4096;
	pid_t pid;
	int st;

	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		SKIP("the model is Linux's; here MAP_FIXED_NOREPLACE is %s",
		     ncb_noreplace_name(ncb__probe()->noreplace));
	if (max > 1000000)
		SKIP("vm.max_map_count is %ld: too many areas to make", max);
	if (!test_vm() || max <= low || set_map_count_max(low)) {
		at_the_limit(max);
		return;
	}
	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		at_the_limit(low);
		fflush(stdout);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_EQ(set_map_count_max(max), 0);
	ASSERT_EQ(st, 0);
}

TEST_MAIN(T(fixed_split_merge), T(loaded_pieces_merge_again),
	  T(noreplace_and_errors),
	  T(topdown_and_hints), T(guard_gap), T(mremap_regressions),
	  T(thp_by_release), T(mprotect_charge_by_release),
	  T(mremap_order_by_release), T(mremap_map_count_by_release),
	  T(mremap_arguments_by_release),
	  T(dontunmap_copy_by_release), T(map_types_by_release),
	  T(shared_anonymous_files), T(registered_files_apart_from_made_ones),
	  T(file_index), T(program_break), T(bottom_up_fallback),
	  T(find_free_matches_brute_force), T(find_free_exact_fit),
	  T(find_free_random_is_uniform),
	  T(differential_seeds),
	  T(map_count_limit))

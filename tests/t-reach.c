/* SPDX-License-Identifier: MIT */
/*
 * Reach (ncb_reach): each machine's figures, their errors, and the window
 * they give ncb_find_near and ncb_resv_new: every byte of the block within
 * reach of every byte of the anchor, both ways.  The figures themselves
 * are checked against the assemblers by tests/reach.sh.
 */
#include <elf.h>
#include "ncbtest.h"

#define PG ((uint64_t)test_page())

static const int machines[] = {
	EM_X86_64, EM_386, EM_AARCH64, EM_ARM, EM_PPC64, EM_RISCV, EM_S390,
};

#define NMACH (sizeof(machines) / sizeof(machines[0]))

static struct ncb_reach get(int machine, int kind)
{
	struct ncb_reach r = NCB_INIT(ncb_reach);
	int err = ncb_reach(machine, kind, &r);

	if (err)
		FAIL("ncb_reach(%d, %d): %s", machine, kind, errname(-err));
	return r;
}

/*
 * Does an instruction at p (its base being p, or its end where from_next)
 * name target t?  From the figures alone, by the definition.
 */
static int names(const struct ncb_reach *r, uint64_t base, uint64_t t)
{
	uint64_t pg = r->page ? r->page : 1;
	int64_t d = (int64_t)((t & ~(pg - 1)) - (base & ~(pg - 1)));

	return d >= r->min && d <= r->max;
}

TEST(figures)
{
	struct ncb_reach r;
	unsigned int i;
	int k;

	for (i = 0; i < NMACH; i++) {
		for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++) {
			r = NCB_INIT(ncb_reach);
			if (ncb_reach(machines[i], k, &r) == -ENOENT)
				continue;
			ASSERT_LT(r.min, 0);
			ASSERT_GT(r.max, 0);
			ASSERT_TRUE(r.step && !(r.step & (r.step - 1)));
			ASSERT_TRUE(r.name && *r.name);
			ASSERT_UEQ(r.size, sizeof(r));
		}
		/* Every machine has a direct branch. */
		ASSERT_EQ(ncb_reach(machines[i], NCB_REACH_BRANCH, &r), 0);
	}
	/* The ones every JIT writer knows. */
	r = get(EM_X86_64, NCB_REACH_BRANCH);
	ASSERT_EQ(r.max - r.min + 1, 1LL << 32);
	ASSERT_EQ(r.from_next, 1);
	r = get(EM_AARCH64, NCB_REACH_BRANCH);
	ASSERT_EQ(r.max - r.min + r.step, 1LL << 28);
	r = get(EM_AARCH64, NCB_REACH_PCREL);
	ASSERT_UEQ(r.page, 4096);
	ASSERT_EQ(strcmp(r.name, "adrp"), 0);
	/* This machine's is one of them. */
	r = get(0, NCB_REACH_BRANCH);
	for (i = 0; i < NMACH; i++) {
		struct ncb_reach m = get(machines[i], NCB_REACH_BRANCH);

		if (m.min == r.min && m.max == r.max &&
		    !strcmp(m.name, r.name))
			break;
	}
	ASSERT_TRUE(i < NMACH);
}

TEST(errors)
{
	struct ncb_reach r = NCB_INIT(ncb_reach);
	struct {
		struct ncb_reach r;
		char more[16];
	} big;

	ASSERT_EQ(ncb_reach(0, 0, &r), -EINVAL);
	ASSERT_EQ(ncb_reach(0, NCB_REACH_PCREL + 1, &r), -EINVAL);
	ASSERT_EQ(ncb_reach(0, -1, &r), -EINVAL);
	ASSERT_EQ(ncb_reach(-1, NCB_REACH_BRANCH, &r), -EINVAL);
	ASSERT_EQ(ncb_reach(0, NCB_REACH_BRANCH, NULL), -EINVAL);
	/* Machines not in the table, and kinds a machine has not. */
	ASSERT_EQ(ncb_reach(EM_SPARCV9, NCB_REACH_BRANCH, &r), -ENOTSUP);
	ASSERT_EQ(ncb_reach(0xffff, NCB_REACH_BRANCH, &r), -ENOTSUP);
	ASSERT_EQ(ncb_reach(EM_386, NCB_REACH_PCREL, &r), -ENOENT);
	ASSERT_EQ(ncb_reach(EM_PPC64, NCB_REACH_PCREL, &r), -ENOENT);
	r.size = offsetof(struct ncb_reach, name);
	r.min = 1;
	ASSERT_EQ(ncb_reach(0, NCB_REACH_BRANCH, &r), -EINVAL);
	ASSERT_EQ(r.min, 1);
	/* A later release's larger struct: written as far as this one's. */
	memset(&big, 0x55, sizeof(big));
	big.r.size = sizeof(big);
	ASSERT_EQ(ncb_reach(0, NCB_REACH_BRANCH, &big.r), 0);
	ASSERT_UEQ(big.r.size, sizeof(struct ncb_reach));
	ASSERT_EQ(big.more[0], 0x55);
}

/* The window ncb_find_near gives for an anchor: reach, or within. */
static int window(int machine, int kind, uint64_t within, uint64_t a,
		  uint64_t b, uint64_t len, struct ncb_near *n)
{
	struct ncb_near_opts o = NCB_INIT(ncb_near_opts, .reach = kind,
					  .machine = machine);

	*n = NCB_INIT(ncb_near);
	return ncb_find_near(0, a, b, within, len, &o, n);
}

/*
 * The window's first and last units are in reach of the anchor's first
 * and last, both ways, and a page further out on either side is not.
 */
static void check_window(const struct ncb_reach *r, uint64_t a, uint64_t b,
			 const struct ncb_near *n)
{
	uint64_t st = r->step, fn = (uint64_t)r->from_next;
	uint64_t t0 = a & ~(st - 1), t1 = (b - 1) & ~(st - 1);
	uint64_t lo = n->lo, last = n->hi - st;

	ASSERT_UGT(n->hi, n->lo);
	ASSERT_TRUE(names(r, t0 + fn, lo) && names(r, t1 + fn, lo));
	ASSERT_TRUE(names(r, t0 + fn, last) && names(r, t1 + fn, last));
	ASSERT_TRUE(names(r, lo + fn, t0) && names(r, lo + fn, t1));
	ASSERT_TRUE(names(r, last + fn, t0) && names(r, last + fn, t1));
	/* The page below is out of reach one way or the other. */
	lo -= PG;
	ASSERT_TRUE(!names(r, t1 + fn, lo) || !names(r, lo + fn, t1) ||
		    !names(r, lo + PG - st + fn, t1));
	last += PG;
	ASSERT_TRUE(!names(r, t0 + fn, last) || !names(r, last + fn, t0));
}

/*
 * Anchors in the middle of the space, page-aligned and not, for every
 * machine and kind: where the window is not cut by the space's ends, it
 * is exactly what the figures allow at page granularity.
 */
TEST(windows)
{
	uint64_t mid = (ncb__user_top() / 2) & ~(PG - 1);
	static const uint64_t offs[][2] = {
		{ 0, 1 }, { 0, 4096 }, { 0x123, 0x5679 }, { 0xffc, 0x100000 },
	};
	struct ncb_reach r;
	struct ncb_near n;
	unsigned int i, j;
	int k;

	for (i = 0; i < NMACH; i++) {
		for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++) {
			r = NCB_INIT(ncb_reach);
			if (ncb_reach(machines[i], k, &r))
				continue;
			for (j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
				uint64_t a = mid + offs[j][0];
				uint64_t b = mid + offs[j][1];
				int ret = window(machines[i], k, 0, a, b, PG,
						 &n);

				if (ret && n.why != NCB_NEAR_FULL &&
				    n.why != NCB_NEAR_ALIGN)
					FAIL("machine %d kind %d: why %d",
					     machines[i], k, n.why);
				/* Cut by the space: not the figures'. */
				if (n.lo <= PG * 16 ||
				    n.hi >= ncb__user_top() - PG * 16)
					continue;
				check_window(&r, a, b, &n);
			}
		}
	}
}

/*
 * Where the reach is symmetric (x86's rel32, B/BL, JAL, BRASL), the
 * window is the one within gives: every byte less than the reach from
 * every byte of a page-aligned anchor.
 */
TEST(same_as_within)
{
	uint64_t mid = (ncb__user_top() / 2) & ~(PG - 1);
	static const struct {
		int machine, kind;
		uint64_t within;
	} c[] = {
		{ EM_X86_64, NCB_REACH_BRANCH, 1ULL << 31 },
		{ EM_X86_64, NCB_REACH_PCREL, 1ULL << 31 },
		{ EM_AARCH64, NCB_REACH_BRANCH, 1ULL << 27 },
		{ EM_AARCH64, NCB_REACH_PCREL, 1ULL << 32 },
		{ EM_RISCV, NCB_REACH_BRANCH, 1ULL << 20 },
		{ EM_PPC64, NCB_REACH_BRANCH, 1ULL << 25 },
		{ EM_S390, NCB_REACH_BRANCH, 1ULL << 32 },
	};
	struct ncb_near n, w;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		window(c[i].machine, c[i].kind, 0, mid, mid + PG, PG, &n);
		window(0, 0, c[i].within, mid, mid + PG, PG, &w);
		ASSERT_UEQ(n.lo, w.lo);
		ASSERT_UEQ(n.hi, w.hi);
		/* within as well: the narrower of the two. */
		window(c[i].machine, c[i].kind, 16 * PG, mid, mid + PG, PG,
		       &n);
		ASSERT_UEQ(n.lo, mid - 15 * PG);
		ASSERT_UEQ(n.hi, mid + 16 * PG);
	}
	/* A32's PC is 8 on: a page less each side at page granularity. */
	window(EM_ARM, NCB_REACH_BRANCH, 0, mid, mid + PG, PG, &n);
	window(0, 0, 1ULL << 25, mid, mid + PG, PG, &w);
	ASSERT_UEQ(n.lo, w.lo + PG);
	ASSERT_UEQ(n.hi, w.hi - PG);
	/* i386's rel32 wraps: the whole of a 32-bit space. */
	window(EM_386, NCB_REACH_BRANCH, 0, 1ULL << 31, (1ULL << 31) + 1, PG,
	       &n);
	window(0, 0, 1ULL << 32, 1ULL << 31, (1ULL << 31) + 1, PG, &w);
	ASSERT_UEQ(n.lo, w.lo);
	ASSERT_UGE(n.hi, w.hi - PG);
}

TEST(near_errors)
{
	struct ncb_near_opts o = NCB_INIT(ncb_near_opts,
					  .reach = NCB_REACH_BRANCH);
	struct ncb_near n = NCB_INIT(ncb_near);
	uint64_t at = 1ULL << 30;

	/* Reach alone is enough: within may be 0. */
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, &o, &n) == 0 ||
		  n.why != NCB_NEAR_PLACED, 1);
	o.reach = 3;
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, &o, &n), -EINVAL);
	o.reach = -1;
	ASSERT_EQ(ncb_find_near(0, at, at, 1ULL << 31, PG, &o, &n), -EINVAL);
	o = NCB_INIT(ncb_near_opts, .machine = EM_AARCH64);
	ASSERT_EQ(ncb_find_near(0, at, at, 1ULL << 31, PG, &o, &n), -EINVAL);
	o.reach = NCB_REACH_BRANCH;
	o.machine = EM_SPARCV9;
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, &o, &n), -ENOTSUP);
	o.machine = EM_386;
	o.reach = NCB_REACH_PCREL;
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, &o, &n), -ENOENT);
	/* Absurd lengths fit no window: said, not refused. */
	o.machine = EM_AARCH64;
	o.reach = NCB_REACH_BRANCH;
	ASSERT_EQ(ncb_find_near(0, at, at, 0, 1ULL << 29, &o, &n), -ENOMEM);
	ASSERT_EQ(n.why, NCB_NEAR_SMALL);
	ASSERT_EQ(ncb_find_near(0, at, at, 0, SIZE_MAX, &o, &n), -ENOMEM);
	ASSERT_EQ(n.why, NCB_NEAR_SMALL);
	/* A 1.1 caller's struct still works, without the new fields. */
	o = NCB_INIT(ncb_near_opts);
	o.size = offsetof(struct ncb_near_opts, reach);
	ASSERT_EQ(ncb_find_near(0, at, at, 0, PG, &o, &n), -EINVAL);
	ASSERT_EQ(ncb_find_near(0, at, at, 1ULL << 31, PG, &o, &n) == 0 ||
		  n.why != NCB_NEAR_PLACED, 1);
}

/* Reservations near a function of this program, by every machine's reach. */
TEST(reserve_near)
{
	uint64_t f = (uintptr_t)&get;
	struct ncb_reach r;
	struct ncb_resv *v;
	unsigned int i;
	int k, err;

	for (i = 0; i < NMACH; i++) {
		for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++) {
			struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts,
				.near_lo = f, .near_hi = f + 64,
				.reach = k, .machine = machines[i],
				.place = NCB_PLACE_RANDOM);
			uint64_t s, e;

			r = NCB_INIT(ncb_reach);
			if (ncb_reach(machines[i], k, &r))
				continue;
			err = ncb_resv_new(&v, NULL, 4 * PG, &o);
			/* The small reaches may find all of theirs taken. */
			if (err == -ENOMEM && r.max < (1LL << 20))
				continue;
			ASSERT_EQ(err, 0);
			s = (uintptr_t)ncb_resv_addr(v);
			e = s + ncb_resv_len(v) - r.step;
			ASSERT_TRUE(names(&r, f + r.from_next, s) &&
				    names(&r, f + 64 - r.step + r.from_next,
					  e));
			ASSERT_TRUE(names(&r, s + r.from_next, f + 63) &&
				    names(&r, e + r.from_next, f));
			ASSERT_EQ(ncb_resv_release(v), 0);
		}
	}
}

TEST(reserve_errors)
{
	uint64_t f = (uintptr_t)&get;
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .near_lo = f,
					  .near_hi = f + 1);
	struct ncb_resv *v = NULL;
	struct ncb_reach r = get(EM_AARCH64, NCB_REACH_BRANCH);

	/* An anchor, or a machine, without a kind. */
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -EINVAL);
	o = NCB_INIT(ncb_resv_opts, .machine = EM_AARCH64);
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -EINVAL);
	o = NCB_INIT(ncb_resv_opts, .near_lo = f, .near_hi = f - 1,
		     .reach = NCB_REACH_BRANCH);
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -EINVAL);
	o.near_hi = f;
	o.reach = 7;
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -EINVAL);
	o.reach = NCB_REACH_BRANCH;
	o.machine = EM_SPARCV9;
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -ENOTSUP);
	o.machine = EM_PPC64;
	o.reach = NCB_REACH_PCREL;
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -ENOENT);
	/* More than the reach holds; the window and the reach apart. */
	o.machine = EM_AARCH64;
	o.reach = NCB_REACH_BRANCH;
	ASSERT_EQ(ncb_resv_new(&v, NULL, 1ULL << 29, &o), -ENOMEM);
	ASSERT_EQ(ncb_resv_new(&v, NULL, SIZE_MAX, &o), -ENOMEM);
	o.lo = f + (uint64_t)r.max + (1ULL << 30);
	ASSERT_EQ(ncb_resv_new(&v, NULL, PG, &o), -ENOMEM);
	/* An address out of reach is a mistake, as out of the window. */
	o.lo = 0;
	ASSERT_EQ(ncb_resv_new(&v, (void *)(uintptr_t)((f + (1ULL << 28)) &
						      ~(PG - 1)), PG, &o),
		  -EINVAL);
	ASSERT_TRUE(v == NULL);
}

/*
 * Every byte of [s, e) names every byte of the anchor [a, b) and is named
 * by it: the farthest pairs, by the definition.
 */
static int all_in_reach(const struct ncb_reach *r, uint64_t a, uint64_t b,
			uint64_t s, uint64_t e)
{
	uint64_t st = r->step, fn = (uint64_t)r->from_next;
	uint64_t t0 = a & ~(st - 1), t1 = (b - 1) & ~(st - 1), u1 = e - st;

	return names(r, t0 + fn, s) && names(r, t1 + fn, s) &&
	       names(r, t0 + fn, u1) && names(r, t1 + fn, u1) &&
	       names(r, s + fn, t0) && names(r, s + fn, t1) &&
	       names(r, u1 + fn, t0) && names(r, u1 + fn, t1);
}

/* A reservation exactly at addr, near the anchor: 0, or -errno. */
static int reserve_at(int machine, int kind, uint64_t a, uint64_t b,
		      uint64_t addr, uint64_t len)
{
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .near_lo = a,
					  .near_hi = b, .reach = kind,
					  .machine = machine);
	struct ncb_resv *v;
	int err = ncb_resv_new(&v, (void *)(uintptr_t)addr, (size_t)len, &o);

	if (err)
		return err;
	ASSERT_UEQ((uintptr_t)ncb_resv_addr(v), addr);
	ASSERT_EQ(ncb_resv_release(v), 0);
	return 0;
}

/*
 * A block at either end of the window: every byte of it within reach of
 * every byte of the anchor, and taken there (or found occupied, which is
 * not ours to free); a page further out is refused, and out of reach.
 */
TEST(extremes)
{
	uint64_t mid = (ncb__user_top() / 4) & ~(PG - 1), len = 4 * PG;
	uint64_t a = mid + 0x123, b = mid + 0x5679;
	struct ncb_reach r;
	struct ncb_near n;
	unsigned int i;
	int k, err;

	for (i = 0; i < NMACH; i++) {
		for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++) {
			r = NCB_INIT(ncb_reach);
			if (ncb_reach(machines[i], k, &r))
				continue;
			window(machines[i], k, 0, a, b, len, &n);
			/* Cut by the space: not the figures'. */
			if (n.lo <= PG * 16 ||
			    n.hi >= ncb__user_top() - PG * 16)
				continue;
			ASSERT_TRUE(all_in_reach(&r, a, b, n.lo, n.lo + len));
			ASSERT_TRUE(all_in_reach(&r, a, b, n.hi - len, n.hi));
			ASSERT_TRUE(!all_in_reach(&r, a, b, n.lo - PG,
						  n.lo - PG + len));
			ASSERT_TRUE(!all_in_reach(&r, a, b, n.hi - len + PG,
						  n.hi + PG));
			/*
			 * Taken, or not placeable here (qemu-user's guest
			 * space may pass the host's: EADDRNOTAVAIL), but not
			 * refused as out of reach.
			 */
			err = reserve_at(machines[i], k, a, b, n.lo, len);
			if (err != -EEXIST && err != -EADDRNOTAVAIL)
				ASSERT_EQ(err, 0);
			err = reserve_at(machines[i], k, a, b, n.hi - len, len);
			if (err != -EEXIST && err != -EADDRNOTAVAIL)
				ASSERT_EQ(err, 0);
			ASSERT_EQ(reserve_at(machines[i], k, a, b, n.lo - PG,
					     len), -EINVAL);
			ASSERT_EQ(reserve_at(machines[i], k, a, b,
					     n.hi - len + PG, len), -EINVAL);
		}
	}
}

TEST_MAIN(T(figures), T(errors), T(windows), T(same_as_within),
	  T(near_errors), T(reserve_near), T(reserve_errors), T(extremes))

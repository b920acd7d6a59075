/* SPDX-License-Identifier: MIT */
/*
 * The watcher's rules, on a recorded address space: each benign pattern
 * and each kind of clobber, without a process to trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "ncbtest.h"
#include "watch/rules.h"

/*
 * A dynamically linked program with two threads: its image (inode 10),
 * the loader (11), libc (12) and a library mapping its segments (13) into
 * the span it has just mapped, a data file (14), a reservation partly
 * committed, a large anonymous chunk, a second thread's stack with its
 * guard page, the heap and the main stack; libbss.so (15, of 8 KiB) is
 * mapped 16 KiB long, as an emulator's loader maps an object's span; two
 * threads' stacks without a guard page between them, merged; anonymous
 * memory made where the watcher did not see, and some made by code in no
 * file.
 */
static const char maps_text[] =
	"555500000000-555500001000 r--p 00000000 08:01 10 /usr/bin/prog\n"
	"555500001000-555500002000 r-xp 00001000 08:01 10 /usr/bin/prog\n"
	"555500002000-555500003000 rw-p 00002000 08:01 10 /usr/bin/prog\n"
	"555500003000-555500024000 rw-p 00000000 00:00 0 [heap]\n"
	"7c0000000000-7c0000008000 rw-p 00000000 00:00 0 \n"
	"7c8000000000-7c8000008000 rw-p 00000000 00:00 0 \n"
	"7c9000000000-7c9000008000 rw-p 00000000 00:00 0 \n"
	"7d0000000000-7d0000081000 rw-p 00000000 00:00 0 \n"
	"7e0000000000-7e0000100000 rw-p 00000000 00:00 0 \n"
	"7f0000000000-7f0000010000 ---p 00000000 00:00 0 \n"
	"7f0000010000-7f0000020000 rw-p 00000000 00:00 0 \n"
	"7f0000020000-7f0000100000 ---p 00000000 00:00 0 \n"
	"7f0800000000-7f0800100000 ---p 00000000 00:00 0 \n"
	"7f1000000000-7f1000100000 rw-p 00000000 00:00 0 \n"
	"7f2000000000-7f2000001000 ---p 00000000 00:00 0 \n"
	"7f2000001000-7f2000801000 rw-p 00000000 00:00 0 \n"
	"7f3000000000-7f3000001000 rw-s 00000000 08:01 14 /srv/data\n"
	"7f3400000000-7f3400010000 rw-p 00000000 00:00 0 \n"
	"7f3800000000-7f3800010000 rwxp 00000000 00:00 0 \n"
	"7f4000000000-7f4000005000 r--p 00000000 08:01 13 /usr/lib/libnew.so\n"
	"7f4000005000-7f4000006000 r-xp 00001000 08:01 13 /usr/lib/libnew.so\n"
	"7f4000006000-7f4000007000 ---p 00000000 00:00 0 \n"
	"7f4000007000-7f4000008000 rw-p 00000000 00:00 0 \n"
	"7f4800000000-7f4800004000 r--p 00000000 08:01 15 /usr/lib/libbss.so\n"
	"7f5000000000-7f5000028000 r--p 00000000 08:01 12 /usr/lib/libc.so.6\n"
	"7f5000028000-7f50001bd000 r-xp 00028000 08:01 12 /usr/lib/libc.so.6\n"
	"7f5000200000-7f5000201000 r--p 00000000 08:01 11 /usr/lib/ld.so\n"
	"7f5000201000-7f5000229000 r-xp 00001000 08:01 11 /usr/lib/ld.so\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]\n";

/* makedev(8, 1), as a constant (checked in names). */
#define DEV 0x801
#define MOD(ino) ((struct ncb__wmod){ DEV, ino })

static const struct ncb__wthread threads[] = {
	{ 100, 0x7ffd00020000, 0 }, { 101, 0x7f2000800000, 0 },
	{ 102, 0x7e00000f0000, 0 }, { 103, 0x7e0000070000, 0 },
	{ 104, 0x7d0000070000, 0x7d0000080000 },
};

#define REGION(s, e, by, file) { s, e, by, file, 0, 0, 0 }

/*
 * The makings the watcher saw, in address order: the program's commits
 * (two the kernel merged into one mapping), the C library's malloc chunk,
 * libnew's plain mapping of the data file, code in no file's region, and
 * an anonymous region the program once made where libbss.so is now (a
 * record of what is gone: not believed over another file's mapping).
 */
static const struct ncb__wregion regions[] = {
	/* The program's own mapping at the break: the kernel says [heap]. */
	REGION(0x555500020000, 0x555500024000, MOD(10), MOD(0)),
	REGION(0x7c0000000000, 0x7c0000004000, MOD(10), MOD(0)),
	REGION(0x7c0000004000, 0x7c0000008000, MOD(10), MOD(0)),
	/* The C library's and the program's, merged; then code in no file's
	   and the program's. */
	REGION(0x7c8000000000, 0x7c8000004000, MOD(12), MOD(0)),
	REGION(0x7c8000004000, 0x7c8000008000, MOD(10), MOD(0)),
	REGION(0x7c9000000000, 0x7c9000004000, MOD(0), MOD(0)),
	REGION(0x7c9000004000, 0x7c9000008000, MOD(10), MOD(0)),
	REGION(0x7f0000010000, 0x7f0000020000, MOD(10), MOD(0)),
	/* The C library's reservation: an arena's, to grow into. */
	REGION(0x7f0800000000, 0x7f0800100000, MOD(12), MOD(0)),
	REGION(0x7f1000000000, 0x7f1000100000, MOD(12), MOD(0)),
	REGION(0x7f3000000000, 0x7f3000001000, MOD(13), MOD(14)),
	REGION(0x7f3800000000, 0x7f3800010000, MOD(0), MOD(0)),
	REGION(0x7f4800000000, 0x7f4800004000, MOD(10), MOD(0)),
};

static const struct ncb__wproc proc = {
	{ DEV, 10 }, { DEV, 11 }, threads, 5, regions,
	sizeof(regions) / sizeof(regions[0]), 1,
};

struct verdict {
	enum ncb__wclass cls;
	enum ncb__wkind culprit;
	pid_t tid;
};

/* The victims of [start, end) from the recorded maps, and the verdict. */
static struct verdict judge_in(const struct ncb__wproc *p, uint64_t start,
			       uint64_t end, pid_t tid, uint64_t sp,
			       struct ncb__wmod caller, struct ncb__wmod file)
{
	struct ncb__wcall c = { start, end, tid, sp, caller, file };
	struct ncb__wvictim v[16];
	struct ncb_mapping m = { .size = sizeof(m) };
	struct ncb_maps *maps;
	struct verdict out;
	size_t n = 0, culprit;

	ASSERT_EQ(ncb__maps_from_text(&maps, maps_text, strlen(maps_text)),
		  0);
	while (ncb_maps_next(maps, &m) == 1 && n < 16) {
		if (m.end <= start || m.start >= end)
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		v[n].m = m;
		v[n].m.path = strdup(m.path);
		v[n].elf = !!strstr(m.path, ".so");
		v[n].file_end = m.inode == 15 ? 0x2000 : 0;
		n++;
	}
	ncb_maps_close(maps);
	out.cls = ncb__wjudge(p, &c, v, n, &culprit);
	out.culprit = n ? v[culprit].kind : NCB__W_RESERVED;
	out.tid = n ? v[culprit].tid : 0;
	while (n--)
		free((void *)v[n].m.path);
	return out;
}

static struct verdict judge_at(uint64_t start, uint64_t end, pid_t tid,
			       uint64_t sp, struct ncb__wmod caller,
			       struct ncb__wmod file)
{
	return judge_in(&proc, start, end, tid, sp, caller, file);
}

/* Called by the main thread, its stack pointer high in [stack]. */
static struct verdict judge(uint64_t start, uint64_t end,
			    struct ncb__wmod caller, struct ncb__wmod file)
{
	return judge_at(start, end, 100, 0x7ffd00020000, caller, file);
}

#define NONE MOD(0)
#define PROG MOD(10)
#define LDSO MOD(11)
#define LIBC MOD(12)
#define LIBNEW MOD(13)

#define ASSERT_VERDICT(v, c, k)						\
	do {								\
		struct verdict v_ = (v);				\
		ASSERT_EQ(v_.cls, c);					\
		if (NCB__WC_CLOBBER(c))					\
			ASSERT_EQ(v_.culprit, k);			\
	} while (0)

TEST(free_space_is_nothing)
{
	ASSERT_VERDICT(judge(0x600000000000, 0x600000001000, PROG, NONE),
		       NCB__WC_NOTHING, 0);
}

/*
 * HotSpot, Go, V8, allocators: commit inside their own reservation; one
 * another module was seen making is its (glibc's arenas grow into theirs).
 */
TEST(reservation_pages)
{
	ASSERT_VERDICT(judge(0x7f0000020000, 0x7f0000030000, LIBC, NONE),
		       NCB__WC_RESERVATION, 0);
	ASSERT_VERDICT(judge(0x7f0800010000, 0x7f0800020000, LIBC, NONE),
		       NCB__WC_RESERVATION, 0);
	ASSERT_VERDICT(judge(0x7f0800010000, 0x7f0800020000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	/* A guard page is reservation pages too: not the thread's stack. */
	ASSERT_VERDICT(judge(0x7f2000000000, 0x7f2000001000, PROG, NONE),
		       NCB__WC_RESERVATION, 0);
}

/* ld.so mapping a library's segments and bss into the span it mapped. */
TEST(loader_in_span)
{
	ASSERT_VERDICT(judge(0x7f4000005000, 0x7f4000006000, LDSO, LIBNEW),
		       NCB__WC_LOADER, 0);
	ASSERT_VERDICT(judge(0x7f4000004000, 0x7f4000008000, LDSO, NONE),
		       NCB__WC_LOADER, 0);
	/* The loader mapping another file over it is a clobber still. */
	ASSERT_VERDICT(judge(0x7f4000005000, 0x7f4000006000, LDSO, LIBC),
		       NCB__WC_OTHER_MODULE, NCB__W_LIBRARY);
	/* Another loader (an emulator's) maps the file's segments too. */
	ASSERT_VERDICT(judge(0x7f4000005000, 0x7f4000006000, PROG, LIBNEW),
		       NCB__WC_LOADER, 0);
	/* But only ld.so maps anonymous memory there as bss. */
	ASSERT_VERDICT(judge(0x7f4000005000, 0x7f4000006000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_LIBRARY);
}

/* A loader's bss over its span's pages past the end of the file. */
TEST(past_end_of_file)
{
	ASSERT_VERDICT(judge(0x7f4800002000, 0x7f4800004000, PROG, NONE),
		       NCB__WC_RESERVATION, 0);
	/* Reaching into the file's pages: another module's library. */
	ASSERT_VERDICT(judge(0x7f4800001000, 0x7f4800003000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_LIBRARY);
}

/* A module moving its own text onto huge pages (node does). */
TEST(own_image)
{
	ASSERT_VERDICT(judge(0x7f5000028000, 0x7f5000100000, LIBC, NONE),
		       NCB__WC_OWN_IMAGE, 0);
	ASSERT_VERDICT(judge(0x555500001000, 0x555500002000, PROG, NONE),
		       NCB__WC_OWN_IMAGE, 0);
	/* Its text and its read-only data: not only code. */
	ASSERT_VERDICT(judge(0x7f5000020000, 0x7f5000030000, LIBC, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_LIBRARY);
}

TEST(regions_by_maker)
{
	ASSERT_VERDICT(judge(0x7f0000010000, 0x7f0000018000, PROG, NONE),
		       NCB__WC_OWN_REGION, 0);
	ASSERT_VERDICT(judge(0x7f0000010000, 0x7f0000018000, LIBC, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	/* Committed pages and the reservation's: still the one region. */
	ASSERT_VERDICT(judge(0x7f0000018000, 0x7f0000028000, PROG, NONE),
		       NCB__WC_OWN_REGION, 0);
	/* Two of its commits merged into one mapping: its too. */
	ASSERT_VERDICT(judge(0x7c0000002000, 0x7c0000006000, PROG, NONE),
		       NCB__WC_OWN_REGION, 0);
	/* Its region and its other region: one making, its own. */
	ASSERT_VERDICT(judge(0x7c0000000000, 0x7c0000008000, LIBC, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
}

/* Made by another module with a plain mmap: a malloc chunk, a cache. */
TEST(plain_regions_by_maker)
{
	ASSERT_VERDICT(judge(0x7f1000010000, 0x7f1000011000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	ASSERT_VERDICT(judge(0x7f1000010000, 0x7f1000011000, LIBC, NONE),
		       NCB__WC_OWN_REGION, 0);
	ASSERT_VERDICT(judge(0x7f3000000000, 0x7f3000001000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	ASSERT_VERDICT(judge(0x7f3000000000, 0x7f3000001000, LIBNEW, NONE),
		       NCB__WC_OWN_REGION, 0);
}

/*
 * PROT_NONE pages holding data (written, then protected): no reservation;
 * holding none, the C library's chunk's all the same, not the program's.
 */
TEST(protected_data)
{
	static const char text[] =
		"7f1000000000-7f1000010000 rw-p 00000000 00:00 0 \n"
		"7f1000010000-7f1000011000 ---p 00000000 00:00 0 \n"
		"7f1000011000-7f1000100000 rw-p 00000000 00:00 0 \n";
	struct ncb__wcall c = { 0x7f1000010000, 0x7f1000011000, 100,
				0x7ffd00020000, PROG, NONE };
	struct ncb__wvictim v = { .elf = 0 };
	struct ncb_maps *maps;
	size_t culprit;

	ASSERT_EQ(ncb__maps_from_text(&maps, text, strlen(text)), 0);
	v.m.size = sizeof(v.m);
	ASSERT_EQ(ncb_maps_seek(maps, 0x7f1000010000), 0);
	ASSERT_EQ(ncb_maps_next(maps, &v.m), 1);
	ASSERT_EQ(ncb__wjudge(&proc, &c, &v, 1, &culprit),
		  NCB__WC_OTHER_MODULE);
	ASSERT_EQ(v.kind, NCB__W_REGION);
	c.caller = LIBC;
	ASSERT_EQ(ncb__wjudge(&proc, &c, &v, 1, &culprit),
		  NCB__WC_RESERVATION);
	v.has_data = 1;
	ASSERT_EQ(ncb__wjudge(&proc, &c, &v, 1, &culprit),
		  NCB__WC_OWN_REGION);
	c.caller = PROG;
	ASSERT_EQ(ncb__wjudge(&proc, &c, &v, 1, &culprit),
		  NCB__WC_OTHER_MODULE);
	ASSERT_EQ(v.kind, NCB__W_REGION);
	ncb_maps_close(maps);
}

/* Made where the watcher did not see, or by code in no file: unjudged. */
TEST(unknown_maker)
{
	ASSERT_VERDICT(judge(0x7f3400000000, 0x7f3400001000, PROG, NONE),
		       NCB__WC_UNKNOWN, 0);
	ASSERT_VERDICT(judge(0x7f3800000000, 0x7f3800001000, PROG, NONE),
		       NCB__WC_UNKNOWN, 0);
	ASSERT_VERDICT(judge(0x7f3800000000, 0x7f3800001000, NONE, NONE),
		       NCB__WC_UNKNOWN, 0);
	ASSERT_TRUE(!NCB__WC_BENIGN(NCB__WC_UNKNOWN) &&
		    !NCB__WC_CLOBBER(NCB__WC_UNKNOWN));
}

/* A set of regions: a newer one takes what it covers of the older. */
TEST(region_set)
{
	struct ncb__wregions s = { .max = 4 };
	struct ncb__wregion r = REGION(0x1000, 0x9000, MOD(1), MOD(0));
	const struct ncb__wregion *g;

	ASSERT_EQ(ncb__wregions_add(&s, &r), 0);
	r = (struct ncb__wregion)REGION(0x3000, 0x4000, MOD(2), MOD(0));
	ASSERT_EQ(ncb__wregions_add(&s, &r), 0);
	ASSERT_UEQ(s.n, 3);
	g = ncb__wregions_at(s.r, s.n, 0x2fff);
	ASSERT_TRUE(g && g->by.ino == 1 && g->end == 0x3000);
	g = ncb__wregions_at(s.r, s.n, 0x3000);
	ASSERT_TRUE(g && g->by.ino == 2);
	g = ncb__wregions_at(s.r, s.n, 0x4000);
	ASSERT_TRUE(g && g->by.ino == 1 && g->start == 0x4000);
	ASSERT_TRUE(!ncb__wregions_at(s.r, s.n, 0x9000));
	/* Across the ends of two and over one whole. */
	r = (struct ncb__wregion)REGION(0x2000, 0x5000, MOD(3), MOD(0));
	ASSERT_EQ(ncb__wregions_add(&s, &r), 0);
	ASSERT_UEQ(s.n, 3);
	ASSERT_UEQ(s.r[0].end, 0x2000);
	ASSERT_UEQ(s.r[1].by.ino, 3);
	ASSERT_UEQ(s.r[2].start, 0x5000);
	r = (struct ncb__wregion)REGION(0xa000, 0xb000, MOD(4), MOD(0));
	ASSERT_EQ(ncb__wregions_add(&s, &r), 0);
	/* Full (4): a split finds no room; the older one goes whole. */
	r = (struct ncb__wregion)REGION(0x6000, 0x7000, MOD(5), MOD(0));
	ASSERT_EQ(ncb__wregions_add(&s, &r), -ENOMEM);
	ASSERT_UEQ(s.n, 3);
	ASSERT_TRUE(!ncb__wregions_at(s.r, s.n, 0x5000));
	ASSERT_TRUE(!ncb__wregions_at(s.r, s.n, 0x6000));
	/* An empty range changes nothing. */
	r = (struct ncb__wregion)REGION(0x2000, 0x2000, MOD(6), MOD(0));
	ASSERT_EQ(ncb__wregions_add(&s, &r), 0);
	ASSERT_UEQ(s.n, 3);
	/* Cut: no record left in the range, the rest kept. */
	ncb__wregions_cut(&s, 0x1800, 0x3000);
	ASSERT_UEQ(s.n, 3);
	ASSERT_UEQ(s.r[0].end, 0x1800);
	ASSERT_UEQ(s.r[1].start, 0x3000);
	ASSERT_TRUE(!ncb__wregions_at(s.r, s.n, 0x2fff));
	ncb__wregions_free(&s);
	ASSERT_UEQ(s.n, 0);
}

TEST(kernel_memory)
{
	ASSERT_VERDICT(judge(0x555500010000, 0x555500011000, LIBC, NONE),
		       NCB__WC_KERNEL, NCB__W_HEAP);
	ASSERT_VERDICT(judge(0x7ffd00010000, 0x7ffd00011000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_STACK);
	ASSERT_VERDICT(judge(0x555500001000, 0x555500002000, LIBC, NONE),
		       NCB__WC_KERNEL, NCB__W_EXE);
	/* Its own data, even by the program itself. */
	ASSERT_VERDICT(judge(0x555500002000, 0x555500003000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_EXE);
	ASSERT_VERDICT(judge(0x7f5000201000, 0x7f5000202000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_INTERP);
	ASSERT_VERDICT(judge(0x7ffd00100000, 0x7ffd00101000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_KERNEL);
}

/*
 * A mapping the program made at the break, which the kernel names [heap]
 * with the heap: the program's, where the watcher follows brk.
 */
TEST(region_at_the_break)
{
	struct ncb__wproc blind = proc;

	ASSERT_VERDICT(judge(0x555500020000, 0x555500021000, PROG, NONE),
		       NCB__WC_OWN_REGION, 0);
	ASSERT_VERDICT(judge(0x555500020000, 0x555500021000, LIBC, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	/* The heap below it, the break's memory, is the kernel's. */
	ASSERT_VERDICT(judge(0x55550001f000, 0x555500021000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_HEAP);
	blind.sees_brk = 0;
	ASSERT_VERDICT(judge_in(&blind, 0x555500020000, 0x555500021000, 100,
				0x7ffd00020000, PROG, NONE),
		       NCB__WC_KERNEL, NCB__W_HEAP);
}

/* A reservation over the program break is named [heap] all the same. */
TEST(reservation_named_heap)
{
	static const char text[] =
		"59000000-9a000000 ---p 00000000 00:00 0 [heap]\n";
	struct ncb__wcall c = { 0x60000000, 0x60001000, 100, 0x7ffd00020000,
				PROG, NONE };
	struct ncb__wvictim v = { .elf = 0 };
	struct ncb_maps *maps;
	size_t culprit;

	ASSERT_EQ(ncb__maps_from_text(&maps, text, strlen(text)), 0);
	v.m.size = sizeof(v.m);
	ASSERT_EQ(ncb_maps_next(maps, &v.m), 1);
	ASSERT_EQ(ncb__wjudge(&proc, &c, &v, 1, &culprit),
		  NCB__WC_RESERVATION);
	ncb_maps_close(maps);
}

/* A program with no interpreter (static, or ld.so run as one) loads. */
TEST(own_loader)
{
	struct ncb__wproc self = proc;
	struct ncb__wcall c = { 0x7f4000005000, 0x7f4000006000, 100,
				0x7ffd00020000, PROG, NONE };
	struct ncb_mapping m = { .size = sizeof(m) };
	struct ncb__wvictim v = { .elf = 1 };
	struct ncb_maps *maps;
	size_t culprit;

	self.interp = self.exe;
	ASSERT_EQ(ncb__maps_from_text(&maps, maps_text, strlen(maps_text)),
		  0);
	while (ncb_maps_next(maps, &m) == 1 && m.inode != 13)
		;
	v.m = m;
	v.m.start = 0x7f4000005000;
	v.m.end = 0x7f4000006000;
	ASSERT_EQ(ncb__wjudge(&self, &c, &v, 1, &culprit), NCB__WC_LOADER);
	ncb_maps_close(maps);
}

TEST(thread_stack)
{
	struct verdict v = judge(0x7f2000400000, 0x7f2000401000, PROG, NONE);

	ASSERT_VERDICT(v, NCB__WC_THREAD_STACK, NCB__W_THREAD_STACK);
	ASSERT_EQ(v.tid, 101);
	/* Its own thread, below its stack pointer: a guard zone. */
	v = judge_at(0x7f2000001000, 0x7f2000003000, 101, 0x7f2000700000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_OWN_STACK, 0);
	/* Its own frames, where the stack is in use: a clobber still. */
	v = judge_at(0x7f20006ff000, 0x7f2000701000, 101, 0x7f2000700000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_THREAD_STACK, NCB__W_THREAD_STACK);
	/* Stacks merged into one mapping: the one above the range's. */
	v = judge_at(0x7e0000001000, 0x7e0000002000, 103, 0x7e0000070000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_OWN_STACK, 0);
	v = judge_at(0x7e0000081000, 0x7e0000082000, 103, 0x7e0000070000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_THREAD_STACK, NCB__W_THREAD_STACK);
	ASSERT_EQ(v.tid, 102);
	/* A page merged above a stack's top (known from clone): not it. */
	v = judge_at(0x7d0000080000, 0x7d0000081000, 100, 0x7ffd00020000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_UNKNOWN, 0);
	/* The main stack is the kernel's, whoever asks. */
	v = judge_at(0x7ffd00000000, 0x7ffd00001000, 100, 0x7ffd00020000,
		     PROG, NONE);
	ASSERT_VERDICT(v, NCB__WC_KERNEL, NCB__W_STACK);
}

TEST(another_library)
{
	ASSERT_VERDICT(judge(0x7f5000000000, 0x7f5000001000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_LIBRARY);
}

TEST(spans_or_runs_past)
{
	/* The data file and the memory after it: two makings. */
	ASSERT_VERDICT(judge(0x7f3000000000, 0x7f4000001000, PROG, NONE),
		       NCB__WC_SPANS, NCB__W_ANON);
	/* Past a region of unknown maker: no benefit of the doubt. */
	ASSERT_VERDICT(judge(0x7f3800000000, 0x7f3800020000, PROG, NONE),
		       NCB__WC_SPANS, NCB__W_REGION);
	/* The C library's chunk and the free space after it. */
	ASSERT_VERDICT(judge(0x7f10000f0000, 0x7f1000110000, PROG, NONE),
		       NCB__WC_SPANS, NCB__W_REGION);
}

/* Two modules' regions the kernel merged into one mapping. */
TEST(merged_makings)
{
	ASSERT_VERDICT(judge(0x7c8000003000, 0x7c8000005000, PROG, NONE),
		       NCB__WC_SPANS, NCB__W_REGION);
	ASSERT_VERDICT(judge(0x7c8000003000, 0x7c8000005000, LIBC, NONE),
		       NCB__WC_SPANS, NCB__W_REGION);
	ASSERT_VERDICT(judge(0x7c8000001000, 0x7c8000002000, PROG, NONE),
		       NCB__WC_OTHER_MODULE, NCB__W_REGION);
	ASSERT_VERDICT(judge(0x7c8000005000, 0x7c8000006000, PROG, NONE),
		       NCB__WC_OWN_REGION, 0);
	/* A part of unknown maker: unjudged, not another's. */
	ASSERT_VERDICT(judge(0x7c9000003000, 0x7c9000005000, PROG, NONE),
		       NCB__WC_UNKNOWN, 0);
}

/*
 * A reservation of the program's next to one of the C library's (an
 * arena's tail: both PROT_NONE, MAP_NORESERVE), which the kernel merged
 * into one mapping: taking both is taking the C library's too.
 */
TEST(merged_reservations)
{
	static const char text[] =
		"7f07fff00000-7f0800100000 ---p 00000000 00:00 0 \n";
	static const struct ncb__wregion rg[] = {
		REGION(0x7f07fff00000, 0x7f0800000000, PROG, NONE),
		REGION(0x7f0800000000, 0x7f0800100000, LIBC, NONE),
	};
	struct ncb__wproc p = { PROG, LDSO, threads, 1, rg, 2, 1 };
	struct ncb__wcall c = { 0x7f0800000000, 0x7f0800010000, 100,
				0x7ffd00020000, PROG, NONE };
	struct ncb__wvictim v = { .elf = 0 };
	struct ncb_maps *maps;
	size_t culprit;

	ASSERT_EQ(ncb__maps_from_text(&maps, text, strlen(text)), 0);
	v.m.size = sizeof(v.m);
	ASSERT_EQ(ncb_maps_next(maps, &v.m), 1);
	ASSERT_EQ(ncb__wjudge(&p, &c, &v, 1, &culprit),
		  NCB__WC_OTHER_MODULE);
	c.start = 0x7f07ffff0000;
	c.end = 0x7f07ffff1000;
	ASSERT_EQ(ncb__wjudge(&p, &c, &v, 1, &culprit),
		  NCB__WC_RESERVATION);
	c.end = 0x7f0800010000;
	ASSERT_EQ(ncb__wjudge(&p, &c, &v, 1, &culprit), NCB__WC_SPANS);
	ASSERT_EQ(v.kind, NCB__W_REGION);
	ncb_maps_close(maps);
}

TEST(names)
{
	ASSERT_UEQ(makedev(8, 1), DEV);
	ASSERT_TRUE(!strcmp(ncb__wclass_name(NCB__WC_LOADER), "loader"));
	ASSERT_TRUE(!strcmp(ncb__wkind_name(NCB__W_THREAD_STACK),
			    "thread-stack"));
	ASSERT_TRUE(!strcmp(ncb__wclass_name((enum ncb__wclass)99), "?"));
}

TEST_MAIN(T(free_space_is_nothing), T(reservation_pages), T(loader_in_span),
	  T(past_end_of_file), T(own_image), T(regions_by_maker),
	  T(plain_regions_by_maker), T(protected_data), T(unknown_maker),
	  T(region_set),
	  T(kernel_memory), T(region_at_the_break), T(reservation_named_heap),
	  T(own_loader), T(thread_stack), T(another_library),
	  T(spans_or_runs_past), T(merged_makings),
	  T(merged_reservations), T(names))

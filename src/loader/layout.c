/* SPDX-License-Identifier: MIT */
/*
 * Where execve puts a program and its break (fs/binfmt_elf.c
 * load_elf_binary), so that ncb_exec puts them there too.  A
 * position-independent program with an interpreter goes to the
 * architecture's ELF_ET_DYN_BASE plus arch_mmap_rnd(), aligned to its
 * largest segment alignment: far below the libraries, with room above for
 * the break.  One without (static-pie, or ld.so run as the program) goes
 * where mmap would put it, and its break moves to ELF_ET_DYN_BASE (when
 * randomizing since Linux 5.18, always since 6.15).  The break starts at
 * the image's end, moved up by arch_randomize_brk() when
 * randomize_va_space is 2.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include "loader.h"

#define SYSCTL "/proc/sys/"

/* ELF_ET_DYN_BASE (arch/), 0 where unknown. */
static uint64_t dyn_base_of(const struct ncb__sys *sys)
{
	(void)sys;
	return NCB_ARCH_DYN_BASE(sys->kernel_64);
}

static uint64_t random_u64(void)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = 0;
	return r;
}

/*
 * Whether the kernel is 64-bit.  Only 64-bit kernels keep a separate
 * randomization for 32-bit processes (mmap_rnd_compat_bits, on x86 and
 * arm64 wherever they run 32-bit programs at all); without /proc/sys,
 * uname, which says i686 or armv8l only under a PER_LINUX32 personality.
 */
int ncb__kernel_64(void)
{
	struct utsname u;

	if (sizeof(void *) == 8 ||
	    !access("/proc/sys/vm/mmap_rnd_compat_bits", F_OK))
		return 1;
	return !uname(&u) && strstr(u.machine, "64");
}

/*
 * When a static PIE's break moves to ELF_ET_DYN_BASE: never before 5.18
 * (bbdc6076d2e5), when randomizing from then on, always since
 * 11854fe263eb ("binfmt_elf: Move brk for static PIE even if ASLR
 * disabled"): 6.15, and the stable releases it went back to (6.12.30,
 * 6.6.92, 6.1.140).  Unknown: as the running kernel most likely is.
 */
static int brk_moves(unsigned int v)
{
	static const unsigned int fixed[] = {
		6 << 16 | 12 << 8 | 30, 6 << 16 | 6 << 8 | 92,
		6 << 16 | 1 << 8 | 140,
	};
	unsigned int i;

	if (!v || v >= (6 << 16 | 15 << 8))
		return NCB__BRK_MOVES_ALWAYS;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((v & ~0xffu) == (fixed[i] & ~0xffu) && v >= fixed[i])
			return NCB__BRK_MOVES_ALWAYS;
	return v >= (5 << 16 | 18 << 8) ? NCB__BRK_MOVES_RANDOM : 0;
}

/*
 * Whether an emulator runs this process (qemu-user, valgrind): it
 * answers for /proc/self/exe with the guest's program, while the link of
 * this thread's own entry, which it passes through, names the emulator.
 * Natively they agree.
 */
int ncb__emulated(void)
{
	/* Asked once: a forked child runs under the same emulator. */
	static int known = -1;
	char task[64], *self, *real;
	ssize_t a, b;
	int differ;

	if (known >= 0)
		return known;
	/* Not on the stack: this runs at load, under any stack limit. */
	self = malloc(2 * PATH_MAX);
	if (!self)
		return 0;
	real = self + PATH_MAX;
	snprintf(task, sizeof(task), "/proc/self/task/%ld/exe",
		 (long)syscall(SYS_gettid));
	a = readlink("/proc/self/exe", self, PATH_MAX);
	b = readlink(task, real, PATH_MAX);
	differ = a > 0 && b > 0 && (a != b || memcmp(self, real, (size_t)a));
	free(self);
	if (a > 0 && b > 0)
		known = differ;
	return differ;
}

void ncb__sys_read(struct ncb__sys *sys)
{
	int pers = personality(0xffffffff);

	sys->rnd = ncb__read_ulong(SYSCTL "kernel/randomize_va_space", 2);
	if (pers != -1 && (pers & ADDR_NO_RANDOMIZE))
		sys->rnd = 0;
	sys->rnd_bits = sizeof(void *) == 4 ?
		ncb__read_ulong(SYSCTL "vm/mmap_rnd_compat_bits", 8) :
		ncb__read_ulong(SYSCTL "vm/mmap_rnd_bits", 28);
	if (sys->rnd_bits > 40)
		sys->rnd_bits = 40;
	sys->kernel_64 = ncb__kernel_64();
	sys->brk_moves = brk_moves((unsigned int)ncb_core_kernel_release());
	sys->emulated = ncb__emulated();
}

/* arch_mmap_rnd(): rnd_bits random pages. */
static uint64_t mmap_rnd(const struct ncb__sys *sys, uint64_t page)
{
	return (random_u64() & ((1ULL << sys->rnd_bits) - 1)) * page;
}

/* randomize_page(): start, page-aligned, moved up by less than range. */
static uint64_t randomize_page(uint64_t start, uint64_t range,
			       uint64_t page)
{
	uint64_t pages, up = (start + page - 1) & ~(page - 1);

	range -= up - start;
	start = up;
	pages = range / page;

	return pages ? start + random_u64() % pages * page : start;
}

/* Where the program goes: 0 for where mmap puts it. */
static uint64_t dyn_base(const struct ncb_elf *e, const struct ncb__sys *sys,
			 uint64_t page)
{
	uint64_t align = e->align > page ? e->align : page, base;

	if (e->eh.e_type != ET_DYN || !e->interp || !dyn_base_of(sys))
		return 0;
	/* The bias is aligned; the span starts at its first page. */
	base = dyn_base_of(sys) + (sys->rnd ? mmap_rnd(sys, page) : 0);
	return base & ~(align - 1);
}

/*
 * The break for an image ending at end: there, or for a program without
 * an interpreter at ELF_ET_DYN_BASE; when randomizing, a page above the
 * image (not when moved) and then up by up to 1 GiB (32 MiB for a 32-bit
 * process).
 */
static int brk_moved(const struct ncb_elf *e, const struct ncb__sys *sys)
{
	return e->eh.e_type == ET_DYN && !e->interp && dyn_base_of(sys) &&
	       (sys->brk_moves == NCB__BRK_MOVES_ALWAYS ||
		(sys->brk_moves && sys->rnd > 1));
}

uint64_t ncb__exec_brk(const struct ncb_elf *e, uint64_t end,
		       const struct ncb__sys *sys)
{
	uint64_t page = ncb__probe()->page_size, base = dyn_base_of(sys);
	int moved = brk_moved(e, sys);

	if (moved)
		end = (base + page - 1) & ~(page - 1);
	if (sys->rnd < 2)
		return end;
	if (!moved)
		end += page;
	return randomize_page(end, sizeof(void *) == 4 ? 32ULL << 20
						       : 1ULL << 30, page);
}

int ncb__layout(const struct ncb_elf *e, const struct ncb__sys *sys,
		struct ncb_exec_layout *l)
{
	struct ncb_exec_layout r = { .size = sizeof(r) };
	uint64_t page = ncb__probe()->page_size;

	if (!e || ncb__out_size(l, NCB__END(ncb_exec_layout, brk)))
		return -EINVAL;
	r.base = dyn_base(e, sys, page);
	if (e->eh.e_type == ET_EXEC)
		r.brk = ncb__exec_brk(e, e->hi, sys);
	else if (r.base)
		r.brk = ncb__exec_brk(e, r.base + e->hi - e->lo, sys);
	else if (brk_moved(e, sys))
		r.brk = ncb__exec_brk(e, 0, sys);
	ncb__out(l, &r, sizeof(r));
	return 0;
}

int ncb_exec_layout(const struct ncb_elf *e, struct ncb_exec_layout *l)
{
	struct ncb__sys sys;

	ncb__sys_read(&sys);
	return ncb__layout(e, &sys, l);
}

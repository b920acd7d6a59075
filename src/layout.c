/* SPDX-License-Identifier: MIT */
/*
 * Where execve puts a program and its break (fs/binfmt_elf.c
 * load_elf_binary), so that ncb_exec puts them there too.  A
 * position-independent program with an interpreter goes to the
 * architecture's ELF_ET_DYN_BASE plus arch_mmap_rnd(), aligned to its
 * largest segment alignment: far below the libraries, with room above for
 * the break.  One without (static-pie, or ld.so run as the program) goes
 * where mmap would put it, and its break moves to ELF_ET_DYN_BASE (since
 * Linux 5.18 when randomizing, since 6.15 always).  The break starts at the image's end, moved up by
 * arch_randomize_brk() when randomize_va_space is 2.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include "loader.h"

/* ELF_ET_DYN_BASE as a process of this ABI sees it (arch/.../elf.h). */
#if defined(__x86_64__)
/* DEFAULT_MAP_WINDOW / 3 * 2, the window being 47 bits less a page */
#define DYN_BASE ((((1ULL << 47) - 4096) / 3) * 2)
#elif defined(__i386__)
/* mmap_is_ia32(): 0x400000, on 64-bit kernels since 4.13 */
#define DYN_BASE 0x400000ULL
#elif defined(__aarch64__)
/* 2 * DEFAULT_MAP_WINDOW_64 / 3, 48 bits */
#define DYN_BASE ((2 * (1ULL << 48)) / 3)
#elif defined(__arm__)
/* COMPAT_ELF_ET_DYN_BASE, 2 * TASK_SIZE_32 / 3 under a 64-bit kernel */
#define DYN_BASE ((2 * ((1ULL << 32) - 4096)) / 3)
#elif defined(__riscv)
/* DEFAULT_MAP_WINDOW / 3 * 2 with Sv39's 38-bit window */
#define DYN_BASE (((1ULL << 38) / 3) * 2)
#elif defined(__powerpc64__)
#define DYN_BASE 0x100000000ULL
#elif defined(__s390x__)
/* STACK_TOP / 3 * 2 rounded down to 4 GiB, STACK_TOP being 2^42 */
#define DYN_BASE ((((1ULL << 42) / 3) * 2) & ~0xffffffffULL)
#else
#define DYN_BASE 0ULL
#endif

/* A function, not a constant operand: clang warns of && with those. */
static int have_dyn_base(void)
{
	return DYN_BASE != 0;
}

static unsigned long read_ulong(const char *path, unsigned long dflt)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '9')
		return dflt;
	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

static uint64_t random_u64(void)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = 0;
	return r;
}

/* 0: none; 1: mmap and stack; 2: the break too (randomize_va_space). */
static unsigned long randomizing(void)
{
	int pers = personality(0xffffffff);

	if (pers != -1 && (pers & ADDR_NO_RANDOMIZE))
		return 0;
	return read_ulong("/proc/sys/kernel/randomize_va_space", 2);
}

/* arch_mmap_rnd(): mmap_rnd_bits (compat bits for 32-bit) random pages. */
static uint64_t mmap_rnd(uint64_t page)
{
	unsigned long bits;

	if (sizeof(void *) == 4)
		bits = read_ulong("/proc/sys/vm/mmap_rnd_compat_bits", 8);
	else
		bits = read_ulong("/proc/sys/vm/mmap_rnd_bits", 28);
	if (bits > 40)
		bits = 40;
	return (random_u64() & ((1ULL << bits) - 1)) * page;
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
static uint64_t dyn_base(const struct ncb_elf *e, unsigned long rnd,
			 uint64_t page)
{
	uint64_t align = e->align > page ? e->align : page, base;

	if (e->eh.e_type != ET_DYN || !e->interp || !have_dyn_base())
		return 0;
	/* The bias is aligned; the span starts at its first page. */
	base = DYN_BASE + (rnd ? mmap_rnd(page) : 0);
	return base & ~(align - 1);
}

/*
 * Whether the kernel moves a static PIE's break to ELF_ET_DYN_BASE with
 * randomization off as well: since Linux 6.15 ("binfmt_elf: Move brk for
 * static PIE even if ASLR disabled"); from 5.18 only when randomizing.
 */
static int moves_brk_always(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 1;
	return major > 6 || (major == 6 && minor >= 15);
}

/*
 * The break for an image ending at end: there, or for a program without
 * an interpreter at ELF_ET_DYN_BASE; when randomizing, a page above the
 * image (not when moved) and then up by up to 1 GiB (32 MiB for a 32-bit
 * process).
 */
static uint64_t exec_brk(const struct ncb_elf *e, uint64_t end,
			 unsigned long rnd)
{
	uint64_t page = ncb__probe()->page_size;
	int moved = e->eh.e_type == ET_DYN && !e->interp && have_dyn_base() &&
		    (rnd > 1 || moves_brk_always());

	if (moved)
		end = (DYN_BASE + page - 1) & ~(page - 1);
	if (rnd < 2)
		return end;
	if (!moved)
		end += page;
	return randomize_page(end, sizeof(void *) == 4 ? 32ULL << 20
						       : 1ULL << 30, page);
}

uint64_t ncb__exec_brk(const struct ncb_elf *e, uint64_t end)
{
	return exec_brk(e, end, randomizing());
}

int ncb_exec_layout(const struct ncb_elf *e, struct ncb_exec_layout *l)
{
	struct ncb_exec_layout r = { .size = sizeof(r) };
	uint64_t page = ncb__probe()->page_size;
	unsigned long rnd;

	if (!e || !l || l->size < sizeof(size_t) + sizeof(uint64_t))
		return -EINVAL;
	rnd = randomizing();
	r.base = dyn_base(e, rnd, page);
	if (e->eh.e_type == ET_EXEC)
		r.brk = exec_brk(e, e->hi, rnd);
	else if (r.base)
		r.brk = exec_brk(e, r.base + e->hi - e->lo, rnd);
	else if (e->eh.e_type == ET_DYN && !e->interp && have_dyn_base())
		r.brk = exec_brk(e, 0, rnd);
	memcpy((char *)l + sizeof(size_t), (char *)&r + sizeof(size_t),
	       (l->size < sizeof(r) ? l->size : sizeof(r)) - sizeof(size_t));
	return 0;
}

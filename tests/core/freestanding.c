/* SPDX-License-Identifier: MIT */
/*
 * The core in a static program without any libc (-ffreestanding
 * -nostdlib): its own entry, raw system calls only.  Exit 0 if every
 * check passes; each failure is written to stderr.  Built and run for
 * every architecture by tests/core.sh.
 */
#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF static
#include "noclobber_core.h"

static int fails;

static unsigned long length(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void say(const char *what, long got, long want)
{
	static const char hex[] = "0123456789abcdef";
	char num[2 + 2 * sizeof(long)];
	unsigned long v = (unsigned long)got;
	int i;

	if (got == want)
		return;
	fails++;
	for (i = (int)sizeof(num) - 1; i >= 2; i--, v >>= 4)
		num[i] = hex[v & 15];
	num[0] = '0';
	num[1] = 'x';
	NCB__SC3(__NR_write, 2, what, length(what));
	NCB__SC3(__NR_write, 2, ": got ", 6);
	NCB__SC3(__NR_write, 2, num, sizeof(num));
	NCB__SC3(__NR_write, 2, "\n", 1);
}

/* Every mode's path: a free page taken exactly, an occupied one refused. */
static void paths(unsigned long pg, int mode)
{
	long base, p;

	/* Two pages of our own, the second given back: it is free. */
	/* Readable: qemu-user hides PROT_NONE mappings of 32-bit guests. */
	base = ncb__mmap_raw(0, 2 * pg, 1, NCB__PLACEHOLDER, -1, 0);
	if (NCB_CORE_FAILED(base)) {
		say("mmap of a scratch area", base, 0);
		return;
	}
	ncb__munmap((unsigned long)base + pg, pg);
	p = ncb_core_mmap_mode((void *)(base + (long)pg), pg, 3,
			       NCB__MAP_PRIVATE | NCB__MAP_ANONYMOUS, -1, 0,
			       mode);
	say("a free page, taken where asked", p, base + (long)pg);
	p = ncb_core_mmap_mode((void *)base, 2 * pg, 3, NCB__MAP_PRIVATE |
			       NCB__MAP_ANONYMOUS, -1, 0, mode);
	say("an occupied range: EEXIST", p, -NCB__EEXIST);
	say("the range is occupied", ncb_core_occupied((unsigned long)base,
						       (unsigned long)base + 1),
	    1);
	/* Moving the first page onto the second: occupied, refused. */
	p = ncb_core_mremap_mode((void *)base, pg, pg, 0,
				 (void *)(base + (long)pg), mode);
	say("mremap onto an occupied page: EEXIST", p, -NCB__EEXIST);
	/* The last page lies past the end of every user address space. */
	p = ncb_core_mmap_mode((void *)-pg, pg, 3, NCB__MAP_PRIVATE |
			       NCB__MAP_ANONYMOUS, -1, 0, mode);
	say("the last page: ENOMEM", p, -NCB__ENOMEM);
	p = ncb_core_mremap_mode((void *)base, pg, pg, 0, (void *)-pg, mode);
	say("mremap onto the last page: EINVAL", p, -NCB__EINVAL);
	ncb__munmap((unsigned long)base, 2 * pg);
	say("the range is free again",
	    ncb_core_occupied((unsigned long)base,
			      (unsigned long)base + 2 * pg), 0);
}

static void run(void)
{
	unsigned long pg = ncb_core_page_size();
	int mode = ncb_core_probe();

	say("a page size of at least 4 KiB", pg >= 4096 && !(pg & (pg - 1)),
	    1);
	say("the probe's verdict is known", mode >= NCB_NOREPLACE_HONOURED &&
	    mode <= NCB_NOREPLACE_REPLACES, 1);
	say("the kernel's release is read",
	    ncb_core_kernel_release() >= (2UL << 16), 1);
	paths(pg, mode);
	paths(pg, NCB_NOREPLACE_IGNORED);
	paths(pg, NCB_NOREPLACE_PARTIAL);
}

/*
 * The entry: the kernel leaves the stack 16-byte aligned where a called
 * function expects it 8 off on x86; realigned there.
 */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
void _start(void);

void _start(void)
{
	run();
	for (;;)
		NCB__SC1(__NR_exit_group, fails ? 1 : 0);
}

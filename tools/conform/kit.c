/* SPDX-License-Identifier: MIT */
/*
 * What the cases share: free windows, occupants that say whether they
 * were touched, and a placement's answer put in the suite's words.  Plain
 * libc calls, whose answers are the environment's: nothing here goes
 * around it.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "conform.h"

/* The core, for the kernel's release alone: every symbol kept private. */
#define NCB_CORE_IMPLEMENTATION
#define NCB_CORE_DEF static
#include "noclobber_core.h"

unsigned long kernel_release(void)
{
	return ncb_core_kernel_release();
}

unsigned long mmap_min(void)
{
	return ncb_core_mmap_min_addr();
}

long sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off)
{
	void *p = mmap(addr, len, prot, flags, fd, (off_t)off);

	return p == MAP_FAILED ? -errno : (long)p;
}

long sys_mremap(void *old, size_t old_len, size_t new_len, int flags,
		void *new_addr)
{
	void *p = mremap(old, old_len, new_len, flags, new_addr);

	return p == MAP_FAILED ? -errno : (long)p;
}

/* Errors are [-4095, -1], as the kernel returns them: 32-bit safe. */
static int failed(long ret)
{
	return (unsigned long)ret >= -4095UL;
}

/*
 * Room left above a window: the kernel places the next mappings at the
 * top of the gap the window's reservation leaves, so that what the C
 * library or a sanitizer's runtime maps in the meantime (a thread's
 * stack, its allocator's chunks) takes this first and the window, at the
 * gap's bottom, stays free.
 */
#define WINDOW_SLACK (16UL << 20)

char *free_window(struct cctx *c, size_t len)
{
	size_t all = len + 2 * c->pg + WINDOW_SLACK;
	long p = sys_mmap(NULL, all, PROT_NONE, PLACE_ANON | MAP_NORESERVE,
			  -1, 0);

	if (failed(p)) {
		skip(c, "no room for a window of %zu bytes: %s", all,
		     err_name((int)-p));
		case_end(c);
	}
	munmap((void *)p, all);
	return (char *)p + c->pg;
}

/* Whether a line of /proc/self/maps covers a. */
static int maps_covers(const char *a)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long s, e, at = (unsigned long)a;
	char line[512];
	int hit = 0;

	if (!f)
		return 0;
	while (!hit && fgets(line, sizeof(line), f))
		hit = sscanf(line, "%lx-%lx", &s, &e) == 2 && s <= at &&
		      at < e;
	fclose(f);
	return hit;
}

/*
 * Whether the page at a is mapped: mincore answers for any page the
 * kernel maps, but an emulator may refuse it for pages its guest cannot
 * read (qemu-user, PROT_NONE), and then its maps answer.
 */
static int page_mapped(const char *a)
{
	unsigned char v;

	return !mincore((void *)a, 1, &v) || maps_covers(a);
}

int mapped_any(const char *a, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < len; i += pg)
		if (page_mapped(a + i))
			return 1;
	return 0;
}

int mapped_all(const char *a, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < len; i += pg)
		if (!page_mapped(a + i))
			return 0;
	return 1;
}

int occ_make(struct cctx *c, struct occ *o, char *a, size_t len, int prot,
	     int flags)
{
	static unsigned char next = 0x41;
	long p;

	(void)c;
	o->a = a;
	o->len = len;
	o->prot = prot;
	o->mark = next++;
	p = sys_mmap(a, len, PROT_READ | PROT_WRITE,
		     PLACE_ANON | MAP_FIXED | flags, -1, 0);
	if (p != (long)a) {
		skip(c, "no occupant could be made at %p: %s", (void *)a,
		     failed(p) ? err_name((int)-p) : "mapped elsewhere");
		return -1;
	}
	memset(a, o->mark, len);
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(a, len, prot)) {
		skip(c, "mprotect of the occupant: %s", err_name(errno));
		return -1;
	}
	o->seen = mapped_all(a, len);
	return 0;
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

/*
 * The bytes of [a, a + len) all v: read under a fault handler, since a
 * replacement may have left an unreadable mapping where the occupant was.
 */
static int bytes_are(const unsigned char *a, size_t len, unsigned char v)
{
	struct sigaction sa, old_segv, old_bus;
	volatile int same = 1;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (!sigsetjmp(fault_jmp, 1)) {
		for (i = 0; i < len && same; i++)
			same = a[i] == v;
	} else {
		same = 0;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return same;
}

/*
 * An occupant the environment never showed (qemu-user's 32-bit guests
 * show PROT_NONE pages neither in their maps nor to mincore) cannot be
 * seen to go: it is taken as kept, and the call's answer alone judged.
 */
int occ_intact(const struct occ *o)
{
	if (!o->seen)
		return 1;
	if (!mapped_all(o->a, o->len))
		return 0;
	return !(o->prot & PROT_READ) ||
	       bytes_are((const unsigned char *)o->a, o->len, o->mark);
}

const char *err_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" },
		{ EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" },
		{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EINVAL, "EINVAL" }, { ENOSYS, "ENOSYS" },
		{ EOVERFLOW, "EOVERFLOW" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ EADDRNOTAVAIL, "EADDRNOTAVAIL" }, { ETXTBSY, "ETXTBSY" },
	};
	static char other[24];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(other, sizeof(other), "errno %d", err);
	return other;
}

const char *answer_text(enum akind k, int err, char *buf, size_t len)
{
	switch (k) {
	case A_AT:
		return "mapped at the address";
	case A_ERR:
		snprintf(buf, len, "%s", err_name(err));
		return buf;
	case A_ELSEWHERE:
		return "mapped elsewhere";
	case A_REPLACED:
		return "what was there replaced";
	case A_HOLDS:
		return "the rule held";
	case A_BROKEN:
		return "the rule broken";
	case A_ANY:
		return "any answer";
	}
	return "?";
}

static void vgot(struct cctx *c, enum akind k, int err, const char *fmt,
		 va_list ap)
{
	c->got.k = k;
	c->got.err = err;
	c->got.detail[0] = 0;
	if (fmt)
		vsnprintf(c->got.detail, sizeof(c->got.detail), fmt, ap);
}

void got(struct cctx *c, enum akind k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vgot(c, k, 0, fmt, ap);
	va_end(ap);
}

void got_err(struct cctx *c, int err)
{
	c->got.k = A_ERR;
	c->got.err = err;
	c->got.detail[0] = 0;
}

void skip(struct cctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->skip_why, sizeof(c->skip_why), fmt, ap);
	va_end(ap);
}

void case_end(struct cctx *c)
{
	_exit(write(c->out, c, sizeof(*c)) == sizeof(*c) ? 0 : 3);
}

/* Whether [a, a + n) and the occupant share a page. */
static int meets(const char *a, size_t n, const struct occ *o)
{
	return o && a < o->a + o->len && o->a < a + n;
}

void judge_place(struct cctx *c, long ret, char *want, size_t len,
		 const struct occ *occ)
{
	int kept = !occ || occ_intact(occ);
	char *p = (char *)ret;

	if (failed(ret)) {
		if (kept)
			got_err(c, (int)-ret);
		else
			got(c, A_REPLACED, "failed with %s, but the occupant "
			    "at %p was changed", err_name((int)-ret),
			    (void *)occ->a);
		return;
	}
	if (p == want && meets(want, len, occ))
		got(c, A_REPLACED, "mapped at %p over the occupant at %p",
		    (void *)p, (void *)occ->a);
	else if (p == want)
		got(c, A_AT, NULL);
	else if (!kept)
		got(c, A_REPLACED, "mapped at %p, and the occupant at %p was "
		    "changed", (void *)p, (void *)occ->a);
	else
		got(c, A_ELSEWHERE, "mapped at %p, not %p", (void *)p,
		    (void *)want);
	munmap(p, len);
}

int maps_find(const char *path, uintptr_t *start, uintptr_t *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], *name;
	unsigned long s, e;
	size_t n;
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		name = strrchr(line, ' ');
		if (!name || strcmp(name + 1, path) ||
		    sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		*start = s;
		*end = e;
		found = 1;
	}
	fclose(f);
	return found;
}

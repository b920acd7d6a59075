/* SPDX-License-Identifier: MIT */
/*
 * What does the running kernel do with MAP_FIXED_NOREPLACE?  Decided by
 * experiment, never from headers or version numbers: emulators (qemu-user,
 * valgrind) run on new kernels yet ignore the flag, and distribution kernels
 * backport fixes.  Every experiment happens inside memory the probe mapped
 * itself, so probing never disturbs anything else in the process.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define PROBE_TRIES 8

static struct ncb_probe probe_result;
static int maps_hide_prot_none;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static const int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

static int page_mapped(void *page, size_t pg)
{
	unsigned char vec;

	/* mincore fails with ENOMEM exactly when the page is unmapped. */
	return mincore(page, pg, &vec) == 0 || errno != ENOMEM;
}

/*
 * The 4.17/4.18 bug: only a mapping containing addr was detected, so one
 * that starts inside the range was replaced (fixed by 7aa867dd8952, "mm:
 * don't clobber partially overlapping VMA with MAP_FIXED_NOREPLACE").
 * Layout: [hole][ours][ours]; ask for [hole, hole + 2 pages).
 */
static int probe_partial(char *r, size_t pg, int *retry)
{
	int mode;
	void *p;

	/* From here on the first page is not ours: never unmap it. */
	if (munmap(r, pg))
		return 0;
	p = mmap(r, 2 * pg, PROT_NONE, anon | NCB_MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		/*
		 * EEXIST is only conclusive if the hole was still empty: a
		 * concurrent mmap may have landed in it.  Try again elsewhere.
		 */
		int err = errno;

		if (err == EEXIST && page_mapped(r, pg))
			*retry = 1;
		mode = err == EEXIST ? NCB_NOREPLACE_HONOURED
				     : NCB_NOREPLACE_PARTIAL;
	} else if (p == r) {
		/* Mapped over our own second page: the bug. */
		mode = NCB_NOREPLACE_PARTIAL;
		(void)munmap(r, pg);
	} else {
		mode = NCB_NOREPLACE_IGNORED;
		(void)munmap(p, 2 * pg);
	}
	(void)munmap(r + pg, 2 * pg);
	return mode;
}

static int probe_once_at(size_t pg, int *retry)
{
	char *r;
	void *p;

	r = mmap(NULL, 3 * pg, PROT_NONE, anon, -1, 0);
	if (r == MAP_FAILED)
		return 0;
	/* An exact overlap with our own first page. */
	p = mmap(r, pg, PROT_NONE, anon | NCB_MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		if (errno == EEXIST)
			return probe_partial(r, pg, retry);
		(void)munmap(r, 3 * pg);
		return NCB_NOREPLACE_REJECTED;
	}
	if (p != r)
		(void)munmap(p, pg);
	(void)munmap(r, 3 * pg);
	return p == r ? NCB_NOREPLACE_REPLACES : NCB_NOREPLACE_IGNORED;
}

static int probe_noreplace(size_t pg)
{
	int i, mode, retry;

	for (i = 0; i < PROBE_TRIES; i++) {
		retry = 0;
		mode = probe_once_at(pg, &retry);
		if (!retry && mode)
			return mode;
	}
	/*
	 * Could not tell (no memory, or always raced): assume the worst
	 * kernel that still honours exact overlaps.  The paths used then are
	 * correct everywhere, only slower.
	 */
	return NCB_NOREPLACE_PARTIAL;
}

ssize_t ncb__read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

unsigned long ncb__read_ulong(const char *path, unsigned long dflt)
{
	char buf[32];

	if (ncb__read_small(path, buf, sizeof(buf)) <= 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return dflt;
	return strtoul(buf, NULL, 10);
}

/*
 * qemu-user keeps a 32-bit guest's whole address space reserved on the
 * host and derives the guest's maps from the host's: a PROT_NONE mapping
 * merges into that reservation and is not listed.  Look for a lone
 * PROT_NONE page of our own.
 */
static int probe_maps_hide(size_t pg)
{
	char *r = mmap(NULL, 3 * pg, PROT_NONE, anon, -1, 0);
	int n;

	if (r == MAP_FAILED)
		return 0;
	(void)munmap(r, pg);
	(void)munmap(r + 2 * pg, pg);
	n = ncb__range_occupied((uintptr_t)r + pg, (uintptr_t)r + 2 * pg);
	(void)munmap(r + pg, pg);
	return n == 0;
}

static void run_probe(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	probe_result.size = sizeof(probe_result);
	probe_result.page_size = pg > 0 ? (unsigned long)pg : 4096;
	probe_result.mmap_min_addr =
		ncb__read_ulong("/proc/sys/vm/mmap_min_addr", 0);
	probe_result.noreplace = probe_noreplace(probe_result.page_size);
	probe_result.procmap_query = ncb__procmap_query_works();
}

static void run_hide_probe(void)
{
	maps_hide_prot_none = probe_maps_hide(ncb__probe()->page_size);
}

/*
 * Looked for when first asked, by the emulated paths only: they run
 * where the flag is honoured too (a mode forced, or a flag that was not
 * honoured after all), and qemu-user 8.1 and later honour it for 32-bit
 * guests whose maps still hide PROT_NONE mappings.
 */
int ncb__maps_hide_prot_none(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, run_hide_probe);
	return maps_hide_prot_none;
}

const struct ncb_probe *ncb__probe(void)
{
	(void)pthread_once(&probe_once, run_probe);
	return &probe_result;
}

int ncb_kernel_probe(struct ncb_probe *probe)
{
	const struct ncb_probe *p = ncb__probe();
	size_t n;

	if (!probe || probe->size < offsetof(struct ncb_probe, noreplace)
					+ sizeof(int))
		return -EINVAL;
	/* Older callers pass a smaller struct: copy what they know. */
	n = probe->size < sizeof(*p) ? probe->size : sizeof(*p);
	memcpy((char *)probe + sizeof(size_t), (const char *)p + sizeof(size_t),
	       n - sizeof(size_t));
	return 0;
}

const char *ncb_noreplace_name(int noreplace)
{
	switch (noreplace) {
	case NCB_NOREPLACE_HONOURED:
		return "honoured";
	case NCB_NOREPLACE_IGNORED:
		return "ignored";
	case NCB_NOREPLACE_PARTIAL:
		return "partial";
	case NCB_NOREPLACE_REJECTED:
		return "rejected";
	case NCB_NOREPLACE_REPLACES:
		return "replaces";
	}
	return "unknown";
}

/* SPDX-License-Identifier: MIT */
/*
 * Whether pages hold data, from a pagemap file (bits 63 and 62 of each
 * page's entry, present or swapped out; Documentation/admin-guide/mm/
 * pagemap.rst): a reservation never touched has none; memory written and
 * then made PROT_NONE (a secret kept no-access, a collector's protected
 * page) has.  Shared by the ptrace watcher and the preload one, which
 * may not allocate: the entries are read into the caller's buffer.
 */
#ifndef NCB_WATCH_PAGEMAP_H
#define NCB_WATCH_PAGEMAP_H

#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/*
 * Whether a page of [s, e) holds data; 1 where the entries cannot be
 * read (the task gone, say): a refusal too many is the safe side.
 */
static inline int wpagemap_data(int fd, uint64_t s, uint64_t e,
				uint64_t page, uint64_t *ent, size_t nent)
{
	uint64_t at;
	ssize_t n = 0, i;
	int r = 0;

	for (at = s / page; !r && at < e / page; at += (uint64_t)n) {
		size_t want = e / page - at < nent ? (size_t)(e / page - at) :
			      nent;

		n = pread(fd, ent, want * sizeof(*ent), (off_t)(at * 8));
		if (n < (ssize_t)sizeof(*ent))
			return 1;
		n /= (ssize_t)sizeof(*ent);
		for (i = 0; i < n && !r; i++)
			r = !!(ent[i] & (3ULL << 62));
	}
	return r;
}

/*
 * The same asked of the PAGEMAP_SCAN ioctl (Linux 6.7,
 * include/uapi/linux/fs.h): one call for the whole range, stopping at
 * the first page present or swapped.  1 or 0, -1 where the kernel does
 * not answer it (then read the entries).
 */
#define WPM_SCAN 0xc0606610UL	/* _IOWR('f', 16, struct pm_scan_arg) */
#define WPM_PRESENT (1ULL << 3)	/* PAGE_IS_PRESENT */
#define WPM_SWAPPED (1ULL << 4)	/* PAGE_IS_SWAPPED */

struct wpm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask;
	uint64_t return_mask;
};

static inline int wpagemap_scan(int fd, uint64_t s, uint64_t e)
{
	uint64_t region[3];	/* struct page_region: start, end, kinds */
	struct wpm_scan_arg a;
	long r;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.start = s;
	a.end = e;
	a.vec = (uint64_t)(uintptr_t)region;
	a.vec_len = 1;
	a.max_pages = 1;
	a.category_anyof_mask = a.return_mask = WPM_PRESENT | WPM_SWAPPED;
	r = ioctl(fd, WPM_SCAN, &a);
	return r < 0 ? -1 : r > 0;
}

#endif

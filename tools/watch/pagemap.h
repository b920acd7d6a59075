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
#include <unistd.h>

/* Whether a page of [s, e) holds data; 0 where fd cannot be read. */
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
		if (n <= 0)
			break;
		n /= (ssize_t)sizeof(*ent);
		for (i = 0; i < n && !r; i++)
			r = !!(ent[i] & (3ULL << 62));
	}
	return r;
}

#endif

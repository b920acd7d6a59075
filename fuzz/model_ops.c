/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: any sequence of mmap, munmap, mprotect, mremap and brk
 * on the address-space model keeps its tree sound (sorted, disjoint,
 * linked, balanced, exact keys, gaps and subtree maxima) and its dump
 * within what it reports, with files registered among those the model
 * makes for shared anonymous mappings.  Addresses spread over thousands
 * of slots so that the tree grows several levels and splits, borrows and
 * merges all happen.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct op {
	uint8_t type;
	uint8_t prot;
	uint8_t flags;
	uint8_t page;
	uint16_t pages;
	uint16_t slot;
};

/*
 * A registered file whose key may be one a shared anonymous mapping's own
 * file prints (the model numbers those from 1): each stays a file apart.
 */
static uint32_t file(struct ncb_as *as, unsigned int inode)
{
	uint32_t id;

	if (ncb_as_file(as, "/dev/zero (deleted)", 0, 1, inode, &id))
		return 0;	/* out of memory: none, as for anonymous ones */
	return id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int kinds[] = { MAP_FIXED, MAP_FIXED_NOREPLACE, 0 };
	struct ncb_as_opts o = { .size = sizeof(o), .page_size = 4096,
				 .mmap_min_addr = 0x10000,
				 .task_size = 1ULL << 32,
				 .mmap_base = 1ULL << 31, .thp = 1,
				 .start_brk = (1ULL << 30) - (1ULL << 24),
				 .brk = (1ULL << 30) - (1ULL << 24) };
	const uint64_t base = 1ULL << 30;
	struct ncb_as *as;
	struct op op;
	uint64_t got;
	char buf[256];
	int type;

	if (ncb_as_new(&as, &o))
		abort();
	for (; size >= sizeof(op); data += sizeof(op), size -= sizeof(op)) {
		uint64_t addr, len;

		memcpy(&op, data, sizeof(op));
		addr = base + ((uint64_t)op.slot % 8192 * 3 + op.page % 3) *
		       4096;
		len = ((uint64_t)op.pages % 8 + (op.pages >> 15) *
		       (op.pages & 0x7fff)) * 4096;
		switch (op.type % 5) {
		case 0:
			type = op.flags & 0x80 ? MAP_SHARED : MAP_PRIVATE;
			if (!(op.flags & 0x20))
				type |= MAP_ANONYMOUS;
			type |= kinds[op.flags % 3];
			(void)ncb_as_mmap(as, op.flags & 0x40 ? 0 : addr, len,
					  op.prot & 7, type,
					  file(as, op.prot >> 3),
					  (uint64_t)op.page * 4096, &got);
			break;
		case 1:
			(void)ncb_as_munmap(as, addr, len);
			break;
		case 3:
			(void)ncb_as_mremap(as, addr, len, (uint64_t)op.page *
					    4096, op.flags & 7, base +
					    (uint64_t)op.pages * 4096, &got);
			break;
		case 4:
			(void)ncb_as_brk(as, base - (1ULL << 24) +
					 (uint64_t)op.pages * 256, &got);
			break;
		default:
			(void)ncb_as_mprotect(as, addr, len, op.prot & 7);
		}
		if (ncb__as_check(as))
			abort();
	}
	if (ncb_as_dump(as, buf, sizeof(buf)) < ncb_as_count(as))
		abort();
	ncb_as_free(as);
	return 0;
}

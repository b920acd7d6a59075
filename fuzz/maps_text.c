/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the /proc/PID/maps text parser, the library's only
 * parser of outside input.  Whatever the text, it is refused with an error
 * or read as sorted, disjoint, non-empty ranges; never out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	uint64_t last = 0, seek = 0;
	int r;

	if (ncb__maps_from_text(&m, (const char *)data, size))
		return 0;
	while ((r = ncb_maps_next(m, &e)) == 1) {
		if (e.start >= e.end || e.start < last || !e.path ||
		    strlen(e.path) > size)
			abort();
		last = e.end;
		seek = e.start + (e.end - e.start) / 2;
	}
	if (r < 0)
		abort();
	/* Seeking into the middle of the last range finds that range. */
	if (last && (ncb_maps_seek(m, seek) || ncb_maps_next(m, &e) != 1 ||
		     e.end <= seek))
		abort();
	ncb_maps_close(m);
	return 0;
}

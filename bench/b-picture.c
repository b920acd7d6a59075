/* SPDX-License-Identifier: MIT */
/*
 * The pictures (tools/picture.c) against their target: an address space
 * of 60,000 mappings drawn in under a second as an SVG under 5 MB.  For
 * 100, 1,000, 10,000 and 60,000 mappings (a library's four segments and
 * its bss, anonymous runs, gaps between), the maps text is read as
 * `noclobber maps --svg --maps` reads it and the picture made in memory;
 * the median of REPS runs, its bytes, and both against the target.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "bench.h"
#include "internal.h"
#include "picture.h"

#define REPS 15

/* n mappings of maps text in *text: 0, or -ENOMEM. */
static int make_maps(long n, char **text, size_t *len)
{
	static const char *const perms[] = { "r--p", "r-xp", "r--p", "rw-p",
					     "rw-p" };
	FILE *f = open_memstream(text, len);
	uint64_t a = 0x7f0000000000ULL;
	long i;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t size = (uint64_t)(1 + i % 7) << 12;

		if (i % 5 == 4)
			fprintf(f, "%" PRIx64 "-%" PRIx64 " %s 00000000 00:00 "
				"0\n", a, a + size, perms[i % 5]);
		else
			fprintf(f, "%" PRIx64 "-%" PRIx64 " %s %08lx fe:00 %ld"
				"        /usr/lib/x86_64-linux-gnu/"
				"lib%ld.so.1\n",
				a, a + size, perms[i % 5], (i % 5) << 12,
				1000 + i / 5, i / 5);
		a += size + (i % 5 == 4 ? (uint64_t)(i % 3) << 20 : 0);
	}
	return fclose(f) ? -ENOMEM : 0;
}

/* One picture: its bytes, or -errno. */
static long draw(const char *text, size_t len)
{
	struct ncb_maps *maps;
	size_t out_len = 0;
	char *out = NULL;
	struct pic p;
	FILE *f;
	int ret;

	ret = ncb__maps_from_text(&maps, text, len);
	if (ret)
		return ret;
	pic_init(&p);
	ret = pic_read(&p, maps, 0, 0);
	ncb_maps_close(maps);
	f = open_memstream(&out, &out_len);
	if (!ret && !f)
		ret = -ENOMEM;
	if (!ret) {
		pic_title(&p, "address space of bench.maps");
		pic_space(&p, 0, 0);
		pic_classify(&p, NULL);
		ret = pic_svg(&p, f);
	}
	if (f && fclose(f) && !ret)
		ret = -ENOMEM;
	free(out);
	pic_free(&p);
	return ret ? ret : (long)out_len;
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 100, 1000, 10000, 60000 };
	FILE *csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	double t[REPS], ms;
	size_t i, len;
	long bytes = 0;
	char *text;
	int r, bad = 0;

	if (csv)
		fprintf(csv, "mappings,ms,bytes\n");
	printf("%10s %10s %12s %14s %14s\n", "mappings", "ms", "bytes",
	       "time/target", "size/target");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (make_maps(sizes[i], &text, &len))
			return 1;
		for (r = 0; r < REPS; r++) {
			double start = now_ns();

			bytes = draw(text, len);
			t[r] = now_ns() - start;
			bad |= bytes <= 0;
		}
		free(text);
		ms = median(t, REPS) / 1e6;
		printf("%10ld %10.2f %12ld %14.3f %14.3f\n", sizes[i], ms,
		       bytes, ms / 1000, (double)bytes / 5e6);
		if (csv)
			fprintf(csv, "%ld,%.3f,%ld\n", sizes[i], ms, bytes);
	}
	if (csv)
		fclose(csv);
	if (bad)
		fprintf(stderr, "b-picture: a picture failed\n");
	return bad;
}

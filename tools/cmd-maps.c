/* SPDX-License-Identifier: MIT */
/* noclobber maps: a process's address space, mappings and the gaps between. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber maps [--json] [PID]\n\n"
		   "Lists the mappings of process PID (decimal; default: "
		   "this one) with their\nsizes and the free gaps between "
		   "them.  Exit status: 0 listed, 1 the process\nhas no "
		   "address space, 2 error.\n");
}

/* 1536 -> "1.5 KiB" */
static const char *human(uint64_t n, char buf[32])
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 32, "%" PRIu64 " B", n);
	else
		snprintf(buf, 32, "%.*f %s", v < 10 ? 1 : 0, v, unit[u]);
	return buf;
}

struct totals {
	int n;
	uint64_t mapped;
	uint64_t prev_end;
};

/*
 * Free space lies between two mappings of the user address space; the
 * gate area ([vsyscall]) lies above it, beyond the unusable hole.
 */
static int gap_before(const struct ncb_mapping *m, const struct totals *t)
{
	return t->n && m->start > t->prev_end && strcmp(m->path, "[vsyscall]");
}

static void text_entry(const struct ncb_mapping *m, struct totals *t)
{
	char buf[32], perms[5];

	if (gap_before(m, t))
		printf("%26s gap %s\n", "",
		       human(m->start - t->prev_end, buf));
	perms[0] = m->prot & PROT_READ ? 'r' : '-';
	perms[1] = m->prot & PROT_WRITE ? 'w' : '-';
	perms[2] = m->prot & PROT_EXEC ? 'x' : '-';
	perms[3] = m->shared ? 's' : 'p';
	perms[4] = '\0';
	printf("  %012" PRIx64 "-%012" PRIx64 " %9s %s %08" PRIx64 " ",
	       m->start, m->end, human(m->end - m->start, buf), perms,
	       m->offset);
	print_path(stdout, m->path);
	putchar('\n');
}

static void json_entry(const struct ncb_mapping *m, struct totals *t)
{
	if (gap_before(m, t))
		printf(",{\"type\":\"gap\",\"start\":\"0x%" PRIx64 "\",\"end\":"
		       "\"0x%" PRIx64 "\",\"size\":%" PRIu64 "}", t->prev_end,
		       m->start, m->start - t->prev_end);
	printf("%s{\"type\":\"mapping\",\"size\":%" PRIu64 ",\"mapping\":",
	       t->n ? "," : "", m->end - m->start);
	json_mapping(stdout, m);
	putchar('}');
}

int cmd_maps(int argc, char **argv)
{
	struct totals t = { 0, 0, 0 };
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	char buf[32];
	int c, json, ret;
	pid_t pid = 0;

	c = parse_json_only(argc, argv, usage, &json);
	if (c >= 0)
		return c;
	if (argc - optind > 1 || (argc - optind == 1 &&
	    parse_pid(argv[optind], &pid))) {
		usage(stderr);
		return EXIT_USAGE;
	}
	ret = ncb_maps_open(&maps, pid);
	if (ret) {
		maps_error(pid, ret);
		/* Read, but there is nothing to list: that is no misuse. */
		return ret == -ESRCH ? 1 : EXIT_USAGE;
	}
	if (json)
		printf("{\"pid\":%d,\"entries\":[", pid ? (int)pid
							 : (int)getpid());
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (json)
			json_entry(&m, &t);
		else
			text_entry(&m, &t);
		t.n++;
		t.mapped += m.end - m.start;
		t.prev_end = m.end;
	}
	ncb_maps_close(maps);
	if (json)
		printf("],\"mappings\":%d,\"mapped\":%" PRIu64 "}\n", t.n,
		       t.mapped);
	else
		printf("%d mappings, %s mapped\n", t.n, human(t.mapped, buf));
	if (ret < 0) {
		maps_error(pid, ret);
		return EXIT_USAGE;
	}
	return 0;
}

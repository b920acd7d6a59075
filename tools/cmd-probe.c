/* SPDX-License-Identifier: MIT */
/* noclobber probe: what the running kernel does with the flag. */
#include <getopt.h>
#include <string.h>
#include <sys/utsname.h>
#include "cli.h"

static const char *meaning(int mode)
{
	switch (mode) {
	case NCB_NOREPLACE_HONOURED:
		return "maps exactly at the address or fails with EEXIST";
	case NCB_NOREPLACE_IGNORED:
		return "treated as a hint: a different address comes back "
		       "(Linux < 4.17, qemu-user, valgrind)";
	case NCB_NOREPLACE_PARTIAL:
		return "misses a mapping that starts inside the range "
		       "(Linux 4.17, 4.18)";
	case NCB_NOREPLACE_REJECTED:
		return "the flag makes mmap fail";
	case NCB_NOREPLACE_REPLACES:
		return "replaces existing mappings like MAP_FIXED";
	}
	return "unknown";
}

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber probe [--json]\n\n"
		   "Finds out by experiment what this kernel (or emulator) "
		   "does with\nMAP_FIXED_NOREPLACE, and which path ncb_mmap "
		   "takes because of it.\n");
}

static int probe_json(const struct ncb_probe *p, const struct utsname *u)
{
	struct jw w;
	int err;

	err = jw_begin(&w);
	if (!err) {
		jw_str(&w, "kernel", u->release);
		jw_str(&w, "machine", u->machine);
		jw_str(&w, "noreplace", ncb_noreplace_name(p->noreplace));
		jw_hex(&w, "flag", NCB_MAP_FIXED_NOREPLACE);
		jw_hex(&w, "page_size", p->page_size);
		jw_hex(&w, "mmap_min_addr", p->mmap_min_addr);
		jw_bool(&w, "procmap_query", p->procmap_query);
		jw_str(&w, "path", p->noreplace == NCB_NOREPLACE_HONOURED
				   ? "kernel" : "fallback");
		err = jw_end(&w, stdout);
	}
	if (err) {
		print_error("probe", err);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct ncb_probe p = { .size = sizeof(p) };
	struct utsname u;
	int c, json;

	c = parse_json_only(argc, argv, usage, &json);
	if (c >= 0)
		return c;
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (uname(&u))
		strcpy(u.release, "unknown");
	ncb_kernel_probe(&p);
	if (json)
		return probe_json(&p, &u);
	printf("kernel:              %s %s\n", u.release, u.machine);
	printf("MAP_FIXED_NOREPLACE: %s (0x%x): %s\n",
	       ncb_noreplace_name(p.noreplace), NCB_MAP_FIXED_NOREPLACE,
	       meaning(p.noreplace));
	printf("ncb_mmap path:       %s\n",
	       p.noreplace == NCB_NOREPLACE_HONOURED
	       ? "the kernel's flag, one system call"
	       : "hint, then a claimed placeholder (race-free, no clobber)");
	printf("page size:           %lu\n", p.page_size);
	printf("mmap_min_addr:       %lu\n", p.mmap_min_addr);
	printf("PROCMAP_QUERY:       %s\n",
	       p.procmap_query ? "yes" : "no (parsing /proc/PID/maps)");
	return 0;
}

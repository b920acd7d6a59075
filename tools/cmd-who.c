/* SPDX-License-Identifier: MIT */
/* noclobber who / map: who occupies a range; map a range no-clobber. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void who_usage(FILE *f)
{
	fprintf(f, "usage: noclobber who [-p PID] [--json] ADDR [LEN]\n\n"
		   "Lists the mappings of process PID (decimal; default: "
		   "this one) that\noverlap [ADDR, ADDR+LEN).  ADDR is a "
		   "number or a text found in a mapping's\npath, e.g. "
		   "'[stack]'.  LEN defaults to one page and takes K, M, G, "
		   "T\nsuffixes.  Exit status: 0 the range is free, 1 it is "
		   "occupied, 2 error.\n");
}

static void map_usage(FILE *f)
{
	fprintf(f, "usage: noclobber map [--prot PROT] [--json] ADDR LEN\n\n"
		   "Maps [ADDR, ADDR+LEN) in this process with ncb_mmap(3) "
		   "(anonymous,\nprivate, PROT such as 'rw', default 'r'), "
		   "and on failure names what is\nin the way.  Exit status: "
		   "0 mapped, 1 refused, 2 error.\n");
}

static int parse_prot(const char *s, int *prot)
{
	*prot = PROT_NONE;
	for (; *s; s++) {
		if (*s == 'r')
			*prot |= PROT_READ;
		else if (*s == 'w')
			*prot |= PROT_WRITE;
		else if (*s == 'x')
			*prot |= PROT_EXEC;
		else if (*s != '-')
			return -EINVAL;
	}
	return 0;
}

static const struct option common_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "prot", required_argument, NULL, 'P' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct args {
	pid_t pid;
	int prot;
	int json;
	uint64_t addr;
	uint64_t len;
};

/* 0 to go on, or an exit status + 1. */
static int parse_args(int argc, char **argv, struct args *a, int is_map,
		      void (*usage)(FILE *f))
{
	const char *cmd = is_map ? "map" : "who";
	int c;

	while ((c = getopt_long(argc, argv, "p:P:jh", common_opts, NULL)) !=
	       -1) {
		if (c == 'p' && !is_map && !parse_pid(optarg, &a->pid)) {
			continue;
		} else if (c == 'P' && is_map &&
			   !parse_prot(optarg, &a->prot)) {
			continue;
		} else if (c == 'j') {
			a->json = 1;
		} else if (c == 'h') {
			usage(stdout);
			return 1;
		} else {
			usage(stderr);
			return EXIT_USAGE + 1;
		}
	}
	if (argc - optind != 1 + is_map && argc - optind != 2) {
		usage(stderr);
		return EXIT_USAGE + 1;
	}
	c = parse_target(argv[optind], a->pid, &a->addr);
	if (c < 0) {
		maps_error(cmd, a->json, a->pid, c);
		return EXIT_USAGE + 1;
	}
	if (c) {
		fail(cmd, a->json, EINVAL, "'%s': not an address or a mapping "
		     "of the process", argv[optind]);
		return EXIT_USAGE + 1;
	}
	a->len = (uint64_t)sysconf(_SC_PAGESIZE);
	if (argc - optind == 2 &&
	    (parse_u64(argv[optind + 1], &a->len) || !a->len)) {
		fail(cmd, a->json, EINVAL, "'%s': not a length",
		     argv[optind + 1]);
		return EXIT_USAGE + 1;
	}
	if (a->addr + a->len < a->addr) {
		fail(cmd, a->json, EINVAL, "[%#" PRIx64 ", +%#" PRIx64 ") "
		     "wraps around the address space", a->addr, a->len);
		return EXIT_USAGE + 1;
	}
	return 0;
}

static int who_json(const struct args *a)
{
	struct jw w;
	int n, n2;

	n = jw_begin(&w);
	if (n)
		return n;
	jw_int(&w, "pid", a->pid ? (int)a->pid : (int)getpid());
	jw_hex(&w, "start", a->addr);
	jw_hex(&w, "end", a->addr + a->len);
	n = jw_occupants(&w, "occupants", a->pid, a->addr, a->len);
	jw_bool(&w, "free", !n);
	if (n < 0) {
		jw_drop(&w);
		return n;
	}
	n2 = jw_end(&w, stdout);
	if (n2) {
		print_error("who", n2);
		return PRINT_FAILED;
	}
	return n;
}

static int who_text(const struct args *a)
{
	int n;

	printf("[%#" PRIx64 ", %#" PRIx64 ") in process %d:\n", a->addr,
	       a->addr + a->len, a->pid ? (int)a->pid : (int)getpid());
	n = print_occupants(stdout, a->pid, a->addr, a->len);
	if (!n)
		printf("  free\n");
	return n;
}

int cmd_who(int argc, char **argv)
{
	struct ncb_maps *maps;
	struct args a = { 0 };
	int n;

	n = parse_args(argc, argv, &a, 0, who_usage);
	if (n)
		return n - 1;
	/* Say why the mappings cannot be read before printing any. */
	n = ncb_maps_open(&maps, a.pid);
	if (!n) {
		ncb_maps_close(maps);
		n = a.json ? who_json(&a) : who_text(&a);
	}
	if (n == PRINT_FAILED)
		return EXIT_USAGE;
	if (n < 0) {
		maps_error("who", a.json, a.pid, n);
		return EXIT_USAGE;
	}
	return n ? 1 : 0;
}

static void map_text(const struct args *a, int err)
{
	if (!err) {
		printf("mapped [%#" PRIx64 ", %#" PRIx64 ")\n", a->addr,
		       a->addr + a->len);
		return;
	}
	printf("refused [%#" PRIx64 ", %#" PRIx64 "): %s (%s)\n", a->addr,
	       a->addr + a->len, strerrorname_np(err), strerror(err));
	if (err == EEXIST) {
		printf("in the way:\n");
		print_occupants(stdout, 0, a->addr, a->len);
	}
}

static int map_json(const struct args *a, int err)
{
	struct jw w;

	if (jw_begin(&w))
		return -ENOMEM;
	jw_hex(&w, "start", a->addr);
	jw_hex(&w, "end", a->addr + a->len);
	jw_bool(&w, "mapped", !err);
	jw_error(&w, "error", err, NULL);
	if (err == EEXIST) {
		jw_occupants(&w, "occupants", 0, a->addr, a->len);
	} else {
		jw_open(&w, "occupants", '[');
		jw_close(&w, ']');
	}
	return jw_end(&w, stdout);
}

int cmd_map(int argc, char **argv)
{
	struct args a = { .prot = PROT_READ };
	void *p;
	int n, err;

	n = parse_args(argc, argv, &a, 1, map_usage);
	if (n)
		return n - 1;
	p = ncb_mmap((void *)(uintptr_t)a.addr, (size_t)a.len, a.prot,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	err = p == MAP_FAILED ? errno : 0;
	if (!a.json)
		map_text(&a, err);
	else if ((n = map_json(&a, err)))
		print_error("map", n);
	if (!err)
		munmap(p, (size_t)a.len);
	if (n)
		return EXIT_USAGE;
	return err ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* noclobber: command-line front end of libnoclobber. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

/*
 * Set while `noclobber watch` hands over to the watchers' program, and
 * taken out of the environment again by it: a program of that name that
 * is this tool again (a copy) would hand over for ever.
 */
#define HANDOFF "NCB_WATCH_HANDOFF"
static int handed_off;

#ifdef NCB_WATCH_HELPER
/* Whether path is this program's own file (a link to it). */
static int is_self(const char *path)
{
	struct stat a, b;

	return !stat(path, &a) && !stat("/proc/self/exe", &b) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * The watchers need libseccomp, libbpf and libelf, whose loading would
 * cost every other command's start (half a millisecond here): they live
 * in a program of their own, this tool with every command, run in this
 * one's place with the same arguments (argv is main's, past its first).
 * Beside this program first (the build tree), else where it is
 * installed.
 */
int cmd_watch(int argc, char **argv)
{
	static char path[PATH_MAX];
	const char *beside;
	int err;

	(void)argc;
	if (handed_off) {
		fprintf(stderr, "noclobber watch: the watchers' program run "
			"is this tool again, not noclobber-watch\n");
		return 125;
	}
	setenv(HANDOFF, "1", 1);
	err = beside_self("noclobber-watch", path, sizeof(path));
	if (!err && is_self(path)) {
		beside = "this tool itself";
	} else if (!err) {
		execv(path, argv - 1);
		beside = strerror(errno);
	} else {
		beside = strerror(-err);
	}
	execv(NCB_WATCH_HELPER, argv - 1);
	fprintf(stderr, "noclobber watch: cannot run the watcher %s: %s "
		"(beside this tool, %s: %s)\n", NCB_WATCH_HELPER,
		strerror(errno), err ? "noclobber-watch" : path, beside);
	return 125;
}
#endif

#ifdef NCB_NO_WATCH
int cmd_watch(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "noclobber watch: not in this build of noclobber "
		"(it needs libseccomp and libdw for this machine)\n");
	return 125;
}
#endif

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "probe", cmd_probe, "what this kernel does with the flag" },
	{ "maps", cmd_maps, "the address space of a process, with its gaps" },
	{ "who", cmd_who, "list the mappings occupying a range of a process" },
	{ "map", cmd_map, "map a range here, or name what is in the way" },
	{ "free", cmd_free, "where N bytes fit within reach of an address" },
	{ "exec", cmd_exec, "run a program here, every mapping no-clobber" },
	{ "check", cmd_check, "lint ELF files for loading without clobbering" },
	{ "watch", cmd_watch, "run a program, report or refuse its clobbers" },
	{ "conform", cmd_conform, "whether this system keeps mmap's placement "
	  "rules" },
	{ "demo", cmd_demo, "show MAP_FIXED clobbering and ncb_mmap refusing" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: noclobber COMMAND [OPTIONS] [ARGS]\n\n"
		   "Fixed-address mapping that never replaces what is "
		   "mapped.\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'noclobber COMMAND --help' describes one command; "
		   "see noclobber(1).\n'noclobber -V' (--version) prints "
		   "the version.\n");
}

/*
 * What a command printed must have reached its file: a full disk or a
 * closed standard output is a failure, said, not a success.  exec and
 * watch fail as env(1) does, with 125.
 */
static int close_stdout(const char *cmd, int status)
{
	int bad, err = 0;

	/*
	 * The flush's own error first: an earlier failed write left only
	 * the flag, and a full device says ENOSPC, not EIO.
	 */
	errno = 0;
	if (fflush(stdout))
		err = errno;
	bad = ferror(stdout);
	errno = 0;
	bad |= fclose(stdout) != 0;
	if (!err)
		err = errno;
	if (!bad && !err && !print_failed)
		return status;
	print_error(cmd, err ? -err : -EIO);
	if (cmd && (!strcmp(cmd, "exec") || !strcmp(cmd, "watch")))
		return status > 125 ? status : 125;
	return status > EXIT_USAGE ? status : EXIT_USAGE;
}

int main(int argc, char **argv)
{
	size_t i;

	handed_off = getenv(HANDOFF) != NULL;
	unsetenv(HANDOFF);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return close_stdout(NULL, 0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		unsigned int v = ncb_version();

		printf("noclobber %u.%u.%u\n", v >> 16, v >> 8 & 0xff,
		       v & 0xff);
		return close_stdout(NULL, 0);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return close_stdout(cmds[i].name,
					    cmds[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "noclobber: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

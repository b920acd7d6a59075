/* SPDX-License-Identifier: MIT */
/*
 * noclobber demo: the hazard and the cure, in this process.  A page holds
 * data; MAP_FIXED over it (in a child, so the demo survives) silently
 * destroys the data; ncb_mmap refuses with EEXIST and names the occupant.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

static const char secret[] = "precious data";

static int fixed_clobbers(char *page, size_t pg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		void *p = mmap(page, pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

		_exit(p == page && !strcmp(page, secret) ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 1;
}

static int step_stack(size_t pg)
{
	uint64_t stack;
	void *p;

	if (parse_target("[stack]", 0, &stack))
		return 0;
	printf("\n3. ncb_mmap over the stack at %#" PRIx64 ":\n", stack);
	p = ncb_mmap((void *)(uintptr_t)stack, pg, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		printf("   mapped: the stack was replaced!\n");
		return 1;
	}
	printf("   refused: %s; in the way:\n", strerrorname_np(errno));
	print_occupants(stdout, 0, stack, pg);
	return 0;
}

int cmd_demo(int argc, char **argv)
{
	struct ncb_probe pr = { .size = sizeof(pr) };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *page;
	void *p;
	int clob;

	if (argc > 1) {
		int help = argc == 2 && (!strcmp(argv[1], "--help") ||
					 !strcmp(argv[1], "-h"));

		fprintf(help ? stdout : stderr, "usage: noclobber demo\n\n"
			"Shows, in this process, MAP_FIXED destroying a "
			"mapping and\nncb_mmap refusing to.\n");
		return help ? 0 : EXIT_USAGE;
	}
	ncb_kernel_probe(&pr);
	printf("MAP_FIXED_NOREPLACE on this kernel: %s\n",
	       ncb_noreplace_name(pr.noreplace));
	page = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	strcpy(page, secret);
	printf("\n1. a page at %p holds \"%s\"; mmap(MAP_FIXED) over it:\n",
	       (void *)page, page);
	clob = fixed_clobbers(page, pg);
	printf("   %s\n", clob == 1 ? "succeeds, and the data is gone"
		       : "did not clobber (unexpected)");
	printf("\n2. ncb_mmap over the same page:\n");
	p = ncb_mmap(page, pg, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		printf("   mapped: the page was replaced!\n");
		return 1;
	}
	printf("   refused: %s; the page still holds \"%s\"; in the way:\n",
	       strerrorname_np(errno), page);
	print_occupants(stdout, 0, (uintptr_t)page, pg);
	if (step_stack(pg))
		return 1;
	munmap(page, pg);
	p = ncb_mmap(page, pg, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("\n4. after munmap, ncb_mmap at %p: %s\n", (void *)page,
	       p == page ? "mapped exactly there" : strerror(errno));
	return p == page && clob == 1 ? 0 : 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * run-elf: a userland exec.  The program is checked before anything is
 * mapped, loaded with every placement no-clobber, and run in this process
 * with the stack and auxiliary vector the kernel would give it.  With
 * --check it only says what the loader would think of the file.
 *
 *   cc run-elf.c $(pkg-config --cflags --libs noclobber) -o run-elf
 *   ./run-elf /usr/bin/echo hello
 *   ./run-elf --check /usr/bin/echo
 */
#include <elf.h>
#include <noclobber.h>
#include <stdio.h>
#include <string.h>

extern char **environ;

static int check(const char *path)
{
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e;
	char why[256];

	if (ncb_elf_open(&e, path, why, sizeof(why))) {
		fprintf(stderr, "%s: rejected: %s\n", path, why);
		return 1;
	}
	ncb_elf_info(e, &in);
	printf("%s: %s, %u segments over %#llx bytes, interpreter %s\n%s",
	       path, in.type == ET_EXEC ? "ET_EXEC" : "ET_DYN", in.nsegs,
	       (unsigned long long)(in.hi - in.lo),
	       in.interp ? in.interp : "(none)", ncb_elf_notes(e));
	ncb_elf_close(e);
	return 0;
}

int main(int argc, char **argv)
{
	char why[256];

	if (argc > 2 && !strcmp(argv[1], "--check"))
		return check(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: run-elf [--check] PROG [ARGS...]\n");
		return 2;
	}
	/* Returns only if the program could not be started. */
	ncb_exec(argv[1], argv + 1, environ, NULL, why, sizeof(why));
	fprintf(stderr, "run-elf: %s\n", why);
	return 126;
}

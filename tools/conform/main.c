/* SPDX-License-Identifier: MIT */
/*
 * noclobber-conform: the conformance suite alone, a static program with
 * no library of the project's, to copy into any sandbox, container or
 * emulator and run there.
 */
#include <stdio.h>
#include "conform.h"

int main(int argc, char **argv)
{
	int st = conform_main(argc, argv, "noclobber-conform");

	/* What was printed must have reached its file. */
	if (fflush(stdout) || ferror(stdout)) {
		perror("noclobber-conform: cannot write the output");
		return 2;
	}
	return st;
}

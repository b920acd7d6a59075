/* SPDX-License-Identifier: MIT */
/*
 * noclobber conform: whether this kernel or emulator keeps mmap's
 * fixed-placement rules (the suite is in tools/conform/, shared with the
 * standalone noclobber-conform).
 */
#include "cli.h"
#include "conform/conform.h"

int cmd_conform(int argc, char **argv)
{
	return conform_main(argc, argv, "noclobber conform");
}

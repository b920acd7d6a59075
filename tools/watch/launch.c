/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch --preload: the program (found by the tool, as the
 * library) run with the preload watcher (libnoclobber-preload.so) in
 * place of a tracer.  What the library
 * needs is said in the environment, which it keeps across exec for the
 * program's children; what it cannot see in the program is said before
 * it runs.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unseen.h"
#include "watch.h"

/*
 * What the library cannot see in the program, said: a static program
 * (the loader never reads LD_PRELOAD), a set-ID one (it ignores it), a
 * Go one (its runtime makes its own system calls).
 */
static void what_it_cannot_see(const char *path,
			       const struct watch_preload_opts *o)
{
	static struct wu_scratch b;
	int u = wunseen(path, -1, &b), bit;

	for (bit = WU_SETID; u > 0 && bit <= WU_GO; bit <<= 1)
		if (u & bit)
			o->warn(path, wunseen_text(bit), o->arg);
}

/* name=value put first in a list variable (LD_PRELOAD's spaces). */
static int prepend(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *v;
	int r;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&v, "%s %s", value, old) < 0)
		return -1;
	r = setenv(name, v, 1);
	free(v);
	return r;
}

int watch_preload(char *const argv[], const struct watch_preload_opts *o,
		  int *exec_failed, char *why, size_t whylen)
{
	char abs[PATH_MAX];
	int err;

	*exec_failed = 0;
	what_it_cannot_see(o->prog, o);
	/* The reports' file by a name that holds in the program's cwd. */
	if (o->file && !realpath(o->file, abs)) {
		err = -errno;
		snprintf(why, whylen, "%s: %s", o->file, strerror(-err));
		return err;
	}
	if (setenv("NCB_PRELOAD", o->mode, 1) ||
	    setenv("NCB_PRELOAD_JSON", o->json ? "1" : "0", 1) ||
	    (o->file ? setenv("NCB_PRELOAD_OUTPUT", abs, 1) :
	     unsetenv("NCB_PRELOAD_OUTPUT")) ||
	    prepend("LD_PRELOAD", o->lib))
		return -errno;
	execv(o->prog, argv);
	err = -errno;
	*exec_failed = 1;
	snprintf(why, whylen, "%s: %s", o->prog, strerror(-err));
	return err;
}

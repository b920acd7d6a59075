/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch --preload: the program (found by the tool, as the
 * library) run with the preload watcher (libnoclobber-preload.so) in
 * place of a tracer.  What the library
 * needs is said in the environment, which it keeps across exec for the
 * program's children; what it cannot see in the program is said before
 * it runs.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "noclobber.h"
#include "watch.h"

/* Whether the ELF file has a section of that name (Go's build info). */
static int has_section(int fd, const char *name)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, names;
	char buf[32];
	unsigned int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(sh) || eh.e_shstrndx >= eh.e_shnum ||
	    pread(fd, &names, sizeof(names), (off_t)(eh.e_shoff +
		  (uint64_t)eh.e_shstrndx * sizeof(sh))) != sizeof(names))
		return 0;
	for (i = 0; i < eh.e_shnum; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff +
			  (uint64_t)i * sizeof(sh))) != sizeof(sh) ||
		    sh.sh_name >= names.sh_size)
			continue;
		if (pread(fd, buf, sizeof(buf), (off_t)(names.sh_offset +
			  sh.sh_name)) > 0 && !strncmp(buf, name, sizeof(buf)))
			return 1;
	}
	return 0;
}

/*
 * What the library cannot see in the program, said: a static program
 * (the loader never reads LD_PRELOAD), a set-ID one (it ignores it), a
 * Go one (its runtime makes its own system calls).
 */
static void what_it_cannot_see(const char *path,
			       const struct watch_preload_opts *o)
{
	struct ncb_elf_info info = NCB_INIT(ncb_elf_info);
	struct ncb_elf *elf;
	struct stat st;
	char why[256];
	int fd;

	if (!stat(path, &st) && (st.st_mode & (S_ISUID | S_ISGID)))
		o->warn(path, "set-user-ID or set-group-ID: the loader "
			"ignores LD_PRELOAD, nothing is watched (watch "
			"without --preload covers it)", o->arg);
	if (!ncb_elf_open(&elf, path, why, sizeof(why))) {
		if (!ncb_elf_info(elf, &info) && !info.interp)
			o->warn(path, "a static program: no loader reads "
				"LD_PRELOAD, nothing is watched (watch "
				"without --preload covers it)", o->arg);
		ncb_elf_close(elf);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && has_section(fd, ".go.buildinfo"))
		o->warn(path, "a Go program: its runtime maps memory with "
			"system calls of its own, which are not watched "
			"(watch without --preload covers them)", o->arg);
	if (fd >= 0)
		close(fd);
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

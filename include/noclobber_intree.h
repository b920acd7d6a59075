/* SPDX-License-Identifier: MIT */
/*
 * Not installed, and no interface: what the library gives its own tool
 * beyond noclobber.h.  Hidden functions, reached only by linking
 * libnoclobber.a (the shared library exports none of them), so that the
 * tool never includes the library's private headers.
 */
#ifndef NOCLOBBER_INTREE_H
#define NOCLOBBER_INTREE_H

#include <stddef.h>
#include <stdint.h>
#include "noclobber.h"

/*
 * A symbol defined in the image's symbol tables (.symtab or .dynsym): its
 * link address and size; global over local, a default version over a
 * hidden one.  1 found, 0 not, -errno (src/loader/elf-sym.c).
 */
int ncb__elf_symbol(const struct ncb_elf *e, const char *name,
		    uint64_t *value, uint64_t *size);

/*
 * The interpreter a "#!" script names: 1 and its path in out, 0 if path
 * is no script, -ENOEXEC, -ENAMETOOLONG (src/loader/script.c).
 */
int ncb__script_interp(const char *path, char *out, size_t len);

/*
 * The interpreter an enabled binfmt_misc entry runs path with: 1 and its
 * path in out, 0 if none matches, -ENOMEM, -ENAMETOOLONG
 * (src/loader/binfmt.c).
 */
int ncb__binfmt_interp(const char *path, char *out, size_t len);

/*
 * A name for a message, its control characters shown as C escapes (a
 * "#!" line with CRLF ends names "/bin/sh\r"): buf, cut to len bytes
 * (src/loader/script.c).
 */
const char *ncb__visible(const char *s, char *buf, size_t len);

/*
 * A program's interpreter opened as the loader takes it: an ELF shared
 * object of this machine with no interpreter of its own.  0, or -errno
 * and why ("interpreter PATH: ...") (src/loader/exec.c).
 */
int ncb__interp_open(const char *path, struct ncb_elf **ie, char *why,
		     size_t wl);

/*
 * Whether a mapping belongs to the process rather than to its program
 * (the vDSO and its data, [vsyscall], ARM's [vectors] and [sigpage]), by
 * its name: an in-process exec leaves those (src/loader/handover.c).
 */
int ncb__kernel_mapping(const char *path);

/*
 * Whether an emulator (qemu-user, valgrind) runs this process: then an
 * in-process exec leaves the caller's mappings (src/loader/layout.c).
 */
int ncb__emulated(void);

/*
 * Where ncb_exec would put the program's stack for these strings: its
 * range at the start, the top drawn as execve draws it (start 0 and end
 * its size where mmap would place it), and the limit it grows to
 * (UINT64_MAX: none).  0, -EINVAL for a size below a page, -E2BIG for
 * strings beyond execve's limits (src/loader/exec.c).
 */
int ncb__stack_plan(char *const argv[], char *const envp[],
		    const char *execfn, const struct ncb_exec_opts *o,
		    uint64_t *start, uint64_t *end, uint64_t *limit);

/*
 * A maps reader over a text in /proc/PID/maps's format (a recorded
 * file), checked as the reader checks the kernel's: 0, -EINVAL for a
 * text that is no maps, -ENOMEM (src/maps.c).
 */
int ncb__maps_from_text(struct ncb_maps **maps, const char *text,
			size_t len);
/*
 * The whole of /proc/PID/maps (pid 0: this process's) in a buffer of
 * the caller's (free it), read as the reader reads it: retried until
 * one read is consistent.  0, or -errno as ncb_maps_open's (src/maps.c).
 */
int ncb__maps_text(pid_t pid, char **text, size_t *len);

/* The end of this process's user address space (src/space.c). */
uint64_t ncb__user_top(void);

#endif

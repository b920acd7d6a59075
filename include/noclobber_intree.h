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

#endif

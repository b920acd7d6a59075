/* SPDX-License-Identifier: MIT */
/*
 * Does a program's dynamic section name $ORIGIN?  The dynamic linker
 * expands it to the directory of the main program, which it takes from
 * readlink("/proc/self/exe") when the kernel loaded the program: after an
 * in-process exec that names the loader, so such a program finds nothing
 * (glibc elf/dl-origin.c; musl ldso/dynlink.c likewise).  Read from the
 * file with bounds on everything: a malformed section means "no".
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader.h"

/* Plenty for any real dynamic section: more is not looked at. */
#define DYN_MAX (64u << 10)
/* The string entries that may hold $ORIGIN, and how many are read. */
#define STRS_MAX 512
/* Enough of one string to hold a path list. */
#define STR_MAX 4096

#ifndef DT_AUDIT
#define DT_AUDIT 0x6ffffefc
#define DT_DEPAUDIT 0x6ffffefb
#endif
#ifndef DT_AUXILIARY
#define DT_AUXILIARY 0x7ffffffd
#define DT_FILTER 0x7fffffff
#endif

static int read_at(const struct ncb_elf *e, uint64_t off, void *buf,
		   size_t n)
{
	ssize_t r;

	if (off > e->size || n > e->size - off)
		return -1;
	r = pread(e->fd, buf, n, (off_t)off);
	return r == (ssize_t)n ? 0 : -1;
}

/* The file offset of a link address in some PT_LOAD's file contents. */
static int vaddr_offset(const struct ncb_elf *e, uint64_t addr, uint64_t *off)
{
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		const struct ncb__phdr *p = &e->ph[e->load[i]];

		if (addr >= p->p_vaddr && addr - p->p_vaddr < p->p_filesz) {
			*off = p->p_offset + (addr - p->p_vaddr);
			return 0;
		}
	}
	return -1;
}

static int names_origin(const char *s)
{
	return strstr(s, "$ORIGIN") || strstr(s, "${ORIGIN}");
}

/* The tags whose strings are paths or names the linker expands. */
static int expanded(uint64_t tag)
{
	return tag == DT_NEEDED || tag == DT_RPATH || tag == DT_RUNPATH ||
	       tag == DT_AUDIT || tag == DT_DEPAUDIT || tag == DT_FILTER ||
	       tag == DT_AUXILIARY;
}

struct dyn_scan {
	uint64_t strtab, strsz;
	uint64_t strs[STRS_MAX];
	unsigned int n;
};

static void scan_entries(const struct ncb_elf *e, const unsigned char *b,
			 size_t len, struct dyn_scan *d)
{
	int d_order = e->eh.e_ident[EI_DATA];
	size_t w = e->eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4, i;
	uint64_t tag, val;

	for (i = 0; i + 2 * w <= len; i += 2 * w) {
		tag = ncb__elf_get(b + i, w, d_order);
		val = ncb__elf_get(b + i + w, w, d_order);
		if (tag == DT_NULL)
			break;
		if (tag == DT_STRTAB)
			d->strtab = val;
		else if (tag == DT_STRSZ)
			d->strsz = val;
		else if (expanded(tag) && d->n < STRS_MAX)
			d->strs[d->n++] = val;
	}
}

/* The names the dynamic section's expanded entries give, and $ORIGIN. */
static int names_in(const struct ncb_elf *e, const struct dyn_scan *d,
		    char *str)
{
	uint64_t off, len;
	unsigned int i;

	if (!d->n || vaddr_offset(e, d->strtab, &off))
		return 0;
	for (i = 0; i < d->n; i++) {
		if (d->strs[i] >= d->strsz)
			continue;
		len = d->strsz - d->strs[i] < STR_MAX ? d->strsz - d->strs[i]
						      : STR_MAX;
		if (off + d->strs[i] > e->size)
			continue;
		if (len > e->size - (off + d->strs[i]))
			len = e->size - (off + d->strs[i]);
		if (read_at(e, off + d->strs[i], str, (size_t)len))
			continue;
		str[len] = '\0';
		if (names_origin(str))
			return 1;
	}
	return 0;
}

int ncb_elf_uses_origin(const struct ncb_elf *e)
{
	const struct ncb__phdr *p = NULL;
	unsigned char *buf = NULL;
	struct dyn_scan *d = NULL;
	char *str = NULL;
	unsigned int i;
	uint64_t len;
	int found = 0;

	if (!e)
		return -EINVAL;
	if (e->fd < 0)
		return 0;
	for (i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_DYNAMIC)
			p = &e->ph[i];
	if (!p)
		return 0;
	/* On the heap: an exec may run under a small stack limit. */
	len = p->p_filesz < DYN_MAX ? p->p_filesz : DYN_MAX;
	buf = malloc(len ? (size_t)len : 1);
	d = calloc(1, sizeof(*d));
	str = malloc(STR_MAX + 1);
	if (!buf || !d || !str)
		goto out;
	if (!read_at(e, p->p_offset, buf, (size_t)len))
		scan_entries(e, buf, (size_t)len, d);
	found = names_in(e, d, str);
out:
	free(buf);
	free(d);
	free(str);
	return found;
}

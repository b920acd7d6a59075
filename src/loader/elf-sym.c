/* SPDX-License-Identifier: MIT */
/*
 * A symbol's link address from an image's symbol tables (.symtab, and
 * .dynsym, which is all a stripped library keeps), found through the
 * section headers.  For the tool, which names places in a process by
 * symbol; not part of the interface.  Everything read from the file is
 * bounded by the file; nothing is allocated but the name compared.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef SHT_GNU_versym
#define SHT_GNU_versym 0x6fffffff
#endif
/* No real image has more sections; a larger count is not believed. */
#define SECTIONS_MAX (1u << 20)

struct shdr {
	uint32_t type;
	uint32_t link;
	uint64_t offset;
	uint64_t size;
	uint64_t entsize;
};

struct sym {
	uint32_t name;
	unsigned char info;
	uint16_t shndx;
	uint64_t value;
	uint64_t size;
};

/* A symbol search: the best match so far. */
struct find {
	const char *name;
	size_t nlen;
	char *buf;		/* nlen + 1 bytes, for a name read */
	int rank;		/* 0: none yet */
	uint64_t value;
	uint64_t size;
};

static int read_at(const struct ncb_elf *e, uint64_t off, void *buf, size_t n)
{
	if (off > e->size || n > e->size - off)
		return -1;
	return pread(e->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static uint64_t get(const unsigned char *p, size_t n, const struct ncb_elf *e)
{
	return ncb__elf_get(p, n, e->eh.e_ident[EI_DATA]);
}

static int is64(const struct ncb_elf *e)
{
	return e->eh.e_ident[EI_CLASS] == ELFCLASS64;
}

static int read_shdr(const struct ncb_elf *e, uint64_t i, struct shdr *sh)
{
	unsigned char b[64];
	size_t n = is64(e) ? 64 : 40;

	if (e->eh.e_shentsize < n ||
	    read_at(e, e->eh.e_shoff + i * e->eh.e_shentsize, b, n))
		return -1;
	sh->type = (uint32_t)get(b + 4, 4, e);
	if (is64(e)) {
		sh->offset = get(b + 24, 8, e);
		sh->size = get(b + 32, 8, e);
		sh->link = (uint32_t)get(b + 40, 4, e);
		sh->entsize = get(b + 56, 8, e);
	} else {
		sh->offset = get(b + 16, 4, e);
		sh->size = get(b + 20, 4, e);
		sh->link = (uint32_t)get(b + 24, 4, e);
		sh->entsize = get(b + 36, 4, e);
	}
	return 0;
}

/* The number of sections: past 0xff00 it is kept in section 0's size. */
static uint64_t sections(const struct ncb_elf *e)
{
	struct shdr s0;
	uint64_t n = e->eh.e_shnum;

	if (!e->eh.e_shoff || e->fd < 0)
		return 0;
	if (!n && !read_shdr(e, 0, &s0))
		n = s0.size;
	return n < SECTIONS_MAX ? n : SECTIONS_MAX;
}

static int read_sym(const struct ncb_elf *e, const struct shdr *t,
		    uint64_t i, struct sym *s)
{
	unsigned char b[24];
	size_t n = is64(e) ? 24 : 16;

	if (t->entsize < n || read_at(e, t->offset + i * t->entsize, b, n))
		return -1;
	s->name = (uint32_t)get(b, 4, e);
	if (is64(e)) {
		s->info = b[4];
		s->shndx = (uint16_t)get(b + 6, 2, e);
		s->value = get(b + 8, 8, e);
		s->size = get(b + 16, 8, e);
	} else {
		s->value = get(b + 4, 4, e);
		s->size = get(b + 8, 4, e);
		s->info = b[12];
		s->shndx = (uint16_t)get(b + 14, 2, e);
	}
	return 0;
}

/*
 * How good a definition is: a global or weak one over a local, and in
 * .dynsym the default version (memcpy@@GLIBC_2.14) over an older one the
 * versym table marks hidden.  0: not a definition of a function or data.
 */
static int rank(const struct sym *s, int hidden)
{
	int type = s->info & 0xf, bind = s->info >> 4;

	if (s->shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_OBJECT &&
				      type != STT_GNU_IFUNC &&
				      type != STT_NOTYPE))
		return 0;
	return 1 + (bind == STB_GLOBAL || bind == STB_WEAK) * 2 + !hidden;
}

/* The versym section of dynsym section number dyn: its header, or -1. */
static int versym_of(const struct ncb_elf *e, uint64_t nsec, uint64_t dyn,
		     struct shdr *vs)
{
	uint64_t i;

	for (i = 0; i < nsec; i++)
		if (!read_shdr(e, i, vs) && vs->type == SHT_GNU_versym &&
		    vs->link == dyn)
			return 0;
	return -1;
}

static int name_is(const struct ncb_elf *e, const struct shdr *str,
		   uint32_t off, struct find *f)
{
	if (off >= str->size || str->size - off < f->nlen + 1 ||
	    read_at(e, str->offset + off, f->buf, f->nlen + 1))
		return 0;
	return !memcmp(f->buf, f->name, f->nlen + 1);
}

static void scan(const struct ncb_elf *e, uint64_t nsec, uint64_t idx,
		 const struct shdr *t, struct find *f)
{
	struct shdr str, vs;
	struct sym s;
	unsigned char v[2];
	uint64_t i, n;
	int have_vs, hidden, r;

	if (!t->entsize || t->link >= nsec || read_shdr(e, t->link, &str))
		return;
	have_vs = t->type == SHT_DYNSYM && !versym_of(e, nsec, idx, &vs);
	n = t->size / t->entsize;
	for (i = 1; i < n; i++) {
		if (read_sym(e, t, i, &s))
			return;
		hidden = have_vs && !read_at(e, vs.offset + i * 2, v, 2) &&
			 get(v, 2, e) & 0x8000;
		r = rank(&s, hidden);
		if (r > f->rank && name_is(e, &str, s.name, f)) {
			f->rank = r;
			f->value = s.value;
			f->size = s.size;
		}
	}
}

int ncb__elf_symbol(const struct ncb_elf *e, const char *name,
		    uint64_t *value, uint64_t *size)
{
	struct find f = { .name = name };
	struct shdr t;
	uint64_t i, nsec;

	if (!e || !name || !*name || !value || !size)
		return -EINVAL;
	f.nlen = strlen(name);
	f.buf = malloc(f.nlen + 1);
	if (!f.buf)
		return -ENOMEM;
	nsec = sections(e);
	for (i = 0; i < nsec; i++)
		if (!read_shdr(e, i, &t) &&
		    (t.type == SHT_SYMTAB || t.type == SHT_DYNSYM))
			scan(e, nsec, i, &t, &f);
	free(f.buf);
	if (!f.rank)
		return 0;
	*value = f.value;
	*size = f.size;
	return 1;
}

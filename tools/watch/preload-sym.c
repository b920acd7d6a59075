/* SPDX-License-Identifier: MIT */
/*
 * A caller's symbol, for its report: the function holding its offset in
 * the module's file, from the file's symbol table (.symtab, or .dynsym
 * where that is stripped), read with pread(2) a block at a time into
 * static memory (the space's lock held).  The other watchers name
 * callers so; dladdr(3) would know exported functions only, and takes
 * the loader's lock.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "preload.h"

static int rd(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -1;
}

/* A file offset's address in the file's own terms (its segments'). */
static int vaddr_of(int fd, const ElfW(Ehdr) *eh, uint64_t off,
		    uint64_t *va)
{
	ElfW(Phdr) ph;
	unsigned int i;

	for (i = 0; i < eh->e_phnum; i++) {
		if (rd(fd, &ph, sizeof(ph), eh->e_phoff +
		       (uint64_t)i * eh->e_phentsize))
			return -1;
		if (ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			*va = off - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

static int holds(const ElfW(Sym) *y, uint64_t va)
{
	return ELF64_ST_TYPE(y->st_info) == STT_FUNC &&
	       y->st_shndx != SHN_UNDEF && y->st_size &&
	       va >= y->st_value && va - y->st_value < y->st_size;
}

/* The function of table sh holding va: 0 with the site's symbol, or -1. */
static int scan(int fd, const ElfW(Ehdr) *eh, const ElfW(Shdr) *sh,
		uint64_t va, struct pl_site *s)
{
	static ElfW(Sym) sym[128];
	uint64_t n = sh->sh_size / sizeof(*sym), at, i, k;
	ElfW(Shdr) strs;
	ssize_t got;
	char *nul;

	if (sh->sh_link >= eh->e_shnum ||
	    rd(fd, &strs, sizeof(strs), eh->e_shoff +
	       (uint64_t)sh->sh_link * eh->e_shentsize))
		return -1;
	for (at = 0; at < n; at += k) {
		k = n - at < 128 ? n - at : 128;
		if (rd(fd, sym, k * sizeof(*sym), sh->sh_offset +
		       at * sizeof(*sym)))
			return -1;
		for (i = 0; i < k && !holds(&sym[i], va); i++)
			;
		if (i == k)
			continue;
		if (sym[i].st_name >= strs.sh_size)
			return -1;
		got = pread(fd, s->symbol, sizeof(s->symbol) - 1,
			    (off_t)(strs.sh_offset + sym[i].st_name));
		s->symbol[got > 0 ? got : 0] = '\0';
		nul = memchr(s->symbol, '\0', sizeof(s->symbol));
		if (!nul || nul == s->symbol) {
			s->symbol[0] = '\0';
			return -1;
		}
		s->sym_off = va - sym[i].st_value;
		return 0;
	}
	return -1;
}

/* The first table of type holding va: 0, or -1. */
static int find(int fd, const ElfW(Ehdr) *eh, unsigned int type,
		uint64_t va, struct pl_site *s)
{
	ElfW(Shdr) sh;
	unsigned int i;

	for (i = 0; i < eh->e_shnum; i++) {
		if (rd(fd, &sh, sizeof(sh), eh->e_shoff +
		       (uint64_t)i * eh->e_shentsize))
			return -1;
		if (sh.sh_type == type && sh.sh_entsize == sizeof(ElfW(Sym)))
			return scan(fd, eh, &sh, va, s);
	}
	return -1;
}

void pl_symbol(struct pl_site *s)
{
	ElfW(Ehdr) eh;
	struct stat st;
	uint64_t va;
	int fd;

	s->symbol[0] = '\0';
	s->sym_off = 0;
	if (!s->path[0] || (fd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	/* The file the code maps, not another at its path since. */
	if (!fstat(fd, &st) && st.st_dev == s->mod.dev &&
	    st.st_ino == s->mod.ino && !rd(fd, &eh, sizeof(eh), 0) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_shentsize == sizeof(ElfW(Shdr)) &&
	    eh.e_phentsize == sizeof(ElfW(Phdr)) &&
	    !vaddr_of(fd, &eh, s->offset, &va) &&
	    find(fd, &eh, SHT_SYMTAB, va, s))
		find(fd, &eh, SHT_DYNSYM, va, s);
	close(fd);
}

/* SPDX-License-Identifier: MIT */
/*
 * What a watcher inside the process (libnoclobber-preload.so) cannot see
 * in a program, told from its file: a set-ID program (the loader ignores
 * LD_PRELOAD for it), a static one (no loader runs to read it), a Go one
 * (its runtime maps memory with system calls of its own).  Shared by
 * `watch --preload`, which says so of the program it starts, and the
 * library, which says so of the programs a watched one runs; the library
 * may not allocate, so the file is read with pread into small buffers.
 */
#ifndef NCB_WATCH_UNSEEN_H
#define NCB_WATCH_UNSEEN_H

#include <elf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	WU_SETID = 1,		/* set-user-ID or set-group-ID */
	WU_STATIC = 2,		/* an ELF program with no interpreter */
	WU_GO = 4,		/* a section .go.buildinfo */
};

#define WU_WATCH_COVERS "(watch without --preload covers it)"

static inline const char *wunseen_text(unsigned int bit)
{
	switch (bit) {
	case WU_SETID:
		return "set-user-ID or set-group-ID: the loader ignores "
		       "LD_PRELOAD, nothing is watched " WU_WATCH_COVERS;
	case WU_STATIC:
		/* valgrind's tools are: the programs they load are watched. */
		return "a static program: no loader reads LD_PRELOAD, its "
		       "own calls are not watched (a program it loads with "
		       "the environment's, as valgrind's tools do, is; watch "
		       "without --preload covers both)";
	default:
		return "a Go program: its runtime maps memory with system "
		       "calls of its own, which are not watched (watch "
		       "without --preload covers them)";
	}
}

/* An ELF header's fields as both classes have them. */
struct wu_elf {
	int is64;
	uint64_t phoff, shoff;
	unsigned int phnum, shnum, shstrndx, phentsize, shentsize;
};

/* The fields of either class's header e into h. */
#define WU_FIELDS(h, e)							\
	((h)->phoff = (e).e_phoff, (h)->shoff = (e).e_shoff,		\
	 (h)->phnum = (e).e_phnum, (h)->shnum = (e).e_shnum,		\
	 (h)->shstrndx = (e).e_shstrndx,				\
	 (h)->phentsize = (e).e_phentsize,				\
	 (h)->shentsize = (e).e_shentsize)

static inline int wu_header(int fd, struct wu_elf *h)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} u;

	if (pread(fd, &u, sizeof(u), 0) < (ssize_t)sizeof(u.e32) ||
	    memcmp(u.e64.e_ident, ELFMAG, SELFMAG) ||
	    (u.e64.e_type != ET_EXEC && u.e64.e_type != ET_DYN))
		return -1;
	h->is64 = u.e64.e_ident[EI_CLASS] == ELFCLASS64;
	if (h->is64)
		WU_FIELDS(h, u.e64);
	else
		WU_FIELDS(h, u.e32);
	return h->phentsize == (h->is64 ? sizeof(Elf64_Phdr) :
				sizeof(Elf32_Phdr)) ? 0 : -1;
}

/* Whether a program header says PT_INTERP. */
static inline int wu_interp(int fd, const struct wu_elf *h)
{
	uint32_t type;
	unsigned int i;

	/* p_type is the first word of both classes' headers. */
	for (i = 0; i < h->phnum; i++)
		if (pread(fd, &type, sizeof(type), (off_t)(h->phoff +
			  (uint64_t)i * h->phentsize)) == sizeof(type) &&
		    type == PT_INTERP)
			return 1;
	return 0;
}

/* A section header's name and file offset, in either class. */
static inline int wu_section(int fd, const struct wu_elf *h, unsigned int i,
			     uint32_t *name, uint64_t *off, uint64_t *size)
{
	union {
		Elf64_Shdr s64;
		Elf32_Shdr s32;
	} u;
	size_t len = h->is64 ? sizeof(u.s64) : sizeof(u.s32);

	if (h->shentsize != len || pread(fd, &u, len, (off_t)(h->shoff +
					 (uint64_t)i * len)) != (ssize_t)len)
		return -1;
	*name = h->is64 ? u.s64.sh_name : u.s32.sh_name;
	*off = h->is64 ? u.s64.sh_offset : u.s32.sh_offset;
	*size = h->is64 ? u.s64.sh_size : u.s32.sh_size;
	return 0;
}

/* Whether the file has a section of that name (under 32 bytes). */
static inline int wu_has_section(int fd, const struct wu_elf *h,
				 const char *want)
{
	uint64_t names, names_size, off, size;
	uint32_t name;
	char buf[32];
	unsigned int i;

	if (h->shstrndx >= h->shnum ||
	    wu_section(fd, h, h->shstrndx, &name, &names, &names_size))
		return 0;
	for (i = 0; i < h->shnum; i++) {
		if (wu_section(fd, h, i, &name, &off, &size) ||
		    name >= names_size)
			continue;
		memset(buf, 0, sizeof(buf));
		if (pread(fd, buf, sizeof(buf) - 1, (off_t)(names + name)) >
		    0 && !strcmp(buf, want))
			return 1;
	}
	return 0;
}

/*
 * What the library would not see in the program open at fd: WU_* bits,
 * 0 for a program it sees (or a file that is no ELF program: a script's
 * interpreter is judged when it runs).
 */
static inline unsigned int wunseen(int fd)
{
	struct wu_elf h;
	struct stat st;
	unsigned int u = 0;

	if (!fstat(fd, &st) && (st.st_mode & (S_ISUID | S_ISGID)))
		u |= WU_SETID;
	if (wu_header(fd, &h))
		return u;
	if (!wu_interp(fd, &h))
		u |= WU_STATIC;
	if (wu_has_section(fd, &h, ".go.buildinfo"))
		u |= WU_GO;
	return u;
}

#endif

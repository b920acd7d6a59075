/* SPDX-License-Identifier: MIT */
/*
 * What a watcher inside the process (libnoclobber-preload.so) cannot see
 * in a program, told from its file: a set-ID program (the loader ignores
 * LD_PRELOAD for it), a static one (no loader runs to read it), a Go one
 * (its runtime maps memory with system calls of its own).  Shared by
 * `watch --preload`, which says so of the program it starts, and the
 * library, which says so of the programs a watched one runs; the library
 * may not allocate, so the file is read with pread into the caller's
 * room.
 */
#ifndef NCB_WATCH_UNSEEN_H
#define NCB_WATCH_UNSEEN_H

#include <elf.h>
#include <fcntl.h>
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

/* The ELF header at the start of the got bytes of head, into h. */
static inline int wu_header(const void *head, ssize_t got, struct wu_elf *h)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} u;

	if (got < (ssize_t)sizeof(u.e32))
		return -1;
	memcpy(&u, head, (size_t)got < sizeof(u) ? (size_t)got : sizeof(u));
	if (memcmp(u.e64.e_ident, ELFMAG, SELFMAG) ||
	    (u.e64.e_type != ET_EXEC && u.e64.e_type != ET_DYN))
		return -1;
	h->is64 = u.e64.e_ident[EI_CLASS] == ELFCLASS64;
	if (h->is64 && got < (ssize_t)sizeof(u.e64))
		return -1;
	if (h->is64)
		WU_FIELDS(h, u.e64);
	else
		WU_FIELDS(h, u.e32);
	return h->phentsize == (h->is64 ? sizeof(Elf64_Phdr) :
				sizeof(Elf32_Phdr)) ? 0 : -1;
}

/*
 * The headers are read a batch at a time (one pread for up to WU_BATCH),
 * since this runs before every exec of a watched process: the file's
 * first bytes once, for the ELF header and, where they follow it as they
 * do, the program headers; the section headers, the first batch holding
 * the names' own.  Into the caller's room (static in the library: an
 * exec from a signal handler on a small stack must not overflow it).
 */
#define WU_BATCH 64

struct wu_scratch {
	union {
		unsigned char head[WU_BATCH * sizeof(Elf64_Phdr)];
		Elf64_Phdr p64[WU_BATCH];
		Elf32_Phdr p32[WU_BATCH];
		Elf64_Shdr s64[WU_BATCH];
		Elf32_Shdr s32[WU_BATCH];
	} u;
	char names[1024];	/* the start of the section names */
};

/* Whether one of n program headers at p says PT_INTERP (p_type: the
   first field of either class's, read at any alignment). */
static inline int wu_any_interp(const unsigned char *p, unsigned int n,
				unsigned int size)
{
	uint32_t type;

	for (; n--; p += size) {
		memcpy(&type, p, sizeof(type));
		if (type == PT_INTERP)
			return 1;
	}
	return 0;
}

/*
 * Whether a program header says PT_INTERP: those in the got bytes read
 * from the file's start looked at there, the others read; -1 where the
 * headers cannot be read or there are none (no program the kernel runs,
 * which is no static one either).
 */
static inline int wu_interp(int fd, const struct wu_elf *h, ssize_t got,
			    struct wu_scratch *b)
{
	uint64_t size = (uint64_t)h->phnum * h->phentsize;
	unsigned int i, n;

	if (!h->phnum)
		return -1;
	/* Two comparisons, not a sum: a hostile phoff would wrap it. */
	if (got > 0 && h->phoff <= (uint64_t)got &&
	    size <= (uint64_t)got - h->phoff)
		return wu_any_interp(b->u.head + h->phoff, h->phnum,
				     h->phentsize);
	for (i = 0; i < h->phnum; i += n) {
		n = h->phnum - i < WU_BATCH ? h->phnum - i : WU_BATCH;
		got = pread(fd, &b->u, (size_t)n * h->phentsize,
			    (off_t)(h->phoff + (uint64_t)i * h->phentsize));
		if (got < (ssize_t)((size_t)n * h->phentsize))
			return -1;
		if (wu_any_interp(b->u.head, n, h->phentsize))
			return 1;
	}
	return 0;
}

/* The section names' table: where it is, how much of it b->names has. */
struct wu_names {
	uint64_t off, size;
	size_t have;
};

static inline int wu_name_is(int fd, const struct wu_names *t,
			     const char *head, uint32_t name,
			     const char *want)
{
	size_t len = strlen(want) + 1;
	char buf[32];

	if (name >= t->size || len > sizeof(buf))
		return 0;
	if (name < t->have && len <= t->have - name)
		return !memcmp(head + name, want, len);
	return pread(fd, buf, len, (off_t)(t->off + name)) == (ssize_t)len &&
	       !memcmp(buf, want, len);
}

/* The names' table, from its header (in b's batch, or read). */
static inline int wu_names_at(int fd, const struct wu_elf *h, size_t len,
			      unsigned int batch, struct wu_scratch *b,
			      struct wu_names *t)
{
	union {
		Elf64_Shdr s64;
		Elf32_Shdr s32;
	} one;
	ssize_t got;

	if (h->shstrndx < batch)
		memcpy(&one, (const char *)&b->u + h->shstrndx * len, len);
	else if (pread(fd, &one, len, (off_t)(h->shoff +
					       (uint64_t)h->shstrndx * len)) !=
		 (ssize_t)len)
		return -1;
	t->off = h->is64 ? one.s64.sh_offset : one.s32.sh_offset;
	t->size = h->is64 ? one.s64.sh_size : one.s32.sh_size;
	got = pread(fd, b->names, t->size < sizeof(b->names) ? t->size :
		    sizeof(b->names), (off_t)t->off);
	t->have = got > 0 ? (size_t)got : 0;
	return 0;
}

/* Whether the file has a section of that name (under 32 bytes). */
static inline int wu_has_section(int fd, const struct wu_elf *h,
				 const char *want, struct wu_scratch *b)
{
	size_t len = h->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	struct wu_names t;
	unsigned int i, n, k;
	uint32_t name;
	ssize_t got;

	if (h->shentsize != len || h->shstrndx >= h->shnum)
		return 0;
	for (i = 0; i < h->shnum; i += n) {
		n = h->shnum - i < WU_BATCH ? h->shnum - i : WU_BATCH;
		got = pread(fd, &b->u, n * len, (off_t)(h->shoff +
						       (uint64_t)i * len));
		if (got < (ssize_t)(n * len) ||
		    (!i && wu_names_at(fd, h, len, n, b, &t)))
			return 0;
		for (k = 0; k < n; k++) {
			name = h->is64 ? b->u.s64[k].sh_name :
			       b->u.s32[k].sh_name;
			if (wu_name_is(fd, &t, b->names, name, want))
				return 1;
		}
	}
	return 0;
}

/* What the headers say (WU_STATIC, WU_GO), of the file open at f. */
static inline int wu_headers(int f, struct wu_scratch *b)
{
	ssize_t got = pread(f, &b->u, sizeof(b->u), 0);
	struct wu_elf h;
	int u = 0;

	if (wu_header(b->u.head, got, &h))
		return 0;
	if (!wu_interp(f, &h, got, b))
		u |= WU_STATIC;
	if (wu_has_section(f, &h, ".go.buildinfo", b))
		u |= WU_GO;
	return u;
}

/*
 * What the library would not see in the program at path (or open at
 * fd, if fd >= 0): WU_* bits, 0 for a program it sees (or a file that is
 * no ELF program: a script's interpreter is judged when it runs); -1 for
 * what is no regular file, which exec refuses.  Set-ID is the mode's (an
 * execute-only file says it too); the rest the headers', read only where
 * the file opened is the one looked at, and never a device's or a
 * FIFO's (opening one may wait, or do something).
 */
static inline int wunseen(const char *path, int fd, struct wu_scratch *b)
{
	struct stat st, fst;
	int f, u;

	if (fd >= 0 ? fstat(fd, &st) : stat(path, &st))
		return -1;
	if (!S_ISREG(st.st_mode))
		return -1;
	u = st.st_mode & (S_ISUID | S_ISGID) ? WU_SETID : 0;
	if (fd >= 0)
		return u | wu_headers(fd, b);
	/* The file opened must be the one looked at. */
	f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f < 0)
		return u;
	if (!fstat(f, &fst) && fst.st_ino == st.st_ino &&
	    fst.st_dev == st.st_dev)
		u |= wu_headers(f, b);
	close(f);
	return u;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Reading and checking an ELF program before anything is mapped: every
 * field the loader will trust is checked against the file and the address
 * space, and each rejection says what is wrong.  The checks follow the
 * kernel's (fs/binfmt_elf.c: elf_check_arch, elf_read_implies..., the
 * PT_INTERP rules of load_elf_binary) and go further where a userspace
 * loader must not trust what the kernel would re-check later: overlapping
 * segments, wrapping arithmetic, an entry point outside executable code.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loader.h"

int ncb__why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -err;
}

/* Where the bytes come from: memory, or a file read with pread. */
struct src {
	const unsigned char *mem;
	int fd;
	uint64_t size;
};

static int src_read(const struct src *s, uint64_t off, void *buf, size_t n)
{
	ssize_t r;
	size_t done = 0;

	if (off > s->size || n > s->size - off)
		return -ENOEXEC;
	if (s->mem) {
		memcpy(buf, s->mem + off, n);
		return 0;
	}
	while (done < n) {
		r = pread(s->fd, (char *)buf + done, n - done,
			  (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

typedef unsigned long long ull;

static void note(struct ncb_elf *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A lint finding: fine to load, worth knowing.  Dropped if out of memory. */
static void note(struct ncb_elf *e, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	size_t n;
	char *p;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	line[n++] = '\n';
	p = realloc(e->notes, e->notes_len + n + 1);
	if (!p)
		return;
	memcpy(p + e->notes_len, line, n);
	e->notes_len += n;
	p[e->notes_len] = '\0';
	e->notes = p;
}

static const char *class_name(int c)
{
	return c == ELFCLASS32 ? "32-bit" : c == ELFCLASS64 ? "64-bit"
							   : "unknown";
}

static int check_ident(const struct src *s, char *why, size_t wl)
{
	unsigned char id[EI_NIDENT];

	if (s->size < EI_NIDENT || src_read(s, 0, id, sizeof(id)))
		return ncb__why(why, wl, ENOEXEC, "%llu bytes: too short for "
				"an ELF header", (ull)s->size);
	if (memcmp(id, ELFMAG, SELFMAG))
		return ncb__why(why, wl, ENOEXEC, "not an ELF file (no "
				"\\177ELF magic)");
	if (id[EI_CLASS] != NCB_ELFCLASS)
		return ncb__why(why, wl, ENOEXEC, "ELF class %s: this build "
				"loads %s programs", class_name(id[EI_CLASS]),
				class_name(NCB_ELFCLASS));
	if (id[EI_DATA] != NCB_ELFDATA)
		return ncb__why(why, wl, ENOEXEC, "byte order %u: this "
				"machine is %s-endian", id[EI_DATA],
				NCB_ELFDATA == ELFDATA2LSB ? "little" : "big");
	if (id[EI_VERSION] != EV_CURRENT)
		return ncb__why(why, wl, ENOEXEC, "ELF identification "
				"version %u unknown", id[EI_VERSION]);
	return 0;
}

static int check_header(struct ncb_elf *e, const struct src *s, char *why,
			size_t wl)
{
	const ncb_ehdr *h = &e->eh;
	uint64_t table;

	if (src_read(s, 0, &e->eh, sizeof(e->eh)))
		return ncb__why(why, wl, ENOEXEC, "%llu bytes: the ELF header "
				"is cut short", (ull)s->size);
	if (h->e_type != ET_EXEC && h->e_type != ET_DYN)
		return ncb__why(why, wl, ENOEXEC, "type %u: neither an "
				"executable (ET_EXEC) nor position-independent "
				"(ET_DYN)", h->e_type);
	if (h->e_machine != NCB_EM)
		return ncb__why(why, wl, ENOEXEC, "machine %u: this build "
				"loads machine %u", h->e_machine, NCB_EM);
	if (h->e_version != EV_CURRENT)
		return ncb__why(why, wl, ENOEXEC, "ELF version %u unknown",
				(unsigned int)h->e_version);
	if (h->e_phentsize != sizeof(ncb_phdr))
		return ncb__why(why, wl, ENOEXEC, "program header entries of "
				"%u bytes, expected %zu", h->e_phentsize,
				sizeof(ncb_phdr));
	/* The kernel's limit: 64 KiB of program headers. */
	if (h->e_phnum < 1 || h->e_phnum > 65536 / sizeof(ncb_phdr))
		return ncb__why(why, wl, ENOEXEC, "%u program headers: "
				"between 1 and %zu expected", h->e_phnum,
				65536 / sizeof(ncb_phdr));
	table = (uint64_t)h->e_phnum * sizeof(ncb_phdr);
	if (h->e_phoff > s->size || table > s->size - h->e_phoff)
		return ncb__why(why, wl, ENOEXEC, "program headers at %#llx "
				"(%llu bytes) run past the end of the file "
				"(%llu bytes)", (ull)h->e_phoff, (ull)table,
				(ull)s->size);
	return 0;
}

/* One PT_LOAD on its own, and against the one before it. */
static int check_load(struct ncb_elf *e, const struct src *s, unsigned int i,
		      const ncb_phdr *prev, unsigned int pi, char *why,
		      size_t wl)
{
	const ncb_phdr *p = &e->ph[i];
	uint64_t pg = ncb__probe()->page_size;
	uint64_t pend;

	if (p->p_filesz > p->p_memsz)
		return ncb__why(why, wl, ENOEXEC, "segment %u: file size "
				"%#llx exceeds memory size %#llx", i,
				(ull)p->p_filesz, (ull)p->p_memsz);
	if (p->p_offset > s->size || p->p_filesz > s->size - p->p_offset)
		return ncb__why(why, wl, ENOEXEC, "segment %u: file bytes "
				"%#llx+%#llx run past the end of the file "
				"(%llu bytes)", i, (ull)p->p_offset,
				(ull)p->p_filesz, (ull)s->size);
	if (p->p_align > 1 && (p->p_align & (p->p_align - 1)))
		return ncb__why(why, wl, ENOEXEC, "segment %u: alignment "
				"%#llx is not a power of two", i,
				(ull)p->p_align);
	if ((p->p_vaddr - p->p_offset) & (pg - 1))
		return ncb__why(why, wl, ENOEXEC, "segment %u: address %#llx "
				"and offset %#llx differ modulo the page size "
				"(%llu)", i, (ull)p->p_vaddr, (ull)p->p_offset,
				(ull)pg);
	/* The end, rounded up to a page, must still be an address. */
	if (p->p_vaddr > UINTPTR_MAX || p->p_memsz > UINTPTR_MAX - p->p_vaddr ||
	    p->p_vaddr + p->p_memsz > UINTPTR_MAX - (pg - 1))
		return ncb__why(why, wl, ENOEXEC, "segment %u: %#llx+%#llx "
				"wraps around the address space", i,
				(ull)p->p_vaddr, (ull)p->p_memsz);
	if (!prev)
		return 0;
	if (p->p_vaddr < prev->p_vaddr)
		return ncb__why(why, wl, ENOEXEC, "segment %u at %#llx comes "
				"before segment %u at %#llx: PT_LOAD headers "
				"must ascend", i, (ull)p->p_vaddr, pi,
				(ull)prev->p_vaddr);
	pend = prev->p_vaddr + prev->p_memsz;
	if (p->p_vaddr < pend)
		return ncb__why(why, wl, ENOEXEC, "segment %u (%#llx) overlaps "
				"segment %u (ends at %#llx)", i,
				(ull)p->p_vaddr, pi, (ull)pend);
	/* Sharing a page is legitimate; the 4.17 loader broke on it. */
	if ((p->p_vaddr & ~(pg - 1)) < ((pend + pg - 1) & ~(pg - 1)))
		note(e, "segments %u and %u share the page at %#llx", pi, i,
		     (ull)(p->p_vaddr & ~(pg - 1)));
	return 0;
}

static int check_interp(struct ncb_elf *e, const struct src *s,
			const ncb_phdr *p, char *why, size_t wl)
{
	size_t i;

	if (e->interp)
		return ncb__why(why, wl, ENOEXEC, "two PT_INTERP headers");
	if (p->p_filesz < 2)
		return ncb__why(why, wl, ENOEXEC, "PT_INTERP of %llu bytes: "
				"too short for a path", (ull)p->p_filesz);
	if (p->p_filesz > PATH_MAX)
		return ncb__why(why, wl, ENAMETOOLONG, "PT_INTERP of %llu "
				"bytes: longer than PATH_MAX (%d)",
				(ull)p->p_filesz, PATH_MAX);
	if (p->p_offset > s->size || p->p_filesz > s->size - p->p_offset)
		return ncb__why(why, wl, ENOEXEC, "PT_INTERP at %#llx runs "
				"past the end of the file", (ull)p->p_offset);
	e->interp = malloc((size_t)p->p_filesz);
	if (!e->interp)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	if (src_read(s, p->p_offset, e->interp, (size_t)p->p_filesz))
		return ncb__why(why, wl, EIO, "cannot read PT_INTERP");
	if (e->interp[p->p_filesz - 1])
		return ncb__why(why, wl, ENOEXEC, "interpreter path is not "
				"NUL-terminated");
	if (!e->interp[0])
		return ncb__why(why, wl, ENOEXEC, "interpreter path is "
				"empty");
	/*
	 * The kernel reads up to the first NUL: padding after it is fine
	 * (binutils pads s390x's to its alignment), more text is not.
	 */
	for (i = strlen(e->interp); i < p->p_filesz; i++)
		if (e->interp[i])
			return ncb__why(why, wl, ENOEXEC, "interpreter path "
					"has a NUL inside it");
	return 0;
}

/* Where the program headers are once loaded (the kernel's AT_PHDR). */
static int find_phdr(struct ncb_elf *e, const ncb_phdr *pt_phdr, char *why,
		     size_t wl)
{
	uint64_t off = e->eh.e_phoff, len = e->eh.e_phnum * sizeof(ncb_phdr);
	const ncb_phdr *p;
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		p = &e->ph[e->load[i]];
		if (pt_phdr) {
			if (pt_phdr->p_vaddr >= p->p_vaddr &&
			    pt_phdr->p_vaddr - p->p_vaddr < p->p_memsz) {
				e->phdr = pt_phdr->p_vaddr;
				return 0;
			}
		} else if (off >= p->p_offset && len <= p->p_filesz &&
			   off - p->p_offset <= p->p_filesz - len) {
			e->phdr = p->p_vaddr + (off - p->p_offset);
			return 0;
		}
	}
	if (pt_phdr)
		return ncb__why(why, wl, ENOEXEC, "PT_PHDR at %#llx lies in "
				"no segment", (ull)pt_phdr->p_vaddr);
	note(e, "the program headers are in no segment: AT_PHDR is 0");
	return 0;
}

/* The whole image: span, address space, entry point. */
static int check_image(struct ncb_elf *e, char *why, size_t wl)
{
	const ncb_phdr *first = &e->ph[e->load[0]];
	const ncb_phdr *last = &e->ph[e->load[e->nload - 1]], *p;
	const struct ncb_probe *pr = ncb__probe();
	uint64_t pg = pr->page_size, top = ncb__user_top();
	unsigned int i;

	e->lo = first->p_vaddr & ~(pg - 1);
	e->hi = (last->p_vaddr + last->p_memsz + pg - 1) & ~(pg - 1);
	if (e->hi <= e->lo)
		return ncb__why(why, wl, ENOEXEC, "the PT_LOAD segments hold "
				"no memory");
	if (e->hi - e->lo > NCB_ELF_SPAN_MAX)
		return ncb__why(why, wl, E2BIG, "span of %#llx bytes exceeds "
				"the limit of %#llx", (ull)(e->hi - e->lo),
				(ull)NCB_ELF_SPAN_MAX);
	if (e->hi - e->lo > top)
		return ncb__why(why, wl, E2BIG, "span of %#llx bytes is larger "
				"than the user address space", (ull)(e->hi -
								     e->lo));
	if (e->eh.e_type == ET_EXEC && e->hi > top)
		return ncb__why(why, wl, EINVAL, "ET_EXEC image ends at %#llx, "
				"beyond the user address space (%#llx)",
				(ull)e->hi, (ull)top);
	if (e->eh.e_type == ET_EXEC && e->lo < pr->mmap_min_addr)
		return ncb__why(why, wl, EPERM, "ET_EXEC image starts at "
				"%#llx, below vm.mmap_min_addr (%#lx)",
				(ull)e->lo, pr->mmap_min_addr);
	/* A shared library has no entry: loadable, not runnable. */
	if (!e->eh.e_entry && e->eh.e_type == ET_DYN) {
		note(e, "no entry point: a library, not a program");
		return 0;
	}
	for (i = 0; i < e->nload; i++) {
		p = &e->ph[e->load[i]];
		if ((p->p_flags & PF_X) && e->eh.e_entry >= p->p_vaddr &&
		    e->eh.e_entry - p->p_vaddr < p->p_memsz)
			return 0;
	}
	return ncb__why(why, wl, ENOEXEC, "entry point %#llx is in no "
			"executable segment", (ull)e->eh.e_entry);
}

static void lint(struct ncb_elf *e)
{
	uint64_t pg = ncb__probe()->page_size;
	const ncb_phdr *p;
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		p = &e->ph[e->load[i]];
		if (p->p_align > pg &&
		    (p->p_vaddr - p->p_offset) & (p->p_align - 1))
			note(e, "segment %u: address and offset differ modulo "
			     "its alignment %#llx", e->load[i],
			     (ull)p->p_align);
		if (p->p_align > 1 && p->p_align < pg)
			note(e, "segment %u: alignment %#llx is below the page "
			     "size", e->load[i], (ull)p->p_align);
		if ((p->p_flags & (PF_W | PF_X)) == (PF_W | PF_X))
			note(e, "segment %u is writable and executable",
			     e->load[i]);
	}
	if (e->exec_stack)
		note(e, "PT_GNU_STACK asks for an executable stack");
}

static int parse_headers(struct ncb_elf *e, const struct src *s, char *why,
			 size_t wl)
{
	const ncb_phdr *prev = NULL, *pt_phdr = NULL;
	unsigned int i, pi = 0;
	int err;

	err = check_ident(s, why, wl);
	if (!err)
		err = check_header(e, s, why, wl);
	if (err)
		return err;
	e->ph = calloc(e->eh.e_phnum, sizeof(*e->ph));
	e->load = calloc(e->eh.e_phnum, sizeof(*e->load));
	if (!e->ph || !e->load)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	if (src_read(s, e->eh.e_phoff, e->ph, e->eh.e_phnum * sizeof(*e->ph)))
		return ncb__why(why, wl, EIO, "cannot read the program "
				"headers");
	e->align = ncb__probe()->page_size;
	for (i = 0; i < e->eh.e_phnum; i++) {
		const ncb_phdr *p = &e->ph[i];

		if (p->p_type == PT_LOAD) {
			err = check_load(e, s, i, prev, pi, why, wl);
			if (err)
				return err;
			if (p->p_align > e->align)
				e->align = p->p_align;
			e->load[e->nload++] = i;
			prev = p;
			pi = i;
		} else if (p->p_type == PT_INTERP) {
			err = check_interp(e, s, p, why, wl);
			if (err)
				return err;
		} else if (p->p_type == PT_GNU_STACK) {
			e->exec_stack = !!(p->p_flags & PF_X);
		} else if (p->p_type == PT_PHDR) {
			pt_phdr = p;
		}
	}
	if (!e->nload)
		return ncb__why(why, wl, ENOEXEC, "no PT_LOAD segment");
	err = check_image(e, why, wl);
	if (!err)
		err = find_phdr(e, pt_phdr, why, wl);
	if (!err)
		lint(e);
	return err;
}

static int parse(struct ncb_elf **ep, const struct src *s, int fd,
		 char *why, size_t wl)
{
	struct ncb_elf *e;
	int err;

	if (why && wl)
		why[0] = '\0';
	e = calloc(1, sizeof(*e));
	if (!e)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	e->fd = fd;
	e->size = s->size;
	err = parse_headers(e, s, why, wl);
	if (err) {
		e->fd = -1;
		ncb_elf_close(e);
		return err;
	}
	*ep = e;
	return 0;
}

int ncb_elf_parse(struct ncb_elf **elf, const void *image, size_t len,
		  char *why, size_t why_len)
{
	struct src s = { image, -1, len };

	if (!elf || (!image && len))
		return ncb__why(why, why_len, EINVAL, "no image given");
	if (!image)
		s.mem = (const unsigned char *)"";
	return parse(elf, &s, -1, why, why_len);
}

int ncb_elf_open(struct ncb_elf **elf, const char *path, char *why,
		 size_t why_len)
{
	struct src s = { NULL, -1, 0 };
	struct stat st;
	int fd, err;

	if (!elf || !path)
		return ncb__why(why, why_len, EINVAL, "no path given");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ncb__why(why, why_len, errno, "%s: %s", path,
				strerror(errno));
	if (fstat(fd, &st)) {
		err = ncb__why(why, why_len, errno, "%s: %s", path,
			       strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = ncb__why(why, why_len, EACCES, "%s: not a regular file",
			       path);
		goto fail;
	}
	s.fd = fd;
	s.size = (uint64_t)st.st_size;
	err = parse(elf, &s, fd, why, why_len);
	if (!err)
		return 0;
fail:
	close(fd);
	return err;
}

void ncb_elf_close(struct ncb_elf *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	free(e->ph);
	free(e->load);
	free(e->interp);
	free(e->notes);
	free(e);
}

int ncb_elf_info(const struct ncb_elf *e, struct ncb_elf_info *info)
{
	if (!e || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->type = e->eh.e_type;
	info->machine = e->eh.e_machine;
	info->entry = e->eh.e_entry;
	info->lo = e->lo;
	info->hi = e->hi;
	info->align = e->align;
	info->nsegs = e->nload;
	info->interp = e->interp;
	info->exec_stack = e->exec_stack;
	info->phdr = e->phdr;
	info->phnum = e->eh.e_phnum;
	return 0;
}

int ncb_elf_segment(const struct ncb_elf *e, unsigned int i,
		    struct ncb_elf_seg *seg)
{
	const ncb_phdr *p;

	if (!e || !seg)
		return -EINVAL;
	if (i >= e->nload)
		return -ERANGE;
	p = &e->ph[e->load[i]];
	seg->vaddr = p->p_vaddr;
	seg->memsz = p->p_memsz;
	seg->filesz = p->p_filesz;
	seg->offset = p->p_offset;
	seg->align = p->p_align;
	seg->prot = ncb__elf_prot(p->p_flags);
	return 0;
}

const char *ncb_elf_notes(const struct ncb_elf *e)
{
	return e && e->notes ? e->notes : "";
}

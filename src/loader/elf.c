/* SPDX-License-Identifier: MIT */
/*
 * Reading and checking an ELF program before anything is mapped: every
 * field the loader will trust is checked against the file and the address
 * space, and each rejection says what is wrong.  The checks follow the
 * kernel's (fs/binfmt_elf.c: elf_check_arch, elf_read_implies..., the
 * PT_INTERP rules of load_elf_binary) and go further where a userspace
 * loader must not trust what the kernel would re-check later: overlapping
 * segments, wrapping arithmetic, an entry point outside executable code.
 *
 * Headers of either class and byte order are read into one form, field by
 * field, so that a lint can check any machine's programs by the rules of
 * that machine's kernels; only this machine's are ever loaded.  Files that
 * are no program (objects, core dumps, separate debug files) are told
 * apart before any check, for tools that walk directories.
 */
#include <fcntl.h>
#include <stddef.h>
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

/* Field f of an Elf32_<type> or Elf64_<type> (class c) at b. */
#define FIELD(b, c, d, type, f)						\
	((c) == ELFCLASS64 ?						\
	 ncb__elf_get((b) + offsetof(Elf64_##type, f),			\
	     sizeof(((Elf64_##type *)0)->f), (d)) :			\
	 ncb__elf_get((b) + offsetof(Elf32_##type, f),			\
	     sizeof(((Elf32_##type *)0)->f), (d)))

static int elf_class(const struct ncb_elf *e)
{
	return e->eh.e_ident[EI_CLASS];
}

static int elf_data(const struct ncb_elf *e)
{
	return e->eh.e_ident[EI_DATA];
}

static size_t phent_size(const struct ncb_elf *e)
{
	return elf_class(e) == ELFCLASS64 ? sizeof(Elf64_Phdr)
					  : sizeof(Elf32_Phdr);
}

#define C32 (1 << ELFCLASS32)
#define C64 (1 << ELFCLASS64)
#define LE (1 << ELFDATA2LSB)
#define BE (1 << ELFDATA2MSB)

/*
 * What the kernels of each machine accept (elf_check_arch and its compat
 * twin, ELF_CLASS, ELF_DATA) and the page sizes they may run with: the
 * kernel maps segments in units of ELF_MIN_ALIGN, the larger of PAGE_SIZE
 * and ELF_EXEC_PAGESIZE (fs/binfmt_elf.c, arch/<arch>/include/asm/elf.h,
 * the PAGE_SIZE choices of arch/<arch>/Kconfig).  A file whose segments
 * are laid out for a smaller page than a kernel uses does not load there.
 */
struct ncb__arch {
	uint16_t machine;
	uint8_t classes;	/* C32, C64 */
	uint8_t orders;		/* LE, BE */
	uint8_t min_shift;	/* log2 of the smallest page size */
	uint8_t max_shift;	/* and of the largest */
	uint8_t va_bits;	/* largest 64-bit user space, log2; 64: the
				   class's whole space as far as known here */
	const char *name;
};

static const struct ncb__arch arches[] = {
	{ EM_386, C32, LE, 12, 12, 32, "i386" },
	/* ELFCLASS32 is x32. */
	{ EM_X86_64, C32 | C64, LE, 12, 12, 56, "x86-64" },
	/* arm64 runs arm programs with 4 KiB pages but for EXPERT kernels. */
	{ EM_ARM, C32, LE | BE, 12, 12, 32, "arm" },
	{ EM_AARCH64, C64, LE | BE, 12, 16, 52, "aarch64" },
	{ EM_RISCV, C32 | C64, LE, 12, 12, 56, "riscv" },
	/* 256 KiB pages (44x) need programs linked for them alone. */
	{ EM_PPC, C32, BE | LE, 12, 16, 32, "powerpc" },
	{ EM_PPC64, C64, BE | LE, 12, 16, 52, "powerpc64" },
	{ EM_S390, C32 | C64, BE, 12, 12, 64, "s390" },
	{ EM_MIPS, C32 | C64, LE | BE, 12, 16, 64, "mips" },
	{ EM_LOONGARCH, C32 | C64, LE, 12, 16, 64, "loongarch" },
	/* sparc64 kernels, with 8 KiB pages, run sparc32 programs too. */
	{ EM_SPARC, C32, BE, 12, 13, 32, "sparc" },
	{ EM_SPARC32PLUS, C32, BE, 13, 13, 32, "sparc32plus" },
	{ EM_SPARCV9, C64, BE, 13, 13, 64, "sparc64" },
	{ EM_ALPHA, C64, LE, 13, 13, 64, "alpha" },
	{ EM_IA_64, C64, LE, 12, 16, 64, "ia64" },
	{ EM_PARISC, C32 | C64, BE, 12, 16, 64, "parisc" },
	{ EM_68K, C32, BE, 12, 13, 32, "m68k" },
	{ EM_SH, C32, LE | BE, 12, 16, 32, "sh" },
};

/* A machine unknown here: the page sizes in common use. */
#define ANY_MIN_SHIFT 12
#define ANY_MAX_SHIFT 16

static const struct ncb__arch *find_arch(unsigned int machine)
{
	size_t i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i].machine == machine)
			return &arches[i];
	return NULL;
}

static uint64_t max_page(const struct ncb_elf *e)
{
	uint64_t max = 1ULL << (e->arch ? e->arch->max_shift : ANY_MAX_SHIFT);

	return max > e->page ? max : e->page;
}

static const char *class_name(int c)
{
	return c == ELFCLASS32 ? "32-bit" : c == ELFCLASS64 ? "64-bit"
							   : "unknown";
}

static const char *order_name(int d)
{
	return d == ELFDATA2LSB ? "little-endian" : "big-endian";
}

/* "aarch64", or "machine 4711" for one not in the table. */
static const char *machine_name(unsigned int machine, char *buf, size_t n)
{
	const struct ncb__arch *a = find_arch(machine);

	if (a)
		return a->name;
	snprintf(buf, n, "machine %u", machine);
	return buf;
}

/* A power-of-two size as people write it: "4 KiB", "1 MiB". */
static const char *size_name(uint64_t v, char *buf, size_t n)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB" };
	unsigned int u = 0;

	while (v >= 1024 && !(v & 1023) && u < 3) {
		v >>= 10;
		u++;
	}
	snprintf(buf, n, "%llu %s", (ull)v, unit[u]);
	return buf;
}

int ncb__elf_foreign(const struct ncb_elf *e, char *why, size_t wl)
{
	char a[32], b[32];

	return ncb__why(why, wl, ENOEXEC, "built for %s (%s, %s): this "
			"build loads %s (%s, %s) programs",
			machine_name(e->eh.e_machine, a, sizeof(a)),
			class_name(elf_class(e)), order_name(elf_data(e)),
			machine_name(NCB_EM, b, sizeof(b)),
			class_name(NCB_ELFCLASS), order_name(NCB_ELFDATA));
}

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

/* The magic, then a class and byte order this call accepts. */
static int check_ident(struct ncb_elf *e, const struct src *s, int flags,
		       char *why, size_t wl)
{
	unsigned char *id = e->eh.e_ident;
	int err;

	err = s->size < SELFMAG ? -ENOEXEC : src_read(s, 0, id, SELFMAG);
	if (err && err != -ENOEXEC)
		return ncb__why(why, wl, -err, "cannot read: %s",
				strerror(-err));
	if (err || memcmp(id, ELFMAG, SELFMAG))
		return ncb__why(why, wl, ENOEXEC, "not an ELF file (no "
				"\\177ELF magic)");
	if (s->size < EI_NIDENT || src_read(s, 0, id, EI_NIDENT))
		return ncb__why(why, wl, ENOEXEC, "%llu bytes: too short for "
				"an ELF header", (ull)s->size);
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return ncb__why(why, wl, ENOEXEC, "ELF class %u unknown",
				id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return ncb__why(why, wl, ENOEXEC, "byte order %u unknown",
				id[EI_DATA]);
	if (!(flags & NCB_ELF_ANY_ARCH) && id[EI_CLASS] != NCB_ELFCLASS)
		return ncb__why(why, wl, ENOEXEC, "ELF class %s: this build "
				"loads %s programs", class_name(id[EI_CLASS]),
				class_name(NCB_ELFCLASS));
	if (!(flags & NCB_ELF_ANY_ARCH) && id[EI_DATA] != NCB_ELFDATA)
		return ncb__why(why, wl, ENOEXEC, "byte order %u: this "
				"machine is %s", id[EI_DATA],
				order_name(NCB_ELFDATA));
	if (id[EI_VERSION] != EV_CURRENT)
		return ncb__why(why, wl, ENOEXEC, "ELF identification "
				"version %u unknown", id[EI_VERSION]);
	return 0;
}

/* The header, in the common form. */
static int read_ehdr(struct ncb_elf *e, const struct src *s, char *why,
		     size_t wl)
{
	unsigned char b[sizeof(Elf64_Ehdr)];
	struct ncb__ehdr *h = &e->eh;
	int c = elf_class(e), d = elf_data(e);

	if (src_read(s, 0, b, c == ELFCLASS64 ? sizeof(Elf64_Ehdr)
					      : sizeof(Elf32_Ehdr)))
		return ncb__why(why, wl, ENOEXEC, "%llu bytes: the ELF header "
				"is cut short", (ull)s->size);
	h->e_type = FIELD(b, c, d, Ehdr, e_type);
	h->e_machine = FIELD(b, c, d, Ehdr, e_machine);
	h->e_version = FIELD(b, c, d, Ehdr, e_version);
	h->e_entry = FIELD(b, c, d, Ehdr, e_entry);
	h->e_phoff = FIELD(b, c, d, Ehdr, e_phoff);
	h->e_shoff = FIELD(b, c, d, Ehdr, e_shoff);
	h->e_flags = FIELD(b, c, d, Ehdr, e_flags);
	h->e_ehsize = FIELD(b, c, d, Ehdr, e_ehsize);
	h->e_phentsize = FIELD(b, c, d, Ehdr, e_phentsize);
	h->e_phnum = FIELD(b, c, d, Ehdr, e_phnum);
	h->e_shentsize = FIELD(b, c, d, Ehdr, e_shentsize);
	h->e_shnum = FIELD(b, c, d, Ehdr, e_shnum);
	h->e_shstrndx = FIELD(b, c, d, Ehdr, e_shstrndx);
	return 0;
}

static int check_type(const struct ncb_elf *e, char *why, size_t wl)
{
	switch (e->eh.e_type) {
	case ET_EXEC:
	case ET_DYN:
		return 0;
	case ET_REL:
		return ncb__why(why, wl, ENOEXEC, "type 1 (ET_REL): a "
				"relocatable object, not a program or "
				"library");
	case ET_CORE:
		return ncb__why(why, wl, ENOEXEC, "type 4 (ET_CORE): a core "
				"dump, not a program or library");
	}
	return ncb__why(why, wl, ENOEXEC, "type %u: neither an executable "
			"(ET_EXEC) nor position-independent (ET_DYN)",
			e->eh.e_type);
}

/* This machine's rules for a native image: its pages, its address space. */
static void native_rules(struct ncb_elf *e)
{
	const struct ncb_probe *pr = ncb__probe();

	e->page = pr->page_size;
	e->addr_max = UINTPTR_MAX;
	e->span_max = NCB_ELF_SPAN_MAX;
	e->top = ncb__user_top();
	e->min_addr = pr->mmap_min_addr;
}

/*
 * Another machine's: its smallest page, its class's limits and the
 * largest address space its kernels give.  vm.mmap_min_addr is a setting
 * of the machine that runs it: not checked.
 */
static void foreign_rules(struct ncb_elf *e)
{
	const struct ncb__arch *a = e->arch;
	unsigned int bits = a ? a->va_bits : 64;

	e->page = 1ULL << (a ? a->min_shift : ANY_MIN_SHIFT);
	if (elf_class(e) == ELFCLASS32) {
		e->addr_max = 0xffffffffu;
		e->span_max = 1ULL << 30;
		e->top = 1ULL << 32;
	} else {
		e->addr_max = UINT64_MAX;
		e->span_max = 1ULL << 40;
		e->top = bits >= 64 ? UINT64_MAX : 1ULL << bits;
	}
	e->min_addr = 0;
}

/* Whose rules apply: this machine's, the file's own, or none. */
static int set_rules(struct ncb_elf *e, int flags, char *why, size_t wl)
{
	unsigned int m = e->eh.e_machine;
	int c = elf_class(e), d = elf_data(e);
	char a[32], b[32];

	/*
	 * No machine: no kernel's (Guile's compiled .go files are such
	 * ET_DYN images).  A build for a machine unknown here has no
	 * native files.
	 */
	if (m == EM_NONE)
		return ncb__why(why, wl, ENOEXEC, "no machine (EM_NONE): not "
				"a program or library any kernel loads");
	e->native = c == NCB_ELFCLASS && d == NCB_ELFDATA && m == NCB_EM &&
		    NCB_EM != EM_NONE;
	e->arch = find_arch(m);
	if (!e->native && !(flags & NCB_ELF_ANY_ARCH))
		return ncb__why(why, wl, ENOEXEC, "machine %u (%s): this "
				"build loads machine %u (%s)", m,
				machine_name(m, a, sizeof(a)), NCB_EM,
				machine_name(NCB_EM, b, sizeof(b)));
	if (e->eh.e_version != EV_CURRENT)
		return ncb__why(why, wl, ENOEXEC, "ELF version %u unknown",
				(unsigned int)e->eh.e_version);
	if (e->arch && (!(e->arch->classes & 1 << c) ||
			!(e->arch->orders & 1 << d)))
		return ncb__why(why, wl, ENOEXEC, "%s %s %s: no kernel runs "
				"%s files of that kind", class_name(c),
				order_name(d), e->arch->name, e->arch->name);
	if (e->native) {
		native_rules(e);
		return 0;
	}
	foreign_rules(e);
	if (!e->arch)
		note(e, "machine %u is unknown here: checked as for pages of "
		     "%s to %s", m, size_name(1ULL << ANY_MIN_SHIFT, a,
					      sizeof(a)),
		     size_name(1ULL << ANY_MAX_SHIFT, b, sizeof(b)));
	return 0;
}

/* The program header table: entries of the class's size, in the file. */
static int check_phtab(const struct ncb_elf *e, const struct src *s,
		       char *why, size_t wl)
{
	const struct ncb__ehdr *h = &e->eh;
	size_t ent = phent_size(e);
	uint64_t table;

	if (h->e_phentsize != ent)
		return ncb__why(why, wl, ENOEXEC, "program header entries of "
				"%u bytes, expected %zu", h->e_phentsize, ent);
	/* The kernel's limit: 64 KiB of program headers. */
	if (h->e_phnum < 1 || h->e_phnum > 65536 / ent)
		return ncb__why(why, wl, ENOEXEC, "%u program headers: "
				"between 1 and %zu expected", h->e_phnum,
				65536 / ent);
	table = (uint64_t)h->e_phnum * ent;
	if (h->e_phoff > s->size || table > s->size - h->e_phoff)
		return ncb__why(why, wl, ENOEXEC, "program headers at %#llx "
				"(%llu bytes) run past the end of the file "
				"(%llu bytes)", (ull)h->e_phoff, (ull)table,
				(ull)s->size);
	return 0;
}

static void read_phdr(struct ncb__phdr *p, const unsigned char *b, int c,
		      int d)
{
	p->p_type = FIELD(b, c, d, Phdr, p_type);
	p->p_flags = FIELD(b, c, d, Phdr, p_flags);
	p->p_offset = FIELD(b, c, d, Phdr, p_offset);
	p->p_vaddr = FIELD(b, c, d, Phdr, p_vaddr);
	p->p_paddr = FIELD(b, c, d, Phdr, p_paddr);
	p->p_filesz = FIELD(b, c, d, Phdr, p_filesz);
	p->p_memsz = FIELD(b, c, d, Phdr, p_memsz);
	p->p_align = FIELD(b, c, d, Phdr, p_align);
}

/* All program headers, in the common form (the table was checked). */
static int read_phdrs(struct ncb_elf *e, const struct src *s, char *why,
		      size_t wl)
{
	size_t ent = phent_size(e), n = e->eh.e_phnum;
	unsigned char *table;
	size_t i;
	int err;

	e->ph = calloc(n, sizeof(*e->ph));
	e->load = calloc(n, sizeof(*e->load));
	table = malloc(n * ent);
	if (!e->ph || !e->load || !table) {
		free(table);
		return ncb__why(why, wl, ENOMEM, "out of memory");
	}
	err = src_read(s, e->eh.e_phoff, table, n * ent);
	if (err) {
		free(table);
		return ncb__why(why, wl, -err == ENOEXEC ? EIO : -err,
				"cannot read the program headers");
	}
	for (i = 0; i < n; i++)
		read_phdr(&e->ph[i], table + i * ent, elf_class(e),
			  elf_data(e));
	free(table);
	return 0;
}

/*
 * A separate debug file (objcopy --only-keep-debug, eu-strip -f) keeps a
 * program's headers but not its bytes: every allocated section but the
 * notes is SHT_NOBITS, whatever the program headers still claim.  1 if
 * so, 0 if not, -1 if there are no section headers to tell.
 */
static int debug_sections(const struct ncb_elf *e, const struct src *s)
{
	unsigned char b[32 * sizeof(Elf64_Shdr)];
	const struct ncb__ehdr *h = &e->eh;
	int c = elf_class(e), d = elf_data(e);
	size_t ent = c == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	unsigned int i, j, n, alloc = 0, nobits = 0;
	const unsigned char *sh;
	uint64_t type;

	if (!h->e_shoff || !h->e_shnum || h->e_shentsize != ent ||
	    h->e_shoff > s->size ||
	    (uint64_t)h->e_shnum * ent > s->size - h->e_shoff)
		return -1;
	for (i = 0; i < h->e_shnum; i += n) {
		n = h->e_shnum - i < 32 ? h->e_shnum - i : 32;
		if (src_read(s, h->e_shoff + i * ent, b, n * ent))
			return -1;
		for (j = 0; j < n; j++) {
			sh = b + j * ent;
			type = FIELD(sh, c, d, Shdr, sh_type);
			if (!(FIELD(sh, c, d, Shdr, sh_flags) & SHF_ALLOC) ||
			    !FIELD(sh, c, d, Shdr, sh_size) ||
			    type == SHT_NOTE)
				continue;
			alloc++;
			nobits += type == SHT_NOBITS;
		}
	}
	return alloc ? alloc == nobits : -1;
}

/* Without sections: executable segments, none with bytes in the file. */
static int debug_segments(const struct ncb_elf *e)
{
	unsigned int i, code = 0;
	const struct ncb__phdr *p;

	for (i = 0; e->ph && i < e->eh.e_phnum; i++) {
		p = &e->ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) ||
		    !p->p_memsz)
			continue;
		if (p->p_filesz)
			return 0;
		code++;
	}
	return code > 0;
}

static int is_debug(const struct ncb_elf *e, const struct src *s)
{
	int ret = debug_sections(e, s);

	return ret >= 0 ? ret : debug_segments(e);
}

/*
 * An alignment the kernel honours: a power of two (0 and 1 are none).
 * Any other is skipped, as maximum_alignment() in fs/binfmt_elf.c skips
 * it ("skip non-power of two alignments as invalid"), not refused.
 */
static int power_of_two(uint64_t a)
{
	return !(a & (a - 1));
}

/* One PT_LOAD on its own, and against the one before it. */
static int check_load(struct ncb_elf *e, const struct src *s, unsigned int i,
		      const struct ncb__phdr *prev, unsigned int pi,
		      char *why, size_t wl)
{
	const struct ncb__phdr *p = &e->ph[i];
	uint64_t pg = e->page, top = e->addr_max;
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
	if ((p->p_vaddr - p->p_offset) & (pg - 1))
		return ncb__why(why, wl, ENOEXEC, "segment %u: address %#llx "
				"and offset %#llx differ modulo the page size "
				"(%llu)", i, (ull)p->p_vaddr, (ull)p->p_offset,
				(ull)pg);
	/* The end, rounded up to a page, must still be an address. */
	if (p->p_vaddr > top || p->p_memsz > top - p->p_vaddr ||
	    p->p_vaddr + p->p_memsz > top - (pg - 1))
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
			const struct ncb__phdr *p, char *why, size_t wl)
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

/* Each program header on its own; *pt_phdr the PT_PHDR, if any. */
static int check_segments(struct ncb_elf *e, const struct src *s,
			  const struct ncb__phdr **pt_phdr, char *why,
			  size_t wl)
{
	const struct ncb__phdr *p, *prev = NULL;
	unsigned int i, pi = 0;
	int err = 0;

	e->align = e->page;
	for (i = 0; i < e->eh.e_phnum && !err; i++) {
		p = &e->ph[i];
		if (p->p_type == PT_LOAD) {
			err = check_load(e, s, i, prev, pi, why, wl);
			if (p->p_align > e->align && power_of_two(p->p_align))
				e->align = p->p_align;
			e->load[e->nload++] = i;
			prev = p;
			pi = i;
		} else if (p->p_type == PT_INTERP) {
			err = check_interp(e, s, p, why, wl);
		} else if (p->p_type == PT_GNU_STACK) {
			e->exec_stack = !!(p->p_flags & PF_X);
		} else if (p->p_type == PT_PHDR) {
			*pt_phdr = p;
		}
	}
	if (!err && !e->nload)
		return ncb__why(why, wl, ENOEXEC, "no PT_LOAD segment");
	return err;
}

/* Where the program headers are once loaded (the kernel's AT_PHDR). */
static int find_phdr(struct ncb_elf *e, const struct ncb__phdr *pt_phdr,
		     char *why, size_t wl)
{
	uint64_t off = e->eh.e_phoff;
	uint64_t len = (uint64_t)e->eh.e_phnum * e->eh.e_phentsize;
	const struct ncb__phdr *p;
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
	const struct ncb__phdr *first = &e->ph[e->load[0]];
	const struct ncb__phdr *last = &e->ph[e->load[e->nload - 1]], *p;
	uint64_t pg = e->page, top = e->top;
	unsigned int i;

	e->lo = first->p_vaddr & ~(pg - 1);
	e->hi = (last->p_vaddr + last->p_memsz + pg - 1) & ~(pg - 1);
	if (e->hi <= e->lo)
		return ncb__why(why, wl, ENOEXEC, "the PT_LOAD segments hold "
				"no memory");
	if (e->hi - e->lo > e->span_max)
		return ncb__why(why, wl, E2BIG, "span of %#llx bytes exceeds "
				"the limit of %#llx", (ull)(e->hi - e->lo),
				(ull)e->span_max);
	if (e->hi - e->lo > top)
		return ncb__why(why, wl, E2BIG, "span of %#llx bytes is larger "
				"than the user address space", (ull)(e->hi -
								     e->lo));
	if (e->eh.e_type == ET_EXEC && e->hi > top)
		return ncb__why(why, wl, EINVAL, "ET_EXEC image ends at %#llx, "
				"beyond the user address space (%#llx)",
				(ull)e->hi, (ull)top);
	if (e->eh.e_type == ET_EXEC && e->lo < e->min_addr)
		return ncb__why(why, wl, EPERM, "ET_EXEC image starts at "
				"%#llx, below vm.mmap_min_addr (%#llx)",
				(ull)e->lo, (ull)e->min_addr);
	/*
	 * A shared library has no entry: loadable, not runnable.  Nothing to
	 * note: that is what a library is (ncb_elf_info says so).
	 */
	if (!e->eh.e_entry && e->eh.e_type == ET_DYN)
		return 0;
	/*
	 * powerpc64's ELFv1 (e_flags' ABI bits not 2): e_entry names a
	 * function descriptor in data, whose first two words the kernel
	 * reads as the code address and the TOC (start_thread,
	 * arch/powerpc/kernel/process.c).
	 */
	if (e->eh.e_machine == EM_PPC64 && (e->eh.e_flags & 3) != 2) {
		for (i = 0; i < e->nload; i++) {
			p = &e->ph[e->load[i]];
			if ((p->p_flags & PF_R) && p->p_memsz >= 16 &&
			    e->eh.e_entry >= p->p_vaddr &&
			    e->eh.e_entry - p->p_vaddr <= p->p_memsz - 16)
				return 0;
		}
		return ncb__why(why, wl, ENOEXEC, "entry point %#llx (an "
				"ELFv1 function descriptor) is in no readable "
				"segment", (ull)e->eh.e_entry);
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

/*
 * The largest of its machine's page sizes the segments are laid out for:
 * a kernel with larger pages cannot map them (address and offset must
 * agree modulo its page size), whatever the machine it runs on.
 */
static void page_fit(struct ncb_elf *e)
{
	uint64_t bits = 0, max = max_page(e), fit;
	const struct ncb__phdr *p;
	char a[32], b[32], c[32];
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		p = &e->ph[e->load[i]];
		bits |= p->p_vaddr - p->p_offset;
	}
	fit = bits ? bits & (~bits + 1) : max;
	e->page_fit = fit < max ? fit : max;
	if (e->page_fit < max)
		note(e, "laid out for pages of at most %s: %s kernels with "
		     "larger pages (up to %s) cannot load it",
		     size_name(e->page_fit, b, sizeof(b)),
		     machine_name(e->eh.e_machine, a, sizeof(a)),
		     size_name(max, c, sizeof(c)));
}

static void lint(struct ncb_elf *e)
{
	uint64_t pg = e->page;
	const struct ncb__phdr *p;
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		p = &e->ph[e->load[i]];
		if (!power_of_two(p->p_align))
			note(e, "segment %u: alignment %#llx is not a power of "
			     "two: ignored, as execve ignores it", e->load[i],
			     (ull)p->p_align);
		else if (p->p_align > pg &&
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
	page_fit(e);
	if (e->exec_stack)
		note(e, "PT_GNU_STACK asks for an executable stack");
}

static int parse_headers(struct ncb_elf *e, const struct src *s, int flags,
			 char *why, size_t wl)
{
	const struct ncb__phdr *pt_phdr = NULL;
	int err;

	err = check_ident(e, s, flags, why, wl);
	if (!err)
		err = read_ehdr(e, s, why, wl);
	if (!err)
		err = check_type(e, why, wl);
	if (!err)
		err = set_rules(e, flags, why, wl);
	if (!err)
		err = check_phtab(e, s, why, wl);
	if (!err)
		err = read_phdrs(e, s, why, wl);
	if (!err && is_debug(e, s))
		err = ncb__why(why, wl, ENOEXEC, "a separate debug file: the "
			       "sections it would load have no bytes in it");
	if (!err)
		err = check_segments(e, s, &pt_phdr, why, wl);
	if (!err)
		err = check_image(e, why, wl);
	if (!err)
		err = find_phdr(e, pt_phdr, why, wl);
	if (!err)
		lint(e);
	return err;
}

static int parse(struct ncb_elf **ep, const struct src *s, int fd, int flags,
		 char *why, size_t wl)
{
	struct ncb_elf *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	e->fd = fd;
	e->size = s->size;
	err = parse_headers(e, s, flags, why, wl);
	if (err) {
		e->fd = -1;
		ncb_elf_close(e);
		return err;
	}
	*ep = e;
	return 0;
}

int ncb_elf_parse_flags(struct ncb_elf **elf, const void *image, size_t len,
			int flags, char *why, size_t why_len)
{
	struct src s = { image, -1, len };

	if (why && why_len)
		why[0] = '\0';
	if (!elf || (!image && len))
		return ncb__why(why, why_len, EINVAL, "no image given");
	if (flags & ~NCB_ELF_ANY_ARCH)
		return ncb__why(why, why_len, EINVAL, "unknown flags %#x",
				(unsigned int)flags);
	if (!image)
		s.mem = (const unsigned char *)"";
	return parse(elf, &s, -1, flags, why, why_len);
}

int ncb_elf_parse(struct ncb_elf **elf, const void *image, size_t len,
		  char *why, size_t why_len)
{
	return ncb_elf_parse_flags(elf, image, len, 0, why, why_len);
}

/*
 * A regular file, opened for reading: O_NONBLOCK so that naming a FIFO
 * cannot hang the caller before fstat says what it is.
 */
static int open_regular(const char *path, struct src *s, char *why,
			size_t wl)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return ncb__why(why, wl, errno, "%s: %s", path,
				strerror(errno));
	if (fstat(fd, &st)) {
		err = ncb__why(why, wl, errno, "%s: %s", path,
			       strerror(errno));
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ncb__why(why, wl, EACCES, "%s: not a regular file",
				path);
	}
	s->fd = fd;
	s->size = (uint64_t)st.st_size;
	return 0;
}

int ncb_elf_open_flags(struct ncb_elf **elf, const char *path, int flags,
		       char *why, size_t why_len)
{
	struct src s = { NULL, -1, 0 };
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (!elf || !path)
		return ncb__why(why, why_len, EINVAL, "no path given");
	if (flags & ~NCB_ELF_ANY_ARCH)
		return ncb__why(why, why_len, EINVAL, "unknown flags %#x",
				(unsigned int)flags);
	err = open_regular(path, &s, why, why_len);
	if (err)
		return err;
	err = parse(elf, &s, s.fd, flags, why, why_len);
	if (err)
		close(s.fd);
	return err;
}

int ncb_elf_open(struct ncb_elf **elf, const char *path, char *why,
		 size_t why_len)
{
	return ncb_elf_open_flags(elf, path, 0, why, why_len);
}

/* What a file is: read as far as it takes to tell, nothing checked. */
static int kind_of(const struct src *s)
{
	struct ncb_elf e = { .fd = -1 };
	unsigned char m[SELFMAG];
	int kind = NCB_ELF_PROGRAM, err;

	err = s->size < SELFMAG ? -ENOEXEC : src_read(s, 0, m, SELFMAG);
	if (err && err != -ENOEXEC)
		return err;
	if (err || memcmp(m, ELFMAG, SELFMAG))
		return NCB_ELF_NOT_ELF;
	/* The magic and a damaged header: the checks will say what. */
	if (check_ident(&e, s, NCB_ELF_ANY_ARCH, NULL, 0) ||
	    read_ehdr(&e, s, NULL, 0))
		return NCB_ELF_PROGRAM;
	switch (e.eh.e_type) {
	case ET_REL:
		return NCB_ELF_OBJECT;
	case ET_CORE:
		return NCB_ELF_CORE;
	case ET_EXEC:
	case ET_DYN:
		if (e.eh.e_machine == EM_NONE)
			return NCB_ELF_OTHER;
		break;
	default:
		return NCB_ELF_OTHER;
	}
	if (!check_phtab(&e, s, NULL, 0) && read_phdrs(&e, s, NULL, 0)) {
		free(e.ph);
		e.ph = NULL;
	}
	if (is_debug(&e, s))
		kind = NCB_ELF_DEBUG;
	free(e.ph);
	free(e.load);
	return kind;
}

int ncb_elf_kind_image(const void *image, size_t len)
{
	struct src s = { image, -1, len };

	if (!image && len)
		return -EINVAL;
	return image ? kind_of(&s) : NCB_ELF_NOT_ELF;
}

int ncb_elf_kind(const char *path)
{
	struct src s = { NULL, -1, 0 };
	int ret;

	if (!path)
		return -EINVAL;
	ret = open_regular(path, &s, NULL, 0);
	if (ret)
		return ret;
	ret = kind_of(&s);
	close(s.fd);
	return ret;
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
	struct ncb_elf_info r = NCB_INIT(ncb_elf_info);

	if (!e || ncb__out_size(info, NCB__END(ncb_elf_info, exec_stack)))
		return -EINVAL;
	r.type = e->eh.e_type;
	r.machine = e->eh.e_machine;
	r.entry = e->eh.e_entry;
	r.lo = e->lo;
	r.hi = e->hi;
	r.align = e->align;
	r.nsegs = e->nload;
	r.interp = e->interp;
	r.exec_stack = e->exec_stack;
	r.phdr = e->phdr;
	r.phnum = e->eh.e_phnum;
	ncb__out(info, &r, sizeof(r));
	return 0;
}

int ncb_elf_arch(const struct ncb_elf *e, struct ncb_elf_arch *arch)
{
	struct ncb_elf_arch a = NCB_INIT(ncb_elf_arch);

	if (!e || ncb__out_size(arch, NCB__END(ncb_elf_arch, page_fit)))
		return -EINVAL;
	a.elf_class = elf_class(e);
	a.data = elf_data(e);
	a.machine = e->eh.e_machine;
	a.native = e->native;
	a.name = e->arch ? e->arch->name : NULL;
	a.page_size = e->page;
	a.min_page = e->arch ? 1ULL << e->arch->min_shift
			     : 1ULL << ANY_MIN_SHIFT;
	if (e->native && a.min_page > e->page)
		a.min_page = e->page;
	a.max_page = max_page(e);
	a.page_fit = e->page_fit;
	ncb__out(arch, &a, sizeof(a));
	return 0;
}

int ncb_elf_segment(const struct ncb_elf *e, unsigned int i,
		    struct ncb_elf_seg *seg)
{
	struct ncb_elf_seg r = NCB_INIT(ncb_elf_seg);
	const struct ncb__phdr *p;

	if (!e || ncb__out_size(seg, NCB__END(ncb_elf_seg, prot)))
		return -EINVAL;
	if (i >= e->nload)
		return -ERANGE;
	p = &e->ph[e->load[i]];
	r.vaddr = p->p_vaddr;
	r.memsz = p->p_memsz;
	r.filesz = p->p_filesz;
	r.offset = p->p_offset;
	r.align = p->p_align;
	r.prot = ncb__elf_prot(p->p_flags);
	ncb__out(seg, &r, sizeof(r));
	return 0;
}

const char *ncb_elf_notes(const struct ncb_elf *e)
{
	return e && e->notes ? e->notes : "";
}

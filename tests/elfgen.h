/* SPDX-License-Identifier: MIT */
/*
 * A generator of small ELF images for this build's class and machine: one
 * valid layout, and mutations of it that each break one rule the loader
 * checks; section headers; and the same images rewritten for any class,
 * byte order and machine.  Used by t-elf, mkelf and the fuzzer's seeds.
 */
#ifndef NCB_ELFGEN_H
#define NCB_ELFGEN_H

#include <stddef.h>
#include <string.h>
#include "loader/loader.h"

/* Segments at 64 KiB boundaries: valid for every page size in use. */
#define GEN_P 0x10000ULL
#define GEN_VA 0x20000000ULL
#define GEN_LEN (2 * GEN_P)
/* Header slots, and where section headers go: after the PT_INTERP text. */
#define GEN_PHDRS 5
#define GEN_SHOFF 0xa00
#define GEN_SHDRS 6

#if NCB_ELFCLASS == ELFCLASS64
typedef Elf64_Shdr gen_shdr;
#else
typedef Elf32_Shdr gen_shdr;
#endif

struct gen {
	unsigned char buf[GEN_LEN];
	size_t len;
};

static inline ncb_ehdr *gen_eh(struct gen *g)
{
	return (ncb_ehdr *)(void *)g->buf;
}

static inline ncb_phdr *gen_ph(struct gen *g, unsigned int i)
{
	return (ncb_phdr *)(void *)(g->buf + sizeof(ncb_ehdr)) + i;
}

/*
 * The valid image: ET_EXEC at GEN_VA; text (r-x) in the first 64 KiB of
 * the file, data (rw-, with bss) in the second; PT_GNU_STACK; a spare
 * header slot (PT_NULL) for mutations to use.
 */
static inline void gen_base(struct gen *g)
{
	ncb_ehdr *h = gen_eh(g);
	ncb_phdr *p;
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->len = GEN_LEN;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = NCB_ELFCLASS;
	h->e_ident[EI_DATA] = NCB_ELFDATA;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
	h->e_machine = NCB_EM;
	h->e_version = EV_CURRENT;
#if defined(__powerpc64__) && _CALL_ELF == 2
	/* ELFv2, as every ppc64le program: its entry is code. */
	h->e_flags = 2;
#endif
	h->e_entry = GEN_VA + 0x1000;
	h->e_phoff = sizeof(ncb_ehdr);
	h->e_ehsize = sizeof(ncb_ehdr);
	h->e_phentsize = sizeof(ncb_phdr);
	h->e_phnum = 5;
	p = gen_ph(g, 0);
	p->p_type = PT_LOAD;
	p->p_flags = PF_R | PF_X;
	p->p_offset = 0;
	p->p_vaddr = p->p_paddr = GEN_VA;
	p->p_filesz = p->p_memsz = 0x2000;
	p->p_align = GEN_P;
	p = gen_ph(g, 1);
	p->p_type = PT_LOAD;
	p->p_flags = PF_R | PF_W;
	p->p_offset = GEN_P;
	p->p_vaddr = p->p_paddr = GEN_VA + GEN_P;
	p->p_filesz = 0x100;
	p->p_memsz = 0x3000;
	p->p_align = GEN_P;
	p = gen_ph(g, 2);
	p->p_type = PT_GNU_STACK;
	p->p_flags = PF_R | PF_W;
	gen_ph(g, 3)->p_type = PT_NULL;
	gen_ph(g, 4)->p_type = PT_NULL;
	/* Recognisable bytes: text, data, and what follows the data. */
	for (i = 0x1000; i < 0x2000; i++)
		g->buf[i] = 0xc3;
	for (i = 0; i < GEN_P; i++)
		g->buf[GEN_P + i] = (unsigned char)(0xa0 + i % 16);
}

/* A PT_INTERP in header slot i, its string at file offset 0x800. */
static inline void gen_interp(struct gen *g, unsigned int i, const char *s,
			      size_t len)
{
	ncb_phdr *p = gen_ph(g, i);

	p->p_type = PT_INTERP;
	p->p_flags = PF_R;
	p->p_offset = 0x800;
	p->p_vaddr = GEN_VA + 0x800;
	p->p_filesz = p->p_memsz = len;
	memcpy(g->buf + 0x800, s, len);
}

struct gen_case {
	const char *name;
	int err;		/* the negative errno expected */
	const char *why;	/* a piece of the message expected */
};

/* The malformed images: case k of GEN_CASES applied to the base. */
static const struct gen_case gen_cases[] = {
	{ "too-short", -ENOEXEC, "too short" },
	{ "bad-magic", -ENOEXEC, "magic" },
	{ "wrong-class", -ENOEXEC, "class" },
	{ "wrong-byte-order", -ENOEXEC, "byte order" },
	{ "ident-version", -ENOEXEC, "identification version" },
	{ "cut-header", -ENOEXEC, "cut short" },
	{ "type-rel", -ENOEXEC, "type 1" },
	{ "type-core", -ENOEXEC, "type 4" },
	{ "wrong-machine", -ENOEXEC, "machine" },
	{ "elf-version", -ENOEXEC, "ELF version 0" },
	{ "phentsize", -ENOEXEC, "entries of" },
	{ "no-phdrs", -ENOEXEC, "0 program headers" },
	{ "too-many-phdrs", -ENOEXEC, "program headers: between" },
	{ "phdrs-past-end", -ENOEXEC, "run past the end" },
	{ "phoff-wraps", -ENOEXEC, "run past the end" },
	{ "no-load", -ENOEXEC, "no PT_LOAD" },
	{ "filesz-over-memsz", -ENOEXEC, "exceeds memory size" },
	{ "offset-past-end", -ENOEXEC, "file bytes" },
	{ "filesz-wraps", -ENOEXEC, "file bytes" },
	{ "incongruent", -ENOEXEC, "differ modulo the page size" },
	{ "vaddr-wraps", -ENOEXEC, "wraps around" },
	{ "out-of-order", -ENOEXEC, "must ascend" },
	{ "overlap", -ENOEXEC, "overlaps" },
	{ "span-too-big", -E2BIG, "span of" },
	{ "beyond-user-space", -EINVAL, "beyond the user address space" },
	{ "below-min-addr", -EPERM, "mmap_min_addr" },
	{ "entry-outside", -ENOEXEC, "entry point" },
	{ "entry-not-exec", -ENOEXEC, "entry point" },
	{ "two-interps", -ENOEXEC, "two PT_INTERP" },
	{ "interp-too-short", -ENOEXEC, "too short for a path" },
	{ "interp-too-long", -ENAMETOOLONG, "PATH_MAX" },
	{ "interp-past-end", -ENOEXEC, "PT_INTERP at" },
	{ "interp-unterminated", -ENOEXEC, "not NUL-terminated" },
	{ "interp-empty", -ENOEXEC, "is empty" },
	{ "interp-inner-nul", -ENOEXEC, "NUL inside" },
	{ "phdr-outside", -ENOEXEC, "PT_PHDR" },
	{ "empty-span", -ENOEXEC, "hold no memory" },
};

#define GEN_CASES (sizeof(gen_cases) / sizeof(gen_cases[0]))

static inline void gen_case(struct gen *g, unsigned int k)
{
	ncb_ehdr *h = gen_eh(g);
	ncb_phdr *t = gen_ph(g, 0), *d = gen_ph(g, 1);

	gen_base(g);
	switch (k) {
	case 0: g->len = 10; break;
	case 1: h->e_ident[1] = 'X'; break;
	case 2: h->e_ident[EI_CLASS] = NCB_ELFCLASS == ELFCLASS64 ?
				       ELFCLASS32 : ELFCLASS64; break;
	case 3: h->e_ident[EI_DATA] = NCB_ELFDATA == ELFDATA2LSB ?
				      ELFDATA2MSB : ELFDATA2LSB; break;
	case 4: h->e_ident[EI_VERSION] = 0; break;
	case 5: g->len = sizeof(ncb_ehdr) - 4; break;
	case 6: h->e_type = ET_REL; break;
	case 7: h->e_type = ET_CORE; break;
	case 8: h->e_machine = NCB_EM == EM_X86_64 ? EM_AARCH64
						   : EM_X86_64; break;
	case 9: h->e_version = 0; break;
	case 10: h->e_phentsize = sizeof(ncb_phdr) + 8; break;
	case 11: h->e_phnum = 0; break;
	case 12: h->e_phnum = 0xffff; break;
	case 13: h->e_phoff = g->len - sizeof(ncb_phdr); break;
	case 14: h->e_phoff = (__typeof__(h->e_phoff))-16; break;
	case 15: t->p_type = PT_NOTE; d->p_type = PT_NOTE; break;
	case 16: d->p_filesz = d->p_memsz + 1; break;
	case 17: d->p_offset = g->len + GEN_P; break;
	case 18: d->p_filesz = (__typeof__(d->p_filesz))-GEN_P;
		 d->p_memsz = d->p_filesz; break;
	case 19: d->p_offset += 0x10; break;
	case 20: d->p_memsz = (__typeof__(d->p_memsz))-0x1000; break;
	case 21: t->p_vaddr = GEN_VA + 4 * GEN_P;
		 h->e_entry = t->p_vaddr + 0x1000; break;
	case 22: d->p_vaddr = GEN_VA + 0x1000; d->p_offset = GEN_P + 0x1000;
		 break;
	case 23: d->p_vaddr = GEN_VA + (UINTPTR_MAX > 0xffffffffu ?
					 (1ULL << 41) : (1ULL << 31)); break;
	case 24: t->p_vaddr = (__typeof__(t->p_vaddr))(UINTPTR_MAX -
							 2 * GEN_P + 1);
		 d->p_vaddr = t->p_vaddr + GEN_P;
		 d->p_memsz = 0xf000;
		 h->e_entry = t->p_vaddr + 0x1000; break;
	case 25: t->p_vaddr = 0; d->p_vaddr = GEN_P;
		 h->e_entry = 0x1000; break;
	case 26: h->e_entry = GEN_VA + 8 * GEN_P; break;
	case 27: h->e_entry = GEN_VA + GEN_P + 0x10; break;
	case 28: gen_interp(g, 3, "/lib/ld.so", 11);
		 gen_interp(g, 4, "/lib/ld.so", 11); break;
	case 29: gen_interp(g, 3, "", 1); break;
	case 30: gen_interp(g, 3, "/x", 3);
		 gen_ph(g, 3)->p_filesz = PATH_MAX + 1; break;
	case 31: gen_interp(g, 3, "/x", 3);
		 gen_ph(g, 3)->p_offset = g->len - 1; break;
	case 32: gen_interp(g, 3, "/lib/ld.so", 10); break;
	case 33: gen_interp(g, 3, "\0\0", 2); break;
	case 34: gen_interp(g, 3, "/lib\0ld.so", 11); break;
	case 35: gen_ph(g, 3)->p_type = PT_PHDR;
		 gen_ph(g, 3)->p_vaddr = GEN_VA + 6 * GEN_P; break;
	case 36: t->p_filesz = t->p_memsz = 0; d->p_type = PT_NULL;
		 h->e_type = ET_DYN; h->e_entry = 0; break;
	}
}

/* A section: what the debug-file checks read of it. */
struct gen_sec {
	uint32_t type;
	uint32_t flags;
	uint64_t addr;
	uint64_t offset;
	uint64_t size;
};

/* Section headers (after the null one) at GEN_SHOFF. */
static inline void gen_sections(struct gen *g, const struct gen_sec *sec,
				unsigned int n)
{
	gen_shdr *sh = (gen_shdr *)(void *)(g->buf + GEN_SHOFF);
	unsigned int i;

	memset(sh, 0, GEN_SHDRS * sizeof(*sh));
	for (i = 0; i < n && i + 1 < GEN_SHDRS; i++) {
		sh[i + 1].sh_type = sec[i].type;
		sh[i + 1].sh_flags = sec[i].flags;
		sh[i + 1].sh_addr = sec[i].addr;
		sh[i + 1].sh_offset = sec[i].offset;
		sh[i + 1].sh_size = sec[i].size;
	}
	gen_eh(g)->e_shoff = GEN_SHOFF;
	gen_eh(g)->e_shentsize = sizeof(*sh);
	gen_eh(g)->e_shnum = i + 1;
}

/* A program's sections: code and data with bytes, bss without. */
static inline void gen_program_sections(struct gen *g)
{
	const struct gen_sec sec[] = {
		{ SHT_NOTE, SHF_ALLOC, GEN_VA + 0x200, 0x200, 0x20 },
		{ SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, GEN_VA + 0x1000,
		  0x1000, 0x1000 },
		{ SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, GEN_VA + GEN_P, GEN_P,
		  0x100 },
		{ SHT_NOBITS, SHF_ALLOC | SHF_WRITE, GEN_VA + GEN_P + 0x100,
		  GEN_P + 0x100, 0x2f00 },
		{ SHT_PROGBITS, 0, 0, 0x1100, 0x80 },
	};

	gen_sections(g, sec, sizeof(sec) / sizeof(sec[0]));
}

/*
 * A separate debug file, as objcopy --only-keep-debug leaves one: the
 * program's headers, its loadable sections SHT_NOBITS (the notes kept),
 * its text segment without file bytes, a debug section with bytes.
 */
static inline void gen_debug(struct gen *g)
{
	const struct gen_sec sec[] = {
		{ SHT_NOTE, SHF_ALLOC, GEN_VA + 0x200, 0x200, 0x20 },
		{ SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, GEN_VA + 0x1000,
		  0x1000, 0x1000 },
		{ SHT_NOBITS, SHF_ALLOC | SHF_WRITE, GEN_VA + GEN_P, 0x1000,
		  0x3000 },
		{ SHT_PROGBITS, 0, 0, 0x1000, 0x800 },
	};

	gen_base(g);
	gen_ph(g, 0)->p_filesz = 0;
	gen_ph(g, 1)->p_filesz = 0;
	gen_sections(g, sec, sizeof(sec) / sizeof(sec[0]));
}

/* n bytes of v in byte order d. */
static inline void gen_put(unsigned char *p, size_t n, uint64_t v, int d)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[d == ELFDATA2LSB ? i : n - 1 - i] =
			(unsigned char)(v >> (8 * i));
}

/* Field f of an Elf32_<type> or Elf64_<type> (class c) at b. */
#define GEN_PUT(b, c, d, type, f, v)					\
	((c) == ELFCLASS64 ?						\
	 gen_put((b) + offsetof(Elf64_##type, f),			\
		 sizeof(((Elf64_##type *)0)->f), (v), (d)) :		\
	 gen_put((b) + offsetof(Elf32_##type, f),			\
		 sizeof(((Elf32_##type *)0)->f), (v), (d)))

static inline void gen_put_phdr(unsigned char *b, int c, int d,
				const ncb_phdr *p)
{
	GEN_PUT(b, c, d, Phdr, p_type, p->p_type);
	GEN_PUT(b, c, d, Phdr, p_flags, p->p_flags);
	GEN_PUT(b, c, d, Phdr, p_offset, p->p_offset);
	GEN_PUT(b, c, d, Phdr, p_vaddr, p->p_vaddr);
	GEN_PUT(b, c, d, Phdr, p_paddr, p->p_paddr);
	GEN_PUT(b, c, d, Phdr, p_filesz, p->p_filesz);
	GEN_PUT(b, c, d, Phdr, p_memsz, p->p_memsz);
	GEN_PUT(b, c, d, Phdr, p_align, p->p_align);
}

static inline void gen_put_shdr(unsigned char *b, int c, int d,
				const gen_shdr *s)
{
	GEN_PUT(b, c, d, Shdr, sh_name, s->sh_name);
	GEN_PUT(b, c, d, Shdr, sh_type, s->sh_type);
	GEN_PUT(b, c, d, Shdr, sh_flags, s->sh_flags);
	GEN_PUT(b, c, d, Shdr, sh_addr, s->sh_addr);
	GEN_PUT(b, c, d, Shdr, sh_offset, s->sh_offset);
	GEN_PUT(b, c, d, Shdr, sh_size, s->sh_size);
	GEN_PUT(b, c, d, Shdr, sh_addralign, s->sh_addralign);
}

/*
 * The image rewritten for class c, byte order d and machine m: the same
 * values (cut to 32 bits for ELFCLASS32), the program headers right after
 * the ELF header as before, a mutated entry size or table offset kept as
 * a mutation.  The bytes past the headers stay where they are.
 */
static inline void gen_recode(struct gen *g, int c, int d, unsigned int m)
{
	ncb_ehdr h = *gen_eh(g);
	ncb_phdr ph[GEN_PHDRS];
	gen_shdr sh[GEN_SHDRS];
	size_t ehs = c == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phs = c == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t shs = c == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	uint64_t phoff = h.e_phoff == sizeof(ncb_ehdr) ? ehs : h.e_phoff;
	unsigned int i, nsh = h.e_shoff == GEN_SHOFF ? h.e_shnum : 0;
	unsigned char *b = g->buf;

	memcpy(ph, gen_ph(g, 0), sizeof(ph));
	memcpy(sh, b + GEN_SHOFF, sizeof(sh));
	/* Both layouts of the headers lie below the PT_INTERP text. */
	memset(b + EI_NIDENT, 0, 0x200 - EI_NIDENT);
	b[EI_CLASS] = (unsigned char)c;
	b[EI_DATA] = (unsigned char)d;
	GEN_PUT(b, c, d, Ehdr, e_type, h.e_type);
	GEN_PUT(b, c, d, Ehdr, e_machine, m);
	GEN_PUT(b, c, d, Ehdr, e_version, h.e_version);
	GEN_PUT(b, c, d, Ehdr, e_entry, h.e_entry);
	GEN_PUT(b, c, d, Ehdr, e_phoff, phoff);
	GEN_PUT(b, c, d, Ehdr, e_shoff, h.e_shoff);
	GEN_PUT(b, c, d, Ehdr, e_flags, h.e_flags);
	GEN_PUT(b, c, d, Ehdr, e_ehsize, ehs);
	GEN_PUT(b, c, d, Ehdr, e_phentsize,
		phs + (h.e_phentsize - sizeof(ncb_phdr)));
	GEN_PUT(b, c, d, Ehdr, e_phnum, h.e_phnum);
	GEN_PUT(b, c, d, Ehdr, e_shentsize, nsh ? shs : h.e_shentsize);
	GEN_PUT(b, c, d, Ehdr, e_shnum, h.e_shnum);
	for (i = 0; phoff == ehs && i < GEN_PHDRS && i < h.e_phnum; i++)
		gen_put_phdr(b + ehs + i * phs, c, d, &ph[i]);
	if (!nsh)
		return;
	memset(b + GEN_SHOFF, 0, sizeof(sh));
	for (i = 0; i < nsh && i < GEN_SHDRS; i++)
		gen_put_shdr(b + GEN_SHOFF + i * shs, c, d, &sh[i]);
}

#endif /* NCB_ELFGEN_H */

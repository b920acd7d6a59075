/* SPDX-License-Identifier: MIT */
/* The ELF loader's shared parts: the native ELF types and a parsed image. */
#ifndef NCB_LOADER_H
#define NCB_LOADER_H

#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include "internal.h"

#if UINTPTR_MAX > 0xffffffffu
#define NCB_ELFCLASS ELFCLASS64
typedef Elf64_Ehdr ncb_ehdr;
typedef Elf64_Phdr ncb_phdr;
#else
#define NCB_ELFCLASS ELFCLASS32
typedef Elf32_Ehdr ncb_ehdr;
typedef Elf32_Phdr ncb_phdr;
#endif

#if defined(__x86_64__)
#define NCB_EM EM_X86_64
#elif defined(__i386__)
#define NCB_EM EM_386
#elif defined(__aarch64__)
#define NCB_EM EM_AARCH64
#elif defined(__arm__)
#define NCB_EM EM_ARM
#elif defined(__riscv)
#define NCB_EM EM_RISCV
#elif defined(__powerpc64__)
#define NCB_EM EM_PPC64
#elif defined(__s390x__)
#define NCB_EM EM_S390
#else
/* Unknown here: every file is then "for another machine". */
#define NCB_EM EM_NONE
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NCB_ELFDATA ELFDATA2LSB
#else
#define NCB_ELFDATA ELFDATA2MSB
#endif

/* The largest span an image may have: far beyond any real program. */
#define NCB_ELF_SPAN_MAX (UINTPTR_MAX > 0xffffffffu ? (1ULL << 40) \
						      : (1ULL << 30))

struct ncb_elf {
	int fd;			/* -1: parsed from memory */
	uint64_t size;		/* of the file */
	ncb_ehdr eh;
	ncb_phdr *ph;		/* all program headers */
	unsigned int *load;	/* indexes of the PT_LOAD ones */
	unsigned int nload;
	uint64_t lo;		/* page-aligned span at link addresses */
	uint64_t hi;
	uint64_t align;		/* largest PT_LOAD alignment, at least a page */
	uint64_t phdr;		/* link address of the headers; 0: unmapped */
	int exec_stack;
	char *interp;		/* NULL: none */
	char *notes;		/* lint findings, one per line */
	size_t notes_len;
};

/* A segment's p_flags as mmap protection. */
static inline int ncb__elf_prot(uint32_t flags)
{
	return (flags & PF_R ? PROT_READ : 0) |
	       (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

/* Record why a call failed: "why" buffers are optional. */
NCB_HIDDEN int ncb__why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* NCB_LOADER_H */

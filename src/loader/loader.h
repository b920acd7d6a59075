/* SPDX-License-Identifier: MIT */
/*
 * The loader's room (src/loader/), private to it: the native ELF types,
 * the headers of any class and byte order in one form, a parsed image,
 * and what its files give each other.  Parsing and checking are elf*.c's,
 * mapping an image elf-load.c's; an in-process exec is exec.c's
 * orchestration of stack.c (the stack and auxiliary vector), script.c
 * ("#!"), layout.c (where execve would put things), identity.c (what
 * execve records) and handover.c (the last jump), with each machine's
 * parts in arch/.  docs/architecture.md draws it.
 */
#ifndef NCB_LOADER_H
#define NCB_LOADER_H

#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include "noclobber_intree.h"
#include "internal.h"
#include "arch.h"

#if UINTPTR_MAX > 0xffffffffu
#define NCB_ELFCLASS ELFCLASS64
typedef Elf64_Ehdr ncb_ehdr;
typedef Elf64_Phdr ncb_phdr;
#else
#define NCB_ELFCLASS ELFCLASS32
typedef Elf32_Ehdr ncb_ehdr;
typedef Elf32_Phdr ncb_phdr;
#endif

/* The machine this build loads for (arch/). */
#define NCB_EM NCB_ARCH_EM

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NCB_ELFDATA ELFDATA2LSB
#else
#define NCB_ELFDATA ELFDATA2MSB
#endif

/* The largest span an image may have: far beyond any real program. */
#define NCB_ELF_SPAN_MAX (UINTPTR_MAX > 0xffffffffu ? (1ULL << 40) \
						      : (1ULL << 30))

/*
 * An ELF header of either class and either byte order, widened and in this
 * machine's byte order: what the checks and the loader read.  The names
 * are the ELF ones, so code written for the native types reads the same.
 */
struct ncb__ehdr {
	unsigned char e_ident[EI_NIDENT];
	uint16_t e_type;
	uint16_t e_machine;
	uint32_t e_version;
	uint64_t e_entry;
	uint64_t e_phoff;
	uint64_t e_shoff;
	uint32_t e_flags;
	uint16_t e_ehsize;
	uint16_t e_phentsize;
	uint16_t e_phnum;
	uint16_t e_shentsize;
	uint16_t e_shnum;
	uint16_t e_shstrndx;
};

/* A program header likewise. */
struct ncb__phdr {
	uint32_t p_type;
	uint32_t p_flags;
	uint64_t p_offset;
	uint64_t p_vaddr;
	uint64_t p_paddr;
	uint64_t p_filesz;
	uint64_t p_memsz;
	uint64_t p_align;
};

struct ncb__arch;

struct ncb_elf {
	int fd;			/* -1: parsed from memory */
	uint64_t size;		/* of the file */
	struct ncb__ehdr eh;
	struct ncb__phdr *ph;	/* all program headers */
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
	/*
	 * The rules it was checked by: this machine's for a native image,
	 * its own machine's (the kernels that would run it) for another.
	 */
	int native;		/* class, byte order and machine are ours */
	const struct ncb__arch *arch;	/* NULL: a machine not known here */
	uint64_t page;		/* the page size the checks use */
	uint64_t addr_max;	/* the class's last address */
	uint64_t span_max;	/* the largest span accepted */
	uint64_t top;		/* end of the user address space */
	uint64_t min_addr;	/* lowest ET_EXEC address; 0: not checked */
	uint64_t page_fit;	/* the largest page size it loads with */
};

/* An unsigned field of n bytes in byte order d, whatever this machine's. */
static inline uint64_t ncb__elf_get(const unsigned char *p, size_t n, int d)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[d == ELFDATA2LSB ? i : n - 1 - i] << (8 * i);
	return v;
}

/* A segment's p_flags as mmap protection. */
static inline int ncb__elf_prot(uint32_t flags)
{
	return (flags & PF_R ? PROT_READ : 0) |
	       (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

/* "#!" scripts (script.c).  exec_binprm: a sixth interpreter is ELOOP. */
#define NCB__SCRIPT_DEPTH 5

/*
 * A file's first bytes as the kernel reads them for its formats
 * (BINPRM_BUF_SIZE), zero past its end: 0, or -errno (script.c).
 */
#define NCB__HEAD 256
NCB_HIDDEN int ncb__read_head(const char *path, unsigned char *head);

/*
 * A script's interpreter run in its place: 1 with *argvp the interpreter's
 * arguments (the caller frees *line), 0 if path is no script, -errno.
 */
NCB_HIDDEN int ncb__script(const char *path, const unsigned char *head,
			   char *const **argvp, char **line, char *why,
			   size_t wl);

/*
 * binfmt_misc (binfmt.c): 1 if an entry runs path, *argvp the vector its
 * interpreter gets (*line the caller's to free) and *flags its flags; 0
 * if none; -errno.
 */
#define NCB__MISC_ARGV0	0x1	/* P: argv[0] kept */
#define NCB__MISC_OPEN	0x2	/* O: the file open as AT_EXECFD */
#define NCB__MISC_CREDS	0x4	/* C: the file's credentials */
NCB_HIDDEN int ncb__binfmt(const char *path, const unsigned char *head,
			   char *const **argvp, char **line,
			   unsigned int *flags, char *why, size_t wl);

/*
 * What the handlers before the program leave for its stack: binfmt_misc's
 * descriptor and flags for the auxiliary vector, and the argc execve was
 * given, whose pointers its E2BIG limit counts.
 */
struct ncb__misc_run {
	int execfd;		/* AT_EXECFD; -1: none */
	unsigned int at_flags;	/* AT_FLAGS */
	size_t argc;		/* the caller's argc; 0: the program's */
};

/* binfmt_misc's and "#!"'s arguments before the ELF program (exec.c). */
NCB_HIDDEN int ncb__exec_resolve(const char **path, char *const **av,
				 char **lines, const struct ncb_exec_opts *o,
				 struct ncb__misc_run *run, char *why,
				 size_t wl);

/*
 * An image loaded where mmap puts it, even an ET_EXEC one, for the
 * handover to move to its own place (elf-load.c).
 */
NCB_HIDDEN int ncb__elf_load_elsewhere(struct ncb_elf *e,
				       struct ncb_elf_image *img, char *why,
				       size_t wl);
/* Refuse an image of another class, byte order or machine. */
NCB_HIDDEN int ncb__elf_foreign(const struct ncb_elf *e, char *why,
				size_t len);

/* What execve would record in the mm for the program (identity.c). */
struct ncb__identity {
	uint64_t start_code, end_code, start_data, end_data, brk;
	uint64_t start_stack, arg_start, arg_end, env_start, env_end;
	const uintptr_t *auxv;	/* the vector on the program's stack */
	size_t auxv_size;	/* in bytes, AT_NULL included */
	const char *execfn;	/* comm is its last component */
};

NCB_HIDDEN void ncb__identity_image(struct ncb__identity *id,
				    const struct ncb_elf *e,
				    const struct ncb_elf_image *img);
/* comm as execve sets it; 0 or -errno. */
NCB_HIDDEN int ncb__identity_comm(const struct ncb__identity *id);

/*
 * PR_SET_MM_MAP's struct in the layout this kernel reads: its size, and
 * the struct for id written to buf (NCB__MM_MAP_MAX bytes), its size
 * returned.
 */
#define NCB__MM_MAP_MAX 112
NCB_HIDDEN size_t ncb__mm_map_size(void);
NCB_HIDDEN size_t ncb__mm_map_fill(void *buf, const struct ncb__identity *id,
				   int exe_fd);

/* The break execve gives an image ending at end (layout.c). */
/*
 * What of the system decides where execve puts a program, read at once
 * (before ncb_exec opens the program: a low RLIMIT_NOFILE leaves no
 * descriptor for it later).
 */
struct ncb__sys {
	unsigned long rnd;	/* randomize_va_space; 0 if ADDR_NO_RANDOMIZE */
	unsigned long rnd_bits;	/* arch_mmap_rnd()'s bits */
	int kernel_64;		/* a 64-bit kernel, whatever this process */
	int emulated;		/* an emulator runs this process */
	int brk_moves;		/* a static PIE's break: 0 stays, or: */
#define NCB__BRK_MOVES_RANDOM 1	/* moves when randomizing (5.18) */
#define NCB__BRK_MOVES_ALWAYS 2	/* always moves (6.15) */
};

NCB_HIDDEN void ncb__sys_read(struct ncb__sys *sys);
NCB_HIDDEN int ncb__kernel_64(void);
NCB_HIDDEN int ncb__layout(const struct ncb_elf *e, const struct ncb__sys *sys,
			   struct ncb_exec_layout *l);
NCB_HIDDEN uint64_t ncb__exec_brk(const struct ncb_elf *e, uint64_t end,
				  const struct ncb__sys *sys);

/* An address range [start, end). */
struct ncb__range {
	uint64_t start, end;
};


/* The spans the program owns: image, interpreter, stack, a placeholder. */
#define NCB__KEEP_MAX 4

/* One mapping for the handover to move, whole: [from, from + len). */
struct ncb__move {
	uintptr_t from, len, to;
};

/* An image's mappings and the stack: far more than any program has. */
#define NCB__MOVE_MAX 32

/* The last step of an in-process exec (handover.c). */
struct ncb__handover {
	struct ncb__range keep[NCB__KEEP_MAX + 1];	/* +1: the stub's */
	unsigned int nkeep;
	/*
	 * Mappings made elsewhere, moved to ranges that only the caller's
	 * own mappings held, once those are unmapped.
	 */
	struct ncb__move move[NCB__MOVE_MAX];
	unsigned int nmove;
	struct ncb__identity id;
	uintptr_t sp, entry;
	int exe_fd;		/* the program's file for the exe link; -1 */
	void *state;
};

/*
 * Everything that can fail, done first (on failure nothing is left of
 * it); ncb__handover_go unmaps all but ho->keep and enters the program.
 * From a successful prepare on, ho->exe_fd is the stub's to close.
 */
NCB_HIDDEN int ncb__handover_prepare(struct ncb__handover *ho);
NCB_HIDDEN void ncb__handover_go(struct ncb__handover *ho)
	__attribute__((noreturn));
/*
 * Whether something in [lo, hi) will stay after the handover: one of the
 * n ranges given, or the kernel's own.  1, 0; 1 if the maps cannot say.
 */
NCB_HIDDEN int ncb__stays(uint64_t lo, uint64_t hi,
			  const struct ncb__range *keep, unsigned int n);
/*
 * Moves for each mapping in [start, end), to start + delta on: 0, or
 * -EOVERFLOW past NCB__MOVE_MAX, -errno from the maps.
 */
NCB_HIDDEN int ncb__handover_move(struct ncb__handover *ho, uint64_t start,
				  uint64_t end, uint64_t to);
/* 0 if PR_SET_MM_MAP may set the exe link here, else -errno (identity.c). */
NCB_HIDDEN int ncb__exe_settable(void);

/*
 * The program's initial stack (stack.c).  Some of argv may be the
 * interpreter's own ("ld.so --argv0 ARGV0 PATH ARGS", its slots below):
 * a set of them (NCB__HIDE) stays out of the program's command line.
 */
enum ncb__ldso_argv {
	NCB__LDSO_SELF,		/* the interpreter's path */
	NCB__LDSO_OPT,		/* "--argv0" */
	NCB__LDSO_ARGV0,	/* the program's argv[0] */
	NCB__LDSO_PATH,		/* the program's path */
};

typedef unsigned int ncb__hide;
#define NCB__HIDE(slot) (1u << (slot))
#define NCB__HIDE_LDSO (NCB__HIDE(NCB__LDSO_SELF) | NCB__HIDE(NCB__LDSO_OPT) | \
			NCB__HIDE(NCB__LDSO_PATH))

/* Room for every entry a kernel writes today, and many more. */
#define NCB__AUXV_MAX 64

struct ncb__stack {
	char *base;		/* the mapping, where it was made */
	size_t size;
	char *top;		/* strings are pushed down from here */
	/*
	 * Where the mapping goes: base, or a range the caller's own
	 * mappings hold, which the handover moves it to once they are
	 * gone.  Every address written on the stack is already there.
	 */
	uintptr_t at;
	uintptr_t limit;		/* RLIMIT_STACK; UINTPTR_MAX: none */
	int growable;			/* VM_GROWSDOWN, as the kernel's */
	int rnd;			/* randomizing, as PF_RANDOMIZE */
	uintptr_t align_rnd;		/* arch_align_stack()'s range */
	struct ncb__misc_run misc;	/* AT_EXECFD and AT_FLAGS */
	uintptr_t auxv[2 * NCB__AUXV_MAX];
	unsigned int nauxv;
	uintptr_t kern[2 * NCB__AUXV_MAX];	/* this process's own vector */
	unsigned int nkern;
	uintptr_t auxv_at;		/* the vector, where the stack goes */
	ncb__hide hide;			/* argv not in the command line */
	uintptr_t arg_start, arg_end;	/* the strings, as mm records them */
	uintptr_t env_start, env_end;
};

/* This process's own vector read: before the program's files are open. */
NCB_HIDDEN void ncb__stack_init(struct ncb__stack *s, ncb__hide hide);
/*
 * The limit the program's stack has: opts' size, else RLIMIT_STACK;
 * UINTPTR_MAX for none.  0, or -EINVAL for a size below a page.
 */
NCB_HIDDEN int ncb__stack_limit(const struct ncb_exec_opts *o,
				uintptr_t *limit);
/*
 * Its mapping, where execve would put it, else where mmap does,
 * growable where the kernel alone runs the process; room for the strings
 * and vectors of argv, envp and execfn, which execve's limits must admit
 * (-E2BIG).  keep: the ranges that will stay besides
 * the kernel's own.  0, or -errno.
 */
NCB_HIDDEN int ncb__stack_map(struct ncb__stack *s, const struct ncb__sys *sys,
			      char *const argv[], char *const envp[],
			      const char *execfn, int exec,
			      const struct ncb__range *keep,
			      unsigned int nkeep);
NCB_HIDDEN void ncb__stack_unmap(struct ncb__stack *s);
/*
 * ncb__stack_plan's stack for a program's own arguments av (argc: as
 * the caller gave them, before a script's interpreter was put first).
 */
NCB_HIDDEN int ncb__stack_layout(char *const av[], char *const envp[],
				 const char *execfn, size_t argc,
				 const struct ncb_exec_opts *o,
				 uint64_t *start, uint64_t *end,
				 uint64_t *limit);
/* Its contents, *sp the program's entry stack pointer: 0, or -errno. */
NCB_HIDDEN int ncb__stack_build(struct ncb__stack *s, char *const argv[],
				char *const envp[], const char *execfn,
				const struct ncb_elf_image *prog,
				const struct ncb_elf_image *interp,
				unsigned int phnum, uintptr_t *sp);
/* The number of strings in a NULL-terminated vector. */
NCB_HIDDEN size_t ncb__strv_len(char *const v[]);

/* Record why a call failed: "why" buffers are optional. */
NCB_HIDDEN int ncb__why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* NCB_LOADER_H */

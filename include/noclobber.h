/* SPDX-License-Identifier: MIT */
/*
 * noclobber: map memory at a fixed address without ever destroying what is
 * already there, on every kernel and emulator.
 *
 * Errors: functions returning int give 0 (or a count) on success and a
 * negative errno on failure; the mmap-shaped calls (ncb_mmap, ncb_mremap)
 * keep mmap's contract and return MAP_FAILED with errno set.  The library
 * never prints, never aborts and never raises a signal.
 *
 * Structs with a size field grow at the end from one release to the next.
 * The caller sets size to sizeof the struct it was built with (NCB_INIT
 * does):
 *   - options the library reads (*_opts): NULL means every default; a size
 *     below the struct of 1.0 (or of the release that brought the struct)
 *     is EINVAL, and so is a larger struct whose
 *     bytes past what this library knows are not all zero (an option it
 *     cannot honour), or one more than 4096 bytes larger;
 *   - results the library writes: it writes no further than size says and
 *     sets size to what it wrote, so that a caller built against a later
 *     release learns which fields it has; a size below the struct of 1.0
 *     (or of the release that brought it) is EINVAL.
 *   - mappings handed to a callback carry the library's own size: read a
 *     field past 1.0's only where size covers it.
 *
 * Families, and what each may be called from (man-pages(7) ATTRIBUTES):
 *   ncb_mmap, ncb_mremap, ncb_kernel_probe, ncb_noreplace_name,
 *   ncb_version, ncb_reach
 *	thread-safe; allocate nothing.  ncb_mmap and ncb_mremap are
 *	async-signal-safe once ncb_kernel_probe, ncb_mmap or ncb_mremap
 *	has returned: the first of them probes under pthread_once.
 *   ncb_maps_*, ncb_range_free, ncb_find_free, ncb_find_near
 *	thread-safe, one iterator per thread; allocate (malloc), so not
 *	async-signal-safe.
 *   ncb_resv_*
 *	thread-safe, also on one reservation (it holds a lock); new, commit
 *	and decommit allocate, so none but ncb_resv_addr and ncb_resv_len
 *	is async-signal-safe.  ncb_resv_release must not race other calls
 *	on the same reservation.
 *   ncb_as_*
 *	a model is not locked: one thread at a time per model (const calls
 *	may run together); allocate.
 *   ncb_elf_*
 *	thread-safe on distinct images, and const calls on one; allocate.
 *   ncb_exec*
 *	ncb_exec replaces the process: call it with no other thread running
 *	(it refuses otherwise, EBUSY, where /proc tells).  The others are
 *	thread-safe.
 * The single-file core (noclobber_core.h) allocates nothing and is
 * async-signal-safe throughout.
 */
#ifndef NOCLOBBER_H
#define NOCLOBBER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NCB_API
#define NCB_API __attribute__((visibility("default")))
#endif

#define NCB_VERSION_MAJOR 1
#define NCB_VERSION_MINOR 2
#define NCB_VERSION_PATCH 0
/* One number that compares in release order: 0x010000 is 1.0.0. */
#define NCB_MAKE_VERSION(major, minor, patch) \
	((unsigned int)(major) << 16 | (unsigned int)(minor) << 8 | \
	 (unsigned int)(patch))
#define NCB_VERSION \
	NCB_MAKE_VERSION(NCB_VERSION_MAJOR, NCB_VERSION_MINOR, \
			 NCB_VERSION_PATCH)

/*
 * A struct with its size set and the given fields, the rest zero:
 *	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .align = 1 << 21);
 *	ncb_kernel_probe(&NCB_INIT(ncb_probe));
 */
#define NCB_INIT(...) NCB__INIT(__VA_ARGS__, )
#define NCB__INIT(type, ...) \
	((struct type){ .size = sizeof(struct type), __VA_ARGS__ })

/* The version of the library running, as NCB_VERSION gives it. */
NCB_API unsigned int ncb_version(void);

/*
 * Compatibility: MAP_FIXED_NOREPLACE appeared in Linux 4.17 and in glibc
 * 2.28; older headers lack it.  The value is 0x100000 on every architecture
 * but alpha, where 0x100000 was already taken (include/uapi/asm-generic/
 * mman-common.h, arch/alpha/include/uapi/asm/mman.h).  It was proposed as
 * MAP_FIXED_SAFE; that name is kept as an alias.
 */
#ifdef __alpha__
#define NCB_MAP_FIXED_NOREPLACE 0x200000
#else
#define NCB_MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE NCB_MAP_FIXED_NOREPLACE
#endif
#ifndef MAP_FIXED_SAFE
#define MAP_FIXED_SAFE MAP_FIXED_NOREPLACE
#endif

/* enum ncb_noreplace: defined once, in the single-file core's header. */
#define NCB_CORE_ENUM_ONLY
#include "noclobber_core.h"
#undef NCB_CORE_ENUM_ONLY

/* Result of ncb_kernel_probe(); size is set by the caller (sizeof). */
struct ncb_probe {
	size_t size;
	int noreplace;			/* enum ncb_noreplace */
	int procmap_query;		/* 1: PROCMAP_QUERY ioctl works */
	unsigned long page_size;
	unsigned long mmap_min_addr;	/* as read from /proc, 0 if unknown */
};

NCB_API int ncb_kernel_probe(struct ncb_probe *probe);
NCB_API const char *ncb_noreplace_name(int noreplace);

NCB_API void *ncb_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t offset);
NCB_API void *ncb_mremap(void *old_addr, size_t old_len, size_t new_len,
			 int flags, void *new_addr);

/* One mapping, as in /proc/PID/maps. */
struct ncb_mapping {
	size_t size;			/* sizeof(struct ncb_mapping) */
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	int prot;			/* PROT_READ | PROT_WRITE | PROT_EXEC */
	int shared;			/* 1 for a shared mapping ('s') */
	const char *path;		/* "" if none; valid until the next
					   call on the same iterator */
};

struct ncb_maps;

NCB_API int ncb_maps_open(struct ncb_maps **maps, pid_t pid);
NCB_API int ncb_maps_seek(struct ncb_maps *maps, uint64_t addr);
NCB_API int ncb_maps_next(struct ncb_maps *maps, struct ncb_mapping *m);
NCB_API int ncb_maps_find(struct ncb_maps *maps, uint64_t addr,
			  struct ncb_mapping *m);
NCB_API void ncb_maps_close(struct ncb_maps *maps);

typedef int (*ncb_mapping_fn)(const struct ncb_mapping *m, void *arg);
NCB_API int ncb_maps_occupants(pid_t pid, const void *addr, size_t len,
			       ncb_mapping_fn fn, void *arg);

/*
 * Free space: where a range of len bytes could go.  A fit is an aligned
 * address whose range lies in the window and in one free gap, the guard
 * gap below a stack not counting as free.  NCB_PLACE_ANY goes as the
 * kernel's top-down search would within the window: where mmap would put
 * len bytes if that fits the window, else the highest fit ending no higher,
 * else the lowest fit.
 */
enum ncb_place {
	NCB_PLACE_ANY = 0,		/* where the kernel would put it */
	NCB_PLACE_LOWEST = 1,		/* lowest fitting address */
	NCB_PLACE_HIGHEST = 2,		/* highest fitting address */
	NCB_PLACE_RANDOM = 3,		/* uniform over fitting addresses */
};

NCB_API int ncb_range_free(const void *addr, size_t len);
NCB_API int ncb_find_free(uint64_t lo, uint64_t hi, size_t len, size_t align,
			  int place, uint64_t *addr);

/*
 * Reach (1.2): the targets a machine's direct branch, or its farthest
 * PC-relative address, can name from an instruction at pc: every target
 * with min <= target - base <= max, a multiple of step, where base is pc
 * (the next instruction's address where from_next says so), each taken
 * down to a multiple of page first where page is not 0 (aarch64's ADRP).
 * In a 32-bit space a displacement that wraps reaches every address: min
 * and max then span 4 GiB each way.
 */
enum ncb_reach_kind {
	NCB_REACH_BRANCH = 1,		/* direct call or jump: rel32, B/BL,
					   JAL, BRASL */
	NCB_REACH_PCREL = 2,		/* PC-relative address of data or of
					   an indirect call's target: RIP-
					   relative, ADRP, AUIPC, LARL */
};

struct ncb_reach {
	size_t size;			/* sizeof(struct ncb_reach) */
	int64_t min;			/* target - base, at least */
	int64_t max;			/* target - base, at most */
	uint64_t page;			/* 0, or 4096 for ADRP */
	uint32_t step;			/* target - base is a multiple */
	int from_next;			/* 1: base is the next instruction */
	const char *name;		/* the instruction, "b/bl", "adrp" */
};

NCB_API int ncb_reach(int machine, int kind, struct ncb_reach *reach);

/*
 * Near placement (1.1): where len bytes can go with every byte of them
 * less than within from every byte of an anchor [near_lo, near_hi) (a
 * runtime's code, for rel32 calls both ways), in process pid (0: this
 * one), and what the window holds: its free bytes and largest gaps, or
 * why nothing fits.  The window is [near_hi - within, near_lo + within),
 * clamped to the user address space; with opts->reach (1.2), where every
 * byte is within that instruction's reach of every byte of the anchor,
 * both ways, and within 0 or that window too.
 */
#define NCB_NEAR_GAPS 8

struct ncb_near_opts {
	size_t size;			/* sizeof(struct ncb_near_opts) */
	size_t align;			/* power of two; 0: page */
	int place;			/* enum ncb_place */
	/*
	 * 1.1's padding, never read: a 1.1 caller's size takes it in,
	 * whatever it holds.
	 */
	int reserved;
	/* 1.2: within reach of this kind of instruction (0: within only) */
	int reach;			/* enum ncb_reach_kind */
	int machine;			/* its e_machine; 0: this one's */
};

enum ncb_near_why {
	NCB_NEAR_PLACED = 0,		/* addr holds the placement */
	NCB_NEAR_OUTSIDE = 1,		/* no byte of the window is in the
					   user address space */
	NCB_NEAR_SMALL = 2,		/* the window is shorter than len */
	NCB_NEAR_FULL = 3,		/* no free gap in it is len long */
	NCB_NEAR_ALIGN = 4,		/* gaps are long enough, but none
					   holds len at the alignment */
};

struct ncb_near_gap {
	uint64_t start;
	uint64_t end;
};

struct ncb_near {
	size_t size;			/* sizeof(struct ncb_near) */
	uint64_t addr;			/* where len bytes go; 0: nowhere */
	int why;			/* enum ncb_near_why */
	unsigned int nlisted;		/* entries of gaps */
	uint64_t lo;			/* the window, clamped: [lo, hi) */
	uint64_t hi;
	uint64_t free;			/* free bytes in the window */
	uint64_t ngaps;			/* free gaps in the window */
	uint64_t nmaps;			/* mappings overlapping it */
	struct ncb_near_gap gaps[NCB_NEAR_GAPS];	/* largest first */
};

NCB_API int ncb_find_near(pid_t pid, uint64_t near_lo, uint64_t near_hi,
			  uint64_t within, size_t len,
			  const struct ncb_near_opts *opts,
			  struct ncb_near *out);

/*
 * Reservations: PROT_NONE, MAP_NORESERVE address space owned by a handle;
 * MAP_FIXED is used only inside it.  A failed commit or decommit leaves
 * its pages reserved; where the kernel may have unmapped them first (the
 * map count at its limit, say) and they cannot be taken back, they are
 * given up: later commits there fail with EEXIST and ncb_resv_release
 * leaves them, so that it never unmaps what may be another's.
 */
struct ncb_resv_opts {
	size_t size;			/* sizeof(struct ncb_resv_opts) */
	uint64_t lo;			/* window [lo, hi); hi 0: no limit */
	uint64_t hi;
	size_t align;			/* power of two; 0: page */
	int place;			/* enum ncb_place */
	/*
	 * 1.2: also within reach of [near_lo, near_hi) for this kind of
	 * instruction, both ways (0: no such limit)
	 */
	uint64_t near_lo;
	uint64_t near_hi;
	int reach;			/* enum ncb_reach_kind */
	int machine;			/* its e_machine; 0: this one's */
};

struct ncb_resv;

NCB_API int ncb_resv_new(struct ncb_resv **resv, void *addr, size_t len,
			 const struct ncb_resv_opts *opts);
NCB_API void *ncb_resv_addr(const struct ncb_resv *resv);
NCB_API size_t ncb_resv_len(const struct ncb_resv *resv);
NCB_API int ncb_resv_commit(struct ncb_resv *resv, void *addr, size_t len,
			    int prot, int flags, int fd, off_t offset);
NCB_API int ncb_resv_decommit(struct ncb_resv *resv, void *addr, size_t len);
NCB_API int ncb_resv_release(struct ncb_resv *resv);

/*
 * Address-space model: Linux's mmap rules on an address space held in
 * memory, for emulators, sandboxes and planners; a release's rules (6.1
 * and later), the running kernel's by default.
 */
struct ncb_as_opts {
	size_t size;			/* sizeof(struct ncb_as_opts) */
	uint64_t page_size;		/* 0: this machine's */
	uint64_t mmap_min_addr;		/* 0: this machine's */
	uint64_t mmap_base;		/* top-down search limit; 0: task_size
					   less 128 MiB, as without ASLR */
	uint64_t task_size;		/* 0: this process's */
	uint64_t stack_guard_gap;	/* 0: 256 pages */
	uint32_t max_map_count;		/* 0: 65530 */
	int thp;			/* THP-align 2 MiB anonymous maps:
					   1 yes, -1 no, 0 as the release
					   does for this process */
	uint64_t start_brk;		/* the program break: where the heap */
	uint64_t brk;			/* starts and ends; 0: from a loaded
					   [heap], else none */
	uint32_t release;		/* the kernel release whose rules
					   apply, as ncb_core_kernel_release
					   gives it; 0: the running one's */
};

struct ncb_as;

NCB_API int ncb_as_new(struct ncb_as **as, const struct ncb_as_opts *opts);
NCB_API void ncb_as_free(struct ncb_as *as);
NCB_API int ncb_as_load(struct ncb_as *as, const char *maps, size_t len);
NCB_API int ncb_as_file(struct ncb_as *as, const char *path,
			uint32_t dev_major, uint32_t dev_minor, uint64_t inode,
			uint32_t *file);
NCB_API int ncb_as_mmap(struct ncb_as *as, uint64_t addr, uint64_t len,
			int prot, int flags, uint32_t file, uint64_t offset,
			uint64_t *mapped);
NCB_API int ncb_as_munmap(struct ncb_as *as, uint64_t addr, uint64_t len);
NCB_API int ncb_as_mremap(struct ncb_as *as, uint64_t addr, uint64_t old_len,
			  uint64_t new_len, int flags, uint64_t new_addr,
			  uint64_t *mapped);
NCB_API int ncb_as_brk(struct ncb_as *as, uint64_t brk, uint64_t *result);
NCB_API int ncb_as_mprotect(struct ncb_as *as, uint64_t addr, uint64_t len,
			    int prot);
NCB_API int ncb_as_find(const struct ncb_as *as, uint64_t addr,
			struct ncb_mapping *m);
NCB_API int ncb_as_find_free(const struct ncb_as *as, uint64_t lo,
			     uint64_t hi, uint64_t len, uint64_t align,
			     int place, uint64_t *addr);
NCB_API size_t ncb_as_count(const struct ncb_as *as);
NCB_API size_t ncb_as_dump(const struct ncb_as *as, char *buf, size_t size);

/*
 * ELF loading with every placement no-clobber: the image's whole span is
 * reserved first, its segments are mapped inside the reservation.  The
 * "why" buffers (optional) receive a sentence saying what went wrong.
 */
struct ncb_elf;

struct ncb_elf_info {
	size_t size;			/* sizeof(struct ncb_elf_info) */
	int type;			/* ET_EXEC or ET_DYN */
	int machine;			/* e_machine */
	uint64_t entry;			/* e_entry, at link addresses */
	uint64_t lo;			/* page-aligned span, at link */
	uint64_t hi;			/* addresses */
	uint64_t align;			/* largest PT_LOAD p_align (>= page) */
	unsigned int nsegs;		/* PT_LOAD segments */
	unsigned int phnum;
	uint64_t phdr;			/* program headers' link address;
					   0: not in any segment */
	const char *interp;		/* PT_INTERP, NULL if none */
	int exec_stack;			/* PT_GNU_STACK asks for PF_X */
};

/*
 * The machine an image is for and the rules it was checked by: this
 * machine's for a native image, its own machine's otherwise (see
 * ncb_elf_open_flags); size is set by the caller (sizeof).
 */
struct ncb_elf_arch {
	size_t size;
	int elf_class;			/* ELFCLASS32 or ELFCLASS64 */
	int data;			/* ELFDATA2LSB or ELFDATA2MSB */
	int machine;			/* e_machine */
	int native;			/* 1: ncb_elf_load can load it here */
	const char *name;		/* "x86-64", "aarch64", ...; NULL: a
					   machine unknown to the checks */
	uint64_t page_size;		/* the page size it was checked with */
	uint64_t min_page;		/* the page sizes of the kernels */
	uint64_t max_page;		/* that run that machine */
	uint64_t page_fit;		/* the largest of them it loads with */
};

/* What a file is, before any check (ncb_elf_kind). */
enum ncb_elf_kind {
	NCB_ELF_NOT_ELF = 0,		/* no ELF magic */
	NCB_ELF_PROGRAM = 1,		/* ET_EXEC or ET_DYN: a program or a
					   library, or too damaged to tell */
	NCB_ELF_OBJECT = 2,		/* ET_REL: a relocatable object */
	NCB_ELF_CORE = 3,		/* ET_CORE: a core dump */
	NCB_ELF_DEBUG = 4,		/* a separate debug file: a program's
					   headers without its bytes */
	NCB_ELF_OTHER = 5,		/* ET_NONE, an OS's or a processor's
					   type, or for no machine
					   (EM_NONE) */
};

/* Flags of ncb_elf_open_flags and ncb_elf_parse_flags. */
#define NCB_ELF_ANY_ARCH 0x1		/* any class, byte order and machine,
					   each checked by its own rules */

struct ncb_elf_seg {
	size_t size;			/* sizeof(struct ncb_elf_seg) */
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t filesz;
	uint64_t offset;
	uint64_t align;
	int prot;			/* PROT_* from p_flags */
};

/* A loaded image: where it went. */
struct ncb_elf_image {
	size_t size;			/* sizeof(struct ncb_elf_image) */
	uint64_t bias;			/* load address minus link address */
	uint64_t start;			/* the reserved span */
	uint64_t end;
	uint64_t entry;			/* e_entry plus bias */
	uint64_t phdr;			/* AT_PHDR; 0 if not loaded */
	uint64_t brk;			/* page-aligned end of the data */
	struct ncb_resv *resv;		/* holds the span */
};

NCB_API int ncb_elf_open(struct ncb_elf **elf, const char *path, char *why,
			 size_t why_len);
NCB_API int ncb_elf_parse(struct ncb_elf **elf, const void *image,
			  size_t len, char *why, size_t why_len);
NCB_API int ncb_elf_open_flags(struct ncb_elf **elf, const char *path,
			       int flags, char *why, size_t why_len);
NCB_API int ncb_elf_parse_flags(struct ncb_elf **elf, const void *image,
				size_t len, int flags, char *why,
				size_t why_len);
NCB_API int ncb_elf_kind(const char *path);
NCB_API int ncb_elf_kind_image(const void *image, size_t len);
NCB_API void ncb_elf_close(struct ncb_elf *elf);
NCB_API int ncb_elf_info(const struct ncb_elf *elf,
			 struct ncb_elf_info *info);
NCB_API int ncb_elf_arch(const struct ncb_elf *elf,
			 struct ncb_elf_arch *arch);
NCB_API int ncb_elf_segment(const struct ncb_elf *elf, unsigned int i,
			    struct ncb_elf_seg *seg);
NCB_API const char *ncb_elf_notes(const struct ncb_elf *elf);
/* How ncb_elf_load places an image. */
struct ncb_elf_load_opts {
	size_t size;			/* sizeof(struct ncb_elf_load_opts) */
	uint64_t base;			/* ET_DYN: where its span starts;
					   0: anywhere, at its alignment */
};

NCB_API int ncb_elf_load(struct ncb_elf *elf,
			 const struct ncb_elf_load_opts *opts,
			 struct ncb_elf_image *img, char *why, size_t why_len);
NCB_API int ncb_elf_unload(struct ncb_elf_image *img);

struct ncb_exec_opts {
	size_t size;			/* sizeof(struct ncb_exec_opts) */
	uint64_t base;			/* ET_DYN program's base; 0: anywhere */
	size_t stack_size;		/* the stack limit; 0: RLIMIT_STACK */
	const char *execfn;		/* AT_EXECFN; NULL: path */
	unsigned int flags;		/* NCB_EXEC_* */
	int exe;			/* enum ncb_exec_exe */
};

/*
 * Run a set-user-ID, set-group-ID or file-capability program without the
 * privilege execve would give it, as the kernel does under no_new_privs;
 * without the flag ncb_exec refuses it (EPERM).
 */
#define NCB_EXEC_UNPRIVILEGED	0x1

/* 1 if the dynamic section names $ORIGIN (paths, needed names, audit). */
NCB_API int ncb_elf_uses_origin(const struct ncb_elf *elf);

/*
 * What /proc/PID/exe names after ncb_exec, and so how a program whose
 * paths use $ORIGIN finds its own directory (the dynamic linker takes it
 * from /proc/self/exe, which names the caller unless the link is set):
 * ncb_exec_opts.exe.
 */
enum ncb_exec_exe {
	NCB_EXE_AUTO = 0,	/* set the exe link where permitted; else
				   run its interpreter as the program where
				   the program uses $ORIGIN */
	NCB_EXE_INTERP,		/* always run the interpreter as the
				   program, when there is one */
	NCB_EXE_OFF,		/* neither: /proc/PID/exe names the caller */
	NCB_EXE_SET,		/* set the exe link or fail (EPERM) */
};

/* What ncb_exec can give a program here of the identity execve gives. */
struct ncb_exec_identity {
	size_t size;		/* sizeof(struct ncb_exec_identity) */
	/*
	 * 0: PR_SET_MM_MAP sets the program's argument and environment
	 * areas, auxiliary vector, bounds and break; else why not (-errno:
	 * -EINVAL without CONFIG_CHECKPOINT_RESTORE or under qemu-user).
	 */
	int mm_map;
	int comm;		/* 0: PR_SET_NAME names it; else -errno */
	/*
	 * 0: the same call can point /proc/PID/exe at the program (the
	 * caller has CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE in its user
	 * namespace); else -errno: -EPERM without either.
	 */
	int exe;
};

NCB_API int ncb_exec_identity(struct ncb_exec_identity *id);

/* Where ncb_exec puts a program when ncb_exec_opts.base is 0. */
struct ncb_exec_layout {
	size_t size;		/* sizeof(struct ncb_exec_layout) */
	uint64_t base;		/* its span, as execve would place it
				   (randomized); 0: where mmap puts it,
				   or ET_EXEC's own address */
	uint64_t brk;		/* its break, placed there; 0: at the end
				   of the image, wherever that lands */
};

NCB_API int ncb_exec_layout(const struct ncb_elf *elf,
			    struct ncb_exec_layout *layout);
NCB_API int ncb_exec(const char *path, char *const argv[],
		     char *const envp[], const struct ncb_exec_opts *opts,
		     char *why, size_t why_len);

#ifdef __cplusplus
}
#endif
#endif /* NOCLOBBER_H */

/* SPDX-License-Identifier: MIT */
/*
 * The conformance suite's room: mmap's fixed-placement rules as cases,
 * each with the kernel's rule as its oracle and the kernel source it comes
 * from, and the one runner that `noclobber conform` and the standalone
 * `noclobber-conform` share.  Nothing here uses libnoclobber: the suite
 * judges an environment (a kernel, an emulator, a sandbox), not the
 * library, and the standalone program is copied into places the library
 * is not.  It compiles the freestanding core (include/noclobber_core.h)
 * in for the kernel's release alone.
 *
 *   conform.h    the cases' shape, the answers, the kit, the runner
 *   kit.c        what the cases share: free windows, occupants, answers
 *   oracle.h     do_mmap's answers as a table (tests/t-errno.c's too)
 *   place.c      placement, overlap of every kind, adjacency, the hint
 *   errors.c     mmap's errors in the kernel's order
 *   move.c       mremap, shmat, MAP_FIXED's replacement
 *   race.c       threads racing, fork and signals in the middle of calls
 *   run.c        options, one process per case, the table, JSON, TAP
 *   main.c       noclobber-conform's entry
 */
#ifndef NCB_CONFORM_H
#define NCB_CONFORM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/*
 * A release as the core reads it (ncb_core_kernel_release): major << 16 |
 * minor << 8 | patch.
 */
#define KV(a, b) ((unsigned long)(a) << 16 | (unsigned long)(b) << 8)

/*
 * What a call did, as a case sees it: the answers its rule allows or
 * forbids, named so that a failure reads "expected EEXIST, got mapped at
 * the address over the occupant".
 */
enum akind {
	A_AT,		/* mapped (moved, attached) exactly where asked */
	A_ERR,		/* failed with err, nothing changed */
	A_ELSEWHERE,	/* mapped, but at another address */
	A_REPLACED,	/* what was there is gone or changed */
	A_HOLDS,	/* the case's invariant held (many calls) */
	A_BROKEN,	/* the invariant did not hold (detail says how) */
	A_ANY,		/* in a version's entry: whatever the answer */
};

struct answer {
	enum akind k;
	int err;
	char detail[120];
};

/*
 * A release's own choice: in [from, to) the kernel answers so (k, err),
 * and that is reported as the version's behaviour with why, not as a
 * failure; the case's own answer passes there too (a stable update that
 * carries the later rule).
 */
struct version {
	unsigned long from, to;
	enum akind k;
	int err;
	const char *why;
};

#define MAX_VERSIONS 3

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RW (PROT_READ | PROT_WRITE)
#define PLACE_ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define NOREPLACE (PLACE_ANON | MAP_FIXED_NOREPLACE)

/* Before 4.17 the flag is a hint: a case's answer is then k. */
#define BEFORE_417(k) { 0, KV(4, 17), k, 0, "before Linux 4.17 the " \
	"flag is unknown and the address a hint (a4ff8e8620d3 added it)" }

/* The groups, in the order the table prints them. */
enum group {
	G_PLACE, G_OVERLAP, G_ADJACENT, G_HINT, G_ERRNO, G_MREMAP, G_SHM,
	G_FIXED, G_RACE, G_PROCESS, G_COUNT
};

extern const char *const group_name[G_COUNT];

struct cctx;

/*
 * A case: its name (GROUP.WHAT), the rule in one line, where the kernel
 * says so (file, function) and when that changed, what it expects, the
 * versions that answer otherwise, and the check that puts it to the
 * environment, with the case's own numbers (arg) where checks are
 * shared.  The check runs in a process of its own and answers through
 * its context (got), or skips (skip_why).
 */
struct ccase {
	const char *name;
	enum group group;
	const char *rule;
	const char *source;
	enum akind want;
	int want_err;
	struct version v[MAX_VERSIONS];
	void (*check)(struct cctx *c);
	int arg[4];
};

/* A case's numbers, as a macro's one argument. */
#define ARG(...) { __VA_ARGS__ }

/* Each file's cases, ended by one without a name. */
extern const struct ccase place_cases[], error_cases[], move_cases[],
	race_cases[];

/*
 * What a check gets (its case, the page size, where its answer goes) and
 * gives (got or skip).
 */
struct cctx {
	const struct ccase *cc;
	unsigned long pg;
	int out;
	struct answer got;
	char skip_why[120];
};

/* ---- The kit (kit.c) ---- */

/* A kernel's answer: an address, or -errno. */
long sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off);
long sys_mremap(void *old, size_t old_len, size_t new_len, int flags,
		void *new_addr);

/*
 * A free range of len bytes with a free page either side: found by
 * mapping it (and room above) where the kernel chooses and giving it
 * back.  Threads a case needs are made before: a new thread's stack
 * would take the range.  Where there is no such room (an address space
 * limit), the case ends there, skipped: the rules were not put to the
 * environment.
 */
char *free_window(struct cctx *c, size_t len);
/*
 * An occupant: [a, a + len) mapped (MAP_FIXED into free space), its
 * bytes mark where it is readable; prot PROT_NONE makes a reservation.
 */
struct occ {
	char *a;
	size_t len;
	int prot;
	unsigned char mark;
	int seen;	/* whether the environment shows it mapped at all */
};
int occ_make(struct cctx *c, struct occ *o, char *a, size_t len, int prot,
	     int flags);
/* Whether every page of the occupant is still mapped and its bytes kept. */
int occ_intact(const struct occ *o);
/* Whether anything is mapped in [a, a + len): 1, 0. */
int mapped_any(const char *a, size_t len);
/* Whether every page of [a, a + len) is mapped. */
int mapped_all(const char *a, size_t len);

/*
 * A placement's answer: ret (an address or -errno) for a call asking for
 * [want, want + len) with occ (or NULL) in the way; what the call mapped
 * is unmapped again.
 */
void judge_place(struct cctx *c, long ret, char *want, size_t len,
		 const struct occ *occ);
void got_err(struct cctx *c, int err);
void got(struct cctx *c, enum akind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void skip(struct cctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The case's answer (got or skip) handed to the runner; its process ends. */
void case_end(struct cctx *c) __attribute__((noreturn));
/* An answer in words: "EEXIST", "mapped at the address". */
const char *answer_text(enum akind k, int err, char *buf, size_t len);
const char *err_name(int err);

/* The kernel's release (KV), 0 if unknown; vm.mmap_min_addr. */
unsigned long kernel_release(void);
unsigned long mmap_min(void);

/* The first line of /proc/self/maps naming path ("[stack]"): its range. */
int maps_find(const char *path, uintptr_t *start, uintptr_t *end);

/* ---- The runner (run.c) ---- */

/*
 * `noclobber conform` and noclobber-conform: options, then every case
 * asked for; 0 conformant, 1 not, 2 an error (prog names the program in
 * messages).
 */
int conform_main(int argc, char **argv, const char *prog);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The preload watcher (libnoclobber-preload.so): the program's own calls
 * to mmap, mremap, shmat and munmap (and syscall(2) naming them) taken in
 * the process, judged by the rules every watcher shares, acted on and
 * reported.  Everything here runs inside a call that may be made from a
 * signal handler, or from malloc holding its arena's lock: no allocation,
 * no stdio, no lock but its own, system calls made directly.
 *
 *   preload.c       the calls taken, the modes, the verdict acted on
 *   preload-sys.c   system calls, the core's exact placement, the clock
 *   preload-space.c what the process maps: makers recorded, victims read
 *   preload-out.c   the reports, as the other watchers word them
 *   preload-exec.c  the programs it runs: what will not be seen, said
 */
#ifndef NCB_WATCH_PRELOAD_H
#define NCB_WATCH_PRELOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "calls.h"
#include "rules.h"

/*
 * What every process touches as it starts and ends, kept in the data the
 * loader has already written (the relocated pointers, the zeroed rest of
 * the last page read from the file), not spread over the zero-filled
 * pages after it, each of which would be one more page fault: a short
 * program's start-up is made of few.  Small things only.
 */
#define PL_HOT __attribute__((section(".data.pl_hot")))

/* ---- preload-sys.c ---- */

/*
 * The calls this library takes, made to the kernel directly (the C
 * library's would come back here); the result, or -errno.  The C
 * library's async-signal-safe calls (open, read, write, fstat...) are
 * used as they are.
 */
long pl_sys(long n, long a, long b, long c, long d, long e, long f);
long pl_mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd,
	     int64_t off);
long pl_mremap(uint64_t old, uint64_t old_len, uint64_t new_len, int flags,
	       uint64_t new_addr);
long pl_munmap(uint64_t addr, uint64_t len);
long pl_shmat(int id, uint64_t addr, int flags);
/* The core's: placed exactly at addr, or -EEXIST; never a replacement. */
long pl_mmap_exact(uint64_t addr, uint64_t len, int prot, int flags, int fd,
		   int64_t off);
long pl_mremap_exact(uint64_t old, uint64_t old_len, uint64_t new_len,
		     int flags, uint64_t new_addr);
uint64_t pl_page(void);
/*
 * What an mmap's length is rounded to (a huge page for MAP_HUGETLB or a
 * hugetlbfs file; 0 if that is not known), and the page size of the
 * mapping at addr (a moved huge page mapping's).
 */
uint64_t pl_granule(int flags, int fd);
uint64_t pl_page_at(uint64_t addr);
/* Whether a mapping holds addr. */
int pl_mapped(uint64_t addr);
/* All of buf written (short writes and EINTR retried), or given up. */
void pl_write_all(int fd, const char *buf, size_t len);
/* getpid, open for appending, the name (comm): the kernel's, directly. */
pid_t pl_getpid(void);
int pl_open_append(const char *path);
int pl_name(char name[16]);
/* CLOCK_MONOTONIC in seconds, by the C library (the vDSO), directly. */
double pl_now(void);
double pl_now_direct(void);

/* ---- preload-space.c ---- */

/* What one judgment reads: the victims, their paths, the process. */
#define PL_VICTIMS 32
#define PL_PATH 256

/* A mapping as the maps say it (the lock held while one is read). */
struct pl_map {
	uint64_t start, end, offset, ino;
	unsigned int major, minor;
	int prot, shared;
	char path[PL_PATH];
};

int pl_query(uint64_t addr, int next, struct pl_map *m);

struct pl_victims {
	struct ncb__wvictim v[PL_VICTIMS];
	char path[PL_VICTIMS][PL_PATH];
	size_t n;
	int truncated;			/* more mappings than room */
};

/* Where a piece of code is: its module and the offset in its file. */
struct pl_site {
	struct ncb__wmod mod;
	uint64_t offset;
	char path[PL_PATH];		/* "" for code in no file */
	char symbol[128];		/* "" if the symbol tables say none */
	uint64_t sym_off;
};

/* The space's lock: taken by every record and judgment, not waited for
   by the thread that holds it (a signal handler's call). 0, or -1. */
int pl_lock(void);
/* The same, given up after give_up seconds (pl_lock: one). */
int pl_lock_within(double give_up);
void pl_unlock(void);
/* The module the code at addr is in (read again once if not known). */
void pl_site_of(uint64_t addr, struct pl_site *s);
/* A module's path, from its code's mappings; "" if none is mapped. */
void pl_module_path(struct ncb__wmod mod, char path[PL_PATH]);
/* The symbol holding the site's offset, from its file's symbol table. */
void pl_symbol(struct pl_site *s);
/*
 * A region made by the code at by, mapping file: recorded (by the lock's
 * holder).
 */
void pl_record(uint64_t start, uint64_t end, uint64_t by,
	       struct ncb__wmod file, unsigned int call);
/* What the mapping at holds maps (shared memory has its inode too). */
struct ncb__wmod pl_file_at(uint64_t at);
/* Whether the main thread has exited (/proc/self is a zombie's then). */
int pl_main_thread_gone(void);
/* Whether a mapping holds addr, by the calling thread's maps: or -1. */
int pl_mapped_text(uint64_t addr);
/* [start, end) unmapped: no record of it stays. */
void pl_forget(uint64_t start, uint64_t end);
/* The mappings meeting [start, end), as the rules want them: 0, or -1. */
int pl_victims(uint64_t start, uint64_t end, struct pl_victims *vs);
/*
 * Whether [start, end) meets the heap, [start_brk, brk), where the
 * kernel names [heap] more than the heap: before Linux 6.6, a mapping
 * that starts at the break or ends at the heap's start too.  The break
 * is the kernel's (brk(0) moves nothing); where the heap's start is not
 * known, everything below the break is taken for heap.
 */
int pl_meets_heap(uint64_t start, uint64_t end);
/* The process as the rules see it: its threads, the caller's last. */
void pl_proc(struct ncb__wproc *p, const struct ncb__wthread *self);
/*
 * A thread pthread_create made: its stack [base, top), told by its
 * creator; its ID once it runs (sp in that stack); its end.
 */
void pl_thread_made(uint64_t base, uint64_t top);
void pl_thread_runs(pid_t tid, uint64_t sp);
void pl_thread_end(pid_t tid);
/* The file an fd names, as a module (0, 0 for none). */
struct ncb__wmod pl_file(int fd);
const struct ncb__wregion *pl_region(size_t i);
/* The watch begun, the interpreter's base told (AT_BASE; 0: none). */
void pl_space_init(void);
/* Seconds since the watch began in this process. */
double pl_since(void);
/* Code may have gone without a call of ours (dlclose): known afresh. */
void pl_code_changed(void);
/* After fork: the child's lock free, whatever the parent's threads did. */
void pl_space_child(void);

/* ---- preload-out.c ---- */

/* One judged call, as reported. */
struct pl_event {
	enum wcall call;
	const char *name;
	uint64_t args[6];
	uint64_t start, end;
	pid_t pid, tid;
	enum ncb__wclass cls;
	int unjudged;
	struct pl_victims *vs;
	size_t culprit;
	struct pl_site caller;
	enum waction action;
	long result;			/* -errno, or the address */
	int have_result;
	double when;
};

struct pl_counts {
	unsigned long fixed, by_class[NCB__WC_SPANS + 1], invalid, unjudged;
};

void pl_out_init(int fd, int json, const char *program);
void pl_report(const struct pl_event *e);
void pl_summary(pid_t pid, const struct pl_counts *c);
/* A warning, once, on the report stream: what the watcher cannot see. */
void pl_warn(const char *what);
/* The same of another program (one this process runs), as the tool's. */
void pl_warn_for(const char *prog, const char *what);

/* ---- preload.c ---- */

/* Set up from the environment, once, by whichever call comes first. */
void pl_ensure(void);
/* An exec about to replace the image: its counts said (the lock held). */
void pl_image_ends(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The ptrace watcher's own parts, private to it: a seccomp filter that
 * stops a process tree only at fixed placements (trace-filter.c), the
 * tables of its processes and threads (trace-procs.c), what is done at
 * each stopped call (trace-call.c), and the loop over the tree's stops
 * (trace-loop.c).  Registers are arch.h's.
 */
#ifndef NCB_WATCH_TRACE_H
#define NCB_WATCH_TRACE_H

#include <seccomp.h>
#include <stdint.h>
#include <time.h>
#include "calls.h"
#include "watch.h"

/* PTRACE_GET_SYSCALL_INFO's answer (Linux 5.3), as the kernel lays it out. */
struct syscall_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	union {
		struct {
			uint64_t nr, args[6];
			uint32_t ret_data;
		} seccomp;
		struct {
			int64_t rval;
			uint8_t is_error;
		} exit;
	};
};

/* Its op: what the stop is. */
enum { INFO_ENTRY = 1, INFO_EXIT, INFO_SECCOMP };

/*
 * Regions a process's records may hold: past that, records of memory
 * since unmapped are dropped (TRACE_PRUNE placements apart at most), and
 * if none is, a new placement's range is in none (its maker unknown, its
 * replacement unjudged); the watcher's memory stays bounded (64 bytes
 * each).
 */
#define TRACE_REGIONS 65536
#define TRACE_PRUNE (TRACE_REGIONS / 16)

/*
 * An address space's records, who made what: every placement's.  Shared
 * by the processes in it (clone with CLONE_VM but not CLONE_THREAD: a
 * vfork child until it execs, processes sharing memory on purpose), so
 * that what one maps over or prunes is so for the others' judgements.
 */
struct space {
	struct ncb__wregions regions;
	size_t prune_wait;		/* placements before regions pruned */
	int users;			/* processes in it */
};

struct proc {
	pid_t tgid;
	char program[64];
	struct ncb__wproc w;
	struct ncb__wthread *threads;
	size_t nthreads, cthreads;
	struct space *space;		/* never NULL */
	pid_t from;			/* the process whose memory it was
					   made with (fork), 0, or -1 once it
					   ran a program of its own */
	double born;			/* when first seen, into the watch */
	uint64_t brk;			/* the break, as brk last said; 0 */
	struct watch_summary sum;
	int tasks;
	int before_exec;		/* still the watcher's child */
	struct ncb_maps *maps;		/* kept open: its address space's */
	struct task *holder;		/* holding the others still */
	int hold_waiting;		/* others not yet stopped for it */
	unsigned long used;		/* when maps was last used */
};

struct task {
	pid_t tid;
	struct proc *proc;
	struct watch_event *pending;	/* finished at the call's exit */
	struct ncb__wmod maker;		/* its caller, past a leaf wrapper */
	uint64_t maker_off;
	int started;			/* its first stop seen */
	long refused;			/* -errno to set at the call's exit */
	int set_mm;			/* in prctl(PR_SET_MM): see its exit */
	int brk;			/* in brk: see its exit */
	int holding, hold_seccomp;	/* its call holds the process */
	int hold_asked, held;		/* interrupted for a holder; stopped */
	int held_status;		/* the stop kept meanwhile */
	int awaits;			/* a new process's first stop, kept
					   until its maker's event */
	int await_status;
};

struct tracer {
	const struct watch_opts *o;
	struct task **tasks;
	size_t ntasks, ctasks;
	struct proc **procs;
	size_t nprocs, cprocs;
	size_t awaiting;		/* tasks kept at a first stop */
	struct timespec t0;
	long page;
	uint64_t huge;			/* the default huge page size */
	int attached;			/* no filter: every call stops */
	long opts;			/* a thread's options; 0 attached */
};

/* trace-filter.c */
enum wcall trace_call_of(const struct syscall_info *si, int *compat);
int trace_wanted(const struct syscall_info *si);
int trace_set_mm(const struct syscall_info *si);
enum wescape trace_escape(const struct syscall_info *si);
int trace_brk(const struct syscall_info *si);
scmp_filter_ctx trace_filter_build(void);
int trace_filter_load(scmp_filter_ctx f);

/* trace-procs.c */
void trace_resume(const struct tracer *t, pid_t tid, int sig);
void trace_exec_in_place(struct tracer *t, struct task *k);
double trace_since(const struct tracer *t);
int trace_new_space(struct proc *p);
void trace_adopt(struct proc *child, struct proc *parent, int share);
void trace_free_event(struct watch_event *e);
int trace_room(void *p, size_t *cap, size_t n, size_t size);
struct task *trace_find_task(struct tracer *t, pid_t tid, size_t *at);
struct proc *trace_find_proc(struct tracer *t, pid_t tgid);
struct ncb_maps *trace_proc_maps(struct tracer *t, struct proc *p,
				 pid_t tid);
void trace_forget_maps(struct proc *p);
void trace_read_status(pid_t pid, char *buf, size_t len);
int trace_zombie(pid_t tid);
uint64_t trace_start_brk(pid_t tid);
const char *trace_status_value(const char *status, const char *key);
pid_t trace_status_field(pid_t pid, const char *key);
struct ncb__wmod trace_file_mod(const char *path);
void trace_identify(struct proc *p);
struct proc *trace_add_proc(struct tracer *t, pid_t tgid);
void trace_drop_thread(struct proc *p, pid_t tid);
void trace_add_thread(struct proc *p, pid_t tid, uint64_t sp, uint64_t top);
struct task *trace_add_task(struct tracer *t, pid_t tid, struct proc *p);
struct task *trace_new_task(struct tracer *t, pid_t tid);
void trace_end_task(struct tracer *t, pid_t tid);

/* trace-hold.c */
int trace_hold_wanted(const struct tracer *t, const struct task *k);
void trace_hold(struct tracer *t, struct task *k, int seccomp);
int trace_hold_take(struct tracer *t, struct task *k, int status);
void trace_hold_gone(struct tracer *t, struct task *k);
void trace_hold_release(struct tracer *t, struct task *k);

/* trace-loop.c */
void trace_on_stop(struct tracer *t, pid_t tid, int status);

/* trace-call.c */
void trace_syscall_stop(struct tracer *t, struct task *k, int seccomp);
void trace_syscall_exit_fix(struct tracer *t, struct task *k,
			    const struct syscall_info *si);
void trace_files_free(void);

#endif

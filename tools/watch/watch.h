/* SPDX-License-Identifier: MIT */
/*
 * The watchers, as the CLI (cmd-watch.c) sees them: run a program under
 * the ptrace engine (trace*.c), attach it to a process, or watch the
 * whole machine from the kernel (system.c, system.bpf.c); each calls back
 * with every clobber (a watch_event) and each process's summary.  Who
 * made a call is caller.c's; what is a clobber is the rules' (rules.h);
 * the calls' vocabulary is calls.h's.  docs/architecture.md draws it.
 */
#ifndef NCB_WATCH_WATCH_H
#define NCB_WATCH_WATCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "calls.h"
#include "rules.h"

enum watch_mode { WATCH_REPORT, WATCH_DENY, WATCH_UPGRADE };

/* A module and where in it: for the caller of a call. */
struct watch_site {
	struct ncb__wmod mod;
	char module[256];		/* its path, or "" */
	uint64_t offset;		/* in the module's file */
	uint64_t addr;			/* in the process; 0: not known */
	char symbol[128];		/* "" if the symbol tables do not say */
	uint64_t sym_off;
};

/* Who made a victim the watcher saw made: the call, where, when. */
struct watch_made {
	struct watch_site site;		/* the maker's code */
	const char *call;		/* "mmap", "mremap", "shmat" */
	double when;			/* seconds into the watch */
};

/* One fixed placement as the tracee asked it. */
struct watch_event {
	pid_t pid, tid;
	const char *program;
	enum wcall call;
	const char *name;		/* wcall_name's: "mmap2", "ipc"... */
	int compat;			/* a 32-bit caller on a 64-bit kernel */
	uint64_t args[6];		/* as the call takes them */
	uint64_t start, end;		/* the target range */
	uint64_t pc, sp;		/* the caller's, at the call */
	struct watch_site caller;
	enum ncb__wclass cls;
	struct ncb__wvictim *victims;
	char **creators;		/* per victim: who made it */
	struct watch_made **made;	/* per victim: NULL, or its maker */
	size_t nvictims, culprit;
	enum waction action;
	int unjudged;			/* what it would replace, or who made
					   it, is not known */
	int plain;			/* a plain placement: recorded only */
	enum wescape escape;		/* a way around the watcher, not a
					   placement: no victims */
	int ipc_version;		/* i386 ipc(2)'s, for shmat */
	int shm_bad;			/* shmat of a segment not there */
	long result;			/* the call's result if known, -errno */
	int have_result;
	int gone;			/* --system: the process had exited
					   when the event was read */
	/*
	 * With want_maps, for a reported placement: /proc/PID/maps as
	 * read before the call (ptrace) or, maps_after, when the event
	 * was read (--system: the range then holds what the call made).
	 * NULL if it could not be read.
	 */
	char *maps;
	size_t maps_len;
	int maps_after;
	double when;			/* seconds since the watch began */
};

/* Per process, at its end. */
struct watch_summary {
	pid_t pid;
	const char *program;
	unsigned long fixed;			/* placements seen */
	unsigned long by_class[NCB__WC_SPANS + 1];
	unsigned long invalid;		/* clobbers the kernel refused */
	unsigned long unjudged;		/* calls that could not be judged */
	unsigned long escapes;		/* ways around the watcher tried */
	unsigned long lost;		/* --system: events not received */
};

struct watch_opts {
	enum watch_mode mode;
	void (*report)(const struct watch_event *e, void *arg);
	void (*summary)(const struct watch_summary *s, void *arg);
	/*
	 * --system: watching from now on, refusing in the kernel the calls
	 * of the families (1 << WC_MMAP...) in refused; n events lost
	 * (total so far).
	 */
	void (*started)(unsigned int refused, void *arg);
	void (*lost)(unsigned long n, unsigned long total, void *arg);
	void *arg;
	int want_maps;		/* a reported event carries the maps */
};

/* --system's scope: every process if all are empty, else their union. */
struct watch_sys_opts {
	const pid_t *pids;
	size_t npids;
	const uid_t *uids;
	size_t nuids;
	const char *const *comms;
	size_t ncomms;
	const char *const *cgroups;	/* cgroup v2 directories */
	size_t ncgroups;
	size_t buffer;			/* the ring buffer's bytes; 0: 4 MiB */
};

/*
 * Runs argv under the watcher until every process it makes has ended:
 * the program's wait status (as waitpid gives it), or -errno with why
 * (a sentence), *exec_failed set if it was the program's execve.
 */
int watch_run(char *const argv[], const struct watch_opts *o,
	      int *exec_failed, char *why, size_t whylen);
/*
 * Watches process pid, all its threads and what it makes, until it ends
 * (its wait status) or SIGINT, SIGTERM or SIGHUP (0, every task detached
 * and left running); -errno with why if it could not be attached.  No
 * filter can be put in a running process: every system call stops.
 */
int watch_attach(pid_t pid, const struct watch_opts *o, char *why,
		 size_t whylen);

/* --preload's: the library's words, and what cannot be seen, said. */
struct watch_preload_opts {
	const char *lib;		/* libnoclobber-preload.so's path */
	const char *prog;		/* the program's, as execvp finds it */
	const char *mode;		/* NCB_PRELOAD's words */
	int json;
	const char *file;		/* the reports' file; NULL: stderr */
	void (*warn)(const char *prog, const char *what, void *arg);
	void *arg;
};

/*
 * Runs the program (argv as it sees it) with the preload watcher, what
 * it cannot see in it said first.  Returns only if it could not be run:
 * -errno with why, *exec_failed set if it was the program's exec.
 */
int watch_preload(char *const argv[], const struct watch_preload_opts *o,
		  int *exec_failed, char *why, size_t whylen);
/*
 * Watches every process on the machine, or those in the scope, until
 * SIGINT, SIGTERM or SIGHUP: 0, or -errno with why (a sentence) if the
 * machine does not allow it.  Reports clobbers as they happen; summaries
 * at the end.
 */
int watch_system(const struct watch_sys_opts *so, const struct watch_opts *o,
		 char *why, size_t whylen);

/*
 * The module that made the call tid is stopped in at pc (sp its stack
 * pointer): pc's own or, when that is the C library's, its caller's where
 * the return address is plain to see; with walk, the first frame's
 * outside the C library by the unwinder, with its symbol.
 */
int watch_caller(struct ncb_maps *maps, pid_t tgid, pid_t tid, uint64_t pc,
		 uint64_t sp, int compat, struct watch_site *site, int walk);
/*
 * The module whose code asked for the call tid is stopped in: pc's own,
 * or past the C library's system call wrappers (the return address a
 * leaf wrapper leaves, else with walk by the unwinder), which may be the
 * C library itself (its malloc making a block).  A region's maker.
 */
int watch_maker(struct ncb_maps *maps, pid_t tgid, pid_t tid, uint64_t pc,
		uint64_t sp, int compat, struct watch_site *site, int walk);
void watch_caller_forget(pid_t tgid);
/*
 * The symbol at a file offset of an ELF object, from its symbol tables
 * (or its separate debug file): 0 with s's symbol set, or -1.
 */
int watch_symbol(const char *path, uint64_t offset, struct watch_site *s);
/* Who made a victim, in words, for a kind that says it (not REGION). */
void watch_creator(const struct ncb__wvictim *v, char *buf, size_t len);
/* A region's maker, in words. */
void watch_made_text(const struct watch_made *m, char *buf, size_t len);
int watch_is_libc(const char *path);
/*
 * Whether a symbol of the C library's is one of its system call wrappers
 * (mmap, mremap, shmat, syscall, the vDSO's entry), whose caller is the
 * one asking.
 */
int watch_wrapper(const char *sym);

#endif

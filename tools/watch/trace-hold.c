/* SPDX-License-Identifier: MIT */
/*
 * A process held still around a fixed placement: under --deny and
 * --upgrade a call that runs as asked (an mremap or a shmat, which have
 * no no-replace form; an mmap over the caller's own memory) must replace
 * what was judged, and another thread mapping or unmapping between the
 * judgement and the call would change that.  So before the call is
 * judged every other thread of the process is interrupted
 * (PTRACE_INTERRUPT), and the call waits for all of them to stop; each
 * stop is kept, not acted on, until the call is done (its exit stop),
 * then acted on as the loop would have.  A thread interrupted in a
 * blocking system call goes back into it when let go, as after a stop
 * signal.  A placement another thread made meanwhile is recorded before
 * the call is judged (settle).  Other processes sharing the memory
 * (CLONE_VM without CLONE_THREAD) are not held.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "trace.h"

/*
 * Every other thread stopped: the placements they made meanwhile, whose
 * exit stops are kept, recorded now.  Left for the hold's release, their
 * memory would be judged by the records of what was there before it (a
 * region the caller made and unmapped, where another module has just
 * mapped), and a clobber pass as the caller's own.  Acted on again at
 * the release, such a stop finds its call done and is only resumed.
 */
static void settle(struct tracer *t, struct proc *p)
{
	struct syscall_info si;
	size_t i;

	for (i = 0; i < t->ntasks; i++) {
		struct task *o = t->tasks[i];

		if (o->proc != p || !o->held ||
		    WSTOPSIG(o->held_status) != (SIGTRAP | 0x80) ||
		    ptrace(PTRACE_GET_SYSCALL_INFO, o->tid, sizeof(si),
			   &si) < 0 || si.op != INFO_EXIT)
			continue;
		trace_syscall_exit_fix(t, o, &si);
	}
}

/* The holder's call taken up again, the others' placements recorded. */
static void hold_done(struct tracer *t, struct proc *p)
{
	settle(t, p);
	trace_syscall_stop(t, p->holder, p->holder->hold_seccomp);
}

/* Whether k's call must have its process held: see above. */
int trace_hold_wanted(const struct tracer *t, const struct task *k)
{
	return t->o->mode != WATCH_REPORT && k->proc->tasks > 1 &&
	       !k->holding;
}

/*
 * Every other thread of k's process interrupted, k left in its stop
 * (seccomp: a seccomp stop, else a system call entry's) until all have
 * stopped; then its call is taken up again (trace_syscall_stop).
 */
void trace_hold(struct tracer *t, struct task *k, int seccomp)
{
	struct proc *p = k->proc;
	size_t i;

	p->holder = k;
	p->hold_waiting = 0;
	k->holding = 1;
	k->hold_seccomp = seccomp;
	for (i = 0; i < t->ntasks; i++) {
		struct task *o = t->tasks[i];

		if (o->proc != p || o == k || o->held || o->hold_asked)
			continue;
		/*
		 * A leader that exited before its threads stays a zombie
		 * until they end, and reports no stop: nothing to hold.
		 */
		if (trace_zombie(o->tid) ||
		    ptrace(PTRACE_INTERRUPT, o->tid, 0, 0))
			continue;
		o->hold_asked = 1;
		p->hold_waiting++;
	}
	if (!p->hold_waiting)
		hold_done(t, p);
}

/* One fewer to wait for: when none is left, the call goes on. */
static void one_held(struct tracer *t, struct proc *p)
{
	if (p->holder && !--p->hold_waiting)
		hold_done(t, p);
}

/*
 * A stop of the held process's: kept.  One of a thread the hold did not
 * ask (made meanwhile: its first stop) is kept too, without being waited
 * for.
 */
int trace_hold_take(struct tracer *t, struct task *k, int status)
{
	struct proc *p = k->proc;
	int asked = k->hold_asked;

	if (!p->holder || k == p->holder || k->held)
		return 0;
	k->hold_asked = 1;
	k->held = 1;
	k->held_status = status;
	if (asked)
		one_held(t, p);
	return 1;
}

void trace_hold_gone(struct tracer *t, struct task *k)
{
	struct proc *p = k->proc;

	if (p->holder == k) {
		trace_hold_release(t, k);
		return;
	}
	if (p->holder && k->hold_asked && !k->held) {
		k->hold_asked = 0;
		one_held(t, p);
	}
}

/*
 * The holder's call done (or the holder gone): each thread let go, its
 * kept stop acted on now.  The interrupt's own stop is only resumed; one
 * not yet reported (the holder went first) comes later, and is resumed
 * then as any.
 */
void trace_hold_release(struct tracer *t, struct task *k)
{
	struct proc *p = k->proc;
	struct { pid_t tid; int status; } *kept;
	size_t i, n = 0;

	if (p->holder != k)
		return;
	p->holder = NULL;
	k->holding = 0;
	/* Acting on a stop may add or end tasks: the list first. */
	kept = calloc(t->ntasks, sizeof(*kept));
	for (i = 0; i < t->ntasks; i++) {
		struct task *o = t->tasks[i];

		if (o->proc != p || !o->hold_asked)
			continue;
		o->hold_asked = 0;
		if (o->held && kept) {
			kept[n].tid = o->tid;
			kept[n++].status = o->held_status;
		} else if (o->held) {
			/* No memory: let it go on; its stop is lost. */
			trace_resume(t, o->tid, 0);
		}
		o->held = 0;
	}
	for (i = 0; i < n; i++) {
		int st = kept[i].status;

		if (st >> 16 == PTRACE_EVENT_STOP && WSTOPSIG(st) == SIGTRAP)
			trace_resume(t, kept[i].tid, 0);
		else
			trace_on_stop(t, kept[i].tid, st);
	}
	free(kept);
}

/* SPDX-License-Identifier: MIT */
/*
 * noclobber watch's ptrace engine: the loop over a process tree's stops.
 * A program run under it gets the seccomp filter (trace-filter.c), which
 * stops it only at fixed placements (everything else runs at full speed);
 * a process attached to stops at every call.  Each placement is handled
 * in trace-call.c.  Processes and threads are followed through fork,
 * vfork, clone and execve (trace-procs.c); signals, stops and the exit
 * status pass through as without the watcher.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "arch.h"
#include "files.h"
#include "trace.h"

/*
 * The flags of the clone that made a child and the top of the stack it
 * gave it, read while its maker is stopped in the call: before the maker
 * can go on to use the address, which the thread's own first stop may
 * come after.  clone(flags, stack, ...) and clone3(args, size), whose
 * struct clone_args has the flags first and the stack and its size as
 * its sixth and seventh 64-bit fields; fork's flags none, vfork's
 * CLONE_VM | CLONE_VFORK (ev: the event says which).  0, or -1 where
 * the call cannot be read.
 */
static int clone_of(pid_t tid, int ev, uint64_t *flags, uint64_t *top)
{
	uint64_t args[7] = { 0 }, a[6], nr;
	struct iovec local = { args, sizeof(args) }, remote;
	int compat;

	*flags = ev == PTRACE_EVENT_VFORK ? WC_CLONE_VM | WC_CLONE_VFORK : 0;
	*top = 0;
	if (warch_call(tid, &nr, a, &compat))
		return -1;
	/* x32's clone and clone3 are x86_64's (calls.h). */
	if (!compat)
		nr &= ~(uint64_t)WC_X32_BIT;
	if (nr == WC_NR_CLONE3) {
		remote.iov_base = (void *)(uintptr_t)a[0];
		remote.iov_len = sizeof(args);
		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)sizeof(args))
			return -1;
		*flags = args[0];
		*top = args[5] + args[6];
	} else if (nr == wcall_nr_clone(compat)) {
		*flags = a[0];
		*top = a[1];
	}
	return 0;
}

static void release(struct tracer *t, struct task *k);

static void on_new_child(struct tracer *t, struct task *k, int ev)
{
	unsigned long msg = 0;
	struct task *c;
	uint64_t flags, top;

	ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &msg);
	/* It may have reported already; it is found or made now. */
	c = msg ? trace_find_task(t, (pid_t)msg, NULL) : NULL;
	if (msg && !c)
		c = trace_new_task(t, (pid_t)msg);
	if (!c)
		return;
	clone_of(k->tid, ev, &flags, &top);
	/* Just below the top: inside the stack's mapping. */
	if (c->proc == k->proc && (flags & WC_CLONE_THREAD) && top)
		trace_add_thread(k->proc, c->tid, top - 1, top);
	/* A process: its maker's memory, shared or copied. */
	if (c->proc != k->proc)
		trace_adopt(c->proc, k->proc, !!(flags & WC_CLONE_VM));
	if (c->awaits)
		release(t, c);
}

/*
 * After execve: a new address space, and one thread left, under the
 * process's id (the thread that called it took that id).
 */
static void on_exec(struct tracer *t, struct task *k)
{
	unsigned long former = 0;
	struct proc *p = k->proc;
	size_t i;

	ptrace(PTRACE_GETEVENTMSG, k->tid, 0, &former);
	for (i = 0; i < t->ntasks;)
		if (t->tasks[i] != k && t->tasks[i]->proc == p)
			trace_end_task(t, t->tasks[i]->tid);
		else
			i++;
	p->before_exec = 0;
	/*
	 * Its own memory, no longer one it shared (a vfork child's): where
	 * none can be had, the shared records are kept, not emptied.
	 */
	if (p->space->users > 1)
		trace_new_space(p);
	trace_exec_in_place(t, k);
	p->from = -1;
}

/*
 * A new program in the process's address space, by execve or in place
 * (prctl(PR_SET_MM) done): what the former made is gone, and the thread
 * left has the new program's stack.
 */
void trace_exec_in_place(struct tracer *t, struct task *k)
{
	struct proc *p = k->proc;
	struct syscall_info si = { 0 };

	(void)t;
	p->nthreads = 0;
	/* A set still shared (no memory for one of its own): kept. */
	if (p->space->users == 1)
		p->space->regions.n = 0;
	p->brk = 0;
	watch_caller_forget(p->tgid);
	trace_forget_maps(p);
	trace_identify(p);
	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) >= 0)
		trace_add_thread(p, k->tid, si.sp, 0);
}

/*
 * The options a task is traced with: its creator's, but for the exit
 * stop, which only a thread other than the leader needs (its stack stops
 * being one before its exit is reported); a process's leader goes without
 * it and its stop, a process's exit costing one stop fewer.
 */
static long task_opts(const struct tracer *t, const struct task *k)
{
	return k->tid == k->proc->tgid ? t->opts & ~PTRACE_O_TRACEEXIT :
	       t->opts;
}

/*
 * A task's first stop, before it has run: its options, and a thread's
 * stack pointer is its stack.
 */
static void on_first_stop(const struct tracer *t, struct task *k)
{
	struct syscall_info si = { 0 };

	if (t->opts)
		ptrace(PTRACE_SETOPTIONS, k->tid, 0, task_opts(t, k));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, k->tid, sizeof(si), &si) >= 0)
		trace_add_thread(k->proc, k->tid, si.sp, 0);
}

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

void trace_on_stop(struct tracer *t, pid_t tid, int status)
{
	struct task *k = trace_find_task(t, tid, NULL);
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (!k) {
		trace_resume(t, tid, 0);
		return;
	}
	/* Kept while another thread's call holds the process. */
	if (trace_hold_take(t, k, status))
		return;
	if (!k->started) {
		k->started = 1;
		on_first_stop(t, k);
		/* Seen before its maker's event: kept stopped until it. */
		if (k->awaits) {
			k->await_status = status;
			t->awaiting++;
			return;
		}
	}
	if (sig == (SIGTRAP | 0x80)) {
		trace_syscall_stop(t, k, 0);
		return;
	}
	switch (ev) {
	case PTRACE_EVENT_SECCOMP:
		trace_syscall_stop(t, k, 1);
		return;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		on_new_child(t, k, ev);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(t, k);
		break;
	case PTRACE_EVENT_EXIT:
		/*
		 * Its stack is no longer a thread's: a thread joining it
		 * may reuse or free it before the exit is reported (the
		 * kernel clears the thread id that pthread_join waits on
		 * first).
		 */
		trace_drop_thread(k->proc, k->tid);
		break;
	case PTRACE_EVENT_STOP:
		/* A group-stop: stay stopped, as without the watcher. */
		if (is_stop_signal(sig)) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return;
		}
		break;
	case 0:
		/* A signal on its way: delivered as it was sent. */
		trace_resume(t, tid, sig);
		return;
	}
	trace_resume(t, tid, 0);
}

/* A new process kept at its first stop let go, the stop taken up. */
static void release(struct tracer *t, struct task *k)
{
	k->awaits = 0;
	t->awaiting--;
	trace_on_stop(t, k->tid, k->await_status);
}

/*
 * A task seen before its maker's event (the kernel's wait may give a new
 * process's first stop first): a new process waits, stopped, until the
 * event says whose memory it has (on_new_child), so that no call of its
 * is judged by its parent's records meanwhile (under CLONE_PARENT its
 * parent by id is not its maker).  A maker killed before its event
 * reports none: at any task's end the waiting go on, as they are.
 */
static void unseen_task(struct tracer *t, pid_t tid)
{
	struct task *k = trace_new_task(t, tid);

	if (k && k->tid == k->proc->tgid && k->proc->tasks == 1)
		k->awaits = 1;
}

static void release_waiting(struct tracer *t)
{
	size_t i;

	/* Looked for only while there are some: an exit is frequent. */
	for (i = 0; t->awaiting && i < t->ntasks; i++)
		if (t->tasks[i]->awaits && t->tasks[i]->started)
			release(t, t->tasks[i]);
}

static int detach_asked;

/*
 * The next stop or exit of a task.  Attached, SIGINT, SIGTERM and SIGHUP
 * end the watch: they are blocked and waited for with SIGCHLD (a tracee's
 * stop sends its tracer one), each wait first asking without blocking, so
 * that neither a stop nor the signal can be missed in between.  -1 with
 * EINTR once detaching is asked.
 */
static pid_t next_stop(const struct tracer *t, int *status)
{
	sigset_t set;
	pid_t tid;
	int sig;

	if (!t->attached)
		return waitpid(-1, status, __WALL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	for (;;) {
		tid = waitpid(-1, status, __WALL | WNOHANG);
		if (tid || detach_asked) {
			if (!tid)
				errno = EINTR;
			return tid ? tid : -1;
		}
		sig = sigwaitinfo(&set, NULL);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			detach_asked = 1;
	}
}

/*
 * Attached, every task is left as it was: stopped where it is (a call in
 * flight finished first, a refused one returning EEXIST), then detached,
 * a signal on its way delivered.  Children not yet known go too.
 */
static void detach_all(struct tracer *t)
{
	struct syscall_info si = { 0 };
	struct task *k;
	int status, sig;
	size_t i;
	pid_t tid;

	/* Kept at a first stop already: no other stop will come. */
	for (i = 0; i < t->ntasks;)
		if (t->tasks[i]->awaits && t->tasks[i]->started) {
			tid = t->tasks[i]->tid;
			ptrace(PTRACE_DETACH, tid, 0, 0);
			trace_end_task(t, tid);
		} else {
			i++;
		}
	for (i = 0; i < t->ntasks; i++)
		ptrace(PTRACE_INTERRUPT, t->tasks[i]->tid, 0, 0);
	while (t->ntasks) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			trace_end_task(t, tid);
			continue;
		}
		k = trace_find_task(t, tid, NULL);
		sig = status >> 16 ? 0 : WSTOPSIG(status);
		if (k && sig == (SIGTRAP | 0x80)) {
			sig = 0;
			if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si),
				    &si) > 0 && si.op == INFO_EXIT)
				trace_syscall_exit_fix(t, k, &si);
		}
		ptrace(PTRACE_DETACH, tid, 0, sig);
		trace_end_task(t, tid);
	}
}

static volatile sig_atomic_t main_child, passed;

/*
 * To the program while it lives; after, to what it left running (a
 * daemon), from the loop: the handler cannot walk the task table.
 */
static void pass_on(int sig)
{
	if (main_child > 0)
		kill(main_child, sig);
	else
		passed = sig;
}

static void pass_to_all(struct tracer *t)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++)
		kill(t->procs[i]->tgid, passed);
	passed = 0;
}

static int loop(struct tracer *t, pid_t child)
{
	int status, main_status = 0;
	pid_t tid;

	while (t->ntasks) {
		tid = next_stop(t, &status);
		if (tid < 0 && errno == EINTR && detach_asked) {
			detach_all(t);
			break;
		}
		if (tid < 0 && errno == EINTR && passed)
			pass_to_all(t);
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == child) {
				main_status = status;
				/* Its pid may be another's from now on. */
				main_child = 0;
			}
			trace_end_task(t, tid);
			release_waiting(t);
			/* Attached: the process watched is gone; so are we. */
			if (t->attached && !trace_find_proc(t, child)) {
				detach_all(t);
				break;
			}
			continue;
		}
		if (!trace_find_task(t, tid, NULL))
			unseen_task(t, tid);
		trace_on_stop(t, tid, status);
	}
	return main_status;
}

/*
 * The watcher's own signals: the terminal's (SIGINT, SIGQUIT) reach the
 * whole foreground group, the program included, and the watcher waits for
 * it to act on them; SIGTERM and SIGHUP sent to the watcher go on to it.
 * Set after the fork: the program keeps the dispositions it was given.
 */
static void own_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = pass_on;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * The child: builds the filter while the watcher seizes it (the two run
 * side by side), waits to be seized, loads the filter, runs the program.
 * On failure it says which step failed (0 the filter, 1 execve) and why.
 */
static void __attribute__((noreturn)) child(char *const argv[], int go,
					    int err)
{
	scmp_filter_ctx f = trace_filter_build();
	int msg[2] = { 0, 0 };
	char c;

	if (read(go, &c, 1) != 1)
		_exit(127);
	msg[1] = trace_filter_load(f);
	if (!msg[1]) {
		execvp(argv[0], argv);
		msg[0] = 1;
		msg[1] = -errno;
	}
	if (write(err, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		_exit(127);
	_exit(126);
}

int watch_run(char *const argv[], const struct watch_opts *o,
	      int *exec_failed, char *why, size_t whylen)
{
	struct tracer t = { .o = o };
	int go[2], err[2], msg[2], e = 0, status;
	struct proc *p;
	pid_t pid;

	t.opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK |
		 PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		 PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
		 PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT;
	t.page = sysconf(_SC_PAGESIZE);
	t.huge = wfile_huge_default();
	clock_gettime(CLOCK_MONOTONIC, &t.t0);
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		e = -errno;
		goto close_go;
	}
	pid = fork();
	if (pid < 0) {
		e = -errno;
		goto close_err;
	}
	if (!pid)
		child(argv, go[0], err[1]);
	main_child = pid;
	own_signals();
	close(err[1]);
	err[1] = -1;
	/* A leader: without the exit stop (task_opts). */
	if (ptrace(PTRACE_SEIZE, pid, 0, t.opts & ~PTRACE_O_TRACEEXIT)) {
		e = -errno;
		snprintf(why, whylen, "cannot trace the program: %s%s",
			 strerror(-e), e == -EPERM ? " (ptrace is not "
			 "permitted here: Yama's ptrace_scope, or a "
			 "container's seccomp profile)" : "");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		goto close_err;
	}
	/* The watcher's own child: what it is, execve will say. */
	p = trace_add_proc(&t, pid);
	if (!p || !trace_add_task(&t, pid, p)) {
		e = -ENOMEM;
		kill(pid, SIGKILL);
		goto close_err;
	}
	p->before_exec = 1;
	if (write(go[1], "", 1) != 1)
		e = -errno;
	status = loop(&t, pid);
	if (read(err[0], msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
		e = msg[1] < 0 ? msg[1] : -EIO;
		*exec_failed = msg[0];
		if (msg[0])
			snprintf(why, whylen, "%s: %s", argv[0],
				 strerror(-e));
		else
			snprintf(why, whylen, "cannot load the seccomp "
				 "filter: %s", strerror(-e));
	} else {
		e = status;
	}
	free(t.tasks);
	free(t.procs);
	trace_files_free();
close_err:
	close(err[0]);
	if (err[1] >= 0)
		close(err[1]);
close_go:
	close(go[0]);
	close(go[1]);
	return e;
}

/* Every thread of pid, seized and stopped; threads made meanwhile too. */
static int seize_all(struct tracer *t, pid_t pid, long opts, char *why,
		     size_t whylen)
{
	struct dirent *de;
	char path[64];
	int added, e;
	pid_t tid;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		added = 0;
		d = opendir(path);
		if (!d) {
			e = -errno;
			snprintf(why, whylen, "no process %d: %s", (int)pid,
				 strerror(-e));
			return e;
		}
		while ((de = readdir(d))) {
			tid = (pid_t)atoi(de->d_name);
			if (tid <= 0 || trace_find_task(t, tid, NULL))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, opts)) {
				e = -errno;
				/*
				 * A thread that ended meanwhile is none, nor
				 * is a leader that exited before its threads
				 * (a zombie); one made since by a thread
				 * seized is ours by then (TRACECLONE).
				 */
				if (e == -ESRCH ||
				    (e == -EPERM && trace_zombie(tid)))
					continue;
				if (e == -EPERM && trace_status_field(tid,
				    "TracerPid:") == getpid()) {
					added |= !!trace_new_task(t, tid);
					continue;
				}
				closedir(d);
				snprintf(why, whylen, "cannot trace process "
					 "%d: %s%s", (int)pid, strerror(-e),
					 e == -EPERM ? " (another tracer, "
					 "Yama's ptrace_scope, or a process "
					 "with more privileges)" : "");
				return e;
			}
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			if (!trace_new_task(t, tid)) {
				closedir(d);
				return -ENOMEM;
			}
			added = 1;
		}
		closedir(d);
	} while (added);
	return 0;
}

int watch_attach(pid_t pid, const struct watch_opts *o, char *why,
		 size_t whylen)
{
	struct tracer t = { .o = o, .attached = 1 };
	long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
		    PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT;
	sigset_t set;
	int e, status;

	t.page = sysconf(_SC_PAGESIZE);
	t.huge = wfile_huge_default();
	clock_gettime(CLOCK_MONOTONIC, &t.t0);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	e = seize_all(&t, pid, opts, why, whylen);
	if (e) {
		detach_all(&t);
		status = e;
	} else {
		status = loop(&t, pid);
	}
	free(t.tasks);
	free(t.procs);
	trace_files_free();
	return status;
}

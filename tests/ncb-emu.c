/* SPDX-License-Identifier: MIT */
/*
 * ncb-emu: run a program as if on a kernel that gets MAP_FIXED_NOREPLACE
 * wrong, to test the library's other paths on a modern kernel.
 *
 *   --mode=old   Linux < 4.17: the flag is unknown, so the address is a
 *                hint.  The bit is cleared at syscall entry; with
 *                MAP_SHARED_VALIDATE, which validates every bit (4.15),
 *                the call fails with EOPNOTSUPP.
 *   --mode=4.17  Linux 4.17 and 4.18: only a mapping *containing* addr was
 *                found (find_vma + vm_start <= addr); a mapping starting
 *                inside the range was replaced.  Fixed in 7aa867dd8952.
 *                Such calls are turned into MAP_FIXED.
 *
 * Unlike the kernel, the emulation is not atomic: the maps are read while
 * other threads of the tracee run, so a mapping made between that reading
 * and the call can be replaced although 4.17 would have reported EEXIST.
 * Tests that race other threads against multi-page NOREPLACE calls (only
 * the library's probe makes those in this mode) must probe first.
 *
 * Both kernels predate the PROCMAP_QUERY ioctl on /proc/PID/maps (6.11):
 * it fails with ENOTTY, as it does there (no ioctl for the file), so the
 * look-ups read the text.
 *
 *   --mode=native  neither: the kernel's own answers.
 *
 * Environments built to break one rule each, for the conformance suite
 * (tools/conform/), modelled on emulators' known mistakes:
 *
 *   --mode=anywhere  the address of a fixed placement is no address: the
 *                    flag's mmap, MREMAP_FIXED's mremap and shmat place
 *                    where the kernel chooses.
 *   --mode=naive     every refusal of a fixed placement (the flag's mmap,
 *                    MREMAP_FIXED, shmat at an address) answers EEXIST,
 *                    as flag-and-compare emulations do.
 *   --mode=hints     a hint (an address without MAP_FIXED) is taken as
 *                    MAP_FIXED.
 *   --mode=upgrade   what would replace is refused: MAP_FIXED made
 *                    no-replace, MREMAP_FIXED onto a mapping EEXIST,
 *                    SHM_REMAP dropped (as noclobber watch --upgrade).
 *   --mode=5.4       Linux 5.4: the flag honoured, but MREMAP_DONTUNMAP
 *                    (5.7) and MAP_DROPPABLE (6.11) unknown: EINVAL.
 *   --mode=32bit     a 32-bit kernel of 6.11 or later: MAP_DROPPABLE
 *                    answered ENOTSUPP (524), there for i386 programs
 *                    too (their mmap2), VM_DROPPABLE being 64-bit only.
 *   --mode=pretend   what would replace answers its address and does
 *                    nothing: MAP_FIXED, MREMAP_FIXED and SHM_REMAP
 *                    (taken as one page) onto a mapping leave it, as an
 *                    emulator whose own record says "mapped already".
 *
 * Faults, in any mode: --faults=PERCENT fails that share of the mmap,
 * mremap, munmap, mprotect, brk and shmat calls with ENOMEM (a failed brk
 * answers the break unchanged, as the kernel's; munmap and mprotect only
 * where they would split a mapping, as the kernel's), drawn from
 * --seed=N, in
 * the threads of a program that asked for them: prctl(NCB_FAULTS_ON)
 * arms its thread (and the threads and children it makes after),
 * NCB_FAULTS_OFF disarms it (tests/faults.h); each answers 0 here and
 * EINVAL on a kernel alone.  --unmap-first fails a MAP_FIXED mmap (not one with
 * MAP_FIXED_NOREPLACE) after unmapping its range, as a kernel before 6.12
 * could when the commit charge failed after the old range was gone; a
 * later kernel keeps it.  --stats writes the counts to standard error at
 * the end, --log each failed call as it fails.
 *
 * A seccomp filter (libseccomp) stops only the calls it is asked for (the
 * mmap calls that carry the flag, or with faults those calls and the
 * marker), and in the old kernels' modes refuses the ioctl; the tracer
 * follows every thread and child.  x86_64 only.  A test tool: the library
 * never uses it.
 */
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "faults.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* _IOWR('f', 17, struct procmap_query), a 104-byte struct (6.11 uapi). */
#define PROCMAP_QUERY_CMD 0xc0686611UL

enum { MODE_OLD, MODE_417, MODE_NATIVE, MODE_ANYWHERE, MODE_NAIVE,
       MODE_HINTS, MODE_UPGRADE, MODE_54, MODE_PRETEND,
       MODE_32BIT };

#define MAP_TYPE_DROPPABLE 0x08

/* The modes' names, as --mode= takes them. */
static const char *const mode_name[] = {
	"old", "4.17", "native", "anywhere", "naive", "hints", "upgrade",
	"5.4", "pretend", "32bit",
};

#define NMODES (sizeof(mode_name) / sizeof(mode_name[0]))

/* The calls faults are injected into (their numbers are libseccomp's). */
static const struct {
	long nr;
	const char *name;
} fault_calls[] = {
	{ SYS_mmap, "mmap" }, { SYS_mremap, "mremap" },
	{ SYS_munmap, "munmap" }, { SYS_mprotect, "mprotect" },
	{ SYS_brk, "brk" }, { SYS_shmat, "shmat" },
};

#define NFAULT (sizeof(fault_calls) / sizeof(fault_calls[0]))

static int fault_rules(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp marker = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffff0000UL,
					     NCB_FAULTS_ON & 0xffff0000UL);
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < NFAULT; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(2),
				       (int)fault_calls[i].nr, 0);
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(2),
				       SCMP_SYS(prctl), 1, marker);
	return ret;
}

/* The calls each breaking mode stops (SCMP_ACT_TRACE(1)) or refuses. */
/*
 * Stop the mmap calls whose flags masked by mask are value, every mremap
 * with MREMAP_FIXED, and the shmat calls shm picks.
 */
static int trace_fixed(scmp_filter_ctx ctx, scmp_datum_t mask,
		       scmp_datum_t value, struct scmp_arg_cmp shm)
{
	const uint32_t t = SCMP_ACT_TRACE(1);
	int ret;

	ret = seccomp_rule_add(ctx, t, SCMP_SYS(mmap), 1,
			       SCMP_A3(SCMP_CMP_MASKED_EQ, mask, value));
	if (!ret)
		ret = seccomp_rule_add(ctx, t, SCMP_SYS(mremap), 1,
				       SCMP_A3(SCMP_CMP_MASKED_EQ,
					       MREMAP_FIXED, MREMAP_FIXED));
	if (!ret)
		ret = seccomp_rule_add(ctx, t, SCMP_SYS(shmat), 1, shm);
	return ret;
}

static int break_rules(scmp_filter_ctx ctx, int mode)
{
	const scmp_datum_t fixed = MAP_FIXED | MAP_FIXED_NOREPLACE;
	int ret = 0;

	switch (mode) {
	case MODE_ANYWHERE:
	case MODE_NAIVE:
		/* The flag's mmap; shmat at an address. */
		ret = trace_fixed(ctx, MAP_FIXED_NOREPLACE,
				  MAP_FIXED_NOREPLACE,
				  SCMP_A1(SCMP_CMP_NE, 0, 0));
		break;
	case MODE_HINTS:
		ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(1), SCMP_SYS(mmap),
				       2, SCMP_A0(SCMP_CMP_NE, 0, 0),
				       SCMP_A3(SCMP_CMP_MASKED_EQ, fixed, 0));
		break;
	case MODE_UPGRADE:
	case MODE_PRETEND:
		/* MAP_FIXED without the flag; shmat with SHM_REMAP. */
		ret = trace_fixed(ctx, fixed, MAP_FIXED,
				  SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_REMAP,
					  SHM_REMAP));
		break;
	case MODE_54:
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL),
				       SCMP_SYS(mmap), 1,
				       SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_TYPE,
					       MAP_TYPE_DROPPABLE));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL),
					       SCMP_SYS(mremap), 1,
					       SCMP_A3(SCMP_CMP_MASKED_EQ,
						       MREMAP_DONTUNMAP,
						       MREMAP_DONTUNMAP));
		break;
	}
	return ret;
}

/* The kernel's ENOTSUPP, which user space has no name for. */
#define ENOTSUPP_KERNEL 524

/*
 * --mode=32bit: MAP_DROPPABLE refused in either ABI, the filter taking
 * i386's calls too (an i386 call is else a bad architecture's: killed).
 */
static int refuse_droppable(scmp_filter_ctx ctx)
{
	const uint32_t e = SCMP_ACT_ERRNO(ENOTSUPP_KERNEL);
	struct scmp_arg_cmp type = SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_TYPE,
					   MAP_TYPE_DROPPABLE);
	int ret = seccomp_arch_add(ctx, SCMP_ARCH_X86);

	if (ret && ret != -EEXIST)
		return ret;
	ret = seccomp_rule_add(ctx, e, SCMP_SYS(mmap), 1, type);
	if (!ret)
		ret = seccomp_rule_add(ctx, e, SCMP_SYS(mmap2), 1, type);
	return ret;
}

/* The kernels before 6.11 that the modes old and 4.17 stand for. */
static int before_query(int mode)
{
	return mode == MODE_OLD || mode == MODE_417;
}

static int load_filter(int mode, int faults)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int ret = 0;

	if (!ctx)
		return -ENOMEM;
	if (faults)
		ret = fault_rules(ctx);
	else if (mode == MODE_32BIT)
		ret = refuse_droppable(ctx);
	else if (before_query(mode))
		ret = seccomp_rule_add(ctx, SCMP_ACT_TRACE(1), SCMP_SYS(mmap),
				       1, SCMP_A3(SCMP_CMP_MASKED_EQ,
						  MAP_FIXED_NOREPLACE,
						  MAP_FIXED_NOREPLACE));
	else
		ret = break_rules(ctx, mode);
	/* The request is an unsigned int: its upper half is not looked at. */
	if (!ret && before_query(mode))
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY),
				       SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					       PROCMAP_QUERY_CMD));
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}

/* What a mapping [s, e) is to the range [start, end): one bit each. */
enum { CONTAINS = 1, STARTS_INSIDE = 2, MEETS = 4, CUT = 8 };

static int relation(unsigned long s, unsigned long e, unsigned long start,
		    unsigned long end)
{
	return (s <= start && start < e ? CONTAINS : 0) |
	       (s > start && s < end ? STARTS_INSIDE : 0) |
	       (s < end && start < e ? MEETS : 0) |
	       ((s < start && start < e) || (s < end && end < e) ? CUT : 0);
}

/* What the mappings of pid are to [start, end), all together. */
static int relations(pid_t pid, unsigned long start, unsigned long end)
{
	unsigned long s, e;
	char path[64], line[8192];
	int rel = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2)
			rel |= relation(s, e, start, end);
	fclose(f);
	return rel;
}

/* The call skipped, answering -err. */
static void refuse(struct user_regs_struct *r, int err)
{
	r->orig_rax = (unsigned long long)-1;
	r->rax = (unsigned long long)-err;
}

/*
 * --mode=pretend: a call onto [start, start + len) that meets a mapping
 * answers start, skipped.
 */
static void pretend(pid_t pid, struct user_regs_struct *r,
		    unsigned long start, unsigned long len)
{
	len = (len + 4095) & ~4095UL;
	if (len && relations(pid, start, start + len) & MEETS) {
		r->orig_rax = (unsigned long long)-1;
		r->rax = start;
	}
}

/* A breaking mode's change to a stopped call: 1 if its exit is needed. */
static int break_call(pid_t pid, struct user_regs_struct *r, int mode)
{
	long nr = (long)r->orig_rax;
	unsigned long len;

	switch (mode) {
	case MODE_ANYWHERE:
		if (nr == SYS_mmap) {
			r->rdi = 0;
			r->r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;
		} else if (nr == SYS_mremap) {
			r->r10 &= ~(unsigned long long)MREMAP_FIXED;
		} else {
			r->rsi = 0;
		}
		return 0;
	case MODE_NAIVE:
		return 1;
	case MODE_HINTS:
		r->r10 |= MAP_FIXED;
		return 0;
	case MODE_UPGRADE:
		if (nr == SYS_mmap) {
			r->r10 |= MAP_FIXED_NOREPLACE;
		} else if (nr == SYS_shmat) {
			r->rdx &= ~(unsigned long long)SHM_REMAP;
		} else {
			len = (r->rdx + 4095) & ~4095UL;
			if (len && relations(pid, r->r8, r->r8 + len) & MEETS)
				refuse(r, EEXIST);
		}
		return 0;
	case MODE_PRETEND:
		if (nr == SYS_mmap)
			pretend(pid, r, r->rdi, r->rsi);
		else if (nr == SYS_shmat)
			pretend(pid, r, r->rsi, 4096);
		else if (r->r8 >= r->rdi + r->rsi || r->rdi >= r->r8 + r->rdx)
			pretend(pid, r, r->r8, r->rdx); /* else EINVAL */
		return 0;
	}
	return 0;
}

/* The stopped call changed as the mode says: 1 if its exit is needed. */
static int emulate(pid_t pid, int mode)
{
	struct user_regs_struct r;
	unsigned long len;
	int rel, exit_too = 0;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return 0;
	if (mode == MODE_OLD && (r.r10 & MAP_TYPE) == MAP_SHARED_VALIDATE) {
		/* 4.15 and 4.16 validate every bit: this one they lack. */
		refuse(&r, EOPNOTSUPP);
	} else if (mode == MODE_OLD) {
		r.r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;
	} else if (mode == MODE_417) {
		len = (r.rsi + 4095) & ~4095UL;
		rel = relations(pid, r.rdi, r.rdi + len);
		if ((rel & CONTAINS) || !(rel & STARTS_INSIDE) ||
		    (r.rdi & 4095) || !len)
			return 0;
		r.r10 &= ~(unsigned long long)MAP_FIXED_NOREPLACE;
		r.r10 |= MAP_FIXED;
	} else {
		exit_too = break_call(pid, &r, mode);
	}
	ptrace(PTRACE_SETREGS, pid, NULL, &r);
	return exit_too;
}

/* --mode=naive at a call's exit: any refusal becomes EEXIST. */
static void naive_exit(pid_t pid)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return;
	if (r.rax < (unsigned long long)-4095 ||
	    r.rax == (unsigned long long)-EEXIST)
		return;
	r.rax = (unsigned long long)-EEXIST;
	ptrace(PTRACE_SETREGS, pid, NULL, &r);
}

/* A set of thread ids. */
struct tids {
	pid_t *v;
	size_t n, c;
};

static int tids_has(const struct tids *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i] == tid)
			return 1;
	return 0;
}

static void tids_add(struct tids *t, pid_t tid)
{
	pid_t *v;

	if (tids_has(t, tid))
		return;
	if (t->n == t->c) {
		v = realloc(t->v, (t->c * 2 + 16) * sizeof(*v));
		if (!v)
			return;
		t->v = v;
		t->c = t->c * 2 + 16;
	}
	t->v[t->n++] = tid;
}

static void tids_del(struct tids *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i] == tid)
			t->v[i] = t->v[--t->n];
}

/* The injection's settings, its armed threads and its counts. */
static struct {
	unsigned int percent;
	unsigned long long rng;
	int unmap_first, stats, log;
	struct tids armed;	/* faults injected into these threads */
	struct tids fix;	/* their call's exit answers ENOMEM */
	unsigned long seen[NFAULT], failed[NFAULT];
} fl;

static int fault_index(long nr)
{
	size_t i;

	for (i = 0; i < NFAULT; i++)
		if (fault_calls[i].nr == nr)
			return (int)i;
	return -1;
}

/* xorshift64*: the same seed draws the same failures, call for call. */
static int draw(void)
{
	fl.rng ^= fl.rng >> 12;
	fl.rng ^= fl.rng << 25;
	fl.rng ^= fl.rng >> 27;
	return (fl.rng * 2685821657736338717ULL >> 33) % 100 < fl.percent;
}

/*
 * Whether the kernel would have unmapped the range before the failure:
 * a MAP_FIXED mmap (not MAP_FIXED_NOREPLACE) the kernel takes as far as
 * mmap_region, which a bad type, length or address never reaches.
 */
static int unmaps(const struct user_regs_struct *r)
{
	return (r->r10 & (MAP_FIXED | MAP_FIXED_NOREPLACE)) == MAP_FIXED &&
	       (r->r10 & 3) && !(r->rdi & 4095) && r->rsi;
}

/*
 * The call fails: skipped with ENOMEM in its place; a brk asks for no
 * change, which answers the break as it is; a MAP_FIXED mmap under
 * --unmap-first becomes a munmap of its range, answered ENOMEM at its
 * exit.  1 if the exit must be seen.
 */
static int inject(pid_t tid, struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;

	if (fl.log)
		fprintf(stderr, "ncb-emu: %d: %s(%#llx, %#llx, %#llx, %#llx) "
			"fails\n", (int)tid, fault_calls[fault_index(nr)].name,
			r->rdi, r->rsi, r->rdx, r->r10);

	if (nr == SYS_brk) {
		r->rdi = 0;
	} else if (nr == SYS_mmap && fl.unmap_first && unmaps(r)) {
		r->orig_rax = SYS_munmap;
		tids_add(&fl.fix, tid);
	} else {
		r->orig_rax = (unsigned long long)-1;
		r->rax = (unsigned long long)-ENOMEM;
	}
	ptrace(PTRACE_SETREGS, tid, NULL, r);
	return tids_has(&fl.fix, tid);
}

/*
 * Whether [start, end) cuts a mapping of pid: munmap and mprotect fail
 * with ENOMEM only for want of a mapping to split off (the map count at
 * its limit); a call on whole mappings needs none.
 */
static int splits(pid_t pid, unsigned long start, unsigned long end)
{
	return !!(relations(pid, start, end) & CUT);
}

/* Whether the kernel could have failed this call for want of memory. */
static int can_fail(pid_t tid, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;
	unsigned long end = r->rdi + ((r->rsi + 4095) & ~4095UL);

	if (nr == SYS_munmap || nr == SYS_mprotect)
		return splits(tid, r->rdi, end);
	/*
	 * An mmap of no type asks the kernel's checks and maps nothing
	 * (the library's ncb__ask_space): its ENOMEM is the map count's,
	 * which one failure drawn at random does not model.
	 */
	if (nr == SYS_mmap && !(r->r10 & 3))
		return 0;
	return 1;
}

/* A call the faults' filter stopped: 1 if its exit must be seen. */
static int fault_stop(pid_t tid, int mode)
{
	struct user_regs_struct r;
	unsigned long option;
	int i;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &r))
		return 0;
	if ((long)r.orig_rax == SYS_prctl) {
		option = r.rdi & 0xffffffffUL;
		if (option == NCB_FAULTS_ON)
			tids_add(&fl.armed, tid);
		else if (option == NCB_FAULTS_OFF)
			tids_del(&fl.armed, tid);
		else
			return 0;
		r.orig_rax = (unsigned long long)-1;
		r.rax = 0;
		ptrace(PTRACE_SETREGS, tid, NULL, &r);
		return 0;
	}
	i = fault_index((long)r.orig_rax);
	if (i >= 0 && tids_has(&fl.armed, tid) && can_fail(tid, &r)) {
		fl.seen[i]++;
		if (draw()) {
			fl.failed[i]++;
			return inject(tid, &r);
		}
	}
	if ((long)r.orig_rax == SYS_mmap && before_query(mode) &&
	    (r.r10 & MAP_FIXED_NOREPLACE))
		emulate(tid, mode);
	return 0;
}

static void fault_exit(pid_t tid)
{
	struct user_regs_struct r;

	tids_del(&fl.fix, tid);
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r))
		return;
	r.rax = (unsigned long long)-ENOMEM;
	ptrace(PTRACE_SETREGS, tid, NULL, &r);
}

static void fault_report(void)
{
	size_t i;

	if (!fl.stats)
		return;
	fprintf(stderr, "ncb-emu: faults %u%%:", fl.percent);
	for (i = 0; i < NFAULT; i++)
		fprintf(stderr, " %s %lu/%lu", fault_calls[i].name,
			fl.failed[i], fl.seen[i]);
	fprintf(stderr, " (failed/armed calls)\n");
}

static int trace(pid_t child, int mode)
{
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
		    PTRACE_O_TRACESYSGOOD;
	int st, status = 1, sig, ev;
	unsigned long msg;
	pid_t pid;

	if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st))
		return 127;
	if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)opts) ||
	    ptrace(PTRACE_CONT, child, NULL, NULL)) {
		perror("ncb-emu: ptrace");
		return 127;
	}
	while ((pid = waitpid(-1, &st, __WALL)) > 0) {
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (pid == child)
				status = WIFEXITED(st) ? WEXITSTATUS(st)
						       : 128 + WTERMSIG(st);
			tids_del(&fl.armed, pid);
			tids_del(&fl.fix, pid);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		ev = st >> 16;
		if (sig == (SIGTRAP | 0x80)) {
			if (fl.percent)
				fault_exit(pid);
			else
				naive_exit(pid);
			sig = 0;
		} else if (ev == PTRACE_EVENT_SECCOMP && fl.percent) {
			if (fault_stop(pid, mode)) {
				ptrace(PTRACE_SYSCALL, pid, NULL, NULL);
				continue;
			}
		} else if (ev == PTRACE_EVENT_SECCOMP) {
			if (emulate(pid, mode)) {
				ptrace(PTRACE_SYSCALL, pid, NULL, NULL);
				continue;
			}
		} else if ((ev == PTRACE_EVENT_CLONE ||
			    ev == PTRACE_EVENT_FORK ||
			    ev == PTRACE_EVENT_VFORK) &&
			   tids_has(&fl.armed, pid) &&
			   !ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg)) {
			/* What an armed thread makes is armed too. */
			tids_add(&fl.armed, (pid_t)msg);
		}
		/* Event stops, and the stop of a newly attached tracee. */
		if (ev || sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	fault_report();
	return status;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: ncb-emu --mode=MODE [--faults=PERCENT] "
		"[--seed=N] [--unmap-first] [--stats] [--log] PROG [ARG...]\n"
		"modes:");
	for (i = 0; i < NMODES; i++)
		fprintf(stderr, " %s", mode_name[i]);
	fprintf(stderr, " (--faults with old, 4.17 or native)\n");
}

/* The options: the index of PROG, or 0 after a usage message. */
/* A mode by its name, or -1. */
static int mode_of(const char *name)
{
	size_t m;

	for (m = 0; m < NMODES; m++)
		if (!strcmp(name, mode_name[m]))
			return (int)m;
	return -1;
}

static int options(int argc, char **argv, int *mode)
{
	int i;

	*mode = -1;
	fl.rng = 1;
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strncmp(argv[i], "--mode=", 7))
			*mode = mode_of(argv[i] + 7);
		else if (!strncmp(argv[i], "--faults=", 9))
			fl.percent = (unsigned int)atoi(argv[i] + 9);
		else if (!strncmp(argv[i], "--seed=", 7))
			fl.rng = strtoull(argv[i] + 7, NULL, 0) * 2 + 1;
		else if (!strcmp(argv[i], "--unmap-first"))
			fl.unmap_first = 1;
		else if (!strcmp(argv[i], "--stats"))
			fl.stats = 1;
		else if (!strcmp(argv[i], "--log"))
			fl.log = 1;
		else
			break;
	}
	if (*mode < 0 || i >= argc || fl.percent > 100 ||
	    (fl.percent && *mode > MODE_NATIVE)) {
		usage();
		return 0;
	}
	return i;
}

int main(int argc, char **argv)
{
	int mode, ret, prog = options(argc, argv, &mode);
	pid_t child;

	if (!prog)
		return 2;
	child = fork();
	if (child < 0) {
		perror("ncb-emu: fork");
		return 127;
	}
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || raise(SIGSTOP))
			_exit(127);
		ret = load_filter(mode, fl.percent > 0);
		if (ret) {
			fprintf(stderr, "ncb-emu: seccomp: %s\n",
				strerror(-ret));
			_exit(127);
		}
		execvp(argv[prog], argv + prog);
		perror("ncb-emu: exec");
		_exit(127);
	}
	return trace(child, mode);
}

/* SPDX-License-Identifier: MIT */
/*
 * Running a program in this process, as execve would but without letting
 * anything land on anything: the program and its interpreter are loaded
 * with ncb_elf_load, a fresh stack is placed where the kernel chooses
 * (no-clobber), and on it argc, argv, envp and the auxiliary vector the
 * kernel would build (fs/binfmt_elf.c create_elf_tables).  Then execve's
 * other effects that matter in-process: caught signals back to default,
 * close-on-exec descriptors closed, this thread's rseq area unregistered
 * (the new libc registers its own).  Last, handover.c unmaps everything
 * of the caller, gives the program its identity (identity.c) and enters
 * it with the registers the ABI promises at process entry.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "loader.h"

/*
 * A field of /proc/self/status ("SigCgt:", "Threads:"), in base; dflt if
 * unknown.  Read line by line through a buffer on the stack (an exec in a
 * forked child pays a page fault for each page of heap it first touches);
 * a line longer than the buffer (Groups: of a user in many groups) is
 * passed over whole, never read as the start of another.
 */
static unsigned long long status_field(const char *name, int base,
				       unsigned long long dflt)
{
	char buf[512], *line, *nl, *end;
	size_t len = 0, nlen = strlen(name);
	unsigned long long v = dflt;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	int skip = 0;
	ssize_t n;

	if (fd < 0)
		return dflt;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		buf[len] = '\0';
		line = buf;
		if (skip) {
			nl = strchr(line, '\n');
			line = nl ? nl + 1 : buf + len;
			skip = !nl;
		}
		for (; (nl = strchr(line, '\n')); line = nl + 1) {
			if (strncmp(line, name, nlen))
				continue;
			v = strtoull(line + nlen, &end, base);
			if (end == line + nlen)
				v = dflt;
			goto out;
		}
		len = (size_t)(buf + len - line);
		if (len == sizeof(buf) - 1) {
			skip = 1;
			len = 0;
		}
		memmove(buf, line, len);
	}
out:
	close(fd);
	return v;
}

/*
 * What execve resets (flush_signal_handlers): every caught signal to
 * SIG_DFL, and the flags and mask of every action, ignored ones staying
 * ignored (SA_NOCLDWAIT on a default SIGCHLD would otherwise reap the
 * program's children for it).  Raw rt_sigaction: libc's sigaction
 * refuses the signals it keeps for itself (glibc's 32 and 33).  A
 * zeroed kernel sigaction is SIG_DFL with no flags and an empty mask on
 * every architecture, the handler its first word; the sigset is 64
 * signals wide on all we build for.
 */
static void reset_signals(void)
{
	unsigned long old[8], clean[8];
	stack_t ss = { .ss_flags = SS_DISABLE };
	int sig;
	size_t i;

	for (sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		memset(old, 0, sizeof(old));
		if (syscall(SYS_rt_sigaction, sig, NULL, old, 8))
			continue;
		memset(clean, 0, sizeof(clean));
		if (old[0] == (unsigned long)SIG_IGN)
			clean[0] = old[0];
		for (i = 0; i < 8 && old[i] == clean[i]; i++)
			;
		if (i < 8)
			syscall(SYS_rt_sigaction, sig, clean, NULL, 8);
	}
	sigaltstack(&ss, NULL);
}

/* What execve closes: the descriptors marked close-on-exec. */
static void close_on_exec(void)
{
	char buf[2048];
	struct dirent64 *de;
	long n, off;
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd;

	if (dir < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(buf + off);
			if (de->d_name[0] == '.')
				continue;
			fd = atoi(de->d_name);
			if (fd != dir && (fcntl(fd, F_GETFD) & FD_CLOEXEC))
				close(fd);
		}
	}
	close(dir);
}

/* Threads of this process; 0 if unknown. */
static unsigned int count_threads(void)
{
	return (unsigned int)status_field("Threads:", 10, 0);
}

/*
 * The threads an emulator keeps beside the guest's (qemu-user has a
 * service thread of its own, listed in /proc/self/task and re-created in
 * a forked child), counted when the library is loaded, before the guest
 * program can have started any.  They cannot be told from the guest's
 * later: their signal masks, names and start times are all like a
 * guest thread's at some moment.  Natively nothing is counted, and no
 * /proc file is read at load.
 */
static unsigned int emulator_threads;

__attribute__((constructor)) static void note_emulator_threads(void)
{
	if (ncb__emulated())
		emulator_threads = count_threads();
}

/*
 * Whether the caller is alone in its address space, in one call: unshare
 * with CLONE_VM changes nothing and fails with EINVAL while another thread
 * of the process, or another process (a vfork parent, a CLONE_VM child),
 * uses the memory (kernel/fork.c check_unshare_flags, which asks
 * current_is_single_threaded; a passing reader of /proc/PID/mem is not
 * counted).  1 alone; 0 not, or no answer: a sandbox may refuse the call
 * (EPERM, ENOSYS), and gVisor answers EINVAL to every such unshare.
 */
static int alone(int *einval)
{
	if (!syscall(SYS_unshare, CLONE_VM))
		return 1;
	*einval = errno == EINVAL;
	return 0;
}

/*
 * With no other thread, whether another process uses this one's memory.
 * Linux's unshare refuses CLONE_VM then, and still takes CLONE_SIGHAND,
 * which asks for no other thread and no shared handlers (gVisor refuses
 * both).  Else kcmp (KCMP_VM, 1) compares with the parent, whose memory
 * a vfork child's is; absent or refused, no answer.
 */
static int memory_shared(int einval)
{
	if (einval && !syscall(SYS_unshare, CLONE_SIGHAND))
		return 1;
	return syscall(SYS_kcmp, (long)getpid(), (long)getppid(), 1L, 0L,
		       0L) == 0;
}

/*
 * The program's threads besides the caller, decided at the call:
 * natively every other thread is the program's, whenever it started
 * (a library loaded late must not take the threads there were then as
 * allowed); under an emulator, those past its own.  *shared: the
 * threads are the caller's alone, but another process uses its memory.
 */
static unsigned int other_threads(int *shared)
{
	unsigned int all, own = emulator_threads > 1 ? emulator_threads : 1;
	int emulated = emulator_threads > 1, einval = 0;

	*shared = 0;
	if (!emulated && alone(&einval))
		return 0;
	all = count_threads();
	if (all > own)
		return all - own;
	*shared = !emulated && memory_shared(einval);
	return 0;
}

/* An image at base (0: anywhere). */
static int load_at(struct ncb_elf *e, uint64_t base, struct ncb_elf_image *img,
		   char *why, size_t wl)
{
	struct ncb_elf_load_opts o = NCB_INIT(ncb_elf_load_opts, .base = base);

	return ncb_elf_load(e, &o, img, why, wl);
}

/* glibc 2.35 and later say where this thread's rseq area is. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/*
 * A registration outlives the jump: the kernel would keep writing into
 * this libc's thread block, and the new libc could not register its own.
 */
static void rseq_unregister(void)
{
#if defined(NCB_ARCH_RSEQ_SIG) && defined(SYS_rseq)
	char *area;

	if (!&__rseq_size || !&__rseq_offset || !__rseq_size)
		return;
	area = ncb__arch_tp() + __rseq_offset;
	/* The length must be the registered one: glibc used 32 bytes. */
	if (syscall(SYS_rseq, area, __rseq_size, 1, NCB_ARCH_RSEQ_SIG) &&
	    errno == EINVAL)
		syscall(SYS_rseq, area, 32, 1, NCB_ARCH_RSEQ_SIG);
#endif
}

/* The interpreter must be a shared object with none of its own. */
int ncb__interp_open(const char *path, struct ncb_elf **ie, char *why,
		     size_t wl)
{
	char inner[160];
	int err = ncb_elf_open(ie, path, inner, sizeof(inner));

	if (err)
		return ncb__why(why, wl, err == -ENOEXEC ? ELIBBAD : -err,
				"interpreter %s", inner);
	if ((*ie)->eh.e_type != ET_DYN)
		err = ncb__why(why, wl, ELIBBAD, "interpreter %s: not a shared "
			       "object (ET_DYN)", path);
	else if ((*ie)->interp)
		err = ncb__why(why, wl, ELIBBAD, "interpreter %s: has an "
			       "interpreter of its own", path);
	if (err) {
		ncb_elf_close(*ie);
		*ie = NULL;
	}
	return err;
}

/*
 * The handover prepared with as few descriptors open as can be: execve
 * needs none, and a low RLIMIT_NOFILE must not stop the run.  The
 * program's own stays open for the exe link, which is dropped when only
 * its descriptor is in the way and the caller did not insist on it.
 */
static int handover_prepare(struct ncb__handover *ho, struct ncb_elf **e,
			    struct ncb_elf **ie, int set_exe,
			    const struct ncb_exec_opts *opts)
{
	int err;

	ncb_elf_close(*ie);
	*ie = NULL;
	if (set_exe) {
		ho->exe_fd = (*e)->fd;
		err = ncb__handover_prepare(ho);
		if (err != -EMFILE || opts->exe == NCB_EXE_SET)
			goto out;
		ho->exe_fd = -1;
	}
	ncb_elf_close(*e);
	*e = NULL;
	err = ncb__handover_prepare(ho);
out:
	/* The stub closes it once the link is set. */
	if (!err && *e && ho->exe_fd >= 0)
		(*e)->fd = -1;
	return err;
}

/* exec_elf's biggest locals, on the heap. */
struct exec_state {
	struct ncb__stack s;
	struct ncb__handover ho;
};

static int exec_elf(const char *path, char *const argv[], char *const envp[],
		    const struct ncb_exec_opts *opts, const char *execfn,
		    ncb__hide hide, const struct ncb_elf_image *held,
		    uint64_t held_to, const struct ncb__misc_run *misc,
		    char *why, size_t wl);
static int gains_privilege(int fd, const char *path, char *why, size_t wl);

/*
 * What a binfmt_misc entry's flags ask of the run: argv[0] kept (P) is
 * told in AT_FLAGS; the file open for the interpreter (O, or C), and
 * not run with privilege it would gain (C), as ncb_exec refuses that.
 */
static int misc_run(const char *path, unsigned int flags,
		    const struct ncb_exec_opts *o, struct ncb__misc_run *run,
		    char *why, size_t wl)
{
	int fd, err = 0;

	if (flags & NCB__MISC_ARGV0)
		run->at_flags |= 1;	/* AT_FLAGS_PRESERVE_ARGV0 */
	if (!(flags & (NCB__MISC_OPEN | NCB__MISC_CREDS)))
		return 0;
	/* Not close-on-exec: the program is to have it. */
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return ncb__why(why, wl, errno, "%s: %s", path,
				strerror(errno));
	if ((flags & NCB__MISC_CREDS) && !(o->flags & NCB_EXEC_UNPRIVILEGED))
		err = gains_privilege(fd, path, why, wl);
	if (err || run->execfd >= 0) {
		close(fd);
		return err;
	}
	run->execfd = fd;
	return 0;
}

/*
 * What execve's handlers make of path and argv before an ELF program:
 * binfmt_misc's interpreters, then "#!" lines, nested up to
 * NCB__SCRIPT_DEPTH deep.  *path and *av become the program's and its
 * arguments, whose strings lines[] hold (the caller frees them).  With
 * run, binfmt_misc's flags are carried out (the descriptor AT_EXECFD
 * passes); without, the arguments alone are found (a plan).  0, or
 * -errno and why.
 */
int ncb__exec_resolve(const char **path, char *const **av, char **lines,
		      const struct ncb_exec_opts *o, struct ncb__misc_run *run,
		      char *why, size_t wl)
{
	const char *first = o->execfn ? o->execfn : *path, *opened = NULL;
	unsigned char head[NCB__HEAD];
	unsigned int flags = 0;
	int depth, err = 0, misc;

	for (depth = 0; depth <= NCB__SCRIPT_DEPTH; depth++) {
		/* As execve: the file must be executable by us. */
		if (faccessat(AT_FDCWD, *path, X_OK, AT_EACCESS)) {
			char name[256];

			return ncb__why(why, wl, errno, "%s: %s", ncb__visible(
					*path, name, sizeof(name)),
					strerror(errno));
		}
		/*
		 * binfmt_misc first, as the kernel asks it first; a file
		 * that cannot be read goes to the loader, which says why.
		 */
		if (ncb__read_head(*path, head))
			return 0;
		misc = ncb__binfmt(*path, head, av, &lines[depth], &flags,
				   why, wl);
		err = misc ? misc : ncb__script(*path, head, av,
						&lines[depth], why, wl);
		if (err <= 0)
			return err;
		/*
		 * Given the file open (O, C), the interpreter must be a
		 * program: one more handler and the kernel refuses
		 * (exec_binprm, have_execfd).
		 */
		if (opened)
			return ncb__why(why, wl, ENOEXEC, "%s: binfmt_misc "
					"gives %s the file open, and then it "
					"must be a program, not a script",
					opened, *path);
		if (misc && (flags & (NCB__MISC_OPEN | NCB__MISC_CREDS)))
			opened = *path;
		if (misc && run && (err = misc_run(*path, flags, o, run, why,
						   wl)))
			return err;
		*path = (*av)[0];
	}
	return ncb__why(why, wl, ELOOP, "%s: scripts nested more than %d "
			"deep", first, NCB__SCRIPT_DEPTH);
}

int ncb__stack_plan(char *const argv[], char *const envp[],
		    const char *execfn, const struct ncb_exec_opts *o,
		    uint64_t *start, uint64_t *end, uint64_t *limit)
{
	char *lines[NCB__SCRIPT_DEPTH + 1] = { NULL }, *const *av = argv;
	const char *path = execfn;
	int err, i;

	/* The arguments the program gets: a script's interpreter's. */
	err = ncb__exec_resolve(&path, &av, lines, o, NULL, NULL, 0);
	if (!err)
		err = ncb__stack_layout(av, envp, execfn, ncb__strv_len(argv),
					o, start, end, limit);
	for (i = 0; i <= NCB__SCRIPT_DEPTH; i++)
		free(lines[i]);
	return err;
}

int ncb_exec(const char *path, char *const argv[], char *const envp[],
	     const struct ncb_exec_opts *opts, char *why, size_t wl)
{
	char *lines[NCB__SCRIPT_DEPTH + 1] = { NULL }, *const *av = argv;
	static char *const empty[] = { "", NULL };
	struct ncb__misc_run run = { .execfd = -1 };
	struct ncb_exec_opts o;
	unsigned int threads;
	const char *execfn;
	int depth, err, shared;

	if (!path || !argv)
		return ncb__why(why, wl, EINVAL, "no program given");
#ifndef NCB_ARCH_HANDOVER
	return ncb__why(why, wl, ENOSYS, "this build has no process-entry "
			"stub for its architecture");
#endif
	if (ncb__opts_in(&o, sizeof(o), opts, NCB__END(ncb_exec_opts, exe)))
		return ncb__why(why, wl, EINVAL, "options of a size or with "
				"fields this library does not know");
	/* What it cannot honour is refused, not ignored. */
	if (o.flags & ~NCB_EXEC_UNPRIVILEGED)
		return ncb__why(why, wl, EINVAL, "unknown flags %#x",
				o.flags & ~NCB_EXEC_UNPRIVILEGED);
	if (o.exe < NCB_EXE_AUTO || o.exe > NCB_EXE_SET)
		return ncb__why(why, wl, EINVAL, "unknown exe choice %d",
				o.exe);
	execfn = o.execfn ? o.execfn : path;
	/* As execve since Linux 5.18: no program starts with argc 0. */
	if (!argv[0])
		av = empty;
	/*
	 * execve ends the other threads; in-process they would run on in
	 * the new program's address space.
	 */
	threads = other_threads(&shared);
	if (threads)
		return ncb__why(why, wl, EBUSY, "this process has %u threads: "
				"the caller must be the only one",
				threads + 1);
	/* A vfork parent would wake in the program's address space. */
	if (shared)
		return ncb__why(why, wl, EBUSY, "another process shares this "
				"one's memory (a vfork parent, or a CLONE_VM "
				"child): execve would leave it its own");
	run.argc = ncb__strv_len(av);
	err = ncb__exec_resolve(&path, &av, lines, &o, &run, why, wl);
	if (!err)
		err = exec_elf(path, av, envp, &o, execfn, 0, NULL, 0, &run,
			       why, wl);
	if (run.execfd >= 0)
		close(run.execfd);
	for (depth = 0; depth <= NCB__SCRIPT_DEPTH; depth++)
		free(lines[depth]);
	return err;
}

/*
 * Whether execve would run the file with privilege this process lacks
 * (fs/exec.c bprm_fill_uid, and file capabilities): set-user-ID of another
 * user, set-group-ID (with group execute) of another group, or capabilities
 * for a caller that is not root; not on a nosuid mount, not under
 * no_new_privs.  An in-process exec cannot give them.
 */
static int gains_privilege(int fd, const char *path, char *why, size_t wl)
{
	struct statvfs sv;
	struct stat st;
	int caps;

	if (fstat(fd, &st))
		return 0;
	caps = geteuid() && fgetxattr(fd, "security.capability", NULL, 0) > 0;
	/* Most programs gain nothing: ask about the mount and nnp only then. */
	if (!caps && !(st.st_mode & (S_ISUID | S_ISGID)))
		return 0;
	if ((!fstatvfs(fd, &sv) && (sv.f_flag & ST_NOSUID)) ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return 0;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return ncb__why(why, wl, EPERM, "%s is set-user-ID (user %u): "
				"execve would run it as that user, which an "
				"in-process exec cannot", path,
				(unsigned int)st.st_uid);
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    st.st_gid != getegid())
		return ncb__why(why, wl, EPERM, "%s is set-group-ID (group "
				"%u): execve would run it in that group, which "
				"an in-process exec cannot", path,
				(unsigned int)st.st_gid);
	if (caps)
		return ncb__why(why, wl, EPERM, "%s has file capabilities: "
				"execve would give them, an in-process exec "
				"cannot", path);
	return 0;
}

/*
 * Whether a range that is taken will be free once the handover has
 * unmapped the caller: nothing of the kernel's there.  Never under an
 * emulator, where the caller's mappings stay.
 */
static int movable(uint64_t start, uint64_t len, const struct ncb__sys *sys)
{
	return !sys->emulated && start + len > start &&
	       !ncb__stays(start, start + len, NULL, 0);
}

/*
 * Run the program's interpreter as the program ("ld.so --argv0 ARGV0
 * /real/path ARGS"): both glibc's and musl's take $ORIGIN from the path
 * they are given.  An ET_EXEC image's span is first loaded here, so that
 * the interpreter's MAP_FIXED of it lands on nothing but our own pages.
 * Returns only on failure.
 */
static int exec_interp(struct ncb_elf *e, const char *path,
		       char *const argv[], char *const envp[],
		       const struct ncb_exec_opts *opts, const char *execfn,
		       const struct ncb__misc_run *misc, char *why, size_t wl)
{
	struct ncb_exec_opts o = *opts;
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	char *real = realpath(path, NULL), *interp = NULL, **nv = NULL;
	size_t n = ncb__strv_len(argv), i;
	struct ncb__sys sys;
	uint64_t to = 0;
	int err = -ENOMEM;

	interp = strdup(e->interp);
	nv = calloc(n + 4, sizeof(*nv));
	if (!real || !interp || !nv) {
		err = ncb__why(why, wl, real ? ENOMEM : errno, "%s: %s", path,
			       strerror(real ? ENOMEM : errno));
		goto out;
	}
	nv[NCB__LDSO_SELF] = interp;
	nv[NCB__LDSO_OPT] = "--argv0";
	nv[NCB__LDSO_ARGV0] = argv[0];
	nv[NCB__LDSO_PATH] = real;
	for (i = 1; i < n; i++)
		nv[NCB__LDSO_PATH + i] = argv[i];
	/*
	 * An ET_EXEC program's place is held for the interpreter to map it
	 * there; where only the caller's own mappings are in the way, held
	 * elsewhere and moved there by the handover.
	 */
	if (e->eh.e_type == ET_EXEC) {
		ncb__sys_read(&sys);
		err = load_at(e, 0, &img, why, wl);
		if (err == -EEXIST && movable(e->lo, e->hi - e->lo, &sys)) {
			err = ncb__elf_load_elsewhere(e, &img, why, wl);
			to = e->lo;
		}
		if (err)
			goto out;
	}
	ncb_elf_close(e);
	e = NULL;
	o.exe = NCB_EXE_OFF;
	/* The command line is argv0 and the arguments, as execve's. */
	err = exec_elf(interp, nv, envp, &o, execfn, NCB__HIDE_LDSO,
		       img.resv ? &img : NULL, to, misc, why, wl);
	if (img.resv)
		ncb_elf_unload(&img);
out:
	ncb_elf_close(e);
	free(real);
	free(interp);
	free(nv);
	return err;
}

/* Whether two descriptors or paths name the same file. */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Whether the exe link will be set (1) or left (0), as opts->exe asks and
 * the kernel permits; -errno if it must be set and cannot.  The link
 * cannot move while a mapping of the old file remains, and the old file
 * may be the interpreter the program needs.  A program that is this
 * process's own executable already has it right.
 */
static int exe_plan(const struct ncb_elf *e, const char *path,
		    const struct ncb_exec_opts *o, char *why, size_t wl)
{
	struct stat self, st;
	int err;

	if (o->exe != NCB_EXE_AUTO && o->exe != NCB_EXE_SET)
		return 0;
	if (stat("/proc/self/exe", &self) || fstat(e->fd, &st))
		err = -errno;
	else if (same_file(&self, &st))
		return 0;
	else if (e->interp && !stat(e->interp, &st) && same_file(&self, &st))
		err = -EBUSY;
	else
		err = ncb__exe_settable();
	if (!err)
		return 1;
	if (o->exe == NCB_EXE_AUTO)
		return 0;
	return ncb__why(why, wl, -err, "%s: cannot point /proc/self/exe at "
			"it: %s", path, err == -EPERM ? "that needs "
			"CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE" :
			err == -EBUSY ? "its interpreter is this process's "
			"own executable" : strerror(-err));
}

/* Whether the program is better run by its interpreter (opts->exe). */
static int by_interp(const struct ncb_elf *e, const struct ncb_exec_opts *o,
		     int set_exe)
{
	if (!e->interp || set_exe || o->exe == NCB_EXE_OFF ||
	    o->exe == NCB_EXE_SET)
		return 0;
	return o->exe == NCB_EXE_INTERP || ncb_elf_uses_origin(e) == 1;
}

/*
 * The image loaded elsewhere, its mappings to be moved to start by the
 * handover; *delta where it goes less where it is.
 */
static int load_moved(struct ncb_elf *e, uint64_t start,
		      struct ncb_elf_image *img, struct ncb__handover *ho,
		      uint64_t *delta, char *why, size_t wl)
{
	unsigned int n = ho->nmove;
	int err = ncb__elf_load_elsewhere(e, img, why, wl);

	if (err)
		return err;
	err = ncb__handover_move(ho, img->start, img->end, start);
	if (err) {
		ho->nmove = n;
		ncb_elf_unload(img);
		return ncb__why(why, wl, -err, "cannot list the image's "
				"mappings to move: %s", strerror(-err));
	}
	*delta = start - img->start;
	return 0;
}

/*
 * The program where execve would put it: a position-independent one
 * where ncb_exec_layout says (or at opts' base), an ET_EXEC one at its
 * own address.  Where only the caller's own mappings hold that range
 * (with ASLR off a position-independent caller sits at ELF_ET_DYN_BASE
 * too), it is loaded elsewhere and moved there by the handover (*delta).
 * A position-independent program whose place is taken otherwise, or
 * beyond this process's reach (an emulated guest's), goes where mmap
 * puts it, as one without an interpreter.
 */
static int load_program(struct ncb_elf *e, const struct ncb_exec_opts *o,
			const struct ncb__sys *sys, struct ncb_elf_image *img,
			uint64_t *brk, struct ncb__handover *ho,
			uint64_t *delta, char *why, size_t wl)
{
	struct ncb_exec_layout l = NCB_INIT(ncb_exec_layout);
	int fixed = o->base || e->eh.e_type == ET_EXEC;
	uint64_t want = e->eh.e_type == ET_EXEC ? e->lo : o->base;
	int err;

	*delta = 0;
	if (!want && !ncb__layout(e, sys, &l))
		want = l.base;
	if (want) {
		/* An ET_EXEC one's base, if given, must be its own. */
		err = load_at(e, e->eh.e_type == ET_EXEC ? o->base : want,
			      img, why, wl);
		if (err == -EEXIST && movable(want, e->hi - e->lo, sys))
			err = load_moved(e, want, img, ho, delta, why, wl);
		if (!err) {
			/* Drawn with the base, as the kernel draws both. */
			*brk = l.base ? l.brk : ncb__exec_brk(e, img->brk +
							      *delta, sys);
			return 0;
		}
		if (fixed)
			return err;
	}
	err = load_at(e, 0, img, why, wl);
	if (!err)
		*brk = ncb__exec_brk(e, img->brk, sys);
	return err;
}

/* An image as the program will see it: where the handover moves it. */
static struct ncb_elf_image moved(const struct ncb_elf_image *img,
				  uint64_t delta)
{
	struct ncb_elf_image m = *img;

	m.bias += delta;
	m.start += delta;
	m.end += delta;
	m.entry += delta;
	m.phdr = m.phdr ? m.phdr + delta : 0;
	m.brk += delta;
	return m;
}

/* The spans the program owns, for the handover and the stack's place. */
static void handover_keep(struct ncb__handover *ho,
			  const struct ncb_elf_image *prog,
			  const struct ncb_elf_image *interp,
			  const struct ncb_elf_image *held)
{
	const struct ncb_elf_image *img[] = { prog, interp, held };
	unsigned int i;

	ho->nkeep = 0;
	for (i = 0; i < 3; i++) {
		if (!img[i] || !img[i]->resv)
			continue;
		ho->keep[ho->nkeep].start = img[i]->start;
		ho->keep[ho->nkeep++].end = img[i]->end;
	}
}

/*
 * The stack's whole mapping (s->top has moved down past what was
 * pushed), and where the handover moves it if it was made elsewhere.
 */
static void stack_keep(struct ncb__handover *ho, const struct ncb__stack *s)
{
	struct ncb__move *mv = &ho->move[ho->nmove];

	ho->keep[ho->nkeep].start = (uintptr_t)s->base;
	ho->keep[ho->nkeep++].end = (uintptr_t)s->base + s->size;
	if (s->at == (uintptr_t)s->base)
		return;
	mv->from = (uintptr_t)s->base;
	mv->len = s->size;
	mv->to = s->at;
	ho->nmove++;
}

/*
 * The program's stack limit: the caller's RLIMIT_STACK, or the size it
 * asks for, which the program gets as its own (within the hard limit,
 * as setrlimit would).
 */
static int stack_limit(const struct ncb_exec_opts *o, uintptr_t *limit,
		       char *why, size_t wl)
{
	struct rlimit rl;

	if (ncb__stack_limit(o, limit))
		return ncb__why(why, wl, EINVAL, "a stack limit of %zu bytes: "
				"less than a page", o->stack_size);
	if (o->stack_size && !getrlimit(RLIMIT_STACK, &rl) &&
	    rl.rlim_max != RLIM_INFINITY && o->stack_size > rl.rlim_max)
		return ncb__why(why, wl, EPERM, "a stack limit of %zu bytes: "
				"above the hard limit of %ju", o->stack_size,
				(uintmax_t)rl.rlim_max);
	return 0;
}

/* The program's own stack limit, when one was asked for. */
static void set_stack_limit(const struct ncb_exec_opts *o)
{
	struct rlimit rl;

	if (!o->stack_size || getrlimit(RLIMIT_STACK, &rl))
		return;
	rl.rlim_cur = o->stack_size;
	(void)setrlimit(RLIMIT_STACK, &rl);
}

/* A stack limit for a message: "8388608 bytes", or "unlimited". */
static const char *limit_str(const struct ncb__stack *s)
{
	static __thread char buf[32];

	if (s->limit == UINTPTR_MAX)
		return "unlimited";
	snprintf(buf, sizeof(buf), "%ju bytes", (uintmax_t)s->limit);
	return buf;
}

static int exec_elf(const char *path, char *const argv[], char *const envp[],
		    const struct ncb_exec_opts *opts, const char *execfn,
		    ncb__hide hide, const struct ncb_elf_image *held,
		    uint64_t held_to, const struct ncb__misc_run *misc,
		    char *why, size_t wl)
{
	struct ncb_elf_image prog = NCB_INIT(ncb_elf_image);
	struct ncb_elf_image interp = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e = NULL, *ie = NULL;
	struct ncb__range stays[NCB__KEEP_MAX + 2];
	struct ncb_elf_image seen;
	struct exec_state *x = calloc(1, sizeof(*x));
	struct ncb__stack *s = x ? &x->s : NULL;
	struct ncb__handover *ho = x ? &x->ho : NULL;
	struct ncb__sys sys;
	uint64_t brk = 0, delta = 0;
	unsigned int nstays;
	int err, set_exe;

	/* On the heap: a stack limit may be small. */
	if (!x)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	ho->id.execfn = execfn;
	ho->exe_fd = -1;
	/* Read first: the program's descriptors may be the last allowed. */
	ncb__sys_read(&sys);
	ncb__stack_init(s, hide);
	if (misc)
		s->misc = *misc;
	err = stack_limit(opts, &s->limit, why, wl);
	if (!err)
		err = ncb_elf_open(&e, path, why, wl);
	if (err)
		goto out;
	if (!(opts->flags & NCB_EXEC_UNPRIVILEGED)) {
		err = gains_privilege(e->fd, path, why, wl);
		if (err)
			goto out;
	}
	set_exe = exe_plan(e, path, opts, why, wl);
	if (set_exe < 0) {
		err = set_exe;
		goto out;
	}
	if (by_interp(e, opts, set_exe) && e->eh.e_entry) {
		free(x);
		return exec_interp(e, path, argv, envp, opts, execfn, misc,
				   why, wl);
	}
	if (e->interp) {
		err = ncb__interp_open(e->interp, &ie, why, wl);
		if (err)
			goto out;
	}
	if (!e->eh.e_entry) {
		err = ncb__why(why, wl, ENOEXEC, "%s has no entry point: a "
			       "library, not a program", path);
		goto out;
	}
#if defined(__powerpc64__)
	/* ELFv1's entry is a function descriptor; the stub jumps to code. */
	if ((e->eh.e_flags & 3) != 2 || (ie && (ie->eh.e_flags & 3) != 2)) {
		err = ncb__why(why, wl, ENOEXEC, "%s: an ELFv1 program or "
			       "interpreter: this loader enters ELFv2 ones",
			       path);
		goto out;
	}
#endif
	if (!e->phdr && !ie) {
		err = ncb__why(why, wl, ENOEXEC, "%s: its program headers are "
			       "in no segment", path);
		goto out;
	}
	err = load_program(e, opts, &sys, &prog, &brk, ho, &delta, why, wl);
	if (!err && ie)
		err = load_at(ie, 0, &interp, why, wl);
	if (!err && held_to) {
		err = ncb__handover_move(ho, held->start, held->end, held_to);
		if (err)
			ncb__why(why, wl, -err, "cannot list the held image's "
				 "mappings to move: %s", strerror(-err));
	}
	if (err)
		goto out;
	seen = moved(&prog, delta);
	handover_keep(ho, &prog, &interp, held);
	/* Nor where the program goes. */
	memcpy(stays, ho->keep, ho->nkeep * sizeof(*stays));
	stays[ho->nkeep].start = seen.start;
	stays[ho->nkeep].end = seen.end;
	nstays = ho->nkeep + 1;
	if (held_to) {
		stays[nstays].start = held_to;
		stays[nstays++].end = held_to + (held->end - held->start);
	}
	err = ncb__stack_map(s, &sys, argv, envp, execfn, e->exec_stack,
			     stays, nstays);
	if (err == -E2BIG) {
		ncb__why(why, wl, E2BIG, "arguments and environment take more "
			 "than a stack limit of %s allows", limit_str(s));
		goto out;
	}
	if (err) {
		ncb__why(why, wl, -err, "no room for the stack: %s",
			 strerror(-err));
		goto out;
	}
	err = ncb__stack_build(s, argv, envp, execfn, &seen,
			       ie ? &interp : NULL, e->eh.e_phnum, &ho->sp);
	if (err) {
		ncb__why(why, wl, -err, "arguments and environment do not fit "
			 "a stack of %zu bytes", s->size);
		goto out;
	}
	stack_keep(ho, s);
	ho->entry = ie ? (uintptr_t)interp.entry : (uintptr_t)seen.entry;
	ncb__identity_image(&ho->id, e, &seen);
	ho->id.brk = brk;
	ho->id.start_stack = ho->sp;
	ho->id.arg_start = s->arg_start;
	ho->id.arg_end = s->arg_end;
	ho->id.env_start = s->env_start;
	ho->id.env_end = s->env_end;
	ho->id.auxv = (const uintptr_t *)s->auxv_at;
	ho->id.auxv_size = 2 * s->nauxv * sizeof(uintptr_t);
	err = handover_prepare(ho, &e, &ie, set_exe, opts);
	if (err) {
		ncb__why(why, wl, -err, "cannot prepare the handover to %s: "
			 "%s", path, strerror(-err));
		goto out;
	}
	/* From here on, nothing may fail: this process becomes the program. */
	reset_signals();
	close_on_exec();
	set_stack_limit(opts);
	(void)ncb__identity_comm(&ho->id);
	rseq_unregister();
	ncb__handover_go(ho);
out:
	ncb__stack_unmap(s);
	free(x);
	if (interp.resv)
		ncb_elf_unload(&interp);
	if (prog.resv)
		ncb_elf_unload(&prog);
	ncb_elf_close(e);
	ncb_elf_close(ie);
	return err;
}

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

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#define AT_RSEQ_ALIGN 28
#endif
#ifndef AT_HWCAP3
#define AT_HWCAP3 29
#define AT_HWCAP4 30
#endif

typedef unsigned long long ull;

#ifndef AT_BASE_PLATFORM
#define AT_BASE_PLATFORM 24
#endif
#ifndef AT_EXECFD
#define AT_EXECFD 2
#endif

/* Room for every entry a kernel writes today, and many more. */
#define AUXV_MAX 64

/* The per-program entries: the rest of the vector is the kernel's. */
struct aux_own {
	uintptr_t phdr, phnum, base, entry, random, platform, base_platform;
	uintptr_t execfn;
};

struct stack {
	char *base;		/* the mapping */
	size_t size;
	char *top;		/* strings are pushed down from here */
	uintptr_t auxv[2 * AUXV_MAX];
	unsigned int nauxv;
	uintptr_t kern[2 * AUXV_MAX];	/* this process's own vector */
	unsigned int nkern;
	uintptr_t *auxv_at;		/* the vector on the new stack */
	unsigned int hide;		/* argv not in the command line */
	uintptr_t arg_start, arg_end;	/* the strings, as mm records them */
	uintptr_t env_start, env_end;
};

static void aux(struct stack *s, uintptr_t type, uintptr_t val)
{
	s->auxv[2 * s->nauxv] = type;
	s->auxv[2 * s->nauxv + 1] = val;
	s->nauxv++;
}

/* Copy bytes to the top of the stack; NULL if it would not fit. */
static char *push(struct stack *s, const void *p, size_t n)
{
	if ((size_t)(s->top - s->base) < n + 4096)
		return NULL;
	s->top -= n;
	memcpy(s->top, p, n);
	return s->top;
}

static size_t count(char *const v[])
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Whether argv[i]'s string is the interpreter's, not the program's. */
static int hidden(unsigned int hide, size_t i)
{
	return i < 32 && (hide >> i & 1);
}

/*
 * Strings of v onto the stack, their new addresses into out: those that
 * hidden() says are in hide when which is 1, the others when 0.
 */
static int push_strings(struct stack *s, char *const v[], size_t n,
			uintptr_t *out, unsigned int hide, int which)
{
	size_t i = n;

	while (i--) {
		char *p;

		if (hidden(hide, i) != which)
			continue;
		p = push(s, v[i], strlen(v[i]) + 1);

		if (!p)
			return -E2BIG;
		out[i] = (uintptr_t)p;
	}
	out[n] = 0;
	return 0;
}

/*
 * This process's own auxiliary vector as the kernel wrote it, without its
 * AT_NULL: getauxval() answers with libc's rewritten values (glibc's
 * AT_HWCAP on x86_64 is its own) and cannot tell a zero from an absence.
 * Under qemu-user the file is the guest's vector.  0 if unreadable.
 */
static unsigned int read_own_auxv(uintptr_t *v, unsigned int max)
{
	size_t want = 2 * max * sizeof(*v), len = 0;
	unsigned int n;
	ssize_t r;
	int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (len < want &&
	       (r = read(fd, (char *)v + len, want - len)) > 0)
		len += (size_t)r;
	close(fd);
	for (n = 0; n < len / (2 * sizeof(*v)); n++)
		if (v[2 * n] == AT_NULL)
			return n;
	return 0;
}

/* The value the new program gets for an entry; 0: leave it out. */
static int aux_value(uintptr_t type, uintptr_t *val, const struct aux_own *o)
{
	switch (type) {
	case AT_PHDR:	*val = o->phdr;		break;
	case AT_PHENT:	*val = sizeof(ncb_phdr); break;
	case AT_PHNUM:	*val = o->phnum;	break;
	case AT_BASE:	*val = o->base;		break;
	case AT_FLAGS:	*val = 0;		break;
	/* The program's entry, not the interpreter's: ld.so looks. */
	case AT_ENTRY:	*val = o->entry;	break;
	case AT_UID:	*val = getuid();	break;
	case AT_EUID:	*val = geteuid();	break;
	case AT_GID:	*val = getgid();	break;
	case AT_EGID:	*val = getegid();	break;
	case AT_RANDOM:	*val = o->random;	break;
	case AT_EXECFN:	*val = o->execfn;	break;
	case AT_PLATFORM:	*val = o->platform;	return !!*val;
	case AT_BASE_PLATFORM:	*val = o->base_platform; return !!*val;
	/* No descriptor of ours is the program's. */
	case AT_EXECFD:	return 0;
	}
	return 1;
}

/*
 * The vector the kernel would build for the program: this process's own,
 * entry for entry and in its order (hardware capabilities, the vDSO,
 * AT_SECURE, zeros kept), with the per-program entries replaced.  Where
 * the own vector cannot be read, the entries every program needs.
 */
static void build_auxv(struct stack *s, const struct aux_own *o)
{
	static const uintptr_t needed[] = {
		AT_PHDR, AT_PHENT, AT_PHNUM, AT_PAGESZ, AT_BASE, AT_FLAGS,
		AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE,
		AT_RANDOM, AT_EXECFN, AT_PLATFORM,
	};
	unsigned int i;
	uintptr_t v;

	for (i = 0; i < s->nkern && s->nauxv < AUXV_MAX - 1; i++) {
		v = s->kern[2 * i + 1];
		if (aux_value(s->kern[2 * i], &v, o))
			aux(s, s->kern[2 * i], v);
	}
	for (i = 0; !s->nkern && i < sizeof(needed) / sizeof(needed[0]); i++) {
		v = 0;
		if (needed[i] == AT_PAGESZ)
			v = ncb__probe()->page_size;
		else if (needed[i] == AT_SECURE)
			v = getauxval(AT_SECURE);
		if (aux_value(needed[i], &v, o))
			aux(s, needed[i], v);
	}
	aux(s, AT_NULL, 0);
}

/* The string an entry of this process's own vector points to, or NULL. */
static const char *own_string(const struct stack *s, uintptr_t type)
{
	unsigned int i;

	for (i = 0; i < s->nkern; i++)
		if (s->kern[2 * i] == type)
			return (const char *)s->kern[2 * i + 1];
	return s->nkern ? NULL : (const char *)getauxval(type);
}

/* A string of the vector onto the stack: 0 if none, 1 if it did not fit. */
static uintptr_t push_own_string(struct stack *s, uintptr_t type)
{
	const char *str = own_string(s, type);
	char *p;

	if (!str)
		return 0;
	p = push(s, str, strlen(str) + 1);
	return p ? (uintptr_t)p : 1;
}

/*
 * The initial stack as the kernel lays it out: strings at the top, then
 * the 16 random bytes, then (16-byte aligned) argc, argv, NULL, envp, NULL
 * and the auxiliary vector.
 */
static int build_stack(struct stack *s, char *const argv[],
		       char *const envp[], const char *execfn,
		       const struct ncb_elf_image *prog,
		       const struct ncb_elf_image *interp, unsigned int phnum,
		       uintptr_t *sp)
{
	size_t argc = count(argv), envc = count(envp), words, i;
	struct aux_own o = {
		.phdr = (uintptr_t)prog->phdr, .phnum = phnum,
		.base = interp ? (uintptr_t)interp->bias : 0,
		.entry = (uintptr_t)prog->entry,
	};
	uintptr_t *av, *ev, *w;
	unsigned char bytes[16];
	char *p;
	int err = -E2BIG;

	av = calloc(argc + 1, sizeof(*av));
	ev = calloc(envc + 1, sizeof(*ev));
	if (!av || !ev) {
		err = -ENOMEM;
		goto out;
	}
	p = push(s, execfn, strlen(execfn) + 1);
	/*
	 * The interpreter's own arguments go above the environment, so that
	 * the program's lie in one piece below it: its command line.
	 */
	if (!p || push_strings(s, argv, argc, av, s->hide, 1) ||
	    push_strings(s, envp, envc, ev, 0, 0) ||
	    push_strings(s, argv, argc, av, s->hide, 0))
		goto out;
	o.execfn = (uintptr_t)p;
	for (i = 0; hidden(s->hide, i); i++)
		;
	s->arg_start = av[i];
	for (i = argc - 1; hidden(s->hide, i); i--)
		;
	s->arg_end = av[i] + strlen(argv[i]) + 1;
	s->env_start = envc ? ev[0] : s->arg_end;
	s->env_end = envc ? ev[envc - 1] + strlen(envp[envc - 1]) + 1
			  : s->env_start;
	o.platform = push_own_string(s, AT_PLATFORM);
	o.base_platform = push_own_string(s, AT_BASE_PLATFORM);
	if (o.platform == 1 || o.base_platform == 1)
		goto out;
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		err = -errno;
		goto out;
	}
	p = push(s, bytes, sizeof(bytes));
	if (!p)
		goto out;
	o.random = (uintptr_t)p;
	build_auxv(s, &o);
	words = 1 + argc + 1 + envc + 1 + 2 * s->nauxv;
	w = (uintptr_t *)(((uintptr_t)s->top - words * sizeof(*w)) &
			  ~(uintptr_t)15);
	if ((char *)w < s->base + 4096)
		goto out;
	*sp = (uintptr_t)w;
	*w++ = argc;
	for (i = 0; i <= argc; i++)
		*w++ = av[i];
	for (i = 0; i <= envc; i++)
		*w++ = ev[i];
	memcpy(w, s->auxv, 2 * s->nauxv * sizeof(*w));
	s->auxv_at = w;
	err = 0;
out:
	free(av);
	free(ev);
	return err;
}

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
 * Whether an emulator runs this process: it answers for /proc/self/exe
 * with the guest's program, while the link of this thread's own entry,
 * which it passes through, names the emulator.  Natively they agree.
 */
static int emulated(void)
{
	char self[PATH_MAX], task[64], real[PATH_MAX];
	ssize_t a, b;

	snprintf(task, sizeof(task), "/proc/self/task/%ld/exe",
		 (long)syscall(SYS_gettid));
	a = readlink("/proc/self/exe", self, sizeof(self));
	b = readlink(task, real, sizeof(real));
	return a > 0 && b > 0 && (a != b || memcmp(self, real, (size_t)a));
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
	if (emulated())
		emulator_threads = count_threads();
}

/*
 * The program's threads besides the caller, decided at the call:
 * natively every other thread is the program's, whenever it started
 * (a library loaded late must not take the threads there were then as
 * allowed); under an emulator, those past its own.
 */
static unsigned int other_threads(void)
{
	unsigned int all = count_threads();
	unsigned int own = emulator_threads > 1 ? emulator_threads : 1;

	return all > own ? all - own : 0;
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

/* The signature each architecture's libc registers with (glibc's rseq.h). */
#if defined(__x86_64__) || defined(__i386__)
#define RSEQ_SIG 0x53053053
#elif defined(__aarch64__)
#define RSEQ_SIG 0xd428bc00
#elif defined(__arm__) && !defined(__ARMEB__)
#define RSEQ_SIG 0xe7f5def3
#elif defined(__riscv) && __riscv_xlen == 64
#define RSEQ_SIG 0xf1401073
#elif defined(__powerpc64__)
#define RSEQ_SIG 0x0fe5000b
#elif defined(__s390x__)
#define RSEQ_SIG 0xb2ff0fff
#endif

/* What glibc's __rseq_offset is relative to. */
static inline char *thread_pointer(void)
{
#if defined(__powerpc64__)
	char *tp;

	/* gcc 12 has no __builtin_thread_pointer here: the ABI's r13. */
	__asm__("mr %0, 13" : "=r"(tp));
	return tp;
#else
	return __builtin_thread_pointer();
#endif
}

/*
 * A registration outlives the jump: the kernel would keep writing into
 * this libc's thread block, and the new libc could not register its own.
 */
static void rseq_unregister(void)
{
#if defined(RSEQ_SIG) && defined(SYS_rseq)
	char *area;

	if (!&__rseq_size || !&__rseq_offset || !__rseq_size)
		return;
	area = thread_pointer() + __rseq_offset;
	/* The length must be the registered one: glibc used 32 bytes. */
	if (syscall(SYS_rseq, area, __rseq_size, 1, RSEQ_SIG) &&
	    errno == EINVAL)
		syscall(SYS_rseq, area, 32, 1, RSEQ_SIG);
#endif
}

static size_t stack_size(const struct ncb_exec_opts *o)
{
	struct rlimit rl;
	size_t size = o->stack_size;

	if (!size && !getrlimit(RLIMIT_STACK, &rl))
		size = rl.rlim_cur == RLIM_INFINITY ? 0 : (size_t)rl.rlim_cur;
	if (!size || size > (64u << 20))
		size = 8u << 20;
	if (size < (128u << 10))
		size = 128u << 10;
	return ncb__page_align(size);
}

/* The interpreter must be a shared object with none of its own. */
static int open_interp(const char *path, struct ncb_elf **ie, char *why,
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
		err = ncb__why(why, wl, ELIBBAD, "interpreter %s has an "
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

static int exec_elf(const char *path, char *const argv[], char *const envp[],
		    const struct ncb_exec_opts *opts, const char *execfn,
		    unsigned int hide, const struct ncb_elf_image *held,
		    char *why, size_t wl);

/* The kernel's buffer for a file's first bytes (BINPRM_BUF_SIZE). */
#define SCRIPT_BUF 256
/* exec_binprm: a sixth interpreter is ELOOP, so five scripts nest. */
#define SCRIPT_DEPTH 5

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The first byte in [p, last] that is not blank, or NULL. */
static char *skip_blank(char *p, char *last)
{
	for (; p <= last; p++)
		if (!blank(*p))
			return p;
	return NULL;
}

/* The first blank or NUL in [p, last], or NULL. */
static char *find_end(char *p, char *last)
{
	for (; p <= last; p++)
		if (blank(*p) || !*p)
			return p;
	return NULL;
}

/*
 * The "#!" line as fs/binfmt_script.c reads it from the file's first 256
 * bytes (zero-padded): up to a newline (none past a NUL); without one,
 * the interpreter's name must end within the buffer, else it may be cut
 * off (ENOEXEC), and the line ends at the buffer's last byte.  The name,
 * then optionally one argument: the rest of the line, blanks trimmed.
 */
static int parse_script(char *buf, char **name, char **arg)
{
	char *last = buf + SCRIPT_BUF - 1, *end, *sep;

	end = memchr(buf, '\n', strnlen(buf, SCRIPT_BUF));
	if (!end) {
		end = skip_blank(buf + 2, last);
		if (!end || !find_end(end, last))
			return -ENOEXEC;
		end = last;
	}
	while (blank(end[-1]))
		end--;
	*name = skip_blank(buf + 2, end);
	if (!*name || *name == end)
		return -ENOEXEC;
	*arg = NULL;
	sep = find_end(*name, end);
	if (sep && *sep)
		*arg = skip_blank(sep, end);
	*end = '\0';
	if (*arg)
		*sep = '\0';
	return 0;
}

/*
 * The "#!" line of path, parsed in buf: 1, 0 if path is no script (or
 * cannot be read: the loader then says why), -ENOEXEC for a line that
 * names no interpreter.
 */
static int read_script(const char *path, char *buf, char **name,
		       char **arg)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	memset(buf, 0, SCRIPT_BUF);
	r = read(fd, buf, SCRIPT_BUF);
	close(fd);
	if (r < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	return parse_script(buf, name, arg) ? -ENOEXEC : 1;
}

/*
 * The interpreter a "#!" script names (for the tool's plan): 1 and its
 * path in out, 0 if path is no script, -ENOEXEC, -ENAMETOOLONG.
 */
int ncb__script_interp(const char *path, char *out, size_t len)
{
	char buf[SCRIPT_BUF], *name, *arg;
	int ret = read_script(path, buf, &name, &arg);

	if (ret <= 0)
		return ret;
	if (strlen(name) >= len)
		return -ENAMETOOLONG;
	strcpy(out, name);
	return 1;
}

/*
 * A "#!" script runs its interpreter: the new arguments are the
 * interpreter, its argument if any, the script's path, then the rest.
 * 1 if path is a script (*argvp and *line are then the caller's to free),
 * 0 if not, or -errno.
 */
static int script(const char *path, char *const **argvp, char **line,
		  char *why, size_t wl)
{
	char buf[SCRIPT_BUF], *name, *arg, **nv;
	char *const *argv = *argvp;
	size_t n = 0, i;
	int ret = read_script(path, buf, &name, &arg);

	if (!ret)
		return 0;
	if (ret < 0)
		return ncb__why(why, wl, ENOEXEC, "%s: its \"#!\" line names "
				"no interpreter, or one cut off at %d bytes",
				path, SCRIPT_BUF);
	while (argv[n])
		n++;
	*line = malloc(sizeof(buf) + (n + 3) * sizeof(char *));
	if (!*line)
		return ncb__why(why, wl, ENOMEM, "out of memory");
	memcpy(*line, buf, sizeof(buf));
	nv = (char **)(void *)(*line + sizeof(buf));
	i = 0;
	nv[i++] = *line + (name - buf);
	if (arg)
		nv[i++] = *line + (arg - buf);
	nv[i++] = (char *)path;
	/* The script's own argv[0] gives way to its path. */
	for (n = n ? 1 : 0; argv[n]; n++)
		nv[i++] = argv[n];
	nv[i] = NULL;
	*argvp = nv;
	return 1;
}

int ncb_exec(const char *path, char *const argv[], char *const envp[],
	     const struct ncb_exec_opts *opts, char *why, size_t wl)
{
	char *lines[SCRIPT_DEPTH + 1] = { NULL }, *const *av = argv;
	static char *const empty[] = { "", NULL };
	struct ncb_exec_opts o;
	const char *execfn;
	unsigned int threads;
	int depth, err;

	if (!path || !argv)
		return ncb__why(why, wl, EINVAL, "no program given");
#ifndef NCB__HAVE_HANDOVER
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
	threads = other_threads();
	if (threads)
		return ncb__why(why, wl, EBUSY, "this process has %u threads: "
				"the caller must be the only one",
				threads + 1);
	for (depth = 0; depth <= SCRIPT_DEPTH; depth++) {
		/* As execve: the file must be executable by us. */
		if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS)) {
			err = ncb__why(why, wl, errno, "%s: %s", path,
				       strerror(errno));
			break;
		}
		err = script(path, &av, &lines[depth], why, wl);
		if (err <= 0)
			break;
		path = av[0];
		err = 0;
	}
	if (depth > SCRIPT_DEPTH)
		err = ncb__why(why, wl, ELOOP, "%s: scripts nested more than "
			       "%d deep", execfn, SCRIPT_DEPTH);
	if (!err)
		err = exec_elf(path, av, envp, &o, execfn, 0, NULL, why, wl);
	for (depth = 0; depth <= SCRIPT_DEPTH; depth++)
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
 * Run the program's interpreter as the program ("ld.so --argv0 ARGV0
 * /real/path ARGS"): both glibc's and musl's take $ORIGIN from the path
 * they are given.  An ET_EXEC image's span is first loaded here, so that
 * the interpreter's MAP_FIXED of it lands on nothing but our own pages.
 * Returns only on failure.
 */
static int exec_interp(struct ncb_elf *e, const char *path,
		       char *const argv[], char *const envp[],
		       const struct ncb_exec_opts *opts, const char *execfn,
		       char *why, size_t wl)
{
	struct ncb_exec_opts o = *opts;
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	char *real = realpath(path, NULL), *interp = NULL, **nv = NULL;
	size_t n = count(argv), i;
	int err = -ENOMEM;

	interp = strdup(e->interp);
	nv = calloc(n + 4, sizeof(*nv));
	if (!real || !interp || !nv) {
		err = ncb__why(why, wl, real ? ENOMEM : errno, "%s: %s", path,
			       strerror(real ? ENOMEM : errno));
		goto out;
	}
	nv[0] = interp;
	nv[1] = "--argv0";
	nv[2] = argv[0];
	nv[3] = real;
	for (i = 1; i < n; i++)
		nv[3 + i] = argv[i];
	if (e->eh.e_type == ET_EXEC) {
		err = load_at(e, 0, &img, why, wl);
		if (err)
			goto out;
	}
	ncb_elf_close(e);
	e = NULL;
	o.exe = NCB_EXE_OFF;
	/* The command line is argv0 and the arguments, as execve's. */
	err = exec_elf(interp, nv, envp, &o, execfn, 1 << 0 | 1 << 1 | 1 << 3,
		       img.resv ? &img : NULL, why, wl);
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
 * The program where execve would put it (ncb_exec_layout); if that is
 * taken, or beyond this process's reach (an emulated guest's), where
 * mmap would, as for a program without an interpreter.
 */
static int load_program(struct ncb_elf *e, const struct ncb_exec_opts *o,
			const struct ncb__sys *sys, struct ncb_elf_image *img,
			uint64_t *brk, char *why, size_t wl)
{
	struct ncb_exec_layout l = NCB_INIT(ncb_exec_layout);
	int err;

	if (o->base || e->eh.e_type != ET_DYN || ncb__layout(e, sys, &l) ||
	    !l.base || load_at(e, l.base, img, why, wl)) {
		err = load_at(e, o->base, img, why, wl);
		if (!err)
			*brk = ncb__exec_brk(e, img->brk, sys);
		return err;
	}
	/* Drawn with the base, as the kernel draws both for one exec. */
	*brk = l.brk;
	return 0;
}

/* The spans the program owns, and the exe link, for the handover. */
static void handover_keep(struct ncb__handover *ho,
			  const struct ncb_elf_image *prog,
			  const struct ncb_elf_image *interp,
			  const struct ncb_elf_image *held,
			  const struct stack *s)
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
	/* Its whole mapping: s->top has moved down past what was pushed. */
	ho->keep[ho->nkeep].start = (uintptr_t)s->base;
	ho->keep[ho->nkeep++].end = (uintptr_t)s->base + s->size;
}

static int exec_elf(const char *path, char *const argv[], char *const envp[],
		    const struct ncb_exec_opts *opts, const char *execfn,
		    unsigned int hide, const struct ncb_elf_image *held,
		    char *why, size_t wl)
{
	struct ncb_elf_image prog = NCB_INIT(ncb_elf_image);
	struct ncb_elf_image interp = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e = NULL, *ie = NULL;
	struct ncb__handover ho = { .id.execfn = execfn, .exe_fd = -1 };
	struct stack s = { 0 };
	struct ncb__sys sys;
	uint64_t brk = 0;
	int err, set_exe;

	/* Read first: the program's descriptors may be the last allowed. */
	ncb__sys_read(&sys);
	s.nkern = read_own_auxv(s.kern, AUXV_MAX);
	err = ncb_elf_open(&e, path, why, wl);
	if (err)
		return err;
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
	if (by_interp(e, opts, set_exe) && e->eh.e_entry)
		return exec_interp(e, path, argv, envp, opts, execfn, why, wl);
	if (e->interp) {
		err = open_interp(e->interp, &ie, why, wl);
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
	err = load_program(e, opts, &sys, &prog, &brk, why, wl);
	if (!err && ie)
		err = load_at(ie, 0, &interp, why, wl);
	if (err)
		goto out;
	s.size = stack_size(opts);
	s.hide = hide;
	/* Without an address the kernel chooses: nothing can be replaced. */
	s.base = mmap(NULL, s.size, PROT_READ | PROT_WRITE |
		      (e->exec_stack ? PROT_EXEC : 0),
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s.base == MAP_FAILED) {
		err = ncb__why(why, wl, errno, "no room for a stack of %zu "
			       "bytes", s.size);
		s.base = NULL;
		goto out;
	}
	s.top = s.base + s.size;
	err = build_stack(&s, argv, envp, execfn, &prog, ie ? &interp : NULL,
			  e->eh.e_phnum, &ho.sp);
	if (err) {
		ncb__why(why, wl, -err, "arguments and environment do not fit "
			 "a stack of %zu bytes", s.size);
		goto out;
	}
	ho.entry = ie ? (uintptr_t)interp.entry : (uintptr_t)prog.entry;
	ncb__identity_image(&ho.id, e, &prog);
	ho.id.brk = brk;
	ho.id.start_stack = ho.sp;
	ho.id.arg_start = s.arg_start;
	ho.id.arg_end = s.arg_end;
	ho.id.env_start = s.env_start;
	ho.id.env_end = s.env_end;
	ho.id.auxv = s.auxv_at;
	ho.id.auxv_size = 2 * s.nauxv * sizeof(uintptr_t);
	handover_keep(&ho, &prog, &interp, held, &s);
	err = handover_prepare(&ho, &e, &ie, set_exe, opts);
	if (err) {
		ncb__why(why, wl, -err, "cannot prepare the handover to %s: "
			 "%s", path, strerror(-err));
		goto out;
	}
	/* From here on, nothing may fail: this process becomes the program. */
	reset_signals();
	close_on_exec();
	(void)ncb__identity_comm(&ho.id);
	rseq_unregister();
	ncb__handover_go(&ho);
out:
	if (s.base)
		munmap(s.base, s.size);
	if (interp.resv)
		ncb_elf_unload(&interp);
	if (prog.resv)
		ncb_elf_unload(&prog);
	ncb_elf_close(e);
	ncb_elf_close(ie);
	return err;
}

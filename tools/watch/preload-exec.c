/* SPDX-License-Identifier: MIT */
/*
 * The programs a watched process runs: what the library will not see in
 * them is said before they run, as `watch --preload` says it of the
 * program it starts (unseen.h), and one run without the library in its
 * LD_PRELOAD (a program that cleared it, or gave its child an
 * environment of its own) is said to run unwatched.  The exec family is
 * taken for that alone and run as the C library runs it: execve is the
 * system call; execvpe's search of PATH and its fallback for a script
 * without "#!", and fexecve's calls, are the C library's (glibc 2.36,
 * posix/execvpe.c and sysdeps/unix/sysv/linux/fexecve.c: their
 * behaviour, made on the system calls here, where asking the loader for
 * the C library's own would cost every process's start-up, a tenth of it
 * under an emulator); execv, execl and execle are execve with the
 * caller's environment or a list, execvp and execlp execvpe.
 * posix_spawn is not taken: the C library has two of it (an
 * older program's runs a script without "#!" through /bin/sh), which
 * one interposer cannot both be.  system(3) and popen(3) run /bin/sh,
 * which loads the library and says so of what it runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "preload.h"
#include "unseen.h"

#define PL_API __attribute__((visibility("default")))

extern char **environ;

/*
 * A pointer the headers promise is not NULL, which a program may pass
 * all the same (the kernel's EFAULT): looked at without the compiler
 * taking the promise for a fact.
 */
static int given(const void *p)
{
	__asm__("" : "+r"(p));
	return p != NULL;
}

/* Whether the environment loads the library (by its installed name). */
static int preloaded(char *const envp[])
{
	size_t i;

	if (!given(envp))
		return 0;
	for (i = 0; envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) &&
		    strstr(envp[i] + 11, "libnoclobber-preload"))
			return 1;
	return 0;
}

/* The room of the look at a program: static, under the lock. */
static struct wu_scratch scratch;
static char found[PATH_MAX];

/* PATH as execvp(3) reads it: unset, the C library's default. */
static const char *path_list(void)
{
	const char *path = getenv("PATH");

	return path ? path : "/bin:/usr/bin";
}

/* "dir/file" in buf, dir of n bytes (file alone for n 0), file of flen. */
static char *candidate(char *buf, const char *dir, size_t n,
		       const char *file, size_t flen)
{
	memcpy(buf, dir, n);
	buf[n] = '/';
	n += !!n;
	memcpy(buf + n, file, flen);
	buf[n + flen] = '\0';
	return buf;
}

/* Whether path is an executable regular file. */
static int runnable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/*
 * The file a search of PATH would run, as execvp(3) searches: each entry
 * in turn (an empty one the current directory, named "."), the first
 * executable regular file; NULL if none, a name with a slash itself.
 */
static const char *search(const char *file)
{
	const char *p, *end;
	size_t n, len = strlen(file);

	if (strchr(file, '/'))
		return file;
	if (!*file)
		return NULL;
	for (p = path_list();; p = end + 1) {
		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		if (n + 2 + len < sizeof(found) &&
		    runnable(n ? candidate(found, p, n, file, len) :
			     candidate(found, ".", 1, file, len)))
			return found;
		if (!*end)
			return NULL;
	}
}

/*
 * What will not be seen in the program at path (or open at fd), said;
 * nothing for what is no regular file (the call fails).
 */
static void look(const char *path, int fd, char *const envp[])
{
	int u = wunseen(path, fd, &scratch), bit;

	if (u < 0)
		return;
	if (!preloaded(envp))
		pl_warn_for(path, "run without libnoclobber-preload.so in "
			    "its LD_PRELOAD: nothing is watched "
			    WU_WATCH_COVERS);
	else
		for (bit = WU_SETID; bit <= WU_GO; bit <<= 1)
			if (u & bit)
				pl_warn_for(path, wunseen_text(bit));
}

/* The /proc link of an fd (fd >= 0), in link[32]. */
static char *fd_link(int fd, char link[32])
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	size_t n = 0, at = sizeof(head) - 1;

	memcpy(link, head, at);
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10));
	while (n)
		link[at++] = digits[--n];
	link[at] = '\0';
	return link;
}

/* The file an fd names, as its /proc link says (its link if none). */
static const char *fd_path(int fd, char *buf, size_t size)
{
	char link[32];
	ssize_t len = readlink(fd_link(fd, link), buf, size - 1);

	if (len <= 0) {
		memcpy(buf, link, strlen(link) + 1);
		return buf;
	}
	buf[len] = '\0';
	return buf;
}

/*
 * Before a program is run: the file (searched for in PATH with
 * search_path; the one open at fd if fd >= 0) looked at, errno as the
 * caller left it; nothing for a call the lock refuses (from a signal
 * handler that interrupted this library's own work).
 */
static void about_to_run(const char *file, int search_path, int fd,
			 char *const envp[])
{
	int saved = errno;
	const char *path = file;

	pl_ensure();
	/* A look not worth holding an exec up for long (a raw fork's
	   child may find the lock held for good). */
	if (pl_lock_within(0.05))
		return;
	pl_image_ends();
	if (fd >= 0)
		path = fd_path(fd, found, sizeof(found));
	else if (search_path && given(file))
		path = search(file);
	if (given(path) && *path)
		look(path, fd, envp);
	pl_unlock();
	errno = saved;
}

/* execve, the system call itself: -errno (it returns only to fail). */
static int sys_execve(const char *path, char *const argv[],
		      char *const envp[])
{
	return (int)pl_sys(SYS_execve, (long)path, (long)argv, (long)envp, 0,
			   0, 0);
}

PL_API int execve(const char *path, char *const argv[], char *const envp[])
{
	about_to_run(path, 0, -1, envp);
	errno = -sys_execve(path, argv, envp);
	return -1;
}

PL_API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

/*
 * A file the kernel would not run (ENOEXEC: a script without "#!") run
 * by /bin/sh, as the C library's execvpe does: "/bin/sh path argv[1]...",
 * the argument list on the stack as it builds it.  -errno.
 */
static int as_script(const char *path, char *const argv[],
		     char *const envp[])
{
	size_t argc = 0;

	while (given(argv) && argv[argc])
		if (++argc == INT_MAX - 1)
			return -E2BIG;

	char *sh_argv[argc > 1 ? argc + 2 : 3];

	sh_argv[0] = (char *)"/bin/sh";
	sh_argv[1] = (char *)path;
	if (argc > 1)
		memcpy(sh_argv + 2, argv + 1, argc * sizeof(*argv));
	else
		sh_argv[2] = NULL;
	return sys_execve(sh_argv[0], sh_argv, envp);
}

/* One try of execvpe's: the file, or /bin/sh for it.  -errno. */
static int try_exec(const char *path, char *const argv[],
		    char *const envp[])
{
	int e = sys_execve(path, argv, envp);

	return e == -ENOEXEC ? as_script(path, argv, envp) : e;
}

/*
 * Whether execvpe's search goes on past an error: one that says no
 * program is there (or none it may run: EACCES, remembered).
 */
static int search_goes_on(int e)
{
	switch (e) {
	case -EACCES:
	case -ENOENT:
	case -ESTALE:
	case -ENOTDIR:
	case -ENODEV:
	case -ETIMEDOUT:
		return 1;
	default:
		return 0;
	}
}

/*
 * execvpe's search: a name with a slash run as it is; else each entry of
 * PATH in turn (an empty one the current directory; PATH unset,
 * "/bin:/usr/bin"), going on past the errors that say no program is
 * there (EACCES said if nothing ran, else the last of them) and stopping
 * at any other.  Bounded as the C library bounds it, on the stack as it
 * is: an entry of PATH_MAX or more skipped, a name cut one byte past
 * NAME_MAX (the kernel's ENAMETOOLONG, once a directory is found).
 * -errno.
 */
static int exec_search(const char *file, char *const argv[],
		       char *const envp[])
{
	const char *path, *p, *end;
	int e = -ENOENT, eacces = 0;
	size_t n, plen, flen;

	if (!*file)
		return -ENOENT;
	if (strchr(file, '/'))
		return try_exec(file, argv, envp);
	path = path_list();
	plen = strnlen(path, PATH_MAX - 1) + 1;
	flen = strnlen(file, NAME_MAX + 1);

	char buf[plen + flen + 1];

	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		if (n < plen) {
			e = try_exec(candidate(buf, p, n, file, flen), argv,
				     envp);
			if (!search_goes_on(e))
				return e;
			eacces |= e == -EACCES;
		}
		if (!*end)
			return eacces ? -EACCES : e;
	}
}

PL_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!given(file)) {
		errno = EFAULT;
		return -1;
	}
	about_to_run(file, 1, -1, envp);
	errno = -exec_search(file, argv, envp);
	return -1;
}

PL_API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/*
 * fexecve: execveat of the file itself (Linux 3.19); where the kernel
 * has no execveat, the file's /proc link run, and ENOSYS if /proc is not
 * there to run it by.
 */
PL_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	char link[32];
	struct stat st;
	long r;

	if (fd < 0 || !given(argv) || !given(envp)) {
		errno = EINVAL;
		return -1;
	}
	about_to_run(NULL, 0, fd, envp);
	r = pl_sys(SYS_execveat, fd, (long)"", (long)argv, (long)envp,
		   AT_EMPTY_PATH, 0);
	if (r == -ENOSYS) {
		r = sys_execve(fd_link(fd, link), argv, envp);
		if (stat("/proc/self/fd", &st) && errno == ENOENT)
			r = -ENOSYS;
	}
	errno = (int)-r;
	return -1;
}

/* The list of a call of the execl family, NULL included: its length. */
static size_t list_len(const char *arg, va_list ap)
{
	size_t n = 1;

	while (arg) {
		n++;
		arg = va_arg(ap, const char *);
	}
	return n;
}

/* The list into argv; with envp, what follows its NULL (execle's). */
static char *const *list(char **argv, const char *arg, va_list ap,
			 int envp)
{
	size_t i = 0;

	argv[i] = (char *)arg;
	while (argv[i])
		argv[++i] = va_arg(ap, char *);
	return envp ? va_arg(ap, char *const *) : environ;
}

/*
 * The execl family's list after arg as argv, on the stack as the C
 * library builds it; envp the pointer after its NULL for execle (with),
 * the caller's environment for the others.
 */
#define TAKE_LIST(argv, envp, arg, with)				\
	va_list ap_;							\
	size_t n_;							\
									\
	va_start(ap_, arg);						\
	n_ = list_len(arg, ap_);					\
	va_end(ap_);							\
	char *argv[n_];							\
	va_start(ap_, arg);						\
	envp = list(argv, arg, ap_, with);				\
	va_end(ap_)

PL_API int execl(const char *path, const char *arg, ...)
{
	char *const *envp;

	TAKE_LIST(argv, envp, arg, 0);
	return execve(path, argv, envp);
}

PL_API int execle(const char *path, const char *arg, ...)
{
	char *const *envp;

	TAKE_LIST(argv, envp, arg, 1);
	return execve(path, argv, envp);
}

PL_API int execlp(const char *file, const char *arg, ...)
{
	char *const *envp;

	TAKE_LIST(argv, envp, arg, 0);
	return execvpe(file, argv, envp);
}

/* SPDX-License-Identifier: MIT */
/*
 * The programs a watched process runs: what the library will not see in
 * them is said before they run, as `watch --preload` says it of the
 * program it starts (unseen.h), and one run without the library in its
 * LD_PRELOAD (a program that cleared it, or gave its child an
 * environment of its own) is said to run unwatched.  The exec family
 * and posix_spawn are taken for that alone and passed on unchanged: to
 * the C library's execve, execvpe, fexecve and posix_spawn(p), which the
 * others are made of (execv, execl and execle are execve with the
 * caller's environment or a list; execvp and execlp execvpe with it).
 * system(3) and popen(3) run /bin/sh, which loads the library and says
 * so of what it runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "preload.h"
#include "unseen.h"

#define PL_API __attribute__((visibility("default")))

extern char **environ;

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int spawn_fn(pid_t *, const char *,
		     const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

/*
 * The C library's, found at the first call or before a fork: dlsym may
 * take the loader's lock, which a fork child of a threaded process may
 * find held for good.
 */
static struct {
	execve_fn *execve, *execvpe;
	fexecve_fn *fexecve;
	spawn_fn *spawn, *spawnp;
	int found;
} libc;

void pl_exec_prepare(void)
{
	if (__atomic_load_n(&libc.found, __ATOMIC_ACQUIRE))
		return;
	libc.execve = (execve_fn *)dlsym(RTLD_NEXT, "execve");
	libc.execvpe = (execve_fn *)dlsym(RTLD_NEXT, "execvpe");
	libc.fexecve = (fexecve_fn *)dlsym(RTLD_NEXT, "fexecve");
	libc.spawn = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawn");
	libc.spawnp = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawnp");
	__atomic_store_n(&libc.found, 1, __ATOMIC_RELEASE);
}

/* Whether the environment loads the library (by its installed name). */
static int preloaded(char *const envp[])
{
	size_t i;

	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) &&
		    strstr(envp[i] + 11, "libnoclobber-preload"))
			return 1;
	return 0;
}

/*
 * What will not be seen in the program at path (or open at fd), said;
 * nothing for a file that is not there (the call fails).  A call from a
 * signal handler that interrupted this library's own work says nothing.
 */
static void check(const char *path, int fd, char *const envp[])
{
	int f = fd >= 0 ? fd : open(path, O_RDONLY | O_CLOEXEC);
	unsigned int u = 0, bit;

	if (f < 0 && errno == ENOENT)
		return;
	if (f >= 0)
		u = wunseen(f);
	if (f >= 0 && fd < 0)
		close(f);
	pl_ensure();
	if (pl_lock())
		return;
	if (!preloaded(envp))
		pl_warn_for(path, "run without libnoclobber-preload.so in "
			    "its LD_PRELOAD: nothing is watched "
			    WU_WATCH_COVERS);
	else
		for (bit = WU_SETID; bit <= WU_GO; bit <<= 1)
			if (u & bit)
				pl_warn_for(path, wunseen_text(bit));
	pl_unlock();
}

/*
 * The file a search of PATH would run, as execvp(3) searches (unset:
 * the C library's default); "" if none is found, a name with a slash
 * itself.
 */
static const char *search(const char *file, char buf[PATH_MAX])
{
	const char *path = getenv("PATH"), *p, *end;
	size_t n, len = strlen(file);

	if (strchr(file, '/') || !*file)
		return file;
	for (p = path ? path : "/bin:/usr/bin"; *p; p = end + !!*end) {
		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		if (n + 1 + len >= PATH_MAX)
			continue;
		memcpy(buf, p, n);
		/* An empty entry is the current directory. */
		if (!n)
			buf[n++] = '.';
		buf[n++] = '/';
		memcpy(buf + n, file, len + 1);
		if (!access(buf, X_OK))
			return buf;
	}
	return "";
}

PL_API int execve(const char *path, char *const argv[], char *const envp[])
{
	pl_exec_prepare();
	if (!libc.execve) {
		errno = ENOSYS;
		return -1;
	}
	check(path, -1, envp);
	return libc.execve(path, argv, envp);
}

PL_API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

PL_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	const char *path;

	pl_exec_prepare();
	if (!libc.execvpe) {
		errno = ENOSYS;
		return -1;
	}
	path = search(file, buf);
	if (*path)
		check(path, -1, envp);
	return libc.execvpe(file, argv, envp);
}

PL_API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The file an fd names, as its /proc link says (its number if none). */
static const char *fd_path(int fd, char buf[PATH_MAX])
{
	char link[32] = "/proc/self/fd/", digits[12];
	size_t n = 0, at = strlen(link);
	ssize_t len;

	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10));
	while (n)
		link[at++] = digits[--n];
	link[at] = '\0';
	len = readlink(link, buf, PATH_MAX - 1);
	if (len <= 0) {
		memcpy(buf, link, at + 1);
		return buf;
	}
	buf[len] = '\0';
	return buf;
}

PL_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];

	pl_exec_prepare();
	if (!libc.fexecve) {
		errno = ENOSYS;
		return -1;
	}
	if (fd >= 0)
		check(fd_path(fd, buf), fd, envp);
	return libc.fexecve(fd, argv, envp);
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

PL_API int posix_spawn(pid_t *pid, const char *path,
		       const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *at, char *const argv[],
		       char *const envp[])
{
	pl_exec_prepare();
	if (!libc.spawn)
		return ENOSYS;
	check(path, -1, envp);
	return libc.spawn(pid, path, fa, at, argv, envp);
}

PL_API int posix_spawnp(pid_t *pid, const char *file,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *at, char *const argv[],
			char *const envp[])
{
	char buf[PATH_MAX];
	const char *path;

	pl_exec_prepare();
	if (!libc.spawnp)
		return ENOSYS;
	path = search(file, buf);
	if (*path)
		check(path, -1, envp);
	return libc.spawnp(pid, file, fa, at, argv, envp);
}

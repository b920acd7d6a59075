/* SPDX-License-Identifier: MIT */
/* Helpers shared by the noclobber subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

/*
 * Decimal or 0x-hexadecimal, with an optional K, M, G or T suffix; no
 * sign, no blank, no octal (strtoull would take all three: "010" would
 * be 8).
 */
int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;
	int shift = 0, hex;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (hex && !strchr("0123456789abcdefABCDEF", s[2] ? s[2] : 'z'))
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, hex ? 16 : 10);
	if (errno)
		return -errno;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end || (shift && n > (UINT64_MAX >> shift)))
		return -EINVAL;
	*v = (uint64_t)n << shift;
	return 0;
}

/*
 * The options of a command that takes only --json and --help: -1 to go on,
 * or the exit status.
 */
int parse_json_only(int argc, char **argv, void (*usage)(FILE *f), int *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*json = 0;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c == 'j') {
			*json = 1;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	return -1;
}

/* 1536 -> "1.5 KiB"; in bytes under --bytes. */
const char *human(uint64_t n, int bytes, char buf[32])
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = 0;

	while (!bytes && v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (bytes)
		snprintf(buf, 32, "%" PRIu64, n);
	else if (u == 0)
		snprintf(buf, 32, "%" PRIu64 " B", n);
	else
		snprintf(buf, 32, "%.*f %s", v < 10 ? 1 : 0, v, unit[u]);
	return buf;
}

/* A PID is decimal, as the kernel prints it: "0x10" is no PID.  0: ours. */
int parse_pid(const char *s, pid_t *pid)
{
	uint64_t n = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > INT32_MAX)
			return -EINVAL;
	}
	*pid = (pid_t)n;
	return 0;
}

/*
 * An address, or the start of the first mapping whose path contains s
 * ("[stack]", "libc.so"): that names a place without knowing where ASLR
 * put it.  0, 1 if no mapping's path has s, or -errno if the mappings
 * cannot be read.
 */
int parse_target(const char *s, pid_t pid, uint64_t *addr)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	int ret;

	if (!parse_u64(s, addr))
		return 0;
	/* An empty name would be in every path. */
	if (!*s)
		return 1;
	ret = ncb_maps_open(&maps, pid);
	if (ret)
		return ret;
	while ((ret = ncb_maps_next(maps, &m)) == 1) {
		if (*m.path && strstr(m.path, s)) {
			*addr = m.start;
			break;
		}
	}
	ncb_maps_close(maps);
	return ret == 1 ? 0 : ret < 0 ? ret : 1;
}

/*
 * A command's failure: "noclobber CMD: message" on standard error and,
 * under --json, the error document on standard output.  err is positive.
 */
void fail(const char *cmd, int json, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "noclobber %s: %s\n", cmd, msg);
	if (json)
		jw_fail(stdout, err, msg);
}

/* Why the mappings of process pid cannot be read, in words. */
void maps_error(const char *cmd, int json, pid_t pid, int err)
{
	int id = pid ? (int)pid : (int)getpid();

	if (err == -ENOENT && pid)
		fail(cmd, json, ENOENT, "process %d: no such process", id);
	else if (err == -ESRCH)
		fail(cmd, json, ESRCH, "process %d has no user address space "
		     "(a kernel thread, or it has exited)", id);
	else if (err == -EACCES || err == -EPERM)
		fail(cmd, json, -err, "process %d: permission denied (reading "
		     "its mappings takes the right to ptrace it)", id);
	else
		fail(cmd, json, -err, "mappings of process %d: %s", id,
		     strerror(-err));
}

int beside_self(const char *name, char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len);
	char *slash;

	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		return -ENOENT;
	if (snprintf(slash + 1, len - (size_t)(slash + 1 - out), "%s",
		     name) >= (int)(len - (size_t)(slash + 1 - out)))
		return -ENAMETOOLONG;
	return 0;
}

/*
 * execvp's search: PROG itself if it has a '/', else each PATH entry, an
 * empty one being the current directory.  A regular file found that may
 * not be run is remembered (-EACCES, 126) and the search goes on, as
 * execvp's does; else -ENOENT (127).
 */
int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat st;
	int n, err = -ENOENT;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		n = snprintf(out, len, "%s", name);
		return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
	}
	for (p = path ? path : "/usr/bin:/bin";; p = e + 1) {
		e = strchrnul(p, ':');
		n = snprintf(out, len, "%.*s/%s", e == p ? 1 : (int)(e - p),
			     e == p ? "." : p, name);
		if (n > 0 && (size_t)n < len && !stat(out, &st) &&
		    S_ISREG(st.st_mode)) {
			if (!access(out, X_OK))
				return 0;
			err = -EACCES;
		}
		if (!*e)
			return err;
	}
}

ssize_t proc_read(pid_t pid, const char *name, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

int write_whole(FILE *out, int (*make)(FILE *f, const void *arg),
		const void *arg)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return -ENOMEM;
	ret = make(f, arg);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (!ret && (fwrite(buf, 1, len, out) != len || fflush(out)))
		ret = -EIO;
	free(buf);
	return ret;
}

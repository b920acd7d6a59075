/* SPDX-License-Identifier: MIT */
/*
 * "#!" scripts, as fs/binfmt_script.c reads them: the interpreter a
 * script names, and the arguments it is run with.  ncb_exec follows them
 * up to NCB__SCRIPT_DEPTH deep; the tool's plan asks for the name alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader.h"

#define SCRIPT_BUF NCB__HEAD

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

int ncb__read_head(const char *path, unsigned char *head)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	memset(head, 0, NCB__HEAD);
	r = read(fd, head, NCB__HEAD);
	close(fd);
	return r < 0 ? -errno : 0;
}

/*
 * The "#!" line of a file's first bytes, parsed in buf: 1, 0 if it is no
 * script, -ENOEXEC for a line that names no interpreter.
 */
static int script_line(const unsigned char *head, char *buf, char **name,
		       char **arg)
{
	memcpy(buf, head, SCRIPT_BUF);
	if (buf[0] != '#' || buf[1] != '!')
		return 0;
	return parse_script(buf, name, arg) ? -ENOEXEC : 1;
}

const char *ncb__visible(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	for (; *s && i + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != 0x7f) {
			buf[i++] = (char)c;
			continue;
		}
		buf[i++] = '\\';
		if (c == '\r' || c == '\t' || c == '\n') {
			buf[i++] = c == '\r' ? 'r' : c == '\t' ? 't' : 'n';
			continue;
		}
		buf[i++] = 'x';
		buf[i++] = hex[c >> 4];
		buf[i++] = hex[c & 15];
	}
	if (len)
		buf[i < len ? i : len - 1] = '\0';
	return buf;
}

/*
 * The interpreter a "#!" script names (for the tool's plan): 1 and its
 * path in out, 0 if path is no script, -ENOEXEC, -ENAMETOOLONG.
 */
int ncb__script_interp(const char *path, char *out, size_t len)
{
	unsigned char head[SCRIPT_BUF];
	char buf[SCRIPT_BUF], *name, *arg;
	int ret;

	/* One that cannot be read: the loader then says why. */
	if (ncb__read_head(path, head))
		return 0;
	ret = script_line(head, buf, &name, &arg);
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
int ncb__script(const char *path, const unsigned char *head,
		char *const **argvp, char **line, char *why, size_t wl)
{
	char buf[SCRIPT_BUF], *name, *arg, **nv;
	char *const *argv = *argvp;
	size_t n = 0, i;
	int ret = script_line(head, buf, &name, &arg);

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

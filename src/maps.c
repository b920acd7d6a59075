/* SPDX-License-Identifier: MIT */
/*
 * Reading a process's mappings: the PROCMAP_QUERY ioctl on /proc/PID/maps
 * (Linux 6.11, fs/proc/task_mmu.c) answers "the mapping at or after addr"
 * in O(log n); elsewhere the text of the same file is parsed.
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "internal.h"

/* Debian 12's headers predate the ioctl: the layout is the kernel ABI. */
struct ncb_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define NCB_PROCMAP_QUERY _IOWR('f', 17, struct ncb_procmap_query)
#define Q_READABLE 0x01
#define Q_WRITABLE 0x02
#define Q_EXECUTABLE 0x04
#define Q_SHARED 0x08
#define Q_COVERING_OR_NEXT 0x10

#define TEXT_TRIES 16

struct ncb_maps {
	int fd;
	int query;		/* 1: ioctl, 0: text */
	uint64_t pos;		/* ioctl: next address to ask about */
	char *text;		/* text: the whole file */
	size_t len;
	size_t off;		/* text: start of the next line */
	uint64_t last_end;	/* text: end of the last mapping returned */
	char name[PATH_MAX + 64];
};

static int query_at(struct ncb_maps *m, uint64_t addr, struct ncb_mapping *out)
{
	struct ncb_procmap_query q;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_flags = Q_COVERING_OR_NEXT;
	q.query_addr = addr;
	q.vma_name_addr = (uintptr_t)m->name;
	q.vma_name_size = sizeof(m->name);
	m->name[0] = '\0';
	if (ioctl(m->fd, NCB_PROCMAP_QUERY, &q))
		return errno == ENOENT ? 0 : -errno;
	if (!q.vma_name_size)
		m->name[0] = '\0';
	out->start = q.vma_start;
	out->end = q.vma_end;
	out->offset = q.vma_offset;
	out->inode = q.inode;
	out->dev_major = q.dev_major;
	out->dev_minor = q.dev_minor;
	out->prot = (q.vma_flags & Q_READABLE ? PROT_READ : 0) |
		    (q.vma_flags & Q_WRITABLE ? PROT_WRITE : 0) |
		    (q.vma_flags & Q_EXECUTABLE ? PROT_EXEC : 0);
	out->shared = !!(q.vma_flags & Q_SHARED);
	out->path = m->name;
	return 1;
}

static int hexnum(const char **s, int end, uint64_t *v)
{
	const char *p = *s;
	uint64_t n = 0;
	int digits = 0;

	for (;; p++, digits++) {
		int c = *p, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		if (n >> 60)
			return -EOVERFLOW;
		n = n << 4 | (uint64_t)d;
	}
	if (!digits || *p != end)
		return -EIO;
	*v = n;
	*s = p + 1;
	return 0;
}

static int decnum(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t n = 0;

	if (*p < '0' || *p > '9')
		return -EIO;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -EOVERFLOW;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*v = n;
	*s = p;
	return 0;
}

static int perms(const char **s, struct ncb_mapping *out)
{
	const char *p = *s;

	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-'))
		return -EIO;
	out->prot = (p[0] == 'r' ? PROT_READ : 0) |
		    (p[1] == 'w' ? PROT_WRITE : 0) |
		    (p[2] == 'x' ? PROT_EXEC : 0);
	if (p[3] != 's' && p[3] != 'p')
		return -EIO;
	out->shared = p[3] == 's';
	if (p[4] != ' ')
		return -EIO;
	*s = p + 5;
	return 0;
}

/*
 * The kernel escapes only '\n' in paths, as "\012" (seq_file_path with
 * "\n"): undo that so that both readers give the same path.  A name that
 * really holds the four characters "\012" cannot be told apart.
 */
static void unescape(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (n - i >= 4 && !memcmp(src + i, "\\012", 4)) {
			*dst++ = '\n';
			i += 3;
		} else {
			*dst++ = src[i];
		}
	}
	*dst = '\0';
}

/*
 * One line: "start-end perms offset major:minor inode   path".  The path
 * is the rest of the line (it may hold spaces); the kernel escapes '\n'.
 */
static int parse_line(struct ncb_maps *m, const char *p, const char *eol,
		      struct ncb_mapping *out)
{
	uint64_t v;
	size_t n;
	int err;

	if ((err = hexnum(&p, '-', &out->start)) ||
	    (err = hexnum(&p, ' ', &out->end)) ||
	    (err = perms(&p, out)) ||
	    (err = hexnum(&p, ' ', &out->offset)) ||
	    (err = hexnum(&p, ':', &v)))
		return err;
	out->dev_major = (uint32_t)v;
	if ((err = hexnum(&p, ' ', &v)))
		return err;
	out->dev_minor = (uint32_t)v;
	if ((err = decnum(&p, &out->inode)))
		return err;
	while (p < eol && *p == ' ')
		p++;
	n = (size_t)(eol - p);
	if (n >= sizeof(m->name))
		return -ENAMETOOLONG;
	unescape(m->name, p, n);
	out->path = m->name;
	return out->start < out->end ? 0 : -EIO;
}

static int read_all(struct ncb_maps *m)
{
	size_t cap = 64 * 1024;
	ssize_t n;
	char *t;

	m->len = 0;
	if (lseek(m->fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		if (!m->text || m->len + 1 >= cap) {
			while (m->len + 4096 >= cap)
				cap *= 2;
			t = realloc(m->text, cap);
			if (!t)
				return -ENOMEM;
			m->text = t;
		}
		n = read(m->fd, m->text + m->len, cap - m->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		m->len += (size_t)n;
	}
	m->text[m->len] = '\0';
	return 0;
}

/*
 * The kernel fills each read() from a fresh look at the address space, so
 * a file read in pieces can mix two moments.  Accept it only if the ranges
 * are sorted and disjoint and every line parses; otherwise read again.
 */
static int text_consistent(struct ncb_maps *m)
{
	struct ncb_mapping e;
	uint64_t prev = 0, prev_start = 0;
	const char *p = m->text, *eol;
	int err;

	for (; p < m->text + m->len; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(m->text + m->len - p));
		if (!eol)
			return -EIO;
		err = parse_line(m, p, eol, &e);
		if (err)
			return err;
		/*
		 * qemu-user 7.2 prints some ranges twice from the same
		 * start ([vsyscall]; a mapping with two guest extents): such
		 * lines are tolerated and iterated as their union.  Any other
		 * overlap means a torn read.
		 */
		if (e.start < prev && e.start != prev_start)
			return -EAGAIN;
		prev_start = e.start;
		if (e.end > prev)
			prev = e.end;
	}
	return 0;
}

static int load_text(struct ncb_maps *m)
{
	int i, err = -EAGAIN;

	for (i = 0; i < TEXT_TRIES && err == -EAGAIN; i++) {
		if (i)
			sched_yield();
		err = read_all(m);
		if (!err)
			err = text_consistent(m);
	}
	m->off = 0;
	m->last_end = 0;
	return err;
}

/* qemu-user fakes this file and its open fails now and then with EAGAIN. */
static int open_retrying(const char *path)
{
	int i, fd = -1;

	for (i = 0; i < TEXT_TRIES; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 || (errno != EAGAIN && errno != EINTR))
			break;
		sched_yield();
	}
	return fd >= 0 ? fd : -errno;
}

static int maps_open(struct ncb_maps **maps, pid_t pid, int text)
{
	struct ncb_mapping e;
	struct ncb_maps *m;
	char path[64];
	int err;

	if (!maps || pid < 0)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	m->fd = open_retrying(path);
	if (m->fd < 0) {
		err = m->fd;
		goto fail;
	}
	/* Any answer but "no such mapping" means the ioctl is not there. */
	m->query = !text && query_at(m, 0, &e) >= 0;
	if (!m->query) {
		err = load_text(m);
		if (err)
			goto fail_close;
	}
	*maps = m;
	return 0;

fail_close:
	close(m->fd);
fail:
	free(m->text);
	free(m);
	return err;
}

int ncb_maps_open(struct ncb_maps **maps, pid_t pid)
{
	return maps_open(maps, pid, 0);
}

int ncb__maps_open_text(struct ncb_maps **maps, pid_t pid)
{
	return maps_open(maps, pid, 1);
}

int ncb__maps_from_text(struct ncb_maps **maps, const char *text,
			size_t len)
{
	struct ncb_maps *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->text = malloc(len + 1);
	if (!m->text) {
		free(m);
		return -ENOMEM;
	}
	memcpy(m->text, text, len);
	m->text[len] = '\0';
	m->len = len;
	err = text_consistent(m);
	if (err) {
		ncb_maps_close(m);
		return err;
	}
	*maps = m;
	return 0;
}

int ncb_maps_seek(struct ncb_maps *m, uint64_t addr)
{
	const char *p, *eol, *end;
	struct ncb_mapping e;
	int err;

	if (!m)
		return -EINVAL;
	if (m->query) {
		m->pos = addr;
		return 0;
	}
	end = m->text + m->len;
	for (p = m->text; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		err = parse_line(m, p, eol, &e);
		if (err)
			return err;
		if (e.end > addr)
			break;
	}
	m->off = (size_t)(p - m->text);
	m->last_end = 0;
	return 0;
}

int ncb_maps_next(struct ncb_maps *m, struct ncb_mapping *out)
{
	const char *p, *eol;
	int ret;

	if (!m || !out)
		return -EINVAL;
	if (m->query) {
		ret = query_at(m, m->pos, out);
		if (ret == 1) {
			/* The last page ends at 2^64 on no Linux arch. */
			m->pos = out->end;
		}
		return ret;
	}
	do {
		if (m->off >= m->len)
			return 0;
		p = m->text + m->off;
		eol = memchr(p, '\n', m->len - m->off);
		ret = parse_line(m, p, eol, out);
		if (ret)
			return ret;
		m->off = (size_t)(eol + 1 - m->text);
	} while (out->end <= m->last_end);
	if (out->start < m->last_end) {
		out->offset += m->last_end - out->start;
		out->start = m->last_end;
	}
	m->last_end = out->end;
	return 1;
}

int ncb_maps_find(struct ncb_maps *m, uint64_t addr, struct ncb_mapping *out)
{
	int ret;

	if (!m || !out)
		return -EINVAL;
	ret = ncb_maps_seek(m, addr);
	if (!ret)
		ret = ncb_maps_next(m, out);
	if (ret == 1 && out->start > addr)
		ret = 0;
	return ret;
}

void ncb_maps_close(struct ncb_maps *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m->text);
	free(m);
}

int ncb_occupants(pid_t pid, const void *addr, size_t len, ncb_mapping_fn fn,
		  void *arg)
{
	uint64_t start = (uintptr_t)addr, end = start + len;
	struct ncb_mapping e;
	struct ncb_maps *m;
	int ret, count = 0;

	if (!len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	ret = ncb_maps_open(&m, pid);
	if (ret)
		return ret;
	ret = ncb_maps_seek(m, start);
	while (!ret) {
		ret = ncb_maps_next(m, &e);
		if (ret <= 0 || e.start >= end)
			break;
		count++;
		/* The callback stops the walk with non-zero. */
		ret = fn ? fn(&e, arg) : 0;
	}
	ncb_maps_close(m);
	return ret < 0 ? ret : count;
}

static int stop_at_first(const struct ncb_mapping *m, void *arg)
{
	(void)m;
	(void)arg;
	return 1;
}

/* Only whether anything is there: one look-up, not one per occupant. */
int ncb__range_occupied(uint64_t start, uint64_t end)
{
	int n = ncb_occupants(0, (const void *)(uintptr_t)start,
			      (size_t)(end - start), stop_at_first, NULL);

	return n < 0 ? n : n > 0;
}

int ncb__range_in_one_mapping(uint64_t start, uint64_t end)
{
	struct ncb_mapping e;
	struct ncb_maps *m;
	int ret;

	ret = ncb_maps_open(&m, 0);
	if (ret)
		return ret;
	ret = ncb_maps_seek(m, start);
	if (!ret)
		ret = ncb_maps_next(m, &e);
	ncb_maps_close(m);
	if (ret < 0)
		return ret;
	return ret == 1 && e.start <= start && e.end >= end;
}

int ncb__procmap_query_works(void)
{
	struct ncb_maps *m;
	int query;

	if (ncb_maps_open(&m, 0))
		return 0;
	query = m->query;
	ncb_maps_close(m);
	return query;
}

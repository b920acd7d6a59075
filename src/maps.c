/* SPDX-License-Identifier: MIT */
/*
 * Reading a process's mappings: the PROCMAP_QUERY ioctl on /proc/PID/maps
 * (Linux 6.11, fs/proc/task_mmu.c) answers "the mapping at or after addr"
 * in O(log n); elsewhere the text of the same file is parsed.
 *
 * Which reader a walk over many mappings uses is a matter of cost, and
 * machines differ: the ioctl is a system call per mapping of the walk, the
 * text a read per kilobyte of lines from the first mapping to where the
 * walk stops, and an answer of the ioctl costs from about one line of text
 * to five (docs/benchmarks.md).  So look-ups of one place ask the ioctl,
 * and a walk (ncb__maps_walk) takes the reader measured cheaper per
 * mapping in this process (choose_walk_reader).
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
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

/*
 * A walk reads its text a kilobyte at a time, as stdio does (st_blksize of
 * /proc files): the kernel makes as many lines as a read asks for, so a
 * walk that stops early has paid for little more than it used.
 */
#define STREAM_READ 1024

struct ncb_maps {
	int fd;
	int query;		/* 1: ioctl, 0: text */
	int self;		/* the caller's own mappings */
	int walk;		/* ncb__maps_walk's: no gate area */
	int stream;		/* walk: the text read as it is used */
	int eof;		/* stream: all of it read */
	size_t cap;		/* stream: room in text */
	off_t fpos;		/* stream: where the next read starts */
	uint64_t skip;		/* stream: lines ending at or below it */
	uint64_t pos;		/* ioctl: next address to ask about */
	char *text;		/* text: the whole file; ioctl: the last copy */
	size_t len;		/* read, for long names and the gate area */
	size_t off;		/* text: start of the next line */
	uint64_t last_end;	/* text: end of the last mapping returned */
	char *name;		/* the path returned, as long as need be */
	size_t name_size;
	int gate_known;		/* ioctl: the gate area was looked for */
	struct ncb_mapping gate;	/* end 0: there is none */
	char *gate_name;
};

/* Room in m->name for a path of n bytes. */
static int name_room(struct ncb_maps *m, size_t n)
{
	size_t size = n < PATH_MAX ? PATH_MAX : n + 1;
	char *p;

	if (n < m->name_size)
		return 0;
	p = realloc(m->name, size);
	if (!p)
		return -ENOMEM;
	m->name = p;
	m->name_size = size;
	return 0;
}

/* The mapping at or after addr: 1, 0 if none, -errno; its name if asked. */
static int ask(struct ncb_maps *m, uint64_t addr, struct ncb_procmap_query *q,
	       int name)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = Q_COVERING_OR_NEXT;
	q->query_addr = addr;
	if (name) {
		q->vma_name_addr = (uintptr_t)m->name;
		q->vma_name_size = (uint32_t)m->name_size;
		m->name[0] = '\0';
	}
	if (ioctl(m->fd, NCB_PROCMAP_QUERY, q))
		return errno == ENOENT ? 0 : -errno;
	if (name && !q->vma_name_size)
		m->name[0] = '\0';
	return 1;
}

static void from_query(const struct ncb_procmap_query *q,
		       struct ncb_mapping *out)
{
	out->start = q->vma_start;
	out->end = q->vma_end;
	out->offset = q->vma_offset;
	out->inode = q->inode;
	out->dev_major = q->dev_major;
	out->dev_minor = q->dev_minor;
	out->prot = (q->vma_flags & Q_READABLE ? PROT_READ : 0) |
		    (q->vma_flags & Q_WRITABLE ? PROT_WRITE : 0) |
		    (q->vma_flags & Q_EXECUTABLE ? PROT_EXEC : 0);
	out->shared = !!(q->vma_flags & Q_SHARED);
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
 * The fields of one line, "start-end perms offset major:minor inode   path";
 * *path is where the path starts.  It is the rest of the line, of any
 * length (seq_file grows its buffer to fit), and may hold spaces.
 */
static int parse_fields(const char *p, const char *eol,
			struct ncb_mapping *out, const char **path)
{
	uint64_t v;
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
	*path = p;
	return out->start < out->end ? 0 : -EIO;
}

/* The path from p to eol, unescaped into m->name. */
static int set_name(struct ncb_maps *m, const char *p, const char *eol,
		    struct ncb_mapping *out)
{
	size_t n = (size_t)(eol - p);
	int err;

	err = name_room(m, n);
	if (err)
		return err;
	unescape(m->name, p, n);
	out->path = m->name;
	return 0;
}

static int parse_line(struct ncb_maps *m, const char *p, const char *eol,
		      struct ncb_mapping *out)
{
	const char *path;
	int err;

	err = parse_fields(p, eol, out, &path);
	return err ? err : set_name(m, path, eol, out);
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
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	uint64_t prev = 0, prev_start = 0;
	const char *p = m->text, *eol, *path;
	int err;

	for (; p < m->text + m->len; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(m->text + m->len - p));
		if (!eol)
			return -EIO;
		err = parse_fields(p, eol, &e, &path);
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

/*
 * A walk's text is read as the walk goes, from the start of the file: more
 * only when the lines read are used up, so a walk pays for the lines up to
 * where it stops and no further.  Unlike a snapshot (load_text), its pieces
 * may show different moments, as a walk's answers from the ioctl do: lines
 * ending at or below what was returned already are passed over.
 */
static void stream_start(struct ncb_maps *m, uint64_t skip)
{
	/* A snapshot read for a long name is of no use from here on. */
	if (!m->stream) {
		free(m->text);
		m->text = NULL;
		m->cap = 0;
	}
	m->query = 0;
	m->stream = 1;
	m->eof = 0;
	m->len = m->off = 0;
	m->fpos = 0;
	m->skip = skip;
	m->last_end = 0;
}

/* More of the file, after what is left of the last line read. */
static int stream_more(struct ncb_maps *m)
{
	size_t cap = m->cap ? m->cap : 4 * STREAM_READ;
	ssize_t n;
	char *t;

	if (m->off) {
		m->len -= m->off;
		memmove(m->text, m->text + m->off, m->len);
		m->off = 0;
	}
	while (cap - m->len <= STREAM_READ)
		cap *= 2;
	if (cap != m->cap) {
		t = realloc(m->text, cap);
		if (!t)
			return -ENOMEM;
		m->text = t;
		m->cap = cap;
	}
	/* At an offset: the file is read from its start without a seek. */
	do
		n = pread(m->fd, m->text + m->len, STREAM_READ, m->fpos);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	m->eof = !n;
	m->len += (size_t)n;
	m->fpos += n;
	return 0;
}

/* The next whole line, [*p, *eol): 1, 0 at the end of the file, -errno. */
static int stream_line(struct ncb_maps *m, const char **p, const char **eol)
{
	int err;

	for (;;) {
		if (m->len > m->off) {
			*p = m->text + m->off;
			*eol = memchr(*p, '\n', m->len - m->off);
			if (*eol)
				return 1;
		}
		if (m->eof)
			return 0;
		err = stream_more(m);
		if (err)
			return err;
	}
}

/*
 * A process that changes while it is read can show a mapping that grew
 * or moved over the end of the one before (a text read in pieces, or the
 * ioctl's covering answer): it starts where that one ended, so that a
 * walk never goes back or lists a byte twice.
 */
static void after_last(struct ncb_maps *m, struct ncb_mapping *out)
{
	if (out->start < m->last_end) {
		out->offset += m->last_end - out->start;
		out->start = m->last_end;
	}
	m->last_end = out->end;
}

static int stream_read(struct ncb_maps *m, struct ncb_mapping *out)
{
	const char *p = NULL, *eol = NULL, *path;
	int ret;

	do {
		ret = stream_line(m, &p, &eol);
		if (ret <= 0)
			return ret;
		ret = parse_fields(p, eol, out, &path);
		if (ret)
			return ret;
		m->off = (size_t)(eol + 1 - m->text);
	} while (out->end <= m->skip || out->end <= m->last_end);
	ret = set_name(m, path, eol, out);
	if (ret)
		return ret;
	after_last(m, out);
	return 1;
}

static int same_mapping(const struct ncb_mapping *a,
			const struct ncb_mapping *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->inode == b->inode &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->prot == b->prot && a->shared == b->shared;
}

/* 1 if m->text has a line for mapping want (its path then in m->name). */
static int name_from_text(struct ncb_maps *m, struct ncb_mapping *want)
{
	const char *p, *eol, *path, *end = m->text + m->len;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	int err;

	for (p = m->text; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		/* The text was checked when read: every line parses. */
		if (parse_fields(p, eol, &e, &path) || e.start > want->start)
			break;
		if (same_mapping(&e, want)) {
			err = set_name(m, path, eol, want);
			return err ? err : 1;
		}
	}
	return 0;
}

/*
 * The ioctl writes a name into at most PATH_MAX bytes (d_path in
 * do_procmap_query, fs/proc/task_mmu.c) and fails with ENAMETOOLONG for a
 * longer path, which the text prints whole.  Such a name is taken from the
 * line of the text that shows the same mapping: the copy read last if it
 * has one (many long names cost one read), else a fresh one.  A mapping
 * that changed between the two looks is asked about again.
 */
static int long_name(struct ncb_maps *m, uint64_t addr,
		     struct ncb_mapping *out)
{
	struct ncb_procmap_query q;
	int i, ret;

	for (i = 0; i < TEXT_TRIES; i++) {
		ret = ask(m, addr, &q, 0);
		if (ret <= 0)
			return ret;
		from_query(&q, out);
		if (m->text && (ret = name_from_text(m, out)))
			return ret;
		ret = load_text(m);
		if (!ret)
			ret = name_from_text(m, out);
		if (ret)
			return ret;
	}
	return -EAGAIN;
}

static int query_at(struct ncb_maps *m, uint64_t addr, struct ncb_mapping *out)
{
	struct ncb_procmap_query q;
	int ret;

	ret = ask(m, addr, &q, 1);
	if (ret == -ENAMETOOLONG)
		return long_name(m, addr, out);
	if (ret == 1) {
		from_query(&q, out);
		out->path = m->name;
	}
	return ret;
}

/* The last line of a fresh copy of the text: 1, or 0 if it is empty. */
static int last_line(struct ncb_maps *m, struct ncb_mapping *out)
{
	const char *p;
	int err;

	err = load_text(m);
	if (err)
		return err;
	if (!m->len)
		return 0;
	/* Every line ends with '\n': the last starts after the one before. */
	for (p = m->text + m->len - 1; p > m->text && p[-1] != '\n'; p--)
		;
	err = parse_line(m, p, m->text + m->len - 1, out);
	return err ? err : 1;
}

/*
 * The gate area (x86_64's [vsyscall] unless vsyscall=none, arm's [vectors])
 * is no VMA of the process: the text prints it after the last one
 * (get_gate_vma in m_start and m_next_vma, fs/proc/task_mmu.c), and
 * PROCMAP_QUERY, which looks only in the VMA tree, never returns it.  So
 * the text's last line is the gate area if the ioctl knows nothing at or
 * above its start and the text, read again, still ends with it (a mapping
 * unmapped meanwhile would not; then look again).
 */
static int look_for_gate(struct ncb_maps *m, struct ncb_mapping *gate)
{
	struct ncb_procmap_query q;
	struct ncb_mapping last, again;
	int i, ret;

	for (i = 0; i < TEXT_TRIES; i++) {
		ret = last_line(m, &last);
		if (ret <= 0)
			return ret;
		/* Nothing lies above a gate area: a VMA there means none. */
		ret = ask(m, last.start, &q, 0);
		if (ret)
			return ret < 0 ? ret : 0;
		free(m->gate_name);
		m->gate_name = strdup(last.path);
		if (!m->gate_name)
			return -ENOMEM;
		ret = last_line(m, &again);
		if (ret < 0)
			return ret;
		if (ret && same_mapping(&last, &again) &&
		    !strcmp(again.path, m->gate_name)) {
			*gate = last;
			gate->path = m->gate_name;
			return 1;
		}
	}
	return -EAGAIN;
}

/*
 * A process keeps its gate area all its life (vsyscall_mode is set at boot;
 * whether a process has one, at exec): the caller's is looked for once.
 * state: 0 not yet, 1 being recorded, 2 recorded.
 */
static struct {
	int state;
	int present;
	struct ncb_mapping m;
	char name[32];
} self_gate;

static int self_gate_known(struct ncb_maps *m)
{
	if (__atomic_load_n(&self_gate.state, __ATOMIC_ACQUIRE) != 2)
		return 0;
	if (self_gate.present) {
		m->gate = self_gate.m;
		m->gate.path = self_gate.name;
	}
	return 1;
}

static void self_gate_record(const struct ncb_mapping *gate)
{
	int expect = 0;

	if (gate && strlen(gate->path) >= sizeof(self_gate.name))
		return;
	if (!__atomic_compare_exchange_n(&self_gate.state, &expect, 1, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	self_gate.present = !!gate;
	if (gate) {
		self_gate.m = *gate;
		strcpy(self_gate.name, gate->path);
	}
	__atomic_store_n(&self_gate.state, 2, __ATOMIC_RELEASE);
}

/* ioctl: the gate area if it ends above pos, once the VMAs are done. */
static int gate_after(struct ncb_maps *m, uint64_t pos,
		      struct ncb_mapping *out)
{
	struct ncb_mapping gate;
	int ret;

	if (!m->gate_known && !(m->self && self_gate_known(m))) {
		ret = look_for_gate(m, &gate);
		if (ret < 0)
			return ret;
		if (ret)
			m->gate = gate;
		if (m->self)
			self_gate_record(ret ? &gate : NULL);
	}
	m->gate_known = 1;
	if (m->gate.end <= pos)
		return 0;
	*out = m->gate;
	return 1;
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

/*
 * The reader walks use in this process: WALK_QUERY the ioctl, WALK_TEXT
 * the text; 0 not measured yet.
 */
enum { WALK_QUERY = 1, WALK_TEXT = 2 };
static int walk_reader;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per line of a walk's first read of the text; its lines in *lines. */
static uint64_t time_text(struct ncb_maps *m, unsigned int *lines)
{
	char buf[STREAM_READ];
	const char *p = buf;
	uint64_t t = now_ns();
	ssize_t n;

	n = pread(m->fd, buf, sizeof(buf), 0);
	t = now_ns() - t;
	*lines = 0;
	while (n > 0 && (p = memchr(p, '\n', (size_t)(buf + n - p)))) {
		p++;
		++*lines;
	}
	return *lines ? t / *lines : 0;
}

/* ns per answer of the ioctl about the first n mappings, one by one. */
static uint64_t time_query(struct ncb_maps *m, unsigned int n)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	uint64_t pos = 0, t = now_ns();
	unsigned int i;

	for (i = 0; i < n && query_at(m, pos, &e) == 1; i++)
		pos = e.end;
	t = now_ns() - t;
	return i ? t / i : 0;
}

/*
 * Measured once, at the first walk, on the first mappings of the file so
 * that both readers see the same ones; three times each, the least kept (a
 * machine busy elsewhere slows a try down, never speeds one up).  The
 * ioctl is taken only if an answer costs clearly less than a line: then a
 * walk, asking about the window's mappings alone, costs less than the
 * text, which has every line up to the walk's end to read, whatever the
 * layout.  Otherwise the text, which never costs more than another reader
 * of the same lines (stdio).  Threads measuring at once agree closely
 * enough: the last one's verdict stays.
 */
static void choose_walk_reader(struct ncb_maps *m)
{
	uint64_t text = UINT64_MAX, query = UINT64_MAX, t;
	unsigned int i, lines = 0;

	for (i = 0; i < 3; i++) {
		t = time_text(m, &lines);
		if (t && t < text)
			text = t;
		t = time_query(m, lines);
		if (t && t < query)
			query = t;
	}
	__atomic_store_n(&walk_reader, query != UINT64_MAX &&
			 5 * query <= 4 * text ? WALK_QUERY : WALK_TEXT,
			 __ATOMIC_RELAXED);
}

int ncb__walk_reader(int set)
{
	if (set)
		__atomic_store_n(&walk_reader, set, __ATOMIC_RELAXED);
	return __atomic_load_n(&walk_reader, __ATOMIC_RELAXED);
}

/* How maps_open reads: the ioctl where it answers, the text, or a walk. */
enum { READ_ANY, READ_TEXT, READ_WALK };

static int maps_open(struct ncb_maps **maps, pid_t pid, int how)
{
	struct ncb_procmap_query q;
	struct ncb_maps *m;
	char path[64];
	int err;

	if (!maps || pid < 0)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* Zeroed: valgrind cannot tell that the ioctl writes to it. */
	m->name = calloc(1, PATH_MAX);
	if (!m->name) {
		err = -ENOMEM;
		goto fail;
	}
	m->name_size = PATH_MAX;
	m->self = !pid;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	m->fd = open_retrying(path);
	if (m->fd < 0) {
		err = m->fd;
		goto fail;
	}
	/*
	 * Any answer but "no such mapping" means the ioctl is not there;
	 * for the caller's own maps the core has asked once already.
	 */
	if (how != READ_TEXT)
		m->query = m->self ? ncb_core_procmap_query()
				   : ask(m, 0, &q, 0) >= 0;
	m->walk = how == READ_WALK;
	if (m->walk && m->query && !ncb__walk_reader(0))
		choose_walk_reader(m);
	if (m->walk && ncb__walk_reader(0) != WALK_QUERY) {
		stream_start(m, 0);
	} else if (!m->query) {
		err = load_text(m);
		/*
		 * Every live process has a mapping (its stack, at least);
		 * a kernel thread or a zombie has no address space, and the
		 * kernel shows it an empty file (the ioctl says ESRCH).
		 */
		if (!err && !m->len)
			err = -ESRCH;
		if (err)
			goto fail_close;
	}
	*maps = m;
	return 0;

fail_close:
	close(m->fd);
fail:
	free(m->name);
	free(m->text);
	free(m);
	return err;
}

int ncb_maps_open(struct ncb_maps **maps, pid_t pid)
{
	return maps_open(maps, pid, READ_ANY);
}

int ncb__maps_open_text(struct ncb_maps **maps, pid_t pid)
{
	return maps_open(maps, pid, READ_TEXT);
}

int ncb__maps_text(pid_t pid, char **text, size_t *len)
{
	struct ncb_maps *m;
	int err = maps_open(&m, pid, READ_TEXT);

	if (err)
		return err;
	/* Checked whole as a reader's text is: consistent, not torn. */
	*text = m->text;
	*len = m->len;
	m->text = NULL;
	ncb_maps_close(m);
	return 0;
}

int ncb__maps_walk(struct ncb_maps **maps, uint64_t lo)
{
	int err = maps_open(maps, 0, READ_WALK);

	if (!err && (err = ncb_maps_seek(*maps, lo)))
		ncb_maps_close(*maps);
	return err;
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
		/* A text given once is not torn: it is wrong. */
		return err == -EAGAIN ? -EINVAL : err;
	}
	*maps = m;
	return 0;
}

int ncb_maps_seek(struct ncb_maps *m, uint64_t addr)
{
	const char *p, *eol, *end, *path;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	int err;

	if (!m)
		return -EINVAL;
	if (m->query) {
		m->pos = addr;
		m->last_end = 0;
		return 0;
	}
	if (m->stream) {
		stream_start(m, addr);
		return 0;
	}
	end = m->text + m->len;
	for (p = m->text; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		err = parse_fields(p, eol, &e, &path);
		if (err)
			return err;
		if (e.end > addr)
			break;
	}
	m->off = (size_t)(p - m->text);
	m->last_end = 0;
	return 0;
}

static int maps_read(struct ncb_maps *m, struct ncb_mapping *out)
{
	const char *p, *eol;
	int ret;

	if (m->stream)
		return stream_read(m, out);
	if (m->query) {
		ret = query_at(m, m->pos, out);
		/* A walk is for placements: none goes in the gate area. */
		if (!ret && !m->walk)
			ret = gate_after(m, m->pos, out);
		if (ret == 1) {
			/* The last page ends at 2^64 on no Linux arch. */
			m->pos = out->end;
			after_last(m, out);
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
	after_last(m, out);
	return 1;
}

/* The next mapping, as the library's own struct (its size set). */
static int maps_next(struct ncb_maps *m, struct ncb_mapping *out)
{
	int ret = maps_read(m, out);

	out->size = sizeof(*out);
	return ret;
}

/* Mappings leave through here: the caller's struct may be older. */
static int mapping_out(struct ncb_mapping *out, const struct ncb_mapping *e,
		       int ret)
{
	if (ret == 1)
		ncb__out(out, e, sizeof(*e));
	return ret;
}

static int bad_args(const struct ncb_maps *m, const struct ncb_mapping *out)
{
	return !m || ncb__out_size(out, NCB__END(ncb_mapping, path));
}

int ncb_maps_next(struct ncb_maps *m, struct ncb_mapping *out)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);

	if (bad_args(m, out))
		return -EINVAL;
	return mapping_out(out, &e, maps_next(m, &e));
}

int ncb_maps_find(struct ncb_maps *m, uint64_t addr, struct ncb_mapping *out)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	uint64_t pos;
	size_t off;
	int ret;

	if (bad_args(m, out))
		return -EINVAL;
	ret = ncb_maps_seek(m, addr);
	if (ret)
		return ret;
	pos = m->pos;
	off = m->off;
	ret = maps_next(m, &e);
	if (ret == 1 && e.start > addr) {
		/* Not found: the walk goes on from addr, that mapping next. */
		m->pos = pos;
		m->off = off;
		m->last_end = 0;
		ret = 0;
	}
	return mapping_out(out, &e, ret);
}

void ncb_maps_close(struct ncb_maps *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m->gate_name);
	free(m->name);
	free(m->text);
	free(m);
}
int ncb_maps_occupants(pid_t pid, const void *addr, size_t len,
		       ncb_mapping_fn fn, void *arg)
{
	uint64_t start = (uintptr_t)addr, end = start + len;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int ret, count = 0;

	if (!len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	ret = ncb_maps_open(&m, pid);
	if (ret)
		return ret;
	ret = ncb_maps_seek(m, start);
	while (!ret) {
		ret = maps_next(m, &e);
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

/*
 * Only whether anything is there: one look-up, not one per occupant.  The
 * whole reader's, which knows the gate area ([vsyscall]) too: the core's
 * look-up (for placements) has no use for it, as nothing can be mapped
 * there.
 */
int ncb__range_occupied(uint64_t start, uint64_t end)
{
	int n = ncb_maps_occupants(0, (const void *)(uintptr_t)start,
				   (size_t)(end - start), stop_at_first,
				   NULL);

	return n < 0 ? n : n > 0;
}

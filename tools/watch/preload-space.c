/* SPDX-License-Identifier: MIT */
/*
 * What the process maps, as the preload watcher knows it: every region a
 * call it took made, with the module whose code asked (the rules' region
 * records), the modules' code (to name a caller), and at a fixed
 * placement the mappings it would replace, read from /proc/self/maps.
 * All of it in static memory under one lock: a judgment is rare, a
 * record cheap, and neither may allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "pagemap.h"
#include "preload.h"

/* ---- The lock ---- */

static int lock_word PL_HOT;
static __thread int held __attribute__((tls_model("initial-exec")));

/*
 * Spun for, yielding: held for a record's few hundred nanoseconds, or a
 * judgment's read of the maps.  A thread that holds it and calls again
 * (from a signal handler) is refused, not deadlocked: its call goes
 * unrecorded, and unjudged.  So is one that finds it held for a second
 * (give_up): a fork the C library did not make (clone(2),
 * syscall(SYS_fork)) runs no handler of ours, and copies it held by a
 * thread the child does not have.
 */
int pl_lock(void)
{
	return pl_lock_within(1.0);
}

int pl_lock_within(double give_up)
{
	int free_ = 0;
	unsigned int spins = 0;
	double since = 0;

	if (held)
		return -1;
	while (!__atomic_compare_exchange_n(&lock_word, &free_, 1, 0,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		free_ = 0;
		if (!(++spins & 63)) {
			if (!since)
				since = pl_now();
			else if (pl_now() - since > give_up)
				return -1;
		}
		sched_yield();
	}
	held = 1;
	return 0;
}

void pl_unlock(void)
{
	held = 0;
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

/*
 * Once the main thread has exited, /proc/self is a zombie's: its maps
 * are empty, its pagemap unreadable, its links gone.  The calling
 * thread's view (Linux 3.17) is asked then, and only then: qemu-user
 * (7.2) makes up the guest's /proc/self, but passes /proc/thread-self
 * through to the host, where it is the emulator's own.  Cleared in a
 * child: its main thread is the one that forked.
 */
static int leader_gone;

/*
 * Asked by a thread other than the main one as it opens a file there:
 * the main thread's working directory link, which the kernel drops as
 * it exits (ENOENT), qemu-user passes to the host (where the emulator's
 * main thread is the guest's), and costs no descriptor; ENOENT where
 * there is no /proc (a chroot) too, which the stat file tells apart.
 */
static int leader_exited(void)
{
	char c;

	if (leader_gone ||
	    pl_sys(__NR_gettid, 0, 0, 0, 0, 0, 0) == pl_getpid() ||
	    pl_sys(__NR_readlinkat, AT_FDCWD, (long)"/proc/self/cwd",
		   (long)&c, 1, 0, 0) != -ENOENT)
		return leader_gone;
	leader_gone = !pl_sys(__NR_faccessat, AT_FDCWD,
			      (long)"/proc/self/stat", F_OK, 0, 0, 0);
	return leader_gone;
}

/* Only the thread that forked goes on in the child. */
static size_t nthreads PL_HOT;

void pl_space_child(void)
{
	nthreads = 0;
	leader_gone = 0;
	held = 0;
	__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

/* ---- /proc/self/maps, a line at a time (the lock held) ---- */

static struct {
	int fd;
	char buf[4096];
	size_t at, len;
} maps;

static const char *proc_dir(void)
{
	return leader_exited() ? "/proc/thread-self/" : "/proc/self/";
}

static int proc_open(const char *name)
{
	char path[64];

	strcpy(path, proc_dir());
	strcat(path, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int maps_open(void)
{
	maps.fd = proc_open("maps");
	maps.at = maps.len = 0;
	return maps.fd < 0 ? -1 : 0;
}

static int maps_byte(void)
{
	ssize_t n;

	if (maps.at == maps.len) {
		do
			n = read(maps.fd, maps.buf, sizeof(maps.buf));
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return -1;
		maps.at = 0;
		maps.len = (size_t)n;
	}
	return (unsigned char)maps.buf[maps.at++];
}

/* A number in base 16 or 10 ended by stop: 0, or -1. */
static int number(uint64_t *v, int base, int stop)
{
	int c, d, any = 0;

	for (*v = 0; (c = maps_byte()) >= 0 && c != stop; any = 1) {
		d = c >= '0' && c <= '9' ? c - '0' :
		    base == 16 && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v * (uint64_t)base + (uint64_t)d;
	}
	return any && c == stop ? 0 : -1;
}

/* The rest of the line, as its path (spaces before it skipped). */
static void path_of(struct pl_map *l)
{
	size_t n = 0;
	int c;

	while ((c = maps_byte()) == ' ')
		;
	for (; c >= 0 && c != '\n'; c = maps_byte())
		if (n < PL_PATH - 1)
			l->path[n++] = (char)c;
	l->path[n] = '\0';
}

/* The next mapping: 1, 0 at the end, -1 for text that is no maps. */
static int maps_next(struct pl_map *l)
{
	uint64_t v;
	char p[5];
	int i;

	/* Its first byte read and given back: is there a line? */
	if (maps_byte() < 0)
		return 0;
	maps.at--;
	if (number(&l->start, 16, '-') || number(&l->end, 16, ' '))
		return -1;
	for (i = 0; i < 5; i++)
		p[i] = (char)maps_byte();
	if (p[4] != ' ')
		return -1;
	l->prot = (p[0] == 'r' ? PROT_READ : 0) |
		  (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	l->shared = p[3] == 's';
	if (number(&l->offset, 16, ' ') || number(&v, 16, ':'))
		return -1;
	l->major = (unsigned int)v;
	if (number(&v, 16, ' '))
		return -1;
	l->minor = (unsigned int)v;
	if (number(&l->ino, 10, ' '))
		return -1;
	path_of(l);
	return 1;
}

/* ---- The modules' code: where a caller is ---- */

#define CODE_MAX 512

static struct code {
	uint64_t start, end, offset;
	struct ncb__wmod mod;
	char path[PL_PATH];
} code[CODE_MAX];
static size_t ncode;
static struct pl_map scratch;

static struct ncb__wmod mod_of(const struct pl_map *l)
{
	struct ncb__wmod m = { 0, 0 };

	if (l->ino) {
		m.dev = makedev(l->major, l->minor);
		m.ino = l->ino;
	}
	return m;
}

/*
 * Every executable mapping (any_file: every file's mapping too), in
 * address order, as the maps say now; whether this library's own code
 * is listed executable.
 */
static int read_code_where(int any_file)
{
	uint64_t self = (uint64_t)(uintptr_t)&read_code_where;
	struct pl_map *l = &scratch;
	int self_x = 0;

	ncode = 0;
	if (maps_open())
		return 1;
	while (ncode < CODE_MAX && maps_next(l) == 1) {
		if (l->start <= self && self < l->end)
			self_x = !!(l->prot & PROT_EXEC);
		if (!(l->prot & PROT_EXEC) && !(any_file && l->ino))
			continue;
		code[ncode].start = l->start;
		code[ncode].end = l->end;
		code[ncode].offset = l->offset;
		code[ncode].mod = mod_of(l);
		memcpy(code[ncode].path, l->path, PL_PATH);
		ncode++;
	}
	close(maps.fd);
	return self_x;
}

/*
 * The code's mappings.  qemu-user (7.2) lists the guest's code without
 * x, this library's too: a file's mappings are taken for code there.
 */
static void read_code(void)
{
	if (!read_code_where(0))
		read_code_where(1);
}

/* The first entry ending above a: where a lies, or would go. */
static size_t code_index(uint64_t a)
{
	size_t lo = 0, hi = ncode;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (code[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct code *code_at(uint64_t a)
{
	size_t i = code_index(a);

	return i < ncode && code[i].start <= a ? &code[i] : NULL;
}

/* The entries meeting [start, end) dropped: what is there has changed. */
static void code_cut(uint64_t start, uint64_t end)
{
	size_t i = code_index(start), j = i;

	while (j < ncode && code[j].start < end)
		j++;
	if (j == i)
		return;
	memmove(&code[i], &code[j], (ncode - j) * sizeof(code[0]));
	ncode -= j - i;
}

/*
 * The mapping holding a, asked of the kernel alone (PROCMAP_QUERY: one
 * call, where the text would be read whole) and kept in its place; the
 * whole text read again where the ioctl does not answer.
 */
static const struct code *code_learn(uint64_t a)
{
	struct pl_map *l = &scratch;
	struct code *c;
	int r = pl_query(a, 0, l);
	size_t i;

	if (r == -ENOTTY) {
		read_code();
		return code_at(a);
	}
	if (r != 1)
		return NULL;
	code_cut(l->start, l->end);
	if (ncode == CODE_MAX)
		ncode = 0;
	i = code_index(l->start);
	memmove(&code[i + 1], &code[i], (ncode - i) * sizeof(code[0]));
	ncode++;
	c = &code[i];
	c->start = l->start;
	c->end = l->end;
	c->offset = l->offset;
	c->mod = mod_of(l);
	memcpy(c->path, l->path, PL_PATH);
	return c;
}

void pl_code_changed(void)
{
	ncode = 0;
}

void pl_site_of(uint64_t addr, struct pl_site *s)
{
	const struct code *c = code_at(addr);

	if (!c)
		c = code_learn(addr);
	memset(s, 0, sizeof(*s));
	s->offset = addr;
	if (!c)
		return;
	s->mod = c->mod;
	if (c->mod.ino) {
		s->offset = addr - c->start + c->offset;
		memcpy(s->path, c->path, PL_PATH);
	}
}

static const struct code *code_of(struct ncb__wmod mod)
{
	size_t i;

	for (i = 0; i < ncode; i++)
		if (code[i].mod.ino == mod.ino && code[i].mod.dev == mod.dev)
			return &code[i];
	return NULL;
}

void pl_module_path(struct ncb__wmod mod, char path[PL_PATH])
{
	const struct code *c;

	path[0] = '\0';
	if (!mod.ino)
		return;
	c = code_of(mod);
	if (!c) {
		read_code();
		c = code_of(mod);
	}
	if (c)
		memcpy(path, c->path, PL_PATH);
}

/* ---- The regions made ---- */

#define REGIONS_MAX 65536

static struct ncb__wregion region_store[REGIONS_MAX];
static struct ncb__wregions regions = {
	region_store, 0, REGIONS_MAX, REGIONS_MAX
};
static double t0 PL_HOT;

struct ncb__wmod pl_file(int fd)
{
	struct ncb__wmod m = { 0, 0 };
	struct stat st;

	if (fd >= 0 && !fstat(fd, &st)) {
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	return m;
}

/* The mapping holding at, read from the text: 1 with *l, 0, or -1. */
static int text_at(uint64_t at, struct pl_map *l)
{
	int r;

	if (maps_open())
		return -1;
	while ((r = maps_next(l)) == 1 && l->start <= at)
		if (at < l->end)
			break;
	close(maps.fd);
	return r == 1 && l->start <= at ? 1 : r < 0 ? -1 : 0;
}

struct ncb__wmod pl_file_at(uint64_t at)
{
	struct ncb__wmod m = { 0, 0 };
	struct pl_map *l = &scratch;
	int r = pl_query(at, 0, l);

	if (r == -ENOTTY)
		r = text_at(at, l);
	return r == 1 ? mod_of(l) : m;
}

void pl_record(uint64_t start, uint64_t end, uint64_t by,
	       struct ncb__wmod file, unsigned int call)
{
	struct ncb__wregion r = { .start = start, .end = end, .call = call };
	struct pl_site s;

	pl_site_of(by, &s);
	r.by = s.mod;
	r.by_off = s.offset;
	r.file = file;
	r.when = pl_since();
	code_cut(start, end);
	/*
	 * A full set keeps none of it, and no older record of it either:
	 * memory of no record is of no known maker, never benign.
	 */
	ncb__wregions_add(&regions, &r);
}

void pl_forget(uint64_t start, uint64_t end)
{
	code_cut(start, end);
	ncb__wregions_cut(&regions, start, end);
}

const struct ncb__wregion *pl_region(size_t i)
{
	return &regions.r[i];
}

/* ---- The process ---- */

static struct ncb__wmod exe, interp;
static int process_known;

double pl_since(void)
{
	return pl_now() - t0;
}

void pl_space_init(void)
{
	t0 = pl_now_direct();
}

static int ends_deleted(const char *path, size_t n)
{
	static const char mark[] = " (deleted)";

	return n >= sizeof(mark) - 1 &&
	       !memcmp(path + n - (sizeof(mark) - 1), mark, sizeof(mark) - 1);
}

/*
 * The program by its link, where no file holds its program headers: the
 * path the link names, where it names one (qemu-user makes up the
 * guest's for readlink(2), and open(2), which before 7.2 gives its own
 * descriptor of the program, but stat(2) follows the emulator's); a
 * program since deleted or replaced: the link.
 */
static struct ncb__wmod exe_by_link(void)
{
	struct ncb__wmod m = { 0, 0 };
	char link[64], path[PL_PATH];
	struct stat st;
	ssize_t n;

	strcpy(link, proc_dir());
	strcat(link, "exe");
	n = readlink(link, path, sizeof(path));
	/* Cut short, it may name another file. */
	path[n > 0 && n < (ssize_t)sizeof(path) ? n : 0] = '\0';
	if ((path[0] == '/' && !ends_deleted(path, (size_t)n) &&
	     !stat(path, &st)) || !stat(link, &st)) {
		m.dev = st.st_dev;
		m.ino = st.st_ino;
	}
	return m;
}

/*
 * The program's and the interpreter's files, asked at the first
 * judgment, not as the process starts: most processes never make one,
 * and a short one would pay for them in its start-up.  The interpreter
 * is the file mapped at its base (AT_BASE; none: the program runs
 * itself).
 */
static void know_process(void)
{
	uint64_t interp_base;

	if (process_known)
		return;
	process_known = 1;
	/*
	 * The file mapped where the program's headers are (AT_PHDR):
	 * whatever its path, and under an emulator the guest's.
	 */
	exe = pl_file_at(getauxval(AT_PHDR));
	if (!exe.ino)
		exe = exe_by_link();
	interp_base = getauxval(AT_BASE);
	interp = interp_base ? pl_file_at(interp_base) : exe;
}

/*
 * The threads pthread_create made, each with its stack (known to its
 * creator, so that a call made before the thread runs finds it) and,
 * once it runs, its thread ID.  The rules tell stacks apart by them.
 */
#define THREADS_MAX 4096

static struct ncb__wthread threads[THREADS_MAX + 1];
static uint64_t bases[THREADS_MAX];

void pl_thread_made(uint64_t base, uint64_t top)
{
	if (nthreads == THREADS_MAX || top <= base)
		return;
	bases[nthreads] = base;
	/* Its stack pointer will be near the top: the rules want one. */
	threads[nthreads++] = (struct ncb__wthread){ 0, top - 1, top };
}

void pl_thread_runs(pid_t tid, uint64_t sp)
{
	size_t i;

	for (i = 0; i < nthreads; i++)
		if (!threads[i].tid && sp >= bases[i] &&
		    sp < threads[i].top) {
			threads[i].tid = tid;
			return;
		}
}

void pl_thread_end(pid_t tid)
{
	size_t i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].tid == tid) {
			threads[i] = threads[--nthreads];
			bases[i] = bases[nthreads];
			return;
		}
}

void pl_proc(struct ncb__wproc *p, const struct ncb__wthread *self)
{
	know_process();
	memset(p, 0, sizeof(*p));
	p->exe = exe;
	p->interp = interp;
	threads[nthreads] = *self;
	p->threads = threads;
	p->nthreads = nthreads + 1;
	p->regions = regions.r;
	p->nregions = regions.n;
}

/*
 * The heap's start (start_brk), field 47 of /proc/self/stat (Linux
 * 3.5); 0 if not known (an emulator makes the file up with zeros).  The
 * name, field 2, may hold anything: the fields are counted after its
 * last ')'.
 */
static uint64_t heap_start(void)
{
	char buf[2048], *p;
	uint64_t v = 0;
	ssize_t n = 0, r;
	int fd = proc_open("stat"), field = 2;

	if (fd < 0)
		return 0;
	do {
		r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n);
		n += r > 0 ? r : 0;
	} while ((r > 0 && n < (ssize_t)sizeof(buf) - 1) ||
		 (r < 0 && errno == EINTR));
	close(fd);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (; p && *p && field < 47; p++)
		field += *p == ' ';
	for (; p && field == 47 && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return p && (*p == ' ' || *p == '\n') ? v : 0;
}

int pl_meets_heap(uint64_t start, uint64_t end)
{
	uint64_t brk = (uint64_t)pl_sys(__NR_brk, 0, 0, 0, 0, 0, 0);

	return start < brk && end > heap_start();
}

/* ---- The victims ---- */

/* What the rules ask of a file: whether it is ELF, and its size. */
static struct file_fact {
	uint64_t dev, ino, size;
	int elf;
} facts[64];

static void file_facts(const struct pl_map *l, struct ncb__wvictim *v)
{
	struct ncb__wmod m = mod_of(l);
	struct file_fact *f = &facts[(m.ino ^ m.dev) % 64];
	unsigned char magic[4];
	struct stat st;
	int fd;

	if (f->ino != m.ino || f->dev != m.dev) {
		/* Only the file the mapping maps: a path renamed since, no. */
		fd = open(l->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		if (fstat(fd, &st) || st.st_dev != m.dev ||
		    st.st_ino != m.ino) {
			close(fd);
			return;
		}
		f->dev = m.dev;
		f->ino = m.ino;
		f->size = (uint64_t)st.st_size;
		f->elf = pread(fd, magic, 4, 0) == 4 && magic[0] == 0x7f &&
			 !memcmp(magic + 1, "ELF", 3);
		close(fd);
	}
	v->elf = f->elf;
	v->file_end = (f->size + pl_page() - 1) & ~(pl_page() - 1);
}

/*
 * This process's pagemap, kept open from one judgment to the next (a
 * fixed placement over a collector's or JIT's reservations asks it each
 * time).  The file holds the memory it was opened for, whichever thread
 * opened it and whether or not that thread still runs; a child of
 * fork's copy holds its parent's, so the child opens its own.  Where the
 * number no longer names it (the program closed it and opened another
 * file there) it is left to the program.
 */
static struct {
	int fd;
	pid_t pid;
	dev_t dev;
	ino_t ino;
} pm = { -1, 0, 0, 0 };

static int pagemap_fd(void)
{
	pid_t pid = pl_getpid();
	struct stat st;
	int same;

	if (pm.fd >= 0) {
		same = !fstat(pm.fd, &st) && st.st_dev == pm.dev &&
		       st.st_ino == pm.ino;
		if (same && pm.pid == pid)
			return pm.fd;
		if (same)
			close(pm.fd);
		pm.fd = -1;
	}
	pm.fd = proc_open("pagemap");
	if (pm.fd >= 0 && fstat(pm.fd, &st)) {
		close(pm.fd);
		pm.fd = -1;
	}
	if (pm.fd < 0)
		return -1;
	pm.pid = pid;
	pm.dev = st.st_dev;
	pm.ino = st.st_ino;
	return pm.fd;
}

/*
 * Whether a PROT_NONE private mapping's pages in [s, e) hold data:
 * present or swapped out, from pagemap (bits 63 and 62).  A reservation
 * never touched has none; not readable: none known.
 */
static int holds_data(uint64_t s, uint64_t e)
{
	static uint64_t ent[512];
	int fd = pagemap_fd(), r;

	/* Not to be read (no /proc): data maybe, the safe side. */
	if (fd < 0)
		return 1;
	r = wpagemap_scan(fd, s, e);
	if (r < 0)
		r = wpagemap_data(fd, s, e, pl_page(), ent, 512);
	return r;
}

static void victim(const struct pl_map *l, uint64_t start, uint64_t end,
		   struct pl_victims *vs)
{
	struct ncb__wvictim *v = &vs->v[vs->n];

	memset(v, 0, sizeof(*v));
	memcpy(vs->path[vs->n], l->path, PL_PATH);
	v->m.size = sizeof(v->m);
	v->m.start = l->start;
	v->m.end = l->end;
	v->m.offset = l->offset;
	v->m.inode = l->ino;
	v->m.dev_major = l->major;
	v->m.dev_minor = l->minor;
	v->m.prot = l->prot;
	v->m.shared = l->shared;
	v->m.path = vs->path[vs->n];
	if (l->ino)
		file_facts(l, v);
	if (!l->prot && !l->shared)
		v->has_data = holds_data(l->start > start ? l->start : start,
					 l->end < end ? l->end : end);
	vs->n++;
}

/* The victims one query each (PROCMAP_QUERY): 0, -1, or -ENOTTY. */
static int victims_queried(uint64_t start, uint64_t end,
			   struct pl_victims *vs)
{
	struct pl_map *l = &scratch;
	uint64_t at = start;
	int r = 0;

	/* None asked past the range: the last may reach its end. */
	while (at < end && (r = pl_query(at, 1, l)) == 1 && l->start < end) {
		if (vs->n == PL_VICTIMS) {
			vs->truncated = 1;
			break;
		}
		victim(l, start, end, vs);
		at = l->end;
	}
	if (at >= end)
		return 0;
	return r == -ENOTTY ? r : r < 0 ? -1 : 0;
}

int pl_mapped_text(uint64_t addr)
{
	return text_at(addr, &scratch);
}

int pl_main_thread_gone(void)
{
	return leader_exited();
}

int pl_victims(uint64_t start, uint64_t end, struct pl_victims *vs)
{
	struct pl_map *l = &scratch;
	int r;

	vs->n = 0;
	vs->truncated = 0;
	r = victims_queried(start, end, vs);
	if (r != -ENOTTY)
		return r;
	vs->n = 0;
	vs->truncated = 0;
	if (maps_open())
		return -1;
	while ((r = maps_next(l)) == 1 && l->start < end) {
		if (l->end <= start)
			continue;
		if (vs->n == PL_VICTIMS) {
			vs->truncated = 1;
			break;
		}
		victim(l, start, end, vs);
	}
	close(maps.fd);
	return r < 0 ? -1 : 0;
}

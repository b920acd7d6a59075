/* SPDX-License-Identifier: MIT */
/*
 * The watcher's corpus: "clobber CASE" makes one fixed placement of a kind
 * noclobber watch must report (or, under --deny, refuse), or one of the
 * benign patterns it must leave alone.  It prints "CASE: ok" when the call
 * succeeded or "CASE: EEXIST" (the errno's name) when it failed, then
 * "intact" or "replaced": whether the victim's bytes are still there.
 *
 *   clobbers: heap stack image interp (the interpreter's first page)
 *             thread-stack many-threads (the stack of
 *             the last of twenty threads) library mremap shmat fork
 *             exec thread vfork after-leader (a thread, once the main
 *             thread has exited) huge (a page asked with MAP_HUGETLB at
 *             the 2 MiB boundary below a heap page: the kernel replaces
 *             the whole huge page, heap and all) huge-mremap (a huge
 *             page mapping moved there, one page long: the same)
 *             malloc-mmap malloc-mremap malloc-shmat (a page of a block
 *             the C library's malloc made with a plain mmap, replaced by
 *             each call) cache LIB (a page of a file another library,
 *             LIB, keeps mapped: tests/progs/cache.c) x32 (the heap
 *             page by x32's mmap, where the kernel takes x32 calls: else
 *             "x32: ENOSYS") prot-none (a page of a malloc block, its
 *             bytes kept PROT_NONE: data still, no reservation)
 *             prot-none-after-leader (the same by a thread, once the
 *             main thread, which made one placement, has exited)
 *             mremap-after-leader (mremap's, none made before) arena
 *             (a page of a thread arena's reservation, which malloc
 *             grows into) merged (a malloc block's first page and the
 *             page of its own the program mapped just below it, which
 *             the kernel merged into one mapping) shared-vm (a page of
 *             a malloc block another process sharing the memory, made
 *             by clone(CLONE_VM), made where the program had a region of
 *             its own) clone-parent (the same block, the program's
 *             child's, replaced by the child's child made with
 *             CLONE_PARENT: the program's child by its parent id)
 *   invalid:  no-type (MAP_FIXED over the heap with no mapping type: the
 *             kernel's EINVAL, and nothing replaced)
 *   benign:   reserve remap-own ring own-region own-stack jit at-break
 *             (memory of its own mapped at the break, which Linux before
 *             6.6 names [heap], mapped over again) heap-end (the same
 *             after the heap grew a page: the kernel merges the two, and
 *             names both [heap]) below-heap (the same just below the
 *             heap's start, which Linux before 6.6 names [heap]; "taken"
 *             where the program's bss ends there) churn
 *             (jit, after 70000 pages mapped and unmapped, each at a new
 *             address)
 *
 * "clobber wait CASE" first reads a line from its input, so that a watcher
 * can attach to it before the call; "clobber linger CASE" reads one
 * after it, so that a watcher that reads late finds it still there.
 * "clobber end-by HOW CASE" ends by HOW: _exit, _Exit or exit_group (by
 * syscall(2)), none of which runs exit's handlers; exec (/bin/sh, which
 * exits with CASE's status) or exec-fail (an exec that fails, then a
 * return).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARK 0x5a
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define X32 0x40000000L		/* __X32_SYSCALL_BIT */

static size_t pg;
static const char *name;

/* The mapping whose path (or name) contains what, from our maps. */
static int find_mapping(const char *what, uintptr_t *start, uintptr_t *end)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long s, e;
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (strstr(line, what) && sscanf(line, "%lx-%lx", &s, &e) == 2)
			found = 1;
	if (f)
		fclose(f);
	if (found) {
		*start = s;
		*end = e;
	}
	return found;
}

/* A page wholly inside a block of the heap: only our bytes are at risk. */
static uintptr_t heap_page(void)
{
	char *b = malloc(4 * pg);

	return ((uintptr_t)b + pg - 1) & ~(pg - 1);
}

/* The outcome: the call's, then whether the marked page survived. */
static int outcome(void *p, uintptr_t page, unsigned char mark)
{
	int err = p == MAP_FAILED ? errno : 0;

	printf("%s: %s\n", name, err ? strerrorname_np(err) : "ok");
	printf("%s\n", ((unsigned char *)page)[0] == mark ? "intact"
							 : "replaced");
	fflush(stdout);
	return err ? 1 : 0;
}

/*
 * A huge page replaced the heap, with nothing in it: touching it faults
 * (SIGBUS, none being free), stdio's buffer and malloc's chunks with it.
 * Said with write(2), the process ended without freeing or flushing.
 */
static void huge_done(void)
{
	static const char ok[] = ": ok\nreplaced\n";

	if (write(1, name, strlen(name)) < 0 || write(1, ok, strlen(ok)) < 0)
		_exit(2);
	_exit(0);
}

/*
 * A 4 KiB MAP_HUGETLB placement at the huge page boundary below a heap
 * page: the kernel takes the whole huge page (MAP_NORESERVE: no huge page
 * need be free for the call, only to touch one, so it works with
 * nr_hugepages 0).  Whatever else is between the boundary and the heap
 * goes too.
 */
static int huge(void)
{
	uintptr_t page = heap_page(), at = page & ~((2UL << 20) - 1);
	void *p;

	memset((void *)page, MARK, pg);
	fflush(stdout);
	p = mmap((void *)at, pg, PROT_READ | PROT_WRITE,
		 ANON | MAP_FIXED | MAP_HUGETLB | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED)
		huge_done();
	return outcome(p, page, MARK);
}

/*
 * The same by mremap: a huge page mapping (nothing in it, none needed
 * with MAP_NORESERVE) moved to the huge page boundary below a heap page
 * with a length of one page, which the kernel takes as one huge page.
 */
static int huge_mremap(void)
{
	uintptr_t page = heap_page(), at = page & ~((2UL << 20) - 1);
	void *src = mmap(NULL, 2UL << 20, PROT_READ | PROT_WRITE,
			 ANON | MAP_HUGETLB | MAP_NORESERVE, -1, 0), *p;

	if (src == MAP_FAILED)
		return 2;
	memset((void *)page, MARK, pg);
	fflush(stdout);
	p = mremap(src, 2UL << 20, pg, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)at);
	if (p != MAP_FAILED)
		huge_done();
	munmap(src, 2UL << 20);
	return outcome(p, page, MARK);
}

static int over(uintptr_t page)
{
	void *p;

	memset((void *)page, MARK, pg);
	p = mmap((void *)page, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED,
		 -1, 0);
	return outcome(p, page, MARK);
}

/* A page of [stack] well below where the stack is in use. */
static int stack(void)
{
	uintptr_t s, e, here = (uintptr_t)&s;

	if (!find_mapping("[stack]", &s, &e) || here - s < 4 * pg) {
		printf("%s: no spare page in [stack]\n", name);
		return 2;
	}
	return over(s);
}

/* Its own image's first page (the ELF header: read, never written). */
static int image(const char *self)
{
	uintptr_t s, e;
	void *p;

	if (!find_mapping(self, &s, &e))
		return 2;
	p = mmap((void *)s, pg, PROT_READ, ANON | MAP_FIXED, -1, 0);
	return outcome(p, s, 0x7f);
}

static int library(void)
{
	uintptr_t s, e;
	void *p;

	if (!find_mapping("libc.so", &s, &e))
		return 2;
	p = mmap((void *)s, pg, PROT_READ, ANON | MAP_FIXED, -1, 0);
	return outcome(p, s, 0x7f);
}

/* The interpreter's first page (its ELF header, at AT_BASE). */
static int interp(void)
{
	uintptr_t s = getauxval(AT_BASE);
	void *p;

	if (!s)
		return 2;
	p = mmap((void *)s, pg, PROT_READ, ANON | MAP_FIXED, -1, 0);
	return outcome(p, s, 0x7f);
}

static int fds[2];

static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	return read(fds[0], &c, 1) == 1 ? NULL : arg;
}

/* The lowest page of another thread's stack, above its guard. */
#define MANY 20

/* n sleeping threads; the last one's stack is the victim. */
static int thread_stack(int n)
{
	pthread_attr_t at;
	pthread_t t[MANY];
	void *base;
	size_t size;
	int i, r;

	if (pipe(fds))
		return 2;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, sleeper, NULL))
			return 2;
	if (pthread_getattr_np(t[n - 1], &at) ||
	    pthread_attr_getstack(&at, &base, &size))
		return 2;
	r = over((uintptr_t)base);
	for (i = 0; i < n; i++)
		if (write(fds[1], "", 1) != 1)
			return 2;
	for (i = 0; i < n; i++)
		if (pthread_join(t[i], NULL))
			return 2;
	return r;
}

/*
 * A page well inside a block of the C library's malloc so large that it
 * maps the block (past M_MMAP_THRESHOLD) with a plain mmap.
 */
static uintptr_t malloc_page(void)
{
	char *b = malloc(1 << 20);

	return b ? ((uintptr_t)b + 16 * pg) & ~(pg - 1) : 0;
}

/*
 * Its own page made just below a malloc block (same protection: the
 * kernel merges the two into one mapping), then a range over both
 * replaced: two makings, one the C library's.
 */
static int merged(void)
{
	uintptr_t block, page = 0;
	char *own = NULL;
	void *p;
	int i;

	/* The page below a block may be another mapping's: another block. */
	for (i = 0; i < 8 && !own; i++) {
		block = malloc_page();
		if (!block)
			return 2;
		page = block - 16 * pg;
		own = (char *)page - pg;
		if (mmap(own, pg, PROT_READ | PROT_WRITE,
			 ANON | MAP_FIXED_NOREPLACE, -1, 0) != own)
			own = NULL;
	}
	if (!own)
		return 2;
	memset((void *)page, MARK, pg);
	p = mmap(own, 2 * pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, -1,
		 0);
	return outcome(p, page, MARK);
}

/* A page's bytes kept, no access to them: then replaced. */
static int prot_none(uintptr_t page)
{
	void *p;

	memset((void *)page, MARK, pg);
	if (mprotect((void *)page, pg, PROT_NONE))
		return 2;
	p = mmap((void *)page, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED,
		 -1, 0);
	if (p == MAP_FAILED)
		mprotect((void *)page, pg, PROT_READ);
	return outcome(p, page, MARK);
}

static int do_mremap(uintptr_t page)
{
	char *src = mmap(NULL, pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	void *p;

	memset((void *)page, MARK, pg);
	p = mremap(src, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)page);
	return outcome(p, page, MARK);
}

static int do_shmat(uintptr_t page)
{
	int id = shmget(IPC_PRIVATE, pg, IPC_CREAT | 0600);
	void *p;

	if (id < 0)
		return 2;
	memset((void *)page, MARK, pg);
	p = shmat(id, (void *)page, SHM_REMAP);
	shmctl(id, IPC_RMID, NULL);
	return outcome(p == (void *)-1 ? MAP_FAILED : p, page, MARK);
}

/*
 * The heap clobbered by a thread once the main thread has exited (its
 * /proc shows no address space then): the process's status is the
 * thread's exit's.
 */
static pid_t leader;
static int (*leader_then)(uintptr_t page);

/*
 * A fixed placement over memory of its own, said nowhere: a watcher has
 * judged one (and kept what it reads the process by) before the main
 * thread goes.
 */
static int judged_once(void)
{
	char *p = mmap(NULL, pg, PROT_READ, ANON, -1, 0);

	return p == MAP_FAILED ||
	       mmap(p, pg, PROT_READ, ANON | MAP_FIXED, -1, 0) != p;
}

/*
 * Field n (3 or more) of a stat file, in buf: counted after the name's
 * last ')', the name (field 2) holding anything.  NULL if none.
 */
static char *stat_field(const char *path, int n, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t got = f ? fread(buf, 1, len - 1, f) : 0;
	char *p;
	int field = 2;

	if (f)
		fclose(f);
	buf[got] = '\0';
	p = strrchr(buf, ')');
	for (; p && *p && field < n; p++)
		field += *p == ' ';
	return p && *p ? p : NULL;
}

static void *after_leader(void *arg)
{
	char path[64], buf[2048], *s = NULL;
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)leader);
	for (i = 0; i < 10000 && !s; i++) {
		s = stat_field(path, 3, buf, sizeof(buf));
		if (s && *s != 'Z')
			s = NULL;
		if (!s)
			usleep(1000);
	}
	exit(s ? leader_then((uintptr_t)arg) : 2);
}

static void *arena_block(void *arg)
{
	(void)arg;
	return malloc(100);
}

/* The protection of the mapping holding a, from the maps; "" if none. */
static void perms_at(uintptr_t a, char perms[5])
{
	unsigned long s, e;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	perms[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &s, &e, perms) == 3 &&
		    a >= s && a < e)
			break;
		else
			perms[0] = '\0';
	if (f)
		fclose(f);
}

/*
 * A page of a thread arena's reservation: glibc's malloc maps a heap of
 * HEAP_MAX_SIZE (2 * DEFAULT_MMAP_THRESHOLD_MAX), aligned to it, with a
 * plain mmap, PROT_NONE past what it uses, and grows into the rest with
 * mprotect, over whatever is there by then.  "intact": the page is the
 * arena's reservation still.
 */
static int arena(void)
{
	uintptr_t max = (8UL << 20) * sizeof(long), heap, at;
	char perms[5];
	pthread_t t;
	void *b, *p;
	int err;

	if (pthread_create(&t, NULL, arena_block, NULL) ||
	    pthread_join(t, &b) || !b)
		return 2;
	heap = (uintptr_t)b & ~(max - 1);
	for (at = heap; at < heap + max; at += pg) {
		perms_at(at, perms);
		if (!strcmp(perms, "---p"))
			break;
	}
	if (at >= heap + max)
		return 2;
	p = mmap((void *)at, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, -1,
		 0);
	err = p == MAP_FAILED ? errno : 0;
	perms_at(at, perms);
	printf("%s: %s\n%s\n", name, err ? strerrorname_np(err) : "ok",
	       strcmp(perms, "---p") ? "replaced" : "intact");
	return err ? 1 : 0;
}

/* The main heap's page, clobbered by a second thread. */
static void *in_thread(void *arg)
{
	return (void *)(intptr_t)over((uintptr_t)arg);
}

/* The heap clobbered by a child (fork), or by the one sharing it. */
static int child_clobbers(int use_vfork)
{
	uintptr_t page = heap_page();
	int status;
	pid_t pid;

	memset((void *)page, MARK, pg);
	fflush(stdout);
	pid = use_vfork ? vfork() : fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		/* In a vfork child only a system call, then _exit. */
		void *p = mmap((void *)page, pg, PROT_READ | PROT_WRITE,
			       ANON | MAP_FIXED, -1, 0);

		_exit(p == MAP_FAILED ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 2;
	printf("%s: %s\n", name, WEXITSTATUS(status) ? "EEXIST" : "ok");
	printf("%s\n", !use_vfork || ((unsigned char *)page)[0] == MARK ?
		       "intact" : "replaced");
	return WEXITSTATUS(status);
}

/*
 * A region of the program's own at r (len: what the C library's malloc
 * maps for a MiB), unmapped and made a malloc block: the C library's
 * mmap lands where the region was (of its size, the lowest mapping).
 * The block, all MARK, or NULL if it landed elsewhere.
 */
#define BLOCK (1 << 20)

static char *retaken(char *r)
{
	char *b;

	munmap(r, BLOCK + pg);
	b = malloc(BLOCK);
	if (!b || (uintptr_t)b / pg != (uintptr_t)r / pg)
		return NULL;
	memset(b, MARK, BLOCK);
	return b;
}

static char *vm_block;

static int vm_child(void *r)
{
	vm_block = retaken(r);
	return 0;
}

/*
 * Another process in the program's memory (CLONE_VM without
 * CLONE_THREAD) makes a malloc block where the program had a region of
 * its own: the program's record of it is stale, the block the C
 * library's.  The program then maps over the block's second page.
 */
static int shared_vm(void)
{
	char *r = mmap(NULL, BLOCK + pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	size_t size = 256 * 1024;
	char *stack = malloc(size);
	int status;
	void *p;
	pid_t pid;

	if (r == MAP_FAILED || !stack)
		return 2;
	pid = clone(vm_child, stack + size, CLONE_VM | SIGCHLD, r);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !vm_block)
		return 2;
	p = mmap(r + pg, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)r + pg, MARK);
}

/*
 * The program's child makes a malloc block where the program had a
 * region of its own, and a child of its own with CLONE_PARENT (whose
 * parent id is the program's): that one has the child's memory, not the
 * program's, and maps over the block's second page.
 */
static int clone_parent(void)
{
	char *r = mmap(NULL, BLOCK + pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	int status, st = 2, n;
	pid_t a, b;
	void *p;

	if (r == MAP_FAILED)
		return 2;
	fflush(stdout);
	a = fork();
	if (a < 0)
		return 2;
	if (!a) {
		if (!retaken(r))
			_exit(2);
		b = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0,
				   0);
		if (b)
			_exit(b < 0 ? 2 : 0);
		p = mmap(r + pg, pg, PROT_READ | PROT_WRITE,
			 ANON | MAP_FIXED, -1, 0);
		_exit(outcome(p, (uintptr_t)r + pg, MARK));
	}
	/* Both are the program's children: the child's, then its child's. */
	for (n = 0; n < 2 && (b = wait(&status)) > 0; n++)
		if (b != a || !WIFEXITED(status) || WEXITSTATUS(status))
			st = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
	return n == 2 ? st : 2;
}

/* Benign: a reservation, then memory committed inside it. */
static int reserve(void)
{
	char *r = mmap(NULL, 16 * pg, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
	void *p;

	if (r == MAP_FAILED)
		return 2;
	p = mmap(r + 4 * pg, 4 * pg, PROT_READ | PROT_WRITE,
		 ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)r + 4 * pg, 0);
}

/* Benign: a program remapping part of its own anonymous mapping. */
static int remap_own(void)
{
	char *m = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, ANON, -1, 0);
	void *p;

	if (m == MAP_FAILED)
		return 2;
	p = mmap(m + 2 * pg, 2 * pg, PROT_READ, ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)m + 2 * pg, 0);
}

/*
 * Benign: a ring buffer, one memfd mapped twice side by side into a
 * reservation made for it.
 */
static int ring(void)
{
	int fd = memfd_create("ring", 0);
	char *r;
	void *a, *b;

	if (fd < 0 || ftruncate(fd, (off_t)(4 * pg)))
		return 2;
	r = mmap(NULL, 8 * pg, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return 2;
	a = mmap(r, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd, 0);
	b = mmap(r + 4 * pg, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	if (a == MAP_FAILED)
		return outcome(a, (uintptr_t)r, 0);
	((char *)a)[1] = MARK;
	if (b != MAP_FAILED && ((char *)b)[1] != MARK)
		return 2;
	return outcome(b, (uintptr_t)r, 0);
}

/*
 * Benign: memory committed in a reservation, then committed again over
 * itself (HotSpot uncommits and recommits its heap so), by the module
 * that made it.
 */
static int own_region(void)
{
	char *r = mmap(NULL, 16 * pg, PROT_NONE, ANON | MAP_NORESERVE, -1, 0);
	void *p;

	if (r == MAP_FAILED || mmap(r + 4 * pg, 4 * pg, PROT_READ |
				    PROT_WRITE, ANON | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		return 2;
	r[4 * pg] = MARK;
	p = mmap(r + 4 * pg, 4 * pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED,
		 -1, 0);
	return outcome(p, (uintptr_t)r + 4 * pg, 0);
}

/*
 * Benign: a thread mapping over the far end of its own stack, below its
 * stack pointer (HotSpot's guard zones).
 */
static void *guard_zone(void *arg)
{
	pthread_attr_t at;
	void *base, *p;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &at) ||
	    pthread_attr_getstack(&at, &base, &size))
		return (void *)2;
	p = mmap(base, 2 * pg, PROT_NONE, ANON | MAP_FIXED, -1, 0);
	(void)arg;
	printf("%s: %s\n", name, p == MAP_FAILED ? strerrorname_np(errno)
						  : "ok");
	return (void *)(intptr_t)(p == MAP_FAILED);
}

/*
 * Benign: a JIT's code region, made with a plain mmap, a page of it
 * replaced by fresh memory (code thrown away) by the module that made it.
 */
static int jit(void)
{
	char *r = mmap(NULL, 16 * pg, PROT_READ | PROT_WRITE | PROT_EXEC,
		       ANON, -1, 0);
	void *p;

	if (r == MAP_FAILED)
		return 2;
	r[4 * pg] = (char)0xc3;
	p = mmap(r + 4 * pg, pg, PROT_READ | PROT_WRITE | PROT_EXEC,
		 ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)r + 4 * pg, 0);
}

/*
 * Benign: jit's region, made after more pages than a watcher keeps
 * records of were mapped and unmapped, each where none was before (V8
 * places its pages at random hints): records of memory since unmapped
 * must not leave the region of no maker.
 */
static int churn(void)
{
	size_t i, n = 70000;
	char *base = mmap(NULL, 2 * n * pg, PROT_NONE, ANON | MAP_NORESERVE,
			  -1, 0), *p;

	if (base == MAP_FAILED || munmap(base, 2 * n * pg))
		return 2;
	for (i = 0; i < n; i++) {
		p = mmap(base + 2 * i * pg, pg, PROT_READ, ANON, -1, 0);
		if (p == MAP_FAILED || munmap(p, pg))
			return 2;
	}
	return jit();
}

/* Benign: a page of its own at b, named [heap] by some kernels, mapped
   over again. */
static int own_page_at(char *b)
{
	void *p;

	if (mmap(b, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED_NOREPLACE,
		 -1, 0) != b)
		return 2;
	p = mmap(b, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)b, 0);
}

/* The heap's start (start_brk): field 47 of /proc/self/stat. */
static char *heap_start(void)
{
	char buf[2048], *p = stat_field("/proc/self/stat", 47, buf,
					sizeof(buf));
	unsigned long v = 0;

	if (!p || sscanf(p, "%lu", &v) != 1)
		return NULL;
	return (char *)v;
}

static int near_heap(const char *how)
{
	char *b;

	if (!strcmp(how, "at-break"))
		return own_page_at(sbrk(0));
	/* The heap made a page long: the kernel merges the page with it. */
	if (!strcmp(how, "heap-end"))
		return sbrk(pg) == (void *)-1 ? 2 : own_page_at(sbrk(0));
	b = heap_start();
	if (!b)
		return 2;
	/* Without address randomisation the program's bss ends there. */
	if (!msync(b - pg, pg, MS_ASYNC)) {
		printf("%s: taken\n", how);
		return 3;
	}
	return own_page_at(b - pg);
}

/*
 * A page of a file the library lib keeps mapped (its cache: a plain
 * mmap made by its own code), replaced by the program.
 */
static int cache(const char *lib)
{
	char path[] = "/tmp/ncb-cache-XXXXXX";
	void *(*map)(int, size_t), *h = dlopen(lib, RTLD_NOW);
	unsigned char page[4096];
	char *c;
	void *p;
	int fd;

	if (!h || !(*(void **)&map = dlsym(h, "cache_map")) ||
	    (fd = mkstemp(path)) < 0)
		return 2;
	unlink(path);
	memset(page, MARK, sizeof(page));
	if (pg > sizeof(page) || write(fd, page, pg) != (ssize_t)pg)
		return 2;
	c = map(fd, pg);
	if (!c)
		return 2;
	p = mmap(c, pg, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, -1, 0);
	return outcome(p, (uintptr_t)c, MARK);
}

static int run(int argc, char **argv)
{
	pthread_t t;
	void *r;

	if (!strcmp(name, "heap"))
		return over(heap_page());
	if (!strcmp(name, "huge"))
		return huge();
	if (!strcmp(name, "huge-mremap"))
		return huge_mremap();
	if (!strcmp(name, "stack"))
		return stack();
	if (!strcmp(name, "image"))
		return image(argv[0][0] == '/' ? argv[0] : "clobber");
	if (!strcmp(name, "many-threads"))
		return thread_stack(MANY);
	if (!strcmp(name, "thread-stack"))
		return thread_stack(1);
	if (!strcmp(name, "interp"))
		return interp();
	if (!strcmp(name, "library"))
		return library();
	if (!strcmp(name, "mremap"))
		return do_mremap(heap_page());
	if (!strcmp(name, "shmat"))
		return do_shmat(heap_page());
	if (!strcmp(name, "malloc-mmap"))
		return over(malloc_page());
	if (!strcmp(name, "arena"))
		return arena();
	if (!strcmp(name, "prot-none"))
		return prot_none(malloc_page());
	if (!strcmp(name, "malloc-mremap"))
		return do_mremap(malloc_page());
	if (!strcmp(name, "malloc-shmat"))
		return do_shmat(malloc_page());
	if (!strcmp(name, "merged"))
		return merged();
	if (!strcmp(name, "shared-vm"))
		return shared_vm();
	if (!strcmp(name, "clone-parent"))
		return clone_parent();
	if (!strcmp(name, "cache") && argc > 2)
		return cache(argv[2]);
	if (!strcmp(name, "jit"))
		return jit();
	if (!strcmp(name, "at-break") || !strcmp(name, "heap-end") ||
	    !strcmp(name, "below-heap"))
		return near_heap(name);
	if (!strcmp(name, "churn"))
		return churn();
	if (!strcmp(name, "x32")) {
		uintptr_t page = heap_page();

		memset((void *)page, MARK, pg);
		return outcome((void *)syscall(X32 | SYS_mmap, page, pg,
					       PROT_READ | PROT_WRITE,
					       ANON | MAP_FIXED, -1, 0),
			       page, MARK);
	}
	if (!strcmp(name, "fork") || !strcmp(name, "vfork"))
		return child_clobbers(name[0] == 'v');
	if (!strcmp(name, "exec") && argc > 2) {
		execl(argv[0], argv[0], argv[2], (char *)NULL);
		return 2;
	}
	if (!strcmp(name, "thread"))
		return pthread_create(&t, NULL, in_thread,
				      (void *)heap_page()) ||
		       pthread_join(t, &r) ? 2 : (int)(intptr_t)r;
	if (!strcmp(name, "reserve"))
		return reserve();
	if (!strcmp(name, "remap-own"))
		return remap_own();
	if (!strcmp(name, "ring"))
		return ring();
	if (!strcmp(name, "own-region"))
		return own_region();
	if (!strcmp(name, "after-leader") ||
	    !strcmp(name, "prot-none-after-leader") ||
	    !strcmp(name, "mremap-after-leader")) {
		leader = getpid();
		leader_then = name[0] == 'a' ? over :
			      name[0] == 'p' ? prot_none : do_mremap;
		if ((name[0] == 'p' && judged_once()) ||
		    pthread_create(&t, NULL, after_leader,
				   (void *)(name[0] == 'p' ? malloc_page() :
					    heap_page())))
			return 2;
		pthread_exit(NULL);
	}
	if (!strcmp(name, "no-type")) {
		uintptr_t page = heap_page();

		memset((void *)page, MARK, pg);
		return outcome(mmap((void *)page, pg, PROT_READ,
				    MAP_ANONYMOUS | MAP_FIXED, -1, 0), page,
			       MARK);
	}
	if (!strcmp(name, "own-stack"))
		return pthread_create(&t, NULL, guard_zone, NULL) ||
		       pthread_join(t, &r) ? 2 : (int)(intptr_t)r;
	fprintf(stderr, "usage: clobber CASE (see the source)\n");
	return 2;
}

/* The process goes on as /bin/sh, which exits with status. */
static int end_by_exec(int status)
{
	char code[32];

	snprintf(code, sizeof(code), "exit %d", status);
	execl("/bin/sh", "sh", "-c", code, (char *)NULL);
	return 2;
}

int main(int argc, char **argv)
{
	const char *ending = NULL;
	char line[16];
	int linger, ret;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	name = argc > 1 ? argv[1] : "";
	if (!strcmp(name, "wait") && argc > 2) {
		if (!fgets(line, sizeof(line), stdin))
			return 2;
		argv++;
		argc--;
		name = argv[1];
	}
	if (!strcmp(name, "end-by") && argc > 3) {
		ending = argv[2];
		argv += 2;
		argc -= 2;
		name = argv[1];
	}
	linger = !strcmp(name, "linger") && argc > 2;
	if (linger) {
		argv++;
		argc--;
		name = argv[1];
	}
	ret = run(argc, argv);
	fflush(stdout);
	if (linger && !fgets(line, sizeof(line), stdin))
		return 2;
	if (ending && !strcmp(ending, "_exit"))
		_exit(ret);
	if (ending && !strcmp(ending, "_Exit"))
		_Exit(ret);
	if (ending && !strcmp(ending, "exit_group"))
		syscall(SYS_exit_group, ret);
	if (ending && !strcmp(ending, "exec"))
		return end_by_exec(ret);
	if (ending && !strcmp(ending, "exec-fail"))
		return execl("/nonexistent/noclobber", "x", (char *)NULL) ?
		       ret : 2;
	return ending ? 2 : ret;
}

/* SPDX-License-Identifier: MIT */
/* Reading mappings: both readers, odd paths, other processes, bad input. */
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include "ncbtest.h"

/* A file whose name has spaces and brackets, mapped shared at offset. */
static void odd_path(int text)
{
	/* Its own directory: other rows of the matrix run this at once. */
	char dir[] = "/tmp/ncb maps (test) [x] XXXXXX", path[256];
	size_t pg = test_page();
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	struct stat st;
	char *p;
	int fd;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/a file  with spaces %d", dir,
		 (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, (off_t)(4 * pg)), 0);
	ASSERT_EQ(fstat(fd, &st), 0);
	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)pg);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p + pg, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)p);
	ASSERT_EQ(e.end, (uintptr_t)p + 2 * pg);
	ASSERT_EQ(e.offset, pg);
	ASSERT_EQ(e.prot, PROT_READ | PROT_WRITE);
	ASSERT_EQ(e.shared, 1);
	ASSERT_EQ(e.inode, st.st_ino);
	if (strcmp(e.path, path))
		FAIL("path '%s', wanted '%s'", e.path, path);
	ncb_maps_close(m);
	/* Unlinked while mapped: the kernel says so after the path. */
	unlink(path);
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p, &e), 1);
	strcat(path, " (deleted)");
	if (strcmp(e.path, path))
		FAIL("path '%s', wanted '%s'", e.path, path);
	ncb_maps_close(m);
	rmdir(dir);
	close(fd);
}
TEST(odd_path_query) { odd_path(0); }
TEST(odd_path_text) { odd_path(1); }

/* 0 if both readers list the same mappings, line for line. */
static int compare_readers(void)
{
	struct ncb_mapping a = NCB_INIT(ncb_mapping);
	struct ncb_mapping b = NCB_INIT(ncb_mapping);
	struct ncb_maps *q, *t;
	int ra, rb, n = 0, diff = 0;
	char *path;

	ASSERT_EQ(ncb__maps_open_text(&t, 0), 0);
	ASSERT_EQ(ncb_maps_open(&q, 0), 0);
	do {
		ra = ncb_maps_next(t, &a);
		rb = ncb_maps_next(q, &b);
		if (ra != rb || ra != 1)
			break;
		n++;
		path = strdup(a.path);
		diff = a.start != b.start || a.end != b.end ||
		       a.prot != b.prot || a.shared != b.shared ||
		       a.offset != b.offset || a.inode != b.inode ||
		       a.dev_major != b.dev_major ||
		       a.dev_minor != b.dev_minor || strcmp(path, b.path);
		if (diff)
			printf("# %jx-%jx %s != %jx-%jx %s\n",
			       (uintmax_t)a.start, (uintmax_t)a.end, path,
			       (uintmax_t)b.start, (uintmax_t)b.end, b.path);
		free(path);
	} while (!diff);
	ncb_maps_close(t);
	ncb_maps_close(q);
	ASSERT_GT(n, 3);
	return diff || ra != rb;
}

/*
 * Under valgrind the tool's own mappings change while the test reads: only
 * a quiescent moment can be compared, so try a few times.
 */
/*
 * A mapping that grows over the end of the one just read (a process
 * changing while it is read): the walk goes on from that end, never back
 * and never over a byte twice.
 */
static void grown_while_read(int text)
{
	size_t pg = test_page();
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	char *r;

	r = mmap(NULL, 8 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(r != MAP_FAILED);
	ASSERT_TRUE(mmap(r + 2 * pg, 2 * pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    r + 2 * pg);
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)r + 2 * pg, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)r + 2 * pg);
	ASSERT_EQ(e.end, (uintptr_t)r + 4 * pg);
	/* [r + 2pg, r + 6pg) now: one area across the end just read. */
	ASSERT_TRUE(mmap(r + 4 * pg, 2 * pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    r + 4 * pg);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)r + 4 * pg);
	/*
	 * The ioctl sees the area as it is now; the text, as it was when
	 * the piece holding that line was read, before or after.
	 */
	if (!text || e.end != (uintptr_t)r + 8 * pg)
		ASSERT_EQ(e.end, (uintptr_t)r + 6 * pg);
	ncb_maps_close(m);
	munmap(r, 8 * pg);
}

TEST(grown_while_read_query)
{
	if (!ncb_core_procmap_query())
		SKIP("no PROCMAP_QUERY here: the text is read");
	grown_while_read(0);
}

TEST(grown_while_read_text) { grown_while_read(1); }

TEST(readers_agree)
{
	int i;
	void *volatile warm = malloc(256 * 1024);

	free(warm);
	for (i = 0; i < 5; i++)
		if (!compare_readers())
			return;
	FAIL("the two readers disagree");
}

TEST(stack_is_named)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int local = 0;

	ASSERT_EQ(ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)&local, &e), 1);
	/* valgrind runs its client on a stack of its own making. */
	if (strcmp(e.path, "[stack]") && !getenv("NCB_TEST_VALGRIND"))
		FAIL("the stack is named '%s'", e.path);
	ASSERT_EQ(e.prot & (PROT_READ | PROT_WRITE), PROT_READ | PROT_WRITE);
	/* Past the last mapping there is nothing. */
	ASSERT_EQ(ncb_maps_seek(m, UINT64_MAX), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 0);
	ncb_maps_close(m);
}

/* Another process's mappings, by PID. */
TEST(other_process)
{
	size_t pg = test_page();
	char *p = map_sentinel(NULL, 3 * pg, 1);
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int fds[2];
	char c;
	pid_t pid;

	/* There another process's maps are the emulator's host view. */
	require_prot_none_in_maps();
	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		munmap(p + pg, pg);
		c = 1;
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(read(fds[0], &c, 1), 1);
	ASSERT_EQ(ncb_maps_open(&m, pid), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p, &e), 1);
	ASSERT_EQ(e.end, (uintptr_t)p + pg);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p + pg, &e), 0);
	/* Not found: the walk goes on from there, nothing passed over. */
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)p + 2 * pg);
	ncb_maps_close(m);
	ASSERT_EQ(ncb__maps_open_text(&m, pid), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p + pg, &e), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)p + 2 * pg);
	ncb_maps_close(m);
	ASSERT_EQ(ncb_maps_occupants(pid, p, 3 * pg, NULL, NULL), 2);
	ASSERT_EQ(ncb_maps_occupants(0, p, 3 * pg, NULL, NULL), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

static int stop_at_first(const struct ncb_mapping *m, void *arg)
{
	*(uint64_t *)arg = m->start;
	return 1;
}

TEST(occupants_callback)
{
	size_t pg = test_page();
	char *w = free_window(5 * pg);
	uint64_t first = 0;

	map_sentinel(w + pg, pg, 1);
	map_sentinel(w + 3 * pg, pg, 1);
	mprotect(w + 3 * pg, pg, PROT_READ);
	ASSERT_EQ(ncb_maps_occupants(0, w, 5 * pg, NULL, NULL), 2);
	ASSERT_EQ(ncb_maps_occupants(0, w, 5 * pg, stop_at_first, &first), 1);
	ASSERT_EQ(first, (uintptr_t)w + pg);
	ASSERT_EQ(ncb_maps_occupants(0, w, pg, NULL, NULL), 0);
	ASSERT_EQ(ncb_maps_occupants(0, w + 2 * pg, 1, NULL, NULL), 0);
	ASSERT_EQ(ncb_maps_occupants(0, w + 4 * pg - 1, 1, NULL, NULL), 1);
}

TEST(bad_arguments)
{
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;

	ASSERT_EQ(ncb_maps_open(NULL, 0), -EINVAL);
	ASSERT_EQ(ncb_maps_open(&m, -1), -EINVAL);
	ASSERT_EQ(ncb_maps_open(&m, 0x7ffffff0), -ENOENT);
	ASSERT_EQ(ncb_maps_next(NULL, &e), -EINVAL);
	ASSERT_EQ(ncb_maps_seek(NULL, 0), -EINVAL);
	ASSERT_EQ(ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_next(m, NULL), -EINVAL);
	ncb_maps_close(m);
	ncb_maps_close(NULL);
	ASSERT_EQ(ncb_maps_occupants(0, (void *)4096, 0, NULL, NULL), -EINVAL);
	ASSERT_EQ(ncb_maps_occupants(0, (void *)-4096L, 8192, NULL, NULL),
		  -EINVAL);
	ASSERT_EQ(ncb_maps_occupants(-1, (void *)4096, 1, NULL, NULL), -EINVAL);
}

static int from_text(const char *text)
{
	struct ncb_maps *m;
	int r = ncb__maps_from_text(&m, text, strlen(text));

	if (!r)
		ncb_maps_close(m);
	return r;
}

/* Hostile or broken text is refused, never half-read. */
TEST(malformed_text)
{
	ASSERT_EQ(from_text(""), 0);
	ASSERT_EQ(from_text("1000-2000 r-xp 00000000 08:01 12 /bin/x\n"), 0);
	ASSERT_EQ(from_text("1000-2000 r-xp 00000000 08:01 12 /bin/x"), -EIO);
	ASSERT_EQ(from_text("1000 2000 r-xp 00000000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("1000-2000 r-qp 00000000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("1000-2000 r-xz 00000000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("1000-2000 r-xp 0000g000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("1000-2000 r-xp 00000000 0801 12\n"), -EIO);
	ASSERT_EQ(from_text("1000-2000 r-xp 00000000 08:01 x\n"), -EIO);
	ASSERT_EQ(from_text("2000-1000 r-xp 00000000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("2000-2000 r-xp 00000000 08:01 12\n"), -EIO);
	ASSERT_EQ(from_text("11112222333344445-2000 r-xp 0 0:0 0\n"),
		  -EOVERFLOW);
	ASSERT_EQ(from_text("1000-2000 r-xp 0 0:0 99999999999999999999999\n"),
		  -EOVERFLOW);
	/* Out of order or overlapping: in a given text, not a torn read. */
	ASSERT_EQ(from_text("3000-4000 r--p 0 0:0 0\n1000-2000 r--p 0 0:0 0\n"),
		  -EINVAL);
	ASSERT_EQ(from_text("1000-3000 r--p 0 0:0 0\n2000-4000 r--p 0 0:0 0\n"),
		  -EINVAL);
	/* Repeated starts (qemu-user) are tolerated. */
	ASSERT_EQ(from_text("1000-2000 r--p 0 0:0 0\n1000-3000 r--p 0 0:0 0\n"),
		  0);
	ASSERT_EQ(from_text("1000-2000 r--p 0 0:0 0\n1000-2000 r--p 0 0:0 0\n"),
		  0);
}

/* The kernel prints a path of any length (seq_file grows its buffer). */
TEST(long_line_text)
{
	static char text[2 * PATH_MAX];
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	char *path;

	path = text + sprintf(text, "1000-2000 r--p 0 0:0 0          ");
	path[0] = '/';
	memset(path + 1, 'a', PATH_MAX + 100);
	strcpy(path + PATH_MAX + 101, "\n");
	ASSERT_EQ(ncb__maps_from_text(&m, text, strlen(text)), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(strlen(e.path), PATH_MAX + 101);
	ASSERT_EQ(strncmp(e.path, path, PATH_MAX + 101), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 0);
	ncb_maps_close(m);
}

TEST(duplicate_line_listed_once)
{
	static const char t[] = "1000-2000 r--p 0 0:0 0 [vsyscall]\n"
				"1000-2000 r--p 0 0:0 0 [vsyscall]\n";
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;

	ASSERT_EQ(ncb__maps_from_text(&m, t, strlen(t)), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(strcmp(e.path, "[vsyscall]"), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 0);
	ncb_maps_close(m);
}

/* Lines from the same start are read as their union, without overlap. */
TEST(same_start_is_union)
{
	static const char t[] = "1000-2000 r--p 00000000 0:0 0 /f\n"
				"1000-4000 r--p 00000000 0:0 0 /f\n"
				"5000-6000 r--p 0 0:0 0\n";
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;

	ASSERT_EQ(ncb__maps_from_text(&m, t, strlen(t)), 0);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, 0x1000);
	ASSERT_EQ(e.end, 0x2000);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, 0x2000);
	ASSERT_EQ(e.end, 0x4000);
	ASSERT_EQ(e.offset, 0x1000);
	ASSERT_EQ(ncb_maps_next(m, &e), 1);
	ASSERT_EQ(e.start, 0x5000);
	ASSERT_EQ(ncb_maps_next(m, &e), 0);
	ncb_maps_close(m);
}

/* A newline in a path: escaped in the text, raw from the ioctl. */
static void newline_path(int text)
{
	char path[] = "/tmp/ncb new\nline XXXXXX";
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int fd = mkstemp(path);
	void *p;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, (off_t)test_page()), 0);
	p = mmap(NULL, test_page(), PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p, &e), 1);
	if (strcmp(e.path, path))
		FAIL("path '%s', wanted '%s'", e.path, path);
	ncb_maps_close(m);
	unlink(path);
	close(fd);
}
TEST(newline_path_query) { newline_path(0); }
TEST(newline_path_text) { newline_path(1); }

TEST(find_containing)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg);
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;

	map_sentinel(w + pg, 2 * pg, 1);
	ASSERT_EQ(ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)w, &e), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)w + 2 * pg + 5, &e), 1);
	ASSERT_EQ(e.start, (uintptr_t)w + pg);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)w + 3 * pg, &e), 0);
	ASSERT_EQ(ncb_maps_find(NULL, 0, &e), -EINVAL);
	ASSERT_EQ(ncb_maps_find(m, 0, NULL), -EINVAL);
	ncb_maps_close(m);
}

/* Named anonymous mappings (Linux 5.17, CONFIG_ANON_VMA_NAME). */
TEST(anon_name)
{
	size_t pg = test_page();
	char *p = map_sentinel(NULL, pg, 1);
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int text;

	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, pg, "ncb test"))
		SKIP("naming anonymous mappings: %s", errname(errno));
	for (text = 0; text < 2; text++) {
		ASSERT_EQ(text ? ncb__maps_open_text(&m, 0)
			       : ncb_maps_open(&m, 0), 0);
		ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p, &e), 1);
		if (strcmp(e.path, "[anon:ncb test]"))
			FAIL("name '%s'", e.path);
		ncb_maps_close(m);
	}
}

/* The same names as the kernel prints them, wherever it can. */
TEST(special_names_text)
{
	static const char t[] =
		"1000-2000 rw-p 00000000 00:00 0          [anon:jit code]\n"
		"3000-4000 rw-p 00000000 00:00 0          [heap]\n"
		"5000-6000 r-xp 00000000 00:00 0          [vdso]\n"
		"7000-8000 rw-s 00000000 00:01 9          /memfd:x (deleted)\n";
	static const char *want[] = { "[anon:jit code]", "[heap]", "[vdso]",
				      "/memfd:x (deleted)" };
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int i;

	ASSERT_EQ(ncb__maps_from_text(&m, t, strlen(t)), 0);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(ncb_maps_next(m, &e), 1);
		if (strcmp(e.path, want[i]))
			FAIL("'%s' != '%s'", e.path, want[i]);
	}
	ASSERT_EQ(e.shared, 1);
	ASSERT_EQ(e.dev_minor, 1);
	ncb_maps_close(m);
}

/*
 * A file under a tree of 200-byte directory names, its path longer than
 * len: far past PATH_MAX, so it is made one directory at a time, relative
 * to the last.  Beside it, in the top directory, a file named odd.
 */
#define DEEP_NAME 200
#define DEEP_MAX 64

struct deep {
	char top[32];
	int dirs[DEEP_MAX];	/* dirs[0]: top; dirs[i]: level i */
	int n;
	char *path;		/* the deep file's whole path */
	char *odd_path;
	int fd, odd_fd;
};

/* Not UTF-8: stray bytes, an overlong '/', a surrogate; and é, a quote,
 * a backslash, a tab and a newline. */
static const char odd[] = "odd \xff\xfe \xc0\xaf \xed\xa0\x80 \xc3\xa9 \"q\" "
			  "b\\s \t n\nl";

static void deep_make(struct deep *d, size_t len)
{
	char name[DEEP_NAME + 1];
	size_t at;

	memset(name, 'd', DEEP_NAME);
	name[DEEP_NAME] = '\0';
	strcpy(d->top, "/tmp/ncb-maps-XXXXXX");
	ASSERT_TRUE(mkdtemp(d->top));
	d->path = malloc(len + 2 * DEEP_NAME);
	d->odd_path = malloc(sizeof(d->top) + sizeof(odd));
	ASSERT_TRUE(d->path && d->odd_path);
	sprintf(d->odd_path, "%s/%s", d->top, odd);
	at = (size_t)sprintf(d->path, "%s", d->top);
	d->dirs[0] = open(d->top, O_RDONLY | O_DIRECTORY);
	ASSERT_GE(d->dirs[0], 0);
	for (d->n = 1; at < len; d->n++) {
		ASSERT_LT(d->n, DEEP_MAX);
		ASSERT_EQ(mkdirat(d->dirs[d->n - 1], name, 0700), 0);
		d->dirs[d->n] = openat(d->dirs[d->n - 1], name,
				       O_RDONLY | O_DIRECTORY);
		ASSERT_GE(d->dirs[d->n], 0);
		at += (size_t)sprintf(d->path + at, "/%s", name);
	}
	strcpy(d->path + at, "/file");
	d->fd = openat(d->dirs[d->n - 1], "file", O_RDWR | O_CREAT, 0600);
	d->odd_fd = openat(d->dirs[0], odd, O_RDWR | O_CREAT, 0600);
	ASSERT_GE(d->fd, 0);
	ASSERT_GE(d->odd_fd, 0);
	ASSERT_EQ(ftruncate(d->fd, (off_t)test_page()), 0);
	ASSERT_EQ(ftruncate(d->odd_fd, (off_t)test_page()), 0);
}

static void deep_remove(struct deep *d)
{
	char name[DEEP_NAME + 1];

	memset(name, 'd', DEEP_NAME);
	name[DEEP_NAME] = '\0';
	unlinkat(d->dirs[d->n - 1], "file", 0);
	unlinkat(d->dirs[0], odd, 0);
	close(d->fd);
	close(d->odd_fd);
	while (--d->n > 0) {
		close(d->dirs[d->n]);
		unlinkat(d->dirs[d->n - 1], name, AT_REMOVEDIR);
	}
	close(d->dirs[0]);
	rmdir(d->top);
	free(d->path);
	free(d->odd_path);
}

/*
 * Whether the rest of a line of /proc/PID/maps, after the inode, shows
 * path: padding, then the path with '\n' as "\012" (seq_file_path).
 */
static int shows_path(const char *p, const char *eol, const char *path)
{
	while (p < eol && *p == ' ')
		p++;
	for (; *path; path++) {
		if (*path == '\n' && eol - p >= 4 && !memcmp(p, "\\012", 4))
			p += 4;
		else if (*path != '\n' && p < eol && *p == *path)
			p++;
		else
			return 0;
	}
	return p == eol;
}

/* A line of /proc/PID/maps read with sscanf; *path: after the inode. */
static int scan_line(const char *p, struct ncb_mapping *m, const char **path)
{
	uintmax_t start, end, off, ino;
	unsigned int major, minor;
	char perms[5];
	int n = 0;

	if (sscanf(p, "%jx-%jx %4s %jx %x:%x %ju%n", &start, &end, perms,
		   &off, &major, &minor, &ino, &n) != 7 || p[n] != ' ')
		return -1;
	m->start = start;
	m->end = end;
	m->offset = off;
	m->dev_major = major;
	m->dev_minor = minor;
	m->inode = ino;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->shared = perms[3] == 's';
	*path = p + n;
	return 0;
}

static int same_line(const struct ncb_mapping *a, const char *path,
		     const char *eol, const struct ncb_mapping *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->inode == b->inode &&
	       a->prot == b->prot && a->shared == b->shared &&
	       shows_path(path, eol, b->path);
}

/*
 * 0 if the reader lists exactly the lines of /proc/self/maps.  Under
 * valgrind, whose own mappings grow with every allocation, only the lines
 * with a path, each looked up.  Lines from one start, which qemu-user
 * prints, are compared with their union, as the reader gives it.
 */
static int differs_from_proc(int text, int say)
{
	static char buf[1 << 20];
	int fd, ret, diff = 0, named = !!getenv("NCB_TEST_VALGRIND");
	uint64_t prev_start = 1, prev_end = 0;
	const char *p, *eol, *end, *path;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_mapping l = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	size_t len = 0;
	ssize_t n;

	/* Opened first: the text reader reads then, after allocating. */
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	fd = open("/proc/self/maps", O_RDONLY);
	ASSERT_GE(fd, 0);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	ASSERT_EQ(n, 0);
	ASSERT_ULT(len, sizeof(buf) - 1);
	buf[len] = '\0';
	end = buf + len;
	for (p = buf; p < end && !diff; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		ASSERT_TRUE(eol && !scan_line(p, &l, &path));
		if (l.start == prev_start && l.end <= prev_end)
			continue;
		if (l.start == prev_start) {
			l.offset += prev_end - l.start;
			l.start = prev_end;
		}
		prev_start = l.start;
		prev_end = l.end > prev_end ? l.end : prev_end;
		if (named && !shows_path(path, eol, ""))
			ret = ncb_maps_find(m, l.start, &e);
		else if (named)
			continue;
		else
			ret = ncb_maps_next(m, &e);
		diff = ret != 1 || !same_line(&l, path, eol, &e);
		if (diff && say)
			printf("# '%.*s' listed as %jx-%jx '%.60s' (%d)\n",
			       (int)(eol - p < 200 ? eol - p : 200), p,
			       (uintmax_t)e.start, (uintmax_t)e.end,
			       ret == 1 ? e.path : "", ret);
	}
	if (!diff && !named && ncb_maps_next(m, &e) != 0) {
		if (say)
			printf("# %s listed past the end\n", e.path);
		diff = 1;
	}
	ncb_maps_close(m);
	return diff;
}

/*
 * The reader's allocations may grow the heap, and under valgrind the tool
 * maps as the test reads: the first try only warms up, a few more count.
 */
static void lists_proc(int text)
{
	int i;

	for (i = 0; i < 6; i++)
		if (!differs_from_proc(text, i > 0))
			return;
	FAIL("the %s reader differs from /proc/self/maps",
	     text ? "text" : "probed");
}

static int path_is(const struct ncb_mapping *m, void *arg)
{
	if (strcmp(m->path, arg))
		FAIL("occupant '%.60s...'", m->path);
	return 0;
}

/*
 * A 5000-byte path (PROCMAP_QUERY names only PATH_MAX bytes) and one that
 * is not UTF-8: both readers list every line, the library works around.
 */
static void long_and_odd_paths(int text)
{
	size_t pg = test_page();
	char *w = free_window(64 * pg), *p = w + 16 * pg, *q = w + 32 * pg;
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts,
					  .lo = (uintptr_t)w + 8 * pg,
					  .hi = (uintptr_t)w + 40 * pg,
					  .place = NCB_PLACE_HIGHEST);
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_resv *r;
	struct ncb_maps *m;
	struct deep d;
	uint64_t a;

	deep_make(&d, 5000);
	ASSERT_PTR_EQ(mmap(p, pg, PROT_READ | PROT_WRITE, MAP_SHARED |
			   MAP_FIXED, d.fd, 0), p);
	ASSERT_PTR_EQ(mmap(q, pg, PROT_READ, MAP_SHARED | MAP_FIXED,
			   d.odd_fd, 0), q);
	memset(p, 0x5a, pg);
	lists_proc(text);
	ASSERT_EQ(text ? ncb__maps_open_text(&m, 0) : ncb_maps_open(&m, 0), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)p, &e), 1);
	ASSERT_EQ(strlen(e.path), strlen(d.path));
	ASSERT_EQ(strcmp(e.path, d.path), 0);
	ASSERT_EQ(ncb_maps_find(m, (uintptr_t)q, &e), 1);
	ASSERT_EQ(strcmp(e.path, d.odd_path), 0);
	ncb_maps_close(m);
	/* What reads the maps works in such a process, across them. */
	ASSERT_EQ(ncb_maps_occupants(0, p, pg, path_is, d.path), 1);
	ASSERT_EQ(ncb_maps_occupants(0, q, pg, path_is, d.odd_path), 1);
	ASSERT_EQ(ncb_range_free(p, pg), 0);
	ASSERT_EQ(ncb_range_free(w, 16 * pg), 1);
	ASSERT_EQ(ncb_find_free((uintptr_t)p, (uintptr_t)q + pg, 15 * pg, 0,
				NCB_PLACE_LOWEST, &a), 0);
	ASSERT_EQ(a, (uintptr_t)p + pg);
	ASSERT_EQ(ncb_resv_new(&r, NULL, 4 * pg, &o), 0);
	ASSERT_PTR_EQ(ncb_resv_addr(r), w + 36 * pg);
	ASSERT_EQ(ncb_resv_release(r), 0);
	ASSERT_MAP_ERR(ncb__mmap_mode(p, pg, PROT_READ, MAP_PRIVATE |
				      MAP_ANONYMOUS, -1, 0,
				      NCB_NOREPLACE_IGNORED), EEXIST);
	check_sentinel(p, pg, 0x5a);
	deep_remove(&d);
}
TEST(long_and_odd_paths_probed) { long_and_odd_paths(0); }
TEST(long_and_odd_paths_text) { long_and_odd_paths(1); }

/*
 * The gate area: x86_64's [vsyscall], unless the kernel has vsyscall=none.
 * It is no VMA, yet /proc/PID/maps lists it: so do both readers, for this
 * process and another.
 */
TEST(gate_area)
{
	const uint64_t gate = 0xffffffffff600000ULL;
	void *gp = (void *)(uintptr_t)gate;
	struct ncb_mapping e = NCB_INIT(ncb_mapping);
	struct ncb_maps *m;
	int i, found = 0;
	char line[256];
	FILE *f;
	pid_t pid;

	f = fopen("/proc/self/maps", "r");
	ASSERT_TRUE(f);
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, "ffffffffff600000-ffffffffff601000 ") &&
			 strstr(line, " [vsyscall]\n");
	fclose(f);
	if (!found)
		SKIP("no [vsyscall] in /proc/self/maps here");
	lists_proc(0);
	lists_proc(1);
	/* The probed reader twice: the second remembers the gate area. */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(i == 2 ? ncb__maps_open_text(&m, 0)
				 : ncb_maps_open(&m, 0), 0);
		ASSERT_EQ(ncb_maps_find(m, gate + 100, &e), 1);
		ASSERT_EQ(e.start, gate);
		ASSERT_EQ(e.end, gate + 4096);
		ASSERT_EQ(strcmp(e.path, "[vsyscall]"), 0);
		ASSERT_EQ(ncb_maps_next(m, &e), 0);
		ncb_maps_close(m);
	}
	ASSERT_EQ(ncb_maps_occupants(0, gp, 1, path_is, "[vsyscall]"), 1);
	ASSERT_EQ(ncb_range_free(gp, 4096), 0);
	ASSERT_EQ(ncb_range_free((char *)gp - 4096, 4096), 1);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ASSERT_EQ(ncb_maps_occupants(pid, gp, 4096, path_is, "[vsyscall]"), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A zombie has no address space: ESRCH, not an empty one. */
TEST(no_address_space)
{
	struct ncb_maps *m;
	siginfo_t si;
	pid_t pid;

	pid = fork();
	if (pid == 0)
		_exit(0);
	/* Exited, and left unreaped: a zombie until waited for. */
	ASSERT_EQ(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	ASSERT_EQ(ncb_maps_open(&m, pid), -ESRCH);
	ASSERT_EQ(ncb__maps_open_text(&m, pid), -ESRCH);
	ASSERT_EQ(ncb_maps_occupants(pid, (void *)4096, 1, NULL, NULL), -ESRCH);
	waitpid(pid, NULL, 0);
}

/* Another user's process: EACCES, from both readers. */
TEST(no_permission)
{
	struct ncb_maps *m;
	pid_t pid, reader;
	int st;

	if (geteuid() != 0)
		SKIP("needs root, to become another user");
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	reader = fork();
	if (reader == 0) {
		/* nobody, on Debian and most others */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(ncb_maps_open(&m, pid) != -EACCES ||
		      ncb__maps_open_text(&m, pid) != -EACCES ||
		      ncb_maps_occupants(pid, (void *)4096, 1, NULL, NULL) !=
		      -EACCES);
	}
	ASSERT_EQ(waitpid(reader, &st, 0), reader);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

TEST_MAIN(T(special_names_text), T(newline_path_query), T(newline_path_text),
	  T(find_containing), T(anon_name), T(same_start_is_union),
	  T(odd_path_query), T(odd_path_text),
	  T(readers_agree), T(grown_while_read_query),
	  T(grown_while_read_text),
	  T(stack_is_named), T(other_process), T(occupants_callback),
	  T(bad_arguments), T(malformed_text), T(duplicate_line_listed_once),
	  T(long_line_text), T(long_and_odd_paths_probed),
	  T(long_and_odd_paths_text), T(gate_area), T(no_address_space),
	  T(no_permission))

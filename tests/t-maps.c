/* SPDX-License-Identifier: MIT */
/* Reading mappings: both readers, odd paths, other processes, bad input. */
#include <fcntl.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include "ncbtest.h"

/* A file whose name has spaces and brackets, mapped shared at offset. */
static void odd_path(int text)
{
	const char *dir = "/tmp/ncb maps (test) [x]";
	char path[256];
	size_t pg = test_page();
	struct ncb_mapping e;
	struct ncb_maps *m;
	struct stat st;
	char *p;
	int fd;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/a file  with spaces %d", dir,
		 (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_TRUE(fd >= 0);
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
	struct ncb_mapping a, b;
	struct ncb_maps *q, *t;
	int ra, rb, n = 0, diff = 0;
	char *path;

	ASSERT_EQ(ncb__maps_open_text(&t, 0), 0);
	ASSERT_EQ(ncb_maps_open(&q, 0), 0);
	do {
		ra = ncb_maps_next(t, &a);
		rb = ncb_maps_next(q, &b);
		/*
		 * The vsyscall page is no mapping of the process (a gate
		 * area above the user address space): the text lists it,
		 * PROCMAP_QUERY does not.
		 */
		if (ra == 1 && rb == 0 && !strcmp(a.path, "[vsyscall]"))
			ra = ncb_maps_next(t, &a);
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
	ASSERT_TRUE(n > 3);
	return diff || ra != rb;
}

/*
 * Under valgrind the tool's own mappings change while the test reads: only
 * a quiescent moment can be compared, so try a few times.
 */
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
	struct ncb_mapping e;
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
	struct ncb_mapping e;
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
	ncb_maps_close(m);
	ASSERT_EQ(ncb_occupants(pid, p, 3 * pg, NULL, NULL), 2);
	ASSERT_EQ(ncb_occupants(0, p, 3 * pg, NULL, NULL), 1);
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
	ASSERT_EQ(ncb_occupants(0, w, 5 * pg, NULL, NULL), 2);
	ASSERT_EQ(ncb_occupants(0, w, 5 * pg, stop_at_first, &first), 1);
	ASSERT_EQ(first, (uintptr_t)w + pg);
	ASSERT_EQ(ncb_occupants(0, w, pg, NULL, NULL), 0);
	ASSERT_EQ(ncb_occupants(0, w + 2 * pg, 1, NULL, NULL), 0);
	ASSERT_EQ(ncb_occupants(0, w + 4 * pg - 1, 1, NULL, NULL), 1);
}

TEST(bad_arguments)
{
	struct ncb_mapping e;
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
	ASSERT_EQ(ncb_occupants(0, (void *)4096, 0, NULL, NULL), -EINVAL);
	ASSERT_EQ(ncb_occupants(0, (void *)-4096L, 8192, NULL, NULL), -EINVAL);
	ASSERT_EQ(ncb_occupants(-1, (void *)4096, 1, NULL, NULL), -EINVAL);
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
	static char longpath[PATH_MAX + 200];
	char *line;

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
	/* Out of order or overlapping: a torn read. */
	ASSERT_EQ(from_text("3000-4000 r--p 0 0:0 0\n1000-2000 r--p 0 0:0 0\n"),
		  -EAGAIN);
	ASSERT_EQ(from_text("1000-3000 r--p 0 0:0 0\n2000-4000 r--p 0 0:0 0\n"),
		  -EAGAIN);
	/* Repeated starts (qemu-user) are tolerated. */
	ASSERT_EQ(from_text("1000-2000 r--p 0 0:0 0\n1000-3000 r--p 0 0:0 0\n"),
		  0);
	ASSERT_EQ(from_text("1000-2000 r--p 0 0:0 0\n1000-2000 r--p 0 0:0 0\n"),
		  0);
	/* A path longer than any the kernel prints is refused, not cut. */
	line = longpath;
	line += sprintf(line, "1000-2000 r--p 0 0:0 0 /");
	memset(line, 'a', PATH_MAX + 100);
	strcpy(line + PATH_MAX + 100, "\n");
	ASSERT_EQ(from_text(longpath), -ENAMETOOLONG);
}

TEST(duplicate_line_listed_once)
{
	static const char t[] = "1000-2000 r--p 0 0:0 0 [vsyscall]\n"
				"1000-2000 r--p 0 0:0 0 [vsyscall]\n";
	struct ncb_mapping e;
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
	struct ncb_mapping e;
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
	struct ncb_mapping e;
	struct ncb_maps *m;
	int fd = mkstemp(path);
	void *p;

	ASSERT_TRUE(fd >= 0);
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
	struct ncb_mapping e;
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
	struct ncb_mapping e;
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
	struct ncb_mapping e;
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

TEST_MAIN(T(special_names_text), T(newline_path_query), T(newline_path_text),
	  T(find_containing), T(anon_name), T(same_start_is_union),
	  T(odd_path_query), T(odd_path_text),
	  T(readers_agree),
	  T(stack_is_named), T(other_process), T(occupants_callback),
	  T(bad_arguments), T(malformed_text), T(duplicate_line_listed_once))

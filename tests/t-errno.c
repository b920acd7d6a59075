/* SPDX-License-Identifier: MIT */
/*
 * Every error ncb_mmap reports, in the kernel's order, on every path.  Where
 * the kernel honours the flag, each case is also put to the kernel itself
 * and both must agree.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include "ncbtest.h"
#include "../tools/conform/oracle.h"

static const int anon = MAP_PRIVATE | MAP_ANONYMOUS;

/* ncb_mmap's answer, checked against the kernel's own where it can be. */
static void expect(int mode, void *addr, size_t len, int prot, int flags,
		   int fd, off_t off, int want)
{
	void *p = mmap_in(mode, addr, len, prot, flags, fd, off);

	ASSERT_MAP_ERR(p, want);
	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED ||
	    (flags & MAP_TYPE) == MAP_SHARED_VALIDATE)
		return;
	p = mmap(addr, len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
	if (p != MAP_FAILED)
		FAIL("the kernel mapped at %p where ncb_mmap gave %s", p,
		     errname(want));
	ASSERT_ERRNO(want);
}

/* A temporary file of len bytes, opened with flags (O_RDONLY, O_RDWR). */
static int tmpfile_open(size_t len, int flags)
{
	char path[] = "/tmp/ncb-errno-XXXXXX";
	int fd = mkstemp(path), ro;

	if (fd < 0 || ftruncate(fd, (off_t)len))
		FAIL("temporary file: %s", errname(errno));
	ro = open(path, flags);
	unlink(path);
	close(fd);
	if (ro < 0)
		FAIL("open: %s", errname(errno));
	return ro;
}

static int tmpfile_rdonly(size_t len)
{
	return tmpfile_open(len, O_RDONLY);
}

static void zero_length(int mode)
{
	char *o = map_sentinel(NULL, test_page(), 1);

	expect(mode, o, 0, PROT_READ, anon, -1, 0, EINVAL);
	expect(mode, o + test_page(), 0, PROT_READ, anon, -1, 0, EINVAL);
}
FOR_MODES(zero_length)

static void unaligned_address(int mode)
{
	size_t pg = test_page();
	char *w = free_window(2 * pg);

	expect(mode, w + 1, pg, PROT_READ, anon, -1, 0, EINVAL);
	map_sentinel(w, pg, 1);
	expect(mode, w + 1, pg, PROT_READ, anon, -1, 0, EINVAL);
	ASSERT_EQ(occupants(w, 2 * pg), 1);
}
FOR_MODES(unaligned_address)

/* The offset is checked before the descriptor and before any collision. */
static void unaligned_offset(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1);
	int fd = tmpfile_rdonly(4 * pg);

	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, fd, 1, EINVAL);
	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, -1, 1, EINVAL);
	close(fd);
}
FOR_MODES(unaligned_offset)

static void bad_descriptor(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1);
	char *w = free_window(pg);
	int fd = tmpfile_rdonly(pg);

	close(fd);
	expect(mode, o, pg, PROT_READ, MAP_PRIVATE, fd, 0, EBADF);
	expect(mode, w, pg, PROT_READ, MAP_PRIVATE, -1, 0, EBADF);
	check_sentinel(o, pg, 1);
}
FOR_MODES(bad_descriptor)

static void absurd_lengths(int mode)
{
	size_t pg = test_page();
	char *w = free_window(pg);

	expect(mode, w, SIZE_MAX, PROT_READ, anon, -1, 0, ENOMEM);
	expect(mode, w, SIZE_MAX - 2 * pg, PROT_READ, anon, -1, 0, ENOMEM);
	ASSERT_EQ(occupants(w, pg), 0);
}
FOR_MODES(absurd_lengths)

/*
 * Where the kernel honours the flag, ncb_mmap's answer is its answer,
 * whatever that is: an address in the last 4095 bytes, which
 * __get_unmapped_area takes for an error (IS_ERR_VALUE), fails with errno
 * -addr on a 64-bit kernel.
 */
static void expect_as_kernel(int mode, void *addr, size_t len)
{
	void *p;

	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		return;
	p = mmap(addr, len, PROT_READ, anon | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != MAP_FAILED)
		FAIL("the kernel mapped at %p", p);
	expect(mode, addr, len, PROT_READ, anon, -1, 0, errno);
}

/*
 * Past the end of the user address space: ENOMEM from
 * __get_unmapped_area, before the collision check and before an address
 * off a page is EINVAL; also where the maps list something (x86_64's
 * vsyscall page, outside the process's own mappings).  At TASK_SIZE
 * itself where the kernel says where that is.
 */
static void beyond_task_size(int mode)
{
	size_t pg = test_page();
	uintptr_t last = UINTPTR_MAX & ~(uintptr_t)(pg - 1), top;
	char *w = free_window(pg);

	expect(mode, (void *)last, pg, PROT_READ, anon, -1, 0, ENOMEM);
	expect_as_kernel(mode, (void *)(last + 1), 1);
#if defined(__x86_64__)
	expect(mode, (void *)0xffffffffff600000UL, pg, PROT_READ, anon, -1,
	       0, ENOMEM);
	expect(mode, (void *)0xffffffffff5ff000UL, 2 * pg, PROT_READ, anon,
	       -1, 0, ENOMEM);
	expect(mode, (void *)0xffffffffff600001UL, pg, PROT_READ, anon, -1,
	       0, ENOMEM);
#endif
	top = test_task_size();
	if (!top) {
		printf("# TASK_SIZE unknown here: its own cases left out\n");
		return;
	}
	printf("# TASK_SIZE %#jx\n", (uintmax_t)top);
	expect(mode, (void *)top, pg, PROT_READ, anon, -1, 0, ENOMEM);
	expect(mode, (void *)(top - pg), 2 * pg, PROT_READ, anon, -1, 0,
	       ENOMEM);
	/*
	 * The kernel's range before the alignment, qemu-user's after
	 * (unless the range wraps: that is ENOMEM for both).
	 */
	if (top + 1 + pg > top)
		expect(mode, (void *)(top + 1), pg, PROT_READ, anon, -1, 0,
		       space_answer(top + 1));
	if (top + pg > top)
		expect(mode, w, top + pg, PROT_READ, anon, -1, 0, ENOMEM);
	ASSERT_EQ(occupants(w, pg), 0);
}
FOR_MODES(beyond_task_size)

/*
 * Run fn(mode) in a child of the test: for a case that changes what is
 * the process's alone (a limit, the map count).  Its failure or skip is
 * the test's.
 */
static void in_child(void (*fn)(int), int mode)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		FAIL("fork: %s", errname(errno));
	if (pid == 0) {
		fn(mode);
		fflush(stdout);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		_exit(77);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("the child failed (status %#x)", st);
}

/* ncb_mmap maps at addr, and so does the kernel with the flag. */
static void expect_map(int mode, void *addr, size_t len, int flags)
{
	void *p = mmap_in(mode, addr, len, PROT_READ, flags, -1, 0);

	ASSERT_PTR_EQ(p, addr);
	munmap(p, len);
	if (ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED)
		return;
	p = mmap(addr, len, PROT_READ, flags | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_PTR_EQ(p, addr);
	munmap(p, len);
}

static long read_long(const char *path, const char *key)
{
	char line[256];
	size_t k = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k)) {
			v = strtol(line + k, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Filled to vm.max_map_count by single pages over a reservation of its
 * own, alternating protections so that none merge, each made with
 * MAP_FIXED over the next page (no split of another mapping, which has a
 * limit of its own).  do_mmap refuses the one that would pass the limit.
 */
static void map_count_child(int mode)
{
	size_t pg = test_page(), n = (size_t)read_long(
		"/proc/sys/vm/max_map_count", "") + 64, i;
	char *b = mmap(NULL, n * pg, PROT_NONE, anon | MAP_NORESERVE, -1, 0);
	char *o, *w;
	void *p;

	if (b == MAP_FAILED)
		SKIP("no room to fill the map count: %s", errname(errno));
	o = map_sentinel(NULL, pg, 0x61);
	w = free_window(pg);
	/* The path taken once first: its answers found and kept. */
	expect_map(mode, w, pg, anon);
	for (i = 0; i < n; i++) {
		p = mmap(b + i * pg, pg, PROT_READ | (i & 1 ? PROT_WRITE : 0),
			 anon | MAP_NORESERVE | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			break;
	}
	if (i == n)
		FAIL("%zu mappings made, and no limit met", n);
	ASSERT_ERRNO(ENOMEM);
	ASSERT_GT(i, 1);
	/* Past the limit: ENOMEM before anything else, occupied or not. */
	expect(mode, o, pg, PROT_READ, anon, -1, 0, ENOMEM);
	expect(mode, w, pg, PROT_READ, anon, -1, 0, ENOMEM);
	/* At it: the collision check and the mapping go on. */
	munmap(b + (i - 1) * pg, pg);
	expect(mode, o, pg, PROT_READ, anon, -1, 0, EEXIST);
	expect_map(mode, w, pg, anon);
	check_sentinel(o, pg, 0x61);
	munmap(b, n * pg);
}

static void map_count(int mode)
{
	long max = read_long("/proc/sys/vm/max_map_count", "");

	if (max < 0)
		SKIP("vm.max_map_count is unreadable");
	if (max > 262144)
		SKIP("vm.max_map_count is %ld: too many mappings to make", max);
	/*
	 * valgrind keeps fewer segments than the kernel allows mappings, and
	 * qemu-user's own mappings share the count with its guest's.
	 */
	if (test_slow())
		SKIP("the map count is filled where the tests run natively");
	in_child(map_count_child, mode);
}
FOR_MODES(map_count)

/*
 * RLIMIT_AS is checked as the mapping is made (may_expand_vm in
 * mmap_region's __mmap_setup), after the collision check: an occupied
 * range is EEXIST whatever its length, a free one past the limit ENOMEM.
 * A hint refused for the occupant and placed elsewhere meets the limit
 * there: that ENOMEM is not the answer.
 */
static void address_space_limit_child(int mode)
{
	size_t pg = test_page(), big = 64UL << 20;
	char *o = free_window(big), *w;
	struct rlimit rl;
	void *p;

	map_sentinel(o, pg, 0x62);
	w = free_window(big);
	expect_map(mode, w, pg, anon);
	ASSERT_EQ(getrlimit(RLIMIT_AS, &rl), 0);
	rl.rlim_cur = (rlim_t)read_long("/proc/self/status", "VmSize:") *
		      1024 + big / 2;
	ASSERT_EQ(setrlimit(RLIMIT_AS, &rl), 0);
	p = mmap(NULL, big, PROT_READ, anon, -1, 0);
	if (p != MAP_FAILED)
		SKIP("RLIMIT_AS is not enforced here (qemu-user keeps it "
		     "from the host)");
	expect(mode, o, big, PROT_READ, anon, -1, 0, EEXIST);
	expect(mode, w, big, PROT_READ, anon, -1, 0, ENOMEM);
	expect_map(mode, w, pg, anon);
	check_sentinel(o, pg, 0x62);
	ASSERT_EQ(occupants(w, big), 0);
}

static void address_space_limit(int mode)
{
	in_child(address_space_limit_child, mode);
}
FOR_MODES(address_space_limit)

#if defined(__x86_64__)
/*
 * Whether the kernel's own choices with MAP_32BIT now all fail: the first
 * 2 GiB's window (x86_64's find_start_end) filled with reservations.
 */
static int fill_32bit_window(void)
{
	size_t pg = test_page(), sz;
	void *p;

	for (sz = 1UL << 30; sz >= pg; sz /= 2)
		while ((p = mmap(NULL, sz, PROT_NONE, anon | MAP_NORESERVE |
				 MAP_32BIT, -1, 0)) != MAP_FAILED)
			if ((uintptr_t)p + sz > 1UL << 31)
				return 0;
	return errno == ENOMEM;
}

static void map_32bit_window_full(int mode)
{
	size_t pg = test_page();
	char *w = map_sentinel(free_window(pg), pg, 0);

	/* w kept out of the filling, wherever the window lies. */
	if (!fill_32bit_window())
		SKIP("MAP_32BIT does not keep to the first 2 GiB here");
	munmap(w, pg);
	expect_map(mode, w, pg, anon | MAP_32BIT);
}
#endif

/*
 * MAP_32BIT steers only the kernel's own choice of an address: a fixed
 * one is taken before it is looked at (x86_64's arch_get_unmapped_area),
 * and a 32-bit process ignores it.  So a range anywhere maps, even with
 * the flag's window full, and an occupied one is EEXIST.
 */
static void map_32bit(int mode)
{
#if defined(__x86_64__) || defined(__i386__)
	size_t pg = test_page();
	char *w = free_window(2 * pg);

	expect_map(mode, w, pg, anon | MAP_32BIT);
	map_sentinel(w + pg, pg, 0x63);
	expect(mode, w + pg, pg, PROT_READ, anon | MAP_32BIT, -1, 0, EEXIST);
	check_sentinel(w + pg, pg, 0x63);
#if defined(__x86_64__)
	in_child(map_32bit_window_full, mode);
#endif
#else
	(void)mode;
	SKIP("MAP_32BIT is x86's");
#endif
}
FOR_MODES(map_32bit)

/* The kernel checks the collision before the file's open mode. */
static void collision_before_access(int mode)
{
	size_t pg = test_page();
	char *o = map_sentinel(NULL, pg, 1), *w = free_window(pg);
	int fd = tmpfile_rdonly(pg);

	expect(mode, o, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, EEXIST);
	expect(mode, w, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, EACCES);
	ASSERT_EQ(occupants(w, pg), 0);
	check_sentinel(o, pg, 1);
	close(fd);
}
FOR_MODES(collision_before_access)

static void drop_rawio(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		FAIL("capget: %s", errname(errno));
	d[0].effective &= ~(1u << CAP_SYS_RAWIO);
	if (syscall(SYS_capset, &h, d))
		FAIL("capset: %s", errname(errno));
}

/* Below vm.mmap_min_addr, without CAP_SYS_RAWIO: EPERM. */
static void below_mmap_min_addr(int mode)
{
	unsigned long min = ncb__probe()->mmap_min_addr;

	if (!min)
		SKIP("vm.mmap_min_addr is 0 or unreadable");
	drop_rawio();
	expect(mode, NULL, test_page(), PROT_READ, anon, -1, 0, EPERM);
}
FOR_MODES(below_mmap_min_addr)

/*
 * Just below the stack the hint path honours the stack guard gap while the
 * flag does not.  A free range there is never reported as taken: it maps,
 * or fails with EADDRNOTAVAIL.
 */
static void stack_guard_gap(int mode)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	size_t pg = test_page();
	char *want = NULL;
	void *p;

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	while (ncb_maps_next(maps, &m) == 1)
		if (!strcmp(m.path, "[stack]"))
			want = (char *)(uintptr_t)m.start - 2 * pg;
	ncb_maps_close(maps);
	if (!want || occupants(want, pg))
		SKIP("no free page below the stack here");
	p = mmap_in(mode, want, pg, PROT_READ, anon, -1, 0);
	if (p == MAP_FAILED) {
		ASSERT_ERRNO(EADDRNOTAVAIL);
		ASSERT_NE(mode, NCB_NOREPLACE_HONOURED);
		ASSERT_EQ(occupants(want, pg), 0);
	} else {
		ASSERT_PTR_EQ(p, want);
	}
}
FOR_MODES(stack_guard_gap)

/*
 * An occupant past the first page is EEXIST, whatever it is: also a
 * reservation-style PROT_NONE one, which qemu-user's 32-bit guests leave
 * out of their maps.
 */
static void occupant_past_first_page(int mode)
{
	size_t pg = test_page();
	char *w = free_window(4 * pg), *o;

	o = mmap(w + 2 * pg, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED, -1, 0);
	ASSERT_PTR_EQ(o, w + 2 * pg);
	expect(mode, w, 4 * pg, PROT_READ, anon, -1, 0, EEXIST);
	munmap(o, pg);
}
FOR_MODES(occupant_past_first_page)

/*
 * A table of cases, kind of descriptor x flags x protection x offset x
 * occupancy, each answered as the kernel answers with the flag (do_mmap's
 * rules in their order: oracle() in tools/conform/oracle.h, which the
 * conformance suite puts to the environment too), and put to the kernel
 * itself where it honours the flag: the rules are checked against the
 * kernel, and every path of ncb_mmap against the rules.
 */

/* A descriptor of that kind (a pipe's other end in *other), or -1. */
static int open_kind(int kind, size_t len, int *other)
{
	int fds[2], fd = -1;

	*other = -1;
	switch (kind) {
	case FD_RO:
		fd = tmpfile_open(len, O_RDONLY);
		break;
	case FD_RW:
		fd = tmpfile_open(len, O_RDWR);
		break;
	case FD_DIR:
		fd = open("/", O_RDONLY | O_DIRECTORY);
		break;
	case FD_PIPE:
		if (pipe(fds))
			FAIL("pipe: %s", errname(errno));
		*other = fds[1];
		fd = fds[0];
		break;
	case FD_ZERO:
		fd = open("/dev/zero", O_RDWR);
		break;
	case FD_CLOSED:
		fd = open("/dev/null", O_RDONLY);
		close(fd);
		return fd;
	default:
		return -1;
	}
	if (fd < 0)
		FAIL("%s: %s", kind_name[kind], errname(errno));
	return fd;
}

/* The error of the same mapping where the kernel chooses; 0 if none. */
static int plain_error(int prot, int flags, int fd, off_t off)
{
	void *p = mmap(NULL, test_page(), prot, flags, fd, off);
	int err = errno;

	if (p == MAP_FAILED)
		return err;
	munmap(p, test_page());
	return 0;
}

/* One case, put to ncb_mmap in mode and to the kernel with the flag. */
static void table_case(int mode, char *addr, int kind, int flags, int prot,
		       off_t off, int occupied)
{
	size_t pg = test_page();
	int other, fd = open_kind(kind, pg, &other), honoured, i, want;
	void *p;

	want = oracle(kind, flags, prot, off, occupied);
	if (kind == FD_ANON)
		flags |= MAP_ANONYMOUS;
	honoured = ncb__probe()->noreplace == NCB_NOREPLACE_HONOURED &&
		   (flags & MAP_TYPE) != MAP_SHARED_VALIDATE;
	for (i = 0; i < 1 + honoured; i++) {
		p = i ? mmap(addr, pg, prot, flags | MAP_FIXED_NOREPLACE, fd,
			     off)
		      : mmap_in(mode, addr, pg, prot, flags, fd, off);
		if (p != MAP_FAILED)
			munmap(p, pg);
		if (want ? p == MAP_FAILED && errno == want : p == addr)
			continue;
		/*
		 * Where the flag is emulated a free range may be one the
		 * emulator will not place (qemu-user, a stack's flags):
		 * EADDRNOTAVAIL, the range left free.
		 */
		if (!want && !i && mode != NCB_NOREPLACE_HONOURED &&
		    ncb__probe()->noreplace != NCB_NOREPLACE_HONOURED &&
		    p == MAP_FAILED && errno == EADDRNOTAVAIL &&
		    !occupants(addr, pg))
			continue;
		/*
		 * An emulator checks a free range's mapping in an order of
		 * its own (qemu-user: the type before the offset or the
		 * file's mode): there its own answer to the same call
		 * without an address stands.
		 */
		if (want && !occupied && p == MAP_FAILED &&
		    errno == plain_error(prot, flags, fd, off))
			continue;
		FAIL("%s: %s, flags %#x, prot %d, offset %#llx, %s: %s %s "
		     "where %s", i ? "the kernel" : "ncb_mmap",
		     kind_name[kind], flags, prot, (unsigned long long)off,
		     occupied ? "occupied" : "free",
		     p == MAP_FAILED ? "failed with" : "mapped, not",
		     p == MAP_FAILED ? errname(errno) : "at addr",
		     want ? errname(want) : "it maps");
	}
	if (fd >= 0 && kind != FD_CLOSED)
		close(fd);
	if (other >= 0)
		close(other);
}

/*
 * Whether MAP_SHARED_VALIDATE maps a file here: qemu-user 7.2 knows no
 * such type and fails it with EINVAL, on every path alike.
 */
static int shared_validate_known(void)
{
	int fd = tmpfile_rdonly(test_page());
	void *p = mmap(NULL, test_page(), PROT_READ, MAP_SHARED_VALIDATE, fd,
		       0);

	close(fd);
	if (p == MAP_FAILED) {
		printf("# MAP_SHARED_VALIDATE: %s here, its cases left out\n",
		       errname(errno));
		return 0;
	}
	munmap(p, test_page());
	return 1;
}

static void table(int mode)
{
	size_t pg = test_page(), t, r, o;
	/* The last page a 64-bit off_t can name: past any regular file. */
	off_t offs[2] = { 0, sizeof(off_t) == 8 ?
			  (off_t)(INT64_MAX & ~(int64_t)(pg - 1)) : 0 };
	char *w = free_window(2 * pg);
	int kind, occ, n = 0, validate = shared_validate_known();

	map_sentinel(w + pg, pg, 1);
	for (kind = 0; kind < FD_KINDS; kind++)
		for (t = 0; t < ORACLE_TYPES; t++)
			for (r = 0; r < ORACLE_PROTS && (validate ||
			     (oracle_types[t] & MAP_TYPE) !=
			     MAP_SHARED_VALIDATE); r++)
				for (o = 0; o < 1 + !!offs[1]; o++)
					for (occ = 0; occ < 2; occ++, n++)
						table_case(mode, w + occ * pg,
							   kind,
							   oracle_types[t],
							   oracle_prots[r],
							   offs[o], occ);
	check_sentinel(w + pg, pg, 1);
	ASSERT_EQ(occupants(w, pg), 0);
	printf("# %d cases, each as the kernel's rules say%s\n", n,
	       ncb__probe()->noreplace == NCB_NOREPLACE_HONOURED ?
	       " and as the kernel does" : "");
}
FOR_MODES(table)

/*
 * Anonymous MAP_HUGETLB: its address aligned to the huge page size (else
 * EINVAL, before any collision), its length rounded up to it, and a huge
 * page reserved after the collision check (ENOMEM where none is free:
 * whether one is depends on the machine, and the kernel says).
 */
static void hugetlb_case(int mode, char *addr, size_t len, int flags,
			 int want)
{
	int honoured = ncb__probe()->noreplace == NCB_NOREPLACE_HONOURED, i;
	void *p, *got[2] = { NULL, NULL };
	int err[2] = { 0, 0 };

	flags |= MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
	for (i = 0; i < 1 + honoured; i++) {
		p = i ? mmap(addr, len, PROT_READ, flags | MAP_FIXED_NOREPLACE,
			     -1, 0)
		      : mmap_in(mode, addr, len, PROT_READ, flags, -1, 0);
		err[i] = p == MAP_FAILED ? errno : 0;
		got[i] = p;
		if (p != MAP_FAILED)
			munmap(p, len);
	}
	/* Either maps or finds no huge page: as the kernel did, if asked. */
	if (want == ENOMEM && (honoured ? err[0] == err[1] :
			       !err[0] || err[0] == ENOMEM) &&
	    (err[0] || got[0] == addr))
		return;
	if (err[0] == want && (!honoured || err[1] == want))
		return;
	FAIL("MAP_HUGETLB flags %#x at %p, %zu bytes: ncb_mmap %s, the kernel "
	     "%s, where %s", flags, (void *)addr, len,
	     err[0] ? errname(err[0]) : "mapped",
	     !honoured ? "not asked" : err[1] ? errname(err[1]) : "mapped",
	     errname(want));
}

static void hugetlb(int mode)
{
	const size_t huge = 2UL << 20;
	char *w = free_window(4 * huge), *a;

	void *p;

	if (!access("/proc/meminfo", R_OK) &&
	    system("grep -q '^Hugepagesize: *2048 kB' /proc/meminfo"))
		SKIP("the default huge page size here is not 2 MiB");
	/* qemu-user refuses every MAP_HUGETLB: nothing to compare. */
	p = mmap(NULL, huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_HUGETLB, -1, 0);
	if (p != MAP_FAILED)
		munmap(p, huge);
	else if (errno == EINVAL)
		SKIP("MAP_HUGETLB is refused here (EINVAL)");
	/* 2 MiB-aligned inside the window, and not 1 GiB-aligned. */
	a = (char *)(((uintptr_t)w + huge - 1) & ~(uintptr_t)(huge - 1));
	if (!((uintptr_t)a & ((1UL << 30) - 1)))
		a += huge;
	hugetlb_case(mode, a, huge, 0, ENOMEM);
	hugetlb_case(mode, a, 4096, 0, ENOMEM);
	hugetlb_case(mode, a + 4096, huge, 0, EINVAL);
	hugetlb_case(mode, a, huge, 30 << MAP_HUGE_SHIFT, EINVAL);
	map_sentinel(a + huge / 2, 4096, 1);
	hugetlb_case(mode, a, huge, 0, EEXIST);
	hugetlb_case(mode, a, 4096, 0, EEXIST);
	hugetlb_case(mode, a + 4096, huge, 0, EINVAL);
	hugetlb_case(mode, a, huge, 30 << MAP_HUGE_SHIFT, EINVAL);
	check_sentinel(a + huge / 2, 4096, 1);
}
FOR_MODES(hugetlb)

/*
 * Huge page mappings take whole huge pages whatever length is asked:
 * nothing in the rest of one may be replaced.  A hugetlbfs file (a
 * MFD_HUGETLB memfd) mapped with a small length, and a MAP_HUGETLB
 * mapping moved with a small new length, onto a huge page holding a
 * sentinel: EEXIST, the sentinel intact.  MAP_NORESERVE: no huge page
 * need be free.
 */
static void huge_whole(int mode)
{
	const size_t huge = 2UL << 20;
	char *w = free_window(4 * huge), *a, *src;
	int fd;
	void *p;

	if (system("grep -q '^Hugepagesize: *2048 kB' /proc/meminfo"))
		SKIP("the default huge page size here is not 2 MiB");
	src = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		   MAP_ANONYMOUS | MAP_HUGETLB | MAP_NORESERVE, -1, 0);
	if (src == MAP_FAILED)
		SKIP("MAP_HUGETLB: %s", errname(errno));
	fd = memfd_create("ncb-huge", MFD_HUGETLB);
	if (fd < 0)
		SKIP("memfd_create(MFD_HUGETLB): %s", errname(errno));
	ASSERT_EQ(ftruncate(fd, (off_t)huge), 0);
	a = (char *)(((uintptr_t)w + huge - 1) & ~(uintptr_t)(huge - 1));
	map_sentinel(a + huge / 2, 4096, 1);
	p = mmap_in(mode, a, 4096, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd,
		    0);
	ASSERT_MAP_ERR(p, EEXIST);
	p = mmap_in(mode, a, 4096, PROT_READ, MAP_SHARED_VALIDATE |
		    MAP_NORESERVE, fd, 0);
	ASSERT_MAP_ERR(p, EEXIST);
	p = mode == MODE_PROBED ? ncb_mremap(src, huge, 4096, 0, a)
				: ncb__mremap_mode(src, huge, 4096, 0, a,
						   mode);
	ASSERT_MAP_ERR(p, EEXIST);
	check_sentinel(a + huge / 2, 4096, 1);
	munmap(src, huge);
	close(fd);
}
FOR_MODES(huge_whole)

TEST_MAIN(T_MODES(zero_length), T_MODES(unaligned_address),
	  T_MODES(unaligned_offset), T_MODES(bad_descriptor),
	  T_MODES(absurd_lengths), T_MODES(beyond_task_size),
	  T_MODES(map_count), T_MODES(address_space_limit),
	  T_MODES(map_32bit), T_MODES(collision_before_access),
	  T_MODES(below_mmap_min_addr), T_MODES(stack_guard_gap),
	  T_MODES(occupant_past_first_page), T_MODES(table),
	  T_MODES(hugetlb), T_MODES(huge_whole))

/* SPDX-License-Identifier: MIT */
/*
 * A tiny test harness.  Every case runs in a fresh child process (a crash or
 * a clobbered address space cannot leak into the next case); results are
 * printed as TAP for prove.  Exit status: 0 pass, 1 fail, 77 all skipped.
 */
#ifndef NCB_HARNESS_H
#define NCB_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct ncb_test {
	const char *name;
	void (*fn)(void);
};

#define TEST(fn) static void fn(void)
#define T(fn) { #fn, fn }

#define FAIL(...)							\
	do {								\
		printf("# %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
		_exit(1);						\
	} while (0)

#define ASSERT_EQ(a, b)							\
	do {								\
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);	\
		if (a_ != b_)						\
			FAIL("%s == %s: %jd != %jd (%#jx != %#jx)", #a,	\
			     #b, a_, b_, a_, b_);			\
	} while (0)

#define ASSERT_NE(a, b)							\
	do {								\
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);	\
		if (a_ == b_)						\
			FAIL("%s != %s: both %jd", #a, #b, a_);		\
	} while (0)

/* Comparisons that print both sides: ASSERT_LE(a, b) and friends. */
#define ASSERT_CMP_(a, op, b)						\
	do {								\
		intmax_t a_ = (intmax_t)(a), b_ = (intmax_t)(b);	\
		if (!(a_ op b_))					\
			FAIL("%s %s %s: %jd vs %jd (%#jx vs %#jx)", #a,	\
			     #op, #b, a_, b_, a_, b_);			\
	} while (0)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
/* The same for unsigned 64-bit values (addresses, sizes). */
#define ASSERT_CMPU_(a, op, b)						\
	do {								\
		uintmax_t a_ = (uintmax_t)(a), b_ = (uintmax_t)(b);	\
		if (!(a_ op b_))					\
			FAIL("%s %s %s: %#jx vs %#jx", #a, #op, #b,	\
			     a_, b_);					\
	} while (0)
#define ASSERT_UEQ(a, b) ASSERT_CMPU_(a, ==, b)
#define ASSERT_ULE(a, b) ASSERT_CMPU_(a, <=, b)
#define ASSERT_ULT(a, b) ASSERT_CMPU_(a, <, b)
#define ASSERT_UGE(a, b) ASSERT_CMPU_(a, >=, b)
#define ASSERT_UGT(a, b) ASSERT_CMPU_(a, >, b)

#define ASSERT_TRUE(c)							\
	do {								\
		if (!(c))						\
			FAIL("%s is false", #c);			\
	} while (0)

#define ASSERT_PTR_EQ(a, b)						\
	do {								\
		const void *a_ = (a), *b_ = (b);			\
		if (a_ != b_)						\
			FAIL("%s == %s: %p != %p (errno %s)", #a, #b,	\
			     a_, b_, errname(errno));			\
	} while (0)

/* The call returned MAP_FAILED with errno e. */
#define ASSERT_MAP_ERR(p, e)						\
	do {								\
		const void *p_ = (p);					\
		int err_ = errno;					\
		if (p_ != MAP_FAILED)					\
			FAIL("%s: mapped at %p, wanted %s", #p, p_,	\
			     errname(e));				\
		if (err_ != (e))					\
			FAIL("%s: errno %s, wanted %s", #p,		\
			     errname(err_), errname(e));		\
	} while (0)

#define ASSERT_ERRNO(e)							\
	do {								\
		int err_ = errno;					\
		if (err_ != (e))					\
			FAIL("errno %s, wanted %s", errname(err_),	\
			     errname(e));				\
	} while (0)

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "?";
}

/* Shared with the parent, so that a skipping child can say why. */
static char *harness_note;

static inline void __attribute__((noreturn, format(printf, 1, 2)))
SKIP(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (harness_note)
		vsnprintf(harness_note, 256, fmt, ap);
	va_end(ap);
	fflush(stdout);
	_exit(77);
}

/* Heavier work where the environment is slow (valgrind, qemu). */
static inline int test_slow(void)
{
	const char *s = getenv("NCB_TEST_SLOW");

	return s && *s == '1';
}

/*
 * The machine is the test's own (the matrix's VM rows): settings that are
 * the whole machine's, such as strict overcommit, may be changed there.
 */
static inline int test_vm(void)
{
	const char *s = getenv("NCB_TEST_VM");

	return s && *s == '1';
}

/*
 * A runtime that shares the address space maps memory of its own at will
 * (valgrind; AddressSanitizer's allocator): comparisons of whole maps look
 * only at the range under test there.
 */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HARNESS_ASAN 1
#endif
#endif

static inline int test_runtime_maps(void)
{
#ifdef HARNESS_ASAN
	return 1;
#else
	return getenv("NCB_TEST_VALGRIND") != NULL;
#endif
}

/*
 * Under qemu-user (the matrix says so; run by hand, the process's name
 * is the emulator's, which qemu does not hide): the process's limits are
 * the emulator's too, and it needs mappings of its own to go on.
 */
static inline int test_qemu(void)
{
	char comm[32] = "";
	FILE *f;

	if (getenv("NCB_TEST_QEMU"))
		return 1;
	f = fopen("/proc/self/comm", "r");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return !strncmp(comm, "qemu-", 5);
}

static inline size_t test_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* The descriptors this process has open, from /proc/self/fd. */
static inline int harness_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Run fn in a child; its termination signal, or 0 if it exited. */
static inline int harness_crash_signal(void (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static inline int harness_run(const struct ncb_test *t, int n, int argc,
			      char **argv)
{
	unsigned timeout = test_slow() ? 600 : 120;
	int i, fails = 0, skips = 0, ran = 0, st;
	pid_t pid;

	harness_note = mmap(NULL, 256, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (harness_note == MAP_FAILED)
		harness_note = NULL;
	for (i = 0; i < n; i++)
		ran += argc < 2 || !strcmp(argv[1], t[i].name);
	/* A name that matches nothing is a mistake, not an empty pass. */
	if (!ran) {
		printf("1..1\nnot ok 1 - no test named %s\n", argv[1]);
		return 1;
	}
	printf("1..%d\n", ran);
	ran = 0;
	for (i = 0; i < n; i++) {
		if (argc >= 2 && strcmp(argv[1], t[i].name))
			continue;
		ran++;
		if (harness_note)
			harness_note[0] = '\0';
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			/* A test closes what it opens: count before, after. */
			int fds, after;

#ifdef HARNESS_SETUP
			HARNESS_SETUP();
#endif
			fds = harness_fds();

			alarm(timeout);
			t[i].fn();
			after = harness_fds();
			if (after != fds)
				FAIL("%d file descriptors open before the "
				     "test, %d after", fds, after);
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			printf("not ok %d - %s # fork/wait failed\n", ran,
			       t[i].name);
			fails++;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("ok %d - %s\n", ran, t[i].name);
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("ok %d - %s # SKIP %s\n", ran, t[i].name,
			       harness_note ? harness_note : "");
			skips++;
		} else {
			if (WIFSIGNALED(st))
				printf("# killed by signal %d (%s)\n",
				       WTERMSIG(st), strsignal(WTERMSIG(st)));
			printf("not ok %d - %s\n", ran, t[i].name);
			fails++;
		}
	}
	fflush(stdout);
	if (fails)
		return 1;
	return ran && skips == ran ? 77 : 0;
}

#define TEST_MAIN(...)							\
	static const struct ncb_test tests_[] = { __VA_ARGS__ };	\
	int main(int argc, char **argv)					\
	{								\
		return harness_run(tests_, (int)(sizeof(tests_) /	\
			sizeof(tests_[0])), argc, argv);		\
	}

#endif /* NCB_HARNESS_H */

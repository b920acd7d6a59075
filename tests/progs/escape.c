/* SPDX-License-Identifier: MIT */
/*
 * Ways around a watcher, each ending in a MAP_FIXED over a page of the
 * heap that the watcher, seeing it, would refuse under --deny:
 *
 *   listener  a seccomp filter of the program's own sends MAP_FIXED mmaps
 *             to a user notification (it outranks the watcher's
 *             SECCOMP_RET_TRACE), which a thread of its own answers with
 *             SECCOMP_USER_NOTIF_FLAG_CONTINUE
 *   untraced  a child sharing the memory, made CLONE_UNTRACED (no watcher
 *             follows it), traced by the program itself, which lets its
 *             seccomp stop go on
 *
 * "escape CASE" prints "CASE: STEP ERRNO" for a step refused ("listener:
 * seccomp EPERM"), "CASE: ok" or "CASE: EEXIST" (or ENOSYS) for the
 * MAP_FIXED, then "intact" or "replaced": whether the page's bytes are
 * still there.  2: the case could not be set up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARK 0x5a

/* i386's mmap takes its arguments in memory; mmap2 in registers. */
#ifdef SYS_mmap2
#define NR_MMAP SYS_mmap2
#else
#define NR_MMAP SYS_mmap
#endif

static size_t pg;
static const char *name;

/* A page wholly inside a block of the heap. */
static uintptr_t heap_page(void)
{
	char *b = malloc(4 * pg);
	uintptr_t page = ((uintptr_t)b + pg - 1) & ~(pg - 1);

	memset((void *)page, MARK, pg);
	return page;
}

static long fixed_mmap(uintptr_t page)
{
	return syscall(NR_MMAP, page, pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static int outcome(long r, uintptr_t page)
{
	int err = r == -1 ? errno : 0;

	printf("%s: %s\n", name, err ? strerrorname_np(err) : "ok");
	printf("%s\n", ((unsigned char *)page)[0] == MARK ? "intact"
							 : "replaced");
	fflush(stdout);
	return err ? 1 : 0;
}

static void refused(const char *step)
{
	printf("%s: %s %s\n", name, step, strerrorname_np(errno));
	fflush(stdout);
}

/* The listener's thread: every notification let go on as asked. */
static void *answer(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			return NULL;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static int listener(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MMAP, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_FIXED, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	uintptr_t page = heap_page();
	pthread_t t;
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return 2;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		refused("seccomp");
	else if (pthread_create(&t, NULL, answer, (void *)(intptr_t)fd))
		return 2;
	return outcome(fixed_mmap(page), page);
}

static volatile int go;

/* The untraced child: once its parent is ready, the clobber. */
static int child(void *arg)
{
	while (!go)
		sched_yield();
	_exit(fixed_mmap((uintptr_t)arg) == -1 ? errno : 0);
}

/*
 * The parent, as the child's tracer: each seccomp stop let go on (the
 * call runs), until the child exits.  The child's status: 0 mapped, else
 * the errno its call failed with.
 */
static int follow(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, __WALL) == pid) {
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		if (WIFSIGNALED(st))
			return -1;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	return -1;
}

static int untraced(void)
{
	uintptr_t page = heap_page();
	size_t size = 256 * 1024;
	char *stack = malloc(size);
	pid_t pid;
	int st;

	if (!stack)
		return 2;
	pid = clone(child, stack + size, CLONE_VM | CLONE_UNTRACED | SIGCHLD,
		    (void *)page);
	if (pid < 0)
		return 2;
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESECCOMP))
		refused("ptrace");
	go = 1;
	st = follow(pid);
	if (st < 0)
		return 2;
	errno = st;
	return outcome(st ? -1 : 0, page);
}

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	name = argc > 1 ? argv[1] : "";
	if (!strcmp(name, "listener"))
		return listener();
	if (!strcmp(name, "untraced"))
		return untraced();
	fprintf(stderr, "usage: escape listener|untraced\n");
	return 2;
}

/* SPDX-License-Identifier: MIT */
/*
 * A program for noclobber exec to run: it uses what a loader must set up
 * right (arguments, environment, auxiliary vector, TLS, malloc, a thread,
 * atexit, stdio) and prints what it sees, the same however it is started.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

static __thread int tls = 42;

/* glibc 2.35+: 0 if it could not register this thread's rseq area. */
extern const unsigned int __rseq_size __attribute__((weak));

static void *worker(void *arg)
{
	tls = 7;
	return (char *)arg + tls;
}

static void bye(void)
{
	puts("atexit ran");
}

int main(int argc, char **argv)
{
	const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
	const char *home = getenv("NCB_HELLO");
	pthread_t t;
	void *ret;
	char *buf;
	int i;

	atexit(bye);
	for (i = 0; i < argc; i++)
		printf("argv[%d] = %s\n", i, i ? argv[i] : "(program)");
	printf("NCB_HELLO = %s\n", home ? home : "(unset)");
	printf("page size ok: %d\n", getauxval(AT_PAGESZ) >= 4096);
	printf("AT_RANDOM present: %d\n", rnd != NULL);
	printf("AT_PHDR present: %d\n", getauxval(AT_PHDR) != 0);
	/* A loader that left its own registration makes this 0. */
	printf("rseq registered: %d\n", &__rseq_size ? __rseq_size > 0 : -1);
	buf = malloc(1 << 20);
	memset(buf, 'x', 1 << 20);
	printf("malloc ok: %d\n", buf[12345] == 'x');
	free(buf);
	if (pthread_create(&t, NULL, worker, (char *)0 + 1) ||
	    pthread_join(t, &ret))
		return 99;
	printf("thread: %ld, tls here: %d\n", (long)((char *)ret - (char *)0),
	       tls);
	errno = 0;
	fprintf(stderr, "to stderr, errno %d\n", errno);
	return argc > 1 ? atoi(argv[argc - 1]) : 0;
}

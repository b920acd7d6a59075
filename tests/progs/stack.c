/* SPDX-License-Identifier: MIT */
/*
 * The program's main stack as it sees it, for exec.sh to compare a run
 * through noclobber exec with one run directly:
 *   shape      its mapping's size, and whether the guard gap below it and
 *              room for RLIMIT_STACK are free
 *   top        where it ends (the same for both with ASLR off)
 *   grow MIB   recursion that uses MIB MiB of it
 *   overflow   malloc'd blocks placed as low as they go, then recursion
 *              past RLIMIT_STACK: the kernel must end it with SIGSEGV
 *              before it reaches them
 *   where      a local's address and AT_RANDOM, for randomness
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>

#define FRAME 4096
#define BLOCK (256 << 10)
#define BLOCKS 256

struct stack {
	uintptr_t start, end, below;	/* below: the next mapping's end */
};

static int find_stack(struct stack *s)
{
	char line[512];
	uintmax_t a, b, prev = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%jx-%jx", &a, &b) != 2)
			continue;
		if (strstr(line, "[stack]")) {
			s->start = (uintptr_t)a;
			s->end = (uintptr_t)b;
			s->below = (uintptr_t)prev;
			fclose(f);
			return 0;
		}
		prev = b;
	}
	fclose(f);
	return -1;
}

static uintptr_t limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINTPTR_MAX;
	return (uintptr_t)rl.rlim_cur;
}

/* Each call a 4 KiB frame, written so that it is really used. */
static __attribute__((noinline)) unsigned long recurse(unsigned long n)
{
	volatile char frame[FRAME];

	frame[0] = (char)n;
	frame[FRAME - 1] = (char)n;
	if (!n)
		return 0;
	return recurse(n - 1) + frame[0] + frame[FRAME - 1];
}

static int shape(void)
{
	struct stack s;
	uintptr_t lim = limit(), gap = 256 * 4096;

	if (find_stack(&s))
		return puts("no [stack]"), 1;
	printf("stack %ju KiB\n", (uintmax_t)(s.end - s.start) >> 10);
	printf("guard gap below it free: %s\n",
	       s.start - s.below >= gap ? "yes" : "no");
	if (lim != UINTPTR_MAX)
		printf("room to grow to its limit: %s\n",
		       s.end - s.below >= lim + gap ? "yes" : "no");
	return 0;
}

/*
 * Blocks as low under the stack as malloc will place them (each its own
 * mapping, placed top-down), then a recursion 2 MiB past the limit.
 */
static int overflow(void)
{
	static unsigned char *blk[BLOCKS];
	unsigned long frames = (limit() + (2 << 20)) / FRAME;
	int i, j;

	if (limit() == UINTPTR_MAX)
		return puts("needs a stack limit"), 2;
	for (i = 0; i < BLOCKS; i++) {
		blk[i] = malloc(BLOCK);
		if (!blk[i])
			break;
		memset(blk[i], 0x5a, BLOCK);
	}
	printf("recursing %lu frames\n", frames);
	fflush(stdout);
	recurse(frames);
	for (j = 0; j < i; j++)
		for (size_t k = 0; k < BLOCK; k++)
			if (blk[j][k] != 0x5a) {
				printf("block %d overwritten at %zu\n", j, k);
				return 1;
			}
	puts("survived, blocks intact");
	return 0;
}

int main(int argc, char **argv)
{
	struct stack s;
	int local;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "shape"))
		return shape();
	if (!strcmp(argv[1], "top")) {
		if (find_stack(&s))
			return 1;
		printf("%#jx\n", (uintmax_t)s.end);
		return 0;
	}
	if (!strcmp(argv[1], "grow") && argc > 2) {
		unsigned long mib = strtoul(argv[2], NULL, 0);

		recurse(mib * (1 << 20) / FRAME);
		printf("grew %lu MiB\n", mib);
		return 0;
	}
	if (!strcmp(argv[1], "overflow"))
		return overflow();
	if (!strcmp(argv[1], "where")) {
		printf("%#jx %#jx\n", (uintmax_t)(uintptr_t)&local,
		       (uintmax_t)getauxval(AT_RANDOM));
		return 0;
	}
	return 2;
}

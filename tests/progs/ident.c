/* SPDX-License-Identifier: MIT */
/*
 * What a program knows of itself from /proc: its command line, comm, and
 * the size of its saved auxiliary vector, the same however it started;
 * with the argument "heap", where its heap is (for runs without
 * randomization).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *name, int nul_to_space)
{
	char b[4096];
	size_t n, i;
	FILE *f = fopen(name, "r");

	if (!f) {
		printf("%s: cannot open\n", name);
		return;
	}
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (!nul_to_space) {
		printf("%s: %zu bytes\n", name, n);
		return;
	}
	for (i = 0; i < n; i++)
		if (!b[i])
			b[i] = ' ';
	printf("%s: %.*s\n", name, (int)n, b);
}

static int heap(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 1;
	/* Make sure there is one: the break starts empty. */
	if (!sbrk(4096))
		return 1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]"))
			printf("%.*s\n", (int)strcspn(line, " "), line);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "heap"))
		return heap();
	show("/proc/self/cmdline", 1);
	show("/proc/self/comm", 1);
	show("/proc/self/auxv", 0);
	return 0;
}

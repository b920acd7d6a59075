/* SPDX-License-Identifier: MIT */
/*
 * What a program knows of itself from /proc: its command line, comm, and
 * the size of its saved auxiliary vector, the same however it started.
 */
#include <stdio.h>

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

int main(void)
{
	show("/proc/self/cmdline", 1);
	show("/proc/self/comm", 1);
	show("/proc/self/auxv", 0);
	return 0;
}

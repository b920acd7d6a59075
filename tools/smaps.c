/* SPDX-License-Identifier: MIT */
/*
 * What /proc/PID/smaps says of each mapping's memory: resident, its
 * proportional share, dirty (shared and private, as pmap -x counts it)
 * and swapped out.  The kernel writes a mapping's line as in maps, then
 * "Key:   N kB" lines; keys may start with a hex digit ("AnonHugePages"),
 * so a mapping's line is known by "hex-hex ".
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* "start-end " at the head of line: 1 and the range, or 0. */
static int range_line(const char *line, uint64_t *start, uint64_t *end)
{
	char *e;

	if (!strchr("0123456789abcdef", *line) || !*line)
		return 0;
	*start = strtoull(line, &e, 16);
	if (*e != '-')
		return 0;
	line = e + 1;
	*end = strtoull(line, &e, 16);
	return e > line && *e == ' ';
}

/* A "Key: N kB" line into the field it counts, in bytes. */
static void count_line(const char *line, struct smaps_entry *s)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "Rss:", offsetof(struct smaps_entry, rss) },
		{ "Pss:", offsetof(struct smaps_entry, pss) },
		{ "Shared_Dirty:", offsetof(struct smaps_entry, dirty) },
		{ "Private_Dirty:", offsetof(struct smaps_entry, dirty) },
		{ "Swap:", offsetof(struct smaps_entry, swap) },
	};
	unsigned long long kb;
	size_t i, n;
	char *e;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		n = strlen(keys[i].key);
		if (strncmp(line, keys[i].key, n))
			continue;
		errno = 0;
		kb = strtoull(line + n, &e, 10);
		if (errno || kb > UINT64_MAX >> 10)
			return;
		*(uint64_t *)((char *)s + keys[i].off) += kb << 10;
		return;
	}
}

static int grow(struct smaps *sm)
{
	size_t cap = sm->cap ? sm->cap * 2 : 256;
	struct smaps_entry *e;

	if (cap > SIZE_MAX / sizeof(*e))
		return -ENOMEM;
	e = realloc(sm->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	sm->e = e;
	sm->cap = cap;
	return 0;
}

/* Reads the smaps of process pid (0: this one); 0 or -errno. */
int smaps_read(struct smaps *sm, pid_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	uint64_t start, end;
	FILE *f;
	int err = 0;

	memset(sm, 0, sizeof(*sm));
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/smaps");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (range_line(line, &start, &end)) {
			if (sm->n == sm->cap && (err = grow(sm)))
				break;
			memset(&sm->e[sm->n], 0, sizeof(sm->e[0]));
			sm->e[sm->n].start = start;
			sm->e[sm->n++].end = end;
		} else if (sm->n) {
			count_line(line, &sm->e[sm->n - 1]);
		}
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (err)
		smaps_free(sm);
	return err;
}

/* The entry of exactly the mapping [start, end), or NULL. */
const struct smaps_entry *smaps_find(const struct smaps *sm, uint64_t start,
				     uint64_t end)
{
	size_t lo = 0, hi = sm->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (sm->e[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sm->n && sm->e[lo].start == start && sm->e[lo].end == end)
		return &sm->e[lo];
	return NULL;
}

void smaps_free(struct smaps *sm)
{
	free(sm->e);
	memset(sm, 0, sizeof(*sm));
}

/* SPDX-License-Identifier: MIT */
/* The watchers' file facts (files.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "files.h"

/* include/uapi/linux/magic.h */
#define HUGETLBFS_MAGIC 0x958458f6

/* Slots a key may be in, from its hash on. */
#define PROBE 8

int wfiles_init(struct wfiles *fs, size_t size,
		void (*evict)(const struct wfile *f, void *arg), void *arg)
{
	fs->slot = calloc(size, sizeof(*fs->slot));
	fs->size = fs->slot ? size : 0;
	fs->evict = evict;
	fs->arg = arg;
	return fs->slot ? 0 : -ENOMEM;
}

void wfiles_free(struct wfiles *fs)
{
	size_t i;

	for (i = 0; i < fs->size; i++)
		free(fs->slot[i].path);
	free(fs->slot);
	fs->slot = NULL;
	fs->size = 0;
}

static size_t hash(const struct wfiles *fs, uint64_t dev, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ULL) ^ dev) % fs->size;
}

/*
 * The key's slot, or with make the first free one it may take (*empty
 * set), or NULL.
 */
static struct wfile *look(const struct wfiles *fs, uint64_t dev,
			  uint64_t ino, int make, int *empty)
{
	size_t h, i;
	struct wfile *f;

	*empty = 0;
	if (!ino || !fs->size)
		return NULL;
	h = hash(fs, dev, ino);
	for (i = 0; i < PROBE; i++) {
		f = &fs->slot[(h + i) % fs->size];
		if (f->ino == ino && f->dev == dev)
			return f;
		if (make && !f->ino) {
			*empty = 1;
			return f;
		}
	}
	return NULL;
}

struct wfile *wfiles_find(const struct wfiles *fs, uint64_t dev,
			  uint64_t ino)
{
	int empty;

	return look(fs, dev, ino, 0, &empty);
}

struct wfile *wfiles_add(struct wfiles *fs, uint64_t dev, uint64_t ino)
{
	struct wfile *f;
	int empty;

	f = look(fs, dev, ino, 1, &empty);
	if (f && !empty)
		return f;
	if (!ino || !fs->size)
		return NULL;
	if (!f) {
		f = &fs->slot[hash(fs, dev, ino)];
		if (fs->evict)
			fs->evict(f, fs->arg);
		free(f->path);
	}
	f->dev = dev;
	f->ino = ino;
	f->elf = -1;
	f->path = NULL;
	return f;
}

void wfiles_drop(struct wfile *f)
{
	free(f->path);
	memset(f, 0, sizeof(*f));
}

int wfile_magic(int fd)
{
	unsigned char magic[4];

	return pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4);
}

uint64_t wfile_huge_page(const char *path)
{
	struct statfs sfs;

	if (statfs(path, &sfs) || sfs.f_type != HUGETLBFS_MAGIC)
		return 0;
	return (uint64_t)sfs.f_bsize;
}

/*
 * x86's huge page is 2 MiB; a kernel without hugetlbfs says nothing, and
 * refuses MAP_HUGETLB (nothing is replaced then).
 */
uint64_t wfile_huge_default(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb ? (uint64_t)kb << 10 : 2ULL << 20;
}

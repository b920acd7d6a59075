/* SPDX-License-Identifier: MIT */
/*
 * What the watchers know of the files mapped in the processes they watch,
 * by device and inode (user space's dev_t): whether each is an ELF object
 * and, where a watcher learnt it, its path.  One cache for every watcher:
 * a stop would otherwise read the same libraries' headers again and again.
 */
#ifndef NCB_WATCH_FILES_H
#define NCB_WATCH_FILES_H

#include <stddef.h>
#include <stdint.h>

struct wfile {
	uint64_t dev, ino;		/* ino 0: a free slot */
	int elf;			/* -1 until looked at */
	char *path;			/* the watcher's (malloc'd); NULL */
};

/*
 * Open addressing over size slots, a key looked for in its first few:
 * where all are taken, the first is given up (evict is told first, and
 * its path freed).
 */
struct wfiles {
	struct wfile *slot;
	size_t size;
	void (*evict)(const struct wfile *f, void *arg);
	void *arg;
};

/* 0, or -ENOMEM. */
int wfiles_init(struct wfiles *fs, size_t size,
		void (*evict)(const struct wfile *f, void *arg), void *arg);
void wfiles_free(struct wfiles *fs);
/* The file's entry, or NULL. */
struct wfile *wfiles_find(const struct wfiles *fs, uint64_t dev,
			  uint64_t ino);
/* The file's entry, found or made (elf -1, no path); NULL if ino is 0. */
struct wfile *wfiles_add(struct wfiles *fs, uint64_t dev, uint64_t ino);
/* An entry given up: its slot free again (evict is not told). */
void wfiles_drop(struct wfile *f);
/* Whether the open file starts with the ELF magic. */
int wfile_magic(int fd);
/* The huge page size of a file on hugetlbfs (a path), else 0. */
uint64_t wfile_huge_page(const char *path);
/* The default huge page size (/proc/meminfo), or 2 MiB if it says none. */
uint64_t wfile_huge_default(void);

#endif

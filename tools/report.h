/* SPDX-License-Identifier: MIT */
/*
 * A watcher's report as one HTML page (report.c): a summary, then each
 * clobber with its victims, its caller and a picture of the range before
 * the call.  The page is self-contained (styles inline, pictures inline
 * SVG, no script) and reads offline.  Its input is plain data, so that
 * any watcher can hand its records over: nothing here knows how a call
 * was seen.
 */
#ifndef NCB_REPORT_H
#define NCB_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A mapping the call replaced. */
struct rep_victim {
	uint64_t start, end;	/* the part replaced */
	int prot, shared;
	const char *path;	/* "" for none */
	const char *kind;	/* the rules' name for it: "heap", ... */
	const char *maker;	/* who mapped it ("ld.so", "libfoo.so:f"), or
				   NULL if not known */
};

/*
 * One reported placement: a clobber (a fixed placement that replaced
 * what its caller does not own), or one that could not be judged.
 */
struct rep_clobber {
	const char *call;	/* "mmap", "mremap", "shmat", ... */
	uint64_t start, end;	/* the range the call replaces */
	pid_t pid, tid;
	const char *module;	/* the caller's module, or NULL */
	const char *symbol;	/* its symbol, or NULL */
	uint64_t caller;	/* the calling address; 0 if not known */
	uint64_t caller_off;	/* its offset in module's file, which
				   places it where caller is not known */
	const char *action;	/* what the watcher did, or NULL */
	const struct rep_victim *victims;
	size_t nvictims;
	int unjudged;		/* not judged: what it replaces, or who
				   made that, is not known */
	const char *maps;	/* /proc/PID/maps before the call, or NULL */
	size_t maps_len;
	int maps_after;		/* maps read after the call: its range is
				   drawn from the victims */
	int maps_dropped;	/* maps read but not kept (rep_add) */
};

/*
 * The records of a run, copied as they come (a watcher's event lives
 * no longer than its callback): at most REP_KEEP of them, the maps of
 * those up to REP_MAPS_BYTES in all; past that, counted.
 */
#define REP_KEEP 1000
#define REP_MAPS_BYTES (64u << 20)

struct rep_book {
	struct rep_clobber *c;
	size_t n, cap;
	size_t more;		/* records past REP_KEEP, not kept */
	size_t maps_bytes;
};

/* A copy of c kept in b, or counted: 0, or -ENOMEM (nothing kept). */
int rep_add(struct rep_book *b, const struct rep_clobber *c);
void rep_free(struct rep_book *b);

/*
 * The page for n reported placements of the run named title (the
 * command watched), and more that were not kept: 0, or -errno (-ENOMEM,
 * -EIO writing; a snapshot that is no maps text is said in its
 * placement's section, not failed).
 */
int report_html(FILE *out, const char *title, const struct rep_clobber *c,
		size_t n, size_t more);

#endif

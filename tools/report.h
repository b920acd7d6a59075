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

/* One clobber: a fixed placement that replaced what its caller lacks. */
struct rep_clobber {
	const char *call;	/* "mmap", "mremap", "shmat", ... */
	uint64_t start, end;	/* the range the call replaces */
	pid_t pid, tid;
	const char *module;	/* the caller's module, or NULL */
	const char *symbol;	/* its symbol, or NULL */
	uint64_t caller;	/* the calling address; 0 if not known */
	const char *action;	/* what the watcher did, or NULL */
	const struct rep_victim *victims;
	size_t nvictims;
	const char *maps;	/* /proc/PID/maps before the call, or NULL */
	size_t maps_len;
};

/*
 * The page for n clobbers of the run named title (the command watched):
 * 0, or -errno (-ENOMEM, -EIO writing; a snapshot that is no maps text
 * is said in its clobber's section, not failed).
 */
int report_html(FILE *out, const char *title, const struct rep_clobber *c,
		size_t n);

#endif

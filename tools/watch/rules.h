/* SPDX-License-Identifier: MIT */
/*
 * What a fixed placement in a watched process would replace, and whether
 * replacing it is a clobber.  A pure function of the process's mappings and
 * of what the watcher knows of their history: no system call, so that the
 * rules can be tested from recorded maps, and shared by every watcher.  The
 * rules are written out in noclobber(7).
 */
#ifndef NCB_WATCH_RULES_H
#define NCB_WATCH_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "noclobber.h"
#include "judge.h"

/*
 * A set of regions, in address order and never overlapping: a newer
 * region replaces what it covers of older ones, as the kernel replaces
 * their mappings.  At most max regions are kept (0: no bound); a region
 * that finds no room is not kept, but still takes from the older ones
 * what it covers, so that no record outlives the memory it was about.
 */
struct ncb__wregions {
	struct ncb__wregion *r;
	size_t n, cap, max;
};

/* 0, or -ENOMEM: then r's range is in no region of the set. */
int ncb__wregions_add(struct ncb__wregions *s, const struct ncb__wregion *r);
/* The region holding address a, or NULL. */
const struct ncb__wregion *ncb__wregions_at(const struct ncb__wregion *r,
					    size_t n, uint64_t a);
/* Memory made since where the watcher does not record makers: none. */
void ncb__wregions_cut(struct ncb__wregions *s, uint64_t start,
		       uint64_t end);
void ncb__wregions_free(struct ncb__wregions *s);

/*
 * The verdict on a call replacing victims v[0..n) (the mappings meeting
 * its range, in address order): the class, each victim's kind filled in,
 * and in *culprit the index of the victim that decided a clobber.
 */
enum ncb__wclass ncb__wjudge(const struct ncb__wproc *p,
					const struct ncb__wcall *c,
					struct ncb__wvictim *v, size_t n,
					size_t *culprit);
const char *ncb__wclass_name(enum ncb__wclass c);
const char *ncb__wkind_name(enum ncb__wkind k);

#endif

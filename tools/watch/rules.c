/* SPDX-License-Identifier: MIT */
/*
 * The watchers' rules for user space: ncb__wjudge, the rules of judge.h
 * (which the BPF programs share) on mappings as the maps reader gives
 * them, and the set of regions a watcher keeps.  The evidence for each
 * benign pattern is in noclobber(7).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include "rules.h"

_Static_assert(WJ_PROT_EXEC == PROT_EXEC, "judge.h's PROT_EXEC");

/*
 * The bracketed names the kernel gives mappings it made itself.  It names
 * [heap] any mapping that spans the program break, even one the program
 * made there without ever calling brk (valgrind's reservation for its
 * guest): a PROT_NONE one is no heap.
 */
static enum ncb__wkind kernel_name(const struct ncb_mapping *m)
{
	const char *path = m->path;

	if (!strcmp(path, "[heap]") && (m->prot || m->shared))
		return NCB__W_HEAP;
	if (!strcmp(path, "[heap]"))
		return NCB__W_ANON;
	if (!strcmp(path, "[stack]"))
		return NCB__W_STACK;
	/* "[anon:NAME]" and "[anon_shmem:NAME]" are the program's names. */
	if (path[0] == '[' && strncmp(path, "[anon", 5))
		return NCB__W_KERNEL;
	return NCB__W_ANON;
}

const struct ncb__wregion *ncb__wregions_at(const struct ncb__wregion *r,
					    size_t n, uint64_t a)
{
	size_t i = wj_first_above(r, n, a);

	return i < n && r[i].start <= a ? &r[i] : NULL;
}

/*
 * What a mapping maps, as the rules compare modules; the kernel's names
 * for what it made itself: ncb__wvictim's mod and named, from m.
 */
static void from_mapping(struct ncb__wvictim *v)
{
	v->mod.dev = v->m.inode ? makedev(v->m.dev_major, v->m.dev_minor) : 0;
	v->mod.ino = v->m.inode;
	v->named = kernel_name(&v->m);
}

enum ncb__wclass ncb__wjudge(const struct ncb__wproc *p,
			     const struct ncb__wcall *c,
			     struct ncb__wvictim *v, size_t n, size_t *culprit)
{
	struct wj_cover w;
	size_t i;

	for (i = 0; i < n; i++) {
		from_mapping(&v[i]);
		wj_kind_of(p, c, &v[i], &w);
	}
	return wj_verdict(p, c, v, n, culprit);
}

/* Room for one more region: 0, or -ENOMEM. */
static int regions_room(struct ncb__wregions *s)
{
	size_t cap = s->cap ? 2 * s->cap : 16;
	struct ncb__wregion *r;

	if (s->n < s->cap)
		return 0;
	if (s->max && s->n >= s->max)
		return -ENOMEM;
	if (s->max && cap > s->max)
		cap = s->max;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

/*
 * [start, end) taken from the set's regions, as a newer one takes it: 0
 * with *at where such a region would go, or -ENOMEM where an older region
 * around it found no room to be split (then it is given up whole).
 */
static int take(struct ncb__wregions *s, uint64_t start, uint64_t end,
		size_t *at)
{
	size_t i = wj_first_above(s->r, s->n, start), j;

	*at = i;
	if (i < s->n && s->r[i].start < start && s->r[i].end > end) {
		if (regions_room(s)) {
			memmove(&s->r[i], &s->r[i + 1],
				(--s->n - i) * sizeof(*s->r));
			return -ENOMEM;
		}
		memmove(&s->r[i + 1], &s->r[i], (s->n++ - i) * sizeof(*s->r));
		s->r[i].end = start;
		s->r[i + 1].start = end;
		*at = i + 1;
		return 0;
	}
	if (i < s->n && s->r[i].start < start)
		s->r[i++].end = start;
	/* The older ones it covers go; one reaching past it is cut. */
	for (j = i; j < s->n && s->r[j].end <= end; j++)
		;
	if (j < s->n && s->r[j].start < end)
		s->r[j].start = end;
	memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(*s->r));
	s->n -= j - i;
	*at = i;
	return 0;
}

int ncb__wregions_add(struct ncb__wregions *s, const struct ncb__wregion *r)
{
	size_t i;

	if (r->end <= r->start)
		return 0;
	/* Room first: no arithmetic on an empty set's NULL. */
	if (!s->r && regions_room(s))
		return -ENOMEM;
	if (take(s, r->start, r->end, &i) || regions_room(s))
		return -ENOMEM;
	memmove(&s->r[i + 1], &s->r[i], (s->n++ - i) * sizeof(*s->r));
	s->r[i] = *r;
	return 0;
}

void ncb__wregions_cut(struct ncb__wregions *s, uint64_t start, uint64_t end)
{
	size_t i;

	if (s->n && end > start)
		take(s, start, end, &i);
}

void ncb__wregions_free(struct ncb__wregions *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}

const char *ncb__wclass_name(enum ncb__wclass c)
{
	static const char *const names[] = {
		[NCB__WC_NOTHING] = "nothing",
		[NCB__WC_RESERVATION] = "reservation",
		[NCB__WC_LOADER] = "loader",
		[NCB__WC_OWN_IMAGE] = "own-image",
		[NCB__WC_OWN_REGION] = "own-region",
		[NCB__WC_OWN_STACK] = "own-stack",
		[NCB__WC_UNKNOWN] = "unknown-maker",
		[NCB__WC_KERNEL] = "kernel-memory",
		[NCB__WC_THREAD_STACK] = "thread-stack",
		[NCB__WC_OTHER_MODULE] = "other-module",
		[NCB__WC_SPANS] = "spans-regions",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *ncb__wkind_name(enum ncb__wkind k)
{
	static const char *const names[] = {
		[NCB__W_RESERVED] = "reservation",
		[NCB__W_PAST_EOF] = "past-eof",
		[NCB__W_HEAP] = "heap",
		[NCB__W_STACK] = "stack",
		[NCB__W_KERNEL] = "kernel",
		[NCB__W_EXE] = "program",
		[NCB__W_INTERP] = "interpreter",
		[NCB__W_THREAD_STACK] = "thread-stack",
		[NCB__W_REGION] = "region",
		[NCB__W_LIBRARY] = "library",
		[NCB__W_FILE] = "file",
		[NCB__W_ANON] = "anonymous",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

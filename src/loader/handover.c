/* SPDX-License-Identifier: MIT */
/*
 * The last step of an in-process exec: handing the process over.
 *
 * execve replaces the whole address space.  Here, when the program is
 * loaded and its stack built, the caller's mappings are all still there
 * (its executable, its libraries, heap and stack), and the code doing the
 * switch is among them.  So the switch runs from a copy of a small
 * position-independent stub in a fresh anonymous mapping.  The stub makes
 * a list of raw system calls prepared here, ignoring their results: the
 * break shrunk and every mapping the program does not own unmapped, the
 * thread's exit hooks cleared (as exec_mm_release does), then
 * PR_SET_MM_MAP (kernel/sys.c), with the exe link where permitted.  That
 * one needs the old executable unmapped (replace_mm_exe_file: EBUSY while
 * a mapping of it remains), which only code outside it can do.  Last, the
 * stub enters the program with every general register zero, as
 * start_thread leaves them.  Its own mapping is all of the caller that
 * stays: nothing can unmap the code it is running and go on.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/prctl.h>
/* This file alone has the stub (arch/): it is code, defined once. */
#define NCB_ARCH_STUB
#include "loader.h"

#ifdef NCB_ARCH_HANDOVER
extern const char ncb__stub_start[], ncb__stub_end[];
#endif

/* The stub's code, and the calls queued after the unmapping. */
#define CODE_ROOM 512
#define FIXED_CALLS (8 + NCB__MOVE_MAX)

/* One system call for the stub to make. */
struct ncb__call {
	uintptr_t nr;
	uintptr_t a[6];
};

/* A new anonymous mapping: the stub's code, then its two maps and list. */
struct handover {
	char *base;
	size_t size;
	/* PR_SET_MM_MAP's struct: [0] with the exe link, [1] without */
	unsigned char (*map)[NCB__MM_MAP_MAX];
	struct ncb__call *calls;
	unsigned int n, max;
	int exe_fd;
};

static void add(struct handover *h, long nr, uintptr_t a0, uintptr_t a1,
		uintptr_t a2, uintptr_t a3, uintptr_t a4)
{
	struct ncb__call *c = &h->calls[h->n++];

	c->nr = (uintptr_t)nr;
	c->a[0] = a0;
	c->a[1] = a1;
	c->a[2] = a2;
	c->a[3] = a3;
	c->a[4] = a4;
	c->a[5] = 0;
}

/*
 * Mappings that belong to the process rather than to the caller's
 * program: the vDSO and its data, [vsyscall], ARM's [vectors] and
 * [sigpage], uprobes' area.  execve gives the program its own; here they
 * stay, and the program's auxiliary vector points at them.
 */
int ncb__kernel_mapping(const char *path)
{
	return path[0] == '[' && strcmp(path, "[heap]") &&
	       strncmp(path, "[stack", 6) && strncmp(path, "[anon:", 6) &&
	       strncmp(path, "[anon_shmem:", 12);
}

/*
 * Queue munmap of [start, end), one call for a run of neighbours: each
 * call costs a TLB flush on every CPU the process ran on.  Never across
 * a hole: what lies there was mapped after the snapshot (the stub's own
 * mapping, say), and valgrind, whose memory shares the space, aborts on
 * a call that spans its own.
 */
static void add_unmap(struct handover *h, uint64_t start, uint64_t end)
{
	struct ncb__call *last = h->n ? &h->calls[h->n - 1] : NULL;

	if (last && last->nr == SYS_munmap && last->a[0] + last->a[1] == start)
		last->a[1] += (uintptr_t)(end - start);
	else
		add(h, SYS_munmap, (uintptr_t)start,
		    (uintptr_t)(end - start), 0, 0, 0);
}

/* Queue munmap for [start, end) minus the ranges the program owns. */
static int unmap_around(struct handover *h, uint64_t start, uint64_t end,
			const struct ncb__range *keep, unsigned int nkeep)
{
	unsigned int i;

	for (i = 0; i < nkeep && start < end; i++) {
		if (keep[i].end <= start || keep[i].start >= end)
			continue;
		if (keep[i].start > start) {
			if (h->n >= h->max - FIXED_CALLS)
				return -EOVERFLOW;
			add_unmap(h, start, keep[i].start);
		}
		start = keep[i].end;
	}
	if (start >= end)
		return 0;
	if (h->n >= h->max - FIXED_CALLS)
		return -EOVERFLOW;
	add_unmap(h, start, end);
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct ncb__range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Everything the program does not own, from one pass over the maps.  The
 * kernel's heap is given back first with brk: the caller's libc may still
 * grow it after this pass (closing descriptors allocates).  A break in
 * an unnamed mapping is an emulator's (qemu-user 7.2 keeps its own, and
 * writes to it on the next brk without asking): that one stays.  So does
 * every unnamed mapping where PR_SET_MM_MAP is refused, as qemu-user
 * refuses it: there they may be the emulator's, in the guest's space
 * (qemu's x86 targets keep the guest's descriptor tables so).
 */
static int queue_unmaps(struct handover *h, struct ncb_maps *m,
			struct ncb__range *keep, unsigned int nkeep)
{
	uint64_t brk = (uint64_t)syscall(SYS_brk, 0);
	unsigned int size = 0;
	struct ncb_mapping mp = NCB_INIT(ncb_mapping);
	int err, anon;

	anon = !prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0);
	qsort(keep, nkeep, sizeof(*keep), by_start);
	while ((err = ncb_maps_next(m, &mp)) > 0) {
		if (ncb__kernel_mapping(mp.path) || (!anon && !mp.path[0]) ||
		    (!mp.path[0] && mp.start < brk && brk <= mp.end))
			continue;
		if (!strcmp(mp.path, "[heap]")) {
			if (h->n >= h->max - FIXED_CALLS)
				return -EOVERFLOW;
			add(h, SYS_brk, (uintptr_t)mp.start, 0, 0, 0, 0);
		}
		err = unmap_around(h, mp.start, mp.end, keep, nkeep);
		if (err)
			return err;
	}
	return err;
}

/*
 * The mappings in the snapshot, and whether valgrind runs this process:
 * its vgpreload_ objects are mapped, it redirects the new program's
 * malloc and the like into the copies it saw first, and its own memory
 * shares the maps.  There nothing is unmapped: the caller's mappings
 * stay, as valgrind needs them.
 */
static unsigned int count_mappings(struct ncb_maps *m, int *valgrind)
{
	struct ncb_mapping mp = NCB_INIT(ncb_mapping);
	unsigned int n = 0;

	*valgrind = 0;
	while (ncb_maps_next(m, &mp) > 0) {
		if (strstr(mp.path, "/vgpreload_"))
			*valgrind = 1;
		n++;
	}
	return n;
}

/* The calls after the unmapping: exec_mm_release's, then the identity. */
static void queue_identity(struct handover *h, const struct ncb__identity *id)
{
	size_t size = ncb__mm_map_fill(h->map[0], id, h->exe_fd);

	ncb__mm_map_fill(h->map[1], id, -1);
	/* The caller's thread block is gone: nothing may be written there. */
	add(h, SYS_set_tid_address, 0, 0, 0, 0, 0);
	add(h, SYS_set_robust_list, 0, 3 * sizeof(void *), 0, 0, 0);
	/*
	 * With the link where permitted; failing that (or anyway, which
	 * sets the same again) without it: the rest never depends on it.
	 */
	if (h->exe_fd >= 0)
		add(h, SYS_prctl, PR_SET_MM, PR_SET_MM_MAP,
		    (uintptr_t)h->map[0], size, 0);
	add(h, SYS_prctl, PR_SET_MM, PR_SET_MM_MAP, (uintptr_t)h->map[1],
	    size, 0);
	if (h->exe_fd >= 0)
		add(h, SYS_close, (uintptr_t)h->exe_fd, 0, 0, 0, 0);
}

/* The exe descriptor stays the caller's until the stub runs. */
static void handover_free(struct handover *h)
{
	if (h->base)
		munmap(h->base, h->size);
	h->base = NULL;
}

/* The mapping for n calls, the code copied in; its own range is kept. */
static int handover_map(struct handover *h, unsigned int n)
{
#ifdef NCB_ARCH_HANDOVER
	if (ncb__stub_end - ncb__stub_start > CODE_ROOM)
		return -ENOEXEC;
#endif
	/* Far past vm.max_map_count's default, within a 32-bit size_t. */
	if (n > 1u << 24)
		return -ENOMEM;
	h->max = n + FIXED_CALLS;
	h->size = ncb__page_align(CODE_ROOM + 2 * sizeof(*h->map) +
				  (h->max + 1) * sizeof(struct ncb__call));
	h->base = mmap(NULL, h->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->base == MAP_FAILED) {
		h->base = NULL;
		return -errno;
	}
#ifdef NCB_ARCH_HANDOVER
	memcpy(h->base, ncb__stub_start, ncb__stub_end - ncb__stub_start);
#endif
	h->map = (unsigned char (*)[NCB__MM_MAP_MAX])(void *)(h->base +
							      CODE_ROOM);
	h->calls = (struct ncb__call *)(void *)(h->map + 2);
	h->n = 0;
	return 0;
}

/*
 * One snapshot of the maps, read before the stub's mapping exists: each
 * line is unmapped exactly as it was then, so the new mapping, even
 * merged with a neighbour, is never among them.
 */
static int handover_build(struct handover *h, struct ncb__handover *ho)
{
	struct ncb__range *keep = ho->keep;
	unsigned int nkeep = ho->nkeep, i;
	struct ncb_maps *m;
	struct ncb__call *end;
	unsigned int n;
	size_t used;
	int err, valgrind;

	err = ncb__maps_open_text(&m, 0);
	if (err)
		return err;
	/* A line cut in pieces around every span, and its brk. */
	if (__builtin_mul_overflow(count_mappings(m, &valgrind), nkeep + 3,
				   &n))
		err = -ENOMEM;
	else
		err = handover_map(h, n);
	if (!err) {
		keep[nkeep].start = (uintptr_t)h->base;
		keep[nkeep].end = (uintptr_t)h->base + h->size;
		err = ncb_maps_seek(m, 0);
	}
	if (!err && !valgrind)
		err = queue_unmaps(h, m, keep, nkeep + 1);
	ncb_maps_close(m);
	if (err)
		return err;
	/*
	 * Into a range that only the caller's mappings held, unmapped just
	 * now: MREMAP_FIXED replaces nothing there.
	 */
	for (i = 0; i < ho->nmove; i++)
		add(h, SYS_mremap, ho->move[i].from, ho->move[i].len,
		    ho->move[i].len, MREMAP_MAYMOVE | MREMAP_FIXED,
		    ho->move[i].to);
	queue_identity(h, &ho->id);
	end = &h->calls[h->n];
	end->nr = ~(uintptr_t)0;
	end->a[0] = ho->sp;
	end->a[1] = ho->entry;
	/* The room the maps asked for is mostly unused: give it back. */
	used = ncb__page_align((size_t)((char *)(end + 1) - h->base));
	if (used < h->size && !munmap(h->base + used, h->size - used))
		h->size = used;
	/* Written once, then code: never writable and executable at once. */
	if (mprotect(h->base, h->size, PROT_READ | PROT_EXEC))
		return -errno;
	__builtin___clear_cache(h->base, h->base + CODE_ROOM);
	return 0;
}

int ncb__stays(uint64_t lo, uint64_t hi, const struct ncb__range *keep,
	       unsigned int n)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	unsigned int i;
	int err, found = 0;

	for (i = 0; i < n; i++)
		if (keep[i].start < hi && keep[i].end > lo)
			return 1;
	if (!ncb__range_occupied(lo, hi))
		return 0;
	if (ncb__maps_walk(&maps, lo))
		return 1;
	while (!found && (err = ncb_maps_next(maps, &m)) > 0 && m.start < hi)
		found = m.end > lo && ncb__kernel_mapping(m.path);
	ncb_maps_close(maps);
	return found || err < 0;
}

int ncb__handover_move(struct ncb__handover *ho, uint64_t start,
		       uint64_t end, uint64_t to)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	struct ncb__move *mv;
	int err;

	err = ncb__maps_walk(&maps, start);
	if (err)
		return err;
	while ((err = ncb_maps_next(maps, &m)) > 0 && m.start < end) {
		if (m.end <= start)
			continue;
		if (ho->nmove == NCB__MOVE_MAX) {
			err = -EOVERFLOW;
			break;
		}
		/* A neighbour merged with an edge is not moved along. */
		mv = &ho->move[ho->nmove++];
		mv->from = (uintptr_t)(m.start > start ? m.start : start);
		mv->len = (uintptr_t)((m.end < end ? m.end : end) - mv->from);
		mv->to = (uintptr_t)(mv->from - start + to);
	}
	ncb_maps_close(maps);
	return err < 0 ? err : 0;
}

int ncb__handover_prepare(struct ncb__handover *ho)
{
	struct handover *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -ENOMEM;
	h->exe_fd = ho->exe_fd;
	err = handover_build(h, ho);
	/* Not close-on-exec: it must outlive the caller's descriptors. */
	if (!err && h->exe_fd >= 0 && fcntl(h->exe_fd, F_SETFD, 0))
		err = -errno;
	if (err) {
		handover_free(h);
		free(h);
		return err;
	}
	ho->state = h;
	return 0;
}

void ncb__handover_go(struct ncb__handover *ho)
{
	struct handover *h = ho->state;

#ifdef NCB_ARCH_HANDOVER
	ncb__arch_jump(h->base, h->calls);
#else
	(void)h;
	__builtin_unreachable();
#endif
}

/* SPDX-License-Identifier: MIT */
/*
 * The program's initial stack, as fs/exec.c and fs/binfmt_elf.c's
 * create_elf_tables lay it out: its mapping (placed where the kernel
 * chooses: nothing can be replaced), the strings at its top, the 16
 * random bytes, then argc, argv, envp and the auxiliary vector the kernel
 * would build, this process's own with the per-program entries replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>
#include "loader.h"

#ifndef AT_BASE_PLATFORM
#define AT_BASE_PLATFORM 24
#endif
#ifndef AT_EXECFD
#define AT_EXECFD 2
#endif
#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif

/* The per-program entries: the rest of the vector is the kernel's. */
struct aux_own {
	uintptr_t phdr, phnum, base, entry, random, platform, base_platform;
	uintptr_t execfn, flags;
};

static void aux(struct ncb__stack *s, uintptr_t type, uintptr_t val)
{
	s->auxv[2 * s->nauxv] = type;
	s->auxv[2 * s->nauxv + 1] = val;
	s->nauxv++;
}

/*
 * Room left below what is pushed: the handover stub writes the entry's
 * address just below the stack pointer (arch/).  No more: under a stack
 * limit of a few pages the kernel's vectors fit where this would not.
 */
#define STUB_ROOM 256

/* Copy bytes to the top of the stack; NULL if it would not fit. */
static char *push(struct ncb__stack *s, const void *p, size_t n)
{
	if ((size_t)(s->top - s->base) < n + STUB_ROOM)
		return NULL;
	s->top -= n;
	memcpy(s->top, p, n);
	return s->top;
}

/* Where a byte of the stack will be when the program runs. */
static uintptr_t at(const struct ncb__stack *s, const void *p)
{
	return (uintptr_t)p - (uintptr_t)s->base + s->at;
}

size_t ncb__strv_len(char *const v[])
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Whether argv[i]'s string is the interpreter's, not the program's. */
static int hidden(ncb__hide hide, size_t i)
{
	return i < 32 && (hide & NCB__HIDE(i));
}

/*
 * Strings of v onto the stack, their new addresses into out: those that
 * hidden() says are in hide when which is 1, the others when 0.
 */
static int push_strings(struct ncb__stack *s, char *const v[], size_t n,
			uintptr_t *out, ncb__hide hide, int which)
{
	size_t i = n;

	while (i--) {
		char *p;

		if (hidden(hide, i) != which)
			continue;
		p = push(s, v[i], strlen(v[i]) + 1);

		if (!p)
			return -E2BIG;
		out[i] = at(s, p);
	}
	out[n] = 0;
	return 0;
}

/*
 * This process's own auxiliary vector as the kernel wrote it, without its
 * AT_NULL: getauxval() answers with libc's rewritten values (glibc's
 * AT_HWCAP on x86_64 is its own) and cannot tell a zero from an absence.
 * Under qemu-user the file is the guest's vector.  0 if unreadable.
 */
static unsigned int read_own_auxv(uintptr_t *v, unsigned int max)
{
	size_t want = 2 * max * sizeof(*v), len = 0;
	unsigned int n;
	ssize_t r;
	int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (len < want &&
	       (r = read(fd, (char *)v + len, want - len)) > 0)
		len += (size_t)r;
	close(fd);
	for (n = 0; n < len / (2 * sizeof(*v)); n++)
		if (v[2 * n] == AT_NULL)
			return n;
	return 0;
}

/* The value the new program gets for an entry; 0: leave it out. */
static int aux_value(uintptr_t type, uintptr_t *val, const struct aux_own *o)
{
	switch (type) {
	case AT_PHDR:	*val = o->phdr;		break;
	case AT_PHENT:	*val = sizeof(ncb_phdr); break;
	case AT_PHNUM:	*val = o->phnum;	break;
	case AT_BASE:	*val = o->base;		break;
	case AT_FLAGS:	*val = o->flags;	break;
	/* The program's entry, not the interpreter's: ld.so looks. */
	case AT_ENTRY:	*val = o->entry;	break;
	case AT_UID:	*val = getuid();	break;
	case AT_EUID:	*val = geteuid();	break;
	case AT_GID:	*val = getgid();	break;
	case AT_EGID:	*val = getegid();	break;
	case AT_RANDOM:	*val = o->random;	break;
	case AT_EXECFN:	*val = o->execfn;	break;
	case AT_PLATFORM:	*val = o->platform;	return !!*val;
	case AT_BASE_PLATFORM:	*val = o->base_platform; return !!*val;
	/* No descriptor of ours is the program's: its own goes in later. */
	case AT_EXECFD:	return 0;
	}
	return 1;
}

/*
 * AT_EXECFD, once, for a program binfmt_misc's flag O runs: after the
 * platforms, before the rseq entries (create_elf_tables).
 */
static void aux_execfd(struct ncb__stack *s)
{
	if (s->misc.execfd < 0)
		return;
	aux(s, AT_EXECFD, (uintptr_t)s->misc.execfd);
	s->misc.execfd = -1;
}

/*
 * The vector the kernel would build for the program: this process's own,
 * entry for entry and in its order (hardware capabilities, the vDSO,
 * AT_SECURE, zeros kept), with the per-program entries replaced.  Where
 * the own vector cannot be read, the entries every program needs.
 */
static void build_auxv(struct ncb__stack *s, const struct aux_own *o)
{
	static const uintptr_t needed[] = {
		AT_PHDR, AT_PHENT, AT_PHNUM, AT_PAGESZ, AT_BASE, AT_FLAGS,
		AT_ENTRY, AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE,
		AT_RANDOM, AT_EXECFN, AT_PLATFORM,
	};
	unsigned int i;
	uintptr_t v;

	for (i = 0; i < s->nkern && s->nauxv < NCB__AUXV_MAX - 2; i++) {
		/* binfmt_misc's descriptor, where the kernel puts it. */
		if (s->kern[2 * i] == AT_RSEQ_FEATURE_SIZE)
			aux_execfd(s);
		v = s->kern[2 * i + 1];
		if (aux_value(s->kern[2 * i], &v, o))
			aux(s, s->kern[2 * i], v);
	}
	for (i = 0; !s->nkern && i < sizeof(needed) / sizeof(needed[0]); i++) {
		v = 0;
		if (needed[i] == AT_PAGESZ)
			v = ncb__probe()->page_size;
		else if (needed[i] == AT_SECURE)
			v = getauxval(AT_SECURE);
		if (aux_value(needed[i], &v, o))
			aux(s, needed[i], v);
	}
	aux_execfd(s);
	aux(s, AT_NULL, 0);
}

/* The string an entry of this process's own vector points to, or NULL. */
static const char *own_string(const struct ncb__stack *s, uintptr_t type)
{
	unsigned int i;

	for (i = 0; i < s->nkern; i++)
		if (s->kern[2 * i] == type)
			return (const char *)s->kern[2 * i + 1];
	return s->nkern ? NULL : (const char *)getauxval(type);
}

/* A string of the vector onto the stack: 0 if none, 1 if it did not fit. */
static uintptr_t push_own_string(struct ncb__stack *s, uintptr_t type)
{
	const char *str = own_string(s, type);
	char *p;

	if (!str)
		return 0;
	p = push(s, str, strlen(str) + 1);
	return p ? at(s, p) : 1;
}

/*
 * The initial stack as the kernel lays it out: a null word at the top
 * (bprm_mm_init), the strings, then moved down by arch_align_stack(), the
 * platform names and the 16 random bytes, then (16-byte aligned) argc,
 * argv, NULL, envp, NULL and the auxiliary vector.
 */
int ncb__stack_build(struct ncb__stack *s, char *const argv[],
		     char *const envp[], const char *execfn,
		     const struct ncb_elf_image *prog,
		     const struct ncb_elf_image *interp, unsigned int phnum,
		     uintptr_t *sp)
{
	size_t argc = ncb__strv_len(argv), envc = ncb__strv_len(envp), words, i;
	struct aux_own o = {
		.phdr = (uintptr_t)prog->phdr, .phnum = phnum,
		.base = interp ? (uintptr_t)interp->bias : 0,
		.entry = (uintptr_t)prog->entry, .flags = s->misc.at_flags,
	};
	static const uintptr_t null;
	uintptr_t *av, *ev, *w, base;
	unsigned char bytes[16];
	char *p;
	int err = -E2BIG;

	av = calloc(argc + 1, sizeof(*av));
	ev = calloc(envc + 1, sizeof(*ev));
	if (!av || !ev) {
		err = -ENOMEM;
		goto out;
	}
	p = push(s, &null, sizeof(null));
	if (p)
		p = push(s, execfn, strlen(execfn) + 1);
	/*
	 * The interpreter's own arguments go above the environment, so that
	 * the program's lie in one piece below it: its command line.
	 */
	if (!p || push_strings(s, argv, argc, av, s->hide, 1) ||
	    push_strings(s, envp, envc, ev, 0, 0) ||
	    push_strings(s, argv, argc, av, s->hide, 0))
		goto out;
	o.execfn = at(s, p);
	for (i = 0; hidden(s->hide, i); i++)
		;
	s->arg_start = av[i];
	for (i = argc - 1; hidden(s->hide, i); i--)
		;
	s->arg_end = av[i] + strlen(argv[i]) + 1;
	s->env_start = envc ? ev[0] : s->arg_end;
	s->env_end = envc ? ev[envc - 1] + strlen(envp[envc - 1]) + 1
			  : s->env_start;
	/* Randomizing, the strings end an unpredictable way into a page. */
	if (s->rnd && s->align_rnd)
		s->top -= ncb__random64() % s->align_rnd;
	s->top = (char *)((uintptr_t)s->top & ~(uintptr_t)15);
	o.platform = push_own_string(s, AT_PLATFORM);
	o.base_platform = push_own_string(s, AT_BASE_PLATFORM);
	if (o.platform == 1 || o.base_platform == 1)
		goto out;
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		err = -errno;
		goto out;
	}
	p = push(s, bytes, sizeof(bytes));
	if (!p)
		goto out;
	o.random = at(s, p);
	build_auxv(s, &o);
	words = 1 + argc + 1 + envc + 1 + 2 * s->nauxv;
	base = ((uintptr_t)s->top - words * sizeof(*w)) & ~(uintptr_t)15;
	if (base < (uintptr_t)s->base + STUB_ROOM)
		goto out;
	w = (uintptr_t *)base;
	*sp = at(s, w);
	*w++ = argc;
	for (i = 0; i <= argc; i++)
		*w++ = av[i];
	for (i = 0; i <= envc; i++)
		*w++ = ev[i];
	memcpy(w, s->auxv, 2 * s->nauxv * sizeof(*w));
	s->auxv_at = at(s, w);
	err = 0;
out:
	free(av);
	free(ev);
	return err;
}

/*
 * The limit the program's stack grows to: RLIMIT_STACK, as the kernel's
 * (acct_stack_growth), or the one the caller asks for, which the
 * program then has as its own.
 */
int ncb__stack_limit(const struct ncb_exec_opts *o, uintptr_t *limit)
{
	struct rlimit rl;

	if (o->stack_size) {
		if (o->stack_size < ncb__probe()->page_size)
			return -EINVAL;
		*limit = o->stack_size;
		return 0;
	}
	*limit = UINTPTR_MAX;
	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < UINTPTR_MAX)
		*limit = (uintptr_t)rl.rlim_cur;
	return 0;
}

/* MAX_ARG_STRLEN (include/uapi/linux/binfmts.h): one string's most. */
#define ARG_STRLEN_MAX (32 * 4096)
/* ARG_MAX and _STK_LIM: the least and most the strings may take. */
#define ARG_LEAST (32 * 4096)
#define STK_LIM (8u << 20)
/* setup_arg_pages' stack_expand: room made below the strings at once. */
#define STACK_EXPAND (128u << 10)

/*
 * The bytes the strings of v take, or SIZE_MAX if one is longer than
 * execve takes (valid_arg_len).
 */
static size_t strings_len(char *const v[])
{
	size_t n = 0, len, i;

	for (i = 0; v && v[i]; i++) {
		len = strlen(v[i]) + 1;
		if (len > ARG_STRLEN_MAX)
			return SIZE_MAX;
		n += len;
	}
	return n;
}

/*
 * What the stack must hold before the program runs, checked as execve
 * checks it (fs/exec.c bprm_stack_limits, since 6.8; the same sum
 * before): the strings within a quarter of the limit, at least ARG_MAX
 * and at most three quarters of _STK_LIM, less a pointer for each
 * string.  -E2BIG beyond.
 */
static int stack_need(const struct ncb__stack *s, char *const argv[],
		      char *const envp[], const char *execfn, uintptr_t align,
		      size_t *strs, size_t *need)
{
	size_t argc = ncb__strv_len(argv), envc = ncb__strv_len(envp);
	size_t a = strings_len(argv), e = strings_len(envp);
	size_t f = strlen(execfn) + 1, ptrs, most;

	if (a == SIZE_MAX || e == SIZE_MAX || f > ARG_STRLEN_MAX)
		return -E2BIG;
	most = s->limit / 4;
	if (most > STK_LIM / 4 * 3)
		most = STK_LIM / 4 * 3;
	if (most < ARG_LEAST)
		most = ARG_LEAST;
	/*
	 * bprm_stack_limits counts the pointers of the arguments execve was
	 * given, before binfmt_misc's and "#!"'s handlers add theirs.
	 */
	if (s->misc.argc)
		argc = s->misc.argc;
	ptrs = ((argc ? argc : 1) + envc) * sizeof(void *);
	if (most <= ptrs || a + e + f > most - ptrs)
		return -E2BIG;
	/* The null word at the top, then the strings. */
	*strs = sizeof(void *) + a + e + f;
	/* Then the offset, two platform names, the bytes, the vectors. */
	*need = *strs + align + 2 * 256 + 16 + 16 +
		(argc + envc + 3 + 2 * NCB__AUXV_MAX) * sizeof(void *);
	return 0;
}

/* The machine's rules for the stack's top (arch/). */
struct top_rules {
	uint64_t top;		/* STACK_TOP */
	uint64_t rnd_mask;	/* STACK_RND_MASK, in pages */
	uintptr_t align_rnd;	/* arch_align_stack()'s range, in bytes */
};

/*
 * The rules for this machine, if they are known here and this process's
 * own stack lies where they would have put it (its AT_EXECFN string sits
 * just below its top): a kernel built otherwise (another split of a
 * 32-bit space, a larger window) shows so, and then mmap places the
 * stack.  1 if they hold, else 0.
 */
static int top_rules(const struct ncb__stack *s, const struct ncb__sys *sys,
		     uintptr_t page, struct top_rules *r)
{
#ifdef NCB_ARCH_STACK_TOP
	uintptr_t fn = 0, own;
	uint64_t span = page;
	unsigned int i;

	for (i = 0; i < s->nkern; i++)
		if (s->kern[2 * i] == AT_EXECFN)
			fn = s->kern[2 * i + 1];
	if (!fn)
		return 0;
	own = (fn + strlen((const char *)fn) + 1 + page - 1) & ~(page - 1);
	r->top = NCB_ARCH_STACK_TOP(sys->kernel_64, page, own);
	r->rnd_mask = NCB_ARCH_STACK_RND_MASK(sys->kernel_64, page);
	r->align_rnd = NCB_ARCH_STACK_ALIGN_RND(sys->kernel_64, page);
	if (sys->rnd)
		span += (r->rnd_mask + 1) * page + r->align_rnd;
	return own <= r->top && own >= r->top - span;
#else
	(void)s;
	(void)sys;
	(void)page;
	(void)r;
	return 0;
#endif
}

/*
 * The top of the stack as execve draws it: STACK_TOP moved down by
 * randomize_stack_top() (fs/exec.c; STACK_RND_MASK pages), then by
 * arch_align_stack() and rounded up to a page in setup_arg_pages().
 */
static uintptr_t draw_top(const struct ncb__sys *sys,
			  const struct top_rules *r, uintptr_t page)
{
	uint64_t top = r->top;

	if (!sys->rnd)
		return (uintptr_t)top;
	top -= (ncb__random64() & r->rnd_mask) * page;
	if (r->align_rnd)
		top -= ncb__random64() % r->align_rnd;
	return (uintptr_t)((top + page - 1) & ~(uint64_t)(page - 1));
}

static int map_stack(struct ncb__stack *s, void *addr, size_t size, int prot,
		     int flags)
{
	flags |= MAP_PRIVATE | MAP_ANONYMOUS;
	/* Without an address the kernel chooses: nothing can be replaced. */
	s->base = addr ? ncb_mmap(addr, size, prot, flags, -1, 0)
		       : mmap(NULL, size, prot, flags, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -errno;
	}
	s->size = size;
	s->top = s->base + size;
	if (!s->at)
		s->at = (uintptr_t)s->base;
	return 0;
}

/*
 * Whether the stack at top can grow to its limit: nothing but the
 * caller's own stack (which goes) below it within the limit and the
 * guard gap.  Anything else there is the mmap area, which the program
 * maps into again: the caller's stack limit, when it was started, set
 * how far below the stack's range that begins (mmap_base()), and a
 * larger limit may reach into it.  Always, for no limit: nothing can
 * promise that.
 */
static int room_clear(const struct ncb__stack *s, uintptr_t top, size_t size,
		      uintptr_t guard)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uintptr_t lo, hi = top - size;
	struct ncb_maps *maps;
	int err, clear = 1;

	if (s->limit == UINTPTR_MAX || s->limit <= size)
		return 1;
	/* Without wrapping, whatever the limit. */
	lo = hi - (s->limit - size) < hi && hi - (s->limit - size) > guard ?
	     hi - (s->limit - size) - guard : 0;
	if (!ncb__range_occupied(lo, hi))
		return 1;
	if (ncb__maps_walk(&maps, lo))
		return 0;
	while (clear && (err = ncb_maps_next(maps, &m)) > 0 && m.start < hi)
		clear = m.end <= lo || !strcmp(m.path, "[stack]");
	ncb_maps_close(maps);
	return clear && err >= 0;
}

/*
 * The stack at top when nothing is mapped, nor kept, from the bottom of
 * its room to grow (its limit, or its start for none) and the guard gap
 * below that, to its top, which is mostly so: the whole range taken
 * no-clobber at once answers that without reading the maps (the first
 * look at /proc costs a fresh process more than the rest of this), then
 * the stack made over its top and the rest given back.  0 if so, 1 if
 * the range is not all free (or too large to take), else -errno.
 */
static int map_if_free(struct ncb__stack *s, const struct ncb__range *keep,
		       unsigned int nkeep, uintptr_t top, size_t size,
		       uintptr_t guard, int prot)
{
	uintptr_t room = s->limit == UINTPTR_MAX || s->limit < size ? size
								   : s->limit;
	uintptr_t lo = top > room && top - room > guard ? top - room - guard
							 : 0;
	unsigned int i;
	void *p;

	for (i = 0; i < nkeep; i++)
		if (keep[i].start < top && keep[i].end > lo)
			return 1;
	p = ncb_mmap((void *)lo, top - lo, PROT_NONE, MAP_PRIVATE |
		     MAP_ANONYMOUS | MAP_NORESERVE | NCB_MAP_FIXED_NOREPLACE,
		     -1, 0);
	if (p == MAP_FAILED)
		return 1;
	/* Over a placeholder of its own: nothing else can be there. */
	if (mmap((void *)(top - size), size, prot, MAP_PRIVATE |
		 MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, -1, 0) ==
	    MAP_FAILED) {
		munmap(p, top - lo);
		return -errno;
	}
	if (top - size > lo)
		munmap(p, top - size - lo);
	s->base = (char *)(top - size);
	s->size = size;
	s->top = s->base + size;
	s->at = (uintptr_t)s->base;
	return 0;
}

/*
 * Where a mapping of size could go just below the lowest mapping in
 * [lo, hi), a guard gap apart; 0 if nowhere.
 */
static uintptr_t below_holder(uintptr_t lo, uintptr_t hi, size_t size)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uintptr_t gap = 256 * ncb__probe()->page_size, at = 0;
	struct ncb_maps *maps;

	if (ncb__maps_walk(&maps, lo))
		return 0;
	if (ncb_maps_next(maps, &m) > 0 && m.start < hi &&
	    m.start > size + gap)
		at = (uintptr_t)m.start - gap - size;
	ncb_maps_close(maps);
	return at;
}

/*
 * The stack where its range is: mapped there if free; held by the
 * caller's own mappings only, made elsewhere and moved there by the
 * handover once they are gone.
 */
static int map_at(struct ncb__stack *s, uintptr_t top, size_t size, int prot)
{
	uintptr_t need, page = ncb__probe()->page_size;
	int err;

	if (!ncb__range_occupied(top - size, top))
		return map_stack(s, (void *)(top - size), size, prot,
				 MAP_GROWSDOWN | NCB_MAP_FIXED_NOREPLACE);
	/* As high as it goes: just below what holds its range. */
	err = map_stack(s, (void *)below_holder(top - size, top, size),
			size, prot, MAP_GROWSDOWN | NCB_MAP_FIXED_NOREPLACE);
	if (err)
		err = map_stack(s, NULL, size, prot, MAP_GROWSDOWN);
	if (err)
		return err;
	/*
	 * A moved mapping keeps its page offset, the address it was made
	 * at in pages, and a stack grows by no more pages than that
	 * (expand_downwards): made too low (a 32-bit space), it could not
	 * grow to its limit, or without one through half the space below
	 * it (the mmap area starts higher).  Then not here.
	 */
	need = s->limit <= size ? 0 : s->limit - size < (top - size) / 2 ?
	       s->limit - size : (top - size) / 2;
	if ((uintptr_t)s->base / page < need / page) {
		ncb__stack_unmap(s);
		s->at = 0;
		return 1;
	}
	s->at = top - size;
	return 0;
}

/*
 * Where execve would put it: the top drawn again (randomizing, as the
 * kernel would have drawn it anyway) while what lies within the stack
 * or the guard gap below it would stay, and, for a while, while its
 * room to grow is not free.  1 if no draw fits.
 */
static int map_exact(struct ncb__stack *s, const struct ncb__sys *sys,
		     const struct top_rules *r, size_t size, int prot,
		     const struct ncb__range *keep, unsigned int nkeep)
{
	uintptr_t page = ncb__probe()->page_size, guard = 256 * page;
	uintptr_t top, fits = 0;
	unsigned int tries;
	int err;

	for (tries = 0; tries < 16; tries++) {
		top = draw_top(sys, r, page);
		if (!top || top < size + guard)
			break;
		err = map_if_free(s, keep, nkeep, top, size, guard, prot);
		if (err <= 0)
			return err;
		if (!ncb__stays(top - size - guard, top, keep, nkeep)) {
			fits = top;
			if (room_clear(s, top, size, guard))
				break;
		}
		if (!sys->rnd)
			break;
	}
	return fits ? map_at(s, fits, size, prot) : 1;
}

/*
 * Its size at the start, and how it is made (s->growable): 0, or -E2BIG
 * for strings beyond what execve takes.
 */
static int stack_size(struct ncb__stack *s, const struct ncb__sys *sys,
		      char *const argv[], char *const envp[],
		      const char *execfn, size_t *size)
{
	uintptr_t page = ncb__probe()->page_size, align = 0;
	size_t strs, need;
	int err;

#ifdef NCB_ARCH_STACK_ALIGN_RND
	align = NCB_ARCH_STACK_ALIGN_RND(sys->kernel_64, page);
#endif
	err = stack_need(s, argv, envp, execfn, align, &strs, &need);
	if (err)
		return err;
	strs = ncb__page_align(strs);
	need = ncb__page_align(need);
	/*
	 * Past their first page the strings' pages must lie within the
	 * limit (get_arg_page grows the stack for them).
	 */
	if (strs > page && strs > s->limit)
		return -E2BIG;
	s->rnd = sys->rnd != 0;
	/*
	 * A runtime that keeps its own books of the address space (qemu-user
	 * maps a guest's stacks itself; valgrind would place its memory
	 * where a stack had grown unknown to it; both show as emulators)
	 * gets the stack at its full size, as those make a guest's: the
	 * limit, or 8 MiB for none or over 64 MiB, as qemu-user does.
	 */
	s->growable = !sys->emulated;
	if (!s->growable) {
		*size = s->limit > (64u << 20) ? 8u << 20 : s->limit;
		*size = ncb__page_align(*size > need ? *size : need);
		return 0;
	}
	/*
	 * As setup_arg_pages: the strings' pages and 128 KiB below them,
	 * within the limit (never less than the strings); it grows on a
	 * fault, as far as the limit and the guard gap let it.  What the
	 * vectors need beyond, the kernel's grows to as it writes them.
	 */
	*size = strs + STACK_EXPAND;
	if (*size > (s->limit & ~(page - 1)))
		*size = s->limit & ~(page - 1);
	if (*size < need)
		*size = need;
	return 0;
}

int ncb__stack_map(struct ncb__stack *s, const struct ncb__sys *sys,
		   char *const argv[], char *const envp[], const char *execfn,
		   int exec, const struct ncb__range *keep, unsigned int nkeep)
{
	uintptr_t page = ncb__probe()->page_size;
	int prot = PROT_READ | PROT_WRITE | (exec ? PROT_EXEC : 0), err;
	struct top_rules r;
	size_t size;

	err = stack_size(s, sys, argv, envp, execfn, &size);
	if (err)
		return err;
	if (!s->growable) {
		err = map_stack(s, NULL, size + page, prot, MAP_NORESERVE);
		/* Its lowest page a guard, as qemu's own. */
		if (!err && mprotect(s->base, page, PROT_NONE)) {
			err = -errno;
			ncb__stack_unmap(s);
		}
		return err;
	}
	if (top_rules(s, sys, page, &r)) {
		s->align_rnd = r.align_rnd;
		err = map_exact(s, sys, &r, size, prot, keep, nkeep);
		if (err <= 0)
			return err;
	}
	return map_stack(s, NULL, size, prot, MAP_GROWSDOWN);
}

int ncb__stack_layout(char *const av[], char *const envp[],
		      const char *execfn, size_t argc,
		      const struct ncb_exec_opts *o, uint64_t *start,
		      uint64_t *end, uint64_t *limit)
{
	uintptr_t page = ncb__probe()->page_size;
	struct top_rules r;
	struct ncb__stack s;
	struct ncb__sys sys;
	size_t size;
	int err;

	ncb__sys_read(&sys);
	ncb__stack_init(&s, 0);
	s.misc.argc = argc;
	err = ncb__stack_limit(o, &s.limit);
	if (!err)
		err = stack_size(&s, &sys, av, envp, execfn, &size);
	if (err)
		return err;
	*start = *end = 0;
	if (s.growable && top_rules(&s, &sys, page, &r)) {
		*end = draw_top(&sys, &r, page);
		*start = *end ? *end - size : 0;
	}
	if (!*end)
		*end = size;
	*limit = s.limit == UINTPTR_MAX ? UINT64_MAX : s.limit;
	return 0;
}

void ncb__stack_init(struct ncb__stack *s, ncb__hide hide)
{
	memset(s, 0, sizeof(*s));
	s->hide = hide;
	s->misc.execfd = -1;
	s->nkern = read_own_auxv(s->kern, NCB__AUXV_MAX);
}

void ncb__stack_unmap(struct ncb__stack *s)
{
	if (s->base)
		munmap(s->base, s->size);
	s->base = NULL;
}

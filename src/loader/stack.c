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

/* The per-program entries: the rest of the vector is the kernel's. */
struct aux_own {
	uintptr_t phdr, phnum, base, entry, random, platform, base_platform;
	uintptr_t execfn;
};

static void aux(struct ncb__stack *s, uintptr_t type, uintptr_t val)
{
	s->auxv[2 * s->nauxv] = type;
	s->auxv[2 * s->nauxv + 1] = val;
	s->nauxv++;
}

/* Copy bytes to the top of the stack; NULL if it would not fit. */
static char *push(struct ncb__stack *s, const void *p, size_t n)
{
	if ((size_t)(s->top - s->base) < n + 4096)
		return NULL;
	s->top -= n;
	memcpy(s->top, p, n);
	return s->top;
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
		out[i] = (uintptr_t)p;
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
	case AT_FLAGS:	*val = 0;		break;
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
	/* No descriptor of ours is the program's. */
	case AT_EXECFD:	return 0;
	}
	return 1;
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

	for (i = 0; i < s->nkern && s->nauxv < NCB__AUXV_MAX - 1; i++) {
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
	return p ? (uintptr_t)p : 1;
}

/*
 * The initial stack as the kernel lays it out: strings at the top, then
 * the 16 random bytes, then (16-byte aligned) argc, argv, NULL, envp, NULL
 * and the auxiliary vector.
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
		.entry = (uintptr_t)prog->entry,
	};
	uintptr_t *av, *ev, *w;
	unsigned char bytes[16];
	char *p;
	int err = -E2BIG;

	av = calloc(argc + 1, sizeof(*av));
	ev = calloc(envc + 1, sizeof(*ev));
	if (!av || !ev) {
		err = -ENOMEM;
		goto out;
	}
	p = push(s, execfn, strlen(execfn) + 1);
	/*
	 * The interpreter's own arguments go above the environment, so that
	 * the program's lie in one piece below it: its command line.
	 */
	if (!p || push_strings(s, argv, argc, av, s->hide, 1) ||
	    push_strings(s, envp, envc, ev, 0, 0) ||
	    push_strings(s, argv, argc, av, s->hide, 0))
		goto out;
	o.execfn = (uintptr_t)p;
	for (i = 0; hidden(s->hide, i); i++)
		;
	s->arg_start = av[i];
	for (i = argc - 1; hidden(s->hide, i); i--)
		;
	s->arg_end = av[i] + strlen(argv[i]) + 1;
	s->env_start = envc ? ev[0] : s->arg_end;
	s->env_end = envc ? ev[envc - 1] + strlen(envp[envc - 1]) + 1
			  : s->env_start;
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
	o.random = (uintptr_t)p;
	build_auxv(s, &o);
	words = 1 + argc + 1 + envc + 1 + 2 * s->nauxv;
	w = (uintptr_t *)(((uintptr_t)s->top - words * sizeof(*w)) &
			  ~(uintptr_t)15);
	if ((char *)w < s->base + 4096)
		goto out;
	*sp = (uintptr_t)w;
	*w++ = argc;
	for (i = 0; i <= argc; i++)
		*w++ = av[i];
	for (i = 0; i <= envc; i++)
		*w++ = ev[i];
	memcpy(w, s->auxv, 2 * s->nauxv * sizeof(*w));
	s->auxv_at = w;
	err = 0;
out:
	free(av);
	free(ev);
	return err;
}

size_t ncb__stack_size(const struct ncb_exec_opts *o)
{
	struct rlimit rl;
	size_t size = o->stack_size;

	if (!size && !getrlimit(RLIMIT_STACK, &rl))
		size = rl.rlim_cur == RLIM_INFINITY ? 0 : (size_t)rl.rlim_cur;
	if (!size || size > (64u << 20))
		size = 8u << 20;
	if (size < (128u << 10))
		size = 128u << 10;
	return ncb__page_align(size);
}

void ncb__stack_init(struct ncb__stack *s, ncb__hide hide)
{
	memset(s, 0, sizeof(*s));
	s->hide = hide;
	s->nkern = read_own_auxv(s->kern, NCB__AUXV_MAX);
}

int ncb__stack_map(struct ncb__stack *s, size_t size, int exec)
{
	/* Without an address the kernel chooses: nothing can be replaced. */
	s->size = size;
	s->base = mmap(NULL, size, PROT_READ | PROT_WRITE |
		       (exec ? PROT_EXEC : 0),
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -errno;
	}
	s->top = s->base + size;
	return 0;
}

void ncb__stack_unmap(struct ncb__stack *s)
{
	if (s->base)
		munmap(s->base, s->size);
	s->base = NULL;
}

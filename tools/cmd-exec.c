/* SPDX-License-Identifier: MIT */
/* noclobber exec: run a program in this process, every placement safe. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "noclobber_intree.h"
#include "picture.h"

extern char **environ;

static void usage(FILE *f)
{
	fprintf(f, "usage: noclobber exec [--base ADDR] [--stack SIZE] "
		   "[--unprivileged]\n"
		   "                      [--exe=auto|set|interp|off] "
		   "[--userns]\n"
		   "                      [--plan [--json | --svg]] PROG "
		   "[ARGS...]\n\n"
		   "Loads PROG (searched in PATH when it has no '/') and its "
		   "interpreter into\nthis process with every mapping "
		   "no-clobber, builds the stack and auxiliary\nvector the "
		   "kernel would, and runs it.  --base puts a "
		   "position-independent\nprogram at ADDR.  --plan maps "
		   "nothing: it prints where each segment, the\ninterpreter, "
		   "the stack and the break would go, and every collision "
		   "with\nthis process's mappings (--svg: drawn over the "
		   "address space, as one SVG\npicture).  Exit status, as "
		   "env(1)'s: the program's; 125\nnoclobber exec failed, "
		   "126 PROG cannot be run, 127 PROG not found; with\n"
		   "--plan 0 it fits, 1 it collides, or 125-127 likewise.\n"
		   "A set-user-ID, set-group-ID or file-capability PROG is "
		   "refused (execve would\ngive it privilege this process "
		   "cannot); --unprivileged runs it without,\nas the kernel "
		   "does under no_new_privs.\n"
		   "/proc/self/exe names PROG where this process may set it "
		   "(CAP_SYS_ADMIN or\nCAP_CHECKPOINT_RESTORE, as root or "
		   "in a user namespace of its own);\nelsewhere it keeps "
		   "naming noclobber, and a program whose paths use\n"
		   "$ORIGIN runs through its interpreter (\"ld.so --argv0 "
		   "ARGV0 PROG\"), which\ntakes the origin from the path.  "
		   "--exe=set sets the link or fails,\n--exe=interp always "
		   "runs the interpreter, --exe=off does neither.\n"
		   "--userns runs PROG in a user namespace of its own (this "
		   "user and group\nmapped to themselves), where the link "
		   "can be set: files of other users\nthen show as owned by "
		   "nobody, and set-user-ID programs gain nothing.\n");
}

/*
 * As env(1) says why it did not run a program: 127 not found (ENOENT
 * only, as env), 125 noclobber's own failure (no memory, no descriptor,
 * other threads here, no system call for it), else 126: found, but it
 * cannot be run (not executable, not loadable, its span taken, a
 * privilege refused).
 */
static int exec_status(int err)
{
	switch (err) {
	case -ENOENT:
		return EXIT_NOT_FOUND;
	case -ENOMEM:
	case -EMFILE:
	case -ENFILE:
	case -EBUSY:
	case -ENOSYS:
		return EXIT_CANNOT;
	}
	return EXIT_NOEXEC;
}

/*
 * A program of another architecture that this kernel runs itself
 * (x86_64's IA-32 emulation): its loader is that architecture's build
 * of this tool, beside this one as noclobber-ARCH, else where that
 * architecture's libnoclobber0 installs it (Debian's multiarch path).
 */
struct compat {
	int machine, elf_class;
	const char *arch, *dir;
};

static const struct compat compats[] = {
#if defined(__x86_64__) && !defined(__ILP32__)
	{ EM_386, ELFCLASS32, "i386", "/usr/lib/i386-linux-gnu/noclobber" },
#endif
	{ 0, 0, NULL, NULL },
};

/*
 * By its identification and machine alone: a malformed program is the
 * other build's to refuse, with its own reason.
 */
static const struct compat *compat_of(const char *path)
{
	unsigned char h[20];
	const struct compat *c;
	int fd = open(path, O_RDONLY | O_CLOEXEC), machine;
	ssize_t n = fd < 0 ? -1 : pread(fd, h, sizeof(h), 0);

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) ||
	    h[EI_DATA] != ELFDATA2LSB)
		return NULL;
	machine = h[18] | h[19] << 8;
	for (c = compats; c->arch; c++)
		if (machine == c->machine && h[EI_CLASS] == c->elf_class)
			return c;
	return NULL;
}

static size_t count(char **v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

/* The options a run was given, to hand on. */
struct exec_args {
	const char *base, *stack, *exe;
	int unprivileged, plan, json, svg;
};

/*
 * One candidate for the other build: run if it is a program of that
 * machine (a copy of this tool under its name would run it again, and
 * again), else its reason in err.
 */
static void try_compat(const struct compat *c, char *path, char **nv,
		       int *err)
{
	if (access(path, X_OK)) {
		*err = errno;
		return;
	}
	if (compat_of(path) != c) {
		*err = ENOEXEC;
		return;
	}
	nv[0] = path;
	execv(path, nv);
	*err = errno;
}

/*
 * The other build runs in this one's place with the options given here
 * (--userns not again: this process is in its namespace already), then
 * the program and its arguments.  Only if neither candidate runs, the
 * reason: 126, as for any program that cannot be run.
 */
static int exec_compat(const struct compat *c, const struct exec_args *x,
		       char **argv)
{
	/* Not on the stack: the program's stack limit is this one's too. */
	static char beside[PATH_MAX], installed[PATH_MAX + 32];
	char **nv = calloc(count(argv) + 12, sizeof(*nv)), name[32];
	int i = 1, e1, e2;

	if (!nv) {
		fprintf(stderr, "noclobber exec: out of memory\n");
		return EXIT_CANNOT;
	}
	nv[i++] = "exec";
	if (x->base) {
		nv[i++] = "--base";
		nv[i++] = (char *)x->base;
	}
	if (x->stack) {
		nv[i++] = "--stack";
		nv[i++] = (char *)x->stack;
	}
	if (x->exe) {
		nv[i++] = "--exe";
		nv[i++] = (char *)x->exe;
	}
	if (x->unprivileged)
		nv[i++] = "--unprivileged";
	if (x->plan)
		nv[i++] = "--plan";
	if (x->json)
		nv[i++] = "--json";
	if (x->svg)
		nv[i++] = "--svg";
	nv[i++] = "--";
	memcpy(nv + i, argv, (count(argv) + 1) * sizeof(*nv));
	snprintf(name, sizeof(name), "noclobber-%s", c->arch);
	e1 = -beside_self(name, beside, sizeof(beside));
	if (!e1)
		try_compat(c, beside, nv, &e1);
	else
		snprintf(beside, sizeof(beside), "%s", name);
	snprintf(installed, sizeof(installed), "%s/noclobber", c->dir);
	try_compat(c, installed, nv, &e2);
	free(nv);
	fprintf(stderr, "noclobber exec: %s is an %s program: its loader is "
		"the %s build of noclobber, from libnoclobber0:%s (%s: %s), "
		"or beside this tool (%s: %s)\n", argv[0], c->arch, c->arch,
		c->arch, installed, strerror(e2), beside, strerror(e1));
	return EXIT_NOEXEC;
}

struct plan {
	struct ncb_as *as;
	struct jw *w;		/* the JSON document, or NULL for text */
	int svg;		/* a picture instead of text */
	int svg_err;		/* its failure: -errno */
	int collisions;
	uint64_t pg;
	uint64_t brk;		/* the program's, if ncb_exec_layout's */
	/* The stack at the start (start 0: where mmap puts it), its limit */
	uint64_t stack_start, stack_end, stack_limit;
};

/*
 * The lines of the maps that a run leaves in place, moved to the front:
 * the kernel's own mappings (natively the handover unmaps everything
 * else of this process), or all of them under an emulator.  The new
 * length.
 */
static size_t staying(char *text, size_t len)
{
	char *line = text, *end = text + len, *nl, *path, *out = text;
	int all = ncb__emulated();
	size_t n;

	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break;
		n = (size_t)(nl - line) + 1;
		*nl = '\0';
		path = strchr(line, '[');
		*nl = '\n';
		if (all || (path && path < nl && ncb__kernel_mapping(path))) {
			memmove(out, line, n);
			out += n;
		}
	}
	return (size_t)(out - text);
}

/*
 * The model of this process as the program will find it: its maps as
 * the kernel lists them now, less what the handover unmaps.
 */
static int plan_model(struct plan *pl)
{
	struct ncb_as_opts o = { .size = sizeof(o) };
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_maps *maps;
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap), *t;
	ssize_t n;
	int fd, err;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !text) {
		free(text);
		return fd < 0 ? -errno : -ENOMEM;
	}
	while ((n = read(fd, text + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096) {
			t = realloc(text, cap *= 2);
			if (!t)
				break;
			text = t;
		}
	}
	close(fd);
	text[len] = '\0';
	/* mmap_base: the end of the highest mapping below the stack. */
	if (!ncb_maps_open(&maps, 0)) {
		while (ncb_maps_next(maps, &m) == 1 &&
		       strcmp(m.path, "[stack]"))
			o.mmap_base = m.end;
		ncb_maps_close(maps);
	}
	len = staying(text, len);
	text[len] = '\0';
	err = ncb_as_new(&pl->as, &o);
	if (!err)
		err = ncb_as_load(pl->as, text, len);
	free(text);
	return err;
}

static void prot_str(int prot, char s[4])
{
	s[0] = prot & PROT_READ ? 'r' : '-';
	s[1] = prot & PROT_WRITE ? 'w' : '-';
	s[2] = prot & PROT_EXEC ? 'x' : '-';
	s[3] = '\0';
}

/* Each area of the model in [addr, addr+len): a collision, named. */
static void collisions(struct plan *pl, const char *what, uint64_t addr,
		       uint64_t len)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uint64_t at = addr;

	while (ncb_as_find(pl->as, at, &m) == 1 && m.start < addr + len) {
		pl->collisions++;
		if (pl->w) {
			jw_open(pl->w, NULL, '{');
			jw_str(pl->w, "what", what);
			jw_hex(pl->w, "start", addr);
			jw_hex(pl->w, "end", addr + len);
			jw_mapping(pl->w, "occupant", &m);
			jw_close(pl->w, '}');
		} else if (!pl->svg) {
			printf("collision: %s %#llx-%#llx overlaps ", what,
			       (unsigned long long)addr,
			       (unsigned long long)(addr + len));
			print_mapping(stdout, &m);
		}
		at = m.end;
	}
}

/*
 * Where execve would put the program's break, and a position-independent
 * program itself if that is free (ncb_exec does the same); 1 if placed.
 * The break of a program at its own address, or of one without an
 * interpreter (set apart at ELF_ET_DYN_BASE), is known wherever the image
 * lands.
 */
static int layout(struct plan *pl, const struct ncb_elf *e, uint64_t len,
		  int fixed, uint64_t *at)
{
	struct ncb_exec_layout l = { .size = sizeof(l) };
	uint64_t got;

	if (ncb_exec_layout(e, &l))
		return 0;
	if (!l.base) {
		pl->brk = l.brk;
		return 0;
	}
	if (fixed || ncb_as_mmap(pl->as, l.base, len, PROT_NONE, MAP_PRIVATE |
				 MAP_ANONYMOUS | NCB_MAP_FIXED_NOREPLACE, 0, 0,
				 &got))
		return 0;
	*at = l.base;
	pl->brk = l.brk;
	return 1;
}

/* Where an image would go: at its address or base, else the kernel's. */
static int place(struct plan *pl, const char *what, const struct ncb_elf *e,
		 const struct ncb_elf_info *in, uint64_t base, uint64_t *at)
{
	uint64_t len = in->hi - in->lo, got, a;
	uint64_t align = in->align > pl->pg ? in->align : pl->pg;
	int fixed = in->type == ET_EXEC || base;

	if (!strcmp(what, "program") && layout(pl, e, len, fixed, at))
		return 0;
	if (fixed) {
		*at = in->type == ET_EXEC ? in->lo : base;
		collisions(pl, what, *at, len);
		/* Beyond the address space (a --base too high): no room. */
		return ncb_as_mmap(pl->as, *at, len, PROT_NONE, MAP_PRIVATE |
				   MAP_ANONYMOUS | MAP_FIXED, 0, 0, &got);
	}
	/* As ncb_resv_new does: room for the alignment, then trimmed. */
	if (ncb_as_mmap(pl->as, 0, len + align - pl->pg, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS, 0, 0, &got))
		return -ENOMEM;
	a = (got + align - 1) & ~(align - 1);
	if (a > got)
		ncb_as_munmap(pl->as, got, a - got);
	if (got + len + align - pl->pg > a + len)
		ncb_as_munmap(pl->as, a + len, got + len + align - pl->pg -
			      a - len);
	*at = a;
	return 0;
}

static void json_image(struct jw *w, const char *what, const char *path,
		       const struct ncb_elf *e, const struct ncb_elf_info *in,
		       uint64_t at)
{
	struct ncb_elf_seg s = NCB_INIT(ncb_elf_seg);
	uint64_t bias = at - in->lo;
	unsigned int i;
	char p[4];

	jw_open(w, what, '{');
	jw_str(w, "path", path);
	jw_str(w, "type", in->type == ET_EXEC ? "ET_EXEC" : "ET_DYN");
	jw_hex(w, "start", at);
	jw_hex(w, "end", at + in->hi - in->lo);
	jw_hex(w, "bias", bias);
	jw_hex(w, "entry", in->entry + bias);
	jw_open(w, "segments", '[');
	for (i = 0; !ncb_elf_segment(e, i, &s); i++) {
		prot_str(s.prot, p);
		jw_open(w, NULL, '{');
		jw_hex(w, "start", s.vaddr + bias);
		jw_hex(w, "end", s.vaddr + bias + s.memsz);
		jw_str(w, "prot", p);
		jw_hex(w, "filesz", s.filesz);
		jw_hex(w, "memsz", s.memsz);
		jw_close(w, '}');
	}
	jw_close(w, ']');
	jw_close(w, '}');
}

static void print_image(struct plan *pl, const char *what, const char *path,
			const struct ncb_elf *e, const struct ncb_elf_info *in,
			uint64_t at)
{
	uint64_t bias = at - in->lo;
	struct ncb_elf_seg s = NCB_INIT(ncb_elf_seg);
	unsigned int i;
	char p[4];

	if (pl->w) {
		json_image(pl->w, what, path, e, in, at);
		return;
	}
	if (pl->svg)
		return;
	printf("%-11s %#llx-%#llx %s (%s, bias %#llx, entry %#llx)\n", what,
	       (unsigned long long)at,
	       (unsigned long long)(at + in->hi - in->lo), path,
	       in->type == ET_EXEC ? "ET_EXEC" : "ET_DYN",
	       (unsigned long long)bias,
	       (unsigned long long)(in->entry + bias));
	for (i = 0; !ncb_elf_segment(e, i, &s); i++) {
		prot_str(s.prot, p);
		printf("  segment %u %#llx-%#llx %s file %#llx bytes, "
		       "memory %#llx\n", i,
		       (unsigned long long)(s.vaddr + bias),
		       (unsigned long long)(s.vaddr + bias + s.memsz), p,
		       (unsigned long long)s.filesz,
		       (unsigned long long)s.memsz);
	}
}

/* Opens and places one image; 0, or an exit status as exec_status. */
static int plan_one(struct plan *pl, const char *what, const char *path,
		    uint64_t base, struct ncb_elf **ep,
		    struct ncb_elf_info *in, uint64_t *at)
{
	char why[256];
	int err = ncb_elf_open(ep, path, why, sizeof(why));

	if (err) {
		fail("exec", !!pl->w, -err, "%s", why);
		return exec_status(err);
	}
	ncb_elf_info(*ep, in);
	err = place(pl, what, *ep, in, base, at);
	if (err) {
		fail("exec", !!pl->w, -err, "no room for the %s", what);
		return 125;
	}
	return 0;
}

static int exe_mode(const char *s)
{
	if (!strcmp(s, "auto"))
		return NCB_EXE_AUTO;
	if (!strcmp(s, "interp"))
		return NCB_EXE_INTERP;
	if (!strcmp(s, "off"))
		return NCB_EXE_OFF;
	if (!strcmp(s, "set"))
		return NCB_EXE_SET;
	return -1;
}

/* Whether --exe=set can be had here; if not, says why. */
static int exe_settable(void)
{
	struct ncb_exec_identity id = { .size = sizeof(id) };
	int err = ncb_exec_identity(&id);

	if (!err)
		err = id.exe;
	if (!err)
		return 1;
	fprintf(stderr, "noclobber exec: --exe=set: this process cannot "
		"point /proc/PID/exe at the program: %s\n", err == -EPERM ?
		"that needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE" :
		strerror(-err));
	return 0;
}

struct ident {
	struct ncb_exec_identity id;
	int origin;		/* its paths use $ORIGIN */
	int set;		/* /proc/PID/exe will name the program */
	int interp;		/* its interpreter runs it */
	const char *interp_path;
};

/*
 * Which of the program's identity it will have (ncb_exec_identity), and
 * whether its interpreter runs it, for $ORIGIN (ncb_elf_uses_origin).
 */
static void identity(const struct ncb_elf *e, int exe, struct ident *d)
{
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);

	d->id = (struct ncb_exec_identity){ .size = sizeof(d->id) };
	ncb_exec_identity(&d->id);
	ncb_elf_info(e, &in);
	d->origin = ncb_elf_uses_origin(e) == 1;
	d->set = (exe == NCB_EXE_AUTO || exe == NCB_EXE_SET) && !d->id.exe;
	d->interp = in.interp && !d->set &&
		    (exe == NCB_EXE_INTERP ||
		     (exe == NCB_EXE_AUTO && d->origin));
	d->interp_path = in.interp;
}

static void json_identity(struct jw *w, const struct ident *d)
{
	jw_open(w, "identity", '{');
	jw_error(w, "mm_map", -d->id.mm_map, NULL);
	jw_error(w, "comm", -d->id.comm, NULL);
	jw_error(w, "exe", -d->id.exe, NULL);
	jw_str(w, "exe_link", d->set ? "program" : "noclobber");
	jw_bool(w, "origin", d->origin);
	jw_str(w, "run", d->interp ? "interpreter" : "direct");
	jw_close(w, '}');
}

static void print_identity(const struct ident *d, int exe)
{
	if (!d->id.mm_map)
		printf("identity    its own cmdline, environ, auxv and break "
		       "(PR_SET_MM_MAP)\n");
	else
		printf("identity    this kernel refuses PR_SET_MM_MAP (%s): "
		       "cmdline, environ,\n            auxv and the break "
		       "stay noclobber's\n", strerror(-d->id.mm_map));
	if (!d->id.comm)
		printf("comm        its own (PR_SET_NAME)\n");
	else
		printf("comm        stays noclobber's: PR_SET_NAME refused "
		       "(%s)\n", strerror(-d->id.comm));
	if (d->set)
		printf("exe         /proc/PID/exe names the program "
		       "(PR_SET_MM_MAP exe_fd)\n");
	else if (exe == NCB_EXE_SET)
		printf("exe         cannot be set here (%s): the run fails\n",
		       d->id.exe == -EPERM ? "no CAP_SYS_ADMIN or "
		       "CAP_CHECKPOINT_RESTORE" : strerror(-d->id.exe));
	else
		printf("exe         /proc/PID/exe names noclobber%s\n",
		       exe == NCB_EXE_AUTO && d->id.exe == -EPERM ? " (setting "
		       "it needs CAP_SYS_ADMIN or\n            "
		       "CAP_CHECKPOINT_RESTORE)" : "");
	if (d->interp)
		printf("run         by its interpreter, \"%s --argv0 ARGV0 "
		       "PROG\"%s\n", d->interp_path, d->origin ? ":\n"
		       "            its paths use $ORIGIN, which the "
		       "interpreter takes from PROG's path" : "");
	else if (d->origin && !d->set)
		printf("run         directly, although its paths use $ORIGIN "
		       "(--exe=off):\n            the interpreter takes it "
		       "from noclobber's path\n");
}

struct plan_images {
	struct ncb_elf *e, *ie;
	struct ncb_elf_info in, iin;
	uint64_t at, iat, sat;
};

/* The program, its interpreter and the stack placed: 0 or exit status. */
static int plan_images(struct plan *pl, const char *path, uint64_t base,
		       struct plan_images *im)
{
	uint64_t stack = pl->stack_end - pl->stack_start;
	int ret;

	if (pl->w)
		jw_open(pl->w, "collisions", '[');
	ret = plan_one(pl, "program", path, base, &im->e, &im->in, &im->at);
	if (!ret && im->in.interp)
		ret = plan_one(pl, "interpreter", im->in.interp, 0, &im->ie,
			       &im->iin, &im->iat);
	im->sat = pl->stack_start;
	/* Where execve puts it, the caller's own mappings are moved. */
	if (!ret && !im->sat &&
	    ncb_as_mmap(pl->as, 0, stack, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, 0, 0, &im->sat)) {
		fail("exec", !!pl->w, ENOMEM, "no room for the stack");
		ret = 125;
	}
	if (pl->w)
		jw_close(pl->w, ']');
	return ret;
}

/* [s, e) less the planned ranges (sorted, disjoint), into the picture. */
static void pic_outside(struct pic *p, struct ncb_mapping *m,
			const uint64_t (*r)[2], int n)
{
	uint64_t s = m->start, e = m->end;
	int i;

	for (i = 0; i < n && s < e; i++) {
		if (r[i][1] <= s || r[i][0] >= e)
			continue;
		if (r[i][0] > s) {
			m->start = s;
			m->end = r[i][0];
			pic_add(p, m);
		}
		s = r[i][1];
	}
	if (s < e) {
		m->start = s;
		m->end = e;
		pic_add(p, m);
	}
}

/*
 * The plan drawn: the address space the program will find (the model),
 * the program, its interpreter and stack where they would go, the break.
 */
static int plan_svg(struct plan *pl, const char *path,
		    const struct plan_images *im, uint64_t brk)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	uint64_t r[3][2], t[2], at = 0;
	char b[32];
	struct pic p;
	int n = 0, i, j, ret;

	r[n][0] = im->at;
	r[n++][1] = im->at + im->in.hi - im->in.lo;
	if (im->ie) {
		r[n][0] = im->iat;
		r[n++][1] = im->iat + im->iin.hi - im->iin.lo;
	}
	r[n][0] = im->sat;
	r[n++][1] = im->sat + pl->stack_end - pl->stack_start;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && r[j - 1][0] > r[j][0]; j--) {
			memcpy(t, r[j], sizeof(t));
			memcpy(r[j], r[j - 1], sizeof(t));
			memcpy(r[j - 1], t, sizeof(t));
		}
	pic_init(&p);
	while (ncb_as_find(pl->as, at, &m) == 1 && !p.err) {
		at = m.end;
		pic_outside(&p, &m, (const uint64_t (*)[2])r, n);
	}
	pic_add_planned(&p, im->at, im->at + im->in.hi - im->in.lo,
			PROT_READ | PROT_EXEC, PK_PROGRAM, path, "program");
	if (im->ie)
		pic_add_planned(&p, im->iat, im->iat + im->iin.hi - im->iin.lo,
				PROT_READ | PROT_EXEC, PK_INTERP,
				im->in.interp, "interpreter");
	pic_add_planned(&p, im->sat, im->sat + pl->stack_end -
			pl->stack_start, PROT_READ | PROT_WRITE, PK_STACK,
			"[stack]", "stack");
	pic_sort(&p);
	pic_process(&p, 0, "");
	pic_title(&p, "exec plan of %s in%s", path, p.title ? p.title : "");
	pic_note(&p, "dashed: where the program, its interpreter and its "
		 "stack would go; the rest is what stays%s",
		 ncb__emulated() ? "" : " (the handover unmaps all else)");
	if (pl->stack_limit == UINT64_MAX)
		pic_note(&p, "the stack may grow without limit");
	else
		pic_note(&p, "the stack may grow to %s",
			 human(pl->stack_limit, 0, b));
	if (pl->collisions)
		pic_note(&p, "%d collisions with this process's mappings "
			 "(noclobber exec --plan lists them)", pl->collisions);
	pic_mark(&p, PM_POINT, brk, brk, "brk: the heap starts here");
	ret = pic_svg(&p, stdout);
	pic_free(&p);
	return ret;
}

static void plan_rest(struct plan *pl, const char *path,
		      const struct plan_images *im, const struct ident *d,
		      int exe)
{
	uint64_t stack = pl->stack_end - pl->stack_start;
	uint64_t brk = pl->brk ? pl->brk : im->at + im->in.hi - im->in.lo;
	uint64_t entry = im->ie ? im->iin.entry + im->iat - im->iin.lo
				: im->in.entry + im->at - im->in.lo;

	if (pl->svg) {
		pl->svg_err = plan_svg(pl, path, im, brk);
		return;
	}
	print_image(pl, "program", path, im->e, &im->in, im->at);
	if (im->ie)
		print_image(pl, "interpreter", im->in.interp, im->ie,
			    &im->iin, im->iat);
	if (!pl->w) {
		printf("stack       %#llx-%#llx\n",
		       (unsigned long long)im->sat,
		       (unsigned long long)(im->sat + stack));
		if (pl->stack_limit == UINT64_MAX)
			printf("stack-limit unlimited\n");
		else
			printf("stack-limit %llu\n",
			       (unsigned long long)pl->stack_limit);
		printf("brk         %#llx\n", (unsigned long long)brk);
		print_identity(d, exe);
		return;
	}
	jw_open(pl->w, "stack", '{');
	jw_hex(pl->w, "start", im->sat);
	jw_hex(pl->w, "end", im->sat + stack);
	if (pl->stack_limit == UINT64_MAX)
		jw_null(pl->w, "limit");
	else
		jw_uint(pl->w, "limit", pl->stack_limit);
	jw_close(pl->w, '}');
	jw_hex(pl->w, "brk", brk);
	jw_hex(pl->w, "entry", entry);
	json_identity(pl->w, d);
}

/* A "#!" chain as exec_binprm follows it: five scripts at most. */
#define SCRIPTS 5

/* The shell execvp runs a file with when execve cannot (_PATH_BSHELL). */
#define SHELL "/bin/sh"

/*
 * Whether execvp would hand the file to the shell: execve refused it
 * (ENOEXEC) and it is neither an ELF file nor a "#!" script with an
 * interpreter (a "#!" line naming none is ENOEXEC to the kernel too).
 * An ELF file keeps the loader's own reason: the shell would only say
 * it cannot run a binary file.
 */
static int shell_script(const char *path)
{
	char interp[PATH_MAX];
	int ret;

	if (ncb_elf_kind(path) != NCB_ELF_NOT_ELF)
		return 0;
	ret = ncb__script_interp(path, interp, sizeof(interp));
	return !ret || ret == -ENOEXEC;
}

struct scripts {
	int n;				/* path[n] is the program */
	int shell;			/* execvp's shell runs path[n - 1] */
	char path[SCRIPTS + 1][PATH_MAX];
	char last[PATH_MAX];
};

/*
 * The program a run would load: PROG, or the interpreter its "#!" line
 * names, and so on; each must be executable, as for a run.  0 or -errno.
 */
static int follow_scripts(const char *prog, struct scripts *sc)
{
	int i, ret;

	sc->shell = 0;
	snprintf(sc->path[0], PATH_MAX, "%s", prog);
	for (i = 0;; i++) {
		/* A failure names the file that failed: an interpreter. */
		sc->n = i;
		if (access(sc->path[i], X_OK))
			return -errno;
		/*
		 * binfmt_misc first, as the kernel asks it first.  The last
		 * may be no script: looked at, not kept.
		 */
		ret = ncb__binfmt_interp(sc->path[i], i < SCRIPTS ?
					 sc->path[i + 1] : sc->last,
					 PATH_MAX);
		if (!ret)
			ret = ncb__script_interp(sc->path[i], i < SCRIPTS ?
						 sc->path[i + 1] : sc->last,
						 PATH_MAX);
		if (ret > 0 && i == SCRIPTS)
			ret = -ELOOP;
		/* execvp's shell takes what execve refuses as ENOEXEC. */
		if (ret == -ENOEXEC && !i && shell_script(sc->path[i]))
			ret = 0;
		if (ret < 0)
			return ret;
		if (ret)
			continue;
		/* No "#!" and no ELF: the shell runs it, as execvp's. */
		if (i || !shell_script(sc->path[i]))
			return 0;
		snprintf(sc->path[i + 1], PATH_MAX, "%s", SHELL);
		sc->n = i + 1;
		sc->shell = 1;
		return access(SHELL, X_OK) ? -errno : 0;
	}
}

/*
 * The program a run loads after binfmt_misc's and "#!"'s interpreters:
 * an i386 one is the i386 build's to run, however it was reached.
 */
static const char *final_program(const char *prog)
{
	static struct scripts sc;

	return follow_scripts(prog, &sc) ? prog : sc.path[sc.n];
}

static void print_scripts(struct jw *w, const struct scripts *sc)
{
	int i;

	if (w)
		jw_open(w, "scripts", '[');
	for (i = 0; i < sc->n; i++) {
		if (!w) {
			printf("script      %s: run by %s\n", sc->path[i],
			       sc->path[i + 1]);
			continue;
		}
		jw_open(w, NULL, '{');
		jw_str(w, "path", sc->path[i]);
		jw_str(w, "interpreter", sc->path[i + 1]);
		jw_close(w, '}');
	}
	if (w)
		jw_close(w, ']');
}

/*
 * As env(1) and execvp do: "/bin/sh PATH ARGS", the script's own argv[0]
 * given up for its path.
 */
static char **shell_argv(const char *path, char **argv)
{
	size_t n = count(argv), i;
	char **nv;

	nv = calloc(n + 2, sizeof(*nv));
	if (!nv)
		return NULL;
	nv[0] = SHELL;
	nv[1] = (char *)path;
	for (i = 1; i < n; i++)
		nv[i + 1] = argv[i];
	return nv;
}

/*
 * The stack a run would have: sized for the arguments execve's handlers
 * make ("#!" lines, binfmt_misc), or execvp's shell.
 */
static int plan_stack(struct plan *pl, const struct scripts *sc,
		      const char *prog, char **argv,
		      const struct ncb_exec_opts *o)
{
	char **nv = NULL;
	int err;

	if (sc->shell) {
		nv = shell_argv(sc->path[sc->n - 1], argv);
		if (!nv)
			return -ENOMEM;
	}
	err = ncb__stack_plan(nv ? nv : argv, environ, nv ? SHELL : prog, o,
			      &pl->stack_start, &pl->stack_end,
			      &pl->stack_limit);
	free(nv);
	return err;
}

static int do_plan(const char *prog, char **argv,
		   const struct ncb_exec_opts *o, int json, int svg)
{
	uint64_t base = o->base;
	int exe = o->exe;
	static struct scripts sc;
	const char *path;
	struct plan pl = { .pg = (uint64_t)getpagesize() };
	struct plan_images im = { .in = NCB_INIT(ncb_elf_info),
				  .iin = NCB_INIT(ncb_elf_info) };
	struct ident d = { .set = 1 };
	struct jw w;
	int ret, err;

	err = follow_scripts(prog, &sc);
	if (err) {
		char name[256];

		fail("exec", json, -err, "%s: %s", ncb__visible(sc.path[sc.n],
		     name, sizeof(name)), err == -ENOEXEC ? "its \"#!\" line "
		     "names no interpreter" : strerror(-err));
		return exec_status(err);
	}
	path = sc.path[sc.n];
	err = plan_stack(&pl, &sc, prog, argv, o);
	if (err) {
		fail("exec", json, -err, "%s", err == -E2BIG ? "arguments and "
		     "environment take more than the stack limit allows" :
		     strerror(-err));
		return exec_status(err);
	}
	ret = plan_model(&pl);
	if (ret || (json && (ret = jw_begin(&w)))) {
		ncb_as_free(pl.as);
		fail("exec", json, -ret, "cannot read this process's maps: "
		     "%s", strerror(-ret));
		return 125;
	}
	pl.w = json ? &w : NULL;
	pl.svg = svg;
	if (!svg)
		print_scripts(pl.w, &sc);
	ret = plan_images(&pl, path, base, &im);
	if (!ret) {
		identity(im.e, exe, &d);
		plan_rest(&pl, path, &im, &d, exe);
		/* --exe=set that cannot be had fails the plan as a run. */
		if (exe == NCB_EXE_SET && !d.set)
			ret = EXIT_CANNOT;
		if (pl.svg_err) {
			fail("exec", 0, -pl.svg_err, "the picture: %s",
			     strerror(-pl.svg_err));
			ret = EXIT_CANNOT;
		}
	}
	if (json && ret) {
		jw_drop(&w);
	} else if (json && (err = jw_end(&w, stdout))) {
		print_error("exec", err);
		ret = EXIT_CANNOT;
	}
	if (exe == NCB_EXE_SET && !d.set)
		fail("exec", json, -d.id.exe, "--exe=set: this process cannot "
		     "set /proc/PID/exe");
	ncb_elf_close(im.e);
	ncb_elf_close(im.ie);
	ncb_as_free(pl.as);
	return ret ? ret : pl.collisions ? 1 : 0;
}

static int exec_shell(const char *path, char **argv,
		      const struct ncb_exec_opts *o, char *why, size_t wl)
{
	char **nv = shell_argv(path, argv);
	int err;

	if (!nv)
		return -ENOMEM;
	err = ncb_exec(SHELL, nv, environ, o, why, wl);
	free(nv);
	return err;
}

/* One line into a file of /proc/self. */
static int write_proc(const char *name, const char *text)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? (int)n : 0;
}

/*
 * --userns: a user namespace of this process's own, this user and group
 * mapped to themselves, where it holds CAP_SYS_ADMIN and so may point
 * /proc/PID/exe at the program.  0, or an exit status.
 */
static int enter_userns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int err = unshare(CLONE_NEWUSER) ? -errno : 0;

	if (!err)
		err = write_proc("setgroups", "deny");
	if (!err) {
		snprintf(map, sizeof(map), "%u %u 1", (unsigned int)uid,
			 (unsigned int)uid);
		err = write_proc("uid_map", map);
	}
	if (!err) {
		snprintf(map, sizeof(map), "%u %u 1", (unsigned int)gid,
			 (unsigned int)gid);
		err = write_proc("gid_map", map);
	}
	if (!err)
		return 0;
	fprintf(stderr, "noclobber exec: --userns: cannot enter a user "
		"namespace of its own: %s\n", strerror(-err));
	return EXIT_CANNOT;
}

/*
 * --stack: the program's RLIMIT_STACK, as "ulimit -s" would set it for
 * it: at least a page, within this process's hard limit.
 */
static int stack_option(const char *arg, uint64_t v, size_t *size)
{
	struct rlimit rl;

	if (v < (uint64_t)getpagesize() || v > SIZE_MAX) {
		fprintf(stderr, "noclobber exec: --stack %s: a limit from a "
			"page to %zu bytes\n", arg, (size_t)SIZE_MAX);
		return -1;
	}
	if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_max != RLIM_INFINITY &&
	    v > rl.rlim_max) {
		fprintf(stderr, "noclobber exec: --stack %s: above the hard "
			"limit of %ju bytes\n", arg, (uintmax_t)rl.rlim_max);
		return -1;
	}
	*size = (size_t)v;
	return 0;
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "base", required_argument, NULL, 'b' },
		{ "stack", required_argument, NULL, 's' },
		{ "plan", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", no_argument, NULL, 'S' },
		{ "unprivileged", no_argument, NULL, 'U' },
		{ "exe", required_argument, NULL, 'E' },
		{ "userns", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ncb_exec_opts o = { .size = sizeof(o) };
	struct exec_args x = { .base = NULL };
	const struct compat *compat;
	int c, plan = 0, json = 0, svg = 0, userns = 0, err;
	/* Not on the stack: the program's stack limit is this one's too. */
	static char path[PATH_MAX];
	char why[320];
	uint64_t v;

	/* '+': the program's own options are not ours. */
	while ((c = getopt_long(argc, argv, "+b:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 's':
			if (parse_u64(optarg, &v)) {
				fprintf(stderr, "noclobber exec: bad number "
					"'%s'\n", optarg);
				return EXIT_CANNOT;
			}
			if (c == 'b' && v % (uint64_t)getpagesize()) {
				fprintf(stderr, "noclobber exec: --base %s is "
					"not page-aligned\n", optarg);
				return EXIT_CANNOT;
			}
			if (c == 'b') {
				o.base = v;
				x.base = optarg;
			} else if (stack_option(optarg, v, &o.stack_size)) {
				return EXIT_CANNOT;
			} else {
				x.stack = optarg;
			}
			break;
		case 'p':
			plan = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'S':
			svg = 1;
			break;
		case 'U':
			o.flags |= NCB_EXEC_UNPRIVILEGED;
			x.unprivileged = 1;
			break;
		case 'u':
			userns = 1;
			break;
		case 'E':
			x.exe = optarg;
			o.exe = exe_mode(optarg);
			if (o.exe < 0) {
				fprintf(stderr, "noclobber exec: --exe takes "
					"auto, set, interp or off, not '%s'\n",
					optarg);
				return EXIT_CANNOT;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_CANNOT;
		}
	}
	if (optind >= argc || ((json || svg) && !plan) || (json && svg)) {
		usage(stderr);
		return EXIT_CANNOT;
	}
	err = find_program(argv[optind], path, sizeof(path));
	if (err) {
		fail("exec", json, -err, "%s: %s", argv[optind],
		     err == -EACCES ? "permission denied" : "not found");
		return exec_status(err);
	}
	x.plan = plan;
	x.json = json;
	x.svg = svg;
	if (plan && (compat = compat_of(final_program(path))))
		return exec_compat(compat, &x, argv + optind);
	if (plan)
		return do_plan(path, argv + optind, &o, json, svg);
	if (userns && (err = enter_userns()))
		return err;
	/* What was asked of noclobber, not of the program: 125. */
	if (o.exe == NCB_EXE_SET && !exe_settable())
		return EXIT_CANNOT;
	err = ncb_exec(path, argv + optind, environ, &o, why, sizeof(why));
	/* Another build's program, however reached; else execvp's shell. */
	if (err == -ENOEXEC && (compat = compat_of(final_program(path))))
		return exec_compat(compat, &x, argv + optind);
	if (err == -ENOEXEC && shell_script(path))
		err = exec_shell(path, argv + optind, &o, why, sizeof(why));
	fprintf(stderr, "noclobber exec: %s\n", why);
	return exec_status(err);
}

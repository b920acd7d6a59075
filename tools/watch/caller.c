/* SPDX-License-Identifier: MIT */
/*
 * Who made a call: the module holding the code that asked, past the C
 * library's system call wrappers.  The program counter at the stop says
 * where the system call instruction is; when that is in the C library, the
 * return address a leaf wrapper leaves on the stack says who called it,
 * else the stack is walked (elfutils' unwinder, through our ptrace stop)
 * to the first frame outside it.  Walks cost about a millisecond: only
 * calls that replace something ask for one, and the unwinder (with the
 * libraries it needs) is loaded at the first.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include "cli.h"
#include "watch.h"

/* The functions of libdw used here, typed as its header declares them. */
#define DW_FUNCS(X) X(dwfl_begin) X(dwfl_end) X(dwfl_report_begin)	\
	X(dwfl_report_begin_add) X(dwfl_report_end)			\
	X(dwfl_linux_proc_report) X(dwfl_linux_proc_attach)		\
	X(dwfl_getthread_frames) X(dwfl_frame_pc) X(dwfl_addrmodule)	\
	X(dwfl_module_addrinfo) X(dwfl_linux_proc_find_elf)		\
	X(dwfl_standard_find_debuginfo) X(dwfl_report_offline)		\
	X(dwfl_module_getelf) X(dwfl_build_id_find_elf)			\
	X(dwfl_offline_section_address) X(elf_getphdrnum) X(gelf_getphdr)
#define DW_FIELD(f) __typeof__(f) *f;

static struct {
	DW_FUNCS(DW_FIELD)
} dw;

static Dwfl_Callbacks callbacks, offline;

/* libdw, loaded at the first walk: 1 there, 0 not to be had. */
static int load_dw(void)
{
	static int state;
	void *h, *s;

	if (state)
		return state > 0;
	state = -1;
	h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 0;
#define DW_LOAD(f)						\
	s = dlsym(h, #f);					\
	if (!s)							\
		return 0;					\
	memcpy(&dw.f, &s, sizeof(s));
	DW_FUNCS(DW_LOAD)
	callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
	callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
	offline.find_elf = dw.dwfl_build_id_find_elf;
	offline.find_debuginfo = dw.dwfl_standard_find_debuginfo;
	offline.section_address = dw.dwfl_offline_section_address;
	state = 1;
	return 1;
}

/* One unwinder per process, kept while it is being watched. */
static Dwfl *walker;
static pid_t walker_pid;

void watch_caller_forget(pid_t tgid)
{
	if (walker && walker_pid == tgid) {
		dw.dwfl_end(walker);
		walker = NULL;
	}
}

/*
 * The unwinder for process tgid, its module list brought up to date,
 * read through its thread tid (the leader may be a zombie, whose /proc
 * shows no address space).
 */
static Dwfl *unwinder(pid_t tgid, pid_t tid)
{
	if (!load_dw())
		return NULL;
	if (walker && walker_pid != tgid)
		watch_caller_forget(walker_pid);
	if (!walker) {
		walker = dw.dwfl_begin(&callbacks);
		if (!walker)
			return NULL;
		walker_pid = tgid;
		dw.dwfl_report_begin(walker);
		if (dw.dwfl_linux_proc_report(walker, tid) ||
		    dw.dwfl_report_end(walker, NULL, NULL) ||
		    /* Stopped by us already: it must not attach itself. */
		    dw.dwfl_linux_proc_attach(walker, tid, true)) {
			watch_caller_forget(tgid);
			return NULL;
		}
		return walker;
	}
	dw.dwfl_report_begin_add(walker);
	dw.dwfl_linux_proc_report(walker, tid);
	dw.dwfl_report_end(walker, NULL, NULL);
	return walker;
}

/*
 * The C library's wrappers: libc, libpthread, musl's loader-libc, and the
 * vDSO's system call entry that i386 wrappers call.
 */
int watch_is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	if (!strcmp(path, "[vdso]"))
		return 1;
	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
	       !strncmp(b, "libpthread", 10) || !strncmp(b, "ld-musl", 7);
}

/* Where addr is, from the process's maps: 0, or -errno; *prot its. */
static int site_prot(struct ncb_maps *maps, uint64_t addr,
		     struct watch_site *s, int *prot)
{
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	int r = ncb_maps_find(maps, addr, &m);

	memset(s, 0, sizeof(*s));
	s->addr = addr;
	*prot = r == 1 ? m.prot : 0;
	if (r == 1) {
		s->mod.ino = m.inode;
		s->mod.dev = m.inode ? makedev(m.dev_major, m.dev_minor) : 0;
		snprintf(s->module, sizeof(s->module), "%s", m.path);
		s->offset = addr - m.start + m.offset;
	} else {
		s->offset = addr;
	}
	return r < 0 ? r : 0;
}

static int site_of(struct ncb_maps *maps, uint64_t addr,
		   struct watch_site *s)
{
	int prot;

	return site_prot(maps, addr, s, &prot);
}

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
	       (ssize_t)len;
}

/*
 * A C library wrapper that is a leaf (glibc's mmap on x86_64 pushes
 * nothing) has its caller's return address on top of the stack: taken
 * when it points just after a call instruction (call rel32, call through
 * a pointer, call through a register) in executable code.  An i386
 * program's system calls go through the vDSO's __kernel_vsyscall, which
 * pushes three registers before it enters the kernel: its caller's return
 * address is the fourth word.  Anything else on the stack fails the test.
 * 1 if found, with its site (the call's: the address before it).
 */
static int leaf_return(struct ncb_maps *maps, pid_t tid, uint64_t sp,
		       int compat, const struct watch_site *pc,
		       struct watch_site *s)
{
	unsigned char code[6];
	uint64_t ret = 0;
	int prot;

	if (compat && strcmp(pc->module, "[vdso]"))
		return 0;
	if (!peek(tid, compat ? sp + 12 : sp, &ret, compat ? 4 : 8) ||
	    ret < sizeof(code) ||
	    !peek(tid, ret - sizeof(code), code, sizeof(code)))
		return 0;
	if (code[1] != 0xe8 && !(code[0] == 0xff && code[1] == 0x15) &&
	    !(code[4] == 0xff && (code[5] & 0xf8) == 0xd0))
		return 0;
	return !site_prot(maps, ret - 1, s, &prot) && (prot & PROT_EXEC);
}

struct walk {
	struct ncb_maps *maps;
	struct watch_site *site;
	Dwarf_Addr pc;
	int found;
	int maker;		/* stop past the wrappers, not past libc */
	struct watch_site libc;	/* the last frame in the C library */
};

/*
 * The C library's system call wrappers, by their symbols: the functions
 * whose caller is the one asking (the vDSO's entry, mmap and its aliases,
 * mremap, shmat, syscall).  Its other functions (malloc's) ask for
 * themselves.
 */
int watch_wrapper(const char *sym)
{
	static const char *const names[] = {
		"mmap", "mmap64", "mremap", "shmat", "syscall",
		"__kernel_vsyscall",
	};
	size_t i;

	while (*sym == '_')
		sym++;
	if (!strncmp(sym, "GI_", 3))
		sym += 3;
	while (*sym == '_')
		sym++;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(sym, names[i]))
			return 1;
	return 0;
}

static void symbolize(Dwfl *d, Dwarf_Addr pc, struct watch_site *s)
{
	Dwfl_Module *mod = d ? dw.dwfl_addrmodule(d, pc) : NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name;

	if (!mod)
		return;
	name = dw.dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (!name)
		return;
	snprintf(s->symbol, sizeof(s->symbol), "%s", name);
	s->sym_off = off;
}

static int frame(Dwfl_Frame *f, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dw.dwfl_frame_pc(f, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A return address points after the call: look at the call. */
	pc = activation ? pc : pc - 1;
	if (site_of(w->maps, pc, w->site))
		return DWARF_CB_ABORT;
	w->pc = pc;
	if (w->maker) {
		symbolize(walker, pc, w->site);
		if (watch_is_libc(w->site->module) &&
		    strcmp(w->site->module, "[vdso]"))
			w->libc = *w->site;
		/* A symbol not known in the C library: a wrapper's helper. */
		if (!strcmp(w->site->module, "[vdso]") ||
		    (watch_is_libc(w->site->module) &&
		     (!w->site->symbol[0] || watch_wrapper(w->site->symbol))))
			return DWARF_CB_OK;
	} else if (watch_is_libc(w->site->module)) {
		return DWARF_CB_OK;
	}
	w->found = 1;
	return DWARF_CB_ABORT;
}


int watch_caller(struct ncb_maps *maps, pid_t tgid, pid_t tid, uint64_t pc,
		 uint64_t sp, int compat, struct watch_site *site, int walk)
{
	struct walk w = { .maps = maps, .site = site, .pc = pc };
	struct watch_site at;
	Dwfl *d;
	int r = site_of(maps, pc, site);

	if (r)
		return r;
	if (!walk) {
		if (watch_is_libc(site->module) &&
		    leaf_return(maps, tid, sp, compat, site, &at) &&
		    !watch_is_libc(at.module))
			*site = at;
		return 0;
	}
	d = unwinder(tgid, tid);
	if (d && watch_is_libc(site->module)) {
		dw.dwfl_getthread_frames(d, tid, frame, &w);
		/* No frame outside the C library: it is the caller. */
		if (!w.found)
			site_of(maps, pc, site);
	}
	symbolize(d, w.found ? w.pc : pc, site);
	return 0;
}

int watch_maker(struct ncb_maps *maps, pid_t tgid, pid_t tid, uint64_t pc,
		uint64_t sp, int compat, struct watch_site *site, int walk)
{
	struct walk w = { .maps = maps, .site = site, .pc = pc, .maker = 1 };
	struct watch_site at;
	Dwfl *d;
	int r = site_of(maps, pc, site);

	if (r || !watch_is_libc(site->module))
		return r;
	/* i386's leaf is the vDSO's entry: its caller, a wrapper still. */
	if (leaf_return(maps, tid, sp, compat, site, &at) &&
	    !(compat && watch_is_libc(at.module))) {
		*site = at;
		return 0;
	}
	d = walk ? unwinder(tgid, tid) : NULL;
	if (d)
		dw.dwfl_getthread_frames(d, tid, frame, &w);
	/* No frame past the wrappers: the C library is the one asking. */
	if (!w.found && w.libc.mod.ino)
		*site = w.libc;
	else if (!w.found)
		site_of(maps, pc, site);
	return 0;
}

void watch_creator(const struct ncb__wvictim *v, char *buf, size_t len)
{
	switch (v->kind) {
	case NCB__W_HEAP: case NCB__W_STACK: case NCB__W_KERNEL:
	case NCB__W_EXE:
		snprintf(buf, len, "the kernel");
		break;
	case NCB__W_INTERP:
		snprintf(buf, len, "the kernel (execve)");
		break;
	case NCB__W_THREAD_STACK:
		snprintf(buf, len, "clone (thread %d)", (int)v->tid);
		break;
	case NCB__W_LIBRARY:
		snprintf(buf, len, "the loader");
		break;
	default:
		snprintf(buf, len, "not seen");
	}
}

void watch_made_text(const struct watch_made *m, char *buf, size_t len)
{
	const struct watch_site *s = &m->site;

	if (!s->module[0]) {
		snprintf(buf, len, "%s from code in no file at %.6f s",
			 m->call, m->when);
		return;
	}
	snprintf(buf, len, "%s from %s+%#" PRIx64 "%s%s%s at %.6f s", m->call,
		 s->module, s->offset, s->symbol[0] ? " (" : "", s->symbol,
		 s->symbol[0] ? ")" : "", m->when);
}

/* The address of a file offset in the module as loaded, from its segments. */
static int offset_addr(Dwfl_Module *mod, uint64_t off, Dwarf_Addr *addr)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dw.dwfl_module_getelf(mod, &bias);
	size_t i, n = 0;
	GElf_Phdr ph;

	if (!elf || dw.elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (dw.gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = off - ph.p_offset + ph.p_vaddr + bias;
			return 0;
		}
	return -1;
}

int watch_symbol(const char *path, uint64_t offset, struct watch_site *s)
{
	Dwfl_Module *mod;
	Dwarf_Addr addr;
	Dwfl *d;
	int r = -1;

	if (!path[0] || !load_dw())
		return -1;
	d = dw.dwfl_begin(&offline);
	if (!d)
		return -1;
	mod = dw.dwfl_report_offline(d, "", path, -1);
	if (mod && !dw.dwfl_report_end(d, NULL, NULL) &&
	    !offset_addr(mod, offset, &addr)) {
		symbolize(d, addr, s);
		r = s->symbol[0] ? 0 : -1;
	}
	dw.dwfl_end(d);
	return r;
}

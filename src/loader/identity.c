/* SPDX-License-Identifier: MIT */
/*
 * The identity execve gives a process, given after an in-process exec.
 * What load_elf_binary and create_elf_tables record in the mm (the
 * argument and environment areas for /proc/PID/cmdline and environ and
 * ps, the saved auxiliary vector for /proc/PID/auxv, the code and data
 * bounds, the program break so that the program's heap is its own, and
 * where permitted the exe link) is set by one PR_SET_MM_MAP (kernel/sys.c;
 * CONFIG_CHECKPOINT_RESTORE; no privilege while exe_fd is -1), which
 * handover.c makes last.  PR_SET_NAME sets comm as begin_new_exec does.
 * Both are best effort: where the kernel refuses (or qemu-user, which
 * passes neither on) the program still runs, as the process it is.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/prctl.h>
#include "loader.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

/*
 * struct prctl_mm_map as a 64-bit kernel reads it from any process.  Its
 * auxv is a pointer, 8 bytes in the kernel's own struct, and kernel/sys.c
 * has no compat form: a 32-bit process under a 64-bit kernel must give
 * this layout, not its own uapi struct (100 bytes on i386, where a u64
 * is 4-byte aligned; auxv_size at 92 instead of 96 on armhf).
 */
struct mm_map64 {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size, exe_fd;
};

_Static_assert(sizeof(struct mm_map64) == 104, "the kernel's 64-bit size");
_Static_assert(sizeof(struct mm_map64) <= NCB__MM_MAP_MAX &&
	       sizeof(struct prctl_mm_map) <= NCB__MM_MAP_MAX,
	       "room for either layout");

size_t ncb__mm_map_size(void)
{
	return ncb__kernel_64() ? sizeof(struct mm_map64)
			   : sizeof(struct prctl_mm_map);
}

/* Fields in the order both layouts share, up to auxv. */
#define MM_MAP_FILL(m, id)						\
	do {								\
		(m)->start_code = (id)->start_code;			\
		(m)->end_code = (id)->end_code;				\
		(m)->start_data = (id)->start_data;			\
		(m)->end_data = (id)->end_data;				\
		(m)->start_brk = (id)->brk;				\
		(m)->brk = (id)->brk;					\
		(m)->start_stack = (id)->start_stack;			\
		(m)->arg_start = (id)->arg_start;			\
		(m)->arg_end = (id)->arg_end;				\
		(m)->env_start = (id)->env_start;			\
		(m)->env_end = (id)->env_end;				\
		(m)->auxv_size = (__u32)(id)->auxv_size;		\
	} while (0)

size_t ncb__mm_map_fill(void *buf, const struct ncb__identity *id,
			int exe_fd)
{
	struct prctl_mm_map *n = buf;
	struct mm_map64 *w = buf;

	memset(buf, 0, NCB__MM_MAP_MAX);
	if (ncb__kernel_64()) {
		MM_MAP_FILL(w, id);
		w->auxv = (uintptr_t)id->auxv;
		w->exe_fd = (uint32_t)exe_fd;
		return sizeof(*w);
	}
	MM_MAP_FILL(n, id);
	n->auxv = (__u64 *)(void *)id->auxv;
	n->exe_fd = (__u32)exe_fd;
	return sizeof(*n);
}

/*
 * The image's bounds as load_elf_binary computes them: code over the
 * executable segments' file contents; data from the highest segment
 * start (so the kernel has it) to the highest end of file contents; the
 * break at the page-aligned end of memory.
 */
void ncb__identity_image(struct ncb__identity *id, const struct ncb_elf *e,
			 const struct ncb_elf_image *img)
{
	uint64_t start_code = UINT64_MAX, end_code = 0, start_data = 0;
	uint64_t end_data = 0, k;
	unsigned int i;

	for (i = 0; i < e->nload; i++) {
		const struct ncb__phdr *p = &e->ph[e->load[i]];

		k = p->p_vaddr;
		if ((p->p_flags & PF_X) && k < start_code)
			start_code = k;
		if (start_data < k)
			start_data = k;
		k = p->p_vaddr + p->p_filesz;
		if ((p->p_flags & PF_X) && end_code < k)
			end_code = k;
		if (end_data < k)
			end_data = k;
	}
	id->start_code = start_code + img->bias;
	id->end_code = end_code + img->bias;
	id->start_data = start_data + img->bias;
	id->end_data = end_data + img->bias;
	id->brk = img->brk;
}

/* "/usr/bin/ls" -> "ls", cut to comm's 15 bytes (__set_task_comm). */
static void comm_of(const char *execfn, char comm[16])
{
	const char *base = strrchr(execfn, '/');

	base = base ? base + 1 : execfn;
	strncpy(comm, base, 15);
	comm[15] = '\0';
}

int ncb__identity_comm(const struct ncb__identity *id)
{
	char comm[16];

	comm_of(id->execfn, comm);
	return prctl(PR_SET_NAME, comm, 0, 0, 0) ? -errno : 0;
}

/*
 * Whether PR_SET_MM_MAP is there, in the layout this library writes: it
 * answers PR_SET_MM_MAP_SIZE with its struct's size.  0, or -errno.
 */
static int mm_map_usable(void)
{
	unsigned int size = 0;

	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0))
		return -errno;
	return size == ncb__mm_map_size() ? 0 : -EINVAL;
}

/*
 * Whether it may set the exe link: checkpoint_restore_ns_capable in the
 * caller's own user namespace, the capability sets capget reports.
 */
static int exe_capable(void)
{
	struct __user_cap_header_struct hd = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &hd, d))
		return -errno;
	if ((d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) ||
	    (d[CAP_CHECKPOINT_RESTORE / 32].effective &
	     (1u << (CAP_CHECKPOINT_RESTORE % 32))))
		return 0;
	return -EPERM;
}

int ncb__exe_settable(void)
{
	return mm_map_usable() ?: exe_capable();
}

int ncb_exec_identity(struct ncb_exec_identity *id)
{
	struct ncb_exec_identity r = { .size = sizeof(r) };
	char comm[16];

	if (ncb__out_size(id, NCB__END(ncb_exec_identity, exe)))
		return -EINVAL;
	r.mm_map = mm_map_usable();
	r.exe = r.mm_map ? r.mm_map : exe_capable();
	/* Setting comm to what it is changes nothing. */
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) ||
	    prctl(PR_SET_NAME, comm, 0, 0, 0))
		r.comm = -errno;
	ncb__out(id, &r, sizeof(r));
	return 0;
}

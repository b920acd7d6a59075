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
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/prctl.h>
#include "loader.h"

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

int ncb_exec_identity(struct ncb_exec_identity *id)
{
	struct ncb_exec_identity r = { .size = sizeof(r) };
	unsigned int size = 0;
	char comm[16];

	if (!id || id->size < offsetof(struct ncb_exec_identity, mm_map) +
			      sizeof(int))
		return -EINVAL;
	/* Answers with the struct's size where PR_SET_MM_MAP exists. */
	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0))
		r.mm_map = -errno;
	else if (size != sizeof(struct prctl_mm_map))
		r.mm_map = -EINVAL;
	r.exe = r.mm_map ? r.mm_map : ncb__exe_settable();
	/* Setting comm to what it is changes nothing. */
	if (prctl(PR_GET_NAME, comm, 0, 0, 0) ||
	    prctl(PR_SET_NAME, comm, 0, 0, 0))
		r.comm = -errno;
	/* Older callers pass a smaller struct: copy what they know. */
	memcpy((char *)id + sizeof(size_t), (char *)&r + sizeof(size_t),
	       (id->size < sizeof(r) ? id->size : sizeof(r)) - sizeof(size_t));
	return 0;
}

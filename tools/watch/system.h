/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * noclobber watch --system: what the BPF programs (system.bpf.c) tell
 * the tool (system.c) through their ring buffer, and the counts they
 * keep.  Plain types only: both sides include it, as they do calls.h.
 */
#ifndef NCB_WATCH_SYSTEM_H
#define NCB_WATCH_SYSTEM_H

#include "calls.h"

#define WS_VICTIMS 16		/* mappings in an event, after merging */
#define WS_THREADS 64		/* other threads' stack pointers in it */
#define WS_NAME 48		/* a file's last path component */
#define WS_SCOPE_CGROUPS 16
#define WS_MAKERS 2048		/* placements remembered per process */
#define WS_EVENT_REGIONS 32	/* of them, those an event meets */
#define WS_FRAMES 4		/* a maker's call and return addresses */
#define WS_SCAN 32		/* stack words an i386 caller's return
				   addresses are looked for in */
#define WS_SCAN64 12		/* an x86_64 one's (glibc's mremap has
				   a frame of 11 words) */
#define WS_COMPONENTS 24	/* a path's, leaf first */
#define WS_COMPONENT 64		/* bytes of each, with its NUL */

/* A file, by the kernel's device number and its inode. */
struct ws_file_key {
	unsigned long long dev, ino;
};

/* What a ring buffer record is: its first field. */
enum ws_type { WS_EVENT = 1, WS_FILE };

/*
 * A file's path as the kernel has it (dentries up to the root of the
 * mount, mount points up to the root of the mount namespace), sent once
 * per file before the first event that names it: the process may be gone
 * by the time the tool reads the event.
 */
struct ws_file {
	unsigned int type;		/* WS_FILE */
	unsigned int ncomp;
	unsigned int truncated;		/* a name or the path was cut */
	unsigned int pad;
	unsigned long long dev, ino;
	char comp[WS_COMPONENTS][WS_COMPONENT];
};

/* What the kernel knows a mapping to be (ws_vma.kind). */
#define WS_K_FILE	0x01	/* file-backed: dev, ino, size, name */
#define WS_K_HEAP	0x02	/* the initial heap (the program break) */
#define WS_K_STACK	0x04	/* the main thread's stack */
#define WS_K_SPECIAL	0x08	/* the kernel's own ([vdso]...): name */
#define WS_K_MERGED	0x10	/* several plain anonymous mappings */
#define WS_K_SP		0x20	/* plain anonymous, holding a stack
				   pointer: never merged */
#define WS_K_EXEC	0x40	/* the file is mapped executable in the
				   process: code, an object */
#define WS_K_DATA	0x80	/* no access, private, pages made in
				   it: data maybe (has_data) */

struct ws_vma {
	unsigned long long start, end;
	unsigned long long flags;	/* vm_flags */
	unsigned long long pgoff;	/* in pages */
	unsigned long long dev;		/* the kernel's dev_t */
	unsigned long long ino;
	unsigned long long size;	/* the file's, in bytes */
	unsigned int kind;
	char name[WS_NAME];
};

/* Where an address is: its mapping's file and the offset in it. */
struct ws_site {
	unsigned long long addr;
	unsigned long long offset;	/* in the file, or addr if none */
	unsigned long long dev, ino;
	unsigned int flags;		/* VM_READ, VM_WRITE, VM_EXEC, and
					   WS_MAPPED; 0: not mapped */
	unsigned int pad;
	unsigned long long end;		/* its mapping's */
	char name[WS_NAME];
};

#define WS_MAPPED 0x100

/*
 * Where a maker's code is: its file (ino 0: code in no file) and the
 * offset in it.
 */
struct ws_frame {
	unsigned long long ino;
	unsigned int dev;		/* the kernel's dev_t */
	unsigned int off;
};

#define WS_M_UNKNOWN 1		/* who made it is not known: an mremap of
				   memory of no record */

/*
 * A placement a process made, plain or fixed: the region it made, what
 * it maps, and where the call came from: f[0] the call's own address,
 * then the return addresses above it on the stack (code just after a
 * call: the leaf wrapper's caller; for an i386 program, those past the
 * vDSO's entry and the C library's wrappers), from which the tool
 * decides the maker (system.c).  An mremap's region keeps its source's.
 * Its region from then on, until a newer one covers it.
 */
struct ws_made {
	unsigned long long start, end;
	unsigned long long ns;
	unsigned long long file_ino;	/* what it maps; 0 anonymous */
	unsigned int file_dev;
	unsigned char call;		/* wcall_family() */
	unsigned char nframes;
	unsigned char flags;		/* WS_M_* */
	unsigned char libc;		/* --deny: the frames (bit i: f[i])
					   in the C library, by its name */
	struct ws_frame f[WS_FRAMES];
};

/*
 * A process's last WS_MAKERS placements, a ring: the oldest falls out
 * first, so that a record never outlives a newer one over the same
 * memory (what falls out has no record, its maker not known).
 */
struct ws_range {
	unsigned long long start, end;
};

struct ws_makers {
	unsigned int next;		/* where the next one goes */
	unsigned int pad;
	/*
	 * Each record's range again, apart: a fixed call looks at every
	 * record's range, and at the rest of those that meet its own.
	 */
	struct ws_range rg[WS_MAKERS];
	struct ws_made r[WS_MAKERS];
};

struct ws_thread {
	unsigned int tid;
	unsigned int pad;
	unsigned long long sp;
};

/*
 * One fixed placement that replaces something, taken at the call's entry
 * (what it would replace, who calls) and sent at its exit (its result).
 */
struct ws_event {
	unsigned int type;		/* WS_EVENT */
	unsigned int tgid, tid, uid;
	unsigned int call;		/* enum wcall */
	unsigned int compat;		/* a 32-bit caller */
	unsigned int nvictims;
	unsigned int nthreads;
	unsigned int truncated;		/* more mappings than WS_VICTIMS */
	unsigned int more_threads;	/* more than WS_THREADS others */
	unsigned long long args[6];
	unsigned long long start, end;	/* shmat's end: known at the exit */
	unsigned long long sp;
	long long result;		/* the call's, -errno */
	unsigned long long ns;		/* bpf_ktime_get_boot_ns at entry */
	unsigned long long leader_start;	/* ws_key's start */
	unsigned long long exe_dev, exe_ino;
	unsigned long long interp_dev, interp_ino;
	unsigned long long file_dev, file_ino;	/* what mmap maps */
	struct ws_site pc;		/* the call */
	struct ws_made made;		/* its frames, as a maker's */
	char comm[16];
	struct ws_thread threads[WS_THREADS];
	struct ws_vma v[WS_VICTIMS];
	unsigned int nregions;		/* newest first; the oldest left
					   out if more met the range */
	unsigned int pad2[2];
	struct ws_made regions[WS_EVENT_REGIONS];
	unsigned int armed;		/* taken at entry, not yet sent */
	int err;			/* the walk's: what it would replace
					   is unknown (-errno) */
	unsigned long long result_at;	/* ipc's SHMAT: where the address
					   is written */
	unsigned int verdict;		/* --deny: the kernel's class, if
					   one to refuse (else 0) */
	unsigned int refused;		/* refused with EEXIST for it */
	unsigned int overlay;		/* file_*: an overlay's (its own
					   mappings are of the file below) */
	unsigned int pad3;
};

/* Per process (its thread group and start), the calls never sent. */
struct ws_key {
	unsigned int tgid;
	unsigned int pad;
	unsigned long long start;	/* the leader's start_time */
};

struct ws_count {
	char comm[16];
	unsigned long long fixed;	/* fixed placements in scope */
	unsigned long long free;	/* over free space only */
	unsigned long long reserved;	/* over reservation pages only */
	unsigned long long invalid;	/* refused by the kernel itself */
	unsigned long long sent;	/* to the tool */
	unsigned long long lost;	/* not sent: no room */
};

#endif

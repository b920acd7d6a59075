/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * The kernel's types as system.bpf.c reads them: only the fields it
 * reads, relocated by name when the object is loaded (CO-RE against the
 * running kernel's BTF), so the object builds without that kernel's
 * headers and runs on any kernel whose structures have those fields.
 * x86_64 only: the registers are its.
 */
#ifndef NCB_WATCH_KERNEL_H
#define NCB_WATCH_KERNEL_H

#define CORE __attribute__((preserve_access_index))

struct pt_regs {
	unsigned long r10, r9, r8, ax, cx, dx, si, di, bx, bp;
	unsigned long orig_ax, ip, sp;
} CORE;

struct thread_info {
	unsigned int status;		/* TS_COMPAT: a 32-bit system call */
} CORE;

struct qstr {
	union {
		struct {
			unsigned int hash, len;
		};
		unsigned long long hash_len;
	};
	const unsigned char *name;
} CORE;

struct dentry {
	struct qstr d_name;
	struct dentry *d_parent;
} CORE;

struct vfsmount {
	struct dentry *mnt_root;
} CORE;

/* fs/mount.h: a vfsmount is inside its mount. */
struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
} CORE;

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
} CORE;

struct super_block {
	unsigned int s_dev;
	unsigned long s_blocksize;	/* hugetlbfs: its huge page size */
	unsigned long s_magic;
} CORE;

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
	long long i_size;
} CORE;

struct file {
	struct inode *f_inode;
	struct path f_path;
} CORE;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} CORE;

struct files_struct {
	struct fdtable *fdt;
} CORE;

struct list_head {
	struct list_head *next, *prev;
} CORE;

struct vm_special_mapping {
	const char *name;
} CORE;

struct vm_operations_struct;
struct anon_vma;

struct vm_area_struct {
	unsigned long vm_start, vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
	const struct vm_operations_struct *vm_ops;
	void *vm_private_data;
	struct anon_vma *anon_vma;	/* set at its first private page */
} CORE;

/*
 * include/linux/maple_tree.h: the tree of an address space's VMAs (Linux
 * 6.1), read where the VMA iterator is missing (before 6.7).  Its nodes
 * are 256 bytes, their pointers' low 8 bits the node's type and flags.
 */
struct maple_tree {
	void *ma_root;
} CORE;

/* Leaves and plain inner nodes. */
struct maple_range_64 {
	unsigned long pivot[15];
	void *slot[16];
} CORE;

/* Inner nodes that keep their gaps' sizes (an mm's). */
struct maple_arange_64 {
	unsigned long pivot[9];
	void *slot[10];
} CORE;

enum maple_type {
	maple_dense,
	maple_leaf_64,
	maple_range_64,
	maple_arange_64,
};

struct mm_struct {
	unsigned long start_code, start_brk, brk, start_stack;
	unsigned long saved_auxv[2];	/* its size: the kernel's, by CO-RE */
	struct file *exe_file;
	struct maple_tree mm_mt;
} CORE;

struct signal_struct {
	struct { int counter; } live;	/* threads not yet exiting */
	struct list_head thread_head;	/* its threads' thread_node */
} CORE;

struct task_struct {
	struct thread_info thread_info;
	void *stack;			/* the kernel's: pt_regs on top */
	int pid, tgid;
	struct mm_struct *mm;
	struct task_struct *group_leader;
	unsigned long long start_time;
	struct files_struct *files;
	struct signal_struct *signal;
	struct list_head thread_node;
	char comm[16];
} CORE;

/* The open-coded iterators' state: opaque, sized as the kernel's. */
struct bpf_iter_task_vma {
	unsigned long long __opaque[1];
};

struct bpf_iter_task {
	unsigned long long __opaque[3];
};

/* kernel/bpf/task_iter.c: bpf_iter_task_new()'s flags. */
#define BPF_TASK_ITER_PROC_THREADS 2

/* ipc/shm.c: a SysV segment, around the permissions the hook is given */
struct kern_ipc_perm {
	int id;
} CORE;

struct shmid_kernel {
	struct kern_ipc_perm shm_perm;
	unsigned long shm_segsz;
	struct file *shm_file;		/* its size: the mapping's */
} CORE;

/* include/uapi/linux/magic.h */
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#define HUGETLBFS_MAGIC 0x958458f6

/* arch/x86/include/asm/thread_info.h */
#define TS_COMPAT 0x0002

/* include/linux/mm.h */
#define VM_READ		0x00000001
#define VM_WRITE	0x00000002
#define VM_EXEC		0x00000004
#define VM_MAYSHARE	0x00000080
#define VM_HUGETLB	0x00400000

#endif

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
#include <linux/capability.h>
#include <linux/prctl.h>
#include "loader.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

/*
 * The stub, per architecture.  On entry one register points at the call
 * list (entries of seven words: number and six arguments); a number of
 * ~0 ends it and is followed by the stack pointer and the entry.  Only
 * relative branches: it runs from wherever it was copied.
 */
#if defined(__x86_64__)
/* The list in r12, which the syscall instruction leaves alone. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	movq (%r12), %rax\n"
	"	cmpq $-1, %rax\n"
	"	je 2f\n"
	"	movq 8(%r12), %rdi\n"
	"	movq 16(%r12), %rsi\n"
	"	movq 24(%r12), %rdx\n"
	"	movq 32(%r12), %r10\n"
	"	movq 40(%r12), %r8\n"
	"	movq 48(%r12), %r9\n"
	"	syscall\n"
	"	addq $56, %r12\n"
	"	jmp 1b\n"
	"2:	movq 8(%r12), %rsp\n"
	"	movq 16(%r12), %rax\n"
	"	movq %rax, -8(%rsp)\n"
	"	xorl %eax, %eax\n	xorl %ebx, %ebx\n"
	"	xorl %ecx, %ecx\n	xorl %edx, %edx\n"
	"	xorl %esi, %esi\n	xorl %edi, %edi\n"
	"	xorl %ebp, %ebp\n	xorl %r8d, %r8d\n"
	"	xorl %r9d, %r9d\n	xorl %r10d, %r10d\n"
	"	xorl %r11d, %r11d\n	xorl %r12d, %r12d\n"
	"	xorl %r13d, %r13d\n	xorl %r14d, %r14d\n"
	"	xorl %r15d, %r15d\n"
	"	jmp *-8(%rsp)\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#elif defined(__i386__)
/*
 * Seven registers carry a call: the list is walked with pop, the stack
 * pointer standing in for the eighth.  No handler is left to push onto
 * it (the caller reset them), and int $0x80 works on every kernel.
 */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	popl %eax\n"
	"	cmpl $-1, %eax\n"
	"	je 2f\n"
	"	popl %ebx\n	popl %ecx\n	popl %edx\n"
	"	popl %esi\n	popl %edi\n	popl %ebp\n"
	"	int $0x80\n"
	"	jmp 1b\n"
	"2:	popl %eax\n"
	"	popl %ecx\n"
	"	movl %eax, %esp\n"
	"	movl %ecx, -4(%esp)\n"
	"	xorl %eax, %eax\n	xorl %ebx, %ebx\n"
	"	xorl %ecx, %ecx\n	xorl %edx, %edx\n"
	"	xorl %esi, %esi\n	xorl %edi, %edi\n"
	"	xorl %ebp, %ebp\n"
	"	jmp *-4(%esp)\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#elif defined(__aarch64__)
/* The list in x9; x16, the intra-procedure scratch, keeps the entry. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	ldr x8, [x9], #8\n"
	"	cmn x8, #1\n"
	"	b.eq 2f\n"
	"	ldp x0, x1, [x9], #16\n"
	"	ldp x2, x3, [x9], #16\n"
	"	ldp x4, x5, [x9], #16\n"
	"	svc #0\n"
	"	b 1b\n"
	"2:	ldp x10, x16, [x9]\n"
	"	mov sp, x10\n"
	"	mov x0, #0\n	mov x1, #0\n	mov x2, #0\n"
	"	mov x3, #0\n	mov x4, #0\n	mov x5, #0\n"
	"	mov x6, #0\n	mov x7, #0\n	mov x8, #0\n"
	"	mov x9, #0\n	mov x10, #0\n	mov x11, #0\n"
	"	mov x12, #0\n	mov x13, #0\n	mov x14, #0\n"
	"	mov x15, #0\n	mov x17, #0\n	mov x18, #0\n"
	"	mov x19, #0\n	mov x20, #0\n	mov x21, #0\n"
	"	mov x22, #0\n	mov x23, #0\n	mov x24, #0\n"
	"	mov x25, #0\n	mov x26, #0\n	mov x27, #0\n"
	"	mov x28, #0\n	mov x29, #0\n	mov x30, #0\n"
	"	br x16\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#elif defined(__arm__) && defined(__ARM_EABI__)
/*
 * ARM state (entered with bx at an even address), the list in r8.
 * ldr to pc interworks: a Thumb entry (odd address) stays Thumb.
 */
#ifdef __thumb__
#define NCB_ARM_MODE ".thumb\n"
#else
#define NCB_ARM_MODE ".arm\n"
#endif
__asm__(".pushsection .text\n"
	".arm\n.align 2\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	ldr r7, [r8], #4\n"
	"	cmn r7, #1\n"
	"	beq 2f\n"
	"	ldmia r8!, {r0-r5}\n"
	"	svc #0\n"
	"	b 1b\n"
	"2:	ldmia r8, {r9, r10}\n"
	"	mov sp, r9\n"
	"	str r10, [sp, #-4]\n"
	"	mov r0, #0\n	mov r1, #0\n	mov r2, #0\n"
	"	mov r3, #0\n	mov r4, #0\n	mov r5, #0\n"
	"	mov r6, #0\n	mov r7, #0\n	mov r8, #0\n"
	"	mov r9, #0\n	mov r10, #0\n	mov r11, #0\n"
	"	mov r12, #0\n	mov lr, #0\n"
	"	ldr pc, [sp, #-4]\n"
	"ncb__stub_end:\n"
	NCB_ARM_MODE
	".popsection\n");
#define NCB_STUB 1
#elif defined(__riscv) && __riscv_xlen == 64
/* The list in t0; t1 keeps the entry. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	ld a7, 0(t0)\n"
	"	li t1, -1\n"
	"	beq a7, t1, 2f\n"
	"	ld a0, 8(t0)\n	ld a1, 16(t0)\n	ld a2, 24(t0)\n"
	"	ld a3, 32(t0)\n	ld a4, 40(t0)\n	ld a5, 48(t0)\n"
	"	ecall\n"
	"	addi t0, t0, 56\n"
	"	j 1b\n"
	"2:	ld sp, 8(t0)\n"
	"	ld t1, 16(t0)\n"
	"	li ra, 0\n	li gp, 0\n	li tp, 0\n"
	"	li t0, 0\n	li t2, 0\n	li s0, 0\n"
	"	li s1, 0\n	li a0, 0\n	li a1, 0\n"
	"	li a2, 0\n	li a3, 0\n	li a4, 0\n"
	"	li a5, 0\n	li a6, 0\n	li a7, 0\n"
	"	li s2, 0\n	li s3, 0\n	li s4, 0\n"
	"	li s5, 0\n	li s6, 0\n	li s7, 0\n"
	"	li s8, 0\n	li s9, 0\n	li s10, 0\n"
	"	li s11, 0\n	li t3, 0\n	li t4, 0\n"
	"	li t5, 0\n	li t6, 0\n"
	"	jr t1\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#elif defined(__powerpc64__) && _CALL_ELF == 2
/*
 * The list in r14, which sc preserves.  ELFv2: r12 holds the entry, from
 * which the global entry point finds its TOC (the kernel sets it so).
 */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	ld 0, 0(14)\n"
	"	cmpdi 0, -1\n"
	"	beq 2f\n"
	"	ld 3, 8(14)\n	ld 4, 16(14)\n	ld 5, 24(14)\n"
	"	ld 6, 32(14)\n	ld 7, 40(14)\n	ld 8, 48(14)\n"
	"	sc\n"
	"	addi 14, 14, 56\n"
	"	b 1b\n"
	"2:	ld 1, 8(14)\n"
	"	ld 12, 16(14)\n"
	"	mtctr 12\n"
	"	li 0, 0\n	mtlr 0\n"
	"	li 2, 0\n	li 3, 0\n	li 4, 0\n"
	"	li 5, 0\n	li 6, 0\n	li 7, 0\n"
	"	li 8, 0\n	li 9, 0\n	li 10, 0\n"
	"	li 11, 0\n	li 13, 0\n	li 14, 0\n"
	"	li 15, 0\n	li 16, 0\n	li 17, 0\n"
	"	li 18, 0\n	li 19, 0\n	li 20, 0\n"
	"	li 21, 0\n	li 22, 0\n	li 23, 0\n"
	"	li 24, 0\n	li 25, 0\n	li 26, 0\n"
	"	li 27, 0\n	li 28, 0\n	li 29, 0\n"
	"	li 30, 0\n	li 31, 0\n"
	"	bctr\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#elif defined(__s390x__)
/* The list in r11; svc 0 takes the number from r1, which keeps the entry. */
__asm__(".pushsection .text\n"
	".globl ncb__stub_start\n.hidden ncb__stub_start\n"
	".globl ncb__stub_end\n.hidden ncb__stub_end\n"
	"ncb__stub_start:\n"
	"1:	lg %r1, 0(%r11)\n"
	"	cghi %r1, -1\n"
	"	je 2f\n"
	"	lg %r2, 8(%r11)\n	lg %r3, 16(%r11)\n"
	"	lg %r4, 24(%r11)\n	lg %r5, 32(%r11)\n"
	"	lg %r6, 40(%r11)\n	lg %r7, 48(%r11)\n"
	"	svc 0\n"
	"	aghi %r11, 56\n"
	"	j 1b\n"
	"2:	lg %r15, 8(%r11)\n"
	"	lg %r1, 16(%r11)\n"
	"	lghi %r0, 0\n	lghi %r2, 0\n	lghi %r3, 0\n"
	"	lghi %r4, 0\n	lghi %r5, 0\n	lghi %r6, 0\n"
	"	lghi %r7, 0\n	lghi %r8, 0\n	lghi %r9, 0\n"
	"	lghi %r10, 0\n	lghi %r11, 0\n	lghi %r12, 0\n"
	"	lghi %r13, 0\n	lghi %r14, 0\n"
	"	br %r1\n"
	"ncb__stub_end:\n"
	".popsection\n");
#define NCB_STUB 1
#endif

#ifdef NCB_STUB
extern const char ncb__stub_start[], ncb__stub_end[];
#endif

/* The stub's code, and the calls queued after the unmapping. */
#define CODE_ROOM 512
#define FIXED_CALLS 8

/* One system call for the stub to make. */
struct call {
	uintptr_t nr;
	uintptr_t a[6];
};

/* A new anonymous mapping: the stub's code, then its two maps and list. */
struct handover {
	char *base;
	size_t size;
	/* PR_SET_MM_MAP's struct: [0] with the exe link, [1] without */
	unsigned char (*map)[NCB__MM_MAP_MAX];
	struct call *calls;
	unsigned int n, max;
	int exe_fd;
};

static void add(struct handover *h, long nr, uintptr_t a0, uintptr_t a1,
		uintptr_t a2, uintptr_t a3, uintptr_t a4)
{
	struct call *c = &h->calls[h->n++];

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
 * [sigpage], uprobes' area.  execve gives the program its own; here the
 * program's auxiliary vector already points at these.
 */
static int kernel_special(const char *path)
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
	struct call *last = h->n ? &h->calls[h->n - 1] : NULL;

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
		if (kernel_special(mp.path) || (!anon && !mp.path[0]) ||
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
#ifdef NCB_STUB
	if (ncb__stub_end - ncb__stub_start > CODE_ROOM)
		return -ENOEXEC;
#endif
	/* Far past vm.max_map_count's default, within a 32-bit size_t. */
	if (n > 1u << 24)
		return -ENOMEM;
	h->max = n + FIXED_CALLS;
	h->size = ncb__page_align(CODE_ROOM + 2 * sizeof(*h->map) +
				  (h->max + 1) * sizeof(struct call));
	h->base = mmap(NULL, h->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->base == MAP_FAILED) {
		h->base = NULL;
		return -errno;
	}
#ifdef NCB_STUB
	memcpy(h->base, ncb__stub_start, ncb__stub_end - ncb__stub_start);
#endif
	h->map = (unsigned char (*)[NCB__MM_MAP_MAX])(void *)(h->base +
							      CODE_ROOM);
	h->calls = (struct call *)(void *)(h->map + 2);
	h->n = 0;
	return 0;
}

/*
 * One snapshot of the maps, read before the stub's mapping exists: each
 * line is unmapped exactly as it was then, so the new mapping, even
 * merged with a neighbour, is never among them.
 */
static int handover_build(struct handover *h, struct ncb__range *keep,
			  unsigned int nkeep, const struct ncb__identity *id,
			  uintptr_t sp, uintptr_t entry)
{
	struct ncb_maps *m;
	struct call *end;
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
	queue_identity(h, id);
	end = &h->calls[h->n];
	end->nr = ~(uintptr_t)0;
	end->a[0] = sp;
	end->a[1] = entry;
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

/* The stub's jump: the list in its register, as the code above expects. */
static void __attribute__((noreturn)) jump(const char *code,
					   const struct call *list)
{
#if defined(__x86_64__)
	register const struct call *r __asm__("r12") = list;

	__asm__ volatile("jmp *%1" : : "r"(r), "r"(code) : "memory");
#elif defined(__i386__)
	__asm__ volatile("movl %0, %%esp\n\tjmp *%1"
			 : : "r"(list), "r"(code) : "memory");
#elif defined(__aarch64__)
	register const struct call *r __asm__("x9") = list;

	__asm__ volatile("br %1" : : "r"(r), "r"(code) : "memory");
#elif defined(__arm__)
	register const struct call *r __asm__("r8") = list;

	__asm__ volatile("bx %1" : : "r"(r), "r"(code) : "memory");
#elif defined(__riscv)
	register const struct call *r __asm__("t0") = list;

	__asm__ volatile("jr %1" : : "r"(r), "r"(code) : "memory");
#elif defined(__powerpc64__)
	register const struct call *r __asm__("r14") = list;

	__asm__ volatile("mtctr %1\n\tbctr" : : "r"(r), "r"(code)
			 : "memory", "ctr");
#elif defined(__s390x__)
	register const struct call *r __asm__("r11") = list;

	__asm__ volatile("br %1" : : "r"(r), "r"(code) : "memory");
#else
	(void)code;
	(void)list;
#endif
	__builtin_unreachable();
}

int ncb__handover_prepare(struct ncb__handover *ho)
{
	struct handover *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -ENOMEM;
	h->exe_fd = ho->exe_fd;
	err = handover_build(h, ho->keep, ho->nkeep, &ho->id, ho->sp,
			     ho->entry);
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

	jump(h->base, h->calls);
}

/*
 * Whether PR_SET_MM_MAP may set the exe link: checkpoint_restore_ns_capable
 * in the caller's own user namespace, the capability sets capget reports.
 */
int ncb__exe_settable(void)
{
	struct __user_cap_header_struct hd = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	unsigned int size = 0;

	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0))
		return -errno;
	if (size != ncb__mm_map_size())
		return -EINVAL;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &hd, d))
		return -errno;
	if ((d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) ||
	    (d[CAP_CHECKPOINT_RESTORE / 32].effective &
	     (1u << (CAP_CHECKPOINT_RESTORE % 32))))
		return 0;
	return -EPERM;
}

/* SPDX-License-Identifier: MIT */
/* The loader on riscv64: what arch.h asks of a machine. */
#ifndef NCB_LOADER_ARCH_RISCV64_H
#define NCB_LOADER_ARCH_RISCV64_H

#define NCB_ARCH_EM EM_RISCV

/*
 * ELF_ET_DYN_BASE as a process of this ABI sees it (asm/elf.h):
 * DEFAULT_MAP_WINDOW / 3 * 2 with Sv39's 38-bit window.
 */
#define NCB_ARCH_DYN_BASE(kernel_64) (((1ULL << 38) / 3) * 2)

#if __riscv_xlen == 64
/*
 * The stack (arch/riscv/include/asm/processor.h, elf.h): STACK_TOP is
 * DEFAULT_MAP_WINDOW, 38 bits under sv39 and 47 under sv48 and sv57 (own
 * shows which); STACK_RND_MASK 0x3ffff pages; arch_align_stack() up to a
 * page since 6.12 (048e2906d4ca), none before: drawn as the newer.
 */
#define NCB_ARCH_STACK_TOP(k, pg, own) \
	((own) > (1ULL << 38) ? 1ULL << 47 : 1ULL << 38)
#define NCB_ARCH_STACK_RND_MASK(k, pg) 0x3ffffULL
#define NCB_ARCH_STACK_ALIGN_RND(k, pg) (pg)

#define NCB_ARCH_RSEQ_SIG 0xf1401073
#define NCB_ARCH_HANDOVER 1
#endif

#if defined(NCB_ARCH_STUB) && defined(NCB_ARCH_HANDOVER)
/* The list in t0; t1 keeps the entry. */
__asm__(NCB_STUB_BEGIN
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
	NCB_STUB_END);

static inline __attribute__((noreturn)) void
ncb__arch_jump(const char *code, const struct ncb__call *list)
{
	register const struct ncb__call *r __asm__("t0") = list;

	__asm__ volatile("jr %1" : : "r"(r), "r"(code) : "memory");
	__builtin_unreachable();
}
#endif

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Reach: how far each machine's direct branch and its farthest PC-relative
 * address go, from the ISA manuals, and the window in which every byte of
 * a block is within that reach of every byte of an anchor, both ways.
 * tests/reach.sh checks each figure against the machine's assembler and
 * linker: the farthest target links, one step farther does not.
 */
#include <elf.h>
#include "internal.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef EM_RISCV
#define EM_RISCV 243
#endif

#define GiB(n) ((int64_t)(n) << 30)
#define MiB(n) ((int64_t)(n) << 20)

struct reach_row {
	int machine;
	int kind;
	struct ncb_reach r;
};

#define ROW(m, k, lo, hi, pg, st, next, insn) \
	{ .machine = (m), .kind = (k), \
	  .r = { .size = sizeof(struct ncb_reach), .min = (lo), .max = (hi), \
		 .page = (pg), .step = (st), .from_next = (next), \
		 .name = (insn) } }

static const struct reach_row rows[] = {
	/*
	 * Intel SDM vol. 2A, CALL and JMP: rel32 is added to the address
	 * of the next instruction; RIP-relative addressing (2.2.1.6) adds a
	 * signed disp32 to it likewise.
	 */
	ROW(EM_X86_64, NCB_REACH_BRANCH, -GiB(2), GiB(2) - 1, 0, 1, 1,
	  "call/jmp rel32"),
	ROW(EM_X86_64, NCB_REACH_PCREL, -GiB(2), GiB(2) - 1, 0, 1, 1,
	  "rip+disp32"),
	/*
	 * The same rel32 in 32-bit mode: EIP is tempEIP AND FFFFFFFFH
	 * (SDM, JMP's operation), so it wraps and reaches every address.
	 * There is no EIP-relative data addressing.
	 */
	ROW(EM_386, NCB_REACH_BRANCH, -GiB(4) + 1, GiB(4) - 1, 0, 1, 1,
	  "call/jmp rel32"),
	/*
	 * Arm ARM (DDI 0487), B and BL: SignExtend(imm26:'00') from the
	 * instruction's address, "+/-128MB".  ADRP: SignExtend(immhi:immlo:
	 * Zeros(12)) added to the instruction's address with its low 12
	 * bits cleared, "+/-4GB": the target's page, not the target, counts.
	 */
	ROW(EM_AARCH64, NCB_REACH_BRANCH, -MiB(128), MiB(128) - 4, 0, 4, 0,
	  "b/bl"),
	ROW(EM_AARCH64, NCB_REACH_PCREL, -GiB(4), GiB(4) - 4096, 4096, 1, 0,
	  "adrp"),
	/*
	 * Arm ARM (DDI 0406C) A8.8.18 B, A8.8.25 BL: SignExtend(imm24:'00')
	 * from PC, which reads as the instruction's address plus 8 in A32
	 * (Thumb's B.W and BL reach +/-16 MiB); here from the address.  A
	 * PC-relative address beyond LDR (literal)'s 4 KiB is a 32-bit
	 * offset, MOVW and MOVT (A8.8.102, A8.8.106) added to PC, which
	 * wraps as i386's does.
	 */
	ROW(EM_ARM, NCB_REACH_BRANCH, -MiB(32) + 8, MiB(32) - 4 + 8, 0, 4, 0,
	  "b/bl"),
	ROW(EM_ARM, NCB_REACH_PCREL, -GiB(4) + 1, GiB(4) - 1, 0, 1, 0,
	  "movw/movt+add pc"),
	/*
	 * Power ISA 3.0B book I 2.4, b and bl: LI || 0b00 sign-extended,
	 * from the instruction's address.  PC-relative data addressing came
	 * with 3.1's prefixed instructions (POWER10), which the Debian
	 * baseline (POWER8) has not: none here.
	 */
	ROW(EM_PPC64, NCB_REACH_BRANCH, -MiB(32), MiB(32) - 4, 0, 4, 0,
	  "b/bl"),
	/*
	 * RISC-V unprivileged ISA (20191213) 2.5: JAL's offset is in
	 * multiples of 2 bytes, "a range of +/-1 MiB"; AUIPC's 20 bits
	 * shifted 12, sign-extended, plus the 12-bit signed immediate of the
	 * ADDI, load or JALR that follows: [-2^31 - 2^11, 2^31 - 2^11 - 1].
	 */
	ROW(EM_RISCV, NCB_REACH_BRANCH, -MiB(1), MiB(1) - 2, 0, 2, 0, "jal"),
	ROW(EM_RISCV, NCB_REACH_PCREL, -GiB(2) - 2048, GiB(2) - 2048 - 1, 0, 1,
	  0, "auipc+addi/jalr"),
	/*
	 * z/Architecture Principles of Operation (SA22-7832), BRANCH
	 * RELATIVE AND SAVE LONG and LOAD ADDRESS RELATIVE LONG: a signed
	 * 32-bit count of halfwords from the instruction's address.
	 */
	ROW(EM_S390, NCB_REACH_BRANCH, -GiB(4), GiB(4) - 2, 0, 2, 0,
	  "brasl/brcl"),
	ROW(EM_S390, NCB_REACH_PCREL, -GiB(4), GiB(4) - 2, 0, 2, 0, "larl"),
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The ELF machine this library was built for; 0 if not in the table. */
static int this_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__i386__)
	return EM_386;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__arm__)
	return EM_ARM;
#elif defined(__powerpc64__)
	return EM_PPC64;
#elif defined(__riscv) && __riscv_xlen == 64
	return EM_RISCV;
#elif defined(__s390x__)
	return EM_S390;
#else
	return 0;
#endif
}

/* The row, or -ENOTSUP for a machine not known, -ENOENT for no such kind. */
static int find_row(int machine, int kind, const struct reach_row **row)
{
	size_t i;
	int known = 0;

	if (kind < NCB_REACH_BRANCH || kind > NCB_REACH_PCREL || machine < 0)
		return -EINVAL;
	if (!machine)
		machine = this_machine();
	for (i = 0; i < NROWS; i++) {
		if (rows[i].machine != machine)
			continue;
		known = 1;
		if (rows[i].kind == kind) {
			*row = &rows[i];
			return 0;
		}
	}
	return known ? -ENOENT : -ENOTSUP;
}

int ncb_reach(int machine, int kind, struct ncb_reach *reach)
{
	const struct reach_row *row;
	int err;

	if (ncb__out_size(reach, NCB__END(ncb_reach, name)))
		return -EINVAL;
	err = find_row(machine, kind, &row);
	if (err)
		return err;
	ncb__out(reach, &row->r, sizeof(row->r));
	return 0;
}

/* x + d: 0 and *out set, -1 if below 0, 1 if above UINT64_MAX. */
static int shift(uint64_t x, int64_t d, uint64_t *out)
{
	uint64_t m = d < 0 ? (uint64_t)-(d + 1) + 1 : (uint64_t)d;

	if (d < 0 && x < m)
		return -1;
	if (d >= 0 && x > UINT64_MAX - m)
		return 1;
	*out = d < 0 ? x - m : x + m;
	return 0;
}

/* The lowest first byte a bound allows (t >= x + d); 1 if none. */
static int lower(uint64_t x, int64_t d, uint64_t *lo)
{
	uint64_t v = 0;
	int s = shift(x, d, &v);

	if (s > 0)
		return 1;
	if (v > *lo)
		*lo = v;
	return 0;
}

/* The highest unit a bound allows (t <= x + d); 1 if none. */
static int upper(uint64_t x, int64_t d, uint64_t *hi)
{
	uint64_t v = UINT64_MAX;
	int s = shift(x, d, &v);

	if (s < 0)
		return 1;
	if (v < *hi)
		*hi = v;
	return 0;
}

/*
 * Instructions and targets sit at multiples of step; an instruction's
 * base is its own address, or where from_next says the next one's (for
 * x86, whose step is 1: one past its last byte).  An anchor's units run
 * from a's to the last byte's; its bases one further where from_next.
 * Each of the four bounds is one of: an anchor instruction's reach down
 * to the block's first unit and up to its last, and a block instruction's
 * down to the anchor's first and up to its last, by pages where page is
 * set.  1 if no byte can be within reach.
 */
static int bounds(const struct ncb_reach *r, uint64_t a, uint64_t b,
		  uint64_t *lo, uint64_t *last)
{
	uint64_t st = r->step, pg = r->page ? r->page : 1;
	uint64_t t0 = a & ~(st - 1), t1 = (b - 1) & ~(st - 1);
	uint64_t b0 = t0 + (uint64_t)r->from_next;
	uint64_t b1 = t1 + (uint64_t)r->from_next;
	int64_t fn = r->from_next, up = (int64_t)pg - 1;

	*lo = 0;
	*last = UINT64_MAX;
	/* The anchor's instructions reach the block... */
	if (lower(b1 & ~(pg - 1), r->min, lo) ||
	    upper(b0 & ~(pg - 1), r->max + up, last))
		return 1;
	/* ...and the block's the anchor. */
	return lower(t1 & ~(pg - 1), -r->max - fn, lo) ||
	       upper(t0 & ~(pg - 1), -r->min + up - fn, last);
}

int ncb__reach_window(int machine, int kind, uint64_t a, uint64_t b,
		      uint64_t *lo, uint64_t *hi)
{
	const struct reach_row *row;
	uint64_t last, st;
	int err;

	err = find_row(machine, kind, &row);
	if (err)
		return err;
	if (b <= a)
		b = a + 1;
	st = row->r.step;
	if (bounds(&row->r, a, b, lo, &last)) {
		*lo = *hi = a;
		return 0;
	}
	/* The last unit's bytes are in the block: its end is one step on. */
	last &= ~(st - 1);
	*hi = last > UINT64_MAX - st ? UINT64_MAX : last + st;
	*lo = *lo > UINT64_MAX - (st - 1) ? UINT64_MAX
					  : (*lo + st - 1) & ~(st - 1);
	if (*lo > *hi)
		*lo = *hi;
	return 0;
}

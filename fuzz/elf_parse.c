/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: any bytes through the ELF classifier and checker (for
 * this machine, and for any machine by its own rules), and what passes
 * through the planner's arithmetic: every segment placed, with its bias,
 * inside the span, the span placed in an address-space model.  Nothing may
 * crash, read out of bounds or overflow (ASan, UBSan).
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void plan(const struct ncb_elf *e)
{
	struct ncb_as_opts o = { .size = sizeof(o) };
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf_seg s = NCB_INIT(ncb_elf_seg);
	struct ncb_as *as;
	uint64_t at, bias;
	unsigned int i;

	if (ncb_elf_info(e, &in) || in.hi <= in.lo || in.lo & 4095)
		abort();
	if (ncb_as_new(&as, &o))
		abort();
	if (ncb_as_mmap(as, in.type == ET_EXEC ? in.lo : 0, in.hi - in.lo,
			PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			(in.type == ET_EXEC ? MAP_FIXED_NOREPLACE : 0), 0, 0,
			&at)) {
		ncb_as_free(as);
		return;
	}
	bias = at - in.lo;
	for (i = 0; !ncb_elf_segment(e, i, &s); i++) {
		/* Each segment lies inside the span the checker computed. */
		if (s.vaddr < in.lo || s.vaddr + s.memsz > in.hi ||
		    s.filesz > s.memsz)
			abort();
		/* An empty segment maps nothing. */
		if (s.memsz && ncb_as_mprotect(as, (s.vaddr + bias) &
					       ~4095ULL, s.memsz, s.prot))
			abort();
	}
	if (i != in.nsegs || (in.interp && !*in.interp))
		abort();
	ncb_as_free(as);
}

/* Native only, then any machine by its own rules: each the same way. */
static void parse(const uint8_t *data, size_t size, int flags, int kind)
{
	struct ncb_elf_arch a = { .size = sizeof(a) };
	struct ncb_elf *e;
	char why[256];

	if (ncb_elf_parse_flags(&e, data, size, flags, why, sizeof(why))) {
		/* A rejection always says why. */
		if (!why[0])
			abort();
		return;
	}
	/* Only what the classifier calls a program passes the checks. */
	if (kind != NCB_ELF_PROGRAM || ncb_elf_arch(e, &a) ||
	    (!flags && !a.native) || a.page_size < 4096 ||
	    a.page_fit < a.page_size)
		abort();
	plan(e);
	(void)ncb_elf_notes(e);
	ncb_elf_close(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int kind = ncb_elf_kind_image(data, size);

	if (kind < NCB_ELF_NOT_ELF || kind > NCB_ELF_OTHER)
		abort();
	parse(data, size, 0, kind);
	parse(data, size, NCB_ELF_ANY_ARCH, kind);
	return 0;
}

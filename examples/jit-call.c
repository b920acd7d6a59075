/* SPDX-License-Identifier: MIT */
/*
 * jit-call: generated code that calls the runtime with the machine's
 * direct call (x86-64's call rel32, aarch64's BL), so it must lie within
 * that call's reach of the runtime, both ways.  The reservation is asked
 * for just that (ncb_resv_new with .reach = NCB_REACH_BRANCH: the figures
 * of ncb_reach, this machine's), then the code is written, made
 * executable and run: it calls runtime_add(40, 2) and returns the sum.
 *
 *   cc jit-call.c $(pkg-config --cflags --libs noclobber) -o jit-call
 */
#include <noclobber.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define CODE (1UL << 20)

/* The runtime the generated code calls. */
__attribute__((noinline)) static int runtime_add(int a, int b)
{
	return a + b;
}

static void put32(unsigned char **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

/* call runtime_add(40, 2) and return what it returns; 0: no emitter. */
static size_t emit(unsigned char *code, uint64_t fn)
{
	unsigned char *p = code;
#if defined(__x86_64__)
	/* sub rsp, 8; mov edi, 40; mov esi, 2 */
	memcpy(p, "\x48\x83\xec\x08\xbf\x28\x00\x00\x00\xbe\x02\x00\x00\x00",
	       14);
	p += 14;
	/* call rel32: counted from the next instruction */
	*p++ = 0xe8;
	put32(&p, (uint32_t)(int32_t)(int64_t)(fn - (uintptr_t)(p + 4)));
	/* add rsp, 8; ret */
	memcpy(p, "\x48\x83\xc4\x08\xc3", 5);
	p += 5;
#elif defined(__aarch64__)
	put32(&p, 0xa9bf7bfd);		/* stp x29, x30, [sp, #-16]! */
	put32(&p, 0x52800500);		/* mov w0, #40 */
	put32(&p, 0x52800041);		/* mov w1, #2 */
	/* bl: imm26 words from this instruction */
	put32(&p, 0x94000000 |
	      ((uint32_t)((int64_t)(fn - (uintptr_t)p) >> 2) & 0x3ffffff));
	put32(&p, 0xa8c17bfd);		/* ldp x29, x30, [sp], #16 */
	put32(&p, 0xd65f03c0);		/* ret */
#else
	(void)fn;
#endif
	return (size_t)(p - code);
}

int main(void)
{
	uint64_t fn = (uintptr_t)&runtime_add;
	struct ncb_reach reach = NCB_INIT(ncb_reach);
	/* Every byte of the code within a call's reach of the function. */
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .near_lo = fn,
					  .near_hi = fn + 64,
					  .reach = NCB_REACH_BRANCH,
					  .place = NCB_PLACE_RANDOM);
	struct ncb_resv *r;
	unsigned char *code;
	int (*run)(void);
	size_t n;
	int err;

	err = ncb_reach(0, NCB_REACH_BRANCH, &reach);
	if (!err)
		err = ncb_resv_new(&r, NULL, CODE, &o);
	if (err) {
		fprintf(stderr, "jit-call: %s\n", strerror(-err));
		return 1;
	}
	code = ncb_resv_addr(r);
	printf("%s reaches [%lld, %+lld]; runtime_add at %#llx, code at "
	       "%p, %+lld KiB away\n", reach.name, (long long)reach.min,
	       (long long)reach.max, (unsigned long long)fn, (void *)code,
	       (long long)((int64_t)((uintptr_t)code - fn) / 1024));
	err = ncb_resv_commit(r, code, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (err) {
		fprintf(stderr, "jit-call: commit: %s\n", strerror(-err));
		return 1;
	}
	n = emit(code, fn);
	if (!n) {
		printf("no code generator for this machine\n");
		return ncb_resv_release(r) != 0;
	}
	__builtin___clear_cache((char *)code, (char *)code + n);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit-call: mprotect");
		return 1;
	}
	run = (int (*)(void))(uintptr_t)code;
	printf("generated code: runtime_add(40, 2) = %d\n", run());
	return ncb_resv_release(r) != 0;
}

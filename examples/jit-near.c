/* SPDX-License-Identifier: MIT */
/*
 * jit-near: a JIT's code buffer within rel32 reach (+-2 GiB) of the code
 * that calls into it, so that generated code can call the runtime with a
 * 32-bit displacement.  Ask where such a buffer fits (ncb_find_near: the
 * window, its free space, or why there is no room), reserve in that
 * window, commit writable, emit, then make it executable: the range is
 * ours throughout.
 *
 *   cc jit-near.c $(pkg-config --cflags --libs noclobber) -o jit-near
 */
#include <noclobber.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define REACH (1ULL << 31)
#define CODE (16UL << 20)

int main(void)
{
	uintptr_t here = (uintptr_t)&main;
	struct ncb_near_opts no = NCB_INIT(ncb_near_opts,
					   .place = NCB_PLACE_RANDOM);
	struct ncb_near near = NCB_INIT(ncb_near);
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts,
					  .place = NCB_PLACE_RANDOM);
	struct ncb_resv *r;
	unsigned char *code;
	int64_t dist;
	int err;

	/* Every byte of the buffer within reach of this function. */
	err = ncb_find_near(0, here, here, REACH, CODE, &no, &near);
	if (err) {
		fprintf(stderr, "jit-near: no room near %#jx: %s (why %d, "
			"largest gap %ju KiB)\n", (uintmax_t)here,
			strerror(-err), near.why, near.nlisted ?
			(uintmax_t)(near.gaps[0].end - near.gaps[0].start) >> 10
			: 0);
		return 1;
	}
	printf("window [%#jx, %#jx): %ju MiB free in %ju gaps\n",
	       (uintmax_t)near.lo, (uintmax_t)near.hi,
	       (uintmax_t)near.free >> 20, (uintmax_t)near.ngaps);
	/* Taken in that window: another thread may have mapped there. */
	o.lo = near.lo;
	o.hi = near.hi;
	err = ncb_resv_new(&r, NULL, CODE, &o);
	if (err) {
		fprintf(stderr, "jit-near: reserve: %s\n", strerror(-err));
		return 1;
	}
	code = ncb_resv_addr(r);
	dist = (int64_t)((uintptr_t)code - here);
	printf("runtime at %#jx, code buffer at %p, %+lld MiB away\n",
	       (uintmax_t)here, (void *)code, (long long)(dist >> 20));
	err = ncb_resv_commit(r, code, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (err) {
		fprintf(stderr, "jit-near: commit: %s\n", strerror(-err));
		return 1;
	}
#if defined(__x86_64__)
	/* mov eax, 42; ret */
	memcpy(code, "\xb8\x2a\x00\x00\x00\xc3", 6);
#elif defined(__aarch64__)
	/* mov w0, #42; ret */
	memcpy(code, "\x40\x05\x80\x52\xc0\x03\x5f\xd6", 8);
	__builtin___clear_cache((char *)code, (char *)code + 8);
#endif
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit-near: mprotect");
		return 1;
	}
#if defined(__x86_64__) || defined(__aarch64__)
	printf("generated code returns %d\n", ((int (*)(void))code)());
#endif
	ncb_resv_release(r);
	/* Its first and last bytes less than REACH from this function. */
	return dist > -(int64_t)REACH && dist + (int64_t)CODE <= (int64_t)REACH
	       ? 0 : 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * guest-low: an emulator's guest address space below 4 GiB, so that a
 * 32-bit guest address plus one base gives the host address.  The whole
 * space is reserved at once; guest "mmap" then commits inside it, and
 * guest "munmap" decommits, never touching anything outside.
 *
 *   cc guest-low.c $(pkg-config --cflags --libs noclobber) -o guest-low
 */
#include <noclobber.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define GUEST (256UL << 20)

int main(void)
{
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .lo = 0x10000,
					  .hi = 1ULL << 32,
					  .place = NCB_PLACE_LOWEST);
	struct ncb_resv *r;
	char *base;
	uint32_t guest_addr = 0x100000;
	int err;

	err = ncb_resv_new(&r, NULL, GUEST, &o);
	if (err) {
		fprintf(stderr, "guest-low: reserve: %s\n", strerror(-err));
		return 1;
	}
	base = ncb_resv_addr(r);
	printf("guest space [%p, %p), below 4 GiB\n", (void *)base,
	       (void *)(base + GUEST));
	/* The guest maps 1 MiB of RAM at its address 0x100000. */
	err = ncb_resv_commit(r, base + guest_addr, 1 << 20,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (err) {
		fprintf(stderr, "guest-low: commit: %s\n", strerror(-err));
		return 1;
	}
	strcpy(base + guest_addr, "guest data");
	/* Mapping over it again, as a buggy guest might, is refused. */
	err = ncb_resv_commit(r, base + guest_addr + 4096, 4096, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("guest remap over live RAM: %s\n", strerror(-err));
	printf("guest reads \"%s\" at %#x\n", base + guest_addr, guest_addr);
	ncb_resv_decommit(r, base + guest_addr, 1 << 20);
	ncb_resv_release(r);
	return (uintptr_t)base + GUEST <= (1ULL << 32) ? 0 : 1;
}

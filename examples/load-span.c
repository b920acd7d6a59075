/* SPDX-License-Identifier: MIT */
/*
 * load-span: how a loader places an ELF image.  The whole span of its
 * PT_LOAD segments is reserved first, no-clobber (at the image's own
 * address for ET_EXEC, anywhere for ET_DYN), then every segment is mapped
 * inside that reservation, so no segment can land on anything else; the
 * kernel's loader has worked this way since CVE-2017-1000253.  This maps
 * the image and shows where each segment went; it does not run it.
 *
 *   cc load-span.c $(pkg-config --cflags --libs noclobber) -o load-span
 *   ./load-span /usr/bin/true
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <noclobber.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096UL
#define DOWN(x) ((x) & ~(PAGE - 1))
#define UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))

static int prot_of(const ElfW(Phdr) *ph)
{
	return (ph->p_flags & PF_R ? PROT_READ : 0) |
	       (ph->p_flags & PF_W ? PROT_WRITE : 0) |
	       (ph->p_flags & PF_X ? PROT_EXEC : 0);
}

/* The segment's file pages, then anonymous pages for the rest of bss. */
static int place(struct ncb_resv *r, uintptr_t bias, const ElfW(Phdr) *ph,
		 int fd)
{
	uintptr_t start = DOWN(bias + ph->p_vaddr);
	uintptr_t file_end = UP(bias + ph->p_vaddr + ph->p_filesz);
	uintptr_t mem_end = UP(bias + ph->p_vaddr + ph->p_memsz);
	int err = 0;

	if (file_end > start)
		err = ncb_resv_commit(r, (void *)start, file_end - start,
				      prot_of(ph) | PROT_WRITE, MAP_PRIVATE, fd,
				      (off_t)DOWN(ph->p_offset));
	if (!err && ph->p_memsz > ph->p_filesz)
		memset((char *)bias + ph->p_vaddr + ph->p_filesz, 0,
		       file_end - (bias + ph->p_vaddr + ph->p_filesz));
	if (!err && mem_end > file_end)
		err = ncb_resv_commit(r, (void *)file_end, mem_end - file_end,
				      prot_of(ph),
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!err && file_end > start)
		err = mprotect((void *)start, file_end - start, prot_of(ph));
	printf("  PT_LOAD %c%c%c [%#lx, %#lx)%s\n",
	       ph->p_flags & PF_R ? 'r' : '-', ph->p_flags & PF_W ? 'w' : '-',
	       ph->p_flags & PF_X ? 'x' : '-', (unsigned long)start,
	       (unsigned long)mem_end, err ? ": failed" : "");
	return err;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/proc/self/exe";
	uintptr_t lo = UINTPTR_MAX, hi = 0, bias;
	ElfW(Phdr) ph[64];
	ElfW(Ehdr) eh;
	struct ncb_resv *r;
	int fd, i, err;

	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum > 64 ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(ph[0]))) {
		fprintf(stderr, "load-span: %s: not an ELF file of this "
			"machine\n", path);
		return 1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (DOWN(ph[i].p_vaddr) < lo)
			lo = DOWN(ph[i].p_vaddr);
		if (UP(ph[i].p_vaddr + ph[i].p_memsz) > hi)
			hi = UP(ph[i].p_vaddr + ph[i].p_memsz);
	}
	if (hi <= lo) {
		fprintf(stderr, "load-span: %s: no PT_LOAD\n", path);
		return 1;
	}
	/* ET_EXEC at its own address; ET_DYN wherever the span fits. */
	err = ncb_resv_new(&r, eh.e_type == ET_EXEC ? (void *)lo : NULL,
			   hi - lo, NULL);
	if (err) {
		fprintf(stderr, "load-span: reserving [%#lx, %#lx): %s\n",
			(unsigned long)lo, (unsigned long)hi, strerror(-err));
		return 1;
	}
	bias = (uintptr_t)ncb_resv_addr(r) - lo;
	printf("%s: span of %lu KiB reserved at %p\n", path,
	       (unsigned long)(hi - lo) >> 10, ncb_resv_addr(r));
	for (i = 0; i < eh.e_phnum && !err; i++)
		if (ph[i].p_type == PT_LOAD)
			err = place(r, bias, &ph[i], fd);
	close(fd);
	ncb_resv_release(r);
	return err ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * mkelf DIR: the generator's images as files, for the shell tests of
 * noclobber check.  DIR/good holds programs and libraries that pass (of
 * this machine and of others), DIR/skip files that are no program or
 * library (one of each kind), DIR/bad programs that fail a check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elfgen.h"

static const char *dir;
static int failed;

static void put(const char *sub, const char *name, const void *buf,
		size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		failed = 1;
		return;
	}
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror(path);
		failed = 1;
	}
	if (fd >= 0)
		close(fd);
}

static struct gen g;

static void put_gen(const char *sub, const char *name)
{
	put(sub, name, g.buf, g.len);
}

/* The valid image, for machine m of class c and byte order d. */
static void other(const char *name, int c, int d, unsigned int m)
{
	gen_base(&g);
	gen_recode(&g, c, d, m);
	put_gen("good", name);
}

static void good(void)
{
	gen_base(&g);
	gen_program_sections(&g);
	put_gen("good", "program");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_DYN;
	gen_eh(&g)->e_entry = 0;
	put_gen("good", "library.so");
	other("aarch64", ELFCLASS64, ELFDATA2LSB, EM_AARCH64);
	other("s390x", ELFCLASS64, ELFDATA2MSB, EM_S390);
	other("ppc32", ELFCLASS32, ELFDATA2MSB, EM_PPC);
	other("i386", ELFCLASS32, ELFDATA2LSB, EM_386);
	/* Laid out for 4 KiB pages: aarch64 kernels with 64 KiB refuse it. */
	gen_base(&g);
	gen_ph(&g, 1)->p_vaddr += 0x1000;
	gen_ph(&g, 1)->p_align = 0x1000;
	gen_recode(&g, ELFCLASS64, ELFDATA2LSB, EM_AARCH64);
	put_gen("good", "aarch64-4k");
}

static void skip(void)
{
	static const char text[] = "#!/bin/sh\necho not ELF\n";

	put("skip", "script", text, sizeof(text) - 1);
	put("skip", "empty", "", 0);
	put("skip", "tiny", "\177E", 2);
	gen_base(&g);
	gen_eh(&g)->e_type = ET_REL;
	put_gen("skip", "object.o");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_CORE;
	put_gen("skip", "core");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_NONE;
	put_gen("skip", "none");
	gen_debug(&g);
	put_gen("skip", "program.debug");
	gen_debug(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2MSB, EM_PPC64);
	put_gen("skip", "ppc64.debug");
}

static void bad(void)
{
	unsigned int k;

	/*
	 * Every broken program but those that are no program (no magic, a
	 * type of another kind, a foreign class, byte order or machine) and
	 * those that break only this machine's address-space rules.
	 */
	for (k = 0; k < GEN_CASES; k++) {
		if (gen_cases[k].err == -EPERM || gen_cases[k].err == -EINVAL ||
		    (k >= 1 && k <= 3) || (k >= 6 && k <= 8))
			continue;
		gen_case(&g, k);
		put_gen("bad", gen_cases[k].name);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkelf DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	good();
	skip();
	bad();
	return failed;
}

/* SPDX-License-Identifier: MIT */
/*
 * The ELF loader's library half: every malformed image of the generator
 * rejected with its own errno and message, loading and unloading leaving
 * the address space as it was, collisions refused with the occupant named
 * (an ET_EXEC over a mapping, the CVE-2017-1000253 shape over the stack),
 * a failure after mapping began undone, pages shared between segments, bss.
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include "ncbtest.h"
#include "elfgen.h"

static char maps_buf[2][1 << 18];

static const char *snapshot(int k)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t len = 0;
	ssize_t n;
	char *p;

	ASSERT_GE(fd, 0);
	while ((n = read(fd, maps_buf[k] + len, sizeof(maps_buf[k]) - 1 -
			 len)) > 0)
		len += (size_t)n;
	close(fd);
	maps_buf[k][len] = '\0';
	/* The stack may grow under the test itself: its end is what counts. */
	p = strstr(maps_buf[k], "[stack]");
	while (p && p > maps_buf[k] && p[-1] != '\n')
		p--;
	for (; p && *p != '-'; p++)
		*p = 'x';
	return maps_buf[k];
}

/* Lines of a maps text overlapping [lo, hi), in place. */
static void keep_range(char *text, uint64_t lo, uint64_t hi)
{
	char *line = text, *eol, *o = text;
	unsigned long long s, e;

	for (; *line; line = eol + 1) {
		eol = strchr(line, '\n');
		if (!eol)
			break;
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s < hi &&
		    e > lo) {
			memmove(o, line, (size_t)(eol - line + 1));
			o += eol - line + 1;
		}
	}
	*o = '\0';
}

/*
 * The whole address space is as before; under valgrind or ASan, whose own
 * memory shares the maps and moves at will, the range the loader used.
 */
static void expect_same_maps(uint64_t lo, uint64_t hi)
{
	snapshot(1);
	if (test_runtime_maps()) {
		keep_range(maps_buf[0], lo, hi);
		keep_range(maps_buf[1], lo, hi);
	}
	if (strcmp(maps_buf[0], maps_buf[1]))
		FAIL("the address space changed:\nbefore:\n%s\nafter:\n%s",
		     maps_buf[0], maps_buf[1]);
}

/* The mapping holding addr in this process: 1, or 0 if none. */
static int mapping_at(uint64_t addr, struct ncb_mapping *m)
{
	struct ncb_maps *maps;
	int ret;

	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	ret = ncb_maps_find(maps, addr, m);
	ncb_maps_close(maps);
	m->path = "";
	return ret;
}

static char tmpdir[64];

static const char *write_image(const struct gen *g, const char *name)
{
	static char path[128];
	int fd;

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/ncb-elf-XXXXXX");
		ASSERT_TRUE(mkdtemp(tmpdir) != NULL);
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, g->buf, g->len), (ssize_t)g->len);
	close(fd);
	return path;
}

/* The images written by this test case go with it. */
static void remove_images(void)
{
	char path[64 + 256 + 2];
	struct dirent *de;
	DIR *d;

	if (!tmpdir[0] || !(d = opendir(tmpdir)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", tmpdir,
				 de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

/* Warm up: the loader's own allocations, before any snapshot. */
static void warm_up(const char *path)
{
	struct ncb_elf *e;

	ASSERT_EQ(ncb_elf_open(&e, path, NULL, 0), 0);
	ncb_elf_close(e);
}

TEST(malformed_images_rejected)
{
	struct ncb_elf *e = NULL;
	struct gen g;
	char why[256];
	unsigned int k;
	int err;

	for (k = 0; k < GEN_CASES; k++) {
		const struct gen_case *c = &gen_cases[k];

		if (c->err == -EPERM && !ncb__probe()->mmap_min_addr)
			continue;
		/* A 32-bit space ends a page short of 4 GiB: nothing lies
		 * beyond it that does not wrap. */
		if (c->err == -EINVAL && UINTPTR_MAX == 0xffffffffu)
			continue;
		gen_case(&g, k);
		err = ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why));
		if (err != c->err || !strstr(why, c->why))
			FAIL("%s: %s (\"%s\"), wanted %s (\"%s\")", c->name,
			     errname(-err), why, errname(-c->err), c->why);
		/* The same from a file, through the file reader. */
		err = ncb_elf_open(&e, write_image(&g, c->name), why,
				   sizeof(why));
		if (err != c->err || !strstr(why, c->why))
			FAIL("%s from a file: %s (\"%s\")", c->name,
			     errname(-err), why);
	}
	printf("# %u malformed images, each rejected as expected\n", k);
	remove_images();
}

/*
 * An alignment that is not a power of two is skipped, as execve skips
 * it (maximum_alignment, fs/binfmt_elf.c), not refused: the image loads
 * with the others' alignment, and the lint says so.
 */
TEST(alignment_not_power_of_two_ignored)
{
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e;
	struct gen g;
	char why[256];
	int pass;

	gen_base(&g);
	gen_ph(&g, 0)->p_align = 3 * GEN_P;
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			ASSERT_EQ(ncb_elf_open(&e, write_image(&g, "align3"),
					       why, sizeof(why)), 0);
		else
			ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why,
						sizeof(why)), 0);
		ASSERT_EQ(ncb_elf_info(e, &in), 0);
		ASSERT_EQ(in.align, GEN_P);
		if (!strstr(ncb_elf_notes(e), "segment 0: alignment 0x30000 "
			    "is not a power of two: ignored"))
			FAIL("notes: \"%s\"", ncb_elf_notes(e));
		ncb_elf_close(e);
	}
	remove_images();
}

TEST(valid_image_described)
{
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf_seg s = NCB_INIT(ncb_elf_seg);
	struct ncb_elf *e;
	struct gen g;
	char why[256];

	gen_base(&g);
	ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_info(e, &in), 0);
	ASSERT_EQ(in.type, ET_EXEC);
	ASSERT_EQ(in.nsegs, 2);
	ASSERT_EQ(in.lo, GEN_VA);
	ASSERT_EQ(in.phdr, GEN_VA + sizeof(ncb_ehdr));
	ASSERT_TRUE(in.interp == NULL);
	ASSERT_EQ(ncb_elf_segment(e, 1, &s), 0);
	ASSERT_EQ(s.prot, PROT_READ | PROT_WRITE);
	ASSERT_EQ(s.memsz, 0x3000);
	ASSERT_EQ(ncb_elf_segment(e, 2, &s), -ERANGE);
	ASSERT_EQ(strcmp(ncb_elf_notes(e), ""), 0);
	/* Parsed from memory: nothing to map from. */
	ASSERT_EQ(ncb_elf_load(e, NULL, &NCB_INIT(ncb_elf_image), why,
			       sizeof(why)), -EBADF);
	ncb_elf_close(e);
	ASSERT_EQ(ncb_elf_parse(NULL, g.buf, g.len, NULL, 0), -EINVAL);
	ASSERT_EQ(ncb_elf_open(&e, "/nonexistent/x", why, sizeof(why)),
		  -ENOENT);
	ASSERT_EQ(ncb_elf_open(&e, "/", why, sizeof(why)), -EACCES);
	ASSERT_EQ(ncb_elf_info(NULL, &in), -EINVAL);
	ASSERT_EQ(ncb_elf_unload(NULL), -EINVAL);
}

/*
 * A segment that is not writable, with bss after its file bytes in one
 * page: the kernel's padzero cannot write there and leaves the file's
 * bytes (6.7 and later ignore that failure): so does the loader.
 */
TEST(read_only_tail_keeps_file_bytes)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	const unsigned char *t;
	struct gen g;
	char why[256];

	gen_base(&g);
	gen_ph(&g, 0)->p_filesz = 0x1800;
	gen_ph(&g, 0)->p_memsz = 0x2000;
	ASSERT_EQ(ncb_elf_open(&e, write_image(&g, "rotail"), why,
			       sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), 0);
	t = (const unsigned char *)(uintptr_t)(GEN_VA + 0x1800);
	ASSERT_EQ(t[0], 0xc3);
	ASSERT_EQ(t[0x7ff], 0xc3);
	ASSERT_EQ(ncb_elf_unload(&img), 0);
	ncb_elf_close(e);
	remove_images();
}

TEST(load_and_unload)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_elf *e;
	const char *path;
	const unsigned char *d;
	struct gen g;
	char why[256];
	uint64_t pg = ncb__probe()->page_size, i;

	gen_base(&g);
	path = write_image(&g, "valid");
	warm_up(path);
	snapshot(0);
	ASSERT_EQ(ncb_elf_open(&e, path, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_load(e, &NCB_INIT(ncb_elf_load_opts,
					    .base = GEN_VA + GEN_P),
			       &img, why, sizeof(why)), -EINVAL);
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), 0);
	ASSERT_EQ(img.start, GEN_VA);
	ASSERT_EQ(img.bias, 0);
	ASSERT_EQ(img.entry, GEN_VA + 0x1000);
	ASSERT_EQ(mapping_at(GEN_VA, &m), 1);
	ASSERT_EQ(m.prot, PROT_READ | PROT_EXEC);
	ASSERT_EQ(mapping_at(GEN_VA + GEN_P, &m), 1);
	ASSERT_EQ(m.prot, PROT_READ | PROT_WRITE);
	/* File bytes, then bss zeroed to the end of the page and beyond. */
	d = (const unsigned char *)(uintptr_t)(GEN_VA + GEN_P);
	ASSERT_EQ(d[0x10], 0xa0);
	for (i = 0x100; i < 0x3000; i++)
		if (d[i])
			FAIL("bss byte %#jx is %#x", (uintmax_t)i, d[i]);
	/* Between the segments: still reserved, not free. */
	if (pg < GEN_P) {
		ASSERT_EQ(mapping_at(GEN_VA + 0x4000, &m), 1);
		ASSERT_EQ(m.prot, PROT_NONE);
	}
	ASSERT_EQ(ncb_elf_unload(&img), 0);
	ncb_elf_close(e);
	expect_same_maps(GEN_VA, GEN_VA + GEN_LEN);
	remove_images();
}

/* An ET_EXEC image whose place is taken: refused, the occupant named. */
TEST(exec_image_collision)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	const char *path;
	struct gen g;
	char why[256], want[64];
	char *p;

	gen_base(&g);
	path = write_image(&g, "collide");
	warm_up(path);
	p = ncb_mmap((void *)(uintptr_t)(GEN_VA + GEN_P), 4096,
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		     0);
	ASSERT_PTR_EQ(p, (void *)(uintptr_t)(GEN_VA + GEN_P));
	memset(p, 0x77, 4096);
	snapshot(0);
	ASSERT_EQ(ncb_elf_open(&e, path, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), -EEXIST);
	snprintf(want, sizeof(want), "%jx-", (uintmax_t)(GEN_VA + GEN_P));
	if (!strstr(why, want))
		FAIL("the message does not name the occupant: %s", why);
	ncb_elf_close(e);
	expect_same_maps(GEN_VA, GEN_VA + 4 * GEN_P);
	check_sentinel(p, 4096, 0x77);
	munmap(p, 4096);
	remove_images();
}

struct first {
	uint64_t start;
	int stack;
};

static int first_occupant(const struct ncb_mapping *m, void *arg)
{
	struct first *f = arg;

	f->start = m->start;
	f->stack = !strcmp(m->path, "[stack]");
	return 1;
}

/* Grow the stack now, so that it does not grow while a test looks. */
static void __attribute__((noinline)) grow_stack(void)
{
	volatile char pad[256 << 10];

	memset((char *)pad, 0, sizeof(pad));
}

/*
 * CVE-2017-1000253: a position-independent image whose span reaches the
 * stack.  The kernel once put segments over it; here it is refused whole.
 */
TEST(span_over_the_stack)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_mapping m = NCB_INIT(ncb_mapping);
	struct ncb_elf *e;
	const char *path;
	struct gen g;
	char why[256], want[64];
	struct first first = { 0, 0 };
	uint64_t stack = 0;
	struct ncb_maps *maps;

	grow_stack();
	ASSERT_EQ(ncb_maps_open(&maps, 0), 0);
	while (ncb_maps_next(maps, &m) == 1)
		if (!strcmp(m.path, "[stack]"))
			stack = m.start;
	ncb_maps_close(maps);
	if (!stack)
		SKIP("no [stack] in this process's maps");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_DYN;
	path = write_image(&g, "pie");
	warm_up(path);
	snapshot(0);
	ASSERT_EQ(ncb_elf_open(&e, path, why, sizeof(why)), 0);
	/* The data segment would land on the stack's lowest page. */
	ASSERT_EQ(ncb_elf_load(e, &NCB_INIT(ncb_elf_load_opts,
					    .base = stack - GEN_P),
			       &img, why, sizeof(why)), -EEXIST);
	/* The first occupant is named: the stack, or a guard below it. */
	ASSERT_EQ(ncb_maps_occupants(0, (void *)(uintptr_t)(stack - GEN_P),
				     GEN_P + 0x3000, first_occupant, &first),
		  1);
	snprintf(want, sizeof(want), "%#jx-", (uintmax_t)first.start);
	if (first.stack ? !strstr(why, "[stack]") : !strstr(why, want))
		FAIL("the message does not name the occupant: %s", why);
	ncb_elf_close(e);
	expect_same_maps(stack - GEN_P, stack + GEN_P);
	remove_images();
}

/* The second segment cannot be mapped: the first is undone too. */
TEST(failure_after_mapping_began)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	ncb_phdr *t, *d;
	char dir[] = "/tmp/ncb-noexec-XXXXXX", path[128], why[256];
	struct gen g;
	int fd, err;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	if (unshare(CLONE_NEWNS) && unshare(CLONE_NEWUSER | CLONE_NEWNS))
		SKIP("no mount namespace here: %s", errname(errno));
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) ||
	    mount("ncb", dir, "tmpfs", MS_NOEXEC, NULL))
		SKIP("cannot mount a noexec tmpfs: %s", errname(errno));
	gen_base(&g);
	t = gen_ph(&g, 0);
	d = gen_ph(&g, 1);
	/* Data first, code second: the code's mapping fails on noexec. */
	t->p_flags = PF_R;
	d->p_flags = PF_R | PF_X;
	d->p_memsz = d->p_filesz;
	gen_eh(&g)->e_entry = GEN_VA + GEN_P + 0x10;
	snprintf(path, sizeof(path), "%s/img", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0755);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, g.buf, g.len), (ssize_t)g.len);
	close(fd);
	warm_up(path);
	snapshot(0);
	ASSERT_EQ(ncb_elf_open(&e, path, why, sizeof(why)), 0);
	err = ncb_elf_load(e, NULL, &img, why, sizeof(why));
	if (!err) {
		ncb_elf_unload(&img);
		ncb_elf_close(e);
		umount(dir);
		rmdir(dir);
		SKIP("code maps from a noexec mount here (emulated mmap)");
	}
	ASSERT_EQ(err, -EPERM);
	if (!strstr(why, "segment 1"))
		FAIL("the message does not name the segment: %s", why);
	ncb_elf_close(e);
	expect_same_maps(GEN_VA, GEN_VA + 4 * GEN_P);
	umount(dir);
	rmdir(dir);
}

/* The file cut short between the check and the load: an error, no SIGBUS. */
TEST(file_cut_short_after_check)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	const char *path;
	struct gen g;
	char why[256];

	gen_base(&g);
	path = write_image(&g, "cut");
	warm_up(path);
	snapshot(0);
	ASSERT_EQ(ncb_elf_open(&e, path, why, sizeof(why)), 0);
	ASSERT_EQ(truncate(path, (off_t)(GEN_P + 0x10)), 0);
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), -EIO);
	ncb_elf_close(e);
	expect_same_maps(GEN_VA, GEN_VA + 4 * GEN_P);
	remove_images();
}

/*
 * Segments sharing a page, the layout the 4.17 loader refused: a later
 * segment with file bytes takes the page (as the kernel gives it), one
 * with none zeroes its part and keeps the earlier bytes.
 */
static void shared_page(uint64_t filesz, const char *name)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf *e;
	const unsigned char *b = (const unsigned char *)(uintptr_t)GEN_VA;
	ncb_phdr *t, *d;
	struct gen g;
	char why[256];
	uint64_t i;

	gen_base(&g);
	t = gen_ph(&g, 0);
	d = gen_ph(&g, 1);
	t->p_filesz = t->p_memsz = 0x1800;
	d->p_offset = 0x1900;
	d->p_vaddr = GEN_VA + 0x1900;
	d->p_filesz = filesz;
	d->p_memsz = 0x800;
	d->p_align = 0x1000;
	memset(g.buf + 0x1900, 0x5a, 0x100);
	ASSERT_EQ(ncb_elf_open(&e, write_image(&g, name), why, sizeof(why)),
		  0);
	if (!strstr(ncb_elf_notes(e), "share the page"))
		FAIL("no note of the shared page: %s", ncb_elf_notes(e));
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), 0);
	for (i = 0x1000; i < 0x1800; i++)
		ASSERT_EQ(b[i], 0xc3);
	for (i = 0x1900; i < 0x1900 + filesz; i++)
		ASSERT_EQ(b[i], 0x5a);
	for (i = 0x1900 + filesz; i < 0x2100; i++)
		if (b[i])
			FAIL("bss byte %#jx is %#x", (uintmax_t)i, b[i]);
	/* The bss is writable. */
	((unsigned char *)(uintptr_t)GEN_VA)[0x20ff] = 1;
	ASSERT_EQ(ncb_elf_unload(&img), 0);
	ncb_elf_close(e);
}

TEST(segments_sharing_a_page)
{
	if (ncb__probe()->page_size != 4096)
		SKIP("the layout is for 4 KiB pages");
	shared_page(0x100, "shared-file");
	shared_page(0, "shared-bss");
	remove_images();
}

/* ncb_exec of path refused with err, the message holding why (if any). */
static void refused(const char *path, int err, const char *part)
{
	char *argv[] = { "prog", NULL }, why[256];

	ASSERT_EQ(ncb_exec(path, argv, NULL, NULL, why, sizeof(why)), err);
	if (part && !strstr(why, part))
		FAIL("%s", why);
}

/* A script whose whole text is line. */
static void write_script(const char *path, const char *line)
{
	FILE *f = fopen(path, "w");

	ASSERT_TRUE(f != NULL);
	fputs(line, f);
	fclose(f);
	ASSERT_EQ(chmod(path, 0755), 0);
}

/* ncb_exec's refusals: each returns, with nothing left mapped. */
TEST(exec_refusals)
{
	char why[256], interp[128], line[160], script[128];
	struct gen g;
	const char *path;

	gen_base(&g);
	path = write_image(&g, "exec-image");
	snprintf(interp, sizeof(interp), "%s", path);
	warm_up(path);
	grow_stack();
	snapshot(0);
	refused(NULL, -EINVAL, NULL);
	ASSERT_EQ(ncb_exec(path, NULL, NULL, NULL, why, sizeof(why)),
		  -EINVAL);
	/* Options it cannot honour are refused before anything happens. */
	ASSERT_EQ(ncb_exec(path, (char *[]){ "x", NULL }, NULL,
			   &NCB_INIT(ncb_exec_opts, .flags = 0x80), why,
			   sizeof(why)), -EINVAL);
	ASSERT_TRUE(strstr(why, "unknown flags 0x80") != NULL);
	ASSERT_EQ(ncb_exec(path, (char *[]){ "x", NULL }, NULL,
			   &NCB_INIT(ncb_exec_opts, .exe = NCB_EXE_SET + 1),
			   why, sizeof(why)), -EINVAL);
	ASSERT_TRUE(strstr(why, "unknown exe choice") != NULL);
	/* An interpreter that is not a shared object. */
	gen_interp(&g, 3, interp, strlen(interp) + 1);
	refused(write_image(&g, "bad-interp"), -ELIBBAD,
		"not a shared object");
	/* One that has an interpreter of its own. */
	gen_eh(&g)->e_type = ET_DYN;
	path = write_image(&g, "interp-interp");
	snprintf(interp, sizeof(interp), "%s", path);
	gen_base(&g);
	gen_interp(&g, 3, interp, strlen(interp) + 1);
	refused(write_image(&g, "nested-interp"), -ELIBBAD, "of its own");
	/* One that is not there. */
	gen_base(&g);
	gen_interp(&g, 3, "/nonexistent/ld.so", 19);
	path = write_image(&g, "missing-interp");
	refused(path, -ENOENT, NULL);
	/* Not executable: refused as execve refuses it. */
	ASSERT_EQ(chmod(path, 0644), 0);
	refused(path, -EACCES, NULL);
	/* A library: loadable, not runnable. */
	gen_base(&g);
	gen_eh(&g)->e_type = ET_DYN;
	gen_eh(&g)->e_entry = 0;
	refused(write_image(&g, "library"), -ENOEXEC, "no entry point");
	/* A script naming nothing, and scripts nested too deep. */
	/* In the test's own directory: rows of the matrix run at once. */
	snprintf(script, sizeof(script), "%s/empty-script", tmpdir);
	path = script;
	write_script(path, "#!   \n");
	refused(path, -ENOEXEC, NULL);
	snprintf(line, sizeof(line), "#!%s\n", path);
	write_script(path, line);
	refused(path, -ELOOP, NULL);
	unlink(path);
	expect_same_maps(GEN_VA, GEN_VA + 4 * GEN_P);
	remove_images();
}

/* Skip unless this build can load path (an i386 build on x86_64 cannot). */
static void need_program(const char *path)
{
	struct ncb_elf *e;
	char why[256];

	if (ncb_elf_open(&e, path, why, sizeof(why)))
		SKIP("%s is not a program of this build: %s", path, why);
	ncb_elf_close(e);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* Another thread would run on in the new program: refused. */
TEST(exec_with_threads_refused)
{
	char *argv[] = { "false", NULL }, why[256];
	pthread_t t;

	/* false: were it run, this case would fail with its status. */
	ASSERT_EQ(pthread_create(&t, NULL, sleeper, NULL), 0);
	ASSERT_EQ(ncb_exec("/bin/false", argv, NULL, NULL, why, sizeof(why)),
		  -EBUSY);
	if (!strstr(why, "threads: the caller must be the only one"))
		FAIL("%s", why);
}

/*
 * The same with the caller in 2,000 groups: /proc/self/status then has a
 * Groups: line of some 10 kB before its Threads: line.
 */
TEST(exec_threads_seen_past_long_status)
{
	char *argv[] = { "false", NULL }, why[256];
	static gid_t groups[2000];
	pthread_t t;
	int i;

	for (i = 0; i < 2000; i++)
		groups[i] = (gid_t)(100000 + i);
	if (setgroups(2000, groups))
		SKIP("setgroups: %s", strerror(errno));
	ASSERT_EQ(pthread_create(&t, NULL, sleeper, NULL), 0);
	ASSERT_EQ(ncb_exec("/bin/false", argv, NULL, NULL, why, sizeof(why)),
		  -EBUSY);
}

static volatile int vfork_child_ran;

static int exec_shared(void *arg)
{
	char *argv[] = { "false", NULL }, *why = arg;

	vfork_child_ran = 1;
	return ncb_exec("/bin/false", argv, NULL, NULL, why, 256) == -EBUSY ?
	       0 : 2;
}

/*
 * A vfork child sharing its parent's memory: in-process the parent would
 * wake in the program's address space.  Refused; the parent is intact.
 * Where a vfork is run as a fork (qemu-user, valgrind), the child's
 * write is not seen here: nothing was shared to test.
 */
TEST(exec_in_vfork_child_refused)
{
	size_t size = 256 * 1024;
	char *stack, why[256] = "";
	int st;
	pid_t pid;

	stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(stack != MAP_FAILED);
	pid = clone(exec_shared, stack + size, CLONE_VM | CLONE_VFORK |
		    SIGCHLD, why);
	ASSERT_NE(pid, -1);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	munmap(stack, size);
	if (!vfork_child_ran)
		SKIP("this environment runs a vfork as a fork: no memory "
		     "is shared");
	ASSERT_EQ(st, 0);
	if (!strstr(why, "another process shares this one's memory"))
		FAIL("%s", why);
}

/* A status line of this process ("SigCgt:"), or "" */
static void status_line(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			snprintf(buf, len, "%s", line);
	fclose(f);
}

static void no_handler(int sig)
{
	(void)sig;
}

/*
 * What grep sees of its signal dispositions, started by execve (how 0) or
 * by ncb_exec (1) from a process that catches SIGUSR1, glibc's own signal
 * 33 (set raw: glibc's sigaction refuses it) and SIGTERM, and ignores
 * SIGUSR2.
 */
static void dispositions(int how, char *out, size_t len)
{
	char *argv[] = { "grep", "-E", "^Sig(Cgt|Ign)", "/proc/self/status",
			 NULL }, why[256];
	unsigned long k[8] = { (unsigned long)no_handler };
	int fds[2], st;
	ssize_t n, got = 0;
	pid_t pid;

	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (dup2(fds[1], 1) < 0 ||
		    signal(SIGUSR1, no_handler) == SIG_ERR ||
		    signal(SIGTERM, no_handler) == SIG_ERR ||
		    signal(SIGUSR2, SIG_IGN) == SIG_ERR ||
		    syscall(SYS_rt_sigaction, 33, k, NULL, 8))
			_exit(90);
		if (how)
			ncb_exec("/bin/grep", argv, environ, NULL, why,
				 sizeof(why));
		else
			execv("/bin/grep", argv);
		_exit(91);
	}
	close(fds[1]);
	while (got < (ssize_t)len - 1 &&
	       (n = read(fds[0], out + got, len - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

/* Caught signals are reset, ignored ones stay ignored: as execve. */
TEST(exec_signals_reset)
{
	char own[256], direct[256], via[256];

	if (getenv("NCB_TEST_VALGRIND"))
		SKIP("valgrind does not follow a program loaded in-process");
	need_program("/bin/grep");
	status_line("SigCgt:", own, sizeof(own));
	if (strcmp(own, "SigCgt:\t0000000000000000\n"))
		SKIP("this process's runtime catches signals (an emulator): "
		     "%s", own);
	dispositions(0, direct, sizeof(direct));
	dispositions(1, via, sizeof(via));
	/* grep catches SIGSEGV itself: the same both ways, nothing else. */
	if (strcmp(direct, via))
		FAIL("execve gave\n%s, ncb_exec\n%s", direct, via);
}

/*
 * Every program of /usr/bin: checked, loaded where the kernel would put it
 * (an ET_EXEC at its own address), its first file bytes where they belong,
 * unloaded; the address space as it was.
 */
/* A directory entry as getdents64 writes it (struct linux_dirent64). */
struct dent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/*
 * The names in a directory, one after the other with their null bytes,
 * into buf; the total length, 0 if it cannot be read.  Read with
 * getdents64 into static memory: opendir's buffer is as large as the file
 * system's block size, 512 KiB on the 9p share the VM rows read the host
 * from, which glibc maps apart and unmaps at closedir, and raises its
 * threshold for mapping to, so that the loads' own allocations would
 * then grow the heap: the address space would change under the test.
 */
static size_t read_names(const char *dir, char *buf, size_t size)
{
	static char ents[1 << 15] __attribute__((aligned(8)));
	const struct dent64 *d;
	size_t used = 0, len;
	long n, off;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, fd, ents, sizeof(ents))) > 0) {
		for (off = 0; off < n; off += d->reclen) {
			d = (const struct dent64 *)(ents + off);
			len = strlen(d->name) + 1;
			ASSERT_TRUE(used + len <= size);
			memcpy(buf + used, d->name, len);
			used += len;
		}
	}
	close(fd);
	return used;
}

TEST(load_every_program)
{
	static char names[1 << 18];
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf_seg sg = NCB_INIT(ncb_elf_seg);
	struct ncb_elf *e;
	unsigned char want[64];
	char path[512], why[256];
	unsigned int loaded = 0, taken = 0, skipped = 0;
	size_t len = read_names("/usr/bin", names, sizeof(names));
	const char *name;
	int fd, err;

	if (!len)
		SKIP("no /usr/bin");
	warm_up("/proc/self/exe");
	grow_stack();
	snapshot(0);
	for (name = names; name < names + len; name += strlen(name) + 1) {
		if (snprintf(path, sizeof(path), "/usr/bin/%s", name) >=
		    (int)sizeof(path) ||
		    ncb_elf_open(&e, path, why, sizeof(why))) {
			skipped++;
			continue;
		}
		ncb_elf_info(e, &in);
		ASSERT_EQ(ncb_elf_segment(e, 0, &sg), 0);
		err = ncb_elf_load(e, NULL, &img, why, sizeof(why));
		if (err) {
			/*
			 * Only a collision may stop a checked image; valgrind
			 * also refuses addresses it keeps for itself.
			 */
			if (!strstr(why, "is taken") &&
			    !(err == -ENOMEM && getenv("NCB_TEST_VALGRIND")))
				FAIL("%s: %s", path, why);
			taken++;
			ncb_elf_close(e);
			continue;
		}
		fd = open(path, O_RDONLY);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(pread(fd, want, sizeof(want), (off_t)sg.offset),
			  (ssize_t)sizeof(want));
		close(fd);
		if (sg.filesz >= sizeof(want) &&
		    memcmp((void *)(uintptr_t)(sg.vaddr + img.bias), want,
			   sizeof(want)))
			FAIL("%s: its first segment holds other bytes", path);
		ASSERT_EQ(ncb_elf_unload(&img), 0);
		ncb_elf_close(e);
		loaded++;
	}
	expect_same_maps(0, 1);
	printf("# /usr/bin: %u loaded and unloaded, %u places taken, %u not "
	       "loadable here\n", loaded, taken, skipped);
	/* /usr/bin holds this machine's programs: an x86_64 build loads
	 * them; others may find none of their kind. */
	if (!loaded && ncb__probe()->page_size && sizeof(void *) == 8 &&
	    NCB_EM == EM_X86_64)
		FAIL("no program of /usr/bin loaded");
	if (!loaded)
		SKIP("no program of this build's kind in /usr/bin");
}

/* A machine of some class and byte order, and its smallest page. */
struct target {
	int cls;
	int data;
	unsigned int machine;
	const char *name;
	uint64_t page;
};

static const struct target targets[] = {
	{ ELFCLASS32, ELFDATA2LSB, EM_386, "i386", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_X86_64, "x86-64", 4096 },
	{ ELFCLASS32, ELFDATA2LSB, EM_X86_64, "x86-64", 4096 },
	{ ELFCLASS32, ELFDATA2LSB, EM_ARM, "arm", 4096 },
	{ ELFCLASS32, ELFDATA2MSB, EM_ARM, "arm", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_AARCH64, "aarch64", 4096 },
	{ ELFCLASS64, ELFDATA2MSB, EM_AARCH64, "aarch64", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_RISCV, "riscv", 4096 },
	{ ELFCLASS32, ELFDATA2LSB, EM_RISCV, "riscv", 4096 },
	{ ELFCLASS32, ELFDATA2MSB, EM_PPC, "powerpc", 4096 },
	{ ELFCLASS64, ELFDATA2MSB, EM_PPC64, "powerpc64", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_PPC64, "powerpc64", 4096 },
	{ ELFCLASS64, ELFDATA2MSB, EM_S390, "s390", 4096 },
	{ ELFCLASS32, ELFDATA2MSB, EM_S390, "s390", 4096 },
	{ ELFCLASS32, ELFDATA2MSB, EM_MIPS, "mips", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_MIPS, "mips", 4096 },
	{ ELFCLASS64, ELFDATA2LSB, EM_LOONGARCH, "loongarch", 4096 },
	{ ELFCLASS64, ELFDATA2MSB, EM_SPARCV9, "sparc64", 8192 },
	{ ELFCLASS64, ELFDATA2LSB, EM_ALPHA, "alpha", 8192 },
	{ ELFCLASS32, ELFDATA2MSB, EM_68K, "m68k", 4096 },
};

#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static int is_native(const struct target *t)
{
	return t->cls == NCB_ELFCLASS && t->data == NCB_ELFDATA &&
	       t->machine == NCB_EM;
}

static void expect_arch(const struct ncb_elf *e, const struct target *t)
{
	struct ncb_elf_arch a = { .size = sizeof(a) };

	ASSERT_EQ(ncb_elf_arch(e, &a), 0);
	ASSERT_EQ(a.size, sizeof(a));
	ASSERT_EQ(a.elf_class, t->cls);
	ASSERT_EQ(a.data, t->data);
	ASSERT_EQ(a.machine, t->machine);
	ASSERT_EQ(a.native, is_native(t));
	if (!a.name || strcmp(a.name, t->name))
		FAIL("machine %u is named %s, not %s", t->machine,
		     a.name ? a.name : "(null)", t->name);
	ASSERT_EQ(a.page_size, is_native(t) ? ncb__probe()->page_size
					    : t->page);
	ASSERT_ULE(a.min_page, a.page_size);
	ASSERT_ULE(a.page_size, a.max_page);
	ASSERT_EQ(a.page_fit, a.max_page);
}

/* The valid image of every machine: read in its class and byte order. */
static void expect_described(const struct ncb_elf *e, const struct target *t)
{
	uint64_t pg = is_native(t) ? ncb__probe()->page_size : t->page;
	uint64_t ehs = t->cls == ELFCLASS64 ? sizeof(Elf64_Ehdr)
					    : sizeof(Elf32_Ehdr);
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf_seg sg = NCB_INIT(ncb_elf_seg);

	ASSERT_EQ(ncb_elf_info(e, &in), 0);
	ASSERT_EQ(in.type, ET_EXEC);
	ASSERT_EQ(in.machine, t->machine);
	ASSERT_EQ(in.entry, GEN_VA + 0x1000);
	ASSERT_EQ(in.lo, GEN_VA);
	ASSERT_EQ(in.hi, (GEN_VA + GEN_P + 0x3000 + pg - 1) & ~(pg - 1));
	ASSERT_EQ(in.nsegs, 2);
	ASSERT_EQ(in.phnum, 5);
	ASSERT_EQ(in.phdr, GEN_VA + ehs);
	ASSERT_EQ(ncb_elf_segment(e, 1, &sg), 0);
	ASSERT_EQ(sg.vaddr, GEN_VA + GEN_P);
	ASSERT_EQ(sg.offset, GEN_P);
	ASSERT_EQ(sg.filesz, 0x100);
	ASSERT_EQ(sg.memsz, 0x3000);
	ASSERT_EQ(sg.align, GEN_P);
	ASSERT_EQ(sg.prot, PROT_READ | PROT_WRITE);
	if (*ncb_elf_notes(e))
		FAIL("%s: notes: %s", t->name, ncb_elf_notes(e));
}

/* What refuses another machine's image where only native ones go. */
static const char *strict_refusal(const struct target *t)
{
	if (t->cls != NCB_ELFCLASS)
		return "class";
	return t->data != NCB_ELFDATA ? "byte order" : "machine";
}

/*
 * Every machine's image, of either class and byte order: checked by its
 * own rules with NCB_ELF_ANY_ARCH, refused without it, never loaded.
 */
TEST(other_machines_checked)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	const struct target *t;
	struct ncb_elf *e;
	const char *path;
	struct gen g;
	char why[256];
	unsigned int i;
	int err;

	for (i = 0; i < NTARGETS; i++) {
		t = &targets[i];
		gen_base(&g);
		gen_recode(&g, t->cls, t->data, t->machine);
		err = ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH,
					  why, sizeof(why));
		if (err)
			FAIL("%s %d-bit %s: %s", t->name,
			     t->cls == ELFCLASS64 ? 64 : 32,
			     t->data == ELFDATA2LSB ? "LE" : "BE", why);
		expect_arch(e, t);
		expect_described(e, t);
		ncb_elf_close(e);
		err = ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why));
		if (is_native(t)) {
			ASSERT_EQ(err, 0);
			ncb_elf_close(e);
		} else if (err != -ENOEXEC || !strstr(why, strict_refusal(t))) {
			FAIL("%s: %s (\"%s\")", t->name, errname(-err), why);
		}
		if (is_native(t))
			continue;
		/* From a file: described, refused by the loader. */
		path = write_image(&g, "other");
		warm_up("/proc/self/exe");
		snapshot(0);
		ASSERT_EQ(ncb_elf_open_flags(&e, path, NCB_ELF_ANY_ARCH, why,
					     sizeof(why)), 0);
		expect_arch(e, t);
		ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)),
			  -ENOEXEC);
		if (!strstr(why, t->name) || !strstr(why, "this build loads"))
			FAIL("%s: %s", t->name, why);
		ncb_elf_close(e);
		expect_same_maps(GEN_VA, GEN_VA + GEN_LEN);
	}
	printf("# %zu machines, classes and byte orders\n", NTARGETS);
	remove_images();
}

static const struct target *target_of(unsigned int machine, int cls,
				      int data)
{
	unsigned int i;

	for (i = 0; i < NTARGETS; i++)
		if (targets[i].machine == machine && targets[i].cls == cls &&
		    targets[i].data == data)
			return &targets[i];
	FAIL("no target for machine %u", machine);
}

/* The data segment moved by delta, with the alignment of a small page. */
static int parse_moved(struct gen *g, const struct target *t, uint64_t delta,
		       struct ncb_elf **e, char *why, size_t wl)
{
	gen_base(g);
	gen_ph(g, 1)->p_vaddr += delta;
	gen_ph(g, 1)->p_align = 0x1000;
	gen_recode(g, t->cls, t->data, t->machine);
	return ncb_elf_parse_flags(e, g->buf, g->len, NCB_ELF_ANY_ARCH, why,
				   wl);
}

/* Each machine's page sizes: refused below its smallest, noted below its
 * largest. */
TEST(page_sizes_per_machine)
{
	struct ncb_elf_arch a = { .size = sizeof(a) };
	const struct target *t;
	struct ncb_elf *e;
	struct gen g;
	char why[256];

	/* aarch64 and powerpc64 kernels may use 64 KiB pages. */
	t = target_of(EM_AARCH64, ELFCLASS64, ELFDATA2MSB);
	if (!is_native(t)) {
		ASSERT_EQ(parse_moved(&g, t, 0x1000, &e, why, sizeof(why)), 0);
		ASSERT_EQ(ncb_elf_arch(e, &a), 0);
		ASSERT_EQ(a.page_fit, 4096);
		ASSERT_EQ(a.max_page, 65536);
		if (!strstr(ncb_elf_notes(e), "laid out for pages of at most "
				"4 KiB: aarch64 kernels with larger pages "
				"(up to 64 KiB)"))
			FAIL("%s", ncb_elf_notes(e));
		ncb_elf_close(e);
	}
	t = target_of(EM_PPC64, ELFCLASS64, ELFDATA2MSB);
	ASSERT_EQ(parse_moved(&g, t, 0x4000, &e, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_arch(e, &a), 0);
	ASSERT_EQ(a.page_fit, 16384);
	ASSERT_TRUE(strstr(ncb_elf_notes(e), "at most 16 KiB") != NULL);
	ncb_elf_close(e);
	/* x86-64 kernels have 4 KiB pages only: nothing to say. */
	t = target_of(EM_X86_64, ELFCLASS64, ELFDATA2LSB);
	if (!is_native(t)) {
		ASSERT_EQ(parse_moved(&g, t, 0x1000, &e, why, sizeof(why)), 0);
		ASSERT_EQ(strcmp(ncb_elf_notes(e), ""), 0);
		ASSERT_EQ(ncb_elf_arch(e, &a), 0);
		ASSERT_EQ(a.page_fit, 4096);
		ncb_elf_close(e);
	}
	/* alpha and sparc64 pages are 8 KiB: 4 KiB layouts do not load. */
	t = target_of(EM_ALPHA, ELFCLASS64, ELFDATA2LSB);
	ASSERT_EQ(parse_moved(&g, t, 0x1000, &e, why, sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "differ modulo the page size (8192)") != NULL);
	t = target_of(EM_SPARCV9, ELFCLASS64, ELFDATA2MSB);
	ASSERT_EQ(parse_moved(&g, t, 0x1000, &e, why, sizeof(why)), -ENOEXEC);
	ASSERT_EQ(parse_moved(&g, t, 0x2000, &e, why, sizeof(why)), 0);
	ncb_elf_close(e);
	/* Below every machine's page: refused. */
	t = target_of(EM_S390, ELFCLASS64, ELFDATA2MSB);
	ASSERT_EQ(parse_moved(&g, t, 0x10, &e, why, sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "(4096)") != NULL);
}

/* The class and byte order bytes of the identification, as given. */
static void put_ident(struct gen *g, int cls, int data)
{
	g->buf[EI_CLASS] = (unsigned char)cls;
	g->buf[EI_DATA] = (unsigned char)data;
}

/* Classes, byte orders and machines that no kernel takes together. */
TEST(impossible_and_unknown_machines)
{
	struct ncb_elf_arch a = { .size = sizeof(a) };
	struct ncb_elf *e;
	struct gen g;
	char why[256];

	gen_base(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2MSB, EM_X86_64);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "no kernel runs x86-64") != NULL);
	gen_base(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2LSB, EM_386);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	gen_base(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2LSB, EM_S390);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	/* A class or byte order that does not exist. */
	gen_base(&g);
	put_ident(&g, 3, NCB_ELFDATA);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "class 3 unknown") != NULL);
	put_ident(&g, NCB_ELFCLASS, 0);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "byte order 0 unknown") != NULL);
	/* A machine unknown here: generic rules, said in a note. */
	gen_base(&g);
	gen_recode(&g, ELFCLASS32, ELFDATA2MSB, 0x7777);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_arch(e, &a), 0);
	ASSERT_TRUE(a.name == NULL);
	ASSERT_EQ(a.native, 0);
	ASSERT_EQ(a.page_size, 4096);
	ASSERT_EQ(a.max_page, 65536);
	if (!strstr(ncb_elf_notes(e), "machine 30583 is unknown here"))
		FAIL("%s", ncb_elf_notes(e));
	ncb_elf_close(e);
}

/* The valid image moved to 2^53 (a 64-bit build's generator only). */
static void high_image(struct gen *g)
{
	ncb_phdr *t, *d;

	gen_base(g);
	t = gen_ph(g, 0);
	d = gen_ph(g, 1);
	t->p_vaddr = (__typeof__(t->p_vaddr))(1ULL << 53);
	d->p_vaddr = t->p_vaddr + GEN_P;
	gen_eh(g)->e_entry = t->p_vaddr + 0x1000;
}

/* Another machine's address space: its class's, its kernels'. */
TEST(other_address_spaces)
{
	struct ncb_elf *e;
	ncb_phdr *t, *d;
	struct gen g;
	char why[256];

	/* 32-bit: the end of a segment past 4 GiB wraps. */
	gen_base(&g);
	t = gen_ph(&g, 0);
	d = gen_ph(&g, 1);
	t->p_vaddr = 0xfffd0000u;
	d->p_vaddr = 0xfffe0000u;
	d->p_memsz = 0x20000;
	gen_eh(&g)->e_entry = t->p_vaddr + 0x1000;
	gen_recode(&g, ELFCLASS32, ELFDATA2MSB, EM_PPC);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -ENOEXEC);
	ASSERT_TRUE(strstr(why, "wraps around") != NULL);
	/* vm.mmap_min_addr is the running machine's: not checked. */
	gen_case(&g, 25);
	gen_recode(&g, ELFCLASS32, ELFDATA2MSB, EM_PPC);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), 0);
	ncb_elf_close(e);
	if (sizeof(ncb_phdr) != sizeof(Elf64_Phdr))
		return;
	/* Beyond aarch64's 52 bits of user space; sparc64's are all 64. */
	high_image(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2MSB, EM_AARCH64);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), -EINVAL);
	ASSERT_TRUE(strstr(why, "beyond the user address space") != NULL);
	high_image(&g);
	gen_recode(&g, ELFCLASS64, ELFDATA2MSB, EM_SPARCV9);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, NCB_ELF_ANY_ARCH, why,
				      sizeof(why)), 0);
	ncb_elf_close(e);
}

/*
 * Every malformed image read with NCB_ELF_ANY_ARCH: as without it when
 * native; in the other byte order as another machine's, the same but for
 * vm.mmap_min_addr, which only the running machine has.
 */
TEST(malformed_images_any_arch)
{
	unsigned int machine = NCB_ELFCLASS == ELFCLASS64 ? EM_PPC64 : EM_PPC;
	int data = NCB_ELFDATA == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	struct ncb_elf *e = NULL;
	struct gen g;
	char why[256];
	unsigned int k, pass;
	int err, want;

	for (k = 0; k < GEN_CASES; k++) {
		const struct gen_case *c = &gen_cases[k];

		/* No class, byte order or machine of its own to mutate. */
		if (k == 2 || k == 3 || k == 8)
			continue;
		if (c->err == -EINVAL && UINTPTR_MAX == 0xffffffffu)
			continue;
		for (pass = 0; pass < 2; pass++) {
			if (c->err == -EPERM && !pass &&
			    !ncb__probe()->mmap_min_addr)
				continue;
			want = c->err == -EPERM && pass ? 0 : c->err;
			gen_case(&g, k);
			/*
			 * powerpc64 as ELFv2, whose entry is code: ELFv1's
			 * names a function descriptor in data.
			 */
			if (pass) {
				gen_recode(&g, NCB_ELFCLASS, data, machine);
				if (machine == EM_PPC64)
					GEN_PUT(g.buf, NCB_ELFCLASS, data,
						Ehdr, e_flags, 2);
			}
			err = ncb_elf_parse_flags(&e, g.buf, g.len,
						  NCB_ELF_ANY_ARCH, why,
						  sizeof(why));
			if (!err)
				ncb_elf_close(e);
			if (err != want || (want && !strstr(why, c->why)))
				FAIL("%s%s: %s (\"%s\"), wanted %s", c->name,
				     pass ? " in the other byte order" : "",
				     errname(-err), why, errname(-want));
		}
	}
}

/*
 * powerpc64 ELFv1: the entry is a function descriptor, in any readable
 * segment, 16 bytes of it; ELFv2's is code.
 */
TEST(ppc64_elfv1_descriptor)
{
	struct ncb_elf *e;
	struct gen g;
	char why[256];
	int order, flags;

	for (order = ELFDATA2LSB; order <= ELFDATA2MSB; order++) {
		for (flags = 0; flags <= 2; flags++) {
			gen_base(&g);
			/* In the data segment, which is not executable. */
			gen_eh(&g)->e_entry = GEN_VA + GEN_P + 0x100;
			gen_recode(&g, ELFCLASS64, order, EM_PPC64);
			GEN_PUT(g.buf, ELFCLASS64, order, Ehdr, e_flags,
				flags);
			if (flags == 2) {
				ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len,
							      NCB_ELF_ANY_ARCH,
							      why, sizeof(why)),
					  -ENOEXEC);
				ASSERT_TRUE(strstr(why, "executable") != NULL);
				continue;
			}
			ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len,
						      NCB_ELF_ANY_ARCH, why,
						      sizeof(why)), 0);
			ncb_elf_close(e);
			/* The descriptor's 16 bytes past the segment's end. */
			gen_base(&g);
			gen_eh(&g)->e_entry = GEN_VA + GEN_P + 0x3000 - 8;
			gen_recode(&g, ELFCLASS64, order, EM_PPC64);
			GEN_PUT(g.buf, ELFCLASS64, order, Ehdr, e_flags,
				flags);
			ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len,
						      NCB_ELF_ANY_ARCH, why,
						      sizeof(why)), -ENOEXEC);
			ASSERT_TRUE(strstr(why, "descriptor") != NULL);
		}
	}
}

/* Trailing NULs after the interpreter's path: the kernel reads past them. */
TEST(interp_padding)
{
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e;
	struct gen g;
	char why[256];

	gen_base(&g);
	gen_interp(&g, 3, "/lib/ld64.so.1\0\0", 16);
	ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_info(e, &in), 0);
	ASSERT_EQ(strcmp(in.interp, "/lib/ld64.so.1"), 0);
	ncb_elf_close(e);
	gen_interp(&g, 3, "/lib\0\0ld.so", 12);
	ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why)),
		  -ENOEXEC);
	ASSERT_TRUE(strstr(why, "NUL inside") != NULL);
}

/* kind of an image in memory and as a file: the same. */
static void expect_kind(const struct gen *g, int kind, const char *name)
{
	int got = ncb_elf_kind_image(g->buf, g->len);

	if (got != kind)
		FAIL("%s: kind %d in memory, wanted %d", name, got, kind);
	got = ncb_elf_kind(write_image(g, name));
	if (got != kind)
		FAIL("%s: kind %d as a file, wanted %d", name, got, kind);
}

/* A file that is no program or library: refused, the kind named. */
static void expect_refused(const struct gen *g, const char *part)
{
	struct ncb_elf *e;
	char why[256];

	ASSERT_EQ(ncb_elf_parse(&e, g->buf, g->len, why, sizeof(why)),
		  -ENOEXEC);
	if (!strstr(why, part))
		FAIL("\"%s\" does not say %s", why, part);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g->buf, g->len, NCB_ELF_ANY_ARCH,
				      why, sizeof(why)), -ENOEXEC);
	if (!strstr(why, part))
		FAIL("\"%s\" does not say %s", why, part);
}

TEST(kinds_of_files)
{
	struct gen g;

	gen_base(&g);
	expect_kind(&g, NCB_ELF_PROGRAM, "program");
	gen_program_sections(&g);
	expect_kind(&g, NCB_ELF_PROGRAM, "program-sections");
	gen_recode(&g, ELFCLASS32, ELFDATA2MSB, EM_PPC);
	expect_kind(&g, NCB_ELF_PROGRAM, "program-ppc");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_REL;
	expect_kind(&g, NCB_ELF_OBJECT, "object");
	expect_refused(&g, "relocatable object");
	gen_recode(&g, ELFCLASS64, ELFDATA2MSB, EM_S390);
	expect_kind(&g, NCB_ELF_OBJECT, "object-s390x");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_CORE;
	expect_kind(&g, NCB_ELF_CORE, "core");
	expect_refused(&g, "core dump");
	gen_base(&g);
	gen_eh(&g)->e_type = ET_NONE;
	expect_kind(&g, NCB_ELF_OTHER, "none");
	gen_eh(&g)->e_type = 0xfe00;
	expect_kind(&g, NCB_ELF_OTHER, "os-specific");
	expect_refused(&g, "type 65024");
	/* A program or library for no machine (Guile's .go files). */
	gen_base(&g);
	gen_recode(&g, NCB_ELFCLASS, NCB_ELFDATA, EM_NONE);
	expect_kind(&g, NCB_ELF_OTHER, "no-machine");
	expect_refused(&g, "no machine (EM_NONE)");
	/* Debug files: sections without bytes, whatever the headers say. */
	gen_debug(&g);
	expect_kind(&g, NCB_ELF_DEBUG, "debug");
	expect_refused(&g, "separate debug file");
	gen_debug(&g);
	gen_recode(&g, ELFCLASS32, ELFDATA2MSB, EM_PPC);
	expect_kind(&g, NCB_ELF_DEBUG, "debug-ppc");
	/* eu-strip -f keeps the program headers: they point past the end. */
	gen_debug(&g);
	gen_ph(&g, 1)->p_filesz = 0x100;
	g.len = 0x1000;
	expect_kind(&g, NCB_ELF_DEBUG, "debug-cut");
	expect_refused(&g, "separate debug file");
	/* No section headers: code without file bytes. */
	gen_debug(&g);
	gen_eh(&g)->e_shoff = 0;
	gen_eh(&g)->e_shnum = 0;
	expect_kind(&g, NCB_ELF_DEBUG, "debug-no-sections");
	expect_refused(&g, "separate debug file");
	/* Section headers that cannot be read: the segments decide. */
	gen_base(&g);
	gen_program_sections(&g);
	gen_eh(&g)->e_shoff = g.len;
	expect_kind(&g, NCB_ELF_PROGRAM, "sections-past-end");
	/* Not ELF at all, or ELF too damaged to tell: the check says. */
	g.len = 0;
	expect_kind(&g, NCB_ELF_NOT_ELF, "empty");
	memcpy(g.buf, "\177EL", 3);
	g.len = 3;
	expect_kind(&g, NCB_ELF_NOT_ELF, "tiny");
	memcpy(g.buf, "hello, world\n", 13);
	g.len = 13;
	expect_kind(&g, NCB_ELF_NOT_ELF, "text");
	gen_base(&g);
	g.len = 4;
	expect_kind(&g, NCB_ELF_PROGRAM, "magic-only");
	gen_case(&g, 5);
	expect_kind(&g, NCB_ELF_PROGRAM, "cut-header");
	gen_case(&g, 10);
	expect_kind(&g, NCB_ELF_PROGRAM, "phentsize");
	remove_images();
}

TEST(kind_and_flags_errors)
{
	struct ncb_elf_arch a = NCB_INIT(ncb_elf_arch);
	struct ncb_elf *e;
	struct gen g;
	char why[256], fifo[] = "/tmp/ncb-elf-fifo-XXXXXX";
	int fd;

	ASSERT_EQ(ncb_elf_kind(NULL), -EINVAL);
	ASSERT_EQ(ncb_elf_kind("/nonexistent/x"), -ENOENT);
	ASSERT_EQ(ncb_elf_kind("/"), -EACCES);
	ASSERT_EQ(ncb_elf_kind_image(NULL, 1), -EINVAL);
	ASSERT_EQ(ncb_elf_kind_image(NULL, 0), NCB_ELF_NOT_ELF);
	/* A FIFO is refused before anything waits on it. */
	fd = mkstemp(fifo);
	ASSERT_GE(fd, 0);
	close(fd);
	unlink(fifo);
	ASSERT_EQ(mkfifo(fifo, 0600), 0);
	ASSERT_EQ(ncb_elf_kind(fifo), -EACCES);
	ASSERT_EQ(ncb_elf_open(&e, fifo, why, sizeof(why)), -EACCES);
	unlink(fifo);
	gen_base(&g);
	ASSERT_EQ(ncb_elf_parse_flags(&e, g.buf, g.len, 2, why, sizeof(why)),
		  -EINVAL);
	ASSERT_TRUE(strstr(why, "unknown flags") != NULL);
	ASSERT_EQ(ncb_elf_parse_flags(NULL, g.buf, g.len, 0, why,
				      sizeof(why)), -EINVAL);
	ASSERT_EQ(ncb_elf_open_flags(&e, "/bin/sh", ~0, why, sizeof(why)),
		  -EINVAL);
	ASSERT_EQ(ncb_elf_open_flags(&e, NULL, 0, why, sizeof(why)), -EINVAL);
	/* The arch struct's sizes are t-sized's. */
	ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_arch(NULL, &a), -EINVAL);
	ASSERT_EQ(ncb_elf_arch(e, NULL), -EINVAL);
	ASSERT_EQ(ncb_elf_arch(e, &a), 0);
	ASSERT_EQ(a.machine, NCB_EM);
	ASSERT_EQ(a.native, 1);
	ncb_elf_close(e);
}

/* This very program, loaded a second time: its code where it should be. */
TEST(load_a_real_program)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	struct ncb_elf *e;
	char why[256];
	uintptr_t entry = getauxval(AT_ENTRY);

	ASSERT_EQ(ncb_elf_open(&e, "/proc/self/exe", why, sizeof(why)), 0);
	ncb_elf_info(e, &in);
	if (in.type != ET_DYN)
		SKIP("this test program is not position-independent");
	warm_up("/proc/self/exe");
	snapshot(0);
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, why, sizeof(why)), 0);
	ASSERT_TRUE(img.start % in.align == 0);
	ASSERT_EQ(memcmp((void *)(uintptr_t)img.entry, (void *)entry, 64), 0);
	ASSERT_EQ(ncb_elf_unload(&img), 0);
	ncb_elf_close(e);
	expect_same_maps(img.start, img.end);
}

/*
 * An empty argv: since Linux 5.18 execve gives the program argc 1 with
 * argv[0] "", and so does ncb_exec.  ls aborts when argc is 0.
 */
TEST(exec_empty_argv)
{
	char dir[] = "/tmp/ncb-elf-argv-XXXXXX", why[256];
	char *const argv[] = { NULL };
	pid_t pid;
	int st;

	need_program("/bin/ls");
	if (getenv("NCB_TEST_VALGRIND"))
		SKIP("valgrind does not follow a program loaded in-process");
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 1) < 0 || chdir(dir))
			_exit(90);
		ncb_exec("/bin/ls", argv, environ, NULL, why, sizeof(why));
		_exit(91);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	rmdir(dir);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

/* $ORIGIN: a program without it says no, whatever the input. */
TEST(uses_origin)
{
	struct ncb_elf *e;
	struct gen g;
	char why[256];

	ASSERT_EQ(ncb_elf_uses_origin(NULL), -EINVAL);
	ASSERT_EQ(ncb_elf_open(&e, "/proc/self/exe", why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_uses_origin(e), 0);
	ncb_elf_close(e);
	/* Parsed from memory there is no file to read the section from. */
	gen_base(&g);
	ASSERT_EQ(ncb_elf_parse(&e, g.buf, g.len, why, sizeof(why)), 0);
	ASSERT_EQ(ncb_elf_uses_origin(e), 0);
	ncb_elf_close(e);
}

/* Whether capget says CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE. */
static int caps_allow_exe(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		FAIL("capget: %s", strerror(errno));
	return (d[0].effective & (1u << CAP_SYS_ADMIN)) ||
	       (d[1].effective & (1u << (40 - 32)));
}

/* What ncb_exec can set of the program's identity, asked, not changed. */
TEST(exec_identity)
{
	struct ncb_exec_identity id;
	unsigned int size = 0;
	char before[16], after[16];
	int want;

	ASSERT_EQ(ncb_exec_identity(NULL), -EINVAL);
	id.size = sizeof(size_t);
	ASSERT_EQ(ncb_exec_identity(&id), -EINVAL);
	ASSERT_EQ(prctl(PR_GET_NAME, before, 0, 0, 0), 0);
	id.size = sizeof(id);
	ASSERT_EQ(ncb_exec_identity(&id), 0);
	ASSERT_EQ(prctl(PR_GET_NAME, after, 0, 0, 0), 0);
	ASSERT_EQ(strcmp(before, after), 0);
	ASSERT_EQ(id.comm, 0);
	/* The kernel's own answer, asked directly. */
	want = prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0) ? -errno : 0;
	ASSERT_EQ(id.mm_map, want);
	if (!want)
		ASSERT_GT(size, 0);
	ASSERT_EQ(id.exe, want ? want : caps_allow_exe() ? 0 : -EPERM);
}

/*
 * Without either capability the exe link cannot be set: ncb_exec_identity
 * says EPERM, and --exe=set (NCB_EXE_SET) fails with it, nothing changed.
 */
TEST(exe_link_refused_without_capability)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	struct ncb_exec_identity id = { .size = sizeof(id) };
	struct ncb_exec_opts o = { .size = sizeof(o), .exe = NCB_EXE_SET };
	char *const argv[] = { "false", NULL };
	unsigned int size;
	char why[256];

	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0))
		SKIP("this kernel refuses PR_SET_MM_MAP: %s", strerror(errno));
	need_program("/bin/false");
	ASSERT_EQ(syscall(SYS_capget, &h, d), 0);
	d[0].effective &= ~(1u << CAP_SYS_ADMIN);
	d[1].effective &= ~(1u << (40 - 32));
	ASSERT_EQ(syscall(SYS_capset, &h, d), 0);
	ASSERT_EQ(ncb_exec_identity(&id), 0);
	ASSERT_EQ(id.exe, -EPERM);
	snapshot(0);
	ASSERT_EQ(ncb_exec("/bin/false", argv, environ, &o, why,
			   sizeof(why)), -EPERM);
	ASSERT_TRUE(strstr(why, "CAP_SYS_ADMIN") != NULL);
	/* Nothing loaded: under valgrind or ASan no range is left to see. */
	expect_same_maps(0, 0);
}

/* /usr/bin/cat's first mapping and start_brk, as execve placed them. */
static int kernel_layout(const char *prog, int no_random, uint64_t *base,
			 uint64_t *brk)
{
	char out[1 << 16], *p;
	unsigned long long b;
	int fds[2], st, i;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid == 0) {
		if (dup2(fds[1], 1) < 0 ||
		    (no_random && personality(ADDR_NO_RANDOMIZE) == -1))
			_exit(90);
		execl(prog, prog, "/proc/self/maps", "/proc/self/stat",
		      (char *)NULL);
		_exit(91);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(fds[0]);
	out[len] = '\0';
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -ECHILD;
	if (sscanf(out, "%llx-", &b) != 1)
		return -EINVAL;
	*base = b;
	/* The stat line is the last; start_brk is its 47th field. */
	p = strrchr(out, ')');
	for (i = 2; p && i < 47; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &b) != 1)
		return -EINVAL;
	*brk = b;
	return 0;
}

/*
 * ncb_exec_layout against the kernel itself: with randomization off, a
 * position-independent program and its break land where execve puts
 * them; with it on, the program lands at or above that base.
 */
TEST(exec_layout)
{
	struct ncb_exec_layout l = { .size = sizeof(l) }, l0;
	struct ncb_elf_info in = NCB_INIT(ncb_elf_info);
	uint64_t base, brk;
	struct ncb_elf *e;
	char why[256];
	int err, pers;

	ASSERT_EQ(ncb_exec_layout(NULL, &l), -EINVAL);
	err = ncb_elf_open(&e, "/usr/bin/cat", why, sizeof(why));
	if (err)
		SKIP("/usr/bin/cat is not a program of this build: %s", why);
	ASSERT_EQ(ncb_exec_layout(e, NULL), -EINVAL);
	l0.size = sizeof(size_t);
	ASSERT_EQ(ncb_exec_layout(e, &l0), -EINVAL);
	ncb_elf_info(e, &in);
	if (in.type != ET_DYN)
		SKIP("/usr/bin/cat is not position-independent");
	pers = personality(0xffffffff);
	if (pers == -1 || personality(pers | ADDR_NO_RANDOMIZE) == -1)
		SKIP("personality: %s", strerror(errno));
	ASSERT_EQ(ncb_exec_layout(e, &l), 0);
	personality(pers);
	ASSERT_EQ(kernel_layout("/usr/bin/cat", 1, &base, &brk), 0);
	ASSERT_UEQ(l.base, base);
	ASSERT_UEQ(l.brk, brk);
	/* Randomized: above the base, by less than the address space. */
	ASSERT_EQ(ncb_exec_layout(e, &l), 0);
	ASSERT_UGE(l.base, base);
	ASSERT_UGT(l.brk, l.base);
	ncb_elf_close(e);
}

TEST_MAIN(T(malformed_images_rejected), T(valid_image_described),
	  T(alignment_not_power_of_two_ignored),
	  T(load_and_unload), T(read_only_tail_keeps_file_bytes),
	  T(exec_image_collision),
	  T(span_over_the_stack), T(failure_after_mapping_began),
	  T(file_cut_short_after_check), T(exec_refusals),
	  T(exec_with_threads_refused),
	  T(exec_threads_seen_past_long_status), T(exec_in_vfork_child_refused),
	  T(exec_signals_reset),
	  T(segments_sharing_a_page), T(load_every_program),
	  T(load_a_real_program), T(other_machines_checked),
	  T(page_sizes_per_machine), T(impossible_and_unknown_machines),
	  T(other_address_spaces), T(malformed_images_any_arch),
	  T(interp_padding), T(ppc64_elfv1_descriptor),
	  T(kinds_of_files), T(kind_and_flags_errors),
	  T(exec_empty_argv), T(exec_identity), T(uses_origin),
	  T(exe_link_refused_without_capability), T(exec_layout))

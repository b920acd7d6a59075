/* SPDX-License-Identifier: MIT */
/*
 * Structs with a size field, on every call that takes one: the rule of
 * noclobber.h for options read and for results written, so that programs
 * built against one release run with the next.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ncbtest.h"
#include "elfgen.h"

#define TAIL 24			/* bytes a later release might add */
#define BIG 512			/* larger than any struct here */

/* One call with a result struct, in a form the checks can repeat. */
typedef int (*out_fn)(void *out, void *ctx);

static unsigned char buf[BIG + TAIL];

static void set_size(size_t size)
{
	memcpy(buf, &size, sizeof(size));
}

static size_t get_size(void)
{
	size_t size;

	memcpy(&size, buf, sizeof(size));
	return size;
}

/*
 * Too small (below the 1.0 struct): EINVAL and nothing written.  Exact:
 * written, size kept.  A later release's larger struct: written as far as
 * this library knows, size brought down to that, the rest untouched.
 */
static void check_out(const char *what, out_fn fn, void *ctx, size_t ours,
		      size_t floor, int want)
{
	size_t i;
	int ret;

	memset(buf, 0xee, sizeof(buf));
	set_size(floor - 1);
	ret = fn(buf, ctx);
	if (ret != -EINVAL)
		FAIL("%s: size %zu below the floor %zu: %d", what, floor - 1,
		     floor, ret);
	for (i = sizeof(size_t); i < sizeof(buf); i++)
		if (buf[i] != 0xee)
			FAIL("%s: byte %zu written by a refused call", what, i);
	set_size(0);
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	ASSERT_EQ(fn(NULL, ctx), -EINVAL);

	memset(buf, 0xee, sizeof(buf));
	set_size(ours);
	ASSERT_EQ(fn(buf, ctx), want);
	ASSERT_UEQ(get_size(), ours);
	ASSERT_EQ(buf[ours], 0xee);

	memset(buf, 0xee, sizeof(buf));
	set_size(ours + TAIL);
	ret = fn(buf, ctx);
	if (ret != want)
		FAIL("%s: a later release's struct: %d, wanted %d", what, ret,
		     want);
	ASSERT_UEQ(get_size(), ours);
	for (i = ours; i < ours + TAIL; i++)
		if (buf[i] != 0xee)
			FAIL("%s: byte %zu past this library's struct "
			     "written", what, i);
	printf("# %s: sizes below %zu refused, %zu and larger written as "
	       "far as %zu\n", what, floor, ours, ours);
}

/* One call with an options struct; 0 on success (undone by the call). */
typedef int (*opts_fn)(const void *opts, void *ctx);

/*
 * NULL and the exact struct: accepted.  Too small: EINVAL.  A later
 * release's struct: accepted if what this library does not know is zero,
 * EINVAL if any of it is set (an option it cannot honour).
 */
static void check_opts(const char *what, opts_fn fn, void *ctx,
		       size_t ours, size_t floor)
{
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(fn(NULL, ctx), 0);
	set_size(ours);
	ASSERT_EQ(fn(buf, ctx), 0);
	set_size(floor - 1);
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	set_size(0);
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	set_size(ours + TAIL);
	ASSERT_EQ(fn(buf, ctx), 0);
	buf[ours + TAIL - 1] = 1;
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	buf[ours + TAIL - 1] = 0;
	buf[ours] = 0x80;
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	buf[ours] = 0;
	/* Absurd sizes: refused without reading past the struct. */
	set_size(SIZE_MAX);
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	set_size(ours + 4097);
	ASSERT_EQ(fn(buf, ctx), -EINVAL);
	printf("# %s: NULL, %zu and a larger zero tail accepted; below %zu "
	       "or a set tail refused\n", what, ours, floor);
}

static int probe_out(void *out, void *ctx)
{
	(void)ctx;
	return ncb_kernel_probe(out);
}

static int identity_out(void *out, void *ctx)
{
	(void)ctx;
	return ncb_exec_identity(out);
}

TEST(process_results)
{
	check_out("ncb_kernel_probe", probe_out, NULL,
		  sizeof(struct ncb_probe),
		  NCB__END(ncb_probe, mmap_min_addr), 0);
	check_out("ncb_exec_identity", identity_out, NULL,
		  sizeof(struct ncb_exec_identity),
		  NCB__END(ncb_exec_identity, exe), 0);
}

static int maps_next_out(void *out, void *ctx)
{
	struct ncb_maps *m = ctx;

	/* From the first mapping each time: there always is one. */
	ASSERT_EQ(ncb_maps_seek(m, 0), 0);
	return ncb_maps_next(m, out);
}

static int maps_find_out(void *out, void *ctx)
{
	return ncb_maps_find(ctx, (uintptr_t)&buf, out);
}

static int as_find_out(void *out, void *ctx)
{
	return ncb_as_find(ctx, 0x10000, out);
}

/* And the callback's mapping carries the library's own size. */
static int callback_size(const struct ncb_mapping *m, void *arg)
{
	*(size_t *)arg = m->size;
	return 1;
}

TEST(mappings)
{
	static const char text[] = "00010000-00020000 r--p 00000000 "
				   "00:00 0\n";
	size_t ours = sizeof(struct ncb_mapping);
	size_t floor = NCB__END(ncb_mapping, path), seen = 0;
	struct ncb_maps *m;
	struct ncb_as *as;

	ASSERT_EQ(ncb_maps_open(&m, 0), 0);
	check_out("ncb_maps_next", maps_next_out, m, ours, floor, 1);
	check_out("ncb_maps_find", maps_find_out, m, ours, floor, 1);
	ncb_maps_close(m);
	ASSERT_EQ(ncb__maps_open_text(&m, 0), 0);
	check_out("ncb_maps_next (text)", maps_next_out, m, ours, floor, 1);
	ncb_maps_close(m);
	ASSERT_EQ(ncb_as_new(&as, NULL), 0);
	ASSERT_EQ(ncb_as_load(as, text, sizeof(text) - 1), 0);
	check_out("ncb_as_find", as_find_out, as, ours, floor, 1);
	ncb_as_free(as);
	ASSERT_EQ(ncb_maps_occupants(0, &buf, 1, callback_size, &seen), 1);
	ASSERT_UEQ(seen, ours);
}

static int resv_opts(const void *opts, void *ctx)
{
	struct ncb_resv *r;
	int err;

	(void)ctx;
	err = ncb_resv_new(&r, NULL, 1 << 16, opts);
	if (!err)
		ASSERT_EQ(ncb_resv_release(r), 0);
	return err;
}

static int as_opts(const void *opts, void *ctx)
{
	struct ncb_as *as;
	int err;

	(void)ctx;
	err = ncb_as_new(&as, opts);
	if (!err)
		ncb_as_free(as);
	return err;
}

TEST(options)
{
	check_opts("ncb_resv_new", resv_opts, NULL,
		   sizeof(struct ncb_resv_opts),
		   NCB__END(ncb_resv_opts, place));
	check_opts("ncb_as_new", as_opts, NULL, sizeof(struct ncb_as_opts),
		   NCB__END(ncb_as_opts, brk));
}

/* A small image of this machine's, in a file of its own. */
static struct ncb_elf *open_image(char *path)
{
	static struct gen g;
	struct ncb_elf *e;
	char why[256];
	int fd;

	gen_base(&g);
	strcpy(path, "/tmp/ncb-sized-XXXXXX");
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, g.buf, g.len), (ssize_t)g.len);
	close(fd);
	if (ncb_elf_open(&e, path, why, sizeof(why)))
		FAIL("the generated image: %s", why);
	return e;
}

static int info_out(void *out, void *ctx)
{
	return ncb_elf_info(ctx, out);
}

static int arch_out(void *out, void *ctx)
{
	return ncb_elf_arch(ctx, out);
}

static int seg_out(void *out, void *ctx)
{
	return ncb_elf_segment(ctx, 0, out);
}

static int layout_out(void *out, void *ctx)
{
	return ncb_exec_layout(ctx, out);
}

static int load_out(void *out, void *ctx)
{
	int err = ncb_elf_load(ctx, NULL, out, NULL, 0);

	if (!err)
		ASSERT_EQ(ncb_elf_unload(out), 0);
	return err;
}

static int load_opts(const void *opts, void *ctx)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	int err = ncb_elf_load(ctx, opts, &img, NULL, 0);

	if (!err)
		ASSERT_EQ(ncb_elf_unload(&img), 0);
	return err;
}

static int exec_opts(const void *opts, void *ctx)
{
	static char *const argv[] = { "x", NULL };
	char why[256];
	int err;

	/*
	 * A directory cannot be run: options accepted means the check
	 * after them answers (EACCES), refused means EINVAL first.
	 */
	err = ncb_exec(ctx, argv, argv + 1, opts, why, sizeof(why));
	return err == -EACCES ? 0 : err;
}

TEST(images)
{
	struct ncb_elf_image img = NCB_INIT(ncb_elf_image);
	char path[64];
	struct ncb_elf *e = open_image(path);

	check_out("ncb_elf_info", info_out, e, sizeof(struct ncb_elf_info),
		  NCB__END(ncb_elf_info, exec_stack), 0);
	check_out("ncb_elf_arch", arch_out, e, sizeof(struct ncb_elf_arch),
		  NCB__END(ncb_elf_arch, page_fit), 0);
	check_out("ncb_elf_segment", seg_out, e, sizeof(struct ncb_elf_seg),
		  NCB__END(ncb_elf_seg, prot), 0);
	check_out("ncb_exec_layout", layout_out, e,
		  sizeof(struct ncb_exec_layout),
		  NCB__END(ncb_exec_layout, brk), 0);
	check_out("ncb_elf_load", load_out, e, sizeof(struct ncb_elf_image),
		  NCB__END(ncb_elf_image, resv), 0);
	check_opts("ncb_elf_load", load_opts, e,
		   sizeof(struct ncb_elf_load_opts),
		   NCB__END(ncb_elf_load_opts, base));
	/* Unloading reads the image: its size must reach the floor too. */
	ASSERT_EQ(ncb_elf_load(e, NULL, &img, NULL, 0), 0);
	img.size = sizeof(size_t);
	ASSERT_EQ(ncb_elf_unload(&img), -EINVAL);
	img.size = sizeof(img);
	ASSERT_EQ(ncb_elf_unload(&img), 0);
	ncb_elf_close(e);
	unlink(path);
}

TEST(exec_options)
{
#ifndef NCB_ARCH_HANDOVER
	SKIP("this build has no process-entry stub for its architecture");
#endif
	check_opts("ncb_exec", exec_opts, "/", sizeof(struct ncb_exec_opts),
		   NCB__END(ncb_exec_opts, exe));
}

/* The initializer: size set, the named fields set, the rest zero. */
TEST(initializer)
{
	struct ncb_resv_opts o = NCB_INIT(ncb_resv_opts, .align = 1 << 21,
					  .place = NCB_PLACE_HIGHEST);
	struct ncb_mapping m = NCB_INIT(ncb_mapping);

	ASSERT_UEQ(o.size, sizeof(o));
	ASSERT_UEQ(o.align, 1 << 21);
	ASSERT_EQ(o.place, NCB_PLACE_HIGHEST);
	ASSERT_UEQ(o.lo, 0);
	ASSERT_UEQ(o.hi, 0);
	ASSERT_UEQ(m.size, sizeof(m));
	ASSERT_UEQ(m.start, 0);
	ASSERT_TRUE(m.path == NULL);
	ASSERT_UEQ(ncb_version(), NCB_VERSION);
	ASSERT_UEQ(NCB_VERSION, NCB_MAKE_VERSION(NCB_VERSION_MAJOR,
						 NCB_VERSION_MINOR,
						 NCB_VERSION_PATCH));
}

TEST_MAIN(T(process_results), T(mappings), T(options), T(images),
	  T(exec_options), T(initializer))

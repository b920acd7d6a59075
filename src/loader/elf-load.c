/* SPDX-License-Identifier: MIT */
/*
 * Loading an ELF image without clobbering anything: one no-clobber
 * reservation for the whole span (at the ET_EXEC's own address, or where
 * asked, or anywhere suitably aligned for ET_DYN), then each segment mapped
 * with MAP_FIXED inside it, as musl's map_library and glibc's
 * _dl_map_segments do and as the kernel's loader does since Linux 4.17.
 * Holes between segments stay reserved (PROT_NONE).  Segments that share a
 * page (the layout the 4.17 loader broke on) are handled: a later segment
 * with file bytes takes the page as the kernel gives it, an earlier
 * segment's zeroed tail is zeroed again, and a later segment without file
 * bytes zeroes its part of the page instead of replacing it.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loader.h"

typedef unsigned long long ull;

/* Zero [from, to) inside one page, leaving the page with prot. */
static int zero_in_page(uint64_t from, uint64_t to, int prot, uint64_t pg)
{
	void *page = (void *)(uintptr_t)(from & ~(pg - 1));

	if (from >= to)
		return 0;
	if (!(prot & PROT_WRITE) &&
	    mprotect(page, pg, prot | PROT_READ | PROT_WRITE))
		return -errno;
	memset((void *)(uintptr_t)from, 0, (size_t)(to - from));
	if (!(prot & PROT_WRITE) && mprotect(page, pg, prot))
		return -errno;
	return 0;
}

struct seg_ctx {
	uint64_t pg;
	uint64_t bias;
	uint64_t prev_page_end;	/* end of the previous segment's pages */
	int prev_prot;
};

/*
 * File bytes then bss in one page: the pages map from the file, and the
 * rest of the last one is zeroed, as the kernel's padzero leaves it (ld.so's
 * first allocations live there and expect zeroes): a private copy of that
 * page, still the file's mapping in /proc/PID/maps, as under execve.  A
 * segment that is not writable keeps the file's bytes there: elf_load
 * ignores padzero's failure on such a page (fs/binfmt_elf.c, 6.7 and
 * later; before, the bss that set the break failed the exec).  A file
 * cut short since it was checked gives an error, not a SIGBUS.
 */
static int map_with_tail(const struct ncb_elf *e, const struct ncb__phdr *p,
			 uint64_t start, uint64_t fend, int prot, uint64_t pg)
{
	uint64_t end = (fend + pg - 1) & ~(pg - 1);
	uint64_t off = p->p_offset & ~(pg - 1);
	struct stat st;

	if (fstat(e->fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < off + (fend - start))
		return -EIO;
	if (mmap((void *)(uintptr_t)start, end - start, prot,
		 MAP_PRIVATE | MAP_FIXED, e->fd, (off_t)off) == MAP_FAILED)
		return -errno;
	if (!(prot & PROT_WRITE))
		return 0;
	return zero_in_page(fend, end, prot, pg);
}

static int map_segment(const struct ncb_elf *e, const struct ncb__phdr *p,
		       struct seg_ctx *c)
{
	uint64_t pg = c->pg, addr = p->p_vaddr + c->bias;
	uint64_t start = addr & ~(pg - 1), fend = addr + p->p_filesz;
	uint64_t mend = addr + p->p_memsz, fpage = (fend + pg - 1) & ~(pg - 1);
	uint64_t mpage = (mend + pg - 1) & ~(pg - 1);
	int prot = ncb__elf_prot(p->p_flags);
	int err;

	if (p->p_filesz && p->p_memsz > p->p_filesz && (fend & (pg - 1))) {
		err = map_with_tail(e, p, start, fend, prot, pg);
		if (err)
			return err;
	} else if (p->p_filesz) {
		/* MAP_FIXED is safe here: the span is ours alone. */
		if (mmap((void *)(uintptr_t)start, fpage - start, prot,
			 MAP_PRIVATE | MAP_FIXED, e->fd,
			 (off_t)(p->p_offset & ~(pg - 1))) == MAP_FAILED)
			return -errno;
	} else if (start < c->prev_page_end && p->p_memsz) {
		/* A page shared with the segment before: zero our part. */
		fpage = c->prev_page_end;
		prot |= c->prev_prot;
		if (mprotect((void *)(uintptr_t)start, pg, prot))
			return -errno;
		err = zero_in_page(addr, mend < fpage ? mend : fpage, prot,
				   pg);
		if (err)
			return err;
	} else {
		fpage = start;
	}
	if (mpage > fpage &&
	    mmap((void *)(uintptr_t)fpage, mpage - fpage, prot,
		 MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return -errno;
	c->prev_page_end = mpage > fpage ? mpage : fpage;
	c->prev_prot = prot;
	return 0;
}

/* A later segment's file page over an earlier one's bss: zero it again. */
static int rezero(const struct ncb_elf *e, unsigned int i,
		  const struct seg_ctx *c)
{
	const struct ncb__phdr *p = &e->ph[e->load[i]], *n;
	uint64_t pg = c->pg, fend, mend, fpage;
	int prot;

	if (i + 1 >= e->nload || p->p_memsz <= p->p_filesz || !p->p_filesz)
		return 0;
	n = &e->ph[e->load[i + 1]];
	fend = p->p_vaddr + c->bias + p->p_filesz;
	mend = p->p_vaddr + c->bias + p->p_memsz;
	fpage = (fend + pg - 1) & ~(pg - 1);
	if (!n->p_filesz || ((n->p_vaddr + c->bias) & ~(pg - 1)) >= fpage)
		return 0;
	/* Up to where the next segment's bytes begin. */
	if (fpage > n->p_vaddr + c->bias)
		fpage = n->p_vaddr + c->bias;
	prot = ncb__elf_prot(n->p_flags);
	return zero_in_page(fend, mend < fpage ? mend : fpage, prot, pg);
}

struct occupant {
	uint64_t start;
	uint64_t end;
	char path[128];
};

static int first_occupant(const struct ncb_mapping *m, void *arg)
{
	struct occupant *o = arg;

	o->start = m->start;
	o->end = m->end;
	/* The path lives in the reader's buffer only during the call. */
	snprintf(o->path, sizeof(o->path), "%s", *m->path ? m->path
							  : "(anonymous)");
	return 1;
}

/*
 * Reserve the span; on a collision, name what is in the way.  Anywhere
 * (elsewhere): even an ET_EXEC image, for ncb__elf_load_elsewhere.
 */
static int reserve_span(const struct ncb_elf *e, uint64_t base, int elsewhere,
			struct ncb_resv **resv, char *why, size_t wl)
{
	struct ncb_resv_opts o = { .size = sizeof(o) };
	uint64_t len = e->hi - e->lo, addr = 0;
	struct occupant occ = { 0, 0, "(unknown)" };
	int err;

	if (elsewhere) {
		o.align = (size_t)(e->align < (1ULL << 30) ? e->align
							  : 1ULL << 30);
	} else if (e->eh.e_type == ET_EXEC) {
		if (base && base != e->lo)
			return ncb__why(why, wl, EINVAL, "an ET_EXEC image "
					"loads only at its link address "
					"%#llx", (ull)e->lo);
		addr = e->lo;
	} else if (base) {
		if (base & (ncb__probe()->page_size - 1))
			return ncb__why(why, wl, EINVAL, "base %#llx is not "
					"page-aligned", (ull)base);
		addr = base;
	} else {
		/* Large alignments let the kernel use huge pages for text. */
		o.align = (size_t)(e->align < (1ULL << 30) ? e->align
							  : 1ULL << 30);
	}
	err = ncb_resv_new(resv, (void *)(uintptr_t)addr, (size_t)len,
			   addr ? NULL : &o);
	if (!err)
		return 0;
	if (err != -EEXIST || !addr)
		return ncb__why(why, wl, -err, "cannot reserve %#llx bytes%s: "
				"%s", (ull)len, addr ? " at its address" : "",
				strerror(-err));
	err = ncb_maps_occupants(0, (void *)(uintptr_t)addr, (size_t)len,
				 first_occupant, &occ);
	if (err < 0)
		return ncb__why(why, wl, EEXIST, "span %#llx-%#llx is taken "
				"(the maps, to say by what: %s)", (ull)addr,
				(ull)(addr + len), strerror(-err));
	return ncb__why(why, wl, EEXIST, "span %#llx-%#llx is taken: "
			"%#llx-%#llx %s is there", (ull)addr,
			(ull)(addr + len), (ull)occ.start, (ull)occ.end,
			occ.path);
}

static int load(struct ncb_elf *e, uint64_t base, int elsewhere,
		struct ncb_elf_image *img, char *why, size_t wl)
{
	struct ncb_elf_image r = NCB_INIT(ncb_elf_image);
	struct seg_ctx c = { 0 };
	struct ncb_resv *resv;
	unsigned int i;
	int err;

	if (!e->native)
		return ncb__elf_foreign(e, why, wl);
	if (e->fd < 0)
		return ncb__why(why, wl, EBADF, "an image parsed from memory "
				"has no file to map");
	err = reserve_span(e, base, elsewhere, &resv, why, wl);
	if (err)
		return err;
	c.pg = ncb__probe()->page_size;
	c.bias = (uint64_t)(uintptr_t)ncb_resv_addr(resv) - e->lo;
	for (i = 0; i < e->nload; i++) {
		err = map_segment(e, &e->ph[e->load[i]], &c);
		if (!err && i)
			err = rezero(e, i - 1, &c);
		if (err) {
			/* Undo everything: the span goes back as it was. */
			ncb_resv_release(resv);
			return ncb__why(why, wl, -err, "segment %u: %s",
					e->load[i], strerror(-err));
		}
	}
	r.bias = c.bias;
	r.start = e->lo + c.bias;
	r.end = e->hi + c.bias;
	r.entry = e->eh.e_entry + c.bias;
	r.phdr = e->phdr ? e->phdr + c.bias : 0;
	r.brk = r.end;
	r.resv = resv;
	ncb__out(img, &r, sizeof(r));
	return 0;
}

int ncb_elf_load(struct ncb_elf *e, const struct ncb_elf_load_opts *opts,
		 struct ncb_elf_image *img, char *why, size_t wl)
{
	struct ncb_elf_load_opts o;

	if (why && wl)
		why[0] = '\0';
	if (!e || ncb__out_size(img, NCB__END(ncb_elf_image, resv)))
		return ncb__why(why, wl, EINVAL, "no image given");
	if (ncb__opts_in(&o, sizeof(o), opts,
			 NCB__END(ncb_elf_load_opts, base)))
		return ncb__why(why, wl, EINVAL, "options of a size or with "
				"fields this library does not know");
	return load(e, o.base, 0, img, why, wl);
}

int ncb__elf_load_elsewhere(struct ncb_elf *e, struct ncb_elf_image *img,
			    char *why, size_t wl)
{
	return load(e, 0, 1, img, why, wl);
}

int ncb_elf_unload(struct ncb_elf_image *img)
{
	int err;

	if (ncb__out_size(img, NCB__END(ncb_elf_image, resv)) || !img->resv)
		return -EINVAL;
	err = ncb_resv_release(img->resv);
	img->resv = NULL;
	return err;
}

/* SPDX-License-Identifier: MIT */
/*
 * A mapping as every subcommand shows it: its permissions and path, its
 * line as /proc/PID/maps has it, its JSON members, and the mappings that
 * occupy a range.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

/*
 * A path as /proc/PID/maps shows it: the kernel escapes '\n' as "\012"
 * (seq_file_path with "\n"), so that a mapping stays on one line.
 */
void print_path(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\012", f);
		else
			fputc(*s, f);
	}
}

void perm_string(const struct ncb_mapping *m, char buf[5])
{
	buf[0] = m->prot & PROT_READ ? 'r' : '-';
	buf[1] = m->prot & PROT_WRITE ? 'w' : '-';
	buf[2] = m->prot & PROT_EXEC ? 'x' : '-';
	buf[3] = m->shared ? 's' : 'p';
	buf[4] = '\0';
}

void print_mapping(FILE *f, const struct ncb_mapping *m)
{
	char perms[5];

	perm_string(m, perms);
	fprintf(f, "  %012" PRIx64 "-%012" PRIx64 " %s %08" PRIx64 " ",
		m->start, m->end, perms, m->offset);
	print_path(f, *m->path ? m->path : "(anonymous)");
	fputc('\n', f);
}

static int occ_text(const struct ncb_mapping *m, void *arg)
{
	print_mapping(arg, m);
	return 0;
}

static int occ_json(const struct ncb_mapping *m, void *arg)
{
	jw_mapping(arg, NULL, m);
	return 0;
}

/* The occupants of a range as indented lines: their number, or -errno. */
int print_occupants(FILE *f, pid_t pid, uint64_t addr, uint64_t len)
{
	return ncb_maps_occupants(pid, (const void *)(uintptr_t)addr,
				  (size_t)len, occ_text, f);
}

/* ... or as an array of mapping objects. */
int jw_occupants(struct jw *w, const char *key, pid_t pid, uint64_t addr,
		 uint64_t len)
{
	int ret;

	jw_open(w, key, '[');
	ret = ncb_maps_occupants(pid, (const void *)(uintptr_t)addr,
				 (size_t)len, occ_json, w);
	jw_close(w, ']');
	return ret;
}

/* A mapping's members, as /proc/PID/maps has them, in an open object. */
void jw_mapping_fields(struct jw *w, const struct ncb_mapping *m)
{
	char perms[5], dev[24];

	perm_string(m, perms);
	/* As /proc/PID/maps prints it. */
	snprintf(dev, sizeof(dev), "%02x:%02x", m->dev_major, m->dev_minor);
	jw_hex(w, "start", m->start);
	jw_hex(w, "end", m->end);
	jw_str(w, "perms", perms);
	jw_hex(w, "offset", m->offset);
	jw_str(w, "dev", dev);
	jw_int(w, "inode", (long long)m->inode);
	jw_path(w, m->path);
}

void jw_mapping(struct jw *w, const char *key, const struct ncb_mapping *m)
{
	jw_open(w, key, '{');
	jw_mapping_fields(w, m);
	jw_close(w, '}');
}

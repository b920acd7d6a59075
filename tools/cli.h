/* SPDX-License-Identifier: MIT */
#ifndef NCB_CLI_H
#define NCB_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "noclobber.h"

int cmd_probe(int argc, char **argv);
int cmd_maps(int argc, char **argv);
int cmd_who(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_free(int argc, char **argv);
int cmd_conform(int argc, char **argv);

/* Exit statuses: 0 done, 1 the operation failed, 2 usage error. */
#define EXIT_USAGE 2
/* exec's, as env(1)'s: its own failure, cannot run it, not found. */
#define EXIT_CANNOT 125
#define EXIT_NOEXEC 126
#define EXIT_NOT_FOUND 127

int parse_u64(const char *s, uint64_t *v);
int parse_json_only(int argc, char **argv, void (*usage)(FILE *f),
		    int *json);
int parse_pid(const char *s, pid_t *pid);
int parse_target(const char *s, pid_t pid, uint64_t *addr);
void fail(const char *cmd, int json, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void maps_error(const char *cmd, int json, pid_t pid, int err);

/*
 * The path of name in this program's own directory (where a build tree,
 * or a package, keeps the programs it hands over to): 0, or -errno.
 */
int beside_self(const char *name, char *out, size_t len);
/*
 * execvp's search for name: 0 with its path in out, -EACCES (found, not
 * executable), -ENOENT, -ENAMETOOLONG.
 */
int find_program(const char *name, char *out, size_t len);
const char *human(uint64_t n, int bytes, char buf[32]);
/* The first len bytes of /proc/PID/NAME: how many, or -errno. */
ssize_t proc_read(pid_t pid, const char *name, void *buf, size_t len);
/*
 * A document made whole in memory by make(f, arg), then written: never
 * half of one.  0, make's -errno, -ENOMEM, or -EIO for the write.
 */
int write_whole(FILE *out, int (*make)(FILE *f, const void *arg),
		const void *arg);

/*
 * JSON (json.c): every document is built in memory (jw_begin, members,
 * jw_end prints it whole on one line) or dropped; keys NULL in arrays.
 */
struct jw {
	FILE *f;		/* the document so far, in memory */
	char *buf;
	size_t len;
	unsigned int depth;
	uint64_t more;		/* bit d: depth d has a member already */
};

int jw_begin(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_open(struct jw *w, const char *key, char brace);
void jw_close(struct jw *w, char brace);
void jw_str(struct jw *w, const char *key, const char *s);
void jw_hex(struct jw *w, const char *key, uint64_t v);
void jw_int(struct jw *w, const char *key, long long v);
void jw_uint(struct jw *w, const char *key, unsigned long long v);
void jw_seconds(struct jw *w, const char *key, double v);
void jw_bool(struct jw *w, const char *key, int v);
void jw_null(struct jw *w, const char *key);
void jw_error(struct jw *w, const char *key, int err, const char *message);
void jw_path(struct jw *w, const char *path);
void jw_named_path(struct jw *w, const char *key, const char *path);
int jw_end(struct jw *w, FILE *out);
/* Output that could not be written: said once (print_failed). */
#define PRINT_FAILED (-0x10000)
extern int print_failed;
void print_error(const char *cmd, int err);
void jw_drop(struct jw *w);
void jw_fail(FILE *out, int err, const char *message);

/* A mapping as every command shows it (mapping.c). */
void print_path(FILE *f, const char *s);
void perm_string(const struct ncb_mapping *m, char buf[5]);
void print_mapping(FILE *f, const struct ncb_mapping *m);
void jw_mapping_fields(struct jw *w, const struct ncb_mapping *m);
void jw_mapping(struct jw *w, const char *key, const struct ncb_mapping *m);
/* The occupants of a range: indented lines, or a JSON array member. */
int print_occupants(FILE *f, pid_t pid, uint64_t addr, uint64_t len);
int jw_occupants(struct jw *w, const char *key, pid_t pid, uint64_t addr,
		 uint64_t len);

/* Memory use per mapping, from /proc/PID/smaps (smaps.c); in bytes. */
struct smaps_entry {
	uint64_t start, end;
	uint64_t rss, pss, dirty, swap;
};

struct smaps {
	struct smaps_entry *e;
	size_t n, cap;
};

int smaps_read(struct smaps *sm, pid_t pid);
const struct smaps_entry *smaps_find(const struct smaps *sm, uint64_t start,
				     uint64_t end);
void smaps_free(struct smaps *sm);

#endif

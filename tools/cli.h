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

/* Exit statuses: 0 done, 1 the operation failed, 2 usage error. */
#define EXIT_USAGE 2

int parse_u64(const char *s, uint64_t *v);
int parse_json_only(int argc, char **argv, void (*usage)(FILE *f),
		    int *json);
int parse_pid(const char *s, pid_t *pid);
int parse_target(const char *s, pid_t pid, uint64_t *addr);
void maps_error(pid_t pid, int err);
void json_string(FILE *f, const char *s);
void print_path(FILE *f, const char *s);
void perm_string(const struct ncb_mapping *m, char buf[5]);
void print_mapping(FILE *f, const struct ncb_mapping *m);
void json_mapping(FILE *f, const struct ncb_mapping *m);
void json_path(FILE *f, const char *path);
int print_occupants(FILE *f, pid_t pid, uint64_t addr, uint64_t len,
		    int json);

#endif

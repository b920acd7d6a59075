/* SPDX-License-Identifier: MIT */
/*
 * The runner: each case in a process of its own (a case maps, unmaps and
 * may crash; a crash is that case's failure, and a hang is stopped by an
 * alarm), its answer judged against the rule and the running release's
 * own choices, then a table, one JSON document or TAP.  Shared by
 * `noclobber conform` and noclobber-conform.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "conform.h"

const char *const group_name[G_COUNT] = {
	"place", "overlap", "adjacent", "hint", "errno", "mremap", "shm",
	"fixed", "race", "process",
};

/* A case's outcome, in the order the counts are printed. */
enum outcome { O_PASS, O_FAIL, O_VERSION, O_SKIP, O_COUNT };

static const char *const outcome_name[O_COUNT] = {
	"pass", "fail", "version", "skip",
};

struct result {
	const struct ccase *cc;
	enum outcome o;
	struct answer got;
	char note[200];		/* a skip's reason, a version's behaviour */
};

/* Seconds a case may take before it counts as hung (qemu, valgrind). */
#define CASE_ALARM 600

struct opts {
	int json, tap, verbose;
	const char *only[16];
	int nonly;
};

static const struct ccase *const tables[] = {
	place_cases, error_cases, move_cases, race_cases,
};

static int same_answer(enum akind k, int err, const struct answer *a)
{
	return k == A_ANY || (k == a->k && (k != A_ERR || err == a->err));
}

/* "6.18", or with its patch level "6.18.44". */
static void release_text(unsigned long r, char *buf, size_t len,
			 int patch)
{
	unsigned int a = (unsigned int)(r >> 16 & 0xff),
		     b = (unsigned int)(r >> 8 & 0xff),
		     c = (unsigned int)(r & 0xff);

	if (patch)
		snprintf(buf, len, "%u.%u.%u", a, b, c);
	else
		snprintf(buf, len, "%u.%u", a, b);
}

/* The verdict: the rule's answer, a version's own, or a failure. */
static void judge(struct result *res, unsigned long release)
{
	const struct ccase *cc = res->cc;
	const struct version *v;
	char rel[16];
	int i;

	if (same_answer(cc->want, cc->want_err, &res->got)) {
		res->o = O_PASS;
		return;
	}
	res->o = O_FAIL;
	for (i = 0; i < MAX_VERSIONS && release; i++) {
		v = &cc->v[i];
		if (!v->why || release < v->from || release >= v->to ||
		    !same_answer(v->k, v->err, &res->got))
			continue;
		release_text(release, rel, sizeof(rel), 0);
		res->o = O_VERSION;
		snprintf(res->note, sizeof(res->note), "Linux %s's "
			 "behaviour: %s", rel, v->why);
		return;
	}
}

/* The case's check in a child; its answer comes back through a pipe. */
static int run_case(struct result *res, unsigned long release)
{
	struct cctx c;
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	memset(&c, 0, sizeof(c));
	c.cc = res->cc;
	c.pg = (unsigned long)sysconf(_SC_PAGESIZE);
	c.got.k = A_BROKEN;
	snprintf(c.got.detail, sizeof(c.got.detail), "the case gave no "
		 "answer");
	if (pipe(fd))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -errno;
	}
	if (pid == 0) {
		close(fd[0]);
		c.out = fd[1];
		alarm(CASE_ALARM);
		res->cc->check(&c);
		case_end(&c);
	}
	close(fd[1]);
	n = read(fd[0], &c, sizeof(c));
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(c)) {
		c.got.k = A_BROKEN;
		if (WIFSIGNALED(st))
			snprintf(c.got.detail, sizeof(c.got.detail),
				 "the case's process died of signal %d%s",
				 WTERMSIG(st), WTERMSIG(st) == SIGALRM ?
				 " (no answer in time)" : "");
		else
			snprintf(c.got.detail, sizeof(c.got.detail),
				 "the case's process exited (status %d) "
				 "without an answer", WEXITSTATUS(st));
	}
	res->got = c.got;
	/* A case that died has no answer a version could have given. */
	if (n != sizeof(c)) {
		res->o = O_FAIL;
		return 0;
	}
	if (c.skip_why[0]) {
		res->o = O_SKIP;
		snprintf(res->note, sizeof(res->note), "%s", c.skip_why);
		return 0;
	}
	judge(res, release);
	return 0;
}

static int wanted(const struct opts *op, const struct ccase *cc)
{
	int i;

	for (i = 0; i < op->nonly; i++)
		if (!strcmp(op->only[i], group_name[cc->group]) ||
		    !strcmp(op->only[i], cc->name))
			return 1;
	return !op->nonly;
}

/* The cases asked for, in the groups' order; their number. */
static size_t select_cases(const struct opts *op, struct result *res,
			   size_t max)
{
	size_t n = 0, t;
	const struct ccase *cc;
	int g;

	for (g = 0; g < G_COUNT; g++)
		for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
			for (cc = tables[t]; cc->name; cc++)
				if (cc->group == (enum group)g &&
				    wanted(op, cc) && n < max) {
					memset(&res[n], 0, sizeof(res[n]));
					res[n++].cc = cc;
				}
	return n;
}

/* Each group's outcomes, and the total's (count[G_COUNT]). */
static void count_outcomes(const struct result *res, size_t n,
			   unsigned int count[G_COUNT + 1][O_COUNT])
{
	size_t i;

	memset(count, 0, sizeof(unsigned int[G_COUNT + 1][O_COUNT]));
	for (i = 0; i < n; i++) {
		count[res[i].cc->group][res[i].o]++;
		count[G_COUNT][res[i].o]++;
	}
}

/* Whether the group has a case in the run. */
static int group_ran(const unsigned int *count)
{
	return count[O_PASS] + count[O_FAIL] + count[O_VERSION] +
	       count[O_SKIP] > 0;
}

/* "expected EEXIST, got mapped at the address (detail)". */
static void expected_got(FILE *f, const struct result *r)
{
	char a[32], b[32];

	fprintf(f, "expected %s, got %s",
		answer_text(r->cc->want, r->cc->want_err, a, sizeof(a)),
		answer_text(r->got.k, r->got.err, b, sizeof(b)));
	if (r->got.detail[0])
		fprintf(f, " (%s)", r->got.detail);
}

static void print_table(const struct result *res, size_t n,
			const char *system, int verbose)
{
	unsigned int count[G_COUNT + 1][O_COUNT];
	size_t i;
	int g, o;

	count_outcomes(res, n, count);
	printf("%s\n\n%-10s %7s %7s %8s %8s\n", system, "group", "passed",
	       "failed", "version", "skipped");
	for (g = 0; g <= G_COUNT; g++) {
		if (g < G_COUNT && !group_ran(count[g]))
			continue;
		printf("%-10s", g < G_COUNT ? group_name[g] : "total");
		for (o = 0; o < O_COUNT; o++)
			printf(" %*u", o < 2 ? 7 : 8, count[g][o]);
		printf("\n");
	}
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		if (r->o == O_PASS && !verbose)
			continue;
		if (r->o == O_SKIP && !verbose)
			continue;
		printf("\n%-7s %s: %s\n", r->o == O_PASS ? "pass" :
		       r->o == O_FAIL ? "FAIL" : r->o == O_VERSION ?
		       "version" : "skip", r->cc->name, r->cc->rule);
		if (r->o == O_FAIL || verbose) {
			printf("        ");
			expected_got(stdout, r);
			printf("\n        [%s]\n", r->cc->source);
		}
		if (r->note[0])
			printf("        %s\n", r->note);
	}
	printf("\n%s (%u failed of %zu)\n", count[G_COUNT][O_FAIL] ?
	       "not conformant" : "conformant", count[G_COUNT][O_FAIL], n);
}

static void print_tap(const struct result *res, size_t n, const char *system)
{
	size_t i;

	printf("# %s\n1..%zu\n", system, n);
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		printf("%s %zu - %s: %s", r->o == O_FAIL ? "not ok" : "ok",
		       i + 1, r->cc->name, r->cc->rule);
		if (r->o == O_SKIP)
			printf(" # SKIP %s", r->note);
		printf("\n");
		if (r->o == O_FAIL) {
			printf("# ");
			expected_got(stdout, r);
			printf(" [%s]\n", r->cc->source);
		}
		if (r->o == O_VERSION)
			printf("# %s\n", r->note);
	}
}

static void jw_counts(struct jw *w, const unsigned int *count)
{
	jw_uint(w, "passed", count[O_PASS]);
	jw_uint(w, "failed", count[O_FAIL]);
	jw_uint(w, "versions", count[O_VERSION]);
	jw_uint(w, "skipped", count[O_SKIP]);
}

static void jw_case(struct jw *w, const struct result *r)
{
	char a[32], b[32];

	jw_open(w, NULL, '{');
	jw_str(w, "name", r->cc->name);
	jw_str(w, "group", group_name[r->cc->group]);
	jw_str(w, "rule", r->cc->rule);
	jw_str(w, "source", r->cc->source);
	jw_str(w, "outcome", outcome_name[r->o]);
	jw_str(w, "expected", answer_text(r->cc->want, r->cc->want_err, a,
					  sizeof(a)));
	if (r->o == O_SKIP) {
		jw_null(w, "got");
		jw_null(w, "detail");
	} else {
		jw_str(w, "got", answer_text(r->got.k, r->got.err, b,
					     sizeof(b)));
		jw_str(w, "detail", r->got.detail[0] ? r->got.detail : NULL);
	}
	jw_str(w, "note", r->note[0] ? r->note : NULL);
	jw_close(w, '}');
}

static int print_json(const struct result *res, size_t n,
		      const struct utsname *u, unsigned long release)
{
	unsigned int count[G_COUNT + 1][O_COUNT];
	char rel[16];
	struct jw w;
	size_t i;
	int g, err;

	count_outcomes(res, n, count);
	err = jw_begin(&w);
	if (err)
		return err;
	release_text(release, rel, sizeof(rel), 1);
	jw_str(&w, "kernel", u->release);
	jw_str(&w, "release", release ? rel : NULL);
	jw_str(&w, "machine", u->machine);
	jw_bool(&w, "conformant", !count[G_COUNT][O_FAIL]);
	jw_counts(&w, count[G_COUNT]);
	jw_open(&w, "groups", '[');
	for (g = 0; g < G_COUNT; g++) {
		if (!group_ran(count[g]))
			continue;
		jw_open(&w, NULL, '{');
		jw_str(&w, "group", group_name[g]);
		jw_counts(&w, count[g]);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_open(&w, "cases", '[');
	for (i = 0; i < n; i++)
		jw_case(&w, &res[i]);
	jw_close(&w, ']');
	return jw_end(&w, stdout);
}

static void usage(FILE *f, const char *prog)
{
	int g;

	fprintf(f, "usage: %s [--json | --tap] [--only GROUP|CASE]... [-v]\n"
		"       %s --list\n\n"
		"Puts mmap's fixed-placement rules (MAP_FIXED_NOREPLACE, "
		"MAP_FIXED,\nMREMAP_FIXED, SHM_REMAP) to this kernel, "
		"emulator or sandbox, each\ncase with the kernel's rule as "
		"its oracle.  A release's own choice\nis reported as that "
		"version's behaviour, not as a failure.  Exit\nstatus: 0 "
		"conformant, 1 not, 2 an error.\n\ngroups:", prog, prog);
	for (g = 0; g < G_COUNT; g++)
		fprintf(f, " %s", group_name[g]);
	fprintf(f, "\n");
}

/* Every case: name, group, rule, source; one a line, tab-separated. */
static void list(void)
{
	struct opts none = { 0 };
	struct result res[128];
	size_t n = select_cases(&none, res, 128), i;

	for (i = 0; i < n; i++)
		printf("%s\t%s\t%s\t%s\n", res[i].cc->name,
		       group_name[res[i].cc->group], res[i].cc->rule,
		       res[i].cc->source);
}

/* The options into op: -1 to go on, else the exit status. */
static int options(int argc, char **argv, const char *prog,
		   struct opts *op)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "tap", no_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			op->json = 1;
			break;
		case 't':
			op->tap = 1;
			break;
		case 'o':
			if (op->nonly == 16) {
				fprintf(stderr, "%s: at most 16 --only\n",
					prog);
				return 2;
			}
			op->only[op->nonly++] = optarg;
			break;
		case 'v':
			op->verbose = 1;
			break;
		case 'l':
			list();
			return 0;
		case 'h':
			usage(stdout, prog);
			return 0;
		default:
			usage(stderr, prog);
			return 2;
		}
	}
	if (optind != argc || (op->json && op->tap)) {
		usage(stderr, prog);
		return 2;
	}
	return -1;
}

/* Each --only names a group or a case: a typo is no empty success. */
static int check_only(const struct opts *op, const char *prog)
{
	struct opts one = { 0 };
	struct result res[128];
	int i;

	for (i = 0; i < op->nonly; i++) {
		one.only[0] = op->only[i];
		one.nonly = 1;
		if (!select_cases(&one, res, 128)) {
			fprintf(stderr, "%s: no group or case '%s' (--list "
				"names them)\n", prog, op->only[i]);
			return -1;
		}
	}
	return 0;
}

int conform_main(int argc, char **argv, const char *prog)
{
	struct opts op = { 0 };
	struct result res[128];
	struct utsname u;
	unsigned long release;
	char system[400], rel[16];
	size_t n, i;
	int st, err, fails = 0;

	st = options(argc, argv, prog, &op);
	if (st >= 0)
		return st;
	if (check_only(&op, prog))
		return 2;
	if (uname(&u))
		strcpy(u.release, "unknown");
	release = kernel_release();
	n = select_cases(&op, res, 128);
	for (i = 0; i < n; i++) {
		err = run_case(&res[i], release);
		if (err) {
			fprintf(stderr, "%s: %s: cannot run it: %s\n", prog,
				res[i].cc->name, strerror(-err));
			return 2;
		}
		fails += res[i].o == O_FAIL;
	}
	release_text(release, rel, sizeof(rel), 1);
	snprintf(system, sizeof(system), "Linux %s %s (release %s): %zu "
		 "cases", u.release, u.machine, release ? rel : "unknown", n);
	if (op.json) {
		err = print_json(res, n, &u, release);
		if (err) {
			print_error("conform", err);
			return 2;
		}
	} else if (op.tap) {
		print_tap(res, n, system);
	} else {
		print_table(res, n, system, op.verbose);
	}
	return fails ? 1 : 0;
}

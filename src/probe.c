/* SPDX-License-Identifier: MIT */
/*
 * What does the running kernel do with MAP_FIXED_NOREPLACE?  Decided by
 * experiment (the core's), never from headers or version numbers:
 * emulators (qemu-user, valgrind) run on new kernels yet ignore the flag,
 * and distribution kernels backport fixes.  Every experiment happens
 * inside memory the probe mapped itself, so probing never disturbs
 * anything else in the process.  And small readers of /proc.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

static struct ncb_probe probe_result;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

ssize_t ncb__read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

unsigned long ncb__read_ulong(const char *path, unsigned long dflt)
{
	char buf[32];

	if (ncb__read_small(path, buf, sizeof(buf)) <= 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return dflt;
	return strtoul(buf, NULL, 10);
}

/* The core's experiments (core.c), gathered for ncb_kernel_probe. */
static void run_probe(void)
{
	probe_result.size = sizeof(probe_result);
	probe_result.page_size = ncb_core_page_size();
	probe_result.mmap_min_addr = ncb_core_mmap_min_addr();
	probe_result.noreplace = ncb_core_probe();
	probe_result.procmap_query = ncb_core_procmap_query();
}

const struct ncb_probe *ncb__probe(void)
{
	(void)pthread_once(&probe_once, run_probe);
	return &probe_result;
}

int ncb_kernel_probe(struct ncb_probe *probe)
{
	int err = ncb__out_size(probe, NCB__END(ncb_probe, mmap_min_addr));

	if (!err)
		ncb__out(probe, ncb__probe(), sizeof(*probe));
	return err;
}

unsigned int ncb_version(void)
{
	return NCB_VERSION;
}

const char *ncb_noreplace_name(int noreplace)
{
	switch (noreplace) {
	case NCB_NOREPLACE_HONOURED:
		return "honoured";
	case NCB_NOREPLACE_IGNORED:
		return "ignored";
	case NCB_NOREPLACE_PARTIAL:
		return "partial";
	case NCB_NOREPLACE_REJECTED:
		return "rejected";
	case NCB_NOREPLACE_REPLACES:
		return "replaces";
	}
	return "unknown";
}

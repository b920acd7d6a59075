/* SPDX-License-Identifier: MIT */
/*
 * A program that starts a thread and only then loads the library
 * (dlopen): ncb_exec must still refuse, as the thread would run on in the
 * new program.  Usage: late LIBRARY; exit 0 if refused with EBUSY.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

typedef int exec_fn(const char *, char *const[], char *const[],
		    const void *, char *, size_t);

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	char *args[] = { "false", NULL }, why[256];
	pthread_t t;
	exec_fn *exec;
	void *lib;
	int err;

	if (argc != 2 || pthread_create(&t, NULL, sleeper, NULL))
		return 2;
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "late: %s\n", dlerror());
		return 2;
	}
	*(void **)&exec = dlsym(lib, "ncb_exec");
	if (!exec)
		return 2;
	err = exec("/bin/false", args, NULL, NULL, why, sizeof(why));
	printf("%d %s\n", err, why);
	return err == -EBUSY ? 0 : 1;
}

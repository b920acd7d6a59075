/* SPDX-License-Identifier: MIT */
/*
 * The marker a test program arms tests/ncb-emu's fault injection with
 * (--faults=PERCENT): prctl's option, an unknown one, so that on a
 * kernel alone the call changes nothing and fails with EINVAL (qemu-user
 * passes an option it does not know to the kernel; it takes any madvise
 * as done).
 */
#ifndef NCB_TEST_FAULTS_H
#define NCB_TEST_FAULTS_H

#include <sys/syscall.h>
#include <unistd.h>

#define NCB_FAULTS_OFF 0x6e630000	/* "nc" 0 */
#define NCB_FAULTS_ON 0x6e630001

/* 1 if faults are injected into this thread from now on, else 0. */
static inline int test_faults(int on)
{
	return syscall(SYS_prctl, on ? NCB_FAULTS_ON : NCB_FAULTS_OFF, 0, 0,
		       0, 0) == 0;
}

#endif

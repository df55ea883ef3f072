// SPDX-License-Identifier: GPL-2.0
/*
 * getppid() N times on CPU 0; prints the nanoseconds per call. Under QEMU
 * with -icount shift=0 a guest nanosecond is one instruction, so this is an
 * instruction count per call (../shared/reference/performance.md).
 * getppid() takes no argument; the call passes a string in %rdi anyway,
 * for the `ustring` row of the benchmark (+0(+112(%di)):ustring).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char msg[] = "a user string for the ustring row";

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	struct timespec a, b;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (long i = 0; i < 1000; i++)
		syscall(SYS_getppid, msg);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid, msg);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}

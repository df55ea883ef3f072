// SPDX-License-Identifier: GPL-2.0
/*
 * timed_write FILE < LINES: reads LINES whole, then writes them to FILE
 * (opened O_WRONLY|O_APPEND, so that nothing defined before is removed)
 * in one write() on CPU 0, and prints the nanoseconds the write took, or
 * "error ERRNO" when it fails. Under QEMU with -icount shift=0 a guest
 * nanosecond is one instruction, so this is the instruction count of
 * defining what LINES defines (guest/bench_create.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	struct timespec a, b;
	cpu_set_t set;
	ssize_t r;
	int fd;

	if (argc != 2 || !buf)
		return 2;
	while ((r = read(0, buf + len, cap - len)) > 0) {
		len += r;
		if (len == cap && !(buf = realloc(buf, cap *= 2)))
			return 2;
	}
	fd = open(argv[1], O_WRONLY | O_APPEND);
	if (fd < 0 || r < 0) {
		perror(argv[1]);
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = write(fd, buf, len);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (r != (ssize_t)len) {
		printf("error %d\n", r < 0 ? errno : 0);
		return 1;
	}
	printf("%.0f\n", (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec));
	return 0;
}

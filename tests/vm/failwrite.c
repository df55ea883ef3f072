// SPDX-License-Identifier: GPL-2.0
/*
 * failwrite: one write (or one open with O_TRUNC) with the N-th slab
 * allocation of this thread failed by the kernel's fault injection
 * (/proc/thread-self/fail-nth; failslab must not ignore sleeping
 * allocations: echo N > /sys/kernel/debug/failslab/ignore-gfp-wait).
 *
 *   failwrite N FILE TEXT     open FILE O_WRONLY|O_APPEND, then write TEXT
 *                             (a newline added) with the N-th allocation failed
 *   failwrite N FILE --trunc  the open of FILE with O_WRONLY|O_TRUNC itself
 *   failwrite N FILE --write TEXT  as the first form, FILE opened with O_WRONLY
 *                             (for the files of events/)
 *
 * Prints "ret=OK" or "ret=E<errno name>", then "injected=1" when the N-th
 * allocation happened (and failed) during the operation, "injected=0" when the
 * operation made fewer than N allocations. Exit status 0 either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int nth_fd;

static void set_nth(int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%d", n);

	if (pwrite(nth_fd, b, len, 0) != len) {
		perror("fail-nth");
		exit(2);
	}
}

static int get_nth(void)
{
	char b[16] = "";

	if (pread(nth_fd, b, sizeof(b) - 1, 0) < 0) {
		perror("fail-nth");
		exit(2);
	}
	return atoi(b);
}

static const char *ename(int e)
{
	switch (e) {
	case ENOMEM: return "ENOMEM";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case E2BIG: return "E2BIG";
	case EPERM: return "EPERM";
	case EFAULT: return "EFAULT";
	case ENOSPC: return "ENOSPC";
	default: {
		static char b[16];
		snprintf(b, sizeof(b), "%d", e);
		return b;
	}
	}
}

int main(int argc, char **argv)
{
	int n, fd, err = 0, injected, trunc = 0, append = 1;
	const char *text = NULL;
	char *buf;
	size_t len;

	if (argc < 4) {
		fprintf(stderr, "usage: failwrite N FILE TEXT|--trunc|--write TEXT\n");
		return 2;
	}
	n = atoi(argv[1]);
	if (!strcmp(argv[3], "--trunc"))
		trunc = 1;
	else if (!strcmp(argv[3], "--write") && argc > 4)
		append = 0, text = argv[4];
	else
		text = argv[3];
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	if (trunc) {
		set_nth(n);
		fd = open(argv[2], O_WRONLY | O_TRUNC);
		if (fd < 0)
			err = errno;
		injected = n > 0 && get_nth() == 0;
		set_nth(0);
		if (fd >= 0)
			close(fd);
	} else {
		len = strlen(text);
		buf = malloc(len + 2);
		memcpy(buf, text, len);
		buf[len++] = '\n';
		fd = open(argv[2], O_WRONLY | (append ? O_APPEND : 0));
		if (fd < 0) {
			perror(argv[2]);
			return 2;
		}
		set_nth(n);
		if (write(fd, buf, len) < 0)
			err = errno;
		injected = n > 0 && get_nth() == 0;
		set_nth(0);
		close(fd);
	}
	printf("ret=%s injected=%d\n", err ? ename(err) : "OK", injected);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic trigger for the client-tool tests (tests/tools/*.sh):
 * static, so that between exec and exit it makes only the system calls
 * below. `trigger N DIR` runs N rounds of:
 *   getppid()                      -> __x64_sys_getppid
 *   open("DIR/missing", O_RDONLY)  -> do_filp_open; do_sys_openat2 returns -ENOENT
 *   open("DIR/present", O_RDONLY)  -> do_filp_open, vfs_open on the dentry
 *                                     "present"; do_sys_openat2 returns 3
 *   close(3)                       -> filp_flush on that file
 * DIR/present must exist. Prints nothing; exits 0 unless a call surprises.
 * Its exec (do_open_execat) also calls do_filp_open and vfs_open once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char missing[256], present[256];
	long n;

	if (argc != 3)
		return 2;
	n = atol(argv[1]);
	snprintf(missing, sizeof(missing), "%s/missing", argv[2]);
	snprintf(present, sizeof(present), "%s/present", argv[2]);
	for (long i = 0; i < n; i++) {
		int fd;

		syscall(SYS_getppid);
		if (open(missing, O_RDONLY) >= 0)
			return 3;
		fd = open(present, O_RDONLY);
		if (fd < 0)
			return 4;
		close(fd);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * tracestate: prints what tests/vm/failslab.sh compares before and after an
 * operation, in one process (the shell pipeline it replaces cost most of the
 * test's time on the debug kernel):
 *
 *   kprobe_events, dynamic_events, "PATH VALUE" for each
 *   events/fs/<event>/enable, and the kprobes debugfs list without its
 *   addresses, sorted.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T "/sys/kernel/tracing"

static void cat(const char *path, const char *prefix)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", prefix, line);
	fclose(f);
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char path[512], line[4096], *lines[4096];
	struct dirent **ev;
	int n, i, nl = 0;
	FILE *f;

	cat(T "/kprobe_events", "");
	cat(T "/dynamic_events", "");
	n = scandir(T "/events/fs", &ev, not_dot, alphasort);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), T "/events/fs/%s/enable", ev[i]->d_name);
		f = fopen(path, "r");
		if (f) {
			if (fgets(line, sizeof(line), f))
				printf("%s %s", path, line);
			fclose(f);
		}
		free(ev[i]);
	}
	if (n > 0)
		free(ev);
	/* "ffffffff81234567  k  vfs_read+0x4 ..." without the address. */
	f = fopen("/sys/kernel/debug/kprobes/list", "r");
	while (f && nl < 4096 && fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, "0123456789abcdef");

		lines[nl++] = strdup(p + strspn(p, " "));
	}
	if (f)
		fclose(f);
	qsort(lines, nl, sizeof(lines[0]), cmp);
	for (i = 0; i < nl; i++)
		fputs(lines[i], stdout);
	return 0;
}

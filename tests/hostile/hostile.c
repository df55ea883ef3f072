// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile input for kprobe_events and dynamic_events, run in the guest by
 * scripts/hostile.sh on the `test` kernel (the module) and on the `ref`
 * kernel (C): the host compares the two outputs line by line.
 *
 *   hostile LINES OUT
 *
 * LINES holds one escaped line per line (scripts/hostile-lines.py: '\\' and
 * \xNN escapes, so NUL bytes survive). Each line is written, with '\n', in
 * ONE write() to kprobe_events, then to dynamic_events (open O_WRONLY|
 * O_APPEND, write, close). After each write the program records the answer
 * (OK or the errno name), the last error_log entry without its timestamp
 * (error_log is then cleared), the state of the sentinel probe
 * `p:hostile/keep vfs_read a=%di` defined at the start, and the listing of
 * the file written (sentinel line left out). Then it removes what the line
 * created: `-:GROUP/EVENT` to dynamic_events for every other listed event,
 * whatever its kind (kprobe, uprobe, synthetic), and puts the sentinel back
 * if the line removed it. Special cases follow the lines: megabyte writes,
 * lines without a newline, NUL bytes, a line split over write() calls, and
 * lines around the 4096-byte write buffer.
 *
 * OUT gets one line per (line, file), fields separated by tabs:
 *   INDEX FILE ANSWER SENTINEL LOG LISTING NOTES
 * INDEX is the line number in LINES (1-based) or the special case's name,
 * FILE is k (kprobe_events) or d (dynamic_events), SENTINEL is `keep`,
 * `removed` (gone after a line starting with '-' or '!') or `LOST`. LOG,
 * LISTING and NOTES are escaped: printable ASCII as is, '\\' doubled,
 * newline as \n, any other byte as \xNN. NOTES lists the cleanup: `rm
 * G/E=ANSWER` per removal, `readd=ANSWER` when the sentinel was put back,
 * `LEFTOVER` when removal left something behind (all cleared then).
 * The last line is `END <lines> <sentinel-ok|BROKEN>`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing/"
#define DYN TRACEFS "dynamic_events"
#define KPE TRACEFS "kprobe_events"
#define ELOG TRACEFS "error_log"
#define SENT_FORMAT TRACEFS "events/hostile/keep/format"
/* The first argument register, as the probes below name it. */
#if defined(__aarch64__)
#define ARG1 "%x0"
#define ARG1_FMT "%%x0"
#else
#define ARG1 "%di"
#define ARG1_FMT "%%di"
#endif
#define SENTINEL "p:hostile/keep vfs_read a=" ARG1

static const char *const files[2] = { KPE, DYN };
static const char file_tag[2] = { 'k', 'd' };

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t len, cap;
};

static void die(const char *what)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void reserve(struct buf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	while (b->len + more + 1 > b->cap)
		b->cap = b->cap ? 2 * b->cap : 4096;
	b->p = realloc(b->p, b->cap);
	if (!b->p)
		die("realloc");
}

static void clear(struct buf *b)
{
	b->len = 0;
	reserve(b, 0);
	b->p[0] = 0;
}

static void put(struct buf *b, const void *p, size_t n)
{
	reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void puts_buf(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void printf_buf(struct buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	put(b, tmp, n < (int)sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Escapes bytes for one output field. */
static void escape(struct buf *b, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	reserve(b, 4 * n);
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		char *o = b->p + b->len;

		if (c == '\\') {
			o[0] = '\\';
			o[1] = '\\';
			b->len += 2;
		} else if (c == '\n') {
			o[0] = '\\';
			o[1] = 'n';
			b->len += 2;
		} else if (c >= 0x20 && c < 0x7f) {
			o[0] = c;
			b->len += 1;
		} else {
			o[0] = '\\';
			o[1] = 'x';
			o[2] = hex[c >> 4];
			o[3] = hex[c & 15];
			b->len += 4;
		}
	}
	b->p[b->len] = 0;
}

static const char *errname(int e)
{
	static char other[16];

	switch (e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSYS: return "ENOSYS";
	case ELOOP: return "ELOOP";
	case EOVERFLOW: return "EOVERFLOW";
	case EILSEQ: return "EILSEQ";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case ECANCELED: return "ECANCELED";
	case ENOEXEC: return "ENOEXEC";
	case ESRCH: return "ESRCH";
	case 524: return "ENOTSUPP";
	}
	snprintf(other, sizeof(other), "E%d", e);
	return other;
}

/* Reads a whole file into b (emptied first); returns 0 or an errno. */
static int read_all(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	clear(b);
	if (fd < 0)
		return errno;
	for (;;) {
		reserve(b, 65536);
		n = read(fd, b->p + b->len, 65536);
		if (n < 0) {
			int e = errno;

			close(fd);
			return e;
		}
		if (n == 0)
			break;
		b->len += n;
	}
	b->p[b->len] = 0;
	close(fd);
	return 0;
}

/*
 * Writes the chunks in order on one open file descriptor of path (O_WRONLY|
 * O_APPEND); the answers of the writes go to ans,
 * separated by ','. A write's answer is OK (all bytes taken), OK:N (N
 * bytes taken) or the errno name. Returns 1 when every write took all.
 */
static int write_chunks(const char *path, const char *const *chunk, const size_t *len, int n,
			struct buf *ans)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	int ok = 1, i;

	if (fd < 0) {
		printf_buf(ans, "open:%s", errname(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		ssize_t r = write(fd, chunk[i], len[i]);

		if (i)
			puts_buf(ans, ",");
		if (r < 0) {
			puts_buf(ans, errname(errno));
			ok = 0;
		} else if ((size_t)r == len[i]) {
			puts_buf(ans, "OK");
		} else {
			printf_buf(ans, "OK:%zd", r);
			ok = 0;
		}
	}
	if (close(fd) < 0) {
		printf_buf(ans, ",close:%s", errname(errno));
		ok = 0;
	}
	return ok;
}

static int write_one(const char *path, const char *p, size_t n, struct buf *ans)
{
	return write_chunks(path, &p, &n, 1, ans);
}

static void truncate_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd >= 0)
		close(fd);
}

/*
 * The last error_log entry, without its "[ timestamp] " prefix, into log
 * (emptied first); error_log is cleared when it held anything. More than
 * one entry is said as "(N entries) " before the last.
 */
static void take_error_log(struct buf *log)
{
	static struct buf raw;
	size_t i, start = 0;
	int entries = 0;

	clear(log);
	if (read_all(ELOG, &raw) || !raw.len)
		return;
	for (i = 0; i < raw.len; i++) {
		if (raw.p[i] == '[' && (i == 0 || raw.p[i - 1] == '\n')) {
			start = i;
			entries++;
		}
	}
	if (entries > 1)
		printf_buf(log, "(%d entries) ", entries);
	i = start;
	if (raw.p[i] == '[') {
		char *close_br = memchr(raw.p + i, ']', raw.len - i);

		if (close_br) {
			i = close_br - raw.p + 1;
			if (i < raw.len && raw.p[i] == ' ')
				i++;
		}
	}
	put(log, raw.p + i, raw.len - i);
	truncate_file(ELOG);
}

/* Is the sentinel's line in the listing, as a line of its own? */
static int has_sentinel(const struct buf *listing)
{
	const char *p = listing->p, *end = listing->p + listing->len;
	size_t sl = strlen(SENTINEL);

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n == sl && !memcmp(p, SENTINEL, sl))
			return 1;
		p += n + 1;
	}
	return 0;
}

/* The listing without the sentinel's line, escaped into out. */
static void escape_listing(struct buf *out, const struct buf *listing)
{
	const char *p = listing->p, *end = listing->p + listing->len;
	size_t sl = strlen(SENTINEL);

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p + 1) : (size_t)(end - p);

		if (!(n == sl + 1 && !memcmp(p, SENTINEL "\n", sl + 1)))
			escape(out, p, n);
		p += n;
	}
}

static int define_sentinel(struct buf *ans)
{
	return write_one(KPE, SENTINEL "\n", strlen(SENTINEL) + 1, ans);
}

static int is_exactly_sentinel(const struct buf *dyn)
{
	size_t sl = strlen(SENTINEL);

	return dyn->len == sl + 1 && !memcmp(dyn->p, SENTINEL "\n", sl + 1);
}

/*
 * Removes every event dynamic_events lists but the sentinel, one
 * `-:GROUP/EVENT` each (GROUP/EVENT: the first token from its ':' to the
 * first space), and restores the sentinel; says what it did in notes.
 * dyn is the listing read just before; it is reread. Returns 0 when the
 * state is the starting one again.
 */
static int cleanup(struct buf *dyn, struct buf *notes)
{
	static struct buf names, cmd, ans, log;
	const char *p, *end, *next;
	size_t sl = strlen(SENTINEL);
	int e;

	if (is_exactly_sentinel(dyn))
		return 0;
	/* names: "\n" then every GROUP/EVENT removed so far, each + "\n". */
	names.len = 0;
	puts_buf(&names, "\n");
	p = dyn->p;
	end = dyn->p + dyn->len;
	for (; p < end; p = next) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *colon = memchr(p, ':', n), *sp;

		next = p + n + 1;
		if (n == sl && !memcmp(p, SENTINEL, sl))
			continue;
		if (!colon) {
			puts_buf(notes, " unparsable=");
			escape(notes, p, n);
			continue;
		}
		sp = memchr(colon, ' ', p + n - colon);
		if (!sp)
			sp = p + n;
		cmd.len = 0;
		puts_buf(&cmd, "\n");
		put(&cmd, colon + 1, sp - colon - 1);
		puts_buf(&cmd, "\n");
		if (memmem(names.p, names.len, cmd.p, cmd.len))
			continue; /* one removal per event, however many probes */
		put(&names, cmd.p + 1, cmd.len - 1);
		/* "-:GROUP/EVENT\n" */
		cmd.len = 0;
		puts_buf(&cmd, "-:");
		put(&cmd, colon + 1, sp - colon - 1);
		puts_buf(&cmd, "\n");
		clear(&ans);
		write_one(DYN, cmd.p, cmd.len, &ans);
		puts_buf(notes, " rm ");
		escape(notes, colon + 1, sp - colon - 1);
		puts_buf(notes, "=");
		puts_buf(notes, ans.p);
	}

	e = read_all(DYN, dyn);
	if (!e && !has_sentinel(dyn)) {
		clear(&ans);
		define_sentinel(&ans);
		puts_buf(notes, " readd=");
		puts_buf(notes, ans.p);
		e = read_all(DYN, dyn);
	}
	if (e) {
		printf_buf(notes, " read-dynamic_events=%s", errname(e));
		return 1;
	}
	if (!is_exactly_sentinel(dyn)) {
		/* Removal left something: say what, and start over. */
		puts_buf(notes, " LEFTOVER=");
		escape(notes, dyn->p, dyn->len);
		truncate_file(DYN);
		clear(&ans);
		define_sentinel(&ans);
		puts_buf(notes, " readd=");
		puts_buf(notes, ans.p);
		if (read_all(DYN, dyn) || !is_exactly_sentinel(dyn))
			return 1;
	}
	take_error_log(&log);
	if (log.len) {
		puts_buf(notes, " cleanup-log=");
		escape(notes, log.p, log.len);
	}
	return 0;
}

static FILE *out;
static int broken, lost;

/*
 * One case on one file: the chunks written in order on one open file,
 * then the answer, error_log, sentinel and listing recorded, and the
 * cleanup done.
 */
static void run_case(const char *idx, int f, const char *const *chunk, const size_t *len, int n)
{
	static struct buf ans, log, listing, dyn, field, notes;
	int removal = n && len[0] && (chunk[0][0] == '-' || chunk[0][0] == '!');
	struct stat st;
	const char *sentinel;
	int e;

	clear(&ans);
	write_chunks(files[f], chunk, len, n, &ans);
	take_error_log(&log);
	clear(&notes);
	e = read_all(files[f], &listing);
	if (e)
		printf_buf(&notes, " read=%s", errname(e));
	if (f == 1) {
		dyn.len = 0;
		put(&dyn, listing.p, listing.len);
	} else if ((e = read_all(DYN, &dyn))) {
		printf_buf(&notes, " read-dynamic_events=%s", errname(e));
	}
	if (has_sentinel(&dyn) && !stat(SENT_FORMAT, &st)) {
		sentinel = "keep";
	} else if (removal) {
		sentinel = "removed";
	} else {
		sentinel = "LOST";
		lost++;
	}
	if (cleanup(&dyn, &notes)) {
		puts_buf(&notes, " BROKEN");
		broken = 1;
	}
	clear(&field);
	escape(&field, log.p, log.len);
	fprintf(out, "%s\t%c\t%s\t%s\t%s\t", idx, file_tag[f], ans.p, sentinel, field.p);
	clear(&field);
	escape_listing(&field, &listing);
	fprintf(out, "%s\t", field.p);
	/* The notes are escaped where they quote the kernel. */
	fprintf(out, "%s\n", notes.p + (notes.len && notes.p[0] == ' '));
}

/* The same case on kprobe_events, then on dynamic_events. */
static void run_both(const char *idx, const char *const *chunk, const size_t *len, int n)
{
	run_case(idx, 0, chunk, len, n);
	run_case(idx, 1, chunk, len, n);
}

/* A case of one write. */
static void run_one(const char *idx, const char *p, size_t n)
{
	run_both(idx, &p, &n, 1);
}

/* A case of one write of a string literal (NUL bytes included). */
#define run_lit(idx, s) run_one(idx, s, sizeof(s) - 1)

/* Decodes one line of LINES ('\\' and \xNN escapes) into b. */
static void unescape(struct buf *b, const char *p, size_t n)
{
	size_t i;

	b->len = 0;
	reserve(b, n);
	for (i = 0; i < n; i++) {
		char c = p[i];

		if (c == '\\' && i + 1 < n && p[i + 1] == '\\') {
			i++;
		} else if (c == '\\' && i + 3 < n && p[i + 1] == 'x') {
			char hex[3] = { p[i + 2], p[i + 3], 0 };

			c = (char)strtoul(hex, NULL, 16);
			i += 3;
		}
		b->p[b->len++] = c;
	}
	b->p[b->len] = 0;
}

/* A spec line padded to exactly n bytes (without its newline). */
static void padded(struct buf *b, const char *spec, size_t n, char pad)
{
	b->len = 0;
	puts_buf(b, spec);
	if (pad == '#')
		puts_buf(b, " #");
	while (b->len < n)
		put(b, pad == '#' ? "x" : " ", 1);
	b->len = n;
	b->p[n] = 0;
}

static void specials(void)
{
	static struct buf a, b, big;
	static const size_t around[] = { 4093, 4094, 4095, 4096, 4097 };
	const char *chunk[3];
	size_t len[3], i;
	char name[64];
	unsigned int seed = 12;
	int j;

	run_lit("empty", "");
	run_lit("newline", "\n");
	run_lit("spaces", " \t \n");
	run_lit("comment", "# p:hostile/c vfs_read\n");
	run_lit("nonl", "p:hostile/nonl vfs_read a=" ARG1);
	run_lit("nonl-2lines", "p:hostile/nl1 vfs_read\np:hostile/nl2 vfs_write");
	run_lit("nonl-bad", "p:hostile/nonl vfs_reed");
	run_lit("nonl-remove", "-:hostile/keep");
	run_lit("nul-mid", "p:hostile/nul vfs_read\0 a=" ARG1 "\n");
	run_lit("nul-start", "\0p:hostile/nul vfs_read\n");
	run_lit("nul-end", "p:hostile/nul vfs_read\0\n");
	run_lit("nul-only", "\0");
	run_lit("nul-nonl", "p:hostile/nul vfs_read\0");
	run_lit("nul-2nd-line", "p:hostile/nul1 vfs_read\n\0p:hostile/nul2 vfs_read\n");
	run_lit("nul-in-comment", "p:hostile/nul vfs_read # \0 x\n");

	chunk[0] = "p:hostile/split vfs_";
	chunk[1] = "read\n";
	len[0] = strlen(chunk[0]);
	len[1] = strlen(chunk[1]);
	run_both("split-symbol", chunk, len, 2);
	chunk[0] = "p:hostile/split vfs_read";
	chunk[1] = " a=" ARG1 "\n";
	len[0] = strlen(chunk[0]);
	len[1] = strlen(chunk[1]);
	run_both("split-arg", chunk, len, 2);
	chunk[0] = "p:hostile/sp";
	chunk[1] = "lit3 vfs_re";
	chunk[2] = "ad\n";
	for (i = 0; i < 3; i++)
		len[i] = strlen(chunk[i]);
	run_both("split-3", chunk, len, 3);
	chunk[0] = "p:hostile/split1 vfs_read\np:hostile/spl";
	chunk[1] = "it2 vfs_write\n";
	len[0] = strlen(chunk[0]);
	len[1] = strlen(chunk[1]);
	run_both("split-2nd-line", chunk, len, 2);

	/* Lines around WRITE_BUFSIZE (4096): at most 4094 bytes and '\n'. */
	for (i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		size_t n = around[i];

		snprintf(name, sizeof(name), "p:hostile/len%zu vfs_read a=" ARG1_FMT, n);
		padded(&a, name, n, '#');
		put(&a, "\n", 1);
		snprintf(name, sizeof(name), "len%zu-comment", n);
		run_one(name, a.p, a.len);
		snprintf(name, sizeof(name), "p:hostile/len%zu vfs_read a=" ARG1_FMT, n);
		padded(&a, name, n, ' ');
		put(&a, "\n", 1);
		snprintf(name, sizeof(name), "len%zu-spaces", n);
		run_one(name, a.p, a.len);
		snprintf(name, sizeof(name), "p:hostile/len%zu vfs_read a=" ARG1_FMT, n);
		padded(&a, name, n, '#');
		snprintf(name, sizeof(name), "len%zu-nonl", n);
		run_one(name, a.p, a.len);
		/* After a short line, so that it starts inside the first chunk. */
		b.len = 0;
		puts_buf(&b, "p:hostile/short vfs_write\n");
		snprintf(name, sizeof(name), "p:hostile/len%zu vfs_read a=" ARG1_FMT, n);
		padded(&a, name, n, '#');
		put(&b, a.p, a.len);
		put(&b, "\n", 1);
		snprintf(name, sizeof(name), "short+len%zu", n);
		run_one(name, b.p, b.len);
	}

	/* 1 MiB in one line. */
	big.len = 0;
	puts_buf(&big, "p:hostile/big vfs_read");
	while (big.len < (1 << 20) - 8)
		puts_buf(&big, " a=" ARG1);
	big.len = (1 << 20) - 1;
	put(&big, "\n", 1);
	run_one("1mb-line", big.p, big.len);

	/*
	 * 1 MiB of short lines: a probe definition every 2 KiB or so (kprobes
	 * and kretprobes on vfs_read and vfs_write, probes on a module that is
	 * not loaded), comment, blank and whitespace lines between them.
	 */
	big.len = 0;
	for (j = 0; big.len < (1 << 20) - 4096; j++) {
		size_t next = big.len + 2048;

		switch (j % 8) {
		case 0:
			snprintf(name, sizeof(name), "p:hostile1m/e%d vfs_read a=" ARG1_FMT "\n", j);
			break;
		case 4:
			snprintf(name, sizeof(name), "r:hostile1m/e%d vfs_write $retval\n", j);
			break;
		default:
			snprintf(name, sizeof(name), "p:hostile1m/e%d nomod:func%d +0(%%si):u8\n", j, j);
			break;
		}
		puts_buf(&big, name);
		while (big.len < next) {
			seed = seed * 1103515245 + 12345;
			switch ((seed >> 16) % 4) {
			case 0:
				puts_buf(&big, "\n");
				break;
			case 1:
				puts_buf(&big, " \t \n");
				break;
			default: {
				size_t n = (seed >> 8) % 300, k;

				puts_buf(&big, "# ");
				for (k = 0; k < n; k++)
					put(&big, "c", 1);
				puts_buf(&big, "\n");
			}
			}
		}
	}
	/* A last comment up to exactly 1 MiB. */
	puts_buf(&big, "#");
	while (big.len < (1 << 20) - 1)
		put(&big, "z", 1);
	put(&big, "\n", 1);
	run_one("1mb-specs", big.p, big.len);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct buf all, line, ans, dyn;
	size_t count = 0, limit = (size_t)-1;
	char idx[32];
	const char *p, *end;
	double t0, t1, t2;

	if (argc < 3) {
		fprintf(stderr, "usage: hostile LINES OUT [LIMIT]\n");
		return 2;
	}
	if (argc > 3)
		limit = strtoul(argv[3], NULL, 0);
	if (read_all(argv[1], &all))
		die(argv[1]);
	out = fopen(argv[2], "w");
	if (!out)
		die(argv[2]);
	/* Line by line: if a write hangs, OUT shows the last answer. */
	setvbuf(out, NULL, _IOLBF, 0);

	truncate_file(DYN);
	truncate_file(ELOG);
	if (!define_sentinel(&ans) || read_all(DYN, &dyn) || !is_exactly_sentinel(&dyn)) {
		fprintf(stderr, "hostile: cannot define the sentinel (%s): %s\n", ans.p, dyn.p);
		return 2;
	}

	t0 = now();
	for (p = all.p, end = all.p + all.len; p < end && count < limit;) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		unescape(&line, p, n);
		count++;
		snprintf(idx, sizeof(idx), "%zu", count);
		put(&line, "\n", 1);
		run_one(idx, line.p, line.len);
		if (broken)
			break;
		p += n + 1;
	}
	t1 = now();
	if (!broken)
		specials();
	t2 = now();
	if (read_all(DYN, &dyn) || !is_exactly_sentinel(&dyn))
		broken = 1;
	fprintf(out, "END\t%zu\t%s\n", count, broken ? "BROKEN" : "sentinel-ok");
	if (fclose(out))
		die(argv[2]);
	fprintf(stderr, "hostile: %zu lines x 2 files in %.1f s, special cases in %.1f s, sentinel %s, %d lost\n",
		count, t1 - t0, t2 - t1, broken ? "BROKEN" : "ok", lost);
	return broken ? 1 : 0;
}

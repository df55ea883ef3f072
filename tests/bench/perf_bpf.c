// SPDX-License-Identifier: GPL-2.0
/*
 * perf and BPF on one trace event, with raw system calls (no libbpf), so
 * that the same static binary runs in the test VM on the C implementation
 * and on the module.
 *
 *   perf_bpf ID N [RET [HOLD]]
 *
 * Opens the trace event with id ID as a counting perf event of this task
 * (PERF_TYPE_TRACEPOINT, as `perf stat -e GRP:EV` does), then calls
 * lseek(/dev/null, 1000 + i, SEEK_SET) for i in 0..N. With RET, it first
 * attaches a BPF_PROG_TYPE_KPROBE program (PERF_EVENT_IOC_SET_BPF, as bcc
 * and bpftrace do on kprobe_events) that counts its runs, adds up the
 * second argument register (%si: the offset, for a probe on null_lseek)
 * and returns RET. Prints
 *
 *   perf=<count> bpf_runs=<runs> bpf_si_sum=<sum>
 *
 * As kprobe_perf_func() does, a program that returns 0 drops the hit from
 * perf. With HOLD, keeps the perf event open HOLD more seconds after
 * printing. Exit status 0 if everything could be set up.
 *
 *   perf_bpf override ID RC
 *
 * Attaches a program that calls bpf_override_return(ctx, RC) to the event
 * (a kprobe event on the getppid system call), calls getppid() and prints
 * `getppid=RC` if it returned RC, `getppid=unchanged` if it returned what
 * it did before; or the error that refused the program.
 *
 *   perf_bpf info ID
 *
 * Attaches a program to the event, then prints what the kernel says of it,
 * as bpftool perf and bpftool link do: BPF_TASK_FD_QUERY on the perf event
 * (`query: TYPE SYMBOL+OFFSET addr|noaddr`), and BPF_OBJ_GET_INFO_BY_FD on
 * a BPF link to a second perf event of it (`link: TYPE SYMBOL+OFFSET
 * addr|noaddr missed=N`). TYPE is kprobe or kretprobe; addr says the
 * address is not 0.
 *
 *   perf_bpf pmu FUNC N [r]
 *
 * Opens a kprobe (a kretprobe with r) on FUNC with perf's kprobe PMU
 * (perf_event_open() with the type in
 * /sys/bus/event_source/devices/kprobe/type, as libbpf, bcc and bpftrace
 * do), prints what BPF_TASK_FD_QUERY says of it with a program attached
 * (`query: ...`, as info), calls lseek(/dev/null) N times and prints the
 * count: `pmu: perf=N`. Or the error that refused the event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/*
 * Offset of the second argument register in struct pt_regs: x86-64's si
 * (r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si), arm64's x1.
 */
#if defined(__aarch64__)
#define PT_REGS_SI (1 * 8)
#else
#define PT_REGS_SI (13 * 8)
#endif

/* map[key] += r7, for key 0 (r7 = 1) then key 1 (r7 = ctx->si). */
static int prog(int map, int ret, struct bpf_insn *p)
{
	int n = 0;

	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);          /* r6 = ctx */
	for (int key = 0; key < 2; key++) {
		if (key == 0)
			p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 1); /* r7 = 1 */
		else
			p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, 7, 6, PT_REGS_SI, 0);
		p[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, key); /* *(u32 *)(fp - 4) = key */
		p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
		p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4);
		p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map);
		p[n++] = INSN(0, 0, 0, 0, 0);
		p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
		p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1, 0);     /* if !r0 skip */
		p[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 7, 0, BPF_ADD);
	}
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, ret);
	p[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

/* struct bpf_link_info up to its perf_event.kprobe member (uapi 6.6; the
 * host's headers may be older). */
struct link_info_kprobe {
	uint32_t type, id, prog_id, pad;
	uint32_t perf_event_type, pad2;
	uint64_t func_name;
	uint32_t name_len, offset;
	uint64_t addr, missed, cookie;
};

static int open_event(const char *id)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = strtoull(id, NULL, 0);
	pa.disabled = 1;
	return syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int load(struct bpf_insn *insns, int n)
{
	char log[4096] = "";
	union bpf_attr a;
	int pr;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	pr = bpf(BPF_PROG_LOAD, &a);
	if (pr < 0)
		printf("BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
	return pr;
}

/*
 * Loads the program p (n instructions) and attaches it to perf event pfd:
 * 0, or -1 after printing why not (and the verifier's log).
 */
static int attach(int pfd, struct bpf_insn *p, int n)
{
	int pr = load(p, n);

	if (pr < 0)
		return -1;
	if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, pr)) {
		printf("PERF_EVENT_IOC_SET_BPF: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Enable pfd, make n lseek() calls on /dev/null, disable it: its count. */
static int count_lseeks(int pfd, long n, uint64_t *count)
{
	int nul = open("/dev/null", O_RDONLY);

	if (nul < 0 || ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("open /dev/null or PERF_EVENT_IOC_ENABLE");
		return -1;
	}
	for (long i = 0; i < n; i++)
		lseek(nul, 1000 + i, SEEK_SET);
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(pfd, count, sizeof(*count)) != sizeof(*count)) {
		perror("read perf count");
		return -1;
	}
	return 0;
}

/* perf_bpf override ID RC */
static int override(const char *id, int rc)
{
	struct bpf_insn p[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, rc),     /* r2 = rc (r1 = ctx) */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_override_return),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	long before = syscall(SYS_getppid), after;
	int pfd = open_event(id);

	if (pfd < 0) {
		printf("perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	/* A refused program is an answer: the test reads the error. */
	if (attach(pfd, p, sizeof(p) / sizeof(p[0])))
		return 0;
	if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0)) {
		perror("PERF_EVENT_IOC_ENABLE");
		return 1;
	}
	after = syscall(SYS_getppid);
	ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
	if (after == rc)
		printf("getppid=%d\n", rc);
	else if (after == before)
		printf("getppid=unchanged\n");
	else
		printf("getppid=%ld (before: %ld)\n", after, before);
	return 0;
}

static const char *fd_type_name(uint32_t t)
{
	return t == BPF_FD_TYPE_KPROBE ? "kprobe" : t == BPF_FD_TYPE_KRETPROBE ? "kretprobe" : "other";
}

/* BPF_TASK_FD_QUERY on perf event pfd: "query: TYPE SYMBOL+OFFSET addr|noaddr" */
static void query(int pfd)
{
	char buf[256] = "";
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.task_fd_query.pid = getpid();
	a.task_fd_query.fd = pfd;
	a.task_fd_query.buf = (uintptr_t)buf;
	a.task_fd_query.buf_len = sizeof(buf);
	if (bpf(BPF_TASK_FD_QUERY, &a))
		printf("query: BPF_TASK_FD_QUERY: %s\n", strerror(errno));
	else
		printf("query: %s %s+%llu %s\n", fd_type_name(a.task_fd_query.fd_type), buf,
		       (unsigned long long)a.task_fd_query.probe_offset,
		       a.task_fd_query.probe_addr ? "addr" : "noaddr");
}

/* perf_bpf info ID */
static int info(const char *id)
{
	struct bpf_insn p[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct link_info_kprobe li;
	char name[256] = "";
	int pfd = open_event(id), pfd2 = open_event(id), pr, link;
	union bpf_attr a;

	if (pfd < 0 || pfd2 < 0) {
		printf("perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	if (attach(pfd, p, sizeof(p) / sizeof(p[0])))
		return 1;
	query(pfd);

	/* One program once an event (bpf_prog_array_copy()): another for the link. */
	pr = load(p, sizeof(p) / sizeof(p[0]));
	if (pr < 0)
		return 1;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = pr;
	a.link_create.target_fd = pfd2;
	a.link_create.attach_type = BPF_PERF_EVENT;
	link = bpf(BPF_LINK_CREATE, &a);
	if (link < 0) {
		printf("link: BPF_LINK_CREATE: %s\n", strerror(errno));
		return 0;
	}
	memset(&li, 0, sizeof(li));
	li.func_name = (uintptr_t)name;
	li.name_len = sizeof(name);
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = link;
	a.info.info_len = sizeof(li);
	a.info.info = (uintptr_t)&li;
	if (bpf(BPF_OBJ_GET_INFO_BY_FD, &a)) {
		printf("link: BPF_OBJ_GET_INFO_BY_FD: %s\n", strerror(errno));
		return 0;
	}
	/* enum bpf_perf_event_type: BPF_PERF_EVENT_KPROBE 3, _KRETPROBE 4 */
	printf("link: %s %s+%u %s missed=%llu\n",
	       li.perf_event_type == 3 ? "kprobe" : li.perf_event_type == 4 ? "kretprobe" : "other",
	       name, li.offset, li.addr ? "addr" : "noaddr", (unsigned long long)li.missed);
	return 0;
}

/* perf_bpf pmu FUNC N [r] */
static int pmu(const char *func, long n, int retprobe)
{
	struct bpf_insn p[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct perf_event_attr pa;
	uint64_t count = 0;
	int type, pfd;
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");

	if (!f || fscanf(f, "%d", &type) != 1) {
		printf("pmu: no kprobe PMU\n");
		return 0;
	}
	fclose(f);
	memset(&pa, 0, sizeof(pa));
	pa.type = type;
	pa.size = sizeof(pa);
	pa.config = retprobe ? 1 : 0;	/* format/retprobe: config:0 */
	pa.kprobe_func = (uintptr_t)func;
	pa.probe_offset = 0;
	pa.disabled = 1;
	pfd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		printf("pmu: perf_event_open: %s\n", strerror(errno));
		return 0;
	}
	if (attach(pfd, p, sizeof(p) / sizeof(p[0])))
		return 1;
	query(pfd);
	if (count_lseeks(pfd, n, &count))
		return 1;
	printf("pmu: perf=%llu\n", (unsigned long long)count);
	return 0;
}

static uint64_t map_get(int map, uint32_t key)
{
	union bpf_attr a;
	uint64_t v = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &a))
		perror("BPF_MAP_LOOKUP_ELEM");
	return v;
}

int main(int argc, char **argv)
{
	struct perf_event_attr pa;
	struct bpf_insn insns[64];
	union bpf_attr a;
	char log[4096] = "";
	int map = -1, pfd;
	uint64_t count = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: perf_bpf ID N [RET [HOLD]] | override ID RC | info ID | pmu FUNC N [r]\n");
		return 2;
	}
	if (!strcmp(argv[1], "override") && argc == 4)
		return override(argv[2], atoi(argv[3]));
	if (!strcmp(argv[1], "info"))
		return info(argv[2]);
	if (!strcmp(argv[1], "pmu") && argc >= 4)
		return pmu(argv[2], atol(argv[3]), argc > 4 && !strcmp(argv[4], "r"));
	long n = atol(argv[2]);

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = strtoull(argv[1], NULL, 0);
	pa.disabled = 1;
	pfd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		printf("perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	if (argc > 3) {
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = 4;
		a.value_size = 8;
		a.max_entries = 2;
		map = bpf(BPF_MAP_CREATE, &a);
		if (map < 0) {
			printf("BPF_MAP_CREATE: %s\n", strerror(errno));
			return 1;
		}
		memset(&a, 0, sizeof(a));
		a.prog_type = BPF_PROG_TYPE_KPROBE;
		a.insns = (uintptr_t)insns;
		a.insn_cnt = prog(map, atoi(argv[3]), insns);
		a.license = (uintptr_t)"GPL";
		a.log_buf = (uintptr_t)log;
		a.log_size = sizeof(log);
		a.log_level = 1;
		int pr = bpf(BPF_PROG_LOAD, &a);
		if (pr < 0) {
			printf("BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
			return 1;
		}
		if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, pr)) {
			printf("PERF_EVENT_IOC_SET_BPF: %s\n", strerror(errno));
			return 1;
		}
	}
	if (count_lseeks(pfd, n, &count))
		return 1;
	printf("perf=%llu", (unsigned long long)count);
	if (map >= 0)
		printf(" bpf_runs=%llu bpf_si_sum=%llu", (unsigned long long)map_get(map, 0),
		       (unsigned long long)map_get(map, 1));
	printf("\n");
	fflush(stdout);
	if (argc > 4)
		sleep(atoi(argv[4]));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/security.h>

/*
 * kprobes::HitCounters: @n u64s per CPU, as trace_kprobe.nhit is one
 * (trace_kprobe.c:287). The Rust side increments inline on x86-64 and
 * arm64 and uses kprobes_hit_counter_inc() elsewhere; the other helpers
 * take the per-CPU address of one of the counters.
 */
u64 *rust_helper_kprobes_hit_counters_alloc(size_t n)
{
	return (u64 __force *)__alloc_percpu(n * sizeof(u64), __alignof__(u64));
}

void rust_helper_kprobes_hit_counter_free(u64 *c)
{
	free_percpu((u64 __percpu __force *)c);
}

void rust_helper_kprobes_hit_counter_inc(u64 *c)
{
	this_cpu_inc(*(u64 __percpu __force *)c);
}

NOKPROBE_SYMBOL(rust_helper_kprobes_hit_counter_inc);

void rust_helper_kprobes_hit_counter_add(u64 *c, u64 n)
{
	this_cpu_add(*(u64 __percpu __force *)c, n);
}

NOKPROBE_SYMBOL(rust_helper_kprobes_hit_counter_add);

u64 rust_helper_kprobes_hit_counter_sum(u64 *c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr((u64 __percpu __force *)c, cpu);
	return sum;
}

/*
 * kprobes::this_cpu_ptr(): the running CPU's address of the per-CPU
 * variable at @ptr, as the this_cpu_ptr() fetch argument of a probe reads
 * it (trace_probe_tmpl.h). Called from probe handlers: preemption is off.
 */
unsigned long rust_helper_kprobes_this_cpu_ptr(unsigned long ptr)
{
	return (unsigned long)this_cpu_ptr((void __percpu __force *)ptr);
}

NOKPROBE_SYMBOL(rust_helper_kprobes_this_cpu_ptr);

/*
 * Upstream's helper that a probe hit runs through (the kprobe handlers read
 * the current task): refused to kprobes, as the hit's own code is. Every
 * helper of the hit path is NOKPROBE_SYMBOL, as C's kprobe-event hit path
 * is (kprobe_dispatcher(), kprobe_trace_func(), trace_kprobe.c).
 */
struct task_struct *rust_helper_get_current(void);
NOKPROBE_SYMBOL(rust_helper_get_current);

/*
 * The lockdown check of the C kprobe events before a kprobe is registered
 * (LOCKDOWN_KPROBES, trace_kprobe.c:498). security_locked_down() is an
 * inline stub without CONFIG_SECURITY, and its reasons are not visible to
 * bindgen.
 */
int rust_helper_security_locked_down_kprobes(void)
{
	return security_locked_down(LOCKDOWN_KPROBES);
}

// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/trace_dynevent.h>
#include <linux/trace_events.h>

/*
 * trace_event::ENTRY_SIZE, and the record heads the module lays out: the
 * Rust side asserts the same (rust/kernel/trace_event.rs), so a change on
 * either side fails the build.
 */
static_assert(sizeof(struct trace_entry) == 8);

/* TRACE_FUNCTION_TYPE, a pointer-valued macro bindgen cannot evaluate. */
__rust_helper const char *rust_helper_trace_function_type(void)
{
	return TRACE_FUNCTION_TYPE;
}

#ifdef CONFIG_PERF_EVENTS
/*
 * This CPU's list of perf events open on @call, or NULL if there is none
 * (kprobe_perf_func(): `head = this_cpu_ptr(call->perf_events)`).
 */
__rust_helper struct hlist_head *rust_helper_trace_event_perf_head(struct trace_event_call *call)
{
	struct hlist_head *head = this_cpu_ptr(call->perf_events);

	return hlist_empty(head) ? NULL : head;
}

NOKPROBE_SYMBOL(rust_helper_trace_event_perf_head);

__rust_helper bool rust_helper_bpf_prog_array_valid(struct trace_event_call *call)
{
	return bpf_prog_array_valid(call);
}

NOKPROBE_SYMBOL(rust_helper_bpf_prog_array_valid);

#endif

__rust_helper int rust_helper_dyn_event_init(struct dyn_event *ev, struct dyn_event_operations *ops)
{
	return dyn_event_init(ev, ops);
}

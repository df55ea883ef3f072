// SPDX-License-Identifier: GPL-2.0

#include <linux/trace_events.h>

#ifdef CONFIG_PERF_EVENTS
/*
 * This CPU's list of perf events open on @call, or NULL if there is none
 * (kprobe_perf_func(): `head = this_cpu_ptr(call->perf_events)`).
 */
struct hlist_head *rust_helper_trace_event_perf_head(struct trace_event_call *call)
{
	struct hlist_head *head = this_cpu_ptr(call->perf_events);

	return hlist_empty(head) ? NULL : head;
}

bool rust_helper_bpf_prog_array_valid(struct trace_event_call *call)
{
	return bpf_prog_array_valid(call);
}

/* trace_call_bpf(), or its stub without CONFIG_BPF_EVENTS. */
unsigned int rust_helper_trace_event_call_bpf(struct trace_event_call *call, void *ctx)
{
	return trace_call_bpf(call, ctx);
}
#endif

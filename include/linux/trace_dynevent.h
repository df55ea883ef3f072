/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The types of dynamic events (the dynamic_events file), for the providers
 * of a kind of dynamic event, including those outside kernel/trace (a
 * module, and the Rust bindings), and the list operations they make on
 * them. The rest of the interface is in kernel/trace/trace_dynevent.h.
 */

#ifndef _LINUX_TRACE_DYNEVENT_H
#define _LINUX_TRACE_DYNEVENT_H

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/types.h>

struct seq_file;
struct trace_event_call;
struct dyn_event;

/**
 * struct dyn_event_operations - Methods for each type of dynamic events
 *
 * These methods must be set for each type, since there is no default method.
 * Before using this for dyn_event_init(), it must be registered by
 * dyn_event_register().
 *
 * @create: Parse and create event method. This is invoked when user passes
 *  a event definition to dynamic_events interface. This must not destruct
 *  the arguments and return -ECANCELED if given arguments doesn't match its
 *  command prefix.
 * @show: Showing method. This is invoked when user reads the event definitions
 *  via dynamic_events interface.
 * @is_busy: Check whether given event is busy so that it can not be deleted.
 *  Return true if it is busy, otherwise false.
 * @free: Delete the given event. Return 0 if success, otherwise error.
 * @match: Check whether given event and system name match this event. The argc
 *  and argv is used for exact match. Return true if it matches, otherwise
 *  false.
 * @released: Optional. Called after one or more events of this type were
 *  given to @free by one removal (a "-:" command or a truncation of
 *  dynamic_events), before event_mutex is released; whether or not @free
 *  succeeded. A type whose @free leaves work to do for every event (such
 *  as waiting for an RCU grace period) can do it here once for all of
 *  them. It may be called more than once in one removal.
 *
 * Except for @create, these methods are called under holding event_mutex.
 */
struct dyn_event_operations {
	struct list_head	list;
	int (*create)(const char *raw_command);
	int (*show)(struct seq_file *m, struct dyn_event *ev);
	bool (*is_busy)(struct dyn_event *ev);
	int (*free)(struct dyn_event *ev);
	bool (*match)(const char *system, const char *event,
		      int argc, const char **argv, struct dyn_event *ev);
	void (*released)(struct dyn_event_operations *ops);
};

/* Register new dyn_event type -- must be called at first */
int dyn_event_register(struct dyn_event_operations *ops);
/* Register a dyn_event type ahead of those registered before */
int dyn_event_register_first(struct dyn_event_operations *ops);
/* Unregister a dyn_event type that has no event left (module unload) */
void dyn_event_unregister(struct dyn_event_operations *ops);

/**
 * struct dyn_event - Dynamic event list header
 *
 * The dyn_event structure encapsulates a list and a pointer to the operators
 * for making a global list of dynamic events.
 * User must includes this in each event structure, so that those events can
 * be added/removed via dynamic_events interface.
 */
struct dyn_event {
	struct list_head		list;
	struct dyn_event_operations	*ops;
};

static inline
int dyn_event_init(struct dyn_event *ev, struct dyn_event_operations *ops)
{
	if (!ev || !ops)
		return -EINVAL;

	INIT_LIST_HEAD(&ev->list);
	ev->ops = ops;
	return 0;
}

/* Called with event_mutex held: from a type's methods, which run under it. */
int dyn_event_add(struct dyn_event *ev, struct trace_event_call *call);
void dyn_event_remove(struct dyn_event *ev);

#endif /* _LINUX_TRACE_DYNEVENT_H */

// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/rcupdate.h>

/*
 * The RCU-sched read side, which module and kallsyms lookups and a probe
 * hit's readers of an event's targets run under: refused to kprobes, as
 * the hit's own code is.
 */
__rust_helper void rust_helper_rcu_read_lock_sched_notrace(void)
{
	rcu_read_lock_sched_notrace();
}

NOKPROBE_SYMBOL(rust_helper_rcu_read_lock_sched_notrace);

__rust_helper void rust_helper_rcu_read_unlock_sched_notrace(void)
{
	rcu_read_unlock_sched_notrace();
}

NOKPROBE_SYMBOL(rust_helper_rcu_read_unlock_sched_notrace);

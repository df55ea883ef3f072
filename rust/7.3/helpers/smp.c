// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

/*
 * (raw_smp_processor_id() is upstream's, in cpu.c.) A probe hit runs
 * through it: refused to kprobes, as the hit's own code is.
 */
unsigned int rust_helper_raw_smp_processor_id(void);
NOKPROBE_SYMBOL(rust_helper_raw_smp_processor_id);

__rust_helper unsigned long rust_helper_task_size(void)
{
	return TASK_SIZE;
}

NOKPROBE_SYMBOL(rust_helper_task_size);

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

__rust_helper const char *rust_helper_current_comm(void)
{
	return current->comm;
}

NOKPROBE_SYMBOL(rust_helper_current_comm);

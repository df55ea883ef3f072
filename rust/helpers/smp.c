// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/smp.h>

unsigned int rust_helper_raw_smp_processor_id(void)
{
	return raw_smp_processor_id();
}

NOKPROBE_SYMBOL(rust_helper_raw_smp_processor_id);

unsigned long rust_helper_task_size(void)
{
	return TASK_SIZE;
}

NOKPROBE_SYMBOL(rust_helper_task_size);

void rust_helper_rcu_read_lock_sched_notrace(void)
{
	rcu_read_lock_sched_notrace();
}

NOKPROBE_SYMBOL(rust_helper_rcu_read_lock_sched_notrace);

void rust_helper_rcu_read_unlock_sched_notrace(void)
{
	rcu_read_unlock_sched_notrace();
}

NOKPROBE_SYMBOL(rust_helper_rcu_read_unlock_sched_notrace);

const char *rust_helper_current_comm(void)
{
	return current->comm;
}

NOKPROBE_SYMBOL(rust_helper_current_comm);

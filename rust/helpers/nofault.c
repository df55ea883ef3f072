// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/sched.h>

/* Where a nofault read may read user memory, and the current task's name. */
__rust_helper unsigned long rust_helper_task_size(void)
{
	return TASK_SIZE;
}

NOKPROBE_SYMBOL(rust_helper_task_size);

__rust_helper const char *rust_helper_current_comm(void)
{
	return current->comm;
}

NOKPROBE_SYMBOL(rust_helper_current_comm);

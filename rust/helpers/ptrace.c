// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>
#include <linux/ptrace.h>

#ifdef CONFIG_X86_64
/*
 * regs_get_kernel_stack_nth(), inline on x86-64 (arm64's is out of line):
 * $stackN's fetch.
 */
unsigned long rust_helper_regs_get_kernel_stack_nth(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_stack_nth(regs, n);
}

NOKPROBE_SYMBOL(rust_helper_regs_get_kernel_stack_nth);
#endif

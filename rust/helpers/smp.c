// SPDX-License-Identifier: GPL-2.0

#include <linux/kprobes.h>

/*
 * (raw_smp_processor_id() is upstream's, in cpu.c.) A probe hit runs
 * through it: refused to kprobes, as the hit's own code is.
 */
unsigned int rust_helper_raw_smp_processor_id(void);
NOKPROBE_SYMBOL(rust_helper_raw_smp_processor_id);

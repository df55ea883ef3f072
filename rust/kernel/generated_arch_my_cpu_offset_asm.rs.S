/* SPDX-License-Identifier: GPL-2.0 */

#include <asm/percpu.h>

// Cut here.

::kernel::concat_literals!(MY_CPU_OFFSET_ASM("{off}"))

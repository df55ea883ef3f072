// SPDX-License-Identifier: GPL-2.0

#include <linux/kallsyms.h>

/*
 * kallsyms::SYMBOL_LEN, a number bindgen does not see: the Rust side
 * asserts the same (rust/kernel/kallsyms.rs), so a change on either side
 * fails the build.
 */
static_assert(KSYM_SYMBOL_LEN <= 768);

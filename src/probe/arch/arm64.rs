// SPDX-License-Identifier: GPL-2.0-only

//! arm64: `regoffset_table` (arch/arm64/kernel/ptrace.c: `x0`..`x30`,
//! `lr` as another name of `x30`, `sp`, `pc`, `pstate`),
//! `regs_get_kernel_argument()` (arch/arm64/include/asm/ptrace.h: eight
//! registers, then 0) and the user address bounds
//! (the `TASK_SIZE` macros in arch/arm64/include/asm/processor.h).

use super::{Arch, Register, StackArguments};

const fn reg(name: &'static str, offset: u32) -> Register {
    Register { name, offset }
}

/// `x<n>`: `regs[n]` of `struct pt_regs`, at `8 * n`.
const fn x(name: &'static str, n: u32) -> Register {
    reg(name, 8 * n)
}

/// The arm64 table.
pub const ARM64: Arch = Arch {
    name: "aarch64",
    registers: &[
        x("x0", 0),
        x("x1", 1),
        x("x2", 2),
        x("x3", 3),
        x("x4", 4),
        x("x5", 5),
        x("x6", 6),
        x("x7", 7),
        x("x8", 8),
        x("x9", 9),
        x("x10", 10),
        x("x11", 11),
        x("x12", 12),
        x("x13", 13),
        x("x14", 14),
        x("x15", 15),
        x("x16", 16),
        x("x17", 17),
        x("x18", 18),
        x("x19", 19),
        x("x20", 20),
        x("x21", 21),
        x("x22", 22),
        x("x23", 23),
        x("x24", 24),
        x("x25", 25),
        x("x26", 26),
        x("x27", 27),
        x("x28", 28),
        x("x29", 29),
        x("x30", 30),
        x("lr", 30),
        reg("sp", 248),
        reg("pc", 256),
        reg("pstate", 264),
    ],
    // x0..x7.
    argument_registers: &[0, 8, 16, 24, 32, 40, 48, 56],
    stack_arguments: StackArguments::Zero,
    stack_pointer: 248,
    return_value: 0,
    // `TASK_SIZE_MAX` is `1 << VA_BITS`, at most 52 bits; kernel
    // addresses start at 0xfff0_0000_0000_0000 or above.
    task_size_bound: 1 << 52,
    // A compat task's `TASK_SIZE_32`, `0x1_0000_0000 - PAGE_SIZE` at the
    // lowest (64K pages with the kuser helpers); every other task's is
    // higher.
    task_size_floor: 0x1_0000_0000 - 0x1_0000,
};

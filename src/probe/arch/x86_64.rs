// SPDX-License-Identifier: GPL-2.0-only

//! x86-64: `regoffset_table` (arch/x86/kernel/ptrace.c),
//! `regs_get_kernel_argument()` (arch/x86/include/asm/ptrace.h: six
//! registers, then the stack after the return address) and the user
//! address bounds (arch/x86/include/asm/page_64_types.h).

use super::{Arch, Register, StackArguments};

const fn reg(name: &'static str, offset: u32) -> Register {
    Register { name, offset }
}

/// The x86-64 table.
pub const X86_64: Arch = Arch {
    name: "x86_64",
    registers: &[
        reg("r15", 0),
        reg("r14", 8),
        reg("r13", 16),
        reg("r12", 24),
        reg("r11", 48),
        reg("r10", 56),
        reg("r9", 64),
        reg("r8", 72),
        reg("bx", 40),
        reg("cx", 88),
        reg("dx", 96),
        reg("si", 104),
        reg("di", 112),
        reg("bp", 32),
        reg("ax", 80),
        reg("orig_ax", 120),
        reg("ip", 128),
        reg("cs", 136),
        reg("flags", 144),
        reg("sp", 152),
        reg("ss", 160),
    ],
    // di, si, dx, cx, r8, r9.
    argument_registers: &[112, 104, 96, 88, 72, 64],
    stack_arguments: StackArguments::From { first: 1 },
    stack_pointer: 152,
    return_value: 80,
    // `TASK_SIZE_MAX` with 5-level paging, `(1 << 56) - PAGE_SIZE`;
    // kernel addresses start at 0xff00_0000_0000_0000 or above.
    task_size_bound: (1 << 56) - 4096,
    // A 32-bit task with the `ADDR_LIMIT_3GB` personality
    // (`IA32_PAGE_OFFSET`); every other task's is higher.
    task_size_floor: 0xc000_0000,
};

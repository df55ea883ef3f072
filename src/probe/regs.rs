// SPDX-License-Identifier: GPL-2.0-only

//! x86_64 register names for `%REG` (`regoffset_table`,
//! arch/x86/kernel/ptrace.c:85-116) and the function-argument registers
//! (`regs_get_kernel_argument()`, arch/x86/include/asm/ptrace.h).

/// Register names and their byte offsets in `struct pt_regs`, in the order
/// of the C table.
pub const REGISTERS: [(&str, u32); 21] = [
    ("r15", 0),
    ("r14", 8),
    ("r13", 16),
    ("r12", 24),
    ("r11", 48),
    ("r10", 56),
    ("r9", 64),
    ("r8", 72),
    ("bx", 40),
    ("cx", 88),
    ("dx", 96),
    ("si", 104),
    ("di", 112),
    ("bp", 32),
    ("ax", 80),
    ("orig_ax", 120),
    ("ip", 128),
    ("cs", 136),
    ("flags", 144),
    ("sp", 152),
    ("ss", 160),
];

/// Size of `struct pt_regs`.
pub const PT_REGS_SIZE: u32 = 168;

/// Offsets of the registers that carry the first six function arguments.
pub const ARGUMENT_REGS: [u32; 6] = [112, 104, 96, 88, 72, 64];

/// `regs_query_register_offset()`.
pub fn offset_of(name: &[u8]) -> Option<u32> {
    REGISTERS
        .iter()
        .find(|(n, _)| n.as_bytes() == name)
        .map(|&(_, off)| off)
}

/// The name of the register at `offset`.
pub fn name_of(offset: u32) -> Option<&'static str> {
    REGISTERS
        .iter()
        .find(|&&(_, off)| off == offset)
        .map(|&(n, _)| n)
}

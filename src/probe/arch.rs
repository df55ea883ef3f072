// SPDX-License-Identifier: GPL-2.0-only

//! What the probe language takes from the architecture, one module per
//! architecture: the `%REG` names and their offsets in `struct pt_regs`,
//! the registers that carry function arguments and where the arguments
//! after them are, and the bounds of the user address space.
//!
//! [`NATIVE`] is the table of the architecture the code is built for: the
//! kernel's environment and machine give it to the parser
//! ([`Env::arch`](super::env::Env::arch)) and the interpreter
//! ([`Machine::arch`](super::fetch::Machine::arch)); host tests can give
//! any. The kernel side checks every register offset against its
//! `struct pt_regs` at build time (`src/kernel_env.rs`).
//!
//! There are two: x86-64 ([`X86_64`]) and arm64 ([`ARM64`]). Adding an
//! architecture is a module here with its [`Arch`], chosen in [`NATIVE`] by
//! `target_arch` (and, in the kernel crate, its `PtRegs` module under
//! `rust/kernel/ptrace/` and its `nofault` bounds, which the build-time
//! checks of `src/kernel_env.rs` compare).
//! What is not here depends on the kernel's configuration, not the
//! architecture alone, and comes from the environment: the largest
//! `$stackN` (`Env::stack_words`, `THREAD_SIZE / sizeof(long)`).

mod arm64;
mod x86_64;

pub use arm64::ARM64;
pub use x86_64::X86_64;

/// A `%REG` name and its byte offset in `struct pt_regs`
/// (`regs_query_register_offset()`).
#[derive(Clone, Copy, Debug)]
pub struct Register {
    /// The name after `%`.
    pub name: &'static str,
    /// Byte offset in `struct pt_regs` (`regs_get_register()`).
    pub offset: u32,
}

/// Where the function arguments after the argument registers are
/// (`regs_get_kernel_argument()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackArguments {
    /// On the kernel stack: the first one is stack word `first`
    /// (`regs_get_kernel_stack_nth()`; x86-64: 1, after the return address).
    From {
        /// Stack word of the first argument past the registers.
        first: u32,
    },
    /// Not read: 0 (arm64).
    Zero,
}

/// One architecture's part of the probe language.
#[derive(Debug)]
pub struct Arch {
    /// As `uname -m` says it.
    pub name: &'static str,
    /// `%REG` names in the order of the C table (`regoffset_table`).
    pub registers: &'static [Register],
    /// Offsets of the registers that carry the first function arguments,
    /// in order.
    pub argument_registers: &'static [u32],
    /// Where the arguments after those are.
    pub stack_arguments: StackArguments,
    /// Offset of the stack pointer (`kernel_stack_pointer()`).
    pub stack_pointer: u32,
    /// Offset of the return value (`regs_return_value()`).
    pub return_value: u32,
    /// A bound no task's `TASK_SIZE` exceeds: an address at or above it is
    /// a kernel address, known without asking for `TASK_SIZE`.
    pub task_size_bound: u64,
    /// A bound no task's `TASK_SIZE` is below: an address below it is a
    /// user address for every task.
    pub task_size_floor: u64,
}

impl Arch {
    /// `regs_query_register_offset()`: the offset of `%name`. A `const fn`,
    /// for the kernel side's build-time checks too.
    pub const fn register_offset(&self, name: &[u8]) -> Option<u32> {
        let mut i = 0;
        while i < self.registers.len() {
            if const_eq(self.registers[i].name.as_bytes(), name) {
                return Some(self.registers[i].offset);
            }
            i += 1;
        }
        None
    }
}

/// `a == b` in a `const fn`.
const fn const_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The table of the architecture the code is built for.
#[cfg(target_arch = "x86_64")]
pub const NATIVE: &Arch = &X86_64;

/// The table of the architecture the code is built for.
#[cfg(target_arch = "aarch64")]
pub const NATIVE: &Arch = &ARM64;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("the probe language has no table for this architecture: add one in src/probe/arch/");

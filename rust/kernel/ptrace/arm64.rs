// SPDX-License-Identifier: GPL-2.0

//! arm64's named registers and kernel stack.
//!
//! C header: [`arch/arm64/include/asm/ptrace.h`](srctree/arch/arm64/include/asm/ptrace.h)

use super::PtRegs;
use crate::bindings;

impl PtRegs {
    /// The offset of the register that carries a function's first
    /// argument (`x0`), for [`PtRegs::register`].
    pub const FIRST_ARGUMENT: u32 = (core::mem::offset_of!(bindings::pt_regs, __bindgen_anon_1)
        + core::mem::offset_of!(bindings::user_pt_regs, regs))
        as u32;

    /// The general registers, `sp`, `pc` and `pstate` (`user_regs`, the
    /// first member of `struct pt_regs`).
    #[inline]
    fn user_regs(&self) -> &bindings::user_pt_regs {
        // SAFETY: by the type invariant the registers are valid for reads;
        // `user_regs` overlays the same words as the named members of the
        // union, each a plain `u64`, so any bit pattern is valid.
        unsafe { &(*self.as_raw()).__bindgen_anon_1.user_regs }
    }

    /// The instruction pointer (`pc`).
    #[inline]
    pub fn ip(&self) -> usize {
        self.user_regs().pc as usize
    }

    /// The stack pointer (`kernel_stack_pointer()`).
    #[inline]
    pub fn sp(&self) -> usize {
        self.user_regs().sp as usize
    }

    /// Word `n` of the kernel stack (`regs_get_kernel_stack_nth()`): 0 if
    /// it is neither on the task stack the registers point into nor on
    /// this CPU's IRQ stack. `#[inline]`: the C function is exported to
    /// the Rust kprobe events module alone, so the call belongs in the
    /// calling module.
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn stack_nth(&self, n: u32) -> usize {
        // SAFETY: the registers are valid (type invariant); the function
        // reads the word only after checking that it is on a stack.
        unsafe { bindings::regs_get_kernel_stack_nth(self.as_raw(), n) as usize }
    }

    /// The return value (`regs_return_value()`: x0).
    #[inline]
    pub fn return_value(&self) -> usize {
        self.user_regs().regs[0] as usize
    }
}

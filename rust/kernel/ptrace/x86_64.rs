// SPDX-License-Identifier: GPL-2.0

//! x86-64's named registers and kernel stack.
//!
//! C header: [`arch/x86/include/asm/ptrace.h`](srctree/arch/x86/include/asm/ptrace.h)

use super::PtRegs;

impl PtRegs {
    /// The offset of the register that carries a function's first
    /// argument (`%di`), for [`PtRegs::register`].
    pub const FIRST_ARGUMENT: u32 = core::mem::offset_of!(crate::bindings::pt_regs, di) as u32;

    /// The instruction pointer.
    #[inline]
    pub fn ip(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).ip }
    }

    /// The stack pointer (`kernel_stack_pointer()`).
    #[inline]
    pub fn sp(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).sp }
    }

    /// Word `n` of the kernel stack (`regs_get_kernel_stack_nth()`): 0 if
    /// it is not on the stack the registers point into.
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn stack_nth(&self, n: u32) -> usize {
        // SAFETY: the registers are valid (type invariant); the function
        // reads the word only after checking that it is on the stack.
        unsafe { crate::bindings::regs_get_kernel_stack_nth(self.as_raw(), n) as usize }
    }

    /// The return value (`regs_return_value()`).
    #[inline]
    pub fn return_value(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).ax }
    }
}

// SPDX-License-Identifier: GPL-2.0

//! The registers of an interrupted context (`struct pt_regs`), as the
//! handlers of probes see them ([`PtRegs`]).
//!
//! C header: [`include/linux/ptrace.h`](srctree/include/linux/ptrace.h)

use crate::{bindings, types::Opaque};
use core::ptr;

// The named registers and the stack rule of each architecture: `ip()`,
// `sp()`, `stack_nth()` and `return_value()`.
#[cfg(CONFIG_ARM64)]
mod arm64;
#[cfg(CONFIG_X86_64)]
mod x86_64;

/// The words of a task's kernel stack, `THREAD_SIZE / sizeof(long)` (2048
/// on x86-64, 4096 with generic KASAN, which doubles the stack): no word
/// [`PtRegs::stack_nth`] reads from `STACK_WORDS` on is on the stack. C's
/// probe events take `$stackN` and `$argN` up to it (`PARAM_MAX_STACK`).
pub const STACK_WORDS: usize = bindings::THREAD_SIZE / core::mem::size_of::<usize>();

/// The registers of the interrupted context (`struct pt_regs`), as a probe
/// handler sees them: any register by its offset ([`PtRegs::register`]),
/// and on each architecture (a module of its own) the instruction and stack
/// pointers, the return value and the words of the kernel stack.
///
/// A `&PtRegs` is made only by [`PtRegs::from_raw`], whose caller promises
/// that preemption stays disabled meanwhile, so holding one also shows that
/// the holder cannot change CPU. The kernel crate's probes
/// ([`kprobes`](crate::kprobes)) make one for the duration of a handler
/// call, which the kprobe core runs with preemption disabled (the ftrace
/// path under `ftrace_test_recursion_trylock()`, the int3 path with
/// interrupts off, kretprobe returns under `preempt_disable_notrace()` in
/// `rethook_trampoline_handler()`). APIs that need a stable CPU take one as
/// proof (the trace_event module's `PerfCall::reserve`). `PtRegs` is not
/// `Sync`, so the reference cannot leave the handler's CPU.
///
/// # Invariants
///
/// The wrapped `pt_regs` is valid for reads, and preemption is disabled,
/// for the lifetime of the reference through which it is seen.
#[repr(transparent)]
pub struct PtRegs(Opaque<bindings::pt_regs>);

impl PtRegs {
    /// Wraps a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a `struct pt_regs` valid for reads during `'a`,
    /// and preemption must stay disabled during `'a` (a handler call).
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *const bindings::pt_regs) -> &'a Self {
        // SAFETY: `PtRegs` is `repr(transparent)` over `Opaque<pt_regs>`,
        // which has the layout of `pt_regs`; the caller guarantees validity.
        // INVARIANT: the caller guarantees validity, and preemption off,
        // for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The C `struct pt_regs` behind this reference, for C functions that
    /// take one.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::pt_regs {
        // Not `Opaque::get()`: the kernel crate's shared instance of it
        // would be a call on the probe hit's path. `Self` is
        // `repr(transparent)` over `Opaque<pt_regs>`, which has the layout of
        // `pt_regs`.
        ptr::from_ref(self).cast_mut().cast()
    }

    /// The word at byte `offset` of `struct pt_regs` (`regs_get_register()`),
    /// 0 for an offset past the end or not word-aligned.
    #[inline]
    pub fn register(&self, offset: u32) -> u64 {
        let offset = offset as usize;
        if offset % 8 != 0 || offset + 8 > core::mem::size_of::<bindings::pt_regs>() {
            return 0;
        }
        // SAFETY: by the type invariant the registers are valid for reads;
        // `offset` is in bounds and word-aligned, checked above.
        unsafe { self.as_raw().cast::<u8>().add(offset).cast::<u64>().read() }
    }
}

// SPDX-License-Identifier: GPL-2.0

//! The x86-64 form of the this-CPU operation on the probe hit's path: the
//! one instruction C's `this_cpu_inc()` compiles to
//! (arch/x86/include/asm/percpu.h). arm64 has its own form (`arm64.rs`);
//! the other architectures call a C helper.

/// `this_cpu_inc()` of the per-CPU `u64` at `ptr`.
///
/// # Safety
///
/// `ptr` is the per-CPU address of a live `u64` (`alloc_percpu()`).
#[inline(always)]
pub(super) unsafe fn this_cpu_inc_u64(ptr: *mut u64) {
    // SAFETY: the caller gives a per-CPU address, which x86-64 reaches
    // through the `%gs` segment base of the running CPU, as
    // `this_cpu_inc()` does; a single `inc` cannot be torn by an interrupt
    // or a migration.
    unsafe { core::arch::asm!("incq %gs:({0})", in(reg) ptr, options(att_syntax, nostack)) };
}

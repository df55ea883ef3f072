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

/// This CPU's per-CPU offset (`this_cpu_off`, what `this_cpu_ptr()` adds
/// to a per-CPU address): the one `%gs`-relative load of
/// `arch_raw_cpu_ptr()`.
#[inline(always)]
pub(super) fn cpu_offset() -> usize {
    let off: usize;
    // SAFETY: `this_cpu_off` is a per-CPU variable of the kernel, which
    // x86-64 reaches through the `%gs` segment base of the running CPU, as
    // `raw_cpu_read_long(this_cpu_off)` does; the load has no side effect.
    unsafe {
        core::arch::asm!(
            "mov {0}, qword ptr gs:[{1}]",
            out(reg) off,
            sym crate::bindings::this_cpu_off,
            options(nostack, readonly, preserves_flags)
        )
    };
    off
}

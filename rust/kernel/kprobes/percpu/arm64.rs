// SPDX-License-Identifier: GPL-2.0

//! The arm64 form of the this-CPU increment on the probe hit's path, C's
//! `raw_cpu_inc()`, inline: the running CPU's per-CPU offset read by the
//! instruction the kernel's alternatives chose at boot (`tpidr_el1`, or
//! `tpidr_el2` under VHE: `MY_CPU_OFFSET_ASM()`,
//! arch/arm64/include/asm/percpu.h, which
//! `generated_arch_my_cpu_offset_asm.rs.S` brings into Rust), then a load,
//! an add and a store; and that offset alone, for `this_cpu_ptr()`.

/// `raw_cpu_inc()` of the per-CPU `u64` at `ptr`.
///
/// # Safety
///
/// `ptr` is the per-CPU address of a live `u64` (`alloc_percpu()`),
/// preemption is disabled, and nothing else on this CPU writes that `u64`
/// until this returns: the conditions of C's `raw_cpu_inc()`.
#[inline(always)]
pub(super) unsafe fn raw_cpu_inc_u64(ptr: *mut u64) {
    // SAFETY: the first instruction only writes `off`, a register the
    // others then read. With preemption off, `off` stays this CPU's offset,
    // so `ptr + off` is this CPU's `u64` of a live per-CPU allocation, and
    // no other writer on this CPU can interleave (the caller's guarantees).
    // Other CPUs only read it whole (an aligned 64-bit store is single-copy
    // atomic).
    unsafe {
        core::arch::asm!(
            include!(concat!(
                env!("OBJTREE"),
                "/rust/kernel/generated_arch_my_cpu_offset_asm.rs"
            )),
            "ldr {val}, [{ptr}, {off}]",
            "add {val}, {val}, #1",
            "str {val}, [{ptr}, {off}]",
            ptr = in(reg) ptr,
            off = out(reg) _,
            val = out(reg) _,
            options(nostack),
        )
    };
}

/// This CPU's per-CPU offset (what `this_cpu_ptr()` adds to a per-CPU
/// address, `__my_cpu_offset`): the one instruction the kernel's
/// alternatives chose at boot, inline, where the C helper was two calls.
#[inline(always)]
pub(super) fn cpu_offset() -> usize {
    let off: usize;
    // SAFETY: the instruction only reads the running CPU's offset register
    // into `off`; it reads no memory. The caller keeps preemption off while
    // it uses the offset, so the CPU stays the one it names.
    unsafe {
        core::arch::asm!(
            include!(concat!(
                env!("OBJTREE"),
                "/rust/kernel/generated_arch_my_cpu_offset_asm.rs"
            )),
            off = out(reg) off,
            options(nomem, nostack, preserves_flags),
        )
    };
    off
}

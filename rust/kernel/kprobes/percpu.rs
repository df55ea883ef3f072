// SPDX-License-Identifier: GPL-2.0

//! What probe handlers keep per CPU: hit counters ([`HitCounters`]) and
//! scratch buffers ([`HitBuffers`]).

#[cfg(all(CONFIG_ARM64, CONFIG_SMP))]
mod arm64;
#[cfg(all(CONFIG_X86_64, CONFIG_SMP))]
mod x86_64;

use crate::{
    bindings,
    cpu::{self, CpuId},
    error::Result,
    prelude::*,
    ptrace::PtRegs,
};
// Core's atomics, not `kernel::sync::atomic`: a probe hit reads these, and
// the kernel's atomics call C helpers that can be probed (they are not
// `NOKPROBE_SYMBOL()`, nor inlined without `CONFIG_RUST_INLINE_HELPERS`).
use core::{
    cell::UnsafeCell,
    sync::atomic::{AtomicBool, Ordering},
};

/// Hit counters kept per CPU, as C keeps `trace_kprobe.nhit`
/// (`alloc_percpu()` in `alloc_trace_kprobe()`): `N` counters, and a hit adds to
/// this CPU's only, so no cache line shared between CPUs is written on a
/// hit; a read sums every possible CPU's.
///
/// # Examples
///
/// ```
/// use kernel::kprobes::HitCounters;
///
/// let mut c = HitCounters::<2>::new()?;
/// assert_eq!(c.sum(0), 0);
/// c.add(0, 41);
/// c.add(0, 1);
/// c.add(1, 7);
/// assert_eq!((c.sum(0), c.sum(1)), (42, 7));
/// // No third counter: nothing added, nothing counted.
/// c.add(2, 1);
/// assert_eq!(c.sum(2), 0);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ptr` is a per-CPU allocation of `N` `u64`s (`alloc_percpu()`), zeroed
/// at allocation, owned by these counters and freed when they are dropped.
/// Through a shared reference, a CPU's `u64`s are written only by
/// [`HitCounters::inc`] on that CPU, in a probe handler.
pub struct HitCounters<const N: usize> {
    ptr: *mut u64,
}

// SAFETY: the counters are only changed with this-CPU operations, which are
// safe from any context, and read with plain loads of whole `u64`s.
unsafe impl<const N: usize> Send for HitCounters<N> {}
// SAFETY: as for `Send`.
unsafe impl<const N: usize> Sync for HitCounters<N> {}

impl<const N: usize> HitCounters<N> {
    /// `N` counters at zero on every CPU.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub fn new() -> Result<Self> {
        // SAFETY: no preconditions.
        let ptr = unsafe { bindings::kprobes_hit_counters_alloc(N) };
        if ptr.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: `N` zeroed per-CPU `u64`s, owned from here on.
        Ok(Self { ptr })
    }

    /// The per-CPU address of counter `i`, if there is one. (Arithmetic
    /// on a per-CPU address, not a pointer into this address space.)
    #[inline(always)]
    fn at(&self, i: usize) -> Option<*mut u64> {
        (i < N).then(|| self.ptr.wrapping_add(i))
    }

    /// Adds one to this CPU's counter `i` (none if `i` is not below `N`) in
    /// a probe handler: C's `raw_cpu_inc()`, which `kprobe_dispatcher()`
    /// counts hits with. `regs` proves that preemption is off
    /// ([`PtRegs`]' invariant). Inline: on x86-64 one `incq %gs:`, on arm64
    /// the offset register's `mrs` (the kernel's own alternative), a load,
    /// an add and a store.
    ///
    /// A handler does not nest in another on its CPU (the kprobe core
    /// counts such a hit as missed and runs no handler), so no other write
    /// of this CPU's counter interleaves.
    #[inline(always)]
    pub fn inc(&self, i: usize, _regs: &PtRegs) {
        let Some(ptr) = self.at(i) else {
            return;
        };
        #[cfg(all(CONFIG_X86_64, CONFIG_SMP))]
        // SAFETY: `ptr` is a counter of a live per-CPU allocation (type
        // invariant).
        unsafe {
            x86_64::this_cpu_inc_u64(ptr)
        };
        #[cfg(all(CONFIG_ARM64, CONFIG_SMP))]
        // SAFETY: `ptr` is a counter of a live per-CPU allocation (type
        // invariant); `_regs` proves preemption off; this CPU's counter is
        // written only here, by a handler on this CPU, and handlers do not
        // nest on a CPU (type invariant, and the kprobe core).
        unsafe {
            arm64::raw_cpu_inc_u64(ptr)
        };
        #[cfg(not(all(any(CONFIG_X86_64, CONFIG_ARM64), CONFIG_SMP)))]
        // SAFETY: `ptr` is a counter of a live per-CPU allocation (type
        // invariant).
        unsafe {
            bindings::kprobes_hit_counter_inc(ptr)
        };
    }

    /// Adds `n` to this CPU's counter `i` (`this_cpu_add()`): counters that
    /// go on from others' sums, before any handler uses them.
    pub fn add(&mut self, i: usize, n: u64) {
        if let Some(ptr) = self.at(i) {
            // SAFETY: `ptr` is a counter of a live per-CPU allocation (type
            // invariant), and `&mut self` excludes every handler's `inc`.
            unsafe { bindings::kprobes_hit_counter_add(ptr, n) };
        }
    }

    /// Counter `i` summed over every possible CPU (0 if `i` is not below
    /// `N`). A hit on another CPU meanwhile may or may not be in it.
    pub fn sum(&self, i: usize) -> u64 {
        match self.at(i) {
            // SAFETY: `ptr` is a counter of a live per-CPU allocation (type
            // invariant).
            Some(ptr) => unsafe { bindings::kprobes_hit_counter_sum(ptr) },
            None => 0,
        }
    }
}

impl<const N: usize> Drop for HitCounters<N> {
    fn drop(&mut self) {
        // SAFETY: allocated by `new` and not freed before (type invariant).
        unsafe { bindings::kprobes_hit_counter_free(self.ptr) };
    }
}

/// The running CPU's address of the per-CPU variable at `ptr`
/// (`this_cpu_ptr()`), as a probe's `this_cpu_ptr()` fetch argument asks
/// it: arithmetic on the address, nothing is read there. The handler's
/// [`PtRegs`] show that preemption is off, so the CPU stays the same.
#[inline]
pub fn this_cpu_ptr(ptr: usize, _regs: &PtRegs) -> usize {
    #[cfg(all(CONFIG_X86_64, CONFIG_SMP))]
    {
        ptr.wrapping_add(x86_64::cpu_offset())
    }
    #[cfg(all(CONFIG_ARM64, CONFIG_SMP))]
    {
        ptr.wrapping_add(arm64::cpu_offset())
    }
    #[cfg(not(all(any(CONFIG_X86_64, CONFIG_ARM64), CONFIG_SMP)))]
    // SAFETY: no memory is accessed through `ptr`; preemption is off.
    unsafe {
        bindings::kprobes_this_cpu_ptr(ptr)
    }
}

/// The address of the running task's `task_struct` (`current`), as a
/// probe's `$current` fetch argument records it.
#[inline]
pub fn current_task(_regs: &PtRegs) -> usize {
    #[cfg(CONFIG_ARM64)]
    {
        let sp_el0: usize;
        // SAFETY: arm64 keeps `current` in `sp_el0` while in the kernel
        // (`get_current()`, arch/arm64/include/asm/current.h, the same
        // instruction inline, where the helper was a call); the read has
        // no side effect and touches no memory.
        unsafe {
            core::arch::asm!(
                "mrs {0}, sp_el0",
                out(reg) sp_el0,
                options(nomem, nostack, preserves_flags)
            )
        };
        sp_el0
    }
    #[cfg(not(CONFIG_ARM64))]
    // SAFETY: no preconditions.
    unsafe {
        bindings::get_current() as usize
    }
}

/// Per-CPU scratch buffers for probe handlers, taken exclusively: a handler
/// nested on the same CPU (an NMI during another handler) gets `None`
/// instead of the buffer in use.
///
/// # Examples
///
/// ```
/// use kernel::kprobes::{HitBuffers, HIT_BUFFER_SIZE};
///
/// let b = HitBuffers::new()?;
/// assert_eq!(b.with(|buf| buf.len()), Some(HIT_BUFFER_SIZE));
/// // Nested on the same CPU, the buffer is taken. (This test runs with
/// // preemption on: it may migrate between the two calls, so it tries a
/// // few times.)
/// let nested_refused = (0..10)
///     .filter(|_| b.with(|_| b.with(|_| ()).is_none()) == Some(true))
///     .count();
/// assert!(nested_refused > 0);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// A buffer's bytes are only accessed while its `busy` flag is held by the
/// accessor that set it.
pub struct HitBuffers {
    /// One a CPU, each on cache lines of its own ([`HitBuffer`]'s
    /// alignment): indexed in place, with no pointer to follow (a boxed
    /// buffer's `Deref` is a call into the kernel crate).
    bufs: KVec<HitBuffer>,
}

/// Aligned to a cache line: the `busy` flag is written on every hit with
/// strings, and two CPUs' flags must not share a line.
#[repr(align(64))]
struct HitBuffer {
    busy: AtomicBool,
    data: UnsafeCell<KVec<u8>>,
}

/// Size of each [`HitBuffers`] buffer.
pub const HIT_BUFFER_SIZE: usize = 8192;

// SAFETY: access to `data` is serialised by `busy` (type invariant).
unsafe impl Sync for HitBuffers {}

impl HitBuffers {
    /// One buffer per possible CPU.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub fn new() -> Result<Self> {
        let n = cpu::nr_cpu_ids() as usize;
        let mut bufs = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            let mut data = KVec::with_capacity(HIT_BUFFER_SIZE, GFP_KERNEL)?;
            data.extend_with(HIT_BUFFER_SIZE, 0u8, GFP_KERNEL)?;
            let b = HitBuffer {
                busy: AtomicBool::new(false),
                data: UnsafeCell::new(data),
            };
            bufs.push(b, GFP_KERNEL)?;
        }
        // INVARIANT: every `busy` flag is clear, and nothing has accessed
        // the buffers.
        Ok(HitBuffers { bufs })
    }

    /// Runs `f` with this CPU's buffer, or returns `None` if it is in use.
    ///
    /// Meant for a probe handler, where preemption is off and the buffer is
    /// this CPU's for the whole call. From anywhere else it is still sound:
    /// the buffer's flag, not the CPU, keeps every other user out while `f`
    /// runs, so a task that moves to another CPU meanwhile only makes that
    /// CPU's handlers find the buffer in use.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn with<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
        let b = self.bufs.get(CpuId::current().as_u32() as usize)?;
        // INVARIANT: the bytes are accessed below only if this swap is the
        // one that set the flag (it was clear).
        if b.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: the `busy` flag was clear and is now ours: no other access
        // to `data` until it is released below (type invariant).
        let r = f(unsafe { (&mut *b.data.get()).as_mut_slice() });
        // INVARIANT: `f` has returned and its borrow of the bytes ended, so
        // the flag can be released.
        b.busy.store(false, Ordering::Release);
        Some(r)
    }
}

// SPDX-License-Identifier: GPL-2.0

//! An event while perf has it open ([`PerfSlot`], [`PerfCall`]): its BPF
//! programs, and its records for the perf events open on a CPU
//! ([`PerfRecord`]).
//!
//! A probe hit runs the event's BPF programs first, and a 0 from them drops
//! the perf record, as `kprobe_perf_func()` does. A record larger than
//! `PERF_MAX_TRACE_SIZE` is dropped quietly, where `perf_trace_buf_alloc()`
//! would warn.

use crate::{bindings, sync::rcu, types::Opaque};
// Core's atomics, not `kernel::sync::atomic`: a probe hit reads these, and
// the kernel's atomics call C helpers that can be probed (they are not
// `NOKPROBE_SYMBOL()`, nor inlined without `CONFIG_RUST_INLINE_HELPERS`).
use core::{
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};

/// An event while perf has it open: what a probe handler hands its hits
/// to, as `kprobe_perf_func()` does (trace_kprobe.c): the BPF
/// programs attached to the event run first and may drop the hit, then a
/// record goes to the perf events open on this CPU.
///
/// # Invariants
///
/// Wraps the `trace_event_call` of a registered event (or of a local one,
/// lent to perf by a `local::KprobeProvider`) between its
/// `TRACE_REG_PERF_REGISTER` and `TRACE_REG_PERF_UNREGISTER`.
#[repr(transparent)]
pub struct PerfCall(Opaque<bindings::trace_event_call>);

impl PerfCall {
    /// Borrows the `trace_event_call` at `ptr`, which perf has open, as a [`PerfCall`] for `'a`.
    ///
    /// # Safety
    ///
    /// `ptr` must be a registered (or lent local) event that perf has open,
    /// for `'a`.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::trace_event_call) -> &'a Self {
        // INVARIANT: the caller guarantees that `ptr` is a registered (or
        // lent local) event that perf has open for `'a`, as long as the reference can be used.
        // SAFETY: `repr(transparent)`; validity by the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The C event. (A cast, not `Opaque::get()`: a generic that rustc
    /// may leave out of line in vmlinux, outside `.kprobes.text`, where the
    /// hit path calls this.)
    #[inline]
    pub(super) fn as_raw(&self) -> *mut bindings::trace_event_call {
        // `repr(transparent)` over `Opaque<trace_event_call>`, itself
        // transparent over the C struct in an `UnsafeCell`: writes through
        // the pointer are writes to the cell's contents.
        core::ptr::from_ref(self).cast_mut().cast()
    }
}

#[cfg(all(CONFIG_KPROBES, CONFIG_PERF_EVENTS))]
impl PerfCall {
    /// Runs the BPF programs attached to the event with `regs` as their
    /// context (`trace_call_bpf()`); false if one says to drop the hit.
    /// True when no program is attached. `regs` shows that the caller is
    /// a probe handler, with preemption disabled (see [`PtRegs`]).
    ///
    /// [`PtRegs`]: crate::ptrace::PtRegs
    ///
    /// `#[inline]`: `trace_call_bpf()` is exported to the Rust kprobe events
    /// module alone, so the call belongs in the calling module.
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn run_bpf(&self, regs: &crate::ptrace::PtRegs) -> bool {
        // SAFETY: by the type invariant the call is valid.
        if !unsafe { bindings::bpf_prog_array_valid(self.as_raw()) } {
            return true;
        }
        #[cfg(CONFIG_BPF_EVENTS)]
        {
            // SAFETY: as above; `regs` is valid for the call (the context the
            // programs of a kprobe event expect), and preemption is disabled
            // (`PtRegs`' invariant), as `trace_call_bpf()` wants.
            unsafe { bindings::trace_call_bpf(self.as_raw(), regs.as_raw().cast()) != 0 }
        }
        // Without BPF events, `trace_call_bpf()` is a stub that keeps the hit.
        #[cfg(not(CONFIG_BPF_EVENTS))]
        {
            let _ = regs;
            true
        }
    }

    /// Reserves a perf record of `len` bytes (the `trace_entry` header
    /// included, which perf fills in) if a perf event on this CPU wants
    /// the hit; it is submitted when dropped. `regs` shows that the caller
    /// is a probe handler, with preemption disabled (see [`PtRegs`]), so the
    /// CPU's buffer and list stay this CPU's.
    ///
    /// [`PtRegs`]: crate::ptrace::PtRegs
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn reserve<'a>(
        &'a self,
        regs: &'a crate::ptrace::PtRegs,
        len: usize,
    ) -> Option<PerfRecord<'a>> {
        // SAFETY: by the type invariant the call is valid and has its
        // per-CPU `perf_events` (perf registered it).
        let head = unsafe { bindings::trace_event_perf_head(self.as_raw()) };
        if head.is_null() {
            return None;
        }
        // kprobe_perf_func(): the raw data perf copies is a u32 size then
        // the record, padded to 8 bytes.
        let size = (len + 4).next_multiple_of(8) - 4;
        // perf_trace_buf_alloc() warns past its buffer: drop such a record
        // quietly instead (C warns once).
        if size > bindings::PERF_MAX_TRACE_SIZE as usize {
            return None;
        }
        let size_c = i32::try_from(size).ok()?;
        let mut rctx = 0;
        // SAFETY: `rctx` is written by the call; a NULL regs pointer asks
        // for no perf regs (we pass the probe's own).
        let buf = unsafe { bindings::perf_trace_buf_alloc(size_c, ptr::null_mut(), &mut rctx) };
        if buf.is_null() {
            return None;
        }
        // INVARIANT: `buf` has `size >= len` bytes, owned until submitted,
        // taken with recursion context `rctx`; `head` is the list of perf
        // events on the call of the CPU `trace_event_perf_head()` ran on
        // (this CPU: preemption is disabled while `regs` lives, by
        // `PtRegs`' invariant, and the record borrows `regs`); `regs` are
        // the hit's registers.
        Some(PerfRecord {
            buf: buf.cast(),
            len,
            size: size_c,
            rctx,
            head,
            regs: regs.as_raw(),
            // SAFETY: by the type invariant the call is valid.
            ty: unsafe { (*self.as_raw()).event.type_ } as u16,
            _call: core::marker::PhantomData,
        })
    }
}

/// A perf record being written; submitted to perf when dropped
/// (`perf_trace_buf_submit()`).
///
/// # Invariants
///
/// `buf` is perf's per-CPU trace buffer of `size >= len` bytes taken with
/// recursion context `rctx`; `head` is this CPU's list of perf events on
/// the event, `regs` the hit's registers.
#[cfg(all(CONFIG_KPROBES, CONFIG_PERF_EVENTS))]
#[must_use]
pub struct PerfRecord<'a> {
    buf: *mut u8,
    len: usize,
    size: i32,
    rctx: i32,
    head: *mut bindings::hlist_head,
    regs: *mut bindings::pt_regs,
    ty: u16,
    _call: core::marker::PhantomData<&'a PerfCall>,
}

#[cfg(all(CONFIG_KPROBES, CONFIG_PERF_EVENTS))]
impl PerfRecord<'_> {
    /// The whole record, zeroed; bytes 0..8 are the `trace_entry` header,
    /// which perf fills in when the record is submitted.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: by the type invariant `buf` has `len` writable bytes.
        unsafe {
            ptr::write_bytes(self.buf, 0, self.len);
            core::slice::from_raw_parts_mut(self.buf, self.len)
        }
    }
}

#[cfg(all(CONFIG_KPROBES, CONFIG_PERF_EVENTS))]
impl Drop for PerfRecord<'_> {
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn drop(&mut self) {
        // SAFETY: by the type invariant; `perf_tp_event()` releases the
        // recursion context.
        unsafe {
            bindings::perf_tp_event(
                self.ty,
                1,
                self.buf.cast(),
                self.size,
                self.regs,
                self.head,
                self.rctx,
                ptr::null_mut(),
            )
        };
    }
}

/// Where a probe handler finds the event's [`PerfCall`] while perf has the
/// event open (the [`Targets`](super::Targets)' perf).
///
/// # Invariants
///
/// A non-null `call` is a [`PerfCall`]: only [`Registration`](super::Registration)'s `reg`
/// callback sets it (in `TRACE_REG_PERF_REGISTER`) and clears it (in
/// `TRACE_REG_PERF_UNREGISTER`, waiting for readers).
pub struct PerfSlot {
    call: AtomicPtr<bindings::trace_event_call>,
}

impl PerfSlot {
    /// A slot with no perf event in it.
    pub(super) const fn new() -> Self {
        // INVARIANT: `call` is null.
        PerfSlot {
            call: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Keeps `perf` (from `reg`'s `TRACE_REG_PERF_REGISTER`).
    pub(super) fn set(&self, perf: &PerfCall) {
        // INVARIANT: `perf` is the event whose `TRACE_REG_PERF_REGISTER` the
        // caller (`Registration::reg`) is handling; `reg` has `clear` forget
        // it in its `TRACE_REG_PERF_UNREGISTER`.
        self.call.store(perf.as_raw(), Ordering::Release);
    }

    /// Forgets it (from `reg`) and waits until no handler can see it any
    /// more.
    pub(super) fn clear(&self) {
        // INVARIANT: null from here on; `synchronize_rcu()` below waits for
        // the `with` callers that loaded the old value.
        self.call.store(ptr::null_mut(), Ordering::Release);
        // SAFETY: no preconditions; waits for `with` callers.
        unsafe { bindings::synchronize_rcu() };
    }

    /// Whether perf has the event open.
    #[inline]
    pub fn is_set(&self) -> bool {
        !self.call.load(Ordering::Relaxed).is_null()
    }

    /// Calls `f` with the event if perf has it open.
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    pub fn with(&self, f: impl FnOnce(&PerfCall)) {
        if !self.is_set() {
            return;
        }
        // An RCU-sched read side; `clear` waits for it.
        let _guard = rcu::read_lock_sched();
        let p = self.call.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: by the type invariant `p` stays valid until `clear`
            // returns, which waits for the read side `_guard` holds.
            f(unsafe { PerfCall::from_raw(p) });
        }
    }
}

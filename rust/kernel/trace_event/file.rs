// SPDX-License-Identifier: GPL-2.0

//! The event in one trace instance ([`EventFile`]) and the records written
//! into that instance's ring buffer ([`Reservation`], and a probe hit's
//! record through [`EventFile::record_hit`]).
//!
//! Records go through `trace_event_buffer_reserve()` and
//! `trace_event_buffer_commit()`, as every event's do; the tracing core
//! takes its own short way through them for an event that asks nothing of
//! its records. A probe hit's commit also says what became of the record
//! (`trace_event_buffer_commit_fate()`), so that a provider can count why a
//! hit left none.

use crate::{bindings, types::Opaque};
use core::{marker::PhantomData, mem::MaybeUninit, ptr};

/// What became of a probe hit's record in one instance
/// ([`EventFile::record_hit`]; C's `enum trace_event_record_fate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Fate {
    /// It is in the ring buffer.
    Written = bindings::trace_event_record_fate_TRACE_EVENT_RECORD_WRITTEN,
    /// The event's filter rejected it.
    Filtered = bindings::trace_event_record_fate_TRACE_EVENT_RECORD_FILTERED,
    /// The event is soft-disabled (a trigger's soft mode), or its pid
    /// filter drops the task.
    Disabled = bindings::trace_event_record_fate_TRACE_EVENT_RECORD_DISABLED,
    /// The ring buffer took no record: tracing is off, the buffer is full
    /// (not overwriting) or disabled, or the record is too big for it.
    NoRoom = bindings::trace_event_record_fate_TRACE_EVENT_RECORD_NO_ROOM,
}

impl Fate {
    /// The fate the tracing core answered.
    #[inline(always)]
    fn from_raw(fate: bindings::trace_event_record_fate) -> Self {
        match fate {
            bindings::trace_event_record_fate_TRACE_EVENT_RECORD_WRITTEN => Fate::Written,
            bindings::trace_event_record_fate_TRACE_EVENT_RECORD_FILTERED => Fate::Filtered,
            bindings::trace_event_record_fate_TRACE_EVENT_RECORD_DISABLED => Fate::Disabled,
            // `TRACE_EVENT_RECORD_NO_ROOM`, or a fate this enum does not
            // know yet: no record.
            _ => Fate::NoRoom,
        }
    }
}

/// The event in one trace instance (`struct trace_event_file`).
///
/// # Invariants
///
/// Wraps a valid `trace_event_file`, alive while the event is enabled in
/// its instance.
#[repr(transparent)]
pub struct EventFile(Opaque<bindings::trace_event_file>);

impl EventFile {
    /// Borrows the `trace_event_file` at `ptr` as an [`EventFile`] for `'a`.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::trace_event_file) -> &'a Self {
        // INVARIANT: the caller guarantees that `ptr` is a valid
        // `trace_event_file` for `'a`, as long as the reference can be used.
        // SAFETY: `repr(transparent)`; validity by the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The C `struct trace_event_file` (the event in one instance).
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::trace_event_file {
        // Not `Opaque::get()`: the kernel crate's shared instance of it
        // would be a call on the probe hit's path. `Self` is
        // `repr(transparent)` over `Opaque<trace_event_file>`, which has the layout of
        // `trace_event_file`.
        ptr::from_ref(self).cast_mut().cast()
    }

    /// The file's `EVENT_FILE_FL_*` flags, read once: the tracing core
    /// changes them under its locks, and a hit reads them without.
    #[inline(always)]
    fn flags(&self) -> u64 {
        // SAFETY: by the type invariant the file is valid.
        unsafe { ptr::addr_of!((*self.as_raw()).flags).read_volatile() as u64 }
    }

    /// Runs the event's unconditional triggers and says whether the event is
    /// soft-disabled, or its pid filter drops the task
    /// (`trace_trigger_soft_disabled()`): then no record. A provider asks
    /// before it reserves, as C's do.
    #[inline]
    pub fn soft_disabled(&self) -> bool {
        self.soft_disabled_as(self.flags())
    }

    /// [`EventFile::soft_disabled`] with the file's flags read.
    ///
    /// The flag tests are those of C's inline `trace_trigger_soft_disabled()`,
    /// written again, and it answers a soft-disabled event without triggers
    /// itself: through a helper, the inline would be a call on every hit.
    #[inline(always)]
    fn soft_disabled_as(&self, flags: u64) -> bool {
        let mode = u64::from(
            bindings::EVENT_FILE_FL_TRIGGER_MODE
                | bindings::EVENT_FILE_FL_SOFT_DISABLED
                | bindings::EVENT_FILE_FL_PID_FILTER,
        );
        if flags & mode == 0 || flags & u64::from(bindings::EVENT_FILE_FL_TRIGGER_COND) != 0 {
            return false;
        }
        // Soft-disabled with no trigger to run: what the C function answers
        // then, without the call (an `enable_event` trigger's target, which
        // a provider is asked about on every hit).
        let triggers = u64::from(bindings::EVENT_FILE_FL_TRIGGER_MODE);
        let soft_disabled = u64::from(bindings::EVENT_FILE_FL_SOFT_DISABLED);
        if flags & triggers == 0 && flags & soft_disabled != 0 {
            return true;
        }
        // SAFETY: as above.
        unsafe { bindings::__trace_trigger_soft_disabled(self.as_raw()) }
    }

    /// `trace_event_buffer_reserve()` of `len` bytes into `fbuffer`: the
    /// record, its `trace_entry` filled in, or null.
    #[inline(always)]
    fn reserve_into(
        &self,
        fbuffer: &mut MaybeUninit<bindings::trace_event_buffer>,
        len: usize,
    ) -> *mut u8 {
        // SAFETY: the file is valid (type invariant) and `fbuffer` is valid
        // for writes.
        unsafe { bindings::trace_event_buffer_reserve(fbuffer.as_mut_ptr(), self.as_raw(), len) }
            .cast()
    }

    /// Reserves a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) in the instance's ring buffer, committed when
    /// the [`Reservation`] is dropped (`trace_event_buffer_reserve()`);
    /// `None` if the buffer is off or full, the pid filter drops the task,
    /// or `len` is shorter than the header. Ask
    /// [`EventFile::soft_disabled`] first. A probe handler records with
    /// [`EventFile::record_hit`], which its registers make safe.
    ///
    /// # Safety
    ///
    /// Preemption is disabled from before this call until the
    /// [`Reservation`] is dropped, as where a tracepoint's or a probe's
    /// handler runs (inside [`super::FileSet::for_each`], for one): the
    /// record's context subtracts the handler's own preemption count, and
    /// the ring buffer keeps preemption off from the reserve to the commit,
    /// so nothing may sleep in between.
    #[inline]
    pub unsafe fn reserve(&self, len: usize) -> Option<Reservation<'_>> {
        if len < super::ENTRY_SIZE {
            return None;
        }
        let mut fbuffer = MaybeUninit::<bindings::trace_event_buffer>::uninit();
        // Nothing of the reservation points into this frame, so it can
        // move; the ring buffer keeps preemption off from the reserve to
        // the commit.
        let entry = self.reserve_into(&mut fbuffer, len);
        if entry.is_null() {
            return None;
        }
        // INVARIANT: the successful reserve filled in `fbuffer` and gave
        // `len` writable bytes at `entry`.
        Some(Reservation {
            // SAFETY: filled in by the successful reserve.
            fbuffer: unsafe { fbuffer.assume_init() },
            entry,
            len,
            _file: PhantomData,
        })
    }

    /// Writes a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) for a probe hit with registers `regs`: `fill`
    /// writes the rest. As C's handlers do first
    /// (`trace_trigger_soft_disabled()`), the event's unconditional
    /// triggers run, and nothing is written while it is soft-disabled. A
    /// stack trace recorded with the record (`options/stacktrace`) starts at
    /// the probed instruction, as for C's kprobe events
    /// (`__kprobe_trace_func()`: `fbuffer.regs = regs`). A `len` shorter
    /// than the header writes nothing (a [`Fate::NoRoom`]).
    ///
    /// Then `done` is told what became of the record, so that a provider
    /// can count why a hit left none.
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn record_hit(
        &self,
        len: usize,
        regs: &crate::ptrace::PtRegs,
        fill: impl FnOnce(&mut [u8]),
        done: impl FnOnce(Fate),
    ) {
        if len < super::ENTRY_SIZE {
            return done(Fate::NoRoom);
        }
        if self.soft_disabled() {
            return done(Fate::Disabled);
        }
        let mut fbuffer = MaybeUninit::<bindings::trace_event_buffer>::uninit();
        let entry = self.reserve_into(&mut fbuffer, len);
        if entry.is_null() {
            // Without a pid filter, no room is all the C function can
            // answer: asked without the call (the hit of a stopped or full
            // buffer).
            if self.flags() & u64::from(bindings::EVENT_FILE_FL_PID_FILTER) == 0 {
                return done(Fate::NoRoom);
            }
            // SAFETY: the file is valid; preemption is off while `regs`
            // lives, as since the reserve.
            let fate = unsafe { bindings::trace_event_buffer_unreserved(self.as_raw()) };
            return done(Fate::from_raw(fate));
        }
        // SAFETY: the successful reserve filled in `fbuffer`; `regs` (the
        // registers of the hit) outlive the commit below.
        unsafe { ptr::addr_of_mut!((*fbuffer.as_mut_ptr()).regs).write(regs.as_raw()) };
        // SAFETY: the reserve gave `len` writable bytes at `entry`, ours
        // until the commit below.
        fill(unsafe { core::slice::from_raw_parts_mut(entry, len) });
        // SAFETY: `fbuffer` holds the reservation made above.
        let fate = unsafe { bindings::trace_event_buffer_commit_fate(fbuffer.as_mut_ptr()) };
        done(Fate::from_raw(fate))
    }
}

/// A record reserved in a ring buffer; committed when dropped.
///
/// # Invariants
///
/// `entry` points to `len` writable bytes of the reserved record, and
/// `fbuffer` is the reservation `trace_event_buffer_commit()` takes.
#[must_use]
pub struct Reservation<'a> {
    fbuffer: bindings::trace_event_buffer,
    entry: *mut u8,
    len: usize,
    _file: PhantomData<&'a EventFile>,
}

impl Reservation<'_> {
    /// The whole record; bytes 0..8 are the `trace_entry` header.
    pub fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: by the type invariant `entry` has `len` writable bytes,
        // owned by this reservation until commit.
        unsafe { core::slice::from_raw_parts_mut(self.entry, self.len) }
    }
}

impl Drop for Reservation<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: by the type invariant `fbuffer` holds a reservation.
        unsafe { bindings::trace_event_buffer_commit(&mut self.fbuffer) };
    }
}

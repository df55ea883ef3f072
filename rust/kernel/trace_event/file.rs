// SPDX-License-Identifier: GPL-2.0

//! The event in one trace instance ([`EventFile`]) and the records written
//! into that instance's ring buffer ([`Reservation`], and a probe hit's
//! record through [`EventFile::record_hit`]).
//!
//! Records go through the tracing core's API for providers that write their
//! own records (a patch of the series: `trace_event_record_reserve()`,
//! `_commit()` and `_write()`), which this file wraps:
//!
//! - While nothing needs the full commit (no filter, trigger, pid filter,
//!   soft-disable, stack trace option, `tp_printk` or export), the reserve
//!   and the commit write straight into the ring buffer. Otherwise they take
//!   `trace_event_buffer_reserve()` and `_commit()`, with the hit's registers,
//!   so that `options/stacktrace` shows the probed function's stack.
//! - An event whose only reason for the full path is a filter makes a record
//!   of up to 128 bytes on the stack, which `trace_event_record_write()`
//!   filters before anything is reserved. A zeroed word follows it: a filter
//!   on an empty string at the record's end reads a NUL there.
//! - The soft-disabled test is the caller's (`EventFile::soft_disabled`), as
//!   C's providers call `trace_trigger_soft_disabled()` before they reserve;
//!   inside the API it would cost a second call on every hit.

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
    /// The fate C's record API answered.
    #[inline(always)]
    fn from_raw(fate: bindings::trace_event_record_fate) -> Self {
        // SAFETY: `trace_event_record_commit()` and `_write()` return one
        // of the values of `enum trace_event_record_fate`, and this enum
        // has those values (`repr(u32)`). (No match: on a hit, the
        // conversion costs no instruction.)
        unsafe { core::mem::transmute::<bindings::trace_event_record_fate, Fate>(fate) }
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
    /// itself: calling the inline through a helper instead cost 14 guest
    /// instructions a soft-disabled hit, 3% of it (`make bench-vm` on 6.12
    /// x86-64, "p, soft-disabled": 439.6 a call of the probed function,
    /// 453.6 with the call, C 454.7), and 3 a hit an event filter rejects.
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

    /// `trace_event_record_reserve()` of `len` bytes into `rec`, with
    /// `regs` (or null) for a stack trace: the record, or null. What
    /// [`EventFile::reserve`] and [`EventFile::record_hit`] share.
    #[inline(always)]
    fn reserve_into(
        &self,
        rec: &mut MaybeUninit<bindings::trace_event_record>,
        len: usize,
        regs: *mut bindings::pt_regs,
    ) -> *mut core::ffi::c_void {
        // SAFETY: the file is valid (type invariant) and `rec` is valid for
        // writes; `regs` is null or the registers of a hit, alive (and
        // preemption off) while the caller's `&PtRegs` lives.
        unsafe { bindings::trace_event_record_reserve(rec.as_mut_ptr(), self.as_raw(), len, regs) }
    }

    /// Reserves a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) in the instance's ring buffer, committed when
    /// the [`Reservation`] is dropped (`trace_event_record_reserve()`);
    /// `None` if the buffer is off or full, the pid filter drops the task,
    /// or `len` is shorter than the header. Ask
    /// [`EventFile::soft_disabled`] first.
    #[inline]
    pub fn reserve(&self, len: usize) -> Option<Reservation<'_>> {
        if len < super::ENTRY_SIZE {
            return None;
        }
        let mut rec = MaybeUninit::<bindings::trace_event_record>::uninit();
        // Nothing of the reservation points into this frame, so it can
        // move; the ring buffer keeps preemption off from the reserve to
        // the commit.
        let entry = self.reserve_into(&mut rec, len, ptr::null_mut());
        if entry.is_null() {
            return None;
        }
        // INVARIANT: the successful reserve filled in `rec` and gave `len`
        // writable bytes at `entry`.
        Some(Reservation {
            // SAFETY: filled in by the successful reserve.
            rec: unsafe { rec.assume_init() },
            entry: entry.cast(),
            len,
            _file: PhantomData,
        })
    }

    /// Writes a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) for a probe hit with registers `regs`: `fill`
    /// writes the rest. As C's handlers do first
    /// (`trace_trigger_soft_disabled()`), the event's unconditional
    /// triggers run, and nothing is written while it is soft-disabled. The
    /// record is reserved, filled and committed with the reservation on the
    /// caller's stack (`trace_event_record_reserve()`); a filtered event's
    /// record is made on the stack and written only if the filter takes it
    /// (`trace_event_record_write()`). A stack trace recorded with the
    /// record (`options/stacktrace`) starts at the probed instruction, as
    /// for C's kprobe events (`__kprobe_trace_func()`,
    /// trace_kprobe.c:1470-1480: `fbuffer.regs = regs`). A `len` shorter
    /// than the header writes nothing (a [`Fate::NoRoom`]).
    ///
    /// Then `done` is told what became of the record, so that a provider
    /// can count why a hit left none. (A callback, not a return value: on
    /// the usual paths the fate is a constant where `done` is inlined.)
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
        // Which of the tracing core's calls fits is asked here, without a
        // call (they ask again themselves).
        let flags = self.flags();
        if flags & FULL_PATH_FLAGS != 0 {
            if self.soft_disabled_as(flags) {
                return done(Fate::Disabled);
            }
            if flags & FULL_PATH_FLAGS == FILTERED && len <= FILTERED_ON_STACK {
                // A filter alone: the record is made on the stack, and the
                // filter decides before anything is reserved
                // (`trace_event_record_write()`). (Words: the filter reads
                // the fields where they are. One more than the record,
                // zeroed: a string filter reads an empty string at the
                // record's end, as a NUL there.)
                let mut rec = MaybeUninit::<[u64; FILTERED_ON_STACK / 8 + 1]>::uninit();
                let p = rec.as_mut_ptr().cast::<u8>();
                // SAFETY: `p` has room for `FILTERED_ON_STACK + 8 >= len + 8`
                // bytes; the first `len + 8` are zeroed here, so
                // initialised.
                let bytes = unsafe {
                    ptr::write_bytes(p, 0, len + 8);
                    core::slice::from_raw_parts_mut(p, len)
                };
                fill(bytes);
                // SAFETY: the file is valid; `p` has the record's `len`
                // bytes and a zeroed word after them, 8-aligned; preemption
                // is off while `regs` lives.
                let fate = unsafe {
                    bindings::trace_event_record_write(self.as_raw(), p.cast(), len, regs.as_raw())
                };
                return done(Fate::from_raw(fate));
            }
        }
        // Without a filter, pid filter or soft-disable (`FULL_PATH_FLAGS`
        // clear when the flags were read), a record is dropped only for want
        // of room, and a record reserved is written: the usual hit asks C
        // nothing about it, and `done` is called with a constant fate.
        let plain = flags & FULL_PATH_FLAGS == 0;
        let mut rec = MaybeUninit::<bindings::trace_event_record>::uninit();
        let entry = self.reserve_into(&mut rec, len, regs.as_raw());
        if entry.is_null() {
            return done(if plain {
                Fate::NoRoom
            } else {
                unreserved(&rec)
            });
        }
        // SAFETY: the reserve gave `len` writable bytes at `entry`, ours
        // until the commit below.
        fill(unsafe { core::slice::from_raw_parts_mut(entry.cast::<u8>(), len) });
        // SAFETY: `rec` holds the reservation made above; `regs` outlives
        // the commit.
        let fate = unsafe { bindings::trace_event_record_commit(rec.as_mut_ptr()) };
        done(if plain {
            Fate::Written
        } else {
            Fate::from_raw(fate)
        })
    }
}

/// Why a reserve into `rec` gave no record. (Inline: one load, where a
/// call would cost a hit that finds tracing off more than it.)
#[cfg(CONFIG_KPROBES)]
#[inline(always)]
fn unreserved(rec: &MaybeUninit<bindings::trace_event_record>) -> Fate {
    // SAFETY: a reserve that returns null has set `fate` (and only it),
    // to a value of `enum trace_event_record_fate`.
    Fate::from_raw(unsafe { ptr::addr_of!((*rec.as_ptr()).fate).read() })
}

/// The file flags under which a record needs more than a reserve and a
/// commit (a pid filter, a filter, a trigger, a soft-disable): then
/// [`EventFile::record_hit`] asks about the soft-disable and the filter
/// first, as the tracing core would.
#[cfg(CONFIG_KPROBES)]
const FULL_PATH_FLAGS: u64 = (bindings::EVENT_FILE_FL_PID_FILTER
    | bindings::EVENT_FILE_FL_FILTERED
    | bindings::EVENT_FILE_FL_SOFT_DISABLED
    | bindings::EVENT_FILE_FL_TRIGGER_MODE
    | bindings::EVENT_FILE_FL_TRIGGER_COND) as u64;

/// A filter on the file (`EVENT_FILE_FL_FILTERED`).
#[cfg(CONFIG_KPROBES)]
const FILTERED: u64 = bindings::EVENT_FILE_FL_FILTERED as u64;

/// Largest record of a filtered event made on the stack and filtered
/// before it is reserved ([`EventFile::record_hit`]); a larger one takes
/// the tracing core's filter buffer.
#[cfg(CONFIG_KPROBES)]
const FILTERED_ON_STACK: usize = 128;

/// A record reserved in a ring buffer; committed when dropped.
///
/// # Invariants
///
/// `entry` points to `len` writable bytes of the reserved record, and
/// `rec` is the reservation `trace_event_record_commit()` takes.
#[must_use]
pub struct Reservation<'a> {
    rec: bindings::trace_event_record,
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
        // SAFETY: by the type invariant `rec` holds a reservation.
        unsafe { bindings::trace_event_record_commit(&mut self.rec) };
    }
}

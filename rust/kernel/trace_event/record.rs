// SPDX-License-Identifier: GPL-2.0

//! Writing an event's records: the instances it is enabled in
//! ([`Targets`], [`FileSet`], [`EventFile`]) and their ring buffers
//! ([`Reservation`]), and perf and BPF ([`PerfSlot`], [`PerfCall`],
//! [`PerfRecord`]).

use crate::{bindings, error::Result, prelude::*, types::Opaque};
use core::{
    ffi::c_void,
    ptr,
    sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering},
};

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
    /// soft-disabled (`trace_trigger_soft_disabled()`): then no record.
    #[inline]
    pub fn soft_disabled(&self) -> bool {
        self.soft_disabled_as(self.flags())
    }

    /// [`EventFile::soft_disabled`] with the file's flags read.
    #[inline(always)]
    fn soft_disabled_as(&self, flags: u64) -> bool {
        let mode = (bindings::EVENT_FILE_FL_TRIGGER_MODE
            | bindings::EVENT_FILE_FL_SOFT_DISABLED
            | bindings::EVENT_FILE_FL_PID_FILTER) as u64;
        if flags & mode == 0 || flags & bindings::EVENT_FILE_FL_TRIGGER_COND as u64 != 0 {
            return false;
        }
        // SAFETY: as above.
        unsafe { bindings::__trace_trigger_soft_disabled(self.as_raw()) }
    }

    /// Reserves a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) in the instance's ring buffer; `None` if the
    /// buffer is off, full, or the event filtered by pid.
    pub fn reserve(&self, len: usize) -> Option<Reservation<'_>> {
        let mut fbuffer = core::mem::MaybeUninit::<bindings::trace_event_buffer>::uninit();
        // SAFETY: the file is valid (type invariant); a successful reserve
        // fills in every field of `fbuffer` (trace_events.c:641-670).
        let entry = unsafe {
            bindings::trace_event_buffer_reserve(fbuffer.as_mut_ptr(), self.as_raw(), len as _)
        };
        if entry.is_null() {
            return None;
        }
        // INVARIANT: `trace_event_buffer_reserve()` reserved the `len`
        // bytes at `entry` and filled in `fbuffer` for the commit, its
        // `regs` null.
        Some(Reservation {
            // SAFETY: filled in by the successful reserve.
            fbuffer: unsafe { fbuffer.assume_init() },
            entry: entry.cast(),
            len,
            _file: core::marker::PhantomData,
        })
    }

    /// Writes a record of `len` bytes (the `trace_entry` header included
    /// and already filled in) for a probe hit with registers `regs`: `fill`
    /// writes the rest, then the record is committed. As C's handlers do
    /// first (`trace_trigger_soft_disabled()`), the event's unconditional
    /// triggers run, and nothing is written while it is soft-disabled.
    /// Nothing is written either if the buffer is off, full, or the event
    /// filtered by pid. A stack trace
    /// recorded with the record (`options/stacktrace`) starts at the probed
    /// instruction, as for C's kprobe events (`__kprobe_trace_func()`,
    /// trace_kprobe.c:1470-1480: `fbuffer.regs = regs`).
    ///
    /// Inlined, with the commit's state on the caller's stack: this is the
    /// probe hit's path, the shape of C's, without a [`Reservation`] moved
    /// around. While nothing but the ring buffer is between the event and
    /// its instance, the record goes straight into the buffer
    /// (`EventFile::reserve_direct`); otherwise through
    /// `trace_event_buffer_reserve()` and `trace_event_buffer_commit()`.
    /// A `len` shorter than the header writes nothing.
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn record_hit(
        &self,
        len: usize,
        regs: &crate::kprobes::PtRegs,
        fill: impl FnOnce(&mut [u8]),
    ) {
        if len < super::ENTRY_SIZE {
            return;
        }
        // The file's own reasons for the C path (a filter, a trigger, a
        // soft-disable) are asked here, without a call.
        let flags = self.flags();
        #[cfg(CONFIG_X86_64)]
        if flags & INDIRECT_FILE_FLAGS == 0 {
            let mut direct = Direct {
                buffer: ptr::null_mut(),
                entry: ptr::null_mut(),
            };
            match self.reserve_direct(len, &mut direct) {
                DirectReserve::Reserved => {
                    // SAFETY: the reserve gave `len` writable bytes at
                    // `entry`, ours until the commit below.
                    fill(unsafe { core::slice::from_raw_parts_mut(direct.entry, len) });
                    // SAFETY: `direct` holds the reservation made above.
                    unsafe { direct.commit() };
                    return;
                }
                DirectReserve::Dropped => return,
                DirectReserve::Indirect => {}
            }
        } else if self.soft_disabled_as(flags) {
            return;
        } else if flags & INDIRECT_FILE_FLAGS == FILTERED && len <= FILTERED_ON_STACK {
            // A filter alone: the record is made on the stack and goes
            // into the ring buffer only if the filter takes it.
            // (Words: the filter reads the fields where they are. One more
            // than the record, zeroed: a string filter reads an empty
            // string at the record's end, as a NUL there.)
            let mut rec = core::mem::MaybeUninit::<[u64; FILTERED_ON_STACK / 8 + 1]>::uninit();
            let p = rec.as_mut_ptr().cast::<u8>();
            // SAFETY: `p` has room for `FILTERED_ON_STACK + 8 >= len + 8`
            // bytes; the first `len + 8` are zeroed here, so initialised.
            let rec = unsafe {
                ptr::write_bytes(p, 0, len + 8);
                core::slice::from_raw_parts_mut(p, len)
            };
            fill(rec);
            self.write_filtered(rec, regs);
            return;
        }
        #[cfg(not(CONFIG_X86_64))]
        if self.soft_disabled_as(flags) {
            return;
        }
        let mut fbuffer = core::mem::MaybeUninit::<bindings::trace_event_buffer>::uninit();
        let fb = fbuffer.as_mut_ptr();
        // SAFETY: the file is valid (type invariant); a successful reserve
        // fills in every field of `fbuffer` (trace_events.c:641-670).
        let entry = unsafe { bindings::trace_event_buffer_reserve(fb, self.as_raw(), len as _) };
        if entry.is_null() {
            return;
        }
        // SAFETY: `fb` is filled in; `regs` outlives the commit below.
        unsafe { (*fb).regs = regs.as_raw() };
        // SAFETY: the reserve gave `len` writable bytes at `entry`, ours
        // until the commit below.
        fill(unsafe { core::slice::from_raw_parts_mut(entry.cast::<u8>(), len) });
        // SAFETY: `fb` holds the reservation made above.
        unsafe { bindings::trace_event_buffer_commit(fb) };
    }

    /// Reserves a record of `len` bytes straight in the instance's ring
    /// buffer, as `trace_event_buffer_reserve()` would and with the same
    /// header, when its commit would do nothing but commit: the file has no
    /// pid filter, filter, trigger or soft-disable
    /// (`__event_trigger_test_discard()`, `trace_event_buffer_lock_reserve()`'s
    /// filter buffer), the instance records no stack traces
    /// (`ftrace_trace_stack()`, `ftrace_trace_userstack()`), and events go
    /// neither to printk nor to an export (`trace_event_buffer_commit()`,
    /// trace.c:2814-2838). Then `rec` holds the reservation for
    /// [`Direct::commit`]; otherwise the caller takes the C path.
    #[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
    #[inline(never)]
    fn reserve_direct(&self, len: usize, rec: &mut Direct) -> DirectReserve {
        // (The caller has seen none of `INDIRECT_FILE_FLAGS` in the file's
        // flags; should one be set since, the record is as if made just
        // before, as C's reserve and commit read the flags at two times.)
        let file = self.as_raw();
        let Some(tr) = self.direct_instance(false) else {
            return DirectReserve::Indirect;
        };
        let ctx = trace_ctx_dec();
        // SAFETY: `tr` is the file's instance (`direct_instance`).
        let Some(direct) = (unsafe { Direct::reserve(tr, len) }) else {
            return DirectReserve::Dropped;
        };
        // SAFETY: the event has `len >= ENTRY_SIZE` bytes at `entry`,
        // 4-aligned as a `trace_entry` wants (ring buffer events are); the
        // file's event is registered while the file exists.
        unsafe {
            bindings::tracing_generic_entry_update(
                direct.entry.cast(),
                (*(*file).event_call).event.type_ as u16,
                ctx,
            )
        };
        *rec = direct;
        DirectReserve::Reserved
    }

    /// The file's instance, if a record of this file can go straight into
    /// its ring buffer: the instance records no stack trace with it, and
    /// events go neither to printk nor to an export; with `filtering`, the
    /// instance has no hist trigger asking for unbuffered filtering either
    /// (`no_filter_buffering_ref`, which C's filter buffer obeys).
    #[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
    #[inline(always)]
    fn direct_instance(&self, filtering: bool) -> Option<*mut bindings::trace_array> {
        // SAFETY: a file's instance outlives it; the flags and the count
        // are words the core writes under its locks.
        let (tr, trace_flags, unbuffered) = unsafe {
            let tr = (*self.as_raw()).tr;
            (
                tr,
                ptr::addr_of!((*tr).trace_flags).read_volatile(),
                filtering && ptr::addr_of!((*tr).no_filter_buffering_ref).read_volatile() != 0,
            )
        };
        if trace_flags & INDIRECT_TRACE_FLAGS != 0 || keys_on() || unbuffered {
            return None;
        }
        Some(tr)
    }

    /// Writes the record `rec` (made whole, header aside) of a file whose
    /// only reason for the C path is a filter: the header is filled in,
    /// the filter asked (`filter_match_preds()`, as
    /// `__event_trigger_test_discard()` does on the commit), and only a
    /// record it takes is reserved and copied into the ring buffer. C
    /// makes the record in a per-CPU filter buffer
    /// (`trace_event_buffer_lock_reserve()`) and copies it the same way.
    /// When the instance asks for more than a commit (a stack trace, a
    /// hist trigger's timestamps: `no_filter_buffering_ref`, printk, an
    /// export), the record goes through the C path instead.
    #[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
    #[inline(never)]
    fn write_filtered(&self, rec: &mut [u8], regs: &crate::kprobes::PtRegs) {
        let file = self.as_raw();
        let len = rec.len();
        let Some(tr) = self.direct_instance(true) else {
            self.write_copy(rec, regs);
            return;
        };
        let ctx = trace_ctx_dec();
        // SAFETY: `rec` has `len >= ENTRY_SIZE` bytes (the caller's test),
        // and a byte array has the alignment the C function needs for a
        // `trace_entry` only if placed so: write the header through a local
        // one and copy it.
        unsafe {
            let mut ent = core::mem::MaybeUninit::<bindings::trace_entry>::uninit();
            bindings::tracing_generic_entry_update(
                ent.as_mut_ptr(),
                (*(*file).event_call).event.type_ as u16,
                ctx,
            );
            ptr::copy_nonoverlapping(
                ent.as_ptr().cast::<u8>(),
                rec.as_mut_ptr(),
                super::ENTRY_SIZE,
            );
        }
        // SAFETY: the filter is freed only after an RCU-sched grace period
        // (the handler runs with preemption off); `rec` is the whole record
        // the filter's field offsets refer to. A null filter takes all.
        let take = unsafe {
            let filter = ptr::addr_of!((*file).filter).read_volatile();
            bindings::filter_match_preds(filter, rec.as_mut_ptr().cast())
        };
        if take == 0 {
            return;
        }
        // SAFETY: `tr` is the file's instance (`direct_instance`).
        let Some(direct) = (unsafe { Direct::reserve(tr, len) }) else {
            return;
        };
        // SAFETY: the reservation has `len` bytes at `entry`, ours until the
        // commit; it holds the reservation.
        unsafe {
            ptr::copy_nonoverlapping(rec.as_ptr(), direct.entry, len);
            direct.commit();
        }
    }

    /// The C path for a record made beforehand: reserved through
    /// `trace_event_buffer_reserve()` (which writes the header), the rest
    /// of `rec` copied in, committed (filter, triggers, stack trace).
    #[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
    fn write_copy(&self, rec: &[u8], regs: &crate::kprobes::PtRegs) {
        let len = rec.len();
        let mut fbuffer = core::mem::MaybeUninit::<bindings::trace_event_buffer>::uninit();
        let fb = fbuffer.as_mut_ptr();
        // SAFETY: as in `record_hit`.
        let entry = unsafe { bindings::trace_event_buffer_reserve(fb, self.as_raw(), len as _) };
        if entry.is_null() {
            return;
        }
        // SAFETY: the reserve gave `len` bytes at `entry`; `rec` has `len`
        // bytes, of which those after the header are copied; `fb` is
        // filled in and `regs` outlives the commit.
        unsafe {
            (*fb).regs = regs.as_raw();
            ptr::copy_nonoverlapping(
                rec.as_ptr().add(super::ENTRY_SIZE),
                entry.cast::<u8>().add(super::ENTRY_SIZE),
                len - super::ENTRY_SIZE,
            );
            bindings::trace_event_buffer_commit(fb);
        }
    }
}

/// A filter on the file (`EVENT_FILE_FL_FILTERED`).
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
const FILTERED: u64 = bindings::EVENT_FILE_FL_FILTERED as u64;

/// Largest record of a filtered event made on the stack and filtered
/// before it is reserved ([`EventFile::write_filtered`]); a larger one takes
/// the C path.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
const FILTERED_ON_STACK: usize = 128;

/// File flags under which a record takes the C path
/// ([`EventFile::reserve_direct`]).
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
const INDIRECT_FILE_FLAGS: u64 = (bindings::EVENT_FILE_FL_PID_FILTER
    | bindings::EVENT_FILE_FL_FILTERED
    | bindings::EVENT_FILE_FL_SOFT_DISABLED
    | bindings::EVENT_FILE_FL_TRIGGER_MODE
    | bindings::EVENT_FILE_FL_TRIGGER_COND) as u64;

/// Instance options under which a record takes the C path: a stack trace
/// follows it.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
const INDIRECT_TRACE_FLAGS: bindings::trace_iterator_flags =
    STACKTRACE | bindings::trace_iterator_flags_TRACE_ITER_USERSTACKTRACE;

/// `options/stacktrace` (only with `CONFIG_STACKTRACE`).
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64, CONFIG_STACKTRACE))]
const STACKTRACE: bindings::trace_iterator_flags =
    bindings::trace_iterator_flags_TRACE_ITER_STACKTRACE;
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64, not(CONFIG_STACKTRACE)))]
const STACKTRACE: bindings::trace_iterator_flags = 0;

/// What [`EventFile::reserve_direct`] did.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
enum DirectReserve {
    /// Reserved straight in the ring buffer.
    Reserved,
    /// The ring buffer took nothing (off, full, or recursing): no record,
    /// as the C path would give.
    Dropped,
    /// The record must take the C path.
    Indirect,
}

/// A record reserved straight in a ring buffer ([`Direct::reserve`], for
/// [`EventFile::reserve_direct`] and [`EventFile::write_filtered`]).
///
/// # Invariants
///
/// When reserved, `entry` is the data of an event reserved in `buffer` and
/// not yet committed.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
struct Direct {
    buffer: *mut bindings::trace_buffer,
    entry: *mut u8,
}

#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
impl Direct {
    /// Reserves `len` bytes in the ring buffer of the instance `tr`; `None`
    /// when the buffer is off or full (the record is dropped, as on the C
    /// path).
    ///
    /// # Safety
    ///
    /// `tr` is a live trace instance (the instance of a file the caller
    /// holds); the caller commits what it gets, once.
    #[inline(always)]
    unsafe fn reserve(tr: *mut bindings::trace_array, len: usize) -> Option<Direct> {
        // SAFETY: the buffer lives as long as the instance (the caller's
        // guarantee).
        let buffer = unsafe { (*tr).array_buffer.buffer };
        // SAFETY: `buffer` is the instance's ring buffer.
        let event = unsafe { bindings::ring_buffer_lock_reserve(buffer, len as _) };
        if event.is_null() {
            return None;
        }
        // INVARIANT: `entry` is the data of the event just reserved in
        // `buffer`, `len` bytes.
        Some(Direct {
            buffer,
            // SAFETY: `event` was just reserved.
            entry: unsafe { event_data(event) }.cast(),
        })
    }

    /// Commits the record: `__buffer_unlock_commit()` for a record not in
    /// the filter buffer (trace.c:1059-1074).
    ///
    /// # Safety
    ///
    /// `self` holds a reservation ([`DirectReserve::Reserved`]), committed
    /// once.
    #[inline(never)]
    unsafe fn commit(&self) {
        // The next sched switch records this CPU's tasks' comms.
        #[cfg(all(CONFIG_X86_64, CONFIG_SMP))]
        // SAFETY: `trace_taskinfo_save` is a per-CPU variable, whose address
        // is a per-CPU offset that x86-64 reaches through `%gs`, as
        // `__this_cpu_write()` does (arch/x86/include/asm/percpu.h).
        unsafe {
            core::arch::asm!(
                "movb $1, %gs:({0})",
                in(reg) ptr::addr_of!(bindings::trace_taskinfo_save),
                options(att_syntax, nostack)
            )
        };
        #[cfg(not(all(CONFIG_X86_64, CONFIG_SMP)))]
        // SAFETY: without SMP a per-CPU variable is a plain one, written
        // with preemption off (the caller is a probe handler).
        unsafe {
            ptr::addr_of_mut!(bindings::trace_taskinfo_save).write_volatile(true)
        };
        // SAFETY: by the type invariant and the caller's guarantee.
        unsafe { bindings::ring_buffer_unlock_commit(self.buffer) };
    }
}

/// Whether events go to printk (`tp_printk`) or to a trace export:
/// `trace_event_buffer_commit()` does more than commit then.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
#[inline(always)]
fn keys_on() -> bool {
    // SAFETY: the keys are statics of the tracing core; `enabled` is an
    // atomic counter (`static_key_enabled()`).
    unsafe {
        ptr::addr_of!(bindings::tracepoint_printk_key.key.enabled.counter).read_volatile()
            | ptr::addr_of!(bindings::trace_event_exports_enabled.key.enabled.counter)
                .read_volatile()
            != 0
    }
}

/// `tracing_gen_ctx_dec()` (include/linux/trace_events.h): the context
/// word of a record's header, for a record made in a handler that runs
/// with preemption off.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
#[inline(always)]
fn trace_ctx_dec() -> u32 {
    #[cfg(not(CONFIG_PARAVIRT_XXL))]
    let eflags: u64 = {
        let f: u64;
        // SAFETY: `native_save_fl()`, which is `local_save_flags()` without
        // paravirt: reads the flags register.
        unsafe { core::arch::asm!("pushf", "pop {}", out(reg) f, options(att_syntax)) };
        f
    };
    // Under paravirt (a Xen PV guest) the interrupt flag is the
    // hypervisor's, not the register's.
    #[cfg(CONFIG_PARAVIRT_XXL)]
    // SAFETY: no preconditions.
    let eflags: u64 = unsafe { bindings::local_save_flags() } as u64;
    let irqs = if eflags & (1 << bindings::X86_EFLAGS_IF_BIT) == 0 {
        bindings::trace_flag_type_TRACE_FLAG_IRQS_OFF
    } else {
        0
    };
    // SAFETY: no preconditions.
    let ctx = unsafe { bindings::tracing_gen_ctx_irq_test(irqs as _) };
    // The handler's own `preempt_disable()` is not the probed code's.
    if cfg!(CONFIG_PREEMPTION) {
        ctx.wrapping_sub(1)
    } else {
        ctx
    }
}

/// `ring_buffer_event_data()`: where a data event's payload starts
/// (include/linux/ring_buffer.h): after the header word, or after the
/// length word too for a long event (`type_len` 0). A time extend before
/// it (`type_len` at or above `RINGBUF_TYPE_TIME_EXTEND`, which a reserve
/// does not return) is left to the C function.
///
/// # Safety
///
/// `event` is a reserved event.
#[cfg(all(CONFIG_KPROBES, CONFIG_X86_64))]
#[inline(always)]
unsafe fn event_data(event: *mut bindings::ring_buffer_event) -> *mut c_void {
    // SAFETY: by the caller, `event` is valid.
    let type_len = unsafe { (*event).type_len() };
    if type_len >= bindings::ring_buffer_type_RINGBUF_TYPE_TIME_EXTEND {
        // SAFETY: as above.
        return unsafe { bindings::ring_buffer_event_data(event) };
    }
    let words = usize::from(type_len == 0);
    // SAFETY: the payload is within the event (the header is one word, a
    // long event's length a second).
    unsafe { event.cast::<u32>().add(1 + words).cast() }
}

/// A record reserved in a ring buffer; committed when dropped.
///
/// # Invariants
///
/// `entry` points to `len` writable bytes of the reserved event, and
/// `fbuffer` is the state `trace_event_buffer_commit()` needs, its `regs`
/// null.
#[must_use]
pub struct Reservation<'a> {
    fbuffer: bindings::trace_event_buffer,
    entry: *mut u8,
    len: usize,
    _file: core::marker::PhantomData<&'a EventFile>,
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
    fn drop(&mut self) {
        // SAFETY: by the type invariant `fbuffer` holds a reservation.
        unsafe { bindings::trace_event_buffer_commit(&mut self.fbuffer) };
    }
}

/// Most trace instances an event is recorded into at once.
pub const MAX_INSTANCES: usize = 16;

// A fresh `FileSet` allocation always has room for its first entry.
const _: () = assert!(MAX_INSTANCES > 0);

/// Where an event's hits go: the trace instances it is enabled in and, while
/// perf has it open, perf. Made by the event's [`Registration`](super::Registration), which
/// hands them to its data's constructor; its `reg` callback adds and
/// removes the entries itself when the tracing core enables or disables
/// the event ([`Event::register`](super::Event::register) and the others are told); probe handlers
/// read them.
///
/// # Examples
///
/// An event enabled in the top instance, and a record written into it:
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::c_str;
/// use kernel::trace_event::{
///     lock_events, set_enabled, Event, EventFile, EventNames, Fields, Registration, Targets,
///     TraceSeq,
/// };
/// // (`Targets` for the data's field: only a registration makes them.)
///
/// struct Ev {
///     targets: Targets,
///     registered: AtomicUsize,
/// }
///
/// #[vtable]
/// impl Event for Ev {
///     fn names(&self) -> EventNames<'_> {
///         let (system, name) = (c_str!("rkpe_doctest2"), c_str!("ev"));
///         EventNames { system, name, print_fmt: c_str!("\"\"") }
///     }
///     fn targets(&self) -> &Targets {
///         &self.targets
///     }
///     fn define_fields<'a>(&'a self, _fields: &mut Fields<'a>) -> Result {
///         Ok(())
///     }
///     fn print(&self, _record: &[u8], _out: &mut TraceSeq) -> core::fmt::Result {
///         Ok(())
///     }
///     fn register(&self, _file: &EventFile) -> Result {
///         // Told before the file joins the targets.
///         assert!(self.targets.files().is_empty());
///         self.registered.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
///     fn unregister(&self, _file: &EventFile) -> Result {
///         // Told after the file has left them.
///         assert!(self.targets.files().is_empty());
///         self.registered.fetch_sub(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
///
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let mut reg = KBox::pin_init(
///     Registration::new(&lock_events(), &BUILTIN, |targets| {
///         Ok(Ev { targets, registered: AtomicUsize::new(0) })
///     }),
///     GFP_KERNEL,
/// )?;
/// assert!(!reg.data().targets.in_use());
/// let (sys, name) = (c_str!("rkpe_doctest2"), c_str!("ev"));
/// // Enable it in the top instance, as `echo 1 > events/rkpe_doctest2/ev/enable`.
/// set_enabled(sys, name, true)?;
/// assert_eq!(set_enabled(sys, c_str!("no_such_event"), true), Err(EINVAL));
/// assert!(reg.data().targets.in_use());
/// assert_eq!(reg.data().registered.load(Ordering::Relaxed), 1);
/// let mut written = 0;
/// reg.data().targets.files().for_each(|f| {
///     if !f.soft_disabled() {
///         if let Some(mut rec) = f.reserve(16) {
///             rec.bytes()[8..16].copy_from_slice(&42u64.to_ne_bytes());
///             written += 1;
///         }
///     }
/// });
/// assert_eq!(written, 1);
/// // Enabled, it cannot be removed.
/// assert_eq!(reg.remove(&lock_events()), Err(EBUSY));
/// set_enabled(sys, name, false)?;
/// assert!(!reg.data().targets.in_use());
/// assert_eq!(reg.data().registered.load(Ordering::Relaxed), 0);
/// let lock = lock_events();
/// reg.as_mut().remove(&lock)?;
/// // The record names a removed event (whose id a later event may take).
/// lock.reset_instances();
/// # Ok::<(), Error>(())
/// ```
pub struct Targets {
    pub(super) files: FileSet,
    pub(super) perf: PerfSlot,
    /// The number of the [`Registration::new`](super::Registration::new)
    /// call that made them (one number a call, never again): a
    /// registration takes no other set, so that its files get its records
    /// alone.
    pub(super) owner: u64,
}

/// The next registration's number ([`Targets::owner`]).
static NEXT_OWNER: AtomicU64 = AtomicU64::new(0);

impl Targets {
    /// A number no other registration gets (64 bits do not wrap).
    pub(super) fn next_owner() -> u64 {
        NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
    }

    /// No instance, no perf. Only [`Registration::new`] makes them, one set
    /// for its event (`owner`, its number): no two registrations take one
    /// set.
    pub(super) fn new(owner: u64) -> Self {
        Targets {
            files: FileSet::new(),
            perf: PerfSlot::new(),
            owner,
        }
    }

    /// The trace instances the event is enabled in.
    #[inline]
    pub fn files(&self) -> &FileSet {
        &self.files
    }

    /// perf, while it has the event open.
    #[inline]
    pub fn perf(&self) -> &PerfSlot {
        &self.perf
    }

    /// Enabled in some instance or open by perf.
    pub fn in_use(&self) -> bool {
        !self.files.is_empty() || self.perf.is_set()
    }
}

/// The instances an event is enabled in, for its probe handler (the
/// [`Targets`]' files). The slots are allocated when the first instance
/// enables the event and freed when the last one disables it: an event
/// enabled nowhere (most probes on a machine with many) keeps one pointer
/// (BENCHMARKS.md, memory).
///
/// # Invariants
///
/// `slots` is null or a `KBox<Slots>` (from [`KBox::into_raw`]) that the set
/// owns; once unpublished (set to null) it is freed only after an RCU-sched
/// grace period, so a reader in a read side never sees it freed. A non-null
/// entry of it is a `trace_event_file` between the event's
/// `TRACE_REG_REGISTER` and `TRACE_REG_UNREGISTER` for it: only
/// [`Registration`](super::Registration)'s `reg` callback adds and removes entries, and it
/// removes each one (waiting for readers) before the core lets go of the
/// file.
pub struct FileSet {
    slots: AtomicPtr<Slots>,
}

/// The entries of a [`FileSet`].
struct Slots {
    files: [AtomicPtr<bindings::trace_event_file>; MAX_INSTANCES],
    /// One past the last non-null entry: the hit path walks `files` up to
    /// here, so the usual single instance costs one slot. (A count of the
    /// entries, as before, let a walk stop before an entry that stayed
    /// enabled when another was removed and a third added in front of it
    /// meanwhile.) Changed only by `add` and `remove`, which the tracing
    /// core calls under `event_mutex`.
    end: AtomicUsize,
}

impl FileSet {
    /// A set with no instance in it (the event is enabled nowhere).
    const fn new() -> Self {
        // INVARIANT: null.
        FileSet {
            slots: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Adds an instance (from `reg`'s `TRACE_REG_REGISTER`).
    ///
    /// # Errors
    ///
    /// `ENOSPC` beyond [`MAX_INSTANCES`], `ENOMEM` (for the first; C's
    /// `trace_probe_add_file()` allocates a link for each).
    pub(super) fn add(&self, file: &EventFile) -> Result {
        // Writers are serialised by `event_mutex`: nothing changes `slots`
        // meanwhile.
        let mut p = self.slots.load(Ordering::Relaxed);
        let fresh = p.is_null();
        if fresh {
            let empty = Slots {
                files: [const { AtomicPtr::new(ptr::null_mut()) }; MAX_INSTANCES],
                end: AtomicUsize::new(0),
            };
            p = KBox::into_raw(KBox::new(empty, GFP_KERNEL)?);
        }
        // SAFETY: `p` is the set's allocation (type invariant: not freed
        // while published, and only `remove`, serialised with this, frees
        // it) or the one just made.
        let s = unsafe { &*p };
        for (i, slot) in s.files.iter().enumerate() {
            // INVARIANT: `file` is the instance whose `TRACE_REG_REGISTER`
            // the caller (`Registration::reg`) is handling, valid until its
            // `TRACE_REG_UNREGISTER`, where `reg` has `remove` clear it.
            let taken = slot.compare_exchange(
                ptr::null_mut(),
                file.as_raw(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
            if taken.is_ok() {
                // After the entry: a walk that sees the new end sees it.
                s.end.fetch_max(i + 1, Ordering::Release);
                if fresh {
                    // INVARIANT: a `KBox<Slots>` the set owns from here;
                    // published after its entry, so a walk that sees it
                    // sees the entry.
                    self.slots.store(p, Ordering::Release);
                }
                return Ok(());
            }
        }
        // (A fresh allocation has room: this one was published before.)
        Err(ENOSPC)
    }

    /// Removes an instance (from `reg`) and waits until no handler can see
    /// it any more; the last one frees the slots.
    pub(super) fn remove(&self, file: &EventFile) {
        let p = self.slots.load(Ordering::Relaxed);
        if p.is_null() {
            return;
        }
        // SAFETY: as in `add`.
        let s = unsafe { &*p };
        for slot in &s.files {
            // INVARIANT: cleared in `TRACE_REG_UNREGISTER` (the caller is
            // `Registration::reg`), before the core lets go of `file`;
            // `synchronize_rcu()` below waits for the readers that saw it.
            let _ = slot.compare_exchange(
                file.as_raw(),
                ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
        // Entries that stay are all before the new end (writers are
        // serialised by `event_mutex`, so nothing is added meanwhile).
        let end = s
            .files
            .iter()
            .rposition(|slot| !slot.load(Ordering::Relaxed).is_null())
            .map_or(0, |i| i + 1);
        s.end.store(end, Ordering::Release);
        if end == 0 {
            // INVARIANT: unpublished here, freed after the grace period.
            self.slots.store(ptr::null_mut(), Ordering::Release);
        }
        // SAFETY: no preconditions; waits for `for_each` callers.
        unsafe { bindings::synchronize_rcu() };
        if end == 0 {
            // SAFETY: `p` came from `KBox::into_raw` (type invariant); it is
            // unpublished and every reader that could have seen it has left
            // its read side.
            drop(unsafe { KBox::from_raw(p) });
        }
    }

    /// Whether no instance is enabled.
    pub fn is_empty(&self) -> bool {
        self.slots.load(Ordering::Relaxed).is_null()
    }

    /// Calls `f` for each enabled instance. A file added meanwhile may be
    /// missed and one being removed still seen, as with C's RCU list walk.
    pub fn for_each(&self, f: impl FnMut(&EventFile)) {
        // SAFETY: an RCU-sched read side; `remove` waits for it.
        unsafe { bindings::rcu_read_lock_sched_notrace() };
        // SAFETY: in the read side taken above.
        unsafe { self.walk(f) };
        // SAFETY: locked above.
        unsafe { bindings::rcu_read_unlock_sched_notrace() };
    }

    /// As [`FileSet::for_each`], in a probe handler: `regs` proves that
    /// preemption is off (by [`crate::kprobes::PtRegs`]' invariant), which
    /// is an RCU read side already, as C's handlers rely on
    /// (`trace_probe_for_each_link_rcu()` in `kprobe_trace_func()`).
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn for_each_in_handler(&self, _regs: &crate::kprobes::PtRegs, f: impl FnMut(&EventFile)) {
        // SAFETY: preemption is off while `_regs` lives, and `remove`'s
        // `synchronize_rcu()` waits for preemption-disabled regions.
        unsafe { self.walk(f) };
    }

    /// The walk of [`FileSet::for_each`].
    ///
    /// # Safety
    ///
    /// The caller is in an RCU read side (which `remove` waits for) for the
    /// whole call.
    #[inline(always)]
    pub(super) unsafe fn walk(&self, mut f: impl FnMut(&EventFile)) {
        let p = self.slots.load(Ordering::Acquire);
        if p.is_null() {
            return;
        }
        // SAFETY: published, so not freed before the caller's read side
        // ends (type invariant).
        let s = unsafe { &*p };
        let end = s.end.load(Ordering::Acquire).min(MAX_INSTANCES);
        for slot in &s.files[..end] {
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: by the type invariant `p` stays valid until
                // `remove` returns, which waits for the caller's read side.
                f(unsafe { EventFile::from_raw(p) });
            }
        }
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        let p = *self.slots.get_mut();
        if !p.is_null() {
            // SAFETY: `p` came from `KBox::into_raw` (type invariant), and
            // with `&mut self` no reader can hold the set.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}

/// An event while perf has it open: what a probe handler hands its hits
/// to, as `kprobe_perf_func()` does (trace_kprobe.c:1582-1628): the BPF
/// programs attached to the event run first and may drop the hit, then a
/// record goes to the perf events open on this CPU.
///
/// # Invariants
///
/// Wraps the `trace_event_call` of a registered event between its
/// `TRACE_REG_PERF_REGISTER` and `TRACE_REG_PERF_UNREGISTER`.
#[repr(transparent)]
pub struct PerfCall(Opaque<bindings::trace_event_call>);

impl PerfCall {
    /// Borrows the `trace_event_call` at `ptr`, which perf has open, as a [`PerfCall`] for `'a`.
    ///
    /// # Safety
    ///
    /// `ptr` must be a registered event that perf has open, for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::trace_event_call) -> &'a Self {
        // INVARIANT: the caller guarantees that `ptr` is a registered event
        // that perf has open for `'a`, as long as the reference can be used.
        // SAFETY: `repr(transparent)`; validity by the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::trace_event_call {
        self.0.get()
    }
}

#[cfg(all(CONFIG_KPROBES, CONFIG_PERF_EVENTS))]
impl PerfCall {
    /// Runs the BPF programs attached to the event with `regs` as their
    /// context (`trace_call_bpf()`); false if one says to drop the hit.
    /// True when no program is attached. `regs` shows that the caller is
    /// a probe handler, with preemption disabled (see [`PtRegs`]).
    ///
    /// [`PtRegs`]: crate::kprobes::PtRegs
    #[inline(never)]
    pub fn run_bpf(&self, regs: &crate::kprobes::PtRegs) -> bool {
        // SAFETY: by the type invariant the call is valid.
        if !unsafe { bindings::bpf_prog_array_valid(self.as_raw()) } {
            return true;
        }
        // SAFETY: as above; `regs` is valid for the call (the context the
        // programs of a kprobe event expect), and preemption is disabled
        // (`PtRegs`' invariant), as `trace_call_bpf()` wants.
        unsafe { bindings::trace_event_call_bpf(self.as_raw(), regs.as_raw().cast()) != 0 }
    }

    /// Reserves a perf record of `len` bytes (the `trace_entry` header
    /// included, which perf fills in) if a perf event on this CPU wants
    /// the hit; it is submitted when dropped. `regs` shows that the caller
    /// is a probe handler, with preemption disabled (see [`PtRegs`]), so the
    /// CPU's buffer and list stay this CPU's.
    ///
    /// [`PtRegs`]: crate::kprobes::PtRegs
    #[inline(never)]
    pub fn reserve<'a>(
        &'a self,
        regs: &'a crate::kprobes::PtRegs,
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
/// event open (the [`Targets`]' perf).
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
    const fn new() -> Self {
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
    pub fn with(&self, f: impl FnOnce(&PerfCall)) {
        if !self.is_set() {
            return;
        }
        // SAFETY: an RCU-sched read side; `clear` waits for it.
        unsafe { bindings::rcu_read_lock_sched_notrace() };
        let p = self.call.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: by the type invariant `p` stays valid until `clear`
            // returns, which waits for this read side.
            f(unsafe { PerfCall::from_raw(p) });
        }
        // SAFETY: locked above.
        unsafe { bindings::rcu_read_unlock_sched_notrace() };
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Dynamic trace events and writing their records.
//!
//! A [`Registration`] creates `events/<system>/<name>/` (with `enable`,
//! `filter`, `format`, `id`, `trigger`, `hist`) in every trace instance, as
//! `trace_probe_register_event_call()` does for the C probe events. The
//! user's [`Event`] says which fields the records have, prints a record as
//! text, and learns when an instance enables or disables the event. A probe
//! handler writes a record into an enabled instance through
//! [`EventFile::reserve`], whose [`Reservation`] commits when dropped.
//!
//! `event_mutex` and the list of events are private to the tracing core;
//! the functions that use them here are plain kernel-crate functions.
//!
//! C header: [`include/linux/trace_events.h`](srctree/include/linux/trace_events.h)

pub mod dyn_event;

use crate::{
    bindings,
    error::{from_result, to_result, Result},
    prelude::*,
    str::{CStr, CString},
    sync::{lock::mutex::MutexBackend, lock::Guard, Arc, Mutex},
    types::Opaque,
    ThisModule,
};

use core::{
    ffi::c_void,
    fmt,
    marker::PhantomPinned,
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering},
};

/// One field of an event's records, after the common ones.
pub struct Field<'a> {
    /// C type, as the `format` file shows it (`u64`, `__data_loc char[]`).
    pub ty: &'a CStr,
    /// Name.
    pub name: &'a CStr,
    /// Offset from the start of the record.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Signedness.
    pub is_signed: bool,
}

/// Receives the fields of an event (`trace_define_field()`). The strings
/// are borrowed from the event's data for `'a`, that is for as long as the
/// event exists (the tracing core keeps the pointers).
pub struct Fields<'a> {
    call: *mut bindings::trace_event_call,
    _strings: core::marker::PhantomData<&'a ()>,
}

impl<'a> Fields<'a> {
    /// Defines a field.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub fn define(&mut self, f: &Field<'a>) -> Result {
        // SAFETY: `call` is the event being defined (under `event_mutex`);
        // the strings live as long as the event's data, so as the event.
        to_result(unsafe {
            bindings::trace_define_field(
                self.call,
                f.ty.as_char_ptr(),
                f.name.as_char_ptr(),
                f.offset as _,
                f.size as _,
                f.is_signed as _,
                bindings::FILTER_OTHER as _,
            )
        })
    }
}

/// The text output of a record (`struct trace_seq`).
///
/// # Invariants
///
/// Wraps the valid `trace_seq` of an iterator during an output call.
#[repr(transparent)]
pub struct TraceSeq(Opaque<bindings::trace_seq>);

impl TraceSeq {
    /// Appends raw bytes.
    pub fn put(&mut self, bytes: &[u8]) {
        // SAFETY: by the type invariant the `trace_seq` is valid; `bytes`
        // is valid for reads of its length. An overflow is recorded in it
        // and reported by `trace_handle_return()`.
        unsafe {
            bindings::trace_seq_putmem(self.0.get(), bytes.as_ptr().cast(), bytes.len() as _)
        };
    }
}

impl fmt::Write for TraceSeq {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
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

    /// The raw pointer.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::trace_event_file {
        // Not `Opaque::get()`: the kernel crate's shared instance of it
        // would be a call on the probe hit's path. `Self` is
        // `repr(transparent)` over `Opaque<trace_event_file>`, which has the layout of
        // `trace_event_file`.
        ptr::from_ref(self).cast_mut().cast()
    }

    /// Runs the event's unconditional triggers and says whether the event is
    /// soft-disabled (`trace_trigger_soft_disabled()`): then no record.
    #[inline]
    pub fn soft_disabled(&self) -> bool {
        // SAFETY: by the type invariant the file is valid.
        let flags = unsafe { ptr::addr_of!((*self.as_raw()).flags).read_volatile() } as u64;
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
    /// writes the rest, then the record is committed. Nothing is written if
    /// the buffer is off, full, or the event filtered by pid. A stack trace
    /// recorded with the record (`options/stacktrace`) starts at the probed
    /// instruction, as for C's kprobe events (`__kprobe_trace_func()`,
    /// trace_kprobe.c:1470-1480: `fbuffer.regs = regs`).
    ///
    /// Inlined, with the commit's state on the caller's stack: this is the
    /// probe hit's path, the shape of C's, without a [`Reservation`] moved
    /// around.
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn record_hit(
        &self,
        len: usize,
        regs: &crate::kprobes::PtRegs,
        fill: impl FnOnce(&mut [u8]),
    ) {
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

/// A message table for `error_log` (`tracing_log_err()`).
///
/// The error log keeps a pointer to the table, so dropping it first drops
/// the entries that use it (`tracing_log_err_forget()`, a kernel patch).
///
/// # Examples
///
/// ```
/// use kernel::{c_str, trace_event::ErrorLog};
///
/// let log = ErrorLog::new(&["First problem", "Second problem"])?;
/// // `[ts] rkpe_doctest: error: Second problem`, `Command: p:x y`, a caret
/// // under `y`.
/// log.log(c_str!("rkpe_doctest"), c_str!("p:x y"), 1, 4);
/// log.log(c_str!("rkpe_doctest"), c_str!("p:x z"), 0, 0);
/// // A code past the table logs nothing.
/// log.log(c_str!("rkpe_doctest"), c_str!("p:x w"), 2, 0);
/// assert_eq!(log.forget(), 2);
/// assert_eq!(log.forget(), 0);
/// log.log(c_str!("rkpe_doctest"), c_str!("p:x y"), 1, 4);
/// // Dropping it forgets its entries too.
/// drop(log);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ptrs[i]` points to the NUL-terminated `texts[i]`; both live until drop.
pub struct ErrorLog {
    texts: KVec<CString>,
    ptrs: KVec<*const u8>,
}

// SAFETY: the table is immutable after creation; C only reads it.
unsafe impl Send for ErrorLog {}
// SAFETY: as above.
unsafe impl Sync for ErrorLog {}

impl ErrorLog {
    /// A table of `texts`, indexed by error code.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub fn new(texts: &[&str]) -> Result<Self> {
        let mut t = KVec::with_capacity(texts.len(), GFP_KERNEL)?;
        for s in texts {
            t.push(CString::try_from_fmt(crate::fmt!("{s}"))?, GFP_KERNEL)?;
        }
        let mut ptrs = KVec::with_capacity(t.len(), GFP_KERNEL)?;
        for c in t.iter() {
            ptrs.push(c.as_char_ptr(), GFP_KERNEL)?;
        }
        // INVARIANT: `ptrs[i]` is `t[i].as_char_ptr()`; a `CString`'s bytes
        // do not move with the vector, and neither vector changes after this.
        Ok(ErrorLog { texts: t, ptrs })
    }

    /// Drops the entries of `error_log` that use this table
    /// (`tracing_log_err_forget()`); returns how many there were.
    #[inline(never)]
    pub fn forget(&self) -> usize {
        // SAFETY: the table is valid; the function takes the log's lock.
        let n = unsafe { bindings::tracing_log_err_forget(self.ptrs.as_ptr().cast_mut()) };
        n.max(0) as usize
    }

    /// Adds an entry to `error_log`: `[ts] LOC: error: TEXT`, the command
    /// and a caret at `pos`. Codes past the table are ignored.
    #[inline(never)]
    pub fn log(&self, loc: &CStr, cmd: &CStr, code: usize, pos: usize) {
        if code >= self.texts.len() || code > usize::from(u8::MAX) {
            return;
        }
        let pos = pos.min(usize::from(u16::MAX)) as u16;
        // SAFETY: the strings are NUL-terminated; the table outlives the
        // log entries (`Drop`).
        unsafe {
            bindings::tracing_log_err(
                ptr::null_mut(),
                loc.as_char_ptr(),
                cmd.as_char_ptr(),
                self.ptrs.as_ptr().cast_mut(),
                code as u8,
                pos,
            )
        };
    }
}

impl Drop for ErrorLog {
    fn drop(&mut self) {
        self.forget();
    }
}

/// Enables or disables the event `system/event` in the top trace instance,
/// as `echo 1 > events/<system>/<event>/enable` does
/// (`trace_set_clr_event()`). Takes `event_mutex`.
///
/// # Errors
///
/// `EINVAL` if there is no such event; the event's `register` errors.
pub fn set_enabled(system: &CStr, event: &CStr, on: bool) -> Result {
    // SAFETY: NUL-terminated strings; the function takes its locks.
    to_result(unsafe {
        bindings::trace_set_clr_event(system.as_char_ptr(), event.as_char_ptr(), on.into())
    })
}

/// Takes a reference on `module` so that it cannot be unloaded
/// (`try_module_get()`); false if it is going away.
pub fn module_get(module: &'static ThisModule) -> bool {
    // SAFETY: `module` is a valid module (or null for built-in code).
    unsafe { bindings::try_module_get(module.as_ptr()) }
}

/// Drops a reference taken by [`module_get`] (`module_put()`).
pub fn module_put(module: &'static ThisModule) {
    // SAFETY: pairs with a successful `module_get`.
    unsafe { bindings::module_put(module.as_ptr()) }
}

/// Most trace instances an event is recorded into at once.
pub const MAX_INSTANCES: usize = 16;

/// Where an event's hits go: the trace instances it is enabled in and, while
/// perf has it open, perf. Made by the event's [`Registration`], which
/// hands them to its data's constructor; its `reg` callback adds and
/// removes the entries itself when the tracing core enables or disables
/// the event ([`Event::register`] and the others are told); probe handlers
/// read them.
///
/// # Examples
///
/// An event enabled in the top instance, and a record written into it:
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::{c_str, str::CString, sync::Arc};
/// use kernel::trace_event::{
///     lock_events, set_enabled, Event, EventFile, Fields, Registration, Targets, TraceSeq,
/// };
/// // (`Targets` for the data's field: only a registration makes them.)
///
/// struct Ev {
///     targets: Arc<Targets>,
///     registered: AtomicUsize,
/// }
///
/// #[vtable]
/// impl Event for Ev {
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
///     Registration::new(
///         &lock_events(),
///         CString::try_from_fmt(kernel::fmt!("rkpe_doctest2"))?,
///         CString::try_from_fmt(kernel::fmt!("ev"))?,
///         CString::try_from_fmt(kernel::fmt!("\"\""))?,
///         &BUILTIN,
///         |targets| Ok(Ev { targets, registered: AtomicUsize::new(0) }),
///     ),
///     GFP_KERNEL,
/// )?;
/// let targets = reg.data().targets.clone();
/// assert!(!targets.in_use());
/// let (sys, name) = (c_str!("rkpe_doctest2"), c_str!("ev"));
/// // Enable it in the top instance, as `echo 1 > events/rkpe_doctest2/ev/enable`.
/// set_enabled(sys, name, true)?;
/// assert_eq!(set_enabled(sys, c_str!("no_such_event"), true), Err(EINVAL));
/// assert!(targets.in_use());
/// assert_eq!(reg.data().registered.load(Ordering::Relaxed), 1);
/// let mut written = 0;
/// targets.files().for_each(|f| {
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
/// assert!(!targets.in_use());
/// assert_eq!(reg.data().registered.load(Ordering::Relaxed), 0);
/// let lock = lock_events();
/// reg.as_mut().remove(&lock)?;
/// // The record names a removed event (whose id a later event may take).
/// lock.reset_instances();
/// # Ok::<(), Error>(())
/// ```
pub struct Targets {
    files: FileSet,
    perf: PerfSlot,
}

impl Targets {
    /// No instance, no perf. Only [`Registration::new`] makes them, one set
    /// for its event: two events never share one.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    fn new() -> Result<Arc<Self>> {
        Ok(Arc::new(
            Targets {
                files: FileSet::new(),
                perf: PerfSlot::new(),
            },
            GFP_KERNEL,
        )?)
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
/// [`Targets`]' files).
///
/// # Invariants
///
/// A non-null entry is a `trace_event_file` between the event's
/// `TRACE_REG_REGISTER` and `TRACE_REG_UNREGISTER` for it: only
/// [`Registration`]'s `reg` callback adds and removes entries, and it
/// removes each one (waiting for readers) before the core lets go of the
/// file.
pub struct FileSet {
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
    /// No instance.
    const fn new() -> Self {
        // INVARIANT: every entry is null.
        FileSet {
            files: [const { AtomicPtr::new(ptr::null_mut()) }; MAX_INSTANCES],
            end: AtomicUsize::new(0),
        }
    }

    /// Adds an instance (from `reg`'s `TRACE_REG_REGISTER`).
    ///
    /// # Errors
    ///
    /// `ENOSPC` beyond [`MAX_INSTANCES`].
    fn add(&self, file: &EventFile) -> Result {
        for (i, slot) in self.files.iter().enumerate() {
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
                self.end.fetch_max(i + 1, Ordering::Release);
                return Ok(());
            }
        }
        Err(ENOSPC)
    }

    /// Removes an instance (from `reg`) and waits until no handler can see
    /// it any more.
    fn remove(&self, file: &EventFile) {
        for slot in &self.files {
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
        let end = self
            .files
            .iter()
            .rposition(|slot| !slot.load(Ordering::Relaxed).is_null())
            .map_or(0, |i| i + 1);
        self.end.store(end, Ordering::Release);
        // SAFETY: no preconditions; waits for `for_each` callers.
        unsafe { bindings::synchronize_rcu() };
    }

    /// Whether no instance is enabled.
    pub fn is_empty(&self) -> bool {
        self.end.load(Ordering::Relaxed) == 0
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
    unsafe fn walk(&self, mut f: impl FnMut(&EventFile)) {
        let end = self.end.load(Ordering::Acquire).min(MAX_INSTANCES);
        for slot in &self.files[..end] {
            let p = slot.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: by the type invariant `p` stays valid until
                // `remove` returns, which waits for the caller's read side.
                f(unsafe { EventFile::from_raw(p) });
            }
        }
    }
}

/// What a dynamic event does.
#[vtable]
pub trait Event: Sync + Sized {
    /// Defines the fields after the common ones; their strings are
    /// borrowed from `self`.
    fn define_fields<'a>(&'a self, fields: &mut Fields<'a>) -> Result;

    /// Prints `record` (the whole record, `trace_entry` included).
    fn print(&self, record: &[u8], out: &mut TraceSeq) -> fmt::Result;

    /// An instance is enabling the event (`TRACE_REG_REGISTER`). The file
    /// joins the event's [`Targets`] when this returns `Ok`, and the event
    /// is enabled there; on an error it does not, and the event is not.
    fn register(&self, file: &EventFile) -> Result;

    /// An instance disabled the event (`TRACE_REG_UNREGISTER`); the file
    /// has left the event's [`Targets`] (no handler sees it any more).
    /// Also called when the file could not join the targets after
    /// [`Event::register`] returned `Ok`.
    fn unregister(&self, file: &EventFile) -> Result;

    /// perf is opening the event (`TRACE_REG_PERF_REGISTER`, once for all
    /// of perf's users). When this returns `Ok`, the event's
    /// [`Targets::perf`] has it until [`Event::perf_unregister`]: the
    /// event's handler passes its hits on there (BPF programs and perf
    /// records). Not supported unless implemented.
    fn perf_register(&self) -> Result {
        Err(EOPNOTSUPP)
    }

    /// perf's last user closed the event (`TRACE_REG_PERF_UNREGISTER`);
    /// [`Targets::perf`] no longer has it.
    fn perf_unregister(&self) -> Result {
        Ok(())
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
    unsafe fn from_raw<'a>(ptr: *mut bindings::trace_event_call) -> &'a Self {
        // INVARIANT: the caller guarantees that `ptr` is a registered event
        // that perf has open for `'a`, as long as the reference can be used.
        // SAFETY: `repr(transparent)`; validity by the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::trace_event_call {
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
/// A non-null `call` is a [`PerfCall`]: only [`Registration`]'s `reg`
/// callback sets it (in `TRACE_REG_PERF_REGISTER`) and clears it (in
/// `TRACE_REG_PERF_UNREGISTER`, waiting for readers).
pub struct PerfSlot {
    call: AtomicPtr<bindings::trace_event_call>,
}

impl PerfSlot {
    /// Empty.
    const fn new() -> Self {
        // INVARIANT: `call` is null.
        PerfSlot {
            call: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Keeps `perf` (from `reg`'s `TRACE_REG_PERF_REGISTER`).
    fn set(&self, perf: &PerfCall) {
        // INVARIANT: `perf` is the event whose `TRACE_REG_PERF_REGISTER` the
        // caller (`Registration::reg`) is handling; `reg` has `clear` forget
        // it in its `TRACE_REG_PERF_UNREGISTER`.
        self.call.store(perf.as_raw(), Ordering::Release);
    }

    /// Forgets it (from `reg`) and waits until no handler can see it any
    /// more.
    fn clear(&self) {
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

/// A dynamic trace event.
///
/// [`Registration::remove`] removes it, or answers `EBUSY` while it is in use
/// (enabled in an instance, open by perf, referenced by a trigger or a
/// [`trace_get_event_file()`] holder). Dropping a registration that is still
/// registered removes it, and waits for such users to let go first: the
/// tracing core points into the registration until then.
///
/// [`trace_get_event_file()`]: srctree/kernel/trace/trace_events.c
///
/// # Examples
///
/// ```
/// use kernel::str::CString;
/// use kernel::trace_event::{
///     lock_events, Event, EventFile, Fields, Registration, Targets, TraceSeq,
/// };
///
/// struct Ev;
///
/// #[vtable]
/// impl Event for Ev {
///     fn define_fields<'a>(&'a self, _fields: &mut Fields<'a>) -> Result {
///         Ok(())
///     }
///     fn print(&self, _record: &[u8], _out: &mut TraceSeq) -> core::fmt::Result {
///         Ok(())
///     }
///     fn register(&self, _file: &EventFile) -> Result {
///         Ok(())
///     }
///     fn unregister(&self, _file: &EventFile) -> Result {
///         Ok(())
///     }
/// }
///
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let new = |sys: &str, name: &str| -> Result<_> {
///     let lock = lock_events();
///     KBox::pin_init(
///         Registration::new(
///             &lock,
///             CString::try_from_fmt(kernel::fmt!("{sys}"))?,
///             CString::try_from_fmt(kernel::fmt!("{name}"))?,
///             CString::try_from_fmt(kernel::fmt!("\"\""))?,
///             &BUILTIN,
///             |_| Ok(Ev),
///         ),
///         GFP_KERNEL,
///     )
/// };
/// let mut ev = new("rkpe_doctest", "ev")?;
/// assert_ne!(ev.id(), 0);
/// // Any event's name is taken: ours, or a built-in one.
/// assert_eq!(new("rkpe_doctest", "ev").err(), Some(EEXIST));
/// assert_eq!(new("ftrace", "function").err(), Some(EEXIST));
/// // A reference another user holds (an `enable_event` trigger, perf,
/// // `trace_get_event_file()`) keeps the event: it cannot be removed.
/// let (sys, name) = (kernel::c_str!("rkpe_doctest"), kernel::c_str!("ev"));
/// // SAFETY: NUL-terminated strings; the function takes its locks.
/// let file = unsafe {
///     kernel::bindings::trace_get_event_file(
///         core::ptr::null(),
///         sys.as_char_ptr(),
///         name.as_char_ptr(),
///     )
/// };
/// assert!(kernel::error::from_err_ptr(file).is_ok());
/// assert_eq!(ev.remove(&lock_events()), Err(EBUSY));
/// // SAFETY: taken above.
/// unsafe { kernel::bindings::trace_put_event_file(file) };
/// ev.remove(&lock_events())?;
/// // Once removed, the name is free again; dropping it removes it.
/// let again = new("rkpe_doctest", "ev")?;
/// drop(again);
/// assert!(new("rkpe_doctest", "ev").is_ok());
///
/// // Dropping an event still in use waits until its users let go, rather
/// // than free what the tracing core points to: here a work item lets go
/// // of its reference 50 ms later.
/// use core::sync::atomic::{AtomicBool, Ordering};
/// let held = new("rkpe_doctest", "held")?;
/// let name = kernel::c_str!("held");
/// // SAFETY: as above.
/// let file = unsafe {
///     kernel::bindings::trace_get_event_file(
///         core::ptr::null(),
///         sys.as_char_ptr(),
///         name.as_char_ptr(),
///     )
/// };
/// assert!(kernel::error::from_err_ptr(file).is_ok());
/// let released = kernel::sync::Arc::new(AtomicBool::new(false), GFP_KERNEL)?;
/// let (flag, file) = (released.clone(), file as usize);
/// kernel::workqueue::system().try_spawn(GFP_KERNEL, move || {
///     // SAFETY: no preconditions.
///     unsafe { kernel::bindings::msleep(50) };
///     flag.store(true, Ordering::SeqCst);
///     // SAFETY: the reference taken above, given to this work item.
///     unsafe { kernel::bindings::trace_put_event_file(file as *mut _) };
/// })?;
/// drop(held);
/// assert!(released.load(Ordering::SeqCst));
/// assert!(new("rkpe_doctest", "held").is_ok());
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// Until `removed` is set (by [`Registration::remove`] or the drop), `call`
/// is registered with the tracing core, with `class`, `funcs`, `fields` and
/// the strings (all in this pinned struct) reachable from it, and `data` as
/// the `T` its callbacks find through `container_of!`; `targets` holds the
/// event's enabled files and perf (their invariants are kept by `reg`). The tracing core
/// links and writes the C structs (lists, flags, the event type id,
/// reference counts) whenever it likes: they are only reached through raw
/// pointers ([`Opaque`]), and no `&mut Self` is made while registered.
#[pin_data(PinnedDrop)]
pub struct Registration<T: Event> {
    data: T,
    targets: Arc<Targets>,
    system: CString,
    name: CString,
    print_fmt: CString,
    /// Written with `event_mutex` held.
    removed: AtomicBool,
    #[pin]
    fields: Opaque<[bindings::trace_event_fields; 2]>,
    #[pin]
    funcs: Opaque<bindings::trace_event_functions>,
    #[pin]
    class: Opaque<bindings::trace_event_class>,
    #[pin]
    call: Opaque<bindings::trace_event_call>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the tracing core calls the callbacks from any CPU; `T: Sync`.
unsafe impl<T: Event> Sync for Registration<T> {}
// SAFETY: the registration can be removed from any thread.
unsafe impl<T: Event + Send> Send for Registration<T> {}

/// Size of the `trace_entry` header every record starts with (the common
/// fields of the `format` file). rust/helpers/trace_event.c asserts the same.
pub const ENTRY_SIZE: usize = core::mem::size_of::<bindings::trace_entry>();
const _: () = assert!(ENTRY_SIZE == 8);

impl<T: Event> Registration<T> {
    /// Creates `events/<system>/<name>/`, owned by `module`, with
    /// `event_mutex` held (as `trace_add_event_call()` wants it). `make`
    /// makes the event's data from the event's [`Targets`] (which say,
    /// while the event is enabled somewhere or open by perf, where): made
    /// here, for this event alone.
    ///
    /// # Errors
    ///
    /// `EEXIST` if any event (static or dynamic) has that name, `ENODEV` if
    /// no event type id is left, `ENOMEM`, or what `make` returns.
    pub fn new<'a>(
        lock: &'a EventLock,
        system: CString,
        name: CString,
        print_fmt: CString,
        module: &'static ThisModule,
        make: impl FnOnce(Arc<Targets>) -> Result<T> + 'a,
    ) -> impl PinInit<Self, Error> + 'a
    where
        T: 'a,
    {
        // Fields are initialised in the order written; an error drops the
        // ones made before it, and nothing is registered until `call`, the
        // last that can fail.
        try_pin_init!(&this in Self {
            targets: Targets::new()?,
            // SAFETY: `targets` is initialised (above).
            data: make(unsafe { (*this.as_ptr()).targets.clone() })?,
            system,
            name,
            print_fmt,
            removed: AtomicBool::new(false),
            // SAFETY: `f` points to the field's memory; all zero is a valid
            // value of the C struct (so for `funcs` and `class` below).
            fields <- Opaque::ffi_init(|f: *mut [bindings::trace_event_fields; 2]| unsafe {
                ptr::write_bytes(f, 0, 1);
                // `TRACE_FUNCTION_TYPE`: an entry with a `define_fields`.
                (*f)[0].type_ = bindings::trace_function_type();
                (*f)[0].__bindgen_anon_1.define_fields = Some(Self::define_fields);
            }),
            // SAFETY: as for `fields`.
            funcs <- Opaque::ffi_init(|f: *mut bindings::trace_event_functions| unsafe {
                ptr::write_bytes(f, 0, 1);
                (*f).trace = Some(Self::print);
            }),
            // SAFETY: as for `fields`; `system` and `fields` are initialised
            // (above) and pinned with `this`.
            class <- Opaque::ffi_init(|class: *mut bindings::trace_event_class| unsafe {
                let this = this.as_ptr();
                ptr::write_bytes(class, 0, 1);
                (*class).system = (*this).system.as_char_ptr();
                (*class).fields_array = Opaque::raw_get(ptr::addr_of!((*this).fields)).cast();
                (*class).reg = Some(Self::reg);
                let list = ptr::addr_of_mut!((*class).fields);
                (*list).next = list;
                (*list).prev = list;
            }),
            // SAFETY: `call` points to the field's memory; every other field
            // is initialised (above) and pinned with `this`, and reachable
            // from `call` before it is registered.
            call <- Opaque::try_ffi_init(|call: *mut bindings::trace_event_call| unsafe {
                let this = this.as_ptr();
                ptr::write_bytes(call, 0, 1);
                (*call).class = Opaque::raw_get(ptr::addr_of!((*this).class));
                (*call).__bindgen_anon_1.name = (*this).name.as_char_ptr();
                (*call).event.funcs = Opaque::raw_get(ptr::addr_of!((*this).funcs));
                (*call).print_fmt = (*this).print_fmt.as_char_ptr().cast_mut();
                // A kprobe event to perf and BPF, with its own reference
                // count; each reference also pins `module` (the series's "pin the module" patch).
                (*call).flags =
                    (bindings::TRACE_EVENT_FL_KPROBE | bindings::TRACE_EVENT_FL_DYNAMIC) as _;
                (*call).module = module.as_ptr().cast();
                // INVARIANT: on success `call` is registered with `removed`
                // false and everything it reaches initialised; on failure
                // nothing is registered and the initialiser drops the rest.
                add_event_call(lock, call, &(*this).system, &(*this).name)
            }),
            _pin: PhantomPinned,
        }? Error)
    }

    /// The event's data.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The event type id (the `id` file).
    pub fn id(&self) -> u32 {
        // SAFETY: `call` is valid (type invariant); the id is written once,
        // when the event is registered, before `new` returns.
        unsafe { (*self.call.get()).event.type_ as u32 }
    }

    /// Removes the event from every instance, with `event_mutex` held.
    /// The instances that recorded it are cleared by
    /// [`EventLock::reset_instances`].
    ///
    /// # Errors
    ///
    /// `EBUSY` while it is enabled somewhere or in use (then it stays).
    pub fn remove(&self, lock: &EventLock) -> Result {
        // `removed` only changes with `event_mutex` held (`lock`).
        if self.removed.load(Ordering::Relaxed) {
            return Ok(());
        }
        remove_event_call(lock, self.call.get())?;
        // INVARIANT: `call` is no longer registered; `removed` says so,
        // written with `event_mutex` held (`lock`).
        self.removed.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The `Registration<T>` whose `call` field is at `call`.
    ///
    /// # Safety
    ///
    /// `call` must be the `call` of a live `Registration<T>`.
    unsafe fn from_call<'a>(call: *const bindings::trace_event_call) -> &'a Self {
        // SAFETY: by the caller's guarantee.
        unsafe { &*crate::container_of!(call, Self, call) }
    }

    /// The class's `define_fields`: has [`Event::define_fields`] define the record's fields.
    ///
    /// # Safety
    ///
    /// Called by the tracing core with the `call` of a `Registration<T>`.
    unsafe extern "C" fn define_fields(call: *mut bindings::trace_event_call) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: the tracing core passes our call.
            let this = unsafe { Self::from_call(call) };
            this.data.define_fields(&mut Fields {
                call,
                _strings: core::marker::PhantomData,
            })?;
            Ok(0)
        })
    }

    /// The class's `reg`: tells the [`Event`] of an instance's or perf's (un)registration.
    ///
    /// # Safety
    ///
    /// Called by the tracing core with the `call` of a `Registration<T>`.
    unsafe extern "C" fn reg(
        call: *mut bindings::trace_event_call,
        ty: bindings::trace_reg,
        data: *mut c_void,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: the tracing core passes our call.
            let this = unsafe { Self::from_call(call) };
            let file = data.cast::<bindings::trace_event_file>();
            let targets = &*this.targets;
            // The targets' entries are added and removed only here, in
            // pairs: a file or perf joins after the `Event` said yes, and
            // leaves before the `Event` is told, so the `Event`'s own view
            // of whether the event is in use (`Targets::in_use`) leaves out
            // the user being added or removed, as C's
            // `trace_probe_is_enabled()` does around enable/disable.
            match ty {
                bindings::trace_reg_TRACE_REG_REGISTER if !file.is_null() => {
                    // SAFETY: the core passes the instance's file, valid
                    // until its `TRACE_REG_UNREGISTER` returns.
                    let file = unsafe { EventFile::from_raw(file) };
                    this.data.register(file)?;
                    if let Err(e) = targets.files.add(file) {
                        let _ = this.data.unregister(file);
                        return Err(e);
                    }
                }
                bindings::trace_reg_TRACE_REG_UNREGISTER if !file.is_null() => {
                    // SAFETY: as above.
                    let file = unsafe { EventFile::from_raw(file) };
                    // Whatever the `Event` answers, the core lets go of the
                    // file: it leaves first (`remove` waits for readers).
                    targets.files.remove(file);
                    this.data.unregister(file)?
                }
                bindings::trace_reg_TRACE_REG_PERF_REGISTER => {
                    this.data.perf_register()?;
                    // SAFETY: the call is registered, and perf has it open
                    // until `TRACE_REG_PERF_UNREGISTER` returns, where it is
                    // cleared below.
                    targets.perf.set(unsafe { PerfCall::from_raw(call) });
                }
                bindings::trace_reg_TRACE_REG_PERF_UNREGISTER => {
                    targets.perf.clear();
                    this.data.perf_unregister()?
                }
                // TRACE_REG_PERF_OPEN/CLOSE/ADD/DEL: nothing to do, as in
                // kprobe_register().
                _ => {}
            }
            Ok(0)
        })
    }

    /// The event's `trace` output: prints the iterator's record with [`Event::print`].
    ///
    /// # Safety
    ///
    /// Called by the tracing core with an iterator on a record of a
    /// `Registration<T>`'s event.
    unsafe extern "C" fn print(
        iter: *mut bindings::trace_iterator,
        _flags: core::ffi::c_int,
        event: *mut bindings::trace_event,
    ) -> bindings::print_line_t {
        // SAFETY: `event` is the `event` field of our call.
        let call = unsafe { crate::container_of!(event, bindings::trace_event_call, event) };
        // SAFETY: `call` is ours.
        let this = unsafe { Self::from_call(call) };
        // SAFETY: the iterator is valid for the call; `ent` has `ent_size`
        // bytes.
        let (ent, size, seq) = unsafe {
            (
                (*iter).ent,
                (*iter).ent_size,
                ptr::addr_of_mut!((*iter).seq),
            )
        };
        // SAFETY: as above.
        let record = unsafe { core::slice::from_raw_parts(ent.cast::<u8>(), size.max(0) as usize) };
        // INVARIANT: `seq` is the iterator's `trace_seq`, valid during this
        // output call, and the reference does not outlive the call.
        // SAFETY: `seq` is valid for the call; `TraceSeq` is transparent.
        let _ = this
            .data
            .print(record, unsafe { &mut *seq.cast::<TraceSeq>() });
        // SAFETY: `seq` is valid.
        unsafe { bindings::trace_handle_return(seq) }
    }
}

#[pinned_drop]
impl<T: Event> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        let this = &*self;
        // The tracing core points into this struct until the event is
        // removed, and a busy event (enabled, open by perf, referenced by a
        // trigger or a `trace_get_event_file()` holder) cannot be removed:
        // wait until its users let go rather than free it under them. The
        // owner removes events before dropping them where it can answer
        // `EBUSY` instead; this wait is for the paths that cannot (a module
        // init that fails after its events could be used). Dropping takes
        // `event_mutex`, so whoever holds it must remove first.
        // A removed event is dropped with `event_mutex` held, as often as not.
        if this.removed.load(Ordering::Relaxed) {
            return;
        }
        // INVARIANT: once this returns, `call` is no longer registered.
        // `removed` is not set: nothing reads it after the drop.
        // `event_mutex` is held only inside each try.
        crate::tracefs::wait_until(
            "trace_event: waiting for the users of a busy event to let go",
            || remove_event_call(&lock_events(), this.call.get()).is_ok(),
        );
    }
}

/// Whether an event `system/name` exists, static or dynamic
/// (`find_trace_event_call()`). Called with `event_mutex` held.
fn event_exists(_lock: &EventLock, system: &CStr, name: &CStr) -> bool {
    // SAFETY: NUL-terminated strings; `event_mutex` is held (`_lock`).
    unsafe { bindings::trace_event_exists(system.as_char_ptr(), name.as_char_ptr()) }
}

/// `trace_probe_register_event_call()` without the probe: under
/// `event_mutex`, refuse a taken name, register the output type, add the
/// event to every instance.
#[inline(never)]
fn add_event_call(
    _lock: &EventLock,
    call: *mut bindings::trace_event_call,
    system: &CStr,
    name: &CStr,
) -> Result {
    if event_exists(_lock, system, name) {
        return Err(EEXIST);
    }
    // SAFETY: `call` is fully initialised by the caller.
    if unsafe { bindings::register_trace_event(ptr::addr_of_mut!((*call).event)) } == 0 {
        return Err(ENODEV);
    }
    // SAFETY: as above; `event_mutex` is held (`_lock`).
    let r = to_result(unsafe { bindings::trace_add_event_call(call) });
    if r.is_err() {
        // SAFETY: registered above.
        unsafe { bindings::unregister_trace_event(ptr::addr_of_mut!((*call).event)) };
    }
    r
}

/// `trace_probe_unregister_event_call()`: `EBUSY` while in use, that is
/// enabled, used by perf, or referenced (an `enable_event` trigger, a
/// `trace_get_event_file()` holder: `trace_event_dyn_busy()`, as
/// `unregister_trace_kprobe()` checks, trace_kprobe.c:550).
#[inline(never)]
fn remove_event_call(_lock: &EventLock, call: *mut bindings::trace_event_call) -> Result {
    // SAFETY: `call` was added by `add_event_call()`.
    if unsafe { bindings::trace_event_dyn_busy(call) } {
        return Err(EBUSY);
    }
    // SAFETY: `call` was added by `add_event_call()`; `event_mutex` is held
    // (`_lock`).
    to_result(unsafe { bindings::trace_remove_event_call(call) })
}

/// Proof that the tracing core's `event_mutex` is held: the lock the core
/// holds when it calls an event's callbacks, and that creating or removing
/// an event needs.
///
/// It is the (sizeless) data of `event_mutex` seen as a kernel-crate
/// [`Mutex`]: only an [`EventGuard`] from [`lock_events`] (or the kernel
/// crate, inside a callback the core calls with the mutex held) hands out a
/// reference to one.
///
/// # Examples
///
/// ```
/// use kernel::trace_event::lock_events;
///
/// let lock = lock_events();
/// lock.reset_instances();
/// drop(lock);
/// // Not recursive, but free again once dropped.
/// drop(lock_events());
/// ```
pub struct EventLock {
    _not_send: core::marker::PhantomData<*mut ()>,
}

impl EventLock {
    /// The [`EventLock`] proof, for code the tracing core calls with `event_mutex` held.
    ///
    /// # Safety
    ///
    /// `event_mutex` must be held for `'a`.
    pub(crate) unsafe fn assume_held<'a>() -> &'a EventLock {
        &EventLock {
            _not_send: core::marker::PhantomData,
        }
    }

    /// Clears the ring buffers of the instances whose records name an event
    /// that was removed (`tracing_reset_all_online_cpus()`, as
    /// `dyn_event_release()` does after removing events).
    #[inline(never)]
    pub fn reset_instances(&self) {
        // SAFETY: takes `trace_types_lock`, which nests inside `event_mutex`.
        unsafe { bindings::tracing_reset_all_online_cpus() };
    }
}

/// Holds `event_mutex` until dropped (the kernel crate's own lock guard);
/// derefs to the [`EventLock`] proof.
pub type EventGuard = Guard<'static, EventLock, MutexBackend>;

/// Takes the tracing core's `event_mutex` (it may sleep).
#[inline(never)]
pub fn lock_events() -> EventGuard {
    // SAFETY: `event_mutex` is the tracing core's `DEFINE_MUTEX()`: initialised
    // and never freed. `EventLock` has no size and an alignment of one, and
    // only this function and `EventLock::assume_held` make one.
    let m: &'static Mutex<EventLock> = unsafe { Mutex::from_raw(bindings::event_mutex()) };
    m.lock()
}

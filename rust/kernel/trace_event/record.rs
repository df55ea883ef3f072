// SPDX-License-Identifier: GPL-2.0

//! Writing an event's records: the instances it is enabled in
//! ([`Targets`], [`FileSet`], [`EventFile`]) and their ring buffers
//! ([`Reservation`]), and perf and BPF ([`PerfSlot`], [`PerfCall`],
//! [`PerfRecord`]).

use crate::{bindings, error::Result, prelude::*, types::Opaque};
use core::{
    marker::PhantomData,
    mem::MaybeUninit,
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
    /// soft-disabled, or its pid filter drops the task
    /// (`trace_trigger_soft_disabled()`): then no record. A provider asks
    /// before it reserves, as C's do.
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
    /// and already filled in) in the instance's ring buffer, committed when
    /// the [`Reservation`] is dropped (`trace_event_record_reserve()`);
    /// `None` if the buffer is off or full, the pid filter drops the task,
    /// or `len` is shorter than the header. Ask
    /// [`EventFile::soft_disabled`] first.
    pub fn reserve(&self, len: usize) -> Option<Reservation<'_>> {
        if len < super::ENTRY_SIZE {
            return None;
        }
        let mut rec = MaybeUninit::<bindings::trace_event_record>::uninit();
        // SAFETY: the file is valid (type invariant). Nothing of the
        // reservation points into this frame, so it can move; the ring
        // buffer keeps preemption off from the reserve to the commit.
        let entry = unsafe {
            bindings::trace_event_record_reserve(
                rec.as_mut_ptr(),
                self.as_raw(),
                len as _,
                ptr::null_mut(),
            )
        };
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
    /// than the header writes nothing.
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn record_hit(
        &self,
        len: usize,
        regs: &crate::ptrace::PtRegs,
        fill: impl FnOnce(&mut [u8]),
    ) {
        if len < super::ENTRY_SIZE {
            return;
        }
        // Which of the tracing core's calls fits is asked here, without a
        // call (they ask again themselves).
        let flags = self.flags();
        if flags & FULL_PATH_FLAGS != 0 {
            if self.soft_disabled_as(flags) {
                return;
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
                unsafe {
                    bindings::trace_event_record_write(
                        self.as_raw(),
                        p.cast(),
                        len as _,
                        regs.as_raw(),
                    )
                };
                return;
            }
        }
        let mut rec = MaybeUninit::<bindings::trace_event_record>::uninit();
        // SAFETY: the file is valid (type invariant); preemption is off
        // while `regs` lives (`PtRegs`' invariant), as the reserve wants.
        let entry = unsafe {
            bindings::trace_event_record_reserve(
                rec.as_mut_ptr(),
                self.as_raw(),
                len as _,
                regs.as_raw(),
            )
        };
        if entry.is_null() {
            return;
        }
        // SAFETY: the reserve gave `len` writable bytes at `entry`, ours
        // until the commit below.
        fill(unsafe { core::slice::from_raw_parts_mut(entry.cast::<u8>(), len) });
        // SAFETY: `rec` holds the reservation made above; `regs` outlives
        // the commit.
        unsafe { bindings::trace_event_record_commit(rec.as_mut_ptr()) };
    }
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
    fn drop(&mut self) {
        // SAFETY: by the type invariant `rec` holds a reservation.
        unsafe { bindings::trace_event_record_commit(&mut self.rec) };
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
    /// preemption is off (by [`crate::ptrace::PtRegs`]' invariant), which
    /// is an RCU read side already, as C's handlers rely on
    /// (`trace_probe_for_each_link_rcu()` in `kprobe_trace_func()`).
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn for_each_in_handler(&self, _regs: &crate::ptrace::PtRegs, f: impl FnMut(&EventFile)) {
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
    /// [`PtRegs`]: crate::ptrace::PtRegs
    #[inline(never)]
    pub fn run_bpf(&self, regs: &crate::ptrace::PtRegs) -> bool {
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
    /// [`PtRegs`]: crate::ptrace::PtRegs
    #[inline(never)]
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

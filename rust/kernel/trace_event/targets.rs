// SPDX-License-Identifier: GPL-2.0

//! Where an event's hits go: the trace instances it is enabled in
//! ([`Targets`], [`FileSet`]) and, while perf has it open, perf.
//!
//! The instances are slots in one allocation ([`MAX_INSTANCES`] of them),
//! published through an RCU pointer: made when the first instance enables
//! the event, freed after a grace period when the last disables it. A hit
//! walks up to one past the last slot in use, so the usual single instance
//! costs one slot. In a probe handler the walk takes no RCU read lock:
//! preemption is off there, which the handler's `PtRegs` proves, as C's
//! `trace_probe_for_each_link_rcu()` relies on. C allocates a link per
//! instance instead, and has no limit.

use super::{file::EventFile, perf::PerfSlot};
use crate::{bindings, error::Result, prelude::*};
use core::{
    ptr,
    sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering},
};

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
///     lock_events, set_enabled, Event, EventFile, EventNames, Fields, Kind, Registration,
///     Targets, TraceSeq,
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
///     Registration::new(&lock_events(), &BUILTIN, Kind::Dynamic, |targets| {
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
/// enabled nowhere (most probes on a machine with many) keeps one pointer.
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
    /// here, so the usual single instance costs one slot. (Not a count of
    /// the entries: a walk bounded by the count could stop before an entry
    /// that stayed enabled when another was removed and a third added in
    /// front of it meanwhile.) Changed only by `add` and `remove`, which the
    /// tracing core calls under `event_mutex`; never above
    /// [`MAX_INSTANCES`] (an entry's index plus one).
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
        let end = s.end.load(Ordering::Acquire);
        // SAFETY: `end` is at most `MAX_INSTANCES`, the length of `files`
        // (`Slots::end`). (Unchecked: the clamp cost every hit three
        // instructions.)
        let files = unsafe { s.files.get_unchecked(..end) };
        for slot in files {
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

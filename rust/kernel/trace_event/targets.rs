// SPDX-License-Identifier: GPL-2.0

//! Where an event's hits go: the trace instances it is enabled in
//! ([`Targets`], [`FileSet`]) and, while perf has it open, perf.
//!
//! The instances are entries of one allocation, a small header followed by
//! an array, published through an RCU pointer: made when the first instance
//! enables the event, freed after a grace period when the last disables it.
//! When every entry is taken, the next instance publishes a copy twice the
//! size and the old allocation is freed after a grace period, so an event
//! is enabled in as many instances as memory allows, as in C, which
//! allocates a link per instance. A hit loads the pointer and the header's
//! end, then walks one array up to one past the last entry in use (the
//! usual single instance costs one entry), with no pointer to follow from
//! one instance to the next as C's list has. In a probe handler the walk
//! takes no RCU read lock: preemption is off there, which the handler's
//! `PtRegs` proves, as C's `trace_probe_for_each_link_rcu()` relies on.

use super::{file::EventFile, perf::PerfSlot};
use crate::{
    bindings,
    error::Result,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed},
        rcu,
    },
};
// Core's atomics, not `kernel::sync::atomic`: a probe hit reads these, and
// the kernel's atomics call C helpers that can be probed (they are not
// `NOKPROBE_SYMBOL()`, nor inlined without `CONFIG_RUST_INLINE_HELPERS`).
use core::{
    mem::{align_of, offset_of, size_of},
    ptr, slice,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering},
};

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
/// use kernel::sync::atomic::{Atomic, Relaxed};
/// use kernel::trace_event::{
///     set_enabled, Event, EventBox, EventFile, EventNames, Fields, Kind, Targets, TraceSeq,
/// };
/// # // Runs `f` where the tracing core holds `event_mutex`, which only
/// # // the core takes: in the `create` of a dynamic event type made for it.
/// # fn locked<R>(f: impl FnOnce(&kernel::trace_event::EventLock) -> R) -> Result<R> {
/// #     use core::{convert::Infallible, ffi::c_void, ptr};
/// #     use kernel::sync::atomic::{Atomic, Full, Release};
/// #     use kernel::{seq_file::SeqFile, str::CStr, trace_event::EventLock};
/// #     use kernel::trace_event::dyn_event::{Args, Provider, Type};
/// #     static JOB: Atomic<*mut c_void> = Atomic::new(ptr::null_mut());
/// #     struct L;
/// #     impl Provider for L {
/// #         type Entry = u8;
/// #         fn create(_: &Type<Self>, l: &EventLock, c: &CStr) -> Result {
/// #             if c.to_bytes() != b"rkpe-doctest-locked" {
/// #                 return Err(ECANCELED);
/// #             }
/// #             let job = JOB.xchg(ptr::null_mut(), Full);
/// #             if job.is_null() {
/// #                 return Err(EINVAL);
/// #             }
/// #             // SAFETY: `locked` stored it for this call, and waits for it.
/// #             unsafe { (*job.cast::<&mut dyn FnMut(&EventLock)>())(l) };
/// #             Ok(())
/// #         }
/// #         fn show(&self, _: &EventLock, _: &u8, _: &SeqFile) -> Result { Ok(()) }
/// #         fn is_busy(&self, _: &EventLock, _: &u8) -> bool { false }
/// #         fn free(&self, _: &EventLock, _: &u8) -> Result { Ok(()) }
/// #         fn matches(
/// #             &self, _: &EventLock, _: Option<&CStr>, _: &CStr, _: Args<'_>, _: &u8,
/// #         ) -> bool {
/// #             false
/// #         }
/// #     }
/// #     let ty = KBox::pin_init(Type::new::<Infallible>(L), GFP_KERNEL)?;
/// #     let (mut f, mut r) = (Some(f), None);
/// #     let mut run = |l: &EventLock| r = f.take().map(|f| f(l));
/// #     let mut job: &mut dyn FnMut(&EventLock) = &mut run;
/// #     JOB.store(ptr::from_mut(&mut job).cast(), Release);
/// #     ty.create(c"rkpe-doctest-locked")?;
/// #     r.ok_or(EINVAL)
/// # }
/// // (`Targets` for the data's field: only a registration makes them.)
///
/// struct Ev {
///     targets: Targets,
///     registered: Atomic<usize>,
/// }
///
/// #[vtable]
/// impl Event for Ev {
///     fn names(&self) -> EventNames<'_> {
///         let (system, name) = (c"rkpe_doctest2", c"ev");
///         EventNames { system, name, print_fmt: c"\"\"" }
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
///         self.registered.fetch_add(1, Relaxed);
///         Ok(())
///     }
///     fn unregister(&self, _file: &EventFile) -> Result {
///         // Told after the file has left them.
///         assert!(self.targets.files().is_empty());
///         self.registered.fetch_sub(1, Relaxed);
///         Ok(())
///     }
/// }
///
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// // A provider makes its events where the core holds `event_mutex` (a
/// // dynamic event type's `create`).
/// let reg = locked(|lock| {
///     EventBox::new(lock, &BUILTIN, Kind::Dynamic, |targets| {
///         Ok(Ev { targets, registered: Atomic::new(0) })
///     })
/// })??;
/// assert!(!reg.data().targets.in_use());
/// let (sys, name) = (c"rkpe_doctest2", c"ev");
/// // Enable it in the top instance, as `echo 1 > events/rkpe_doctest2/ev/enable`.
/// set_enabled(sys, name, true)?;
/// assert_eq!(set_enabled(sys, c"no_such_event", true), Err(EINVAL));
/// assert!(reg.data().targets.in_use());
/// assert_eq!(reg.data().registered.load(Relaxed), 1);
/// let mut written = 0;
/// reg.data().targets.files().for_each(|f| {
///     if !f.soft_disabled() {
///         // SAFETY: `for_each` runs this with preemption off, and the
///         // reservation is dropped before it returns.
///         if let Some(mut rec) = unsafe { f.reserve(16) } {
///             rec.bytes()[8..16].copy_from_slice(&42u64.to_ne_bytes());
///             written += 1;
///         }
///     }
/// });
/// assert_eq!(written, 1);
/// // Enabled, it cannot be removed.
/// assert_eq!(locked(|lock| reg.remove(lock))?, Err(EBUSY));
/// set_enabled(sys, name, false)?;
/// assert!(!reg.data().targets.in_use());
/// assert_eq!(reg.data().registered.load(Relaxed), 0);
/// // Dropped, it is removed, and the instances that hold its record (which
/// // names it by an id a later event may take) are cleared.
/// drop(reg);
/// # Ok::<(), Error>(())
/// ```
pub struct Targets {
    pub(super) files: FileSet,
    pub(super) perf: PerfSlot,
    /// The number of the [`EventBox::new`](super::EventBox::new)
    /// call that made them (one number a call, never again): a
    /// registration takes no other set, so that its files get its records
    /// alone.
    pub(super) owner: u64,
}

/// The next registration's number ([`Targets::owner`]).
static NEXT_OWNER: Atomic<u64> = Atomic::new(0);

impl Targets {
    /// A number no other registration gets (64 bits do not wrap).
    pub(super) fn next_owner() -> u64 {
        NEXT_OWNER.fetch_add(1, Relaxed)
    }

    /// No instance, no perf. Only [`EventBox::new`] makes them, one set
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
/// [`Targets`]' files). The entries are allocated when the first instance
/// enables the event, moved to a larger allocation when they are all taken,
/// and freed when the last instance disables it: an event enabled nowhere
/// (most probes on a machine with many) keeps one pointer.
///
/// # Invariants
///
/// `slots` is null or heads a `Slots` allocation (from `Slots::alloc`) that
/// the set owns. One that is unpublished (set to null when the last entry
/// leaves, or replaced by a larger copy) is freed only after an RCU-sched
/// grace period, so a reader in a read side never sees it freed. A
/// non-null entry of it is a `trace_event_file` between the event's
/// `TRACE_REG_REGISTER` and `TRACE_REG_UNREGISTER` for it: only
/// [`Registration`](super::Registration)'s `reg` callback adds and removes
/// entries, and it removes each one (waiting for readers) before the core
/// lets go of the file. A replaced allocation's entries are in its copy,
/// and it is freed before the `add` that replaced it returns, so before any
/// of them can be removed.
pub struct FileSet {
    slots: AtomicPtr<Slots>,
}

/// The header of a [`FileSet`]'s allocation; its `cap` entries follow it in
/// the same allocation (as a C struct's flexible array member does), so
/// that a hit reaches them with no pointer to follow. Made by
/// [`Slots::alloc`], freed by [`Slots::free`], and only ever reached
/// through a pointer to its allocation.
///
/// # Invariants
///
/// A `Slots` heads an allocation of [`HEADER_WORDS`] plus `cap` words, made
/// by a `KVec<usize>` of exactly that capacity, in which `files` is
/// followed by `cap` initialised entries; `end` is at most `cap`.
#[repr(C)]
struct Slots {
    /// One past the last non-null entry: the hit path walks the entries up
    /// to here, so the usual single instance costs one entry. (Not a count
    /// of the entries: a walk bounded by the count could stop before an
    /// entry that stayed enabled when another was removed and a third added
    /// in front of it meanwhile.) Changed only by `add` and `remove`, which
    /// the tracing core calls under `event_mutex`; never above `cap` (an
    /// entry's index plus one).
    end: AtomicUsize,
    /// How many entries follow the header. Set when the allocation is made
    /// and never changed; read by `add` and `remove` only, never by a hit.
    cap: usize,
    /// Where the entries start: `cap` of them, past the end of the type.
    files: [AtomicPtr<bindings::trace_event_file>; 0],
}

/// The words of a [`Slots`] header (an entry is one word).
const HEADER_WORDS: usize = size_of::<Slots>() / size_of::<usize>();

/// The words of a first allocation: 64 bytes on a 64-bit machine, the
/// header and six entries. A copy has twice the words of the allocation it
/// replaces, so that each fills a kmalloc size class (64, 128, 256 bytes...).
const FIRST_WORDS: usize = 8;

// A `Slots` allocation is a `KVec<usize>`'s buffer: the header is whole
// words, aligned as a word is, with the entries right after it; an entry is
// a word; and a first allocation has room for an entry.
const _: () = assert!(
    HEADER_WORDS * size_of::<usize>() == size_of::<Slots>()
        && align_of::<Slots>() == align_of::<usize>()
        && offset_of!(Slots, files) == size_of::<Slots>()
        && size_of::<AtomicPtr<bindings::trace_event_file>>() == size_of::<usize>()
        && align_of::<AtomicPtr<bindings::trace_event_file>>() == align_of::<usize>()
        && FIRST_WORDS > HEADER_WORDS
);

impl Slots {
    /// A new allocation of at least `words` words, with every entry null
    /// and `end` zero. The caller owns it and frees it with [`Slots::free`].
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    fn alloc(words: usize) -> Result<*mut Slots> {
        let v = KVec::<usize>::with_capacity(words, GFP_KERNEL)?;
        // (Never short: callers ask for more than the header's words.)
        let cap = v.capacity().checked_sub(HEADER_WORDS).ok_or(ENOMEM)?;
        let (p, _, _) = v.into_raw_parts();
        let p = p.cast::<Slots>();
        // SAFETY: `p` is a fresh allocation of `HEADER_WORDS + cap` words
        // (the vector's capacity), aligned as a word is: room for the header
        // and, right after it, `cap` entries, which have the size and
        // alignment of a word (the assertion above). These writes initialise
        // all of them. The entries' address is taken from `p` without a
        // reference, so it reaches past the header.
        unsafe {
            p.write(Slots {
                end: AtomicUsize::new(0),
                cap,
                files: [],
            });
            let files =
                ptr::addr_of_mut!((*p).files).cast::<AtomicPtr<bindings::trace_event_file>>();
            for i in 0..cap {
                files.add(i).write(AtomicPtr::new(ptr::null_mut()));
            }
        }
        // INVARIANT: a header and `cap` initialised entries in a `KVec<usize>`
        // buffer of `HEADER_WORDS + cap` words; `end` is zero.
        Ok(p)
    }

    /// Frees an allocation made by [`Slots::alloc`].
    ///
    /// # Safety
    ///
    /// `p` came from [`Slots::alloc`], is not freed yet, and nothing uses it
    /// again (no reader can still see it).
    unsafe fn free(p: *mut Slots) {
        // SAFETY: `p` heads a live allocation (the caller's promise).
        let words = HEADER_WORDS + unsafe { (*p).cap };
        // SAFETY: by the type invariant `p` is the buffer of a `KVec<usize>`
        // whose capacity is `words`; with no element in it (length 0) the
        // vector's drop only frees the buffer, which nothing uses again (the
        // caller's promise). The entries need no drop.
        drop(unsafe { KVec::<usize>::from_raw_parts(p.cast::<usize>(), 0, words) });
    }

    /// The first `len` entries of the allocation `p` heads.
    ///
    /// # Safety
    ///
    /// `p` heads a live allocation made by [`Slots::alloc`], which is not
    /// freed during `'a`, and `len` is at most its `cap`.
    #[inline(always)]
    unsafe fn files<'a>(
        p: *const Slots,
        len: usize,
    ) -> &'a [AtomicPtr<bindings::trace_event_file>] {
        // SAFETY: by the type invariant `cap` initialised entries follow the
        // header in its allocation, which lives through `'a` (the caller's
        // promise), and `len` is at most `cap`; the entries' address is
        // taken from `p` without a reference, so it reaches past the header.
        // The entries are atomics: shared references to them are sound
        // while writers change them.
        unsafe { slice::from_raw_parts(ptr::addr_of!((*p).files).cast(), len) }
    }
}

impl FileSet {
    /// A set with no instance in it (the event is enabled nowhere).
    const fn new() -> Self {
        // INVARIANT: null.
        FileSet {
            slots: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Adds an instance (from `reg`'s `TRACE_REG_REGISTER`). When every
    /// entry is taken, publishes a copy with twice the words, waits until
    /// no handler can see the old allocation, and frees it.
    ///
    /// # Errors
    ///
    /// `ENOMEM` (C's `trace_probe_add_file()` allocates a link for each
    /// instance).
    pub(super) fn add(&self, file: &EventFile) -> Result {
        // Writers are serialised by `event_mutex`: nothing changes `slots`
        // or its entries meanwhile.
        let old = self.slots.load(Ordering::Relaxed);
        let mut words = FIRST_WORDS;
        let mut old_files: &[AtomicPtr<bindings::trace_event_file>] = &[];
        if !old.is_null() {
            // SAFETY: `old` is the set's allocation (type invariant: not
            // freed while published, and only `add` and `remove`, serialised
            // with this, free it), and `cap` is its number of entries.
            let (s, files) = unsafe { (&*old, Slots::files(old, (*old).cap)) };
            let free = files
                .iter()
                .enumerate()
                .find(|(_, slot)| slot.load(Ordering::Relaxed).is_null());
            if let Some((i, slot)) = free {
                // INVARIANT: `file` is the instance whose `TRACE_REG_REGISTER`
                // the caller (`Registration::reg`) is handling, valid until
                // its `TRACE_REG_UNREGISTER`, where `reg` has `remove` clear
                // it.
                slot.store(file.as_raw(), Ordering::Release);
                // After the entry: a walk that sees the new end sees it.
                s.end.fetch_max(i + 1, Ordering::Release);
                return Ok(());
            }
            // All taken: a copy with twice the words.
            words = (HEADER_WORDS + s.cap).checked_mul(2).ok_or(ENOMEM)?;
            old_files = files;
        }
        let new = Slots::alloc(words)?;
        // SAFETY: `new` was just made, and nothing frees it in this call.
        let (s, files) = unsafe { (&*new, Slots::files(new, (*new).cap)) };
        // The old entries (none for a first allocation), then `file`: the
        // copy has more entries than the old allocation, so all of them fit.
        // (`Iterator::chain` by name: `pin_init::Init` has a `chain` too.)
        let entries = Iterator::chain(
            old_files.iter().map(|slot| slot.load(Ordering::Relaxed)),
            Some(file.as_raw()),
        );
        let mut end = 0;
        for (slot, entry) in files.iter().zip(entries) {
            // INVARIANT: the old allocation's entries, and `file` as above.
            slot.store(entry, Ordering::Relaxed);
            end += 1;
        }
        s.end.store(end, Ordering::Relaxed);
        // INVARIANT: the set owns `new` from here; published after its
        // entries and its end, so a walk that sees it sees them.
        self.slots.store(new, Ordering::Release);
        if !old.is_null() {
            // SAFETY: no preconditions; waits for the readers that could
            // have seen `old`.
            unsafe { bindings::synchronize_rcu() };
            // SAFETY: `old` came from `Slots::alloc` (type invariant); it is
            // unpublished, every reader that could have seen it has left its
            // read side, and `old_files` is not used again.
            unsafe { Slots::free(old) };
        }
        Ok(())
    }

    /// Removes an instance (from `reg`) and waits until no handler can see
    /// it any more; the last one frees the entries.
    pub(super) fn remove(&self, file: &EventFile) {
        let p = self.slots.load(Ordering::Relaxed);
        if p.is_null() {
            return;
        }
        // SAFETY: as in `add`.
        let (s, files) = unsafe { (&*p, Slots::files(p, (*p).cap)) };
        for slot in files {
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
        let end = files
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
            // SAFETY: `p` came from `Slots::alloc` (type invariant); it is
            // unpublished, every reader that could have seen it has left its
            // read side, and `s` and `files` are not used again.
            unsafe { Slots::free(p) };
        }
    }

    /// Whether no instance is enabled.
    pub fn is_empty(&self) -> bool {
        self.slots.load(Ordering::Relaxed).is_null()
    }

    /// Calls `f` for each enabled instance. A file added meanwhile may be
    /// missed and one being removed still seen, as with C's RCU list walk.
    ///
    /// `f` runs in an RCU-sched read side, with preemption off: it must not
    /// sleep (no allocation with `GFP_KERNEL`, no mutex).
    pub fn for_each(&self, f: impl FnMut(&EventFile)) {
        let _guard = rcu::read_lock_sched();
        // SAFETY: in the RCU-sched read side `_guard` holds; `add` and
        // `remove` wait for it.
        unsafe { self.walk(f) };
    }

    /// As [`FileSet::for_each`], in a probe handler: `regs` proves that
    /// preemption is off (by [`crate::ptrace::PtRegs`]' invariant), which
    /// is an RCU read side already, as C's handlers rely on
    /// (`trace_probe_for_each_link_rcu()` in `kprobe_trace_func()`). `f`
    /// must not sleep, as the handler itself.
    #[cfg(CONFIG_KPROBES)]
    #[inline]
    pub fn for_each_in_handler(&self, _regs: &crate::ptrace::PtRegs, f: impl FnMut(&EventFile)) {
        // SAFETY: preemption is off while `_regs` lives, and the
        // `synchronize_rcu()` of `add` and `remove` waits for
        // preemption-disabled regions.
        unsafe { self.walk(f) };
    }

    /// The walk of [`FileSet::for_each`]: one load of the published
    /// allocation, one of its end, then the entries, one array.
    ///
    /// # Safety
    ///
    /// The caller is in an RCU read side (which `add` and `remove` wait
    /// for) for the whole call.
    #[inline(always)]
    pub(super) unsafe fn walk(&self, mut f: impl FnMut(&EventFile)) {
        let p = self.slots.load(Ordering::Acquire);
        if p.is_null() {
            return;
        }
        // SAFETY: published, so not freed before the caller's read side
        // ends (type invariant).
        let end = unsafe { (*p).end.load(Ordering::Acquire) };
        // SAFETY: as above, and `end` is at most the allocation's `cap`
        // (`Slots`' invariant). (Not clamped to `cap`: the clamp would cost
        // every hit a load and a compare.)
        let files = unsafe { Slots::files(p, end) }.as_ptr();
        // By index, not with the slice's iterator: a generic of `core` that
        // is not inlined would be a call into vmlinux, outside
        // `.kprobes.text`, on the hit path.
        let mut i = 0;
        while i < end {
            // SAFETY: `i` is below `end`, the length of `files`.
            let p = unsafe { &*files.add(i) }.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: by the type invariant `p` stays valid until
                // `remove` returns, which waits for the caller's read side.
                f(unsafe { EventFile::from_raw(p) });
            }
            i += 1;
        }
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        let p = *self.slots.get_mut();
        if !p.is_null() {
            // SAFETY: `p` came from `Slots::alloc` (type invariant), and
            // with `&mut self` no reader can hold the set.
            unsafe { Slots::free(p) };
        }
    }
}

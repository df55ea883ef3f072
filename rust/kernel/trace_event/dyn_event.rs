// SPDX-License-Identifier: GPL-2.0

//! Dynamic event types: the `dynamic_events` file.
//!
//! A [`Type`] offers a kind of dynamic event to `<tracefs>/dynamic_events`,
//! as `dyn_event_register()` does for kprobe, uprobe, synthetic and eprobe
//! events: a line written there is offered to each type's
//! [`Provider::create`] until one takes it (the others say `ECANCELED`);
//! reading lists every type's [`Entry`]s in creation order through
//! [`Provider::show`]; `-:[GRP/]EVENT ...` and `!...` lines and `O_TRUNC`
//! remove entries through [`Provider::matches`], [`Provider::is_busy`] and
//! [`Provider::free`], then tell the type with [`Provider::released`] that
//! the removal is done (a kernel patch adds the callback), so that it can do
//! once what every freed entry needs, such as waiting for an RCU grace
//! period. Dropping the [`Type`] unregisters it (a kernel patch adds
//! `dyn_event_unregister()`) and removes any entry left (an entry that
//! cannot be freed leaves the list and is kept).
//!
//! The core holds `event_mutex` around every callback, [`Provider::create`]
//! included (a kernel patch adds the type's `create_locked`): a provider
//! adds and removes its events and entries there, with the [`EventLock`]
//! proof the callback gives it, and never takes the lock itself. Outside a
//! callback, [`Type::create`], [`Type::release`] and [`Type::release_all`]
//! do what a line written to `dynamic_events` does, for this type only.
//!
//! Types are offered a line in the order they registered. [`Type::new_first`]
//! registers ahead of the others (`dyn_event_register_first()`, a kernel
//! patch), for a provider that stands in for one of the kernel's own types
//! (the kernel's kprobe type comes before its uprobe type).
//!
//! C header: [`include/linux/trace_dynevent.h`](srctree/include/linux/trace_dynevent.h)

use crate::{
    bindings,
    error::from_result,
    prelude::*,
    seq_file::SeqFile,
    str::CStr,
    sync::atomic::{Acquire, Atomic, Relaxed, Release},
    sync::Arc,
    trace_event::EventLock,
    types::Opaque,
};
use core::{ffi::c_int, marker::PhantomPinned, ptr};

/// `struct dyn_event_operations` (<linux/trace_dynevent.h>).
type Operations = bindings::dyn_event_operations;

/// `struct dyn_event` (<linux/trace_dynevent.h>).
type RawEvent = bindings::dyn_event;

/// The entries a [`Type`] dropped while they could not be freed (and so
/// kept), chained through their `list.next`: never read, only a reference
/// that shows them reachable.
static KEPT: Atomic<*mut RawEvent> = Atomic::new(ptr::null_mut());

/// `struct trace_event_call` (<linux/trace_events.h>).
type RawCall = bindings::trace_event_call;

use bindings::{dyn_event_register, dyn_event_register_first, dyn_event_unregister};

/// A kind of dynamic event. The core calls these with `event_mutex` held.
pub trait Provider: Send + Sync + 'static {
    /// What each [`Entry`] of this type carries.
    type Entry: Send + Sync;

    /// Creates what `command` (one line written to `dynamic_events`, or
    /// given to [`Type::create`]) defines, adding its entries to `ty`.
    /// [`ECANCELED`] if the line is not for this type (the core offers it
    /// to the next type).
    ///
    /// [`ECANCELED`]: crate::error::code::ECANCELED
    fn create(ty: &Type<Self>, lock: &EventLock, command: &CStr) -> Result
    where
        Self: Sized;

    /// Writes `entry`'s line of `dynamic_events`.
    fn show(&self, lock: &EventLock, entry: &Self::Entry, m: &SeqFile) -> Result;

    /// Whether `entry` cannot be removed now.
    fn is_busy(&self, lock: &EventLock, entry: &Self::Entry) -> bool;

    /// Removes `entry`; on success the caller takes it out of
    /// `dynamic_events` and lets go of the list's reference to it. An error
    /// means that nothing changed: the entry stays listed, and is offered
    /// again. A [`Type`] dropped while `free` fails for an entry keeps that
    /// entry (it leaves the list, and its data is never dropped): so the
    /// data should not own the entry's event, which then could not be kept
    /// with its module; a provider keeps its events where they are dropped,
    /// and kept, by their own [`EventBox`](super::EventBox).
    fn free(&self, lock: &EventLock, entry: &Self::Entry) -> Result;

    /// A removal (a `-:` line or a truncation of `dynamic_events`) gave
    /// one or more entries to [`Provider::free`], whether or not that
    /// succeeded; `event_mutex` is still held. A provider whose `free`
    /// leaves work to do for every entry (waiting for an RCU grace period)
    /// does it here, once for all of them. It may come more than once in
    /// one removal. Nothing by default.
    fn released(&self, _lock: &EventLock) {}

    /// Whether a removal command for `system/event` (`system` if given;
    /// an empty `event` matches any) followed by `args` names `entry`.
    fn matches(
        &self,
        lock: &EventLock,
        system: Option<&CStr>,
        event: &CStr,
        args: Args<'_>,
        entry: &Self::Entry,
    ) -> bool;
}

/// The words after the first of a removal command.
#[derive(Clone)]
pub struct Args<'a> {
    argv: &'a [*const u8],
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a CStr;

    fn next(&mut self) -> Option<&'a CStr> {
        let (first, rest) = self.argv.split_first()?;
        self.argv = rest;
        // SAFETY: `argv_split()` made each word a NUL-terminated string that
        // lives for the callback.
        Some(unsafe { CStr::from_char_ptr(*first) })
    }
}

/// A registered dynamic event type.
///
/// # Examples
///
/// ```
/// use kernel::sync::atomic::{Atomic, Relaxed};
/// use kernel::seq_file::SeqFile;
/// use kernel::str::CStr;
/// use kernel::trace_event::dyn_event::{Args, Provider, Type};
/// use kernel::trace_event::EventLock;
///
/// struct Ty(Atomic<u32>);
///
/// impl Provider for Ty {
///     type Entry = u32;
///     fn create(ty: &Type<Self>, _: &EventLock, command: &CStr) -> Result {
///         if !command.to_bytes().starts_with(b"doctest:") {
///             return Err(ECANCELED);
///         }
///         ty.data().0.fetch_add(1, Relaxed);
///         Ok(())
///     }
///     fn show(&self, _: &EventLock, _e: &u32, m: &SeqFile) -> Result {
///         m.put(b"doctest\n");
///         Ok(())
///     }
///     fn is_busy(&self, _: &EventLock, _e: &u32) -> bool {
///         false
///     }
///     fn free(&self, _: &EventLock, _e: &u32) -> Result {
///         Ok(())
///     }
///     fn matches(&self, _: &EventLock, _: Option<&CStr>, _: &CStr, _: Args<'_>, _: &u32) -> bool {
///         false
///     }
/// }
///
/// use core::convert::Infallible;
/// let ty = KBox::pin_init(Type::new::<Infallible>(Ty(Atomic::new(0))), GFP_KERNEL)?;
/// // A line for this type reaches its `create`, with `event_mutex` held.
/// ty.create(c"doctest: one")?;
/// assert_eq!(ty.data().0.load(Relaxed), 1);
/// assert_eq!(ty.create(c"p:other vfs_read"), Err(ECANCELED));
/// // No entry matches: nothing to remove.
/// assert_eq!(ty.release(c"-:doctest/one"), Err(ENOENT));
/// ty.release_all()?;
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ops` is in `dyn_event_ops_list` until drop; every `dyn_event` in
/// `dyn_event_list` whose `ops` is `ops` is the `raw` field of an
/// `Entry<P::Entry>` in an [`Arc`] of which the list holds a reference
/// ([`Entry::add`]).
#[pin_data(PinnedDrop)]
pub struct Type<P: Provider> {
    #[pin]
    ops: Opaque<Operations>,
    /// Set by the drop, for a removal of every entry, busy or not.
    going: Atomic<bool>,
    #[pin]
    data: P,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the core calls the callbacks from any thread; `P: Sync`.
unsafe impl<P: Provider> Sync for Type<P> {}
// SAFETY: `P: Send`; the C part moves nowhere (pinned).
unsafe impl<P: Provider> Send for Type<P> {}

impl<P: Provider> Type<P> {
    /// Registers `data` as a dynamic event type.
    ///
    /// # Errors
    ///
    /// `data`'s errors.
    pub fn new<E>(data: impl PinInit<P, E>) -> impl PinInit<Self, Error>
    where
        Error: From<E>,
    {
        Self::new_at(data, false)
    }

    /// Registers `data` as a dynamic event type ahead of the types
    /// registered before (`dyn_event_register_first()`), for a type that
    /// stands in for a built-in one: the built-in kprobe type registers at
    /// `core_initcall`, before the uprobe type (`fs_initcall`), whose `p`
    /// and `r` lines overlap with its own, so a line both would take (say
    /// a `p` line with too many arguments, which the uprobe type refuses
    /// with `E2BIG` before it looks further) gets the kprobe type's answer.
    ///
    /// # Errors
    ///
    /// As [`Type::new`].
    pub fn new_first<E>(data: impl PinInit<P, E>) -> impl PinInit<Self, Error>
    where
        Error: From<E>,
    {
        Self::new_at(data, true)
    }

    fn new_at<E>(data: impl PinInit<P, E>, first: bool) -> impl PinInit<Self, Error>
    where
        Error: From<E>,
    {
        // Fields are initialised in the order written: `ops`, registered,
        // comes last, and an error there drops `data`.
        try_pin_init!(Self {
            data <- data,
            going: Atomic::new(false),
            _pin: PhantomPinned,
            ops <- Opaque::try_ffi_init(|ops: *mut Operations| {
                let table = Operations {
                    list: bindings::list_head {
                        next: ptr::null_mut(),
                        prev: ptr::null_mut(),
                    },
                    create: None,
                    create_locked: Some(Self::create_locked),
                    show: Some(Self::show),
                    is_busy: Some(Self::is_busy),
                    free: Some(Self::free),
                    match_: Some(Self::match_),
                    released: Some(Self::released),
                };
                // SAFETY: `ops` points to the field's memory, valid for
                // writes.
                unsafe { ops.write(table) };
                // INVARIANT: on success `ops` is in the core's list, with
                // `data` initialised; no entry has `ops` yet.
                // SAFETY: `ops` is initialised (above) and pinned with the
                // `Type`, whose `data` is initialised and pinned too.
                crate::error::to_result(unsafe {
                    if first {
                        dyn_event_register_first(ops)
                    } else {
                        dyn_event_register(ops)
                    }
                })
            }),
        }? Error)
    }

    /// The provider given to [`Type::new`], which the core's callbacks
    /// reach.
    pub fn data(&self) -> &P {
        &self.data
    }

    /// Runs `command` as a definition of this type (`dyn_event_create()`):
    /// [`Provider::create`], with `event_mutex` held. May sleep.
    ///
    /// It takes the core's locks: not to be called from a [`Provider`] or
    /// an [`Event`](super::Event) callback, nor with a lock held that the
    /// provider's callbacks take. The same holds for [`Type::release`],
    /// [`Type::release_all`] and dropping a `Type`.
    #[inline]
    pub fn create(&self, command: &CStr) -> Result {
        // SAFETY: `ops` is registered (type invariant); the line is
        // NUL-terminated.
        crate::error::to_result(unsafe {
            bindings::dyn_event_create(command.as_char_ptr(), self.ops.get())
        })
    }

    /// Runs a removal command, `-:[GRP/]EVENT [ARGS]`, on this type's
    /// entries (`dyn_event_release()`): each that [`Provider::matches`]
    /// is freed, in order, up to the first that fails. `ENOENT` if none
    /// matches. May sleep.
    #[inline]
    pub fn release(&self, command: &CStr) -> Result {
        // SAFETY: as in `create`.
        crate::error::to_result(unsafe {
            bindings::dyn_event_release(command.as_char_ptr(), self.ops.get())
        })
    }

    /// Removes every entry of this type, or none if one is busy
    /// (`dyn_events_release_all()`, as a truncation of `dynamic_events`).
    /// May sleep.
    #[inline]
    pub fn release_all(&self) -> Result {
        // SAFETY: `ops` is registered (type invariant).
        crate::error::to_result(unsafe { bindings::dyn_events_release_all(self.ops.get()) })
    }

    /// The `Type<P>` that `ev` belongs to, and the data of the `Entry` whose `raw` is `ev`.
    ///
    /// # Safety
    ///
    /// `ev` must be in `dyn_event_list` with `ops` of a live `Type<P>`.
    unsafe fn parts<'a>(ev: *mut RawEvent) -> (&'a Self, &'a P::Entry) {
        // SAFETY: by the type invariant, `ev` is the `raw` field of an
        // `Entry<P::Entry>`, and its `ops` the `ops` field of a `Type<P>`.
        unsafe {
            let ty = &*crate::container_of!((*ev).ops.cast::<Opaque<Operations>>(), Self, ops);
            let entry = &*crate::container_of!(ev.cast::<Opaque<RawEvent>>(), Entry<P::Entry>, raw);
            (ty, &entry.data)
        }
    }

    /// The type's `create_locked`: offers a line to [`Provider::create`].
    ///
    /// # Safety
    ///
    /// Called by the core with its lock of its types and `event_mutex`
    /// held, our `ops` and a NUL-terminated line.
    unsafe extern "C" fn create_locked(ops: *mut Operations, raw: *const u8) -> c_int {
        // SAFETY: `ops` is the `ops` field of a `Type<P>`, registered and so
        // alive: `dyn_event_unregister()` takes the core's lock of its
        // types, which the caller holds, so it returns only after this call
        // (and no call comes after it).
        let this = unsafe { &*crate::container_of!(ops.cast::<Opaque<Operations>>(), Self, ops) };
        // SAFETY: the core passes a NUL-terminated line; `event_mutex` is
        // held.
        let (cmd, lock) = unsafe { (CStr::from_char_ptr(raw), EventLock::assume_held()) };
        from_result(|| P::create(this, lock, cmd).map(|()| 0))
    }

    /// The type's `show`: writes an entry's line with [`Provider::show`].
    ///
    /// # Safety
    ///
    /// Called by the core with `event_mutex` held and one of our linked
    /// entries.
    unsafe extern "C" fn show(m: *mut bindings::seq_file, ev: *mut RawEvent) -> c_int {
        // SAFETY: the core passes one of our linked entries.
        let (this, e) = unsafe { Self::parts(ev) };
        // SAFETY: `event_mutex` is held; `m` is valid for the call.
        let (lock, m) = unsafe { (EventLock::assume_held(), SeqFile::from_raw(m)) };
        from_result(|| this.data.show(lock, e, m).map(|()| 0))
    }

    /// The type's `is_busy`: asks [`Provider::is_busy`] whether an entry cannot be removed now.
    ///
    /// # Safety
    ///
    /// Called by the core with `event_mutex` held and one of our linked
    /// entries.
    unsafe extern "C" fn is_busy(ev: *mut RawEvent) -> bool {
        // SAFETY: as in `show`.
        let (this, e) = unsafe { Self::parts(ev) };
        // A type that is going takes every entry (`free` keeps the busy ones).
        // SAFETY: `event_mutex` is held.
        !this.going.load(Relaxed) && this.data.is_busy(unsafe { EventLock::assume_held() }, e)
    }

    /// The type's `free`: removes an entry with [`Provider::free`].
    ///
    /// # Safety
    ///
    /// Called by the core with `event_mutex` held and one of our linked
    /// entries.
    unsafe extern "C" fn free(ev: *mut RawEvent) -> c_int {
        // SAFETY: as in `show`.
        let (this, e) = unsafe { Self::parts(ev) };
        // SAFETY: `event_mutex` is held.
        let lock = unsafe { EventLock::assume_held() };
        if let Err(err) = this.data.free(lock, e) {
            if !this.going.load(Relaxed) {
                return err.to_errno();
            }
            // The type is going and the entry cannot be freed. It leaves the list,
            // which then no longer points to `ops`, and the list's reference
            // to it is kept (leaked): the entry stays with what the core
            // still uses.
            // SAFETY: `ev` is the `raw` of a linked `Entry<P::Entry>` (type
            // invariant), which is not used after this; `event_mutex` is held.
            let _ = unsafe { Entry::<P::Entry>::take_out(lock, ev) };
            // Kept on purpose, so reachable (kmemleak would report it):
            // chained from `KEPT` through the list pointer it no longer uses.
            // SAFETY: `ev` is valid (its reference is kept) and out of every
            // list; `event_mutex` serialises the writers of `KEPT`.
            unsafe { (*ev).list.next = KEPT.load(Relaxed).cast() };
            KEPT.store(ev, Relaxed);
            return 0;
        }
        // SAFETY: `ev` is the `raw` of a linked `Entry<P::Entry>` (type
        // invariant), which is not used after this; `event_mutex` is held.
        unsafe { Entry::<P::Entry>::unlink_raw(lock, ev) };
        0
    }

    /// The type's `released`: tells [`Provider::released`] that a removal
    /// gave entries to `free`.
    ///
    /// # Safety
    ///
    /// Called by the core with `event_mutex` held and the `ops` of one of
    /// the entries it freed: ours.
    unsafe extern "C" fn released(ops: *mut Operations) {
        // SAFETY: by the type invariant, our entries' `ops` is the `ops`
        // field of a `Type<P>`, alive while the caller holds `event_mutex`:
        // its drop takes that mutex before it lets `ops` go.
        let this = unsafe { &*crate::container_of!(ops.cast::<Opaque<Operations>>(), Self, ops) };
        // SAFETY: `event_mutex` is held.
        this.data.released(unsafe { EventLock::assume_held() });
    }

    /// The type's `match`: asks [`Provider::matches`] whether a removal command names an entry.
    ///
    /// # Safety
    ///
    /// Called by the core with `event_mutex` held and one of our linked
    /// entries.
    unsafe extern "C" fn match_(
        system: *const u8,
        event: *const u8,
        argc: c_int,
        argv: *mut *const u8,
        ev: *mut RawEvent,
    ) -> bool {
        // SAFETY: as in `show`.
        let (this, e) = unsafe { Self::parts(ev) };
        // SAFETY: the strings are NUL-terminated (`system` may be null);
        // `argv` has `argc` entries.
        let (system, event, argv) = unsafe {
            (
                (!system.is_null()).then(|| CStr::from_char_ptr(system)),
                CStr::from_char_ptr(event),
                if argc > 0 && !argv.is_null() {
                    core::slice::from_raw_parts(argv.cast_const(), argc as usize)
                } else {
                    &[]
                },
            )
        };
        // SAFETY: `event_mutex` is held.
        let lock = unsafe { EventLock::assume_held() };
        this.data.matches(lock, system, event, Args { argv }, e)
    }
}

#[pinned_drop]
impl<P: Provider> PinnedDrop for Type<P> {
    fn drop(self: Pin<&mut Self>) {
        let ops = self.ops.get();
        // No `create` runs once this returns, so no entry is added after.
        // SAFETY: `ops` was registered by `new_at` (type invariant).
        unsafe { dyn_event_unregister(ops) };
        // INVARIANT: no entry listed keeps `ops` once this returns. An
        // entry whose event is in use holds the event's module (through the
        // event's users), so a module's exit that drops its type finds none.
        // Anywhere else the type does not wait for the users, who may never
        // let go: such entries leave the list and are kept (`free`).
        if self.release_all().is_err() {
            crate::pr_err!("dyn_event: entries of a dropped type that cannot be freed are kept\n");
            // SAFETY: no preconditions.
            unsafe { bindings::dump_stack() };
            self.going.store(true, Relaxed);
            // Cannot fail: no entry is busy, and `free` takes each.
            let _ = self.release_all();
        }
    }
}

/// `dyn_event_add()`: `raw` goes last in `dynamic_events`, as one of `ops`,
/// and `call`, its event, is marked dynamic.
///
/// # Safety
///
/// `event_mutex` must be held; `raw` pinned and not linked; `call` valid.
#[inline]
unsafe fn link(raw: *mut RawEvent, ops: *mut Operations, call: *mut RawCall) {
    // SAFETY: by the caller's guarantee; neither pointer is null, so
    // neither call fails.
    unsafe {
        bindings::dyn_event_init(raw, ops);
        bindings::dyn_event_add(raw, call);
    }
}

/// Takes `raw` out of `dyn_event_list`, leaving it linked to itself (`dyn_event_remove()`).
///
/// # Safety
///
/// `event_mutex` must be held; `raw` linked.
#[inline]
unsafe fn unlink(raw: *mut RawEvent) {
    // SAFETY: by the caller's guarantee.
    unsafe { bindings::dyn_event_remove(raw) };
}

/// One entry of `dynamic_events`, carrying a `T`.
///
/// # Examples
///
/// The list holds each entry it lists, until the entry is freed:
///
/// ```
/// use core::convert::Infallible;
/// use kernel::sync::atomic::{Atomic, Relaxed};
/// use kernel::{bindings, seq_file::SeqFile, str::CStr, sync::Arc, types::Opaque};
/// use kernel::trace_event::dyn_event::{Args, Entry, Provider, Type};
/// use kernel::trace_event::EventLock;
///
/// // What an entry carries: it says when it is dropped.
/// struct D(&'static Atomic<bool>);
/// impl Drop for D {
///     fn drop(&mut self) {
///         self.0.store(true, Relaxed);
///     }
/// }
/// static DROPPED: [Atomic<bool>; 2] = [Atomic::new(false), Atomic::new(false)];
///
/// // The event the entries are listed for: a blank one, which
/// // `dyn_event_add()` only marks dynamic.
/// struct Call(Opaque<bindings::trace_event_call>);
/// // SAFETY: only the core writes it, with `event_mutex` held.
/// unsafe impl Sync for Call {}
/// // SAFETY: as above.
/// unsafe impl Send for Call {}
///
/// struct Ty {
///     call: Call,
///     busy: Atomic<bool>,
/// }
///
/// impl Provider for Ty {
///     type Entry = D;
///     fn create(ty: &Type<Self>, lock: &EventLock, command: &CStr) -> Result {
///         let which = match command.to_bytes() {
///             b"doctest2:0" => 0,
///             b"doctest2:1" => 1,
///             _ => return Err(ECANCELED),
///         };
///         let e = Arc::pin_init(Entry::new(D(&DROPPED[which])), GFP_KERNEL)?;
///         Entry::add(&e, lock, ty, &ty.data().call.0);
///         assert!(e.is_linked());
///         // The provider keeps no reference here: the list's keeps it.
///         Ok(())
///     }
///     fn show(&self, _: &EventLock, _e: &D, _m: &SeqFile) -> Result {
///         Ok(())
///     }
///     fn is_busy(&self, _: &EventLock, _e: &D) -> bool {
///         false
///     }
///     fn free(&self, _: &EventLock, _e: &D) -> Result {
///         if self.busy.load(Relaxed) { Err(EBUSY) } else { Ok(()) }
///     }
///     fn matches(&self, _: &EventLock, _: Option<&CStr>, ev: &CStr, _: Args<'_>, e: &D) -> bool {
///         ev.to_bytes() == b"x0" && core::ptr::eq(e.0, &DROPPED[0])
///     }
/// }
///
/// let call = Call(Opaque::new(Zeroable::zeroed()));
/// let ty = Ty { call, busy: Atomic::new(false) };
/// let ty = KBox::pin_init(Type::new::<Infallible>(ty), GFP_KERNEL)?;
/// ty.create(c"doctest2:0")?;
/// ty.create(c"doctest2:1")?;
/// assert!(!DROPPED[0].load(Relaxed) && !DROPPED[1].load(Relaxed));
/// // A `free` that fails changes nothing.
/// ty.data().busy.store(true, Relaxed);
/// assert_eq!(ty.release(c"-:x0"), Err(EBUSY));
/// assert!(!DROPPED[0].load(Relaxed));
/// ty.data().busy.store(false, Relaxed);
/// // Freed, the entry leaves the list, which lets go of it.
/// ty.release(c"-:x0")?;
/// assert!(DROPPED[0].load(Relaxed) && !DROPPED[1].load(Relaxed));
/// // Dropping the type does not wait for an entry in use: it leaves the
/// // list and is kept, not dropped (with a message and a stack trace).
/// ty.data().busy.store(true, Relaxed);
/// drop(ty);
/// assert!(!DROPPED[1].load(Relaxed));
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `linked` says whether `raw` is in `dyn_event_list` (it changes only
/// with `event_mutex` held); when it is, `raw.ops` is the `ops` of a live
/// `Type<P>` with `P::Entry = T`, and the list holds a reference to the
/// [`Arc`] the entry is in, given back when it is taken out (or kept, by a
/// [`Type`] dropped while the entry cannot be freed).
#[pin_data]
pub struct Entry<T> {
    #[pin]
    raw: Opaque<RawEvent>,
    linked: Atomic<bool>,
    data: T,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the list links change only under `event_mutex`; `T: Send`.
unsafe impl<T: Send> Send for Entry<T> {}
// SAFETY: as above; `T: Sync`.
unsafe impl<T: Sync> Sync for Entry<T> {}

impl<T> Entry<T> {
    /// An entry, not linked yet.
    pub fn new(data: T) -> impl PinInit<Self> {
        // INVARIANT: `linked` is false: `raw` is in no list.
        pin_init!(Entry {
            raw: Opaque::uninit(),
            linked: Atomic::new(false),
            data,
            _pin: PhantomPinned,
        })
    }

    /// The data given to [`Entry::new`], which the provider's callbacks
    /// get for this entry.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// Whether the entry is listed in `dynamic_events`.
    pub fn is_linked(&self) -> bool {
        self.linked.load(Acquire)
    }

    /// Lists the entry last in `dynamic_events`, as one of `ty`'s, for the
    /// event whose `trace_event_call` is `call` (`dyn_event_add()`, which
    /// marks the event dynamic). The list holds a reference to `this` until
    /// the entry is freed ([`Provider::free`]). Does nothing if it is
    /// listed already.
    pub fn add<P: Provider<Entry = T>>(
        this: &Arc<Self>,
        _lock: &EventLock,
        ty: &Type<P>,
        call: &Opaque<RawCall>,
    ) {
        if this.is_linked() {
            return;
        }
        let raw = this.raw.get();
        // The list's reference, given back by `unlink_raw`.
        let _ = Arc::into_raw(this.clone());
        // INVARIANT: `raw` gets `ty`'s `ops` as the `raw` field of this
        // `Entry<P::Entry>`, whose `Arc` the list now holds a reference to.
        // SAFETY: `event_mutex` is held (`_lock`); `raw` is pinned (in an
        // `Arc`) and unlinked; `ty` is registered, and removes its entries
        // before it goes away.
        unsafe { link(raw, ty.ops.get(), call.get()) };
        // INVARIANT: linked, with `ty`'s `ops`, under `event_mutex`.
        this.linked.store(true, Release);
    }

    /// Takes the entry whose `raw` is `ev` out of `dynamic_events` and
    /// drops the list's reference to it.
    ///
    /// # Safety
    ///
    /// `ev` is the `raw` of a linked `Entry<T>`, not used by the caller
    /// after this.
    unsafe fn unlink_raw(lock: &EventLock, ev: *mut RawEvent) {
        // SAFETY: by the caller's guarantee.
        let entry = unsafe { Self::take_out(lock, ev) };
        // SAFETY: the list's reference, from `Arc::into_raw` in `add`.
        drop(unsafe { Arc::from_raw(entry) });
    }

    /// Takes the entry whose `raw` is `ev` out of `dynamic_events`, and
    /// gives its caller the list's reference to it (`Arc::into_raw`'s).
    ///
    /// # Safety
    ///
    /// As [`Entry::unlink_raw`].
    unsafe fn take_out(_lock: &EventLock, ev: *mut RawEvent) -> *const Self {
        // SAFETY: by the caller's guarantee.
        let entry = unsafe { crate::container_of!(ev.cast::<Opaque<RawEvent>>(), Entry<T>, raw) };
        // SAFETY: `event_mutex` is held (`_lock`); the entry is linked.
        unsafe { unlink(ev) };
        // SAFETY: `entry` is live (the list's reference).
        unsafe { (*entry).linked.store(false, Release) };
        entry
    }
}

impl<T> core::ops::Deref for Entry<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

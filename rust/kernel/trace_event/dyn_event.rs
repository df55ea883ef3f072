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
//! `dyn_event_unregister()`) and unlinks any entry left.
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
    trace_event::{lock_events, EventLock},
    types::Opaque,
};
use core::{
    any::TypeId,
    cell::UnsafeCell,
    ffi::{c_int, c_void},
    marker::PhantomPinned,
    ptr,
    sync::atomic::{AtomicBool, Ordering},
};

/// `struct dyn_event_operations` (<linux/trace_dynevent.h>).
type Operations = bindings::dyn_event_operations;

/// `struct dyn_event` (<linux/trace_dynevent.h>).
type RawEvent = bindings::dyn_event;

/// `struct trace_event_call` (<linux/trace_events.h>).
type RawCall = bindings::trace_event_call;

use bindings::{dyn_event_register, dyn_event_register_first, dyn_event_unregister};

/// A kind of dynamic event. Except for [`Provider::create`], the core
/// calls these with `event_mutex` held.
pub trait Provider: Send + Sync + 'static {
    /// What each [`Entry`] of this type carries.
    type Entry: Send + Sync;

    /// Creates what `command` (one line written to `dynamic_events`)
    /// defines, adding its entries to `ty`. [`ECANCELED`] if the line is
    /// not for this type (the core offers it to the next type).
    ///
    /// [`ECANCELED`]: crate::error::code::ECANCELED
    fn create(ty: &Type<Self>, command: &CStr) -> Result
    where
        Self: Sized;

    /// Writes `entry`'s line of `dynamic_events`.
    fn show(&self, lock: &EventLock, entry: &Self::Entry, m: &SeqFile) -> Result;

    /// Whether `entry` cannot be removed now.
    fn is_busy(&self, lock: &EventLock, entry: &Self::Entry) -> bool;

    /// Removes `entry`: it unlinks it ([`Entry::remove`]) unless it fails.
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

/// The Rust types registered, for [`Type`]'s `create` callback, which the
/// core calls with the command only. Guarded by `event_mutex`. (Not by
/// the core's lock of its list of types, which is its own: it is held
/// around `create`, which takes `event_mutex` after it, as C's types' do.)
struct Registry(UnsafeCell<[Option<(TypeId, *const c_void)>; 4]>);

// SAFETY: only accessed with `event_mutex` held.
unsafe impl Sync for Registry {}

static REGISTRY: Registry = Registry(UnsafeCell::new([None; 4]));

/// A registered dynamic event type.
///
/// # Examples
///
/// ```
/// use kernel::str::CStr;
/// use kernel::trace_event::dyn_event::{Args, Entry, Provider, Type};
/// use kernel::trace_event::{lock_events, EventLock};
/// use kernel::seq_file::SeqFile;
///
/// struct Ty;
///
/// impl Provider for Ty {
///     type Entry = u32;
///     fn create(_ty: &Type<Self>, command: &CStr) -> Result {
///         if command.to_bytes().starts_with(b"doctest:") { Ok(()) } else { Err(ECANCELED) }
///     }
///     fn show(&self, _: &EventLock, _e: &u32, m: &SeqFile) -> Result {
///         m.put(b"doctest\n");
///         Ok(())
///     }
///     fn is_busy(&self, _: &EventLock, e: &u32) -> bool {
///         *e == 1
///     }
///     fn free(&self, _: &EventLock, _e: &u32) -> Result {
///         Err(EBUSY)
///     }
///     fn matches(&self, _: &EventLock, _: Option<&CStr>, _: &CStr, _: Args<'_>, _: &u32) -> bool {
///         false
///     }
/// }
///
/// use core::convert::Infallible;
/// let ty = KBox::pin_init(Type::new::<Infallible>(Ty), GFP_KERNEL)?;
/// // One type per Rust type.
/// assert_eq!(KBox::pin_init(Type::new::<Infallible>(Ty), GFP_KERNEL).err(), Some(EBUSY));
/// // The event an entry is listed for: a blank one here, which
/// // `dyn_event_add()` only marks dynamic.
/// use kernel::{bindings, types::Opaque};
/// // SAFETY: all zeroes is a valid `struct trace_event_call`.
/// let call = Opaque::new(unsafe { core::mem::zeroed::<bindings::trace_event_call>() });
/// let e = KBox::pin_init(Entry::new(7u32), GFP_KERNEL)?;
/// assert!(!e.is_linked());
/// e.add(&lock_events(), &ty, &call);
/// assert!(e.is_linked());
/// assert_eq!(*e.data(), 7);
/// // SAFETY: `call` is valid; nothing else writes it.
/// let flags = unsafe { (*call.get()).flags } as u32;
/// assert_ne!(flags & bindings::TRACE_EVENT_FL_DYNAMIC, 0);
/// e.remove(&lock_events());
/// assert!(!e.is_linked());
/// // Dropping the type unlinks what is left.
/// e.add(&lock_events(), &ty, &call);
/// let f = KBox::pin_init(Entry::new(8u32), GFP_KERNEL)?;
/// f.add(&lock_events(), &ty, &call);
/// drop(ty);
/// assert!(!e.is_linked() && !f.is_linked());
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ops` is in `dyn_event_ops_list` and the registry until drop; every
/// `dyn_event` in `dyn_event_list` whose `ops` is `ops` is the `raw` field
/// of a live `Entry<P::Entry>`.
#[pin_data(PinnedDrop)]
pub struct Type<P: Provider> {
    #[pin]
    ops: Opaque<Operations>,
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
    /// `EBUSY` if a `Type<P>` is registered already, or four other Rust
    /// types are; `data`'s errors.
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
        try_pin_init!(&this in Self {
            data <- data,
            _pin: PhantomPinned,
            ops <- Opaque::try_ffi_init(|ops: *mut Operations| {
                let table = Operations {
                    list: bindings::list_head {
                        next: ptr::null_mut(),
                        prev: ptr::null_mut(),
                    },
                    create: Some(Self::create),
                    show: Some(Self::show),
                    is_busy: Some(Self::is_busy),
                    free: Some(Self::free),
                    match_: Some(Self::match_),
                    released: Some(Self::released),
                };
                // SAFETY: `ops` points to the field's memory, valid for
                // writes.
                unsafe { ops.write(table) };
                // INVARIANT: on success `ops` is in the core's list and the
                // registry, with `data` initialised; no entry has `ops` yet.
                // SAFETY: `ops` is initialised (above) and pinned with
                // `this`, whose `data` is initialised and pinned too.
                unsafe { register(TypeId::of::<P>(), this.as_ptr().cast(), ops, first) }
            }),
        }? Error)
    }

    /// The provider given to [`Type::new`], which the core's callbacks
    /// reach.
    pub fn data(&self) -> &P {
        &self.data
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

    /// The type's `create`: offers a `dynamic_events` line to [`Provider::create`].
    ///
    /// # Safety
    ///
    /// Called by the core with its lock of its types held and a
    /// NUL-terminated line.
    unsafe extern "C" fn create(raw: *const u8) -> c_int {
        let Some(this) = find(&lock_events(), TypeId::of::<P>()) else {
            return ECANCELED.to_errno();
        };
        // SAFETY: registered by `Type<P>::new`, alive until it is
        // unregistered: `dyn_event_unregister()` takes the core's lock of
        // its types, which the caller holds, so it returns only after this
        // call (and no call comes after it).
        let this = unsafe { &*this.cast::<Self>() };
        // SAFETY: the core passes a NUL-terminated line.
        let cmd = unsafe { CStr::from_char_ptr(raw) };
        from_result(|| P::create(this, cmd).map(|()| 0))
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
        // SAFETY: `event_mutex` is held.
        this.data.is_busy(unsafe { EventLock::assume_held() }, e)
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
        from_result(|| this.data.free(lock, e).map(|()| 0))
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
        // INVARIANT: `ops` leaves the core's list and the registry only
        // here, in the drop; the entries still linked with it are unlinked
        // below, before `ops` goes away.
        // No `create` runs once this returns.
        unregister(TypeId::of::<P>(), ops);
        // Unlink the entries left, so that nothing reaches `ops`.
        let lock = lock_events();
        // SAFETY: `event_mutex` is held (`lock`).
        while let Some(ev) = ptr::NonNull::new(unsafe { bindings::dyn_event_first_of(ops) }) {
            // SAFETY: entries with our `ops` are live `Entry<P::Entry>`s
            // (type invariant).
            let entry = unsafe {
                &*crate::container_of!(ev.as_ptr().cast::<Opaque<RawEvent>>(), Entry<P::Entry>, raw)
            };
            // Linked, so this takes it out: the loop ends.
            entry.unlink(&lock);
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

/// Puts `ty` in the registry and `ops` in the core's list.
///
/// # Safety
///
/// `ops` is an initialised `Operations` of the `Type` at `ty`, pinned until
/// [`unregister`] takes it out.
#[inline]
unsafe fn register(id: TypeId, ty: *const c_void, ops: *mut Operations, first: bool) -> Result {
    // (`event_mutex` is let go before the core's lock of its types is
    // taken: `create` takes them the other way round.)
    let guard = lock_events();
    // SAFETY: `event_mutex` is held (`guard`), and no other reference to
    // the slots lives.
    let slots = unsafe { &mut *REGISTRY.0.get() };
    let r = if slots.iter().flatten().any(|(t, _)| *t == id) {
        Err(EBUSY)
    } else if let Some(s) = slots.iter_mut().find(|s| s.is_none()) {
        *s = Some((id, ty));
        Ok(())
    } else {
        Err(EBUSY)
    };
    drop(guard);
    r?;
    // SAFETY: `ops` is initialised and pinned (the caller's guarantee); the
    // function takes the mutex.
    let r = crate::error::to_result(unsafe {
        if first {
            dyn_event_register_first(ops)
        } else {
            dyn_event_register(ops)
        }
    });
    if r.is_err() {
        unregister_id(id);
    }
    r
}

/// Takes `ops` out of the core's list and the type out of the registry.
#[inline]
fn unregister(id: TypeId, ops: *mut Operations) {
    // SAFETY: `ops` was registered by `register`.
    unsafe { dyn_event_unregister(ops) };
    unregister_id(id);
}

#[inline]
fn unregister_id(id: TypeId) {
    let _guard = lock_events();
    // SAFETY: `event_mutex` is held (`_guard`), and no other reference to
    // the slots lives.
    let slots = unsafe { &mut *REGISTRY.0.get() };
    for s in slots.iter_mut() {
        if s.is_some_and(|(t, _)| t == id) {
            *s = None;
        }
    }
}

/// The `Type` registered for the Rust type `id`, as a raw pointer, if there is one.
fn find(_lock: &EventLock, id: TypeId) -> Option<*const c_void> {
    // SAFETY: `event_mutex` is held; no mutable reference to the slots
    // lives (they are changed only under `event_mutex` too).
    let slots = unsafe { &*REGISTRY.0.get() };
    slots
        .iter()
        .flatten()
        .find(|(t, _)| *t == id)
        .map(|(_, p)| *p)
}

/// One entry of `dynamic_events`, carrying a `T`.
///
/// # Invariants
///
/// `linked` says whether `raw` is in `dyn_event_list` (it changes only
/// with `event_mutex` held); when it is, `raw.ops` is the `ops` of a live
/// `Type<P>` with `P::Entry = T`.
#[pin_data(PinnedDrop)]
pub struct Entry<T> {
    #[pin]
    raw: Opaque<RawEvent>,
    linked: AtomicBool,
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
            linked: AtomicBool::new(false),
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
        // Acquire, with the Release stores below: an entry found unlinked
        // without `event_mutex` (its drop) sees the list writes of whoever
        // unlinked it (a `Type` dropped on another CPU) done.
        self.linked.load(Ordering::Acquire)
    }

    /// Lists the entry last in `dynamic_events`, as one of `ty`'s, for the
    /// event whose `trace_event_call` is `call` (`dyn_event_add()`, which
    /// marks the event dynamic). Does nothing if it is listed already.
    pub fn add<P: Provider<Entry = T>>(
        &self,
        _lock: &EventLock,
        ty: &Type<P>,
        call: &Opaque<RawCall>,
    ) {
        if self.is_linked() {
            return;
        }
        let raw = self.raw.get();
        // INVARIANT: `raw` gets `ty`'s `ops` as the `raw` field of this
        // `Entry<P::Entry>`, which unlinks it before it is freed (`drop`).
        // SAFETY: `event_mutex` is held (`_lock`); `raw` is pinned (an
        // `Entry` is only made by pinned initialisation) and unlinked; `ty`
        // is registered, and unlinks its entries before it goes away.
        unsafe { link(raw, ty.ops.get(), call.get()) };
        // INVARIANT: linked, with `ty`'s `ops`, under `event_mutex`.
        self.linked.store(true, Ordering::Release);
    }

    /// Takes the entry out of `dynamic_events` (`dyn_event_remove()`).
    pub fn remove(&self, lock: &EventLock) {
        self.unlink(lock);
    }

    fn unlink(&self, _lock: &EventLock) {
        if !self.is_linked() {
            return;
        }
        // SAFETY: `event_mutex` is held; the entry is linked.
        unsafe { unlink(self.raw.get()) };
        // INVARIANT: unlinked, under `event_mutex`.
        self.linked.store(false, Ordering::Release);
    }
}

impl<T> core::ops::Deref for Entry<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

#[pinned_drop]
impl<T> PinnedDrop for Entry<T> {
    fn drop(self: Pin<&mut Self>) {
        // Exclusive access: nobody else can link it now. An entry dropped
        // while listed is unlinked here, which takes `event_mutex`; whoever
        // drops one while holding it removes it first.
        if self.is_linked() {
            // INVARIANT: unlinked before it is freed, so that every entry
            // in `dyn_event_list` with a `Type`'s `ops` is live.
            self.unlink(&lock_events());
        }
    }
}

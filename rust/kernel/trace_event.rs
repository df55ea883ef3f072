// SPDX-License-Identifier: GPL-2.0

//! Dynamic trace events and writing their records.
//!
//! A [`Registration`] creates `events/<system>/<name>/` (with `enable`,
//! `filter`, `format`, `id`, `trigger`, `hist`) in every trace instance, as
//! `trace_probe_register_event_call()` does for the C probe events. The
//! user's [`Event`] says which fields the records have, prints a record as
//! text, and learns when an instance enables or disables the event. A probe
//! handler writes a record into an enabled instance through
//! `EventFile::record_hit`; other code through [`EventFile::reserve`], whose
//! [`Reservation`] commits when dropped.
//!
//! Each user of an event holds a reference on the event's module (an
//! instance enabling it and perf opening it, in `reg`: [`ModuleRef`]; a
//! trigger or another holder, by the core): while the event is in use the
//! module cannot be unloaded, and
//! [`Registration::remove`] answers `EBUSY`. A kprobe event ([`Kind::Kprobe`])
//! is `TRACE_EVENT_FL_KPROBE`, which lets perf attach BPF kprobe programs to
//! it. If its data says where it probes
//! ([`Event::describe_kprobe`]), its class points perf and BPF to it (a
//! `struct kprobe_event_provider`): `bpf_override_return()`,
//! `BPF_TASK_FD_QUERY` and a BPF perf link's info ask there. An event is
//! owned through an [`EventBox`], whose drop never waits for the event's
//! users: the tracing core tells a provider nothing when
//! `trace_event_put_ref()` drops the last reference.
//!
//! `event_mutex` and the list of events are private to the tracing core. A
//! provider makes and removes its events where the core holds the lock and
//! hands it the [`EventLock`] proof: in its dynamic event type's callbacks
//! ([`dyn_event::Provider`]).
//!
//! C header: [`include/linux/trace_events.h`](srctree/include/linux/trace_events.h)

pub mod dyn_event;
mod error_log;
mod file;
#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
pub mod local;
mod lock;
mod perf;
mod targets;

pub use error_log::ErrorLog;
pub use file::{EventFile, Fate, Reservation};
pub use lock::EventLock;
pub use perf::{PerfCall, PerfRecord, PerfSlot};
pub use targets::{FileSet, Targets};

use crate::{
    bindings,
    error::{from_result, to_result, Result},
    new_mutex,
    prelude::*,
    str::{CStr, CString},
    sync::{
        atomic::{Atomic, Relaxed},
        Arc, Mutex,
    },
    types::Opaque,
    ThisModule,
};

use core::{
    ffi::c_void,
    fmt,
    marker::PhantomPinned,
    ptr::{self, NonNull},
};

/// `TRACE_FUNCTION_TYPE` (include/linux/trace_events.h): the type of a
/// `trace_event_fields` entry that holds a `define_fields` callback.
/// Mirrored: the C macro is a pointer value bindgen cannot evaluate.
///
/// # Examples
///
/// ```
/// use kernel::trace_event::TRACE_FUNCTION_TYPE;
/// // SAFETY: no preconditions; the helper returns the C macro's value.
/// assert_eq!(TRACE_FUNCTION_TYPE, unsafe { kernel::bindings::trace_function_type() });
/// ```
pub const TRACE_FUNCTION_TYPE: *const crate::ffi::c_char = usize::MAX as *const _;

/// One field of an event's records, after the common ones.
pub struct Field<'a> {
    /// C type, as the `format` file shows it (`u64`, `__data_loc char[]`).
    pub ty: &'a CStr,
    /// Field name, as the `format` file and filters know it.
    pub name: &'a CStr,
    /// Offset from the start of the record.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Whether the field is a signed integer (filters compare it so).
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
                f.offset as i32,
                f.size as i32,
                i32::from(f.is_signed),
                bindings::FILTER_OTHER as i32,
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
            bindings::trace_seq_putmem(self.0.get(), bytes.as_ptr().cast(), bytes.len() as u32)
        };
    }
}

impl fmt::Write for TraceSeq {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
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

/// A reference on a module, which cannot be unloaded while it is held
/// (`try_module_get()`); put when dropped (`module_put()`).
///
/// # Invariants
///
/// Holds one reference on `module`, taken by `try_module_get()`.
///
/// # Examples
///
/// ```
/// use kernel::trace_event::ModuleRef;
///
/// // Built-in code has no count, and is never going away.
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let r = ModuleRef::try_get(&BUILTIN).ok_or(ENODEV)?;
/// // Dropping the guard puts the reference it took: safe code cannot put
/// // one more than it took.
/// drop(r);
/// # Ok::<(), Error>(())
/// ```
pub struct ModuleRef {
    module: &'static ThisModule,
}

impl ModuleRef {
    /// Takes a reference on `module`; `None` if it is going away.
    pub fn try_get(module: &'static ThisModule) -> Option<Self> {
        // SAFETY: `module` is a valid module (or null for built-in code).
        let taken = unsafe { bindings::try_module_get(module.as_ptr()) };
        // INVARIANT: the reference was just taken.
        taken.then_some(ModuleRef { module })
    }

    /// Keeps the reference beyond the guard, for [`ModuleRef::from_kept`]
    /// to take back: the module stays pinned until then (or forever).
    fn keep(self) {
        core::mem::forget(self);
    }

    /// The guard of a reference on `module` that [`ModuleRef::keep`] kept.
    ///
    /// # Safety
    ///
    /// A reference on `module` was kept and is not taken back elsewhere.
    unsafe fn from_kept(module: &'static ThisModule) -> Self {
        // INVARIANT: the caller hands over a reference held.
        ModuleRef { module }
    }
}

impl Drop for ModuleRef {
    fn drop(&mut self) {
        // SAFETY: the guard holds a reference (type invariant), put once.
        unsafe { bindings::module_put(self.module.as_ptr()) };
    }
}

/// What kind of dynamic event a [`Registration`] makes: what perf and BPF
/// take it for (its `TRACE_EVENT_FL_*` flags besides
/// `TRACE_EVENT_FL_DYNAMIC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An event perf and BPF know no kind of.
    Dynamic,
    /// A kprobe event (`TRACE_EVENT_FL_KPROBE`), as C's kprobe events:
    /// perf's kprobe PMU and BPF programs of the kprobe type attach to it.
    Kprobe,
}

impl Kind {
    /// The call's `TRACE_EVENT_FL_*` flags.
    const fn flags(self) -> u32 {
        match self {
            Kind::Dynamic => bindings::TRACE_EVENT_FL_DYNAMIC,
            Kind::Kprobe => bindings::TRACE_EVENT_FL_DYNAMIC | bindings::TRACE_EVENT_FL_KPROBE,
        }
    }
}

/// An event's names and print format, borrowed from its data
/// ([`Event::names`]).
pub struct EventNames<'a> {
    /// The system: `events/<system>/`.
    pub system: &'a CStr,
    /// The event's name: `events/<system>/<name>/`.
    pub name: &'a CStr,
    /// The `print fmt:` line of its `format` file.
    pub print_fmt: &'a CStr,
}

/// What a dynamic event does.
///
/// `'static`: the tracing core points into the data (its names, its
/// targets) for as long as the event is registered, which a leaked
/// registration (`mem::forget`) makes forever; a data that borrowed from
/// something shorter-lived would leave it pointing into freed memory.
#[vtable]
pub trait Event: Sync + Sized + 'static {
    /// The event's system, name and print format: C strings the data
    /// keeps, which the tracing core points to while the event exists (the
    /// data outlives it: it is dropped after the event is removed). Asked
    /// once, when the registration is made; a registration keeps no copy.
    fn names(&self) -> EventNames<'_>;

    /// The targets the registration gave this data's constructor. Asked
    /// once, when the registration is made: it keeps where they are and
    /// fails with `EINVAL` unless they were made for it (a set carries the
    /// number of the registration that made it).
    ///
    /// # Examples
    ///
    /// A data that answers a set made for another registration (one that
    /// failed) is refused:
    ///
    /// ```
    /// use core::pin::Pin;
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
    ///
    /// // `PAD` sizes the two registrations apart (the check does not need
    /// // it: a set names its registration by a number used once).
    /// struct Ev<const PAD: usize> {
    ///     own: Targets,
    ///     other: Option<Targets>,
    ///     registered: Atomic<usize>,
    ///     _pad: [u8; PAD],
    /// }
    ///
    /// #[vtable]
    /// impl<const PAD: usize> Event for Ev<PAD> {
    ///     fn names(&self) -> EventNames<'_> {
    ///         let (system, name) = (c"rkpe_doctest3", c"ev");
    ///         EventNames { system, name, print_fmt: c"\"\"" }
    ///     }
    ///     fn targets(&self) -> &Targets {
    ///         self.other.as_ref().unwrap_or(&self.own)
    ///     }
    ///     fn define_fields<'a>(&'a self, _fields: &mut Fields<'a>) -> Result {
    ///         Ok(())
    ///     }
    ///     fn print(&self, _record: &[u8], _out: &mut TraceSeq) -> core::fmt::Result {
    ///         Ok(())
    ///     }
    ///     fn register(&self, _file: &EventFile) -> Result {
    ///         self.registered.fetch_add(1, Relaxed);
    ///         Ok(())
    ///     }
    ///     fn unregister(&self, _file: &EventFile) -> Result {
    ///         self.registered.fetch_sub(1, Relaxed);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// // SAFETY: a null module is built-in code, which is never unloaded.
    /// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
    /// let (sys, name) = (c"rkpe_doctest3", c"ev");
    /// fn new<const PAD: usize>(
    ///     other: &mut Option<Targets>,
    ///     steal: bool,
    /// ) -> Result<EventBox<Ev<PAD>>> {
    ///     // A provider makes its events where the core holds `event_mutex`
    ///     // (a dynamic event type's `create`).
    ///     locked(|lock| {
    ///         EventBox::new(lock, &BUILTIN, Kind::Dynamic, |own| {
    ///             if steal {
    ///                 *other = Some(own);
    ///                 return Err(ENOMEM);
    ///             }
    ///             let other = other.take();
    ///             Ok(Ev { own, other, registered: Atomic::new(0), _pad: [0; PAD] })
    ///         })
    ///     })?
    /// }
    /// let mut other = None;
    /// assert_eq!(new::<512>(&mut other, true).err(), Some(ENOMEM));
    /// assert!(other.is_some());
    /// assert_eq!(new::<0>(&mut other, false).err(), Some(EINVAL));
    /// // No event was made.
    /// assert_eq!(set_enabled(sys, name, true), Err(EINVAL));
    /// // With its own set, it is made and can be enabled.
    /// let mut none = None;
    /// let reg = new::<0>(&mut none, false)?;
    /// set_enabled(sys, name, true)?;
    /// assert!(reg.data().targets().in_use());
    /// assert_eq!(reg.data().registered.load(Relaxed), 1);
    /// set_enabled(sys, name, false)?;
    /// # Ok::<(), Error>(())
    /// ```
    fn targets(&self) -> &Targets;

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

    /// Where a [`Kind::Kprobe`] event probes (for an event of several
    /// probes, its first). perf and BPF ask it (`struct
    /// kprobe_event_provider`) whether a BPF program may call
    /// `bpf_override_return()` on the event, and for what
    /// `BPF_TASK_FD_QUERY`, `bpftool perf` and a BPF perf link show.
    /// Process context, by a holder of the event; may sleep. Not
    /// supported unless implemented: then perf and BPF answer `EINVAL`.
    fn describe_kprobe(&self) -> Result<KprobeDesc> {
        Err(EOPNOTSUPP)
    }
}

/// Where a kprobe event probes ([`Event::describe_kprobe`]).
pub struct KprobeDesc {
    /// The probed symbol (`SYM` or `MOD:SYM`), `None` for a probe at an
    /// address. The registration keeps it while the event exists: perf
    /// and BPF read it after the answer.
    pub symbol: Option<Arc<CString>>,
    /// The offset from `symbol`.
    pub offset: usize,
    /// The address the kprobe is registered at, 0 while it is not.
    pub addr: usize,
    /// The hits missed so far, as `kprobe_profile` counts them.
    pub missed: usize,
    /// A return probe.
    pub is_return: bool,
}

/// A dynamic trace event.
///
/// [`Registration::remove`] removes it, or answers `EBUSY` while it is in use
/// (enabled in an instance, open by perf, referenced by a trigger or a
/// [`trace_get_event_file()`] holder). It is owned through an [`EventBox`],
/// whose drop removes it, and keeps it rather than wait if it is in use.
///
/// [`trace_get_event_file()`]: srctree/kernel/trace/trace_events.c
///
/// # Examples
///
/// ```
/// use kernel::str::CString;
/// use kernel::trace_event::{
///     Event, EventBox, EventFile, EventNames, Fields, Kind, Targets, TraceSeq,
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
///
/// // The targets, the system and the name.
/// struct Ev(Targets, CString, CString);
///
/// #[vtable]
/// impl Event for Ev {
///     fn names(&self) -> EventNames<'_> {
///         EventNames { system: &self.1, name: &self.2, print_fmt: c"\"\"" }
///     }
///     fn targets(&self) -> &Targets {
///         &self.0
///     }
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
///     let sys = CString::try_from_fmt(format_args!("{sys}"))?;
///     let name = CString::try_from_fmt(format_args!("{name}"))?;
///     // A provider makes its events where the core holds `event_mutex`
///     // (a dynamic event type's `create`).
///     locked(|lock| {
///         EventBox::new(lock, &BUILTIN, Kind::Dynamic, |targets| Ok(Ev(targets, sys, name)))
///     })?
/// };
/// let mut ev = new("rkpe_doctest", "ev")?;
/// assert_ne!(ev.id(), 0);
/// // Any event's name is taken: ours, or a built-in one.
/// assert_eq!(new("rkpe_doctest", "ev").err(), Some(EEXIST));
/// assert_eq!(new("ftrace", "function").err(), Some(EEXIST));
/// // A reference another user holds (an `enable_event` trigger, perf,
/// // `trace_get_event_file()`) keeps the event: it cannot be removed.
/// let (sys, name) = (c"rkpe_doctest", c"ev");
/// // SAFETY: NUL-terminated strings; the function takes its locks.
/// let file = unsafe {
///     kernel::bindings::trace_get_event_file(
///         core::ptr::null(),
///         sys.as_char_ptr(),
///         name.as_char_ptr(),
///     )
/// };
/// assert!(kernel::error::from_err_ptr(file).is_ok());
/// assert_eq!(locked(|lock| ev.remove(lock))?, Err(EBUSY));
/// // SAFETY: taken above.
/// unsafe { kernel::bindings::trace_put_event_file(file) };
/// locked(|lock| ev.remove(lock))??;
/// // Once removed, the name is free again; dropping it removes it.
/// let again = new("rkpe_doctest", "ev")?;
/// drop(again);
/// assert!(new("rkpe_doctest", "ev").is_ok());
///
/// // Dropping an event still in use does not wait for its users, who may
/// // never let go: it is kept where the tracing core points, listed (with
/// // a message and a stack trace), and its module with it. (This one stays
/// // until the next boot.)
/// let held = new("rkpe_doctest", "held")?;
/// let name = c"held";
/// // SAFETY: as above.
/// let file = unsafe {
///     kernel::bindings::trace_get_event_file(
///         core::ptr::null(),
///         sys.as_char_ptr(),
///         name.as_char_ptr(),
///     )
/// };
/// assert!(kernel::error::from_err_ptr(file).is_ok());
/// drop(held);
/// assert_eq!(new("rkpe_doctest", "held").err(), Some(EEXIST));
/// // SAFETY: taken above.
/// unsafe { kernel::bindings::trace_put_event_file(file) };
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// Until `removed` is set (by [`Registration::remove`]) or its
/// [`EventBox`]'s drop removes it, `call` is registered with the tracing core (a local event,
/// [`EventBox::new_local`], is never registered: `removed` is set from
/// the start, and perf uses the call while its provider lends it), with `class`, the strings of
/// `data.names()` as answered once (owned by `data`) and the constants
/// `Registration::FIELDS` and `Registration::FUNCS` reachable from it, and `data` as
/// the `T` its callbacks find through `container_of!`; `targets` points
/// to `data.targets()` as answered once `data` was made (valid while
/// `data` is: `data` is pinned here and only shared), the set made for
/// this registration (`Targets::owner`), which holds the event's enabled files
/// and perf (their invariants are kept by `reg`, which uses no other). The tracing core
/// links and writes the C structs (lists, flags, the event type id,
/// reference counts) whenever it likes: they are only reached through raw
/// pointers ([`Opaque`]), and no `&mut Self` is made while registered.
#[pin_data]
pub struct Registration<T: Event> {
    data: T,
    /// The module the event belongs to, pinned by each user
    /// ([`ModuleRef`], in `reg`).
    module: &'static ThisModule,
    /// `data.targets()`, asked once: `reg` adds and removes the entries
    /// of this set alone, whatever the data answers later.
    targets: NonNull<Targets>,
    /// Written with `event_mutex` held.
    removed: Atomic<bool>,
    /// Made by [`EventBox::new_local`]: never added.
    local: bool,
    /// The symbols [`Event::describe_kprobe`] answered, each once: C keeps
    /// the pointer past the answer, so they live as long as the event.
    #[pin]
    described: Mutex<KVec<Arc<CString>>>,
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
    /// [`EventBox::new`], or [`EventBox::new_local`] without `lock`.
    fn init<'a>(
        lock: Option<&'a EventLock>,
        module: &'static ThisModule,
        kind: Kind,
        make: impl FnOnce(Targets) -> Result<T> + 'a,
    ) -> impl PinInit<Self, Error> + 'a
    where
        T: 'a,
    {
        // The targets carry this registration's number, which no other
        // gets (an address could come again once freed).
        let owner = Targets::next_owner();
        // Fields are initialised in the order written; an error drops the
        // ones made before it, and nothing is registered until `call`, the
        // last that can fail.
        try_pin_init!(&this in Self {
            data: make(Targets::new(owner))?,
            targets: {
                // SAFETY: `data` is initialised (above) and pinned with `this`.
                let t = unsafe { (*this.as_ptr()).data.targets() };
                // Only the set made for this event: another event's files
                // would get this event's records.
                if t.owner != owner {
                    return Err(EINVAL);
                }
                NonNull::from(t)
            },
            module,
            // A local event is never added: nothing to remove.
            removed: Atomic::new(lock.is_none()),
            local: lock.is_none(),
            described <- new_mutex!(KVec::new()),
            class <- Opaque::ffi_init(|class: *mut bindings::trace_event_class| {
                let value = bindings::trace_event_class {
                    // C only reads the array (`trace_define_fields()`).
                    fields_array: Self::fields_array().as_ptr().cast_mut(),
                    reg: Some(Self::reg),
                    // The rest zero (null pointers, no callback); its system
                    // is set with the call's names, below.
                    ..Zeroable::zeroed()
                };
                // SAFETY: `class` points to the field's memory, valid for
                // writes.
                unsafe { class.write(value) };
                // SAFETY: `class` is initialised (above) and stays where it
                // is (pinned): its empty field list points to itself
                // (`INIT_LIST_HEAD()`).
                unsafe {
                    let list = ptr::addr_of_mut!((*class).fields);
                    list.write(bindings::list_head { next: list, prev: list })
                };
            }),
            call <- Opaque::try_ffi_init(|call: *mut bindings::trace_event_call| {
                let this = this.as_ptr();
                // SAFETY: `data` is initialised (above) and pinned with
                // `this`. The names are the data's, asked once: `data` is
                // only shared, and dropped after the call is removed, so
                // they outlive it.
                let names = unsafe { (*this).data.names() };
                // SAFETY: `class` is initialised (above) and pinned with
                // `this`; an `Opaque<T>` has the layout of its `T`.
                let class = unsafe { ptr::addr_of!((*this).class) }
                    .cast_mut()
                    .cast::<bindings::trace_event_class>();
                // SAFETY: the class is initialised, and the tracing core does
                // not see it before the call is registered (below). The
                // class names the module that provides the event: each
                // reference of the event pins it (the series's "pin the
                // module" patch).
                unsafe {
                    (*class).system = names.system.as_char_ptr();
                    (*class).module = module.as_ptr();
                };
                // A kprobe event that can say where it probes answers
                // perf and BPF through its class.
                #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
                if kind == Kind::Kprobe && T::HAS_DESCRIBE_KPROBE {
                    let provider = ptr::from_ref(Self::provider()).cast_mut();
                    // SAFETY: as above.
                    unsafe { (*class).kprobe_provider = provider };
                }
                let mut value = bindings::trace_event_call {
                    class,
                    print_fmt: names.print_fmt.as_char_ptr().cast_mut(),
                    // A dynamic event, with its own reference count, of the
                    // kind perf and BPF take it for; a local one is no
                    // dynamic event (the core counts no reference of it).
                    flags: if lock.is_some() {
                        kind.flags() as i32
                    } else {
                        (kind.flags() & !bindings::TRACE_EVENT_FL_DYNAMIC) as i32
                    },
                    // The rest zero (null pointers, no callback, no type id
                    // yet).
                    ..Zeroable::zeroed()
                };
                value.__bindgen_anon_1.name = names.name.as_char_ptr();
                // Every callback is set, so `register_trace_event()` writes
                // none in (trace_output.c: it fills in the missing ones).
                value.event.funcs = ptr::from_ref(Self::funcs()).cast_mut();
                // SAFETY: `call` points to the field's memory, valid for
                // writes.
                unsafe { call.write(value) };
                // INVARIANT: on success `call` is registered with `removed`
                // false (or, local, not registered with `removed` true) and
                // everything it reaches initialised (every other field is
                // initialised above and pinned with `this`); on failure
                // nothing is registered and the initialiser drops the rest.
                match lock {
                    Some(lock) => add_event_call(lock, call, names.system, names.name),
                    None => Ok(()),
                }
            }),
            _pin: PhantomPinned,
        }? Error)
    }

    /// The class's fields: one entry with a `define_fields` callback
    /// (`TRACE_FUNCTION_TYPE`), then the end. A constant, as C's
    /// `kprobe_fields_array` is static (trace_kprobe.c): C only
    /// reads it.
    const FIELDS: [bindings::trace_event_fields; 2] = [
        bindings::trace_event_fields {
            type_: TRACE_FUNCTION_TYPE,
            __bindgen_anon_1: bindings::trace_event_fields__bindgen_ty_1 {
                define_fields: Some(Self::define_fields),
            },
        },
        // The end: no type (C reads nothing else of it).
        bindings::trace_event_fields {
            type_: ptr::null(),
            __bindgen_anon_1: bindings::trace_event_fields__bindgen_ty_1 {
                define_fields: None,
            },
        },
    ];

    /// The event's output callbacks: the trace text, and for the raw, hex
    /// and binary output options what the tracing core gives events that
    /// have none (`trace_nop_print()`). A constant, as C's
    /// `kprobe_funcs` is static; with all four set, C never writes it.
    const FUNCS: bindings::trace_event_functions = bindings::trace_event_functions {
        trace: Some(Self::print),
        raw: Some(nop_print),
        hex: Some(nop_print),
        binary: Some(nop_print),
    };

    /// [`Registration::FUNCS`], where the event points.
    const fn funcs() -> &'static bindings::trace_event_functions {
        &Self::FUNCS
    }

    /// [`Registration::FIELDS`], where the class points.
    const fn fields_array() -> &'static [bindings::trace_event_fields; 2] {
        &Self::FIELDS
    }

    /// Who answers perf and BPF about a [`Kind::Kprobe`] event. A
    /// constant, as C's `trace_kprobe_provider`: C only reads it.
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    const PROVIDER: bindings::kprobe_event_provider = bindings::kprobe_event_provider {
        describe: Some(Self::describe),
        // No owner, no perf events of its own, an unlinked list head: it is
        // never registered.
        owner: ptr::null_mut(),
        create_local: None,
        destroy_local: None,
        list: bindings::list_head {
            next: ptr::null_mut(),
            prev: ptr::null_mut(),
        },
    };

    /// [`Registration::PROVIDER`], where the class points.
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    const fn provider() -> &'static bindings::kprobe_event_provider {
        &Self::PROVIDER
    }

    /// The data given to [`EventBox::new`], which the event's callbacks
    /// get.
    pub fn data(&self) -> &T {
        &self.data
    }

    /// The event's `struct trace_event_call`, which a [`dyn_event::Entry`]
    /// is listed for ([`dyn_event::Entry::add`]).
    pub fn call(&self) -> &Opaque<bindings::trace_event_call> {
        &self.call
    }

    /// The event type id (the `id` file).
    pub fn id(&self) -> u32 {
        // SAFETY: `call` is valid (type invariant); the id is written once,
        // when the event is registered, before `new` returns.
        unsafe { (*self.call.get()).event.type_ as u32 }
    }

    /// Removes the event from every instance, with `event_mutex` held (in a
    /// [`Provider`](dyn_event::Provider)'s callbacks). In `free`, the core
    /// clears the instances that recorded it when the removal is done; in
    /// `create`, remove only an event that has recorded nothing (a
    /// rollback).
    ///
    /// # Errors
    ///
    /// `EBUSY` while it is enabled somewhere or in use (then it stays).
    pub fn remove(&self, lock: &EventLock) -> Result {
        // `removed` only changes with `event_mutex` held (`lock`).
        if self.removed.load(Relaxed) {
            return Ok(());
        }
        remove_event_call(lock, self.call.get())?;
        // INVARIANT: `call` is no longer registered; `removed` says so,
        // written with `event_mutex` held (`lock`).
        self.removed.store(true, Relaxed);
        Ok(())
    }

    /// The `Registration<T>` whose `call` field is at `call`.
    ///
    /// # Safety
    ///
    /// `call` must be the `call` of a live `Registration<T>`.
    unsafe fn from_call<'a>(call: *const bindings::trace_event_call) -> &'a Self {
        // SAFETY: by the caller's guarantee.
        unsafe {
            &*crate::container_of!(
                call.cast::<Opaque<bindings::trace_event_call>>(),
                Self,
                call
            )
        }
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

    /// The provider's `describe`: [`Event::describe_kprobe`], with the
    /// symbol kept while the event exists.
    ///
    /// # Safety
    ///
    /// Called by the tracing core with the `call` of a `Registration<T>`,
    /// held (so not dropped during the call), and a `desc` valid for writes.
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    pub(crate) unsafe extern "C" fn describe(
        call: *mut bindings::trace_event_call,
        desc: *mut bindings::kprobe_event_desc,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: the tracing core passes our call.
            let this = unsafe { Self::from_call(call) };
            let d = this.data.describe_kprobe()?;
            let symbol = match d.symbol {
                Some(s) => {
                    // The string is the `Arc`'s, kept below until the
                    // registration is dropped, after the event's last user.
                    let p = s.as_char_ptr();
                    let mut kept = this.described.lock();
                    if !kept.iter().any(|k| Arc::ptr_eq(k, &s)) {
                        kept.push(s, GFP_KERNEL)?;
                    }
                    p
                }
                None => ptr::null(),
            };
            let value = bindings::kprobe_event_desc {
                symbol,
                offset: d.offset as crate::ffi::c_ulong,
                addr: d.addr as *mut c_void,
                missed: d.missed as crate::ffi::c_ulong,
                is_return: d.is_return,
            };
            // SAFETY: `desc` is valid for writes (the caller's guarantee).
            unsafe { desc.write(value) };
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
            // SAFETY: `targets` points into `data`, alive and shared while
            // the call is registered (the invariant).
            let targets = unsafe { this.targets.as_ref() };
            // The targets' entries are added and removed only here, in
            // pairs: a file or perf joins after the `Event` said yes, and
            // leaves before the `Event` is told, so the `Event`'s own view
            // of whether the event is in use (`Targets::in_use`) leaves out
            // the user being added or removed, as C's
            // `trace_probe_is_enabled()` does around enable/disable.
            // Each user (an instance, perf) pins the module from its
            // REGISTER to its UNREGISTER, which the core calls once for each
            // REGISTER that succeeded: a reference kept at the one, taken
            // back at the other.
            match ty {
                bindings::trace_reg_TRACE_REG_REGISTER if !file.is_null() => {
                    // SAFETY: the core passes the instance's file, valid
                    // until its `TRACE_REG_UNREGISTER` returns.
                    let file = unsafe { EventFile::from_raw(file) };
                    let pin = ModuleRef::try_get(this.module).ok_or(ENODEV)?;
                    this.data.register(file)?;
                    if let Err(e) = targets.files.add(file) {
                        let _ = this.data.unregister(file);
                        return Err(e);
                    }
                    pin.keep();
                }
                bindings::trace_reg_TRACE_REG_UNREGISTER if !file.is_null() => {
                    // SAFETY: as above.
                    let file = unsafe { EventFile::from_raw(file) };
                    // SAFETY: the file's REGISTER succeeded and kept a
                    // reference, which only this UNREGISTER takes back.
                    let _pin = unsafe { ModuleRef::from_kept(this.module) };
                    // Whatever the `Event` answers, the core lets go of the
                    // file: it leaves first (`remove` waits for readers).
                    targets.files.remove(file);
                    this.data.unregister(file)?
                }
                bindings::trace_reg_TRACE_REG_PERF_REGISTER => {
                    let pin = ModuleRef::try_get(this.module).ok_or(ENODEV)?;
                    this.data.perf_register()?;
                    // SAFETY: the call is registered (or a local event lent
                    // to perf), and perf has it open until
                    // `TRACE_REG_PERF_UNREGISTER` returns, where it is
                    // cleared below.
                    targets.perf.set(unsafe { PerfCall::from_raw(call) });
                    pin.keep();
                }
                bindings::trace_reg_TRACE_REG_PERF_UNREGISTER => {
                    // SAFETY: as for a file.
                    let _pin = unsafe { ModuleRef::from_kept(this.module) };
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

/// `trace_nop_print()` (trace_output.c), which the tracing core gives an
/// event without a raw, hex or binary output callback: `type: N`.
///
/// # Safety
///
/// Called by the tracing core with a valid iterator at one of its entries.
unsafe extern "C" fn nop_print(
    iter: *mut bindings::trace_iterator,
    _flags: core::ffi::c_int,
    _event: *mut bindings::trace_event,
) -> bindings::print_line_t {
    // SAFETY: the iterator is valid for the call, at an entry.
    let (ty, seq) = unsafe { ((*(*iter).ent).type_, ptr::addr_of_mut!((*iter).seq)) };
    // One write, as `trace_seq_printf()`: all of the line or nothing.
    // "type: " (6), at most 5 digits, "\n".
    let mut line = *b"type: 00000\n";
    let digits = ty.checked_ilog10().unwrap_or(0) as usize + 1;
    let mut v = ty;
    for d in line.iter_mut().skip(6).take(digits).rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    if let Some(nl) = line.get_mut(6 + digits) {
        *nl = b'\n';
    }
    let text = line.get(..7 + digits).unwrap_or(&line);
    // SAFETY: `seq` is valid for the call; `TraceSeq` is transparent.
    unsafe { &mut *seq.cast::<TraceSeq>() }.put(text);
    // SAFETY: `seq` is valid.
    unsafe { bindings::trace_handle_return(seq) }
}

/// A [`Registration`] in an allocation of its own, made by [`EventBox::new`]
/// or [`EventBox::new_local`].
///
/// Dropping it removes the event (taking `event_mutex`: not with it held)
/// and frees it. The tracing core points into an event until it is removed,
/// and an event in use cannot be removed: then the drop does not wait for its
/// users, who may never let go, but keeps the allocation (leaked) and a
/// reference to the event's module, whose code its callbacks are, and says
/// so with a stack trace. An owner never meets that if it removes its events
/// with [`Registration::remove`], which answers `EBUSY` instead, or drops
/// them where none can be in use: each user holds a reference to the
/// event's module (a [`ModuleRef`] while it is enabled or open by perf, and
/// the core's `trace_event_dyn_try_get_ref()` for the others), so a
/// module's exit finds none. A module's init is the exception: a failed
/// init frees the module whatever its count, so a module must not let its
/// events be used (defined by a user, enabled) before nothing in its init
/// can fail.
///
/// # Invariants
///
/// `ptr` is the pinned `Registration<T>` of a [`KBox`] this value owns.
pub struct EventBox<T: Event> {
    ptr: NonNull<Registration<T>>,
}

// SAFETY: it owns the registration, which is `Sync`.
unsafe impl<T: Event> Sync for EventBox<T> {}
// SAFETY: it owns the registration, which is `Send` when `T` is.
unsafe impl<T: Event + Send> Send for EventBox<T> {}

impl<T: Event> EventBox<T> {
    /// Creates `events/<system>/<name>/` (the names its data answers,
    /// [`Event::names`]), owned by `module`, with `event_mutex` held (as
    /// `trace_add_event_call()` wants it). `make`
    /// makes the event's data from the event's [`Targets`] (which say,
    /// while the event is enabled somewhere or open by perf, where): made
    /// here, for this event alone; the data keeps them and answers them in
    /// [`Event::targets`] (inline, the probe handler that reads them on
    /// every hit follows no pointer more).
    ///
    /// # Errors
    ///
    /// `EEXIST` if any event (static or dynamic) has that name, `ENODEV` if
    /// no event type id is left, `ENOMEM`, what `make` returns, or
    /// `EINVAL` if the data's [`Event::targets`] are not the ones `make`
    /// was given.
    pub fn new(
        lock: &EventLock,
        module: &'static ThisModule,
        kind: Kind,
        make: impl FnOnce(Targets) -> Result<T>,
    ) -> Result<Self> {
        Self::from_init(Registration::init(Some(lock), module, kind, make))
    }

    /// A kprobe event for perf's kprobe PMU (a local event, as C's
    /// `create_local_trace_kprobe()` makes): made as [`EventBox::new`]
    /// makes one, but not added to the tracing core (no `events/` files,
    /// no type id, not `TRACE_EVENT_FL_DYNAMIC`). A
    /// [`local::KprobeProvider`] hands it to perf, which has it until it
    /// is destroyed; its `reg` serves perf as a listed event's does.
    pub fn new_local(
        module: &'static ThisModule,
        make: impl FnOnce(Targets) -> Result<T>,
    ) -> Result<Self> {
        Self::from_init(Registration::init(None, module, Kind::Kprobe, make))
    }

    fn from_init(init: impl PinInit<Registration<T>, Error>) -> Result<Self> {
        let reg = KBox::pin_init(init, GFP_KERNEL)?;
        // SAFETY: the pointer is used as pinned (only shared, or dropped
        // through `Pin`).
        let ptr = KBox::into_raw(unsafe { Pin::into_inner_unchecked(reg) });
        // SAFETY: `KBox::into_raw` returns a non-null pointer.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // INVARIANT: the registration of a `KBox`, pinned: it stays where
        // it is until `from_raw` pins it again.
        Ok(Self { ptr })
    }

    /// Gives up the allocation, for a user that keeps it as a pointer (perf
    /// keeps a local event's call) and gives it back to [`EventBox::from_raw`].
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    fn into_raw(self) -> *mut Registration<T> {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// The `EventBox` that [`EventBox::into_raw`] gave up.
    ///
    /// # Safety
    ///
    /// `ptr` comes from `into_raw`, and is given back once.
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    unsafe fn from_raw(ptr: *mut Registration<T>) -> Self {
        // SAFETY: by the caller's guarantee, from a `NonNull`.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // INVARIANT: by the caller's guarantee.
        Self { ptr }
    }
}

impl<T: Event> core::ops::Deref for EventBox<T> {
    type Target = Registration<T>;

    fn deref(&self) -> &Registration<T> {
        // SAFETY: the registration lives as long as `self` (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Event> Drop for EventBox<T> {
    fn drop(&mut self) {
        let this: &Registration<T> = self;
        // `&mut self`: every write of `removed` happened before.
        if !this.removed.load(Relaxed) {
            // Held across the removal: if the event is busy, the reference
            // stays, and the module with the event's callbacks. `None`: the
            // module is going (a module's exit meets no busy event) or gone
            // to a failed init (see the type's documentation).
            let pin = ModuleRef::try_get(this.module);
            // SAFETY: `call` is added (not `removed`) and stays valid until
            // this returns; `trace_event_dyn_remove()` takes `event_mutex`,
            // and clears the buffers that may hold the event's records.
            if unsafe { bindings::trace_event_dyn_remove(this.call.get()) } != 0 {
                crate::pr_err!("trace_event: an event dropped while in use is kept\n");
                // SAFETY: no preconditions.
                unsafe { bindings::dump_stack() };
                if let Some(pin) = pin {
                    pin.keep();
                }
                return;
            }
        }
        // SAFETY: the registration is not registered (removed, above, or
        // local) and perf does not have it (a local event is given back
        // once perf let go); it was pinned in a `KBox` (type invariant) and
        // is dropped in place.
        drop(unsafe { Pin::new_unchecked(KBox::from_raw(self.ptr.as_ptr())) });
    }
}

/// Whether an event `system/name` exists, static or dynamic
/// (`find_trace_event_call()`). Called with `event_mutex` held.
#[inline]
fn event_exists(_lock: &EventLock, system: &CStr, name: &CStr) -> bool {
    // SAFETY: NUL-terminated strings; `event_mutex` is held (`_lock`).
    !unsafe { bindings::find_trace_event_call(system.as_char_ptr(), name.as_char_ptr()) }.is_null()
}

/// `trace_probe_register_event_call()` without the probe: under
/// `event_mutex`, refuse a taken name, register the output type, add the
/// event to every instance.
#[inline]
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
/// `unregister_trace_kprobe()` in trace_kprobe.c checks).
#[inline]
fn remove_event_call(_lock: &EventLock, call: *mut bindings::trace_event_call) -> Result {
    // SAFETY: `call` was added by `add_event_call()`.
    if unsafe { bindings::trace_event_dyn_busy(call) } {
        return Err(EBUSY);
    }
    // SAFETY: `call` was added by `add_event_call()`; `event_mutex` is held
    // (`_lock`).
    to_result(unsafe { bindings::trace_remove_event_call(call) })
}

// SPDX-License-Identifier: GPL-2.0

//! perf's kprobe PMU, served by a provider of kprobe events.
//!
//! `perf_event_open()` with the `kprobe` PMU type (what libbpf, bcc and
//! bpftrace use by default) asks the first registered kprobe event
//! provider (`struct kprobe_event_provider`) for a local event: a kprobe
//! event that is not listed in tracefs, which perf alone uses until it
//! closes it. A [`KprobeProvider`] registers a [`LocalKprobes`] as that
//! provider: each local event it makes ([`EventBox::new_local`]) is lent to
//! perf from `create_local` to `destroy_local`, with a reference on the
//! provider's module held by the tracing core meanwhile.
//!
//! C header: [`include/linux/trace_events.h`](srctree/include/linux/trace_events.h)

use super::{Event, EventBox, Registration};
use crate::ffi::{c_char, c_ulong, c_void};
use crate::{
    bindings,
    error::{to_result, Result},
    kprobes::Place,
    prelude::*,
    str::CStr,
    sync::atomic::{Acquire, Atomic, Relaxed, Release},
    types::Opaque,
    ThisModule,
};
use core::{marker::PhantomPinned, ptr};

/// What makes the local events of perf's kprobe PMU.
pub trait LocalKprobes: Sync + 'static {
    /// The events it makes (dropped where perf lets go of them: `Send`).
    type Event: Event + Send;

    /// Makes a local event ([`EventBox::new_local`], owned by the
    /// provider's module; any other is refused with `EINVAL`) with a kprobe at
    /// `place`, a kretprobe (with the kprobe core's default number of
    /// instances) if `is_return`, registered and disarmed: perf arms it
    /// through the event's `reg`. `Place::Symbol` may be `MOD:SYM`.
    /// Process context, may sleep.
    ///
    /// # Errors
    ///
    /// As C's `create_local_trace_kprobe()`: `ENOENT` or `EADDRNOTAVAIL`
    /// for a symbol that is not one symbol, or what registering the kprobe
    /// answers.
    fn create_local(&self, place: Place<'_>, is_return: bool) -> Result<EventBox<Self::Event>>;
}

/// A registered kprobe event provider that serves perf's kprobe PMU.
///
/// Registering it makes the PMU appear (`/sys/bus/event_source/devices/kprobe`)
/// if the kernel did not have it; the PMU stays after the provider goes.
/// The tracing core takes the first registered provider: C's kprobe
/// events, where the kernel has them.
///
/// # Invariants
///
/// `raw` is registered with the tracing core, its callbacks those of this
/// type, `owner` the module given to [`KprobeProvider::new`]; `live` counts
/// the local events lent to perf and not yet given back.
#[pin_data(PinnedDrop)]
pub struct KprobeProvider<P: LocalKprobes> {
    provider: P,
    live: Atomic<usize>,
    #[pin]
    raw: Opaque<bindings::kprobe_event_provider>,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: the tracing core calls the callbacks from any thread; `P: Sync`.
unsafe impl<P: LocalKprobes> Sync for KprobeProvider<P> {}
// SAFETY: the provider can be dropped from any thread.
unsafe impl<P: LocalKprobes + Send> Send for KprobeProvider<P> {}

impl<P: LocalKprobes> KprobeProvider<P> {
    /// Registers `provider` for perf's kprobe PMU, owned by `module`.
    /// Register it as the last step of a module's init that can fail: the
    /// tracing core may lend an event of it to perf as soon as it is
    /// registered, and a module whose init fails is freed without waiting
    /// for its references.
    ///
    /// # Errors
    ///
    /// What registering perf's kprobe PMU answers.
    pub fn new(module: &'static ThisModule, provider: P) -> impl PinInit<Self, Error> {
        // Fields are initialised in the order written: `provider` is there
        // before `raw` is registered.
        try_pin_init!(Self {
            provider,
            live: Atomic::new(0),
            raw <- Opaque::try_ffi_init(move |raw: *mut bindings::kprobe_event_provider| {
                let value = bindings::kprobe_event_provider {
                    owner: module.as_ptr(),
                    describe: Some(Registration::<P::Event>::describe),
                    create_local: Some(Self::create_local),
                    destroy_local: Some(Self::destroy_local),
                    // Unlinked: the core links it.
                    list: Zeroable::zeroed(),
                };
                // SAFETY: `raw` points to the field's memory, valid for
                // writes.
                unsafe { raw.write(value) };
                // SAFETY: `raw` is initialised and pinned; it stays
                // registered until the drop unregisters it.
                to_result(unsafe { kernel_provider_register(raw) })
            }),
            _pin: PhantomPinned,
        }? Error)
    }

    /// The `KprobeProvider` whose `raw` field is at `raw`.
    ///
    /// # Safety
    ///
    /// `raw` must be the `raw` of a live `KprobeProvider<P>`.
    unsafe fn from_raw<'a>(raw: *const bindings::kprobe_event_provider) -> &'a Self {
        // SAFETY: by the caller's guarantee.
        unsafe {
            &*crate::container_of!(
                raw.cast::<Opaque<bindings::kprobe_event_provider>>(),
                Self,
                raw
            )
        }
    }

    /// The provider's `create_local`.
    ///
    /// # Safety
    ///
    /// Called by the tracing core with this provider's `raw` (registered,
    /// and its module pinned by the caller), and `func` NULL or a
    /// NUL-terminated string valid for the call.
    unsafe extern "C" fn create_local(
        raw: *mut bindings::kprobe_event_provider,
        func: *mut c_char,
        addr: *mut c_void,
        offs: c_ulong,
        is_return: bool,
    ) -> *mut bindings::trace_event_call {
        // SAFETY: the core passes our `raw`; the provider is live while it
        // is registered.
        let this = unsafe { Self::from_raw(raw) };
        let place = if func.is_null() {
            // As C: an address alone, the offset is not used.
            Place::Address(addr as usize)
        } else {
            // SAFETY: a NUL-terminated string, valid for the call (the
            // caller's guarantee).
            let symbol = unsafe { CStr::from_char_ptr(func) };
            match u32::try_from(offs) {
                Ok(offs) => Place::Symbol(symbol, offs),
                Err(_) => return EINVAL.to_ptr(),
            }
        };
        let reg = match this.provider.create_local(place, is_return) {
            Ok(reg) => reg,
            Err(e) => return e.to_ptr(),
        };
        // Only a local event of the provider's module: a listed one has a
        // reference count perf would drop one of, and C pins `owner` only.
        // SAFETY: `raw` is initialised (the caller's guarantee).
        let owner = unsafe { (*raw).owner };
        if !reg.local || reg.module.as_ptr() != owner {
            return EINVAL.to_ptr();
        }
        this.live.add(1, Relaxed);
        // Given back only to `destroy_local`, which drops it.
        let p = reg.into_raw();
        // SAFETY: `p` is the registration, alive until `destroy_local`; the
        // pointer to its call is derived from the whole allocation's (an
        // `Opaque<T>` has the layout of its `T`).
        let call = unsafe { ptr::addr_of!((*p).call) }
            .cast::<bindings::trace_event_call>()
            .cast_mut();
        // SAFETY: the event is not yet seen by C; its class is initialised
        // and pinned with it. The core destroys the event through this
        // provider (`perf_kprobe_destroy()` reads the class's provider).
        unsafe { (*(*call).class).kprobe_provider = raw };
        call
    }

    /// The provider's `destroy_local`.
    ///
    /// # Safety
    ///
    /// Called by the tracing core with this provider's `raw` and a `call`
    /// [`Self::create_local`] returned, once, after perf let go of it.
    unsafe extern "C" fn destroy_local(
        raw: *mut bindings::kprobe_event_provider,
        call: *mut bindings::trace_event_call,
    ) {
        // SAFETY: the core passes our `raw`; the provider is live while one
        // of its events is (the core pins its module).
        let this = unsafe { Self::from_raw(raw) };
        // SAFETY: `call` is the `call` of a `Registration<P::Event>` that
        // `create_local` took out of its `EventBox`; perf no longer uses
        // it, and it is given back once.
        let reg = unsafe {
            // (`*const` on every release: 6.12's `container_of!` gives one.)
            let reg: *const Registration<P::Event> = crate::container_of!(
                call.cast::<Opaque<bindings::trace_event_call>>(),
                Registration<P::Event>,
                call
            );
            EventBox::from_raw(reg.cast_mut())
        };
        drop(reg);
        this.live.fetch_sub(1, Release);
    }
}

#[pinned_drop]
impl<P: LocalKprobes> PinnedDrop for KprobeProvider<P> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `raw` is registered (type invariant), unregistered once.
        unsafe { kernel_provider_unregister(self.raw.get()) };
        // Each local event pins the module, so a module's exit finds none;
        // a module registers it last of what can fail in its init.
        if self.live.load(Acquire) != 0 {
            crate::pr_err!("trace_event: a kprobe provider dropped with events lent to perf\n");
        }
    }
}

/// `kprobe_event_provider_register()`, exported to the Rust kprobe events
/// module alone: called from that module (inline).
///
/// # Safety
///
/// As the C function: `raw` initialised and pinned until unregistered.
#[inline]
unsafe fn kernel_provider_register(raw: *mut bindings::kprobe_event_provider) -> i32 {
    // SAFETY: by the caller's guarantee.
    unsafe { bindings::kprobe_event_provider_register(raw) }
}

/// `kprobe_event_provider_unregister()`, likewise.
///
/// # Safety
///
/// `raw` registered.
#[inline]
unsafe fn kernel_provider_unregister(raw: *mut bindings::kprobe_event_provider) {
    // SAFETY: by the caller's guarantee.
    unsafe { bindings::kprobe_event_provider_unregister(raw) }
}

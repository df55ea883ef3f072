// SPDX-License-Identifier: GPL-2.0

//! The tracing core's `event_mutex`: [`lock_events`] and the [`EventLock`]
//! proof that it is held.

use crate::{
    bindings,
    sync::{lock::mutex::MutexBackend, lock::Guard, Mutex},
};
use core::{ops::Deref, ptr};

/// Proof that the tracing core's `event_mutex` is held: the lock the core
/// holds when it calls an event's callbacks, and that creating or removing
/// an event needs.
///
/// Only an [`EventGuard`] from [`lock_events`] (or the kernel crate, inside
/// a callback the core calls with the mutex held) hands out a reference to
/// one.
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

/// Holds `event_mutex` until dropped (the kernel crate's own lock guard of
/// `event_mutex` seen as a [`Mutex<()>`]); derefs to the [`EventLock`] proof.
pub struct EventGuard {
    _guard: Guard<'static, (), MutexBackend>,
}

impl Deref for EventGuard {
    type Target = EventLock;

    fn deref(&self) -> &EventLock {
        // SAFETY: the guard holds `event_mutex` while the reference lives.
        unsafe { EventLock::assume_held() }
    }
}

/// Takes the tracing core's `event_mutex` (it may sleep).
#[inline(never)]
pub fn lock_events() -> EventGuard {
    // SAFETY: `event_mutex` is the tracing core's `DEFINE_MUTEX()` (declared
    // in <linux/trace_events.h>): initialised and never freed.
    let m: &'static Mutex<()> =
        unsafe { Mutex::from_raw(ptr::addr_of_mut!(bindings::event_mutex)) };
    EventGuard { _guard: m.lock() }
}

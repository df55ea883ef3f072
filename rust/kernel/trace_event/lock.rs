// SPDX-License-Identifier: GPL-2.0

//! The tracing core's `event_mutex`: [`lock_events`] and the [`EventLock`]
//! proof that it is held.

use crate::bindings;
use core::{marker::PhantomData, ops::Deref};

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
    _not_send: PhantomData<*mut ()>,
}

impl EventLock {
    /// The [`EventLock`] proof, for code the tracing core calls with `event_mutex` held.
    ///
    /// # Safety
    ///
    /// `event_mutex` must be held for `'a`.
    pub(crate) unsafe fn assume_held<'a>() -> &'a EventLock {
        &EventLock {
            _not_send: PhantomData,
        }
    }

    /// Clears the ring buffers of the instances whose records name an event
    /// that was removed (`tracing_reset_all_online_cpus()`, as
    /// `dyn_event_release()` does after removing events).
    #[inline]
    pub fn reset_instances(&self) {
        // SAFETY: takes `trace_types_lock`, which nests inside `event_mutex`.
        unsafe { bindings::tracing_reset_all_online_cpus() };
    }
}

/// Holds `event_mutex` until dropped; derefs to the [`EventLock`] proof.
///
/// # Invariants
///
/// `event_mutex` is held by this thread until the guard is dropped.
pub struct EventGuard {
    /// Not `Send`: a mutex is let go by the thread that took it.
    _not_send: PhantomData<*mut ()>,
}

impl Deref for EventGuard {
    type Target = EventLock;

    fn deref(&self) -> &EventLock {
        // SAFETY: the guard holds `event_mutex` while the reference lives.
        unsafe { EventLock::assume_held() }
    }
}

impl Drop for EventGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this thread holds `event_mutex` (type invariant).
        unsafe { bindings::trace_event_mutex_unlock() };
    }
}

/// Takes the tracing core's `event_mutex` (`trace_event_mutex_lock()`; it
/// may sleep).
#[inline]
pub fn lock_events() -> EventGuard {
    // SAFETY: no preconditions; the core's lock is initialised statically.
    unsafe { bindings::trace_event_mutex_lock() };
    // INVARIANT: taken above, let go by the guard's drop.
    EventGuard {
        _not_send: PhantomData,
    }
}

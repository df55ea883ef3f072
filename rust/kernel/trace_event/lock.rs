// SPDX-License-Identifier: GPL-2.0

//! The tracing core's `event_mutex`: the [`EventLock`] proof that it is
//! held.

use core::marker::PhantomData;

/// Proof that the tracing core's `event_mutex` is held: the lock the core
/// holds when it calls an event's or a dynamic event type's callbacks, and
/// that adding or removing an event needs.
///
/// Only the kernel crate hands out a reference to one, inside a callback
/// the core calls with the mutex held (a [`Provider`]'s methods, an event's
/// `reg`): a provider adds and removes its events there, and never takes
/// the core's lock itself. Outside a callback, [`Type::create`],
/// [`Type::release`] and [`Type::release_all`] have the core take it.
///
/// [`Provider`]: super::dyn_event::Provider
/// [`Type::create`]: super::dyn_event::Type::create
/// [`Type::release`]: super::dyn_event::Type::release
/// [`Type::release_all`]: super::dyn_event::Type::release_all
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
}

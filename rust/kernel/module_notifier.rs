// SPDX-License-Identifier: GPL-2.0

//! Being told when a module comes ([`ModuleNotifier`]): loaded, and its
//! `init` not run yet, as probes on its functions need to be registered.
//!
//! C header: [`include/linux/module.h`](srctree/include/linux/module.h)

use crate::{bindings, error::to_result, prelude::*, types::Opaque};

/// Told when a module is coming (loaded, before its `init` runs).
pub trait ModuleComing: Sync {
    /// Module `name` is coming: its symbols are known and its `init` has
    /// not run. Process context; may sleep.
    fn coming(&self, name: &CStr);
}

/// A module notifier (`register_module_notifier()`) calling
/// [`ModuleComing::coming`]. The chain calls its notifiers by priority,
/// highest first (the C kprobe events register theirs at 2,
/// `trace_kprobe_module_nb` in trace_kprobe.c; the kprobe core's is at 0,
/// `kprobe_module_nb` in kprobes.c).
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::module_notifier::{ModuleComing, ModuleNotifier};
/// use kernel::str::CStr;
///
/// struct Count(AtomicUsize);
///
/// impl ModuleComing for Count {
///     fn coming(&self, _name: &CStr) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let n = KBox::pin_init(ModuleNotifier::new(0, Count(AtomicUsize::new(0))), GFP_KERNEL)?;
/// let m = KBox::pin_init(ModuleNotifier::new(0, Count(AtomicUsize::new(0))), GFP_KERNEL)?;
/// // No module loads while the doctests run (module loads are tested by
/// // kprobe_module.tc and the module's own tests).
/// assert_eq!(n.data().0.load(Ordering::Relaxed), 0);
/// drop(n);
/// drop(m);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `nb` is registered from the end of initialisation until drop, with
/// `notifier_call` set to `module_callback::<T>`.
#[pin_data(PinnedDrop)]
pub struct ModuleNotifier<T: ModuleComing> {
    data: T,
    #[pin]
    nb: Opaque<bindings::notifier_block>,
}

// SAFETY: `T: Sync`; the notifier block is only touched by the notifier
// chain.
unsafe impl<T: ModuleComing> Sync for ModuleNotifier<T> {}
// SAFETY: it can be unregistered from any thread.
unsafe impl<T: ModuleComing + Send> Send for ModuleNotifier<T> {}

impl<T: ModuleComing> ModuleNotifier<T> {
    /// Registers the notifier with `priority`.
    pub fn new(priority: i32, data: T) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // Initialised before `nb` registers: the callback reads it.
            data,
            nb <- Opaque::try_ffi_init(|nb: *mut bindings::notifier_block| {
                let block = bindings::notifier_block {
                    notifier_call: Some(module_callback::<T>),
                    priority,
                    // The rest zero (no next block): the C initial state.
                    ..Zeroable::zeroed()
                };
                // SAFETY: `nb` is valid for writes.
                unsafe { nb.write(block) };
                // INVARIANT: on success `nb` is registered, with
                // `notifier_call` set to `module_callback::<T>` above;
                // `data` is initialised before `nb`, and `drop` unregisters
                // `nb`.
                // SAFETY: initialised above; pinned until drop.
                to_result(unsafe { bindings::register_module_notifier(nb) })
            }),
        })
    }

    /// The data given to [`ModuleNotifier::new`], which the callbacks get.
    pub fn data(&self) -> &T {
        &self.data
    }
}

#[pinned_drop]
impl<T: ModuleComing> PinnedDrop for ModuleNotifier<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant `nb` is registered.
        unsafe { bindings::unregister_module_notifier(self.nb.get()) };
    }
}

/// The `notifier_call` of every [`ModuleNotifier<T>`]: calls [`ModuleComing::coming`].
///
/// # Safety
///
/// Called by the module notifier chain with the `nb` of a
/// `ModuleNotifier<T>` and a `struct module`.
unsafe extern "C" fn module_callback<T: ModuleComing>(
    nb: *mut bindings::notifier_block,
    val: usize,
    data: *mut core::ffi::c_void,
) -> core::ffi::c_int {
    if val != bindings::module_state_MODULE_STATE_COMING as usize || data.is_null() {
        return bindings::NOTIFY_DONE as core::ffi::c_int;
    }
    // SAFETY: `nb` is the `nb` of a `ModuleNotifier<T>`.
    let this = unsafe {
        &*crate::container_of!(
            nb.cast::<Opaque<bindings::notifier_block>>(),
            ModuleNotifier<T>,
            nb
        )
    };
    // SAFETY: `data` is the coming module; its name is NUL-terminated.
    let name = unsafe { CStr::from_char_ptr((*data.cast::<bindings::module>()).name.as_ptr()) };
    this.data.coming(name);
    bindings::NOTIFY_DONE as core::ffi::c_int
}

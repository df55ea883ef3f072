// SPDX-License-Identifier: GPL-2.0

//! Kernel probes.
//!
//! A [`Registration`] places a kprobe on a symbol (`[module:]symbol+offset`)
//! or an address and calls its [`Handler`] with the [`PtRegs`] of every hit,
//! before the probed instruction runs. The registration is pinned (the kprobe
//! core keeps a pointer to the `struct kprobe` inside it) and unregistered
//! when dropped. The handler is initialised before the probe is registered,
//! so the callback never sees it uninitialised.
//!
//! Handlers run in atomic context, possibly in NMI-like conditions: they must
//! not sleep, allocate or take sleeping locks.
//!
//! C header: [`include/linux/kprobes.h`](srctree/include/linux/kprobes.h)

use crate::{
    bindings,
    error::{to_result, Result},
    init::{self, PinInit},
    prelude::*,
    str::{CStr, CString},
    types::Opaque,
};
use core::ptr;

/// The registers of the interrupted context (`struct pt_regs`).
///
/// # Invariants
///
/// The wrapped `pt_regs` is valid for reads for the lifetime of the
/// reference through which it is seen.
#[repr(transparent)]
pub struct PtRegs(Opaque<bindings::pt_regs>);

impl PtRegs {
    /// Wraps a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a `struct pt_regs` valid for reads during `'a`.
    pub unsafe fn from_raw<'a>(ptr: *const bindings::pt_regs) -> &'a Self {
        // SAFETY: `PtRegs` is `repr(transparent)` over `Opaque<pt_regs>`,
        // which has the layout of `pt_regs`; the caller guarantees validity.
        // INVARIANT: the caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw pointer.
    pub fn as_raw(&self) -> *mut bindings::pt_regs {
        self.0.get()
    }

    /// The word at byte `offset` of `struct pt_regs` (`regs_get_register()`),
    /// 0 for an offset past the end or not word-aligned.
    pub fn register(&self, offset: u32) -> u64 {
        let offset = offset as usize;
        if offset % 8 != 0 || offset + 8 > core::mem::size_of::<bindings::pt_regs>() {
            return 0;
        }
        // SAFETY: by the type invariant the registers are valid for reads;
        // `offset` is in bounds and word-aligned, checked above.
        unsafe { self.as_raw().cast::<u8>().add(offset).cast::<u64>().read() }
    }

    /// The instruction pointer.
    pub fn ip(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).ip }
    }

    /// The stack pointer (`kernel_stack_pointer()`).
    pub fn sp(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).sp }
    }

    /// The return value (`regs_return_value()`).
    pub fn return_value(&self) -> usize {
        // SAFETY: by the type invariant the registers are valid for reads.
        unsafe { (*self.as_raw()).ax }
    }
}

/// What a kprobe does when it hits.
pub trait Handler: Sync {
    /// Called with the registers before the probed instruction runs.
    /// Atomic context: no sleeping, no allocation.
    fn pre_handler(&self, regs: &PtRegs);
}

/// Where to place a probe.
#[derive(Clone, Copy, Debug)]
pub enum Place<'a> {
    /// `symbol+offset`; the symbol may be `module:symbol`.
    Symbol(&'a CStr, u32),
    /// An address.
    Address(usize),
}

/// A registered kprobe.
///
/// # Examples
///
/// A probe that counts the calls of `kstrtouint()` on one string:
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::c_str;
/// use kernel::kprobes::{Handler, Place, PtRegs, Registration};
///
/// struct Count {
///     target: AtomicUsize,
///     hits: AtomicUsize,
/// }
///
/// impl Handler for Count {
///     fn pre_handler(&self, regs: &PtRegs) {
///         // %di (offset 112 of pt_regs) holds the first argument.
///         if regs.register(112) as usize == self.target.load(Ordering::Relaxed) {
///             self.hits.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let s = c_str!("42");
/// let count = Count { target: AtomicUsize::new(s.as_char_ptr() as usize), hits: AtomicUsize::new(0) };
/// let probe = KBox::pin_init(Registration::new(Place::Symbol(c_str!("kstrtouint"), 0), false, count)?, GFP_KERNEL)?;
/// assert_ne!(probe.address(), 0);
/// let mut v = 0u32;
/// // SAFETY: a NUL-terminated string and a valid output pointer.
/// let r = unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// assert_eq!((r, v), (0, 42));
/// assert_eq!(probe.handler().hits.load(Ordering::Relaxed), 1);
///
/// // Disabled, it does not fire; enabled again, it does.
/// probe.disable()?;
/// // SAFETY: as above.
/// unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// assert_eq!(probe.handler().hits.load(Ordering::Relaxed), 1);
/// probe.enable()?;
/// // SAFETY: as above.
/// unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// assert_eq!(probe.handler().hits.load(Ordering::Relaxed), 2);
/// assert_eq!(probe.nmissed(), 0);
///
/// // An unknown symbol is `ENOENT`, as for C callers.
/// let other = Count { target: AtomicUsize::new(0), hits: AtomicUsize::new(0) };
/// let bad = KBox::pin_init(Registration::new(Place::Symbol(c_str!("no_such_function_x"), 0), false, other)?, GFP_KERNEL);
/// assert_eq!(bad.err(), Some(ENOENT));
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `kp` is registered with the kprobe core from the end of initialisation
/// until drop; its `pre_handler` is [`pre_handler_callback::<T>`], and
/// `symbol`, which `kp.symbol_name` may point into, lives as long.
#[pin_data(PinnedDrop)]
pub struct Registration<T: Handler> {
    handler: T,
    symbol: Option<CString>,
    #[pin]
    kp: Opaque<bindings::kprobe>,
}

// SAFETY: the kprobe core serialises (un)registration and calls the handler
// from any CPU; `T: Sync` makes concurrent `&T` sound, and the remaining
// fields are only read after registration.
unsafe impl<T: Handler> Sync for Registration<T> {}
// SAFETY: the registration can be dropped (unregistered) from any thread.
unsafe impl<T: Handler + Send> Send for Registration<T> {}

impl<T: Handler> Registration<T> {
    /// Places a kprobe calling `handler` at `place`. With `disabled`, the
    /// probe is registered but does not fire until [`Registration::enable`].
    ///
    /// # Errors
    ///
    /// What `register_kprobe()` returns: `ENOENT` for an unknown symbol,
    /// `EILSEQ` when the place is not an instruction boundary, `EINVAL` for
    /// a blacklisted or otherwise unprobeable place, `ENOMEM`.
    pub fn new(place: Place<'_>, disabled: bool, handler: T) -> Result<impl PinInit<Self, Error>> {
        let (symbol, offset, addr) = match place {
            Place::Symbol(name, offset) => (
                Some(CString::try_from_fmt(crate::fmt!("{name}"))?),
                offset,
                0,
            ),
            Place::Address(addr) => (None, 0, addr),
        };
        // The string's buffer does not move with the `CString`.
        let name = symbol.as_ref().map_or(ptr::null(), |s| s.as_char_ptr());
        let init = move |slot: *mut Opaque<bindings::kprobe>| {
            let kp = Opaque::raw_get(slot);
            // SAFETY: `slot` is valid for writes (pin-init contract); an
            // all-zero `struct kprobe` is its C initial state.
            unsafe {
                ptr::write_bytes(kp, 0, 1);
                (*kp).symbol_name = name;
                (*kp).offset = offset;
                (*kp).addr = addr as *mut bindings::kprobe_opcode_t;
                (*kp).pre_handler = Some(pre_handler_callback::<T>);
                if disabled {
                    (*kp).flags = bindings::KPROBE_FLAG_DISABLED;
                }
            }
            // SAFETY: `kp` is initialised above and stays pinned inside the
            // registration until `drop` unregisters it.
            to_result(unsafe { bindings::register_kprobe(kp) })
        };
        Ok(try_pin_init!(Self {
            // Initialised before `kp` registers: the callback reads it.
            handler,
            symbol,
            // SAFETY: `init` fully initialises the slot or returns an error
            // (then the kprobe core keeps no pointer to it).
            kp <- unsafe { init::pin_init_from_closure(init) },
        }))
    }

    /// The handler.
    pub fn handler(&self) -> &T {
        &self.handler
    }

    /// The probed address, as the kprobe core resolved it.
    pub fn address(&self) -> usize {
        // SAFETY: by the type invariant `kp` is registered; `addr` is set
        // at registration and not changed afterwards.
        unsafe { (*self.kp.get()).addr as usize }
    }

    /// Hits missed because the handler was already running on that CPU.
    pub fn nmissed(&self) -> usize {
        // SAFETY: `kp` is valid; the counter is updated concurrently, so it
        // is read with a volatile load.
        unsafe { ptr::addr_of!((*self.kp.get()).nmissed).read_volatile() }
    }

    /// Arms a probe registered disabled (`enable_kprobe()`).
    ///
    /// # Errors
    ///
    /// `EINVAL` if the probe is gone (its module was unloaded).
    pub fn enable(&self) -> Result {
        // SAFETY: by the type invariant `kp` is registered.
        to_result(unsafe { bindings::enable_kprobe(self.kp.get()) })
    }

    /// Disarms the probe without unregistering it (`disable_kprobe()`).
    ///
    /// # Errors
    ///
    /// `EINVAL` if the probe is gone.
    pub fn disable(&self) -> Result {
        // SAFETY: by the type invariant `kp` is registered.
        to_result(unsafe { bindings::disable_kprobe(self.kp.get()) })
    }
}

#[pinned_drop]
impl<T: Handler> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: by the type invariant `kp` is registered; after this call
        // returns no handler runs any more (`unregister_kprobe()` waits).
        unsafe { bindings::unregister_kprobe(self.kp.get()) };
    }
}

/// The `pre_handler` of every [`Registration<T>`].
///
/// # Safety
///
/// `p` must be the `kp` of a live `Registration<T>`, `regs` valid for the
/// call: the kprobe core guarantees both for the probes registered above.
unsafe extern "C" fn pre_handler_callback<T: Handler>(
    p: *mut bindings::kprobe,
    regs: *mut bindings::pt_regs,
) -> core::ffi::c_int {
    // SAFETY: `p` is the `kp` field of a `Registration<T>` (this callback is
    // only installed there), `Opaque<kprobe>` has the layout of `kprobe`.
    let reg = unsafe {
        &*crate::container_of!(p.cast::<Opaque<bindings::kprobe>>(), Registration<T>, kp)
    };
    // SAFETY: the kprobe core passes the registers of the hit.
    let regs = unsafe { PtRegs::from_raw(regs) };
    reg.handler.pre_handler(regs);
    0
}

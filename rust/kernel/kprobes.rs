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
//! Nothing a hit runs through can be probed itself, as C's kprobe-event hit
//! path cannot (`NOKPROBE_SYMBOL(kprobe_dispatcher)`, trace_kprobe.c): the
//! callbacks here, and every function of the kernel crate and of a handler
//! that a hit calls out of line, carry
//! `#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]`, C's
//! `__kprobes`. The kprobe core refuses an address in that section
//! (`within_kprobe_blacklist()`), in vmlinux and in a module alike; a
//! generic function's instances land there too. The C helpers of the hit
//! path are `NOKPROBE_SYMBOL()`.
//!
//! A [`RetRegistration`] places a kretprobe, whose [`RetHandler`] is called
//! when the probed function returns and, if it asked for per-instance data,
//! at its entry too; without data there is no entry handler, which saves a
//! call on every entry, as C's kprobe events do. A registration keeps no
//! copy of its symbol's name: the kprobe core reads it only while
//! registering, and a temporary is cleared after.
//!
//! [`unregister_all`] unregisters many kprobes, or many kretprobes, with one
//! RCU grace period (`unregister_kprobes()`), where dropping them one by one
//! waits one each.
//! It first lets the kprobe optimizer finish what it has queued
//! ([`wait_for_optimizer`]), so that no probe of the batch is removed while
//! its unoptimizing is pending.
//!
//! C header: [`include/linux/kprobes.h`](srctree/include/linux/kprobes.h)

mod percpu;

pub use percpu::{current_task, this_cpu_ptr, HitBuffers, HitCounters, HIT_BUFFER_SIZE};

use crate::{
    bindings,
    error::to_result,
    prelude::*,
    ptrace::PtRegs,
    str::CString,
    sync::atomic::{Acquire, Atomic, Full},
    types::Opaque,
};
use core::{marker::PhantomData, ptr};

/// What a kprobe does when it hits.
///
/// `'static`: the kprobe core calls the handler for as long as the probe
/// is registered, which a leaked registration (`mem::forget`) makes
/// forever; a handler that borrowed from something shorter-lived would
/// read freed memory.
///
/// # Examples
///
/// A handler that counts its hits with [`HitCounters::inc`], which takes
/// the handler's [`PtRegs`] as proof that preemption is off:
///
/// ```
/// use kernel::kprobes::{Handler, HitCounters, Place, Registration};
/// use kernel::ptrace::PtRegs;
///
/// struct Count(HitCounters<1>);
///
/// impl Handler for Count {
///     fn pre_handler(&self, regs: &PtRegs) {
///         self.0.inc(0, regs);
///     }
/// }
///
/// let mut c = HitCounters::new()?;
/// c.add(0, 40);
/// let place = Place::Symbol(c"kstrtouint", 0);
/// let probe = KBox::pin_init(Registration::new(place, false, Count(c)), GFP_KERNEL)?;
/// let mut v = 0u32;
/// for _ in 0..2 {
///     // SAFETY: a NUL-terminated string and a valid output pointer.
///     unsafe { kernel::bindings::kstrtouint(c"7".as_char_ptr(), 10, &mut v) };
/// }
/// // Other callers of `kstrtouint()` may have hit it meanwhile.
/// assert!(probe.handler().0.sum(0) >= 42);
/// # Ok::<(), Error>(())
/// ```
pub trait Handler: Sync + 'static {
    /// Called with the registers before the probed instruction runs.
    /// Atomic context: no sleeping, no allocation. If the instruction
    /// pointer has moved when it returns (a BPF program it ran called
    /// `bpf_override_return()`), the probed instruction is not run: the
    /// context resumes where the pointer is.
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

/// The copy of a place's symbol name a `struct kprobe` points to while it
/// registers, for kprobes and kretprobes alike. The kprobe core reads
/// `symbol_name` only then (`_kprobe_addr()` in kernel/kprobes.c, from
/// `register_kprobe()` and, twice, from `register_kretprobe()`) and in
/// `dump_kprobe()` (the report before a `BUG()` of a kprobe hit inside its
/// own handler): [`forget_symbol`] clears it after registration, so that no
/// copy is kept for as long as the probe.
fn symbol_of(place: Place<'_>) -> Result<Option<CString>> {
    match place {
        Place::Symbol(name, _) => Ok(Some(CString::try_from(name)?)),
        Place::Address(_) => Ok(None),
    }
}

/// Clears `kp.symbol_name` once the kprobe core resolved it into `kp.addr`
/// (see [`symbol_of`]): the copy it pointed to is freed next. A concurrent
/// `dump_kprobe()` reads the old pointer or null (`printk` prints
/// "(null)"); it runs only on the way to a `BUG()`.
///
/// # Safety
///
/// `kp` is valid for writes of `symbol_name`.
unsafe fn forget_symbol(kp: *mut bindings::kprobe) {
    // SAFETY: by the caller's guarantee; one aligned pointer store.
    unsafe { ptr::addr_of_mut!((*kp).symbol_name).write_volatile(ptr::null()) };
}

/// The `struct kprobe` of a kprobe or a kretprobe at `place`, which starts
/// disabled if `disabled`, with no handler: all zero (its C initial state)
/// but the place. Its `symbol_name` points into `symbol`
/// ([`symbol_of`]`(place)`), which must stay where it is until
/// [`forget_symbol`].
fn new_kprobe(symbol: &Option<CString>, place: Place<'_>, disabled: bool) -> bindings::kprobe {
    let (offset, addr) = match place {
        Place::Symbol(_, offset) => (offset, ptr::null_mut()),
        Place::Address(addr) => (0, addr as *mut bindings::kprobe_opcode_t),
    };
    bindings::kprobe {
        // The string's buffer does not move with the `CString`.
        symbol_name: symbol.as_ref().map_or(ptr::null(), |s| s.as_char_ptr()),
        offset,
        addr,
        flags: if disabled {
            bindings::KPROBE_FLAG_DISABLED
        } else {
            0
        },
        // The rest zero (null pointers, no handler, empty counters): the
        // C initial state.
        ..Zeroable::zeroed()
    }
}

/// Takes a probe out of the registered state (its `unregistered` flag):
/// true if it was registered (the caller must then unregister it), false if
/// it was taken before.
fn take_registered(unregistered: &Atomic<bool>) -> bool {
    !unregistered.xchg(true, Full)
}

/// Which probe a [`Probe`] places: [`Entry`] (a kprobe: a [`Registration`])
/// or [`Return`] (a kretprobe: a [`RetRegistration`]). Sealed.
pub trait Kind: sealed::Kind {}

/// The [`Kind`] of a kprobe whose [`Handler`] is `T`: a [`Registration<T>`].
/// A marker, never made.
pub struct Entry<T>(PhantomData<T>);

/// The [`Kind`] of a kretprobe whose [`RetHandler`] is `T`: a
/// [`RetRegistration<T>`]. A marker, never made.
pub struct Return<T>(PhantomData<T>);

impl<T: Handler> Kind for Entry<T> {}
impl<T: RetHandler> Kind for Return<T> {}

mod sealed {
    use crate::bindings;

    /// What a [`Probe`](super::Probe) of this kind holds and how the kprobe
    /// core unregisters it.
    ///
    /// # Safety
    ///
    /// `kp` gives the `struct kprobe` of a `Raw` (the `Raw` itself, or the
    /// one inside it), and `unregister_one` and `unregister_many` are the
    /// kprobe core's unregistration functions for a `Raw`.
    pub unsafe trait Kind {
        /// What the probe calls on a hit.
        type Handler: Sync + 'static;

        /// `struct kprobe` or `struct kretprobe`.
        type Raw;

        /// The `struct kprobe` of `raw`.
        ///
        /// # Safety
        ///
        /// `raw` points to a `Raw`.
        unsafe fn kp(raw: *mut Self::Raw) -> *mut bindings::kprobe;

        /// The hits `raw` missed, for whatever reason.
        ///
        /// # Safety
        ///
        /// `raw` points to a registered `Raw`.
        unsafe fn nmissed(raw: *mut Self::Raw) -> usize;

        /// `unregister_kprobe()` or `unregister_kretprobe()`.
        ///
        /// # Safety
        ///
        /// `p` is registered.
        unsafe fn unregister_one(p: *mut Self::Raw);

        /// `unregister_kprobes()` or `unregister_kretprobes()`.
        ///
        /// # Safety
        ///
        /// `ps` holds `n` registered pointers.
        unsafe fn unregister_many(ps: *mut *mut Self::Raw, n: core::ffi::c_int);
    }
}

/// The `nmissed` counter of a `struct kprobe`: updated concurrently, so read
/// with a volatile load.
///
/// # Safety
///
/// `kp` points to a `struct kprobe`.
unsafe fn kp_nmissed(kp: *const bindings::kprobe) -> usize {
    // SAFETY: by the caller.
    unsafe { ptr::addr_of!((*kp).nmissed).read_volatile() }
}

// SAFETY: a kprobe's `struct kprobe` is the `Raw` itself; the functions are
// the kprobe core's for a `struct kprobe`.
unsafe impl<T: Handler> sealed::Kind for Entry<T> {
    type Handler = T;
    type Raw = bindings::kprobe;

    unsafe fn kp(raw: *mut bindings::kprobe) -> *mut bindings::kprobe {
        raw
    }

    unsafe fn nmissed(raw: *mut bindings::kprobe) -> usize {
        // SAFETY: by the caller.
        unsafe { kp_nmissed(raw) }
    }

    unsafe fn unregister_one(p: *mut bindings::kprobe) {
        // SAFETY: by the caller.
        unsafe { bindings::unregister_kprobe(p) }
    }

    unsafe fn unregister_many(ps: *mut *mut bindings::kprobe, n: core::ffi::c_int) {
        // SAFETY: by the caller.
        unsafe { bindings::unregister_kprobes(ps, n) }
    }
}

// SAFETY: a kretprobe's `struct kprobe` is its `kp` field; the functions are
// the kprobe core's for a `struct kretprobe`.
unsafe impl<T: RetHandler> sealed::Kind for Return<T> {
    type Handler = T;
    type Raw = bindings::kretprobe;

    unsafe fn kp(raw: *mut bindings::kretprobe) -> *mut bindings::kprobe {
        // SAFETY: `raw` points to a `kretprobe` (the caller's guarantee); no
        // reference is made.
        unsafe { ptr::addr_of_mut!((*raw).kp) }
    }

    unsafe fn nmissed(raw: *mut bindings::kretprobe) -> usize {
        // SAFETY: by the caller; `rp.nmissed` changes concurrently too.
        unsafe {
            kp_nmissed(ptr::addr_of!((*raw).kp))
                + ptr::addr_of!((*raw).nmissed).read_volatile() as usize
        }
    }

    unsafe fn unregister_one(p: *mut bindings::kretprobe) {
        // SAFETY: by the caller.
        unsafe { bindings::unregister_kretprobe(p) }
    }

    unsafe fn unregister_many(ps: *mut *mut bindings::kretprobe, n: core::ffi::c_int) {
        // SAFETY: by the caller.
        unsafe { bindings::unregister_kretprobes(ps, n) }
    }
}

/// A registered kprobe or kretprobe, as its [`Kind`] `K` says: a
/// [`Registration`] or a [`RetRegistration`].
///
/// # Invariants
///
/// `raw` is registered with the kprobe core from the end of initialisation
/// until `unregistered` is set (by [`unregister_all`] or the drop), which
/// happens once; its callbacks are this module's for `K`, their `container_of`
/// is this `Probe<K>`, and the `symbol_name` of its `struct kprobe` is null.
#[pin_data(PinnedDrop)]
pub struct Probe<K: Kind> {
    handler: K::Handler,
    unregistered: Atomic<bool>,
    #[pin]
    raw: Opaque<K::Raw>,
}

// SAFETY: the kprobe core serialises (un)registration and calls the handler
// from any CPU; `K::Handler: Sync` makes concurrent `&K::Handler` sound, and
// the remaining fields are only read after registration.
unsafe impl<K: Kind> Sync for Probe<K> {}
// SAFETY: the registration can be dropped (unregistered) from any thread.
unsafe impl<K: Kind> Send for Probe<K> where K::Handler: Send {}

impl<K: Kind> Probe<K> {
    /// The handler the kprobe core calls on each hit of this probe.
    pub fn handler(&self) -> &K::Handler {
        &self.handler
    }

    /// The `struct kprobe` of this probe (a kretprobe's `kp`).
    fn kp(&self) -> *mut bindings::kprobe {
        // SAFETY: `raw` is initialised and pinned in `self`.
        unsafe { K::kp(self.raw.get()) }
    }

    /// The probed address, as the kprobe core resolved it (for a kretprobe,
    /// past an `endbr64` at a function's entry).
    pub fn address(&self) -> usize {
        // SAFETY: `kp` is valid; `addr` is set at registration and not
        // changed afterwards.
        unsafe { (*self.kp()).addr as usize }
    }

    /// The hits missed: because a kprobe handler was already running on that
    /// CPU, and for a kretprobe also for lack of a free instance.
    pub fn nmissed(&self) -> usize {
        // SAFETY: `raw` is initialised and pinned; registered, or its
        // counters are no longer updated.
        unsafe { K::nmissed(self.raw.get()) }
    }

    /// Whether the probed code went away (its module was unloaded): the
    /// probe cannot be armed then (`kprobe_gone()`).
    pub fn gone(&self) -> bool {
        // SAFETY: `kp` is valid; `flags` changes under the kprobe core's
        // lock, so it is read with a volatile load.
        let flags = unsafe { ptr::addr_of!((*self.kp()).flags).read_volatile() };
        flags & bindings::KPROBE_FLAG_GONE != 0
    }

    /// Arms a probe registered disabled (`enable_kprobe()`).
    ///
    /// # Errors
    ///
    /// `EINVAL` if the probe is gone (its module was unloaded) or was
    /// unregistered by [`unregister_all`].
    pub fn enable(&self) -> Result {
        // The kprobe core also answers `EINVAL` for a kprobe it does not
        // know (`__get_valid_kprobe()`); this answers without asking it.
        if self.unregistered.load(Acquire) {
            return Err(EINVAL);
        }
        // SAFETY: `kp` is valid; if `unregister_all` takes it meanwhile,
        // the kprobe core serialises both on `kprobe_mutex`.
        to_result(unsafe { bindings::enable_kprobe(self.kp()) })
    }

    /// Disarms the probe without unregistering it (`disable_kprobe()`).
    ///
    /// # Errors
    ///
    /// `EINVAL` if the probe is gone or unregistered.
    pub fn disable(&self) -> Result {
        if self.unregistered.load(Acquire) {
            return Err(EINVAL);
        }
        // SAFETY: as for `enable`.
        to_result(unsafe { bindings::disable_kprobe(self.kp()) })
    }
}

#[pinned_drop]
impl<K: Kind> PinnedDrop for Probe<K> {
    fn drop(self: Pin<&mut Self>) {
        if take_registered(&self.unregistered) {
            // SAFETY: by the type invariant `raw` is still registered (the
            // flag was clear); after this call returns no callback runs any
            // more (the kprobe core waits). (A second
            // `unregister_kretprobe()` would free its rethook twice: the
            // flag prevents it.)
            unsafe { K::unregister_one(self.raw.get()) };
        }
    }
}

/// A registered kprobe.
///
/// # Examples
///
/// A probe that counts the calls of `kstrtouint()` on one string:
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::kprobes::{Handler, Place, Registration};
/// use kernel::ptrace::PtRegs;
///
/// struct Count {
///     target: AtomicUsize,
///     hits: AtomicUsize,
/// }
///
/// impl Handler for Count {
///     fn pre_handler(&self, regs: &PtRegs) {
///         let first_argument = regs.register(PtRegs::FIRST_ARGUMENT) as usize;
///         if first_argument == self.target.load(Ordering::Relaxed) {
///             self.hits.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let s = c"42";
/// let count = Count {
///     target: AtomicUsize::new(s.as_char_ptr() as usize),
///     hits: AtomicUsize::new(0),
/// };
/// let place = Place::Symbol(c"kstrtouint", 0);
/// let probe = KBox::pin_init(Registration::new(place, false, count), GFP_KERNEL)?;
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
/// let place = Place::Symbol(c"no_such_function_x", 0);
/// let bad = KBox::pin_init(Registration::new(place, false, other), GFP_KERNEL);
/// assert_eq!(bad.err(), Some(ENOENT));
/// # Ok::<(), Error>(())
/// ```
pub type Registration<T> = Probe<Entry<T>>;

impl<T: Handler> Registration<T> {
    /// Places a kprobe calling `handler` at `place`. With `disabled`, the
    /// probe is registered but does not fire until [`Probe::enable`].
    ///
    /// # Errors
    ///
    /// What `register_kprobe()` returns: `ENOENT` for an unknown symbol,
    /// `EILSEQ` when the place is not an instruction boundary, `EINVAL` for
    /// a blacklisted or otherwise unprobeable place, `ENOMEM`.
    pub fn new<'a>(place: Place<'a>, disabled: bool, handler: T) -> impl PinInit<Self, Error> + 'a
    where
        T: 'a,
    {
        try_pin_init!(Self {
            // Initialised before `raw` registers: the callback reads it.
            handler,
            unregistered: Atomic::new(false),
            raw <- Opaque::try_ffi_init(|kp: *mut bindings::kprobe| {
                let symbol = symbol_of(place)?;
                let probe = bindings::kprobe {
                    pre_handler: Some(pre_handler_callback::<T>),
                    ..new_kprobe(&symbol, place, disabled)
                };
                // SAFETY: `kp` points to the field's memory, valid for
                // writes.
                unsafe { kp.write(probe) };
                // INVARIANT: on success `raw` is registered, with
                // `pre_handler` set to `pre_handler_callback::<T>` and no
                // symbol name; `handler` is initialised before `raw`, and
                // `drop` unregisters `raw` before it is dropped.
                // SAFETY: `kp` is initialised and pinned; `symbol`, which it
                // points into, lives until `forget_symbol` below.
                let r = to_result(unsafe { bindings::register_kprobe(kp) });
                // SAFETY: `kp` is valid for writes.
                unsafe { forget_symbol(kp) };
                r
            }),
        }? Error)
    }
}

/// Unregisters `probes` with one RCU grace period for all of them
/// (`unregister_kprobes()`), where dropping them one by one waits for one
/// each: removing many probes at once then takes one wait, not many.
///
/// When this returns, no handler of theirs runs any more. An unregistered
/// probe stays a valid object (its counters can be read) but cannot be
/// armed again ([`Probe::enable`] answers `EINVAL`), and dropping it
/// does not unregister it again. Probes unregistered before are skipped.
/// Without memory for the batch, each is unregistered on its own.
///
/// # Examples
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::kprobes::{unregister_all, Handler, Place, Registration};
/// use kernel::ptrace::PtRegs;
///
/// struct Count(AtomicUsize);
///
/// impl Handler for Count {
///     fn pre_handler(&self, _regs: &PtRegs) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let mut probes = KVec::new();
/// for _ in 0..3 {
///     let count = Count(AtomicUsize::new(0));
///     let place = Place::Symbol(c"kstrtouint", 0);
///     let probe = KBox::pin_init(Registration::new(place, false, count), GFP_KERNEL)?;
///     probes.push(probe, GFP_KERNEL)?;
/// }
/// let s = c"7";
/// let mut v = 0u32;
/// // SAFETY: a NUL-terminated string and a valid output pointer.
/// unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// assert!(probes.iter().all(|p| p.handler().0.load(Ordering::Relaxed) >= 1));
/// unregister_all(probes.iter().map(|p| &**p));
/// let before: KVec<usize> = {
///     let mut b = KVec::new();
///     for p in probes.iter() {
///         b.push(p.handler().0.load(Ordering::Relaxed), GFP_KERNEL)?;
///     }
///     b
/// };
/// // SAFETY: as above.
/// unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// for (p, n) in probes.iter().zip(before.iter()) {
///     assert_eq!(p.handler().0.load(Ordering::Relaxed), *n);
///     assert_eq!(p.enable(), Err(EINVAL));
/// }
/// // Again: nothing left to do.
/// unregister_all(probes.iter().map(|p| &**p));
/// drop(probes);
/// # Ok::<(), Error>(())
/// ```
pub fn unregister_all<'a, K: Kind + 'a>(probes: impl Iterator<Item = &'a Probe<K>> + Clone) {
    unregister_batch(probes)
}

/// Waits until the kprobe optimizer has done the (un)optimizations queued
/// so far (`wait_for_kprobe_optimizer()`). Sleeps. `#[inline]`: that
/// function is exported to the Rust kprobe events module alone, so the call
/// belongs in the calling module.
#[inline]
pub fn wait_for_optimizer() {
    #[cfg(CONFIG_OPTPROBES)]
    // SAFETY: no preconditions; the caller may sleep.
    unsafe {
        bindings::wait_for_kprobe_optimizer()
    };
}

/// The body of [`unregister_all`]: one grace
/// period for the batch, or (without memory for the batch) one a probe.
fn unregister_batch<'a, K: Kind + 'a>(probes: impl Iterator<Item = &'a Probe<K>> + Clone) {
    let count = probes.clone().count();
    if count == 0 {
        // (Every `kprobe_events` write ends here, most with nothing to
        // remove: no wait for them.)
        return;
    }
    // Let the kprobe optimizer finish the (un)optimizations that enabling
    // or disabling queued (it runs `OPTIMIZE_DELAY` after them) before the
    // batch goes: a probe removed while under delayed unoptimizing is the
    // core's rarest path, and a batch reaches it far more often than C's
    // one-probe-a-grace-period removal does. Seen once under the debug
    // kernel (multiple_kprobes.tc: enable, disable, truncate 256
    // optprobes): an int3 at a probed address that no kprobe claimed.
    wait_for_optimizer();
    let Ok(mut raws) = KVec::with_capacity(count, GFP_KERNEL) else {
        for p in probes {
            if take_registered(&p.unregistered) {
                // SAFETY: registered until now (the flag was clear).
                unsafe { K::unregister_one(p.raw.get()) };
            }
        }
        return;
    };
    for p in probes {
        // Within the capacity reserved above, unless the iterator yields
        // more this time than it counted: then that probe goes on its own.
        if take_registered(&p.unregistered) && raws.push(p.raw.get(), GFP_KERNEL).is_err() {
            // SAFETY: registered until now (the flag was clear).
            unsafe { K::unregister_one(p.raw.get()) };
        }
    }
    if raws.is_empty() {
        return;
    }
    // SAFETY: each pointer is a probe registered until now (its flag was
    // clear), pinned in a registration borrowed for the call; `raws.len()`
    // of them. When the call returns, the kprobe core keeps none.
    unsafe { K::unregister_many(raws.as_mut_ptr(), raws.len() as core::ffi::c_int) };
}

/// The `pre_handler` of every [`Registration<T>`].
///
/// # Safety
///
/// `p` must be the `kp` of a live `Registration<T>`, `regs` valid for the
/// call: the kprobe core guarantees both for the probes registered above.
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
unsafe extern "C" fn pre_handler_callback<T: Handler>(
    p: *mut bindings::kprobe,
    regs: *mut bindings::pt_regs,
) -> core::ffi::c_int {
    // SAFETY: `p` is the `raw` field of a `Registration<T>` (this callback is
    // only installed there), `Opaque<kprobe>` has the layout of `kprobe`.
    let reg = unsafe {
        &*crate::container_of!(p.cast::<Opaque<bindings::kprobe>>(), Registration<T>, raw)
    };
    // SAFETY: the kprobe core passes the registers of the hit, and runs
    // the handler with preemption disabled (see `PtRegs`), for this call.
    let regs = unsafe { PtRegs::from_raw(regs) };
    let ip = regs.ip();
    reg.handler.pre_handler(regs);
    // A BPF program the handler ran may have moved where the context
    // resumes (`bpf_override_return()`): then the kprobe core must not
    // single-step the probed instruction, as for C's kprobe_perf_func().
    core::ffi::c_int::from(regs.ip() != ip)
}

/// What a kretprobe does at function entry and at return. `'static` as
/// [`Handler`].
pub trait RetHandler: Sync + 'static {
    /// Called at function entry with the instance's `data`
    /// ([`RetRegistration::new`]'s `data_size` bytes), when `data_size` is
    /// not 0: without data to keep, the kretprobe gets no entry handler
    /// and a hit costs one call less (as C's kprobe events set one only
    /// for entry arguments, in `__trace_kprobe_create()`). Atomic context.
    fn entry(&self, _regs: &PtRegs, _data: &mut [u8]) {}

    /// Called when the function returns to `ret_ip`, with the data
    /// [`RetHandler::entry`] filled in. Atomic context.
    fn ret(&self, regs: &PtRegs, ret_ip: usize, data: &[u8]);
}

/// A registered kretprobe (a return probe).
///
/// # Examples
///
/// Seeing what `kstrtouint()` returns, with an argument saved at entry:
///
/// ```
/// use core::sync::atomic::{AtomicUsize, Ordering};
/// use kernel::kprobes::{Place, RetHandler, RetRegistration};
/// use kernel::ptrace::PtRegs;
///
/// struct Ret {
///     target: usize,
///     last: AtomicUsize,
///     hits: AtomicUsize,
///     entries: AtomicUsize,
/// }
///
/// impl RetHandler for Ret {
///     fn entry(&self, regs: &PtRegs, data: &mut [u8]) {
///         // Save the first argument for the return; count our call only
///         // (other tasks may call the function meanwhile).
///         let arg = regs.register(PtRegs::FIRST_ARGUMENT);
///         if arg as usize == self.target {
///             self.entries.fetch_add(1, Ordering::Relaxed);
///         }
///         data.copy_from_slice(&arg.to_ne_bytes());
///     }
///     fn ret(&self, regs: &PtRegs, ret_ip: usize, data: &[u8]) {
///         let arg = usize::from_ne_bytes(data.try_into().unwrap_or([0; 8]));
///         if arg == self.target && ret_ip != 0 {
///             self.last.store(regs.return_value(), Ordering::Relaxed);
///             self.hits.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let s = c"x";
/// let new = |target| Ret {
///     target,
///     last: AtomicUsize::new(0),
///     hits: AtomicUsize::new(0),
///     entries: AtomicUsize::new(0),
/// };
/// let place = || Place::Symbol(c"kstrtouint", 0);
/// let h = new(s.as_char_ptr() as usize);
/// let rp = KBox::pin_init(RetRegistration::new(place(), 0, 8, false, h), GFP_KERNEL)?;
/// // No data for the entry: no entry handler, `data` is empty at return.
/// let none = KBox::pin_init(RetRegistration::new(place(), 0, 0, false, new(0)), GFP_KERNEL)?;
/// assert!(rp.maxactive() > 0);
/// let mut v = 0u32;
/// // SAFETY: a NUL-terminated string and a valid output pointer.
/// let r = unsafe { kernel::bindings::kstrtouint(s.as_char_ptr(), 10, &mut v) };
/// assert_eq!(r, -22);
/// assert_eq!(rp.handler().hits.load(Ordering::Relaxed), 1);
/// assert_eq!(rp.handler().entries.load(Ordering::Relaxed), 1);
/// assert_eq!(rp.handler().last.load(Ordering::Relaxed) as i32, -22);
/// // (At least ours: it cannot tell its call from others.)
/// assert!(none.handler().hits.load(Ordering::Relaxed) >= 1);
/// assert_eq!(none.handler().entries.load(Ordering::Relaxed), 0);
///
/// // Not a function entry: EINVAL.
/// let h = new(0);
/// let place = Place::Symbol(c"kstrtouint", 1);
/// let bad = KBox::pin_init(RetRegistration::new(place, 0, 0, false, h), GFP_KERNEL);
/// assert!(bad.is_err());
/// # Ok::<(), Error>(())
/// ```
pub type RetRegistration<T> = Probe<Return<T>>;

impl<T: RetHandler> RetRegistration<T> {
    /// Places a return probe on the function at `place` with `maxactive`
    /// preallocated instances (0: the kprobe core's default) and
    /// `data_size` bytes of per-instance data; registered disabled when
    /// `disabled`.
    ///
    /// # Errors
    ///
    /// As [`Registration::new`]; `EINVAL` also when `place` is not a
    /// function entry, or for a `maxactive` past `i32::MAX`.
    pub fn new<'a>(
        place: Place<'a>,
        maxactive: u32,
        data_size: usize,
        disabled: bool,
        handler: T,
    ) -> impl PinInit<Self, Error> + 'a
    where
        T: 'a,
    {
        try_pin_init!(Self {
            // Initialised before `raw` registers: the callbacks read it.
            handler,
            unregistered: Atomic::new(false),
            raw <- Opaque::try_ffi_init(|rp: *mut bindings::kretprobe| {
                let symbol = symbol_of(place)?;
                let maxactive = i32::try_from(maxactive).map_err(|_| EINVAL)?;
                let probe = bindings::kretprobe {
                    kp: new_kprobe(&symbol, place, disabled),
                    handler: Some(ret_handler_callback::<T>),
                    entry_handler: if data_size != 0 {
                        Some(entry_handler_callback::<T>)
                    } else {
                        None
                    },
                    maxactive,
                    data_size,
                    // The rest zero: the C initial state.
                    ..Zeroable::zeroed()
                };
                // SAFETY: `rp` points to the field's memory, valid for
                // writes.
                unsafe { rp.write(probe) };
                // INVARIANT: on success `raw` is registered, with `handler`
                // and `entry_handler` (if any) set to this module's
                // callbacks for `T` and no symbol name; `handler` is
                // initialised before `raw`, and `drop` unregisters `raw`
                // before it is dropped.
                // SAFETY: `rp` is initialised and pinned; `symbol`, which it
                // points into, lives until `forget_symbol` below.
                let r = to_result(unsafe { bindings::register_kretprobe(rp) });
                // SAFETY: `rp` is valid for writes, and so its `kp`.
                unsafe { forget_symbol(ptr::addr_of_mut!((*rp).kp)) };
                r
            }),
        }? Error)
    }

    /// The instances the kprobe core preallocated (`maxactive` after
    /// registration fills in its default).
    pub fn maxactive(&self) -> u32 {
        // SAFETY: `raw` is initialised and pinned; `maxactive` is set at
        // registration.
        unsafe { (*self.raw.get()).maxactive as u32 }
    }

    /// Calls the entry kprobe missed because a kprobe handler was already
    /// running on that CPU (`kp.nmissed`).
    pub fn nmissed_reentered(&self) -> usize {
        // SAFETY: `kp` is valid.
        unsafe { kp_nmissed(self.kp()) }
    }

    /// Calls that found no free instance (`maxactive` in use at once), or a
    /// return hook being freed (`rp.nmissed`).
    pub fn nmissed_no_instance(&self) -> usize {
        // SAFETY: `raw` is valid; the counter changes concurrently.
        (unsafe { ptr::addr_of!((*self.raw.get()).nmissed).read_volatile() }) as usize
    }
}

/// The `struct kretprobe` that instance `ri` belongs to (`get_kretprobe()`),
/// null once it is unregistered (without rethook).
///
/// This and [`get_kretprobe_retaddr`] are C's inlines, a load each, written
/// again: through helpers, each would be a call on every return-probe hit.
///
/// # Safety
///
/// `ri` must be a live kretprobe instance, seen in a kretprobe handler.
#[inline(always)]
unsafe fn get_kretprobe(ri: *mut bindings::kretprobe_instance) -> *mut bindings::kretprobe {
    // SAFETY: rethook's `data` is set once, when the kretprobe is
    // registered, to the `struct kretprobe`.
    #[cfg(CONFIG_KRETPROBE_ON_RETHOOK)]
    return unsafe { (*(*ri).node.rethook).data.cast() };
    // SAFETY: `rph` is set when the instance is allocated and outlives it;
    // its `rp` is cleared (RCU) when the kretprobe is unregistered, and the
    // handlers run under RCU (preemption disabled): an `rcu_dereference()`.
    #[cfg(not(CONFIG_KRETPROBE_ON_RETHOOK))]
    return unsafe { ptr::addr_of!((*(*ri).rph).rp).read_volatile() };
}

/// The return address that instance `ri` replaced (`get_kretprobe_retaddr()`).
///
/// # Safety
///
/// `ri` must be a live kretprobe instance, seen in a kretprobe handler.
#[inline(always)]
unsafe fn get_kretprobe_retaddr(ri: *mut bindings::kretprobe_instance) -> usize {
    // SAFETY: `ri` is valid; rethook keeps the return address in its node.
    #[cfg(CONFIG_KRETPROBE_ON_RETHOOK)]
    return unsafe { (*ri).node.ret_addr };
    // SAFETY: `ri` is valid; the return address is in the instance.
    #[cfg(not(CONFIG_KRETPROBE_ON_RETHOOK))]
    return unsafe { (*ri).ret_addr as usize };
}

/// The [`RetRegistration<T>`] that kretprobe instance `ri` belongs to, and
/// the instance's data; `None` if the kretprobe is being unregistered
/// (without rethook the kprobe core checks this too, before it calls).
///
/// # Safety
///
/// `ri` must be an instance of the `rp` of a live `RetRegistration<T>`,
/// seen in one of its handlers.
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
unsafe fn from_instance<'a, T: RetHandler>(
    ri: *mut bindings::kretprobe_instance,
) -> Option<(&'a RetRegistration<T>, &'a mut [u8])> {
    // SAFETY: the caller passes an instance of our kretprobe in a handler.
    let rp = unsafe { get_kretprobe(ri) };
    if rp.is_null() {
        return None;
    }
    // SAFETY: `rp` is the `raw` of a `RetRegistration<T>`, which outlives
    // its handlers; the instance's data is `data_size` bytes.
    unsafe {
        let reg = &*crate::container_of!(
            rp.cast::<Opaque<bindings::kretprobe>>(),
            RetRegistration<T>,
            raw
        );
        let data =
            core::slice::from_raw_parts_mut((*ri).data.as_mut_ptr().cast::<u8>(), (*rp).data_size);
        Some((reg, data))
    }
}

/// The `entry_handler` of every [`RetRegistration<T>`]: calls [`RetHandler::entry`].
///
/// # Safety
///
/// Called by the kprobe core with an instance of a `RetRegistration<T>`.
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
unsafe extern "C" fn entry_handler_callback<T: RetHandler>(
    ri: *mut bindings::kretprobe_instance,
    regs: *mut bindings::pt_regs,
) -> core::ffi::c_int {
    // SAFETY: the kprobe core passes an instance of our kretprobe.
    let Some((reg, data)) = (unsafe { from_instance::<T>(ri) }) else {
        return 0;
    };
    // SAFETY: the registers of the hit, in the kprobe's pre-handler
    // (preemption disabled), for this call.
    reg.handler.entry(unsafe { PtRegs::from_raw(regs) }, data);
    0
}

/// The `handler` of every [`RetRegistration<T>`]: calls [`RetHandler::ret`] at the return.
///
/// # Safety
///
/// Called by the kprobe core with an instance of a `RetRegistration<T>`.
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
unsafe extern "C" fn ret_handler_callback<T: RetHandler>(
    ri: *mut bindings::kretprobe_instance,
    regs: *mut bindings::pt_regs,
) -> core::ffi::c_int {
    // SAFETY: the kprobe core passes an instance of our kretprobe.
    let Some((reg, data)) = (unsafe { from_instance::<T>(ri) }) else {
        return 0;
    };
    // SAFETY: as above.
    let ret_ip = unsafe { get_kretprobe_retaddr(ri) };
    // SAFETY: the registers at return, with preemption disabled
    // (`rethook_trampoline_handler()`, or `kretprobe_trampoline_handler()`
    // without rethook), for this call.
    reg.handler
        .ret(unsafe { PtRegs::from_raw(regs) }, ret_ip, data);
    0
}

/// Whether kernel lockdown allows kprobes now: `Err(EPERM)` once the kernel is
/// locked down for confidentiality (`LOCKDOWN_KPROBES`), `Ok` otherwise.
///
/// [`Registration::new`] does not check it: a user of kprobes on behalf of
/// user space (as kprobe events are) checks it first, where C does
/// (`__register_trace_kprobe()` in trace_kprobe.c), so that its other
/// answers keep C's order.
///
/// # Examples
///
/// ```
/// // The doctests run before anything could lock the kernel down.
/// assert!(kernel::kprobes::lockdown_allows().is_ok());
/// ```
pub fn lockdown_allows() -> Result {
    // SAFETY: no preconditions.
    to_result(unsafe { bindings::security_locked_down_kprobes() })
}

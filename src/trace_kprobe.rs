// SPDX-License-Identifier: GPL-2.0-only

//! The probes behind `kprobe_events`.
//!
//! An *event* (`events/<GRP>/<EVENT>/`) has one or more *probes* (a kprobe
//! or kretprobe each, with its own fetch programs but the same argument
//! names and types: a multi-probe event). A probe's handler runs its
//! programs and writes the record into every instance the event is enabled
//! in. `kprobe_events` lists probes in creation order, as C does.
//!
//! As in C, the kprobes are registered disarmed and armed while their event
//! is enabled in at least one instance: a probe nobody traces costs nothing.
//!
//! Each probe is also an entry of `dynamic_events` (a [`dyn_event::Entry`]),
//! as C's `trace_kprobe` embeds a `dyn_event`: that file lists, creates and
//! removes them too.
//!
//! Locks, outer first: the tracing core's `event_mutex` (held when the core
//! calls [`Event`]'s callbacks and the `dynamic_events` callbacks; as in C,
//! every change to the probes happens under it), the probe list
//! (`Probes::state`), an event's list of probes to arm (`EventShared::arm`).
//! Nothing takes an earlier one while holding a later one.

use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use kernel::{
    c_str, kallsyms,
    kprobes::{self, HitBuffers, HitCounter, Place, PtRegs},
    prelude::*,
    str::CStr,
    str::CString,
    sync::{Arc, Mutex},
    trace_event::{
        self,
        dyn_event::{self, Args as DynArgs, Entry, Type},
        lock_events, EventFile, EventLock, Field, Fields, Targets, TraceSeq,
    },
    tracefs::SeqFile,
    ThisModule,
};

use crate::kernel_env::{self, cstring, cstring_fmt, HitMachine, KernelEnv, KernelSymbols, Raw};
use crate::probe::{
    arg::{Arg, EntryArgs, EntryList},
    command::{self, ArgList, Env, Place as SpecPlace, Probe, Tokens},
    error::{caret_position, errno, Code, ParseError},
    fetch, format, output,
    removal::{check_append, Removal},
    text::{Bytes, Escaped, Text},
};

/// A probe's arguments, in kernel memory.
pub(crate) struct Args(KVec<Arg>);

impl Args {
    /// The same arguments in a vector of exactly their number: the parser
    /// grows the list by doubling, and an argument takes 368 bytes.
    fn exact(self) -> Result<Self> {
        if self.0.capacity() == self.0.len() {
            return Ok(self);
        }
        let mut v = KVec::with_capacity(self.0.len(), GFP_KERNEL)?;
        for a in self.0.iter() {
            v.push(a.clone(), GFP_KERNEL)?;
        }
        Ok(Args(v))
    }
}

impl Args {
    /// The arguments as a stored probe keeps them: exactly their number,
    /// shared with the record layout of the probe's event.
    fn share(self) -> Result<StoredArgs> {
        Ok(StoredArgs(Arc::new(self.exact()?.0, GFP_KERNEL)?))
    }
}

/// A stored probe's arguments, shared with its event's record layout
/// ([`EventShared::layout`]) when it is the event's first probe.
pub(crate) struct StoredArgs(Arc<KVec<Arg>>);

impl ArgList for StoredArgs {
    fn push(&mut self, _arg: Arg) -> Result<(), ()> {
        Err(())
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

/// A stored probe's symbol, out of line: inline, a symbol takes
/// `MAX_SYMBOL_LEN` (600) bytes whatever its length.
pub(crate) struct StoredSymbol(KVec<u8>);

impl StoredSymbol {
    fn new(s: &[u8]) -> Result<Self> {
        let mut v = KVec::with_capacity(s.len(), GFP_KERNEL)?;
        v.extend_from_slice(s, GFP_KERNEL)?;
        Ok(StoredSymbol(v))
    }
}

impl Text for StoredSymbol {
    fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A stored return probe's entry arguments (`$argN`), just those it has:
/// inline, room for 128 takes 264 bytes.
pub(crate) struct StoredEntry(KVec<u16>);

impl StoredEntry {
    fn new(e: &EntryArgs) -> Result<Self> {
        let mut v = KVec::with_capacity(e.args().len(), GFP_KERNEL)?;
        v.extend_from_slice(e.args(), GFP_KERNEL)?;
        Ok(StoredEntry(v))
    }
}

impl EntryList for StoredEntry {
    fn args(&self) -> &[u16] {
        &self.0
    }
}

/// A probe as the registry keeps it: what varies in size out of line, so
/// that the probe fits a 512-byte allocation.
pub(crate) type StoredProbe = Probe<StoredArgs, StoredSymbol, StoredEntry>;

impl ArgList for Args {
    fn push(&mut self, arg: Arg) -> Result<(), ()> {
        self.0.push(arg, GFP_KERNEL).map_err(|_| ())
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

/// What an event's callbacks and its probes' handlers share.
#[pin_data]
pub(crate) struct EventShared {
    /// The event's name, for the trace text.
    name: command::Name,
    group: command::Name,
    is_return: bool,
    /// The record layout (the first probe's arguments, shared with it:
    /// every probe of the event has the same names, types and sizes).
    layout: Arc<KVec<Arg>>,
    /// `(type, name)` of each field after the common ones, as C strings.
    field_strings: KVec<(CString, CString)>,
    /// The instances the event is enabled in, and perf and BPF while perf
    /// has it open: kept by the event's registration.
    targets: Arc<Targets>,
    /// The event's probes, armed while the event is in use (`in_use`).
    #[pin]
    arm: Mutex<KVec<Kp>>,
    module: &'static ThisModule,
}

impl EventShared {
    /// Adds a probe, armed if the event is enabled somewhere
    /// (`__register_trace_kprobe()` clears `KPROBE_FLAG_DISABLED` then).
    fn attach(&self, kp: &Kp) -> Result {
        let mut arm = self.arm.lock();
        arm.push(kp.clone(), GFP_KERNEL)?;
        if self.in_use() {
            kp.enable()?;
        }
        Ok(())
    }

    /// Forgets a probe (before it is unregistered).
    fn detach(&self, kp: &Kp) {
        let mut arm = self.arm.lock();
        arm.retain(|k| !k.same(kp));
    }

    /// Arms or disarms every probe of the event.
    fn set_armed(&self, on: bool) -> Result {
        for k in self.arm.lock().iter() {
            if on {
                k.enable()?;
            } else {
                let _ = k.disable();
            }
        }
        Ok(())
    }

    fn head_size(&self) -> usize {
        format::head_size(self.is_return)
    }

    /// Enabled in some instance or open by perf (`trace_probe_is_enabled()`:
    /// `TP_FLAG_TRACE | TP_FLAG_PROFILE`): armed, and not removable.
    fn in_use(&self) -> bool {
        self.targets.in_use()
    }
}

/// What a probe's handler needs.
pub(crate) struct ProbeShared {
    spec: StoredProbe,
    event: Arc<EventShared>,
    /// Some argument is a string (its size is known only once fetched).
    dynamic: bool,
    /// Hits, per CPU (`trace_kprobe.nhit`).
    nhit: HitCounter,
    /// Hits with strings nested on a CPU whose scratch buffer was in use
    /// (an interrupt during a handler): not recorded, so counted with the
    /// kprobe core's misses in `kprobe_profile`.
    nested: AtomicU64,
    addr: AtomicUsize,
    maxactive: AtomicU32,
    /// An `@SYM` argument was not found when the probe was defined: it
    /// waits (on a module or an address), and does not register later.
    unresolved: bool,
    buffers: Arc<HitBuffers>,
}

impl ProbeShared {
    /// What `%p` prints for the address of a probe on an address: the
    /// address the kprobe core registered (`kp.addr`, moved past an
    /// `endbr64` on a function's entry), which `kprobe_events` shows and
    /// `-:` matches, as C does (trace_kprobe.c: `trace_kprobe_show()`,
    /// `trace_kprobe_match_command_head()`); the given one until registered.
    fn hashed(&self) -> u64 {
        match self.spec.place {
            SpecPlace::Addr(a) => match self.addr.load(Ordering::Relaxed) {
                0 => KernelEnv.hash_pointer(a),
                r => KernelEnv.hash_pointer(r as u64),
            },
            SpecPlace::Symbol { .. } => 0,
        }
    }

    /// The probe's line in `kprobe_events` and `dynamic_events`.
    fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        format::readback(
            w,
            &self.spec,
            self.hashed(),
            self.maxactive.load(Ordering::Relaxed),
        )
        .map_err(|_| ENOMEM)
    }

    /// Runs the programs and writes a record into each enabled instance,
    /// then hands the hit to perf (`kprobe_dispatcher()`).
    fn record(&self, regs: &PtRegs, edata: &[u8], head: [u64; 2]) {
        let ev = &*self.event;
        // Armed only while in use; a hit racing with disarming is counted
        // and finds nothing to write to, as in C's dispatcher.
        self.nhit.inc();
        let hs = ev.head_size();
        let args = self.spec.args.as_slice();
        if args.is_empty() {
            // Nothing to fetch.
            write(ev, regs, hs, head, 0, |_| {});
            return;
        }
        if !self.dynamic {
            // The record's size is known: fetch straight into it, as C
            // does (once per instance).
            let size = self.spec.size;
            write(ev, regs, hs, head, size, |d| {
                fetch::store(args, size, &HitMachine(regs), edata, hs, d);
            });
            return;
        }
        // Strings: fetch once into the per-CPU scratch buffer, then reserve
        // exactly what they took.
        let done = self.buffers.with(|buf| {
            let Some(payload) = buf.get_mut(hs..) else {
                return;
            };
            let n = fetch::store(args, self.spec.size, &HitMachine(regs), edata, hs, payload);
            let payload = &payload[..n.min(payload.len())];
            write(ev, regs, hs, head, payload.len(), |d| {
                d.copy_from_slice(payload)
            });
        });
        if done.is_none() {
            self.nested.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Writes a record of `len` bytes after the head into each instance the
/// event is enabled in, then (`kprobe_perf_func()`) runs the event's BPF
/// programs and writes the record to perf unless they drop the hit: the
/// head words, then what `fill` puts in the `len` bytes.
fn write(
    ev: &EventShared,
    regs: &PtRegs,
    hs: usize,
    head: [u64; 2],
    len: usize,
    mut fill: impl FnMut(&mut [u8]),
) {
    ev.targets.files().for_each(|f| {
        if f.soft_disabled() {
            return;
        }
        let Some(mut r) = f.reserve_hit(hs + len, regs) else {
            return;
        };
        put(r.bytes(), hs, head, len, &mut fill);
    });
    if ev.targets.perf().is_set() {
        write_perf(ev, regs, hs, head, len, &mut fill);
    }
}

/// The perf side of [`write`], out of the way of the usual hit.
#[cold]
#[inline(never)]
fn write_perf(
    ev: &EventShared,
    regs: &PtRegs,
    hs: usize,
    head: [u64; 2],
    len: usize,
    fill: &mut dyn FnMut(&mut [u8]),
) {
    ev.targets.perf().with(|p| {
        if !p.run_bpf(regs) {
            return;
        }
        if let Some(mut r) = p.reserve(regs, hs + len) {
            put(r.bytes(), hs, head, len, fill);
        }
    });
}

/// Fills a reserved record: the head words, then `fill` for the `len`
/// bytes after the head.
#[inline(always)]
fn put<F: FnMut(&mut [u8]) + ?Sized>(
    b: &mut [u8],
    hs: usize,
    head: [u64; 2],
    len: usize,
    fill: &mut F,
) {
    if let Some(d) = b.get_mut(8..16) {
        d.copy_from_slice(&head[0].to_ne_bytes());
    }
    if hs == format::KRETPROBE_HEAD {
        if let Some(d) = b.get_mut(16..24) {
            d.copy_from_slice(&head[1].to_ne_bytes());
        }
    }
    if let Some(d) = b.get_mut(hs..hs + len) {
        fill(d);
    }
}

/// A probe as listed in `dynamic_events`.
type Shared = Entry<ProbeShared>;

/// The kprobe handler.
pub(crate) struct Hit(Arc<Shared>);

impl kprobes::Handler for Hit {
    fn pre_handler(&self, regs: &PtRegs) {
        // C records the probe's address, not `regs->ip` (one past it with
        // kprobes on ftrace).
        let ip = self.0.addr.load(Ordering::Relaxed) as u64;
        self.0.record(regs, &[], [ip, 0]);
    }
}

/// The kretprobe handlers.
pub(crate) struct RetHit(Arc<Shared>);

impl kprobes::RetHandler for RetHit {
    fn entry(&self, regs: &PtRegs, data: &mut [u8]) {
        // store_trace_entry_data(): the function arguments `$argN` needs.
        for (i, &n) in self.0.spec.entry.args().iter().enumerate() {
            let v = fetch::kernel_argument(&HitMachine(regs), u32::from(n));
            if let Some(d) = data.get_mut(8 * i..8 * i + 8) {
                d.copy_from_slice(&v.to_ne_bytes());
            }
        }
    }

    fn ret(&self, regs: &PtRegs, ret_ip: usize, data: &[u8]) {
        let func = self.0.addr.load(Ordering::Relaxed) as u64;
        self.0.record(regs, data, [func, ret_ip as u64]);
    }
}

/// The trace event's callbacks.
pub(crate) struct Event(Arc<EventShared>);

impl Event {
    /// A new user (an instance or perf), not yet among the targets:
    /// `enable_trace_kprobe()` arms the probes. An enabled event pins the
    /// module: it cannot be unloaded then.
    fn enable(&self) -> Result {
        if !trace_event::module_get(self.0.module) {
            return Err(ENODEV);
        }
        let r = self.0.set_armed(true);
        if r.is_err() {
            // enable_trace_kprobe(): roll back, unless another user keeps
            // the probes armed.
            if !self.0.in_use() {
                let _ = self.0.set_armed(false);
            }
            trace_event::module_put(self.0.module);
        }
        r
    }

    /// A user gone from the targets: `disable_trace_kprobe()` disarms the
    /// probes when it was the last.
    fn disable(&self) -> Result {
        let r = if self.0.in_use() {
            Ok(())
        } else {
            self.0.set_armed(false)
        };
        trace_event::module_put(self.0.module);
        r
    }
}

#[vtable]
impl trace_event::Event for Event {
    fn define_fields<'a>(&'a self, fields: &mut Fields<'a>) -> Result {
        let e = &*self.0;
        for (f, (ty, name)) in format::fields(e.is_return, &e.layout).zip(e.field_strings.iter()) {
            fields.define(&Field {
                ty,
                name,
                offset: f.offset as u32,
                size: f.size as u32,
                is_signed: f.is_signed,
            })?;
        }
        Ok(())
    }

    fn print(&self, record: &[u8], out: &mut TraceSeq) -> core::fmt::Result {
        let e = &*self.0;
        let word = |at: usize| {
            record
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_ne_bytes)
        };
        let head = if e.is_return {
            output::Head::Kretprobe {
                func: word(8),
                ret_ip: word(16),
            }
        } else {
            output::Head::Kprobe { ip: word(8) }
        };
        let payload = record.get(e.head_size()..).unwrap_or(&[]);
        output::print_event(
            &mut Raw(out),
            e.name.as_bytes(),
            head,
            &e.layout,
            payload,
            &KernelSymbols,
        )
    }

    /// `enable_trace_kprobe(call, file)`: the registration adds the file
    /// to the event's targets when this succeeds.
    fn register(&self, _file: &EventFile) -> Result {
        self.enable()
    }

    /// `disable_trace_kprobe(call, file)`: the file has left the targets.
    fn unregister(&self, _file: &EventFile) -> Result {
        self.disable()
    }

    /// `enable_trace_kprobe(call, NULL)`: perf opened the event.
    fn perf_register(&self) -> Result {
        self.enable()
    }

    /// `disable_trace_kprobe(call, NULL)`.
    fn perf_unregister(&self) -> Result {
        self.disable()
    }
}

/// A probe's registration (shared with its event's list of probes to arm).
#[derive(Clone)]
enum Kp {
    /// On a module that is not loaded yet.
    Pending,
    K(Arc<kprobes::Registration<Hit>>),
    R(Arc<kprobes::RetRegistration<RetHit>>),
}

impl Kp {
    /// Arms the probe, unless it is gone with its module
    /// (`__enable_trace_kprobe()` skips those).
    fn enable(&self) -> Result {
        match self {
            Kp::Pending => Ok(()),
            Kp::K(k) if k.gone() => Ok(()),
            Kp::R(r) if r.gone() => Ok(()),
            Kp::K(k) => k.enable(),
            Kp::R(r) => r.enable(),
        }
    }

    fn disable(&self) -> Result {
        match self {
            Kp::Pending => Ok(()),
            Kp::K(k) => k.disable(),
            Kp::R(r) => r.disable(),
        }
    }

    fn same(&self, other: &Kp) -> bool {
        match (self, other) {
            (Kp::K(a), Kp::K(b)) => Arc::ptr_eq(a, b),
            (Kp::R(a), Kp::R(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// `trace_kprobe_module_exist()` (trace_kprobe.c:115-132): false for an
/// address probe and for `MOD:SYM` while `MOD` is not loaded.
fn module_exists<A, S: Text, E>(spec: &Probe<A, S, E>) -> bool {
    if let SpecPlace::Addr(_) = spec.place {
        return false;
    }
    match spec.module() {
        None => true,
        Some(m) => cstring(m).is_ok_and(|m| kallsyms::module_loaded(&m)),
    }
}

/// `within_notrace_func()` (trace_kprobe.c:459-479): whether `addr` is in
/// a function ftrace cannot trace, such as the tracing core's own, where a
/// probe could recurse into itself. A suffixed clone (`foo.isra.0`) counts
/// as its original function `foo` when that one exists.
fn within_notrace_func(addr: usize) -> bool {
    if !kallsyms::in_notrace_function(addr) {
        return false;
    }
    let mut buf = [0u8; kallsyms::NAME_LEN];
    let Some(name) = kallsyms::symbol_name(addr, &mut buf) else {
        return true;
    };
    let Some(dot) = name.iter().position(|&c| c == b'.') else {
        return true;
    };
    match kernel_env::lookup(&name[..dot]) {
        0 => true,
        orig => kallsyms::in_notrace_function(orig as usize),
    }
}

/// Registers the kprobe or kretprobe of a probe.
fn register(shared: &Arc<Shared>) -> Result<Kp> {
    // __register_trace_kprobe() (trace_kprobe.c:498): lockdown first.
    kprobes::lockdown_allows()?;
    // Then traceprobe_update_arg(): an `@SYM` not found.
    if shared.unresolved {
        return Err(ENOENT);
    }
    let spec = &shared.spec;
    let symbol = cstring(spec.symbol.as_bytes())?;
    let (place, addr) = match spec.place {
        SpecPlace::Symbol { offset } => {
            // trace_kprobe_address(): 0 for a symbol not found.
            let a = kallsyms::lookup_name(&symbol);
            (
                Place::Symbol(&symbol, offset),
                if a == 0 {
                    0
                } else {
                    a.wrapping_add(offset as usize)
                },
            )
        }
        SpecPlace::Addr(a) => (Place::Address(a as usize), a as usize),
    };
    // __register_trace_kprobe() refuses notrace functions (without
    // CONFIG_KPROBE_EVENTS_ON_NOTRACE, which the module does not offer).
    if within_notrace_func(addr) {
        let mut buf = [0u8; kallsyms::SYMBOL_LEN];
        let n = kallsyms::sprint_symbol_no_offset(addr, &mut buf);
        pr_warn!(
            "Could not probe notrace function {}\n",
            Escaped(&buf[..n.min(buf.len())])
        );
        return Err(EINVAL);
    }
    // Registered disarmed; the event arms it (`EventShared::attach`).
    if spec.is_return {
        let r = Arc::pin_init(
            kprobes::RetRegistration::new(
                place,
                spec.maxactive,
                spec.entry.data_size(),
                true,
                RetHit(shared.clone()),
            )?,
            GFP_KERNEL,
        )?;
        shared.addr.store(r.address(), Ordering::Relaxed);
        shared.maxactive.store(r.maxactive(), Ordering::Relaxed);
        Ok(Kp::R(r))
    } else {
        let k = Arc::pin_init(
            kprobes::Registration::new(place, true, Hit(shared.clone()))?,
            GFP_KERNEL,
        )?;
        shared.addr.store(k.address(), Ordering::Relaxed);
        Ok(Kp::K(k))
    }
}

/// One line of `kprobe_events`. Unlinked from `dynamic_events` before it
/// is dropped.
struct TraceKprobe {
    shared: Arc<Shared>,
    _probe: Kp,
}

impl Drop for TraceKprobe {
    fn drop(&mut self) {
        // The event's list holds the other reference to the registration:
        // dropping both unregisters the kprobe.
        self.shared.event.detach(&self._probe);
    }
}

impl TraceKprobe {
    fn nmissed(&self) -> usize {
        match &self._probe {
            Kp::Pending => 0,
            Kp::K(k) => k.nmissed(),
            Kp::R(r) => r.nmissed(),
        }
    }
}

// The record heads the probe language lays out start with the kernel's
// `trace_entry`.
const _: () = assert!(format::KPROBE_HEAD == trace_event::ENTRY_SIZE + 8);

/// One `events/<GRP>/<EVENT>/`.
struct TraceEvent {
    shared: Arc<EventShared>,
    reg: Pin<KBox<trace_event::Registration<Event>>>,
}

/// Print fmt text for `CString::try_from_fmt`.
struct PrintFmt<'a>(bool, &'a [Arg]);

impl core::fmt::Display for PrintFmt<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        format::print_fmt(f, self.0, self.1)
    }
}

/// Why a definition failed.
enum Fail {
    /// What C logs in `error_log` (or not), with its errno.
    Parse(ParseError),
    /// Out of memory and the like.
    Kernel(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Kernel(e)
    }
}

impl From<kernel::alloc::AllocError> for Fail {
    fn from(_: kernel::alloc::AllocError) -> Self {
        Fail::Kernel(ENOMEM)
    }
}

/// The probes in creation order, and their events.
struct State {
    probes: KVec<TraceKprobe>,
    events: KVec<TraceEvent>,
    /// Removed probes whose kprobes are still registered: unregistered
    /// together, with one RCU grace period, by [`State::bury`] before the
    /// write or truncation that removed them returns (C waits for one
    /// grace period a probe).
    removed: KVec<Kp>,
    /// A truncation of `dynamic_events` is under way: its `free` calls
    /// leave the kprobes to the last one (see [`Probes::free`]).
    truncating: bool,
}

impl State {
    fn event_of(&self, group: &[u8], name: &[u8]) -> Option<usize> {
        self.events
            .iter()
            .position(|e| e.shared.name.as_bytes() == name && group_of(e) == group)
    }

    /// The probes of `ev`, in creation order.
    fn probes_of<'a>(
        &'a self,
        ev: &'a Arc<EventShared>,
    ) -> impl Iterator<Item = &'a TraceKprobe> + Clone {
        self.probes
            .iter()
            .filter(move |p| Arc::ptr_eq(&p.shared.event, ev))
    }

    fn siblings(&self, ev: &Arc<EventShared>) -> usize {
        self.probes_of(ev).count()
    }

    /// Removes `ev` if no probe is left on it (`unregister_kprobe_event()`).
    fn drop_event_if_empty(&mut self, lock: &EventLock, ev: &Arc<EventShared>) -> Result {
        if self.siblings(ev) != 0 {
            return Ok(());
        }
        let Some(i) = self.events.iter().position(|e| Arc::ptr_eq(&e.shared, ev)) else {
            return Ok(());
        };
        self.events[i].reg.remove(lock)?;
        self.events.retain(|e| !Arc::ptr_eq(&e.shared, ev));
        Ok(())
    }

    /// `unregister_trace_kprobe()` (trace_kprobe.c:522-548): a probe with
    /// siblings goes even while its event is enabled; the last probe of an
    /// event goes with the event, so not while that is enabled or in use.
    fn remove_probe(&mut self, lock: &EventLock, i: usize) -> Result {
        let ev = self.probes[i].shared.event.clone();
        if self.siblings(&ev) <= 1 {
            if ev.in_use() {
                return Err(EBUSY);
            }
            if let Some(e) = self.events.iter_mut().find(|e| Arc::ptr_eq(&e.shared, &ev)) {
                e.reg.remove(lock).map_err(|_| EBUSY)?;
            }
        }
        // Allocates nothing (KVec::retain, patch 0008): the removal cannot
        // fail half-way. The kprobe is unregistered by `bury`, or here when
        // there is no room to keep it until then.
        let kp = core::mem::replace(&mut self.probes[i]._probe, Kp::Pending);
        self.probes[i].shared.event.detach(&kp);
        let _ = self.removed.push(kp, GFP_KERNEL);
        let mut at = 0;
        self.probes.retain(|p| {
            at += 1;
            if at - 1 != i {
                return true;
            }
            p.shared.remove(lock);
            false
        });
        self.drop_event_if_empty(lock, &ev)
    }

    /// Unregisters the kprobes of the removed probes, with one grace
    /// period for the kprobes and one for the kretprobes
    /// (`unregister_kprobes()`), then frees them.
    fn bury(&mut self) {
        kprobes::unregister_all(self.removed.iter().filter_map(|k| match k {
            Kp::K(k) => Some(&**k),
            _ => None,
        }));
        kprobes::unregister_all_ret(self.removed.iter().filter_map(|k| match k {
            Kp::R(r) => Some(&**r),
            _ => None,
        }));
        // Dropping them frees them; their kprobes are unregistered.
        drop(core::mem::take(&mut self.removed));
    }
}

fn group_of(e: &TraceEvent) -> &[u8] {
    e.shared.group.as_bytes()
}

/// Everything behind `kprobe_events`; the `dynamic_events` type of kprobe
/// events.
#[pin_data]
pub(crate) struct Probes {
    #[pin]
    state: Mutex<State>,
    errors: trace_event::ErrorLog,
    buffers: Arc<HitBuffers>,
    module: &'static ThisModule,
    group: &'static [u8],
}

/// The registered [`Probes`].
pub(crate) type Kprobes = Type<Probes>;

impl Probes {
    /// No probes; events default to group `group`. Registered as the
    /// `dynamic_events` type of kprobe events.
    pub(crate) fn new(module: &'static ThisModule, group: &'static [u8]) -> Result<Arc<Kprobes>> {
        let buffers = Arc::new(HitBuffers::new()?, GFP_KERNEL)?;
        let errors = trace_event::ErrorLog::new(&crate::probe::error::TEXTS)?;
        Arc::pin_init(
            Type::new(pin_init!(Probes {
                state <- kernel::new_mutex!(State {
                    probes: KVec::new(),
                    events: KVec::new(),
                    removed: KVec::new(),
                    truncating: false,
                }),
                errors,
                buffers,
                module,
                group,
            })),
            GFP_KERNEL,
        )
    }

    /// Logs `e` in `error_log` as C does, against the command as `tokens`
    /// hold it; returns the write's error.
    fn fail(&self, line: &[u8], tokens: &Tokens, e: ParseError) -> Error {
        if let Some((code, caret)) = e.log {
            let mut cmd = KVec::new();
            for (i, t) in tokens.iter(line).enumerate() {
                if (i != 0 && cmd.push(b' ', GFP_KERNEL).is_err())
                    || cmd.extend_from_slice(t, GFP_KERNEL).is_err()
                {
                    return Error::from_errno(-e.errno);
                }
            }
            let pos = caret_position(tokens.iter(line), caret);
            if let Ok(cmd) = cstring(&cmd) {
                self.errors
                    .log(c_str!("trace_kprobe"), &cmd, code as usize, pos);
            }
        }
        Error::from_errno(-e.errno)
    }

    /// Runs one command line of `kprobe_events`
    /// (`create_or_delete_trace_kprobe()`).
    pub(crate) fn command(ty: &Kprobes, line: &[u8]) -> Result {
        if line.first() == Some(&b'-') {
            return ty.data().remove(line);
        }
        Self::define(ty, line).map_err(|e| {
            if e == dyn_event::canceled() {
                EINVAL
            } else {
                e
            }
        })
    }

    /// Defines a probe (`trace_kprobe_create()`): `ECANCELED` for a line
    /// that is not a probe definition.
    fn define(ty: &Kprobes, line: &[u8]) -> Result {
        let this = ty.data();
        // Kprobes a truncation of `dynamic_events` left when it stopped
        // half-way (see `free`).
        this.bury();
        let mut tokens = KBox::new(Tokens::new(), GFP_KERNEL)?;
        match this.create(ty, line, &mut tokens) {
            Ok(()) => Ok(()),
            Err(Fail::Parse(e)) => Err(this.fail(line, &tokens, e)),
            Err(Fail::Kernel(e)) => Err(e),
        }
    }

    fn create(&self, ty: &Kprobes, line: &[u8], tokens: &mut Tokens) -> Result<(), Fail> {
        let mut spec = match command::parse(line, tokens, &KernelEnv, Args(KVec::new())) {
            Ok(None) => return Ok(()),
            Ok(Some(p)) => p,
            Err(e) => return Err(Fail::Parse(e)),
        };
        if self.group != command::DEFAULT_GROUP && spec.group.as_bytes() == command::DEFAULT_GROUP {
            spec.group = command::Name::from_bytes(self.group).unwrap_or_default();
        }
        // traceprobe_update_arg() runs in __register_trace_kprobe(): an
        // unknown `@SYM` is an ENOENT of the registration, which a probe on
        // a module not loaded (or on an address) survives as pending
        // (trace_kprobe.c:616-620).
        let module_exists = module_exists(&spec);
        let unresolved =
            match command::resolve_symbols(&mut spec.args.0, &|n| kernel_env::lookup(n)) {
                Ok(()) => false,
                Err(e) if e == crate::probe::error::errno::ENOENT && !module_exists => true,
                Err(e) => return Err(Fail::Parse(command::registration_error(e))),
            };
        let spec = spec
            .map(
                Args::share,
                |s| StoredSymbol::new(s.as_bytes()),
                |e| StoredEntry::new(&e),
            )
            .map_err(Fail::Kernel)?;

        // register_trace_kprobe() runs under event_mutex.
        let lock = lock_events();
        let mut state = self.state.lock();
        // A probe on an existing event joins it.
        let existing = state.event_of(spec.group.as_bytes(), spec.event.as_bytes());
        let event = match existing {
            Some(i) => {
                let ev = state.events[i].shared.clone();
                check_append(&spec, state.probes_of(&ev).map(|p| &p.shared.spec))
                    .map_err(Fail::Parse)?;
                ev
            }
            None => self.new_event(&lock, &mut state, &spec)?,
        };

        let dynamic = spec.args.as_slice().iter().any(|a| a.dynamic);
        let maxactive = spec.maxactive;
        let shared = Arc::pin_init(
            Entry::new(ProbeShared {
                spec,
                event: event.clone(),
                dynamic,
                nhit: HitCounter::new()?,
                nested: AtomicU64::new(0),
                addr: AtomicUsize::new(0),
                // What the spec asks for until the kprobe core says (C lists
                // `rN:` for a pending probe too).
                maxactive: AtomicU32::new(maxactive),
                unresolved,
                buffers: self.buffers.clone(),
            }),
            GFP_KERNEL,
        );
        let shared = match shared {
            Ok(s) => s,
            Err(e) => {
                let _ = state.drop_event_if_empty(&lock, &event);
                return Err(Fail::Kernel(e));
            }
        };
        let probe = match register(&shared) {
            Ok(p) => p,
            // A probe on a module that is not loaded waits for it; so does
            // a probe on an address in no symbol (trace_kprobe.c:616-620).
            Err(e) if e == ENOENT && !module_exists => {
                pr_warn!("This probe might be able to register after target module is loaded. Continue.\n");
                Kp::Pending
            }
            Err(e) => {
                drop(shared);
                let _ = state.drop_event_if_empty(&lock, &event);
                return Err(Fail::Parse(command::registration_error(-e.to_errno())));
            }
        };
        let r = shared
            .event
            .attach(&probe)
            .and_then(|()| Ok(state.probes.reserve(1, GFP_KERNEL)?));
        if let Err(e) = r {
            shared.event.detach(&probe);
            drop(probe);
            drop(shared);
            let _ = state.drop_event_if_empty(&lock, &event);
            return Err(Fail::Kernel(e));
        }
        shared.add(&lock, ty);
        // Cannot fail: reserved above.
        let _ = state.probes.push(
            TraceKprobe {
                shared,
                _probe: probe,
            },
            GFP_KERNEL,
        );
        Ok(())
    }

    /// Creates the event of a new probe.
    fn new_event(
        &self,
        lock: &EventLock,
        state: &mut State,
        spec: &StoredProbe,
    ) -> Result<Arc<EventShared>, Fail> {
        let mut field_strings = KVec::new();
        for f in format::fields(spec.is_return, spec.args.as_slice()) {
            let ty = if f.count != 0 {
                CString::try_from_fmt(kernel::fmt!("{}[{}]", f.ty, f.count))?
            } else {
                CString::try_from_fmt(kernel::fmt!("{}", f.ty))?
            };
            field_strings.push((ty, cstring(f.name)?), GFP_KERNEL)?;
        }
        let layout = spec.args.0.clone();
        let targets = Targets::new()?;
        let event_targets = targets.clone();
        let shared = Arc::pin_init(
            pin_init!(EventShared {
                name: spec.event,
                group: spec.group,
                is_return: spec.is_return,
                layout,
                field_strings,
                targets: event_targets,
                arm <- kernel::new_mutex!(KVec::new()),
                module: self.module,
            }),
            GFP_KERNEL,
        )?;
        let system = cstring(spec.group.as_bytes())?;
        let name = cstring(spec.event.as_bytes())?;
        let print_fmt = cstring_fmt(format_args!(
            "{}",
            PrintFmt(spec.is_return, spec.args.as_slice())
        ))?;
        state.events.reserve(1, GFP_KERNEL)?;
        let reg = KBox::pin_init(
            trace_event::Registration::new(
                lock,
                system,
                name,
                print_fmt,
                self.module,
                targets,
                Event(shared.clone()),
            ),
            GFP_KERNEL,
        )
        .map_err(|e| {
            if e == EEXIST {
                Fail::Parse(ParseError::logged(errno::EEXIST, Code::EventExist, 0, 0))
            } else {
                Fail::Kernel(e)
            }
        })?;
        // Cannot fail: reserved above.
        let _ = state.events.push(
            TraceEvent {
                shared: shared.clone(),
                reg,
            },
            GFP_KERNEL,
        );
        Ok(shared)
    }

    /// `-:[GRP/][EVENT] ...`: removes the matching probes in order, stops
    /// at the first that cannot go (`dyn_event_release()`). Their kprobes
    /// are unregistered by [`Probes::bury`] when the write has run all its
    /// lines.
    fn remove(&self, line: &[u8]) -> Result {
        let mut tokens = KBox::new(Tokens::new(), GFP_KERNEL)?;
        let r = Removal::parse(line, &mut tokens).map_err(|e| Error::from_errno(-e))?;
        let lock = lock_events();
        let mut state = self.state.lock();
        let mut found = false;
        let mut i = 0;
        let mut res = Ok(());
        while i < state.probes.len() {
            let p = &state.probes[i].shared;
            if !r.matches(line, &tokens, &p.spec, p.hashed()) {
                i += 1;
                continue;
            }
            found = true;
            res = state.remove_probe(&lock, i);
            if res.is_err() {
                break;
            }
        }
        lock.reset_instances();
        res?;
        if found {
            Ok(())
        } else {
            Err(ENOENT)
        }
    }

    /// The `kprobe_event=` parameter: definitions separated by `;`, with
    /// `,` for spaces, applied in order (a bad one is reported and skipped),
    /// then every event is enabled in the top instance, as
    /// `setup_boot_kprobe_events()` and `enable_boot_kprobe_events()` do
    /// (trace_kprobe.c:2032-2070).
    ///
    /// Never fails: it runs in module init after events can exist (and be
    /// enabled), and a failed init would free them while registered.
    pub(crate) fn boot_events(ty: &Kprobes, list: &[u8]) {
        if let Err(e) = Self::try_boot_events(ty, list) {
            pr_warn!(
                "Failed to set up the kprobe_event parameter: {}\n",
                e.to_errno()
            );
        }
    }

    fn try_boot_events(ty: &Kprobes, list: &[u8]) -> Result {
        let mut buf = KVec::with_capacity(list.len(), GFP_KERNEL)?;
        for &c in list {
            buf.push(if c == b',' { b' ' } else { c }, GFP_KERNEL)?;
        }
        for cmd in buf.split(|&c| c == b';').filter(|c| !c.is_empty()) {
            if let Err(e) = Self::command(ty, cmd) {
                pr_warn!("Failed to add event({}): {}\n", e.to_errno(), Escaped(cmd));
            }
        }
        ty.data().bury();
        let mut names = KVec::new();
        {
            let _lock = lock_events();
            for e in ty.data().state.lock().events.iter() {
                names.push(
                    (
                        cstring(e.shared.group.as_bytes())?,
                        cstring(e.shared.name.as_bytes())?,
                    ),
                    GFP_KERNEL,
                )?;
            }
        }
        for (group, name) in names.iter() {
            if let Err(e) = trace_event::set_enabled(group, name, true) {
                pr_warn!(
                    "Failed to enable event {}: {}\n",
                    Escaped(name.as_bytes()),
                    e.to_errno()
                );
            }
        }
        Ok(())
    }

    /// A module is coming: (re-)register the probes on its symbols, as
    /// `trace_kprobe_module_callback()` does (a probe registered before is
    /// gone since the module went away).
    pub(crate) fn module_coming(&self, module: &[u8]) {
        let _lock = lock_events();
        let mut state = self.state.lock();
        for p in state.probes.iter_mut() {
            if p.shared.spec.module() != Some(module) {
                continue;
            }
            p.shared.event.detach(&p._probe);
            p._probe = Kp::Pending;
            match register(&p.shared).and_then(|k| p.shared.event.attach(&k).map(|()| k)) {
                Ok(k) => p._probe = k,
                Err(e) => pr_warn!(
                    "Failed to re-register probe {} on {}: {}\n",
                    Escaped(p.shared.spec.event.as_bytes()),
                    Escaped(module),
                    e.to_errno()
                ),
            }
        }
    }

    /// `echo > kprobe_events`: removes every probe, or none if one is in
    /// use (`dyn_events_release_all()`).
    pub(crate) fn clear(&self) -> Result {
        let lock = lock_events();
        let mut state = self.state.lock();
        let mut res = if state.events.iter().any(|e| e.shared.in_use()) {
            Err(EBUSY)
        } else {
            Ok(())
        };
        while res.is_ok() && !state.probes.is_empty() {
            res = state.remove_probe(&lock, 0);
        }
        state.bury();
        lock.reset_instances();
        res
    }

    /// Unregisters the kprobes of the probes removed by the lines of a
    /// write to `kprobe_events` (`-:` lines), together: called when the
    /// write has run its lines.
    pub(crate) fn bury(&self) {
        let _lock = lock_events();
        let mut state = self.state.lock();
        state.truncating = false;
        state.bury();
    }

    /// The read-back of `kprobe_events`.
    pub(crate) fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        let _lock = lock_events();
        for p in self.state.lock().probes.iter() {
            p.shared.show(w)?;
        }
        Ok(())
    }

    /// `kprobe_profile`: `  %-44s %15lu %15lu` per probe.
    pub(crate) fn profile(&self, w: &mut dyn core::fmt::Write) -> Result {
        let _lock = lock_events();
        for p in self.state.lock().probes.iter() {
            let s = &p.shared;
            let name = s.spec.event.as_bytes();
            let pad = 44usize.saturating_sub(name.len());
            writeln!(
                w,
                "  {}{:pad$} {:>15} {:>15}",
                Bytes(name),
                "",
                s.nhit.sum(),
                p.nmissed() as u64 + s.nested.load(Ordering::Relaxed)
            )
            .map_err(|_| ENOMEM)?;
        }
        Ok(())
    }
}

/// `dynamic_events` (trace_kprobe.c: `trace_kprobe_ops`).
impl dyn_event::Provider for Probes {
    type Entry = ProbeShared;

    fn create(ty: &Kprobes, command: &CStr) -> Result {
        Self::define(ty, command.as_bytes())
    }

    fn show(&self, _lock: &EventLock, entry: &ProbeShared, m: &mut SeqFile) -> Result {
        entry.show(&mut Raw(m))
    }

    /// `trace_kprobe_is_busy()`: enabled somewhere or open by perf.
    ///
    /// Only `dyn_events_release_all()` asks (trace_dynevent.c:235-242), of
    /// every entry before it frees any: a truncation of `dynamic_events` is
    /// under way, which frees every probe unless one is busy.
    fn is_busy(&self, _lock: &EventLock, entry: &ProbeShared) -> bool {
        self.state.lock().truncating = true;
        entry.event.in_use()
    }

    /// `trace_kprobe_release()`. The kprobes go with one grace period for
    /// all when the probes go together: in a truncation, when the last
    /// probe has gone; otherwise (a `-:` line, which asks `match` first,
    /// trace_dynevent.c:`dyn_event_release()`) at once, one at a time as in
    /// C, since the core tells of no end to a removal of several. A
    /// truncation that stopped half-way leaves its kprobes to the next
    /// write or truncation.
    fn free(&self, lock: &EventLock, entry: &ProbeShared) -> Result {
        let mut state = self.state.lock();
        match state
            .probes
            .iter()
            .position(|p| core::ptr::eq(&**p.shared, entry))
        {
            Some(i) => {
                let r = state.remove_probe(lock, i);
                if !state.truncating || state.probes.is_empty() {
                    state.truncating = false;
                    state.bury();
                }
                r
            }
            None => Err(ENOENT),
        }
    }

    /// `trace_kprobe_match()`.
    fn matches(
        &self,
        _lock: &EventLock,
        system: Option<&CStr>,
        event: &CStr,
        args: DynArgs<'_>,
        entry: &ProbeShared,
    ) -> bool {
        // A `-:` line: no truncation is under way (`free` buries at once).
        self.state.lock().truncating = false;
        let r = Removal {
            group: system.map(|s| s.as_bytes()),
            event: event.as_bytes(),
        };
        r.matches_words(args.map(|a| a.as_bytes()), &entry.spec, entry.hashed())
    }
}

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
//! Locks, outer first: the probe list (`Probes::state`), the tracing core's
//! `event_mutex` (held when the core calls [`Event`]'s callbacks), an
//! event's list of probes to arm (`EventShared::arm`). Nothing takes an
//! earlier one while holding a later one.

use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

use kernel::{
    c_str,
    kprobes::{self, HitBuffers, Place, PtRegs},
    prelude::*,
    str::CString,
    sync::{Arc, Mutex},
    trace_event::{self, EventFile, Field, Fields, FileSet, TraceSeq},
    ThisModule,
};

use crate::glue::{self, HitMachine, KernelEnv, KernelSymbols};
use crate::probe::{
    arg::Arg,
    command::{self, ArgList, Place as SpecPlace, Probe, Tokens},
    error::{caret_position, errno, Code, ParseError},
    fetch, format, output,
    removal::{check_append, Removal},
    text::Bytes,
};

/// A probe's arguments, in kernel memory.
pub(crate) struct Args(KVec<Arg>);

impl ArgList for Args {
    fn push(&mut self, arg: Arg) -> Result<(), ()> {
        self.0.push(arg, GFP_KERNEL).map_err(|_| ())
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

fn cstring(bytes: &[u8]) -> Result<CString> {
    CString::try_from_fmt(kernel::fmt!("{}", Bytes(bytes)))
}

/// What an event's callbacks and its probes' handlers share.
#[pin_data]
pub(crate) struct EventShared {
    /// The event's name, for the trace text.
    name: command::Name,
    group: command::Name,
    is_return: bool,
    /// The record layout (the first probe's arguments: every probe of the
    /// event has the same names, types and sizes).
    layout: KVec<Arg>,
    /// `(type, name)` of each field after the common ones, as C strings.
    field_strings: KVec<(CString, CString)>,
    files: FileSet,
    /// The event's probes, armed while `files` is not empty.
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
        if !self.files.is_empty() {
            kp.enable()?;
        }
        Ok(())
    }

    /// Forgets a probe (before it is unregistered).
    fn detach(&self, kp: &Kp) {
        let mut arm = self.arm.lock();
        let _ = filter(&mut arm, |k| Ok(!k.same(kp)));
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
}

/// What a probe's handler needs.
pub(crate) struct ProbeShared {
    spec: Probe<Args>,
    event: Arc<EventShared>,
    nhit: AtomicU64,
    addr: AtomicUsize,
    maxactive: AtomicU32,
    buffers: Arc<HitBuffers>,
}

impl ProbeShared {
    /// Runs the programs and writes a record into each enabled instance.
    fn record(&self, regs: &PtRegs, edata: &[u8], head: [u64; 2]) {
        let ev = &*self.event;
        if ev.files.is_empty() {
            return;
        }
        self.nhit.fetch_add(1, Ordering::Relaxed);
        let hs = ev.head_size();
        let _ = self.buffers.with(|buf| {
            let Some(payload) = buf.get_mut(hs..) else {
                return;
            };
            let n = fetch::store(self.spec.args.as_slice(), self.spec.size, &HitMachine(regs), edata, hs, payload);
            let payload = &payload[..n.min(payload.len())];
            ev.files.for_each(|f| {
                if f.soft_disabled() {
                    return;
                }
                let Some(mut r) = f.reserve(hs + payload.len()) else {
                    return;
                };
                let b = r.bytes();
                if let Some(d) = b.get_mut(8..16) {
                    d.copy_from_slice(&head[0].to_ne_bytes());
                }
                if hs == format::KRETPROBE_HEAD {
                    if let Some(d) = b.get_mut(16..24) {
                        d.copy_from_slice(&head[1].to_ne_bytes());
                    }
                }
                if let Some(d) = b.get_mut(hs..hs + payload.len()) {
                    d.copy_from_slice(payload);
                }
            });
        });
    }
}

/// The kprobe handler.
pub(crate) struct Hit(Arc<ProbeShared>);

impl kprobes::Handler for Hit {
    fn pre_handler(&self, regs: &PtRegs) {
        // C records the probe's address, not `regs->ip` (one past it with
        // kprobes on ftrace).
        let ip = self.0.addr.load(Ordering::Relaxed) as u64;
        self.0.record(regs, &[], [ip, 0]);
    }
}

/// The kretprobe handlers.
pub(crate) struct RetHit(Arc<ProbeShared>);

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
        output::print_event(out, e.name.as_bytes(), head, &e.layout, payload, &KernelSymbols)
    }

    fn register(&self, file: &EventFile) -> Result {
        // An enabled event pins the module: it cannot be unloaded then.
        if !trace_event::module_get(self.0.module) {
            return Err(ENODEV);
        }
        let r = self.0.files.add(file).and_then(|()| self.0.set_armed(true));
        if r.is_err() {
            // enable_trace_kprobe(): roll back.
            self.0.files.remove(file);
            if self.0.files.is_empty() {
                let _ = self.0.set_armed(false);
            }
            trace_event::module_put(self.0.module);
        }
        r
    }

    fn unregister(&self, file: &EventFile) -> Result {
        self.0.files.remove(file);
        if self.0.files.is_empty() {
            self.0.set_armed(false)?;
        }
        trace_event::module_put(self.0.module);
        Ok(())
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

/// Registers the kprobe or kretprobe of a probe.
fn register(shared: &Arc<ProbeShared>) -> Result<Kp> {
    let spec = &shared.spec;
    let symbol = cstring(spec.symbol.as_bytes())?;
    let place = match spec.place {
        SpecPlace::Symbol { offset } => Place::Symbol(&symbol, offset),
        SpecPlace::Addr(a) => Place::Address(a as usize),
    };
    // Registered disarmed; the event arms it (`EventShared::attach`).
    if spec.is_return {
        let r = Arc::pin_init(
            kprobes::RetRegistration::new(place, spec.maxactive, spec.entry.data_size(), true, RetHit(shared.clone()))?,
            GFP_KERNEL,
        )?;
        shared.addr.store(r.address(), Ordering::Relaxed);
        shared.maxactive.store(r.maxactive(), Ordering::Relaxed);
        Ok(Kp::R(r))
    } else {
        let k = Arc::pin_init(kprobes::Registration::new(place, true, Hit(shared.clone()))?, GFP_KERNEL)?;
        shared.addr.store(k.address(), Ordering::Relaxed);
        Ok(Kp::K(k))
    }
}

/// One line of `kprobe_events`.
struct TraceKprobe {
    shared: Arc<ProbeShared>,
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

    fn hashed(&self) -> u64 {
        match self.shared.spec.place {
            SpecPlace::Addr(a) => KernelEnv.hash(a),
            SpecPlace::Symbol { .. } => 0,
        }
    }
}

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

/// Maps a parse error to the write's error.
fn to_error(e: ParseError) -> Error {
    let n = if e.errno == errno::ECANCELED { errno::EINVAL } else { e.errno };
    Error::from_errno(-n)
}

/// The probes in creation order, and their events.
struct State {
    probes: KVec<TraceKprobe>,
    events: KVec<TraceEvent>,
}

impl State {
    fn event_of(&self, group: &[u8], name: &[u8]) -> Option<usize> {
        self.events
            .iter()
            .position(|e| e.shared.name.as_bytes() == name && group_of(e) == group)
    }

    /// Removes the events that have no probe left; stops at one that is
    /// busy.
    fn drop_empty_events(&mut self) -> Result {
        let probes = &self.probes;
        filter(&mut self.events, |e| {
            if probes.iter().any(|p| Arc::ptr_eq(&p.shared.event, &e.shared)) {
                return Ok(true);
            }
            if !e.shared.files.is_empty() {
                return Err(EBUSY);
            }
            e.reg.as_mut().remove()?;
            Ok(false)
        })
    }
}

fn group_of(e: &TraceEvent) -> &[u8] {
    e.shared.group.as_bytes()
}

/// Keeps the items for which `f` says true, in order; after the first
/// error, keeps the rest untouched and returns it.
fn filter<T>(list: &mut KVec<T>, mut f: impl FnMut(&mut T) -> Result<bool>) -> Result {
    let mut keep = KVec::with_capacity(list.len(), GFP_KERNEL)?;
    let old = core::mem::take(list);
    let mut result = Ok(());
    for mut p in old {
        let k = match result {
            Ok(()) => f(&mut p).unwrap_or_else(|e| {
                result = Err(e);
                true
            }),
            Err(_) => true,
        };
        if k {
            // Cannot fail: the capacity is there.
            let _ = keep.push(p, GFP_KERNEL);
        }
    }
    *list = keep;
    result
}

/// Everything behind `kprobe_events`.
#[pin_data]
pub(crate) struct Probes {
    #[pin]
    state: Mutex<State>,
    errors: trace_event::ErrorLog,
    buffers: Arc<HitBuffers>,
    module: &'static ThisModule,
    group: &'static [u8],
}

impl Probes {
    /// No probes; events default to group `group`.
    pub(crate) fn new(module: &'static ThisModule, group: &'static [u8]) -> Result<Arc<Self>> {
        let buffers = Arc::new(HitBuffers::new()?, GFP_KERNEL)?;
        let errors = trace_event::ErrorLog::new(&crate::probe::error::TEXTS)?;
        Arc::pin_init(
            pin_init!(Probes {
                state <- kernel::new_mutex!(State { probes: KVec::new(), events: KVec::new() }),
                errors,
                buffers,
                module,
                group,
            }),
            GFP_KERNEL,
        )
    }

    /// Logs `e` in `error_log` as C does, against the command as `tokens`
    /// hold it; returns the write's error.
    fn fail(&self, line: &[u8], tokens: &Tokens, e: ParseError) -> Error {
        if let Some((code, caret)) = e.log {
            let mut cmd = KVec::new();
            for (i, t) in tokens.iter(line).enumerate() {
                if (i != 0 && cmd.push(b' ', GFP_KERNEL).is_err()) || cmd.extend_from_slice(t, GFP_KERNEL).is_err() {
                    return to_error(e);
                }
            }
            let pos = caret_position(tokens.iter(line), caret);
            if let Ok(cmd) = cstring(&cmd) {
                self.errors.log(c_str!("trace_kprobe"), &cmd, code as usize, pos);
            }
        }
        to_error(e)
    }

    /// Runs one command line of `kprobe_events`.
    pub(crate) fn command(&self, line: &[u8]) -> Result {
        if line.first() == Some(&b'-') {
            return self.remove(line);
        }
        let mut tokens = KBox::new(Tokens::new(), GFP_KERNEL)?;
        match self.create(line, &mut tokens) {
            Ok(()) => Ok(()),
            Err(Fail::Parse(e)) => Err(self.fail(line, &tokens, e)),
            Err(Fail::Kernel(e)) => Err(e),
        }
    }

    fn create(&self, line: &[u8], tokens: &mut Tokens) -> Result<(), Fail> {
        let mut spec = match command::parse(line, tokens, &KernelEnv, Args(KVec::new())) {
            Ok(None) => return Ok(()),
            Ok(Some(p)) => p,
            Err(e) => return Err(Fail::Parse(e)),
        };
        if self.group != command::DEFAULT_GROUP && spec.group.as_bytes() == command::DEFAULT_GROUP {
            spec.group = command::Name::from_bytes(self.group).unwrap_or_default();
        }
        command::resolve_symbols(&mut spec.args.0, &|n| glue::lookup(n))
            .map_err(|e| Fail::Parse(command::registration_error(e)))?;

        let mut state = self.state.lock();
        // register_trace_kprobe(): a probe on an existing event joins it.
        let existing = state.event_of(spec.group.as_bytes(), spec.event.as_bytes());
        let event = match existing {
            Some(i) => {
                let ev = state.events[i].shared.clone();
                let siblings = state.probes.iter().filter(|p| Arc::ptr_eq(&p.shared.event, &ev)).map(|p| &p.shared.spec);
                check_append(&spec, siblings).map_err(Fail::Parse)?;
                ev
            }
            None => self.new_event(&mut state, &spec)?,
        };

        let on_module = spec.symbol.as_bytes().contains(&b':');
        let shared = Arc::new(
            ProbeShared {
                spec,
                event,
                nhit: AtomicU64::new(0),
                addr: AtomicUsize::new(0),
                maxactive: AtomicU32::new(0),
                buffers: self.buffers.clone(),
            },
            GFP_KERNEL,
        )?;
        let probe = match register(&shared) {
            Ok(p) => p,
            // A probe on a module that is not loaded waits for it
            // (trace_kprobe.c:665-668).
            Err(e) if e == ENOENT && on_module => Kp::Pending,
            Err(e) => {
                drop(shared);
                let _ = state.drop_empty_events();
                return Err(Fail::Parse(command::registration_error(-e.to_errno())));
            }
        };
        if let Err(e) = shared.event.attach(&probe) {
            shared.event.detach(&probe);
            drop(probe);
            drop(shared);
            let _ = state.drop_empty_events();
            return Err(Fail::Kernel(e));
        }
        state.probes.push(TraceKprobe { shared, _probe: probe }, GFP_KERNEL)?;
        Ok(())
    }

    /// Creates the event of a new probe.
    fn new_event(&self, state: &mut State, spec: &Probe<Args>) -> Result<Arc<EventShared>, Fail> {
        let mut field_strings = KVec::new();
        for f in format::fields(spec.is_return, spec.args.as_slice()) {
            let ty = if f.count != 0 {
                CString::try_from_fmt(kernel::fmt!("{}[{}]", f.ty, f.count))?
            } else {
                CString::try_from_fmt(kernel::fmt!("{}", f.ty))?
            };
            field_strings.push((ty, cstring(f.name)?), GFP_KERNEL)?;
        }
        let mut layout = KVec::with_capacity(spec.args.as_slice().len(), GFP_KERNEL)?;
        for a in spec.args.as_slice() {
            layout.push(a.clone(), GFP_KERNEL)?;
        }
        let shared = Arc::pin_init(
            pin_init!(EventShared {
                name: spec.event,
                group: spec.group,
                is_return: spec.is_return,
                layout,
                field_strings,
                files: FileSet::new(),
                arm <- kernel::new_mutex!(KVec::new()),
                module: self.module,
            }),
            GFP_KERNEL,
        )?;
        let system = cstring(spec.group.as_bytes())?;
        let name = cstring(spec.event.as_bytes())?;
        let print_fmt = CString::try_from_fmt(kernel::fmt!("{}", PrintFmt(spec.is_return, spec.args.as_slice())))?;
        let reg = KBox::pin_init(
            trace_event::Registration::new(system, name, print_fmt, self.module, Event(shared.clone())),
            GFP_KERNEL,
        )
        .map_err(|e| {
            if e == EEXIST {
                Fail::Parse(ParseError::logged(errno::EEXIST, Code::EventExist, 0, 0))
            } else {
                Fail::Kernel(e)
            }
        })?;
        state.events.push(TraceEvent { shared: shared.clone(), reg }, GFP_KERNEL)?;
        Ok(shared)
    }

    /// `-:[GRP/][EVENT] ...`: removes the matching probes in order
    /// (`dyn_event_release()`). A probe with siblings goes even while its
    /// event is enabled; the last probe of an enabled event is `EBUSY`
    /// (`unregister_trace_kprobe()`).
    fn remove(&self, line: &[u8]) -> Result {
        let mut tokens = KBox::new(Tokens::new(), GFP_KERNEL)?;
        let r = Removal::parse(line, &mut tokens).map_err(|e| Error::from_errno(-e))?;
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let mut found = false;
        let mut counts = KVec::with_capacity(state.probes.len(), GFP_KERNEL)?;
        for p in state.probes.iter() {
            let n = state.probes.iter().filter(|q| Arc::ptr_eq(&q.shared.event, &p.shared.event)).count();
            counts.push(n, GFP_KERNEL)?;
        }
        let mut i = 0;
        let res = filter(&mut state.probes, |p| {
            let siblings = counts.get(i).copied().unwrap_or(1);
            i += 1;
            if !r.matches(line, &tokens, &p.shared.spec, p.hashed()) {
                return Ok(true);
            }
            found = true;
            if siblings <= 1 && !p.shared.event.files.is_empty() {
                return Err(EBUSY);
            }
            // The kprobe is unregistered when `p` is dropped.
            Ok(false)
        });
        let res = res.and_then(|()| state.drop_empty_events());
        res?;
        if found {
            Ok(())
        } else {
            Err(ENOENT)
        }
    }

    /// A module is coming: (re-)register the probes on its symbols, as
    /// `trace_kprobe_module_callback()` does (a probe registered before is
    /// gone since the module went away).
    pub(crate) fn module_coming(&self, module: &[u8]) {
        let mut state = self.state.lock();
        for p in state.probes.iter_mut() {
            let sym = p.shared.spec.symbol.as_bytes();
            if sym.len() <= module.len() || &sym[..module.len()] != module || sym[module.len()] != b':' {
                continue;
            }
            p.shared.event.detach(&p._probe);
            p._probe = Kp::Pending;
            match register(&p.shared).and_then(|k| p.shared.event.attach(&k).map(|()| k)) {
                Ok(k) => p._probe = k,
                Err(e) => pr_warn!(
                    "Failed to re-register probe {} on {}: {}\n",
                    Bytes(p.shared.spec.event.as_bytes()),
                    Bytes(module),
                    e.to_errno()
                ),
            }
        }
    }

    /// `echo > kprobe_events`: removes every probe, or none if one is in use.
    pub(crate) fn clear(&self) -> Result {
        let mut state = self.state.lock();
        if state.events.iter().any(|e| !e.shared.files.is_empty()) {
            return Err(EBUSY);
        }
        state.probes = KVec::new();
        state.drop_empty_events()
    }

    /// The read-back of `kprobe_events`.
    pub(crate) fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.state.lock().probes.iter() {
            let s = &p.shared;
            format::readback(w, &s.spec, p.hashed(), s.maxactive.load(Ordering::Relaxed)).map_err(|_| ENOMEM)?;
        }
        Ok(())
    }

    /// `kprobe_profile`: `  %-44s %15lu %15lu` per probe.
    pub(crate) fn profile(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.state.lock().probes.iter() {
            let s = &p.shared;
            let name = s.spec.event.as_bytes();
            let pad = 44usize.saturating_sub(name.len());
            writeln!(
                w,
                "  {}{:pad$} {:>15} {:>15}",
                Bytes(name),
                "",
                s.nhit.load(Ordering::Relaxed),
                p.nmissed()
            )
            .map_err(|_| ENOMEM)?;
        }
        Ok(())
    }
}

// SPDX-License-Identifier: GPL-2.0-only

//! The probes behind `kprobe_events`: each a trace event plus a kprobe or
//! kretprobe whose handler runs the probe's fetch programs and writes the
//! record into every instance the event is enabled in.
//!
//! The kprobes are registered armed; a hit does nothing but return while
//! the event is enabled nowhere. (C registers them disarmed and arms them on
//! enable, which saves the trap when nobody traces: not done yet.)

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
    removal::Removal,
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

/// What the event callbacks and the probe handler share.
pub(crate) struct Shared {
    spec: Probe<Args>,
    /// `(type, name)` of each field after the common ones, as C strings.
    field_strings: KVec<(CString, CString)>,
    files: FileSet,
    nhit: AtomicU64,
    addr: AtomicUsize,
    maxactive: AtomicU32,
    buffers: Arc<HitBuffers>,
    module: &'static ThisModule,
}

fn cstring(bytes: &[u8]) -> Result<CString> {
    CString::try_from_fmt(kernel::fmt!("{}", Bytes(bytes)))
}

impl Shared {
    fn head_size(&self) -> usize {
        format::head_size(self.spec.is_return)
    }

    /// Runs the programs and writes a record into each enabled instance.
    fn record(&self, regs: &PtRegs, edata: &[u8], head: [u64; 2]) {
        if self.files.is_empty() {
            return;
        }
        self.nhit.fetch_add(1, Ordering::Relaxed);
        let hs = self.head_size();
        let _ = self.buffers.with(|buf| {
            let Some(payload) = buf.get_mut(hs..) else {
                return;
            };
            let n = fetch::store(self.spec.args.as_slice(), self.spec.size, &HitMachine(regs), edata, hs, payload);
            let payload = &payload[..n.min(payload.len())];
            self.files.for_each(|f| {
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
pub(crate) struct Hit(Arc<Shared>);

impl kprobes::Handler for Hit {
    fn pre_handler(&self, regs: &PtRegs) {
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

/// The trace event.
pub(crate) struct Event(Arc<Shared>);

#[vtable]
impl trace_event::Event for Event {
    fn define_fields<'a>(&'a self, fields: &mut Fields<'a>) -> Result {
        let s = &*self.0;
        for (f, (ty, name)) in format::fields(s.spec.is_return, s.spec.args.as_slice()).zip(s.field_strings.iter()) {
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
        let s = &*self.0;
        let word = |at: usize| {
            record
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_ne_bytes)
        };
        let head = if s.spec.is_return {
            output::Head::Kretprobe { func: word(8), ret_ip: word(16) }
        } else {
            output::Head::Kprobe { ip: word(8) }
        };
        let payload = record.get(s.head_size()..).unwrap_or(&[]);
        output::print_event(out, s.spec.event.as_bytes(), head, s.spec.args.as_slice(), payload, &KernelSymbols)
    }

    fn register(&self, file: &EventFile) -> Result {
        if !trace_event::module_get(self.0.module) {
            return Err(ENODEV);
        }
        let r = self.0.files.add(file);
        if r.is_err() {
            trace_event::module_put(self.0.module);
        }
        r
    }

    fn unregister(&self, file: &EventFile) -> Result {
        self.0.files.remove(file);
        trace_event::module_put(self.0.module);
        Ok(())
    }
}

enum Kp {
    /// On a module that is not loaded yet.
    Pending,
    K(Pin<KBox<kprobes::Registration<Hit>>>),
    R(Pin<KBox<kprobes::RetRegistration<RetHit>>>),
}

/// One line of `kprobe_events`.
pub(crate) struct TraceKprobe {
    shared: Arc<Shared>,
    event: Pin<KBox<trace_event::Registration<Event>>>,
    probe: Kp,
}

/// Keeps the probes for which `f` says true, in order; after the first
/// error, keeps the rest untouched and returns it.
fn filter(list: &mut KVec<TraceKprobe>, mut f: impl FnMut(&mut TraceKprobe) -> Result<bool>) -> Result {
    let mut keep = KVec::with_capacity(list.len(), GFP_KERNEL)?;
    let old = core::mem::replace(list, KVec::new());
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

impl TraceKprobe {
    /// Removes the event (unless enabled somewhere: `EBUSY`); the probe goes
    /// when `self` is dropped.
    fn remove_event(&mut self) -> Result {
        if !self.shared.files.is_empty() {
            return Err(EBUSY);
        }
        self.event.as_mut().remove()
    }

    fn nmissed(&self) -> usize {
        match &self.probe {
            Kp::Pending => 0,
            Kp::K(k) => k.nmissed(),
            Kp::R(r) => r.nmissed(),
        }
    }
}

/// Print fmt text for `CString::try_from_fmt`.
struct PrintFmt<'a>(&'a Probe<Args>);

impl core::fmt::Display for PrintFmt<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        format::print_fmt(f, self.0.is_return, self.0.args.as_slice())
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

/// Every probe, in creation order.
#[pin_data]
pub(crate) struct Probes {
    #[pin]
    list: Mutex<KVec<TraceKprobe>>,
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
                list <- kernel::new_mutex!(KVec::new()),
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

        let mut list = self.list.lock();
        if list
            .iter()
            .any(|p| p.shared.spec.event.as_bytes() == spec.event.as_bytes() && p.shared.spec.group.as_bytes() == spec.group.as_bytes())
        {
            // Appending to an existing event (multi-probe) is not done yet.
            return Err(Fail::Kernel(EEXIST));
        }
        let mut field_strings = KVec::new();
        for f in format::fields(spec.is_return, spec.args.as_slice()) {
            let ty = if f.count != 0 {
                CString::try_from_fmt(kernel::fmt!("{}[{}]", f.ty, f.count))?
            } else {
                CString::try_from_fmt(kernel::fmt!("{}", f.ty))?
            };
            field_strings.push((ty, cstring(f.name)?), GFP_KERNEL)?;
        }
        let system = cstring(spec.group.as_bytes())?;
        let name = cstring(spec.event.as_bytes())?;
        let print_fmt = CString::try_from_fmt(kernel::fmt!("{}", PrintFmt(&spec)))?;
        let symbol = cstring(spec.symbol.as_bytes())?;
        let (place_sym, place_off, place_addr) = match spec.place {
            SpecPlace::Symbol { offset } => (true, offset, 0),
            SpecPlace::Addr(a) => (false, 0, a as usize),
        };
        let is_return = spec.is_return;
        let maxactive = spec.maxactive;
        let data_size = spec.entry.data_size();
        let shared = Arc::new(
            Shared {
                spec,
                field_strings,
                files: FileSet::new(),
                nhit: AtomicU64::new(0),
                addr: AtomicUsize::new(0),
                maxactive: AtomicU32::new(0),
                buffers: self.buffers.clone(),
                module: self.module,
            },
            GFP_KERNEL,
        )?;
        let event = KBox::pin_init(
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
        let place = if place_sym {
            Place::Symbol(&symbol, place_off)
        } else {
            Place::Address(place_addr)
        };
        let probe = if is_return {
            KBox::pin_init(
                kprobes::RetRegistration::new(place, maxactive, data_size, false, RetHit(shared.clone()))?,
                GFP_KERNEL,
            )
            .map(|r| {
                shared.addr.store(r.address(), Ordering::Relaxed);
                shared.maxactive.store(r.maxactive(), Ordering::Relaxed);
                Kp::R(r)
            })
        } else {
            KBox::pin_init(kprobes::Registration::new(place, false, Hit(shared.clone()))?, GFP_KERNEL).map(|k| {
                shared.addr.store(k.address(), Ordering::Relaxed);
                Kp::K(k)
            })
        };
        let probe = match probe {
            Ok(p) => p,
            // A probe on a module that is not loaded waits for it.
            Err(e) if e == ENOENT && shared.spec.symbol.as_bytes().contains(&b':') => Kp::Pending,
            Err(e) => {
                let mut event = event;
                let _ = event.as_mut().remove();
                return Err(Fail::Parse(command::registration_error(-e.to_errno())));
            }
        };
        list.push(TraceKprobe { shared, event, probe }, GFP_KERNEL)?;
        Ok(())
    }

    /// `-:[GRP/][EVENT] ...`: removes the matching probes in order, stopping
    /// at the first that is in use (`EBUSY`, as `dyn_event_release()`).
    fn remove(&self, line: &[u8]) -> Result {
        let mut tokens = KBox::new(Tokens::new(), GFP_KERNEL)?;
        let r = Removal::parse(line, &mut tokens).map_err(|e| Error::from_errno(-e))?;
        let mut list = self.list.lock();
        let mut found = false;
        filter(&mut list, |p| {
            let hashed = match p.shared.spec.place {
                SpecPlace::Addr(a) => glue::KernelEnv.hash(a),
                SpecPlace::Symbol { .. } => 0,
            };
            if !r.matches(line, &tokens, &p.shared.spec, hashed) {
                return Ok(true);
            }
            found = true;
            p.remove_event()?;
            Ok(false)
        })?;
        if found {
            Ok(())
        } else {
            Err(ENOENT)
        }
    }

    /// `echo > kprobe_events`: removes every probe, or none if one is in use.
    pub(crate) fn clear(&self) -> Result {
        let mut list = self.list.lock();
        if list.iter().any(|p| !p.shared.files.is_empty()) {
            return Err(EBUSY);
        }
        filter(&mut list, |p| p.remove_event().map(|()| false))
    }

    /// The read-back of `kprobe_events`.
    pub(crate) fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.list.lock().iter() {
            let s = &p.shared;
            let hashed = match s.spec.place {
                SpecPlace::Addr(a) => glue::KernelEnv.hash(a),
                SpecPlace::Symbol { .. } => 0,
            };
            format::readback(w, &s.spec, hashed, s.maxactive.load(Ordering::Relaxed)).map_err(|_| ENOMEM)?;
        }
        Ok(())
    }

    /// `kprobe_profile`: `  %-44s %15lu %15lu` per probe.
    pub(crate) fn profile(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.list.lock().iter() {
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

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
//! The three things and where each lives:
//!
//! - **The registry**, [`Probes`]: the `dynamic_events` type of kprobe
//!   events (registered as a `Type<Probes>`), behind `kprobe_events`. Under
//!   its lock ([`State`]): the probes in creation order, the events'
//!   registrations, and the probes removed whose kprobes still wait to be
//!   unregistered (all together, with one grace period: [`State::bury`]).
//! - **A probe**, [`TraceKprobe`], in one of three states: pending (not
//!   registered: its module is not loaded, or its address is in no
//!   symbol), a kprobe or a kretprobe (registered disarmed, armed while its
//!   event is in use). What its handler reads on a hit (its spec, its
//!   event) is a [`ProbeShared`], linked into `dynamic_events`; the handler
//!   the kprobe core calls is a [`Hit`], which holds the `ProbeShared` and
//!   the counters (the kprobes crate takes the handler by value, and the
//!   orphan rule wants a local type to implement its traits on). The
//!   registry's list holds the probe, and so does its event's list of
//!   probes to arm.
//! - **An event**, [`EventShared`]: what its callbacks and its probes'
//!   handlers share (its strings, [`strings::EventStrings`], its targets,
//!   its probes to arm). The tracing core's callbacks are an [`Event`],
//!   which holds it (the same reason as `Hit`) and the record layout. The
//!   registry keeps the event's registration.
//!
//! A definition (`Probes::create`, which the tracing core calls with
//! `event_mutex` held, from `dynamic_events` or, through `Type::create`,
//! from `kprobe_events`) parses the line, resolves its `@SYM` arguments,
//! then, under the module's lock, joins the event of the same group and
//! name after C's checks (`probe::removal::check_append`) or makes a new
//! one, registers the kprobe and adds it to the event. A failure after the
//! event was found or made is undone by a `ScopeGuard` over the definition
//! under way (`Creating`): the probe leaves the event, and a new event goes
//! again.
//!
//! A removal (`-:`, a truncation, the module's unload: the tracing core's
//! `dyn_event_release()` and `dyn_events_release_all()`, which call the
//! type's `match` and `free` with `event_mutex` held) takes a probe out of
//! the registry and its event; the last probe of an event goes only with the
//! event, so not while that is in use (`EBUSY`, as
//! `unregister_trace_kprobe()`). The kprobes of removed probes are not
//! unregistered one by one: they wait in `State::removed` and go together,
//! with one RCU grace period where C waits one a probe, at the end of a write
//! to `kprobe_events`, of a truncation, or when the tracing core says that a
//! `dynamic_events` removal is done (the `released` callback of
//! `dyn_event_operations`, added by the series). With no memory to keep a
//! removed probe in `State::removed`, its kprobe is unregistered at once: a
//! removal never fails half-way.
//!
//! When the module is the kernel's only kprobe event provider, its
//! `dynamic_events` type registers ahead of the others (the uprobe type), as
//! C's does; a line both would take gets the kprobe type's answer.
//!
//! Locks, outer first: the tracing core's `event_mutex`, which the module
//! never takes itself (the core holds it when it calls [`Event`]'s
//! callbacks and the `dynamic_events` callbacks, `create` included: as in
//! C, every definition and removal happens under it), the probe list
//! (`Probes::state`), an event's probes and users (`EventShared::arm`).
//! Nothing takes an earlier one while holding a later one: the files'
//! readers and the module notifier take `state` alone, and nothing that
//! takes `event_mutex` (`Type::create`, `Type::release`,
//! `Type::release_all`, `trace_event::set_enabled`, dropping a
//! registration that is not removed) is called with `state` or `arm` held,
//! nor from a callback of the core.

mod event;
mod hit;
mod registration;
mod stored;
mod strings;

use event::{Event, EventShared};
use hit::{count, Hit};
use registration::{module_exists, register};
use stored::{Args, Exact, StoredProbe};
use strings::EventStrings;

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize, Ordering};

use kernel::{
    kprobes::{self, HitBuffers},
    prelude::*,
    seq_file::SeqFile,
    str::{CStr, CString},
    sync::{Arc, Mutex},
    trace_event::{
        self,
        dyn_event::{self, Args as DynArgs, Entry, Type},
        EventLock,
    },
    types::ScopeGuard,
    ThisModule,
};

use crate::kernel_env::{self, cstring, KernelEnv, Raw};
use crate::probe::{
    command::{self, ArgList, Names, Place as SpecPlace, Tokens},
    env::Env,
    error::{caret_position, errno, Code, ParseError},
    format,
    removal::{check_append, Removal},
    text::{Bytes, Escaped, Text},
};

/// What a probe is, for its read-back, its event and its handler.
pub(crate) struct ProbeShared {
    spec: StoredProbe,
    /// The symbol of a probe on a symbol, as given (`SYM` or `MOD:SYM`),
    /// NUL-terminated: what the kprobe core is given, and what perf and
    /// BPF are told (`Event::describe_kprobe`).
    symbol: Option<Arc<CString>>,
    event: Arc<EventShared>,
    /// Some argument is a string (its size is known only once fetched).
    dynamic: bool,
    /// Every argument a fixed-size field with a shortcut (a value, the
    /// memory it points to, a dereference chain, a bitfield), the fields
    /// one after the other (`fetch::plain`): the hit writes them without
    /// the fetch stages.
    plain: bool,
    /// For a probe on an address: how far the kprobe core moved it when it
    /// registered (past an `endbr64` at a function's entry: 4), which
    /// `kprobe_events` shows (`kp.addr`, as C). The registered address
    /// itself is the handler's ([`Hit::addr`]).
    moved: AtomicU8,
    maxactive: AtomicU32,
    /// An `@SYM` argument was not found when the probe was defined: it
    /// waits (on a module or an address), and does not register later.
    unresolved: bool,
}

impl ProbeShared {
    /// What `%p` prints for the address of a probe on an address: the
    /// address the kprobe core registered (`kp.addr`, moved past an
    /// `endbr64` on a function's entry), which `kprobe_events` shows and
    /// `-:` matches, as C does (trace_kprobe.c: `trace_kprobe_show()`,
    /// `trace_kprobe_match_command_head()`); the given one until registered.
    fn hashed(&self) -> u64 {
        match self.spec.place {
            SpecPlace::Addr(a) => {
                let moved = u64::from(self.moved.load(Ordering::Relaxed));
                KernelEnv::new().hash_pointer(a.wrapping_add(moved))
            }
            SpecPlace::Symbol { .. } => 0,
        }
    }

    /// The probe's group and event names: its event's.
    fn names(&self) -> Names<'_> {
        Names {
            group: self.event.group(),
            event: self.event.name(),
        }
    }

    /// The probe's line in `kprobe_events` and `dynamic_events`.
    fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        format::readback(
            w,
            &self.spec,
            self.names(),
            self.hashed(),
            self.maxactive.load(Ordering::Relaxed),
        )
        .map_err(|_| ENOMEM)
    }
}

/// A probe: one line of `kprobe_events` and of `dynamic_events`, with its
/// kprobe or kretprobe once registered. Cloned into its event's list of
/// probes to arm ([`EventShared::attach`]); unlinked from it
/// ([`EventShared::detach`]) before the list of probes lets it go, which
/// breaks the cycle event -> probe -> event.
#[derive(Clone)]
pub(super) enum TraceKprobe {
    /// Not registered: on a module that is not loaded yet, or on an
    /// address in no symbol (`register_trace_kprobe()`, `append_trace_kprobe()`).
    Pending(Arc<Entry<ProbeShared>>),
    /// A kprobe, registered disarmed (gone if its module went away).
    Kprobe(Arc<kprobes::Registration<Hit>>),
    /// A kretprobe, likewise.
    Kretprobe(Arc<kprobes::RetRegistration<Hit>>),
}

impl TraceKprobe {
    /// What the probe's handler needs.
    fn shared(&self) -> &Arc<Entry<ProbeShared>> {
        match self {
            TraceKprobe::Pending(s) => s,
            TraceKprobe::Kprobe(k) => &k.handler().probe,
            TraceKprobe::Kretprobe(r) => &r.handler().probe,
        }
    }

    /// Arms the probe, unless it is gone with its module
    /// (`__enable_trace_kprobe()` skips those).
    pub(super) fn enable(&self) -> Result {
        match self {
            TraceKprobe::Pending(_) => Ok(()),
            TraceKprobe::Kprobe(k) if k.gone() => Ok(()),
            TraceKprobe::Kretprobe(r) if r.gone() => Ok(()),
            TraceKprobe::Kprobe(k) => k.enable(),
            TraceKprobe::Kretprobe(r) => r.enable(),
        }
    }

    pub(super) fn disable(&self) -> Result {
        match self {
            TraceKprobe::Pending(_) => Ok(()),
            TraceKprobe::Kprobe(k) => k.disable(),
            TraceKprobe::Kretprobe(r) => r.disable(),
        }
    }

    /// The same probe.
    pub(super) fn same(&self, other: &TraceKprobe) -> bool {
        Arc::ptr_eq(self.shared(), other.shared())
    }

    /// The kprobe core's misses: hits on a CPU where a kprobe handler was
    /// running, and a return probe's calls that found no free instance.
    fn nmissed(&self) -> (u64, u64) {
        match self {
            TraceKprobe::Pending(_) => (0, 0),
            TraceKprobe::Kprobe(k) => (k.nmissed() as u64, 0),
            TraceKprobe::Kretprobe(r) => {
                (r.nmissed_reentered() as u64, r.nmissed_no_instance() as u64)
            }
        }
    }

    /// Unregisters the kprobe now (one grace period), keeping the object
    /// and its counts; a later drop does not unregister it again.
    fn unregister(&self) {
        match self {
            TraceKprobe::Pending(_) => {}
            TraceKprobe::Kprobe(k) => kprobes::unregister_all(core::iter::once(&**k)),
            TraceKprobe::Kretprobe(r) => kprobes::unregister_all(core::iter::once(&**r)),
        }
    }

    /// Where it probes, for perf and BPF: as `kprobe_profile`, its misses
    /// are the kprobe core's and the nested hits.
    pub(super) fn describe(&self) -> trace_event::KprobeDesc {
        let s = self.shared();
        let addr = match self {
            TraceKprobe::Kprobe(k) if !k.gone() => k.address(),
            TraceKprobe::Kretprobe(r) if !r.gone() => r.address(),
            _ => 0,
        };
        trace_event::KprobeDesc {
            symbol: s.symbol.clone(),
            offset: match s.spec.place {
                SpecPlace::Symbol { offset } => offset as usize,
                SpecPlace::Addr(_) => 0,
            },
            addr,
            missed: self.missed() as usize,
            is_return: s.spec.is_return,
        }
    }

    /// `kprobe_profile`'s misses: the kprobe core's and the nested hits.
    fn missed(&self) -> u64 {
        let (reentered, no_instance) = self.nmissed();
        reentered + no_instance + self.counts()[count::NESTED]
    }

    /// Its handler's counts (a probe never registered has none).
    fn counts(&self) -> hit::Counts {
        match self {
            TraceKprobe::Pending(_) => Default::default(),
            TraceKprobe::Kprobe(k) => k.handler().counts(),
            TraceKprobe::Kretprobe(r) => r.handler().counts(),
        }
    }
}

/// The columns of `kprobe_misses` after the event's name.
const MISSES_COLUMNS: [&str; 8] = [
    "hits",
    "missed",
    "recursion",
    "maxactive",
    "filtered",
    "disabled",
    "no_buffer",
    "faulted",
];

/// The width `kprobe_misses` pads an event's name to (longer ones push the
/// line on), and each count's.
const MISSES_NAME_WIDTH: usize = 32;
const MISSES_WIDTH: usize = 10;

// The record heads the probe language lays out start with the kernel's
// `trace_entry`.
const _: () = assert!(format::TRACE_ENTRY_SIZE == trace_event::ENTRY_SIZE);

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
    /// The events (`events/<GRP>/<EVENT>/`), registered with the tracing
    /// core.
    events: KVec<trace_event::EventBox<Event>>,
    /// Removed probes whose kprobes are still registered: unregistered
    /// together, with one RCU grace period, by [`State::bury`] before the
    /// write or truncation that removed them returns (C waits for one
    /// grace period a probe).
    removed: KVec<TraceKprobe>,
}

impl Drop for State {
    fn drop(&mut self) {
        // Breaks the cycles event -> probe -> event (see [`TraceKprobe`]).
        for p in self.probes.iter() {
            p.shared().event.detach(p);
        }
    }
}

/// perf's kprobe PMU: the module's local events ([`Probes::create_local`]).
#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
pub(crate) struct Local(pub(crate) Arc<Type<Probes>>);

#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
impl trace_event::local::LocalKprobes for Local {
    type Event = Event;

    fn create_local(
        &self,
        place: kprobes::Place<'_>,
        is_return: bool,
    ) -> Result<trace_event::EventBox<Event>> {
        self.0.data().create_local(place, is_return)
    }
}

/// C's warning for a probe that waits for its module (`register_trace_kprobe()`,
/// `append_trace_kprobe()`).
fn warn_pending() {
    pr_warn!("This probe might be able to register after target module is loaded. Continue.\n");
}

/// A definition under way, after it found or made the probe's event
/// (`Probes::create`): what its rollback undoes.
struct Creating<'a> {
    state: &'a mut State,
    /// The new probe, once registered (or pending).
    probe: Option<TraceKprobe>,
}

impl State {
    fn event_of(&self, group: &[u8], name: &[u8]) -> Option<usize> {
        self.events
            .iter()
            .map(|e| &e.data().shared)
            .position(|e| e.name() == name && e.group() == group)
    }

    /// The probes of `ev`, in creation order.
    fn probes_of<'a>(
        &'a self,
        ev: &'a Arc<EventShared>,
    ) -> impl Iterator<Item = &'a TraceKprobe> + Clone {
        self.probes
            .iter()
            .filter(move |p| Arc::ptr_eq(&p.shared().event, ev))
    }

    /// Where `ev`'s registration is in `events`.
    fn event_index(&self, ev: &Arc<EventShared>) -> Option<usize> {
        self.events
            .iter()
            .position(|e| Arc::ptr_eq(&e.data().shared, ev))
    }

    fn siblings(&self, ev: &Arc<EventShared>) -> usize {
        self.probes_of(ev).count()
    }

    /// Removes `ev` if no probe is left on it (`unregister_kprobe_event()`).
    fn drop_event_if_empty(&mut self, lock: &EventLock, ev: &Arc<EventShared>) -> Result {
        if self.siblings(ev) != 0 {
            return Ok(());
        }
        let Some(i) = self.event_index(ev) else {
            return Ok(());
        };
        self.events[i].remove(lock)?;
        self.events.retain(|e| !Arc::ptr_eq(&e.data().shared, ev));
        Ok(())
    }

    /// `unregister_trace_kprobe()` (trace_kprobe.c): a probe with
    /// siblings goes even while its event is enabled; the last probe of an
    /// event goes with the event, so not while that is enabled or in use.
    fn remove_probe(&mut self, lock: &EventLock, i: usize) -> Result {
        let ev = self.probes[i].shared().event.clone();
        if self.siblings(&ev) <= 1 {
            if ev.in_use() {
                return Err(EBUSY);
            }
            if let Some(i) = self.event_index(&ev) {
                self.events[i].remove(lock).map_err(|_| EBUSY)?;
            }
        }
        // Allocates nothing: the removal cannot fail half-way. The kprobe is
        // unregistered by `bury`, or here (the last reference dropped) when
        // there is no room to keep it until then.
        let p = self.probes.remove(i)?;
        ev.detach(&p);
        // Disarmed now, unregistered with the others by `bury` (a removal
        // that another process's `kprobe_events` write defers records no
        // more in the meantime).
        let _ = p.disable();
        // The entry leaves `dynamic_events` when `free` returns (the kernel
        // crate takes it out): nothing fails from here on. The event, if
        // this was its last probe, was removed above.
        let _ = self.removed.push(p, GFP_KERNEL);
        let _ = self.drop_event_if_empty(lock, &ev);
        Ok(())
    }

    /// Unregisters the kprobes of the removed probes, with one grace
    /// period for the kprobes and one for the kretprobes
    /// (`unregister_kprobes()`), then frees them.
    fn bury(&mut self) {
        kprobes::unregister_all(self.removed.iter().filter_map(|k| match k {
            TraceKprobe::Kprobe(k) => Some(&**k),
            _ => None,
        }));
        kprobes::unregister_all(self.removed.iter().filter_map(|k| match k {
            TraceKprobe::Kretprobe(r) => Some(&**r),
            _ => None,
        }));
        // Dropping them frees them; their kprobes are unregistered.
        drop(core::mem::take(&mut self.removed));
    }
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
    /// The `kprobe_events` writes running: their `-:` lines' kprobes are
    /// unregistered when each has run all its lines ([`Probes::write_done`]).
    writes: AtomicUsize,
    /// Set once the module's init can no longer fail ([`Probes::set_ready`]).
    /// Until then a definition is refused: an event in use when a failed
    /// init frees the module would be left with the module's code gone.
    ready: AtomicBool,
}

impl Probes {
    /// No probes; events default to group `group`. Registered as the
    /// `dynamic_events` type of kprobe events, ahead of the other types
    /// unless the kernel has its own kprobe events.
    pub(crate) fn new(
        module: &'static ThisModule,
        group: &'static [u8],
    ) -> Result<Arc<Type<Probes>>> {
        let buffers = Arc::new(HitBuffers::new()?, GFP_KERNEL)?;
        let errors = trace_event::ErrorLog::new(crate::kernel_env::DIALECT.texts())?;
        let probes = pin_init!(Probes {
            state <- kernel::new_mutex!(State {
                probes: KVec::new(),
                events: KVec::new(),
                removed: KVec::new(),
            }),
            errors,
            buffers,
            module,
            group,
            writes: AtomicUsize::new(0),
            ready: AtomicBool::new(false),
        });
        if cfg!(CONFIG_KPROBE_EVENTS) {
            Arc::pin_init(Type::new(probes), GFP_KERNEL)
        } else {
            // The kernel's kprobe type of `dynamic_events` comes before the
            // uprobe one; as its replacement, so does this.
            Arc::pin_init(Type::new_first(probes), GFP_KERNEL)
        }
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
                self.errors.log(c"trace_kprobe", &cmd, code as usize, pos);
            }
        }
        Error::from_errno(-e.errno)
    }

    /// Runs one command line of `kprobe_events`
    /// (`create_or_delete_trace_kprobe()`): as C, through the core, which
    /// holds `event_mutex` around the definition ([`Probes::define`]) or
    /// the removal ([`dyn_event::Provider::matches`] and `free`).
    pub(crate) fn command(ty: &Type<Probes>, line: &[u8]) -> Result {
        // (`run_commands` cut the line at a NUL, as C does.)
        let cmd = cstring(line)?;
        if line.first() == Some(&b'-') {
            return ty.release(&cmd);
        }
        ty.create(&cmd)
            .map_err(|e| if e == ECANCELED { EINVAL } else { e })
    }

    /// Defines a probe (`trace_kprobe_create()`): `ECANCELED` for a line
    /// that is not a probe definition. `event_mutex` is held
    /// (`register_trace_kprobe()` runs under it; here the parse does too).
    fn define(ty: &Type<Probes>, lock: &EventLock, line: &[u8]) -> Result {
        let this = ty.data();
        if !this.ready.load(Ordering::Acquire) {
            return Err(EBUSY);
        }
        let mut tokens = new_tokens()?;
        match this.create(ty, lock, line, &mut tokens) {
            Ok(()) => Ok(()),
            Err(Fail::Parse(e)) => Err(this.fail(line, &tokens, e)),
            Err(Fail::Kernel(e)) => Err(e),
        }
    }

    fn create(
        &self,
        ty: &Type<Probes>,
        lock: &EventLock,
        line: &[u8],
        tokens: &mut Tokens,
    ) -> Result<(), Fail> {
        // The environment holds the probed function's BTF while the line
        // is parsed.
        let env = KernelEnv::new();
        let parsed = command::parse(line, tokens, &env, Args(KVec::new()));
        let mut spec = match parsed {
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
        // (`register_trace_kprobe()`, `append_trace_kprobe()`).
        let module_exists = module_exists(&spec);
        let unresolved =
            match command::resolve_symbols(&mut spec.args.0, &|n| kernel_env::lookup(n)) {
                Ok(()) => false,
                Err(e) if e == crate::probe::error::errno::ENOENT && !module_exists => true,
                Err(e) => return Err(Fail::Parse(command::registration_error(e))),
            };
        // The stored probe's names are its event's.
        let (group, name) = (spec.group, spec.event);
        let names = Names {
            group: group.as_bytes(),
            event: name.as_bytes(),
        };
        let spec = spec
            .map(
                Args::share,
                |s| Exact::new(Text::as_bytes(&s)),
                |e| Exact::new(e.args()),
                |_| Ok(()),
            )
            .map_err(Fail::Kernel)?;

        let mut state = self.state.lock();
        // A probe on an existing event joins it.
        let existing = state.event_of(names.group, names.event);
        let (event, event_index) = match existing {
            Some(i) => {
                let ev = state.events[i].data().shared.clone();
                check_append(&spec, state.probes_of(&ev).map(|p| &p.shared().spec))
                    .map_err(Fail::Parse)?;
                (ev, i)
            }
            None => self.new_event(lock, &mut state, &spec, names)?,
        };
        // From here on, a failure leaves the registry as it was: the probe,
        // if it got that far, leaves the event's list of probes to arm and
        // is unregistered (the registry never held it); the event goes if
        // it has no probe (it was new).
        let mut creating = ScopeGuard::new_with_data(
            Creating {
                state: &mut state,
                probe: None,
            },
            |c: Creating<'_>| {
                if let Some(p) = c.probe {
                    event.detach(&p);
                }
                let _ = c.state.drop_event_if_empty(lock, &event);
            },
        );

        let dynamic = spec.args.as_slice().iter().any(|a| a.dynamic);
        let plain = crate::probe::fetch::plain(spec.args.as_slice(), spec.size);
        let maxactive = spec.maxactive;
        let symbol = match spec.place {
            SpecPlace::Symbol { .. } => {
                Some(Arc::new(cstring(spec.symbol.as_bytes())?, GFP_KERNEL)?)
            }
            SpecPlace::Addr(_) => None,
        };
        let shared = Arc::pin_init(
            Entry::new(ProbeShared {
                spec,
                symbol,
                event: event.clone(),
                dynamic,
                plain,
                moved: AtomicU8::new(0),
                // What the spec asks for until the kprobe core says (C lists
                // `rN:` for a pending probe too).
                maxactive: AtomicU32::new(maxactive),
                unresolved,
            }),
            GFP_KERNEL,
        )?;
        let probe = match register(&shared, &self.buffers, None, env.symbol_address()) {
            Ok(p) => p,
            // A probe on a module that is not loaded waits for it; so does
            // a probe on an address in no symbol (`register_trace_kprobe()`,
            // `append_trace_kprobe()`).
            Err(e) if e == ENOENT && !module_exists => {
                warn_pending();
                TraceKprobe::Pending(shared.clone())
            }
            Err(e) => return Err(Fail::Parse(command::registration_error(-e.to_errno()))),
        };
        creating.probe = Some(probe.clone());
        event.attach(&probe)?;
        creating.state.probes.reserve(1, GFP_KERNEL)?;
        // Nothing fails from here on.
        let c = creating.dismiss();
        Entry::add(&shared, lock, ty, c.state.events[event_index].call());
        // Cannot fail: reserved above.
        let _ = c.state.probes.push(probe, GFP_KERNEL);
        Ok(())
    }

    /// Creates the event of a new probe: its shared part and its index in
    /// `state.events`.
    fn new_event(
        &self,
        lock: &EventLock,
        state: &mut State,
        spec: &StoredProbe,
        names: Names<'_>,
    ) -> Result<(Arc<EventShared>, usize), Fail> {
        let strings = EventStrings::new(names, spec.is_return, spec.args.as_slice())?;
        let layout = spec.args.0.clone();
        let is_return = spec.is_return;
        // The registration makes the event's targets and hands them over
        // (`Event::targets` answers them).
        let data = move |targets| {
            let shared = Arc::pin_init(
                pin_init!(EventShared {
                    is_return,
                    strings,
                    targets,
                    arm <- kernel::new_mutex!(event::Arm::new()),
                }),
                GFP_KERNEL,
            )?;
            Ok(Event { shared, layout })
        };
        state.events.reserve(1, GFP_KERNEL)?;
        let reg = trace_event::EventBox::new(lock, self.module, trace_event::Kind::Kprobe, data)
            .map_err(|e| {
                if e == EEXIST {
                    Fail::Parse(ParseError::logged(errno::EEXIST, Code::EventExist, 0, 0))
                } else {
                    Fail::Kernel(e)
                }
            })?;
        let shared = reg.data().shared.clone();
        let index = state.events.len();
        // Cannot fail: reserved above.
        let _ = state.events.push(reg, GFP_KERNEL);
        Ok((shared, index))
    }

    /// A local event for perf's kprobe PMU (`create_local_trace_kprobe()`):
    /// a probe without arguments at `place`, as the definition
    /// `p:kprobes/EVENT PLACE` (or `r:`) would make it, on an event of its
    /// own named after the function, which is not listed in tracefs or
    /// `kprobe_events` and writes nothing in `error_log`. Its kprobe is
    /// registered disarmed; perf arms it through the event.
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    pub(crate) fn create_local(
        &self,
        place: kprobes::Place<'_>,
        is_return: bool,
    ) -> Result<trace_event::EventBox<Event>> {
        use crate::kernel_env::Collect;
        use core::fmt::Write as _;

        let env = KernelEnv::new();
        if let kprobes::Place::Symbol(symbol, _) = place {
            // C's `validate_probe_symbol()`, and its errnos: ENOENT for no
            // such symbol, EADDRNOTAVAIL for one that is not unique. The
            // name goes into a definition line below: one the line would
            // read otherwise (a space, an offset or suffix, an address)
            // is no symbol.
            let s = symbol.to_bytes();
            if matches!(s.first(), None | Some(b'0'..=b'9'))
                || s.iter()
                    .any(|&c| c.is_ascii_whitespace() || b"+-%".contains(&c))
            {
                return Err(ENOENT);
            }
            env.validate_symbol(s).map_err(|e| Error::from_errno(-e))?;
        }
        // The line C's function stands for, parsed as any definition: the
        // same place, the same registration.
        let kind = if is_return { 'r' } else { 'p' };
        let mut line = Collect::new();
        let written = match place {
            kprobes::Place::Symbol(symbol, offset) => write!(
                Raw(&mut line),
                "{kind}:kprobes/perf_local {}+{offset}",
                Bytes(symbol.to_bytes())
            ),
            kprobes::Place::Address(a) => {
                write!(Raw(&mut line), "{kind}:kprobes/perf_local {a:#x}")
            }
        };
        written.map_err(|_| ENOMEM)?;
        let line = line.into_boxed_slice()?;
        let mut tokens = new_tokens()?;
        let spec = match command::parse(&line, &mut tokens, &env, Args(KVec::new())) {
            Ok(Some(p)) => p,
            Ok(None) => return Err(EINVAL),
            Err(e) => return Err(Error::from_errno(-e.errno)),
        };
        // C names the event after the function.
        let event: &[u8] = match place {
            kprobes::Place::Symbol(symbol, _) => symbol.to_bytes(),
            kprobes::Place::Address(_) => b"DUMMY_EVENT",
        };
        let names = Names {
            group: command::DEFAULT_GROUP,
            event,
        };
        let spec = spec.map(
            Args::share,
            |s| Exact::new(Text::as_bytes(&s)),
            |e| Exact::new(e.args()),
            |_| Ok(()),
        )?;
        let strings = EventStrings::new(names, spec.is_return, spec.args.as_slice())?;
        let layout = spec.args.0.clone();
        let data = move |targets| {
            let shared = Arc::pin_init(
                pin_init!(EventShared {
                    is_return,
                    strings,
                    targets,
                    arm <- kernel::new_mutex!(event::Arm::new()),
                }),
                GFP_KERNEL,
            )?;
            Ok(Event { shared, layout })
        };
        let reg = trace_event::EventBox::new_local(self.module, data)?;
        let event = reg.data().shared.clone();
        let symbol = match spec.place {
            SpecPlace::Symbol { .. } => {
                Some(Arc::new(cstring(spec.symbol.as_bytes())?, GFP_KERNEL)?)
            }
            SpecPlace::Addr(_) => None,
        };
        let maxactive = spec.maxactive;
        let shared = Arc::pin_init(
            Entry::new(ProbeShared {
                spec,
                symbol,
                event: event.clone(),
                dynamic: false,
                plain: false,
                moved: AtomicU8::new(0),
                maxactive: AtomicU32::new(maxactive),
                unresolved: false,
            }),
            GFP_KERNEL,
        )?;
        // No probe waits for its module here: C's fails too.
        let probe = register(&shared, &self.buffers, None, env.symbol_address())?;
        // The event's drop lets the probe go (and so unregisters it).
        event.attach(&probe)?;
        Ok(reg)
    }

    /// Lets definitions in: called by the module's init once nothing in it
    /// can fail any more. Before, [`Probes::define`] answers `EBUSY`.
    pub(crate) fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// The `kprobe_event=` parameter: definitions separated by `;`, with
    /// `,` for spaces, applied in order (a bad one is reported and skipped),
    /// then every event is enabled in the top instance, as
    /// `setup_boot_kprobe_events()` and `enable_boot_kprobe_events()` do
    /// (trace_kprobe.c).
    ///
    /// Never fails: it runs last in module init, after [`Probes::set_ready`],
    /// and a failed init would free the module under the events it enabled.
    pub(crate) fn boot_events(ty: &Type<Probes>, list: &[u8]) {
        if let Err(e) = Self::try_boot_events(ty, list) {
            pr_warn!(
                "Failed to set up the kprobe_event parameter: {}\n",
                e.to_errno()
            );
        }
    }

    fn try_boot_events(ty: &Type<Probes>, list: &[u8]) -> Result {
        let mut buf = KVec::with_capacity(list.len(), GFP_KERNEL)?;
        for &c in list {
            buf.push(if c == b',' { b' ' } else { c }, GFP_KERNEL)?;
        }
        for cmd in buf.split(|&c| c == b';').filter(|c| !c.is_empty()) {
            if let Err(e) = Self::command(ty, cmd) {
                pr_warn!(
                    "Failed to add event({}): {}\n",
                    e.to_errno(),
                    format_args!("{}", Escaped(cmd))
                );
            }
        }
        ty.data().bury();
        let mut names = KVec::new();
        {
            for e in ty.data().state.lock().events.iter() {
                names.push(
                    (
                        cstring(e.data().shared.group())?,
                        cstring(e.data().shared.name())?,
                    ),
                    GFP_KERNEL,
                )?;
            }
        }
        for (group, name) in names.iter() {
            if let Err(e) = trace_event::set_enabled(group, name, true) {
                pr_warn!(
                    "Failed to enable event {}: {}\n",
                    format_args!("{}", Escaped(name.to_bytes())),
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
        let mut state = self.state.lock();
        for p in state.probes.iter_mut() {
            if p.shared().spec.module() != Some(module) {
                continue;
            }
            let shared = p.shared().clone();
            // The counts go on with the new registration (C's
            // `trace_kprobe.nhit` outlives its kprobe's).
            let counts = p.counts();
            shared.event.detach(p);
            // The gone kprobe is unregistered first, as C does
            // (`__unregister_trace_kprobe()`), and kept: if registering
            // fails, the probe still shows its counts (and arms nothing:
            // an unregistered kprobe is skipped).
            p.unregister();
            match register(&shared, &self.buffers, Some(counts), None)
                .and_then(|k| shared.event.attach(&k).map(|()| k))
            {
                Ok(k) => *p = k,
                Err(e) => pr_warn!(
                    "Failed to re-register probe {} on {}: {}\n",
                    format_args!("{}", Escaped(shared.event.name())),
                    format_args!("{}", Escaped(module)),
                    e.to_errno()
                ),
            }
        }
    }

    /// A `kprobe_events` write starts: the kprobes its `-:` lines remove
    /// wait for [`Probes::write_done`], to go together (one grace period).
    pub(crate) fn write_start(&self) {
        self.writes.fetch_add(1, Ordering::AcqRel);
    }

    /// A `kprobe_events` write has run its lines.
    pub(crate) fn write_done(&self) {
        self.writes.fetch_sub(1, Ordering::AcqRel);
        self.bury();
    }

    /// Unregisters the kprobes of the probes removed by the lines of a
    /// write to `kprobe_events` (`-:` lines), together: called when the
    /// write has run its lines.
    pub(crate) fn bury(&self) {
        self.state.lock().bury();
    }

    /// The read-back of `kprobe_events`.
    pub(crate) fn show(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.state.lock().probes.iter() {
            p.shared().show(w)?;
        }
        Ok(())
    }

    /// `kprobe_profile`: `  %-44s %15lu %15lu` per probe.
    pub(crate) fn profile(&self, w: &mut dyn core::fmt::Write) -> Result {
        for p in self.state.lock().probes.iter() {
            let s = p.shared();
            let name = s.event.name();
            let pad = 44usize.saturating_sub(name.len());
            writeln!(
                w,
                "  {}{:pad$} {:>15} {:>15}",
                Bytes(name),
                "",
                p.counts()[count::HITS],
                p.missed()
            )
            .map_err(|_| ENOMEM)?;
        }
        Ok(())
    }

    /// `kprobe_misses`: per probe, as in `kprobe_profile`, its hits and
    /// misses, then why hits left no record, by cause.
    pub(crate) fn misses(&self, w: &mut dyn core::fmt::Write) -> Result {
        // The name padded as `kprobe_profile` pads it (`Bytes` takes no
        // width), then the counts.
        let row = |w: &mut dyn core::fmt::Write, name: &[u8], cells: &[u64]| {
            let pad = MISSES_NAME_WIDTH.saturating_sub(name.len());
            write!(w, "{}{:pad$}", Bytes(name), "")?;
            for c in cells {
                write!(w, " {c:>MISSES_WIDTH$}")?;
            }
            writeln!(w)
        };
        let header = |w: &mut dyn core::fmt::Write| {
            write!(w, "{:<MISSES_NAME_WIDTH$}", "# event")?;
            for c in MISSES_COLUMNS {
                write!(w, " {c:>MISSES_WIDTH$}")?;
            }
            writeln!(w)
        };
        header(w).map_err(|_| ENOMEM)?;
        for p in self.state.lock().probes.iter() {
            let c = p.counts();
            let (reentered, no_instance) = p.nmissed();
            let recursion = reentered + c[count::NESTED];
            let cells = [
                c[count::HITS],
                recursion + no_instance,
                recursion,
                no_instance,
                c[count::FILTERED],
                c[count::DISABLED],
                c[count::NO_BUFFER],
                c[count::FAULTED],
            ];
            row(w, p.shared().event.name(), &cells).map_err(|_| ENOMEM)?;
        }
        Ok(())
    }
}

/// `dynamic_events` (trace_kprobe.c: `trace_kprobe_ops`).
impl dyn_event::Provider for Probes {
    type Entry = ProbeShared;

    fn create(ty: &Type<Probes>, lock: &EventLock, command: &CStr) -> Result {
        Self::define(ty, lock, command.to_bytes())
    }

    fn show(&self, _lock: &EventLock, entry: &ProbeShared, mut m: &SeqFile) -> Result {
        entry.show(&mut Raw(&mut m))
    }

    /// `trace_kprobe_is_busy()`: enabled somewhere or open by perf.
    fn is_busy(&self, _lock: &EventLock, entry: &ProbeShared) -> bool {
        entry.event.in_use()
    }

    /// `trace_kprobe_release()`, but the kprobe is unregistered when the
    /// removal is done (`released`), with the others it removed.
    fn free(&self, lock: &EventLock, entry: &ProbeShared) -> Result {
        let mut state = self.state.lock();
        match state
            .probes
            .iter()
            .position(|p| core::ptr::eq(&***p.shared(), entry))
        {
            Some(i) => state.remove_probe(lock, i),
            None => Err(ENOENT),
        }
    }

    /// A `-:` line or a truncation of `dynamic_events` is done: the kprobes
    /// of the probes it removed go, with one grace period for all (C: one
    /// a probe).
    fn released(&self, _lock: &EventLock) {
        // A `kprobe_events` write buries when it has run all its lines.
        if self.writes.load(Ordering::Acquire) == 0 {
            self.state.lock().bury();
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
        let r = Removal {
            group: system.map(|s| s.to_bytes()),
            event: event.to_bytes(),
            dialect: crate::kernel_env::DIALECT,
        };
        r.matches_words(
            args.map(|a| a.to_bytes()),
            &entry.spec,
            entry.names(),
            entry.hashed(),
        )
    }
}

/// A line's tokens, zeroed in place on the heap: `Tokens` is about 5 KiB,
/// which `KBox::new(Tokens::new())` would build on the stack first.
fn new_tokens() -> Result<KBox<Tokens>> {
    KBox::init(Tokens::init_zeroed(), GFP_KERNEL)
}

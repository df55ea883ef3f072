// SPDX-License-Identifier: GPL-2.0-only

//! The trace event of one or more probes (`events/<GRP>/<EVENT>/`): what
//! its callbacks and its probes' handlers share ([`EventShared`]), its
//! fields, text and print format, and arming its probes while an instance
//! or perf uses it ([`Event`], the tracing core's `reg` callbacks).

use kernel::{
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
    trace_event::{self, EventFile, EventNames, Field, Fields, Targets, TraceSeq},
};

use super::stored::StoredArg;
use super::TraceKprobe;
use crate::kernel_env::{KernelSymbols, Raw};
use crate::probe::{format, output};

/// What an event's callbacks and its probes' handlers share.
#[pin_data]
pub(crate) struct EventShared {
    pub(super) is_return: bool,
    /// The event's group and name, then the type and name of each field
    /// after the common ones, then the print format, as C strings one
    /// after the other in one allocation of exactly their length (the
    /// tracing core keeps pointers to all of them while the event exists:
    /// [`Event::names`]). Inline, the two names took 130 bytes, and the
    /// struct a 256-byte allocation instead of 128.
    pub(super) strings: KBox<[u8]>,
    /// The lengths of the group and the name at the start of `strings`
    /// (at most `MAX_EVENT_NAME_LEN` each): found without a walk, since
    /// defining or removing a probe compares every event's names.
    pub(super) names_len: [u8; 2],
    /// The instances the event is enabled in, and perf and BPF while perf
    /// has it open: made by the event's registration, which adds and
    /// removes them. Inline: the handler follows no pointer to them, and
    /// they took a 32-byte allocation of their own.
    pub(super) targets: Targets,
    /// The event's probes, armed while the event is in use (`in_use`).
    #[pin]
    pub(super) arm: Mutex<Arm>,
}

/// An event's probes to arm: the first inline (most events have one probe;
/// a vector of one took a 16-byte allocation), the others after it, in the
/// order they came.
#[derive(Default)]
pub(crate) struct Arm {
    first: Option<TraceKprobe>,
    rest: KVec<TraceKprobe>,
}

impl Arm {
    fn push(&mut self, kp: TraceKprobe) -> Result {
        if self.first.is_none() {
            self.first = Some(kp);
        } else {
            self.rest.push(kp, GFP_KERNEL)?;
        }
        Ok(())
    }

    /// Takes the last probe pushed out again.
    fn pop(&mut self) {
        if !self.rest.is_empty() {
            self.rest.truncate(self.rest.len() - 1);
        } else {
            self.first = None;
        }
    }

    /// Keeps the probes `keep` says, in order; allocates nothing.
    fn retain(&mut self, mut keep: impl FnMut(&TraceKprobe) -> bool) {
        if self.first.as_ref().is_some_and(|k| !keep(k)) {
            self.first = None;
        }
        self.rest.retain(|k| keep(k));
        if self.first.is_none() && !self.rest.is_empty() {
            // The next one moves up: a clone of its `Arc`, then the slot
            // goes.
            self.first = Some(self.rest[0].clone());
            let mut i = 0;
            self.rest.retain(|_| {
                i += 1;
                i > 1
            });
        }
    }

    fn iter(&self) -> impl Iterator<Item = &TraceKprobe> {
        Iterator::chain(self.first.iter(), self.rest.iter())
    }
}

// Fits a 128-byte allocation with the `Arc`'s count (BENCHMARKS.md, memory),
// unless lock debugging makes the mutex larger. (What only the event's
// callbacks read is in `Event`, inside the registration.)
#[cfg(not(any(CONFIG_DEBUG_LOCK_ALLOC, CONFIG_DEBUG_MUTEXES)))]
const _: () = assert!(core::mem::size_of::<EventShared>() <= 120);

impl EventShared {
    /// The C strings of [`EventShared::strings`], in order.
    fn c_strings(&self) -> impl Iterator<Item = &CStr> {
        self.strings
            .split_inclusive(|&b| b == 0)
            .filter_map(|s| CStr::from_bytes_with_nul(s).ok())
    }

    /// The event's group.
    pub(super) fn group(&self) -> &[u8] {
        let g = usize::from(self.names_len[0]);
        self.strings.get(..g).unwrap_or(&[])
    }

    /// The event's name, for the trace text.
    pub(super) fn name(&self) -> &[u8] {
        let g = usize::from(self.names_len[0]) + 1;
        let n = usize::from(self.names_len[1]);
        self.strings.get(g..g + n).unwrap_or(&[])
    }

    /// Adds a probe, armed if the event is enabled somewhere
    /// (`__register_trace_kprobe()` clears `KPROBE_FLAG_DISABLED` then).
    /// On an error the probe is not in the list.
    pub(super) fn attach(&self, kp: &TraceKprobe) -> Result {
        let mut arm = self.arm.lock();
        arm.push(kp.clone())?;
        if self.in_use() {
            if let Err(e) = kp.enable() {
                // The caller holds `kp`: not the last reference.
                arm.pop();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Forgets a probe (before it is unregistered).
    pub(super) fn detach(&self, kp: &TraceKprobe) {
        let mut arm = self.arm.lock();
        arm.retain(|k| !k.same(kp));
    }

    /// Arms or disarms every probe of the event.
    pub(super) fn set_armed(&self, on: bool) -> Result {
        for k in self.arm.lock().iter() {
            if on {
                k.enable()?;
            } else {
                let _ = k.disable();
            }
        }
        Ok(())
    }

    pub(super) fn head_size(&self) -> usize {
        format::head_size(self.is_return)
    }

    /// Enabled in some instance or open by perf (`trace_probe_is_enabled()`:
    /// `TP_FLAG_TRACE | TP_FLAG_PROFILE`): armed, and not removable.
    pub(super) fn in_use(&self) -> bool {
        self.targets.in_use()
    }
}

/// The trace event's callbacks: what the probes share with them, and what
/// only they read (in the registration's allocation, which has room: the
/// shared part has none), the record layout (the first probe's arguments,
/// shared with it: every probe of the event has the same names, types and
/// sizes).
pub(crate) struct Event(pub(super) Arc<EventShared>, pub(super) Arc<KVec<StoredArg>>);

// An event's registration fits a 256-byte allocation (BENCHMARKS.md,
// memory): the C structs, the pointer to the targets and `Event` (the
// strings and the targets are in `EventShared`).
const _: () = assert!(core::mem::size_of::<trace_event::Registration<Event>>() <= 256);

impl Event {
    /// A new user (an instance or perf), not yet among the targets:
    /// `enable_trace_kprobe()` arms the probes. (Each user also pins the
    /// module: the kernel crate's registration takes care of it.)
    fn enable(&self) -> Result {
        let r = self.0.set_armed(true);
        if r.is_err() {
            // enable_trace_kprobe(): roll back, unless another user keeps
            // the probes armed.
            if !self.0.in_use() {
                let _ = self.0.set_armed(false);
            }
        }
        r
    }

    /// A user gone from the targets: `disable_trace_kprobe()` disarms the
    /// probes when it was the last.
    fn disable(&self) -> Result {
        if self.0.in_use() {
            Ok(())
        } else {
            self.0.set_armed(false)
        }
    }
}

#[vtable]
impl trace_event::Event for Event {
    /// The group, the name and (the last string) the print format.
    fn names(&self) -> EventNames<'_> {
        let e = &*self.0;
        let mut s = e.c_strings();
        let empty = kernel::c_str!("");
        let system = s.next().unwrap_or(empty);
        let name = s.next().unwrap_or(empty);
        EventNames {
            system,
            name,
            print_fmt: s.last().unwrap_or(empty),
        }
    }

    fn targets(&self) -> &Targets {
        &self.0.targets
    }

    fn define_fields<'a>(&'a self, fields: &mut Fields<'a>) -> Result {
        let e = &*self.0;
        // "type\0name\0" for each field after the head, in order, after
        // the event's names.
        let mut strings = e.c_strings().skip(2);
        for f in format::fields(e.is_return, &self.1) {
            let (Some(ty), Some(name)) = head_field(f.name).map_or_else(
                || (strings.next(), strings.next()),
                |(t, n)| (Some(t), Some(n)),
            ) else {
                return Err(EINVAL);
            };
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
                func: word(format::HEAD_IP),
                ret_ip: word(format::HEAD_RET_IP),
            }
        } else {
            output::Head::Kprobe {
                ip: word(format::HEAD_IP),
            }
        };
        let payload = record.get(e.head_size()..).unwrap_or(&[]);
        output::print_event(
            &mut Raw(out),
            e.name(),
            head,
            &self.1,
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

/// The type and name of a head field (`__probe_ip`, or `__probe_func` and
/// `__probe_ret_ip`): the same for every event, so constants rather than
/// 25 bytes of each event's strings. No argument takes these names
/// (`arg::RESERVED`).
pub(super) fn head_field(name: &[u8]) -> Option<(&'static CStr, &'static CStr)> {
    let ty = kernel::c_str!("unsigned long");
    match name {
        b"__probe_ip" => Some((ty, kernel::c_str!("__probe_ip"))),
        b"__probe_func" => Some((ty, kernel::c_str!("__probe_func"))),
        b"__probe_ret_ip" => Some((ty, kernel::c_str!("__probe_ret_ip"))),
        _ => None,
    }
}

/// Print fmt text for `CString::try_from_fmt`.
pub(super) struct PrintFmt<'a>(pub(super) bool, pub(super) &'a [StoredArg]);

impl core::fmt::Display for PrintFmt<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        format::print_fmt(f, self.0, self.1)
    }
}

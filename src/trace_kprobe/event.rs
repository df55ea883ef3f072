// SPDX-License-Identifier: GPL-2.0-only

//! The trace event of one or more probes (`events/<GRP>/<EVENT>/`): what
//! its callbacks and its probes' handlers share ([`EventShared`]), its
//! fields, text and print format, and arming its probes while an instance
//! or perf uses it ([`Event`], the tracing core's `reg` callbacks).
//!
//! As in C, an event's kprobes are armed from its first user (an instance
//! enabling it, perf opening it) to its last, and a probe that joins an
//! event in use is armed at once. Each user also holds a reference on the
//! module (the kernel crate's registration takes it in `reg`), so an event
//! in use keeps the module loaded and its last probe cannot be removed.
//!
//! The record layout is the first probe's arguments, shared with it: every
//! probe of an event has the same names, types and sizes.

use kernel::{
    prelude::*,
    sync::{Arc, Mutex},
    trace_event::{self, EventFile, EventNames, Field, Fields, Targets, TraceSeq},
};

use super::stored::StoredArg;
use super::strings::EventStrings;
use super::TraceKprobe;
use crate::kernel_env::{KernelSymbols, Raw};
use crate::probe::{format, output};

/// What an event's callbacks and its probes' handlers share.
#[pin_data]
pub(crate) struct EventShared {
    pub(super) is_return: bool,
    /// The group and name, the fields' types and names, the print format.
    pub(super) strings: EventStrings,
    /// The instances the event is enabled in, and perf and BPF while perf
    /// has it open: made by the event's registration, which adds and
    /// removes them. Inline, so that the handler follows no pointer to
    /// them.
    pub(super) targets: Targets,
    /// The event's probes, in the order they came, armed while the event
    /// is in use (`in_use`).
    #[pin]
    pub(super) arm: Mutex<KVec<TraceKprobe>>,
}

impl EventShared {
    /// The event's group.
    pub(super) fn group(&self) -> &[u8] {
        self.strings.group()
    }

    /// The event's name, for the trace text.
    pub(super) fn name(&self) -> &[u8] {
        self.strings.name()
    }

    /// Adds a probe, armed if the event is enabled somewhere
    /// (`__register_trace_kprobe()` clears `KPROBE_FLAG_DISABLED` then).
    /// On an error the probe is not in the list.
    pub(super) fn attach(&self, kp: &TraceKprobe) -> Result {
        let mut arm = self.arm.lock();
        arm.push(kp.clone(), GFP_KERNEL)?;
        if self.in_use() {
            if let Err(e) = kp.enable() {
                // The caller holds `kp`: not the last reference.
                let last = arm.len() - 1;
                let _ = arm.remove(last);
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
/// only they read.
pub(crate) struct Event {
    pub(super) shared: Arc<EventShared>,
    /// The record layout: the first probe's arguments, shared with it
    /// (every probe of the event has the same names, types and sizes).
    pub(super) layout: Arc<KVec<StoredArg>>,
}

/// A local event (perf's kprobe PMU) is dropped with its probe on the
/// list to arm: letting it go breaks the cycle event -> probe -> event,
/// and unregisters the kprobe. A listed event's probes have left the list
/// by then (`EventShared::detach`).
impl Drop for Event {
    fn drop(&mut self) {
        let probes = core::mem::take(&mut *self.shared.arm.lock());
        drop(probes);
    }
}

impl Event {
    /// A new user (an instance or perf), not yet among the targets:
    /// `enable_trace_kprobe()` arms the probes. (Each user also pins the
    /// module: the kernel crate's registration takes care of it.)
    fn enable(&self) -> Result {
        let r = self.shared.set_armed(true);
        if r.is_err() {
            // enable_trace_kprobe(): roll back, unless another user keeps
            // the probes armed.
            if !self.shared.in_use() {
                let _ = self.shared.set_armed(false);
            }
        }
        r
    }

    /// A user gone from the targets: `disable_trace_kprobe()` disarms the
    /// probes when it was the last.
    fn disable(&self) -> Result {
        if self.shared.in_use() {
            Ok(())
        } else {
            self.shared.set_armed(false)
        }
    }
}

#[vtable]
impl trace_event::Event for Event {
    /// The group, the name and (the last string) the print format.
    fn names(&self) -> EventNames<'_> {
        self.shared.strings.event_names()
    }

    fn targets(&self) -> &Targets {
        &self.shared.targets
    }

    fn define_fields<'a>(&'a self, fields: &mut Fields<'a>) -> Result {
        let e = &*self.shared;
        let names = e.strings.fields(e.is_return, &self.layout);
        for (f, names) in format::fields(e.is_return, &self.layout).zip(names) {
            let Some((ty, name)) = names else {
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
        let e = &*self.shared;
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
            &self.layout,
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

    /// `trace_kprobe_describe()`: the event's first probe.
    fn describe_kprobe(&self) -> Result<trace_event::KprobeDesc> {
        let arm = self.shared.arm.lock();
        Ok(arm.first().ok_or(EINVAL)?.describe())
    }
}

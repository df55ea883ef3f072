// SPDX-License-Identifier: GPL-2.0-only

//! Registering a probe's kprobe or kretprobe (`__register_trace_kprobe()`):
//! C's checks first, in C's order (lockdown, an `@SYM` not found, notrace
//! functions), then the registration, shared with the event's list of
//! probes to arm ([`TraceKprobe`]).
//!
//! The kprobe is registered disarmed; its event arms it while in use. A
//! probe on a module that is not loaded, or on an address in no symbol,
//! waits unregistered (`TraceKprobe::Pending`). When a module comes, its
//! probes are registered (`Probes::module_coming`, through a module notifier
//! of priority 2, as C's), the kprobe gone with the module unregistered
//! first; the hit counts go on from the old registration's. An address
//! probe reads back at the address the kprobe core registered, which x86
//! moves past an `endbr64`.

use core::sync::atomic::Ordering;

use kernel::{
    kallsyms,
    kprobes::{self, HitBuffers, Place},
    prelude::*,
    str::CStr,
    sync::Arc,
    trace_event::dyn_event::Entry,
};

use super::hit::{self, Hit};
use super::{ProbeShared, TraceKprobe};
use crate::kernel_env::{self, cstring};
use crate::probe::{
    arg::EntryList,
    command::{Place as SpecPlace, Probe},
    text::{Escaped, Text},
};

/// `trace_kprobe_module_exist()` (trace_kprobe.c): false for an
/// address probe and for `MOD:SYM` while `MOD` is not loaded.
pub(super) fn module_exists<A, S: Text, E, N>(spec: &Probe<A, S, E, N>) -> bool {
    if let SpecPlace::Addr(_) = spec.place {
        return false;
    }
    match spec.module() {
        None => true,
        Some(m) => cstring(m).is_ok_and(|m| kallsyms::module_loaded(&m)),
    }
}

/// `within_notrace_func()` (trace_kprobe.c): whether `addr` is in
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

/// Registers the kprobe or kretprobe of a probe, its handler's counts
/// going on from `counts` (those of the probe's registration before, gone
/// with its module) or from zero. `symbol_address`: where the probe's
/// symbol is, when the line's parse found it as the one symbol of that name
/// in the kernel image ([`KernelEnv::symbol_address`]); the kprobe is then
/// registered at that address plus the offset, which the kprobe core takes
/// as it takes the symbol, without searching the name twice more.
///
/// [`KernelEnv::symbol_address`]: crate::kernel_env::KernelEnv::symbol_address
pub(super) fn register(
    shared: &Arc<Entry<ProbeShared>>,
    buffers: &Arc<HitBuffers>,
    counts: Option<hit::Counts>,
    symbol_address: Option<usize>,
) -> Result<TraceKprobe> {
    // __register_trace_kprobe() (trace_kprobe.c): lockdown first.
    kprobes::lockdown_allows()?;
    // Then traceprobe_update_arg(): an `@SYM` not found.
    if shared.unresolved {
        return Err(ENOENT);
    }
    let spec = &shared.spec;
    let (place, addr) = match (spec.place, symbol_address) {
        (SpecPlace::Symbol { offset }, Some(at)) => {
            let a = at.wrapping_add(offset as usize);
            (Place::Address(a), a)
        }
        (SpecPlace::Symbol { offset }, None) => {
            // The name the kprobe core is given, when no address stands
            // for it.
            let symbol: &CStr = shared.symbol.as_deref().ok_or(EINVAL)?;
            // trace_kprobe_address(): 0 for a symbol not found.
            let a = kallsyms::lookup_name(symbol);
            (
                Place::Symbol(symbol, offset),
                if a == 0 {
                    0
                } else {
                    a.wrapping_add(offset as usize)
                },
            )
        }
        (SpecPlace::Addr(a), _) => (Place::Address(a as usize), a as usize),
    };
    // __register_trace_kprobe() refuses notrace functions (without
    // CONFIG_KPROBE_EVENTS_ON_NOTRACE, which the module does not offer).
    if within_notrace_func(addr) {
        let mut buf = [0u8; kallsyms::SYMBOL_LEN];
        let n = kallsyms::sprint_symbol_no_offset(addr, &mut buf);
        pr_warn!(
            "Could not probe notrace function {}\n",
            format_args!("{}", Escaped(&buf[..n.min(buf.len())]))
        );
        return Err(EINVAL);
    }
    // How far the kprobe core moved the address (see `ProbeShared::moved`).
    let moved = |reg: usize| {
        let m = match spec.place {
            SpecPlace::Addr(a) => (reg as u64).wrapping_sub(a),
            SpecPlace::Symbol { .. } => 0,
        };
        shared
            .moved
            .store(u8::try_from(m).unwrap_or(0), Ordering::Relaxed);
    };
    let hit = Hit::new(shared.clone(), buffers, &counts.unwrap_or_default())?;
    // Registered disarmed; the event arms it (`EventShared::attach`).
    if spec.is_return {
        let r = Arc::pin_init(
            kprobes::RetRegistration::new(place, spec.maxactive, spec.entry.data_size(), true, hit),
            GFP_KERNEL,
        )?;
        r.handler().addr.store(r.address(), Ordering::Relaxed);
        moved(r.address());
        shared.maxactive.store(r.maxactive(), Ordering::Relaxed);
        Ok(TraceKprobe::Kretprobe(r))
    } else {
        let k = Arc::pin_init(kprobes::Registration::new(place, true, hit), GFP_KERNEL)?;
        k.handler().addr.store(k.address(), Ordering::Relaxed);
        moved(k.address());
        Ok(TraceKprobe::Kprobe(k))
    }
}

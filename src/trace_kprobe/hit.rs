// SPDX-License-Identifier: GPL-2.0-only

//! The hit path: a probe's handler runs its fetch programs and writes the
//! record into every instance its event is enabled in, then hands the hit
//! to perf and BPF (`kprobe_dispatcher()`, `kprobe_trace_func()`,
//! `kprobe_perf_func()`). Runs in the kprobe handler: allocates nothing,
//! takes no sleeping lock.

use core::sync::atomic::Ordering;

use kernel::{
    kprobes::{self, PtRegs},
    sync::Arc,
    trace_event::dyn_event::Entry,
};

use super::{event::EventShared, ProbeShared};
use crate::kernel_env::HitMachine;
use crate::probe::{arg::EntryList, command::ArgList, fetch, format};

impl ProbeShared {
    /// Runs the programs and writes a record into each enabled instance,
    /// then hands the hit to perf (`kprobe_dispatcher()`).
    pub(super) fn record(&self, regs: &PtRegs, edata: &[u8], head: [u64; 2]) {
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
                fetch::store(args, size, &HitMachine::new(regs), edata, hs, d);
            });
            return;
        }
        // Strings: fetch once into the per-CPU scratch buffer, then reserve
        // exactly what they took.
        let done = self.buffers.with(|buf| {
            let Some(payload) = buf.get_mut(hs..) else {
                return;
            };
            let n = fetch::store(
                args,
                self.spec.size,
                &HitMachine::new(regs),
                edata,
                hs,
                payload,
            );
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
    ev.targets.files().for_each_in_handler(regs, |f| {
        // (A soft-disabled event writes nothing: `record_hit` asks.)
        f.record_hit(hs + len, regs, |b| put(b, hs, head, len, &mut fill));
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
    // Fixed-size copies: a single store each (`copy_from_slice` would call
    // out to `memcpy`).
    if let Some(d) = b
        .get_mut(8..16)
        .and_then(|d| <&mut [u8; 8]>::try_from(d).ok())
    {
        *d = head[0].to_ne_bytes();
    }
    if hs == format::KRETPROBE_HEAD {
        if let Some(d) = b
            .get_mut(16..24)
            .and_then(|d| <&mut [u8; 8]>::try_from(d).ok())
        {
            *d = head[1].to_ne_bytes();
        }
    }
    if let Some(d) = b.get_mut(hs..hs + len) {
        fill(d);
    }
}

/// The handler of a probe's kprobe or kretprobe.
pub(crate) struct Hit(pub(super) Arc<Entry<ProbeShared>>);

impl kprobes::Handler for Hit {
    fn pre_handler(&self, regs: &PtRegs) {
        // C records the probe's address, not `regs->ip` (one past it with
        // kprobes on ftrace).
        let ip = self.0.addr.load(Ordering::Relaxed) as u64;
        self.0.record(regs, &[], [ip, 0]);
    }
}

impl kprobes::RetHandler for Hit {
    fn entry(&self, regs: &PtRegs, data: &mut [u8]) {
        // store_trace_entry_data(): the function arguments `$argN` needs.
        for (i, &n) in self.0.spec.entry.args().iter().enumerate() {
            let v = fetch::kernel_argument(&HitMachine::new(regs), u32::from(n));
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

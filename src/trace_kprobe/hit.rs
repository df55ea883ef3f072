// SPDX-License-Identifier: GPL-2.0-only

//! The hit path: a probe's handler runs its fetch programs and writes the
//! record into every instance its event is enabled in, then hands the hit
//! to perf and BPF (`kprobe_dispatcher()`, `kprobe_trace_func()`,
//! `kprobe_perf_func()`). Runs in the kprobe handler: allocates nothing,
//! takes no sleeping lock.
//!
//! The handler ([`Hit`]) lives inside the kprobe registration, which the
//! kprobe core hands the hit anyway. It holds the probe, the per-CPU hit
//! counter (inline: one instruction on x86-64, four on arm64), the count of
//! nested hits, the registered address (a record's `__probe_ip`, as in C:
//! `regs->ip` is one past it with kprobes on ftrace) and the per-CPU
//! scratch buffers.
//!
//! What keeps a hit cheap:
//!
//! - `Hit::record` is inlined into the handler and calls one out-of-line
//!   function per kind of record, each with only the frame it needs: no
//!   arguments; values (registers, stack slots, function arguments,
//!   immediates) stored as is or the memory they point to, written straight
//!   into each reservation without the fetch stages; a fixed size, fetched straight into each
//!   reservation, as C does; strings, fetched once into this CPU's scratch
//!   buffer, then exactly that many bytes reserved and copied. A hit with
//!   strings that finds the buffer in use is counted as a miss, not
//!   recorded.
//! - The record goes through `EventFile::record_hit`, the tracing core's
//!   `trace_event_buffer_reserve()` and commit, as every event's. The perf
//!   side is out of line (`#[cold]`).
//! - The fetch programs' shapes were worked out when they were parsed
//!   (`probe::fetch`).
//!
//! Why a hit left no record is counted by cause (`kprobe_misses`): each
//! instance's record says what became of it ([`Fate`]), and a hit whose
//! record was not written, or was written with a faulted read, adds one to
//! the cause's per-CPU counter. A written record counts nothing but the
//! hit.
//!
//! How it scales: on a hit the module writes only this CPU's counters, this
//! CPU's ring-buffer page and, with strings, this CPU's scratch buffer and
//! its flag (on a cache line of its own). It reads the probe's programs and
//! the event's instance slots, which change only on enable, disable and perf
//! open. What grows with the number of probes is the kprobe core's part
//! (the `get_kprobe()` hash chains), the same for C.
//!
//! Changing it: calls out of the module are the first suspect: a small
//! kernel-crate function is not inlined without `#[inline]`, a generic one
//! the kernel crate already instantiated is a call to that instance, and a
//! `copy_from_slice` of 8 bytes calls `memcpy`; `llvm-objdump -dr` of the
//! `.ko` shows them as `R_X86_64_PLT32` relocations. Register pressure costs
//! more than a call here: a fill closure passed out of line spills its
//! captures on every hit.

use core::{
    cell::Cell,
    sync::atomic::{AtomicUsize, Ordering},
};

use kernel::{
    kprobes::{self, HitBuffers, HitCounters},
    prelude::*,
    ptrace::PtRegs,
    sync::Arc,
    trace_event::{dyn_event::Entry, Fate},
};

use super::{event::EventShared, ProbeShared};
use crate::kernel_env::HitMachine;
use crate::probe::{arg::EntryList, command::ArgList, fetch, format};

/// A handler's counters ([`Counts`]' indexes), kept per CPU.
pub(super) mod count {
    use super::Fate;

    /// Hits (`trace_kprobe.nhit`). First: a hit counts it at the counters'
    /// own address.
    pub(crate) const HITS: usize = 0;

    // The next four are indexed by a record's fate (`of`): the counter of a
    // record written with a fault, then the causes in `Fate`'s order.

    /// Records written with a read that faulted.
    pub(crate) const FAULTED: usize = 1 + Fate::Written as usize;
    /// Records the event's filter rejected ([`Fate::Filtered`]).
    pub(crate) const FILTERED: usize = 1 + Fate::Filtered as usize;
    /// Records not made for a soft-disable or the pid filter
    /// ([`Fate::Disabled`]).
    pub(crate) const DISABLED: usize = 1 + Fate::Disabled as usize;
    /// Records the ring buffer had no room for ([`Fate::NoRoom`]).
    pub(crate) const NO_BUFFER: usize = 1 + Fate::NoRoom as usize;
    /// Hits with strings nested on a CPU whose scratch buffer was in use
    /// (an interrupt during a handler): not recorded, so counted with the
    /// kprobe core's misses in `kprobe_profile`.
    pub(crate) const NESTED: usize = 5;
    /// How many.
    pub(crate) const N: usize = 6;

    /// The counter of a record's fate: its cause if it was not written,
    /// [`FAULTED`] if it was written with a fault. (The fate plus one: an
    /// address computed in one instruction on a hit.)
    #[inline(always)]
    pub(crate) fn of(fate: Fate) -> usize {
        1 + fate as usize
    }

    const _: () = assert!(NO_BUFFER < NESTED && NESTED < N);
}

/// A handler's counts, summed over the CPUs ([`count`] indexes them).
pub(crate) type Counts = [u64; count::N];

/// The handler of a probe's kprobe or kretprobe: the probe, and what only
/// the hit needs (in the kprobe registration, which the kprobe core hands
/// the hit anyway).
pub(crate) struct Hit {
    pub(super) probe: Arc<Entry<ProbeShared>>,
    /// Hits, and why hits left no record, per CPU ([`count`]).
    counters: HitCounters<{ count::N }>,
    /// The probed address, as the kprobe core registered it (`kp.addr`):
    /// what a record's `__probe_ip` (or `__probe_func`) says, as in C.
    pub(super) addr: AtomicUsize,
    buffers: Arc<HitBuffers>,
}

impl Hit {
    /// The handler of `probe`, its counts going on from `counts` (those of
    /// its registration before, if any).
    pub(super) fn new(
        probe: Arc<Entry<ProbeShared>>,
        buffers: &Arc<HitBuffers>,
        counts: &Counts,
    ) -> Result<Self> {
        let mut counters = HitCounters::new()?;
        for (i, &n) in counts.iter().enumerate() {
            counters.add(i, n);
        }
        Ok(Hit {
            probe,
            counters,
            addr: AtomicUsize::new(0),
            buffers: buffers.clone(),
        })
    }

    /// The counts so far, summed over the CPUs.
    pub(super) fn counts(&self) -> Counts {
        core::array::from_fn(|i| self.counters.sum(i))
    }

    /// Runs the programs and writes a record into each enabled instance,
    /// then hands the hit to perf (`kprobe_dispatcher()`). The head words
    /// (`ip`, or `func` and `ret_ip`) come as two scalars, so that they are
    /// passed in registers: as a `[u64; 2]` they went through the stack.
    ///
    /// Inlined into the handler, with one function out of line for each
    /// kind of record: each keeps only the registers and stack it needs
    /// (one function for all three saved six registers and spilled the
    /// head words on every hit, an empty probe's included). Each is made
    /// twice, for entry (`RET` false) and return probes, as C has
    /// `kprobe_trace_func()` and `kretprobe_trace_func()`: an entry probe's
    /// head size is a constant, and it passes no entry data nor return
    /// address (three instructions a hit on arm64).
    #[inline(always)]
    pub(super) fn record<const RET: bool>(&self, regs: &PtRegs, edata: &[u8], h0: u64, h1: u64) {
        // Armed only while in use; a hit racing with disarming is counted
        // and finds nothing to write to, as in C's dispatcher.
        self.counters.inc(count::HITS, regs);
        if self.probe.spec.args.as_slice().is_empty() {
            self.record_empty::<RET>(regs, h0, h1);
        } else if self.probe.plain {
            self.record_plain::<RET>(regs, edata, h0, h1);
        } else if !self.probe.dynamic {
            self.record_fixed::<RET>(regs, edata, h0, h1);
        } else {
            self.record_strings::<RET>(regs, edata, h0, h1);
        }
    }

    /// Nothing to fetch.
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn record_empty<const RET: bool>(&self, regs: &PtRegs, h0: u64, h1: u64) {
        let ev = &*self.probe.event;
        write(
            ev,
            &self.counters,
            regs,
            format::head_size(RET),
            h0,
            h1,
            0,
            |_| false,
        );
    }

    /// Fixed-size fields one after the other (`fetch::plain`): values
    /// stored as is or the memory they point to, dereference chains,
    /// bitfields; each written straight into the record, without the
    /// fetch stages.
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn record_plain<const RET: bool>(&self, regs: &PtRegs, edata: &[u8], h0: u64, h1: u64) {
        let p = &*self.probe;
        let ev = &*p.event;
        let args = p.spec.args.as_slice();
        write(
            ev,
            &self.counters,
            regs,
            format::head_size(RET),
            h0,
            h1,
            p.spec.size,
            #[inline(always)]
            |d| fetch::store_plain(args, &HitMachine::new(regs), edata, d),
        );
    }

    /// The record's size is known: fetch straight into it, as C does (once
    /// per instance).
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn record_fixed<const RET: bool>(&self, regs: &PtRegs, edata: &[u8], h0: u64, h1: u64) {
        let p = &*self.probe;
        let ev = &*p.event;
        let hs = format::head_size(RET);
        let (args, size) = (p.spec.args.as_slice(), p.spec.size);
        write(
            ev,
            &self.counters,
            regs,
            hs,
            h0,
            h1,
            size,
            #[inline(always)]
            |d| fetch::store_noting(args, size, &HitMachine::new(regs), edata, hs, d).1,
        );
    }

    /// Strings: fetch once into the per-CPU scratch buffer, then reserve
    /// exactly what they took.
    #[inline(never)]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn record_strings<const RET: bool>(&self, regs: &PtRegs, edata: &[u8], h0: u64, h1: u64) {
        let p = &*self.probe;
        let ev = &*p.event;
        let hs = format::head_size(RET);
        let args = p.spec.args.as_slice();
        let done = self.buffers.with(|buf| {
            let Some(payload) = buf.get_mut(hs..) else {
                return;
            };
            let m = HitMachine::new(regs);
            let (n, faulted) = fetch::store_noting(args, p.spec.size, &m, edata, hs, payload);
            let payload = &payload[..n.min(payload.len())];
            write(
                ev,
                &self.counters,
                regs,
                hs,
                h0,
                h1,
                payload.len(),
                #[inline(always)]
                |d| {
                    d.copy_from_slice(payload);
                    faulted
                },
            );
        });
        if done.is_none() {
            self.counters.inc(count::NESTED, regs);
        }
    }
}

/// Writes a record of `len` bytes after the head into each instance the
/// event is enabled in, then (`kprobe_perf_func()`) runs the event's BPF
/// programs and writes the record to perf unless they drop the hit: the
/// head words, then what `fill` puts in the `len` bytes (it says whether a
/// read faulted). Each instance's record not written, or written with a
/// fault, is counted in `counters` by its cause.
///
/// `fill` is a closure the caller marks `#[inline(always)]`, and it is
/// called only directly (`write_perf` is generic over it, not handed a
/// `dyn`): a closure takes no `#[link_section]` from the function that
/// makes it, so one left out of line would be in `.text`, where a kprobe
/// can be put on the hit path (`scripts/nokprobe-check.py` follows calls
/// to it by its section and offset).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn write(
    ev: &EventShared,
    counters: &HitCounters<{ count::N }>,
    regs: &PtRegs,
    hs: usize,
    h0: u64,
    h1: u64,
    len: usize,
    mut fill: impl FnMut(&mut [u8]) -> bool,
) {
    let head = [h0, h1];
    ev.targets.files().for_each_in_handler(regs, |f| {
        let faulted = Cell::new(false);
        // (A soft-disabled event writes nothing: `record_hit` asks.)
        // (A length that does not fit is refused by the reserve, not a
        // panic on the hit path.)
        f.record_hit(
            hs.saturating_add(len),
            regs,
            |b| faulted.set(put(b, hs, head, len, &mut fill)),
            |fate| {
                if fate != Fate::Written || faulted.get() {
                    counters.inc(count::of(fate), regs);
                }
            },
        );
    });
    if ev.targets.perf().is_set() {
        write_perf(ev, regs, hs, head, len, &mut fill);
    }
}

/// The perf side of [`write`], out of the way of the usual hit.
#[cold]
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
fn write_perf<F: FnMut(&mut [u8]) -> bool>(
    ev: &EventShared,
    regs: &PtRegs,
    hs: usize,
    head: [u64; 2],
    len: usize,
    fill: &mut F,
) {
    ev.targets.perf().with(|p| {
        if !p.run_bpf(regs) {
            return;
        }
        if let Some(mut r) = p.reserve(regs, hs.saturating_add(len)) {
            put(r.bytes(), hs, head, len, fill);
        }
    });
}

/// Fills a reserved record: the head words, then `fill` for the `len`
/// bytes after the head. Says whether a read of `fill` faulted.
#[inline(always)]
fn put<F: FnMut(&mut [u8]) -> bool>(
    b: &mut [u8],
    hs: usize,
    head: [u64; 2],
    len: usize,
    fill: &mut F,
) -> bool {
    // Fixed-size copies: a single store each (`copy_from_slice` would call
    // out to `memcpy`).
    if let Some(d) = b
        .get_mut(format::HEAD_IP..format::HEAD_IP + 8)
        .and_then(|d| <&mut [u8; 8]>::try_from(d).ok())
    {
        *d = head[0].to_ne_bytes();
    }
    if hs == format::KRETPROBE_HEAD {
        if let Some(d) = b
            .get_mut(format::HEAD_RET_IP..format::HEAD_RET_IP + 8)
            .and_then(|d| <&mut [u8; 8]>::try_from(d).ok())
        {
            *d = head[1].to_ne_bytes();
        }
    }
    match b.get_mut(hs..hs + len) {
        Some(d) => fill(d),
        None => false,
    }
}

impl kprobes::Handler for Hit {
    // Inline into the kprobe core's callback: one call and frame less a hit.
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn pre_handler(&self, regs: &PtRegs) {
        // C records the probe's address, not `regs->ip` (one past it with
        // kprobes on ftrace).
        let ip = self.addr.load(Ordering::Relaxed) as u64;
        self.record::<false>(regs, &[], ip, 0);
    }
}

impl kprobes::RetHandler for Hit {
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn entry(&self, regs: &PtRegs, data: &mut [u8]) {
        // store_trace_entry_data(): the function arguments `$argN` needs.
        for (i, &n) in self.probe.spec.entry.args().iter().enumerate() {
            let v = fetch::kernel_argument(&HitMachine::new(regs), u32::from(n));
            if let Some(d) = data.get_mut(8 * i..8 * i + 8) {
                d.copy_from_slice(&v.to_ne_bytes());
            }
        }
    }

    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn ret(&self, regs: &PtRegs, ret_ip: usize, data: &[u8]) {
        let func = self.addr.load(Ordering::Relaxed) as u64;
        self.record::<true>(regs, data, func, ret_ip as u64);
    }
}

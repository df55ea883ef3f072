// SPDX-License-Identifier: GPL-2.0-only

//! Kprobe-based event tracing, in Rust.
//!
//! The module provides the `kprobe_events` interface of
//! Documentation/trace/kprobetrace.rst: probe definitions written to
//! `<tracefs>/kprobe_events` become trace events (`events/kprobes/<EVENT>/`)
//! whose records the probe handlers write into the ring buffer;
//! `kprobe_profile` counts hits and misses, and `kprobe_misses` (the
//! module's own) why hits left no record, by cause; `dynamic_events` lists,
//! creates and removes the same probes. When the kernel has the C
//! implementation too, the files are `rkprobe_events`, `rkprobe_profile`
//! and `rkprobe_misses`, and the default group is `rkprobes`, so that both
//! can run in one boot.
//!
//! - [`probe`]: the probe language (parser, compiler, interpreter, formats),
//!   `core` only, host-tested.
//! - [`trace_kprobe`]: the probes, their events and handlers.
//! - [`kernel_env`]: the kernel's implementation of the probe language's traits.
//!
//! A probe, from a write to a record:
//!
//! 1. A write to `kprobe_events` is split into lines as
//!    `trace_parse_run_command()` does (`probe::lines`): 4096-byte chunks, a
//!    line cut at the end of a chunk read again at the start of the next, and
//!    the first failure stops the write with the lines before it applied. A
//!    line written to `dynamic_events` comes through the tracing core instead
//!    (the `dyn_event::Provider` of `trace_kprobe::Probes`).
//! 2. `probe::command::parse` turns the line into a probe, step by step as
//!    `__trace_kprobe_create()` does, and asks `kernel_env::KernelEnv` what it
//!    needs from the running kernel: symbols, function entries, and with BTF
//!    arguments the probed function's BTF (`kernel::btf`), held until the
//!    line is parsed.
//! 3. The registry (`trace_kprobe::Probes`) finds or makes the probe's event,
//!    registers the kprobe disarmed, and adds it to the event's probes to arm.
//! 4. While the event is enabled in an instance or open by perf, its kprobes
//!    are armed. On a hit, the handler (`trace_kprobe::hit`) runs the fetch
//!    programs (`probe::fetch`) and writes the record into every instance the
//!    event is enabled in.
//!
//! The kprobes of the probes that a write's `-:` lines removed are
//! unregistered together once the write has run its lines. An open with
//! `O_TRUNC` (shell `>`) removes every probe first, or none (`EBUSY`) if an
//! event is in use.
//!
//! The `kprobe_event` parameter defines and enables probes at load, as the
//! C implementation's `kprobe_event=` boot parameter does.
//!
//! perf, BPF and the client tools use the events as they use C's (see
//! Documentation/trace/rust-kprobetrace.rst for what is not there yet).

use kernel::{
    module_notifier,
    prelude::*,
    str::{BStr, CStr},
    sync::Arc,
    trace_event::dyn_event::Type,
    tracefs,
    uaccess::UserSliceReader,
};

mod kernel_env;
pub mod probe;
mod trace_kprobe;

use kernel_env::Raw;
use probe::lines::{run_commands, WRITE_BUFSIZE};
#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
use trace_kprobe::Local;
use trace_kprobe::Probes;

module! {
    type: RustKprobeEvents,
    name: "rust_kprobe_events",
    description: "Kprobe-based event tracing in Rust",
    license: "GPL",
}

kernel::module_param_str!(
    kprobe_event,
    "rust_kprobe_events",
    "Probes to define and enable at load, as the kprobe_event= boot parameter: ';' between definitions, ',' for spaces"
);

/// `kprobe_events`.
struct EventsFile(Arc<Type<Probes>>);

#[vtable]
impl tracefs::Operations for EventsFile {
    fn open(&self, truncate: bool) -> Result {
        if truncate {
            // `dyn_events_release_all()`, as C's `probes_open()`.
            self.0.release_all()?;
        }
        Ok(())
    }

    fn show(&self, mut m: &kernel::seq_file::SeqFile) -> Result {
        self.0.data().show(&mut Raw(&mut m))
    }

    fn write(&self, data: UserSliceReader) -> Result<usize> {
        let mut chunk = new_chunk()?;
        // (It has `WRITE_BUFSIZE` bytes: the conversion cannot fail.)
        let chunk =
            <&mut [u8; WRITE_BUFSIZE]>::try_from(chunk.as_mut_slice()).map_err(|_| EINVAL)?;
        self.0.data().write_start();
        let r = run_commands(
            data.len(),
            chunk,
            // C reads a cut line again at the start of the next chunk.
            |off, dst| {
                let mut r = data.clone_reader();
                r.skip(off)?;
                r.read_slice(dst)
            },
            |line| Probes::command(&self.0, line),
            || EINVAL,
        );
        // The `-:` lines' kprobes, together (one grace period).
        self.0.data().write_done();
        r
    }
}

/// `kprobe_profile`.
struct ProfileFile(Arc<Type<Probes>>);

#[vtable]
impl tracefs::Operations for ProfileFile {
    fn show(&self, mut m: &kernel::seq_file::SeqFile) -> Result {
        self.0.data().profile(&mut Raw(&mut m))
    }
}

/// `kprobe_misses`.
struct MissesFile(Arc<Type<Probes>>);

#[vtable]
impl tracefs::Operations for MissesFile {
    fn show(&self, mut m: &kernel::seq_file::SeqFile) -> Result {
        self.0.data().misses(&mut Raw(&mut m))
    }
}

/// Registers probes on modules as they load.
struct Coming(Arc<Type<Probes>>);

impl module_notifier::ModuleComing for Coming {
    fn coming(&self, name: &CStr) {
        self.0.data().module_coming(name.to_bytes());
    }
}

struct RustKprobeEvents {
    /// perf's kprobe PMU, served by the module: the first field dropped
    /// (the module is going: the core can pin it for no new event).
    #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
    _pmu: Pin<KBox<kernel::trace_event::local::KprobeProvider<Local>>>,
    _events: Pin<KBox<tracefs::File<EventsFile>>>,
    _profile: Pin<KBox<tracefs::File<ProfileFile>>>,
    _misses: Pin<KBox<tracefs::File<MissesFile>>>,
    _coming: Pin<KBox<module_notifier::ModuleNotifier<Coming>>>,
    probes: Arc<Type<Probes>>,
}

/// The files' names and the default group.
struct Names {
    events: &'static CStr,
    profile: &'static CStr,
    misses: &'static CStr,
    group: &'static [u8],
}

/// Beside the C implementation, other names.
const NAMES: Names = if cfg!(CONFIG_KPROBE_EVENTS) {
    Names {
        events: c"rkprobe_events",
        profile: c"rkprobe_profile",
        misses: c"rkprobe_misses",
        group: b"rkprobes",
    }
} else {
    Names {
        events: c"kprobe_events",
        profile: c"kprobe_profile",
        misses: c"kprobe_misses",
        group: b"kprobes",
    }
};

impl kernel::Module for RustKprobeEvents {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let probes = Probes::new(module, NAMES.group)?;
        let events = KBox::pin_init(
            tracefs::File::new(NAMES.events, 0o640, module, EventsFile(probes.clone())),
            GFP_KERNEL,
        )?;
        let profile = KBox::pin_init(
            tracefs::File::new(NAMES.profile, 0o440, module, ProfileFile(probes.clone())),
            GFP_KERNEL,
        )?;
        let misses = KBox::pin_init(
            tracefs::File::new(NAMES.misses, 0o440, module, MissesFile(probes.clone())),
            GFP_KERNEL,
        )?;
        let coming = KBox::pin_init(
            // After the other module notifiers, as the C kprobe events'
            // (`trace_kprobe_module_nb` in trace_kprobe.c).
            module_notifier::ModuleNotifier::new(2, Coming(probes.clone())),
            GFP_KERNEL,
        )?;
        // Last that can fail: perf may ask it for an event as soon as it is
        // registered, and a failed init must not drop it with an event lent.
        #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
        let pmu = KBox::pin_init(
            kernel::trace_event::local::KprobeProvider::new(module, Local(probes.clone())),
            GFP_KERNEL,
        )?;
        // Nothing below can fail: events may be defined from here on. Until
        // now none could be (`EBUSY`): a failed init frees the module,
        // whoever uses its events. Boot events are enabled, so in use;
        // defining them cannot fail (each error is logged).
        probes.data().set_ready();
        if let Some(list) = kprobe_event.value() {
            Probes::boot_events(&probes, list.to_bytes());
        }
        let (events_name, profile_name): (&BStr, &BStr) =
            (NAMES.events.as_ref(), NAMES.profile.as_ref());
        pr_info!("loaded; {events_name} and {profile_name} are ready\n");
        Ok(RustKprobeEvents {
            #[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
            _pmu: pmu,
            _events: events,
            _profile: profile,
            _misses: misses,
            _coming: coming,
            probes,
        })
    }
}

impl Drop for RustKprobeEvents {
    fn drop(&mut self) {
        // No event is enabled: an enabled event holds a reference on the
        // module, which cannot be unloaded then. An open `kprobe_events`
        // pins the module too, but a `dynamic_events` write may still define
        // a probe until `probes` goes (after the files): dropping it
        // unregisters the type, then drops what is left.
        if self.probes.release_all().is_err() {
            pr_warn!("probes still in use at unload\n");
        }
        pr_info!("unloaded\n");
    }
}

/// A write's 4 KiB chunk buffer, zeroed on the heap: no copy of it is ever
/// on the stack.
fn new_chunk() -> Result<KVec<u8>> {
    let mut chunk = KVec::with_capacity(WRITE_BUFSIZE, GFP_KERNEL)?;
    chunk.extend_with(WRITE_BUFSIZE, 0, GFP_KERNEL)?;
    Ok(chunk)
}

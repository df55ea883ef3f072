// SPDX-License-Identifier: GPL-2.0-only

//! Kprobe-based event tracing, in Rust.
//!
//! The module will provide the `kprobe_events` interface of
//! Documentation/trace/kprobetrace.rst. For now it only loads and unloads
//! cleanly and says so: defining probes is not implemented yet.

use kernel::prelude::*;

pub mod probe;

module! {
    type: RustKprobeEvents,
    name: "rust_kprobe_events",
    author: "rust-kprobe-events developers",
    description: "Kprobe-based event tracing in Rust",
    license: "GPL",
}

struct RustKprobeEvents;

impl kernel::Module for RustKprobeEvents {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        pr_info!("loaded; kprobe_events is not provided yet\n");
        Ok(RustKprobeEvents)
    }
}

impl Drop for RustKprobeEvents {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}

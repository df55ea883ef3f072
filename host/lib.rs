// SPDX-License-Identifier: GPL-2.0-only

//! Host build of the module's probe language, for tests, the fuzz target
//! and the benchmark.
//!
//! `src/probe.rs` is a module of the kernel crate `rust_kprobe_events`; its
//! children live in `src/probe/`. Declaring it inside an inline module with a
//! `#[path]` keeps that layout: the child files resolve exactly as they do in
//! the kernel build. That the probe language needs nothing but `core` is
//! checked by the kernel build, which compiles the same files without `std`.

#[path = "../src"]
mod module_src {
    pub mod probe;
}

pub mod btf_fixture;
pub mod fake;
pub mod fuzz;

pub use module_src::probe;

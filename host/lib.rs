// SPDX-License-Identifier: GPL-2.0-only

//! Host build of the module's probe language.
//!
//! `src/probe.rs` is a module of the kernel crate `rust_kprobe_events`; its
//! children live in `src/probe/`. Declaring it inside an inline module with a
//! `#[path]` keeps that layout: the child files resolve exactly as they do in
//! the kernel build.

#![no_std]

#[cfg(test)]
extern crate std;

#[path = "../src"]
mod module_src {
    pub mod probe;
}

pub use module_src::probe;

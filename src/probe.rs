// SPDX-License-Identifier: GPL-2.0-only

//! The probe language of `kprobe_events`: parse, compile and run probe specs.
//!
//! Depends on `core` only, so that the same files build in the kernel and on
//! the host (`cargo test`). Storage is the caller's.

#![forbid(unsafe_code)]

pub mod arch;
pub mod arg;
pub mod command;
pub mod error;
pub mod fetch;
pub mod format;
pub mod insn;
pub mod lines;
pub mod num;
pub mod output;
pub mod removal;
pub mod text;
pub mod types;

#[cfg(test)]
mod vectors;

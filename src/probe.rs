// SPDX-License-Identifier: GPL-2.0-only

//! The probe language of `kprobe_events`: parse, compile and run probe specs.
//!
//! Depends on `core` only, so that the same files build in the kernel and on
//! the host (`cargo test`). Storage is the caller's.
//!
//! A write goes through `lines` (its lines), `command` (one line: a
//! definition, or a removal that `removal` matches), `arg` (one argument,
//! compiled into an `insn` program and typed by `types`); `format` lays out
//! the record and the `format` file, and on a hit `fetch` runs the programs
//! and `output` prints the trace text. `error` is C's table of error codes
//! and texts, `env` what the parse asks of the kernel, `arch` the
//! architecture's registers and bounds, `text` the
//! bounded strings that carry C's bytes through `core::fmt`, `btf` what
//! the language reads of the kernel's BTF when it is built with BTF
//! arguments (parameter names, their fields and types).
//!
//! The kernel answers the language's questions through the `env::Env`
//! and `fetch::Machine` traits; the host tests answer them with a fake
//! kernel and machine.

// No unsafe code. Denied rather than forbidden for one exception, which
// the lint counts as unsafe: the interpreter's functions go into
// `.kprobes.text` in the kernel (`fetch.rs`, each allowing it for that
// attribute alone), so that nothing a probe hit runs can be probed.
#![deny(unsafe_code)]

pub mod arch;
pub mod arg;
pub mod btf;
pub mod command;
pub mod dialect;
pub mod env;
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

// SPDX-License-Identifier: GPL-2.0-only

//! The parser against the C implementation: `tests/vectors/c-ref.txt` is
//! what the C `kprobe_events` of the ref kernel answered to each spec of
//! `tests/vectors/specs.txt` (recorded by `scripts/oracle.sh record`, and
//! re-checked against the running C code by `make check`). For every spec
//! this test parses it, registers it on the fake kernel, and compares the
//! errno, the `error_log` message, command and caret, the read-back line,
//! the `format` fields and `print fmt`.

use std::boxed::Box;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::command::{self, registration_error, resolve_symbols, Tokens};
use super::error::{caret_position, errno};
use super::format::{fields, print_fmt, readback};
use super::text::{decode, Bytes, Escaped};
use crate::fake::FakeEnv;

/// Bytes, not text: names may hold Latin-1 letters, as C allows.
const C_REF: &[u8] = include_bytes!("../../tests/vectors/c-ref.txt");

fn strerror(e: i32) -> &'static str {
    match e {
        errno::EINVAL | errno::ECANCELED => "Invalid argument",
        errno::E2BIG => "Argument list too long",
        errno::ENOENT => "No such file or directory",
        errno::EOPNOTSUPP => "Operation not supported",
        errno::EILSEQ => "Invalid or incomplete multibyte or wide character",
        errno::EEXIST => "File exists",
        errno::ENOMEM => "Cannot allocate memory",
        _ => "?",
    }
}

/// Data symbols of the fake kernel (`kallsyms_lookup_name()`).
fn lookup(name: &[u8]) -> u64 {
    match name {
        b"_sdata" => 0xffff_ffff_8200_0000,
        b"linux_proc_banner" => 0xffff_ffff_8200_1000,
        _ => 0,
    }
}

/// What our implementation answers, in the oracle's format, as the bytes
/// C writes (names and strings are written through [`Bytes`]).
fn answer(line: &[u8]) -> Vec<u8> {
    let mut out = format!("=== {}\n", Bytes(line));
    let mut tokens = Box::new(Tokens::new());
    let mut result = command::parse(line, &mut tokens, &FakeEnv, Vec::new());
    // Registration (trace_kprobe.c:1055-1064): @SYM resolution, then
    // register_kprobe(), whose instruction-boundary check the fake models
    // for one known case.
    if let Ok(Some(p)) = &mut result {
        let mut reg = resolve_symbols(&mut p.args, &lookup);
        if reg.is_ok()
            && p.symbol == b"vfs_read"
            && p.place == (command::Place::Symbol { offset: 7 })
        {
            reg = Err(errno::EILSEQ);
        }
        if let Err(e) = reg {
            result = Err(registration_error(e));
        }
    }
    match result {
        Err(e) => {
            out += &format!("write: {}\n", strerror(e.errno));
            if let Some((code, caret)) = e.log {
                let cmd: Vec<String> = tokens.iter(line).map(|t| Bytes(t).to_string()).collect();
                out += &format!("log: {}\ncommand: {}\n", code.text(), cmd.join(" "));
                out += &format!("caret: {}\n", caret_position(tokens.iter(line), caret));
            }
        }
        Ok(None) => out += "write: ok\n",
        Ok(Some(p)) => {
            out += "write: ok\n";
            // register_kretprobe() fills in the default maxactive, which
            // the read-back then shows: max(10, 2 * possible CPUs). A probe
            // on a module that is not loaded is not registered yet.
            let registered = p.module().is_none();
            let mut maxactive = p.maxactive;
            if p.is_return && maxactive == 0 && registered {
                maxactive = 10;
            }
            let mut s = String::new();
            readback(&mut s, &p, p.names(), 0, maxactive).unwrap();
            out += &format!("probe: {s}");
            for f in fields(p.is_return, &p.args) {
                out += &format!("{}\n", f.to_string().replacen("\tfield:", "field: ", 1));
            }
            let mut pf = String::new();
            print_fmt(&mut pf, p.is_return, &p.args).unwrap();
            out += &format!("printfmt: {pf}\n");
        }
    }
    let mut bytes = Vec::new();
    decode(&out, |b| bytes.extend_from_slice(b));
    bytes
}

fn split<'a>(s: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = Some(s);
    core::iter::from_fn(move || {
        let r = rest?;
        match r.windows(sep.len()).position(|w| w == sep) {
            Some(i) => {
                rest = Some(&r[i + sep.len()..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

#[test]
fn parser_matches_c() {
    let mut entries = 0;
    let mut failures = Vec::new();
    for chunk in split(C_REF, b"\n=== ").skip(1) {
        let spec = chunk.split(|&c| c == b'\n').next().unwrap();
        if spec == b"end" {
            continue;
        }
        entries += 1;
        let mut expected = b"=== ".to_vec();
        expected.extend_from_slice(chunk);
        expected.push(b'\n');
        let got = answer(spec);
        if got != expected {
            failures.push(format!(
                "--- C:\n{}+++ Rust:\n{}",
                Escaped(&expected),
                Escaped(&got)
            ));
        }
    }
    assert!(entries > 150, "only {entries} vectors");
    assert!(
        failures.is_empty(),
        "{} of {entries} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

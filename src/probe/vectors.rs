// SPDX-License-Identifier: GPL-2.0-only

//! The parser against the C implementation: `tests/vectors/c-ref.txt` is
//! what the C `kprobe_events` of the ref kernel (6.12, with BTF arguments)
//! answered to each spec of `tests/vectors/specs.txt` and `specs-7.3.txt`
//! (recorded by `scripts/oracle.sh record`, and re-checked against the
//! running C code by `make check`); `tests/vectors/btf.raw` is that
//! kernel's BTF, cut down to the specs' functions and the structs they name
//! (`scripts/btf-fixture.py`, also re-checked). `c-ref-7.3.txt` and
//! `btf-7.3.raw` are the same from the `ref-7.3` kernel, C 7.3, answered in
//! 7.3's dialect.
//! `tests/vectors/c-ref-nobtf.txt` is what C built without BTF arguments
//! answered to the specs of then (the x86 ref kernel before it had BTF).
//! For every spec this test parses it, registers it on the fake kernel
//! (with the fixture's BTF, or without BTF), and compares the errno, the
//! `error_log` message, command and caret, the read-back line, the
//! `format` fields and `print fmt`. A caret recorded as `varies` (C's
//! after a field chain, see guest/oracle.sh) is not compared.

use std::boxed::Box;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::command::{self, registration_error, resolve_symbols, Tokens};
use super::dialect::Dialect;
use super::env::Env;
use super::error::{caret_position, errno};
use super::format::{fields, print_fmt, readback};
use super::text::{decode, Bytes, Escaped};
use crate::btf_fixture::FixtureEnv;
use crate::fake::FakeEnv;

/// Bytes, not text: names may hold Latin-1 letters, as C allows.
const C_REF: &[u8] = include_bytes!("../../tests/vectors/c-ref.txt");
/// C built without BTF arguments.
const C_REF_NOBTF: &[u8] = include_bytes!("../../tests/vectors/c-ref-nobtf.txt");
/// The ref kernel's BTF for the specs.
const BTF_FIXTURE: &[u8] = include_bytes!("../../tests/vectors/btf.raw");
/// C 7.3, with BTF arguments.
const C_REF_7_3: &[u8] = include_bytes!("../../tests/vectors/c-ref-7.3.txt");
/// The ref-7.3 kernel's BTF for the specs.
const BTF_FIXTURE_7_3: &[u8] = include_bytes!("../../tests/vectors/btf-7.3.raw");

fn strerror(e: i32) -> &'static str {
    match e {
        errno::EINVAL | errno::ECANCELED => "Invalid argument",
        errno::E2BIG => "Argument list too long",
        errno::ENOENT => "No such file or directory",
        errno::EOPNOTSUPP => "Operation not supported",
        errno::EILSEQ => "Invalid or incomplete multibyte or wide character",
        errno::EEXIST => "File exists",
        errno::ENOMEM => "Cannot allocate memory",
        errno::ERANGE => "Numerical result out of range",
        _ => "?",
    }
}

/// Data symbols of the fake kernel (`kallsyms_lookup_name()`).
fn lookup(name: &[u8]) -> u64 {
    match name {
        b"_sdata" => 0xffff_ffff_8200_0000,
        b"linux_proc_banner" => 0xffff_ffff_8200_1000,
        // A per-CPU variable: an offset in the per-CPU area.
        b"runqueues" => 0x0002_c2c0,
        _ => 0,
    }
}

/// What our implementation answers, in the oracle's format, as the bytes
/// C writes (names and strings are written through [`Bytes`]).
fn answer(line: &[u8], env: &dyn Env) -> Vec<u8> {
    let mut out = format!("=== {}\n", Bytes(line));
    let mut tokens = Box::new(Tokens::new());
    let mut result = command::parse(line, &mut tokens, env, Vec::new());
    // Registration (the end of __trace_kprobe_create()): @SYM resolution, then
    // register_kprobe(), whose instruction-boundary check the fake models
    // for the offsets the specs probe inside an instruction of vfs_read:
    // +7 in the 6.12 ref kernel, +7 and +8 in the 7.3 one.
    let inside: &[u32] = match env.dialect() {
        Dialect::Linux6_12 => &[7],
        Dialect::Linux7_3 => &[7, 8],
    };
    if let Ok(Some(p)) = &mut result {
        let mut reg = resolve_symbols(&mut p.args, &lookup);
        if reg.is_ok()
            && p.symbol == b"vfs_read"
            && matches!(p.place, command::Place::Symbol { offset } if inside.contains(&offset))
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
                out += &format!(
                    "log: {}\ncommand: {}\n",
                    env.dialect().text(code),
                    cmd.join(" ")
                );
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

/// Whether the parser answers every spec of `record` as C did, on `env`.
fn matches_c(record: &[u8], env: &dyn Env) {
    let mut entries = 0;
    let mut failures = Vec::new();
    for chunk in split(record, b"\n=== ").skip(1) {
        let spec = chunk.split(|&c| c == b'\n').next().unwrap();
        if spec == b"end" {
            continue;
        }
        entries += 1;
        let mut expected = b"=== ".to_vec();
        expected.extend_from_slice(chunk);
        expected.push(b'\n');
        let mut got = answer(spec, env);
        if expected.windows(15).any(|w| w == b"\ncaret: varies\n") {
            got = caret_varies(&got);
        }
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

/// `answer` with its caret line read as `caret: varies`.
fn caret_varies(answer: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in answer.split_inclusive(|&c| c == b'\n') {
        if line.starts_with(b"caret: ") {
            out.extend_from_slice(b"caret: varies\n");
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

#[test]
fn parser_matches_c_with_btf() {
    let env = FixtureEnv::new(BTF_FIXTURE).expect("tests/vectors/btf.raw is raw BTF");
    matches_c(C_REF, &env);
}

#[test]
fn parser_matches_c_7_3_with_btf() {
    let env = FixtureEnv::with_dialect(BTF_FIXTURE_7_3, Dialect::Linux7_3)
        .expect("tests/vectors/btf-7.3.raw is raw BTF");
    matches_c(C_REF_7_3, &env);
}

#[test]
fn parser_matches_c_without_btf() {
    matches_c(C_REF_NOBTF, &FakeEnv);
}

// SPDX-License-Identifier: GPL-2.0-only

//! The fuzz body: parse → compile → run → print, on the fake kernel, in
//! both languages (6.12's, and 7.3's with BTF).
//!
//! `fuzz/fuzz_targets/probe.rs` calls [`run`] under libFuzzer (`make fuzz`);
//! `cargo test` replays every input kept in `fuzz/corpus/probe/`. Whatever
//! the input, nothing may panic, overflow or index out of bounds, and the
//! results must hold together: a caret inside the command, a payload inside
//! the buffer, every `__data_loc` inside the payload.

use std::string::String;
use std::vec;
use std::vec::Vec;

use std::sync::OnceLock;

use crate::fake::{FakeBtfEnv, FakeEnv, FakeMachine, InDialect};
use crate::probe::command::{self, Tokens};
use crate::probe::dialect::Dialect;
use crate::probe::env::Env;
use crate::probe::error::caret_position;
use crate::probe::fetch::store;
use crate::probe::format::{fields, head_size, print_fmt, readback};
use crate::probe::output::{print_event, Head};
use crate::probe::removal::Removal;

/// Runs one input: up to 4 lines of probe commands; the bytes after a NUL,
/// if any, fill the fake machine's registers, stack and memory.
pub fn run(data: &[u8]) {
    let (text, machine_bytes) = match data.iter().position(|&b| b == 0) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (data, &[][..]),
    };
    let mut m = machine(machine_bytes);
    // Each line in both languages: 6.12's on the fake kernel, 7.3's on the
    // fake kernel with BTF (typecasts and `$current->...` need it).
    static BTF: OnceLock<InDialect<FakeBtfEnv>> = OnceLock::new();
    let new = BTF.get_or_init(|| InDialect(FakeBtfEnv::new(), Dialect::Linux7_3));
    let old = InDialect(FakeEnv, Dialect::Linux6_12);
    let envs: [&dyn Env; 2] = [&old, new];
    for env in envs {
        m.current = 0xffff_8880_0000_0000;
        m.cpu_offset = 0x10;
        run_on(text, env, &m);
    }
}

/// The lines of `text` on `env`, the hits on `m`.
fn run_on(text: &[u8], env: &dyn Env, m: &FakeMachine) {
    let mut tokens = Box::new(Tokens::new());
    for line in text.split(|&b| b == b'\n').take(4) {
        if line.first().is_some_and(|&c| c == b'-' || c == b'!') {
            if let Ok(r) = Removal::parse(line, &mut tokens, env.dialect()) {
                assert!(r.group.is_some() || !r.event.is_empty());
            }
            continue;
        }
        match command::parse(line, &mut tokens, env, Vec::new()) {
            Err(e) => {
                if let Some((_, caret)) = e.log {
                    let len: usize = tokens.iter(line).map(|t| t.len() + 1).sum();
                    let pos = caret_position(tokens.iter(line), caret);
                    assert!(pos <= len + 64, "caret {pos} far past a command of {len}");
                }
            }
            Ok(None) => {}
            Ok(Some(p)) => {
                assert!(p.args.len() <= 128);
                assert!(p.size <= 3072);
                let head = head_size(p.is_return);
                let mut buf = vec![0u8; 512];
                let edata = vec![0x5au8; p.entry.data_size()];
                let n = store(&p.args, p.size, m, &edata, head, &mut buf);
                assert!(n <= buf.len());
                for a in p.args.iter().filter(|a| a.dynamic) {
                    for j in 0..a.count.max(1) as usize {
                        let at = a.offset as usize + 4 * j;
                        if at + 4 > buf.len() {
                            continue;
                        }
                        let loc = u32::from_ne_bytes(buf[at..at + 4].try_into().unwrap());
                        let (len, off) = ((loc >> 16) as usize, (loc & 0xffff) as usize);
                        assert!(
                            len == 0 || (off >= head && off - head + len <= n),
                            "data_loc {loc:#x} outside {n}"
                        );
                    }
                }
                let mut s = String::new();
                let h = if p.is_return {
                    Head::Kretprobe { func: 1, ret_ip: 2 }
                } else {
                    Head::Kprobe { ip: 3 }
                };
                print_event(&mut s, p.event.as_bytes(), h, &p.args, &buf[..n], m).unwrap();
                readback(&mut s, &p, p.names(), 0, p.maxactive).unwrap();
                print_fmt(&mut s, p.is_return, &p.args).unwrap();
                assert_eq!(
                    fields(p.is_return, &p.args).count(),
                    p.args.len() + 1 + usize::from(p.is_return)
                );
            }
        }
    }
}

/// A fake machine whose registers, stack and memory come from `bytes`.
fn machine(bytes: &[u8]) -> FakeMachine {
    let mut m = FakeMachine::new();
    let mut words = bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_ne_bytes(w)
    });
    for r in m.regs.iter_mut() {
        *r = words.next().unwrap_or(0xffff_8880_0000_0000);
    }
    m.stack = words.by_ref().take(8).collect();
    // The memory the registers point at: kernel and user copies of the rest.
    let rest: Vec<u8> = bytes.iter().skip(8 * 29).copied().collect();
    for &base in &[0xffff_8880_0000_0000u64, 0x1000] {
        m.kmem.push((base, rest.clone()));
    }
    m.umem.push((0x1000, rest));
    m
}

#[cfg(test)]
mod tests {
    /// Replays every input kept in the fuzz corpus.
    #[test]
    fn replay_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/probe");
        let mut n = 0;
        for e in std::fs::read_dir(dir).expect("fuzz/corpus/probe") {
            let path = e.unwrap().path();
            super::run(&std::fs::read(&path).unwrap());
            n += 1;
        }
        assert!(n >= 10, "corpus has {n} inputs");
    }
}

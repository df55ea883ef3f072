// SPDX-License-Identifier: GPL-2.0-only

//! A fake kernel for host tests: a few symbols, as on the test kernel.

use std::vec::Vec;

use super::arg::Arg;
use super::command::{self, ArgList, Env, Line, Probe, Tokens};
use super::error::{caret_position, errno, ParseError};

/// Symbols and what the kernel would say about them.
pub struct FakeEnv;

/// Functions whose entry is at +0 or +4 (ENDBR).
const FUNCS: [&str; 9] = [
    "vfs_read",
    "kernel_clone",
    "do_sys_openat2",
    "dput",
    "kfree",
    "vfs_open",
    "eventfs_create_dir",
    "tracefs_create_dir",
    "do_exit",
];

impl Env for FakeEnv {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        let s = core::str::from_utf8(symbol).unwrap_or("");
        if let Some((module, _)) = s.split_once(':') {
            // Modules other than "loaded_mod" are not loaded: accepted.
            if module != "loaded_mod" {
                return Ok(());
            }
            return if s == "loaded_mod:mod_func" {
                Ok(())
            } else {
                Err(errno::ENOENT)
            };
        }
        if s == "name_show" {
            return Err(errno::EADDRNOTAVAIL);
        }
        if FUNCS.contains(&s) || s == "linux_proc_banner" {
            Ok(())
        } else {
            Err(errno::ENOENT)
        }
    }

    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        let s = core::str::from_utf8(symbol).unwrap_or("");
        if !FUNCS.contains(&s) && !s.contains(':') {
            return Err(errno::ENOENT);
        }
        if offset == 0 || offset == 4 {
            Ok(())
        } else {
            Err(errno::EINVAL)
        }
    }

    fn hash_pointer(&self, addr: u64) -> u64 {
        addr ^ 0x5a5a_0000
    }

    fn dentry_name_offset(&self) -> usize {
        0x28
    }

    fn file_dentry_offset(&self) -> usize {
        0x48
    }
}

impl ArgList for Vec<Arg> {
    fn push(&mut self, arg: Arg) -> Result<(), ()> {
        Vec::push(self, arg);
        Ok(())
    }

    fn as_slice(&self) -> &[Arg] {
        self
    }
}

/// Parses `line` against [`FakeEnv`].
pub fn parse(line: &str) -> Result<Option<Probe<Vec<Arg>>>, ParseError> {
    let mut tokens = Box::new(Tokens::new());
    match command::parse(line.as_bytes(), &mut tokens, &FakeEnv, Vec::new())? {
        Line::Empty => Ok(None),
        Line::Probe(p) => Ok(Some(p)),
    }
}

/// Parses `line` and returns the error with its caret column in the
/// command as `error_log` shows it.
pub fn error_at(line: &str) -> (ParseError, Option<usize>) {
    let mut tokens = Box::new(Tokens::new());
    let bytes = line.as_bytes();
    let e = match command::parse(bytes, &mut tokens, &FakeEnv, Vec::new()) {
        Ok(_) => panic!("{line:?} was accepted"),
        Err(e) => e,
    };
    let pos = e
        .log
        .map(|(_, caret)| caret_position(tokens.iter(bytes), caret));
    (e, pos)
}

use std::boxed::Box;

// SPDX-License-Identifier: GPL-2.0-only

//! A fake kernel for host tests: a few symbols, as on the test kernel.

use std::vec::Vec;

use crate::probe::arch::{Arch, X86_64};
use crate::probe::arg::{Arg, Parsed};
use crate::probe::command::{self, ArgList, Env, Probe, Tokens};
use crate::probe::error::{caret_position, errno, ParseError};

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

    fn arch(&self) -> &'static Arch {
        &X86_64
    }

    /// The test and ref kernels' (x86-64 without KASAN).
    fn stack_words(&self) -> u64 {
        2048
    }
}

/// [`FakeEnv`] on another architecture, or with another kernel stack
/// size (a KASAN kernel's).
pub struct FakeEnvOn {
    /// The register table the parser is given.
    pub arch: &'static Arch,
    /// `THREAD_SIZE / sizeof(long)`.
    pub stack_words: u64,
}

impl Env for FakeEnvOn {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        FakeEnv.validate_symbol(symbol)
    }
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        FakeEnv.on_func_entry(symbol, offset)
    }
    fn hash_pointer(&self, addr: u64) -> u64 {
        FakeEnv.hash_pointer(addr)
    }
    fn dentry_name_offset(&self) -> usize {
        FakeEnv.dentry_name_offset()
    }
    fn file_dentry_offset(&self) -> usize {
        FakeEnv.file_dentry_offset()
    }
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn stack_words(&self) -> u64 {
        self.stack_words
    }
}

impl ArgList for Vec<Arg> {
    type Store = Parsed;

    fn push(&mut self, arg: Arg) -> Result<(), ()> {
        Vec::push(self, arg);
        Ok(())
    }

    fn as_slice(&self) -> &[Arg] {
        self
    }
}

/// Parses `line` against [`FakeEnv`].
pub fn parse(line: &str) -> Result<Option<Probe<Vec<Arg>, &[u8]>>, ParseError> {
    let mut tokens = Box::new(Tokens::new());
    match command::parse(line.as_bytes(), &mut tokens, &FakeEnv, Vec::new())? {
        None => Ok(None),
        Some(p) => Ok(Some(p)),
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

/// A fake machine: registers, a stack, kernel and user memory regions,
/// symbols. Every string read is counted.
pub struct FakeMachine {
    /// The architecture whose `pt_regs` [`FakeMachine::regs`] is.
    pub arch: &'static Arch,
    /// `pt_regs`, by byte offset / 8.
    pub regs: Vec<u64>,
    /// Stack words from `sp` up.
    pub stack: Vec<u64>,
    /// Kernel memory: (address, bytes).
    pub kmem: Vec<(u64, Vec<u8>)>,
    /// User memory: (address, bytes).
    pub umem: Vec<(u64, Vec<u8>)>,
    /// `current->comm`.
    pub comm: [u8; 16],
    /// Symbols: (address, size, name).
    pub syms: Vec<(u64, u64, &'static str)>,
    /// String reads so far.
    pub string_reads: core::cell::Cell<usize>,
    /// The current task's `TASK_SIZE` ([`TASK_SIZE`] unless a test makes it
    /// a 32-bit task's).
    pub task_size: u64,
    /// How often [`Machine::task_size`] was asked.
    pub task_size_asks: core::cell::Cell<usize>,
}

/// `TASK_SIZE` of the fake machine (4-level paging).
pub const TASK_SIZE: u64 = 0x7fff_ffff_f000;

impl FakeMachine {
    /// An x86-64 machine: registers all zero, nothing mapped, comm
    /// "busybox".
    pub fn new() -> Self {
        Self::with_arch(&X86_64)
    }

    /// [`FakeMachine::new`] with the registers of `arch`.
    pub fn with_arch(arch: &'static Arch) -> Self {
        let mut comm = [0u8; 16];
        comm[..7].copy_from_slice(b"busybox");
        let words = arch
            .registers
            .iter()
            .map(|r| r.offset / 8 + 1)
            .max()
            .unwrap_or(0);
        FakeMachine {
            arch,
            regs: std::vec![0; words as usize],
            stack: Vec::new(),
            kmem: Vec::new(),
            umem: Vec::new(),
            comm,
            syms: Vec::new(),
            string_reads: core::cell::Cell::new(0),
            task_size: TASK_SIZE,
            task_size_asks: core::cell::Cell::new(0),
        }
    }

    /// Sets a register by name.
    pub fn set(&mut self, reg: &str, v: u64) {
        let off = self.arch.register_offset(reg.as_bytes()).expect("register");
        self.regs[off as usize / 8] = v;
    }

    fn find(mem: &[(u64, Vec<u8>)], addr: u64, len: usize) -> Option<&[u8]> {
        mem.iter().find_map(|(base, bytes)| {
            let start = addr.checked_sub(*base)? as usize;
            bytes.get(start..start.checked_add(len)?)
        })
    }

    fn strncpy(&self, mem: &[(u64, Vec<u8>)], addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        self.string_reads.set(self.string_reads.get() + 1);
        if dst.is_empty() {
            return Ok(0);
        }
        for i in 0..dst.len() {
            let b = Self::find(mem, addr.wrapping_add(i as u64), 1).ok_or(Fault)?[0];
            dst[i] = b;
            if b == 0 {
                return Ok(i + 1);
            }
        }
        let n = dst.len();
        dst[n - 1] = 0;
        Ok(n)
    }
}

use crate::probe::fetch::{Fault, Machine};

impl Machine for FakeMachine {
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn reg(&self, offset: u32) -> u64 {
        self.regs.get(offset as usize / 8).copied().unwrap_or(0)
    }
    fn stack_nth(&self, n: u32) -> u64 {
        self.stack.get(n as usize).copied().unwrap_or(0)
    }
    fn stack_pointer(&self) -> u64 {
        self.reg(self.arch.stack_pointer)
    }
    fn retval(&self) -> u64 {
        self.reg(self.arch.return_value)
    }
    fn task_size(&self) -> u64 {
        self.task_size_asks.set(self.task_size_asks.get() + 1);
        self.task_size
    }
    fn read_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        let Some(src) = Self::find(&self.kmem, addr, dst.len()) else {
            // The kernel's nofault copies may have copied part before the
            // fault: the caller must not use `dst` then.
            dst.fill(0xee);
            return Err(Fault);
        };
        dst.copy_from_slice(src);
        Ok(())
    }
    fn read_user(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        let Some(src) = Self::find(&self.umem, addr, dst.len()) else {
            // The kernel's nofault copies may have copied part before the
            // fault: the caller must not use `dst` then.
            dst.fill(0xee);
            return Err(Fault);
        };
        dst.copy_from_slice(src);
        Ok(())
    }
    fn strncpy_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        self.strncpy(&self.kmem, addr, dst)
    }
    fn strncpy_user(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        match self.strncpy(&self.umem, addr, dst)? {
            1 => Ok(0),
            n => Ok(n),
        }
    }
    fn comm(&self) -> [u8; 16] {
        self.comm
    }
    fn sprint_symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        let mut s = std::string::String::new();
        let _ = crate::probe::output::Symbols::with_offset(self, addr, &mut s);
        if s.is_empty() {
            s = std::format!("0x{addr:x}");
        }
        let n = s.len().min(dst.len());
        dst[..n].copy_from_slice(&s.as_bytes()[..n]);
        n
    }
}

impl crate::probe::output::Symbols for FakeMachine {
    fn with_offset(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self
            .syms
            .iter()
            .find(|(a, size, _)| addr >= *a && addr < a + size)
        {
            Some((a, size, name)) => write!(out, "{name}+0x{:x}/0x{size:x}", addr - a),
            None => Ok(()),
        }
    }
    fn name(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self
            .syms
            .iter()
            .find(|(a, size, _)| addr >= *a && addr < a + size)
        {
            Some((_, _, name)) => out.write_str(name),
            None => Ok(()),
        }
    }
}

// SPDX-License-Identifier: GPL-2.0-only

//! Raw BTF read as the kernel reads its own: for the host tests, the test
//! kernel's BTF cut down to what the spec vectors need
//! (`tests/vectors/btf.raw`, made by `scripts/btf-fixture.py`).

use std::vec::Vec;

use crate::fake::FakeEnv;
use crate::probe::arch::Arch;
use crate::probe::btf::{record_words, Btf, Func};
use crate::probe::dialect::Dialect;
use crate::probe::env::Env;

/// Raw BTF (the uapi format, little-endian): its records by id and its
/// string section.
pub struct RawBtf {
    /// Where each type's record starts in `words`; id 0 is `void`.
    starts: Vec<usize>,
    words: Vec<u32>,
    strings: Vec<u8>,
}

impl RawBtf {
    /// Reads `raw`: `None` if it is not raw little-endian BTF.
    pub fn parse(raw: &[u8]) -> Option<Self> {
        let u16_at = |o: usize| Some(u16::from_le_bytes(raw.get(o..o + 2)?.try_into().ok()?));
        let u32_at = |o: usize| Some(u32::from_le_bytes(raw.get(o..o + 4)?.try_into().ok()?));
        if u16_at(0)? != 0xeb9f {
            return None;
        }
        let hdr_len = u32_at(4)? as usize;
        let (type_off, type_len) = (u32_at(8)? as usize, u32_at(12)? as usize);
        let (str_off, str_len) = (u32_at(16)? as usize, u32_at(20)? as usize);
        let t0 = hdr_len + type_off;
        let mut words = std::vec![0u32; 3];
        let mut starts = std::vec![0];
        let mut pos = t0;
        while pos < t0 + type_len {
            let n = record_words(u32_at(pos + 4)?)?;
            starts.push(words.len());
            for i in 0..n {
                words.push(u32_at(pos + 4 * i)?);
            }
            pos += 4 * n;
        }
        let s0 = hdr_len + str_off;
        let strings = raw.get(s0..s0 + str_len)?.to_vec();
        Some(RawBtf {
            starts,
            words,
            strings,
        })
    }

    /// The id of the `FUNC` named `name`, if any.
    pub fn func(&self, name: &[u8]) -> Option<u32> {
        (1..self.starts.len() as u32).find(|&id| {
            self.type_record(id).is_some_and(|r| {
                crate::probe::btf::info_kind(r[1]) == crate::probe::btf::kind::FUNC
                    && self.name(r[0]) == Some(name)
            })
        })
    }
}

impl Btf for RawBtf {
    fn type_record(&self, id: u32) -> Option<&[u32]> {
        let start = *self.starts.get(id as usize)?;
        let end = self
            .starts
            .get(id as usize + 1)
            .copied()
            .unwrap_or(self.words.len());
        self.words.get(start..end)
    }

    fn name(&self, offset: u32) -> Option<&[u8]> {
        let rest = self.strings.get(offset as usize..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        Some(&rest[..end])
    }
}

/// The fake kernel ([`FakeEnv`]) built with BTF arguments and the BTF of
/// the fixture: what the `ref` kernel's C answers the spec vectors with
/// (`tests/vectors/c-ref.txt`). The fixture's functions are this kernel's
/// functions, with their entry at +0 or +4 (ENDBR) as [`FakeEnv`]'s.
pub struct FixtureEnv {
    /// The fixture.
    pub btf: RawBtf,
    /// The release the fixture is from, whose language the parse answers in.
    pub dialect: Dialect,
}

impl FixtureEnv {
    /// The fake 6.12 kernel with the BTF of `raw`.
    pub fn new(raw: &[u8]) -> Option<Self> {
        Self::with_dialect(raw, Dialect::Linux6_12)
    }

    /// The fake kernel of `dialect`'s release with the BTF of `raw`.
    pub fn with_dialect(raw: &[u8], dialect: Dialect) -> Option<Self> {
        Some(FixtureEnv {
            btf: RawBtf::parse(raw)?,
            dialect,
        })
    }

    /// Whether `symbol` (`[MOD:]SYM`) is one of the fixture's functions:
    /// those of vmlinux and of the loaded module it has the BTF of
    /// (trace-events-sample, whose functions the specs name with and
    /// without `MOD:`).
    fn has(&self, symbol: &[u8]) -> bool {
        let name = match symbol.iter().position(|&c| c == b':') {
            Some(p) if &symbol[..p] == b"trace_events_sample" => &symbol[p + 1..],
            Some(_) => return false,
            None => symbol,
        };
        self.btf.func(name).is_some()
    }
}

impl Env for FixtureEnv {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        if self.has(symbol) {
            return Ok(());
        }
        FakeEnv.validate_symbol(symbol)
    }
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        if symbol.contains(&b':') && !self.has(symbol) && !symbol.starts_with(b"loaded_mod:") {
            // A module that is not loaded has no functions yet.
            return Err(crate::probe::error::errno::ENOENT);
        }
        if self.has(symbol) {
            // FakeEnv's functions all have their entry at +0 or +4.
            return FakeEnv.on_func_entry(b"vfs_read", offset);
        }
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
        FakeEnv.arch()
    }
    fn stack_words(&self) -> u64 {
        FakeEnv.stack_words()
    }
    fn btf_args(&self) -> bool {
        true
    }
    /// As `btf_find_func_proto()` finds it: by the text as written, so a
    /// `MOD:SYM` has none.
    fn btf_func(&self, symbol: &[u8]) -> Option<Func<'_>> {
        let id = self.btf.func(symbol)?;
        let proto = self.btf.type_record(id)?[2];
        Some(Func {
            btf: &self.btf,
            proto,
        })
    }
    fn btf_struct(&self, name: &[u8]) -> Option<crate::probe::btf::Struct<'_>> {
        let id = crate::fake::find_by_name_kind(&self.btf, crate::probe::btf::kind::STRUCT, name)?;
        Some(crate::probe::btf::Struct { btf: &self.btf, id })
    }
    fn dialect(&self) -> Dialect {
        self.dialect
    }
}

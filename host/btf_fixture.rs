// SPDX-License-Identifier: GPL-2.0-only

//! Raw BTF read as the kernel reads its own: for the host tests, the test
//! kernel's BTF cut down to what the spec vectors need
//! (`tests/vectors/btf.raw`, made by `scripts/btf-fixture.py`).

use std::vec::Vec;

use crate::probe::btf::{record_words, Btf};

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

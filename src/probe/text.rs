// SPDX-License-Identifier: GPL-2.0-only

//! Small fixed-capacity byte strings and a bounded output buffer.
//!
//! The probe language allocates nothing: names and argument texts are short
//! and bounded by the C limits, so they live inline in [`Str`]; text output
//! goes to a caller's buffer through [`Buf`], which implements
//! [`core::fmt::Write`] and records an overflow instead of failing halfway.

use core::fmt;

/// Up to `N` bytes, inline. Bytes, not `str`: a user may write any byte
/// that is not whitespace.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Str<const N: usize> {
    len: u8,
    buf: [u8; N],
}

impl<const N: usize> Str<N> {
    /// The empty string.
    pub const fn new() -> Self {
        Str {
            len: 0,
            buf: [0; N],
        }
    }

    /// A copy of `s`, or `None` if it does not fit.
    pub fn from_bytes(s: &[u8]) -> Option<Self> {
        let mut r = Self::new();
        r.push(s).then_some(r)
    }

    /// Appends `s`; returns false (and changes nothing) if it does not fit.
    pub fn push(&mut self, s: &[u8]) -> bool {
        let len = usize::from(self.len);
        let Some(end) = len.checked_add(s.len()).filter(|&e| e <= N && e <= 255) else {
            return false;
        };
        self.buf[len..end].copy_from_slice(s);
        // INVARIANT: `end <= min(N, 255)`, checked above.
        self.len = end as u8;
        true
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len).min(N)]
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> Default for Str<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for Str<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", Bytes(self.as_bytes()))
    }
}

impl<const N: usize> fmt::Write for Str<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.push(s.as_bytes()) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// Displays bytes as they are where they are UTF-8, else escaped.
pub struct Bytes<'a>(pub &'a [u8]);

impl fmt::Display for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        loop {
            match core::str::from_utf8(rest) {
                Ok(s) => return f.write_str(s),
                Err(e) => {
                    let (valid, bad) = rest.split_at(e.valid_up_to());
                    // `valid` is UTF-8: it ends at `valid_up_to()`.
                    f.write_str(core::str::from_utf8(valid).unwrap_or(""))?;
                    let n = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                    for b in &bad[..n] {
                        write!(f, "\\x{b:02x}")?;
                    }
                    rest = &bad[n..];
                }
            }
        }
    }
}

/// A caller's byte buffer written from the front. Writing past the end
/// keeps what fits and sets [`Buf::overflowed`], like `trace_seq`.
pub struct Buf<'a> {
    buf: &'a mut [u8],
    len: usize,
    overflow: bool,
}

impl<'a> Buf<'a> {
    /// An empty writer over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Buf {
            buf,
            len: 0,
            overflow: false,
        }
    }

    /// Appends raw bytes.
    pub fn put(&mut self, s: &[u8]) {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
        if n < s.len() {
            self.overflow = true;
        }
    }

    /// What was written.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether something did not fit.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
}

impl fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
    }
}

/// `is_good_name()` / `is_good_system_name()` (trace.h:2112-2134): a C
/// identifier, optionally allowing `-` (group names).
pub fn is_good_name(name: &[u8], hyphen_ok: bool) -> bool {
    let ok_first = |c: u8| c.is_ascii_alphabetic() || c == b'_' || (hyphen_ok && c == b'-');
    match name.split_first() {
        Some((&first, rest)) => {
            ok_first(first) && rest.iter().all(|&c| ok_first(c) || c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn str_capacity() {
        let mut s = Str::<4>::new();
        assert!(s.push(b"ab"));
        assert!(!s.push(b"cde"));
        assert_eq!(s.as_bytes(), b"ab");
        assert!(write!(s, "{}", 12).is_ok());
        assert_eq!(s.as_bytes(), b"ab12");
        assert!(Str::<3>::from_bytes(b"abcd").is_none());
    }

    #[test]
    fn buf_overflow() {
        let mut mem = [0u8; 5];
        let mut b = Buf::new(&mut mem);
        let _ = write!(b, "{}-{}", 12, 345);
        assert_eq!(b.as_bytes(), b"12-34");
        assert!(b.overflowed());
    }

    #[test]
    fn names() {
        assert!(is_good_name(b"_a1", false));
        assert!(!is_good_name(b"1a", false));
        assert!(!is_good_name(b"", false));
        assert!(!is_good_name(b"a-b", false));
        assert!(is_good_name(b"a-b", true));
        assert!(is_good_name(b"-", true));
        assert!(!is_good_name(b"foo.1", true));
    }
}

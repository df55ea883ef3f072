// SPDX-License-Identifier: GPL-2.0-only

//! Small fixed-capacity byte strings and a bounded output buffer.
//!
//! The probe language allocates nothing: names and argument texts are short
//! and bounded by the C limits, so they live inline in [`Str`]; text output
//! goes to a caller's buffer through [`Buf`], which implements
//! [`core::fmt::Write`] and records an overflow instead of failing halfway.
//!
//! Names and strings are bytes (the kernel's `ctype` is Latin-1, and a
//! string may hold any byte), but [`core::fmt`] carries `&str`: [`Bytes`]
//! writes the bytes that are not UTF-8 as private-use characters, and
//! every byte sink turns them back with [`decode`], so the output is byte
//! for byte what C prints with `%s`.

use core::fmt::{self, Write as _};

/// Bytes of text, however they are kept: a probe's symbol is [`Str`] while
/// parsed, and may be kept out of line once the probe is stored
/// ([`crate::probe::command::Probe::map`]).
pub trait Text {
    /// The bytes.
    fn as_bytes(&self) -> &[u8];
}

impl Text for &[u8] {
    fn as_bytes(&self) -> &[u8] {
        self
    }
}

impl<const N: usize> Text for Str<N> {
    fn as_bytes(&self) -> &[u8] {
        Str::as_bytes(self)
    }
}

/// Up to `N` bytes, inline. Bytes, not `str`: a user may write any byte
/// that is not whitespace.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Str<const N: usize> {
    len: u16,
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
        let Some(end) = len
            .checked_add(s.len())
            .filter(|&e| e <= N && e <= usize::from(u16::MAX))
        else {
            return false;
        };
        self.buf[len..end].copy_from_slice(s);
        // INVARIANT: `end <= min(N, u16::MAX)`, checked above.
        self.len = end as u16;
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
        write!(f, "\"{}\"", Escaped(self.as_bytes()))
    }
}

/// Text written with [`Bytes`] is stored as the bytes it stands for.
impl<const N: usize> fmt::Write for Str<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut ok = true;
        decode(s, |b| ok &= self.push(b));
        if ok {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// Writes into a [`Str`] what fits and drops the rest, as `snprintf()`
/// does (a `Str`'s own [`fmt::Write`] fails instead).
pub struct Prefix<'a, const N: usize>(pub &'a mut Str<N>);

impl<const N: usize> fmt::Write for Prefix<'_, N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        decode(s, |b| {
            let room = N.min(usize::from(u16::MAX)) - self.0.len();
            self.0.push(&b[..b.len().min(room)]);
        });
        Ok(())
    }
}

/// The character that stands for byte `0x80 + i` in text: U+F780 + i, in
/// Unicode's private use area. [`Bytes`] writes each byte that is not part
/// of valid UTF-8 as one of these, and [`decode`] turns them back into the
/// bytes, so that names and strings go through [`core::fmt`] (which takes
/// `&str`) and still reach a byte sink exactly as they were, as C prints
/// them with `%s`.
const RAW_FIRST: u32 = 0xF780;
const RAW_LAST: u32 = 0xF7FF;

fn raw_char(b: u8) -> char {
    // U+F780..=U+F7FF are valid scalar values.
    char::from_u32(RAW_FIRST + u32::from(b & 0x7f)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Displays bytes exactly (through [`decode`] into a byte sink): valid
/// UTF-8 as it is, other bytes (and the UTF-8 of the characters that stand
/// for them) as the characters of [`RAW_FIRST`]`..=`[`RAW_LAST`].
pub struct Bytes<'a>(pub &'a [u8]);

impl fmt::Display for Bytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = |f: &mut fmt::Formatter<'_>, bytes: &[u8]| -> fmt::Result {
            for &b in bytes {
                f.write_char(raw_char(b))?;
            }
            Ok(())
        };
        for chunk in self.0.utf8_chunks_compat() {
            let (valid, invalid) = chunk;
            if !valid.as_bytes().contains(&0xef) {
                // No character of the raw range (U+F780.. encode as EF 9E/9F ..).
                f.write_str(valid)?;
            } else {
                for c in valid.chars() {
                    if (RAW_FIRST..=RAW_LAST).contains(&u32::from(c)) {
                        let mut b = [0u8; 4];
                        raw(f, c.encode_utf8(&mut b).as_bytes())?;
                    } else {
                        f.write_char(c)?;
                    }
                }
            }
            raw(f, invalid)?;
        }
        Ok(())
    }
}

/// Splits bytes into (valid UTF-8, invalid bytes) pieces, as
/// `<[u8]>::utf8_chunks()` does (not available in the kernel's minimum
/// Rust version).
trait Utf8ChunksCompat {
    fn utf8_chunks_compat(&self) -> Utf8Chunks<'_>;
}

impl Utf8ChunksCompat for [u8] {
    fn utf8_chunks_compat(&self) -> Utf8Chunks<'_> {
        Utf8Chunks(self)
    }
}

struct Utf8Chunks<'a>(&'a [u8]);

impl<'a> Iterator for Utf8Chunks<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let rest = self.0;
        match core::str::from_utf8(rest) {
            Ok(s) => {
                self.0 = &[];
                Some((s, &[]))
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                let n = e.error_len().unwrap_or(bad.len()).clamp(1, bad.len());
                self.0 = &bad[n..];
                // `valid` is UTF-8: it ends at `valid_up_to()`.
                Some((core::str::from_utf8(valid).unwrap_or(""), &bad[..n]))
            }
        }
    }
}

/// Turns text written with [`Bytes`] back into bytes: `out` gets runs of
/// the text's UTF-8, and one byte for each character of the raw range.
pub fn decode(s: &str, mut out: impl FnMut(&[u8])) {
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let v = u32::from(c);
        if (RAW_FIRST..=RAW_LAST).contains(&v) {
            if start < i {
                out(&s.as_bytes()[start..i]);
            }
            // 0x80..=0xff: the low 7 bits over 0x80.
            out(&[0x80 | (v - RAW_FIRST) as u8]);
            start = i + c.len_utf8();
        }
    }
    if start < s.len() {
        out(&s.as_bytes()[start..]);
    }
}

/// Displays bytes for a log or a debug message: valid UTF-8 as it is,
/// other bytes as `\xNN`.
pub struct Escaped<'a>(pub &'a [u8]);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (valid, invalid) in self.0.utf8_chunks_compat() {
            f.write_str(valid)?;
            for b in invalid {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

/// `isalpha()` of the kernel's `ctype` (lib/ctype.c), which is Latin-1:
/// ASCII letters and 0xc0-0xff but 0xd7 and 0xf7.
pub fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic() || (c >= 0xc0 && c != 0xd7 && c != 0xf7)
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

/// Text written with [`Bytes`] is stored as the bytes it stands for.
impl fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        decode(s, |b| self.put(b));
        Ok(())
    }
}

/// `is_good_name()` / `is_good_system_name()` (trace.h): a C
/// identifier, optionally allowing `-` (group names).
pub fn is_good_name(name: &[u8], hyphen_ok: bool) -> bool {
    let ok_first = |c: u8| is_alpha(c) || c == b'_' || (hyphen_ok && c == b'-');
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
    fn bytes_round_trip() {
        // Latin-1 letters, a lone continuation byte, valid UTF-8, and the
        // UTF-8 of a character of the raw range itself.
        let input: &[u8] = b"caf\xe9 \x80 \xc3\xa9 \xef\x9e\x80 end";
        let text = std::format!("{}", Bytes(input));
        let mut back = std::vec::Vec::new();
        decode(&text, |b| back.extend_from_slice(b));
        assert_eq!(back, input);
        assert_eq!(std::format!("{}", Escaped(b"a\xe9")), "a\\xe9");
        // Str and Buf store the bytes themselves.
        let mut s = Str::<16>::new();
        assert!(write!(s, "{}", Bytes(b"\xe9t\xe9")).is_ok());
        assert_eq!(s.as_bytes(), b"\xe9t\xe9");
        let mut mem = [0u8; 8];
        let mut buf = Buf::new(&mut mem);
        let _ = write!(buf, "<{}>", Bytes(b"\xff"));
        assert_eq!(buf.as_bytes(), b"<\xff>");
    }

    #[test]
    fn latin1_ctype() {
        assert!(is_alpha(b'a') && is_alpha(0xc0) && is_alpha(0xdf) && is_alpha(0xff));
        assert!(!is_alpha(0xd7) && !is_alpha(0xf7) && !is_alpha(0xa0) && !is_alpha(0xbf));
        assert!(is_good_name(b"caf\xe9", false));
        assert!(!is_good_name(b"e\xd7", false));
    }

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

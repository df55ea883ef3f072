// SPDX-License-Identifier: GPL-2.0-only

//! The kernel's string-to-integer conversions, as the C parser uses them.
//!
//! The probe language is defined by what `kstrtoul()`, `kstrtol()`,
//! `kstrtouint()` and `simple_strtoul()` accept (lib/kstrtox.c,
//! lib/vsprintf.c), quirks included: base 0 picks hex for `0x`/`0X` followed
//! by a hex digit, octal for a leading `0`, decimal otherwise; `kstrto*`
//! accept one leading `+` and one trailing newline and reject anything else
//! left over, or an overflow (`-ERANGE`); `simple_strtoul` stops at the first
//! non-digit and never fails.

/// Why a conversion failed (`-EINVAL` or `-ERANGE` in C). The parser only
/// needs to know that it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid;

/// `_parse_integer_fixup_radix()` (lib/kstrtox.c).
fn fixup_radix(s: &[u8], base: u32) -> (&[u8], u32) {
    let mut base = base;
    if base == 0 {
        if s.first() == Some(&b'0') {
            if s.len() > 2 && (s[1] | 0x20) == b'x' && s[2].is_ascii_hexdigit() {
                base = 16;
            } else {
                base = 8;
            }
        } else {
            base = 10;
        }
    }
    if base == 16 && s.len() >= 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' {
        return (&s[2..], base);
    }
    (s, base)
}

fn digit(c: u8) -> u32 {
    match c {
        b'0'..=b'9' => u32::from(c - b'0'),
        b'a'..=b'f' => u32::from(c - b'a') + 10,
        b'A'..=b'F' => u32::from(c - b'A') + 10,
        _ => u32::MAX,
    }
}

/// `_parse_integer()`: (value, digits consumed, overflowed). The value wraps
/// on overflow, as in C.
fn parse_integer(s: &[u8], base: u32) -> (u64, usize, bool) {
    let mut res: u64 = 0;
    let mut overflow = false;
    let mut n = 0;
    for &c in s {
        let v = digit(c);
        if v >= base {
            break;
        }
        match res
            .checked_mul(u64::from(base))
            .and_then(|r| r.checked_add(u64::from(v)))
        {
            Some(r) => res = r,
            None => {
                overflow = true;
                res = res.wrapping_mul(u64::from(base)).wrapping_add(u64::from(v));
            }
        }
        n += 1;
    }
    (res, n, overflow)
}

/// `_kstrtoull()`.
fn kstrtoull_raw(s: &[u8], base: u32) -> Result<u64, Invalid> {
    let (s, base) = fixup_radix(s, base);
    let (v, n, overflow) = parse_integer(s, base);
    if overflow || n == 0 {
        return Err(Invalid);
    }
    let rest = &s[n..];
    match rest {
        [] | [b'\n'] => Ok(v),
        _ => Err(Invalid),
    }
}

/// The negative branch of `kstrtoll()`: `digits` is what follows the `-`.
pub fn kstrtol_neg(digits: &[u8], base: u32) -> Result<i64, Invalid> {
    let v = kstrtoull_raw(digits, base)?;
    if v > (i64::MAX as u64) + 1 {
        return Err(Invalid);
    }
    Ok((v as i64).wrapping_neg())
}

/// `kstrtoul()` (= `kstrtoull()` on 64-bit).
pub fn kstrtoul(s: &[u8], base: u32) -> Result<u64, Invalid> {
    match s.first() {
        Some(b'+') => kstrtoull_raw(&s[1..], base),
        _ => kstrtoull_raw(s, base),
    }
}

/// Whether [`kstrtoul`] fails for an overflow (C's `-ERANGE`, which it
/// answers before looking at what follows the digits) rather than for
/// what the text is (`-EINVAL`).
pub fn kstrtoul_overflows(s: &[u8], base: u32) -> bool {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (s, base) = fixup_radix(s, base);
    parse_integer(s, base).2
}

/// `kstrtol()` (= `kstrtoll()` on 64-bit).
pub fn kstrtol(s: &[u8], base: u32) -> Result<i64, Invalid> {
    if s.first() == Some(&b'-') {
        kstrtol_neg(&s[1..], base)
    } else {
        let v = kstrtoul(s, base)?;
        i64::try_from(v).map_err(|_| Invalid)
    }
}

/// `kstrtouint()`.
pub fn kstrtouint(s: &[u8], base: u32) -> Result<u32, Invalid> {
    u32::try_from(kstrtoul(s, base)?).map_err(|_| Invalid)
}

/// `simple_strtoul()`: the value and the number of bytes consumed (including
/// a `0x` prefix). No sign, no error.
pub fn simple_strtoul(s: &[u8], base: u32) -> (u64, usize) {
    let (rest, base) = fixup_radix(s, base);
    let skipped = s.len() - rest.len();
    let (v, n, _) = parse_integer(rest, base);
    (v, skipped + n)
}

/// [`simple_strtoul`] as Linux 7.3 has it: a value that overflows is
/// `u64::MAX` (`_parse_integer_limit()` saturates, lib/kstrtox.c) where
/// 6.12's wraps.
pub fn simple_strtoul_saturating(s: &[u8], base: u32) -> (u64, usize) {
    let (rest, base) = fixup_radix(s, base);
    let skipped = s.len() - rest.len();
    let (v, n, overflow) = parse_integer(rest, base);
    (if overflow { u64::MAX } else { v }, skipped + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_and_signs() {
        assert_eq!(kstrtoul(b"10", 0), Ok(10));
        assert_eq!(kstrtoul(b"0x10", 0), Ok(16));
        assert_eq!(kstrtoul(b"0X1f", 0), Ok(31));
        assert_eq!(kstrtoul(b"010", 0), Ok(8));
        assert_eq!(kstrtoul(b"0", 0), Ok(0));
        assert_eq!(kstrtoul(b"+5", 0), Ok(5));
        assert_eq!(kstrtoul(b"5\n", 0), Ok(5));
        assert_eq!(kstrtoul(b"0x", 0), Err(Invalid));
        assert_eq!(kstrtoul(b"09", 0), Err(Invalid));
        assert_eq!(kstrtoul(b"", 0), Err(Invalid));
        assert_eq!(kstrtoul(b"-1", 0), Err(Invalid));
        assert_eq!(kstrtoul(b"18446744073709551615", 0), Ok(u64::MAX));
        assert_eq!(kstrtoul(b"18446744073709551616", 0), Err(Invalid));
        assert!(kstrtoul_overflows(b"18446744073709551616", 10));
        assert!(kstrtoul_overflows(b"+18446744073709551616x", 10));
        assert!(!kstrtoul_overflows(b"18446744073709551615", 10));
        assert!(!kstrtoul_overflows(b"12x", 10));
        assert_eq!(kstrtoul(b"12", 10), Ok(12));
        assert_eq!(kstrtoul(b"0x12", 10), Err(Invalid));
        assert_eq!(kstrtol(b"-10", 0), Ok(-10));
        assert_eq!(kstrtol(b"-0x10", 0), Ok(-16));
        assert_eq!(kstrtol(b"+0x10", 0), Ok(16));
        assert_eq!(kstrtol(b"-9223372036854775808", 0), Ok(i64::MIN));
        assert_eq!(kstrtol(b"9223372036854775808", 0), Err(Invalid));
        assert_eq!(kstrtol(b"--1", 0), Err(Invalid));
        assert_eq!(kstrtouint(b"4294967295", 0), Ok(u32::MAX));
        assert_eq!(kstrtouint(b"4294967296", 0), Err(Invalid));
    }

    #[test]
    fn simple() {
        assert_eq!(simple_strtoul(b"8@4/32", 0), (8, 1));
        assert_eq!(simple_strtoul(b"0x10@", 0), (16, 4));
        assert_eq!(simple_strtoul(b"@", 0), (0, 0));
        assert_eq!(simple_strtoul(b"12abc", 10), (12, 2));
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Loads and stores of 1, 2, 4 or 8 bytes at any alignment: one
//! instruction each, as the kernel's `get_unaligned()` and
//! `put_unaligned()` are where the architecture has efficient unaligned
//! access.
//!
//! Rust code for arm64 is built for strict alignment (rustc's
//! `aarch64-unknown-none-softfloat` target has `+strict-align`), so a copy
//! of a `[u8; 8]` into a byte buffer of unknown alignment is eight byte
//! stores and the shifts that feed them. The kernel's C for arm64 is built
//! without it (`HAVE_EFFICIENT_UNALIGNED_ACCESS`): the kernel runs with
//! alignment checks off for normal memory, which a Rust reference points
//! to. On arm64 [`put`] and [`get`] are therefore one `str` or `ldr` of the
//! size; elsewhere they are Rust's copy, which is already one instruction
//! on x86-64.
//!
//! C header: [`include/linux/unaligned.h`](srctree/include/linux/unaligned.h)

/// Stores `src` at `dst` (`N` is 1, 2, 4 or 8; other sizes are Rust's
/// copy).
///
/// # Examples
///
/// ```
/// use kernel::unaligned;
///
/// let mut buf = [0u8; 12];
/// // Eight bytes at offset 3 and two at offset 1: neither aligned.
/// let word = 0x1122_3344_5566_7788u64.to_ne_bytes();
/// unaligned::put(buf[3..].first_chunk_mut::<8>().ok_or(EINVAL)?, word);
/// unaligned::put(buf[1..].first_chunk_mut::<2>().ok_or(EINVAL)?, [9, 8]);
/// assert_eq!(buf[..3], [0, 9, 8]);
/// assert_eq!(buf[3..11], word);
/// assert_eq!(buf[11], 0);
/// assert_eq!(unaligned::get(buf[3..].first_chunk::<8>().ok_or(EINVAL)?), word);
/// let four = unaligned::get(buf[2..].first_chunk::<4>().ok_or(EINVAL)?);
/// assert_eq!(four, [8, word[0], word[1], word[2]]);
/// assert_eq!(unaligned::get(buf[1..].first_chunk::<1>().ok_or(EINVAL)?), [9]);
/// # Ok::<(), Error>(())
/// ```
#[inline(always)]
pub fn put<const N: usize>(dst: &mut [u8; N], src: [u8; N]) {
    #[cfg(CONFIG_ARM64)]
    if matches!(N, 1 | 2 | 4 | 8) {
        let mut w = [0u8; 8];
        w[..N].copy_from_slice(&src);
        let v = u64::from_ne_bytes(w);
        let p = dst.as_mut_ptr();
        // SAFETY: `dst` is valid for writes of `N` bytes, and the store
        // writes exactly those; unaligned stores to normal memory do not
        // fault on arm64 (alignment checking is off in the kernel).
        unsafe {
            match N {
                1 => core::arch::asm!("strb {v:w}, [{p}]", v = in(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags)),
                2 => core::arch::asm!("strh {v:w}, [{p}]", v = in(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags)),
                4 => core::arch::asm!("str {v:w}, [{p}]", v = in(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags)),
                _ => core::arch::asm!("str {v}, [{p}]", v = in(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags)),
            }
        }
        return;
    }
    *dst = src;
}

/// Loads the bytes at `src` (as [`put`]).
#[inline(always)]
pub fn get<const N: usize>(src: &[u8; N]) -> [u8; N] {
    #[cfg(CONFIG_ARM64)]
    if matches!(N, 1 | 2 | 4 | 8) {
        let p = src.as_ptr();
        let v: u64;
        // SAFETY: `src` is valid for reads of `N` bytes, and the load
        // reads exactly those; unaligned loads from normal memory do not
        // fault on arm64. The narrow loads zero the rest of the register.
        unsafe {
            match N {
                1 => core::arch::asm!("ldrb {v:w}, [{p}]", v = out(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags, readonly)),
                2 => core::arch::asm!("ldrh {v:w}, [{p}]", v = out(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags, readonly)),
                4 => core::arch::asm!("ldr {v:w}, [{p}]", v = out(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags, readonly)),
                _ => core::arch::asm!("ldr {v}, [{p}]", v = out(reg) v, p = in(reg) p,
                    options(nostack, preserves_flags, readonly)),
            }
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&v.to_ne_bytes()[..N]);
        return out;
    }
    *src
}

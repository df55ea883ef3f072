// SPDX-License-Identifier: GPL-2.0

//! Reads that cannot fault, for code that must not sleep (probe handlers):
//! kernel and user memory, strings of either, the user address limit
//! (`TASK_SIZE`), and the current task's command name.
//!
//! Most of these C functions are not exported to modules; the functions
//! here are plain functions of the kernel crate so that modules can use
//! them.
//!
//! C header: [`include/linux/uaccess.h`](srctree/include/linux/uaccess.h)
//!
//! # Examples
//!
//! ```
//! use kernel::nofault;
//!
//! // A kernel string, and an address that faults.
//! let s = c"hello";
//! let mut out = [0u8; 16];
//! assert_eq!(nofault::strncpy_kernel(s.as_char_ptr() as usize, &mut out), Ok(6));
//! assert_eq!(&out[..6], b"hello\0");
//! assert_eq!(nofault::strncpy_kernel(s.as_char_ptr() as usize, &mut out[..3]), Ok(3));
//! assert_eq!(&out[..3], b"he\0");
//! // Strings around the copies (16 bytes, then 128) and the 16-byte steps
//! // of the NUL search, whole and cut; a byte above 0x80 and a 0x01 (the
//! // bytes the word test's subtraction and mask could mistake for a NUL)
//! // included.
//! let mut long = [b'x'; 200];
//! long[3] = 0x81;
//! long[17] = 0x01;
//! let lens = [
//!     0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 18, 23, 24, 25, 31, 32, 33, 47, 48, 63, 64, 65,
//!     143, 144, 145, 150, 159, 160, 161, 199,
//! ];
//! for len in lens {
//!     let mut src = [0u8; 201];
//!     src[..len].copy_from_slice(&long[..len]);
//!     let mut out = [0xffu8; 256];
//!     assert_eq!(nofault::strncpy_kernel(src.as_ptr() as usize, &mut out), Ok(len + 1));
//!     assert_eq!(&out[..=len], &src[..=len]);
//!     // Cut to fewer bytes than the string: NUL-terminated, the full count.
//!     if len > 1 {
//!         let mut cut = [0xffu8; 64];
//!         let n = (len - 1).min(64);
//!         assert_eq!(nofault::strncpy_kernel(src.as_ptr() as usize, &mut cut[..n]), Ok(n));
//!         assert_eq!(&cut[..n - 1], &src[..n - 1]);
//!         assert_eq!(cut[n - 1], 0);
//!     }
//! }
//! // A string that ends at the last byte of a page followed by a guard page
//! // (vmalloc): read without touching the next page; one that does not end
//! // there faults, as in C (and leaves an empty string).
//! use kernel::{alloc::VVec, page::PAGE_SIZE};
//! let mut page = VVec::from_elem(b'y', PAGE_SIZE, GFP_KERNEL)?;
//! assert_eq!(page.as_ptr() as usize % PAGE_SIZE, 0);
//! let end = page.as_ptr() as usize + PAGE_SIZE;
//! page[PAGE_SIZE - 1] = 0;
//! let mut out = [0u8; 128];
//! assert_eq!(nofault::strncpy_kernel(end - 10, &mut out), Ok(10));
//! assert_eq!(&out[..10], b"yyyyyyyyy\0");
//! page[PAGE_SIZE - 1] = b'y';
//! out[0] = b'z';
//! assert_eq!(nofault::strncpy_kernel(end - 10, &mut out), Err(EFAULT));
//! assert_eq!(out[0], 0);
//! let mut w = [0u8; 8];
//! // A user-space address is not read as kernel memory.
//! assert!(nofault::read_kernel(8, &mut w).is_err());
//! assert!(nofault::read_kernel(s.as_char_ptr() as usize, &mut w[..2]).is_ok());
//! assert_eq!(&w[..2], b"he");
//! assert!(nofault::task_size() > 0x1000);
//! assert!(nofault::task_size() <= nofault::TASK_SIZE_BOUND);
//! assert!(nofault::task_size() >= nofault::TASK_SIZE_FLOOR);
//! // Kernel addresses are above it.
//! assert!(s.as_char_ptr() as usize >= nofault::TASK_SIZE_BOUND);
//! # Ok::<(), Error>(())
//! ```

use crate::{bindings, error::Result, prelude::*};
use core::ffi::c_void;

/// The current task's command name (`current->comm`), NUL-terminated.
#[inline]
pub fn current_comm() -> [u8; 16] {
    // SAFETY: `current` is valid in any task context and its `comm` is a
    // 16-byte array (its address from a C helper, which knows the layout).
    // `__set_task_comm()` may write it meanwhile, as for C's readers of it:
    // one volatile copy, and no reference to the array is made.
    unsafe { bindings::current_comm().cast::<[u8; 16]>().read_volatile() }
}

/// Reads kernel memory at `addr` into `dst` without faulting (`copy_from_kernel_nofault()`).
///
/// # Errors
///
/// `EFAULT`, or `ERANGE` for an address that is not kernel memory.
#[inline]
pub fn read_kernel(addr: usize, dst: &mut [u8]) -> Result {
    // SAFETY: `dst` is valid for writes; the source is read without faulting.
    let ret = unsafe {
        bindings::copy_from_kernel_nofault(
            dst.as_mut_ptr().cast(),
            addr as *const c_void,
            dst.len(),
        )
    } as i32;
    nofault_result(ret)
}

/// Reads user memory at `addr` into `dst` without faulting (`copy_from_user_nofault()`).
///
/// # Errors
///
/// `EFAULT`.
#[inline]
pub fn read_user(addr: usize, dst: &mut [u8]) -> Result {
    // SAFETY: as above.
    let ret = unsafe {
        bindings::copy_from_user_nofault(dst.as_mut_ptr().cast(), addr as *const c_void, dst.len())
    } as i32;
    nofault_result(ret)
}

/// What the two `copy_*_nofault()` return, as a result: 0, `-EFAULT`, or
/// `-ERANGE` (`copy_from_kernel_nofault()` of an address the architecture
/// does not allow: a user address on x86, its `copy_from_kernel_nofault_allowed()`
/// test in mm/maccess.c). Without a call: `to_result()` is one, and a fault is a
/// common answer on a probe hit (a pointer chain that ends in user memory or in
/// nothing).
#[inline(always)]
fn nofault_result(ret: i32) -> Result {
    match ret {
        0 => Ok(()),
        r if r == ERANGE.to_errno() => Err(ERANGE),
        _ => Err(EFAULT),
    }
}

/// `strncpy_from_kernel_nofault()`: bytes stored including the NUL (a
/// string longer than `dst` is cut and NUL-terminated, as in C).
///
/// C copies a byte at a time (mm/maccess.c), seven instructions a byte.
/// On x86-64, and on arm64 without memory tagging, this copies 16 bytes,
/// then up to 128 at a time, with `copy_from_kernel_nofault()` (words)
/// and looks for the NUL a word at a time. A copy never crosses a
/// page boundary, so it reads no page that C's loop would not read: past
/// the NUL it reads at most to the end of the NUL's page, where every byte
/// is as readable as the NUL (kernel mappings are made of pages, and a
/// fault is a page's; the reads are asm, not instrumented, so generic KASAN
/// does not see the bytes past an object's end). With arm64's tag-based
/// KASAN a fault can be finer than a page, and this is C's function. The
/// bytes of `dst` after the NUL are left as they were read.
///
/// # Errors
///
/// `EFAULT` (C: `-EFAULT`, or `-ERANGE` for an address that is not kernel
/// memory). `dst` then holds an empty string (C's holds the bytes copied
/// before the fault, cut there): callers must not use it.
#[cfg(any(
    CONFIG_X86_64,
    all(CONFIG_ARM64, not(CONFIG_KASAN_SW_TAGS), not(CONFIG_KASAN_HW_TAGS))
))]
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub fn strncpy_kernel(addr: usize, dst: &mut [u8]) -> Result<usize> {
    use crate::page::PAGE_SIZE;
    let count = dst.len();
    let mut done = 0;
    // Most strings a probe reads are short (names): a small first copy.
    let mut chunk = 16;
    while done < count {
        let at = addr.wrapping_add(done);
        let to_page_end = PAGE_SIZE - (at & (PAGE_SIZE - 1));
        let n = chunk.min(to_page_end).min(count - done);
        let Some(part) = dst.get_mut(done..done + n) else {
            break;
        };
        if read_kernel(at, part).is_err() {
            dst[0] = 0;
            return Err(EFAULT);
        }
        if let Some(z) = nul_in(part) {
            return Ok(done + z + 1);
        }
        done += n;
        chunk = 128;
    }
    if let Some(last) = dst.last_mut() {
        *last = 0;
    }
    Ok(count)
}

/// `strncpy_from_kernel_nofault()` itself, where a fault may be finer than
/// a page (see the other version).
///
/// # Errors
///
/// `EFAULT`.
#[cfg(not(any(
    CONFIG_X86_64,
    all(CONFIG_ARM64, not(CONFIG_KASAN_SW_TAGS), not(CONFIG_KASAN_HW_TAGS))
)))]
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub fn strncpy_kernel(addr: usize, dst: &mut [u8]) -> Result<usize> {
    // SAFETY: `dst` is valid for writes of its length.
    let n = unsafe {
        bindings::strncpy_from_kernel_nofault(
            dst.as_mut_ptr(),
            addr as *const c_void,
            dst.len() as _,
        )
    };
    if n < 0 {
        // C's leaves the bytes before the fault; this function's callers
        // see an empty string, as with the x86-64 version.
        if let Some(first) = dst.first_mut() {
            *first = 0;
        }
        return Err(EFAULT);
    }
    Ok(n as usize)
}

/// Where the first NUL of `b` is, a word at a time: the word's bytes in
/// address order as a little-endian number `v`, `(v - 0x01..01) & !v &
/// 0x80..80` has its lowest set bit in the first zero byte (a borrow only
/// runs upwards from a zero byte, so no byte below the first is marked).
/// Each word is one load on both architectures (Rust for arm64 is built
/// without strict alignment, as its C is), and inline it costs less than a
/// call to arm64's assembly `strnlen()` for the strings probes read.
#[cfg(any(
    CONFIG_X86_64,
    all(CONFIG_ARM64, not(CONFIG_KASAN_SW_TAGS), not(CONFIG_KASAN_HW_TAGS))
))]
#[inline(always)]
fn nul_in(b: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // Non-zero exactly when `v` has a zero byte; its lowest set bit is in
    // the first one.
    let zeros = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let word = |w: &[u8; 16], at: usize| {
        u64::from_le_bytes([
            w[at],
            w[at + 1],
            w[at + 2],
            w[at + 3],
            w[at + 4],
            w[at + 5],
            w[at + 6],
            w[at + 7],
        ])
    };
    // Two words a step, tested together (offsets cannot overflow: they are
    // below `b.len()`).
    let mut pairs = b.chunks_exact(16);
    let mut i = 0usize;
    for p in &mut pairs {
        let Ok(p) = <&[u8; 16]>::try_from(p) else {
            break;
        };
        let (zl, zh) = (zeros(word(p, 0)), zeros(word(p, 8)));
        if zl | zh != 0 {
            let at = if zl != 0 {
                zl.trailing_zeros() / 8
            } else {
                8 + zh.trailing_zeros() / 8
            };
            return Some(i.wrapping_add(at as usize));
        }
        i = i.wrapping_add(16);
    }
    pairs
        .remainder()
        .iter()
        .position(|&c| c == 0)
        .map(|z| i.wrapping_add(z))
}

/// `strncpy_from_user_nofault()`: bytes stored including the NUL, 0 for an
/// empty string.
///
/// # Errors
///
/// `EFAULT`.
#[inline]
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub fn strncpy_user(addr: usize, dst: &mut [u8]) -> Result<usize> {
    // SAFETY: as above.
    let n = unsafe {
        bindings::strncpy_from_user_nofault(
            dst.as_mut_ptr(),
            addr as *const c_void,
            dst.len() as isize,
        )
    };
    if n < 0 {
        return Err(EFAULT);
    }
    Ok(n as usize)
}

/// A bound no task's `TASK_SIZE` exceeds: `TASK_SIZE_MAX` with 5-level
/// paging (arch/x86/include/asm/page_64_types.h: `(1 << 56) - PAGE_SIZE`),
/// so that an address at or above it is known to be a kernel address
/// without reading the current task's `TASK_SIZE` (a helper call). Kernel
/// addresses start at or above `0xff00_0000_0000_0000`.
#[cfg(CONFIG_X86_64)]
pub const TASK_SIZE_BOUND: usize = (1 << 56) - crate::page::PAGE_SIZE;

/// A bound no task's `TASK_SIZE` is below: a 32-bit task with the
/// `ADDR_LIMIT_3GB` personality has `IA32_PAGE_OFFSET` 0xc0000000
/// (`IA32_PAGE_OFFSET`, `TASK_SIZE` in arch/x86/include/asm/page_64_types.h), every other
/// task more. An address below it is a user address for every task, so
/// it is read as user memory without reading `TASK_SIZE`.
#[cfg(CONFIG_X86_64)]
pub const TASK_SIZE_FLOOR: usize = 0xc000_0000;

/// A bound no task's `TASK_SIZE` exceeds: `TASK_SIZE_MAX` is `1 <<
/// VA_BITS` (arch/arm64/include/asm/processor.h), and `VA_BITS` is at
/// most 52. Kernel addresses start at or above `0xfff0_0000_0000_0000`.
#[cfg(CONFIG_ARM64)]
pub const TASK_SIZE_BOUND: usize = 1 << 52;

/// A bound no task's `TASK_SIZE` is below: a compat task's `TASK_SIZE_32`,
/// at the lowest `0x1_0000_0000` less a 64K page
/// (arch/arm64/include/asm/processor.h); a 64-bit task's is at least
/// `1 << 39`.
#[cfg(CONFIG_ARM64)]
pub const TASK_SIZE_FLOOR: usize = 0x1_0000_0000 - 0x1_0000;

/// `TASK_SIZE` of the current task.
#[inline]
pub fn task_size() -> usize {
    // SAFETY: reads the current task's address-space limit.
    unsafe { bindings::task_size() as usize }
}

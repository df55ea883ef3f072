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
//! use kernel::{c_str, nofault};
//!
//! // A kernel string, and an address that faults.
//! let s = c_str!("hello");
//! let mut out = [0u8; 16];
//! assert_eq!(nofault::strncpy_kernel(s.as_char_ptr() as usize, &mut out), Ok(6));
//! assert_eq!(&out[..6], b"hello\0");
//! assert_eq!(nofault::strncpy_kernel(s.as_char_ptr() as usize, &mut out[..3]), Ok(3));
//! assert_eq!(&out[..3], b"he\0");
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
//! ```

use crate::{bindings, error::Result, prelude::*};
use core::ffi::c_void;

/// The current task's command name (`current->comm`), NUL-terminated.
#[inline]
pub fn current_comm() -> [u8; 16] {
    let mut out = [0u8; 16];
    // SAFETY: `current` is valid in any task context and its `comm` is a
    // 16-byte array (read through a C helper, which knows the layout).
    let c = unsafe { core::slice::from_raw_parts(bindings::current_comm(), 16) };
    out.copy_from_slice(c);
    out
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
/// does not allow: a user address on x86, mm/maccess.c:31). Without a call:
/// `to_result()` is one, and a fault is a common answer on a probe hit
/// (a pointer chain that ends in user memory or in nothing).
#[inline(always)]
fn nofault_result(ret: i32) -> Result {
    match ret {
        0 => Ok(()),
        r if r == -(bindings::ERANGE as i32) => Err(ERANGE),
        _ => Err(EFAULT),
    }
}

/// `strncpy_from_kernel_nofault()`: bytes stored including the NUL.
///
/// # Errors
///
/// `EFAULT`.
#[inline(never)]
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
        return Err(EFAULT);
    }
    Ok(n as usize)
}

/// `strncpy_from_user_nofault()`: bytes stored including the NUL, 0 for an
/// empty string.
///
/// # Errors
///
/// `EFAULT`.
#[inline(never)]
pub fn strncpy_user(addr: usize, dst: &mut [u8]) -> Result<usize> {
    // SAFETY: as above.
    let n = unsafe {
        bindings::strncpy_from_user_nofault(dst.as_mut_ptr(), addr as *const c_void, dst.len() as _)
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
/// (arch/x86/include/asm/page_64_types.h:70-76), every other
/// task more. An address below it is a user address for every task, so
/// it is read as user memory without reading `TASK_SIZE`.
#[cfg(CONFIG_X86_64)]
pub const TASK_SIZE_FLOOR: usize = 0xc000_0000;

/// `TASK_SIZE` of the current task.
#[inline]
pub fn task_size() -> usize {
    // SAFETY: reads the current task's address-space limit.
    unsafe { bindings::task_size() as usize }
}

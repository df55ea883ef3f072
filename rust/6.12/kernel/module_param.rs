// SPDX-License-Identifier: GPL-2.0

//! Module parameters.
//!
//! 6.12's `module!` macro takes no parameters: this is the part of later
//! kernels' `kernel::module_param` that string parameters
//! ([`module_param_str!`](crate::module_param_str)) need.
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)

use crate::bindings;

mod string;
pub use string::*;

/// Newtype to make `bindings::kernel_param` [`Sync`].
#[repr(transparent)]
#[doc(hidden)]
pub struct KernelParam(bindings::kernel_param);

impl KernelParam {
    #[doc(hidden)]
    pub const fn new(val: bindings::kernel_param) -> Self {
        Self(val)
    }
}

// SAFETY: C kernel handles serializing access to this type. We never access it
// from Rust module.
unsafe impl Sync for KernelParam {}

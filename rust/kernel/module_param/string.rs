// SPDX-License-Identifier: GPL-2.0

//! String module parameters.
//!
//! [`module_param_str!`](crate::module_param_str) gives a module a
//! read-only string parameter (`charp`, as C's
//! `module_param(name, charp, 0444)`): set with `modprobe MODULE NAME=VALUE`,
//! or `MODULE.NAME=VALUE` on the kernel command line when built in, shown in
//! `/sys/module/MODULE/parameters/NAME` and by `modinfo`. The kernel's own
//! `param_ops_charp` parses and keeps the string, so that it lives as long
//! as the module, whether loaded or built in.
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)

use crate::{ffi::c_void, prelude::*};
use core::cell::UnsafeCell;

/// The value of a string parameter, written by the kernel's parameter
/// parser before the module's `init` runs.
///
/// # Invariants
///
/// The pointer is null or points to a NUL-terminated string. The parameter
/// is read-only (mode 0444, no `set` after load), so the pointer and the
/// string do not change after `init` starts, until the module is freed.
#[repr(transparent)]
pub struct StrParam(UnsafeCell<*mut u8>);

// SAFETY: written by the parameter parser before any Rust code of the
// module runs, then only read (type invariant).
unsafe impl Sync for StrParam {}

impl StrParam {
    /// A parameter not given yet.
    pub const fn new() -> Self {
        // INVARIANT: null; only the kernel's parameter parser writes it, at
        // load, before `init` starts (the `kernel_param` that
        // `module_param_str!` makes).
        Self(UnsafeCell::new(core::ptr::null_mut()))
    }

    #[doc(hidden)]
    pub const fn as_arg(&self) -> *mut c_void {
        self.0.get().cast()
    }

    /// The value given at load, if any.
    pub fn value(&self) -> Option<&CStr> {
        // SAFETY: by the type invariant, nothing writes the pointer now.
        let p = unsafe { *self.0.get() };
        // SAFETY: by the type invariant, a non-null pointer is a string that
        // lives as long as the module.
        (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) })
    }
}

impl Default for StrParam {
    fn default() -> Self {
        Self::new()
    }
}

/// `prefix` then `entry` then NUL, as a `.modinfo` string of `N` bytes
/// (`N` is the sum of the lengths plus one).
#[doc(hidden)]
pub const fn modinfo<const N: usize>(prefix: &str, entry: &str) -> [u8; N] {
    let (p, q) = (prefix.as_bytes(), entry.as_bytes());
    let mut a = [0u8; N];
    let mut i = 0;
    while i < p.len() && i < N {
        a[i] = p[i];
        i += 1;
    }
    while i < p.len() + q.len() && i < N {
        a[i] = q[i - p.len()];
        i += 1;
    }
    a
}

/// Declares `static $name: StrParam`, a read-only string parameter of the
/// module `$module` (its `name` in `module!`), described by `$desc`.
///
/// # Examples
///
/// ```
/// kernel::module_param_str!(greeting, "rkpe_doctest", "What to say at load");
///
/// // Built in, this is `rkpe_doctest.greeting=...` on the kernel command
/// // line: the test VM passes `hello`.
/// assert_eq!(greeting.value().map(|v| v.to_bytes()), Some(&b"hello"[..]));
/// // In a module's `init`:
/// if let Some(g) = greeting.value() {
///     let g: &kernel::str::BStr = g.as_ref();
///     pr_info!("{g}\n");
/// }
/// ```
#[macro_export]
macro_rules! module_param_str {
    ($name:ident, $module:literal, $desc:literal) => {
        #[expect(non_upper_case_globals)]
        static $name: $crate::module_param::StrParam = $crate::module_param::StrParam::new();

        const _: () = {
            // A module's parameters are named without a prefix; built-in
            // code's with `module.` (MODULE_PARAM_PREFIX).
            #[cfg(MODULE)]
            const NAME: &str = concat!(stringify!($name), "\0");
            #[cfg(not(MODULE))]
            const NAME: &str = concat!($module, ".", stringify!($name), "\0");
            #[cfg(MODULE)]
            const PREFIX: &str = "";
            #[cfg(not(MODULE))]
            const PREFIX: &str = concat!($module, ".");

            #[cfg(MODULE)]
            extern "C" {
                static __this_module: $crate::types::Opaque<$crate::bindings::module>;
            }

            #[link_section = "__param"]
            #[used(compiler)]
            static PARAM: $crate::module_param::KernelParam =
                $crate::module_param::KernelParam::new($crate::bindings::kernel_param {
                    name: NAME.as_ptr().cast(),
                    // SAFETY: `__this_module` is the module's, made by the
                    // kernel at load and freed at unload.
                    #[cfg(MODULE)]
                    mod_: unsafe { __this_module.get() },
                    #[cfg(not(MODULE))]
                    mod_: ::core::ptr::null_mut(),
                    // INVARIANT: `param_ops_charp` sets `$name` to a
                    // NUL-terminated string that lives until the module is
                    // freed, and only when the parameters are parsed at load
                    // (before `init`): `perm` 0444 gives no way to set it later.
                    // SAFETY: a static the kernel exports.
                    ops: unsafe { ::core::ptr::addr_of!($crate::bindings::param_ops_charp) },
                    perm: 0o444,
                    level: -1,
                    flags: 0,
                    __bindgen_anon_1: $crate::bindings::kernel_param__bindgen_ty_1 {
                        arg: $name.as_arg(),
                    },
                });

            const PARM: &str = concat!("parm=", stringify!($name), ":", $desc);
            const PARMTYPE: &str = concat!("parmtype=", stringify!($name), ":charp");
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static MODINFO_PARM: [u8; PREFIX.len() + PARM.len() + 1] =
                $crate::module_param::modinfo(PREFIX, PARM);
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static MODINFO_PARMTYPE: [u8; PREFIX.len() + PARMTYPE.len() + 1] =
                $crate::module_param::modinfo(PREFIX, PARMTYPE);
        };
    };
}

// SPDX-License-Identifier: GPL-2.0

//! Kernel symbols: name to address, address to text.
//!
//! Most of these C functions are not exported to every module: the kernel
//! exports them to the Rust kprobe events module alone
//! (`EXPORT_SYMBOL_FOR_MODULES()`). The functions here that call one are
//! `#[inline]`, so that the call is in the calling module, where modpost
//! and the module loader refuse it to any other module; a plain function of
//! the kernel crate would be exported to every module with the call inside.
//!
//! C header: [`include/linux/kallsyms.h`](srctree/include/linux/kallsyms.h)
//!
//! # Examples
//!
//! ```
//! use kernel::kallsyms;
//!
//! let addr = kallsyms::lookup_name(c"vfs_read");
//! assert_ne!(addr, 0);
//! assert_eq!(kallsyms::lookup_name(c"no_such_symbol_zz"), 0);
//! for kernel_first in [false, true] {
//!     let c = kallsyms::count(None, c"vfs_read", kernel_first);
//!     assert_eq!((c.count, c.kernel_address), (1, Some(addr)));
//!     let c = kallsyms::count(None, c"no_such_symbol_zz", kernel_first);
//!     assert_eq!((c.count, c.kernel_address), (0, None));
//! }
//!
//! let mut buf = [0u8; kallsyms::SYMBOL_LEN];
//! let n = kallsyms::sprint_symbol(addr + 4, &mut buf);
//! assert!(buf[..n].starts_with(b"vfs_read+0x4/0x"));
//! let n = kallsyms::sprint_symbol_no_offset(addr + 4, &mut buf);
//! assert_eq!(&buf[..n], b"vfs_read");
//!
//! // A function entry is +0 (up to +4, the ENDBR, with IBT); +5 is not.
//! assert!(kallsyms::on_func_entry(c"vfs_read", 0).is_ok());
//! assert_eq!(kallsyms::on_func_entry(c"vfs_read", 5), Err(EINVAL));
//! assert!(kallsyms::on_func_entry_at(addr, 0).is_ok());
//! assert_eq!(kallsyms::on_func_entry_at(addr, 5), Err(EINVAL));
//! assert_ne!(kallsyms::hash_pointer(addr), 0);
//! ```

use crate::{bindings, prelude::*, sync::rcu};
use core::ffi::c_void;

/// Room for the text of [`sprint_symbol`] (`KSYM_SYMBOL_LEN`, rounded up;
/// bindgen cannot evaluate that macro, and rust/helpers/kallsyms.c asserts
/// at build time that it fits).
pub const SYMBOL_LEN: usize = 768;

/// The address of symbol `name`, or 0 (`kallsyms_lookup_name()`).
#[inline]
pub fn lookup_name(name: &CStr) -> usize {
    // SAFETY: `name` is NUL-terminated.
    unsafe { bindings::kallsyms_lookup_name(name.as_char_ptr()) as usize }
}

/// Counts one symbol of the kernel's own in the [`Count`] at `data`, keeping
/// its address: [`count`]'s callback.
///
/// # Safety
///
/// `data` must be the `Count` given to the iteration.
unsafe extern "C" fn count_one(data: *mut c_void, addr: usize) -> core::ffi::c_int {
    // SAFETY: `data` is the `Count` passed below.
    let c = unsafe { &mut *data.cast::<Count>() };
    c.count += 1;
    c.kernel_address = Some(addr);
    0
}

/// Whether the C string at `p` is `s`, compared as `strcmp()` does: up to
/// the first difference, without measuring `p` first (lists of events and
/// symbols are long: `CStr::from_char_ptr()`'s `strlen()` of each entry was
/// half the time of defining a probe).
///
/// # Safety
///
/// `p` points to a NUL-terminated string.
unsafe fn c_str_is(p: *const u8, s: &CStr) -> bool {
    // (Through the pointer: the kernel's `CStr` and core's, which later
    // kernels use, name their byte slices differently.)
    let s = s.as_char_ptr().cast::<u8>();
    let mut i = 0;
    loop {
        // SAFETY: the bytes of `s` and `p` before `i` matched and are not
        // NUL, so the NUL of each is at `i` or after.
        let (a, b) = unsafe { (*p.add(i), *s.add(i)) };
        if a != b {
            return false;
        }
        if b == 0 {
            return true;
        }
        i += 1;
    }
}

struct ModCount<'a> {
    name: &'a CStr,
    count: usize,
}

/// Counts module symbol `name` in the `ModCount` at `data` if it is the name looked for.
///
/// # Safety
///
/// `data` must be the `ModCount` given to the iteration, `name` a symbol
/// name.
unsafe extern "C" fn count_mod(
    data: *mut c_void,
    name: *const u8,
    _addr: usize,
) -> core::ffi::c_int {
    // SAFETY: `data` is the `ModCount` passed below; `name` is a symbol name.
    unsafe {
        let c = &mut *data.cast::<ModCount<'_>>();
        if c_str_is(name, c.name) {
            c.count += 1;
        }
    }
    0
}

/// Whether a module called `name` is loaded (`find_module()`).
///
/// # Examples
///
/// ```
/// use kernel::kallsyms::module_loaded;
///
/// assert!(!module_loaded(c"rkpe_no_such_module"));
/// ```
#[inline]
pub fn module_loaded(name: &CStr) -> bool {
    let _guard = rcu::read_lock_sched();
    // SAFETY: `find_module()` wants the module list stable: the RCU-sched
    // read side `_guard` holds; the module is not used after it.
    !unsafe { bindings::find_module(name.as_char_ptr()) }.is_null()
}

/// How many symbols have a name, and where the only one is when it is the
/// kernel's own (see [`count`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    /// How many symbols are called that.
    pub count: usize,
    /// The address of the symbol when there is exactly one and it is in the
    /// kernel image, not in a module: it stays where it is, so it can stand
    /// for the name in later lookups ([`on_func_entry_at`], registering a
    /// kprobe at an address), each of which would search the name again.
    pub kernel_address: Option<usize>,
}

/// How many symbols are called `name`: in the kernel and every module, or
/// in module `module` only (`number_of_same_symbols()`, trace_kprobe.c).
/// With `kernel_first`, a name the kernel has is counted in the kernel
/// only, modules that reuse it not counted (as Linux 7.3 counts).
#[inline]
pub fn count(module: Option<&CStr>, name: &CStr, kernel_first: bool) -> Count {
    let mut n = Count {
        count: 0,
        kernel_address: None,
    };
    if module.is_none() {
        // SAFETY: the callback only counts; `n` outlives the call.
        unsafe {
            bindings::kallsyms_on_each_match_symbol(
                Some(count_one),
                name.as_char_ptr(),
                core::ptr::from_mut(&mut n).cast(),
            )
        };
    }
    if kernel_first && n.count > 0 {
        if n.count != 1 {
            n.kernel_address = None;
        }
        return n;
    }
    let mut c = ModCount { name, count: 0 };
    let m = module.map_or(core::ptr::null(), |m| m.as_char_ptr());
    // SAFETY: as above.
    unsafe {
        bindings::module_kallsyms_on_each_symbol(
            m,
            Some(count_mod),
            core::ptr::from_mut(&mut c).cast(),
        )
    };
    n.count += c.count;
    if n.count != 1 {
        n.kernel_address = None;
    }
    n
}

/// Writes `sym+0xoff/0xsize [mod]` for `addr` (or its hex value) into
/// `buf`; returns the length (`sprint_symbol()`).
#[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
pub fn sprint_symbol(addr: usize, buf: &mut [u8; SYMBOL_LEN]) -> usize {
    // SAFETY: `buf` has room for `KSYM_SYMBOL_LEN` bytes.
    let n = unsafe { bindings::sprint_symbol(buf.as_mut_ptr(), addr) };
    n.max(0) as usize
}

/// As [`sprint_symbol`], without the offset (`sprint_symbol_no_offset()`).
pub fn sprint_symbol_no_offset(addr: usize, buf: &mut [u8; SYMBOL_LEN]) -> usize {
    // SAFETY: as above.
    let n = unsafe { bindings::sprint_symbol_no_offset(buf.as_mut_ptr(), addr) };
    n.max(0) as usize
}

/// Whether the function that holds `addr` has no ftrace call site, that is
/// whether it is `notrace` (all of the tracing core is): the test of C's
/// `__within_notrace_func()` (trace_kprobe.c). False for an address
/// in no symbol, and without `CONFIG_DYNAMIC_FTRACE`.
///
/// # Examples
///
/// ```
/// use kernel::kallsyms;
///
/// // The tracing core is built without ftrace call sites (which only
/// // CONFIG_DYNAMIC_FTRACE tells; without it every answer is false).
/// let reserve = kallsyms::lookup_name(c"trace_event_buffer_reserve");
/// assert!(reserve != 0);
/// assert_eq!(kallsyms::in_notrace_function(reserve), cfg!(CONFIG_DYNAMIC_FTRACE));
/// // Most of the kernel is traceable.
/// let read = kallsyms::lookup_name(c"vfs_read");
/// assert!(read != 0 && !kallsyms::in_notrace_function(read + 4));
/// assert!(!kallsyms::in_notrace_function(1));
/// ```
#[inline]
pub fn in_notrace_function(addr: usize) -> bool {
    #[cfg(CONFIG_DYNAMIC_FTRACE)]
    {
        let (mut size, mut offset) = (0, 0);
        if addr == 0 {
            return false;
        }
        // SAFETY: the out-pointers are valid; the name is not asked for.
        let found = unsafe { bindings::kallsyms_lookup_size_offset(addr, &mut size, &mut offset) };
        if found == 0 {
            return false;
        }
        let start = addr.wrapping_sub(offset);
        let end = start.wrapping_add(size).wrapping_sub(1);
        // SAFETY: no preconditions; `ftrace_location_range()` is inclusive.
        unsafe { bindings::ftrace_location_range(start, end) == 0 }
    }
    #[cfg(not(CONFIG_DYNAMIC_FTRACE))]
    {
        let _ = addr;
        false
    }
}

/// The name of the symbol that holds `addr` (`lookup_symbol_name()`),
/// written into `buf`; `None` for an address in no symbol.
#[inline]
pub fn symbol_name(addr: usize, buf: &mut [u8; NAME_LEN]) -> Option<&[u8]> {
    // SAFETY: `buf` has room for `KSYM_NAME_LEN` bytes.
    if unsafe { bindings::lookup_symbol_name(addr, buf.as_mut_ptr().cast()) } != 0 {
        return None;
    }
    let n = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Some(&buf[..n])
}

/// The longest symbol name, NUL included (`KSYM_NAME_LEN`).
pub const NAME_LEN: usize = bindings::KSYM_NAME_LEN as usize;

/// Whether `sym+offset` is a function entry for kprobes
/// (`kprobe_on_func_entry()`).
///
/// # Errors
///
/// `EINVAL`: not an entry; `ENOENT`: no such symbol.
#[inline]
pub fn on_func_entry(sym: &CStr, offset: u32) -> Result {
    // SAFETY: `sym` is NUL-terminated.
    crate::error::to_result(unsafe {
        bindings::kprobe_on_func_entry(core::ptr::null_mut(), sym.as_char_ptr(), offset as usize)
    })
}

/// As [`on_func_entry`], for the symbol at `addr` (a [`Count::kernel_address`]),
/// without searching its name again: `kprobe_on_func_entry(addr, NULL, offset)`.
///
/// # Errors
///
/// `EINVAL`: not an entry; `ENOENT`: no symbol there.
#[inline]
pub fn on_func_entry_at(addr: usize, offset: u32) -> Result {
    // SAFETY: the kprobe core only looks `addr` up in kallsyms.
    crate::error::to_result(unsafe {
        bindings::kprobe_on_func_entry(addr as *mut _, core::ptr::null(), offset as usize)
    })
}

/// What `%p` prints for `addr`, as a number: the hashed value. Printed
/// rather than asked of `ptr_to_hashval()`, as C's kprobe events name a
/// probe on an address with `%p`, which also follows `no_hash_pointers`.
#[inline]
pub fn hash_pointer(addr: usize) -> u64 {
    let mut buf = [0u8; 24];
    // SAFETY: the format takes one pointer; `buf` is big enough.
    let n = unsafe {
        bindings::snprintf(
            buf.as_mut_ptr(),
            buf.len(),
            c"%p".as_char_ptr(),
            addr as *const c_void,
        )
    };
    let n = (n.max(0) as usize).min(buf.len());
    buf[..n]
        .iter()
        .fold(0u64, |v, &c| match (c as char).to_digit(16) {
            Some(d) => (v << 4) | u64::from(d),
            None => v,
        })
}

/// Whether `addr` is the return trampoline of kretprobes
/// (`is_kretprobe_trampoline()`): a return address that a kretprobe
/// replaced.
#[inline]
pub fn is_kretprobe_trampoline(addr: usize) -> bool {
    #[cfg(CONFIG_KRETPROBE_ON_RETHOOK)]
    let trampoline = bindings::arch_rethook_trampoline as *const () as usize;
    // (`dereference_kernel_function_descriptor()` is the identity on the
    // architectures without function descriptors, which Rust supports.)
    #[cfg(not(CONFIG_KRETPROBE_ON_RETHOOK))]
    let trampoline = bindings::__kretprobe_trampoline as *const () as usize;
    addr == trampoline
}

// SPDX-License-Identifier: GPL-2.0

//! BTF, the kernel's type information: a type found by name and kind in
//! vmlinux's BTF or a loaded module's, and the type records and names it
//! leads to.
//!
//! A [`Btf`] holds a reference to the BTF it was found in (`btf_put()` when
//! it is dropped), so the records and names it hands out stay valid while it
//! lives. A record is read as the kernel lays it out
//! ([`include/uapi/linux/btf.h`](srctree/include/uapi/linux/btf.h)): the
//! three words of `struct btf_type`, then the words its kind adds.
//!
//! `btf_name_by_offset()` and `btf_put()` (and on older kernels
//! `bpf_find_btf_id()`) are exported to the Rust kprobe events module
//! alone; the functions here are `#[inline]`, so that the call is in the
//! calling module, where modpost refuses it to any other (as in
//! `kallsyms`). Ids are in section order: the
//! kernel adds records as they follow one another in the type section.
//!
//! C header: [`include/linux/btf.h`](srctree/include/linux/btf.h)
//!
//! # Examples
//!
//! ```
//! use kernel::btf;
//!
//! // ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
//! let (b, id) = btf::Btf::find(c"vfs_read", btf::KIND_FUNC)?;
//! let func = b.type_record(id).unwrap();
//! assert_eq!(btf::kind(func[1]), btf::KIND_FUNC);
//! assert_eq!(b.name(func[0]).unwrap().to_bytes(), b"vfs_read");
//! let proto = b.type_record(func[2]).unwrap();
//! assert_eq!(btf::kind(proto[1]), btf::KIND_FUNC_PROTO);
//! assert_eq!(btf::vlen(proto[1]), 4);
//! // The record holds the parameters: (name, type) after the head.
//! assert_eq!(proto.len(), 3 + 2 * 4);
//! assert_eq!(b.name(proto[3]).unwrap().to_bytes(), b"file");
//! assert_eq!(b.name(proto[9]).unwrap().to_bytes(), b"pos");
//! // Type 0 is void.
//! assert_eq!(b.type_record(0), Some(&[0u32, 0, 0][..]));
//! assert!(b.type_record(u32::MAX).is_none());
//!
//! assert_eq!(
//!     btf::Btf::find(c"no_such_function_zz", btf::KIND_FUNC).err(),
//!     Some(ENOENT)
//! );
//! let (t, id) = btf::Btf::find(c"task_struct", btf::KIND_STRUCT)?;
//! assert_eq!(btf::kind(t.type_record(id).ok_or(EINVAL)?[1]), btf::KIND_STRUCT);
//! # Ok::<(), Error>(())
//! ```

use crate::{bindings, error::to_result, prelude::*};
use core::ptr::NonNull;

/// `BTF_KIND_STRUCT`: a struct.
pub const KIND_STRUCT: u32 = 4;
/// `BTF_KIND_FUNC`: a function, whose `type` is its [`KIND_FUNC_PROTO`].
pub const KIND_FUNC: u32 = 12;
/// `BTF_KIND_FUNC_PROTO`: a function's return type and parameters.
pub const KIND_FUNC_PROTO: u32 = 13;

/// `BTF_INFO_KIND()` of a record's `info` (its second word).
pub const fn kind(info: u32) -> u32 {
    (info >> 24) & 0x1f
}

/// `BTF_INFO_VLEN()` of a record's `info`: members, parameters, values.
pub const fn vlen(info: u32) -> u32 {
    info & 0xffff
}

/// Words of a record with `info`, the three of `struct btf_type` included
/// (`btf_type_size()`); `None` for a kind this kernel does not know (the
/// kernel refuses BTF with one, `btf_check_meta()`).
pub const fn record_words(info: u32) -> Option<usize> {
    let vlen = vlen(info) as usize;
    let extra = match kind(info) {
        // UNKN (void), PTR, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC,
        // FLOAT, TYPE_TAG.
        0 | 2 | 7 | 8 | 9 | 10 | 11 | 12 | 16 | 18 => 0,
        // INT, VAR, DECL_TAG: one word.
        1 | 14 | 17 => 1,
        // ARRAY: `struct btf_array`.
        3 => 3,
        // STRUCT, UNION (`struct btf_member`), DATASEC
        // (`struct btf_var_secinfo`), ENUM64 (`struct btf_enum64`).
        4 | 5 | 15 | 19 => 3 * vlen,
        // ENUM (`struct btf_enum`), FUNC_PROTO (`struct btf_param`).
        6 | 13 => 2 * vlen,
        _ => return None,
    };
    Some(3 + extra)
}

/// A reference to vmlinux's BTF or a loaded module's.
///
/// # Invariants
///
/// `ptr` points to a `struct btf` this value holds a reference to.
pub struct Btf {
    ptr: NonNull<bindings::btf>,
}

// SAFETY: a `Btf` reads only the types array and the type and string
// sections of a `struct btf`, which are not written once it is published
// (module BTF is relocated before), and `btf_put()` may run on any thread
// (an atomic count; `btf_free_id()` takes its lock with interrupts saved,
// and the BTF is freed after an RCU grace period).
unsafe impl Send for Btf {}
// SAFETY: see `Send`: `&Btf` only reads what does not change.
unsafe impl Sync for Btf {}

impl Btf {
    /// The BTF with a type named `name` of kind `kind` (`BTF_KIND_*`), and
    /// the type's id: vmlinux's BTF first, then each loaded module's
    /// (`bpf_find_btf_id()`). May sleep (the first call parses vmlinux's
    /// BTF).
    ///
    /// # Errors
    ///
    /// `ENOENT` when no BTF has it; `EINVAL` or the parse's error when the
    /// kernel has no vmlinux BTF.
    #[inline]
    pub fn find(name: &CStr, kind: u32) -> Result<(Btf, u32)> {
        let mut btf = core::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated; `btf` is written only on
        // success, with a reference the caller owns.
        let id = unsafe { bindings::bpf_find_btf_id(name.as_char_ptr(), kind, &mut btf) };
        to_result(id)?;
        // Always set with a positive id; the check costs nothing.
        let ptr = NonNull::new(btf).ok_or(crate::error::code::ENOENT)?;
        // INVARIANT: `bpf_find_btf_id()` took a reference for the caller.
        Ok((Btf { ptr }, id as u32))
    }

    /// The record of type `id` (`btf_type_by_id()`), `None` past the last
    /// id. Id 0 is `void`, three zero words.
    #[inline]
    pub fn type_record(&self, id: u32) -> Option<&[u32]> {
        // SAFETY: `self.ptr` is a BTF this value holds a reference to.
        let t = unsafe { bindings::btf_type_by_id(self.ptr.as_ptr(), id) };
        if t.is_null() {
            return None;
        }
        // SAFETY: `t` is a record of this BTF, or for id 0 the static
        // `btf_void` (12 zero bytes): its first words are a
        // `struct btf_type`. The type section starts 4-aligned (the kernel
        // checks `type_off`; the header is pahole's 24 bytes and the data
        // the kernel's own copy or section), as C's reads of `t->info`
        // assume too.
        let info = unsafe { (*t).info };
        let words = record_words(info)?;
        // SAFETY: the kernel checked, when it loaded this BTF, that every
        // record's data (`btf_type_size()` bytes, what `record_words()`
        // counts) lies in its type section (`btf_check_meta()`); `void`
        // has no data past its head. The section is not written after the
        // BTF is published and lives while it does (a split BTF's ids below
        // its own are vmlinux's, which lives forever), and this value holds
        // a reference for the lifetime of the slice.
        Some(unsafe { core::slice::from_raw_parts(t.cast::<u32>(), words) })
    }

    /// The name at `offset` of the string section (`btf_name_by_offset()`;
    /// empty for 0), `None` for an offset past the section.
    #[inline]
    pub fn name(&self, offset: u32) -> Option<&CStr> {
        // SAFETY: `self.ptr` is a BTF this value holds a reference to.
        let p = unsafe { bindings::btf_name_by_offset(self.ptr.as_ptr(), offset) };
        if p.is_null() {
            return None;
        }
        // SAFETY: a BTF's names are NUL-terminated strings of its string
        // section, which lives while the BTF does.
        Some(unsafe { CStr::from_char_ptr(p) })
    }
}

impl Drop for Btf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: by the type invariant, this value holds a reference.
        unsafe { bindings::btf_put(self.ptr.as_ptr()) };
    }
}

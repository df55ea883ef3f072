// SPDX-License-Identifier: GPL-2.0

//! Sequential files (`struct seq_file`): the text of a file that a
//! `show` callback produces, the buffer sized and retried by the C side.
//!
//! Upstream's `kernel::seq_file` of Linux 6.13 and later, in its shape (a
//! shared reference while a `show` callback runs), with only the write of
//! raw bytes (`seq_write()`) that the tracing abstractions need and that
//! Linux 7.3's gains in this series: their files print bytes that are not
//! always UTF-8 (user strings).
//!
//! C header: [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)

use crate::{bindings, types::Opaque};
use core::marker::PhantomData;

/// A `seq_file` being filled by a `show` callback.
///
/// # Invariants
///
/// `inner` is a valid `seq_file` for the lifetime of the reference through
/// which it is seen, used by no other thread meanwhile.
#[repr(transparent)]
pub struct SeqFile {
    inner: Opaque<bindings::seq_file>,
    /// Not `Send`: the `seq_file` is filled by the thread that reads it.
    _not_send: PhantomData<*mut ()>,
}

impl SeqFile {
    /// Borrows the `seq_file` at `ptr` as a [`SeqFile`] for `'a`.
    ///
    /// # Safety
    ///
    /// For `'a`, `ptr` points at a valid `seq_file` that no other thread
    /// accesses (a `show` callback's, while it runs).
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::seq_file) -> &'a Self {
        // INVARIANT: the caller guarantees that `ptr` is a valid `seq_file`
        // for `'a`, used by this thread only; `SeqFile` is not `Send`.
        // SAFETY: `repr(transparent)` over the `seq_file`; validity by the
        // caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Appends raw bytes. An overflow is recorded by the `seq_file`, whose
    /// reader retries with a bigger buffer.
    pub fn put(&self, bytes: &[u8]) {
        // SAFETY: by the type invariant the `seq_file` is valid; `bytes` is
        // valid for reads of its length.
        unsafe { bindings::seq_write(self.inner.get(), bytes.as_ptr().cast(), bytes.len()) };
    }
}

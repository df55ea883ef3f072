// SPDX-License-Identifier: GPL-2.0

//! The tracing core's `error_log` for a module's messages: [`ErrorLog`].

use crate::{bindings, error::Result, prelude::*, str::CStr, str::CString};
use core::ptr;

/// A message table for `error_log` (`tracing_log_err()`).
///
/// The error log keeps a pointer to the table, so dropping it first drops
/// the entries that use it (`tracing_log_err_forget()`, a kernel patch).
///
/// # Examples
///
/// ```
/// use kernel::trace_event::ErrorLog;
///
/// let log = ErrorLog::new(&["First problem", "Second problem"])?;
/// // `[ts] rkpe_doctest: error: Second problem`, `Command: p:x y`, a caret
/// // under `y`.
/// log.log(c"rkpe_doctest", c"p:x y", 1, 4);
/// log.log(c"rkpe_doctest", c"p:x z", 0, 0);
/// // A code past the table logs nothing.
/// log.log(c"rkpe_doctest", c"p:x w", 2, 0);
/// assert_eq!(log.forget(), 2);
/// assert_eq!(log.forget(), 0);
/// log.log(c"rkpe_doctest", c"p:x y", 1, 4);
/// // Dropping it forgets its entries too.
/// drop(log);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ptrs[i]` points to the NUL-terminated `texts[i]`; both live until drop.
pub struct ErrorLog {
    texts: KVec<CString>,
    ptrs: KVec<*const u8>,
}

// SAFETY: the table is immutable after creation; C only reads it.
unsafe impl Send for ErrorLog {}
// SAFETY: as above.
unsafe impl Sync for ErrorLog {}

impl ErrorLog {
    /// A table of `texts`, indexed by error code.
    ///
    /// # Errors
    ///
    /// `ENOMEM`.
    pub fn new(texts: &[&str]) -> Result<Self> {
        let mut t = KVec::with_capacity(texts.len(), GFP_KERNEL)?;
        for s in texts {
            t.push(CString::try_from_fmt(format_args!("{s}"))?, GFP_KERNEL)?;
        }
        let mut ptrs = KVec::with_capacity(t.len(), GFP_KERNEL)?;
        for c in t.iter() {
            ptrs.push(c.as_char_ptr(), GFP_KERNEL)?;
        }
        // INVARIANT: `ptrs[i]` is `t[i].as_char_ptr()`; a `CString`'s bytes
        // do not move with the vector, and neither vector changes after this.
        Ok(ErrorLog { texts: t, ptrs })
    }

    /// Drops the entries of `error_log` that use this table
    /// (`tracing_log_err_forget()`); returns how many there were.
    #[inline]
    pub fn forget(&self) -> usize {
        // SAFETY: the table is valid; the function takes the log's lock.
        let n = unsafe { bindings::tracing_log_err_forget(self.ptrs.as_ptr().cast_mut()) };
        n.max(0) as usize
    }

    /// Adds an entry to `error_log`: `[ts] LOC: error: TEXT`, the command
    /// and a caret at `pos`. Codes past the table are ignored.
    #[inline]
    pub fn log(&self, loc: &CStr, cmd: &CStr, code: usize, pos: usize) {
        if code >= self.texts.len() || code > usize::from(u8::MAX) {
            return;
        }
        let pos = pos.min(usize::from(u16::MAX)) as u16;
        // SAFETY: the strings are NUL-terminated; the table outlives the
        // log entries (`Drop`).
        unsafe {
            bindings::tracing_log_err(
                ptr::null_mut(),
                loc.as_char_ptr(),
                cmd.as_char_ptr(),
                self.ptrs.as_ptr().cast_mut(),
                code as u8,
                pos,
            )
        };
    }
}

impl Drop for ErrorLog {
    #[inline]
    fn drop(&mut self) {
        self.forget();
    }
}

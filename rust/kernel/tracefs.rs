// SPDX-License-Identifier: GPL-2.0

//! Files at the root of tracefs (`/sys/kernel/tracing`).
//!
//! A [`File`] creates a file whose reads are produced by
//! [`Operations::show`] through a `seq_file`, and whose writes go to
//! [`Operations::write`] with the user buffer. [`Operations::open`] sees
//! whether a writer opened with `O_TRUNC` (shell `>`), as
//! `kprobe_events` needs to clear its probes. The file's data is pinned
//! inside the registration (the inode keeps a pointer to it) and the file
//! is removed when the registration is dropped.
//!
//! `tracefs_create_file()` is not exported to modules, so the functions that
//! call it here are plain functions of the kernel crate.
//!
//! C header: [`include/linux/tracefs.h`](srctree/include/linux/tracefs.h)

use crate::{
    bindings,
    error::{from_result, to_result, Result},
    init,
    prelude::*,
    str::CStr,
    types::Opaque,
    uaccess::UserPtr,
    ThisModule,
};
use core::{ffi::c_void, fmt, marker::PhantomData, marker::PhantomPinned, ptr};

/// A `seq_file` being filled by [`Operations::show`].
///
/// # Invariants
///
/// Wraps a valid `seq_file` for the duration of the `show` call.
#[repr(transparent)]
pub struct SeqFile(Opaque<bindings::seq_file>);

impl SeqFile {
    /// # Safety
    ///
    /// `ptr` must be a valid `seq_file` for the lifetime `'a`, not used
    /// elsewhere meanwhile.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::seq_file) -> &'a mut Self {
        // SAFETY: `repr(transparent)`; validity by the caller.
        unsafe { &mut *ptr.cast::<Self>() }
    }

    /// Appends raw bytes.
    pub fn put(&mut self, bytes: &[u8]) {
        // SAFETY: by the type invariant the `seq_file` is valid; `bytes` is
        // valid for reads of its length. An overflow is recorded by the
        // `seq_file`, which retries with a bigger buffer.
        unsafe { bindings::seq_write(self.0.get(), bytes.as_ptr().cast(), bytes.len()) };
    }
}

impl fmt::Write for SeqFile {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
    }
}

/// What a tracefs file does.
#[vtable]
pub trait Operations: Sync + Sized {
    /// A file is opened; `truncate` when opened for writing with `O_TRUNC`.
    /// An error fails the `open()`.
    fn open(&self, _truncate: bool) -> Result {
        Ok(())
    }

    /// Produces the file's content.
    fn show(&self, m: &mut SeqFile) -> Result;

    /// A `write()` of `len` bytes at user address `buf`; returns the bytes
    /// taken.
    fn write(&self, _buf: UserPtr, _len: usize) -> Result<usize> {
        Err(EINVAL)
    }
}

/// A tracefs file at the root of tracefs.
///
/// # Examples
///
/// ```
/// use kernel::{c_str, tracefs};
///
/// struct Hello;
///
/// #[vtable]
/// impl tracefs::Operations for Hello {
///     fn show(&self, m: &mut tracefs::SeqFile) -> Result {
///         m.put(b"hello\n");
///         Ok(())
///     }
/// }
///
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let name = c_str!("rkpe_doctest_file");
/// let f = KBox::pin_init(tracefs::File::new(name, 0o440, &BUILTIN, Hello), GFP_KERNEL)?;
/// // The name is taken while the file exists, free again after.
/// let dup = KBox::pin_init(tracefs::File::new(name, 0o440, &BUILTIN, Hello), GFP_KERNEL);
/// assert_eq!(dup.err(), Some(ENODEV));
/// drop(f);
/// let again = KBox::pin_init(tracefs::File::new(name, 0o440, &BUILTIN, Hello), GFP_KERNEL)?;
/// drop(again);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `dentry` is the file created for `data`, with `data` as its inode's
/// private pointer and `fops` (`Adapter::<T>::FOPS` owned by the module
/// that made it, so that an open file pins the module) as operations,
/// until drop.
#[pin_data(PinnedDrop)]
pub struct File<T: Operations> {
    data: T,
    fops: bindings::file_operations,
    dentry: *mut bindings::dentry,
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: `T: Sync`; the dentry pointer is only used to remove the file.
unsafe impl<T: Operations> Sync for File<T> {}
// SAFETY: the file can be removed from any thread.
unsafe impl<T: Operations + Send> Send for File<T> {}

impl<T: Operations> File<T> {
    /// Creates file `name` with permissions `mode` (e.g. `0o640`).
    ///
    /// # Errors
    ///
    /// `ENODEV` if the file cannot be created: tracefs is not available or
    /// the name is taken (`tracefs_create_file()` does not say which).
    pub fn new(
        name: &'static CStr,
        mode: u16,
        module: &'static ThisModule,
        data: T,
    ) -> impl PinInit<Self, Error> {
        // SAFETY: the closure initialises every field, `data` and `fops`
        // before the file that exposes them; on error nothing refers to the
        // slot.
        unsafe {
            init::pin_init_from_closure(move |slot: *mut Self| {
                ptr::addr_of_mut!((*slot).data).write(data);
                ptr::addr_of_mut!((*slot)._pin).write(PhantomPinned);
                let fops = ptr::addr_of_mut!((*slot).fops);
                fops.write(bindings::file_operations {
                    owner: module.as_ptr(),
                    ..Adapter::<T>::FOPS
                });
                let private = ptr::addr_of_mut!((*slot).data).cast::<c_void>();
                match create_file(name, mode, private, fops) {
                    Ok(dentry) => {
                        ptr::addr_of_mut!((*slot).dentry).write(dentry);
                        Ok(())
                    }
                    Err(e) => {
                        ptr::drop_in_place(ptr::addr_of_mut!((*slot).data));
                        Err(e)
                    }
                }
            })
        }
    }

    /// The file's data.
    pub fn data(&self) -> &T {
        &self.data
    }
}

#[pinned_drop]
impl<T: Operations> PinnedDrop for File<T> {
    fn drop(self: Pin<&mut Self>) {
        // INVARIANT: after this no open of the file can reach `data`; opens
        // in progress hold a reference to the dentry and are waited for by
        // the VFS before the inode goes away.
        remove_file(self.dentry);
    }
}

/// `tracefs_create_file()` at the tracefs root. A plain kernel-crate
/// function: the C function is not exported to modules.
#[inline(never)]
fn create_file(
    name: &CStr,
    mode: u16,
    data: *mut c_void,
    fops: *const bindings::file_operations,
) -> Result<*mut bindings::dentry> {
    // SAFETY: `name` is NUL-terminated; `fops` and `data` stay valid until
    // `remove_file()` (the caller's invariant).
    let d = unsafe {
        bindings::tracefs_create_file(name.as_char_ptr(), mode, ptr::null_mut(), data, fops)
    };
    if d.is_null() {
        return Err(ENODEV);
    }
    // SAFETY: `d` is not null.
    if unsafe { bindings::IS_ERR(d.cast()) } {
        // SAFETY: `d` is an error pointer.
        return Err(Error::from_errno(
            unsafe { bindings::PTR_ERR(d.cast()) } as i32
        ));
    }
    Ok(d)
}

/// `tracefs_remove()`.
#[inline(never)]
fn remove_file(dentry: *mut bindings::dentry) {
    // SAFETY: `dentry` was returned by `tracefs_create_file()`.
    unsafe { bindings::tracefs_remove(dentry) };
}

struct Adapter<T: Operations>(PhantomData<T>);

impl<T: Operations> Adapter<T> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        owner: ptr::null_mut(),
        open: Some(Self::open),
        read: Some(bindings::seq_read),
        write: if T::HAS_WRITE {
            Some(Self::write)
        } else {
            None
        },
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        // SAFETY: all-zero is a valid `file_operations` (every op absent).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    /// # Safety
    ///
    /// Called by the VFS with a valid inode of a file made by `File<T>`.
    unsafe extern "C" fn open(
        inode: *mut bindings::inode,
        file: *mut bindings::file,
    ) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: the inode's private data is the `T` of the `File<T>`
            // (type invariant), alive while the file exists.
            let data = unsafe { (*inode).i_private };
            // SAFETY: `file` is valid during open.
            let (mode, flags) = unsafe { ((*file).f_mode, (*file).f_flags) };
            let truncate = mode & bindings::FMODE_WRITE != 0 && flags & bindings::O_TRUNC != 0;
            // SAFETY: see above.
            let t = unsafe { &*data.cast::<T>() };
            t.open(truncate)?;
            // SAFETY: `file` is valid; `show` gets `data` back as
            // `seq_file::private`.
            to_result(unsafe { bindings::single_open(file, Some(Self::show), data) })?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by `seq_read()` with the `seq_file` made by `open`.
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: `private` is the `T` given to `single_open()`.
            let t = unsafe { &*(*m).private.cast::<T>() };
            // SAFETY: `m` is valid for the call.
            t.show(unsafe { SeqFile::from_raw(m) })?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the VFS with a file opened by `open`.
    unsafe extern "C" fn write(
        file: *mut bindings::file,
        buf: *const u8,
        len: usize,
        _ppos: *mut bindings::loff_t,
    ) -> isize {
        // SAFETY: `open` made `private_data` a `seq_file` whose private
        // pointer is the `T`.
        let t = unsafe {
            &*(*(*file).private_data.cast::<bindings::seq_file>())
                .private
                .cast::<T>()
        };
        let r = t.write(buf as UserPtr, len);
        match r {
            Ok(n) => n as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

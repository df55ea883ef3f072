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
    error::{from_err_ptr, from_result, to_result, Result},
    prelude::*,
    seq_file::SeqFile,
    str::CStr,
    sync::{CondVar, SpinLock},
    uaccess::{UserPtr, UserSlice, UserSliceReader},
    ThisModule,
};
use core::{
    ffi::c_void,
    marker::{PhantomData, PhantomPinned},
    ptr,
};

/// What a tracefs file does.
#[vtable]
pub trait Operations: Sync + Sized {
    /// A file is opened; `truncate` when opened for writing with `O_TRUNC`.
    /// Not called when kernel lockdown refuses tracing files (`EPERM`).
    /// An error fails the `open()`.
    fn open(&self, _truncate: bool) -> Result {
        Ok(())
    }

    /// Produces the file's whole content when it is read (a `seq_file`
    /// with one record).
    fn show(&self, m: &SeqFile) -> Result;

    /// A `write()`: `data` reads the user's buffer (`data.len()` bytes);
    /// returns the bytes taken. A writer that reads part of the buffer
    /// again (as `trace_parse_run_command()` takes a cut line again at the
    /// start of its next chunk) reads through
    /// [`UserSliceReader::clone_reader`] and [`UserSliceReader::skip`].
    fn write(&self, _data: UserSliceReader) -> Result<usize> {
        Err(EINVAL)
    }
}

/// A tracefs file at the root of tracefs.
///
/// Its file operations are the kernel crate's own (built in, never unloaded);
/// they reach the [`Operations`] through the inode while the `File` exists.
/// An open file keeps the `File`'s data and the module of `T` (given to
/// [`File::new`]) alive: dropping a `File` removes it from tracefs, so that no
/// new open finds it, then waits until the files open on it are closed.
/// (The module cannot be unloaded while its files are open, and a module's
/// files do not open before its init is done, so in a module's exit, or a
/// failed init, that wait is over at once.)
///
/// # Examples
///
/// ```
/// use kernel::tracefs;
///
/// struct Hello;
///
/// #[vtable]
/// impl tracefs::Operations for Hello {
///     fn show(&self, m: &kernel::seq_file::SeqFile) -> Result {
///         m.put(b"hello\n");
///         Ok(())
///     }
/// }
///
/// // SAFETY: a null module is built-in code, which is never unloaded.
/// static BUILTIN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
/// let name = c"rkpe_doctest_file";
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
/// `node.0` (the dentry) is the file's until the drop removes it. From
/// creation until the drop clears it (under the inode lock), the inode's
/// private pointer is `shared`, whose `data` is `self.data`; `node.1` holds
/// a reference to the file's inode until the drop. `shared.opens`
/// counts the opens that found `shared` and have not been released, and
/// `shared.released` is notified when it drops to 0; each
/// holds a reference to `shared.module`.
#[pin_data(PinnedDrop)]
pub struct File<T: Operations> {
    data: T,
    #[pin]
    shared: Shared,
    node: (*mut bindings::dentry, *mut bindings::inode),
    #[pin]
    _pin: PhantomPinned,
}

// SAFETY: `T: Sync`; the inode pointer is only used to remove the file.
unsafe impl<T: Operations> Sync for File<T> {}
// SAFETY: the file can be removed from any thread.
unsafe impl<T: Operations + Send> Send for File<T> {}

/// What the kernel crate's file operations find through the inode and the
/// open file: the `T`, its callbacks, its module, and the count of opens.
#[pin_data]
struct Shared {
    data: *const c_void,
    vtable: &'static VTable,
    module: *mut bindings::module,
    /// The opens that found this `Shared` and are not released yet.
    #[pin]
    opens: SpinLock<usize>,
    /// Notified when `opens` drops to 0, for the `File`'s drop. A spinlock,
    /// not a mutex: the last `put()` lets go of it as its last use of the
    /// `Shared`, which the waiter then frees (`mutex_unlock()` may touch a
    /// mutex after another task took it).
    #[pin]
    released: CondVar,
}

// The names of the lock classes of the `Shared` of every `File`. Statics,
// not `new_spinlock!`/`new_condvar!` inside `File::new`: that is generic, so
// each crate that instantiates it would have its own copy of the name
// literal, and lockdep warns when the one class (the static key that
// `static_lock_class!` makes, one for every instance) comes with a second
// name pointer ("same key, different name").
static OPENS_NAME: &CStr = c"tracefs::File::opens";
static RELEASED_NAME: &CStr = c"tracefs::File::released";

/// `T`'s side of the file operations, monomorphised in `T`'s crate.
struct VTable {
    /// `T::open`, then `single_open()` with `show`.
    open: unsafe fn(*const Shared, *mut bindings::file) -> Result,
    write: unsafe fn(*const Shared, UserSliceReader) -> Result<usize>,
}

impl<T: Operations> File<T> {
    /// Creates file `name` with permissions `mode` (e.g. `0o640`); an open
    /// file holds a reference to `module`, the module of `T`.
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
        let fops = if T::HAS_WRITE { &FOPS_RW.0 } else { &FOPS_RO.0 };
        // Fields are initialised in the order written: the file that exposes
        // `data` and `shared` comes last, and an error there drops `data`.
        try_pin_init!(&this in Self {
            data,
            shared <- pin_init!(Shared {
                // SAFETY: the address of a field of the pinned slot, not read.
                data: unsafe { ptr::addr_of!((*this.as_ptr()).data) }.cast(),
                vtable: &Adapter::<T>::VTABLE,
                module: module.as_ptr(),
                opens <- SpinLock::new(0, OPENS_NAME, crate::static_lock_class!()),
                released <- CondVar::new(RELEASED_NAME, crate::static_lock_class!()),
            }),
            // INVARIANT: the dentry is the file `create_file()` made, whose
            // inode has `shared` (with `data`, both initialised above and
            // pinned with `this`) as its private pointer, and the inode
            // pointer the reference it took. `opens` was 0 before the file
            // existed, so it counts every open that found `shared`.
            node: create_file(
                name,
                mode,
                // SAFETY: as above.
                unsafe { ptr::addr_of_mut!((*this.as_ptr()).shared) }.cast(),
                fops,
            )?,
            _pin: PhantomPinned,
        }? Error)
    }

    /// The data given to [`File::new`], which the file's callbacks get.
    pub fn data(&self) -> &T {
        &self.data
    }
}

#[pinned_drop]
impl<T: Operations> PinnedDrop for File<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: the file's dentry and referenced inode, and its `Shared`
        // (type invariant); not used after.
        unsafe { remove_file(self.node.0, self.node.1, &self.shared) };
    }
}

/// Removes a `File`'s file and waits until nothing reaches `shared`.
/// `#[inline]`: `tracefs_remove()` is exported to the Rust kprobe events
/// module alone, so the call belongs in the calling module.
///
/// # Safety
///
/// `dentry`, `inode` and `shared` are a `File`'s, which is being dropped.
#[inline]
unsafe fn remove_file(dentry: *mut bindings::dentry, inode: *mut bindings::inode, shared: &Shared) {
    // SAFETY: `dentry` is the file's (by the caller's guarantee).
    unsafe { bindings::tracefs_remove(dentry) };
    // INVARIANT: after this no open can find `shared`: an open that looked
    // the file up before the removal takes the inode lock and finds the
    // private pointer cleared.
    // SAFETY: `inode` is referenced until the `iput()` below.
    unsafe {
        bindings::inode_lock(inode);
        (*inode).i_private = ptr::null_mut();
        bindings::inode_unlock(inode);
    }
    // The files open now (and opens that found `shared` before) use
    // `shared` and the data until their release.
    let mut opens = shared.opens.lock();
    if *opens != 0 {
        crate::pr_warn!("tracefs: waiting for the open files of a removed file\n");
    }
    while *opens != 0 {
        shared.released.wait(&mut opens);
    }
    drop(opens);
    // SAFETY: the reference taken by `create_file()`.
    unsafe { bindings::iput(inode) };
}

/// `tracefs_create_file()` at the tracefs root, and a reference to the new
/// file's inode. `#[inline]`: `tracefs_remove()` is exported to the Rust
/// kprobe events module alone, so the call belongs in the calling module.
#[inline]
fn create_file(
    name: &CStr,
    mode: u16,
    data: *mut c_void,
    fops: &'static bindings::file_operations,
) -> Result<(*mut bindings::dentry, *mut bindings::inode)> {
    // SAFETY: `name` is NUL-terminated; `data` stays valid until the caller
    // clears the inode's private pointer.
    let d = unsafe {
        bindings::tracefs_create_file(name.as_char_ptr(), mode, ptr::null_mut(), data, fops)
    };
    if d.is_null() {
        return Err(ENODEV);
    }
    let d = from_err_ptr(d)?;
    // SAFETY: `d` is a positive dentry tracefs just made; `igrab()` cannot
    // fail on an inode that is not being freed.
    let inode = unsafe { bindings::igrab((*d).d_inode) };
    if inode.is_null() {
        // SAFETY: made above.
        unsafe { bindings::tracefs_remove(d) };
        return Err(ENODEV);
    }
    Ok((d, inode))
}

/// The kernel crate's file operations of a [`File`]. No owner: an open
/// takes a reference to the `File`'s module itself.
struct Fops(bindings::file_operations);

// SAFETY: constant function pointers, shared read-only with the VFS.
unsafe impl Sync for Fops {}

const fn fops(write: bool) -> Fops {
    Fops(bindings::file_operations {
        owner: ptr::null_mut(),
        open: Some(open),
        // `read_iter` rather than `read`, so that kernel_read() works too.
        read_iter: Some(bindings::seq_read_iter),
        write: if write { Some(self::write) } else { None },
        llseek: Some(bindings::seq_lseek),
        release: Some(release),
        // SAFETY: all-zero is a valid `file_operations` (every op absent).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    })
}

/// For files without a write operation (`write()` answers `EINVAL`, as
/// for a `seq_file` without one).
static FOPS_RO: Fops = fops(false);
static FOPS_RW: Fops = fops(true);

/// Whether `module` is past its init (`MODULE_STATE_LIVE`), or built in (null).
///
/// # Safety
///
/// `module` is null or a module that is not freed during the call.
#[inline]
unsafe fn init_done(module: *mut bindings::module) -> bool {
    // SAFETY: by the caller's guarantee; a plain read, as `module_is_live()`'s.
    module.is_null() || unsafe { (*module).state } == bindings::module_state_MODULE_STATE_LIVE
}

/// Opens a [`File`]'s file: checks lockdown, counts the open, then runs [`Operations::open`].
///
/// # Safety
///
/// Called by the VFS with a valid inode of a file made by a `File`.
unsafe extern "C" fn open(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> core::ffi::c_int {
    from_result(|| {
        // Every tracing file refuses opens once the kernel is locked down
        // for confidentiality (`tracing_check_open_get_tr()` in trace.c;
        // `probes_open()` in trace_kprobe.c), before any other effect.
        // SAFETY: no preconditions.
        to_result(unsafe { bindings::security_locked_down_tracefs() })?;
        // SAFETY: `inode` is valid during open. Under its lock the private
        // pointer is the `Shared` of a live `File`, or null once the `File`
        // is being dropped (`File`'s invariant).
        let shared = unsafe {
            bindings::inode_lock(inode);
            let shared = (*inode).i_private.cast::<Shared>().cast_const();
            // Not while the module is in its init: a failed init frees the
            // module whatever its count, and the `File`'s drop would wait
            // for this open.
            let taken = !shared.is_null()
                && init_done((*shared).module)
                && bindings::try_module_get((*shared).module);
            if taken {
                // INVARIANT: this open found `shared` and holds the module
                // reference taken above: it is counted until `put()`.
                // The `File` waits for this count before it goes.
                *(*shared).opens.lock() += 1;
            }
            bindings::inode_unlock(inode);
            if !taken {
                return Err(ENODEV);
            }
            shared
        };
        // SAFETY: `shared` stays valid until `put()` (counted above).
        let r = unsafe { ((*shared).vtable.open)(shared, file) };
        if r.is_err() {
            // SAFETY: counted above; not used after.
            unsafe { put(shared) };
        }
        r.map(|()| 0)
    })
}

/// Ends a counted open of `shared`.
///
/// # Safety
///
/// `shared` was counted by `open()`; it may be freed once this returns.
unsafe fn put(shared: *const Shared) {
    // SAFETY: valid until the count drops (by the caller's guarantee).
    let module = unsafe { (*shared).module };
    // INVARIANT: this open ends; the module reference it held is dropped
    // just below, and is no longer counted by `opens`.
    // SAFETY: as above.
    let shared = unsafe { &*shared };
    let mut opens = shared.opens.lock();
    *opens -= 1;
    if *opens == 0 {
        shared.released.notify_all();
    }
    // The unlock is the last use of `shared`: the `File`'s drop, woken
    // above, takes the lock before it reads the count and goes on.
    drop(opens);
    // SAFETY: the reference `open()` took. This function is built-in code,
    // so returning from it after the module went is fine.
    unsafe { bindings::module_put(module) };
}

/// The `Shared` of an open file.
///
/// # Safety
///
/// `file` is a file opened by `open()`, not yet released.
unsafe fn shared_of(file: *mut bindings::file) -> *const Shared {
    // SAFETY: `open` made `private_data` a `seq_file` whose private pointer
    // is the `Shared`.
    unsafe {
        (*(*file).private_data.cast::<bindings::seq_file>())
            .private
            .cast::<Shared>()
    }
}

/// Releases a file opened by `open()`: frees its `seq_file` and ends the counted open.
///
/// # Safety
///
/// Called by the VFS with a file opened by `open()`.
unsafe extern "C" fn release(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> core::ffi::c_int {
    // SAFETY: by the VFS's guarantee.
    let shared = unsafe { shared_of(file) };
    // SAFETY: as above.
    unsafe { bindings::single_release(inode, file) };
    // SAFETY: counted by `open()`; not used after.
    unsafe { put(shared) };
    0
}

/// Passes a `write()` on a [`File`]'s file to the [`Operations::write`] of its data.
///
/// # Safety
///
/// Called by the VFS with a file opened by `open()`.
unsafe extern "C" fn write(
    file: *mut bindings::file,
    buf: *const u8,
    len: usize,
    _ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: by the VFS's guarantee; the open counts `shared`.
    let r = unsafe {
        let shared = shared_of(file);
        ((*shared).vtable.write)(
            shared,
            UserSlice::new(UserPtr::from_ptr(buf.cast_mut().cast()), len).reader(),
        )
    };
    match r {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

struct Adapter<T: Operations>(PhantomData<T>);

impl<T: Operations> Adapter<T> {
    const VTABLE: VTable = VTable {
        open: Self::open,
        write: Self::write,
    };

    /// Runs [`Operations::open`], then makes `file` a `seq_file` of [`Operations::show`].
    ///
    /// # Safety
    ///
    /// `shared` is the counted `Shared` of a `File<T>`; `file` is being
    /// opened.
    unsafe fn open(shared: *const Shared, file: *mut bindings::file) -> Result {
        // SAFETY: `data` is the `T` of the `File<T>`, alive while counted.
        let t = unsafe { &*(*shared).data.cast::<T>() };
        // SAFETY: `file` is valid during open.
        let (mode, flags) = unsafe { ((*file).f_mode, (*file).f_flags) };
        let truncate = mode & bindings::FMODE_WRITE != 0 && flags & bindings::O_TRUNC != 0;
        t.open(truncate)?;
        // SAFETY: `file` is valid; `show` gets `shared` back as
        // `seq_file::private`, and `release()` reads it there.
        to_result(unsafe {
            bindings::single_open(file, Some(Self::show), shared.cast_mut().cast())
        })
    }

    /// Fills the `seq_file` of an open `File<T>` with its data's [`Operations::show`].
    ///
    /// # Safety
    ///
    /// Called by `seq_read()` with the `seq_file` made by `open`.
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> core::ffi::c_int {
        from_result(|| {
            // SAFETY: `private` is the counted `Shared` of a `File<T>`.
            let t = unsafe { &*(*(*m).private.cast::<Shared>()).data.cast::<T>() };
            // SAFETY: `m` is valid for the call.
            t.show(unsafe { SeqFile::from_raw(m) })?;
            Ok(0)
        })
    }

    /// Passes a write to the [`Operations::write`] of the `File<T>`'s data.
    ///
    /// # Safety
    ///
    /// `shared` is the counted `Shared` of a `File<T>`.
    unsafe fn write(shared: *const Shared, data: UserSliceReader) -> Result<usize> {
        // SAFETY: `data` is the `T` of the `File<T>`, alive while counted.
        let t = unsafe { &*(*shared).data.cast::<T>() };
        t.write(data)
    }
}

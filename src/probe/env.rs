// SPDX-License-Identifier: GPL-2.0-only

//! What the language asks of the running kernel: [`Env`].
//!
//! Below every parser module (`command`, `arg` and its BTF arguments ask
//! it; it knows only the architecture, the BTF views and the dialect), so
//! that the modules that parse depend on it and not on each other.

use super::arch::Arch;
use super::btf;
use super::dialect::Dialect;

/// What a parse needs from the running kernel.
pub trait Env {
    /// `validate_probe_symbol()`: `Ok` if `symbol` (`[MOD:]SYM`) names
    /// exactly one symbol, or names one in a module that is not loaded;
    /// else `ENOENT` or `EADDRNOTAVAIL`.
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32>;

    /// `kprobe_on_func_entry(NULL, symbol, offset)`: `Ok` at a function
    /// entry, else the errno (`EINVAL`: not an entry; `ENOENT`: unknown).
    /// Asked right after `validate_symbol` accepted the same symbol.
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32>;

    /// What `%p` prints for `addr` (the hashed value).
    fn hash_pointer(&self, addr: u64) -> u64;

    /// `offsetof(struct dentry, d_name.name)`.
    fn dentry_name_offset(&self) -> usize;

    /// `offsetof(struct file, f_path.dentry)`.
    fn file_dentry_offset(&self) -> usize;

    /// The architecture's `%REG` names and argument registers:
    /// [`arch::NATIVE`](super::arch::NATIVE) in the kernel.
    fn arch(&self) -> &'static Arch;

    /// `PARAM_MAX_STACK`, `THREAD_SIZE / sizeof(long)`: the largest
    /// `$stackN` and `$argN` (2048 on x86-64, 4096 with generic KASAN,
    /// which doubles the kernel stack).
    fn stack_words(&self) -> u64;

    /// Whether BTF arguments are built in (C's
    /// `CONFIG_PROBE_EVENTS_BTF_ARGS`, the module's
    /// `CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS`). Without them the language
    /// answers as C built without BTF arguments does.
    fn btf_args(&self) -> bool;

    /// The BTF of function `symbol` as written (`[MOD:]SYM`: a `MOD:SYM`
    /// never has one), as `query_btf_context()` looks it up; `None` when no
    /// BTF has it. The answer borrows the environment, which holds the
    /// BTF until it is dropped (C's `btf_put()` at the end of the line).
    fn btf_func(&self, symbol: &[u8]) -> Option<btf::Func<'_>>;

    /// The BTF of struct `name`, as `bpf_find_btf_id(name,
    /// BTF_KIND_STRUCT)` finds it (vmlinux first, then the modules);
    /// `None` when no BTF has it or BTF arguments are not built in.
    fn btf_struct(&self, name: &[u8]) -> Option<btf::Struct<'_>>;

    /// The kernel release whose language to answer in.
    fn dialect(&self) -> Dialect;
}

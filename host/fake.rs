// SPDX-License-Identifier: GPL-2.0-only

//! A fake kernel for host tests: a few symbols, as on the test kernel;
//! [`FakeBtfEnv`] the same kernel built with BTF arguments, with the BTF
//! of a few functions as Linux 6.12 on x86-64 has them ([`FakeBtf`]).

use std::string::String;
use std::vec::Vec;

use crate::probe::arch::{Arch, X86_64};
use crate::probe::arg::{Arg, Parsed};
use crate::probe::btf::{self, kind, Btf, Func};
use crate::probe::command::{self, ArgList, NoMemory, Probe, Tokens};
use crate::probe::dialect::Dialect;
use crate::probe::env::Env;
use crate::probe::error::{caret_position, errno, ParseError};

/// Symbols and what the kernel would say about them.
pub struct FakeEnv;

/// Functions whose entry is at +0 or +4 (ENDBR).
const FUNCS: [&str; 9] = [
    "vfs_read",
    "kernel_clone",
    "do_sys_openat2",
    "dput",
    "kfree",
    "vfs_open",
    "eventfs_create_dir",
    "tracefs_create_dir",
    "do_exit",
];

impl Env for FakeEnv {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        let s = core::str::from_utf8(symbol).unwrap_or("");
        if let Some((module, _)) = s.split_once(':') {
            // Modules other than "loaded_mod" are not loaded: accepted.
            if module != "loaded_mod" {
                return Ok(());
            }
            return if s == "loaded_mod:mod_func" {
                Ok(())
            } else {
                Err(errno::ENOENT)
            };
        }
        if s == "name_show" {
            return Err(errno::EADDRNOTAVAIL);
        }
        if FUNCS.contains(&s) || s == "linux_proc_banner" {
            Ok(())
        } else {
            Err(errno::ENOENT)
        }
    }

    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        let s = core::str::from_utf8(symbol).unwrap_or("");
        if !FUNCS.contains(&s) && !s.contains(':') {
            return Err(errno::ENOENT);
        }
        if offset == 0 || offset == 4 {
            Ok(())
        } else {
            Err(errno::EINVAL)
        }
    }

    fn hash_pointer(&self, addr: u64) -> u64 {
        addr ^ 0x5a5a_0000
    }

    fn dentry_name_offset(&self) -> usize {
        0x28
    }

    fn file_dentry_offset(&self) -> usize {
        0x48
    }

    fn arch(&self) -> &'static Arch {
        &X86_64
    }

    /// The test and ref kernels' (x86-64 without KASAN).
    fn stack_words(&self) -> u64 {
        2048
    }

    /// Built without BTF arguments, as the ref kernel.
    fn btf_args(&self) -> bool {
        false
    }

    fn btf_func(&self, _symbol: &[u8]) -> Option<Func<'_>> {
        None
    }
    fn btf_struct(&self, _name: &[u8]) -> Option<btf::Struct<'_>> {
        None
    }
    fn dialect(&self) -> Dialect {
        Dialect::Linux6_12
    }
}

/// `E` answering in another release's language (the fakes answer in
/// 6.12's, as the C the vectors were recorded from).
pub struct InDialect<E>(pub E, pub Dialect);

impl<E: Env> Env for InDialect<E> {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        self.0.validate_symbol(symbol)
    }
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        self.0.on_func_entry(symbol, offset)
    }
    fn hash_pointer(&self, addr: u64) -> u64 {
        self.0.hash_pointer(addr)
    }
    fn dentry_name_offset(&self) -> usize {
        self.0.dentry_name_offset()
    }
    fn file_dentry_offset(&self) -> usize {
        self.0.file_dentry_offset()
    }
    fn arch(&self) -> &'static Arch {
        self.0.arch()
    }
    fn stack_words(&self) -> u64 {
        self.0.stack_words()
    }
    fn btf_args(&self) -> bool {
        self.0.btf_args()
    }
    fn btf_func(&self, symbol: &[u8]) -> Option<Func<'_>> {
        self.0.btf_func(symbol)
    }
    fn btf_struct(&self, name: &[u8]) -> Option<btf::Struct<'_>> {
        self.0.btf_struct(name)
    }
    fn dialect(&self) -> Dialect {
        self.1
    }
}

/// [`FakeEnv`] on another architecture, or with another kernel stack
/// size (a KASAN kernel's).
pub struct FakeEnvOn {
    /// The register table the parser is given.
    pub arch: &'static Arch,
    /// `THREAD_SIZE / sizeof(long)`.
    pub stack_words: u64,
}

impl Env for FakeEnvOn {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        FakeEnv.validate_symbol(symbol)
    }
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        FakeEnv.on_func_entry(symbol, offset)
    }
    fn hash_pointer(&self, addr: u64) -> u64 {
        FakeEnv.hash_pointer(addr)
    }
    fn dentry_name_offset(&self) -> usize {
        FakeEnv.dentry_name_offset()
    }
    fn file_dentry_offset(&self) -> usize {
        FakeEnv.file_dentry_offset()
    }
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn stack_words(&self) -> u64 {
        self.stack_words
    }
    fn btf_args(&self) -> bool {
        false
    }
    fn btf_func(&self, _symbol: &[u8]) -> Option<Func<'_>> {
        None
    }
    fn btf_struct(&self, _name: &[u8]) -> Option<btf::Struct<'_>> {
        None
    }
    fn dialect(&self) -> Dialect {
        Dialect::Linux6_12
    }
}

/// A BTF table built by appending records: the string section and the
/// types (id 0 is `void`), as `btf_type_by_id()` and
/// `btf_name_by_offset()` read them.
pub struct FakeBtf {
    strings: Vec<u8>,
    types: Vec<Vec<u32>>,
    funcs: Vec<(String, u32)>,
}

/// `btf_find_by_name_kind()`: the first type of `kind` named `name`.
pub fn find_by_name_kind(b: &dyn Btf, k: u32, name: &[u8]) -> Option<u32> {
    (1..)
        .map_while(|id| Some((id, b.type_record(id)?)))
        .find(|(_, r)| btf::info_kind(r[1]) == k && b.name(r[0]) == Some(name))
        .map(|(id, _)| id)
}

/// `BTF_INFO_ENC(kind, kflag, vlen)`.
fn info(kind: u32, kflag: bool, vlen: usize) -> u32 {
    (u32::from(kflag) << 31) | (kind << 24) | vlen as u32
}

impl FakeBtf {
    /// An empty table: `void` and the empty name.
    pub fn new() -> Self {
        FakeBtf {
            strings: std::vec![0],
            types: std::vec![std::vec![0, 0, 0]],
            funcs: Vec::new(),
        }
    }

    /// The offset of `name` in the string section (added if new; 0 for
    /// the empty name).
    pub fn str(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        off
    }

    /// Appends a raw record; returns its id.
    pub fn add(&mut self, record: Vec<u32>) -> u32 {
        assert_eq!(
            btf::record_words(record[1]),
            Some(record.len()),
            "record {record:x?}"
        );
        self.types.push(record);
        (self.types.len() - 1) as u32
    }

    /// `INT name`: `size` bytes, `bits` wide at bit `offset`, `encoding`
    /// (`BTF_INT_SIGNED` 1, `CHAR` 2, `BOOL` 4).
    pub fn int(&mut self, name: &str, size: u32, bits: u32, offset: u32, encoding: u32) -> u32 {
        let n = self.str(name);
        self.add(std::vec![
            n,
            info(kind::INT, false, 0),
            size,
            (encoding << 24) | (offset << 16) | bits
        ])
    }

    /// A record that refers to type `ty` (pointer, typedef, modifiers).
    pub fn refer(&mut self, k: u32, name: &str, ty: u32) -> u32 {
        let n = self.str(name);
        self.add(std::vec![n, info(k, false, 0), ty])
    }

    /// A pointer to `ty`.
    pub fn ptr(&mut self, ty: u32) -> u32 {
        self.refer(kind::PTR, "", ty)
    }

    /// `typedef ty name`.
    pub fn typedef(&mut self, name: &str, ty: u32) -> u32 {
        self.refer(kind::TYPEDEF, name, ty)
    }

    /// `const ty`.
    pub fn konst(&mut self, ty: u32) -> u32 {
        self.refer(kind::CONST, "", ty)
    }

    /// `ty[n]`.
    pub fn array(&mut self, ty: u32, index: u32, n: u32) -> u32 {
        self.add(std::vec![0, info(kind::ARRAY, false, 0), 0, ty, index, n])
    }

    /// A struct or union (`k`) of `size` bytes, members `(name, type, bit
    /// offset, bitfield size)`; `kflag` if a member is a bitfield.
    pub fn compound(
        &mut self,
        k: u32,
        name: &str,
        size: u32,
        members: &[(&str, u32, u32, u32)],
    ) -> u32 {
        let kflag = members.iter().any(|m| m.3 != 0);
        let n = self.str(name);
        let mut r = std::vec![n, info(k, kflag, members.len()), size];
        for &(name, ty, off, bits) in members {
            let name = self.str(name);
            r.extend([name, ty, if kflag { (bits << 24) | off } else { off }]);
        }
        self.add(r)
    }

    /// A struct.
    pub fn strukt(&mut self, name: &str, size: u32, members: &[(&str, u32, u32, u32)]) -> u32 {
        self.compound(kind::STRUCT, name, size, members)
    }

    /// Fills in a struct declared earlier (for types that point to each
    /// other): the record of `id` becomes the struct's.
    pub fn define(&mut self, id: u32, name: &str, size: u32, members: &[(&str, u32, u32, u32)]) {
        let new = self.strukt(name, size, members);
        let r = self.types.pop().unwrap();
        assert_eq!(new as usize, self.types.len());
        self.types[id as usize] = r;
    }

    /// An enum of `size` bytes (`ENUM`, or `ENUM64` if `wide`).
    pub fn enumeration(
        &mut self,
        name: &str,
        size: u32,
        wide: bool,
        values: &[(&str, i64)],
    ) -> u32 {
        let n = self.str(name);
        let k = if wide { kind::ENUM64 } else { kind::ENUM };
        let mut r = std::vec![n, info(k, false, values.len()), size];
        for &(name, v) in values {
            let name = self.str(name);
            r.push(name);
            r.push(v as u32);
            if wide {
                r.push((v >> 32) as u32);
            }
        }
        self.add(r)
    }

    /// `ret name(params)`: its `FUNC_PROTO` and `FUNC`; returns the proto.
    pub fn func(&mut self, name: &str, ret: u32, params: &[(&str, u32)]) -> u32 {
        let mut r = std::vec![0, info(kind::FUNC_PROTO, false, params.len()), ret];
        for &(name, ty) in params {
            let name = self.str(name);
            r.extend([name, ty]);
        }
        let proto = self.add(r);
        let n = self.str(name);
        self.add(std::vec![n, info(kind::FUNC, false, 0), proto]);
        self.funcs.push((name.into(), proto));
        proto
    }

    /// The `FUNC_PROTO` of function `name`.
    pub fn proto(&self, name: &[u8]) -> Option<u32> {
        self.funcs
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|&(_, p)| p)
    }
}

impl Default for FakeBtf {
    fn default() -> Self {
        Self::new()
    }
}

impl Btf for FakeBtf {
    fn type_record(&self, id: u32) -> Option<&[u32]> {
        self.types.get(id as usize).map(Vec::as_slice)
    }

    fn name(&self, offset: u32) -> Option<&[u8]> {
        let s = self.strings.get(offset as usize..)?;
        Some(&s[..s.iter().position(|&c| c == 0)?])
    }
}

/// Offsets in the fake's structs (bytes), as on Linux 6.12 x86-64.
pub mod layout {
    /// `offsetof(struct file, f_path)`.
    pub const FILE_F_PATH: u32 = 0x40;
    /// `offsetof(struct file, f_pos)`.
    pub const FILE_F_POS: u32 = 0x70;
    /// `offsetof(struct file, f_mode)`.
    pub const FILE_F_MODE: u32 = 0x0c;
    /// `offsetof(struct file, f_inode)`.
    pub const FILE_F_INODE: u32 = 0x28;
    /// `offsetof(struct path, dentry)`.
    pub const PATH_DENTRY: u32 = 0x08;
    /// `offsetof(struct dentry, d_parent)`.
    pub const DENTRY_D_PARENT: u32 = 0x18;
    /// `offsetof(struct dentry, d_name)`.
    pub const DENTRY_D_NAME: u32 = 0x20;
    /// `offsetof(struct dentry, d_iname)`.
    pub const DENTRY_D_INAME: u32 = 0x38;
    /// `offsetof(struct qstr, len)` (in the anonymous union and struct).
    pub const QSTR_LEN: u32 = 0x04;
    /// `offsetof(struct qstr, name)`.
    pub const QSTR_NAME: u32 = 0x08;
    /// `offsetof(struct kernel_clone_args, name)`.
    pub const KCA_NAME: u32 = 0x20;
    /// Bit offset of `kernel_clone_args.io_thread` (a 1-bit `u32`).
    pub const KCA_IO_THREAD_BIT: u32 = 0x2c * 8 + 1;
    /// `offsetof(struct kernel_clone_args, exit_signal)`.
    pub const KCA_EXIT_SIGNAL: u32 = 0x28;
    /// `offsetof(struct task_struct, flags)`.
    pub const TASK_FLAGS: u32 = 0x2c;
    /// Bit offset of `task_struct.in_execve` (a 1-bit `unsigned int`).
    pub const TASK_IN_EXECVE_BIT: u32 = 0x5a0 * 8 + 3;
    /// `offsetof(struct task_struct, pid)`.
    pub const TASK_PID: u32 = 0x5d0;
    /// `offsetof(struct task_struct, real_parent)`.
    pub const TASK_REAL_PARENT: u32 = 0x5e0;
    /// `offsetof(struct task_struct, se)`.
    pub const TASK_SE: u32 = 0x80;
    /// `offsetof(struct task_struct, group_leader)`.
    pub const TASK_GROUP_LEADER: u32 = 0x600;
    /// `offsetof(struct task_struct, comm)`.
    pub const TASK_COMM: u32 = 0x7b0;
}

/// The BTF of the fake kernel (vmlinux) and of its loaded module
/// `loaded_mod`.
fn fake_btf() -> (FakeBtf, FakeBtf) {
    use layout::*;
    let mut b = FakeBtf::new();
    // Base types first, as pahole emits them: no unsigned 8-bit integer
    // among the ids a type's size may name (C's char-pointer test reads
    // `t->type` of any type, trace_probe.c:330).
    let ulong = b.int("long unsigned int", 8, 64, 0, 0); // 1
    let int = b.int("int", 4, 32, 0, 1); // 2
    let uint = b.int("unsigned int", 4, 32, 0, 0); // 3
    let long = b.int("long int", 8, 64, 0, 1); // 4
    let char_ = b.int("char", 1, 8, 0, 0); // 5: pahole gives `char` no encoding
    let llong = b.int("long long int", 8, 64, 0, 1); // 6
    let ullong = b.int("long long unsigned int", 8, 64, 0, 0); // 7
    let ushort = b.int("short unsigned int", 2, 16, 0, 0); // 8
    let uchar = b.int("unsigned char", 1, 8, 0, 0);
    let _bool = b.int("_Bool", 1, 8, 0, 4);
    let size_t = b.typedef("size_t", ulong);
    let kssize = b.typedef("__kernel_ssize_t", long);
    let ssize_t = b.typedef("ssize_t", kssize);
    let kloff = b.typedef("__kernel_loff_t", llong);
    let loff_t = b.typedef("loff_t", kloff);
    let kpid = b.typedef("__kernel_pid_t", int);
    let pid_t = b.typedef("pid_t", kpid);
    let u32_ = b.typedef("__u32", uint);
    let u32t = b.typedef("u32", u32_);
    let u64_ = b.typedef("__u64", ullong);
    let u64t = b.typedef("u64", u64_);
    let fmode_t = b.typedef("fmode_t", uint);
    let _umode = b.typedef("umode_t", ushort);
    let const_char = b.konst(char_);
    let const_char_p = b.ptr(const_char);
    let char_p = b.ptr(char_);
    let const_uchar = b.konst(uchar);
    let const_uchar_p = b.ptr(const_uchar);
    let const_void = b.konst(0);
    let const_void_p = b.ptr(const_void);
    let void_p = b.ptr(0);
    let int_p = b.ptr(int);
    let loff_p = b.ptr(loff_t);

    // Declared first, defined below: they point to each other.
    let dentry = b.strukt("dentry", 0, &[]);
    let dentry_p = b.ptr(dentry);
    let inode = b.strukt("inode", 0, &[]);
    let inode_p = b.ptr(inode);
    let fops = b.strukt("file_operations", 0, &[]);
    let const_fops = b.konst(fops);
    let const_fops_p = b.ptr(const_fops);
    let vfsmount = b.strukt("vfsmount", 0, &[]);
    let vfsmount_p = b.ptr(vfsmount);

    let path = b.strukt(
        "path",
        16,
        &[("mnt", vfsmount_p, 0, 0), ("dentry", dentry_p, 64, 0)],
    );
    let mutex = b.strukt("mutex", 32, &[("owner", ulong, 0, 0)]);
    let pos_union = b.compound(
        kind::UNION,
        "",
        32,
        &[("f_pos_lock", mutex, 0, 0), ("f_pipe", u64t, 0, 0)],
    );
    let file = b.strukt(
        "file",
        0xe8,
        &[
            ("f_count", long, 0, 0),
            ("f_mode", fmode_t, FILE_F_MODE * 8, 0),
            ("f_op", const_fops_p, 0x10 * 8, 0),
            ("private_data", void_p, 0x20 * 8, 0),
            ("f_inode", inode_p, FILE_F_INODE * 8, 0),
            ("f_flags", uint, 0x30 * 8, 0),
            ("f_path", path, FILE_F_PATH * 8, 0),
            ("", pos_union, 0x50 * 8, 0),
            ("f_pos", loff_t, FILE_F_POS * 8, 0),
        ],
    );
    let file_p = b.ptr(file);
    // struct qstr { union { struct { u32 hash; u32 len; }; u64 hash_len; };
    //               const unsigned char *name; }
    let hash_len = b.strukt("", 8, &[("hash", u32t, 0, 0), ("len", u32t, 32, 0)]);
    let qstr_union = b.compound(
        kind::UNION,
        "",
        8,
        &[("", hash_len, 0, 0), ("hash_len", u64t, 0, 0)],
    );
    let qstr = b.strukt(
        "qstr",
        16,
        &[
            ("", qstr_union, 0, 0),
            ("name", const_uchar_p, QSTR_NAME * 8, 0),
        ],
    );
    let iname = b.array(uchar, int, 40);
    b.define(
        dentry,
        "dentry",
        0xc0,
        &[
            ("d_flags", uint, 0, 0),
            ("d_parent", dentry_p, DENTRY_D_PARENT * 8, 0),
            ("d_name", qstr, DENTRY_D_NAME * 8, 0),
            ("d_inode", inode_p, 0x30 * 8, 0),
            ("d_iname", iname, DENTRY_D_INAME * 8, 0),
        ],
    );
    b.define(
        inode,
        "inode",
        0x258,
        &[("i_mode", _umode, 0, 0), ("i_ino", ulong, 0x40 * 8, 0)],
    );
    b.define(fops, "file_operations", 0x110, &[("owner", void_p, 0, 0)]);
    b.define(
        vfsmount,
        "vfsmount",
        0x18,
        &[
            ("mnt_root", dentry_p, 0, 0),
            ("mnt_flags", int, 0x10 * 8, 0),
        ],
    );
    let open_how = b.strukt(
        "open_how",
        24,
        &[
            ("flags", u64t, 0, 0),
            ("mode", u64t, 64, 0),
            ("resolve", u64t, 128, 0),
        ],
    );
    let open_how_p = b.ptr(open_how);
    let kca = b.strukt(
        "kernel_clone_args",
        0x80,
        &[
            ("flags", u64t, 0, 0),
            ("pidfd", int_p, 0x08 * 8, 0),
            ("name", const_char_p, KCA_NAME * 8, 0),
            ("exit_signal", int, KCA_EXIT_SIGNAL * 8, 0),
            ("kthread", u32t, 0x2c * 8, 1),
            ("io_thread", u32t, KCA_IO_THREAD_BIT, 1),
            ("user_worker", u32t, 0x2c * 8 + 2, 1),
            ("no_files", u32t, 0x2c * 8 + 3, 1),
            ("stack", ulong, 0x30 * 8, 0),
            ("set_tid", b.types.len() as u32 + 1, 0x48 * 8, 0),
        ],
    );
    // (`set_tid`'s type, a pid_t pointer, comes right after.)
    let pid_p = b.ptr(pid_t);
    assert_eq!(pid_p, kca + 1);
    let kca_p = b.ptr(kca);

    b.func(
        "vfs_read",
        ssize_t,
        &[
            ("file", file_p),
            ("buf", char_p),
            ("count", size_t),
            ("pos", loff_p),
        ],
    );
    b.func("kfree", 0, &[("object", const_void_p)]);
    b.func(
        "do_sys_openat2",
        long,
        &[
            ("dfd", int),
            ("filename", const_char_p),
            ("how", open_how_p),
        ],
    );
    b.func("kernel_clone", pid_t, &[("args", kca_p)]);
    b.func("dput", 0, &[("dentry", dentry_p)]);
    b.func("do_exit", 0, &[("code", long)]);
    b.func("schedule", 0, &[]);
    b.func(
        "vfs_open",
        int,
        &[("path", b.types.len() as u32 + 3), ("file", file_p)],
    );
    // (`vfs_open`'s `const struct path *`, after its FUNC_PROTO and FUNC.)
    let const_path = b.konst(path);
    let const_path_p = b.ptr(const_path);
    assert_eq!(b.proto(b"vfs_open").unwrap() + 3, const_path_p);
    // `$current` (7.3) reads `struct task_struct`: a pid, a name, a
    // parent, a one-bit flag.
    let task = b.strukt("task_struct", 0, &[]);
    let task_p = b.ptr(task);
    let comm = b.array(char_, int, 16);
    let list_head = b.strukt("list_head", 0, &[]);
    let list_head_p = b.ptr(list_head);
    b.define(
        list_head,
        "list_head",
        16,
        &[("next", list_head_p, 0, 0), ("prev", list_head_p, 64, 0)],
    );
    let se = b.strukt(
        "sched_entity",
        0x40,
        &[
            ("load", ulong, 0, 0),
            ("group_node", list_head, 0x10 * 8, 0),
        ],
    );
    b.define(
        task,
        "task_struct",
        0x1000,
        &[
            ("flags", uint, TASK_FLAGS * 8, 0),
            ("se", se, TASK_SE * 8, 0),
            ("in_execve", uint, TASK_IN_EXECVE_BIT, 1),
            ("pid", pid_t, TASK_PID * 8, 0),
            ("real_parent", task_p, TASK_REAL_PARENT * 8, 0),
            ("group_leader", task_p, TASK_GROUP_LEADER * 8, 0),
            ("comm", comm, TASK_COMM * 8, 0),
        ],
    );

    // The module's BTF (split BTF in the kernel; here its own table).
    let mut m = FakeBtf::new();
    let int = m.int("int", 4, 32, 0, 1);
    let uint = m.int("unsigned int", 4, 32, 0, 0);
    let long = m.int("long int", 8, 64, 0, 1);
    let state = m.enumeration(
        "fake_state",
        4,
        false,
        &[("FAKE_IDLE", 0), ("FAKE_BUSY", 1)],
    );
    let big = m.enumeration("fake_big", 8, true, &[("FAKE_HUGE", 1 << 40)]);
    let vlong = m.refer(kind::VOLATILE, "", long);
    let cvlong = m.konst(vlong);
    let odd = m.int("unsigned int", 4, 5, 0, 0);
    let old = m.strukt(
        "fake_old",
        16,
        &[("x", long, 0, 0), ("odd", odd, 8 * 8 + 3, 0)],
    );
    let old_p = m.ptr(old);
    let obj = m.strukt(
        "fake_obj",
        32,
        &[
            ("state", state, 0, 0),
            ("small", uint, 4 * 8 + 4, 3),
            ("big", big, 8 * 8, 0),
            ("count", cvlong, 16 * 8, 0),
            ("old", old_p, 24 * 8, 0),
        ],
    );
    let obj_p = m.ptr(obj);
    m.func("mod_func", int, &[("state", state), ("obj", obj_p)]);
    (b, m)
}

/// [`FakeEnv`] built with BTF arguments: the BTF of `vfs_read`, `kfree`,
/// `do_sys_openat2`, `kernel_clone`, `dput`, `do_exit`, `vfs_open`,
/// `schedule` (no parameters) and of the module function `mod_func`
/// (found as `mod_func`, not as `loaded_mod:mod_func`, as C's lookup by
/// name).
pub struct FakeBtfEnv {
    /// vmlinux's BTF.
    pub vmlinux: FakeBtf,
    /// `loaded_mod`'s BTF.
    pub module: FakeBtf,
}

impl FakeBtfEnv {
    /// The fake kernel's BTF.
    pub fn new() -> Self {
        let (vmlinux, module) = fake_btf();
        FakeBtfEnv { vmlinux, module }
    }
}

impl Default for FakeBtfEnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Functions [`FakeBtfEnv`] has besides [`FakeEnv`]'s.
const BTF_ONLY_FUNCS: [&[u8]; 2] = [b"schedule", b"mod_func"];

impl Env for FakeBtfEnv {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        if BTF_ONLY_FUNCS.contains(&symbol) {
            return Ok(());
        }
        FakeEnv.validate_symbol(symbol)
    }
    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        if BTF_ONLY_FUNCS.contains(&symbol) {
            return FakeEnv.on_func_entry(b"vfs_read", offset);
        }
        FakeEnv.on_func_entry(symbol, offset)
    }
    fn hash_pointer(&self, addr: u64) -> u64 {
        FakeEnv.hash_pointer(addr)
    }
    fn dentry_name_offset(&self) -> usize {
        (layout::DENTRY_D_NAME + layout::QSTR_NAME) as usize
    }
    fn file_dentry_offset(&self) -> usize {
        (layout::FILE_F_PATH + layout::PATH_DENTRY) as usize
    }
    fn arch(&self) -> &'static Arch {
        &X86_64
    }
    fn stack_words(&self) -> u64 {
        2048
    }
    fn btf_args(&self) -> bool {
        true
    }
    fn btf_func(&self, symbol: &[u8]) -> Option<Func<'_>> {
        if let Some(proto) = self.vmlinux.proto(symbol) {
            return Some(Func {
                btf: &self.vmlinux,
                proto,
            });
        }
        self.module.proto(symbol).map(|proto| Func {
            btf: &self.module,
            proto,
        })
    }
    fn btf_struct(&self, name: &[u8]) -> Option<btf::Struct<'_>> {
        [&self.vmlinux, &self.module].into_iter().find_map(|b| {
            Some(btf::Struct {
                btf: b,
                id: find_by_name_kind(b, kind::STRUCT, name)?,
            })
        })
    }
    fn dialect(&self) -> Dialect {
        Dialect::Linux6_12
    }
}

impl ArgList for Vec<Arg> {
    type Store = Parsed;

    fn push(&mut self, arg: Arg) -> Result<(), NoMemory> {
        Vec::push(self, arg);
        Ok(())
    }

    fn as_slice(&self) -> &[Arg] {
        self
    }
}

/// What [`parse`] answers: the probe (its symbol borrowed from the line),
/// nothing for a blank line, or the error.
pub type Parse<'l> = Result<Option<Probe<Vec<Arg>, &'l [u8]>>, ParseError>;

/// Parses `line` against [`FakeEnv`].
pub fn parse(line: &str) -> Parse<'_> {
    parse_on(&FakeEnv, line)
}

/// Parses `line` against `env`.
pub fn parse_on<'l>(env: &dyn Env, line: &'l str) -> Parse<'l> {
    let mut tokens = Box::new(Tokens::new());
    command::parse(line.as_bytes(), &mut tokens, env, Vec::new())
}

/// Parses `line` and returns the error with its caret column in the
/// command as `error_log` shows it.
pub fn error_at(line: &str) -> (ParseError, Option<usize>) {
    let (e, pos, _) = error_on(&FakeEnv, line);
    (e, pos)
}

/// Parses `line` against `env` and returns the error, its caret column
/// and the command `error_log` shows.
pub fn error_on(env: &dyn Env, line: &str) -> (ParseError, Option<usize>, String) {
    let mut tokens = Box::new(Tokens::new());
    let bytes = line.as_bytes();
    let e = match command::parse(bytes, &mut tokens, env, Vec::new()) {
        Ok(_) => panic!("{line:?} was accepted"),
        Err(e) => e,
    };
    let pos = e
        .log
        .map(|(_, caret)| caret_position(tokens.iter(bytes), caret));
    let words: Vec<String> = tokens
        .iter(bytes)
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect();
    (e, pos, words.join(" "))
}

use std::boxed::Box;

/// A fake machine: registers, a stack, kernel and user memory regions,
/// symbols. Every string read is counted.
pub struct FakeMachine {
    /// The architecture whose `pt_regs` [`FakeMachine::regs`] is.
    pub arch: &'static Arch,
    /// `pt_regs`, by byte offset / 8.
    pub regs: Vec<u64>,
    /// Stack words from `sp` up.
    pub stack: Vec<u64>,
    /// Kernel memory: (address, bytes).
    pub kmem: Vec<(u64, Vec<u8>)>,
    /// User memory: (address, bytes).
    pub umem: Vec<(u64, Vec<u8>)>,
    /// `current->comm`.
    pub comm: [u8; 16],
    /// Symbols: (address, size, name).
    pub syms: Vec<(u64, u64, &'static str)>,
    /// String reads so far.
    pub string_reads: core::cell::Cell<usize>,
    /// The current task's `TASK_SIZE` ([`TASK_SIZE`] unless a test makes it
    /// a 32-bit task's).
    pub task_size: u64,
    /// How often [`Machine::task_size`] was asked.
    pub task_size_asks: core::cell::Cell<usize>,
    /// `current`.
    pub current: u64,
    /// The current CPU's per-CPU offset (`this_cpu_ptr(p)` is `p` plus it).
    pub cpu_offset: u64,
}

/// `TASK_SIZE` of the fake machine (4-level paging).
pub const TASK_SIZE: u64 = 0x7fff_ffff_f000;

impl FakeMachine {
    /// An x86-64 machine: registers all zero, nothing mapped, comm
    /// "busybox".
    pub fn new() -> Self {
        Self::with_arch(&X86_64)
    }

    /// [`FakeMachine::new`] with the registers of `arch`.
    pub fn with_arch(arch: &'static Arch) -> Self {
        let mut comm = [0u8; 16];
        comm[..7].copy_from_slice(b"busybox");
        let words = arch
            .registers
            .iter()
            .map(|r| r.offset / 8 + 1)
            .max()
            .unwrap_or(0);
        FakeMachine {
            arch,
            regs: std::vec![0; words as usize],
            stack: Vec::new(),
            kmem: Vec::new(),
            umem: Vec::new(),
            comm,
            syms: Vec::new(),
            string_reads: core::cell::Cell::new(0),
            task_size: TASK_SIZE,
            task_size_asks: core::cell::Cell::new(0),
            current: 0,
            cpu_offset: 0,
        }
    }

    /// Sets a register by name.
    pub fn set(&mut self, reg: &str, v: u64) {
        let off = self.arch.register_offset(reg.as_bytes()).expect("register");
        self.regs[off as usize / 8] = v;
    }

    fn find(mem: &[(u64, Vec<u8>)], addr: u64, len: usize) -> Option<&[u8]> {
        mem.iter().find_map(|(base, bytes)| {
            let start = addr.checked_sub(*base)? as usize;
            bytes.get(start..start.checked_add(len)?)
        })
    }

    fn strncpy(&self, mem: &[(u64, Vec<u8>)], addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        self.string_reads.set(self.string_reads.get() + 1);
        if dst.is_empty() {
            return Ok(0);
        }
        for i in 0..dst.len() {
            let b = Self::find(mem, addr.wrapping_add(i as u64), 1).ok_or(Fault)?[0];
            dst[i] = b;
            if b == 0 {
                return Ok(i + 1);
            }
        }
        let n = dst.len();
        dst[n - 1] = 0;
        Ok(n)
    }
}

use crate::probe::fetch::{Fault, Machine};

impl Machine for FakeMachine {
    fn arch(&self) -> &'static Arch {
        self.arch
    }
    fn reg(&self, offset: u32) -> u64 {
        self.regs.get(offset as usize / 8).copied().unwrap_or(0)
    }
    fn stack_nth(&self, n: u32) -> u64 {
        self.stack.get(n as usize).copied().unwrap_or(0)
    }
    fn stack_pointer(&self) -> u64 {
        self.reg(self.arch.stack_pointer)
    }
    fn retval(&self) -> u64 {
        self.reg(self.arch.return_value)
    }
    fn task_size(&self) -> u64 {
        self.task_size_asks.set(self.task_size_asks.get() + 1);
        self.task_size
    }
    fn read_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        let Some(src) = Self::find(&self.kmem, addr, dst.len()) else {
            // The kernel's nofault copies may have copied part before the
            // fault: the caller must not use `dst` then.
            dst.fill(0xee);
            return Err(Fault);
        };
        dst.copy_from_slice(src);
        Ok(())
    }
    fn read_user(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
        let Some(src) = Self::find(&self.umem, addr, dst.len()) else {
            // The kernel's nofault copies may have copied part before the
            // fault: the caller must not use `dst` then.
            dst.fill(0xee);
            return Err(Fault);
        };
        dst.copy_from_slice(src);
        Ok(())
    }
    fn strncpy_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        self.strncpy(&self.kmem, addr, dst)
    }
    fn strncpy_user(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault> {
        match self.strncpy(&self.umem, addr, dst)? {
            1 => Ok(0),
            n => Ok(n),
        }
    }
    fn comm(&self) -> [u8; 16] {
        self.comm
    }
    fn current(&self) -> u64 {
        self.current
    }
    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        addr.wrapping_add(self.cpu_offset)
    }
    fn sprint_symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        let mut s = std::string::String::new();
        let _ = crate::probe::output::Symbols::with_offset(self, addr, &mut s);
        if s.is_empty() {
            s = std::format!("0x{addr:x}");
        }
        let n = s.len().min(dst.len());
        dst[..n].copy_from_slice(&s.as_bytes()[..n]);
        n
    }
}

impl crate::probe::output::Symbols for FakeMachine {
    fn with_offset(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self
            .syms
            .iter()
            .find(|(a, size, _)| addr >= *a && addr < a + size)
        {
            Some((a, size, name)) => write!(out, "{name}+0x{:x}/0x{size:x}", addr - a),
            None => Ok(()),
        }
    }
    fn name(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        match self
            .syms
            .iter()
            .find(|(a, size, _)| addr >= *a && addr < a + size)
        {
            Some((_, _, name)) => out.write_str(name),
            None => Ok(()),
        }
    }
}

// SPDX-License-Identifier: GPL-2.0-only

//! The kernel's implementation of the probe language's traits.
//!
//! [`KernelEnv`] answers the parser's questions (symbols, function entries,
//! `%p` hashing, struct offsets); [`HitMachine`] is what the fetch
//! interpreter reads on a probe hit (registers, stack, nofault memory,
//! `current->comm`, symbols); [`KernelSymbols`] prints symbols in the trace
//! text. All through the kernel crate: no `unsafe` here.

use core::cell::Cell;
use core::mem::offset_of;

use kernel::{
    bindings, kallsyms, kprobes, nofault,
    prelude::*,
    ptrace::PtRegs,
    seq_file::SeqFile,
    str::{CStr, CString},
    trace_event::TraceSeq,
};

use crate::probe::{
    arch::{self, Arch},
    command::split_module,
    dialect::Dialect,
    env::Env,
    error::errno,
    fetch, output, text,
};

/// The release whose C the module answers as: the kernel it is built for
/// (`src/Kbuild` names it). The one place the module asks which kernel it
/// is; what differs is [`Dialect`]'s.
#[cfg(rkpe_linux_7_3)]
pub(crate) const DIALECT: Dialect = Dialect::Linux7_3;
/// See above.
#[cfg(not(rkpe_linux_7_3))]
pub(crate) const DIALECT: Dialect = Dialect::Linux6_12;

/// Whether `%name` has `offset` in the probe language's table of this
/// architecture (`arch::NATIVE`), for the build-time checks below.
const fn native_at(name: &str, offset: usize) -> bool {
    matches!(arch::NATIVE.register_offset(name.as_bytes()), Some(o) if o as usize == offset)
}

// x86-64: every `%REG` of the language's table names this kernel's
// `struct pt_regs` field at its offset (21 names, all checked), and the
// argument registers, stack pointer, return value and user-address bounds
// are the kernel's (`nofault`, `regs_get_kernel_argument()`).
#[cfg(CONFIG_X86_64)]
const _: () = {
    use bindings::pt_regs as R;
    assert!(arch::NATIVE.registers.len() == 21);
    assert!(native_at("r15", offset_of!(R, r15)));
    assert!(native_at("r14", offset_of!(R, r14)));
    assert!(native_at("r13", offset_of!(R, r13)));
    assert!(native_at("r12", offset_of!(R, r12)));
    assert!(native_at("bp", offset_of!(R, bp)));
    assert!(native_at("bx", offset_of!(R, bx)));
    assert!(native_at("r11", offset_of!(R, r11)));
    assert!(native_at("r10", offset_of!(R, r10)));
    assert!(native_at("r9", offset_of!(R, r9)));
    assert!(native_at("r8", offset_of!(R, r8)));
    assert!(native_at("ax", offset_of!(R, ax)));
    assert!(native_at("cx", offset_of!(R, cx)));
    assert!(native_at("dx", offset_of!(R, dx)));
    assert!(native_at("si", offset_of!(R, si)));
    assert!(native_at("di", offset_of!(R, di)));
    assert!(native_at("orig_ax", offset_of!(R, orig_ax)));
    assert!(native_at("ip", offset_of!(R, ip)));
    // `cs` and `ss` are each the first member of an anonymous union.
    assert!(native_at("cs", offset_of!(R, __bindgen_anon_1)));
    assert!(native_at("flags", offset_of!(R, flags)));
    assert!(native_at("sp", offset_of!(R, sp)));
    assert!(native_at("ss", offset_of!(R, __bindgen_anon_2)));
    let args = [
        offset_of!(R, di),
        offset_of!(R, si),
        offset_of!(R, dx),
        offset_of!(R, cx),
        offset_of!(R, r8),
        offset_of!(R, r9),
    ];
    assert!(arch::NATIVE.argument_registers.len() == args.len());
    let mut i = 0;
    while i < args.len() {
        assert!(arch::NATIVE.argument_registers[i] as usize == args[i]);
        i += 1;
    }
    assert!(matches!(
        arch::NATIVE.stack_arguments,
        arch::StackArguments::From { first: 1 }
    ));
    assert!(arch::NATIVE.stack_pointer as usize == offset_of!(R, sp));
    assert!(arch::NATIVE.return_value as usize == offset_of!(R, ax));
    assert!(arch::NATIVE.task_size_bound == nofault::TASK_SIZE_BOUND as u64);
    assert!(arch::NATIVE.task_size_floor == nofault::TASK_SIZE_FLOOR as u64);
};

// The same for arm64: `x0`..`x30` are `regs[0..31]`, `lr` is `x30`, and
// `sp`, `pc`, `pstate` follow, all in `user_regs`, the first member of
// `struct pt_regs`; arguments are x0..x7 and then 0.
#[cfg(CONFIG_ARM64)]
const _: () = {
    use bindings::{pt_regs as R, user_pt_regs as U};
    const fn at(field: usize) -> usize {
        offset_of!(R, __bindgen_anon_1) + field
    }
    assert!(arch::NATIVE.registers.len() == 35);
    let mut names = [0u8; 3];
    let mut n = 0;
    while n < 31 {
        // "x0".."x30", built here so that every one is checked.
        let name: &[u8] = if n < 10 {
            names[0] = b'x';
            names[1] = b'0' + n as u8;
            names.split_at(2).0
        } else {
            names[0] = b'x';
            names[1] = b'0' + (n / 10) as u8;
            names[2] = b'0' + (n % 10) as u8;
            &names
        };
        let offset = at(offset_of!(U, regs) + 8 * n);
        assert!(matches!(arch::NATIVE.register_offset(name), Some(o) if o as usize == offset));
        n += 1;
    }
    assert!(native_at("lr", at(offset_of!(U, regs) + 8 * 30)));
    assert!(native_at("sp", at(offset_of!(U, sp))));
    assert!(native_at("pc", at(offset_of!(U, pc))));
    assert!(native_at("pstate", at(offset_of!(U, pstate))));
    assert!(arch::NATIVE.argument_registers.len() == 8);
    let mut i = 0;
    while i < 8 {
        assert!(arch::NATIVE.argument_registers[i] as usize == at(offset_of!(U, regs) + 8 * i));
        i += 1;
    }
    assert!(matches!(
        arch::NATIVE.stack_arguments,
        arch::StackArguments::Zero
    ));
    assert!(arch::NATIVE.stack_pointer as usize == at(offset_of!(U, sp)));
    assert!(arch::NATIVE.return_value as usize == at(offset_of!(U, regs)));
    assert!(arch::NATIVE.task_size_bound == nofault::TASK_SIZE_BOUND as u64);
    assert!(arch::NATIVE.task_size_floor == nofault::TASK_SIZE_FLOOR as u64);
};

/// Parse-time environment of one line: it holds the BTF of the probed
/// function, once looked up, until the line is parsed (C's
/// `clear_btf_context()` in `traceprobe_finish_parse()`), and the address
/// of the probed symbol when counting it found it once, in the kernel.
pub(crate) struct KernelEnv {
    /// The address [`Env::validate_symbol`] found for the symbol it was
    /// last given (the line's probed symbol, which `on_func_entry` asks
    /// about next): C searches the name three more times (its function
    /// entry, `trace_kprobe_address()`, the kprobe core), where an address
    /// of the kernel image, which does not move, can stand for it.
    symbol_address: core::cell::Cell<Option<usize>>,
    /// The probed function's BTF and the id of its `FUNC_PROTO`, once
    /// asked (`None` inside: no BTF has it).
    #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
    func: core::cell::OnceCell<Option<(kernel::btf::Btf, u32)>>,
    /// The structs asked for by name (`$current`'s `task_struct`,
    /// typecasts), each looked up once.
    #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
    structs: core::cell::OnceCell<KBox<FoundStruct>>,
}

/// A struct looked up by name (`bpf_find_btf_id()`), and the next one: a
/// list that only grows while the environment lives, so what it lends
/// stays where it is.
#[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
struct FoundStruct {
    name: KVec<u8>,
    /// Its BTF and id; `None`: no BTF has it.
    found: Option<(kernel::btf::Btf, u32)>,
    next: core::cell::OnceCell<KBox<FoundStruct>>,
}

impl KernelEnv {
    pub(crate) fn new() -> Self {
        KernelEnv {
            symbol_address: core::cell::Cell::new(None),
            #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
            func: core::cell::OnceCell::new(),
            #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
            structs: core::cell::OnceCell::new(),
        }
    }

    /// The address of the line's probed symbol, when it is one symbol of
    /// the kernel image (not `MOD:SYM`, not in a module).
    pub(crate) fn symbol_address(&self) -> Option<usize> {
        self.symbol_address.get()
    }
}

/// The probe language reads BTF records and names through the kernel
/// crate's reference to the BTF.
#[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
impl crate::probe::btf::Btf for kernel::btf::Btf {
    fn type_record(&self, id: u32) -> Option<&[u32]> {
        kernel::btf::Btf::type_record(self, id)
    }

    fn name(&self, offset: u32) -> Option<&[u8]> {
        kernel::btf::Btf::name(self, offset).map(CStr::to_bytes)
    }
}

// The probe language's record lengths are the kernel crate's, for every
// kind (an unknown one is `None` in both).
#[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
const _: () = {
    let mut kind = 0;
    while kind < 32 {
        let info = (kind << 24) | 3;
        let ours = crate::probe::btf::record_words(info);
        assert!(match kernel::btf::record_words(info) {
            Some(w) => matches!(ours, Some(o) if o == w),
            None => ours.is_none(),
        });
        kind += 1;
    }
};

/// `btf_find_func_proto()` (trace_btf.c): the BTF of function
/// `name` and the id of its `FUNC_PROTO`.
#[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
fn find_func_proto(name: &[u8]) -> Option<(kernel::btf::Btf, u32)> {
    use kernel::btf;
    let name = cstring(name).ok()?;
    let (b, id) = btf::Btf::find(&name, btf::KIND_FUNC).ok()?;
    let func = b.type_record(id)?;
    if btf::kind(func[1]) != btf::KIND_FUNC {
        return None;
    }
    let proto = func[2];
    if btf::kind(b.type_record(proto)?[1]) != btf::KIND_FUNC_PROTO {
        return None;
    }
    Some((b, proto))
}

/// `bytes` as a C string, byte for byte (names may hold Latin-1 letters,
/// as C allows).
///
/// # Errors
///
/// `EINVAL` for a NUL byte inside, `ENOMEM`.
pub(crate) fn cstring(bytes: &[u8]) -> Result<CString> {
    let mut v = KVec::with_capacity(bytes.len() + 1, GFP_KERNEL)?;
    v.extend_from_slice(bytes, GFP_KERNEL)?;
    v.push(0, GFP_KERNEL)?;
    let c = CStr::from_bytes_with_nul(&v).map_err(|_| EINVAL)?;
    Ok(CString::try_from(c)?)
}

/// Where the probe language's text output goes: bytes.
pub(crate) trait PutBytes {
    fn put_bytes(&mut self, bytes: &[u8]);
}

impl PutBytes for &SeqFile {
    fn put_bytes(&mut self, bytes: &[u8]) {
        self.put(bytes);
    }
}

impl PutBytes for TraceSeq {
    fn put_bytes(&mut self, bytes: &[u8]) {
        self.put(bytes);
    }
}

/// Bytes collected for C strings: text (no NUL inside, or it is an error),
/// each string ended by [`Collect::end_string`].
pub(crate) struct Collect {
    bytes: KVec<u8>,
    /// An allocation failed.
    failed: bool,
    /// The text had a NUL byte.
    nul_inside: bool,
}

impl Collect {
    pub(crate) fn new() -> Self {
        Collect {
            bytes: KVec::new(),
            failed: false,
            nul_inside: false,
        }
    }

    /// Ends the current string (its NUL).
    pub(crate) fn end_string(&mut self) {
        if self.bytes.push(0, GFP_KERNEL).is_err() {
            self.failed = true;
        }
    }

    /// The bytes: `ENOMEM` if an allocation failed, `EINVAL` if the text
    /// had a NUL byte.
    fn into_bytes(self) -> Result<KVec<u8>> {
        if self.failed {
            Err(ENOMEM)
        } else if self.nul_inside {
            Err(EINVAL)
        } else {
            Ok(self.bytes)
        }
    }

    /// The bytes, in an allocation of exactly their length (see
    /// [`Collect::into_bytes`] for the errors).
    pub(crate) fn into_boxed_slice(self) -> Result<KBox<[u8]>> {
        Ok(self.into_bytes()?.into_boxed_slice(GFP_KERNEL)?)
    }
}

impl PutBytes for Collect {
    fn put_bytes(&mut self, bytes: &[u8]) {
        self.nul_inside |= bytes.contains(&0);
        if self.bytes.extend_from_slice(bytes, GFP_KERNEL).is_err() {
            self.failed = true;
        }
    }
}

/// A byte sink seen as [`core::fmt::Write`]: names and strings that the
/// probe language writes with [`text::Bytes`] arrive as their own bytes.
pub(crate) struct Raw<'a, S: PutBytes + ?Sized>(pub(crate) &'a mut S);

impl<S: PutBytes + ?Sized> core::fmt::Write for Raw<'_, S> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        text::decode(s, |b| self.0.put_bytes(b));
        Ok(())
    }
}

impl Env for KernelEnv {
    fn validate_symbol(&self, symbol: &[u8]) -> Result<(), i32> {
        // validate_probe_symbol(): `MOD:SYM` counts in that module only; a
        // module that is not loaded is accepted (the probe is registered
        // when it loads), a loaded one without the symbol is not (`ENOENT`,
        // which the parser logs as a bad probe address, `EINVAL`).
        self.symbol_address.set(None);
        let (module, name) = split_module(symbol);
        // kstrdup() failing in C is ENOMEM, not an unknown symbol.
        let name = cstring(name).map_err(|_| errno::ENOMEM)?;
        let n = match module {
            Some(m) => {
                let m = cstring(m).map_err(|_| errno::ENOMEM)?;
                let n = kallsyms::count(Some(&m), &name, false).count;
                if n == 0 && !kallsyms::module_loaded(&m) {
                    return Ok(());
                }
                n
            }
            None => {
                let c = kallsyms::count(None, &name, DIALECT.vmlinux_count_only());
                self.symbol_address.set(c.kernel_address);
                c.count
            }
        };
        match n {
            0 => Err(errno::ENOENT),
            1 => Ok(()),
            _ => Err(errno::EADDRNOTAVAIL),
        }
    }

    fn on_func_entry(&self, symbol: &[u8], offset: u64) -> Result<(), i32> {
        let r = match self.symbol_address.get() {
            Some(a) => kallsyms::on_func_entry_at(a, offset as u32),
            None => {
                let s = cstring(symbol).map_err(|_| errno::ENOENT)?;
                kallsyms::on_func_entry(&s, offset as u32)
            }
        };
        r.map_err(|e| -e.to_errno())
    }

    fn hash_pointer(&self, addr: u64) -> u64 {
        kallsyms::hash_pointer(addr as usize)
    }

    // The offsets `%pd` and `%pD` read through, as
    // `traceprobe_expand_dentry_args()` writes them (C's `offsetof()`: the
    // fields are in anonymous unions on later kernels).
    fn dentry_name_offset(&self) -> usize {
        bindings::DENTRY_NAME_OFFSET
    }

    fn file_dentry_offset(&self) -> usize {
        bindings::FILE_DENTRY_OFFSET
    }

    fn arch(&self) -> &'static Arch {
        arch::NATIVE
    }

    fn stack_words(&self) -> u64 {
        kernel::ptrace::STACK_WORDS as u64
    }

    fn btf_args(&self) -> bool {
        cfg!(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)
    }

    #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
    fn btf_func(&self, symbol: &[u8]) -> Option<crate::probe::btf::Func<'_>> {
        let (btf, proto) = self.func.get_or_init(|| find_func_proto(symbol)).as_ref()?;
        Some(crate::probe::btf::Func { btf, proto: *proto })
    }

    #[cfg(not(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS))]
    fn btf_func(&self, _symbol: &[u8]) -> Option<crate::probe::btf::Func<'_>> {
        None
    }

    #[cfg(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS)]
    fn btf_struct(&self, name: &[u8]) -> Option<crate::probe::btf::Struct<'_>> {
        // Found once while the environment lives, as C's lookup for each
        // argument finds the same.
        let mut slot = &self.structs;
        let entry = loop {
            match slot.get() {
                Some(f) if f.name[..] == *name => break f,
                Some(f) => slot = &f.next,
                None => {
                    let found = cstring(name)
                        .ok()
                        .and_then(|n| kernel::btf::Btf::find(&n, kernel::btf::KIND_STRUCT).ok());
                    let mut n = KVec::new();
                    n.extend_from_slice(name, GFP_KERNEL).ok()?;
                    let f = FoundStruct {
                        name: n,
                        found,
                        next: core::cell::OnceCell::new(),
                    };
                    // `slot` was empty: the set succeeds.
                    let _ = slot.set(KBox::new(f, GFP_KERNEL).ok()?);
                    break slot.get()?;
                }
            }
        };
        let (btf, id) = entry.found.as_ref()?;
        Some(crate::probe::btf::Struct { btf, id: *id })
    }

    #[cfg(not(CONFIG_RUST_KPROBE_EVENTS_BTF_ARGS))]
    fn btf_struct(&self, _name: &[u8]) -> Option<crate::probe::btf::Struct<'_>> {
        None
    }

    fn dialect(&self) -> Dialect {
        DIALECT
    }
}

/// `kallsyms_lookup_name()` for `@SYM` arguments.
pub(crate) fn lookup(name: &[u8]) -> u64 {
    cstring(name).map_or(0, |n| kallsyms::lookup_name(&n) as u64)
}

/// The machine at a probe hit.
pub(crate) struct HitMachine<'a> {
    regs: &'a PtRegs,
    /// `TASK_SIZE` once asked (0: not yet). It depends on the current task
    /// only, so it holds for the hit; asking once saves a helper call per
    /// memory read (an array reads each element).
    task_size: Cell<u64>,
}

impl<'a> HitMachine<'a> {
    /// The machine of the hit with registers `regs`.
    pub(crate) fn new(regs: &'a PtRegs) -> Self {
        HitMachine {
            regs,
            task_size: Cell::new(0),
        }
    }
}

impl fetch::Machine for HitMachine<'_> {
    #[inline(always)]
    fn arch(&self) -> &'static Arch {
        arch::NATIVE
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn reg(&self, offset: u32) -> u64 {
        self.regs.register(offset)
    }
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn stack_nth(&self, n: u32) -> u64 {
        self.regs.stack_nth(n) as u64
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn stack_pointer(&self) -> u64 {
        self.regs.sp() as u64
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn retval(&self) -> u64 {
        self.regs.return_value() as u64
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn task_size(&self) -> u64 {
        match self.task_size.get() {
            0 => {
                let t = nofault::task_size() as u64;
                self.task_size.set(t);
                t
            }
            t => t,
        }
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn read_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<(), fetch::Fault> {
        nofault::read_kernel(addr as usize, dst).map_err(|_| fetch::Fault)
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn read_user(&self, addr: u64, dst: &mut [u8]) -> Result<(), fetch::Fault> {
        nofault::read_user(addr as usize, dst).map_err(|_| fetch::Fault)
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn strncpy_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<usize, fetch::Fault> {
        nofault::strncpy_kernel(addr as usize, dst).map_err(|_| fetch::Fault)
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn strncpy_user(&self, addr: u64, dst: &mut [u8]) -> Result<usize, fetch::Fault> {
        nofault::strncpy_user(addr as usize, dst).map_err(|_| fetch::Fault)
    }
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn comm(&self) -> [u8; 16] {
        nofault::current_comm()
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn current(&self) -> u64 {
        kprobes::current_task(self.regs) as u64
    }
    #[inline]
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn this_cpu_ptr(&self, addr: u64) -> u64 {
        kprobes::this_cpu_ptr(addr as usize, self.regs) as u64
    }
    #[cfg_attr(CONFIG_KPROBES, link_section = ".kprobes.text")]
    fn sprint_symbol(&self, addr: u64, dst: &mut [u8]) -> usize {
        let mut buf = [0u8; kallsyms::SYMBOL_LEN];
        let n = kallsyms::sprint_symbol(addr as usize, &mut buf).min(dst.len());
        dst[..n].copy_from_slice(&buf[..n]);
        n
    }
}

/// Symbols for the trace text.
pub(crate) struct KernelSymbols;

/// `kretprobed()` (trace_output.c): the kretprobe trampoline has no
/// meaningful name.
const KRETPROBED: &str = "[unknown/kretprobe'd]";

/// Writes what `sprint` (a `sprint_symbol*()`) gives for `addr`, as
/// `seq_print_sym()` does: the trampoline as [`KRETPROBED`], an address in
/// no symbol as its hex value (the C function's fallback text).
fn put_symbol(
    addr: u64,
    out: &mut dyn core::fmt::Write,
    sprint: fn(usize, &mut [u8; kallsyms::SYMBOL_LEN]) -> usize,
) -> core::fmt::Result {
    if kallsyms::is_kretprobe_trampoline(addr as usize) {
        return out.write_str(KRETPROBED);
    }
    let mut buf = [0u8; kallsyms::SYMBOL_LEN];
    let n = sprint(addr as usize, &mut buf);
    match core::str::from_utf8(&buf[..n]) {
        Ok(s) => out.write_str(s),
        Err(_) => Ok(()),
    }
}

impl output::Symbols for KernelSymbols {
    fn with_offset(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        put_symbol(addr, out, kallsyms::sprint_symbol)
    }

    fn name(&self, addr: u64, out: &mut dyn core::fmt::Write) -> core::fmt::Result {
        put_symbol(addr, out, kallsyms::sprint_symbol_no_offset)
    }
}

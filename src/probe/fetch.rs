// SPDX-License-Identifier: GPL-2.0-only

//! Run an argument program on a probe hit and write the record payload.
//!
//! The interpreter follows `process_fetch_insn()` (trace_kprobe.c)
//! and `process_fetch_insn_bottom()` (trace_probe_tmpl.h) stage by
//! stage, so arrays, string arrays and bitfields behave as in C. It differs
//! where C is unsafe or inconsistent, on purpose:
//!
//! - **One read per string.** C measures every string (`__get_data_size()`,
//!   a first run of all programs), reserves the record, then runs the
//!   programs again to copy; a string that changes in between is recorded
//!   with a length that does not match its bytes, or is cut. Here the
//!   caller hands one buffer for the whole payload (a per-CPU scratch area
//!   in the kernel), each string is copied once, straight into the dynamic
//!   area, and the caller reserves exactly [`store`]'s result and copies it.
//!   What is recorded is what was read.
//! - **Faults leave zeros, not stale bytes.** C leaves a faulting field as
//!   whatever the ring buffer held (and a faulting string array keeps a
//!   `__data_loc` pointing at the next field's data). Here every field is
//!   cleared before its program runs, or written whole: a fault reads as 0,
//!   or `(fault)` for a string, and strings copied before a fault in an
//!   array stay valid.
//!
//! A hit runs each argument by one of three paths, chosen by the program's
//! shape, which was worked out when it was parsed (`insn::Shortcut`): a
//! value stored as is or the memory it points to, inline with no lookup
//! (`simple`); the other shapes a shortcut allows (dereference chains,
//! bitfields, single strings) out of line (`run_shortcut`), so that the loop
//! over the arguments stays small; everything else in the general stages
//! (`run`). The host tests hold the shortcuts to the general stages' bytes,
//! faults and stale buffers included (`shortcut_matches_general_stages`).
//! No `memset` of the fixed area: each field is written whole or cleared
//! just before its program runs. An array of memory values is read as one
//! block, and element by element only after a fault, which gives C's result.
//!
//! Nothing here allocates, and every buffer access is bounds-checked: a
//! program the compiler did not emit cannot make it panic, only stop early.

use super::arch::{Arch, StackArguments};
use super::arg::Arg;
use super::insn::{Bytes, Chain, Class, Insn, Op, Put, Shortcut, Space, Store};

/// Largest string copied (`MAX_STRING_SIZE`, `PATH_MAX`), NUL included.
pub const MAX_STRING_SIZE: usize = 4096;

/// A memory read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault;

/// What a probe handler sees of the machine. The kernel implements it over
/// `struct pt_regs` and the nofault accessors; host tests over a fake.
pub trait Machine {
    /// The architecture's table (its argument registers and address
    /// bounds): [`arch::NATIVE`](super::arch::NATIVE) in the kernel.
    fn arch(&self) -> &'static Arch;
    /// `regs_get_register()`: the word at byte `offset` of `pt_regs`.
    fn reg(&self, offset: u32) -> u64;
    /// `regs_get_kernel_stack_nth()`: 0 outside the stack.
    fn stack_nth(&self, n: u32) -> u64;
    /// `kernel_stack_pointer()`.
    fn stack_pointer(&self) -> u64;
    /// `regs_return_value()`.
    fn retval(&self) -> u64;
    /// `TASK_SIZE`: addresses below it are read as user memory.
    fn task_size(&self) -> u64;
    /// `copy_from_kernel_nofault()`.
    fn read_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault>;
    /// `copy_from_user_nofault()`.
    fn read_user(&self, addr: u64, dst: &mut [u8]) -> Result<(), Fault>;
    /// `strncpy_from_kernel_nofault()`: bytes stored including the NUL (a
    /// string that does not fit is cut and NUL-terminated).
    fn strncpy_kernel(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault>;
    /// `strncpy_from_user_nofault()`: like the kernel one, except that an
    /// empty string gives 0 (so it prints as `(fault)`, as in C).
    fn strncpy_user(&self, addr: u64, dst: &mut [u8]) -> Result<usize, Fault>;
    /// `current->comm`, NUL-padded.
    fn comm(&self) -> [u8; 16];
    /// `current`: the current task's address.
    fn current(&self) -> u64;
    /// `this_cpu_ptr()`: the current CPU's address of the per-CPU
    /// variable at `addr`.
    fn this_cpu_ptr(&self, addr: u64) -> u64;
    /// `sprint_symbol()`: writes `sym+0x../0x.. [mod]` (or the address in
    /// hex) into `dst`, returns its length (no NUL).
    fn sprint_symbol(&self, addr: u64, dst: &mut [u8]) -> usize;
}

/// The payload being written: fixed part at the front, dynamic area after.
struct Out<'a> {
    buf: &'a mut [u8],
    /// Start of the free dynamic area.
    dyn_pos: usize,
    /// Bytes of record head before `buf[0]` (for `__data_loc` offsets).
    head: usize,
    /// Whether a value could not be read: the payload holds 0 or
    /// `(fault)` for it. (Here, not in the machine: a machine that notes
    /// it in itself cost a dereference chain a dozen instructions.)
    faulted: bool,
}

impl Out<'_> {
    #[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
    fn put(&mut self, at: usize, bytes: &[u8]) {
        if let Some(d) = self.buf.get_mut(at..at + bytes.len()) {
            d.copy_from_slice(bytes);
        }
    }

    /// The first `n` bytes of `bytes` at `at`: a single store for the
    /// sizes of the integer types (`copy_from_slice` calls `memcpy`, a
    /// large part of a register argument's cost on the hit path).
    #[inline(always)]
    fn put_word(&mut self, at: usize, bytes: [u8; 8], n: usize) {
        match n {
            1 => self.put_n::<1>(at, &bytes),
            2 => self.put_n::<2>(at, &bytes),
            4 => self.put_n::<4>(at, &bytes),
            8 => self.put_n::<8>(at, &bytes),
            _ => self.put(at, &bytes[..n.min(8)]),
        }
    }

    #[inline(always)]
    fn put_n<const N: usize>(&mut self, at: usize, bytes: &[u8; 8]) {
        let d = self
            .buf
            .get_mut(at..)
            .and_then(|d| d.first_chunk_mut::<N>());
        if let (Some(d), Some(s)) = (d, bytes.first_chunk::<N>()) {
            *d = *s;
        }
    }

    /// The `n` bytes at `at` (at most 8) as the first of a word's, the
    /// rest 0 (fixed-size loads, as [`Out::put_word`]).
    #[inline(always)]
    fn get_word(&self, at: usize, n: usize) -> Option<[u8; 8]> {
        let mut w = [0u8; 8];
        let src = self.buf.get(at..)?;
        match n {
            1 => *w.first_chunk_mut::<1>()? = *src.first_chunk::<1>()?,
            2 => *w.first_chunk_mut::<2>()? = *src.first_chunk::<2>()?,
            4 => *w.first_chunk_mut::<4>()? = *src.first_chunk::<4>()?,
            8 => w = *src.first_chunk::<8>()?,
            _ => {
                let n = n.min(8);
                w[..n].copy_from_slice(src.get(..n)?);
            }
        }
        Some(w)
    }

    /// Zeroes `len` bytes at `at` (as far as the buffer goes).
    #[inline(always)]
    fn clear(&mut self, at: usize, len: usize) {
        if matches!(len, 1 | 2 | 4 | 8) {
            // A single store, as most fields are (`fill` calls `memset`).
            self.put_word(at, [0; 8], len);
            return;
        }
        let end = at.saturating_add(len).min(self.buf.len());
        if let Some(d) = self.buf.get_mut(at..end) {
            d.fill(0);
        }
    }

    #[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
    fn put_u32(&mut self, at: usize, v: u32) {
        if let Some(d) = self
            .buf
            .get_mut(at..)
            .and_then(|d| d.first_chunk_mut::<4>())
        {
            *d = v.to_ne_bytes();
        }
    }
}

/// `make_data_loc()`: length in the high half, offset from the record start
/// in the low half.
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn data_loc(len: usize, offset: usize) -> u32 {
    ((len as u32) << 16) | (offset as u32 & 0xffff)
}

/// Runs every argument's program and writes the payload (the record after
/// its head) into `buf`: the fixed part (`fixed_size` bytes, each argument
/// at its offset) then the strings. `head` is the size of the record head
/// (16 for a kprobe, 24 for a kretprobe); `edata` the entry data of a
/// return probe. Returns the payload length.
pub fn store<M: Machine + ?Sized, S: Store>(
    args: &[Arg<S>],
    fixed_size: usize,
    m: &M,
    edata: &[u8],
    head: usize,
    buf: &mut [u8],
) -> usize {
    store_noting(args, fixed_size, m, edata, head, buf).0
}

/// [`store`], and whether a value could not be read (the payload holds 0
/// or `(fault)` for it; a read that faults but is read again piece by
/// piece, as an array, is not one).
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
pub fn store_noting<M: Machine + ?Sized, S: Store>(
    args: &[Arg<S>],
    fixed_size: usize,
    m: &M,
    edata: &[u8],
    head: usize,
    buf: &mut [u8],
) -> (usize, bool) {
    store_with::<M, S, true>(args, fixed_size, m, edata, head, buf)
}

/// Whether [`store_plain`] writes the record of `args` (`fixed_size` bytes
/// of fixed part): every argument a value (a register, a stack slot, a
/// function argument, `$retval`, an immediate, entry data: what `load`
/// answers without reading memory; or 7.3's `$current`) stored as is or
/// the memory at an offset from it, of its field's size, or any other
/// program with a [`Shortcut`] that is not a string (dereference chains,
/// per-CPU addresses, bitfields), and the fields one after the other from
/// the record's start, covering all of it. Asked once, when the probe is
/// made.
pub fn plain<S: Store>(args: &[Arg<S>], fixed_size: usize) -> bool {
    let mut at = 0usize;
    for a in args {
        let [c0, c1, c2] = a.store.head();
        let value = matches!(
            c0.op,
            Op::Reg
                | Op::Stack
                | Op::StackP
                | Op::Arg
                | Op::Retval
                | Op::Imm
                | Op::Edata
                | Op::Current
        );
        let head = value
            && matches!(c1.op, Op::StRaw | Op::StMem | Op::StUMem)
            && c2.op == Op::End
            && usize::from(c1.size) == a.size();
        if !(head || fixed_shortcut(a))
            || a.dynamic
            || !matches!(a.size(), 1 | 2 | 4 | 8)
            || a.offset as usize != at
        {
            return false;
        }
        at += a.size();
    }
    at == fixed_size
}

/// Whether `a` has a [`Shortcut`] whose store is not a string's (it writes
/// its field whole, and nothing else).
fn fixed_shortcut<S: Store>(a: &Arg<S>) -> bool {
    a.shortcut.is_some_and(|sc| {
        !matches!(
            a.insn(usize::from(sc.store)).op,
            Op::StString | Op::StUString
        )
    })
}

/// The payload of `args` for which [`plain`] holds: each value, or the
/// memory it points to, at its field, as [`store`] writes it (the same
/// bytes, zeros for a read that faults), without its stages. Says whether
/// a read faulted.
#[inline(always)]
pub fn store_plain<M: Machine + ?Sized, S: Store>(
    args: &[Arg<S>],
    m: &M,
    edata: &[u8],
    buf: &mut [u8],
) -> bool {
    let mut out = Out {
        buf,
        dyn_pos: 0,
        head: 0,
        faulted: false,
    };
    for a in args {
        let [c0, c1, c2] = a.store.head();
        let at = a.offset as usize;
        if c2.op != Op::End {
            // A chain, a per-CPU address or a bitfield: `plain` took it
            // for its shortcut, which writes the field whole.
            if let Some(sc) = a.shortcut {
                store_plain_chain(a, sc, m, edata, at, &mut out);
            }
            continue;
        }
        // (`plain` took only values `load` answers, and `$current`.)
        let v = match load(c0, m, edata) {
            Some(v) => v,
            None => m.current(),
        };
        match c1.op {
            Op::StRaw => out.put_word(at, v.to_ne_bytes(), usize::from(c1.size)),
            Op::StMem => store_mem(&mut out, at, m, Space::Kernel, c1, v),
            _ => store_mem(&mut out, at, m, Space::User, c1, v),
        }
    }
    out.faulted
}

/// A [`plain`] argument with a [`Shortcut`] of more than a load and a
/// store: its dereferences (and per-CPU addresses), then its store with or
/// without a bitfield, written whole (zeros on a fault), as
/// [`run_shortcut`] writes it. The commonest (one dereference, or a
/// bitfield on a value or on one read) are in the program's head and are
/// written here; longer chains by [`run_shortcut`]. Out of line, so that
/// the loop in [`store_plain`] keeps only the registers values need
/// (inlined, it cost every plain probe one to two percent).
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn store_plain_chain<M: Machine + ?Sized, S: Store>(
    a: &Arg<S>,
    sc: Shortcut,
    m: &M,
    edata: &[u8],
    at: usize,
    out: &mut Out<'_>,
) {
    let (first, st) = (usize::from(sc.load), usize::from(sc.store));
    let head = a.store.head();
    // The load, the steps between it and the store, the store, and the
    // bitfield after it, if the head holds them all.
    let (Some(&[ref c0, ref steps @ ..]), Some(c), Some(b)) = (
        head.get(first..st),
        head.get(st),
        head.get(st + usize::from(sc.bitfield)),
    ) else {
        run_shortcut(a, sc, m, edata, at, a.size(), out);
        return;
    };
    // (`shortcut()` takes only the loads `load` answers, and `$current`.)
    let mut v = match load(c0, m, edata) {
        Some(v) => v,
        None => m.current(),
    };
    let n = usize::from(c.size);
    for d in steps {
        let r = match d.op {
            Op::CpuPtr => Ok(m.this_cpu_ptr(v)),
            Op::Deref => read_word(m, Space::Kernel, v.wrapping_add(d.offset as u64)),
            _ => read_word(m, Space::User, v.wrapping_add(d.offset as u64)),
        };
        match r {
            Ok(w) => v = w,
            Err(Fault) => {
                out.faulted = true;
                // (`shortcut()` checked: the store fills the field.)
                out.put_word(at, [0; 8], n);
                return;
            }
        }
    }
    // `shortcut()` checked, and `plain` that it is not a string.
    let raw = match c.op {
        Op::StRaw => v.to_ne_bytes(),
        Op::StMem => mem_word(out, m, Space::Kernel, c, v),
        _ => mem_word(out, m, Space::User, c, v),
    };
    let w = if sc.bitfield {
        bitfield(word_of(raw, n), n, b).to_ne_bytes()
    } else {
        raw
    };
    out.put_word(at, w, n);
}

/// [`store`] with or without the shortcut for the commonest programs
/// ([`simple`]); without, for tests that hold the two paths to the same
/// bytes.
#[inline(always)]
fn store_with<M: Machine + ?Sized, S: Store, const SHORTCUT: bool>(
    args: &[Arg<S>],
    fixed_size: usize,
    m: &M,
    edata: &[u8],
    head: usize,
    buf: &mut [u8],
) -> (usize, bool) {
    let fixed = fixed_size.min(buf.len());
    let mut out = Out {
        buf,
        dyn_pos: fixed,
        head,
        faulted: false,
    };
    // Bytes of the fixed part known to be written: each field is cleared
    // before its program runs, or written whole (`simple`), so the payload
    // never keeps what the buffer held (a ring-buffer page, the scratch
    // buffer) without a `memset` of it all first.
    let mut done = 0;
    for a in args {
        let at = a.offset as usize;
        if at > done {
            // Not covered by a field (the compiler lays them out one after
            // the other, so only for hand-made arguments).
            out.clear(done, at - done);
        }
        let size = a.size();
        done = done.max(at.saturating_add(size));
        // (A shortcut writes the whole field, a string's `__data_loc`
        // included, or returns false having written nothing.)
        if SHORTCUT && simple(a, m, edata, at, size, &mut out) {
            continue;
        }
        clear_field(&mut out, a, at, size);
        run(a, m, edata, at, &mut out);
    }
    if done < fixed {
        out.clear(done, fixed - done);
    }
    (out.dyn_pos, out.faulted)
}

/// The field of `a` (`size` bytes at `at`) as the general stages start it:
/// zeros, or for a string (or an array of them) every element an empty
/// string at the current end of the dynamic area. Out of line: inlined,
/// it made the loop over the arguments in [`store`] keep more registers
/// (two instructions an argument on arm64).
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn clear_field<S: Store>(out: &mut Out<'_>, a: &Arg<S>, at: usize, size: usize) {
    out.clear(at, size);
    if a.dynamic {
        let loc = data_loc(0, out.head + out.dyn_pos);
        for j in 0..a.count.max(1) as usize {
            out.put_u32(at + 4 * j, loc);
        }
    }
}

/// Runs the commonest programs without the general interpreter: a value
/// stored as is or the memory it points to here, the other shapes a
/// [`Shortcut`] allows out of line. False (nothing done) for any other
/// program; otherwise the field (`size` bytes at `at`) is written whole,
/// zeros on a fault, as the general stages would.
#[inline(always)]
fn simple<M: Machine + ?Sized, S: Store>(
    a: &Arg<S>,
    m: &M,
    edata: &[u8],
    at: usize,
    size: usize,
    out: &mut Out<'_>,
) -> bool {
    // The commonest of all first, with no lookup: a value stored as is, or
    // the memory it points to (`%di`, `$arg2`, `+8(%di)`, `@sym`).
    // (On the opcodes themselves rather than their `Op::class`: the two
    // matches cost the hit a dozen instructions an argument.)
    let [c0, c1, c2] = a.store.head();
    if c2.op == Op::End
        && matches!(c1.op, Op::StRaw | Op::StMem | Op::StUMem)
        && usize::from(c1.size) == size
    {
        // (`$current`, which `load` leaves out, goes on to the shortcut.)
        if let Some(v) = load(c0, m, edata) {
            match c1.op {
                Op::StRaw => out.put_word(at, v.to_ne_bytes(), size),
                _ => {
                    let space = if c1.op == Op::StMem {
                        Space::Kernel
                    } else {
                        Space::User
                    };
                    store_mem(out, at, m, space, c1, v)
                }
            }
            return true;
        }
    }
    match a.shortcut {
        Some(sc) => run_shortcut(a, sc, m, edata, at, size, out),
        None => false,
    }
}

/// `f` over the instructions `range` of `a`, from `v`, up to the first
/// fault: a loop, where an iterator adapter's `try_fold` may be left out of
/// line as core's code, outside `.kprobes.text`.
#[inline(always)]
fn fold_insns<S: Store>(
    a: &Arg<S>,
    range: core::ops::Range<usize>,
    mut v: u64,
    f: impl Fn(u64, &Insn) -> Result<u64, Fault>,
) -> Result<u64, Fault> {
    for i in range {
        v = f(v, a.insn(i))?;
    }
    Ok(v)
}

/// The rest of [`simple`]: dereference chains, bitfields, strings. Out of
/// line, so that the loop over the arguments in [`store`] stays small.
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn run_shortcut<M: Machine + ?Sized, S: Store>(
    a: &Arg<S>,
    sc: Shortcut,
    m: &M,
    edata: &[u8],
    at: usize,
    size: usize,
    out: &mut Out<'_>,
) -> bool {
    let (first, st) = (usize::from(sc.load), usize::from(sc.store));
    let (c0, c) = (a.insn(first), a.insn(st));
    let mut v = match load(c0, m, edata) {
        Some(v) => v,
        // `shortcut()` takes no other load.
        None if c0.op == Op::Current => m.current(),
        None => return false,
    };
    if sc.derefs != Chain::None {
        // `shortcut()` checked: only dereferences, and with `Chain::PerCpu` per-CPU
        // addresses. (On the opcode, as in
        // `simple`: the class costs the hit instructions here too.)
        let deref = |v: u64, d: &Insn| {
            let space = if d.op == Op::Deref {
                Space::Kernel
            } else {
                Space::User
            };
            read_word(m, space, v.wrapping_add(d.offset as u64))
        };
        // A chain in the program's head (most: `+8(+16(%di))` is three
        // instructions) as a slice, without looking up each one.
        let r = if sc.derefs == Chain::PerCpu {
            // With a per-CPU address in it (7.3's `this_cpu_*()`): each
            // op asked what it is, here only. (Inline: out of line, the
            // call cost `this_cpu_read(@sym)` more than C's.)
            let step = |v: u64, d: &Insn| {
                if d.op == Op::CpuPtr {
                    Ok(m.this_cpu_ptr(v))
                } else {
                    deref(v, d)
                }
            };
            match a.store.head().get(first + 1..st) {
                Some(ds) => ds.iter().try_fold(v, step),
                None => fold_insns(a, first + 1..st, v, step),
            }
        } else {
            match a.store.head().get(first + 1..st) {
                Some(ds) => ds.iter().try_fold(v, deref),
                None => fold_insns(a, first + 1..st, v, deref),
            }
        };
        match r {
            Ok(w) => v = w,
            Err(Fault) => {
                // As the general stages: the field cleared, or an empty
                // string for a string.
                out.faulted = true;
                clear_field(out, a, at, size);
                return true;
            }
        }
    }
    let n = usize::from(c.size);
    // `shortcut()` checked: a raw, memory or string store.
    let space = if matches!(c.op, Op::StMem | Op::StString) {
        Space::Kernel
    } else {
        Space::User
    };
    match c.op {
        Op::StString | Op::StUString => store_str(out, at, m, space, c, v),
        _ if sc.bitfield => {
            // The container's bytes in a register, the bits kept, one store
            // (`fetch_apply_bitfield()` on what stage 3 stored).
            let raw = match c.op {
                Op::StRaw => v.to_ne_bytes(),
                _ => mem_word(out, m, space, c, v),
            };
            let kept = bitfield(word_of(raw, n), n, insn(a, st + 1));
            out.put_word(at, kept.to_ne_bytes(), n);
        }
        Op::StRaw => out.put_word(at, v.to_ne_bytes(), n),
        _ => store_mem(out, at, m, space, c, v),
    }
    true
}

/// Stage 1 for the loads that need nothing but the machine and the entry
/// data: a register, a stack entry, the stack pointer, a function
/// argument, the return value, an immediate, an entry-data word.
/// Inlined: both callers are on the hit path.
///
/// It matches the opcodes rather than their [`Class::Value`] (one match
/// instead of two on every hit, a dozen instructions an argument): the
/// opcodes it loads are those of that class, which `values_are_loaded` in
/// the tests checks for every opcode (its list of them has no default arm
/// either: a new opcode does not compile until the test knows it).
#[inline(always)]
fn load<M: Machine + ?Sized>(c: &Insn, m: &M, edata: &[u8]) -> Option<u64> {
    Some(match c.op {
        Op::Reg => m.reg(u32::from(c.param)),
        Op::Stack => m.stack_nth(u32::from(c.param)),
        Op::StackP => m.stack_pointer(),
        Op::Arg => kernel_argument(m, u32::from(c.param)),
        Op::Retval => m.retval(),
        Op::Imm => c.imm(),
        Op::Edata => {
            let off = c.offset as usize;
            edata
                .get(off..off.saturating_add(8))
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_ne_bytes)
        }
        // Not a value, or `$current` (7.3), which the callers load
        // themselves. (A default arm, not the list of the others: with the
        // list, the compiler dispatches the values with more instructions;
        // an arm for `$current`, or a call here for it, cost every register
        // argument three instructions.)
        _ => return None,
    })
}

/// [`Put::Mem`] (stage 3): the `c.size` bytes at `val + c.offset` in
/// `space` into the field at `dest`. A fault stores zeros.
#[inline(always)]
fn store_mem<M: Machine + ?Sized>(
    out: &mut Out<'_>,
    dest: usize,
    m: &M,
    space: Space,
    c: &Insn,
    val: u64,
) {
    let w = mem_word(out, m, space, c, val);
    out.put_word(dest, w, usize::from(c.size));
}

/// The `c.size` bytes (at most 8) at `val + c.offset` in `space` as the
/// first of a word's, the rest 0; all 0 on a fault (noted in `out`).
#[inline(always)]
fn mem_word<M: Machine + ?Sized>(
    out: &mut Out<'_>,
    m: &M,
    space: Space,
    c: &Insn,
    val: u64,
) -> [u8; 8] {
    let mut tmp = [0u8; 8];
    let n = usize::from(c.size).min(8);
    if read(m, space, val.wrapping_add(c.offset as u64), &mut tmp[..n]).is_err() {
        // A fault stores zeros (`tmp` as it was, whatever the read left).
        tmp = [0; 8];
        out.faulted = true;
    }
    tmp
}

/// Reads a word (stage 2) with `probe_mem_read[_user]()` routing.
#[inline]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn read_word<M: Machine + ?Sized>(m: &M, space: Space, addr: u64) -> Result<u64, Fault> {
    let mut w = [0u8; 8];
    read(m, space, addr, &mut w)?;
    Ok(u64::from_ne_bytes(w))
}

/// `probe_mem_read()`: below `TASK_SIZE` kernel reads go to user memory.
#[inline(always)]
fn read<M: Machine + ?Sized>(m: &M, space: Space, addr: u64, dst: &mut [u8]) -> Result<(), Fault> {
    match space {
        Space::Kernel if !below_task_size(m, addr) => m.read_kernel(addr, dst),
        _ => m.read_user(addr, dst),
    }
}

/// `addr < TASK_SIZE` (`probe_mem_read()`'s routing), without asking for
/// `TASK_SIZE` when the address is above every task's or below every
/// task's: only an address between the two asks (a pointer chain that
/// ends in user memory or near 0 does not).
#[inline(always)]
fn below_task_size<M: Machine + ?Sized>(m: &M, addr: u64) -> bool {
    let arch = m.arch();
    addr < arch.task_size_floor || (addr < arch.task_size_bound && addr < m.task_size())
}

/// `regs_get_kernel_argument()`: argument `n` (0-based) from its register,
/// else as the architecture says.
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
pub fn kernel_argument<M: Machine + ?Sized>(m: &M, n: u32) -> u64 {
    let arch = m.arch();
    match arch.argument_registers.get(n as usize) {
        Some(&off) => m.reg(off),
        None => match arch.stack_arguments {
            StackArguments::From { first } => {
                m.stack_nth(n - arch.argument_registers.len() as u32 + first)
            }
            StackArguments::Zero => 0,
        },
    }
}

/// The `i`th instruction, by reference (no copy on the hit path).
#[inline(always)]
fn insn<S: Store>(a: &Arg<S>, i: usize) -> &Insn {
    a.insn(i)
}

/// Copies a string to the free dynamic area and points the `__data_loc`
/// at `dl` to it; `copy` gets the room left (at most [`MAX_STRING_SIZE`])
/// and returns the bytes it stored, NUL included (0 on a fault). Inlined
/// into its callers on the hit path: a call level costs a string a dozen
/// instructions of register saves.
#[inline(always)]
fn store_string(
    out: &mut Out<'_>,
    dl: usize,
    copy: impl FnOnce(&mut [u8]) -> Result<usize, Fault>,
) {
    let start = out.dyn_pos;
    let room = out.buf.len().saturating_sub(start).min(MAX_STRING_SIZE);
    let n = match out.buf.get_mut(start..start + room) {
        Some(dst) if room > 0 => match copy(dst) {
            Ok(n) => n.min(room),
            Err(Fault) => {
                out.faulted = true;
                0
            }
        },
        _ => 0,
    };
    out.put_u32(dl, data_loc(n, out.head + start));
    out.dyn_pos = start + n;
}

/// [`Put::String`] (stage 3): the string at `val + c.offset` in `space`
/// into the dynamic area, its `__data_loc` at `dest`; a kernel address
/// below `TASK_SIZE` is read as user memory (`probe_mem_read()`'s routing).
#[inline(always)]
fn store_str<M: Machine + ?Sized>(
    out: &mut Out<'_>,
    dest: usize,
    m: &M,
    space: Space,
    c: &Insn,
    val: u64,
) {
    let addr = val.wrapping_add(c.offset as u64);
    let user = space == Space::User || below_task_size(m, addr);
    store_string(out, dest, |dst| {
        if user {
            m.strncpy_user(addr, dst)
        } else {
            m.strncpy_kernel(addr, dst)
        }
    });
}

/// Runs one argument's program into the field at `at`. Out of line: the
/// commonest programs do not come here ([`simple`]), and inlined it made
/// the loop over the arguments in [`store`] keep more registers.
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn run<M: Machine + ?Sized, S: Store>(
    a: &Arg<S>,
    m: &M,
    edata: &[u8],
    at: usize,
    out: &mut Out<'_>,
) {
    let mut pc = 0;
    if insn(a, pc).op.class() == Class::Symbol {
        pc += 1;
    }
    let first = insn(a, pc);
    // Stage 1: load.
    let mut val = match first.op.class() {
        Class::Bytes(bytes) => {
            // Only ever followed by a string store (the compiler's rules):
            // the bytes are at hand, no address to read.
            if insn(a, pc + 1).op.class() == Class::Store(Put::String(Space::Kernel)) {
                let comm = m.comm();
                let src: &[u8] = match bytes {
                    Bytes::Comm => &comm,
                    Bytes::Data => a.insn_text(first),
                };
                let len = src.iter().position(|&c| c == 0).unwrap_or(src.len());
                store_string(out, at, |dst| {
                    let n = len.min(dst.len().saturating_sub(1));
                    dst[..n].copy_from_slice(&src[..n]);
                    if let Some(z) = dst.get_mut(n) {
                        *z = 0;
                    }
                    Ok(n + 1)
                });
            }
            return;
        }
        Class::Value(_) => match load(first, m, edata) {
            Some(v) => v,
            None if first.op == Op::Current => m.current(),
            None => return,
        },
        // Not a load (a program the compiler did not emit): nothing stored.
        Class::Nop
        | Class::Symbol
        | Class::Deref(_)
        | Class::CpuPtr
        | Class::Store(_)
        | Class::Bitfield
        | Class::Loop
        | Class::End => return,
    };
    pc += 1;

    let mut lval = val;
    let mut dest = at;
    let mut i: u32 = 0;
    loop {
        // Stage 2: dereference.
        loop {
            let c = insn(a, pc);
            match c.op.class() {
                Class::Deref(space) => {
                    lval = val;
                    match read_word(m, space, val.wrapping_add(c.offset as u64)) {
                        Ok(v) => val = v,
                        Err(Fault) => {
                            out.faulted = true;
                            return;
                        }
                    }
                }
                Class::CpuPtr => {
                    lval = val;
                    val = m.this_cpu_ptr(val);
                }
                _ => break,
            }
            pc += 1;
        }
        let s3 = pc;
        loop {
            // Stage 3: store.
            let c = insn(a, pc);
            let addr = val.wrapping_add(c.offset as u64);
            let size = usize::from(c.size);
            // Anything but a store (C's -EILSEQ) ends the program: the rest
            // of the field stays cleared.
            let Class::Store(put) = c.op.class() else {
                return;
            };
            match put {
                Put::Raw => out.put_word(dest, val.to_ne_bytes(), size),
                Put::Mem(space) => {
                    if i == 0 && array_at_once(a, pc, c, m, val, dest, out) {
                        return;
                    }
                    store_mem(out, dest, m, space, c, val)
                }
                Put::String(space) => store_str(out, dest, m, space, c, val),
                Put::Symstr => {
                    store_string(out, dest, |dst| {
                        let n = m.sprint_symbol(addr, dst);
                        match dst.get_mut(n) {
                            Some(z) => {
                                *z = 0;
                                Ok(n + 1)
                            }
                            None => Ok(n),
                        }
                    });
                }
            }
            pc += 1;
            // Stage 4: bitfield.
            let b = insn(a, pc);
            if b.op.class() == Class::Bitfield {
                apply_bitfield(out, dest, b);
                pc += 1;
            }
            // Stage 5: array loop.
            let l = insn(a, pc);
            if l.op.class() != Class::Loop {
                return;
            }
            i += 1;
            if i >= u32::from(l.param) {
                return;
            }
            let st = insn(a, s3);
            if !matches!(st.op.class(), Class::Store(Put::String(_))) {
                dest += usize::from(st.size);
                val = val.wrapping_add(u64::from(st.size));
                pc = s3;
                continue;
            }
            // An array of strings: load the next pointer of the array.
            dest += 4;
            val = lval.wrapping_add(8);
            pc = s3.saturating_sub(1);
            break;
        }
    }
}

/// An array of memory values (`+0(%di):u8[16]`) read in one go: C reads
/// element by element (the `FETCH_OP_LP_ARRAY` loop of
/// `process_fetch_insn_bottom()` in trace_probe_tmpl.h), each from
/// the address after the last, so the elements are one block. True if the
/// whole block was read into the field; false to go element by element
/// (not such an array, or the block faulted somewhere: then each element
/// is read alone, and one that faults reads as 0, as before).
#[inline(never)]
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn array_at_once<M: Machine + ?Sized, S: Store>(
    a: &Arg<S>,
    pc: usize,
    c: &Insn,
    m: &M,
    val: u64,
    dest: usize,
    out: &mut Out<'_>,
) -> bool {
    let l = insn(a, pc + 1);
    let Class::Store(Put::Mem(space)) = c.op.class() else {
        return false;
    };
    if l.op.class() != Class::Loop {
        return false;
    }
    let len = usize::from(c.size) * usize::from(l.param);
    match out.buf.get_mut(dest..dest.saturating_add(len)) {
        Some(d) => read(m, space, val.wrapping_add(c.offset as u64), d).is_ok(),
        None => false,
    }
}

/// `fetch_apply_bitfield()`: shift left then right in the container.
#[cfg_attr(CONFIG_KPROBES, allow(unsafe_code), link_section = ".kprobes.text")]
fn apply_bitfield(out: &mut Out<'_>, at: usize, b: &Insn) {
    let size = usize::from(b.size);
    let Some(w) = out.get_word(at, size) else {
        return;
    };
    let r = bitfield(u64::from_ne_bytes(w), size, b);
    out.put_word(at, r.to_ne_bytes(), size);
}

/// The first `n` bytes of `w` as a number (the rest as 0), as they read
/// back from a field of `n` bytes.
#[inline(always)]
fn word_of(w: [u8; 8], n: usize) -> u64 {
    let v = u64::from_ne_bytes(w);
    // (What `get_word` gives on a little-endian machine, as x86 is.)
    match n {
        0 => 0,
        1..=7 => v & ((1u64 << (8 * n)) - 1),
        _ => v,
    }
}

/// The bits a bitfield keeps of the `size`-byte container value `v`.
#[inline(always)]
fn bitfield(v: u64, size: usize, b: &Insn) -> u64 {
    let bits = (size * 8) as u32;
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let shifted = v.checked_shl(u32::from(b.lshift)).unwrap_or(0) & mask;
    shifted.checked_shr(u32::from(b.rshift)).unwrap_or(0)
}

#[cfg(test)]
mod tests;

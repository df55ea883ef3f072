// SPDX-License-Identifier: GPL-2.0-only

//! Parse and compile one probe argument, `[NAME=]FETCHARG[:TYPE]`.
//!
//! A faithful re-statement of `traceprobe_parse_probe_arg()` and what it
//! calls (trace_probe.c): the same programs, the same error
//! codes, the same caret offsets. Built with BTF arguments
//! ([`Env::btf_args`](super::env::Env::btf_args)), names of function
//! parameters, their fields and a typed `$retval` go through `btf_arg`
//! (`parse_btf_arg()` and its helpers); without, the language is C's
//! without `CONFIG_PROBE_EVENTS_BTF_ARGS`. C edits the
//! argument string in place (a NUL at the `:` of the type, at the `(` and the
//! last `)` of a dereference); here the same cuts are ranges of the
//! argument's text. `ctx.offset` follows C's `ctx->offset` exactly, including
//! its quirks: it stays after the `(` of the outermost dereference once that
//! has parsed, and a `+u`/`-u` dereference advances it one byte less than
//! the text it skips (the dereference case of 6.12's `parse_probe_arg()`).
//!
//! Two things differ from C's programs without changing what they record:
//! an `@SYM` placeholder folds into its immediate once the argument has
//! parsed, so a hit runs no `FETCH_NOP_SYMBOL` (the op count behind
//! `TOO_MANY_OPS` is taken before, as C takes it); and each argument gets
//! its shortcut (`insn::shortcut`), the shape the hit path runs without the
//! general stages. The largest `$stackN` and `$argN` come from the
//! environment (`Env::stack_words`), `THREAD_SIZE / sizeof(long)` as C's
//! `PARAM_MAX_STACK`.

use super::arch::Arch;
use super::dialect::Dialect;
use super::error::{errno, Code, ParseError};
use super::insn::{
    shortcut, Class, Insn, Op, Program, Shortcut, Space, Store, END, FETCH_INSN_MAX, HEAD, NOP_HEAD,
};
use super::num::{kstrtol, kstrtol_neg, kstrtouint, kstrtoul, kstrtoul_overflows};
use super::text::{is_alpha, is_good_name, Str};
use super::types::{self, TypeId};

mod btf_arg;
mod program;

use program::ProgramBuilder;

pub use btf_arg::{BtfContext, LastType};

/// Room for the longest argument expression of any release
/// (`MAX_ARGSTR_LEN` of 7.3); the limit itself is the dialect's
/// ([`Dialect::max_argstr_len`]).
pub const MAX_ARGSTR_LEN: usize = 255;
/// Longest argument name given with `NAME=` (`MAX_ARG_NAME_LEN`).
pub const MAX_ARG_NAME_LEN: usize = 32;
/// Longest argument name kept: a name generated from the argument's text
/// (built with BTF arguments) has no limit of its own, but an argument
/// longer than [`MAX_ARGSTR_LEN`] fails.
pub const MAX_NAME_LEN: usize = MAX_ARGSTR_LEN;
/// Largest array (`MAX_ARRAY_LEN`).
pub const MAX_ARRAY_LEN: u32 = 64;
/// Largest fixed part of a record (`MAX_PROBE_EVENT_SIZE`).
pub const MAX_PROBE_EVENT_SIZE: usize = 3072;
/// Most arguments of a probe (`MAX_TRACE_ARGS`).
pub const MAX_TRACE_ARGS: usize = 128;

/// Field names an argument may not take (`reserved_field_names` in
/// trace_probe.c).
const RESERVED: [&[u8]; 8] = [
    b"common_type",
    b"common_flags",
    b"common_preempt_count",
    b"common_pid",
    b"common_tgid",
    b"__probe_ip",
    b"__probe_ret_ip",
    b"__probe_func",
];

/// A parsed argument. Its name, text and program are kept by `S`: inline
/// while it is parsed ([`Parsed`]); a stored probe may keep them in just
/// the memory they take ([`Store`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg<S = Parsed> {
    /// Element type.
    pub ty: TypeId,
    /// Array length, 0 for a scalar.
    pub count: u32,
    /// Offset of the field in the record, after the probe's head.
    pub offset: u32,
    /// Whether the field is a `__data_loc` with data in the dynamic area.
    pub dynamic: bool,
    /// How the hit path runs the program without the general stages, if
    /// it can ([`shortcut`] of the program, set when it is
    /// complete).
    pub shortcut: Option<Shortcut>,
    /// The name, the text and the program.
    pub store: S,
}

/// An argument's name, text and program inline, as the parser makes them
/// (about 350 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// Field name.
    pub name: Str<MAX_NAME_LEN>,
    /// The expression as written.
    pub comm: Str<MAX_ARGSTR_LEN>,
    /// The fetch program.
    pub code: Program,
}

impl Store for Parsed {
    fn name(&self) -> &[u8] {
        self.name.as_bytes()
    }

    fn comm(&self) -> &[u8] {
        self.comm.as_bytes()
    }

    #[inline(always)]
    fn head(&self) -> &[Insn; HEAD] {
        // Always `Some`: a program is longer than its head.
        self.code.first_chunk().unwrap_or(&NOP_HEAD)
    }

    #[inline(always)]
    fn insn(&self, i: usize) -> &Insn {
        self.code.get(i).unwrap_or(&END)
    }
}

/// An argument's name, text and program in just the memory they take:
/// the first [`HEAD`] instructions inline, the rest of the program up to
/// its [`Op::End`] in `V` (empty for most programs), and in `T` the name's
/// length (one byte), the name, then the text (the caller's storage: a
/// `Vec` on the host, a boxed slice in the kernel). The length goes in `T`
/// rather than a field: a byte beside the two pointers would take eight
/// with the padding, and a stored argument 104 bytes instead of 96.
#[derive(Debug)]
pub struct Split<V, T> {
    head: [Insn; HEAD],
    tail: V,
    text: T,
}

impl<V, T> Split<V, T> {
    /// `p` kept in `tail` (given the instructions after the head, up to
    /// and including the end) and `text` (given the parts to put one after
    /// the other: the name's length, the name, the text), or their error.
    pub fn new<E>(
        p: &Parsed,
        tail: impl FnOnce(&[Insn]) -> Result<V, E>,
        text: impl FnOnce(&[&[u8]; 3]) -> Result<T, E>,
    ) -> Result<Self, E> {
        let end = p
            .code
            .iter()
            .position(|c| c.op == Op::End)
            .map_or(FETCH_INSN_MAX, |e| e + 1);
        // At most MAX_NAME_LEN.
        let name_len = [p.name().len() as u8];
        Ok(Split {
            head: *p.head(),
            tail: tail(p.code.get(HEAD..end).unwrap_or(&[]))?,
            text: text(&[&name_len, p.name(), p.comm()])?,
        })
    }
}

impl<V: core::ops::Deref<Target = [Insn]>, T: core::ops::Deref<Target = [u8]>> Split<V, T> {
    /// Where the name ends in `text` (it starts at 1).
    fn name_end(&self) -> usize {
        1 + usize::from(self.text.first().copied().unwrap_or(0))
    }
}

impl<V: core::ops::Deref<Target = [Insn]>, T: core::ops::Deref<Target = [u8]>> Store
    for Split<V, T>
{
    fn name(&self) -> &[u8] {
        self.text.get(1..self.name_end()).unwrap_or(&[])
    }

    fn comm(&self) -> &[u8] {
        self.text.get(self.name_end()..).unwrap_or(&[])
    }

    #[inline(always)]
    fn head(&self) -> &[Insn; HEAD] {
        &self.head
    }

    #[inline(always)]
    fn insn(&self, i: usize) -> &Insn {
        match self.head.get(i) {
            Some(c) => c,
            None => self.tail.get(i - HEAD).unwrap_or(&END),
        }
    }
}

impl<S: Store> Arg<S> {
    /// Bytes of the fixed part of the record this argument takes.
    pub fn size(&self) -> usize {
        usize::from(self.ty.get().size) * (self.count.max(1) as usize)
    }

    /// Field name: given, generated from the text (with BTF arguments), or
    /// `arg<N>`.
    pub fn name(&self) -> &[u8] {
        self.store.name()
    }

    /// The expression as written, type included.
    pub fn comm(&self) -> &[u8] {
        self.store.comm()
    }

    /// Instruction `i`; [`Op::End`] past the program.
    #[inline(always)]
    pub fn insn(&self, i: usize) -> &Insn {
        self.store.insn(i)
    }

    /// The instructions up to and including the [`Op::End`].
    pub fn program(&self) -> impl Iterator<Item = &Insn> + '_ {
        let mut done = false;
        (0..FETCH_INSN_MAX).map_while(move |i| {
            let c = self.insn(i);
            (!core::mem::replace(&mut done, c.op == Op::End)).then_some(c)
        })
    }

    /// The text of instruction `insn` (`@SYM` name or immediate string).
    pub fn insn_text(&self, insn: &Insn) -> &[u8] {
        let start = usize::from(insn.data_start);
        let end = start + usize::from(insn.data_len);
        self.comm().get(start..end).unwrap_or(&[])
    }

    /// The same argument with its name, text and program kept by `f`'s
    /// result, or `f`'s error.
    pub fn map<T, E>(&self, f: impl FnOnce(&S) -> Result<T, E>) -> Result<Arg<T>, E> {
        Ok(Arg {
            ty: self.ty,
            count: self.count,
            offset: self.offset,
            dynamic: self.dynamic,
            shortcut: self.shortcut,
            store: f(&self.store)?,
        })
    }
}

/// Where a probe is and so what its arguments may fetch
/// (`TPARG_FL_FENTRY` / `TPARG_FL_RETURN`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// A kprobe at a function entry: `$argN` reads registers.
    pub fentry: bool,
    /// A kretprobe on a symbol: `$retval`, and `$argN` through entry data.
    pub ret: bool,
}

impl Flags {
    /// `tparg_is_function_entry()`.
    pub fn is_function_entry(self) -> bool {
        self.fentry && !self.ret
    }

    /// `tparg_is_function_return()`.
    pub fn is_function_return(self) -> bool {
        self.ret && !self.fentry
    }
}

/// The function arguments a return probe saves at entry for `$argN`
/// (`struct probe_entry_arg`): argument `n` (0-based) is stored at byte
/// `8 * i` of the entry data, `i` its position here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryArgs {
    len: usize,
    args: [u16; MAX_TRACE_ARGS],
}

impl EntryArgs {
    /// None yet.
    pub const fn new() -> Self {
        EntryArgs {
            len: 0,
            args: [0; MAX_TRACE_ARGS],
        }
    }

    /// The saved argument numbers (0-based), in entry-data order.
    pub fn args(&self) -> &[u16] {
        &self.args[..self.len]
    }

    /// Bytes of entry data needed (`traceprobe_get_entry_data_size()`).
    pub fn data_size(&self) -> usize {
        self.len * 8
    }

    /// `__store_entry_arg()`: the entry-data offset of argument `n`, adding
    /// it if new.
    fn store(&mut self, n: u16) -> Option<u32> {
        if let Some(i) = self.args().iter().position(|&a| a == n) {
            return u32::try_from(i * 8).ok();
        }
        let slot = self.args.get_mut(self.len)?;
        *slot = n;
        self.len += 1;
        u32::try_from((self.len - 1) * 8).ok()
    }
}

impl Default for EntryArgs {
    fn default() -> Self {
        Self::new()
    }
}

/// The function arguments a return probe saves at entry, however they are
/// kept: [`EntryArgs`] (inline, room for [`MAX_TRACE_ARGS`]) while parsed;
/// a stored probe may keep just those it has
/// ([`crate::probe::command::Probe::map`]).
pub trait EntryList {
    /// The saved argument numbers (0-based), in entry-data order.
    fn args(&self) -> &[u16];

    /// Bytes of entry data needed (`traceprobe_get_entry_data_size()`).
    fn data_size(&self) -> usize {
        self.args().len() * 8
    }
}

impl EntryList for EntryArgs {
    fn args(&self) -> &[u16] {
        EntryArgs::args(self)
    }
}

/// State shared by the arguments of one probe while it is parsed
/// (`struct traceprobe_parse_context`); `'e` is the environment's, which
/// holds the BTF.
pub struct Ctx<'a, 'e> {
    /// Where the probe is.
    pub flags: Flags,
    /// Token index of the argument, for errors.
    pub index: usize,
    /// Caret offset inside the token.
    pub offset: usize,
    /// Entry data of a return probe.
    pub entry: &'a mut EntryArgs,
    /// The largest `$stackN` and `$argN` ([`Env::stack_words`]).
    ///
    /// [`Env::stack_words`]: super::env::Env::stack_words
    pub max_stack: u64,
    /// The architecture's registers ([`Env::arch`]).
    ///
    /// [`Env::arch`]: super::env::Env::arch
    pub arch: &'static Arch,
    /// The probed function's BTF, looked up once for the probe
    /// (`ctx->funcname`, `ctx->btf`, `ctx->proto`, `ctx->params`).
    pub btf: &'a mut BtfContext<'e>,
    /// The BTF type of what the argument fetches so far (`ctx->last_type`
    /// and its bitfield): none at the start of each argument.
    pub last: LastType,
    /// The release whose language this is.
    pub dialect: Dialect,
    /// How many `+|-OFF(`, typecasts and `this_cpu_*(` enclose the
    /// expression being parsed (`ctx->depth`).
    pub depth: usize,
}

impl Ctx<'_, '_> {
    fn err(&self, code: Code, offset: usize) -> ParseError {
        ParseError::inval(code, self.index, offset)
    }

    fn err_at(&self, errno: i32, code: Code, offset: usize) -> ParseError {
        ParseError::logged(errno, code, self.index, offset)
    }
}

type PResult<T> = core::result::Result<T, ParseError>;

/// The byte at `i`, or NUL past the end (C strings).
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn find(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|&b| b == c)
}

/// Parses argument `i` (0-based) of a probe, `token` as written, whose
/// fixed part starts at `*size` bytes; `prev` are the arguments before it.
/// `traceprobe_parse_probe_arg()` in trace_probe.c.
pub fn parse<S: Store>(
    token: &[u8],
    i: usize,
    prev: &[Arg<S>],
    size: &mut usize,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<Arg> {
    let (name, body_start) = match find(token, b'=') {
        Some(eq) => {
            if eq > MAX_ARG_NAME_LEN {
                return Err(ctx.err(Code::ArgNameTooLong, 0));
            }
            if eq == 0 {
                return Err(ctx.err(Code::NoArgName, 0));
            }
            (Str::from_bytes(&token[..eq]), eq + 1)
        }
        None => (Some(generate_name(token, i, ctx)?), 0),
    };
    let Some(name) = name else {
        return Err(ctx.err(Code::ArgNameTooLong, 0));
    };
    if !is_good_name(name.as_bytes(), false) {
        return Err(ctx.err(Code::BadArgName, 0));
    }
    let n = name.as_bytes();
    if RESERVED.contains(&n) || prev.iter().any(|a| a.name() == n) {
        return Err(ctx.err(Code::UsedArgName, 0));
    }
    ctx.offset = body_start;
    parse_body(&token[body_start..], name, size, ctx)
}

/// `generate_probe_arg_name()` (trace_probe.c): built with BTF
/// arguments, the text up to the first `:` if it is a good name, whatever
/// its length; else `arg<N>`.
///
/// # Errors
///
/// `ARG_TOO_LONG` for a good name longer than any argument may be: C
/// keeps it, finds no conflict (every kept name is shorter) and fails on
/// the argument's length at offset 0, which is what this answers.
fn generate_name(token: &[u8], i: usize, ctx: &Ctx<'_, '_>) -> PResult<Str<MAX_NAME_LEN>> {
    if ctx.btf.enabled() {
        let text = &token[..find(token, b':').unwrap_or(token.len())];
        if is_good_name(text, false) {
            return Str::from_bytes(text)
                .filter(|_| text.len() <= ctx.dialect.max_argstr_len())
                .ok_or_else(|| ctx.err_at(errno::E2BIG, Code::ArgTooLong, 0));
        }
    }
    let mut n = Str::new();
    let _ = core::fmt::Write::write_fmt(&mut n, format_args!("arg{}", i + 1));
    Ok(n)
}

/// `traceprobe_parse_probe_arg_body()` in trace_probe.c.
fn parse_body(
    body: &[u8],
    name: Str<MAX_NAME_LEN>,
    size: &mut usize,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<Arg> {
    if body.len() > ctx.dialect.max_argstr_len() {
        return Err(ctx.err_at(errno::E2BIG, Code::ArgTooLong, ctx.offset));
    }
    let Some(comm) = Str::from_bytes(body).filter(|c| !c.is_empty()) else {
        return Err(ctx.err(Code::NoArgBody, ctx.offset));
    };
    let split = parse_type(body, ctx)?;
    let mut arg = Arg {
        ty: split.ty,
        count: split.count,
        offset: 0,
        dynamic: false,
        shortcut: None,
        store: Parsed {
            name,
            comm,
            code: [Insn::NOP; FETCH_INSN_MAX],
        },
    };
    let mut p = ProgramBuilder::new();
    ctx.last = LastType::default();
    ctx.btf.clear_struct();
    ctx.depth = 0;
    parse_fetch(body, 0, split.fetch_end, &mut p, ctx)?;
    let ty_text = split.ty_text.map(|(a, b)| &body[a..b]);
    // The storing type from BTF (`traceprobe_parse_probe_arg_body()`).
    match ty_text {
        None => {
            if let Some(ty) = btf_arg::fetch_type(ctx) {
                arg.ty = ty;
            }
        }
        Some(t) if t.windows(6).any(|w| w == b"string") => {
            btf_arg::prepare_string(t, &mut p, ctx)?;
        }
        Some(_) => {}
    }

    arg.offset = u32::try_from(*size).unwrap_or(u32::MAX);
    *size += arg.size();
    if *size > MAX_PROBE_EVENT_SIZE {
        return Err(ctx.err_at(errno::E2BIG, Code::EventTooBig, ctx.offset));
    }
    finalize(&mut arg, &mut p, ty_text, split.ty_offset, ctx)?;
    p.fold_symbol();
    arg.store.code = p.finish();
    arg.shortcut = shortcut(&arg.store.code, arg.size());
    Ok(arg)
}

struct TypeSplit {
    /// End of the fetch expression (the first `:`).
    fetch_end: usize,
    /// The type name (before any `[`), as a range of the body.
    ty_text: Option<(usize, usize)>,
    /// Offset of the type name in the body, 0 without a type.
    ty_offset: usize,
    ty: TypeId,
    count: u32,
}

/// `parse_probe_arg_type()` in trace_probe.c.
fn parse_type(body: &[u8], ctx: &Ctx<'_, '_>) -> PResult<TypeSplit> {
    let colon = find(body, b':');
    let fetch_end = colon.unwrap_or(body.len());
    let mut count = 0;
    let mut ty_text = None;
    if let Some(c) = colon {
        let t = c + 1;
        let mut t_end = body.len();
        if let Some(open) = find(&body[t..], b'[').map(|p| t + p) {
            t_end = open;
            let t2 = open + 1;
            match find(&body[t2..], b']').map(|p| t2 + p) {
                None => return Err(ctx.err(Code::ArrayNoClose, ctx.offset + body.len())),
                Some(t3) if t3 + 1 != body.len() => {
                    return Err(ctx.err(Code::BadArraySuffix, ctx.offset + t3 + 1));
                }
                Some(t3) => {
                    count = match kstrtouint(&body[t2..t3], 0) {
                        Ok(n) if n != 0 => n,
                        _ => return Err(ctx.err(Code::BadArrayNum, ctx.offset + t2)),
                    };
                    if count > MAX_ARRAY_LEN {
                        return Err(ctx.err(Code::ArrayTooBig, ctx.offset + t2));
                    }
                }
            }
        }
        ty_text = Some((t, t_end));
    }
    let ty_offset = colon.map_or(0, |c| c + 1);
    let fetch = &body[..fetch_end];
    let ty = if fetch == b"$comm" || fetch == b"$COMM" || fetch.starts_with(b"\\\"") {
        // $comm and immediate strings are strings, never arrays.
        if count != 0 || ty_text.is_some_and(|(a, b)| &body[a..b] != b"string") {
            return Err(ctx.err(Code::NeedStringType, ctx.offset + ty_offset));
        }
        types::STRING
    } else {
        let found = match ty_text {
            Some((a, b)) => TypeId::find(&body[a..b]),
            None => Some(types::DEFAULT),
        };
        match found {
            Some(t) => t,
            None => return Err(ctx.err(Code::BadType, ctx.offset + ty_offset)),
        }
    };
    Ok(TypeSplit {
        fetch_end,
        ty_text,
        ty_offset,
        ty,
        count,
    })
}

/// `this_cpu_ptr(`, and `this_cpu_read(`'s length.
const THIS_CPU_PTR: &[u8] = b"this_cpu_ptr(";
const THIS_CPU_READ: &[u8] = b"this_cpu_read(";

/// A prefix that encloses an expression one level deeper: a dereference
/// `+|-[u]OFF(`, a typecast `(STRUCT[,FIELD])` and a per-CPU access
/// `this_cpu_ptr(`/`this_cpu_read(` (7.3's `STATE_DEREF`,
/// `STATE_TYPECAST` and `STATE_THIS_CPU_*`). Each is one level of the same
/// stack, under the dialect's one limit ([`Dialect::max_nested`]).
#[derive(Clone, Copy)]
enum Level {
    /// `+|-[u]OFF(FETCHARG)`, with its sign.
    Deref(u8),
    /// `(STRUCT[,FIELD])...->FIELD`.
    Typecast,
    /// `this_cpu_ptr(FETCHARG)` or, `read`, `this_cpu_read(FETCHARG)`.
    ThisCpu { read: bool },
}

impl Level {
    /// The level `s` opens in `dialect`, if any.
    fn of(s: &[u8], dialect: Dialect) -> Option<Self> {
        match at(s, 0) {
            sign @ (b'+' | b'-') => Some(Self::Deref(sign)),
            b'(' if dialect.has_typecasts() => Some(Self::Typecast),
            _ if dialect.has_this_cpu() && s.starts_with(THIS_CPU_PTR) => {
                Some(Self::ThisCpu { read: false })
            }
            _ if dialect.has_this_cpu() && s.starts_with(THIS_CPU_READ) => {
                Some(Self::ThisCpu { read: true })
            }
            _ => None,
        }
    }
}

/// `parse_probe_arg()` in 6.12's trace_probe.c; in 7.3
/// `parse_probe_arg_nested()`, `parse_probe_arg_leaf()` and
/// `unwind_parse_states()`, the same steps in a loop over a stack of
/// prefixes where 6.12 recursed (as this does): the fetch expression
/// `body[lo..hi]`, emitted into `p` from the slot it is filling.
fn parse_fetch(
    body: &[u8],
    lo: usize,
    hi: usize,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    let s = &body[lo..hi];
    if let Some(level) = Level::of(s, ctx.dialect) {
        // 7.3 counts the levels (`parse_probe_arg_nested()`).
        if ctx.dialect.max_nested().is_some_and(|m| ctx.depth >= m) {
            return Err(ctx.err_at(errno::E2BIG, Code::TooManyNested, ctx.offset));
        }
        return match level {
            Level::Deref(sign) => parse_deref(body, lo, hi, sign, p, ctx),
            Level::Typecast => parse_typecast(body, lo, hi, p, ctx),
            Level::ThisCpu { read } => parse_this_cpu(body, lo, hi, read, p, ctx),
        };
    }
    match at(s, 0) {
        b'$' => parse_var(s, p, ctx)?,
        b'%' => match ctx.arch.register_offset(&s[1..]) {
            Some(off) => p.set(Insn {
                // A pt_regs offset (below 256).
                param: off as u16,
                ..Insn::new(Op::Reg)
            }),
            None => return Err(ctx.err(Code::BadRegName, ctx.offset)),
        },
        b'@' => {
            if at(s, 1).is_ascii_digit() {
                let Ok(addr) = kstrtoul(&s[1..], 0) else {
                    return Err(ctx.err(Code::BadMemAddr, ctx.offset));
                };
                p.set(Insn::load_imm(addr));
            } else if at(s, 1) == b'+' {
                // (The dialect's text: "with kprobe" in 6.12, "for kernel
                // probes" in 7.3.)
                return Err(ctx.err(Code::FileOnKprobe, ctx.offset));
            } else {
                // Resolved at registration (traceprobe_update_arg()).
                let (start, len) = (lo + 1, hi - lo - 1);
                p.set(Insn {
                    data_start: start as u8,
                    data_len: len as u8,
                    ..Insn::new(Op::Symbol)
                });
                p.push(Insn::new(Op::Imm), errno::EINVAL, ctx)?;
            }
            p.push(Insn::new(Op::Deref), errno::EINVAL, ctx)?;
        }
        b'\\' => {
            if at(s, 1) == b'"' {
                let text = &s[2..];
                if text.last() != Some(&b'"') {
                    return Err(ctx.err(Code::ImmstrNoClose, ctx.offset + 2 + text.len()));
                }
                p.set(Insn {
                    data_start: (lo + 2) as u8,
                    data_len: (text.len() - 1) as u8,
                    ..Insn::new(Op::Data)
                });
            } else {
                let v = &s[1..];
                let imm = match at(v, 0) {
                    c if c.is_ascii_digit() => kstrtoul(v, 0).ok(),
                    b'-' => kstrtol(v, 0).ok().map(|x| x as u64),
                    b'+' => kstrtol(&v[1..], 0).ok().map(|x| x as u64),
                    _ => None,
                };
                match imm {
                    Some(imm) => p.set(Insn::load_imm(imm)),
                    None => return Err(ctx.err(Code::BadImm, ctx.offset + 1)),
                }
            }
        }
        c if is_alpha(c) || c == b'_' => {
            // A BTF variable name (`isalpha()`: Latin-1).
            if !ctx.flags.is_function_entry() && !ctx.flags.is_function_return() {
                return Err(ctx.err(Code::NosupBtfarg, ctx.offset));
            }
            if !ctx.btf.enabled() {
                // Built without BTF arguments: the stub of parse_btf_arg().
                return Err(ctx.err_at(errno::EOPNOTSUPP, Code::NosupBtfarg, ctx.offset));
            }
            btf_arg::parse(s, p, ctx)?;
        }
        _ => {}
    }
    if p.op() == Op::Nop {
        return Err(ctx.err(Code::BadFetchArg, ctx.offset));
    }
    Ok(())
}

/// `+|-[u]OFFS(FETCHARG)`, the dereference case of 6.12's `parse_probe_arg()`.
fn parse_deref(
    body: &[u8],
    lo: usize,
    hi: usize,
    sign: u8,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    // C moves the sign over the `u` and continues from there: `a` is where
    // C's `arg` points, with `sign` as its first character.
    let (op, a) = if at(body, lo + 1) == b'u' && lo + 1 < hi {
        (Op::UDeref, lo + 1)
    } else {
        (Op::Deref, lo)
    };
    let digits_start = a + 1;
    let Some(paren) = find(&body[digits_start..hi], b'(').map(|p| digits_start + p) else {
        return Err(ctx.err(Code::DerefNeedBrace, ctx.offset));
    };
    let digits = &body[digits_start..paren];
    let offset = if sign == b'+' {
        kstrtol(digits, 0)
    } else {
        kstrtol_neg(digits, 0)
    };
    let Ok(offset) = offset else {
        return Err(ctx.err(Code::BadDerefOffs, ctx.offset));
    };
    // ctx->offset += (tmp + 1 - arg) + (arg[0] != '-' ? 1 : 0), where `arg`
    // is past a `+` sign but at a `-` one.
    let arg_first = if sign == b'+' {
        at(body, digits_start)
    } else {
        b'-'
    };
    let arg_pos = if sign == b'+' { digits_start } else { a };
    ctx.offset += (paren + 1 - arg_pos) + usize::from(arg_first != b'-');
    let inner = paren + 1;
    parse_deref_inner(body, inner, hi, p, ctx)?;
    p.push(
        Insn {
            offset,
            ..Insn::new(op)
        },
        errno::EINVAL,
        ctx,
    )?;
    // What the dereference reads has no BTF type.
    ctx.last.ty = None;
    Ok(())
}

/// `find_matched_close_paren()` (7.3 trace_probe.c): where the `)`
/// that closes the `(` at `s[0]` is.
fn matched_close(s: &[u8]) -> Option<usize> {
    let mut count = 0usize;
    for (i, &c) in s.iter().enumerate() {
        if c == b'(' {
            count += 1;
        } else if c == b')' {
            count = count.wrapping_sub(1);
            if count == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// A typecast (7.3 `handle_typecast()` and its unwinding in
/// `unwind_parse_states()`): `(STRUCT[,FIELD])` followed by `(FETCHARG)->`,
/// `+|-OFF(..)->`, `this_cpu_*(..)->` or `VAR->`, then fields. What it
/// casts is parsed first (one level deeper), then the fields of `STRUCT`
/// from there. BTF arguments only, at function entry and exit.
fn parse_typecast(
    body: &[u8],
    lo: usize,
    hi: usize,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    if !ctx.btf.enabled() || !(ctx.flags.is_function_entry() || ctx.flags.is_function_return()) {
        return Err(ctx.err_at(errno::EOPNOTSUPP, Code::NosupBtfarg, ctx.offset));
    }
    let s = &body[lo..hi];
    let orig = ctx.offset;
    let Some(cast_end) = find(s, b')') else {
        return Err(ctx.err(Code::DerefOpenBrace, ctx.offset + s.len()));
    };
    // `tmp`: what follows the cast.
    let t = cast_end + 1;
    ctx.offset += t;
    let rest = &s[t..];
    let arrow = |i: usize| at(rest, i) == b'-' && at(rest, i + 1) == b'>';
    // The inner expression (a range of `rest`) and where the fields start.
    let (inner, fields) = if at(rest, 0) == b'(' {
        let Some(close) = matched_close(rest) else {
            return Err(ctx.err(Code::DerefOpenBrace, ctx.offset));
        };
        if !arrow(close + 1) {
            return Err(ctx.err(Code::TypecastReqField, ctx.offset + close + 1));
        }
        ctx.offset += 1;
        ((1, close), close + 3)
    } else if matches!(at(rest, 0), b'+' | b'-')
        || rest.starts_with(THIS_CPU_PTR)
        || rest.starts_with(THIS_CPU_READ)
    {
        // A dereference may have fields inside: up to its closing `)`.
        let Some(open) = rest.get(1..).and_then(|r| find(r, b'(')).map(|p| p + 1) else {
            return Err(ctx.err(Code::DerefNeedBrace, ctx.offset));
        };
        let Some(close) = matched_close(&rest[open..]).map(|p| open + p + 1) else {
            return Err(ctx.err(Code::DerefOpenBrace, ctx.offset + rest.len()));
        };
        if !arrow(close) {
            return Err(ctx.err(Code::TypecastReqField, ctx.offset + close));
        }
        ((0, close), close + 2)
    } else {
        if at(rest, 0) == b'@' {
            // `@SYM+OFF` needs parentheses.
            if let Some(p) = rest.iter().position(|&c| c == b'+' || c == b'-') {
                if at(rest, p + 1).is_ascii_digit() {
                    return Err(ctx.err(Code::TypecastSymOffset, ctx.offset));
                }
            }
        }
        // The inner variable's name, up to the first `-`.
        match find(rest, b'-') {
            Some(c) if arrow(c) => ((0, c), c + 2),
            _ => return Err(ctx.err(Code::TypecastReqField, ctx.offset + rest.len())),
        }
    };
    parse_nested(body, lo + t + inner.0, lo + t + inner.1, p, ctx)?;
    let fields_at = t + fields;
    btf_arg::cast(
        &s[1..cast_end],
        orig + 1,
        &s[fields_at..],
        orig + fields_at,
        p,
        ctx,
    )
}

/// What a dereference or a `this_cpu_*()` reads from: `body[inner..hi]` up
/// to its last `)`, parsed one level deeper, the caret back where the
/// prefix left it; `$comm` and immediate strings have no address (C's
/// `STATE_DEREF`, parsed and unwound alike for both, in 7.3's
/// `parse_probe_arg_deref()`, `parse_this_cpu()` and `unwind_parse_states()`).
fn parse_deref_inner(
    body: &[u8],
    inner: usize,
    hi: usize,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    let Some(close) = body[inner..hi]
        .iter()
        .rposition(|&c| c == b')')
        .map(|p| inner + p)
    else {
        return Err(ctx.err(Code::DerefOpenBrace, ctx.offset + (hi - inner)));
    };
    let cur_offs = ctx.offset;
    parse_nested(body, inner, close, p, ctx)?;
    ctx.offset = cur_offs;
    if matches!(p.op().class(), Class::Bytes(_)) {
        return Err(ctx.err(Code::CommCantDeref, ctx.offset));
    }
    Ok(())
}

/// The expression inside a prefix, one level deeper.
fn parse_nested(
    body: &[u8],
    lo: usize,
    hi: usize,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    ctx.depth += 1;
    let r = parse_fetch(body, lo, hi, p, ctx);
    ctx.depth -= 1;
    r
}

/// `this_cpu_ptr(FETCHARG)` and `this_cpu_read(FETCHARG)` (7.3
/// `parse_this_cpu()` and its unwinding in `unwind_parse_states()`): the
/// current CPU's address of the per-CPU variable FETCHARG, and for
/// `this_cpu_read` the word there. The last `)` closes; for an `@ADDR` or
/// `@SYM` inside, the CPU offset replaces its dereference. (C refuses it,
/// `NOSUP_PERCPU`, for uprobes and event probes only: never here.)
fn parse_this_cpu(
    body: &[u8],
    lo: usize,
    hi: usize,
    read: bool,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    let prefix = if read {
        THIS_CPU_READ.len()
    } else {
        THIS_CPU_PTR.len()
    };
    ctx.offset += prefix;
    let inner = lo + prefix;
    parse_deref_inner(body, inner, hi, p, ctx)?;
    // For `@ADDR` or `@SYM`, in place of its dereference.
    if at(body, inner) != b'@' {
        p.advance(errno::EINVAL, ctx)?;
    }
    p.set(Insn::new(Op::CpuPtr));
    ctx.last.ty = None;
    if read {
        p.push(Insn::new(Op::Deref), errno::EINVAL, ctx)?;
    }
    Ok(())
}

/// `$`-variables, `parse_probe_vars()` (trace_probe.c; 7.3's adds
/// `$current`). `s` starts at the `$`.
fn parse_var(s: &[u8], p: &mut ProgramBuilder, ctx: &mut Ctx<'_, '_>) -> PResult<()> {
    let v = &s[1..];
    // A number that does not parse: -ERANGE in 7.3 if it overflows.
    let bad_number = |rest: &[u8], ctx: &Ctx<'_, '_>| {
        let errno = ctx.dialect.bad_number_errno(kstrtoul_overflows(rest, 10));
        ctx.err_at(errno, Code::BadVar, ctx.offset)
    };
    let insn = if v.starts_with(b"retval") {
        if !ctx.flags.ret {
            return Err(ctx.err(Code::RetvalOnProbe, ctx.offset));
        }
        if ctx.btf.enabled() {
            // `$retval[->FIELD...]` typed from BTF, and anything else
            // starting with `$retval` as a name (`parse_probe_vars()`).
            return btf_arg::parse(s, p, ctx);
        }
        Insn::new(Op::Retval)
    } else if let Some(rest) = v.strip_prefix(b"stack") {
        if rest.is_empty() {
            Insn::new(Op::StackP)
        } else if rest[0].is_ascii_digit() {
            let Ok(n) = kstrtoul(rest, 10) else {
                return Err(bad_number(rest, ctx));
            };
            if n > ctx.max_stack {
                return Err(ctx.err(Code::BadStackNum, ctx.offset));
            }
            let Ok(param) = u16::try_from(n) else {
                return Err(ctx.err(Code::BadStackNum, ctx.offset));
            };
            Insn {
                param,
                ..Insn::new(Op::Stack)
            }
        } else {
            return Err(ctx.err(Code::BadVar, ctx.offset));
        }
    } else if v == b"comm" || v == b"COMM" {
        Insn::new(Op::Comm)
    } else if let Some(rest) = v
        .strip_prefix(b"current")
        .filter(|_| ctx.dialect.has_current())
    {
        // `parse_probe_var_current()` (7.3 trace_probe.c).
        if rest.first() == Some(&b'-') && ctx.btf.enabled() {
            return btf_arg::parse(s, p, ctx);
        }
        if !rest.is_empty() {
            return Err(ctx.err(Code::BadVar, ctx.offset));
        }
        Insn::new(Op::Current)
    } else if let Some(rest) = v.strip_prefix(b"arg") {
        let Ok(n) = kstrtoul(rest, 10) else {
            return Err(bad_number(rest, ctx));
        };
        if n == 0 || n > ctx.max_stack {
            return Err(ctx.err(Code::BadArgNum, ctx.offset));
        }
        let Ok(n) = u16::try_from(n - 1) else {
            return Err(ctx.err(Code::BadArgNum, ctx.offset));
        };
        if ctx.flags.is_function_entry() {
            entry_arg(n, ctx.arch)
        } else if ctx.flags.is_function_return() {
            let Some(off) = ctx.entry.store(n) else {
                return Err(ParseError::silent(errno::ENOMEM));
            };
            Insn {
                offset: i64::from(off),
                ..Insn::new(Op::Edata)
            }
        } else {
            return Err(ctx.err(Code::NofentryArgs, ctx.offset));
        }
    } else {
        return Err(ctx.err(Code::BadVar, ctx.offset));
    };
    p.set(insn);
    Ok(())
}

/// Argument `n` (0-based) at a function entry: C's `FETCH_OP_ARG`. One
/// passed in a register is read as that register ([`Op::Reg`]), which is
/// what `regs_get_kernel_argument()` returns for it, without looking the
/// register up on every hit; the others are [`Op::Arg`].
pub(super) fn entry_arg(n: u16, arch: &Arch) -> Insn {
    match arch.argument_registers.get(usize::from(n)) {
        // A pt_regs offset (below 256).
        Some(&off) => Insn {
            param: off as u16,
            ..Insn::new(Op::Reg)
        },
        None => Insn {
            param: n,
            ..Insn::new(Op::Arg)
        },
    }
}

/// `finalize_fetch_insn()` in trace_probe.c: the store, the
/// bitfield and the array loop after the fetch.
fn finalize(
    arg: &mut Arg,
    p: &mut ProgramBuilder,
    ty_text: Option<&[u8]>,
    ty_offset: usize,
    ctx: &Ctx<'_, '_>,
) -> PResult<()> {
    let ty = arg.ty.get();
    let last = p.op();
    if ty.is_string {
        let symstr = arg.ty == types::SYMSTR;
        let ok = if symstr {
            last.feeds_symstr()
        } else {
            last.feeds_string()
        };
        if !ok {
            let code = if symstr {
                Code::BadSymstring
            } else {
                Code::BadString
            };
            return Err(ctx.err(code, ctx.offset + ty_offset));
        }
        if symstr || last.keeps_address() || arg.count != 0 {
            // Keep the loaded address (or, for arrays, the pointer array).
            p.advance(errno::EINVAL, ctx)?;
        }
        let op = if arg.ty == types::USTRING || p.op() == Op::UDeref {
            Op::StUString
        } else if symstr {
            Op::StSymstr
        } else {
            Op::StString
        };
        to_store(p.current(), op, ty.size);
        arg.dynamic = true;
    } else if let Class::Deref(space) = last.class() {
        let op = match space {
            Space::Kernel => Op::StMem,
            Space::User => Op::StUMem,
        };
        to_store(p.current(), op, ty.size);
    } else {
        p.push(
            Insn {
                size: ty.size,
                ..Insn::new(Op::StRaw)
            },
            errno::E2BIG,
            ctx,
        )?;
    }
    let store = p.op();

    if let Some(t) = ty_text {
        if t.first() == Some(&b'b') && !bitfield(p, t, ty.size, ctx.dialect) {
            return Err(ctx.err(Code::BadBitfield, ctx.offset + ty_offset));
        }
    } else {
        btf_arg::bitfield(p, ty.size, ctx)?;
    }

    if arg.count != 0 {
        if !store.repeats() {
            return Err(ctx.err(Code::BadString, ctx.offset + ty_offset));
        }
        p.push(
            Insn {
                // At most MAX_ARRAY_LEN.
                param: arg.count as u16,
                ..Insn::new(Op::LpArray)
            },
            errno::E2BIG,
            ctx,
        )?;
    }
    p.terminate();
    Ok(())
}

/// Turns `slot` into the store `op` of `size` bytes, keeping the
/// dereference offset it may hold (C changes the opcode of the `DEREF` in
/// place, so the union keeps `offset`).
fn to_store(slot: &mut Insn, op: Op, size: u8) {
    *slot = Insn {
        offset: slot.offset,
        size,
        ..Insn::new(op)
    };
}

/// `__parse_bitfield_probe_arg()` in trace_probe.c, for a type
/// starting with `b`: `b<width>@<offset>/<container>`. False is
/// `BAD_BITFIELD`.
fn bitfield(p: &mut ProgramBuilder, t: &[u8], size: u8, dialect: Dialect) -> bool {
    let simple_strtoul = |s: &[u8], base| dialect.simple_strtoul(s, base);
    let (bw, n) = simple_strtoul(&t[1..], 0);
    let tail = 1 + n;
    if bw == 0 || at(t, tail) != b'@' {
        return false;
    }
    let (bo, n) = simple_strtoul(&t[tail + 1..], 0);
    if n == 0 || at(t, tail + 1 + n) != b'/' {
        return false;
    }
    let bits = u64::from(size) * 8;
    // `unsigned long` arithmetic, as C's: `bw + bo` wraps (a huge offset
    // makes a small sum), and the shifts are cut to `unsigned char`.
    let used = bw.wrapping_add(bo);
    if used > bits {
        return false;
    }
    let Some(slot) = p.next() else {
        return false;
    };
    *slot = Insn {
        size,
        lshift: bits.wrapping_sub(used) as u8,
        rshift: bits.wrapping_sub(bw) as u8,
        ..Insn::new(Op::ModBf)
    };
    true
}

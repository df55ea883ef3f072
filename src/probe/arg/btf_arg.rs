// SPDX-License-Identifier: GPL-2.0-only

//! Arguments typed by BTF: function parameters by name, their fields,
//! `$retval`, and the types, string fetches and bitfields BTF gives them
//! (trace_probe.c from `btf_type_int()` to `parse_btf_bitfield()`, built
//! with `CONFIG_PROBE_EVENTS_BTF_ARGS`).
//!
//! A parameter is what `$argN` fetches (its register, `Op::Reg`, or
//! `Op::Arg` past them; at a return `Op::Edata` through the entry data);
//! each `->` adds one `Op::Deref` by
//! the byte offset of the fields it names, `.` adding up offsets within one
//! struct. So `file->f_path.dentry` on `vfs_read()` is the program of
//! `+0x48($arg1)`, and the hit path needs nothing new.
//!
//! The caret follows C's `ctx->offset`, with one exception: after the last
//! field of a chain C adds `next - fieldname` with `next` NULL
//! (`parse_btf_field()`), so the caret of a later error in the same argument
//! (`BAD_TYPE4STR`, `TOO_MANY_OPS`, ...) depends on the address of C's copy
//! of the argument. Here `next` is taken as the end of the last field's
//! name: the caret points just after the chain.

use super::super::btf::{
    find_struct_member, int_bits, int_data, int_encoding, int_offset, kind, kind_of,
    member_bit_offset, member_bitfield_size, size_or_type, skip_modifiers, Btf, Func, Struct,
    INT_SIGNED,
};
use super::super::env::Env;
use super::super::error::{errno, Code, ParseError};
use super::super::insn::{Insn, Op};
use super::super::types::TypeId;
use super::{at, Ctx, PResult, ProgramBuilder};

/// The BTF part of `struct traceprobe_parse_context` for one probe: the
/// function's name and, once `query_btf_context()` has found it, its BTF.
pub struct BtfContext<'e> {
    env: &'e dyn Env,
    /// `ctx->funcname`: `None` for a probe on an address.
    funcname: Option<&'e [u8]>,
    /// `ctx->btf` and `ctx->proto`, once found.
    loaded: Option<Func<'e>>,
    /// `ctx->struct_btf`: the BTF of the struct the argument being parsed
    /// starts from (`$current`'s `task_struct`), if any.
    struct_btf: Option<&'e dyn Btf>,
}

impl<'e> BtfContext<'e> {
    /// The context of a probe on `funcname` (`None` on an address).
    pub fn new(env: &'e dyn Env, funcname: Option<&'e [u8]>) -> Self {
        BtfContext {
            env,
            funcname,
            loaded: None,
            struct_btf: None,
        }
    }

    /// `clear_struct_btf()`: each argument starts without one.
    pub fn clear_struct(&mut self) {
        self.struct_btf = None;
    }

    /// `query_btf_struct()`: finds struct `name` and makes its BTF the
    /// argument's.
    fn query_struct(&mut self, name: &[u8]) -> Option<Struct<'e>> {
        let s = self.env.btf_struct(name)?;
        self.struct_btf = Some(s.btf);
        Some(s)
    }

    /// `ctx_btf()`: the struct's BTF if the argument has one, else the
    /// function's.
    fn btf(&self) -> Option<&'e dyn Btf> {
        self.struct_btf.or(self.loaded.map(|f| f.btf))
    }

    /// Whether BTF arguments are built in ([`Env::btf_args`]).
    pub fn enabled(&self) -> bool {
        self.env.btf_args()
    }

    /// `query_btf_context()` (trace_probe.c): the function's BTF,
    /// looked up the first time it is found and kept. `None` if built
    /// without BTF arguments, on an address, or if no BTF has the function.
    pub fn query(&mut self) -> Option<Func<'e>> {
        if self.loaded.is_none() && self.enabled() {
            self.loaded = self.env.btf_func(self.funcname?);
        }
        self.loaded
    }

    /// The BTF if a query found it (C's `ctx->btf` is set).
    pub fn loaded(&self) -> Option<Func<'e>> {
        self.loaded
    }

    /// The number of parameters a query found (`ctx->nr_params`), 0 if
    /// none was.
    pub fn nr_params(&self) -> usize {
        self.loaded.map_or(0, |f| f.nr_params())
    }
}

/// The BTF type of what an argument fetches so far (`ctx->last_type`,
/// `ctx->last_bitoffs`, `ctx->last_bitsize`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LastType {
    /// The type (modifiers skipped); `None` once a dereference read
    /// something else, or if the argument is not from BTF.
    pub ty: Option<u32>,
    /// Bit offset of the field in the bytes the last dereference reads.
    pub bitoffs: u32,
    /// Width of a bitfield, 0 if the field is not one.
    pub bitsize: u32,
}

/// A name split at its first `.` or `-` (`split_next_field()` in
/// trace_probe.c).
struct Split {
    /// Where the name ends.
    name_end: usize,
    /// Where the next field starts.
    next: usize,
    /// `->` (rather than `.`).
    is_ptr: bool,
}

/// `split_next_field()`: `None` if `s` has no `.` or `-`; a `-` that is
/// not `->` is `BAD_HYPHEN` at it.
fn split_next_field(s: &[u8], ctx: &Ctx<'_, '_>) -> PResult<Option<Split>> {
    let Some(p) = s.iter().position(|&c| c == b'.' || c == b'-') else {
        return Ok(None);
    };
    match (s[p], at(s, p + 1)) {
        (b'-', b'>') => Ok(Some(Split {
            name_end: p,
            next: p + 2,
            is_ptr: true,
        })),
        (b'.', _) => Ok(Some(Split {
            name_end: p,
            next: p + 1,
            is_ptr: false,
        })),
        _ => Err(ctx.err(Code::BadHyphen, ctx.offset + p)),
    }
}

/// `parse_btf_arg()` (trace_probe.c): `v` is a parameter name or
/// `$retval...`, optionally followed by `->FIELD...`; the fetch starts at
/// the slot `p` is filling.
pub(super) fn parse(v: &[u8], p: &mut ProgramBuilder, ctx: &mut Ctx<'_, '_>) -> PResult<()> {
    if ctx.btf.funcname.is_none() && !v.starts_with(b"$current") {
        // Not reached: only a probe on a symbol fetches from function
        // entry or return. C returns -EINVAL without a log.
        return Err(ParseError::silent(errno::EINVAL));
    }
    let (name, field) = match split_next_field(v, ctx)? {
        None => (v, None),
        Some(sp) if !sp.is_ptr => {
            // A field of a struct passed by value.
            return Err(ctx.err_at(errno::EOPNOTSUPP, Code::NosupDatArg, ctx.offset + sp.next));
        }
        Some(sp) => (&v[..sp.name_end], Some(sp.next)),
    };

    if name == b"$current" {
        // `$current->...` (7.3 `parse_btf_arg()`): the fields of the
        // current `task_struct`, at any probe location.
        p.set(Insn::new(Op::Current));
        let Some(task) = ctx.btf.query_struct(b"task_struct") else {
            return Err(ctx.err_at(errno::ENOENT, Code::NoBtfEntry, ctx.offset));
        };
        let Some((tid, _)) = skip_modifiers(task.btf, task.id) else {
            return Err(ctx.err(Code::BadBtfTid, ctx.offset));
        };
        ctx.last = LastType {
            ty: Some(tid),
            bitoffs: 0,
            bitsize: 0,
        };
        return match field {
            Some(f) => {
                ctx.offset += f;
                parse_field(&v[f..], tid, Some(0), task.btf, p, ctx)
            }
            None => Ok(()),
        };
    }
    let (func, tid) = if ctx.flags.ret && name == b"$retval" {
        p.set(Insn::new(Op::Retval));
        match ctx.btf.query() {
            Some(func) => match func.return_type() {
                0 => return Err(ctx.err_at(errno::ENOENT, Code::NoRetval, ctx.offset)),
                t => (func, t),
            },
            None => {
                if let Some(f) = field {
                    return Err(ctx.err_at(errno::ENOENT, Code::NoBtfEntry, ctx.offset + f));
                }
                return Ok(());
            }
        }
    } else {
        // C queries only if no earlier query found the BTF: a function
        // without parameters is NO_BTF_ENTRY the first time, NO_BTFARG
        // after (its `query_btf_context()` call in `parse_btf_arg()`).
        let func = match ctx.btf.loaded() {
            Some(f) => f,
            None => match ctx.btf.query() {
                Some(f) if f.nr_params() > 0 => f,
                _ => return Err(ctx.err_at(errno::ENOENT, Code::NoBtfEntry, ctx.offset)),
            },
        };
        let found = (0..func.nr_params()).find_map(|i| {
            let p = func.param(i)?;
            (func.btf.name(p.name_off) == Some(name)).then_some((i, p.ty))
        });
        let Some((i, ty)) = found else {
            return Err(ctx.err_at(errno::ENOENT, Code::NoBtfarg, ctx.offset));
        };
        // Fewer than 0x10000 parameters (the `vlen` of the prototype).
        let n = i as u16;
        if ctx.flags.is_function_entry() {
            p.set(super::entry_arg(n, ctx.arch));
        } else if ctx.flags.is_function_return() {
            let Some(off) = ctx.entry.store(n) else {
                return Err(ParseError::silent(errno::ENOMEM));
            };
            p.set(Insn {
                offset: i64::from(off),
                ..Insn::new(Op::Edata)
            });
        }
        (func, ty)
    };

    let Some((tid, _)) = skip_modifiers(func.btf, tid) else {
        return Err(ctx.err(Code::BadBtfTid, ctx.offset));
    };
    ctx.last = LastType {
        ty: Some(tid),
        bitoffs: 0,
        bitsize: 0,
    };
    match field {
        Some(f) => {
            ctx.offset += f;
            parse_field(&v[f..], tid, None, func.btf, p, ctx)
        }
        None => Ok(()),
    }
}

/// `parse_btf_field()` (trace_probe.c): the fields `s` of what
/// type `tid` (a pointer to a struct or union) points to; one
/// dereference per `->`. With `from_struct` (7.3: `$current` and
/// typecasts, whose `struct_btf` is set), `tid` is the struct itself for
/// the first field, whose offset is then taken that many bytes lower (a
/// cast's `,FIELD`).
fn parse_field(
    s: &[u8],
    mut tid: u32,
    from_struct: Option<u32>,
    btf: &dyn Btf,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    let mut pos = 0;
    let mut first = true;
    loop {
        let mut ty = btf.type_record(tid).unwrap_or(&[]);
        let prefix = from_struct.filter(|_| first);
        if prefix.is_none() {
            // One `->`: from a pointer to the struct it points to.
            if kind_of(ty) != kind::PTR {
                return Err(ctx.err(Code::NoPtrStrct, ctx.offset));
            }
            let Some((_, t)) = skip_modifiers(btf, size_or_type(ty)) else {
                return Err(ctx.err(Code::BadBtfTid, ctx.offset));
            };
            ty = t;
        }
        let (bitoffs, mid, more) = bitoffset_of_field(s, &mut pos, ty, btf, ctx)?;
        tid = mid;
        let offset = i64::from(bitoffs / 8) - i64::from(prefix.unwrap_or(0));
        first = false;
        p.push(
            Insn {
                offset,
                ..Insn::new(Op::Deref)
            },
            errno::EINVAL,
            ctx,
        )?;
        ctx.last.bitoffs = bitoffs % 8;
        ctx.last.ty = Some(tid);
        if !more {
            return Ok(());
        }
    }
}

/// `get_bitoffset_of_field()` (7.3 trace_probe.c; 6.12's inner
/// loop of `parse_btf_field()`): the `.`-separated fields of `s` from
/// `*pos` in the struct or union `ty`, up to a `->` or the end of `s`.
/// Their bit offset, the last one's type (modifiers skipped), and whether
/// a `->` follows (`*pos` then after it).
fn bitoffset_of_field<'b>(
    s: &[u8],
    pos: &mut usize,
    mut ty: &'b [u32],
    btf: &'b dyn Btf,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<(u32, u32, bool)> {
    let mut bitoffs: u32 = 0;
    loop {
        let rest = &s[*pos..];
        let sp = split_next_field(rest, ctx)?;
        let name = &rest[..sp.as_ref().map_or(rest.len(), |sp| sp.name_end)];
        let member = match find_struct_member(btf, ty, name) {
            Err(_) => return Err(ctx.err(Code::BadBtfTid, ctx.offset)),
            Ok(None) => return Err(ctx.err_at(errno::ENOENT, Code::NoBtfField, ctx.offset)),
            Ok(Some(m)) => m,
        };
        bitoffs = bitoffs.wrapping_add(member.anon_offset);
        if member.kflag {
            bitoffs = bitoffs.wrapping_add(member_bit_offset(member.offset));
            ctx.last.bitsize = member_bitfield_size(member.offset);
        } else {
            bitoffs = bitoffs.wrapping_add(member.offset);
            ctx.last.bitsize = 0;
        }
        let Some((mid, mty)) = skip_modifiers(btf, member.ty) else {
            return Err(ctx.err(Code::BadBtfTid, ctx.offset));
        };
        ty = mty;
        match sp {
            Some(sp) => {
                ctx.offset += sp.next;
                *pos += sp.next;
                if sp.is_ptr {
                    return Ok((bitoffs, mid, true));
                }
            }
            None => {
                // 6.12 adds `next - fieldname` with `next` NULL here (see
                // the module documentation): as if `next` were the end of
                // the name. 7.3 adds nothing.
                if !ctx.dialect.keeps_offset_at_last_field() {
                    ctx.offset += rest.len();
                }
                return Ok((bitoffs, mid, false));
            }
        }
    }
}

/// The unwinding of a typecast (the `STATE_TYPECAST` case of 7.3's
/// `unwind_parse_states()`), once what it casts has been parsed:
/// `parse_btf_casttype()` of `cast` (the text between the parentheses, at
/// `cast_offset` in the token), then the fields `fields` (at
/// `fields_offset`) of that struct, the first one
/// taken from what was fetched as if it pointed to the struct, or, with
/// `,FIELD`, to that member of it (`container_of()`).
pub(super) fn cast(
    cast: &[u8],
    cast_offset: usize,
    fields: &[u8],
    fields_offset: usize,
    p: &mut ProgramBuilder,
    ctx: &mut Ctx<'_, '_>,
) -> PResult<()> {
    ctx.btf.clear_struct();
    ctx.offset = cast_offset;
    let comma = cast.iter().position(|&c| c == b',');
    let name = &cast[..comma.unwrap_or(cast.len())];
    let Some(st) = ctx.btf.query_struct(name) else {
        return Err(ctx.err(Code::NoPtrStrct, ctx.offset));
    };
    let record = st.btf.type_record(st.id).unwrap_or(&[]);
    let mut prefix = 0;
    if let Some(c) = comma {
        ctx.offset += c + 1;
        let mut pos = 0;
        let (bitoffs, _, more) = bitoffset_of_field(&cast[c + 1..], &mut pos, record, st.btf, ctx)?;
        if bitoffs % 8 != 0 {
            return Err(ctx.err(Code::TypecastNotAligned, ctx.offset));
        }
        if more {
            // The field option went past a `->`.
            return Err(ctx.err(Code::TypecastBadArrow, ctx.offset - 2));
        }
        prefix = bitoffs / 8;
    }
    ctx.offset = fields_offset;
    parse_field(fields, st.id, Some(prefix), st.btf, p, ctx)
}

/// The BTF and the type of what the argument fetches, if both are known.
fn last_type<'b>(ctx: &Ctx<'_, 'b>) -> Option<(&'b dyn Btf, u32, &'b [u32])> {
    let btf = ctx.btf.btf()?;
    let id = ctx.last.ty?;
    Some((btf, id, btf.type_record(id)?))
}

/// `find_fetch_type_from_btf_type()` with `fetch_type_from_btf_type()`
/// (trace_probe.c): the type an argument written without
/// `:TYPE` takes from BTF; `None` keeps the default. An unsigned integer
/// of another width than 8, 16, 32 or 64 bits is a bitfield: `u64`, with
/// its width and offset noted for [`bitfield`].
pub(super) fn fetch_type(ctx: &mut Ctx<'_, '_>) -> Option<TypeId> {
    if !ctx.btf.enabled() {
        return None;
    }
    let (_, _, record) = last_type(ctx)?;
    let name: &[u8] = match kind_of(record) {
        kind::ENUM => b"s32",
        kind::ENUM64 => b"s64",
        kind::PTR => b"x64",
        kind::INT => {
            let data = record.get(3).copied().unwrap_or(0);
            let signed = int_encoding(data) & INT_SIGNED != 0;
            match (signed, int_bits(data)) {
                (true, 8) => b"s8",
                (true, 16) => b"s16",
                (true, 32) => b"s32",
                (true, 64) => b"s64",
                (true, _) => return None,
                (false, 8) => b"u8",
                (false, 16) => b"u16",
                (false, 32) => b"u32",
                (false, 64) => b"u64",
                (false, bits) => {
                    ctx.last.bitsize = bits;
                    ctx.last.bitoffs = ctx.last.bitoffs.wrapping_add(int_offset(data));
                    b"u64"
                }
            }
        }
        _ => return None,
    };
    TypeId::find(name)
}

/// Whether type `id` (after modifiers) is an unsigned 8-bit integer, as
/// `btf_type_is_char_ptr()` and `btf_type_is_char_array()` test their
/// target (trace_probe.c; the array test reads the integer data
/// whatever the kind, see [`int_data`]).
fn is_unsigned_8bit(btf: &dyn Btf, id: u32, need_int: bool) -> bool {
    let Some((rid, record)) = skip_modifiers(btf, id) else {
        return false;
    };
    if need_int && kind_of(record) != kind::INT {
        return false;
    }
    let data = int_data(btf, rid, record);
    int_encoding(data) & INT_SIGNED == 0 && int_bits(data) == 8
}

/// `check_prepare_btf_string_fetch()` (trace_probe.c), for a
/// `string` or `ustring` type: a `char` array is read in place; a pointer
/// to `char` is dereferenced once more (in user space for `ustring`);
/// anything else is `BAD_TYPE4STR`.
pub(super) fn prepare_string(
    ty_text: &[u8],
    p: &mut ProgramBuilder,
    ctx: &Ctx<'_, '_>,
) -> PResult<()> {
    if !ctx.btf.enabled() {
        return Ok(());
    }
    let Some((btf, _, record)) = last_type(ctx) else {
        return Ok(());
    };
    if kind_of(record) == kind::ARRAY {
        // `struct btf_array`: type, index type, number of elements.
        let elem = record.get(3).copied().unwrap_or(0);
        if is_unsigned_8bit(btf, elem, false) {
            return Ok(());
        }
    }
    // C reads `type->type` whatever the kind: the size of a non-pointer.
    if is_unsigned_8bit(btf, size_or_type(record), true) {
        let op = if ty_text.first() == Some(&b'u') {
            Op::UDeref
        } else {
            Op::Deref
        };
        return p.push(Insn::new(op), errno::E2BIG, ctx);
    }
    Err(ctx.err(Code::BadType4str, ctx.offset))
}

/// `parse_btf_bitfield()` (trace_probe.c), for an argument without
/// `:TYPE` whose last field is a bitfield: after the store, keep its bits.
///
/// C shifts in an 8-byte window whatever the field's size, so for a field
/// of 1, 2 or 4 bytes it reads and writes back bytes of the record past the
/// field (the next field, which is stored after and so overwrites them, or
/// past the fixed part of the record: the start of the dynamic data, or
/// past the event). The field itself then holds the bitfield's value: its
/// low bytes of the shifted 8 bytes. Here the window is the field's own
/// size: the same value (a C bitfield does not straddle a unit of its
/// type, so its bits are all in the bytes loaded), the same `format` field
/// (the type BTF gave) and text, and nothing written past the field. If a
/// bitfield did reach past the loaded bytes (a packed struct), C would
/// shift in what follows the field in the record; here those bits are 0.
pub(super) fn bitfield(p: &mut ProgramBuilder, size: u8, ctx: &Ctx<'_, '_>) -> PResult<()> {
    if !ctx.btf.enabled() || ctx.last.ty.is_none() {
        return Ok(());
    }
    let LastType {
        bitoffs, bitsize, ..
    } = ctx.last;
    if bitsize % 8 == 0 && bitoffs == 0 {
        return Ok(());
    }
    let bits = u32::from(size) * 8;
    p.push(
        Insn {
            size,
            // At most 64.
            lshift: bits.saturating_sub(bitsize.saturating_add(bitoffs)) as u8,
            rshift: bits.saturating_sub(bitsize) as u8,
            ..Insn::new(Op::ModBf)
        },
        errno::EINVAL,
        ctx,
    )
}

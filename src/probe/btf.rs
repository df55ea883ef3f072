// SPDX-License-Identifier: GPL-2.0-only

//! What the probe language reads of BTF, the kernel's type information:
//! the [`Btf`] trait (types by id, names by offset) that the kernel answers
//! from vmlinux's or a module's BTF and the host tests from a fake, and the
//! uapi layout of a type's record (`include/uapi/linux/btf.h`).
//!
//! A record is the three words of `struct btf_type` (`name_off`, `info`,
//! `size`/`type`) followed by the words its kind adds: one for an `INT`,
//! three for an `ARRAY`, three per member of a `STRUCT`/`UNION`, two per
//! parameter of a `FUNC_PROTO`, and so on.
//!
//! Over that trait, the helpers the probe language needs, ported from C
//! without allocation: [`skip_modifiers`] (`btf_type_skip_modifiers()` in
//! kernel/bpf/btf.c), the parameters and return type of a
//! [`Func`] (`btf_get_func_param()` in trace_btf.c), and
//! [`find_struct_member`] (`btf_find_struct_member()` in trace_btf.c)
//! with its 16-entry stack of anonymous members on the Rust stack.
//!
//! C header: [`include/uapi/linux/btf.h`](srctree/include/uapi/linux/btf.h)

/// `BTF_KIND_*`.
pub mod kind {
    /// `BTF_KIND_INT`.
    pub const INT: u32 = 1;
    /// `BTF_KIND_PTR`.
    pub const PTR: u32 = 2;
    /// `BTF_KIND_ARRAY`.
    pub const ARRAY: u32 = 3;
    /// `BTF_KIND_STRUCT`.
    pub const STRUCT: u32 = 4;
    /// `BTF_KIND_UNION`.
    pub const UNION: u32 = 5;
    /// `BTF_KIND_ENUM`.
    pub const ENUM: u32 = 6;
    /// `BTF_KIND_FWD`.
    pub const FWD: u32 = 7;
    /// `BTF_KIND_TYPEDEF`.
    pub const TYPEDEF: u32 = 8;
    /// `BTF_KIND_VOLATILE`.
    pub const VOLATILE: u32 = 9;
    /// `BTF_KIND_CONST`.
    pub const CONST: u32 = 10;
    /// `BTF_KIND_RESTRICT`.
    pub const RESTRICT: u32 = 11;
    /// `BTF_KIND_FUNC`.
    pub const FUNC: u32 = 12;
    /// `BTF_KIND_FUNC_PROTO`.
    pub const FUNC_PROTO: u32 = 13;
    /// `BTF_KIND_VAR`.
    pub const VAR: u32 = 14;
    /// `BTF_KIND_DATASEC`.
    pub const DATASEC: u32 = 15;
    /// `BTF_KIND_FLOAT`.
    pub const FLOAT: u32 = 16;
    /// `BTF_KIND_DECL_TAG`.
    pub const DECL_TAG: u32 = 17;
    /// `BTF_KIND_TYPE_TAG`.
    pub const TYPE_TAG: u32 = 18;
    /// `BTF_KIND_ENUM64`.
    pub const ENUM64: u32 = 19;
}

/// The BTF that holds a function's type (vmlinux's or its module's). Ids
/// are in section order, as the kernel numbers them: record `id + 1`
/// follows record `id` ([`int_data`] reads past a record as C does).
pub trait Btf {
    /// `btf_type_by_id()`: the record of type `id` (see the module
    /// documentation), `None` past the last id. Id 0 is `void`: a record
    /// of three zero words.
    fn type_record(&self, id: u32) -> Option<&[u32]>;

    /// `btf_name_by_offset()`: the name at `offset` of the string section,
    /// without its NUL (empty for offset 0); `None` past the end.
    fn name(&self, offset: u32) -> Option<&[u8]>;
}

/// A function's BTF: where it is, and the id of its `FUNC_PROTO`.
#[derive(Clone, Copy)]
pub struct Func<'a> {
    /// The BTF that holds it.
    pub btf: &'a dyn Btf,
    /// Its `BTF_KIND_FUNC_PROTO` (the `type` of its `BTF_KIND_FUNC`).
    pub proto: u32,
}

/// A struct's BTF: where it is, and its type id.
#[derive(Clone, Copy)]
pub struct Struct<'a> {
    /// The BTF that holds it.
    pub btf: &'a dyn Btf,
    /// Its `BTF_KIND_STRUCT`.
    pub id: u32,
}

/// `BTF_INFO_KIND(info)`.
pub const fn info_kind(info: u32) -> u32 {
    (info >> 24) & 0x1f
}

/// `BTF_INFO_VLEN(info)`.
pub const fn info_vlen(info: u32) -> u32 {
    info & 0xffff
}

/// `BTF_INFO_KFLAG(info)`.
pub const fn info_kflag(info: u32) -> bool {
    info >> 31 != 0
}

/// Words a record of `info` takes, its three head words included
/// (`btf_type_size()`); `None` for an unknown kind.
pub const fn record_words(info: u32) -> Option<usize> {
    let vlen = info_vlen(info) as usize;
    let extra = match info_kind(info) {
        0
        | kind::PTR
        | kind::FWD
        | kind::TYPEDEF
        | kind::VOLATILE
        | kind::CONST
        | kind::RESTRICT
        | kind::FUNC
        | kind::FLOAT
        | kind::TYPE_TAG => 0,
        kind::INT | kind::VAR | kind::DECL_TAG => 1,
        kind::ARRAY => 3,
        kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 3 * vlen,
        kind::ENUM | kind::FUNC_PROTO => 2 * vlen,
        _ => return None,
    };
    Some(3 + extra)
}

/// `BTF_INT_ENCODING(data)`.
pub const fn int_encoding(data: u32) -> u32 {
    (data & 0x0f00_0000) >> 24
}

/// `BTF_INT_OFFSET(data)`.
pub const fn int_offset(data: u32) -> u32 {
    (data & 0x00ff_0000) >> 16
}

/// `BTF_INT_BITS(data)`.
pub const fn int_bits(data: u32) -> u32 {
    data & 0xff
}

/// `BTF_INT_SIGNED`.
pub const INT_SIGNED: u32 = 1;

/// `BTF_MEMBER_BIT_OFFSET(offset)`, of a member of a `kflag` struct.
pub const fn member_bit_offset(offset: u32) -> u32 {
    offset & 0x00ff_ffff
}

/// `BTF_MEMBER_BITFIELD_SIZE(offset)`, of a member of a `kflag` struct.
pub const fn member_bitfield_size(offset: u32) -> u32 {
    offset >> 24
}

/// The kind of a record (`BTF_INFO_KIND(t->info)`).
pub fn kind_of(record: &[u32]) -> u32 {
    info_kind(record.get(1).copied().unwrap_or(0))
}

/// The `size`/`type` word of a record (`t->size`, `t->type`: one union).
pub fn size_or_type(record: &[u32]) -> u32 {
    record.get(2).copied().unwrap_or(0)
}

/// `btf_type_is_struct()`: a struct or a union.
pub fn is_struct(record: &[u32]) -> bool {
    matches!(kind_of(record), kind::STRUCT | kind::UNION)
}

/// `btf_type_is_modifier()` (kernel/bpf/btf.c): a type that
/// refers to another through `type` and has no size of its own.
fn is_modifier(record: &[u32]) -> bool {
    matches!(
        kind_of(record),
        kind::TYPEDEF | kind::VOLATILE | kind::CONST | kind::RESTRICT | kind::TYPE_TAG
    )
}

/// Most modifiers followed in a row. Verified BTF has no cycles (C loops
/// without a bound); a bound keeps a malformed table from hanging the
/// parser.
const MAX_MODIFIERS: usize = 64;

/// `btf_type_skip_modifiers()` (kernel/bpf/btf.c): type `id`
/// after its typedefs, `const`, `volatile`, `restrict` and type tags, with
/// its id; `None` where C gets `NULL` (an id past the table).
pub fn skip_modifiers(btf: &dyn Btf, mut id: u32) -> Option<(u32, &[u32])> {
    let mut record = btf.type_record(id)?;
    for _ in 0..MAX_MODIFIERS {
        if !is_modifier(record) {
            return Some((id, record));
        }
        id = size_or_type(record);
        record = btf.type_record(id)?;
    }
    None
}

/// `btf_type_int(t)` (trace_probe.c): the word after the head of
/// type `id`'s record. C reads it whatever the kind (an `INT`'s data, a
/// struct's first member name, or, for a record without extra words, the
/// first word of the next record, records being contiguous); here the same
/// word, or 0 past the last record or after `void` (C's static
/// `btf_void`, whose neighbour is not BTF).
pub fn int_data(btf: &dyn Btf, id: u32, record: &[u32]) -> u32 {
    if let Some(&w) = record.get(3) {
        return w;
    }
    if id == 0 {
        return 0;
    }
    id.checked_add(1)
        .and_then(|next| btf.type_record(next))
        .and_then(|r| r.first().copied())
        .unwrap_or(0)
}

/// One parameter of a function (`struct btf_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Offset of its name.
    pub name_off: u32,
    /// Its type.
    pub ty: u32,
}

impl<'a> Func<'a> {
    fn proto_record(&self) -> &'a [u32] {
        self.btf.type_record(self.proto).unwrap_or(&[])
    }

    /// `btf_get_func_param()` as `query_btf_context()` uses it
    /// (trace_probe.c): the number of parameters, 0 without any
    /// (or if the type is not a `FUNC_PROTO`).
    pub fn nr_params(&self) -> usize {
        let record = self.proto_record();
        if kind_of(record) != kind::FUNC_PROTO {
            return 0;
        }
        let vlen = info_vlen(record.get(1).copied().unwrap_or(0)) as usize;
        // The record holds them: a shorter one has fewer.
        vlen.min(record.len().saturating_sub(3) / 2)
    }

    /// Parameter `i` (0-based), if there is one.
    pub fn param(&self, i: usize) -> Option<Param> {
        if i >= self.nr_params() {
            return None;
        }
        let words = self.proto_record().get(3 + 2 * i..5 + 2 * i)?;
        Some(Param {
            name_off: words[0],
            ty: words[1],
        })
    }

    /// The return type (`proto->type`), 0 for `void`.
    pub fn return_type(&self) -> u32 {
        size_or_type(self.proto_record())
    }
}

/// A member [`find_struct_member`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its type.
    pub ty: u32,
    /// Its `offset` word: a bit offset, or with [`Member::kflag`] the bit
    /// offset and the bitfield size ([`member_bit_offset`],
    /// [`member_bitfield_size`]).
    pub offset: u32,
    /// Whether the struct or union holding it has `kflag` set.
    pub kflag: bool,
    /// Bit offset of the anonymous struct or union holding it, 0 if it is
    /// a direct member (`*anon_offset`).
    pub anon_offset: u32,
}

/// What [`find_struct_member`] answers for a type that is not a struct or
/// union (C's `-EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotStruct;

/// `BTF_ANON_STACK_MAX`: the anonymous members kept to look into.
const ANON_STACK_MAX: usize = 16;

/// `__btf_member_bit_offset()`: the bit offset of a member of `record`.
fn bit_offset_in(record: &[u32], offset: u32) -> u32 {
    if info_kflag(record.get(1).copied().unwrap_or(0)) {
        member_bit_offset(offset)
    } else {
        offset
    }
}

/// The members of a struct or union record: `(name_off, type, offset)`.
fn members(record: &[u32]) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
    let vlen = info_vlen(record.get(1).copied().unwrap_or(0)) as usize;
    record
        .get(3..)
        .unwrap_or(&[])
        .chunks_exact(3)
        .take(vlen)
        .map(|m| (m[0], m[1], m[2]))
}

/// `btf_find_struct_member()` (trace_btf.c): member `name` of the
/// struct or union `record`, looking into its anonymous structs and unions
/// (up to 16 pending at a time, the last pushed searched first, as C does).
/// [`NotStruct`] where C answers `-EINVAL` (`record` is not a struct or union),
/// `Ok(None)` if no member has that name.
pub fn find_struct_member(
    btf: &dyn Btf,
    record: &[u32],
    name: &[u8],
) -> Result<Option<Member>, NotStruct> {
    if !is_struct(record) {
        return Err(NotStruct);
    }
    let mut stack = [(0u32, 0u32); ANON_STACK_MAX];
    let mut top = 0;
    let mut ty = record;
    let mut cur_offset = 0u32;
    loop {
        for (name_off, member_ty, offset) in members(ty) {
            if name_off == 0 {
                // An anonymous struct or union: kept for later.
                if let Some((tid, m)) = skip_modifiers(btf, member_ty) {
                    if is_struct(m) && top < ANON_STACK_MAX {
                        stack[top] = (tid, cur_offset.wrapping_add(bit_offset_in(ty, offset)));
                        top += 1;
                    }
                }
            } else if btf.name(name_off) == Some(name) {
                return Ok(Some(Member {
                    ty: member_ty,
                    offset,
                    kflag: info_kflag(ty.get(1).copied().unwrap_or(0)),
                    anon_offset: cur_offset,
                }));
            }
        }
        if top == 0 {
            return Ok(None);
        }
        top -= 1;
        let (tid, offset) = stack[top];
        cur_offset = offset;
        // Found above as a struct or union.
        ty = btf.type_record(tid).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests;

// SPDX-License-Identifier: GPL-2.0-only

//! The table of argument types (`probe_fetch_types[]` in trace_probe.c).
//!
//! One row per type name a user can write after `:`. A row is identified
//! by its index ([`TypeId`]): C compares `struct fetch_type` pointers when it
//! checks whether a probe can join a multi-probe event, so `x32` and `u32`
//! differ while `b4@4/32` is `u32`.

/// How a value of the type is printed in the `trace` text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Print {
    /// `%u` / `%Lu`.
    Unsigned,
    /// `%d` / `%Ld`.
    Signed,
    /// `0x%x` / `0x%Lx`.
    Hex,
    /// `'%c'`.
    Char,
    /// `%pS`: `sym+0xoff/0xsize`.
    Symbol,
    /// `"%s"`, or `(fault)` when the stored length is 0.
    String,
}

/// One row of the type table.
#[derive(Debug)]
pub struct FetchType {
    /// The name a user writes.
    pub name: &'static str,
    /// Bytes in the fixed part of the record (a `__data_loc` for strings).
    pub size: u8,
    /// Whether the `format` file says `signed:1`.
    pub is_signed: bool,
    /// A string type (`string`, `ustring`, `symstr`).
    pub is_string: bool,
    /// The field type in the `format` file.
    pub fmttype: &'static str,
    /// The conversion in the `print fmt` line (escaped as C writes it).
    pub fmt: &'static str,
    /// How the text output prints it.
    pub print: Print,
}

/// Index of a row of [`TYPES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeId(u8);

const fn t(
    name: &'static str,
    size: u8,
    is_signed: bool,
    fmttype: &'static str,
    fmt: &'static str,
    print: Print,
) -> FetchType {
    FetchType {
        name,
        size,
        is_signed,
        is_string: matches!(print, Print::String),
        fmttype,
        fmt,
        print,
    }
}

const STRING_FMT: &str = "\\\"%s\\\"";

/// The table, in C order.
pub static TYPES: [FetchType; 17] = [
    t(
        "string",
        4,
        true,
        "__data_loc char[]",
        STRING_FMT,
        Print::String,
    ),
    t(
        "ustring",
        4,
        true,
        "__data_loc char[]",
        STRING_FMT,
        Print::String,
    ),
    t(
        "symstr",
        4,
        true,
        "__data_loc char[]",
        STRING_FMT,
        Print::String,
    ),
    t("u8", 1, false, "u8", "%u", Print::Unsigned),
    t("u16", 2, false, "u16", "%u", Print::Unsigned),
    t("u32", 4, false, "u32", "%u", Print::Unsigned),
    t("u64", 8, false, "u64", "%Lu", Print::Unsigned),
    t("s8", 1, true, "s8", "%d", Print::Signed),
    t("s16", 2, true, "s16", "%d", Print::Signed),
    t("s32", 4, true, "s32", "%d", Print::Signed),
    t("s64", 8, true, "s64", "%Ld", Print::Signed),
    t("x8", 1, false, "u8", "0x%x", Print::Hex),
    t("x16", 2, false, "u16", "0x%x", Print::Hex),
    t("x32", 4, false, "u32", "0x%x", Print::Hex),
    t("x64", 8, false, "u64", "0x%Lx", Print::Hex),
    t("char", 1, false, "u8", "'%c'", Print::Char),
    t("symbol", 8, false, "u64", "%pS", Print::Symbol),
];

/// The type of an argument written without `:TYPE` (`DEFAULT_FETCH_TYPE`,
/// `x64` on 64-bit).
pub const DEFAULT: TypeId = TypeId(14);
/// `string`.
pub const STRING: TypeId = TypeId(0);
/// `ustring`.
pub const USTRING: TypeId = TypeId(1);
/// `symstr`.
pub const SYMSTR: TypeId = TypeId(2);

impl TypeId {
    /// The row.
    pub fn get(self) -> &'static FetchType {
        // INVARIANT: a `TypeId` is only made from an index of `TYPES`.
        // (A bounds check, not a `%`: this is on the hit path.)
        TYPES.get(usize::from(self.0)).unwrap_or(&TYPES[0])
    }

    /// Looks a type name up as `find_fetch_type()` does (trace_probe.c):
    /// a name starting with `b` is a bitfield whose container size follows
    /// the `/` (the rest is checked later); `None` is `BAD_TYPE`.
    pub fn find(name: &[u8]) -> Option<TypeId> {
        if name.first() == Some(&b'b') {
            let slash = name.iter().position(|&c| c == b'/')?;
            let bits = super::num::kstrtoul(&name[slash + 1..], 0).ok()?;
            let unsigned: &[u8] = match bits {
                8 => b"u8",
                16 => b"u16",
                32 => b"u32",
                64 => b"u64",
                _ => return None,
            };
            return Self::find(unsigned);
        }
        TYPES
            .iter()
            .position(|t| t.name.as_bytes() == name)
            .and_then(|i| u8::try_from(i).ok())
            .map(TypeId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup() {
        assert_eq!(TypeId::find(b"x64"), Some(DEFAULT));
        assert_eq!(TypeId::find(b"string"), Some(STRING));
        assert_eq!(TypeId::find(b"b4@4/32"), TypeId::find(b"u32"));
        assert_eq!(TypeId::find(b"bogus/8"), TypeId::find(b"u8"));
        assert_eq!(TypeId::find(b"b4@4/33"), None);
        assert_eq!(TypeId::find(b"u128"), None);
        assert_ne!(TypeId::find(b"x32"), TypeId::find(b"u32"));
        assert_eq!(DEFAULT.get().name, "x64");
        assert_eq!(SYMSTR.get().name, "symstr");
        assert_eq!(USTRING.get().name, "ustring");
    }
}

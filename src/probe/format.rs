// SPDX-License-Identifier: GPL-2.0-only

//! What a probe looks like from user space before it fires: its line in
//! `kprobe_events`, the fields and `print fmt` of its `format` file.
//!
//! - [`readback`]: `trace_kprobe_show()` (trace_kprobe.c).
//! - [`fields`]: `kprobe_event_define_fields()` /
//!   `kretprobe_event_define_fields()` (trace_kprobe.c) and
//!   `traceprobe_define_arg_fields()` (trace_probe.c).
//! - [`print_fmt`]: `__set_print_fmt()` (trace_probe.c).
//! - [`format_fields`]: the field lines of the `format` file as `f_show()`
//!   prints them (trace_events.c), common fields excluded.

use core::fmt::{self, Write};

use super::arg::Arg;
use super::command::{Names, Place, Probe};
use super::insn::Store;
use super::text::Bytes;

/// Size of the `trace_entry` every record starts with.
pub const TRACE_ENTRY_SIZE: usize = 8;
/// Offset of the head's first word: `ip` of a kprobe event
/// (`kprobe_trace_entry_head`), `func` of a kretprobe event.
pub const HEAD_IP: usize = TRACE_ENTRY_SIZE;
/// Offset of a kretprobe event's `ret_ip` (`kretprobe_trace_entry_head`).
pub const HEAD_RET_IP: usize = HEAD_IP + 8;
/// Size of the record head of a kprobe event (`trace_entry` + `ip`).
pub const KPROBE_HEAD: usize = HEAD_IP + 8;
/// Size of the record head of a kretprobe event (`trace_entry` + `func` +
/// `ret_ip`).
pub const KRETPROBE_HEAD: usize = HEAD_RET_IP + 8;

/// The head size of a probe's records.
pub fn head_size(is_return: bool) -> usize {
    if is_return {
        KRETPROBE_HEAD
    } else {
        KPROBE_HEAD
    }
}

/// One field of the event, as given to `trace_define_field()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// C type (`u64`, `__data_loc char[]`, `u8[4]`, ...). An array type is
    /// the element type and `count`.
    pub ty: &'a str,
    /// Array length, 0 for a scalar.
    pub count: u32,
    /// Name.
    pub name: &'a [u8],
    /// Offset from the start of the record (the `trace_entry` included).
    pub offset: usize,
    /// Size in bytes (all elements).
    pub size: usize,
    /// Signedness.
    pub is_signed: bool,
}

impl fmt::Display for Field<'_> {
    /// The `format` file line: `\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;`.
    /// An array prints as `u8 name[]`: C registers the type as `u8[4]`
    /// with no length, and `f_show()` moves the brackets after the name
    /// without the count.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // f_show() (trace_events.c) keeps a `__data_loc` type
        // whole: an array of strings is `__data_loc char[][3] name`.
        let (suffix, brackets) = match (self.count, self.ty.starts_with("__data_loc")) {
            (0, _) => (None, ""),
            (n, true) => (Some(n), ""),
            (_, false) => (None, "[]"),
        };
        write!(f, "\tfield:{}", self.ty)?;
        if let Some(n) = suffix {
            write!(f, "[{n}]")?;
        }
        write!(
            f,
            " {}{};\toffset:{};\tsize:{};\tsigned:{};",
            Bytes(self.name),
            brackets,
            self.offset,
            self.size,
            u8::from(self.is_signed)
        )
    }
}

/// The fields a probe's event defines after the common ones, in order.
pub fn fields<'a, S: Store>(
    is_return: bool,
    args: &'a [Arg<S>],
) -> impl Iterator<Item = Field<'a>> + 'a {
    let head: &[Field<'static>] = if is_return {
        &[
            Field {
                ty: "unsigned long",
                count: 0,
                name: b"__probe_func",
                offset: HEAD_IP,
                size: 8,
                is_signed: false,
            },
            Field {
                ty: "unsigned long",
                count: 0,
                name: b"__probe_ret_ip",
                offset: HEAD_RET_IP,
                size: 8,
                is_signed: false,
            },
        ]
    } else {
        &[Field {
            ty: "unsigned long",
            count: 0,
            name: b"__probe_ip",
            offset: HEAD_IP,
            size: 8,
            is_signed: false,
        }]
    };
    let base = head_size(is_return);
    head.iter().copied().chain(args.iter().map(move |a| {
        let t = a.ty.get();
        Field {
            ty: t.fmttype,
            count: a.count,
            name: a.name(),
            offset: base + a.offset as usize,
            size: a.size(),
            is_signed: t.is_signed,
        }
    }))
}

/// Writes the field lines of the `format` file (each with its newline).
pub fn format_fields<S: Store>(w: &mut dyn Write, is_return: bool, args: &[Arg<S>]) -> fmt::Result {
    for f in fields(is_return, args) {
        writeln!(w, "{f}")?;
    }
    Ok(())
}

/// Writes the `print fmt` value (what follows `print fmt: `).
pub fn print_fmt<S: Store>(w: &mut dyn Write, is_return: bool, args: &[Arg<S>]) -> fmt::Result {
    w.write_str(if is_return {
        "\"(%lx <- %lx)"
    } else {
        "\"(%lx)"
    })?;
    for a in args {
        let t = a.ty.get();
        write!(w, " {}=", Bytes(a.name()))?;
        if a.count != 0 {
            w.write_str("{")?;
            for j in 0..a.count {
                if j != 0 {
                    w.write_str(",")?;
                }
                w.write_str(t.fmt)?;
            }
            w.write_str("}")?;
        } else {
            w.write_str(t.fmt)?;
        }
    }
    w.write_str(if is_return {
        "\", REC->__probe_func, REC->__probe_ret_ip"
    } else {
        "\", REC->__probe_ip"
    })?;
    for a in args {
        let name = Bytes(a.name());
        let string = a.ty.get().is_string;
        if a.count != 0 {
            for j in 0..a.count {
                if string {
                    write!(w, ", __get_str({name}[{j}])")?;
                } else {
                    write!(w, ", REC->{name}[{j}]")?;
                }
            }
        } else if string {
            write!(w, ", __get_str({name})")?;
        } else {
            write!(w, ", REC->{name}")?;
        }
    }
    Ok(())
}

/// Writes the probe's line in `kprobe_events` (with its newline), with the
/// group and event `names` (the probe's own, [`Probe::names`], or its
/// event's). `hashed` is what `%p` prints for an address probe's address;
/// `maxactive` what the kretprobe has (`register_kretprobe()` fills in a
/// default, which C shows).
pub fn readback<A: super::command::ArgList, S: super::text::Text, E, N>(
    w: &mut dyn Write,
    p: &Probe<A, S, E, N>,
    names: Names<'_>,
    hashed: u64,
    maxactive: u32,
) -> fmt::Result {
    w.write_char(if p.is_return { 'r' } else { 'p' })?;
    if p.is_return && maxactive != 0 {
        write!(w, "{maxactive}")?;
    }
    write!(w, ":{}/{}", Bytes(names.group), Bytes(names.event))?;
    match p.place {
        Place::Addr(_) => write!(w, " 0x{hashed:016x}")?,
        Place::Symbol { offset: 0 } => write!(w, " {}", Bytes(p.symbol.as_bytes()))?,
        Place::Symbol { offset } => write!(w, " {}+{offset}", Bytes(p.symbol.as_bytes()))?,
    }
    for a in p.args.as_slice() {
        write!(w, " {}={}", Bytes(a.name()), Bytes(a.comm()))?;
    }
    w.write_char('\n')
}

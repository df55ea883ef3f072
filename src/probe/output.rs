// SPDX-License-Identifier: GPL-2.0-only

//! The `trace` text of a record (what follows the context columns).
//!
//! [`print_event`] writes `NAME: (IP) ARGS` as `print_kprobe_event()` and
//! `print_kretprobe_event()` do (trace_kprobe.c): the probed
//! address with its offset, or for a return probe `(RET_IP <- FUNC)` with
//! the function's name only; then each argument as
//! `trace_probe_print_args()` prints it (trace_probe.c) with the
//! per-type print functions (`DEFINE_BASIC_PRINT_TYPE_FUNC()`,
//! `print_type_symbol()` and `print_type_string()` in trace_probe.c).

use core::fmt::{self, Write};

use super::arg::Arg;
use super::insn::Store;
use super::text::Bytes;
use super::types::Print;

/// Symbol names, as the trace output prints them.
pub trait Symbols {
    /// Writes `sym+0xoff/0xsize [mod]` (`sprint_symbol()`, `%pS`) for
    /// `addr` into `out`, or nothing if it is not in a symbol.
    fn with_offset(&self, addr: u64, out: &mut dyn Write) -> fmt::Result;
    /// Writes the symbol name only (`kallsyms_lookup()`), or nothing.
    fn name(&self, addr: u64, out: &mut dyn Write) -> fmt::Result;
}

/// A `Write` that remembers whether anything was written.
struct Probe<'a> {
    w: &'a mut dyn Write,
    wrote: bool,
}

impl Write for Probe<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.wrote |= !s.is_empty();
        self.w.write_str(s)
    }
}

/// `seq_print_ip_sym()` (trace_output.c): `0` for a null address,
/// the symbol, or `0x%08lx` when there is none.
fn print_ip_sym(w: &mut dyn Write, ip: u64, offset: bool, syms: &dyn Symbols) -> fmt::Result {
    if ip == 0 {
        return w.write_char('0');
    }
    let mut p = Probe { w, wrote: false };
    if offset {
        syms.with_offset(ip, &mut p)?;
    } else {
        syms.name(ip, &mut p)?;
    }
    if !p.wrote {
        write!(w, "0x{ip:08x}")?;
    }
    Ok(())
}

fn le(b: &[u8], at: usize, size: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(src) = b.get(at..at + size) {
        w[..size].copy_from_slice(src);
    }
    u64::from_ne_bytes(w)
}

/// Prints one value of `arg`'s type at `at` of `payload` (the record after
/// its head, `head` bytes long).
fn print_value<S: Store>(
    w: &mut dyn Write,
    arg: &Arg<S>,
    payload: &[u8],
    at: usize,
    head: usize,
    syms: &dyn Symbols,
) -> fmt::Result {
    let t = arg.ty.get();
    let size = usize::from(t.size);
    let v = le(payload, at, size);
    match t.print {
        Print::Unsigned => write!(w, "{v}"),
        Print::Signed => {
            let s = match size {
                1 => i64::from(v as u8 as i8),
                2 => i64::from(v as u16 as i16),
                4 => i64::from(v as u32 as i32),
                _ => v as i64,
            };
            write!(w, "{s}")
        }
        Print::Hex => write!(w, "0x{v:x}"),
        Print::Char => {
            // "%c" writes the byte as it is, NUL included.
            let b = [v as u8];
            match core::str::from_utf8(&b) {
                Ok(s) => write!(w, "'{s}'"),
                Err(_) => write!(w, "'{}'", Bytes(&b)),
            }
        }
        Print::Symbol => {
            // "%pS": the symbol, or 0x%lx when there is none.
            let mut p = Probe { w, wrote: false };
            syms.with_offset(v, &mut p)?;
            if !p.wrote {
                write!(w, "0x{v:x}")?;
            }
            Ok(())
        }
        Print::String => {
            let loc = v as u32;
            let len = (loc >> 16) as usize;
            if len == 0 {
                return w.write_str("(fault)");
            }
            let start = ((loc & 0xffff) as usize).saturating_sub(head);
            let bytes = payload.get(start..).unwrap_or(&[]);
            let bytes = &bytes[..bytes.len().min(len)];
            let s = &bytes[..bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len())];
            write!(w, "\"{}\"", Bytes(s))
        }
    }
}

/// Writes the arguments: ` name=value` each, arrays as `{a,b}`.
pub fn print_args<S: Store>(
    w: &mut dyn Write,
    args: &[Arg<S>],
    payload: &[u8],
    head: usize,
    syms: &dyn Symbols,
) -> fmt::Result {
    for a in args {
        write!(w, " {}=", Bytes(a.name()))?;
        let at = a.offset as usize;
        if a.count == 0 {
            print_value(w, a, payload, at, head, syms)?;
            continue;
        }
        w.write_char('{')?;
        let size = usize::from(a.ty.get().size);
        for j in 0..a.count as usize {
            print_value(w, a, payload, at + j * size, head, syms)?;
            w.write_char(if j + 1 == a.count as usize { '}' } else { ',' })?;
        }
    }
    Ok(())
}

/// The head of a record, as the ring buffer holds it after `trace_entry`.
#[derive(Clone, Copy, Debug)]
pub enum Head {
    /// A kprobe: the probed address.
    Kprobe {
        /// `ip`.
        ip: u64,
    },
    /// A kretprobe: the probed function and the return address.
    Kretprobe {
        /// `func`.
        func: u64,
        /// `ret_ip`.
        ret_ip: u64,
    },
}

/// Writes `NAME: (IP) ARGS\n` (or `NAME: (RET_IP <- FUNC) ARGS\n`).
pub fn print_event<S: Store>(
    w: &mut dyn Write,
    name: &[u8],
    head: Head,
    args: &[Arg<S>],
    payload: &[u8],
    syms: &dyn Symbols,
) -> fmt::Result {
    write!(w, "{}: (", Bytes(name))?;
    let head_size = match head {
        Head::Kprobe { ip } => {
            print_ip_sym(w, ip, true, syms)?;
            super::format::KPROBE_HEAD
        }
        Head::Kretprobe { func, ret_ip } => {
            print_ip_sym(w, ret_ip, true, syms)?;
            w.write_str(" <- ")?;
            print_ip_sym(w, func, false, syms)?;
            super::format::KRETPROBE_HEAD
        }
    };
    w.write_char(')')?;
    print_args(w, args, payload, head_size, syms)?;
    w.write_char('\n')
}

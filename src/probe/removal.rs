// SPDX-License-Identifier: GPL-2.0-only

//! Removing probes, and appending a probe to an existing event.
//!
//! - [`Removal`]: `-:[GRP/][EVENT] [PLACE [NAME=ARG]...]` (and `dynamic_events`'
//!   `!p:...` form), parsed as `dyn_event_release()` does
//!   (trace_dynevent.c:72-126) and matched against probes as
//!   `trace_kprobe_match()` does (trace_kprobe.c:147-178), trailing
//!   place and arguments included.
//! - [`check_append`]: the checks `register_trace_kprobe()` and
//!   `append_trace_kprobe()` make before a probe joins an event that
//!   exists (trace_kprobe.c:594-661).

use core::fmt::Write;

use super::arg::Arg;
use super::command::{ArgList, Names, Place, Probe, Tokens};
use super::dialect::Dialect;
use super::error::{errno, Code, ParseError};
use super::insn::Store;
use super::text::{Bytes, Prefix, Str, Text};

/// A parsed removal command. Borrowed from the line.
#[derive(Clone, Copy, Debug)]
pub struct Removal<'a> {
    /// `GRP` of `-:GRP/...`, if given.
    pub group: Option<&'a [u8]>,
    /// The event name; empty (with a group) matches every event of it.
    pub event: &'a [u8],
    /// The release whose matching this follows.
    pub dialect: Dialect,
}

impl<'a> Removal<'a> {
    /// Parses `line` (its first token starts with `-` or `!`). `tokens`
    /// receives the tokens, for [`Removal::matches`]. `Err(EINVAL)` for a
    /// malformed command.
    pub fn parse(
        line: &'a [u8],
        tokens: &mut Tokens,
        dialect: Dialect,
    ) -> Result<Removal<'a>, i32> {
        tokens.split(line).map_err(|_| errno::E2BIG)?;
        let t0 = tokens.get(line, 0);
        let event = match t0 {
            [b'-', b':', rest @ ..] => rest,
            [b'-', ..] | [] => return Err(errno::EINVAL),
            _ => match t0.iter().position(|&c| c == b':') {
                Some(p) => &t0[p + 1..],
                None => return Err(errno::EINVAL),
            },
        };
        // `t0` borrows from `tokens`; find the same bytes in `line`.
        let start = event.as_ptr() as usize - line.as_ptr() as usize;
        let event = line.get(start..start + event.len()).ok_or(errno::EINVAL)?;
        let (group, event) = match event.iter().position(|&c| c == b'/') {
            Some(p) => (Some(&event[..p]), &event[p + 1..]),
            None => (None, event),
        };
        if group.is_none() && event.is_empty() {
            return Err(errno::EINVAL);
        }
        Ok(Removal {
            group,
            event,
            dialect,
        })
    }

    /// Whether the probe `p` is one this command removes: same event (any
    /// group unless one was given), and if the command goes on, the same
    /// place and the same leading `NAME=ARG`s. `names` are the probe's
    /// group and event ([`Probe::names`], or its event's); `hashed` is what
    /// `%p` prints for an address probe's address.
    pub fn matches<A: ArgList, S: Text, E, N>(
        &self,
        line: &[u8],
        tokens: &Tokens,
        p: &Probe<A, S, E, N>,
        names: Names<'_>,
        hashed: u64,
    ) -> bool {
        self.matches_words(tokens.iter(line).skip(1), p, names, hashed)
    }

    /// As [`Removal::matches`], given the words after the command's first
    /// (`argv + 1` of `dyn_event_release()`).
    pub fn matches_words<'w, A: ArgList, S: Text, E, N>(
        &self,
        mut words: impl Iterator<Item = &'w [u8]>,
        p: &Probe<A, S, E, N>,
        names: Names<'_>,
        hashed: u64,
    ) -> bool {
        if !self.event.is_empty() && self.event != names.event {
            return false;
        }
        if self.group.is_some_and(|g| g != names.group) {
            return false;
        }
        let Some(head) = words.next() else {
            return true;
        };
        if !self.place_matches(p, hashed, head) {
            return false;
        }
        match_args(p.args.as_slice(), words)
    }

    /// `trace_kprobe_match_command_head()`: whether `head` is the place of
    /// `p`. 6.12 prints the place into a 64-byte buffer and so compares
    /// its first 63 bytes (trace_kprobe.c:147-166); 7.3 compares the
    /// symbol and the offset whole (:149-176).
    fn place_matches<A, S: Text, E, N>(
        &self,
        p: &Probe<A, S, E, N>,
        hashed: u64,
        head: &[u8],
    ) -> bool {
        let symbol = p.symbol.as_bytes();
        if self.dialect.removal_matches_whole_place() {
            let mut number = Str::<32>::new();
            let rest = match p.place {
                Place::Addr(_) => {
                    let _ = write!(number, "0x{hashed:016x}");
                    return head == number.as_bytes();
                }
                Place::Symbol { offset: 0 } => return head == symbol,
                Place::Symbol { offset } => {
                    let _ = write!(number, "{offset}");
                    match head.strip_prefix(symbol) {
                        Some([b'+', rest @ ..]) => rest,
                        _ => return false,
                    }
                }
            };
            return rest == number.as_bytes();
        }
        let mut place = Str::<63>::new();
        let mut w = Prefix(&mut place);
        let _ = match p.place {
            Place::Addr(_) => write!(w, "0x{hashed:016x}"),
            Place::Symbol { offset: 0 } => write!(w, "{}", Bytes(symbol)),
            Place::Symbol { offset } => write!(w, "{}+{offset}", Bytes(symbol)),
        };
        place.as_bytes() == head
    }
}

/// `trace_probe_match_command_args()` (trace_probe.c:2262-2279).
fn match_args<'a, S: Store>(args: &[Arg<S>], given: impl Iterator<Item = &'a [u8]>) -> bool {
    let mut n = 0;
    for (i, g) in given.enumerate() {
        let Some(a) = args.get(i) else {
            return false;
        };
        let name = a.name();
        if !g.starts_with(name)
            || g.get(name.len()) != Some(&b'=')
            || &g[name.len() + 1..] != a.comm()
        {
            return false;
        }
        n += 1;
    }
    n <= args.len()
}

/// `trace_probe_compare_arg_type()` (trace_probe.c:2241-2260): 0 when the
/// arguments have the same names, types and array sizes, else the 1-based
/// index of the first that differs.
pub fn compare_arg_type<S: Store, T: Store>(a: &[Arg<S>], b: &[Arg<T>]) -> usize {
    if a.len() != b.len() {
        return a.len().min(b.len()) + 1;
    }
    a.iter()
        .zip(b)
        .position(|(x, y)| x.ty != y.ty || x.count != y.count || x.name() != y.name())
        .map_or(0, |i| i + 1)
}

/// The probe's symbol as `trace_kprobe_symbol()` names it, and its offset.
fn place_key<A, S: Text, E, N>(p: &Probe<A, S, E, N>) -> (&[u8], u32) {
    match p.place {
        Place::Symbol { offset } => (p.symbol.as_bytes(), offset),
        Place::Addr(_) => (b"unknown", 0),
    }
}

/// Whether `new` may join the event whose probes are `siblings` (the
/// first is the one C compares the argument layout with). Errors are
/// logged as C logs them, with `EEXIST`.
pub fn check_append<'s, A: ArgList, S: Text, E, N, B: ArgList + 's, T: Text + 's, F: 's, M: 's>(
    new: &Probe<A, S, E, N>,
    mut siblings: impl Iterator<Item = &'s Probe<B, T, F, M>> + Clone,
) -> Result<(), ParseError> {
    let Some(first) = siblings.clone().next() else {
        return Ok(());
    };
    if first.is_return != new.is_return {
        return Err(ParseError::logged(errno::EEXIST, Code::DiffProbeType, 0, 0));
    }
    let diff = compare_arg_type(new.args.as_slice(), first.args.as_slice());
    if diff != 0 {
        // Arguments start at token 2.
        return Err(ParseError::logged(
            errno::EEXIST,
            Code::DiffArgType,
            diff + 1,
            0,
        ));
    }
    let same = siblings.any(|s| {
        place_key(s) == place_key(new)
            && s.args
                .as_slice()
                .iter()
                .zip(new.args.as_slice())
                .all(|(x, y)| x.comm() == y.comm())
    });
    if same {
        return Err(ParseError::logged(errno::EEXIST, Code::SameProbe, 0, 0));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::parse;
    use crate::probe::error::caret_position;
    use std::boxed::Box;

    fn removes(cmd: &str, spec: &str) -> Result<bool, i32> {
        removes_in(Dialect::Linux6_12, cmd, spec)
    }

    fn removes_in(d: Dialect, cmd: &str, spec: &str) -> Result<bool, i32> {
        let p = parse(spec).unwrap().unwrap();
        let mut t = Box::new(Tokens::new());
        let r = Removal::parse(cmd.as_bytes(), &mut t, d)?;
        Ok(r.matches(cmd.as_bytes(), &t, &p, p.names(), 0x1234))
    }

    /// A place of 64 bytes or more: 6.12 matches its first 63 bytes, 7.3
    /// all of it.
    #[test]
    fn long_place() {
        let module = "m".repeat(60);
        let spec = std::format!("p:x {module}:sym+8");
        let whole = std::format!("-:x {module}:sym+8");
        let cut = std::format!("-:x {module}:sy");
        for d in Dialect::ALL {
            assert_eq!(
                removes_in(d, "-:x 0x0000000000001234", "p:x 0xffff0000"),
                Ok(true)
            );
            assert_eq!(removes_in(d, "-:x vfs_read+8", "p:x vfs_read+8"), Ok(true));
            assert_eq!(
                removes_in(d, "-:x vfs_read+08", "p:x vfs_read+8"),
                Ok(false)
            );
            assert_eq!(removes_in(d, "-:x vfs_read", "p:x vfs_read+8"), Ok(false));
            assert_eq!(removes_in(d, "-:x vfs_rea+8", "p:x vfs_read+8"), Ok(false));
        }
        assert_eq!(removes_in(Dialect::Linux6_12, &cut, &spec), Ok(true));
        assert_eq!(removes_in(Dialect::Linux6_12, &whole, &spec), Ok(false));
        assert_eq!(removes_in(Dialect::Linux7_3, &whole, &spec), Ok(true));
        assert_eq!(removes_in(Dialect::Linux7_3, &cut, &spec), Ok(false));
    }

    #[test]
    fn removal_matching() {
        let spec = "p:kprobes/testevent kernel_clone a=%ax b=+0(%di):u8";
        assert_eq!(removes("-:testevent", spec), Ok(true));
        assert_eq!(removes("-:kprobes/testevent", spec), Ok(true));
        assert_eq!(removes("-:kprobes/", spec), Ok(true));
        assert_eq!(removes("-:other/testevent", spec), Ok(false));
        assert_eq!(removes("-:other/", spec), Ok(false));
        assert_eq!(removes("-:testevent kernel_clone", spec), Ok(true));
        assert_eq!(removes("-:testevent vfs_read", spec), Ok(false));
        assert_eq!(removes("-:testevent kernel_clone a=%ax", spec), Ok(true));
        assert_eq!(
            removes("-:testevent kernel_clone a=%ax b=+0(%di):u8", spec),
            Ok(true)
        );
        assert_eq!(removes("-:testevent kernel_clone a=%bx", spec), Ok(false));
        assert_eq!(
            removes("-:testevent kernel_clone a=%ax b=+0(%di):u8 c=1", spec),
            Ok(false)
        );
        assert_eq!(removes("!p:testevent", spec), Ok(true));
        assert_eq!(removes("-:testevent kernel_clone+0", spec), Ok(false));
        assert_eq!(removes("-:x vfs_read+8", "p:x vfs_read+8"), Ok(true));
        assert_eq!(
            removes("-:x 0x0000000000001234", "p:x 0xffff0000"),
            Ok(true)
        );
        assert_eq!(removes("-:", spec), Err(errno::EINVAL));
        assert_eq!(removes("-testevent", spec), Err(errno::EINVAL));
        assert_eq!(removes("!p", spec), Err(errno::EINVAL));
    }

    fn append(old: &[&str], new: &str) -> Result<(), (Code, usize)> {
        let olds: std::vec::Vec<_> = old.iter().map(|s| parse(s).unwrap().unwrap()).collect();
        let p = parse(new).unwrap().unwrap();
        let mut t = Box::new(Tokens::new());
        t.split(new.as_bytes()).unwrap();
        check_append(&p, olds.iter()).map_err(|e| {
            let (code, caret) = e.log.unwrap();
            assert_eq!(e.errno, errno::EEXIST);
            (code, caret_position(t.iter(new.as_bytes()), caret))
        })
    }

    #[test]
    fn multiprobe_checks() {
        // kprobe_syntax_errors.tc, multiprobe part.
        let ev = "p:kprobes/testevent kernel_clone";
        assert_eq!(
            append(&[ev], "r:kprobes/testevent do_exit"),
            Err((Code::DiffProbeType, 0))
        );
        let ev = "p:kprobes/testevent kernel_clone abcd=\\1";
        let at = "p:kprobes/testevent kernel_clone ".len();
        assert_eq!(
            append(&[ev], "p:kprobes/testevent kernel_clone bcd=\\1"),
            Err((Code::DiffArgType, at))
        );
        assert_eq!(
            append(&[ev], "p:kprobes/testevent kernel_clone abcd=\\1:u8"),
            Err((Code::DiffArgType, at))
        );
        assert_eq!(
            append(&[ev], "p:kprobes/testevent kernel_clone abcd=\\\"foo\""),
            Err((Code::DiffArgType, at))
        );
        assert_eq!(append(&[ev], ev), Err((Code::SameProbe, 0)));
        // kprobe_multiprobe.tc: same layout, other places.
        assert_eq!(
            append(&[ev], "p:kprobes/testevent vfs_read abcd=\\1"),
            Ok(())
        );
        assert_eq!(
            append(&[ev], "p:kprobes/testevent kernel_clone abcd=\\2"),
            Ok(())
        );
        // More or fewer arguments: the first missing one.
        // No token at that index: the caret goes past the end.
        let short = "p:kprobes/testevent vfs_read";
        assert_eq!(
            append(&[ev], short),
            Err((Code::DiffArgType, short.len() + 1))
        );
        let long = "p:kprobes/testevent vfs_read abcd=\\1 e=\\2";
        assert_eq!(
            append(&[ev], long),
            Err((Code::DiffArgType, long.len() - 4))
        );
        // Two address probes compare as "unknown"+0: the same probe.
        assert_eq!(
            append(&["p:e 0x1000"], "p:e 0x2000"),
            Err((Code::SameProbe, 0))
        );
    }
}

// SPDX-License-Identifier: GPL-2.0-only

//! Removing probes, and appending a probe to an existing event.
//!
//! - [`Removal`]: `-:[GRP/][EVENT] [PLACE [NAME=ARG]...]` (and `dynamic_events`'
//!   `!p:...` form), parsed as `dyn_event_release()` does
//!   (trace_dynevent.c) and matched against probes as
//!   `trace_kprobe_match()` does (trace_kprobe.c), trailing
//!   place and arguments included.
//! - [`check_append`]: the checks `register_trace_kprobe()` and
//!   `append_trace_kprobe()` make before a probe joins an event that
//!   exists (trace_kprobe.c).

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
    /// its first 63 bytes; 7.3 compares the symbol and the offset whole
    /// (trace_kprobe.c).
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

/// `trace_probe_match_command_args()` (trace_probe.c).
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

/// `trace_probe_compare_arg_type()` (trace_probe.c): 0 when the
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
mod tests;

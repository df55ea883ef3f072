// SPDX-License-Identifier: GPL-2.0-only

//! The kernel release whose C implementation the language answers as.
//!
//! `kprobe_events` must read as the C of the kernel the module runs on, and
//! C's language changed between Linux 6.12 and 7.3 (new fetch arguments,
//! new limits, new error codes). A [`Dialect`] is that release, a parameter
//! of the parse ([`Env::dialect`](super::env::Env::dialect)); this file
//! is the one place that says what differs, each difference a method with
//! the C lines of both trees behind it. The parser asks these methods and
//! never compares releases itself.
//!
//! C: `kernel/trace/trace_probe.[ch]`, `kernel/trace/trace_kprobe.c` of
//! 6.12.117 and of 7.3.4.

use super::error::{errno, Code, Texts, TEXTS_6_12, TEXTS_7_3};
use super::num;

/// A kernel release whose kprobe-event language the parser speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Linux 6.12.
    Linux6_12,
    /// Linux 7.3.
    Linux7_3,
}

impl Dialect {
    /// Both, oldest first.
    pub const ALL: [Dialect; 2] = [Dialect::Linux6_12, Dialect::Linux7_3];

    /// Whether this is 7.3's language (every difference below is 7.3's).
    const fn is_7_3(self) -> bool {
        matches!(self, Dialect::Linux7_3)
    }

    /// `MAX_ARGSTR_LEN`: the longest argument expression (63 in 6.12's
    /// trace_probe.h, 255 in 7.3's).
    pub const fn max_argstr_len(self) -> usize {
        if self.is_7_3() {
            255
        } else {
            63
        }
    }

    /// `TRACEPROBE_MAX_NESTED_LEVEL`: how many `+|-OFF(`, typecasts and
    /// `this_cpu_*(` an argument may nest; the next is `TOO_MANY_NESTED`
    /// (7.3's trace_probe.h, checked in `parse_probe_arg_nested()`). 6.12 had no limit
    /// of its own (only `FETCH_INSN_MAX` and the argument's length).
    pub const fn max_nested(self) -> Option<usize> {
        if self.is_7_3() {
            Some(8)
        } else {
            None
        }
    }

    /// `$current`, the current task (7.3 `parse_probe_var_current()`).
    pub const fn has_current(self) -> bool {
        self.is_7_3()
    }

    /// `this_cpu_ptr(FETCHARG)` and `this_cpu_read(FETCHARG)` (7.3
    /// `parse_this_cpu()` and the dereference unwinding in
    /// `unwind_parse_states()`). In 6.12 such an argument is a BTF variable
    /// name.
    pub const fn has_this_cpu(self) -> bool {
        self.is_7_3()
    }

    /// Whether an argument starting with `(` is a typecast (7.3
    /// `handle_typecast()` in trace_probe.c; without BTF arguments (its stub)
    /// or off function entry and exit (its first test) `NOSUP_BTFARG`,
    /// -EOPNOTSUPP). 6.12 has no typecasts: `BAD_FETCH_ARG`.
    pub const fn has_typecasts(self) -> bool {
        self.is_7_3()
    }

    /// More than `MAX_TRACE_ARGS` arguments: 7.3 logs `TOO_MANY_ARGS` at
    /// the first argument (`trace_kprobe_create_internal()`), 6.12 logs
    /// nothing (`__trace_kprobe_create()`); both answer -E2BIG.
    pub const fn too_many_args(self) -> super::error::ParseError {
        use super::error::ParseError;
        if self.is_7_3() {
            ParseError::logged(errno::E2BIG, Code::TooManyArgs, 2, 0)
        } else {
            ParseError::silent(errno::E2BIG)
        }
    }

    /// The errno of a `$stackN` or `$argN` whose number does not parse
    /// (`BAD_VAR`): 7.3 returns `kstrtoul()`'s, -ERANGE on overflow
    /// (`parse_probe_var_stack()`, `parse_probe_var_arg()`); 6.12 always -EINVAL.
    pub const fn bad_number_errno(self, overflow: bool) -> i32 {
        if self.is_7_3() && overflow {
            errno::ERANGE
        } else {
            errno::EINVAL
        }
    }

    /// Whether `-:EVENT PLACE` compares the whole place (7.3
    /// `trace_kprobe_match_command_head()`); 6.12's formats it into 64 bytes
    /// and compares the first 63.
    pub const fn removal_matches_whole_place(self) -> bool {
        self.is_7_3()
    }

    /// Whether an unqualified symbol that vmlinux has is unique by
    /// vmlinux's count alone (7.3 `number_of_same_symbols()` in
    /// trace_kprobe.c); 6.12's adds the modules'.
    pub const fn vmlinux_count_only(self) -> bool {
        self.is_7_3()
    }

    /// Whether the caret stays at the start of the last field of a BTF
    /// field chain (7.3 `get_bitoffset_of_field()` in trace_probe.c); 6.12
    /// adds `NULL - fieldname` there (`parse_btf_field()`), and the module
    /// takes the end of the name.
    pub const fn keeps_offset_at_last_field(self) -> bool {
        self.is_7_3()
    }

    /// `simple_strtoul()`: the value and the bytes it took. 7.3's
    /// saturates at `ULONG_MAX` on overflow (lib/kstrtox.c
    /// `_parse_integer_limit()`), 6.12's wraps. (Bitfield types and the
    /// number of a `$argN` that BTF arguments expand read it.)
    pub fn simple_strtoul(self, s: &[u8], base: u32) -> (u64, usize) {
        if self.is_7_3() {
            num::simple_strtoul_saturating(s, base)
        } else {
            num::simple_strtoul(s, base)
        }
    }

    /// The `ERRORS` table's texts, indexed by [`Code`]: byte for byte
    /// those of the release's trace_probe.h. The codes 7.3 added are
    /// emitted only through the methods above, so never in 6.12's
    /// language.
    pub const fn texts(self) -> &'static Texts {
        if self.is_7_3() {
            &TEXTS_7_3
        } else {
            &TEXTS_6_12
        }
    }

    /// The message `error_log` shows for `code`.
    pub const fn text(self, code: Code) -> &'static str {
        self.texts()[code as usize]
    }
}

#[cfg(test)]
mod tests;

// SPDX-License-Identifier: GPL-2.0-only

//! The rewrites of a line's arguments before they are parsed, as
//! `__trace_kprobe_create()` runs them (trace_kprobe.c): the
//! `$arg` check, or with BTF arguments the expansion of `$arg*` and
//! `$argN` into parameter names (`traceprobe_expand_meta_args()`), then
//! the `%pd`/`%pD` rewrite (`traceprobe_expand_dentry_args()`), both kept
//! in [`Tokens`].

use core::fmt::Write;

use super::super::arg::{BtfContext, Flags};
use super::super::dialect::Dialect;
use super::super::error::{errno, Code, ParseError};
use super::super::text::{Bytes, Str};
use super::{is_space, Env, PResult, Tokens, MAX_DENTRY_ARGS_LEN};

/// What `argv_has_var_arg()` found among the arguments.
struct VarArgs {
    /// Argument index of `$arg*`, if any (`args_idx`).
    star: Option<usize>,
    /// Token index of the last `$arg...` argument (where C's log index is
    /// left).
    last: usize,
}

/// `argv_has_var_arg()` (trace_probe.c) over the arguments
/// `args`: `None` if none starts with `$arg`.
fn has_var_arg<'t>(args: impl Iterator<Item = &'t [u8]>, flags: Flags) -> PResult<Option<VarArgs>> {
    let mut found = None;
    for (i, t) in args.enumerate() {
        if !t.starts_with(b"$arg") {
            continue;
        }
        let star = found.as_ref().and_then(|v: &VarArgs| v.star);
        if !flags.is_function_entry() && !flags.is_function_return() {
            return Err(ParseError::inval(Code::NofentryArgs, i + 2, 0));
        }
        let star = match t.get(4) {
            Some(c) if c.is_ascii_digit() => star,
            Some(b'*') => {
                if star.is_some() {
                    return Err(ParseError::inval(Code::DoubleArgs, i + 2, 0));
                }
                Some(i)
            }
            _ => return Err(ParseError::inval(Code::BadVar, i + 2, 0)),
        };
        found = Some(VarArgs { star, last: i + 2 });
    }
    Ok(found)
}

/// `argv_has_var_arg()` and the branch of `traceprobe_expand_meta_args()`
/// without BTF (trace_probe.c), as C built without BTF arguments
/// runs them over the first `nargs` arguments.
pub(super) fn scan_var_args(
    line: &[u8],
    tokens: &Tokens,
    nargs: usize,
    flags: Flags,
) -> PResult<()> {
    match has_var_arg((0..nargs).map(|i| tokens.get(line, i + 2)), flags)? {
        // $arg* needs BTF: logged at the last `$arg` token seen.
        Some(VarArgs {
            star: Some(_),
            last,
        }) => Err(ParseError::logged(
            errno::EOPNOTSUPP,
            Code::NosupBtfarg,
            last,
            0,
        )),
        _ => Ok(()),
    }
}

/// `traceprobe_expand_meta_args()` (trace_probe.c), built with
/// BTF arguments: with the function's BTF, `$arg*` becomes the names of
/// all its parameters and `$argN[:TYPE]` the name of the Nth (with the
/// type), in a new argument array ([`Tokens::arg`]); without, `$arg*` is
/// `NOSUP_BTFARG` and `$argN` is left as written.
///
/// # Errors
///
/// Those of `argv_has_var_arg()`; then at the token being expanded
/// `BAD_VAR` (`$argN` followed by neither `:` nor the end), `BAD_ARG_NUM`
/// (`$arg0`), `NO_BTFARG` (no Nth parameter), `NO_BTF_ENTRY` (a name past
/// the string table), `ARGS_2LONG` (the names take more than
/// [`MAX_BTF_ARGS_LEN`] bytes).
pub(super) fn meta_args(
    line: &[u8],
    tokens: &mut Tokens,
    flags: Flags,
    btf: &mut BtfContext<'_>,
    dialect: Dialect,
) -> PResult<()> {
    let Some(var) = has_var_arg(tokens.iter(line).skip(2), flags)? else {
        return Ok(());
    };
    let func = match btf.query() {
        Some(f) if f.nr_params() > 0 => f,
        _ => {
            if var.star.is_some() {
                // $arg* requires BTF info.
                return Err(ParseError::logged(
                    errno::EOPNOTSUPP,
                    Code::NosupBtfarg,
                    var.last,
                    0,
                ));
            }
            return Ok(());
        }
    };
    let nr = func.nr_params();
    // sprint_nth_btf_arg() (trace_probe.c).
    let name_of = |n: usize, index: usize| -> PResult<&[u8]> {
        let param = func
            .param(n)
            .ok_or_else(|| ParseError::logged(errno::ENOENT, Code::NoBtfarg, index, 0))?;
        func.btf
            .name(param.name_off)
            .ok_or_else(|| ParseError::logged(errno::ENOENT, Code::NoBtfEntry, index, 0))
    };
    let too_long = |index| ParseError::logged(errno::E2BIG, Code::Args2long, index, 0);

    let kept = tokens.len();
    let rest_at = tokens.rest;
    let mut rest = line
        .get(rest_at..)
        .unwrap_or(&[])
        .split(|&c| is_space(c))
        .filter(|t| !t.is_empty());
    tokens.begin_expansion();
    for index in 2..tokens.total() {
        let t = if index < kept {
            tokens.original(line, index)
        } else {
            rest.next().unwrap_or(&[])
        };
        if var.star == Some(index - 2) {
            for n in 0..nr {
                let name = name_of(n, index)?;
                tokens.push_name(name, b"").map_err(|()| too_long(index))?;
            }
            continue;
        }
        let Some(digits) = t.strip_prefix(b"$arg") else {
            tokens.push_token(index);
            continue;
        };
        let (value, len) = dialect.simple_strtoul(digits, 10);
        let suffix = &digits[len..];
        if !matches!(suffix.first(), None | Some(b':')) {
            return Err(ParseError::logged(errno::ENOENT, Code::BadVar, index, 0));
        }
        // `n` is an int: simple_strtoul()'s value cut to 32 bits (in 7.3
        // an overflowing number saturates, and is -1).
        let n = value as u32 as i32;
        if n == 0 {
            return Err(ParseError::inval(Code::BadArgNum, index, 0));
        }
        // For N past INT_MAX, C reads before the parameter array (from
        // the prototype and the types before it): a name or NULL, by the
        // layout of the BTF. Taken as NULL: NO_BTF_ENTRY.
        let Ok(idx) = usize::try_from(n.wrapping_sub(1)) else {
            return Err(ParseError::logged(
                errno::ENOENT,
                Code::NoBtfEntry,
                index,
                0,
            ));
        };
        let name = name_of(idx, index)?;
        tokens
            .push_name(name, suffix)
            .map_err(|()| too_long(index))?;
    }
    Ok(())
}

/// `traceprobe_expand_dentry_args()` (trace_probe.c): an
/// argument matching `*:%pd` / `*:%pD` becomes the dereference chain that
/// reads the dentry's (or the file's dentry's) name.
pub(super) fn dentry_args(line: &[u8], tokens: &mut Tokens, env: &dyn Env) -> PResult<()> {
    for i in 0..tokens.arg_count() {
        let t = tokens.arg(line, i);
        let n = t.len();
        if n < 4 || !(t.ends_with(b":%pd") || t.ends_with(b":%pD")) {
            continue;
        }
        let mut out = Str::<MAX_DENTRY_ARGS_LEN>::new();
        let body = &t[..n - 4];
        let (name, expr) = match body.iter().position(|&c| c == b'=') {
            Some(eq) => (Some(&body[..eq]), &body[eq + 1..]),
            None => (None, body),
        };
        if let Some(name) = name {
            out.push(name);
            out.push(b"=");
        }
        let name_off = env.dentry_name_offset();
        let r = if t[n - 1] == b'd' {
            write!(out, "+0x0(+0x{name_off:x}({}))", Bytes(expr))
        } else {
            write!(
                out,
                "+0x0(+0x{name_off:x}(+0x{:x}({})))",
                env.file_dentry_offset(),
                Bytes(expr)
            )
        };
        if r.is_err() || !out.push(b":string") {
            return Err(ParseError::silent(errno::ENOMEM));
        }
        let mut copy = [0u8; MAX_DENTRY_ARGS_LEN];
        let len = out.len();
        copy[..len].copy_from_slice(out.as_bytes());
        tokens
            .rewrite_arg(i, &copy[..len])
            .map_err(|()| ParseError::silent(errno::ENOMEM))?;
    }
    Ok(())
}

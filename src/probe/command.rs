// SPDX-License-Identifier: GPL-2.0-only

//! One line of `kprobe_events`: a probe definition or a removal.
//!
//! [`parse`] follows `__trace_kprobe_create()` (trace_kprobe.c)
//! step by step, up to (not including) registration: the head
//! (`p`/`r[N]`, `:[GRP/][EVENT]`), the place (symbol, offset, `%return`,
//! address), the `$arg` scan (with BTF arguments: the expansion of `$arg*`
//! and `$argN` into parameter names), the 128-argument limit, the
//! `%pd`/`%pD` rewrite and the arguments. What it needs from the running kernel (symbol
//! lookups, function-entry checks, `%p` hashing, struct offsets) it asks an
//! [`Env`]. [`Removal`] parses `-:[GRP/][EVENT] [PLACE [NAME=ARG...]]` and
//! matches probes as `dyn_event_release()` and `trace_kprobe_match()` do.
//!
//! Tokens are split as `argv_split()` does: on whitespace, no quoting. C
//! logs errors against its `argv` joined, with the caret at the token of
//! the current index. The `%pd` rewrite replaces entries of that very
//! array, so the log shows the rewritten text, unless `$arg` expansion made
//! a new array (`traceprobe_expand_meta_args()`): then the log shows the
//! line as written while indices (and so carets) count the expanded
//! arguments, an index past the written ones putting the caret at the end
//! of the line. [`Tokens`] keeps both: [`Tokens::iter`] is the command the
//! log shows, the arguments parsed are the expanded ones; the caller builds
//! the `error_log` command from the former and places the caret with
//! [`caret_position`](super::error::caret_position) as before.

use core::fmt::Write;

use super::arg::{self, Arg, BtfContext, Ctx, EntryArgs, Flags, LastType, MAX_TRACE_ARGS};
use super::env::Env;
use super::error::{errno, Code, ParseError};
use super::insn::Store;
use super::num::{kstrtol, kstrtouint, kstrtoul};
use super::text::{is_good_name, Prefix, Str, Text};

/// Longest group or event name plus one (`MAX_EVENT_NAME_LEN`).
pub const MAX_EVENT_NAME_LEN: usize = 64;
/// Most return-probe instances (`KRETPROBE_MAXACTIVE_MAX`).
pub const KRETPROBE_MAXACTIVE_MAX: u32 = 4096;
/// The default group (`KPROBE_EVENT_SYSTEM`).
pub const DEFAULT_GROUP: &[u8] = b"kprobes";
/// Most whitespace-separated tokens of a line kept. A line with more is
/// counted, and its head and place parsed as C does before it answers
/// `E2BIG` for more than 128 arguments.
pub const MAX_TOKENS: usize = 1024;
/// Room for `%pd`/`%pD` rewrites (`MAX_DENTRY_ARGS_LEN`).
pub const MAX_DENTRY_ARGS_LEN: usize = 256;
/// Room for the parameter names `$arg*` and `$argN` expand to
/// (`MAX_BTF_ARGS_LEN`, the `abuf` of `__trace_kprobe_create()`).
pub const MAX_BTF_ARGS_LEN: usize = 128;

/// A group or event name.
pub type Name = Str<MAX_EVENT_NAME_LEN>;

/// An [`ArgList`] could not grow: out of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoMemory;

/// A line too long for [`Tokens::split`] (64 KiB or longer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTooLong;

/// Growable storage for a probe's arguments: the caller's (a `Vec` on the
/// host, a `KVec` in the kernel).
pub trait ArgList {
    /// How the list keeps each argument's name, text and program.
    type Store: Store;
    /// Appends; `Err` when out of memory.
    fn push(&mut self, arg: Arg) -> Result<(), NoMemory>;
    /// The arguments so far.
    fn as_slice(&self) -> &[Arg<Self::Store>];
}

/// The tokens of one line, with room for rewritten arguments and for the
/// arguments `$arg` expansion makes. In the kernel it is `Zeroable`, so
/// that it is made on the heap (`Zeroable::init_zeroed()`), never on a
/// stack: empty tokens are all zeroes.
#[cfg_attr(CONFIG_KPROBES, derive(kernel::prelude::Zeroable))]
pub struct Tokens {
    len: usize,
    /// All tokens of the line, kept or not.
    total: usize,
    /// `(start, end)` in the line, or with [`REWRITTEN`] set in `end`, in
    /// `extra`.
    spans: [(u16, u16); MAX_TOKENS],
    /// Expanded parameter names (the first [`MAX_BTF_ARGS_LEN`] bytes),
    /// then `%pd` rewrites.
    extra: [u8; MAX_BTF_ARGS_LEN + MAX_DENTRY_ARGS_LEN],
    /// Bytes used of the names' part of `extra`, NULs included.
    names_len: usize,
    /// Bytes used of the rewrites' part of `extra`, NULs included.
    dentry_len: usize,
    /// Where the last kept token ends in the line: the tokens not kept
    /// follow.
    rest: usize,
    /// Whether `$arg` expansion made a new argument array (C's `new_argv`).
    expanded: bool,
    /// The expanded arguments (spans as in `spans`), the first
    /// [`MAX_TRACE_ARGS`] of them.
    args: [(u16, u16); MAX_TRACE_ARGS],
    /// How many arguments the expansion made (C's `new_argc`), kept or not.
    nargs: usize,
}

/// Marks a span of [`Tokens`] as rewritten.
const REWRITTEN: u16 = 0x8000;

impl Tokens {
    /// Empty token storage (about 5 KiB: allocate it, don't keep it on a
    /// kernel stack).
    pub const fn new() -> Self {
        Tokens {
            len: 0,
            total: 0,
            spans: [(0, 0); MAX_TOKENS],
            extra: [0; MAX_BTF_ARGS_LEN + MAX_DENTRY_ARGS_LEN],
            names_len: 0,
            dentry_len: 0,
            rest: 0,
            expanded: false,
            args: [(0, 0); MAX_TRACE_ARGS],
            nargs: 0,
        }
    }

    /// Splits `line` on whitespace (`argv_split()`: `isspace()`, no
    /// quoting), keeping the first [`MAX_TOKENS`] and counting the rest.
    /// `Err` if the line is 64 KiB or longer.
    pub fn split(&mut self, line: &[u8]) -> Result<(), LineTooLong> {
        self.len = 0;
        self.total = 0;
        self.names_len = 0;
        self.dentry_len = 0;
        self.rest = 0;
        self.expanded = false;
        self.nargs = 0;
        if line.len() >= usize::from(REWRITTEN) {
            return Err(LineTooLong);
        }
        let mut i = 0;
        while i < line.len() {
            if is_space(line[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < line.len() && !is_space(line[i]) {
                i += 1;
            }
            self.total += 1;
            if let Some(slot) = self.spans.get_mut(self.len) {
                *slot = (start as u16, i as u16);
                self.len += 1;
                self.rest = i;
            }
        }
        Ok(())
    }

    /// Number of tokens in the line, including those not kept.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the line was blank.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Token `i` of `line` (the line given to [`Tokens::split`]), as the
    /// `error_log` command shows it.
    pub fn get<'a>(&'a self, line: &'a [u8], i: usize) -> &'a [u8] {
        match self.spans[..self.len].get(i) {
            Some(&span) => self.text(line, span),
            None => &[],
        }
    }

    /// The text of `span`.
    fn text<'a>(&'a self, line: &'a [u8], (s, e): (u16, u16)) -> &'a [u8] {
        if e & REWRITTEN != 0 {
            self.extra
                .get(usize::from(s)..usize::from(e & !REWRITTEN))
                .unwrap_or(&[])
        } else {
            line.get(usize::from(s)..usize::from(e)).unwrap_or(&[])
        }
    }

    /// Number of arguments to parse: after `$arg` expansion if there was
    /// one, else the tokens after the place.
    pub fn arg_count(&self) -> usize {
        if self.expanded {
            self.nargs
        } else {
            self.total.saturating_sub(2)
        }
    }

    /// Argument `i` (0-based) as parsed: expanded, rewritten.
    pub fn arg<'a>(&'a self, line: &'a [u8], i: usize) -> &'a [u8] {
        if !self.expanded {
            return self.get(line, i + 2);
        }
        match self.args[..self.nargs.min(MAX_TRACE_ARGS)].get(i) {
            Some(&span) => self.text(line, span),
            None => &[],
        }
    }

    /// All tokens of `line`, those not kept too (split again from the
    /// line): C joins all of `argv` for the `error_log` command and
    /// matches all of them in a removal.
    pub fn iter<'a>(&'a self, line: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
        let rest = line.get(self.rest..).unwrap_or(&[]);
        (0..self.len)
            .map(move |i| self.get(line, i))
            .chain(rest.split(|&c| is_space(c)).filter(|t| !t.is_empty()))
    }

    /// Token `i` as it is in `line`, not as rewritten: the head and the
    /// place, which are never rewritten, borrowed from the line itself.
    fn original<'l>(&self, line: &'l [u8], i: usize) -> &'l [u8] {
        match self.spans[..self.len].get(i) {
            Some(&(s, e)) if e & REWRITTEN == 0 => {
                line.get(usize::from(s)..usize::from(e)).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// Replaces argument `i` with `text`, kept in the rewrite area: in the
    /// expanded array if there is one, else in the line's tokens (which
    /// the log then shows).
    fn rewrite_arg(&mut self, i: usize, text: &[u8]) -> Result<(), ()> {
        let start = MAX_BTF_ARGS_LEN + self.dentry_len;
        let end = start + text.len();
        // snprintf() into the rest of the 256-byte buffer, NUL included.
        if end + 1 > self.extra.len() {
            return Err(());
        }
        let slot = if self.expanded {
            self.args[..self.nargs.min(MAX_TRACE_ARGS)].get_mut(i)
        } else {
            self.spans[..self.len].get_mut(i + 2)
        };
        let Some(slot) = slot else {
            return Err(());
        };
        *slot = (start as u16, end as u16 | REWRITTEN);
        self.extra[start..end].copy_from_slice(text);
        self.dentry_len = end + 1 - MAX_BTF_ARGS_LEN;
        Ok(())
    }

    /// Starts an expanded argument array (C's `new_argv`), empty.
    fn begin_expansion(&mut self) {
        self.expanded = true;
        self.nargs = 0;
        self.names_len = 0;
    }

    /// Appends the line's token `i` to the expanded arguments (a token
    /// past those kept is only counted: there are then more than
    /// [`MAX_TRACE_ARGS`] arguments).
    fn push_token(&mut self, i: usize) {
        let span = self.spans[..self.len].get(i).copied();
        self.push_span(span);
    }

    fn push_span(&mut self, span: Option<(u16, u16)>) {
        if let (Some(span), Some(slot)) = (span, self.args.get_mut(self.nargs)) {
            *slot = span;
        }
        self.nargs += 1;
    }

    /// Appends `name` followed by `suffix` to the expanded arguments, kept
    /// in the names' area as `snprintf()` writes them into the rest of
    /// `abuf`: `Err` if they do not fit with their NUL (`ARGS_2LONG`).
    fn push_name(&mut self, name: &[u8], suffix: &[u8]) -> Result<(), ()> {
        let start = self.names_len;
        let len = name.len() + suffix.len();
        if len >= MAX_BTF_ARGS_LEN - start {
            return Err(());
        }
        let end = start + len;
        self.extra[start..start + name.len()].copy_from_slice(name);
        self.extra[start + name.len()..end].copy_from_slice(suffix);
        self.names_len = end + 1;
        self.push_span(Some((start as u16, end as u16 | REWRITTEN)));
        Ok(())
    }
}

impl Default for Tokens {
    fn default() -> Self {
        Self::new()
    }
}

/// `isspace()` of the kernel's ctype: space, `\t\n\v\f\r`, and 0xa0.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// Where a probe is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `[MOD:]SYM[+offs]` (the symbol is [`Probe::symbol`]).
    Symbol {
        /// Offset from the symbol.
        offset: u32,
    },
    /// A raw address.
    Addr(u64),
}

/// A parsed probe definition, not yet registered. `A` keeps the arguments,
/// `S` the symbol, `E` the entry arguments of a return probe, `N` the group
/// and event names (inline as parsed; a stored probe may keep them out of
/// line, see [`Probe::map`]).
pub struct Probe<A, S, E = EntryArgs, N = Name> {
    /// A return probe (`r`, or `%return`).
    pub is_return: bool,
    /// `rN`: instances to preallocate, 0 for the default.
    pub maxactive: u32,
    /// Group.
    pub group: N,
    /// Event.
    pub event: N,
    /// The symbol (empty for an address probe).
    pub symbol: S,
    /// The place.
    pub place: Place,
    /// Where the arguments may fetch from.
    pub flags: Flags,
    /// The arguments.
    pub args: A,
    /// Function arguments a return probe saves at entry.
    pub entry: E,
    /// Bytes of the fixed part of a record after the head.
    pub size: usize,
}

/// A probe's group and event names, for the functions that print or match
/// a probe whose names are kept elsewhere (a stored probe's are its
/// event's).
#[derive(Clone, Copy)]
pub struct Names<'a> {
    /// Group.
    pub group: &'a [u8],
    /// Event.
    pub event: &'a [u8],
}

impl<A, S, E, N: Text> Probe<A, S, E, N> {
    /// The probe's own names.
    pub fn names(&self) -> Names<'_> {
        Names {
            group: self.group.as_bytes(),
            event: self.event.as_bytes(),
        }
    }
}

/// `MOD:SYM` split into the module and the symbol; a symbol without a
/// module is `(None, symbol)`.
pub fn split_module(symbol: &[u8]) -> (Option<&[u8]>, &[u8]) {
    match symbol.iter().position(|&c| c == b':') {
        Some(p) => (Some(&symbol[..p]), &symbol[p + 1..]),
        None => (None, symbol),
    }
}

impl<A, S: Text, E, N> Probe<A, S, E, N> {
    /// `MOD` of a probe on `MOD:SYM`.
    pub fn module(&self) -> Option<&[u8]> {
        split_module(self.symbol.as_bytes()).0
    }

    /// The same probe with its arguments, symbol, entry arguments and
    /// names kept another way.
    ///
    /// # Errors
    ///
    /// What `args`, `symbol`, `entry` or `name` answer (e.g. no memory).
    pub fn map<B, T, F, M, X>(
        self,
        args: impl FnOnce(A) -> Result<B, X>,
        symbol: impl FnOnce(S) -> Result<T, X>,
        entry: impl FnOnce(E) -> Result<F, X>,
        name: impl Fn(N) -> Result<M, X>,
    ) -> Result<Probe<B, T, F, M>, X> {
        Ok(Probe {
            is_return: self.is_return,
            maxactive: self.maxactive,
            group: name(self.group)?,
            event: name(self.event)?,
            symbol: symbol(self.symbol)?,
            place: self.place,
            flags: self.flags,
            args: args(self.args)?,
            entry: entry(self.entry)?,
            size: self.size,
        })
    }
}

type PResult<T> = core::result::Result<T, ParseError>;

/// A line that is not a kprobe command (`-ECANCELED`, never logged).
const CANCELED: ParseError = ParseError::silent(errno::ECANCELED);

/// Parses a probe definition: `None` for a blank line (nothing to do), else
/// the probe to register. `tokens` receives the line's tokens (as C has
/// them when it logs an error); `args` receives the arguments. The symbol
/// is borrowed from `line`: C keeps a place of any length (a `MOD:SYM` of a
/// module not loaded is not looked up), so there is no bound to copy into.
pub fn parse<'l, A: ArgList>(
    line: &'l [u8],
    tokens: &mut Tokens,
    env: &dyn Env,
    args: A,
) -> PResult<Option<Probe<A, &'l [u8]>>> {
    tokens
        .split(line)
        .map_err(|LineTooLong| ParseError::silent(errno::E2BIG))?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let head = tokens.get(line, 0);
    let is_return = match head.first() {
        Some(b'r') => true,
        Some(b'p') => false,
        _ => return Err(CANCELED),
    };
    if tokens.len() < 2 {
        return Err(CANCELED);
    }
    let mut is_return = is_return;
    // The event part, after the first ':' past the type letter.
    let event_at = head[1..].iter().position(|&c| c == b':').map(|p| p + 2);

    let mut maxactive = 0;
    if head.get(1).is_some_and(u8::is_ascii_digit) {
        if !is_return {
            return Err(ParseError::inval(Code::BadMaxactType, 0, 1));
        }
        let text = &head[1..event_at.map_or(head.len(), |e| e - 1)];
        if text.len() > MAX_EVENT_NAME_LEN - 1 {
            return Err(ParseError::inval(Code::BadMaxact, 0, 1));
        }
        maxactive = match kstrtouint(text, 0) {
            Ok(n) if n != 0 => n,
            _ => return Err(ParseError::inval(Code::BadMaxact, 0, 1)),
        };
        if maxactive > KRETPROBE_MAXACTIVE_MAX {
            return Err(ParseError::inval(Code::MaxactTooBig, 0, 1));
        }
    }

    let place_tok = tokens.original(line, 1);
    let mut symbol: &'l [u8] = &[];
    let mut flags = Flags::default();
    let place = match kstrtoul(place_tok, 0) {
        Ok(addr) => Place::Addr(addr),
        Err(_) => {
            if place_tok.contains(&b'/') && place_tok.contains(&b':') {
                // A uprobe definition.
                return Err(CANCELED);
            }
            let mut sym = place_tok;
            if let Some(pct) = sym.iter().position(|&c| c == b'%') {
                if &sym[pct..] == b"%return" {
                    sym = &sym[..pct];
                    is_return = true;
                } else {
                    return Err(ParseError::inval(Code::BadAddrSuffix, 1, pct));
                }
            }
            let bad_addr = ParseError::inval(Code::BadProbeAddr, 1, 0);
            let mut offset: i64 = 0;
            if let Some(p) = sym.iter().position(|&c| c == b'+' || c == b'-') {
                offset = kstrtol(&sym[p..], 0).map_err(|_| bad_addr)?;
                sym = &sym[..p];
            }
            let offset = u32::try_from(offset).map_err(|_| bad_addr)?;
            symbol = sym;
            match env.validate_symbol(sym) {
                Ok(()) => {}
                Err(errno::EADDRNOTAVAIL) => {
                    return Err(ParseError::inval(Code::NonUniqSymbol, 1, 0))
                }
                Err(errno::ENOMEM) => return Err(ParseError::silent(errno::ENOMEM)),
                Err(_) => return Err(bad_addr),
            }
            if is_return {
                flags.ret = true;
            }
            match env.on_func_entry(sym, u64::from(offset)) {
                Ok(()) if !is_return => flags.fentry = true,
                Err(errno::EINVAL) if is_return => {
                    return Err(ParseError::inval(Code::BadRetprobe, 1, 0));
                }
                _ => {}
            }
            Place::Symbol { offset }
        }
    };

    let mut group = Name::from_bytes(DEFAULT_GROUP).unwrap_or_default();
    let mut event = Name::new();
    if let Some(at) = event_at {
        parse_event_name(&head[at..], at, &mut group, &mut event)?;
    }
    if event.is_empty() {
        auto_name(&mut event, is_return, symbol, place, env);
    }

    let funcname = match place {
        Place::Symbol { .. } => Some(symbol),
        Place::Addr(_) => None,
    };
    let mut btf = BtfContext::new(env, funcname);
    if env.btf_args() {
        expand::meta_args(line, tokens, flags, &mut btf, env.dialect())?;
    } else {
        let nargs = tokens.total() - 2;
        expand::scan_var_args(line, tokens, nargs.min(tokens.len() - 2), flags)?;
    }
    let nargs = tokens.arg_count();
    if nargs > MAX_TRACE_ARGS {
        return Err(env.dialect().too_many_args());
    }
    expand::dentry_args(line, tokens, env)?;

    let mut probe = Probe {
        is_return,
        maxactive,
        group,
        event,
        symbol,
        place,
        flags,
        args,
        entry: EntryArgs::new(),
        size: 0,
    };
    for i in 0..nargs {
        let mut ctx = Ctx {
            flags,
            index: i + 2,
            offset: 0,
            entry: &mut probe.entry,
            max_stack: env.stack_words(),
            arch: env.arch(),
            btf: &mut btf,
            last: LastType::default(),
            dialect: env.dialect(),
            depth: 0,
        };
        let a = arg::parse(
            tokens.arg(line, i),
            i,
            probe.args.as_slice(),
            &mut probe.size,
            &mut ctx,
        )?;
        probe
            .args
            .push(a)
            .map_err(|NoMemory| ParseError::silent(errno::ENOMEM))?;
    }
    Ok(Some(probe))
}

/// `traceprobe_parse_event_name()` (trace_probe.c): `text` is
/// what follows the `:` of token 0, at offset `offset` in it.
fn parse_event_name(
    text: &[u8],
    mut offset: usize,
    group: &mut Name,
    event: &mut Name,
) -> PResult<()> {
    let slash = text
        .iter()
        .position(|&c| c == b'/')
        .or_else(|| text.iter().position(|&c| c == b'.'));
    let mut ev = text;
    if let Some(s) = slash {
        if s == 0 {
            return Err(ParseError::inval(Code::NoGroupName, 0, offset));
        }
        if s + 1 > MAX_EVENT_NAME_LEN {
            return Err(ParseError::inval(Code::GroupTooLong, 0, offset));
        }
        if !is_good_name(&text[..s], true) {
            return Err(ParseError::inval(Code::BadGroupName, 0, offset));
        }
        *group = Name::from_bytes(&text[..s]).unwrap_or_default();
        ev = &text[s + 1..];
        offset += s + 1;
    }
    if ev.is_empty() {
        if slash.is_some() {
            return Ok(());
        }
        return Err(ParseError::inval(Code::NoEventName, 0, offset));
    }
    if ev.len() >= MAX_EVENT_NAME_LEN {
        return Err(ParseError::inval(Code::EventTooLong, 0, offset));
    }
    if !is_good_name(ev, false) {
        return Err(ParseError::inval(Code::BadEventName, 0, offset));
    }
    *event = Name::from_bytes(ev).unwrap_or_default();
    Ok(())
}

/// The name of an event defined without one (`__trace_kprobe_create()`):
/// `p_SYM_OFFS` or `p_0xHASH`, cut to 63 bytes, then `sanitize_event_name()`
/// turns `:`, `.` and `*` after the first byte into `_`.
fn auto_name(event: &mut Name, is_return: bool, symbol: &[u8], place: Place, env: &dyn Env) {
    // Only the first 63 bytes count: written as far as they fit.
    let mut full = Name::new();
    let c = if is_return { 'r' } else { 'p' };
    let _ = match place {
        Place::Symbol { offset } => write!(
            Prefix(&mut full),
            "{c}_{}_{offset}",
            super::text::Bytes(symbol)
        ),
        Place::Addr(addr) => write!(Prefix(&mut full), "{c}_0x{:016x}", env.hash_pointer(addr)),
    };
    let bytes = full.as_bytes();
    let cut = &bytes[..bytes.len().min(MAX_EVENT_NAME_LEN - 1)];
    *event = Name::new();
    for (i, &b) in cut.iter().enumerate() {
        let b = if i > 0 && matches!(b, b':' | b'.' | b'*') {
            b'_'
        } else {
            b
        };
        event.push(&[b]);
    }
}

/// `traceprobe_update_arg()` (trace_probe.c), run when the probe
/// is registered: each `@SYM[+|-offs]` immediate (one that keeps its text,
/// where C has a `FETCH_NOP_SYMBOL` before it) gets its address. `lookup`
/// is `kallsyms_lookup_name()` (0 for an unknown symbol). Errors: `EINVAL`
/// for a bad offset, `ENOENT` for an unknown symbol.
pub fn resolve_symbols(
    args: &mut [Arg],
    lookup: &dyn Fn(&[u8]) -> u64,
) -> core::result::Result<(), i32> {
    use super::insn::Op;
    for a in args.iter_mut() {
        for i in 0..a.store.code.len() {
            if a.store.code[i].op == Op::End {
                break;
            }
            if a.store.code[i].op != Op::Imm || a.store.code[i].param != super::insn::Insn::SYMBOL {
                continue;
            }
            let text = a.insn_text(a.insn(i));
            let (name, offset) = match text.iter().position(|&c| c == b'+' || c == b'-') {
                Some(p) => (
                    &text[..p],
                    kstrtol(&text[p..], 0).map_err(|_| errno::EINVAL)?,
                ),
                None => (text, 0),
            };
            let addr = lookup(name);
            if addr == 0 {
                return Err(errno::ENOENT);
            }
            a.store.code[i].offset = addr.wrapping_add(offset as u64) as i64;
        }
    }
    Ok(())
}

/// Maps a registration failure to what C logs (`__trace_kprobe_create()`):
/// at the place token, `EILSEQ` is `BAD_INSN_BNDRY`, `ENOENT` is
/// `BAD_PROBE_ADDR`; anything but `ENOMEM` and `EEXIST` is
/// `FAIL_REG_PROBE`.
pub fn registration_error(err: i32) -> ParseError {
    match err {
        errno::EILSEQ => ParseError::logged(err, Code::BadInsnBndry, 1, 0),
        errno::ENOENT => ParseError::logged(err, Code::BadProbeAddr, 1, 0),
        errno::ENOMEM | errno::EEXIST => ParseError::silent(err),
        _ => ParseError::logged(err, Code::FailRegProbe, 1, 0),
    }
}

mod expand;

#[cfg(test)]
mod tests;

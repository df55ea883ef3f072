// SPDX-License-Identifier: GPL-2.0-only

//! Parse errors: the C error codes and texts, the caret, the errno.
//!
//! [`Code`] lists the `ERRORS` table of 6.12's `kernel/trace/trace_probe.h`
//! in the same order, then the codes 7.3 added;
//! [`TEXTS_6_12`] and [`TEXTS_7_3`] hold each release's messages byte for
//! byte ([`Dialect::text`](super::dialect::Dialect::text)), so that
//! `error_log` reads as with the C implementation. A [`ParseError`]
//! carries what `__trace_probe_log_err()`
//! (trace_probe.c) needs to place the caret: the index of the
//! whitespace-separated token and the offset inside it.
//!
//! C header: [`kernel/trace/trace_probe.h`](srctree/kernel/trace/trace_probe.h)

/// Declares [`Code`], [`Code::ALL`], 6.12's texts and the names from one list,
/// as C writes its table once: `C(NAME, "text")` becomes
/// `Variant = NAME: "text"`.
macro_rules! errors {
    ($($variant:ident = $name:ident: $text:literal,)*) => {
        /// One entry of the C `ERRORS` table (`TP_ERR_*`), in table order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Code {
            $(
                #[doc = $text]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in table order (`ALL[c as usize] == c`).
            pub const ALL: [Code; [$(Code::$variant),*].len()] = [$(Code::$variant),*];
        }

        /// Message texts, indexed by [`Code`], as 6.12 has them.
        const TEXTS_6_12_TABLE: Texts = [$($text),*];

        /// The C names (`TP_ERR_` without the prefix), indexed by [`Code`].
        static NAMES: [&str; Code::ALL.len()] = [$(stringify!($name)),*];
    };
}

// The `ERRORS` table of 6.12's kernel/trace/trace_probe.h, in the same order,
// then the codes 7.3 added.
errors! {
    FileNotFound = FILE_NOT_FOUND: "Failed to find the given file",
    NoRegularFile = NO_REGULAR_FILE: "Not a regular file",
    BadRefcnt = BAD_REFCNT: "Invalid reference counter offset",
    RefcntOpenBrace = REFCNT_OPEN_BRACE: "Reference counter brace is not closed",
    BadRefcntSuffix = BAD_REFCNT_SUFFIX: "Reference counter has wrong suffix",
    BadUprobeOffs = BAD_UPROBE_OFFS: "Invalid uprobe offset",
    BadMaxactType = BAD_MAXACT_TYPE: "Maxactive is only for function exit",
    BadMaxact = BAD_MAXACT: "Invalid maxactive number",
    MaxactTooBig = MAXACT_TOO_BIG: "Maxactive is too big",
    BadProbeAddr = BAD_PROBE_ADDR: "Invalid probed address or symbol",
    NonUniqSymbol = NON_UNIQ_SYMBOL: "The symbol is not unique",
    BadRetprobe = BAD_RETPROBE: "Retprobe address must be an function entry",
    NoTracepoint = NO_TRACEPOINT: "Tracepoint is not found",
    BadTpName = BAD_TP_NAME: "Invalid character in tracepoint name",
    BadAddrSuffix = BAD_ADDR_SUFFIX: "Invalid probed address suffix",
    NoGroupName = NO_GROUP_NAME: "Group name is not specified",
    GroupTooLong = GROUP_TOO_LONG: "Group name is too long",
    BadGroupName = BAD_GROUP_NAME: "Group name must follow the same rules as C identifiers",
    NoEventName = NO_EVENT_NAME: "Event name is not specified",
    EventTooLong = EVENT_TOO_LONG: "Event name is too long",
    BadEventName = BAD_EVENT_NAME: "Event name must follow the same rules as C identifiers",
    EventExist = EVENT_EXIST: "Given group/event name is already used by another event",
    RetvalOnProbe = RETVAL_ON_PROBE: "$retval is not available on probe",
    NoRetval = NO_RETVAL: "This function returns 'void' type",
    BadStackNum = BAD_STACK_NUM: "Invalid stack number",
    BadArgNum = BAD_ARG_NUM: "Invalid argument number",
    BadVar = BAD_VAR: "Invalid $-variable specified",
    BadRegName = BAD_REG_NAME: "Invalid register name",
    BadMemAddr = BAD_MEM_ADDR: "Invalid memory address",
    BadImm = BAD_IMM: "Invalid immediate value",
    ImmstrNoClose = IMMSTR_NO_CLOSE: "String is not closed with '\"'",
    FileOnKprobe = FILE_ON_KPROBE: "File offset is not available with kprobe",
    BadFileOffs = BAD_FILE_OFFS: "Invalid file offset value",
    SymOnUprobe = SYM_ON_UPROBE: "Symbol is not available with uprobe",
    TooManyOps = TOO_MANY_OPS: "Dereference is too much nested",
    DerefNeedBrace = DEREF_NEED_BRACE: "Dereference needs a brace",
    BadDerefOffs = BAD_DEREF_OFFS: "Invalid dereference offset",
    DerefOpenBrace = DEREF_OPEN_BRACE: "Dereference brace is not closed",
    CommCantDeref = COMM_CANT_DEREF: "$comm can not be dereferenced",
    BadFetchArg = BAD_FETCH_ARG: "Invalid fetch argument",
    ArrayNoClose = ARRAY_NO_CLOSE: "Array is not closed",
    BadArraySuffix = BAD_ARRAY_SUFFIX: "Array has wrong suffix",
    BadArrayNum = BAD_ARRAY_NUM: "Invalid array size",
    ArrayTooBig = ARRAY_TOO_BIG: "Array number is too big",
    BadType = BAD_TYPE: "Unknown type is specified",
    BadString = BAD_STRING: "String accepts only memory argument",
    BadSymstring = BAD_SYMSTRING: "Symbol String doesn't accept data/userdata",
    BadBitfield = BAD_BITFIELD: "Invalid bitfield",
    ArgNameTooLong = ARG_NAME_TOO_LONG: "Argument name is too long",
    NoArgName = NO_ARG_NAME: "Argument name is not specified",
    BadArgName = BAD_ARG_NAME: "Argument name must follow the same rules as C identifiers",
    UsedArgName = USED_ARG_NAME: "This argument name is already used",
    ArgTooLong = ARG_TOO_LONG: "Argument expression is too long",
    NoArgBody = NO_ARG_BODY: "No argument expression",
    BadInsnBndry = BAD_INSN_BNDRY: "Probe point is not an instruction boundary",
    FailRegProbe = FAIL_REG_PROBE: "Failed to register probe event",
    DiffProbeType = DIFF_PROBE_TYPE: "Probe type is different from existing probe",
    DiffArgType = DIFF_ARG_TYPE: "Argument type or name is different from existing probe",
    SameProbe = SAME_PROBE: "There is already the exact same probe event",
    NoEventInfo = NO_EVENT_INFO: "This requires both group and event name to attach",
    BadAttachEvent = BAD_ATTACH_EVENT: "Attached event does not exist",
    BadAttachArg = BAD_ATTACH_ARG: "Attached event does not have this field",
    NoEpFilter = NO_EP_FILTER: "No filter rule after 'if'",
    NosupBtfarg = NOSUP_BTFARG: "BTF is not available or not supported",
    NoBtfarg = NO_BTFARG: "This variable is not found at this probe point",
    NoBtfEntry = NO_BTF_ENTRY: "No BTF entry for this probe point",
    BadVarArgs = BAD_VAR_ARGS: "$arg* must be an independent parameter without name etc.",
    NofentryArgs = NOFENTRY_ARGS: "$arg* can be used only on function entry or exit",
    DoubleArgs = DOUBLE_ARGS: "$arg* can be used only once in the parameters",
    Args2long = ARGS_2LONG: "$arg* failed because the argument list is too long",
    Argidx2big = ARGIDX_2BIG: "$argN index is too big",
    NoPtrStrct = NO_PTR_STRCT: "This is not a pointer to union/structure.",
    NosupDatArg = NOSUP_DAT_ARG: "Non pointer structure/union argument is not supported.",
    BadHyphen = BAD_HYPHEN: "Failed to parse single hyphen. Forgot '>'?",
    NoBtfField = NO_BTF_FIELD: "This field is not found.",
    BadBtfTid = BAD_BTF_TID: "Failed to get BTF type info.",
    BadType4str = BAD_TYPE4STR: "This type does not fit for string.",
    NeedStringType = NEED_STRING_TYPE: "$comm and immediate-string only accepts string type",
    EventTooBig = EVENT_TOO_BIG: "Event too big (too many fields?)",
    // Added in 7.3 (`ERRORS` in 7.3's trace_probe.h, where the table is
    // sorted by name); never emitted in 6.12's language.
    NosupPercpu = NOSUP_PERCPU: "Per-cpu variable access is only for kernel probes",
    NoEventField = NO_EVENT_FIELD: "This event field is not found.",
    TooManyArgs = TOO_MANY_ARGS: "Too many arguments are specified",
    TooManyEargs = TOO_MANY_EARGS: "Too many entry arguments specified",
    TooManyNested = TOO_MANY_NESTED: "Too many nested typecasts/dereferences",
    TypecastBadArrow = TYPECAST_BAD_ARROW: "Typecast field option does not support -> operator",
    TypecastNotAligned = TYPECAST_NOT_ALIGNED: "Typecast field option is not byte-aligned",
    TypecastNotEvent = TYPECAST_NOT_EVENT: "Typecasts are only for eprobe fields",
    TypecastReqField = TYPECAST_REQ_FIELD: "Typecast requires a field access",
    TypecastSymOffset = TYPECAST_SYM_OFFSET: "@SYM+/-OFFSET with typecast needs parentheses",
}

/// A table of error texts, indexed by [`Code`]: what `error_log` reads.
pub type Texts = [&'static str; Code::ALL.len()];

/// 6.12's texts (`ERRORS` in trace_probe.h); the codes 7.3 added have 7.3's.
pub static TEXTS_6_12: Texts = TEXTS_6_12_TABLE;

/// 7.3's texts (`ERRORS` in trace_probe.h): 6.12's, one of them reworded.
pub static TEXTS_7_3: Texts = {
    let mut t = TEXTS_6_12_TABLE;
    t[Code::FileOnKprobe as usize] = "File offset is not available for kernel probes";
    t
};

impl Code {
    /// The C name, as in `TP_ERR_<name>`.
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

/// Error numbers the write of a probe definition can fail with (positive,
/// as in `include/uapi/asm-generic/errno*.h`).
pub mod errno {
    /// Argument list too long: more than 128 arguments, or a field too big.
    pub const E2BIG: i32 = 7;
    /// No such symbol, or nothing matched a removal.
    pub const ENOENT: i32 = 2;
    /// Out of memory.
    pub const ENOMEM: i32 = 12;
    /// The event is in use.
    pub const EBUSY: i32 = 16;
    /// Invalid argument: every parse error.
    pub const EINVAL: i32 = 22;
    /// A `$argN`/`$stackN` number that overflows (7.3).
    pub const ERANGE: i32 = 34;
    /// The symbol is not unique.
    pub const EADDRNOTAVAIL: i32 = 99;
    /// Not an instruction boundary.
    pub const EILSEQ: i32 = 84;
    /// `$arg*` without BTF.
    pub const EOPNOTSUPP: i32 = 95;
    /// The name is taken (multi-probe conflicts).
    pub const EEXIST: i32 = 17;
    /// Not a command of this kind: `kprobe_events` turns it into `EINVAL`,
    /// `dynamic_events` tries the next kind of event.
    pub const ECANCELED: i32 = 125;
}

/// Where an error points: the whitespace-separated token of the command
/// (0 = `p:...`, 1 = the place, 2.. = the arguments) and the byte offset
/// inside it (`trace_probe_log_set_index()` and the `offset` argument of
/// `trace_probe_log_err()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caret {
    /// Token index.
    pub index: usize,
    /// Offset inside the token.
    pub offset: usize,
}

/// A rejected command: the errno the write returns and, unless C logs
/// nothing for it, the `error_log` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Positive errno.
    pub errno: i32,
    /// The logged code and caret, or `None` where C logs nothing (a line
    /// that is not a kprobe command, more than 128 arguments).
    pub log: Option<(Code, Caret)>,
}

impl ParseError {
    /// An error that C logs with `-EINVAL`.
    pub const fn inval(code: Code, index: usize, offset: usize) -> Self {
        Self::logged(errno::EINVAL, code, index, offset)
    }

    /// An error that C logs, with another errno.
    pub const fn logged(errno: i32, code: Code, index: usize, offset: usize) -> Self {
        ParseError {
            errno,
            log: Some((code, Caret { index, offset })),
        }
    }

    /// An error that C does not log.
    pub const fn silent(errno: i32) -> Self {
        ParseError { errno, log: None }
    }

    /// The logged code, if any.
    pub fn code(&self) -> Option<Code> {
        self.log.map(|(c, _)| c)
    }
}

/// The caret column in the command that `error_log` shows, as
/// `__trace_probe_log_err()` computes it (trace_probe.c): the tokens
/// joined by single spaces, the caret at the start of token `index` plus
/// `offset`; an index past the last token points one past the end of the
/// command (its length plus the terminating NUL), with the offset ignored.
pub fn caret_position<'a>(tokens: impl Iterator<Item = &'a [u8]>, caret: Caret) -> usize {
    let mut len = 0;
    let mut pos = None;
    for (i, t) in tokens.enumerate() {
        if i == caret.index {
            pos = Some(len);
        }
        len += t.len() + 1;
    }
    match pos {
        Some(p) => p + caret.offset,
        None => len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_c() {
        // 6.12's 79 and the 10 7.3 added.
        assert_eq!(Code::ALL.len(), 89);
        for (i, c) in Code::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        assert_eq!(
            TEXTS_6_12[Code::BadRegName as usize],
            "Invalid register name"
        );
        assert_eq!(
            TEXTS_7_3[Code::ImmstrNoClose as usize],
            "String is not closed with '\"'"
        );
        assert_eq!(Code::EventTooBig.name(), "EVENT_TOO_BIG");
        assert_eq!(Code::FileNotFound as u8, 0);
    }

    #[test]
    fn caret() {
        let toks: [&[u8]; 3] = [b"p", b"vfs_read", b"$foo"];
        let at = |index, offset| caret_position(toks.iter().copied(), Caret { index, offset });
        assert_eq!(at(0, 1), 1);
        assert_eq!(at(2, 0), 11);
        assert_eq!(at(2, 3), 14);
        // Past the end: after "p vfs_read $foo" and its NUL.
        assert_eq!(at(3, 5), 16);
    }
}

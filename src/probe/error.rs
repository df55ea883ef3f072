// SPDX-License-Identifier: GPL-2.0-only

//! Parse errors: the C error codes and texts, the caret, the errno.
//!
//! [`Code`] lists the `ERRORS` table of `kernel/trace/trace_probe.h`
//! (6.12: lines 476-556) in the same order, and [`Code::text`] returns the
//! message byte for byte, so that `error_log` reads as with the C
//! implementation. A [`ParseError`] carries what `__trace_probe_log_err()`
//! (trace_probe.c:183-227) needs to place the caret: the index of the
//! whitespace-separated token and the offset inside it.
//!
//! C header: [`kernel/trace/trace_probe.h`](srctree/kernel/trace/trace_probe.h)

/// One entry of the C `ERRORS` table (`TP_ERR_*`), in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Code {
    /// "Failed to find the given file"
    FileNotFound,
    /// "Not a regular file"
    NoRegularFile,
    /// "Invalid reference counter offset"
    BadRefcnt,
    /// "Reference counter brace is not closed"
    RefcntOpenBrace,
    /// "Reference counter has wrong suffix"
    BadRefcntSuffix,
    /// "Invalid uprobe offset"
    BadUprobeOffs,
    /// "Maxactive is only for function exit"
    BadMaxactType,
    /// "Invalid maxactive number"
    BadMaxact,
    /// "Maxactive is too big"
    MaxactTooBig,
    /// "Invalid probed address or symbol"
    BadProbeAddr,
    /// "The symbol is not unique"
    NonUniqSymbol,
    /// "Retprobe address must be an function entry"
    BadRetprobe,
    /// "Tracepoint is not found"
    NoTracepoint,
    /// "Invalid character in tracepoint name"
    BadTpName,
    /// "Invalid probed address suffix"
    BadAddrSuffix,
    /// "Group name is not specified"
    NoGroupName,
    /// "Group name is too long"
    GroupTooLong,
    /// "Group name must follow the same rules as C identifiers"
    BadGroupName,
    /// "Event name is not specified"
    NoEventName,
    /// "Event name is too long"
    EventTooLong,
    /// "Event name must follow the same rules as C identifiers"
    BadEventName,
    /// "Given group/event name is already used by another event"
    EventExist,
    /// "$retval is not available on probe"
    RetvalOnProbe,
    /// "This function returns 'void' type"
    NoRetval,
    /// "Invalid stack number"
    BadStackNum,
    /// "Invalid argument number"
    BadArgNum,
    /// "Invalid $-variable specified"
    BadVar,
    /// "Invalid register name"
    BadRegName,
    /// "Invalid memory address"
    BadMemAddr,
    /// "Invalid immediate value"
    BadImm,
    /// "String is not closed with '"'"
    ImmstrNoClose,
    /// "File offset is not available with kprobe"
    FileOnKprobe,
    /// "Invalid file offset value"
    BadFileOffs,
    /// "Symbol is not available with uprobe"
    SymOnUprobe,
    /// "Dereference is too much nested"
    TooManyOps,
    /// "Dereference needs a brace"
    DerefNeedBrace,
    /// "Invalid dereference offset"
    BadDerefOffs,
    /// "Dereference brace is not closed"
    DerefOpenBrace,
    /// "$comm can not be dereferenced"
    CommCantDeref,
    /// "Invalid fetch argument"
    BadFetchArg,
    /// "Array is not closed"
    ArrayNoClose,
    /// "Array has wrong suffix"
    BadArraySuffix,
    /// "Invalid array size"
    BadArrayNum,
    /// "Array number is too big"
    ArrayTooBig,
    /// "Unknown type is specified"
    BadType,
    /// "String accepts only memory argument"
    BadString,
    /// "Symbol String doesn't accept data/userdata"
    BadSymstring,
    /// "Invalid bitfield"
    BadBitfield,
    /// "Argument name is too long"
    ArgNameTooLong,
    /// "Argument name is not specified"
    NoArgName,
    /// "Argument name must follow the same rules as C identifiers"
    BadArgName,
    /// "This argument name is already used"
    UsedArgName,
    /// "Argument expression is too long"
    ArgTooLong,
    /// "No argument expression"
    NoArgBody,
    /// "Probe point is not an instruction boundary"
    BadInsnBndry,
    /// "Failed to register probe event"
    FailRegProbe,
    /// "Probe type is different from existing probe"
    DiffProbeType,
    /// "Argument type or name is different from existing probe"
    DiffArgType,
    /// "There is already the exact same probe event"
    SameProbe,
    /// "This requires both group and event name to attach"
    NoEventInfo,
    /// "Attached event does not exist"
    BadAttachEvent,
    /// "Attached event does not have this field"
    BadAttachArg,
    /// "No filter rule after 'if'"
    NoEpFilter,
    /// "BTF is not available or not supported"
    NosupBtfarg,
    /// "This variable is not found at this probe point"
    NoBtfarg,
    /// "No BTF entry for this probe point"
    NoBtfEntry,
    /// "$arg* must be an independent parameter without name etc."
    BadVarArgs,
    /// "$arg* can be used only on function entry or exit"
    NofentryArgs,
    /// "$arg* can be used only once in the parameters"
    DoubleArgs,
    /// "$arg* failed because the argument list is too long"
    Args2long,
    /// "$argN index is too big"
    Argidx2big,
    /// "This is not a pointer to union/structure."
    NoPtrStrct,
    /// "Non pointer structure/union argument is not supported."
    NosupDatArg,
    /// "Failed to parse single hyphen. Forgot '>'?"
    BadHyphen,
    /// "This field is not found."
    NoBtfField,
    /// "Failed to get BTF type info."
    BadBtfTid,
    /// "This type does not fit for string."
    BadType4str,
    /// "$comm and immediate-string only accepts string type"
    NeedStringType,
    /// "Event too big (too many fields?)"
    EventTooBig,
}

impl Code {
    /// Every code, in the order of the C table (its index is `TP_ERR_*`).
    pub const ALL: [Code; 79] = [
        Code::FileNotFound,
        Code::NoRegularFile,
        Code::BadRefcnt,
        Code::RefcntOpenBrace,
        Code::BadRefcntSuffix,
        Code::BadUprobeOffs,
        Code::BadMaxactType,
        Code::BadMaxact,
        Code::MaxactTooBig,
        Code::BadProbeAddr,
        Code::NonUniqSymbol,
        Code::BadRetprobe,
        Code::NoTracepoint,
        Code::BadTpName,
        Code::BadAddrSuffix,
        Code::NoGroupName,
        Code::GroupTooLong,
        Code::BadGroupName,
        Code::NoEventName,
        Code::EventTooLong,
        Code::BadEventName,
        Code::EventExist,
        Code::RetvalOnProbe,
        Code::NoRetval,
        Code::BadStackNum,
        Code::BadArgNum,
        Code::BadVar,
        Code::BadRegName,
        Code::BadMemAddr,
        Code::BadImm,
        Code::ImmstrNoClose,
        Code::FileOnKprobe,
        Code::BadFileOffs,
        Code::SymOnUprobe,
        Code::TooManyOps,
        Code::DerefNeedBrace,
        Code::BadDerefOffs,
        Code::DerefOpenBrace,
        Code::CommCantDeref,
        Code::BadFetchArg,
        Code::ArrayNoClose,
        Code::BadArraySuffix,
        Code::BadArrayNum,
        Code::ArrayTooBig,
        Code::BadType,
        Code::BadString,
        Code::BadSymstring,
        Code::BadBitfield,
        Code::ArgNameTooLong,
        Code::NoArgName,
        Code::BadArgName,
        Code::UsedArgName,
        Code::ArgTooLong,
        Code::NoArgBody,
        Code::BadInsnBndry,
        Code::FailRegProbe,
        Code::DiffProbeType,
        Code::DiffArgType,
        Code::SameProbe,
        Code::NoEventInfo,
        Code::BadAttachEvent,
        Code::BadAttachArg,
        Code::NoEpFilter,
        Code::NosupBtfarg,
        Code::NoBtfarg,
        Code::NoBtfEntry,
        Code::BadVarArgs,
        Code::NofentryArgs,
        Code::DoubleArgs,
        Code::Args2long,
        Code::Argidx2big,
        Code::NoPtrStrct,
        Code::NosupDatArg,
        Code::BadHyphen,
        Code::NoBtfField,
        Code::BadBtfTid,
        Code::BadType4str,
        Code::NeedStringType,
        Code::EventTooBig,
    ];

    /// The C message, byte for byte.
    pub const fn text(self) -> &'static str {
        TEXTS[self as usize]
    }

    /// The C name without the `TP_ERR_` prefix, e.g. `"BAD_REG_NAME"`.
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

/// Message texts, indexed by [`Code`]; the table C (and `error_log`) reads.
pub static TEXTS: [&str; 79] = [
    "Failed to find the given file",
    "Not a regular file",
    "Invalid reference counter offset",
    "Reference counter brace is not closed",
    "Reference counter has wrong suffix",
    "Invalid uprobe offset",
    "Maxactive is only for function exit",
    "Invalid maxactive number",
    "Maxactive is too big",
    "Invalid probed address or symbol",
    "The symbol is not unique",
    "Retprobe address must be an function entry",
    "Tracepoint is not found",
    "Invalid character in tracepoint name",
    "Invalid probed address suffix",
    "Group name is not specified",
    "Group name is too long",
    "Group name must follow the same rules as C identifiers",
    "Event name is not specified",
    "Event name is too long",
    "Event name must follow the same rules as C identifiers",
    "Given group/event name is already used by another event",
    "$retval is not available on probe",
    "This function returns 'void' type",
    "Invalid stack number",
    "Invalid argument number",
    "Invalid $-variable specified",
    "Invalid register name",
    "Invalid memory address",
    "Invalid immediate value",
    "String is not closed with '\"'",
    "File offset is not available with kprobe",
    "Invalid file offset value",
    "Symbol is not available with uprobe",
    "Dereference is too much nested",
    "Dereference needs a brace",
    "Invalid dereference offset",
    "Dereference brace is not closed",
    "$comm can not be dereferenced",
    "Invalid fetch argument",
    "Array is not closed",
    "Array has wrong suffix",
    "Invalid array size",
    "Array number is too big",
    "Unknown type is specified",
    "String accepts only memory argument",
    "Symbol String doesn't accept data/userdata",
    "Invalid bitfield",
    "Argument name is too long",
    "Argument name is not specified",
    "Argument name must follow the same rules as C identifiers",
    "This argument name is already used",
    "Argument expression is too long",
    "No argument expression",
    "Probe point is not an instruction boundary",
    "Failed to register probe event",
    "Probe type is different from existing probe",
    "Argument type or name is different from existing probe",
    "There is already the exact same probe event",
    "This requires both group and event name to attach",
    "Attached event does not exist",
    "Attached event does not have this field",
    "No filter rule after 'if'",
    "BTF is not available or not supported",
    "This variable is not found at this probe point",
    "No BTF entry for this probe point",
    "$arg* must be an independent parameter without name etc.",
    "$arg* can be used only on function entry or exit",
    "$arg* can be used only once in the parameters",
    "$arg* failed because the argument list is too long",
    "$argN index is too big",
    "This is not a pointer to union/structure.",
    "Non pointer structure/union argument is not supported.",
    "Failed to parse single hyphen. Forgot '>'?",
    "This field is not found.",
    "Failed to get BTF type info.",
    "This type does not fit for string.",
    "$comm and immediate-string only accepts string type",
    "Event too big (too many fields?)",
];

static NAMES: [&str; 79] = [
    "FILE_NOT_FOUND",
    "NO_REGULAR_FILE",
    "BAD_REFCNT",
    "REFCNT_OPEN_BRACE",
    "BAD_REFCNT_SUFFIX",
    "BAD_UPROBE_OFFS",
    "BAD_MAXACT_TYPE",
    "BAD_MAXACT",
    "MAXACT_TOO_BIG",
    "BAD_PROBE_ADDR",
    "NON_UNIQ_SYMBOL",
    "BAD_RETPROBE",
    "NO_TRACEPOINT",
    "BAD_TP_NAME",
    "BAD_ADDR_SUFFIX",
    "NO_GROUP_NAME",
    "GROUP_TOO_LONG",
    "BAD_GROUP_NAME",
    "NO_EVENT_NAME",
    "EVENT_TOO_LONG",
    "BAD_EVENT_NAME",
    "EVENT_EXIST",
    "RETVAL_ON_PROBE",
    "NO_RETVAL",
    "BAD_STACK_NUM",
    "BAD_ARG_NUM",
    "BAD_VAR",
    "BAD_REG_NAME",
    "BAD_MEM_ADDR",
    "BAD_IMM",
    "IMMSTR_NO_CLOSE",
    "FILE_ON_KPROBE",
    "BAD_FILE_OFFS",
    "SYM_ON_UPROBE",
    "TOO_MANY_OPS",
    "DEREF_NEED_BRACE",
    "BAD_DEREF_OFFS",
    "DEREF_OPEN_BRACE",
    "COMM_CANT_DEREF",
    "BAD_FETCH_ARG",
    "ARRAY_NO_CLOSE",
    "BAD_ARRAY_SUFFIX",
    "BAD_ARRAY_NUM",
    "ARRAY_TOO_BIG",
    "BAD_TYPE",
    "BAD_STRING",
    "BAD_SYMSTRING",
    "BAD_BITFIELD",
    "ARG_NAME_TOO_LONG",
    "NO_ARG_NAME",
    "BAD_ARG_NAME",
    "USED_ARG_NAME",
    "ARG_TOO_LONG",
    "NO_ARG_BODY",
    "BAD_INSN_BNDRY",
    "FAIL_REG_PROBE",
    "DIFF_PROBE_TYPE",
    "DIFF_ARG_TYPE",
    "SAME_PROBE",
    "NO_EVENT_INFO",
    "BAD_ATTACH_EVENT",
    "BAD_ATTACH_ARG",
    "NO_EP_FILTER",
    "NOSUP_BTFARG",
    "NO_BTFARG",
    "NO_BTF_ENTRY",
    "BAD_VAR_ARGS",
    "NOFENTRY_ARGS",
    "DOUBLE_ARGS",
    "ARGS_2LONG",
    "ARGIDX_2BIG",
    "NO_PTR_STRCT",
    "NOSUP_DAT_ARG",
    "BAD_HYPHEN",
    "NO_BTF_FIELD",
    "BAD_BTF_TID",
    "BAD_TYPE4STR",
    "NEED_STRING_TYPE",
    "EVENT_TOO_BIG",
];

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
/// `__trace_probe_log_err()` computes it (trace_probe.c:183-227): the tokens
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
        assert_eq!(Code::ALL.len(), 79);
        for (i, c) in Code::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        assert_eq!(Code::BadRegName.text(), "Invalid register name");
        assert_eq!(Code::ImmstrNoClose.text(), "String is not closed with '\"'");
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

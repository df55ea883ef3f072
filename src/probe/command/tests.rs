// SPDX-License-Identifier: GPL-2.0-only

//! Parser tests: every `check_error` case of the upstream selftest
//! `test.d/kprobe/kprobe_syntax_errors.tc` (6.12), with the caret where C
//! puts it, and the accepted forms of the `kprobe_args_*.tc` tests.

use super::super::error::{errno, Code};
use super::super::insn::Op;
use super::Place;
use crate::fake::{error_at, parse};
use std::format;
use std::string::ToString;

/// `check_error`: the command with `^` where the caret must be; `code` the
/// expected error.
#[track_caller]
fn check_error(spec: &str, code: Code) {
    let pos = spec.find('^').expect("spec has a ^");
    let line = spec.replacen('^', "", 1);
    let (e, at) = error_at(&line);
    assert_eq!(e.code(), Some(code), "{spec}: {e:?}");
    assert_eq!(at, Some(pos), "{spec}: caret");
}

/// Every `check_error` of the upstream selftest (6.12) with the code C
/// built without BTF arguments answers; the last is its `else` branch of
/// the BTF block.
const SELFTEST: &[(&str, Code)] = &[
    ("p^100 vfs_read", Code::BadMaxactType),
    ("r^1a111 vfs_read", Code::BadMaxact),
    ("r^100000 vfs_read", Code::MaxactTooBig),
    ("p ^non_exist_func", Code::BadProbeAddr),
    ("p ^hoge-fuga", Code::BadProbeAddr),
    ("p ^hoge+1000-1000", Code::BadProbeAddr),
    ("r ^vfs_read+10", Code::BadRetprobe),
    ("p:^/bar vfs_read", Code::NoGroupName),
    (
        "p:^12345678901234567890123456789012345678901234567890123456789012345/bar vfs_read",
        Code::GroupTooLong,
    ),
    ("p:^foo.1/bar vfs_read", Code::BadGroupName),
    ("p:^ vfs_read", Code::NoEventName),
    (
        "p:foo/^12345678901234567890123456789012345678901234567890123456789012345 vfs_read",
        Code::EventTooLong,
    ),
    ("p:foo/^bar.1 vfs_read", Code::BadEventName),
    ("p vfs_read ^$retval", Code::RetvalOnProbe),
    ("p vfs_read ^$stack10000", Code::BadStackNum),
    ("p vfs_read ^$arg10000", Code::BadArgNum),
    ("p vfs_read ^$none_var", Code::BadVar),
    ("p vfs_read ^%none_reg", Code::BadRegName),
    ("p vfs_read ^@12345678abcde", Code::BadMemAddr),
    ("p vfs_read ^@+10", Code::FileOnKprobe),
    ("p vfs_read arg1=\\^x", Code::BadImm),
    ("p vfs_read arg1=\\\"abcd^", Code::ImmstrNoClose),
    ("p vfs_read ^+0@0)", Code::DerefNeedBrace),
    ("p vfs_read ^+0ab1(@0)", Code::BadDerefOffs),
    ("p vfs_read +0(+0(@0^)", Code::DerefOpenBrace),
    ("p vfs_read +0(^$comm)", Code::CommCantDeref),
    ("p vfs_read ^&1", Code::BadFetchArg),
    (
        "p vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
        Code::TooManyOps,
    ),
    ("p vfs_read +0(@11):u8[10^", Code::ArrayNoClose),
    ("p vfs_read +0(@11):u8[10]^a", Code::BadArraySuffix),
    ("p vfs_read +0(@11):u8[^10a]", Code::BadArrayNum),
    ("p vfs_read +0(@11):u8[^256]", Code::ArrayTooBig),
    ("p vfs_read @11:^unknown_type", Code::BadType),
    ("p vfs_read $stack0:^string", Code::BadString),
    ("p vfs_read @11:^b10@a/16", Code::BadBitfield),
    (
        "p vfs_read ^arg123456789012345678901234567890=@11",
        Code::ArgNameTooLong,
    ),
    ("p vfs_read ^=@11", Code::NoArgName),
    ("p vfs_read ^var.1=@11", Code::BadArgName),
    ("p vfs_read var1=@11 ^var1=@12", Code::UsedArgName),
    (
        "p vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
        Code::ArgTooLong,
    ),
    ("p vfs_read arg1=^", Code::NoArgBody),
    ("p vfs_read^%hoge", Code::BadAddrSuffix),
    ("p ^vfs_read+10%return", Code::BadRetprobe),
    ("p vfs_read ^$arg*", Code::NosupBtfarg),
];

#[test]
fn syntax_errors_selftest() {
    for &(spec, code) in SELFTEST {
        check_error(spec, code);
    }
}

/// The same lines on a kernel built with BTF arguments: the carets are
/// the same (what the selftest checks); `$arg10000` is then an argument
/// the function does not have, and the last line is not run (the BTF
/// block runs instead, see `btf::tests`).
#[test]
fn syntax_errors_selftest_with_btf() {
    let env = crate::fake::FakeBtfEnv::new();
    let (last, lines) = SELFTEST.split_last().unwrap();
    assert_eq!(last.1, Code::NosupBtfarg);
    for &(spec, code) in lines {
        let pos = spec.find('^').unwrap();
        let (e, at, _) = crate::fake::error_on(&env, &spec.replacen('^', "", 1));
        let code = if spec.contains("$arg10000") {
            Code::NoBtfarg
        } else {
            code
        };
        assert_eq!((e.code(), at), (Some(code), Some(pos)), "{spec}");
    }
}

#[test]
fn errnos() {
    assert_eq!(
        error_at("p vfs_read ^$arg*".replace('^', "").as_str())
            .0
            .errno,
        errno::EOPNOTSUPP
    );
    let long = "+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))";
    assert_eq!(
        error_at(&format!("p vfs_read {long}")).0.errno,
        errno::E2BIG
    );
    // Not a kprobe command: canceled, nothing logged.
    for line in ["x vfs_read", "p:foo", "p /bin/sh:0x10"] {
        let (e, at) = error_at(line);
        assert_eq!(e.errno, errno::ECANCELED, "{line}");
        assert_eq!(at, None, "{line}");
    }
    // Not unique: EINVAL (C jumps to parse_error), logged.
    let (e, _) = error_at("p:test_non_unique name_show");
    assert_eq!(
        (e.errno, e.code()),
        (errno::EINVAL, Some(Code::NonUniqSymbol))
    );
    // 129 arguments: E2BIG without a log entry; 128 are fine.
    let many = |n: usize| {
        let mut s = "p vfs_read".to_string();
        for i in 0..n {
            s.push_str(&format!(" a{i}=\\{i}"));
        }
        s
    };
    let (e, at) = error_at(&many(129));
    assert_eq!((e.errno, at), (errno::E2BIG, None));
    assert_eq!(parse(&many(128)).unwrap().unwrap().args.len(), 128);
}

#[test]
fn more_carets() {
    // Errors the selftest does not cover, carets computed from the C code.
    check_error("p vfs_read +0(^%foo)", Code::BadRegName);
    check_error("p vfs_read x=+0(+8(^%foo))", Code::BadRegName);
    // A `+u` dereference advances the caret one byte short (C quirk).
    check_error("p vfs_read +u0^(%foo)", Code::BadRegName);
    check_error("p vfs_read -u0^(%foo)", Code::BadRegName);
    check_error("p vfs_read +0(^$retval)", Code::RetvalOnProbe);
    check_error("p vfs_read +0(^)", Code::BadFetchArg);
    check_error("p vfs_read+8 ^$arg1", Code::NofentryArgs);
    check_error("p vfs_read $comm:^u32", Code::NeedStringType);
    check_error("p vfs_read $comm:^string[2]", Code::NeedStringType);
    check_error("p vfs_read %ax:^symstr[2]", Code::BadString);
    check_error("p vfs_read \\1:^symstr", Code::BadSymstring);
    check_error("p vfs_read \\1:^u8[2]", Code::BadString);
    check_error("p vfs_read ^$stackx", Code::BadVar);
    check_error("p vfs_read ^$arg", Code::BadVar);
    check_error("p vfs_read $arg* ^$arg*", Code::DoubleArgs);
    check_error("p vfs_read ^foo", Code::NosupBtfarg);
    check_error("p vfs_read+8 ^foo", Code::NosupBtfarg);
    check_error("p vfs_read ^common_pid=%ax", Code::UsedArgName);
    check_error("p vfs_read ^__probe_ip=%ax", Code::UsedArgName);
    check_error("r^0x2000 vfs_read", Code::MaxactTooBig);
}

#[test]
fn errors_against_rewritten_tokens() {
    // C logs against the tokens after the %pd rewrite.
    let (e, at) = error_at("p vfs_read+8 x=$arg1:%pd");
    assert_eq!(e.code(), Some(Code::NofentryArgs));
    let cmd = "p vfs_read+8 x=+0x0(+0x28($arg1)):string";
    assert_eq!(at, Some(cmd.find("$arg1").unwrap()));
}

#[test]
fn heads() {
    let p = parse("p:myprobe do_sys_openat2 dfd=%di path=+0(%si):string")
        .unwrap()
        .unwrap();
    assert_eq!(p.group.as_bytes(), b"kprobes");
    assert_eq!(p.event.as_bytes(), b"myprobe");
    assert_eq!(p.symbol, b"do_sys_openat2");
    assert_eq!(p.place, Place::Symbol { offset: 0 });
    assert!(!p.is_return && p.flags.fentry);
    assert_eq!(p.args.len(), 2);
    assert_eq!(p.size, 12);

    let p = parse("r10:grp/ev vfs_read").unwrap().unwrap();
    assert!(p.is_return);
    assert_eq!(p.maxactive, 10);
    assert_eq!(
        (p.group.as_bytes(), p.event.as_bytes()),
        (&b"grp"[..], &b"ev"[..])
    );
    assert_eq!(parse("r0x10 vfs_read").unwrap().unwrap().maxactive, 16);
    assert_eq!(error_at("r0 vfs_read").0.code(), Some(Code::BadMaxact));

    let p = parse("p:grp. vfs_read").unwrap().unwrap();
    assert_eq!(p.group.as_bytes(), b"grp");
    assert_eq!(p.event.as_bytes(), b"p_vfs_read_0");
    let p = parse("p:grp/ vfs_read+4").unwrap().unwrap();
    assert_eq!(p.event.as_bytes(), b"p_vfs_read_4");
    let p = parse("p vfs_read%return").unwrap().unwrap();
    assert!(p.is_return && p.flags.ret && !p.flags.fentry);
    assert_eq!(p.event.as_bytes(), b"r_vfs_read_0");
    let p = parse("p trace_printk:foo.isra.0").unwrap().unwrap();
    assert_eq!(p.event.as_bytes(), b"p_trace_printk_foo_isra_0_0");
    let p = parse("p 0xffffffff81000000").unwrap().unwrap();
    assert_eq!(p.place, Place::Addr(0xffff_ffff_8100_0000));
    assert_eq!(p.event.as_bytes(), b"p_0xffffffffdb5a0000", "hashed");
    let long = "a".repeat(70);
    let line = format!("p mod:{long}");
    let p = parse(&line).unwrap().unwrap();
    assert_eq!(p.event.len(), 63);
    assert!(p.event.as_bytes().starts_with(b"p_mod_aaa"));
    // `$argN` on a return probe goes through entry data.
    let p = parse("r vfs_read a=$arg2 b=$arg1 c=$arg2")
        .unwrap()
        .unwrap();
    assert_eq!(p.entry.args(), &[1, 0]);
    assert_eq!(p.args[2].store.code[0].op, Op::Edata);
    assert_eq!(p.args[2].store.code[0].offset, 0);
    assert_eq!(p.args[1].store.code[0].offset, 8);
    // A return probe on an address has no return flag: no $retval (C quirk).
    check_error("r 0x1000 ^$retval", Code::RetvalOnProbe);
}

#[test]
fn dentry_rewrite() {
    let p = parse("p:testprobe dput name=$arg1:%pd").unwrap().unwrap();
    assert_eq!(p.args[0].comm(), b"+0x0(+0x28($arg1)):string");
    assert_eq!(p.args[0].name(), b"name");
    let p = parse("p vfs_read $arg2:%pD").unwrap().unwrap();
    assert_eq!(p.args[0].comm(), b"+0x0(+0x28(+0x48($arg2))):string");
    assert_eq!(p.args[0].name(), b"arg1");
}

#[test]
fn accepted_selftest_forms() {
    // kprobe_args_syntax.tc, kprobe_args.tc, kprobe_args_type.tc, ...
    for spec in [
        "p vfs_read %ax",
        "p vfs_read @_sdata",
        "p vfs_read @0xffffffff81000000",
        "p vfs_read @_sdata+10",
        "p vfs_read @_sdata-10",
        "p vfs_read $stack",
        "p vfs_read $stack0",
        "p vfs_read $stack1",
        "p vfs_read $comm",
        "p vfs_read $COMM",
        "p vfs_read +0(%ax)",
        "p vfs_read -0(%ax)",
        "p vfs_read +10($stack)",
        "p vfs_read +0($stack1)",
        "p vfs_read +10(@_sdata-10)",
        "p vfs_read +0(+10(+20($stack)))",
        "p vfs_read varname=%ax",
        "p vfs_read %ax:x16",
        "p vfs_read $comm:string",
        "p vfs_read +0($stack):string",
        "r vfs_read $retval",
        "p vfs_read $stack0:s32 $stack0:u8 $stack0:x64 $stack0:b4@4/32",
        "p vfs_read arg=+0(%di):char[4]",
        "p do_sys_openat2 +0($arg2):ustring +u0($arg2):string",
        "p vfs_read \\1 \\-1 \\+0x10 \\\"foo\"",
        "p vfs_read +0(%di):string[3]",
        "p vfs_read %di:symbol %di:symstr +0(%di):symstr",
        "p vfs_read +0($arg1):x32[2]",
        "r vfs_read $retval:s32 $comm $arg1",
        "p:kprobes2/event2 vfs_read",
    ] {
        assert!(parse(spec).is_ok(), "{spec}: {:?}", parse(spec).err());
    }
    assert!(parse("").unwrap().is_none());
    assert!(parse("   \t ").unwrap().is_none());
}

/// Long places, as C takes them (found by the hostile-input differential): C
/// keeps the whole symbol (kstrdup) and names the event after its first 63
/// bytes.
#[test]
fn long_places() {
    let sym = format!("mod:{}", "A".repeat(252));
    let line = format!("p {sym}");
    let p = parse(&line).unwrap().unwrap();
    assert_eq!(p.symbol, sym.as_bytes());
    let name = format!("p_mod_{}", "A".repeat(57));
    assert_eq!(p.event.as_bytes(), name.as_bytes());
    let sym = format!("mod:{}", "A".repeat(250));
    let line = format!("p {sym}");
    let p = parse(&line).unwrap().unwrap();
    assert_eq!(p.event.as_bytes(), name.as_bytes());
    // C keeps a place of any length: a module that is not loaded is not
    // looked up (hostile-input lines 9078 and 10989). The line
    // is the bound (4 KiB for a write).
    let sym = format!("mod:{}", "$stack0".repeat(580));
    let line = format!("p:e {sym}+0x10 a=%ax");
    let p = parse(&line).unwrap().unwrap();
    assert_eq!(p.symbol, sym.as_bytes());
    assert_eq!(p.place, Place::Symbol { offset: 16 });
    let line = format!("p {sym}%return");
    let p = parse(&line).unwrap().unwrap();
    assert!(p.is_return);
    let sym = &sym[4..];
    assert_eq!(p.event.as_bytes(), &format!("r_mod_{sym}").as_bytes()[..63]);
}

/// More than `MAX_TOKENS` tokens: C parses the head and the place before it
/// counts the arguments (found by the hostile-input differential).
#[test]
fn many_tokens() {
    let tail = " x".repeat(1023);
    let line = format!("r:{} vfs_read{tail}", "e".repeat(65));
    assert_eq!(error_at(&line).0.code(), Some(Code::EventTooLong));
    let line = format!("r0 vfs_read{tail}");
    assert_eq!(error_at(&line).0.code(), Some(Code::BadMaxact));
    let (e, _) = error_at(&format!("p:g/e vfs_read{tail}"));
    assert_eq!((e.errno, e.code()), (errno::E2BIG, None));
}

/// The `error_log` command of a line with more than `MAX_TOKENS` tokens is
/// the whole line, as C joins all of `argv` (hostile line 19603).
#[test]
fn many_tokens_echo() {
    let tail: std::string::String = (0..1500).map(|i| format!("  x{i}\t")).collect();
    let line = format!("p:{} vfs_read{tail}", "e".repeat(65));
    let mut tokens = std::boxed::Box::new(super::Tokens::new());
    let bytes = line.as_bytes();
    let e = super::parse(
        bytes,
        &mut tokens,
        &crate::fake::FakeEnv,
        std::vec::Vec::new(),
    )
    .err()
    .unwrap();
    assert_eq!(e.code(), Some(Code::EventTooLong));
    let words: std::vec::Vec<&[u8]> = tokens.iter(bytes).collect();
    assert_eq!(words.len(), 1502);
    assert_eq!(words[1], b"vfs_read");
    assert_eq!(words[1025], b"x1023");
    assert_eq!(words[1501], b"x1499");
}

/// `$stackN` and `$argN` go up to the kernel's `THREAD_SIZE / 8`
/// (`PARAM_MAX_STACK`), which [`super::Env::stack_words`] gives: 2048 on
/// the test kernels, 4096 on the KASAN one (`debug`), as C's limit there.
#[test]
fn stack_limit_is_the_kernels() {
    // The fake kernel with a KASAN kernel's stack.
    let env = crate::fake::FakeEnvOn {
        arch: &crate::probe::arch::X86_64,
        stack_words: 4096,
    };
    let kasan = |line: &str| {
        let mut tokens = std::boxed::Box::new(super::Tokens::new());
        super::parse(line.as_bytes(), &mut tokens, &env, std::vec::Vec::new())
            .map(|p| p.is_some())
            .map_err(|e| e.code())
    };
    for spec in [
        "p vfs_read $stack4096",
        "p vfs_read $arg4096",
        "r vfs_read $arg4096",
    ] {
        assert_eq!(kasan(spec), Ok(true), "{spec}");
        check_error(
            &spec.replace("$", "^$").replace("4096", "2049"),
            if spec.contains("stack") {
                Code::BadStackNum
            } else {
                Code::BadArgNum
            },
        );
    }
    assert_eq!(kasan("p vfs_read $stack4097"), Err(Some(Code::BadStackNum)));
    assert_eq!(kasan("p vfs_read $arg4097"), Err(Some(Code::BadArgNum)));
    assert!(parse("p vfs_read $stack2048").is_ok());
    assert!(parse("p vfs_read $arg2048").is_ok());
}

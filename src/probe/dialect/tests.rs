// SPDX-License-Identifier: GPL-2.0-only

//! The two languages side by side: each line answered as 6.12's C and as
//! 7.3's does (`check_error` cases of both releases'
//! `test.d/kprobe/kprobe_syntax_errors.tc`, carets from the C code), and
//! the programs of 7.3's new fetch arguments run on the fake machine.

use super::Dialect::{self, Linux6_12, Linux7_3};
use crate::fake::{error_on, parse_on, FakeEnv, FakeMachine, InDialect};
use crate::probe::error::{errno, Code};
use crate::probe::insn::Op;
use std::format;
use std::string::String;
use std::vec::Vec;

/// The error `line` gets in dialect `d`: errno, code, caret column (where
/// `^` is in `spec`, which is removed from the line).
#[track_caller]
fn check(d: Dialect, spec: &str, errno: i32, code: Option<Code>) {
    let line = spec.replacen('^', "", 1);
    let (e, at, _) = error_on(&InDialect(FakeEnv, d), &line);
    assert_eq!((e.errno, e.code()), (errno, code), "{d:?} {spec}");
    if code.is_some() {
        assert_eq!(at, spec.find('^'), "{d:?} {spec}: caret");
    }
}

#[track_caller]
fn accepts(d: Dialect, line: &str) -> Vec<Op> {
    let env = InDialect(FakeEnv, d);
    let p = parse_on(&env, line)
        .unwrap_or_else(|e| panic!("{d:?} {line}: {e:?}"))
        .unwrap();
    p.args[0].program().map(|i| i.op).collect()
}

#[test]
fn nesting() {
    // 7.3's selftest: the 9th level is TOO_MANY_NESTED, at it; 6.12
    // accepts it.
    let nine = "p vfs_read +0(+0(+0(+0(+0(+0(+0(+0(^+0(@0)))))))))";
    check(Linux7_3, nine, errno::E2BIG, Some(Code::TooManyNested));
    accepts(Linux6_12, &nine.replace('^', ""));
    // Eight are fine in both.
    let eight = "p vfs_read +0(+0(+0(+0(+0(+0(+0(+0(@0))))))))";
    for d in Dialect::ALL {
        accepts(d, eight);
    }
    // 6.12's selftest: TOO_MANY_OPS at the 2nd level, from 14 levels on
    // (7.3 stops at the 9th).
    let many = "p vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))";
    check(Linux6_12, many, errno::EINVAL, Some(Code::TooManyOps));
    check(
        Linux7_3,
        "p vfs_read +0(+0(+0(+0(+0(+0(+0(+0(^+0(+0(+0(+0(+0(+0(@0))))))))))))))",
        errno::E2BIG,
        Some(Code::TooManyNested),
    );
    // this_cpu_*( counts as a level.
    check(
        Linux7_3,
        "p vfs_read this_cpu_read(+0(+0(+0(+0(+0(+0(+0(^+0(@0)))))))))",
        errno::E2BIG,
        Some(Code::TooManyNested),
    );
}

#[test]
fn argument_length() {
    // 64 to 255 bytes: too long in 6.12 only.
    let body = format!("+0({}%di)", "+0(".repeat(0));
    let long = format!("{}{}", "+0x0000000000000000(".repeat(3), body) + &")".repeat(3);
    assert!(long.len() > 63 && long.len() <= 255, "{}", long.len());
    let line = format!("p vfs_read ^{long}");
    check(Linux6_12, &line, errno::E2BIG, Some(Code::ArgTooLong));
    accepts(Linux7_3, &line.replace('^', ""));
    // 7.3's selftest: a 291-byte argument.
    let arg = format!("{}@1234{}", "+1234567(".repeat(26), ")".repeat(26));
    for d in Dialect::ALL {
        check(
            d,
            &format!("p vfs_read ^{arg}"),
            errno::E2BIG,
            Some(Code::ArgTooLong),
        );
    }
}

#[test]
fn too_many_arguments() {
    let many = |n: usize| {
        let mut s = String::from("p vfs_read");
        for i in 0..n {
            s.push_str(&format!(" a{i}=\\{i}"));
        }
        s
    };
    // 129: logged at the first argument in 7.3, not logged in 6.12.
    let line = many(129);
    let (e, at, _) = error_on(&InDialect(FakeEnv, Linux6_12), &line);
    assert_eq!((e.errno, e.code(), at), (errno::E2BIG, None, None));
    let (e, at, _) = error_on(&InDialect(FakeEnv, Linux7_3), &line);
    assert_eq!(
        (e.errno, e.code(), at),
        (
            errno::E2BIG,
            Some(Code::TooManyArgs),
            Some("p vfs_read ".len())
        )
    );
    for d in Dialect::ALL {
        accepts(d, &many(128));
    }
}

#[test]
fn overflowing_numbers() {
    for v in ["$stack", "$arg"] {
        let over = format!("p vfs_read ^{v}99999999999999999999");
        check(Linux6_12, &over, errno::EINVAL, Some(Code::BadVar));
        check(Linux7_3, &over, errno::ERANGE, Some(Code::BadVar));
        // Not a number: EINVAL in both.
        for d in Dialect::ALL {
            check(
                d,
                &format!("p vfs_read ^{v}1x"),
                errno::EINVAL,
                Some(Code::BadVar),
            );
        }
    }
    // $arg with trailing garbage after an overflow: ERANGE first.
    check(
        Linux7_3,
        "p vfs_read ^$arg99999999999999999999x",
        errno::ERANGE,
        Some(Code::BadVar),
    );
}

#[test]
fn typecasts_without_btf() {
    // 6.12: no fetch method; 7.3: NOSUP_BTFARG, as C without BTF.
    check(
        Linux6_12,
        "p vfs_read ^(task_struct)file->pid",
        errno::EINVAL,
        Some(Code::BadFetchArg),
    );
    check(
        Linux7_3,
        "p vfs_read ^(task_struct)file->pid",
        errno::EOPNOTSUPP,
        Some(Code::NosupBtfarg),
    );
    check(
        Linux7_3,
        "p vfs_read +8(^(task_struct)file->pid)",
        errno::EOPNOTSUPP,
        Some(Code::NosupBtfarg),
    );
}

#[test]
fn current() {
    assert_eq!(
        accepts(Linux7_3, "p vfs_read $current"),
        [Op::Current, Op::StRaw, Op::End]
    );
    assert_eq!(
        accepts(Linux7_3, "r vfs_read +16($current):u32"),
        [Op::Current, Op::StMem, Op::End]
    );
    check(
        Linux6_12,
        "p vfs_read ^$current",
        errno::EINVAL,
        Some(Code::BadVar),
    );
    for bad in ["$currentx", "$current->pid", "$current.pid"] {
        check(
            Linux7_3,
            &format!("p vfs_read ^{bad}"),
            errno::EINVAL,
            Some(Code::BadVar),
        );
    }
    check(
        Linux7_3,
        "p vfs_read $current:^string",
        errno::EINVAL,
        Some(Code::BadString),
    );
    check(
        Linux7_3,
        "p vfs_read $current:^symstr",
        errno::EINVAL,
        Some(Code::BadSymstring),
    );
    // The default type is x64.
    let env = InDialect(FakeEnv, Linux7_3);
    let p = parse_on(&env, "p vfs_read $current").unwrap().unwrap();
    assert_eq!(p.args[0].ty.get().name, "x64");
}

#[test]
fn this_cpu() {
    assert_eq!(
        accepts(Linux7_3, "p vfs_read this_cpu_ptr(%di)"),
        [Op::Reg, Op::CpuPtr, Op::StRaw, Op::End]
    );
    assert_eq!(
        accepts(Linux7_3, "p vfs_read this_cpu_read(%di)"),
        [Op::Reg, Op::CpuPtr, Op::StMem, Op::End]
    );
    // With @ inside, the CPU offset replaces the dereference.
    assert_eq!(
        accepts(Linux7_3, "p vfs_read this_cpu_ptr(@0x1000)"),
        [Op::Imm, Op::CpuPtr, Op::StRaw, Op::End]
    );
    assert_eq!(
        accepts(Linux7_3, "p vfs_read this_cpu_read(@linux_proc_banner):u32"),
        [Op::Imm, Op::CpuPtr, Op::StMem, Op::End]
    );
    assert_eq!(
        accepts(Linux7_3, "p vfs_read +8(this_cpu_read(+0(%di))):string"),
        [
            Op::Reg,
            Op::Deref,
            Op::CpuPtr,
            Op::Deref,
            Op::StString,
            Op::End
        ]
    );
    // The last `)` closes.
    check(
        Linux7_3,
        "p vfs_read this_cpu_ptr(^%di))",
        errno::EINVAL,
        Some(Code::BadRegName),
    );
    check(
        Linux7_3,
        "p vfs_read this_cpu_ptr(%di^",
        errno::EINVAL,
        Some(Code::DerefOpenBrace),
    );
    check(
        Linux7_3,
        "p vfs_read this_cpu_ptr(^)",
        errno::EINVAL,
        Some(Code::BadFetchArg),
    );
    check(
        Linux7_3,
        "p vfs_read this_cpu_read(^$comm)",
        errno::EINVAL,
        Some(Code::CommCantDeref),
    );
    // A type the last op cannot feed: the caret at the type's offset
    // from where C's `ctx->offset` stays, after the outermost prefix (as
    // after a dereference): past the end of this line.
    for (ty, code) in [("string", Code::BadString), ("symstr", Code::BadSymstring)] {
        let line = format!("p vfs_read this_cpu_ptr(%di):{ty}");
        let (e, at, _) = error_on(&InDialect(FakeEnv, Linux7_3), &line);
        assert_eq!((e.errno, e.code()), (errno::EINVAL, Some(code)));
        let type_offset = "this_cpu_ptr(%di):".len();
        assert_eq!(
            at,
            Some("p vfs_read ".len() + "this_cpu_ptr(".len() + type_offset)
        );
    }
    // 6.12: a BTF variable name, and there is no BTF.
    check(
        Linux6_12,
        "p vfs_read ^this_cpu_ptr(%di)",
        errno::EOPNOTSUPP,
        Some(Code::NosupBtfarg),
    );
}

#[test]
fn file_offset_text() {
    for d in Dialect::ALL {
        check(
            d,
            "p vfs_read ^@+10",
            errno::EINVAL,
            Some(Code::FileOnKprobe),
        );
    }
    assert_ne!(
        Linux6_12.text(Code::FileOnKprobe),
        Linux7_3.text(Code::FileOnKprobe)
    );
}

/// The new programs on the machine: `$current` and the current CPU's copy
/// of a per-CPU variable, read and pointed at.
#[test]
fn new_fetches_run() {
    use crate::probe::fetch::store;
    use crate::probe::format::head_size;
    let env = InDialect(FakeEnv, Linux7_3);
    let line = concat!(
        "p vfs_read cur=$current pid=+8($current):u32 ptr=this_cpu_ptr(%di) ",
        "val=this_cpu_read(%di):u64 sym=this_cpu_read(@0x100):u16"
    );
    let p = parse_on(&env, line).unwrap().unwrap();
    let mut m = FakeMachine::new();
    m.current = 0xffff_8880_0000_1000;
    m.cpu_offset = 0xffff_8881_0000_0000;
    m.set("di", 0x40);
    m.kmem
        .push((0xffff_8880_0000_1008, 1234u32.to_ne_bytes().to_vec()));
    m.kmem.push((
        0xffff_8881_0000_0040,
        0xdead_beef_u64.to_ne_bytes().to_vec(),
    ));
    m.kmem
        .push((0xffff_8881_0000_0100, 77u16.to_ne_bytes().to_vec()));
    let mut buf = std::vec![0u8; p.size + 64];
    store(&p.args, p.size, &m, &[], head_size(false), &mut buf);
    let word = |at: usize, n: usize| {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&buf[at..at + n]);
        u64::from_ne_bytes(b)
    };
    let off = |i: usize| p.args[i].offset as usize;
    assert_eq!(word(off(0), 8), 0xffff_8880_0000_1000);
    assert_eq!(word(off(1), 4), 1234);
    assert_eq!(word(off(2), 8), 0xffff_8881_0000_0040);
    assert_eq!(word(off(3), 8), 0xdead_beef);
    assert_eq!(word(off(4), 2), 77);
}

#[test]
fn texts_differ_where_c_does() {
    let (old, new) = (Dialect::Linux6_12, Dialect::Linux7_3);
    assert_eq!(
        old.text(Code::FileOnKprobe),
        "File offset is not available with kprobe"
    );
    assert_eq!(
        new.text(Code::FileOnKprobe),
        "File offset is not available for kernel probes"
    );
    let differ = Code::ALL
        .iter()
        .filter(|&&c| old.text(c) != new.text(c))
        .count();
    assert_eq!(differ, 1);
    assert_eq!(new.max_argstr_len(), 255);
    assert_eq!(old.max_argstr_len(), 63);
}

/// `$current->FIELD...` with BTF: `task_struct`'s fields, at any probe
/// location, typed from BTF.
#[test]
fn current_fields_with_btf() {
    use crate::fake::{layout, FakeBtfEnv};
    let env = InDialect(FakeBtfEnv::new(), Linux7_3);
    let p = parse_on(
        &env,
        concat!(
            "p vfs_read+8 pid=$current->pid comm=$current->comm:string ",
            "ppid=$current->real_parent->pid $current->in_execve"
        ),
    )
    .unwrap()
    .unwrap();
    let ops =
        |i: usize| -> Vec<(Op, i64)> { p.args[i].program().map(|c| (c.op, c.offset)).collect() };
    let pid = i64::from(layout::TASK_PID);
    assert_eq!(ops(0), [(Op::Current, 0), (Op::StMem, pid), (Op::End, 0)]);
    assert_eq!(p.args[0].ty.get().name, "s32");
    assert_eq!(
        ops(1)[..2],
        [
            (Op::Current, 0),
            (Op::StString, i64::from(layout::TASK_COMM))
        ]
    );
    assert_eq!(
        ops(2),
        [
            (Op::Current, 0),
            (Op::Deref, i64::from(layout::TASK_REAL_PARENT)),
            (Op::StMem, pid),
            (Op::End, 0)
        ]
    );
    // A bitfield: its bits kept; the name generated from the text.
    assert_eq!(p.args[3].name(), b"arg4");
    assert_eq!(ops(3)[2].0, Op::ModBf);
    // Not a field of task_struct; `.` after `$current`; a hyphen.
    let e = InDialect(FakeBtfEnv::new(), Linux7_3);
    let (err, at, _) = error_on(&e, "p vfs_read $current->nope");
    assert_eq!(
        (err.errno, err.code()),
        (errno::ENOENT, Some(Code::NoBtfField))
    );
    assert_eq!(at, Some("p vfs_read $current->".len()));
    let (err, at, _) = error_on(&e, "p vfs_read $current-pid");
    assert_eq!(err.code(), Some(Code::BadHyphen));
    assert_eq!(at, Some("p vfs_read $current".len()));
    let (err, _, _) = error_on(&e, "p vfs_read $current.pid");
    assert_eq!(err.code(), Some(Code::BadVar));
    // 6.12 has no $current, BTF or not.
    let old = InDialect(FakeBtfEnv::new(), Linux6_12);
    let (err, _, _) = error_on(&old, "p vfs_read $current->pid");
    assert_eq!(err.code(), Some(Code::BadVar));
}

/// Numbers `simple_strtoul()` reads: 6.12 wraps an overflow, 7.3
/// saturates (a bitfield's width, a `$argN` that BTF expands).
#[test]
fn simple_strtoul_overflow() {
    use crate::fake::FakeBtfEnv;
    // 2^64 + 1 wraps to 1: a 1-bit field in 6.12; BAD_BITFIELD in 7.3.
    let line = "p vfs_read %di:b18446744073709551617@0/32";
    accepts(Linux6_12, line);
    check(
        Linux7_3,
        "p vfs_read %di:^b18446744073709551617@0/32",
        errno::EINVAL,
        Some(Code::BadBitfield),
    );
    // An offset that makes `bw + bo` wrap is taken, in both (C adds
    // unsigned longs).
    for d in Dialect::ALL {
        accepts(d, "p vfs_read %di:b4@18446744073709551615/32");
    }
    // $arg(2^64 + 1): the first parameter in 6.12; in 7.3 the number
    // saturates, is -1 as an int, and C reads before the parameters (the
    // module answers as if it found no name there).
    let old = InDialect(FakeBtfEnv::new(), Linux6_12);
    let p = parse_on(&old, "p vfs_read $arg18446744073709551617")
        .unwrap()
        .unwrap();
    assert_eq!(p.args[0].name(), b"file");
    let new = InDialect(FakeBtfEnv::new(), Linux7_3);
    let (e, _, _) = error_on(&new, "p vfs_read $arg18446744073709551617");
    assert_eq!((e.errno, e.code()), (errno::ENOENT, Some(Code::NoBtfEntry)));
}

/// Typecasts (7.3, BTF arguments, function entry and exit): 7.3's
/// selftest checks with its carets, and the casts its
/// `btf_typecast_accepted.tc` defines, compiled to the programs a user
/// would write by hand.
#[test]
fn typecasts() {
    use crate::fake::{layout, FakeBtfEnv};
    let env = InDialect(FakeBtfEnv::new(), Linux7_3);
    let check_btf = |spec: &str, errno: i32, code: Code| {
        let line = spec.replacen('^', "", 1);
        let (e, at, _) = error_on(&env, &line);
        assert_eq!((e.errno, e.code()), (errno, Some(code)), "{spec}");
        assert_eq!(at, spec.find('^'), "{spec}: caret");
    };
    let inval = errno::EINVAL;
    for (spec, errno, code) in [
        (
            "p vfs_read arg1=(task_struct)file^",
            inval,
            Code::TypecastReqField,
        ),
        (
            concat!(
                "p vfs_read arg1=(a)((b)((c)((d)((e)((f)((g)((h)(^(i)file->i)",
                "->h)->g)->f)->e)->d)->c)->b)->a"
            ),
            errno::E2BIG,
            Code::TooManyNested,
        ),
        (
            "p vfs_read arg1=(task_struct,^in_execve)file->comm",
            inval,
            Code::TypecastNotAligned,
        ),
        (
            "p vfs_read arg1=(task_struct,^foo_bar)file->pid",
            errno::ENOENT,
            Code::NoBtfField,
        ),
        (
            "p vfs_read arg1=(^task_struct1234)file->pid",
            inval,
            Code::NoPtrStrct,
        ),
        (
            "p vfs_read arg1=(task_struct,se^->group_node)file->comm",
            inval,
            Code::TypecastBadArrow,
        ),
        (
            "p vfs_read arg1=(task_struct,^->pid)file->comm",
            errno::ENOENT,
            Code::NoBtfField,
        ),
        (
            "p vfs_read arg1=(task_struct,^.pid)file->comm",
            errno::ENOENT,
            Code::NoBtfField,
        ),
        (
            "p vfs_read arg1=(task_struct,^.)file->comm",
            errno::ENOENT,
            Code::NoBtfField,
        ),
        (
            "p vfs_read arg1=(task_struct)^@symbol+10->comm",
            inval,
            Code::TypecastSymOffset,
        ),
        // Off function entry and exit: not available.
        (
            "p vfs_read+8 arg1=^(task_struct)file->pid",
            errno::EOPNOTSUPP,
            Code::NosupBtfarg,
        ),
        // The other shapes' errors.
        ("p vfs_read arg1=(task_struct^", inval, Code::DerefOpenBrace),
        (
            "p vfs_read arg1=(task_struct)^(file->pid",
            inval,
            Code::DerefOpenBrace,
        ),
        (
            "p vfs_read arg1=(task_struct)(file)^",
            inval,
            Code::TypecastReqField,
        ),
        (
            "p vfs_read arg1=(task_struct)^+8",
            inval,
            Code::DerefNeedBrace,
        ),
        (
            "p vfs_read arg1=(task_struct)+8(file^",
            inval,
            Code::DerefOpenBrace,
        ),
        (
            "p vfs_read arg1=(task_struct)+8(file)^",
            inval,
            Code::TypecastReqField,
        ),
        (
            "p vfs_read arg1=(task_struct)file->^nope",
            errno::ENOENT,
            Code::NoBtfField,
        ),
        (
            "p vfs_read arg1=(task_struct)file->pid->^x",
            inval,
            Code::NoPtrStrct,
        ),
    ] {
        check_btf(spec, errno, code);
    }
    let ops = |line: &str| -> Vec<Vec<(Op, i64)>> {
        let p = parse_on(&env, line)
            .unwrap_or_else(|e| panic!("{line}: {e:?}"))
            .unwrap();
        p.args
            .iter()
            .map(|a| a.program().map(|c| (c.op, c.offset)).collect())
            .collect()
    };
    let same = |cast: &str, by_hand: &str| assert_eq!(ops(cast), ops(by_hand), "{cast}");
    let name = i64::from(layout::DENTRY_D_NAME + layout::QSTR_NAME);
    let dentry = i64::from(layout::FILE_F_PATH + layout::PATH_DENTRY);
    let via = format!("+0(+{name}(+{dentry}($arg1))):string");
    same(
        "p vfs_read n=(file)file->f_path.dentry->d_name.name:string",
        &format!("p vfs_read n={via}"),
    );
    same(
        "p vfs_read n=(file)(file)->f_path.dentry->d_name.name:string",
        &format!("p vfs_read n={via}"),
    );
    same(
        "p vfs_read n=(dentry)((file)file->f_path.dentry)->d_name.name:string",
        &format!("p vfs_read n={via}"),
    );
    // container_of(): f_mode relative to f_path.
    let rel = i64::from(layout::FILE_F_MODE) - i64::from(layout::FILE_F_PATH);
    assert_eq!(
        ops("p vfs_read m=(file,f_path)file->f_mode")[0],
        [(Op::Reg, 0), (Op::StMem, rel), (Op::End, 0)]
    );
    let pid = i64::from(layout::TASK_PID);
    same(
        "p vfs_read pid=(task_struct)$current->pid",
        "p vfs_read pid=$current->pid",
    );
    let rel = pid - i64::from(layout::TASK_GROUP_LEADER);
    assert_eq!(
        ops("p vfs_read pid=(task_struct,group_leader)$current->pid")[0],
        [(Op::Current, 0), (Op::StMem, rel), (Op::End, 0)]
    );
    // After a dereference and inside this_cpu_read(); at a return.
    same(
        "p vfs_read x=(task_struct)+8(%di)->pid",
        &format!("p vfs_read x=+{pid}(+8(%di)):s32"),
    );
    same(
        "p vfs_read x=this_cpu_read((task_struct)%di->pid)",
        &format!("p vfs_read x=this_cpu_read(+{pid}(%di))"),
    );
    assert_eq!(
        ops("r vfs_read x=(task_struct)$retval->pid")[0][0],
        (Op::Retval, 0)
    );
    // The type comes from BTF: pid_t is s32.
    let p = parse_on(&env, "p vfs_read (task_struct)file->pid")
        .unwrap()
        .unwrap();
    assert_eq!(p.args[0].ty.get().name, "s32");
    // 6.12 has no typecasts: no fetch method.
    let old = InDialect(FakeBtfEnv::new(), Linux6_12);
    let (e, _, _) = error_on(&old, "p vfs_read (task_struct)file->pid");
    assert_eq!(e.code(), Some(Code::BadFetchArg));
}

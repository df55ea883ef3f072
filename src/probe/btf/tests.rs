// SPDX-License-Identifier: GPL-2.0-only

//! BTF arguments against the fake kernel's BTF ([`FakeBtfEnv`], Linux 6.12
//! x86-64 types): names, `$arg` expansion, fields, types, strings,
//! bitfields, `$retval`, every error with its errno and caret, and the
//! upstream selftests' kprobe lines (`kprobe_syntax_errors.tc` BTF block,
//! `add_remove_btfarg.tc`).

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::super::arg::Arg;
use super::super::error::{errno, Code};
use super::super::format::{fields, readback};
use super::super::insn::Op;
use super::super::types::TypeId;
use super::{find_struct_member, skip_modifiers, Btf, NotStruct};
use crate::fake::{error_on, layout, parse_on, FakeBtf, FakeBtfEnv, FakeEnv};

/// Parses `line` on the BTF kernel; panics on an error.
fn probe_args(line: &str) -> Vec<Arg> {
    let env = FakeBtfEnv::new();
    match parse_on(&env, line) {
        Ok(Some(p)) => p.args,
        other => panic!("{line}: {:?}", other.err()),
    }
}

/// `(name, text, type)` of each argument.
fn described(line: &str) -> Vec<(String, String, &'static str)> {
    probe_args(line)
        .iter()
        .map(|a| {
            (
                String::from_utf8_lossy(a.name()).into_owned(),
                String::from_utf8_lossy(a.comm()).into_owned(),
                a.ty.get().name,
            )
        })
        .collect()
}

/// The program of an argument: `(op, offset, param, size)` up to the end.
/// What `$argN` (0-based `n`, in a register) compiles to at an entry: the
/// register (x86-64's `di`, `si`, `dx`, `cx`, `r8`, `r9`).
fn arg(n: usize) -> (Op, i64, u16, u8) {
    (Op::Reg, 0, [112, 104, 96, 88, 72, 64][n], 0)
}

fn program(a: &Arg) -> Vec<(Op, i64, u16, u8)> {
    a.program()
        .map(|i| (i.op, i.offset, i.param, i.size))
        .collect()
}

/// `check_error` on the BTF kernel: the code, the errno, and the caret
/// where `^` is.
#[track_caller]
fn check(spec: &str, code: Code, errno: i32) {
    let env = FakeBtfEnv::new();
    let pos = spec.find('^').expect("spec has a ^");
    let line = spec.replacen('^', "", 1);
    let (e, at, _) = error_on(&env, &line);
    assert_eq!((e.code(), e.errno), (Some(code), errno), "{spec}: {e:?}");
    assert_eq!(at, Some(pos), "{spec}: caret");
}

/// The error, caret and `error_log` command of `line` on the BTF kernel.
fn error(line: &str) -> (Option<Code>, i32, Option<usize>, String) {
    let env = FakeBtfEnv::new();
    let (e, at, cmd) = error_on(&env, line);
    (e.code(), e.errno, at, cmd)
}

#[test]
fn helpers() {
    let env = FakeBtfEnv::new();
    let b: &FakeBtf = &env.vmlinux;
    // struct file's f_path.dentry at the offset %pD uses.
    let func = crate::probe::env::Env::btf_func(&env, b"vfs_read").unwrap();
    assert_eq!(func.nr_params(), 4);
    assert_eq!(b.name(func.param(0).unwrap().name_off), Some(&b"file"[..]));
    let (_, file_p) = skip_modifiers(b, func.param(0).unwrap().ty).unwrap();
    let (_, file) = skip_modifiers(b, file_p[2]).unwrap();
    let m = find_struct_member(b, file, b"f_path").unwrap().unwrap();
    assert_eq!(m.offset / 8, layout::FILE_F_PATH);
    // A member of an anonymous union: its offset comes separately.
    let m = find_struct_member(b, file, b"f_pipe").unwrap().unwrap();
    assert_eq!((m.anon_offset / 8, m.offset), (0x50, 0));
    assert_eq!(find_struct_member(b, file, b"nope"), Ok(None));
    assert_eq!(find_struct_member(b, file_p, b"f_path"), Err(NotStruct));
    // ssize_t -> __kernel_ssize_t -> long.
    let (id, long) = skip_modifiers(b, func.return_type()).unwrap();
    assert_eq!((id, b.name(long[0])), (4, Some(&b"long int"[..])));
    assert!(skip_modifiers(b, 100_000).is_none());
    assert!(crate::probe::env::Env::btf_func(&env, b"loaded_mod:mod_func").is_none());
    assert!(crate::probe::env::Env::btf_func(&env, b"mod_func").is_some());
}

/// `kprobe_syntax_errors.tc` (6.12), the block run when the README has
/// `<argname>`: every line answers with the caret there.
#[test]
fn syntax_errors_selftest_btf_block() {
    check("p vfs_read args=^$arg*", Code::BadVar, errno::EINVAL);
    check("p vfs_read +0(^$arg*)", Code::BadVar, errno::EINVAL);
    check("p vfs_read $arg* ^$arg*", Code::DoubleArgs, errno::EINVAL);
    check("p vfs_read+20 ^$arg*", Code::NofentryArgs, errno::EINVAL);
    check("p vfs_read ^hoge", Code::NoBtfarg, errno::ENOENT);
    check("p kfree ^$arg10", Code::NoBtfarg, errno::ENOENT);
    check("r kfree ^$retval", Code::NoRetval, errno::ENOENT);
    // Skipped upstream where the README mentions return probes' $arg
    // support, as 6.12's does: a return probe expands $arg* too.
    let args = described("r vfs_read $arg*");
    assert_eq!(args.len(), 4);
}

/// `add_remove_btfarg.tc` (6.12), its kprobe part: the read-back lines.
#[test]
fn add_remove_btfarg_selftest() {
    for line in ["p:kpevent kfree object", "p:kpevent kfree $arg*"] {
        let env = FakeBtfEnv::new();
        let p = parse_on(&env, line).unwrap().unwrap();
        let mut s = String::new();
        readback(&mut s, &p, p.names(), 0, 0).unwrap();
        assert_eq!(s, "p:kprobes/kpevent kfree object=object\n", "{line}");
    }
}

#[test]
fn generated_names() {
    // The text up to ':' if it is a good name, else argN.
    assert_eq!(
        described("p vfs_read file count:u32 %ax +0(%si):x8 $arg2"),
        [
            ("file".into(), "file".into(), "x64"),
            ("count".into(), "count:u32".into(), "u32"),
            ("arg3".into(), "%ax".into(), "x64"),
            ("arg4".into(), "+0(%si):x8".into(), "x8"),
            ("buf".into(), "buf".into(), "x64"),
        ]
    );
    check("p vfs_read %ax ^arg1", Code::UsedArgName, errno::EINVAL);
    check("p vfs_read ^common_pid", Code::UsedArgName, errno::EINVAL);
    check("p vfs_read file ^file:u8", Code::UsedArgName, errno::EINVAL);
    // A chain is not a name.
    assert_eq!(described("p vfs_read file->f_pos")[0].0, "arg1");
    // No 32-byte limit for a generated name: 63 bytes is a name (and then
    // not a parameter); longer, the argument is too long.
    let name = "a".repeat(63);
    check(
        &format!("p vfs_read ^{name}"),
        Code::NoBtfarg,
        errno::ENOENT,
    );
    let name = "a".repeat(64);
    check(
        &format!("p vfs_read ^{name}"),
        Code::ArgTooLong,
        errno::E2BIG,
    );
    check(
        &format!("p vfs_read arg2=%ax ^{name}"),
        Code::ArgTooLong,
        errno::E2BIG,
    );
    // `NAME=` keeps its 32-byte limit.
    let name = "a".repeat(33);
    check(
        &format!("p vfs_read ^{name}=file"),
        Code::ArgNameTooLong,
        errno::EINVAL,
    );
    // Without BTF arguments, argN as before.
    let p = parse_on(&FakeEnv, "p vfs_read %ax $arg1").unwrap().unwrap();
    assert_eq!(p.args[1].name(), b"arg2");
}

#[test]
fn expansion() {
    let all = described("p vfs_read $arg*");
    let names: Vec<&str> = all.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(names, ["file", "buf", "count", "pos"]);
    let types: Vec<&str> = all.iter().map(|a| a.2).collect();
    assert_eq!(types, ["x64", "x64", "u64", "x64"]);
    let args = probe_args("p vfs_read $arg*");
    for (i, a) in args.iter().enumerate() {
        assert_eq!(program(a)[0], arg(i));
    }
    // At a return, through the entry data.
    let env = FakeBtfEnv::new();
    let p = parse_on(&env, "r vfs_read $arg4 $arg2").unwrap().unwrap();
    assert_eq!(p.entry.args(), &[3, 1]);
    assert_eq!(program(&p.args[0])[0], (Op::Edata, 0, 0, 0));
    assert_eq!(program(&p.args[1])[0], (Op::Edata, 8, 0, 0));
    check("r vfs_read $arg4 ^pos", Code::UsedArgName, errno::EINVAL);
    // `$argN:TYPE` keeps the type.
    assert_eq!(
        described("p vfs_read $arg3:x32 $arg1"),
        [
            ("count".into(), "count:x32".into(), "x32"),
            ("file".into(), "file".into(), "x64"),
        ]
    );
    // `$arg*` with anything after the `*` is `$arg*`.
    assert_eq!(described("p vfs_read $arg*foo").len(), 4);
    // `name=$argN` and `$argN` inside an expression are not expanded.
    let args = probe_args("p vfs_read x=$arg2 +0($arg1)");
    assert_eq!(program(&args[0])[0], arg(1));
    assert_eq!(args[1].name(), b"arg2");
    // simple_strtoul() into an int: 2^32 + 1 is 1.
    assert_eq!(described("p vfs_read $arg4294967297")[0].0, "file");

    check("p vfs_read ^$arg1x", Code::BadVar, errno::ENOENT);
    check("p vfs_read ^$arg1=x", Code::BadVar, errno::ENOENT);
    check("p vfs_read ^$arg0", Code::BadArgNum, errno::EINVAL);
    check("p vfs_read ^$arg5", Code::NoBtfarg, errno::ENOENT);
    check("p vfs_read ^$arg10000", Code::NoBtfarg, errno::ENOENT);
    // INT_MIN: n - 1 wraps to INT_MAX.
    check("p vfs_read ^$arg2147483648", Code::NoBtfarg, errno::ENOENT);
    // Negative: C reads before the parameters; taken as no name.
    check(
        "p vfs_read ^$arg4294967295",
        Code::NoBtfEntry,
        errno::ENOENT,
    );
    check("p vfs_read ^$argx", Code::BadVar, errno::EINVAL);
    check("p vfs_read ^$arg", Code::BadVar, errno::EINVAL);
    check("p vfs_read+8 ^$arg1", Code::NofentryArgs, errno::EINVAL);
    check("p 0x1000 ^$arg*", Code::NofentryArgs, errno::EINVAL);
    // The names take 128 bytes at most, NULs included.
    let t = "x".repeat(60);
    check(
        &format!("p vfs_read $arg3:{t} ^$arg3:{t}"),
        Code::Args2long,
        errno::E2BIG,
    );
    let t = "x".repeat(122);
    check(
        &format!("p vfs_read ^$arg3:{t}"),
        Code::Args2long,
        errno::E2BIG,
    );
    // One byte less fits; the argument is then too long.
    let t = "x".repeat(121);
    check(
        &format!("p vfs_read ^$arg3:{t}"),
        Code::ArgTooLong,
        errno::E2BIG,
    );
}

#[test]
fn expansion_without_btf() {
    // No BTF for the function: $arg* is not supported, $argN stays.
    check(
        "p tracefs_create_dir $arg2 ^$arg*",
        Code::NosupBtfarg,
        errno::EOPNOTSUPP,
    );
    check(
        "p tracefs_create_dir $arg* ^$arg1",
        Code::NosupBtfarg,
        errno::EOPNOTSUPP,
    );
    check(
        "p loaded_mod:mod_func ^$arg*",
        Code::NosupBtfarg,
        errno::EOPNOTSUPP,
    );
    let args = probe_args("p tracefs_create_dir $arg2");
    assert_eq!(
        (args[0].name(), program(&args[0])[0].0),
        (&b"arg1"[..], Op::Reg)
    );
    // A function without parameters: no expansion either...
    check("p schedule ^$arg*", Code::NosupBtfarg, errno::EOPNOTSUPP);
    assert_eq!(probe_args("p schedule $arg1")[0].name(), b"arg1");
    // ... and a name is NO_BTF_ENTRY the first time, NO_BTFARG once a
    // query found the BTF (C's ctx->btf stays set).
    check("p schedule ^foo", Code::NoBtfEntry, errno::ENOENT);
    check("p schedule $arg1 ^foo", Code::NoBtfarg, errno::ENOENT);
    check("r schedule ^$retvalx", Code::NoBtfEntry, errno::ENOENT);
    // A module function's BTF is found by its name without the module.
    assert_eq!(
        described("p mod_func $arg*"),
        [
            ("state".into(), "state".into(), "s32"),
            ("obj".into(), "obj".into(), "x64"),
        ]
    );
}

/// After expansion C logs the line as written, with the caret at the
/// expanded argument's index (past the written ones: the end of the line)
/// and offset.
#[test]
fn expansion_carets() {
    // `$arg1` became `file`; `$arg*`'s first name is `file` again: the
    // 2nd expanded argument, the 2nd written one.
    let (code, _, at, cmd) = error("p vfs_read $arg1 $arg*");
    assert_eq!((code, at), (Some(Code::UsedArgName), Some(17)));
    assert_eq!(cmd, "p vfs_read $arg1 $arg*");
    // The 5th expanded argument, past the 3 written: after the line and
    // its NUL.
    let line = "p vfs_read $arg* file";
    let (code, _, at, _) = error(line);
    assert_eq!((code, at), (Some(Code::UsedArgName), Some(line.len() + 1)));
    // The offset is in the expanded text (`file:u8[10`), applied to the
    // written token (`$arg1:u8[10`).
    let (code, _, at, _) = error("p vfs_read $arg1:u8[10");
    assert_eq!((code, at), (Some(Code::ArrayNoClose), Some(11 + 10)));
    // An error in the expansion itself is at the written token.
    check("p vfs_read $arg* %ax ^$arg9", Code::NoBtfarg, errno::ENOENT);
}

#[test]
fn expansion_limit() {
    // 125 more arguments: 129 once $arg* is 4, E2BIG without a log.
    let line = |n: usize| {
        let mut s = "p vfs_read $arg*".to_string();
        for i in 0..n {
            s.push_str(&format!(" a{i}=\\{i}"));
        }
        s
    };
    let env = FakeBtfEnv::new();
    let (e, at, _) = error_on(&env, &line(125));
    assert_eq!((e.errno, e.code(), at), (errno::E2BIG, None, None));
    assert_eq!(parse_on(&env, &line(124)).unwrap().unwrap().args.len(), 128);
}

#[test]
fn dentry_rewrite_after_expansion() {
    // The %pd rewrite edits the expanded argument; the log shows the line
    // as written.
    let args = probe_args("p dput $arg1:%pd");
    assert_eq!(args[0].comm(), b"+0x0(+0x28(dentry)):string");
    assert_eq!(args[0].name(), b"arg1");
    let (code, _, at, cmd) = error("p dput $arg1:%pd foo");
    assert_eq!(cmd, "p dput $arg1:%pd foo");
    assert_eq!((code, at), (Some(Code::NoBtfarg), Some(17)));
    // Without expansion, the log shows the rewritten text, as without BTF.
    let (_, _, at, cmd) = error("p dput dentry:%pd foo");
    assert_eq!(cmd, "p dput +0x0(+0x28(dentry)):string foo");
    assert_eq!(at, Some(cmd.len() - 3));
    // Both read the name as %pd does.
    assert_eq!(
        program(&args[0]),
        program(&probe_args("p dput dentry:%pd")[0])
    );
}

#[test]
fn names_and_fields() {
    // A parameter is what $argN fetches.
    let args = probe_args("p vfs_read file count pos");
    assert_eq!(program(&args[1])[0], arg(2));
    assert_eq!(args[1].ty, TypeId::find(b"u64").unwrap());
    // One dereference per `->`, `.` adding offsets.
    let a = &probe_args("p vfs_read file->f_path.dentry->d_name.name:string")[0];
    assert_eq!(
        program(a),
        [
            arg(0),
            (Op::Deref, 0x48, 0, 0),
            (Op::Deref, 0x28, 0, 0),
            (Op::StString, 0, 0, 4),
            (Op::End, 0, 0, 0),
        ]
    );
    let a = &probe_args("p vfs_read file->f_pos")[0];
    assert_eq!(
        program(a),
        [
            arg(0),
            (Op::StMem, i64::from(layout::FILE_F_POS), 0, 8),
            (Op::End, 0, 0, 0),
        ]
    );
    assert_eq!(a.ty.get().name, "s64");
    // Members of anonymous unions and structs.
    let a = &probe_args("p dput dentry->d_name.len")[0];
    assert_eq!(program(a)[1], (Op::StMem, 0x24, 0, 4));
    assert_eq!(a.ty.get().name, "u32");
    let a = &probe_args("p dput dentry->d_name.hash_len")[0];
    assert_eq!(
        (program(a)[1], a.ty.get().name),
        ((Op::StMem, 0x20, 0, 8), "u64")
    );
    let a = &probe_args("p vfs_read file->f_pipe")[0];
    assert_eq!(
        (program(a)[1], a.ty.get().name),
        ((Op::StMem, 0x50, 0, 8), "u64")
    );
    // Through a const pointer: f_op is `const struct file_operations *`.
    let a = &probe_args("p vfs_read file->f_op->owner")[0];
    assert_eq!(
        program(a)[1..3],
        [(Op::Deref, 0x10, 0, 0), (Op::StMem, 0, 0, 8)]
    );
    // At a return, through the entry data.
    let env = FakeBtfEnv::new();
    let p = parse_on(&env, "r vfs_read file->f_pos").unwrap().unwrap();
    assert_eq!(p.entry.args(), &[0]);
    assert_eq!(program(&p.args[0])[0].0, Op::Edata);
    // In a dereference: its type is the default again.
    let a = &probe_args("p vfs_read +8(file->f_path.dentry)")[0];
    assert_eq!(a.ty.get().name, "x64");
    assert_eq!(
        program(a)[1..3],
        [(Op::Deref, 0x48, 0, 0), (Op::StMem, 8, 0, 8)]
    );
}

#[test]
fn field_errors() {
    check("p vfs_read+8 ^file", Code::NosupBtfarg, errno::EINVAL);
    check("p 0x1000 ^file", Code::NosupBtfarg, errno::EINVAL);
    check("p vfs_read ^hoge", Code::NoBtfarg, errno::ENOENT);
    check("p vfs_read x=+8(^hoge)", Code::NoBtfarg, errno::ENOENT);
    check("p tracefs_create_dir ^foo", Code::NoBtfEntry, errno::ENOENT);
    check(
        "p loaded_mod:mod_func ^state",
        Code::NoBtfEntry,
        errno::ENOENT,
    );
    check(
        "p vfs_read file.^f_pos",
        Code::NosupDatArg,
        errno::EOPNOTSUPP,
    );
    check("p vfs_read file^-f_pos", Code::BadHyphen, errno::EINVAL);
    check("p vfs_read x=file^-", Code::BadHyphen, errno::EINVAL);
    check(
        "p vfs_read file->f_path.dentry^-x",
        Code::BadHyphen,
        errno::EINVAL,
    );
    check(
        "p vfs_read file->f_path->^dentry",
        Code::NoPtrStrct,
        errno::EINVAL,
    );
    check("p vfs_read count->^x", Code::NoPtrStrct, errno::EINVAL);
    check("p vfs_read file->^nope", Code::NoBtfField, errno::ENOENT);
    check(
        "p vfs_read file->f_path.^nope",
        Code::NoBtfField,
        errno::ENOENT,
    );
    check("p vfs_read file->^", Code::NoBtfField, errno::ENOENT);
    // A field of something that is not a struct.
    check("p vfs_read file->f_pos.^x", Code::BadBtfTid, errno::EINVAL);
    check("p kfree object->^x", Code::BadBtfTid, errno::EINVAL);
    // Not built with BTF arguments: as before.
    let (e, at) = crate::fake::error_at("p vfs_read file->f_pos");
    assert_eq!(
        (e.code(), e.errno, at),
        (Some(Code::NosupBtfarg), errno::EOPNOTSUPP, Some(11))
    );
}

#[test]
fn retval() {
    let a = &probe_args("r kernel_clone $retval")[0];
    assert_eq!((a.name(), a.ty.get().name), (&b"arg1"[..], "s32"));
    assert_eq!(program(a)[0], (Op::Retval, 0, 0, 0));
    assert_eq!(
        probe_args("r do_sys_openat2 $retval")[0].ty.get().name,
        "s64"
    );
    assert_eq!(
        probe_args("r do_sys_openat2 $retval:x32")[0].ty.get().name,
        "x32"
    );
    // No BTF: the plain return value.
    let a = &probe_args("r tracefs_create_dir $retval")[0];
    assert_eq!((program(a)[0].0, a.ty.get().name), (Op::Retval, "x64"));
    check("r kfree ^$retval", Code::NoRetval, errno::ENOENT);
    check("r dput x=^$retval", Code::NoRetval, errno::ENOENT);
    check("p kfree ^$retval", Code::RetvalOnProbe, errno::EINVAL);
    check(
        "r tracefs_create_dir $retval->^x",
        Code::NoBtfEntry,
        errno::ENOENT,
    );
    check(
        "r vfs_read $retval.^x",
        Code::NosupDatArg,
        errno::EOPNOTSUPP,
    );
    check("r vfs_read $retval^-x", Code::BadHyphen, errno::EINVAL);
    check("r vfs_read $retval->^x", Code::NoPtrStrct, errno::EINVAL);
    // Anything else starting with `$retval` is a name: not a parameter.
    check("r vfs_read ^$retvalx", Code::NoBtfarg, errno::ENOENT);
    check(
        "r tracefs_create_dir ^$retvalx",
        Code::NoBtfEntry,
        errno::ENOENT,
    );
    // Without BTF arguments, a `$retval` prefix is `$retval` (as before).
    let p = parse_on(&FakeEnv, "r vfs_read $retvalx").unwrap().unwrap();
    assert_eq!(program(&p.args[0])[0].0, Op::Retval);
}

#[test]
fn strings() {
    // A `const char *` parameter: dereferenced once more.
    assert_eq!(
        program(&probe_args("p do_sys_openat2 $arg2:string")[0]),
        program(
            &crate::fake::parse("p do_sys_openat2 +0($arg2):string")
                .unwrap()
                .unwrap()
                .args[0]
        )
    );
    let a = &probe_args("p do_sys_openat2 filename:ustring")[0];
    assert_eq!(
        program(a),
        [arg(1), (Op::StUString, 0, 0, 4), (Op::End, 0, 0, 0)]
    );
    let a = &probe_args("p kernel_clone args->name:string")[0];
    assert_eq!(
        program(a),
        [
            arg(0),
            (Op::Deref, i64::from(layout::KCA_NAME), 0, 0),
            (Op::StString, 0, 0, 4),
            (Op::End, 0, 0, 0),
        ]
    );
    // A char array: read in place.
    let a = &probe_args("p dput dentry->d_iname:string")[0];
    assert_eq!(
        program(a),
        [
            arg(0),
            (Op::StString, i64::from(layout::DENTRY_D_INAME), 0, 4),
            (Op::End, 0, 0, 0),
        ]
    );
    // Without a type, the array is the default type.
    assert_eq!(probe_args("p dput dentry->d_iname")[0].ty.get().name, "x64");
    // Past a dereference, no BTF type: as written.
    assert_eq!(
        program(&probe_args("p vfs_read +0(file):string")[0])[1],
        (Op::StString, 0, 0, 4)
    );
    // Anything else. After a chain the caret is just after it (see
    // `btf_arg`: C's depends on a heap address there).
    check("p vfs_read ^file:string", Code::BadType4str, errno::EINVAL);
    check("p vfs_read ^count:string", Code::BadType4str, errno::EINVAL);
    check(
        "p vfs_read file->f_mode^:string",
        Code::BadType4str,
        errno::EINVAL,
    );
    check(
        "p vfs_read x=file->f_path.dentry^:ustring",
        Code::BadType4str,
        errno::EINVAL,
    );
    check(
        "r kernel_clone ^$retval:string",
        Code::BadType4str,
        errno::EINVAL,
    );
    check("p vfs_read ^$arg1:string", Code::BadType4str, errno::EINVAL);
}

#[test]
fn enums_and_modifiers() {
    let types: Vec<&str> = described("p mod_func state obj->state obj->big obj->count obj->old->x")
        .iter()
        .map(|a| a.2)
        .collect();
    assert_eq!(types, ["s32", "s32", "s64", "s64", "s64"]);
}

#[test]
fn bitfields() {
    // A 1-bit u32 at bit 1 of byte 0x2c: the field's 4 bytes, shifted
    // within them.
    let a = &probe_args("p kernel_clone args->io_thread")[0];
    assert_eq!(a.ty.get().name, "u32");
    assert_eq!(
        program(a),
        [
            arg(0),
            (Op::StMem, 0x2c, 0, 4),
            (Op::ModBf, 0, 0, 4),
            (Op::End, 0, 0, 0),
        ]
    );
    let bf = a.program().nth(2).unwrap();
    assert_eq!((bf.lshift, bf.rshift), (30, 31));
    assert!(a.shortcut.is_some());
    let a = &probe_args("p kernel_clone args->kthread")[0];
    let bf = a.program().nth(2).unwrap();
    assert_eq!((bf.op, bf.lshift, bf.rshift), (Op::ModBf, 31, 31));
    // A 3-bit u32 at bit 4 of byte 4.
    let a = &probe_args("p mod_func obj->small")[0];
    assert_eq!(program(a)[1], (Op::StMem, 4, 0, 4));
    let bf = a.program().nth(2).unwrap();
    assert_eq!((bf.lshift, bf.rshift, bf.size), (25, 29, 4));
    // An odd-width integer in a struct without kflag: a u64 bitfield.
    let a = &probe_args("p mod_func obj->old->odd")[0];
    assert_eq!(a.ty.get().name, "u64");
    assert_eq!(program(a)[2], (Op::StMem, 8, 0, 8));
    let bf = a.program().nth(3).unwrap();
    assert_eq!(
        (bf.op, bf.lshift, bf.rshift, bf.size),
        (Op::ModBf, 56, 59, 8)
    );
    // An explicit type takes the bytes as they are.
    let a = &probe_args("p kernel_clone args->io_thread:u8")[0];
    assert_eq!(
        program(a)[1..],
        [(Op::StMem, 0x2c, 0, 1), (Op::End, 0, 0, 0)]
    );
    // The format file shows the type BTF gave.
    let env = FakeBtfEnv::new();
    let p = parse_on(&env, "p kernel_clone args->io_thread b=args->exit_signal")
        .unwrap()
        .unwrap();
    // (After the head's `__probe_ip`.)
    let f: Vec<String> = fields(false, &p.args)
        .skip(1)
        .map(|f| f.to_string())
        .collect();
    assert_eq!(
        f,
        [
            "\tfield:u32 arg1;\toffset:16;\tsize:4;\tsigned:0;",
            "\tfield:s32 b;\toffset:20;\tsize:4;\tsigned:1;",
        ]
    );
}

/// The fetch programs of BTF arguments on the fake machine: what the
/// trace shows, and nothing written past a bitfield.
#[test]
fn fetch() {
    use crate::fake::FakeMachine;
    use crate::probe::fetch::store;
    use crate::probe::format::head_size;
    use crate::probe::output::{print_event, Head};

    const FILE: u64 = 0xffff_8880_0001_0000;
    const DENTRY: u64 = 0xffff_8880_0002_0000;
    const NAME: u64 = 0xffff_8880_0003_0000;
    const KCA: u64 = 0xffff_8880_0004_0000;
    let mut m = FakeMachine::new();
    let mut file = std::vec![0u8; 0x100];
    file[0x48..0x50].copy_from_slice(&DENTRY.to_ne_bytes());
    file[0x70..0x78].copy_from_slice(&(-5i64).to_ne_bytes());
    m.kmem.push((FILE, file));
    let mut dentry = std::vec![0u8; 0xc0];
    dentry[0x24..0x28].copy_from_slice(&6u32.to_ne_bytes());
    dentry[0x28..0x30].copy_from_slice(&NAME.to_ne_bytes());
    dentry[0x38..0x3f].copy_from_slice(b"inline\0");
    m.kmem.push((DENTRY, dentry));
    m.kmem.push((NAME, b"passwd\0".to_vec()));
    let mut kca = std::vec![0u8; 0x80];
    // kthread 0, io_thread 1, user_worker 1, no_files 0; then 0xff bits.
    kca[0x2c..0x30].copy_from_slice(&0xffff_fff6u32.to_ne_bytes());
    m.kmem.push((KCA, kca));
    m.set("di", FILE);
    m.syms.push((0xffff_ffff_8100_0000, 0x100, "vfs_read"));

    let env = FakeBtfEnv::new();
    let hit = |spec: &str, m: &FakeMachine, fill: u8| {
        let p = parse_on(&env, spec).unwrap().unwrap();
        let head = head_size(false);
        let mut buf = std::vec![fill; 256];
        let n = store(&p.args, p.size, m, &[], head, &mut buf);
        let mut s = String::new();
        print_event(
            &mut s,
            p.event.as_bytes(),
            Head::Kprobe {
                ip: 0xffff_ffff_8100_0000,
            },
            &p.args,
            &buf[..n],
            m,
        )
        .unwrap();
        (s, buf)
    };
    let (s, _) = hit(
        "p:t vfs_read file->f_path.dentry->d_name.name:string pos=file->f_pos",
        &m,
        0,
    );
    assert_eq!(s, "t: (vfs_read+0x0/0x100) arg1=\"passwd\" pos=-5\n");
    m.set("di", DENTRY);
    let (s, _) = hit("p:t dput dentry->d_iname:string dentry->d_name.len", &m, 0);
    assert_eq!(s, "t: (vfs_read+0x0/0x100) arg1=\"inline\" arg2=6\n");
    m.set("di", KCA);
    for fill in [0, 0x5a, 0xff] {
        let (s, buf) = hit(
            "p:t kernel_clone args->kthread args->io_thread args->user_worker",
            &m,
            fill,
        );
        assert_eq!(s, "t: (vfs_read+0x0/0x100) arg1=0 arg2=1 arg3=1\n");
        // Three 4-byte fields after the 16-byte head, nothing after.
        assert!(buf[16 + 12..].iter().all(|&b| b == fill), "fill {fill:#x}");
    }
}

/// Combinations of BTF forms and their neighbours parse or fail without a
/// panic, with the caret near the command (after an expansion the offset
/// is in the expanded text, which may be longer than the written token, as
/// in C; the fuzz target's bound).
#[test]
fn combinations() {
    let heads = [
        "p vfs_read",
        "r vfs_read",
        "p vfs_read+8",
        "p 0x1000",
        "r kfree",
        "p schedule",
        "p mod_func",
        "p loaded_mod:mod_func",
        "p tracefs_create_dir",
        "p kernel_clone",
    ];
    let args = [
        "$arg*",
        "$arg1",
        "$arg2:string",
        "$arg9",
        "$arg0",
        "$arg1:%pd",
        "$arg1:%pD",
        "file",
        "file->f_path.dentry->d_name.name:string",
        "file->",
        "file->f_pos.",
        "file-",
        "file.x",
        "obj->old->odd",
        "obj->small:x8",
        "args->io_thread",
        "$retval",
        "$retval->x",
        "$retval:string",
        "+0($retval)",
        "+0(file->f_op):string",
        "x=state",
        "common_pid",
        "arg1",
        "%ax",
        "-",
        "_",
        "dentry->d_iname:ustring[2]",
    ];
    let env = FakeBtfEnv::new();
    for head in heads {
        for a in args {
            for b in args {
                let line = format!("{head} {a} {b}");
                if let Err(e) = parse_on(&env, &line) {
                    let (e2, at, cmd) = error_on(&env, &line);
                    assert_eq!(e, e2);
                    if let Some(at) = at {
                        assert!(at <= cmd.len() + 64, "{line}: caret {at}");
                    }
                }
            }
        }
    }
}

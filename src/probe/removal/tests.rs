// SPDX-License-Identifier: GPL-2.0-only

//! Removal lines (`-:`) against the probes they name, on the host's fake.

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

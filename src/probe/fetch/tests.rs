// SPDX-License-Identifier: GPL-2.0-only

//! The interpreter on a fake machine: values, types, arrays, strings,
//! faults, return probes, and the trace text they print as.

use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use super::super::arg::{Arg, Parsed, Split};
use super::super::env::Env;
use super::super::format::head_size;
use super::super::insn::{Class, Insn, Op, Value};
use super::super::output::{print_event, Head};
use super::{plain, store, store_noting, store_plain, store_with};
use crate::fake::{parse, FakeMachine};

/// The arguments as a stored probe keeps them (the program past its head
/// and the texts out of line).
fn split(args: &[Arg<Parsed>]) -> Vec<Arg<Split<Vec<Insn>, Vec<u8>>>> {
    args.iter()
        .map(|a| {
            a.map(|p| Split::new(p, |t| Ok::<_, ()>(t.to_vec()), |parts| Ok(parts.concat())))
                .unwrap()
        })
        .collect()
}

const KSTR: u64 = 0xffff_8880_0000_1000;
const KPTRS: u64 = 0xffff_8880_0000_2000;
const USTR: u64 = 0x0000_5555_0000_0000;
const FUNC: u64 = 0xffff_ffff_8130_0000;

fn machine() -> FakeMachine {
    let mut m = FakeMachine::new();
    let mut k = Vec::new();
    k.extend_from_slice(b"/etc/passwd\0test\0\0");
    k.resize(0x40, 0xab);
    m.kmem.push((KSTR, k));
    let mut ptrs = Vec::new();
    for p in [KSTR, KSTR + 12, 0xdead_0000_0000_0000u64] {
        ptrs.extend_from_slice(&p.to_ne_bytes());
    }
    m.kmem.push((KPTRS, ptrs));
    m.umem.push((USTR, b"/dev/null\0\0".to_vec()));
    m.syms.push((FUNC, 0x1a0, "do_sys_openat2"));
    m.syms.push((0xffff_ffff_8100_0000, 0x100, "vfs_read"));
    m.syms.push((0xffff_ffff_8100_1000, 0x80, "ksys_read"));
    m
}

/// Parses `spec`, runs it on `m` and returns the trace text for a hit at
/// `ip` (a kprobe) or returning from `ip` to `ret_ip` (a kretprobe).
fn hit(spec: &str, m: &FakeMachine, ip: u64, ret_ip: u64, edata: &[u8]) -> String {
    let p = parse(spec).expect("parses").expect("a probe");
    let mut buf = vec![0u8; 8192];
    let n = store(&p.args, p.size, m, edata, head_size(p.is_return), &mut buf);
    let head = if p.is_return {
        Head::Kretprobe { func: ip, ret_ip }
    } else {
        Head::Kprobe { ip }
    };
    let mut s = String::new();
    print_event(&mut s, p.event.as_bytes(), head, &p.args, &buf[..n], m).unwrap();
    // The stored form writes and prints the same (its reads not counted).
    let reads = m.string_reads.get();
    let stored = split(&p.args);
    for (a, b) in p.args.iter().zip(&stored) {
        assert_eq!((a.name(), a.comm()), (b.name(), b.comm()), "{spec}: stored");
    }
    let mut buf2 = vec![0x5au8; 8192];
    let k = store(&stored, p.size, m, edata, head_size(p.is_return), &mut buf2);
    assert_eq!(buf[..n], buf2[..k], "{spec}: stored arguments");
    let mut s2 = String::new();
    print_event(&mut s2, p.event.as_bytes(), head, &stored, &buf2[..k], m).unwrap();
    assert_eq!(s, s2, "{spec}: stored arguments");
    m.string_reads.set(reads);
    // The bytes the trace shows (non-UTF-8 ones as `\xNN`, to compare).
    let mut bytes = Vec::new();
    crate::probe::text::decode(&s, |b| bytes.extend_from_slice(b));
    crate::probe::text::Escaped(&bytes).to_string()
}

#[test]
fn doc_example() {
    let mut m = machine();
    m.set("di", 0xffff_ff9c);
    m.set("si", KSTR);
    assert_eq!(
        hit(
            "p:myprobe do_sys_openat2 dfd=%di filename=+0(%si):string",
            &m,
            FUNC,
            0,
            &[]
        ),
        "myprobe: (do_sys_openat2+0x0/0x1a0) dfd=0xffffff9c filename=\"/etc/passwd\"\n"
    );
}

#[test]
fn return_probe_with_entry_args() {
    let mut m = machine();
    m.set("ax", 3);
    // $arg2 then $arg1 saved at entry, in first-use order.
    let mut edata = Vec::new();
    edata.extend_from_slice(&7u64.to_ne_bytes());
    edata.extend_from_slice(&KSTR.to_ne_bytes());
    assert_eq!(
        hit(
            "r:myretprobe do_sys_openat2 $retval c=$arg2 f=+0($arg1):string",
            &m,
            FUNC,
            0xffff_ffff_8100_1010,
            &edata
        ),
        "myretprobe: (ksys_read+0x10/0x80 <- do_sys_openat2) arg1=0x3 c=0x7 f=\"/etc/passwd\"\n"
    );
}

#[test]
fn types_print_like_c() {
    // kprobe_args_type.tc: the same stack word through every type.
    let mut m = machine();
    m.stack = vec![0xfedc_ba98_7654_3210];
    let out = hit(
        "p:t vfs_read a=$stack0:s8 b=$stack0:u8 c=$stack0:x8 d=$stack0:s16 e=$stack0:s32 f=$stack0:u64 g=$stack0:x64 h=$stack0:b4@4/32 i=$stack0:b16@48/64",
        &m,
        0xffff_ffff_8100_0004,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (vfs_read+0x4/0x100) a=16 b=16 c=0x10 d=12816 e=1985229328 f=18364758544493064720 g=0xfedcba9876543210 h=1 i=65244\n"
    );
    m.stack = vec![0xffff_ffff_ffff_ff80];
    let out = hit(
        "p:t vfs_read a=$stack0:s8 b=$stack0:s64 c=$stack0:char",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (0) a=-128 b=-128 c='\u{80}'\n".replace('\u{80}', "\\x80")
    );
}

#[test]
fn arrays_and_chars() {
    let mut m = machine();
    m.set("di", KSTR + 12);
    m.set("si", KPTRS);
    let out = hit(
        "p:t vfs_read a=+0(%di):char b=+0(%di):char[4] c=+0(%di):u8[2] d=+0(%si):string[3]",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (0) a='t' b={'t','e','s','t'} c={116,101} d={\"/etc/passwd\",\"test\",(fault)}\n"
    );
}

#[test]
fn faults_read_as_zero_or_fault() {
    let mut m = machine();
    m.set("di", 0xffff_dead_0000_0000);
    let out = hit(
        "p:t vfs_read a=+0(%di):u64 b=+0(%di):string c=+8(+0(%di)):u32 d=+0(%di):u8[3] e=%di",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (0) a=0 b=(fault) c=0 d={0,0,0} e=0xffffdead00000000\n"
    );
}

/// `store_noting` says whether a value could not be read, for each way a
/// read faults (a dereference, a chain, a string, a bitfield, each on the
/// shortcut and on the general stages), and not for a record read whole.
#[test]
fn faults_are_noted() {
    let mut m = machine();
    m.set("di", 0xffff_dead_0000_0000);
    m.set("si", KSTR);
    let noted = |spec: &str| {
        let p = parse(spec).expect("parses").expect("a probe");
        let mut buf = vec![0u8; 8192];
        let shortcut = store_noting(&p.args, p.size, &m, &[], 16, &mut buf).1;
        let general = store_with::<_, _, false>(&p.args, p.size, &m, &[], 16, &mut buf).1;
        assert_eq!(shortcut, general, "{spec}: the two paths");
        shortcut
    };
    for spec in [
        "p:t vfs_read a=+0(%di):u64",
        "p:t vfs_read a=+8(+0(%di)):u32",
        "p:t vfs_read a=+0(%di):string",
        "p:t vfs_read a=+0(%di):ustring",
        "p:t vfs_read a=+0(%di):b4@4/32",
        "p:t vfs_read a=+0(%di):u8[3]",
        "p:t vfs_read ok=+0(%si):u64 a=+0(%di):u8",
    ] {
        assert!(noted(spec), "{spec}: a fault");
    }
    for spec in [
        "p:t vfs_read a=%di",
        "p:t vfs_read a=+0(%si):u64 s=+0(%si):string c=$comm y=%di:symstr",
        "p:t vfs_read a=+0(%si):u8[4]",
    ] {
        assert!(!noted(spec), "{spec}: no fault");
    }
}

#[test]
fn comm_immediates_symbols() {
    let mut m = machine();
    m.set("di", FUNC + 0x10);
    let out = hit(
        r#"p:t vfs_read c=$comm i=\-1 j=\0x10:u8 s=\"hello" y=%di:symbol z=%di:symstr n=\1:symbol"#,
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (0) c=\"busybox\" i=0xffffffffffffffff j=16 s=\"hello\" \
         y=do_sys_openat2+0x10/0x1a0 z=\"do_sys_openat2+0x10/0x1a0\" n=0x1\n"
    );
}

#[test]
fn user_memory() {
    let mut m = machine();
    m.set("si", USTR);
    m.set("di", KSTR);
    // kprobe_args_user.tc: both forms read user memory; a kernel pointer
    // read as user memory faults.
    let out = hit(
        "p:t do_sys_openat2 a=+0($arg2):ustring b=+u0($arg2):string c=+u0($arg1):string",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(out, "t: (0) a=\"/dev/null\" b=\"/dev/null\" c=(fault)\n");
    // An empty user string records length 0: "(fault)", as in C.
    m.set("si", USTR + 10);
    let out = hit("p:t do_sys_openat2 a=+0($arg2):ustring", &m, 0, 0, &[]);
    assert_eq!(out, "t: (0) a=(fault)\n");
    // A kernel-type dereference below TASK_SIZE reads user memory too.
    m.set("si", USTR);
    let out = hit("p:t do_sys_openat2 a=+0(%si):string", &m, 0, 0, &[]);
    assert_eq!(out, "t: (0) a=\"/dev/null\"\n");
}

#[test]
fn task_size_asked_only_below_every_tasks() {
    // Kernel addresses are above every task's TASK_SIZE: read as kernel
    // memory without asking for it.
    let mut m = machine();
    m.set("di", KSTR);
    let out = hit("p:t vfs_read a=+0(%di):u8 s=+0(%di):string", &m, 0, 0, &[]);
    assert_eq!(out, "t: (0) a=47 s=\"/etc/passwd\"\n");
    assert_eq!(m.task_size_asks.get(), 0);
    // Below the bound it is asked: a 32-bit task's TASK_SIZE is lower, so
    // an address above it (mapped as kernel memory here) is read as
    // kernel memory, and as user memory for a 64-bit task.
    const HIGH: u64 = 0x1_0000_0000;
    m.kmem.push((HIGH, b"k\0".to_vec()));
    m.umem.push((HIGH, b"u\0".to_vec()));
    m.set("di", HIGH);
    let spec = "p:t vfs_read a=+0(%di):u8 s=+0(%di):string";
    assert_eq!(hit(spec, &m, 0, 0, &[]), "t: (0) a=117 s=\"u\"\n");
    assert!(m.task_size_asks.get() > 0);
    m.task_size = 0xffff_e000;
    assert_eq!(hit(spec, &m, 0, 0, &[]), "t: (0) a=107 s=\"k\"\n");
}

#[test]
fn task_size_not_asked_below_every_tasks() {
    // An address below every task's TASK_SIZE (3 GB: a 32-bit task with
    // ADDR_LIMIT_3GB) is user memory without asking, a deference chain
    // that ends in user memory or near 0 included.
    const LOW: u64 = 0xbfff_f000;
    const KLOW: u64 = 0xffff_8880_0000_9000;
    let mut m = machine();
    m.umem.push((LOW, b"u\0".to_vec()));
    m.kmem.push((LOW, b"k\0".to_vec()));
    m.kmem.push((KLOW, LOW.to_ne_bytes().to_vec()));
    m.set("di", LOW);
    m.set("si", KLOW);
    let spec = "p:t vfs_read a=+0(%di):u8 s=+0(%di):string b=+0(+0(%si)):u8 z=+0(+8(%si)):u8";
    assert_eq!(hit(spec, &m, 0, 0, &[]), "t: (0) a=117 s=\"u\" b=117 z=0\n");
    assert_eq!(m.task_size_asks.get(), 0);
    // Just above the floor it is asked.
    let floor = m.arch.task_size_floor;
    m.set("di", floor);
    m.umem.push((floor, b"v\0".to_vec()));
    assert_eq!(
        hit("p:t vfs_read a=+0(%di):u8", &m, 0, 0, &[]),
        "t: (0) a=118\n"
    );
    assert!(m.task_size_asks.get() > 0);
}

#[test]
fn arguments_past_six_come_from_the_stack() {
    let mut m = machine();
    m.set("r9", 6);
    m.stack = vec![100, 7, 8];
    let out = hit("p:t vfs_read a=$arg6 b=$arg7 c=$arg8", &m, 0, 0, &[]);
    assert_eq!(out, "t: (0) a=0x6 b=0x7 c=0x8\n");
}

#[test]
fn each_string_is_read_once() {
    let mut m = machine();
    m.set("si", KPTRS);
    m.set("di", KSTR);
    hit(
        "p:t vfs_read a=+0(%di):string b=+0(%si):string[2]",
        &m,
        0,
        0,
        &[],
    );
    // C reads each string twice (measure, then copy): 6 reads.
    assert_eq!(m.string_reads.get(), 3);
}

#[test]
fn small_buffer_truncates_strings() {
    let mut m = machine();
    m.set("di", KSTR);
    let p = parse("p:t vfs_read a=+0(%di):string b=+0(%di):string")
        .unwrap()
        .unwrap();
    let mut buf = vec![0u8; p.size + 6];
    let n = store(&p.args, p.size, &m, &[], 16, &mut buf);
    assert_eq!(n, buf.len());
    let mut s = String::new();
    print_event(&mut s, b"t", Head::Kprobe { ip: 0 }, &p.args, &buf[..n], &m).unwrap();
    assert_eq!(s, "t: (0) a=\"/etc/\" b=(fault)\n");
}

#[test]
fn one_dereference_with_offsets() {
    // The shortcut for "value, then the memory it points to" (`simple`)
    // and the general stages must read the same bytes: positive, negative
    // and user offsets, each type size, and a fault.
    let mut m = machine();
    m.set("di", KSTR + 8);
    m.set("si", USTR + 4);
    m.set("dx", 0x10);
    let out = hit(
        "p:t do_sys_openat2 a=+4(%di):x32 b=-8(%di):x64 c=+0(%di):u8 d=-7(%di):x16 e=+u1($arg2):x8 f=+0(%dx):u64",
        &m,
        0,
        0,
        &[],
    );
    // KSTR: "/etc/passwd\0test\0\0" then 0xab bytes.
    let b = u64::from_ne_bytes(*b"/etc/pas");
    let a = u32::from_ne_bytes(*b"test");
    let d = u16::from_ne_bytes(*b"et");
    assert_eq!(
        out,
        std::format!("t: (0) a=0x{a:x} b=0x{b:x} c=115 d=0x{d:x} e=0x6e f=0\n")
    );
    // The same through the general stages: a double dereference ending in
    // the same reads.
    m.set("cx", KPTRS);
    let out = hit("p:t do_sys_openat2 g=+4(+0(%cx)):x32", &m, 0, 0, &[]);
    assert_eq!(
        out,
        std::format!("t: (0) g=0x{:x}\n", u32::from_ne_bytes(*b"/pas"))
    );
}

#[test]
fn stale_bytes_never_show() {
    // The kernel hands `store` a ring-buffer reservation or the scratch
    // buffer, holding whatever was there before; nothing of it may reach
    // the payload (each field is written whole or cleared first). Runs on
    // a zeroed and on a 0xaa-filled buffer must give the same bytes.
    let mut m = machine();
    m.set("di", KSTR);
    m.set("si", 0xffff_dead_0000_0000);
    m.set("dx", USTR);
    for spec in [
        "p:t vfs_read a=%di:u8 b=%di:u16 c=%di:u32 d=%di:u64 e=%di:x8 f=%di:s16",
        "p:t vfs_read a=+0(%si):u64 b=+0(%si):u8 c=+0(%si):x32 d=+u0(%dx):u16",
        "p:t vfs_read a=+0(%di):u8[5] b=+0(%si):u16[3] c=+0(%di):b3@2/8 d=+0(%si):b4@1/32",
        "p:t vfs_read a=+0(%si):string b=+0(%di):string c=+8(+0(%si)):u32 d=$comm",
        "p:t vfs_read a=%di:symbol b=+0(%si):symbol c=\\7:u8 d=\\-1:s32 e=$stack0:u16",
        "r:t vfs_read a=$retval:u8 b=$arg1 c=+0($retval):u32",
    ] {
        let p = parse(spec).expect("parses").expect("a probe");
        let head = head_size(p.is_return);
        let edata = [0x11u8; 64];
        let mut zero = vec![0u8; 512];
        let mut stale = vec![0xaau8; 512];
        let n = store(&p.args, p.size, &m, &edata, head, &mut zero);
        let k = store(&p.args, p.size, &m, &edata, head, &mut stale);
        assert_eq!(n, k, "{spec}");
        assert_eq!(zero[..n], stale[..k], "{spec}");
    }
}

#[test]
fn shortcut_matches_general_stages() {
    // `simple` (values, dereference chains, plain and memory stores,
    // bitfields, entry data) must write exactly what the general
    // interpreter writes, faults included, on a clean and a stale buffer.
    let mut m = machine();
    m.set("di", KSTR);
    m.set("si", KPTRS);
    m.set("dx", USTR);
    m.set("cx", 0xffff_dead_0000_0000);
    m.stack = vec![KPTRS, 0x1234_5678_9abc_def0, 7];
    m.current = KSTR;
    m.cpu_offset = 8;
    let specs = [
        "p:t vfs_read a=%di b=%si:u8 c=%dx:s16 d=%cx:x32 e=$stack0 f=$stack1:s8 g=$stack9",
        "p:t vfs_read a=$stack b=$stack:u32 c=$arg1 d=$arg2:x16 e=$arg7 f=\\-5:s32 g=\\0x1f:x8",
        "p:t vfs_read a=+0(%di):u64 b=+4(%di):u32 c=-4(%di):x16 d=+u0(%dx):u8 e=+0(%cx):u64",
        "p:t vfs_read a=+0(+0(%si)):u32 b=+4(+8(%si)):x64 c=+0(+16(%si)):u8 d=+0(+0(%cx)):u16",
        "p:t vfs_read a=+0(+0(+0($stack0))):u8 b=+u0(+u0(%dx)):u32 c=+0(+8($stack0)):s64",
        "p:t vfs_read a=+0(%di):b3@2/8 b=+1(%di):b4@4/32 c=%di:b7@1/64 d=+0(%cx):b2@0/16",
        "p:t vfs_read a=%di:symbol b=+0(%si):symbol c=@vfs_read d=+0(@vfs_read):u32",
        "r:t vfs_read a=$retval b=$retval:s8 c=$arg1 d=+0($arg2):u16 e=+0($retval):b5@3/32",
        "p:t vfs_read a=+0(%di):string b=+0(+0(%si)):string c=+0(%dx):ustring d=+0(%cx):string",
        "p:t vfs_read a=+u0(%dx):string b=+0(+0(%cx)):string c=+12(%di):string d=+0(%dx):string",
        "r:t vfs_read a=+0($arg1):string b=+0(+8($arg2)):ustring c=+0($retval):string",
        // 7.3's: the current task, per-CPU addresses and reads.
        "p:t vfs_read a=$current b=+8($current):u32 c=this_cpu_ptr(%si) d=this_cpu_read(%si):u16",
        "p:t vfs_read a=+0(this_cpu_read(%si)):string b=this_cpu_read(@vfs_read):u8 c=+4(this_cpu_ptr(%di)):u32",
        "p:t vfs_read a=this_cpu_read(this_cpu_ptr(%si)):x64 b=this_cpu_read(%cx):u64 c=this_cpu_ptr(%si):b3@2/8",
    ];
    // And programs that must not take it.
    for spec in [
        "p:t vfs_read a=+0(%di):u8[4] b=+0(%di):string[2] c=$comm e=+0(%di):symstr",
        "p:t vfs_read f=\\\"x\" g=+0(%di):ustring[2] h=+0(%di):u32[2]",
    ] {
        let p = parse(spec).expect("parses").expect("a probe");
        for a in &p.args {
            assert!(
                a.shortcut.is_none(),
                "{spec}: {} takes the shortcut",
                String::from_utf8_lossy(a.name())
            );
        }
    }
    // (Parsed as 7.3 parses them: 6.12's forms compile alike in both.)
    let env = crate::fake::InDialect(
        crate::fake::FakeEnv,
        crate::probe::dialect::Dialect::Linux7_3,
    );
    for spec in specs {
        let p = crate::fake::parse_on(&env, spec)
            .expect("parses")
            .expect("a probe");
        for a in &p.args {
            assert!(
                a.shortcut.is_some(),
                "{spec}: {} takes the general stages",
                String::from_utf8_lossy(a.name())
            );
        }
        let head = head_size(p.is_return);
        let mut edata = [0u8; 64];
        for (i, b) in edata.iter_mut().enumerate() {
            *b = i as u8;
        }
        edata[..8].copy_from_slice(&KSTR.to_ne_bytes());
        edata[8..16].copy_from_slice(&KPTRS.to_ne_bytes());
        for fill in [0u8, 0xaa] {
            let mut fast = vec![fill; 512];
            let mut slow = vec![fill; 512];
            let n = store(&p.args, p.size, &m, &edata, head, &mut fast);
            let k = store_with::<_, _, false>(&p.args, p.size, &m, &edata, head, &mut slow).0;
            assert_eq!(n, k, "{spec}");
            assert_eq!(fast[..n], slow[..k], "{spec} (fill {fill:#x})");
            // Stored, both ways.
            let stored = split(&p.args);
            let mut fast2 = vec![fill; 512];
            let mut slow2 = vec![fill; 512];
            let n2 = store(&stored, p.size, &m, &edata, head, &mut fast2);
            let k2 = store_with::<_, _, false>(&stored, p.size, &m, &edata, head, &mut slow2).0;
            assert_eq!((n2, k2), (n, n), "{spec}: stored");
            assert_eq!(fast[..n], fast2[..n], "{spec} (fill {fill:#x}): stored");
            assert_eq!(fast[..n], slow2[..n], "{spec} (fill {fill:#x}): stored");
        }
    }
}

#[test]
fn stack_pointer_and_arguments() {
    // `$stack` is the stack pointer (`kernel_stack_pointer()`), `$argN` the
    // Nth argument register, then the stack past the sixth.
    let mut m = machine();
    m.set("sp", 0xffff_c900_0001_3f00);
    m.set("di", 1);
    m.set("r9", 6);
    m.stack = vec![0, 7, 8];
    let out = hit(
        "p:t vfs_read s=$stack a=$arg1 f=$arg6 g=$arg7 h=$arg8",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(out, "t: (0) s=0xffffc90000013f00 a=0x1 f=0x6 g=0x7 h=0x8\n");
}

#[test]
fn arrays_read_at_once_or_element_by_element() {
    // An array is one block: read at once, or (when part of it faults)
    // element by element, the faulting ones as 0, as C's loop gives.
    let mut m = machine();
    m.set("di", KSTR);
    let out = hit(
        "p:t vfs_read a=+0(%di):u8[4] b=+0x3c(%di):u8[8] c=+0x3e(%di):x16[2] d=+0(%di):char[5]",
        &m,
        0,
        0,
        &[],
    );
    assert_eq!(
        out,
        "t: (0) a={47,101,116,99} b={171,171,171,171,0,0,0,0} c={0xabab,0x0} d={'/','e','t','c','/'}\n"
    );
}

/// `spec` parsed on `m`'s architecture and hit once on `m`: the trace
/// line, or the parser's error code.
fn hit_on(spec: &str, m: &FakeMachine) -> Result<String, Option<super::super::error::Code>> {
    use super::super::command::{self, Tokens};
    let mut tokens = std::boxed::Box::new(Tokens::new());
    let env = crate::fake::FakeEnvOn {
        arch: m.arch,
        stack_words: crate::fake::FakeEnv.stack_words(),
    };
    let p = command::parse(spec.as_bytes(), &mut tokens, &env, Vec::new())
        .map_err(|e| e.code())?
        .expect("a probe");
    let mut buf = vec![0u8; 1024];
    let n = store(&p.args, p.size, m, &[], head_size(false), &mut buf);
    let mut s = String::new();
    print_event(
        &mut s,
        p.event.as_bytes(),
        Head::Kprobe { ip: 0 },
        &p.args,
        &buf[..n],
        m,
    )
    .unwrap();
    Ok(s)
}

/// The language runs on the table it is given: a made-up architecture
/// with its own register names, two argument registers, and 0 for the
/// arguments after them (arm64's rule past x7).
#[test]
fn another_architecture() {
    use super::super::arch::{Arch, Register, StackArguments};
    use super::super::error::Code;

    static TOY: Arch = Arch {
        name: "toy",
        registers: &[
            Register {
                name: "a0",
                offset: 0,
            },
            Register {
                name: "a1",
                offset: 8,
            },
            Register {
                name: "sp",
                offset: 16,
            },
            Register {
                name: "rv",
                offset: 24,
            },
        ],
        argument_registers: &[0, 8],
        stack_arguments: StackArguments::Zero,
        stack_pointer: 16,
        return_value: 24,
        task_size_bound: 1 << 48,
        task_size_floor: 1 << 32,
    };
    let mut m = FakeMachine::with_arch(&TOY);
    m.set("a0", 5);
    m.set("a1", 6);
    m.set("rv", 9);
    m.stack = vec![7, 8];
    assert_eq!(
        hit_on(
            "p:t vfs_read x=%a1:u64 y=$arg1:u64 z=$arg2:u64 w=$arg3:u64 s=$stack0:u64",
            &m
        ),
        Ok(String::from("t: (0) x=6 y=5 z=6 w=0 s=7\n"))
    );
    // x86-64's names are not this machine's, and the other way round.
    assert_eq!(hit_on("p:t vfs_read %di", &m), Err(Some(Code::BadRegName)));
    assert!(parse("p:t vfs_read %a1").is_err());
    // The same spec on x86-64 reads the third argument from %dx.
    let mut x = FakeMachine::new();
    x.set("di", 5);
    x.set("si", 6);
    x.set("dx", 4);
    assert_eq!(
        hit(
            "p:t vfs_read y=$arg1:u64 z=$arg2:u64 w=$arg3:u64",
            &x,
            0,
            0,
            &[]
        ),
        "t: (0) y=5 z=6 w=4\n"
    );
}

/// arm64's table (`ARM64`): `x0`..`x30` and `lr`, `sp`, `pc`, `pstate`;
/// arguments in x0..x7, then 0 (no stack); the return value in x0.
#[test]
fn arm64() {
    use super::super::arch::ARM64;
    use super::super::error::Code;

    let mut m = FakeMachine::with_arch(&ARM64);
    for i in 0..31 {
        m.set(&format!("x{i}"), 100 + i);
    }
    m.set("sp", 7);
    m.set("pc", 8);
    m.set("pstate", 9);
    m.stack = vec![70, 71, 72];
    assert_eq!(
        hit_on(
            "p:t vfs_read a=%x0:u64 b=%x7:u64 c=%x30:u64 d=%lr:u64 e=%sp:u64 f=%pc:u64 g=%pstate:u64",
            &m
        ),
        Ok(String::from(
            "t: (0) a=100 b=107 c=130 d=130 e=7 f=8 g=9\n"
        ))
    );
    // $argN: x0..x7, then 0, not the stack; $stackN is the stack.
    assert_eq!(
        hit_on(
            "p:t vfs_read a=$arg1:u64 h=$arg8:u64 i=$arg9:u64 s=$stack1:u64",
            &m
        ),
        Ok(String::from("t: (0) a=100 h=107 i=0 s=71\n"))
    );
    // x86-64's names are not arm64's; nor are x31 or w0.
    for bad in ["%di", "%ax", "%x31", "%w0", "%ip"] {
        assert_eq!(
            hit_on(&format!("p:t vfs_read {bad}"), &m),
            Err(Some(Code::BadRegName)),
            "{bad}"
        );
    }
}

/// Every opcode, in the order of [`index`], which has no `_` arm: a new
/// opcode does not compile until it is listed here too.
const ALL: [Op; 23] = [
    Op::Nop,
    Op::Reg,
    Op::Stack,
    Op::StackP,
    Op::Retval,
    Op::Imm,
    Op::Comm,
    Op::Arg,
    Op::Data,
    Op::Edata,
    Op::Symbol,
    Op::Deref,
    Op::UDeref,
    Op::StRaw,
    Op::StMem,
    Op::StUMem,
    Op::StString,
    Op::StUString,
    Op::StSymstr,
    Op::ModBf,
    Op::LpArray,
    Op::Current,
    Op::CpuPtr,
];

fn index(op: Op) -> Option<usize> {
    match op {
        Op::Nop => Some(0),
        Op::Reg => Some(1),
        Op::Stack => Some(2),
        Op::StackP => Some(3),
        Op::Retval => Some(4),
        Op::Imm => Some(5),
        Op::Comm => Some(6),
        Op::Arg => Some(7),
        Op::Data => Some(8),
        Op::Edata => Some(9),
        Op::Symbol => Some(10),
        Op::Deref => Some(11),
        Op::UDeref => Some(12),
        Op::StRaw => Some(13),
        Op::StMem => Some(14),
        Op::StUMem => Some(15),
        Op::StString => Some(16),
        Op::StUString => Some(17),
        Op::StSymstr => Some(18),
        Op::ModBf => Some(19),
        Op::LpArray => Some(20),
        Op::Current => Some(21),
        Op::CpuPtr => Some(22),
        // The end is not in `ALL`: `load` is asked of it below on its own.
        Op::End => None,
    }
}

/// The hit path's `load` matches opcodes, not their class (one match on
/// every hit): it loads exactly the opcodes of [`Class::Value`].
#[test]
fn values_are_loaded() {
    let m = machine();
    for (i, op) in ALL.iter().copied().chain([Op::End]).enumerate() {
        assert!(
            index(op).map_or(op == Op::End, |j| j == i),
            "{op:?} out of place"
        );
        let loads = super::load(&Insn::new(op), &m, &[0; 8]).is_some();
        // (`$current` is loaded by `load`'s callers.)
        let value = matches!(op.class(), Class::Value(v) if v != Value::Current);
        assert_eq!(loads, value, "{op:?}");
    }
}

/// Arguments typed by BTF compile to the programs a user writes by hand:
/// the same instructions and shortcut, the same records by either path;
/// a bitfield from BTF writes nothing past its field.
#[test]
fn btf_programs_are_hand_written_ones() {
    let env = crate::fake::FakeBtfEnv::new();
    let mut m = machine();
    m.set("di", KPTRS);
    m.set("si", KSTR);
    for (btf, by_hand) in [
        (
            "p:t vfs_read file->f_path.dentry->d_name.name:string",
            "p:t vfs_read +0(+0x28(+0x48($arg1))):string",
        ),
        ("p:t vfs_read file->f_pos", "p:t vfs_read +0x70($arg1):s64"),
        (
            "p:t do_sys_openat2 filename:string",
            "p:t do_sys_openat2 +0($arg2):string",
        ),
        (
            "p:t dput dentry->d_iname:string",
            "p:t dput +0x38($arg1):string",
        ),
        ("p:t dput dentry->d_name.len", "p:t dput +0x24($arg1):u32"),
        (
            "p:t kernel_clone args->io_thread",
            "p:t kernel_clone +0x2c($arg1):b1@1/32",
        ),
    ] {
        let p = crate::fake::parse_on(&env, btf).unwrap().unwrap();
        let q = parse(by_hand).unwrap().unwrap();
        let (a, b) = (&p.args[0], &q.args[0]);
        assert!(a.program().eq(b.program()), "{btf}");
        assert_eq!((a.ty, a.shortcut), (b.ty, b.shortcut), "{btf}");
        assert!(a.shortcut.is_some(), "{btf}");
        for fill in [0u8, 0xaa] {
            let mut fast = vec![fill; 64];
            let mut slow = vec![fill; 64];
            let n = store(&p.args, p.size, &m, &[], 16, &mut fast);
            let k = store_with::<_, _, false>(&p.args, p.size, &m, &[], 16, &mut slow).0;
            assert_eq!(fast[..n], slow[..k], "{btf}");
            if !a.dynamic {
                let end = 16 + a.size();
                assert!(fast[end..].iter().all(|&b| b == fill), "{btf}: fast");
                assert!(slow[end..].iter().all(|&b| b == fill), "{btf}: slow");
            }
        }
    }
}

/// The plain path (`store_plain`) writes what `store` writes, for the
/// probes `plain` takes, and `plain` takes the probes of fixed-size fields
/// alone (values, dereference chains, bitfields; no strings or arrays).
#[test]
fn plain_records_as_store() {
    // Reads that fault (the registers hold 0), and reads that do not.
    let mut mapped = machine();
    for (r, v) in [
        ("di", KSTR),
        ("si", KPTRS),
        ("dx", KSTR + 8),
        ("cx", KPTRS + 8),
    ] {
        mapped.set(r, v);
    }
    for m in [machine(), mapped] {
        for (spec, is_plain) in [
            ("p:t vfs_read a=%di", true),
            ("p:t vfs_read a=%di b=%si:u32 c=$stack0:s16 d=%dx:x8", true),
            ("p:t vfs_read e=\\1234", true),
            ("p:t vfs_read f=$stack", true),
            ("r:t vfs_read a=$retval b=$retval:s8 c=%ax:u16", true),
            ("p:t vfs_read a=$arg1 b=$arg2:u32 c=$arg7", true),
            ("p:t vfs_read a=%di b=+0(%si):u64", true),
            (
                "p:t vfs_read a=+8(%di):u32 b=+0(%si):u16 c=+4(%dx):s8 d=+0(%cx):x64",
                true,
            ),
            ("p:t vfs_read a=+0(+8(%si)):u64", true),
            (
                "p:t vfs_read a=+0(+8(%si)):u32 b=%di c=+4(%dx):b3@2/8",
                true,
            ),
            ("p:t vfs_read a=+u0(+8(%si)):u16 b=+0(+0(+8(%cx))):x8", true),
            ("p:t vfs_read a=+0(+8(%si)):string", false),
            ("p:t vfs_read a=+0(+8(%si)):u64 b=$comm", false),
            ("p:t vfs_read a=+u0(%si):u32", true),
            ("p:t vfs_read a=%di b=$comm", false),
            ("p:t vfs_read a=+0(%si):u8[2]", false),
            ("p:t vfs_read a=+0(%si):string", false),
            ("p:t vfs_read a=%di:b4@4/32", true),
            ("p:t vfs_read a=@vfs_read b=@vfs_read+8:u32", true),
            ("p:t vfs_read a=%di:symbol", true),
        ] {
            let p = parse(spec)
                .unwrap_or_else(|e| panic!("{spec}: {e:?}"))
                .expect("a probe");
            assert_eq!(plain(&p.args, p.size), is_plain, "{spec}");
            if !is_plain {
                continue;
            }
            let stored = split(&p.args);
            assert!(plain(&stored, p.size), "{spec}: stored");
            for fill in [0u8, 0xaa] {
                let mut a = vec![fill; 256];
                let mut b = vec![fill; 256];
                let (n, f) = store_noting(&p.args, p.size, &m, &[], head_size(p.is_return), &mut a);
                assert_eq!(n, p.size, "{spec}");
                let g = store_plain(&stored, &m, &[], &mut b[..p.size]);
                assert_eq!(a, b, "{spec} (fill {fill:#x})");
                assert_eq!(f, g, "{spec}: faulted");
            }
        }
    }
    let m = machine();
    // 7.3's `$current` as a value; through it, not.
    let env = crate::fake::InDialect(
        crate::fake::FakeEnv,
        crate::probe::dialect::Dialect::Linux7_3,
    );
    for (spec, is_plain) in [
        ("p:t vfs_read a=$current b=%si:u32", true),
        ("p:t vfs_read a=+8($current):u32 b=$current", true),
        ("p:t vfs_read a=+0(+8($current)):u32", true),
        ("p:t vfs_read a=+0(+8($current)):string", false),
        (
            "p:t vfs_read a=this_cpu_read(%si):u16 b=+4(this_cpu_ptr(%di)):u32 c=%di",
            true,
        ),
        (
            "p:t vfs_read a=this_cpu_read(this_cpu_ptr(%si)):x64 c=this_cpu_ptr(%si):b3@2/8",
            true,
        ),
        ("p:t vfs_read a=+0(this_cpu_read(%si)):string", false),
    ] {
        let p = crate::fake::parse_on(&env, spec)
            .expect("parses")
            .expect("a probe");
        assert_eq!(plain(&p.args, p.size), is_plain, "{spec}");
        if is_plain {
            let mut a = vec![0xaa; 64];
            let mut b = vec![0xaa; 64];
            store(&p.args, p.size, &m, &[], 16, &mut a);
            store_plain(&p.args, &m, &[], &mut b[..p.size]);
            assert_eq!(a, b, "{spec}");
        }
    }
}

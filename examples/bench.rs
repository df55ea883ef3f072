// SPDX-License-Identifier: GPL-2.0-only

//! Host benchmark of the probe language (`make bench`): parse + compile
//! time per spec, and the interpreter's run time per argument kind on the
//! fake machine. Wall-clock on the host, median of several rounds: a guide
//! to relative costs, not a kernel measurement (that is the VM benchmark's
//! job, with `-icount`).

use std::hint::black_box;
use std::time::Instant;

use rkpe_probe::fake::{FakeEnv, FakeMachine};
use rkpe_probe::probe::command::{self, Tokens};
use rkpe_probe::probe::fetch::store;
use rkpe_probe::probe::format::head_size;

const KSTR: u64 = 0xffff_8880_0000_1000;

fn median_ns(mut f: impl FnMut(), iters: u32) -> f64 {
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        rounds.push(t.elapsed().as_nanos() as f64 / f64::from(iters));
    }
    rounds.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rounds[3]
}

fn main() {
    let mut tokens = Box::new(Tokens::new());
    println!("parse + compile, per spec:");
    for spec in [
        "p vfs_read",
        "p:myprobe do_sys_openat2 dfd=%di path=+0(%si):string",
        "p vfs_read a=%di b=%si c=$stack0 d=$comm",
        "r vfs_read $retval $arg1 $arg2",
        "p vfs_read +0(+8(+16(%di))):u32 x=+0(%si):u8[16] s=+0(%di):string[4]",
    ] {
        let ns = median_ns(
            || {
                let r = command::parse(
                    black_box(spec.as_bytes()),
                    &mut tokens,
                    &FakeEnv,
                    Vec::new(),
                );
                black_box(r.is_ok());
            },
            20_000,
        );
        println!("  {ns:8.0} ns  {spec}");
    }

    let mut m = FakeMachine::new();
    let mut k = b"Linux version 6.12.117 (builder@host) (clang version 14.0.6, LLD 14.0.6) #1 SMP PREEMPT_DYNAMIC with some more text to make it long".to_vec();
    k.push(0);
    k.resize(512, 0);
    m.kmem.push((KSTR, k));
    let mut ptr = KSTR.to_ne_bytes().to_vec();
    ptr.extend_from_slice(&(KSTR + 8).to_ne_bytes());
    m.kmem.push((KSTR + 0x1000, ptr));
    m.set("di", KSTR + 0x1000);
    m.set("si", KSTR);
    m.stack = vec![1, 2, 3];
    println!("run one argument (store into the record), per hit:");
    let mut buf = vec![0u8; 8192];
    for (kind, spec) in [
        ("no argument", "p vfs_read"),
        ("register", "p vfs_read a=%di"),
        ("stack entry", "p vfs_read a=$stack0"),
        ("function argument", "p vfs_read a=$arg1"),
        ("one dereference", "p vfs_read a=+0(%di):u64"),
        ("two dereferences", "p vfs_read a=+0(+8(%di)):u32"),
        ("$comm", "p vfs_read a=$comm"),
        ("string, 130 bytes", "p vfs_read a=+0(%si):string"),
        ("u8[16] array", "p vfs_read a=+0(%si):u8[16]"),
        ("bitfield", "p vfs_read a=$stack0:b4@4/32"),
        (
            "4 arguments (reg, reg, stack, comm)",
            "p vfs_read a=%di b=%si c=$stack0 d=$comm",
        ),
    ] {
        let Ok(Some(p)) = command::parse(spec.as_bytes(), &mut tokens, &FakeEnv, Vec::new()) else {
            panic!("{spec}");
        };
        let head = head_size(p.is_return);
        let ns = median_ns(
            || {
                black_box(store(&p.args, p.size, &m, &[], head, &mut buf));
            },
            200_000,
        );
        println!("  {ns:8.1} ns  {kind}: {spec}");
    }
}

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Hostile input for the kprobe_events test of scripts/hostile.sh: the lines
# of the fuzz corpus (fuzz/corpus/probe/*, raw bytes, split at '\n') plus
# deterministic mutations of them (fixed seed): byte flips, inserts,
# deletes, token swaps and replacements, splices of two lines, Latin-1
# bytes 0xA0-0xFF in names, very long arguments and names.
#
#   hostile-lines.py [--count N] [--seed S] OUT
#
# OUT gets one line per input line (line k of OUT is input line k), escaped
# so that any byte survives: printable ASCII as itself, '\' as '\\', every
# other byte as \xNN. Lines are distinct and hold no '\n'; NUL bytes are
# kept. Two runs with the same arguments write byte-identical files, and
# OUT is only rewritten when its content changes (the initramfs depends on
# its mtime).
import argparse
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus", "probe")

# Tokens the mutations insert or substitute, beside the corpus' own: the
# commands of every dynamic event type, places, fetch args, types, and the
# names of the sentinel probe hostile.c keeps.
DICT = [
    b"p", b"r", b"p:", b"r:", b"-:", b"!", b"!p:", b"e:", b"s:", b"u:", b"f:", b"t:",
    b"p:hostile/keep", b"-:hostile/keep", b"-:hostile/", b"-:keep", b"p:kprobes/x",
    b"r:x", b"p:g/e", b"r10", b"r0", b"r4096", b"r4097", b"p1", b"-:kprobes/",
    b"vfs_read", b"vfs_write", b"vfs_read+4", b"vfs_read+0x10", b"vfs_read+1",
    b"vfs_read%return", b"vfs_read+8%return", b"ksys_read", b"do_sys_openat2",
    b"kernel_clone", b"dput", b"do_exit", b"_text", b"nomod:vfs_read", b"4[:sym",
    b"ext4:ext4_file_open", b"rust_kprobe_events:init_module", b"0xffffffff81000000",
    b"0x0", b"43", b"-1", b"0x7fffffffffffffff", b"/bin/sh:0x10", b"/bin/sh:0x10(0x20)",
    b"/bin/sh", b"/nonexistent:0x1", b"sched/sched_switch", b"hostile/keep",
    b"$retval", b"$comm", b"$COMM", b"$arg1", b"$arg0", b"$arg6", b"$arg129", b"$stack",
    b"$stack0", b"$stack100", b"$current", b"%di", b"%si", b"%ax", b"%ip", b"%sp",
    b"%r15", b"%dil", b"+0(%di)", b"-8(%sp)", b"+0(%si):string", b"+0(%si):ustring",
    b"+u0(%si):string", b"+0(+8(%di)):x64", b"@jiffies", b"@vfs_read+8", b"@+10",
    b":u8", b":s16", b":x32", b":u64", b":s64", b":string", b":ustring", b":symbol",
    b":symstr", b":char", b":b4@3/32", b":b1@63/64", b":%pd", b":%pD", b"[4]", b"[65]",
    b":u8[0]", b"a=%di", b"a=$comm", b"b=%si", b"__probe_ip=%ip", b"common_pid=%di",
    b"\\1", b"\\\"foo\"", b"\\-1", b"\\+0x10", b"\\\"\"", b"u64 x", b"char[16] s",
    b"int;", b"#", b"=", b":", b"/", b"(", b")", b"+", b"-", b"\t", b"\r", b"\x0b",
    b"\x0c", b"\xa0", b"\xe9", b"\xff", b"\xc0", b"\xdf",
    # BTF arguments: parameter names, field chains, $arg* and typed $retval.
    b"$arg*", b"$arg2:string", b"file", b"buf", b"count", b"pos", b"object", b"args",
    b"filename", b"dentry", b"hoge", b"file->f_path.dentry->d_name.name:string",
    b"file->f_path", b".dentry", b"->d_name", b".name", b"->", b"->f_inode->i_ino",
    b"dentry->d_name.len", b"dentry->d_iname:string", b"args->kthread", b"args->name:string",
    b"$retval->name:string", b"$retval->refcnt.counter", b"file.f_path", b"file-f_path",
    b"getname_flags", b"wake_up_new_task", b"p->comm:string", b"hrtimer_start_range_ns",
    b"mode", b"timer->function",
    # Linux 7.3's: $current and its fields, per-CPU reads, typecasts.
    b"$current->pid", b"$current->comm:string", b"$current->real_parent->tgid",
    b"this_cpu_ptr(", b"this_cpu_read(", b"this_cpu_read(@runqueues)", b"this_cpu_ptr(%di)",
    b"@this_cpu_off", b"@cpu_number", b"(task_struct)", b"(file)", b"(task_struct,pid)",
    b"(task_struct,se.group_node)", b"(file,f_path)", b"(dentry)", b"(task_struct)file->pid",
    b"(file)$retval->f_mode", b"(task_struct,group_leader)$current->pid", b"->pid", b"->comm",
    b"(a)(", b")->", b",", b"+0(+0(+0(+0(+0(+0(+0(+0(+0(@0)))))))))",
]

FUNCS = [b"vfs_read", b"kernel_clone", b"do_sys_openat2", b"dput", b"kfree", b"vfs_open", b"do_exit",
         b"getname_flags", b"wake_up_new_task"]

# Latin-1 letters and spaces: the kernel's ctype says isalpha() / isspace().
LATIN1 = bytes(range(0xA0, 0x100))
SPECIALS = b":/%$@+-()[]\"\\=,.#_ \t\r\x0b\x0c\x7f"


def corpus_lines():
    """Every distinct line of the corpus, files in name order."""
    seen, out = set(), []
    for name in sorted(os.listdir(CORPUS)):
        path = os.path.join(CORPUS, name)
        if not os.path.isfile(path) or name.startswith("."):
            continue
        with open(path, "rb") as f:
            data = f.read()
        for line in data.split(b"\n"):
            if line not in seen:
                seen.add(line)
                out.append(line)
    return out


class Mutator:
    def __init__(self, rng, seeds):
        self.r = rng
        self.seeds = seeds
        # Seeds that look like probe definitions mutate into accepted lines
        # more often; keep them apart to draw from them now and then.
        self.defs = [s for s in seeds if s[:1] in (b"p", b"r") and b"\0" not in s and b" " in s]
        # Definitions on a function the kernels have (and the fuzz target's
        # fake kernel knows): one small change keeps many of them valid.
        self.good = [s for s in self.defs if s.split(b" ")[1] in FUNCS]
        toks = set()
        for s in seeds:
            for t in s.split(b" "):
                if 0 < len(t) <= 40:
                    toks.add(t)
        self.tokens = sorted(toks) + DICT

    def byte(self):
        r = self.r
        k = r.randrange(4)
        if k == 0:
            return bytes([r.choice(LATIN1)])
        if k == 1:
            return bytes([r.choice(SPECIALS)])
        if k == 2:
            return bytes([r.randrange(0x20, 0x7F)])
        return bytes([r.randrange(256)])

    def flip(self, s):
        if not s:
            return self.byte()
        i = self.r.randrange(len(s))
        return s[:i] + bytes([s[i] ^ (1 << self.r.randrange(8))]) + s[i + 1:]

    def replace(self, s):
        if not s:
            return self.byte()
        i = self.r.randrange(len(s))
        return s[:i] + self.byte() + s[i + 1:]

    def insert(self, s):
        i = self.r.randrange(len(s) + 1)
        ins = self.byte() if self.r.randrange(3) else self.r.choice(self.tokens)
        return s[:i] + ins + s[i:]

    def delete(self, s):
        if not s:
            return s
        i = self.r.randrange(len(s))
        n = 1 + (self.r.randrange(min(8, len(s) - i)) if self.r.randrange(2) else 0)
        return s[:i] + s[i + n:]

    def swap_tokens(self, s):
        t = s.split(b" ")
        if len(t) < 2:
            return self.insert(s)
        i, j = self.r.randrange(len(t)), self.r.randrange(len(t))
        t[i], t[j] = t[j], t[i]
        return b" ".join(t)

    def replace_token(self, s, pool=None):
        t = s.split(b" ")
        i = self.r.randrange(len(t))
        t[i] = self.r.choice(pool or self.tokens)
        return b" ".join(t)

    def add_token(self, s, pool=None):
        t = s.split(b" ")
        t.insert(self.r.randrange(len(t) + 1), self.r.choice(pool or self.tokens))
        return b" ".join(t)

    def splice(self, s):
        o = self.r.choice(self.seeds)
        i = self.r.randrange(len(s) + 1)
        j = self.r.randrange(len(o) + 1)
        return s[:i] + o[j:]

    def latin1(self, s):
        """A Latin-1 byte in place of, or beside, a letter (in a name)."""
        letters = [i for i, c in enumerate(s) if chr(c).isalpha() and c < 0x80]
        c = bytes([self.r.choice(LATIN1)])
        if not letters:
            return self.insert(s)
        i = self.r.choice(letters)
        if self.r.randrange(2):
            return s[:i] + c + s[i + 1:]
        return s[:i] + c + s[i:]

    def long_arg(self, s):
        """A very long argument, name or token."""
        r = self.r
        n = r.choice([31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 3000, 4000])
        k = r.randrange(8)
        if k == 0:  # a long argument name
            arg = b"a" * n + b"=%di"
        elif k == 1:  # deep dereference
            d = max(1, n // 8)
            arg = b"+0(" * d + b"%di" + b")" * d
        elif k == 2:  # a long immediate string
            arg = b'\\"' + b"x" * n + b'"'
        elif k == 3:  # many arguments
            arg = b" ".join(b"a%d=%%di" % i for i in range(min(n, 300)))
        elif k == 4:  # a long type or array
            arg = b"+0(%di):u8[" + str(n).encode() + b"]"
        elif k == 5:  # a long symbol
            arg = b"@" + b"vfs_read" * max(1, n // 8)
        elif k == 6:  # a long event or group name
            name = b"e" * n
            t = s.split(b" ")
            t[0] = r.choice([b"p:", b"r:", b"p:" + name + b"/"]) + name
            return b" ".join(t)
        else:  # a seed token repeated into one long token
            t = r.choice(s.split(b" ")) or b"x"
            arg = (t * (n // len(t) + 1))[:n]
        t = s.split(b" ")
        if len(t) > 2 and r.randrange(2):
            t[r.randrange(2, len(t))] = arg
        else:
            t.append(arg)
        return b" ".join(t)

    def mutate(self, s):
        r = self.r
        ops = [
            (self.flip, 6), (self.replace, 6), (self.insert, 8), (self.delete, 6),
            (self.swap_tokens, 4), (self.replace_token, 6), (self.add_token, 4),
            (self.splice, 5), (self.latin1, 6), (self.long_arg, 2),
        ]
        total = sum(w for _, w in ops)
        for _ in range(1 + r.randrange(3)):
            x = r.randrange(total)
            for op, w in ops:
                if x < w:
                    s = op(s)
                    break
                x -= w
        return s.replace(b"\n", b"")

    def light(self, s):
        """One small change: more of these lines are still accepted."""
        k = self.r.randrange(5)
        if k == 0:
            s = self.replace_token(s, DICT)
        elif k == 1:
            s = self.add_token(s, DICT)
        elif k == 2:
            s = self.latin1(s)
        elif k == 3:
            s = self.long_arg(s)
        else:
            s = self.swap_tokens(s)
        return s.replace(b"\n", b"")


def escape(line):
    out = bytearray()
    for c in line:
        if c == 0x5C:
            out += b"\\\\"
        elif 0x20 <= c < 0x7F:
            out.append(c)
        else:
            out += b"\\x%02x" % c
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("out")
    a = ap.parse_args()

    lines = corpus_lines()
    seen = set(lines)
    rng = random.Random(a.seed)
    m = Mutator(rng, lines)
    stuck = 0
    while len(lines) < a.count:
        k = rng.randrange(10)
        if k < 3:
            new = m.light(rng.choice(m.good))
        elif k < 6:
            new = m.mutate(rng.choice(m.defs))
        else:
            new = m.mutate(rng.choice(m.seeds))
        if new in seen:
            stuck += 1
            if stuck > 100000:
                sys.exit("hostile-lines: cannot find new lines")
            continue
        seen.add(new)
        lines.append(new)
    data = b"".join(escape(line) + b"\n" for line in lines[: a.count])
    try:
        with open(a.out, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()

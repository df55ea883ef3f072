// SPDX-License-Identifier: GPL-2.0-only

//! The fetch program: what one argument does on a probe hit.
//!
//! The same instruction set as C (`enum fetch_op` in trace_probe.h),
//! compiled the same way, so that every quirk of the C interpreter (arrays of
//! strings re-dereferencing the pointer array, bitfields shifting in the
//! container width) carries over. Unlike C, an instruction is a plain struct
//! rather than a union told apart by its opcode; strings an instruction needs
//! (an `@SYM` name, an immediate string) are ranges of the argument's own
//! text, so a program owns no memory.
//!
//! Every place that tells opcodes apart (the parser's rules, the
//! [`Shortcut`], the interpreter's stages) asks [`Op::class`], one
//! exhaustive match: an opcode added here does not compile until it has a
//! class, and a class's opcodes are told apart by exhaustive matches too.
//! The hit path's first test (`simple` and `load` in `fetch.rs`) looks at
//! the opcodes themselves, which saves a second match an argument: `load`
//! matches every opcode, and `simple` hands any program it does not name to
//! the stages that ask the class.
//!
//! Adding a fetch kind is an opcode here with its class, the parser's rule
//! that emits it (`arg.rs`), and the interpreter's match on the class that
//! the compiler then asks for (`fetch.rs`).

/// Opcodes, in C order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Empty slot.
    Nop,
    /// Load a register: `param` = byte offset in `struct pt_regs`.
    Reg,
    /// Load the `param`th word of the kernel stack.
    Stack,
    /// Load the stack pointer.
    StackP,
    /// Load the return value.
    Retval,
    /// Load the immediate value ([`Insn::imm`]). An `@SYM[+|-offs]` one has
    /// `param` [`Insn::SYMBOL`] and the symbol's text at
    /// `data_start..+data_len`; its value is filled in when the probe is
    /// registered.
    Imm,
    /// Load the current task's comm (only followed by a string store).
    Comm,
    /// Load function argument `param` (0-based).
    Arg,
    /// Load the immediate string `data_start..+data_len` of the argument
    /// text (only followed by a string store).
    Data,
    /// Load the entry-data word at byte `offset` (`$argN` on a return probe).
    Edata,
    /// Placeholder for `@SYM[+|-offs]` (`data_start..+data_len`), resolved
    /// into the following [`Op::Imm`] when the probe is registered.
    Symbol,
    /// `val = *(long *)(val + offset)` from kernel (or, below `TASK_SIZE`,
    /// user) memory.
    Deref,
    /// `val = *(long *)(val + offset)` from user memory.
    UDeref,
    /// Store `val` truncated to `size` bytes.
    StRaw,
    /// Copy `size` bytes from `val + offset`.
    StMem,
    /// Copy `size` bytes from user memory at `val + offset`.
    StUMem,
    /// Copy the string at `val + offset` into the dynamic area.
    StString,
    /// Copy the user string at `val + offset` into the dynamic area.
    StUString,
    /// Store the `sprint_symbol()` text of `val + offset` as a string.
    StSymstr,
    /// Keep bits of the stored value: shift left by `lshift`, then right by
    /// `rshift`, in a container of `size` bytes.
    ModBf,
    /// Repeat the store `param` times (arrays).
    LpArray,
    /// End of program.
    End,
    // Linux 7.3's, after the others: their discriminants unchanged, the
    // hit path's dispatch on them compiles as before.
    /// Load the current task's address (`$current`, 7.3).
    Current,
    /// `val = this_cpu_ptr(val)`: the current CPU's address of the per-CPU
    /// variable at `val` (`this_cpu_ptr()`, `this_cpu_read()`, 7.3).
    CpuPtr,
}

impl Op {
    /// The stage of the interpreter that runs `self`, and what it does there.
    /// Inlined: the hit path asks it of every instruction it runs, and the
    /// match folds into the caller's.
    #[inline(always)]
    pub const fn class(self) -> Class {
        match self {
            Op::Nop => Class::Nop,
            Op::Reg => Class::Value(Value::Reg),
            Op::Stack => Class::Value(Value::Stack),
            Op::StackP => Class::Value(Value::StackP),
            Op::Retval => Class::Value(Value::Retval),
            Op::Imm => Class::Value(Value::Imm),
            Op::Comm => Class::Bytes(Bytes::Comm),
            Op::Arg => Class::Value(Value::Arg),
            Op::Data => Class::Bytes(Bytes::Data),
            Op::Edata => Class::Value(Value::Edata),
            Op::Current => Class::Value(Value::Current),
            Op::CpuPtr => Class::CpuPtr,
            Op::Symbol => Class::Symbol,
            Op::Deref => Class::Deref(Space::Kernel),
            Op::UDeref => Class::Deref(Space::User),
            Op::StRaw => Class::Store(Put::Raw),
            Op::StMem => Class::Store(Put::Mem(Space::Kernel)),
            Op::StUMem => Class::Store(Put::Mem(Space::User)),
            Op::StString => Class::Store(Put::String(Space::Kernel)),
            Op::StUString => Class::Store(Put::String(Space::User)),
            Op::StSymstr => Class::Store(Put::Symstr),
            Op::ModBf => Class::Bitfield,
            Op::LpArray => Class::Loop,
            Op::End => Class::End,
        }
    }

    /// Whether a `:string` or `:ustring` may follow `self`, the last
    /// fetch instruction (`finalize_fetch_insn()` in trace_probe.c):
    /// a dereference, an immediate (an address), or bytes at hand.
    pub const fn feeds_string(self) -> bool {
        matches!(
            self.class(),
            Class::Deref(_) | Class::Value(Value::Imm) | Class::Bytes(_)
        )
    }

    /// Whether a `:symstr` may follow `self` (`finalize_fetch_insn()`): C's
    /// list, which leaves out `$stack`, immediates, entry data and user
    /// dereferences.
    pub const fn feeds_symstr(self) -> bool {
        matches!(
            self.class(),
            Class::Value(Value::Reg | Value::Stack | Value::Retval | Value::Arg)
                | Class::Deref(Space::Kernel)
        )
    }

    /// Whether a string store after `self` needs a slot of its own, the
    /// loaded address kept (an immediate or bytes at hand), rather than
    /// taking over the last dereference (`finalize_fetch_insn()`).
    pub const fn keeps_address(self) -> bool {
        matches!(self.class(), Class::Value(Value::Imm) | Class::Bytes(_))
    }

    /// Whether an array loop may repeat the store `self` (the array check of
    /// `finalize_fetch_insn()`): kernel memory and strings; C leaves out
    /// user memory (`+u0(%di):u8[4]` is `BAD_STRING`).
    pub const fn repeats(self) -> bool {
        matches!(
            self.class(),
            Class::Store(Put::Mem(Space::Kernel) | Put::String(_))
        )
    }
}

/// What an opcode does, by the stage of the interpreter that runs it
/// (`process_fetch_insn()` in trace_kprobe.c, then
/// `process_fetch_insn_bottom()` in trace_probe_tmpl.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// An empty slot.
    Nop,
    /// The `@SYM` placeholder before the load it resolves into.
    Symbol,
    /// Stage 1: a value from the machine or the entry data.
    Value(Value),
    /// Stage 1: bytes at hand (`$comm`, an immediate string), only ever
    /// followed by a string store.
    Bytes(Bytes),
    /// Stage 2: `val = *(long *)(val + offset)`.
    Deref(Space),
    /// Stage 2: `val = this_cpu_ptr(val)`.
    CpuPtr,
    /// Stage 3: the store into the field.
    Store(Put),
    /// Stage 4: keep the bits of a bitfield.
    Bitfield,
    /// Stage 5: repeat the store for the next array element.
    Loop,
    /// The end of the program.
    End,
}

/// The values stage 1 loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// [`Op::Reg`].
    Reg,
    /// [`Op::Stack`].
    Stack,
    /// [`Op::StackP`].
    StackP,
    /// [`Op::Retval`].
    Retval,
    /// [`Op::Imm`].
    Imm,
    /// [`Op::Arg`].
    Arg,
    /// [`Op::Edata`].
    Edata,
    /// [`Op::Current`].
    Current,
}

/// The bytes at hand stage 1 loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bytes {
    /// The current task's comm ([`Op::Comm`]).
    Comm,
    /// An immediate string of the argument text ([`Op::Data`]).
    Data,
}

/// The stores of stage 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// The value itself, truncated ([`Op::StRaw`]).
    Raw,
    /// The memory the value points to ([`Op::StMem`], [`Op::StUMem`]).
    Mem(Space),
    /// The string the value points to ([`Op::StString`],
    /// [`Op::StUString`]).
    String(Space),
    /// The symbol of the value ([`Op::StSymstr`]).
    Symstr,
}

/// Which memory an address is read from. A kernel read of an address
/// below `TASK_SIZE` still goes to user memory (`probe_mem_read()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `copy_from_kernel_nofault()` and its string twin.
    Kernel,
    /// `copy_from_user_nofault()` and its string twin.
    User,
}

/// One instruction. Fields an opcode does not use are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// What to do.
    pub op: Op,
    /// Store size, or bitfield container size.
    pub size: u8,
    /// Bitfield left shift.
    pub lshift: u8,
    /// Bitfield right shift.
    pub rshift: u8,
    /// Start of the instruction's text in the argument text.
    pub data_start: u8,
    /// Length of that text.
    pub data_len: u8,
    /// Register offset, stack index, argument number, loop count (all
    /// at most `PARAM_MAX_STACK`, `THREAD_SIZE / sizeof(long)`);
    /// [`Insn::SYMBOL`] on an `@SYM` immediate.
    pub param: u16,
    /// Dereference or store offset; for `Imm`, the value's bits
    /// ([`Insn::imm`]). One field for both keeps an instruction at 16
    /// bytes, a program at 256.
    pub offset: i64,
}

impl Insn {
    /// An empty slot.
    pub const NOP: Insn = Insn {
        op: Op::Nop,
        size: 0,
        lshift: 0,
        rshift: 0,
        data_start: 0,
        data_len: 0,
        param: 0,
        offset: 0,
    };

    /// An instruction with only its opcode set.
    pub const fn new(op: Op) -> Insn {
        Insn { op, ..Insn::NOP }
    }

    /// `Imm` loading `value`.
    pub const fn load_imm(value: u64) -> Insn {
        Insn {
            offset: value as i64,
            ..Insn::new(Op::Imm)
        }
    }

    /// `param` of an `Imm` that is an `@SYM` to resolve.
    pub const SYMBOL: u16 = 1;

    /// The value an `Imm` loads.
    pub const fn imm(&self) -> u64 {
        self.offset as u64
    }
}

const _: () = assert!(core::mem::size_of::<Insn>() == 16);

/// Instructions per argument (`FETCH_INSN_MAX`).
pub const FETCH_INSN_MAX: usize = 16;

/// An argument's program: [`FETCH_INSN_MAX`] slots, ending in [`Op::End`].
pub type Program = [Insn; FETCH_INSN_MAX];

/// What an argument keeps that varies in size: its field name, its text
/// and its fetch program.
pub trait Store {
    /// Field name: given, or `arg<N>`.
    fn name(&self) -> &[u8];
    /// The expression as written (after `%pd`/`%pD` rewriting), type
    /// included: shown in the read-back of `kprobe_events`.
    fn comm(&self) -> &[u8];
    /// The first [`HEAD`] instructions: all of the commonest programs (a
    /// load, a store, the end), which the hit path reads without a
    /// pointer to follow.
    fn head(&self) -> &[Insn; HEAD];
    /// Instruction `i`; [`Op::End`] past the program.
    fn insn(&self, i: usize) -> &Insn;
}

/// Instructions of a program a [`Store`] keeps with the argument.
pub const HEAD: usize = 3;

/// What a program holds past its last slot.
pub static END: Insn = Insn::new(Op::End);

/// The head of a program that has none (never, in practice: a program is
/// longer than its head).
pub static NOP_HEAD: [Insn; HEAD] = [Insn::NOP; HEAD];

/// Where the interpreter's shortcut finds the parts of a program it can
/// run: the commonest programs, without the general stages. Worked out
/// once, when the program is complete ([`shortcut`]), so a hit does not
/// look at the program's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortcut {
    /// Index of the load.
    pub load: u8,
    /// Index of the store; the dereferences are between the two.
    pub store: u8,
    /// What lies between the load and the store.
    pub derefs: Chain,
    /// A bitfield follows the store.
    pub bitfield: bool,
}

/// What a [`Shortcut`] runs between its load and its store (one byte, as
/// a `bool` took: a larger `Shortcut` cost every register argument three
/// instructions on x86-64, in the loop that stores the arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    /// Nothing.
    None,
    /// Dereferences.
    Derefs,
    /// Dereferences and per-CPU addresses ([`Op::CpuPtr`], 7.3's
    /// `this_cpu_*()`).
    PerCpu,
}

/// The [`Shortcut`] of a program whose field is `size` bytes, if it has
/// one: a value (a register, `$stackN`, `$stack`, `$argN`, `$retval`,
/// `\5`, `@sym`, an entry-data word, `$current`), any number of
/// dereferences and per-CPU addresses, then
/// stored as is, the memory it points to stored with the type's size
/// (filling the field, with or without a bitfield), or the string it
/// points to. So one and two dereferences, `symbol`, bitfields, `$argN` on
/// a return probe and single strings have one; arrays, `$comm`, immediate
/// strings and `symstr` do not.
pub fn shortcut(code: &[Insn], size: usize) -> Option<Shortcut> {
    let class = |i: usize| code.get(i).map_or(Class::End, |c| c.op.class());
    let load = usize::from(class(0) == Class::Symbol);
    if !matches!(class(load), Class::Value(_)) {
        return None;
    }
    let mut store = load + 1;
    let mut cpu = false;
    loop {
        match class(store) {
            Class::Deref(_) => {}
            Class::CpuPtr => cpu = true,
            _ => break,
        }
        store += 1;
    }
    let c = code.get(store)?;
    let string = match c.op.class() {
        Class::Store(put) => match put {
            Put::Raw | Put::Mem(_) => false,
            Put::String(_) => true,
            Put::Symstr => return None,
        },
        _ => return None,
    };
    if usize::from(c.size) != size {
        return None;
    }
    let bitfield = !string && class(store + 1) == Class::Bitfield;
    if class(store + 1 + usize::from(bitfield)) != Class::End {
        return None;
    }
    let derefs = if cpu {
        Chain::PerCpu
    } else if store > load + 1 {
        Chain::Derefs
    } else {
        Chain::None
    };
    Some(Shortcut {
        load: load as u8,
        store: u8::try_from(store).ok()?,
        derefs,
        bitfield,
    })
}

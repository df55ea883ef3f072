// SPDX-License-Identifier: GPL-2.0-only

//! The fetch program: what one argument does on a probe hit.
//!
//! The same instruction set as C (`enum fetch_op`, trace_probe.h:84-115),
//! compiled the same way, so that every quirk of the C interpreter (arrays of
//! strings re-dereferencing the pointer array, bitfields shifting in the
//! container width) carries over. Unlike C, an instruction is a plain struct
//! rather than a union told apart by its opcode; strings an instruction needs
//! (an `@SYM` name, an immediate string) are ranges of the argument's own
//! text, so a program owns no memory.

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

// SPDX-License-Identifier: GPL-2.0-only

//! The program of one argument while it is built: C's `code` cursor into
//! `parg->code` (trace_probe.c), its slots, the slot being filled, and the
//! one rule for running out of them (`TOO_MANY_OPS`).

use super::super::error::{Code, ParseError};
use super::super::insn::{Insn, Op, Program, FETCH_INSN_MAX};
use super::{Ctx, PResult};

/// An argument's program under construction. The slots after the one
/// being filled are `NOP` up to the last, which keeps `END` (C's `end`):
/// no op may take it.
pub(super) struct ProgramBuilder {
    code: Program,
    at: usize,
}

impl ProgramBuilder {
    /// An empty program, filling its first slot.
    pub(super) fn new() -> Self {
        let mut code = [Insn::NOP; FETCH_INSN_MAX];
        code[FETCH_INSN_MAX - 1] = Insn::new(Op::End);
        Self { code, at: 0 }
    }

    /// The op in the slot being filled (C's `code->op`).
    pub(super) fn op(&self) -> Op {
        self.code.get(self.at).map_or(Op::End, |insn| insn.op)
    }

    /// Fills the slot being filled.
    pub(super) fn set(&mut self, insn: Insn) {
        *self.current() = insn;
    }

    /// The slot being filled, to change in place.
    pub(super) fn current(&mut self) -> &mut Insn {
        // `at` stays below the last slot (`next`).
        let last = FETCH_INSN_MAX - 1;
        &mut self.code[self.at.min(last)]
    }

    /// Moves to the next slot, if one is left before `END`: C's
    /// `++code == end` while parsing and `code[1].op != FETCH_OP_NOP`
    /// after, which are the same test. `None` leaves the program as it was.
    pub(super) fn next(&mut self) -> Option<&mut Insn> {
        if self.at + 1 >= FETCH_INSN_MAX - 1 {
            return None;
        }
        self.at += 1;
        Some(self.current())
    }

    /// [`next`](Self::next), or `TOO_MANY_OPS` at the caret with `errno`:
    /// C answers `-EINVAL` for the fetch and a string's address, `-E2BIG`
    /// for the other stores, a BTF string's dereference and an array
    /// (trace_probe.c: `parse_probe_arg()`, `finalize_fetch_insn()`,
    /// `check_prepare_btf_string_fetch()`).
    pub(super) fn advance(&mut self, errno: i32, ctx: &Ctx<'_, '_>) -> PResult<&mut Insn> {
        let (index, offset) = (ctx.index, ctx.offset);
        self.next()
            .ok_or_else(|| ParseError::logged(errno, Code::TooManyOps, index, offset))
    }

    /// Moves to the next slot and fills it ([`advance`](Self::advance)).
    pub(super) fn push(&mut self, insn: Insn, errno: i32, ctx: &Ctx<'_, '_>) -> PResult<()> {
        *self.advance(errno, ctx)? = insn;
        Ok(())
    }

    /// Ends the program after the slot being filled.
    pub(super) fn terminate(&mut self) {
        if let Some(slot) = self.code.get_mut(self.at + 1) {
            *slot = Insn::new(Op::End);
        }
    }

    /// `@SYM`: the placeholder's name moves into the immediate that
    /// follows it, and the program starts with the load. C keeps a
    /// `FETCH_NOP_SYMBOL` that the interpreter skips on every hit
    /// (set in `parse_probe_arg()`, skipped in `process_fetch_insn()`); the op count
    /// (`TOO_MANY_OPS`) was taken before, as C takes it.
    /// `resolve_symbols()` fills the immediate in.
    pub(super) fn fold_symbol(&mut self) {
        let code = &mut self.code;
        if code[0].op == Op::Symbol && code[1].op == Op::Imm {
            let sym = code[0];
            code.copy_within(1.., 0);
            code[0].data_start = sym.data_start;
            code[0].data_len = sym.data_len;
            code[0].param = Insn::SYMBOL;
        }
    }

    /// The program.
    pub(super) fn finish(self) -> Program {
        self.code
    }
}

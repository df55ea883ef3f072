// SPDX-License-Identifier: GPL-2.0-only

//! A probe as parsed ([`Args`]) and as the registry keeps it
//! ([`StoredProbe`]): what varies in size out of line ([`Exact`]), the
//! arguments shared with the event's record layout ([`StoredArgs`]), each
//! argument's name, text and program past its first instructions in just
//! the memory they take ([`StoredArg`]).

use kernel::{prelude::*, sync::Arc};

use crate::probe::{
    arg::{Arg, EntryList, Parsed, Split},
    command::{ArgList, NoMemory, Probe},
    insn::Insn,
    text::Text,
};

/// A probe's arguments, in kernel memory.
pub(crate) struct Args(pub(super) KVec<Arg>);

/// The parts one after the other in a boxed slice of exactly their length.
pub(super) fn exact<T: Clone>(parts: &[&[T]]) -> Result<KBox<[T]>> {
    let n = parts.iter().map(|p| p.len()).sum();
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for p in parts {
        v.extend_from_slice(p, GFP_KERNEL)?;
    }
    Ok(v.into_boxed_slice(GFP_KERNEL)?)
}

/// What a stored probe keeps of a part that varies in size (its symbol,
/// its entry arguments): exactly its elements, where the parser's keeps
/// room for the largest (a symbol `MAX_SYMBOL_LEN` bytes, entry
/// arguments 128).
pub(crate) struct Exact<T>(KBox<[T]>);

impl<T: Clone> Exact<T> {
    pub(super) fn new(elements: &[T]) -> Result<Self> {
        Ok(Exact(exact(&[elements])?))
    }
}

impl Text for Exact<u8> {
    fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl EntryList for Exact<u16> {
    fn args(&self) -> &[u16] {
        &self.0
    }
}

/// An argument as a stored probe keeps it: the first instructions of its
/// program inline (all of the commonest programs, which the hit reads
/// without a pointer to follow), the rest of the program and the name and
/// text out of line, each in exactly its length.
pub(crate) type StoredArg = Arg<Split<KBox<[Insn]>, KBox<[u8]>>>;

impl Args {
    /// The arguments as a stored probe keeps them ([`StoredArg`]): exactly
    /// their number, shared with the record layout of the probe's event.
    pub(super) fn share(self) -> Result<StoredArgs> {
        let mut v = KVec::with_capacity(self.0.len(), GFP_KERNEL)?;
        for a in self.0.iter() {
            let s = a.map(|p: &Parsed| Split::new(p, |t| exact(&[t]), |parts| exact(parts)))?;
            v.push(s, GFP_KERNEL)?;
        }
        Ok(StoredArgs(Arc::new(v, GFP_KERNEL)?))
    }
}

/// A stored probe's arguments, shared with its event's record layout
/// (the layout in its [`Event`](super::event::Event)) when it is the
/// event's first probe.
pub(crate) struct StoredArgs(pub(super) Arc<KVec<StoredArg>>);

impl ArgList for StoredArgs {
    type Store = Split<KBox<[Insn]>, KBox<[u8]>>;

    fn push(&mut self, _arg: Arg) -> Result<(), NoMemory> {
        Err(NoMemory)
    }

    fn as_slice(&self) -> &[StoredArg] {
        &self.0
    }
}

/// A probe as the registry keeps it: what varies in size out of line, and
/// no group and event names (its event's are its names).
pub(crate) type StoredProbe = Probe<StoredArgs, Exact<u8>, Exact<u16>, ()>;

impl ArgList for Args {
    type Store = Parsed;

    fn push(&mut self, arg: Arg) -> Result<(), NoMemory> {
        self.0.push(arg, GFP_KERNEL).map_err(|_| NoMemory)
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

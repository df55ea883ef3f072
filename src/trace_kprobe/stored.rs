// SPDX-License-Identifier: GPL-2.0-only

//! A probe as parsed ([`Args`]) and as the registry keeps it
//! ([`StoredProbe`]): what varies in size out of line, the arguments
//! shared with the event's record layout.

use kernel::{prelude::*, sync::Arc};

use crate::probe::{
    arg::{Arg, EntryArgs, EntryList},
    command::{ArgList, Probe},
    text::Text,
};

/// A probe's arguments, in kernel memory.
pub(crate) struct Args(pub(super) KVec<Arg>);

/// A copy of `s` in a vector of exactly its length (what a stored probe
/// keeps out of line).
fn exact<T: Clone>(s: &[T]) -> Result<KVec<T>> {
    let mut v = KVec::with_capacity(s.len(), GFP_KERNEL)?;
    v.extend_from_slice(s, GFP_KERNEL)?;
    Ok(v)
}

impl Args {
    /// The arguments as a stored probe keeps them: exactly their number
    /// (the parser grows the list by doubling, and an argument takes 368
    /// bytes), shared with the record layout of the probe's event.
    pub(super) fn share(self) -> Result<StoredArgs> {
        let v = if self.0.capacity() == self.0.len() {
            self.0
        } else {
            exact(&self.0)?
        };
        Ok(StoredArgs(Arc::new(v, GFP_KERNEL)?))
    }
}

/// A stored probe's arguments, shared with its event's record layout
/// ([`EventShared::layout`]) when it is the event's first probe.
pub(crate) struct StoredArgs(pub(super) Arc<KVec<Arg>>);

impl ArgList for StoredArgs {
    fn push(&mut self, _arg: Arg) -> Result<(), ()> {
        Err(())
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

/// A stored probe's symbol (or group or event name), out of line: inline,
/// a symbol takes `MAX_SYMBOL_LEN` (600) bytes whatever its length.
pub(crate) struct StoredSymbol(KVec<u8>);

impl StoredSymbol {
    pub(super) fn new(s: &[u8]) -> Result<Self> {
        Ok(StoredSymbol(exact(s)?))
    }
}

impl Text for StoredSymbol {
    fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A stored return probe's entry arguments (`$argN`), just those it has:
/// inline, room for 128 takes 264 bytes.
pub(crate) struct StoredEntry(KVec<u16>);

impl StoredEntry {
    pub(super) fn new(e: &EntryArgs) -> Result<Self> {
        Ok(StoredEntry(exact(e.args())?))
    }
}

impl EntryList for StoredEntry {
    fn args(&self) -> &[u16] {
        &self.0
    }
}

/// A probe as the registry keeps it: what varies in size out of line (the
/// group and event names too: inline they take 66 bytes each), so that the
/// probe with its `dynamic_events` entry fits a 256-byte allocation.
pub(crate) type StoredProbe = Probe<StoredArgs, StoredSymbol, StoredEntry, StoredSymbol>;

impl ArgList for Args {
    fn push(&mut self, arg: Arg) -> Result<(), ()> {
        self.0.push(arg, GFP_KERNEL).map_err(|_| ())
    }

    fn as_slice(&self) -> &[Arg] {
        &self.0
    }
}

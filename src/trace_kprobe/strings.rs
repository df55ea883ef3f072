// SPDX-License-Identifier: GPL-2.0-only

//! An event's strings: the ones the tracing core keeps pointers to while
//! the event exists (its group and name, the type and name of each field,
//! its print format), made and read back here, in one place.

use core::fmt::Write;

use kernel::{prelude::*, str::CStr, trace_event::EventNames};

use super::stored::StoredArg;
use crate::kernel_env::{Collect, PutBytes, Raw};
use crate::probe::{command::Names, format, text::Str};

/// An event's strings as C strings one after the other, in one allocation
/// of exactly their length: the group, the name, then the type and the
/// name of each field after the head (the head fields' are constants:
/// [`head_field`]), then the print format.
pub(crate) struct EventStrings {
    bytes: KBox<[u8]>,
    /// The group's length: found without a walk, since defining or
    /// removing a probe compares every event's names.
    group_len: u8,
    /// The name's length.
    name_len: u8,
}

impl EventStrings {
    /// The strings of an event `names` whose records a probe with `args`
    /// (a return probe if `is_return`) lays out.
    ///
    /// # Errors
    ///
    /// `ENOMEM`; `EINVAL` for a NUL byte inside a string.
    pub(super) fn new(names: Names<'_>, is_return: bool, args: &[StoredArg]) -> Result<Self> {
        // The parser keeps names to MAX_EVENT_NAME_LEN, 64 bytes.
        let (Ok(group_len), Ok(name_len)) = (
            u8::try_from(names.group.len()),
            u8::try_from(names.event.len()),
        ) else {
            return Err(EINVAL);
        };
        let mut c = Collect::new();
        for n in [names.group, names.event] {
            c.put_bytes(n);
            c.end_string();
        }
        for f in format::fields(is_return, args) {
            if head_field(f.name).is_some() {
                continue;
            }
            c.put_bytes(f.ty.as_bytes());
            if f.count != 0 {
                // "[N]": a u32 takes at most 10 digits.
                let mut count = Str::<12>::new();
                let _ = write!(count, "[{}]", f.count);
                c.put_bytes(count.as_bytes());
            }
            c.end_string();
            c.put_bytes(f.name);
            c.end_string();
        }
        format::print_fmt(&mut Raw(&mut c), is_return, args).map_err(|_| EINVAL)?;
        c.end_string();
        Ok(EventStrings {
            bytes: c.into_boxed_slice()?,
            group_len,
            name_len,
        })
    }

    /// The group.
    pub(super) fn group(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.group_len)).unwrap_or(&[])
    }

    /// The name.
    pub(super) fn name(&self) -> &[u8] {
        let start = usize::from(self.group_len) + 1;
        self.bytes
            .get(start..start + usize::from(self.name_len))
            .unwrap_or(&[])
    }

    /// Every string, in order.
    fn all(&self) -> impl Iterator<Item = &CStr> {
        self.bytes
            .split_inclusive(|&b| b == 0)
            .filter_map(|s| CStr::from_bytes_with_nul(s).ok())
    }

    /// The group, the name and the print format, for the tracing core.
    pub(super) fn event_names(&self) -> EventNames<'_> {
        let empty = c"";
        let mut s = self.all();
        EventNames {
            system: s.next().unwrap_or(empty),
            name: s.next().unwrap_or(empty),
            print_fmt: s.last().unwrap_or(empty),
        }
    }

    /// The type and the name of each field, head fields included, in the
    /// order of [`format::fields`] for the same probe.
    pub(super) fn fields<'a>(
        &'a self,
        is_return: bool,
        args: &'a [StoredArg],
    ) -> impl Iterator<Item = Option<(&'a CStr, &'a CStr)>> + 'a {
        let mut strings = self.all().skip(2);
        format::fields(is_return, args).map(move |f| match head_field(f.name) {
            Some(head) => Some(head),
            None => Some((strings.next()?, strings.next()?)),
        })
    }
}

/// The type and name of a head field (`__probe_ip`, or `__probe_func` and
/// `__probe_ret_ip`): the same for every event, so constants rather than
/// 25 bytes of each event's strings. No argument takes these names
/// (`arg::RESERVED`).
fn head_field(name: &[u8]) -> Option<(&'static CStr, &'static CStr)> {
    let ty = c"unsigned long";
    match name {
        b"__probe_ip" => Some((ty, c"__probe_ip")),
        b"__probe_func" => Some((ty, c"__probe_func")),
        b"__probe_ret_ip" => Some((ty, c"__probe_ret_ip")),
        _ => None,
    }
}

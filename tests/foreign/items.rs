// Types the calls of calls.txt need: a tracefs file's operations, a
// dynamic event type and a trace event. Alone (the control module) they
// reach nothing the kernel keeps from modules.

use core::convert::Infallible;
use kernel::c_str;
use kernel::seq_file::SeqFile;
use kernel::str::CStr;
use kernel::trace_event::dyn_event::{Args, Entry, Provider, Type};
use kernel::trace_event::{
    EventBox, EventFile, EventLock, EventNames, Fields, Kind, Targets, TraceSeq,
};

struct Hello;

#[vtable]
impl kernel::tracefs::Operations for Hello {
    fn show(&self, m: &SeqFile) -> Result {
        m.put(b"hello\n");
        Ok(())
    }
}

// A dynamic event type whose create runs `$body` with the type `$ty` and
// the lock proof `$lock` (what only a create can do: add an event).
macro_rules! provider {
    ($name:ident, |$ty:ident, $lock:ident| $body:block) => {
        struct $name;
        impl Provider for $name {
            type Entry = u32;
            fn create($ty: &Type<Self>, $lock: &EventLock, _: &CStr) -> Result $body
            fn show(&self, _: &EventLock, _e: &u32, _m: &SeqFile) -> Result {
                Ok(())
            }
            fn is_busy(&self, _: &EventLock, _e: &u32) -> bool {
                false
            }
            fn free(&self, _: &EventLock, _e: &u32) -> Result {
                Ok(())
            }
            fn matches(&self, _: &EventLock, _: Option<&CStr>, _: &CStr, _: Args<'_>, _: &u32) -> bool {
                false
            }
        }
    };
}

// The dynamic event type most calls need: it creates nothing.
provider!(Ty, |_ty, _lock| { Err(ECANCELED) });

struct Ev {
    own: Targets,
}

#[vtable]
impl kernel::trace_event::Event for Ev {
    fn names(&self) -> EventNames<'_> {
        EventNames {
            system: c_str!("foreign"),
            name: c_str!("ev"),
            print_fmt: c_str!("\"\""),
        }
    }
    fn targets(&self) -> &Targets {
        &self.own
    }
    fn define_fields<'a>(&'a self, _fields: &mut Fields<'a>) -> Result {
        Ok(())
    }
    fn print(&self, _record: &[u8], _out: &mut TraceSeq) -> core::fmt::Result {
        Ok(())
    }
    fn register(&self, _file: &EventFile) -> Result {
        Ok(())
    }
    fn unregister(&self, _file: &EventFile) -> Result {
        Ok(())
    }
}

// SAFETY: the module is built, never loaded: nothing uses it.
static NOT_LOADED: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };

// perf's kprobe PMU: a provider of local events that makes none.
#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
struct Lk;

#[cfg(CONFIG_KPROBE_EVENT_PROVIDERS)]
impl kernel::trace_event::local::LocalKprobes for Lk {
    type Event = Ev;
    fn create_local(
        &self,
        _place: kernel::kprobes::Place<'_>,
        _is_return: bool,
    ) -> Result<EventBox<Ev>> {
        Err(ENOENT)
    }
}

//! The handle an `fmi2Component` points to: the instance behind it, a tombstone
//! once it is freed, the guard that tells a master's logger calling back in from
//! another thread calling at the same time, and the one place where a panic
//! becomes `fmi2Fatal`.
//!
//! Every export goes through [`call`] (or [`free_instance`]): it finds a live
//! component, takes it for this thread (refusing a re-entrant or a concurrent
//! call), checks the state machine, runs the body inside `catch_unwind` and
//! turns its `Result` into an `fmi2Status`.

use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

use fmu_model::fmi2::*;

use crate::error::{Failure, FmiError, FmiResult};
use crate::instance::Instance;
use crate::logger::{thread_token, Category, Logger, Scope};
use crate::state_machine::Call;

const LIVE: u64 = 0x524d_4641_4c49_5645; // "RMFALIVE"
const FREED: u64 = 0x524d_4646_5245_4544; // "RMFFREED"

/// [`Component::running`] while `fmi2FreeInstance` runs (no [`Call`] has it).
const FREEING: u8 = u8::MAX;

/// What an `fmi2Component` points to. After `fmi2FreeInstance` the instance is
/// dropped but this small header is kept (a tombstone), so that a second free or
/// a call on a freed component is answered with `fmi2Error` instead of touching
/// freed memory.
///
/// Only shared references to it are ever made: a master's logger callback may call
/// back into the FMU while a call on this component runs (re-entrance), and a
/// master may call it from two threads at once by mistake; the header must then
/// be readable without aliasing the running call's borrow of the instance.
/// `owner` tells the two apart; neither kind of refused call touches the instance.
struct Component {
    magic: AtomicU64,
    /// The thread whose call on this component runs ([`thread_token`]), 0 when
    /// none does. Taken with one compare-and-swap per call: a counter in a `Cell`
    /// was raced by two threads and left the instance refusing every later call.
    owner: AtomicUsize,
    /// The [`Call`] the owner runs (`as u8`, or [`FREEING`]), to name it to a
    /// concurrent caller.
    running: AtomicU8,
    /// Threads reading `logger` to report a concurrent call; `free` waits for
    /// them before it drops the logger.
    visitors: AtomicU8,
    /// The owner is reporting a re-entrant call (owner's thread only): a logger
    /// that calls back on every message is told once per level.
    reporting: Cell<bool>,
    /// `fmi2FreeInstance` was called from inside a call: free when it returns
    /// (owner's thread only).
    free_pending: Cell<bool>,
    /// The instance's logger, for messages about refused calls (the instance
    /// itself is borrowed by the running call then).
    logger: UnsafeCell<Option<Box<Logger>>>,
    /// Boxed, so that the tombstone kept after a free is small.
    instance: UnsafeCell<Option<Box<Instance>>>,
}

/// How [`Component::enter`] found the component.
enum Entry {
    /// This thread now owns it.
    Owned,
    /// A call on this thread is running: the master's logger called back in.
    Reentrant,
    /// A call runs on another thread.
    Concurrent,
}

impl Component {
    /// Takes the component for this thread's call of `running`.
    #[inline]
    fn enter(&self, running: u8) -> Entry {
        let me = thread_token();
        match self
            .owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                self.running.store(running, Ordering::Relaxed);
                Entry::Owned
            }
            Err(holder) if holder == me => Entry::Reentrant,
            Err(_) => Entry::Concurrent,
        }
    }

    /// Gives the component back: everything the call wrote is seen by the next
    /// thread that takes it.
    #[inline]
    fn leave(&self) {
        self.owner.store(0, Ordering::Release);
    }

    /// Answers a call made while another call on this component runs on this
    /// thread. Logs once per outer call, so a logger that calls back on every
    /// message ends.
    fn reentrant(&self, function: &str, what: &str) -> fmi2Status {
        if !self.reporting.replace(true) {
            // SAFETY: the logger box is replaced only by `free`, which this
            // thread is not running (it runs with no call in progress, or after
            // the outer call returned); this shared borrow ends here.
            if let Some(logger) = unsafe { &*self.logger.get() } {
                logger.log(
                    Category::Error,
                    &format!(
                        "{function}: called from inside another FMI call on this instance \
                         (from the master's logger callback): {what}"
                    ),
                );
            }
            self.reporting.set(false);
        }
        fmi2Error
    }

    /// Answers a call made from another thread while a call on this component
    /// runs: FMI 2.0 lets one thread at a time call an instance.
    #[cold]
    fn concurrent(&self, function: &str, what: &str) -> fmi2Status {
        self.visitors.fetch_add(1, Ordering::SeqCst);
        // `free` marks the tombstone before it waits for visitors: either it
        // sees this visitor, or this visitor sees the mark and leaves the
        // logger alone.
        if self.magic.load(Ordering::SeqCst) == LIVE {
            let running = match self.running.load(Ordering::Relaxed) {
                FREEING => "fmi2FreeInstance",
                i => Call::ALL.get(usize::from(i)).map_or("a call", |c| c.name()),
            };
            // SAFETY: `free` drops the logger only once no visitor remains (see
            // above), and nothing else replaces it; `Logger::log` only reads.
            if let Some(logger) = unsafe { &*self.logger.get() } {
                logger.log(
                    Category::Error,
                    &format!(
                        "{function}: called while {running} runs on this instance from another \
                         thread; FMI 2.0 lets one thread at a time call an instance: {what}, \
                         and the instance stays usable"
                    ),
                );
            }
        }
        self.visitors.fetch_sub(1, Ordering::SeqCst);
        fmi2Error
    }

    /// Drops the instance and keeps the tombstone.
    ///
    /// # Safety
    /// This thread owns the component, no call on it is in progress, and `c`
    /// must be the pointer this header lives at.
    unsafe fn free(&self, c: fmi2Component) {
        self.running.store(FREEING, Ordering::Relaxed);
        self.magic.store(FREED, Ordering::SeqCst);
        while self.visitors.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
        // SAFETY: owned, with no call in progress and no visitor: nothing
        // borrows the instance or the logger.
        let (instance, logger) =
            unsafe { ((*self.instance.get()).take(), (*self.logger.get()).take()) };
        // Dropping the link unmaps the memory: a failure is logged to the master.
        let scope = logger.as_deref().map(Scope::enter);
        drop(instance);
        drop(scope);
        drop(logger);
        keep_tombstone(c);
    }
}

/// The header behind `c`, if it is a live component.
///
/// # Safety
/// `c` must be NULL or a pointer returned by `fmi2Instantiate` (live or freed).
unsafe fn component<'a>(c: fmi2Component) -> Option<&'a Component> {
    if c.is_null() {
        return None;
    }
    // SAFETY: per the contract, a non-NULL `c` came from `fmi2Instantiate`, whose
    // allocation is never released; only shared references to it are made.
    let comp = unsafe { &*c.cast::<Component>() };
    (comp.magic.load(Ordering::Relaxed) == LIVE).then_some(comp)
}

/// Runs `body` on the instance behind `c`; a panic becomes `fmi2Fatal`, logged.
///
/// # Safety
/// As for [`component`].
#[inline]
pub unsafe fn call(
    c: fmi2Component,
    call: Call,
    body: impl FnOnce(&mut Instance) -> FmiResult,
) -> fmi2Status {
    // SAFETY: forwarded contract.
    let Some(comp) = (unsafe { component(c) }) else {
        return fmi2Error; // NULL or freed: there is no logger to tell.
    };
    match comp.enter(call as u8) {
        Entry::Owned => {}
        Entry::Reentrant => return comp.reentrant(call.name(), "the call is refused"),
        Entry::Concurrent => return comp.concurrent(call.name(), "the call is refused"),
    }
    // The component was freed between the check above and taking it.
    if comp.magic.load(Ordering::Relaxed) != LIVE {
        comp.leave();
        return fmi2Error;
    }
    // SAFETY: this thread owns the component, so no other borrow of the instance
    // exists; a re-entrant or concurrent call is answered above without touching
    // it.
    let status = match unsafe { (*comp.instance.get()).as_deref_mut() } {
        Some(inst) => run(inst, call, body),
        None => fmi2Error,
    };
    if comp.free_pending.get() {
        // SAFETY: still owned, the call has returned, and `c` is this header's
        // address.
        unsafe { comp.free(c) };
    }
    comp.leave();
    status
}

/// A new live component for `instance`, as the handle `fmi2Instantiate` returns.
pub fn new_handle(logger: Logger, instance: Instance) -> fmi2Component {
    let comp = Box::new(Component {
        magic: AtomicU64::new(LIVE),
        owner: AtomicUsize::new(0),
        running: AtomicU8::new(0),
        visitors: AtomicU8::new(0),
        reporting: Cell::new(false),
        free_pending: Cell::new(false),
        logger: UnsafeCell::new(Some(Box::new(logger))),
        instance: UnsafeCell::new(Some(Box::new(instance))),
    });
    Box::into_raw(comp).cast::<c_void>()
}

/// `fmi2FreeInstance`: frees now, or when the call in progress on this thread
/// returns; refused while a call runs on another thread.
///
/// # Safety
/// As for [`component`].
pub unsafe fn free_instance(c: fmi2Component) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `c` came from fmi2Instantiate (FMI contract); the allocation is
        // kept as a tombstone, so this is valid even on a second free.
        let Some(comp) = (unsafe { component(c) }) else {
            return;
        };
        match comp.enter(FREEING) {
            Entry::Owned if comp.magic.load(Ordering::Relaxed) == LIVE => {
                // SAFETY: owned with no call in progress; `c` is the header's address.
                unsafe { comp.free(c) };
                comp.leave();
            }
            Entry::Owned => comp.leave(),
            Entry::Reentrant => {
                comp.free_pending.set(true);
                comp.reentrant(
                    "fmi2FreeInstance",
                    "the instance is freed when that call returns",
                );
            }
            Entry::Concurrent => {
                comp.concurrent("fmi2FreeInstance", "the instance is not freed");
            }
        }
    }));
}

/// The body of [`call`] on a borrowed instance: the state machine's check, then
/// `body`.
#[inline]
fn run(
    inst: &mut Instance,
    call: Call,
    body: impl FnOnce(&mut Instance) -> FmiResult,
) -> fmi2Status {
    let _scope = call.logs().then(|| Scope::enter(&inst.logger));
    let ptr: *mut Instance = inst;
    match catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ptr` is the exclusive borrow passed in, used only in here.
        let inst = unsafe { &mut *ptr };
        let result = inst.require(call).and_then(|()| body(inst));
        inst.conclude(result.map_err(|e| e.in_call(call)))
    })) {
        Ok(status) => status,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            // SAFETY: the closure that held the borrow has unwound.
            let inst = unsafe { &mut *ptr };
            let fatal = FmiError {
                status: Failure::Fatal,
                message: format!("internal error: {what}"),
                context: None,
            }
            .in_call(call);
            catch_unwind(AssertUnwindSafe(|| inst.conclude(Err(fatal)))).unwrap_or(fmi2Fatal)
        }
    }
}

/// A freed component's header, kept on purpose.
struct Tombstone(#[allow(dead_code)] fmi2Component);

// SAFETY: only stored, never dereferenced through this list.
unsafe impl Send for Tombstone {}

/// Records a tombstone in a list that lives as long as the library. Tombstones
/// are never released (a second free must find one), and this list keeps them
/// reachable, so leak checkers (LeakSanitizer, valgrind) see retained memory,
/// not a leak, and stay useful for finding real ones.
fn keep_tombstone(c: fmi2Component) {
    static TOMBSTONES: Mutex<Vec<Tombstone>> = Mutex::new(Vec::new());
    TOMBSTONES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Tombstone(c));
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_freed_component_keeps_only_a_40_byte_tombstone() {
        assert_eq!(std::mem::size_of::<super::Component>(), 40);
    }
}

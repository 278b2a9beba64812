//! The handle an `fmi2Component` points to: the instance behind it, a tombstone
//! once it is freed, the re-entrancy guard for a master's logger that calls back
//! in, and the one place where a panic becomes `fmi2Fatal`.
//!
//! Every export goes through [`call`] (or [`free_instance`]): it finds a live
//! component, refuses a re-entrant call, checks the state machine, runs the
//! body inside `catch_unwind` and turns its `Result` into an `fmi2Status`.

use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use fmu_model::fmi2::*;

use crate::error::{FmiError, FmiResult};
use crate::instance::Instance;
use crate::logger::{Category, Logger, Scope};
use crate::state_machine::Call;

const LIVE: u64 = 0x524d_4641_4c49_5645; // "RMFALIVE"
const FREED: u64 = 0x524d_4646_5245_4544; // "RMFFREED"

/// What an `fmi2Component` points to. After `fmi2FreeInstance` the instance is
/// dropped but this small header is kept (a tombstone), so that a second free or
/// a call on a freed component is answered with `fmi2Error` instead of touching
/// freed memory.
///
/// Only shared references to it are ever made: a master's logger callback may call
/// back into the FMU while a call on this component runs (re-entrance), and the
/// header must then be readable without aliasing the outer call's borrow of the
/// instance. `depth` tells re-entrant calls apart; they never touch the instance.
struct Component {
    magic: Cell<u64>,
    /// Calls on this component in progress: 1 inside a call, more when the master's
    /// logger called back in.
    depth: Cell<u32>,
    /// `fmi2FreeInstance` was called from inside a call: free when it returns.
    free_pending: Cell<bool>,
    /// The instance's logger, for messages about re-entrant calls (the instance
    /// itself is borrowed by the outer call then).
    logger: UnsafeCell<Option<Box<Logger>>>,
    /// Boxed, so that the tombstone kept after a free is small.
    instance: UnsafeCell<Option<Box<Instance>>>,
}

impl Component {
    /// Answers a call made while another call on this component runs. Logs once
    /// per outer call level, so a logger that calls back on every message ends.
    fn reentrant(&self, function: &str, what: &str) -> fmi2Status {
        if self.depth.get() == 1 {
            self.depth.set(2);
            // SAFETY: the logger box is replaced only by `free`, which runs at
            // depth 0; this shared borrow ends before the depth goes back.
            if let Some(logger) = unsafe { &*self.logger.get() } {
                logger.log(
                    Category::Error,
                    &format!(
                        "{function}: called from inside another FMI call on this instance \
                         (from the master's logger callback): {what}"
                    ),
                );
            }
            self.depth.set(1);
        }
        fmi2Error
    }

    /// Drops the instance and keeps the tombstone.
    ///
    /// # Safety
    /// No call on this component may be in progress (depth 0), and `c` must be the
    /// pointer this header lives at.
    unsafe fn free(&self, c: fmi2Component) {
        debug_assert_eq!(self.depth.get(), 0);
        self.magic.set(FREED);
        // SAFETY: depth 0: nothing borrows the instance or the logger.
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
    (comp.magic.get() == LIVE).then_some(comp)
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
    if comp.depth.get() > 0 {
        return comp.reentrant(call.name(), "the call is refused");
    }
    comp.depth.set(1);
    // SAFETY: depth was 0, so no other borrow of the instance exists, and the
    // master calls one instance from one thread at a time (FMI 2.0); a re-entrant
    // call from inside `body` is answered above without touching it.
    let status = match unsafe { (*comp.instance.get()).as_deref_mut() } {
        Some(inst) => run(inst, call, body),
        None => fmi2Error,
    };
    comp.depth.set(0);
    if comp.free_pending.get() {
        // SAFETY: depth 0 again, and `c` is this header's address.
        unsafe { comp.free(c) };
    }
    status
}

/// A new live component for `instance`, as the handle `fmi2Instantiate` returns.
pub fn new_handle(logger: Logger, instance: Instance) -> fmi2Component {
    let comp = Box::new(Component {
        magic: Cell::new(LIVE),
        depth: Cell::new(0),
        free_pending: Cell::new(false),
        logger: UnsafeCell::new(Some(Box::new(logger))),
        instance: UnsafeCell::new(Some(Box::new(instance))),
    });
    Box::into_raw(comp).cast::<c_void>()
}

/// `fmi2FreeInstance`: frees now, or when the call in progress returns.
///
/// # Safety
/// As for [`component`].
pub unsafe fn free_instance(c: fmi2Component) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if c.is_null() {
            return;
        }
        // SAFETY: `c` came from fmi2Instantiate (FMI contract); the allocation is
        // kept as a tombstone, so this is valid even on a second free.
        let Some(comp) = (unsafe { component(c) }) else {
            return;
        };
        if comp.depth.get() > 0 {
            comp.free_pending.set(true);
            comp.reentrant(
                "fmi2FreeInstance",
                "the instance is freed when that call returns",
            );
        } else {
            // SAFETY: no call in progress; `c` is the header's address.
            unsafe { comp.free(c) };
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
        inst.conclude(result)
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
                status: fmi2Fatal,
                message: format!("{}: internal error: {what}", call.name()),
            };
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
    fn a_freed_component_keeps_only_a_32_byte_tombstone() {
        assert_eq!(std::mem::size_of::<super::Component>(), 32);
    }
}

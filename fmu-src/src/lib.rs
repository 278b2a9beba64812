//! `rfm_attitude`: an FMI 2.0 co-simulation FMU that exchanges aircraft attitude
//! with a peer simulator through reflective memory at every `fmi2DoStep`.
//!
//! This file holds the 34 exported C functions and nothing else of substance: each
//! null-checks its arguments, runs the call inside `catch_unwind` (no panic crosses
//! the C ABI), and delegates to [`instance::Instance`], whose `Result` becomes an
//! `fmi2Status` once, here. Only these 34 symbols are exported.
#![deny(unsafe_op_in_unsafe_fn)]

mod access;
mod config;
pub mod fmi2;
pub mod instance;
pub mod logger;
pub mod model;
mod recording;
pub mod state_machine;
mod values;

use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

use access::{Boolean, Integer, Real};
use fmi2::*;
use instance::{error, FmiResult, Instance};
use logger::{Category, Logger, Scope};
use model::{Model, PRESET_GUID};
use state_machine::Call;

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
unsafe fn call(
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

/// The body of [`call`] on a borrowed instance: the state machine's check, then
/// `body`.
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
            let fatal = instance::FmiError {
                status: fmi2Fatal,
                message: format!("{}: internal error: {what}", call.name()),
            };
            catch_unwind(AssertUnwindSafe(|| inst.conclude(Err(fatal)))).unwrap_or(fmi2Fatal)
        }
    }
}

/// `n` elements at `p`, or an error naming the argument when `p` is NULL.
///
/// # Safety
/// `p` must be NULL or valid for `n` elements.
unsafe fn slice<'a, T>(function: &str, what: &str, p: *const T, n: usize) -> FmiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(error(format!(
            "{function}: `{what}` is NULL but {n} values were announced"
        )));
    }
    // SAFETY: non-NULL and, per the caller's contract, valid for `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// # Safety
/// As [`slice`], for writing.
unsafe fn slice_mut<'a, T>(
    function: &str,
    what: &str,
    p: *mut T,
    n: usize,
) -> FmiResult<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(error(format!(
            "{function}: `{what}` is NULL but {n} values were announced"
        )));
    }
    // SAFETY: non-NULL and, per the caller's contract, valid for `n` elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// A C string as UTF-8; `None` for NULL or invalid UTF-8.
///
/// # Safety
/// `s` must be NULL or a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated per the contract.
    unsafe { CStr::from_ptr(s) }.to_str().ok()
}

#[unsafe(export_name = "fmi2GetTypesPlatform")]
pub extern "C" fn fmi2_get_types_platform() -> *const c_char {
    c"default".as_ptr()
}

#[unsafe(export_name = "fmi2GetVersion")]
pub extern "C" fn fmi2_get_version() -> *const c_char {
    c"2.0".as_ptr()
}

/// Accepts `file:///abs/path`, `file:/abs/path` and `file://localhost/abs/path`,
/// percent-decoded; anything else is an error.
pub fn resource_path(uri: &str) -> Result<String, String> {
    let rest = uri
        .strip_prefix("file://localhost/")
        .map(|r| format!("/{r}"))
        .or_else(|| uri.strip_prefix("file:///").map(|r| format!("/{r}")))
        .or_else(|| {
            uri.strip_prefix("file:/")
                .filter(|r| !r.starts_with('/'))
                .map(|r| format!("/{r}"))
        })
        .ok_or_else(|| format!("resource location `{uri}` is not a file: URI (file:///path)"))?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    format!("resource location `{uri}` has a bad percent escape at byte {i}")
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out)
        .map_err(|_| format!("resource location `{uri}` does not decode to UTF-8"))?;
    // `file:///C:/dir` names `C:/dir` on Windows.
    let drive = path.as_bytes();
    if cfg!(windows) && drive.len() >= 3 && drive[0] == b'/' && drive[2] == b':' {
        return Ok(path[1..].to_owned());
    }
    Ok(path)
}

/// The model of the FMU whose description has GUID `guid`: the attitude FMU, or
/// the one its resources describe (which must give that GUID).
fn model_for(guid: &str, resources: Option<&str>) -> Result<Arc<Model>, String> {
    static ATTITUDE: OnceLock<Arc<Model>> = OnceLock::new();
    if guid == PRESET_GUID {
        return Ok(ATTITUDE.get_or_init(|| Arc::new(Model::attitude())).clone());
    }
    let Some(dir) = resources else {
        return Err(format!(
            "fmuGUID {guid} is not the attitude FMU's, and no fmuResourceLocation was given to \
             read the interface from: give the FMU's resources directory"
        ));
    };
    let model = Model::load(std::path::Path::new(dir)).map_err(|e| {
        format!(
            "fmuGUID {guid}: the FMU's interface cannot be loaded from its resources ({e}); \
             rebuild the FMU with build-fmu"
        )
    })?;
    if model.guid != guid {
        return Err(format!(
            "fmuGUID {guid} does not match {} given by the interface in {dir}: the \
             modelDescription.xml and the resources come from different builds; rebuild the \
             FMU with build-fmu",
            model.guid
        ));
    }
    Ok(Arc::new(model))
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2Instantiate")]
pub unsafe extern "C" fn fmi2_instantiate(
    instance_name: fmi2String,
    fmu_type: fmi2Type,
    fmu_guid: fmi2String,
    resource_location: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    logging_on: fmi2Boolean,
) -> fmi2Component {
    let made = catch_unwind(AssertUnwindSafe(|| {
        if functions.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: non-NULL; the master owns the struct for the call (we copy it).
        let callbacks = unsafe { *functions };
        if callbacks.logger.is_none() {
            return std::ptr::null_mut();
        }
        // SAFETY: NULL or a C string, as FMI requires.
        let name = unsafe { text(instance_name) }.unwrap_or("");
        let logger = Logger::new(
            callbacks,
            if name.is_empty() {
                "rfm_attitude"
            } else {
                name
            },
            logging_on != 0,
        );
        let fail = |message: String| {
            logger.log(Category::Error, &format!("fmi2Instantiate: {message}"));
            std::ptr::null_mut()
        };
        if name.is_empty() {
            return fail("instanceName is NULL, empty or not UTF-8".into());
        }
        if fmu_type != fmi2CoSimulation {
            return fail(format!(
                "fmuType {fmu_type}: this FMU supports only fmi2CoSimulation (1)"
            ));
        }
        // SAFETY: NULL or a C string.
        let Some(guid) = (unsafe { text(fmu_guid) }) else {
            return fail("fmuGUID is NULL or not UTF-8".into());
        };
        // SAFETY: NULL or a C string.
        let resources = match unsafe { text(resource_location) } {
            Some(uri) => match resource_path(uri) {
                Ok(path) => Some(path),
                Err(e) => return fail(e),
            },
            None if !resource_location.is_null() => {
                return fail("fmuResourceLocation is not UTF-8".into())
            }
            None => None,
        };
        let model = match model_for(guid, resources.as_deref()) {
            Ok(model) => model,
            Err(e) => return fail(e),
        };
        let comp = Box::new(Component {
            magic: Cell::new(LIVE),
            depth: Cell::new(0),
            free_pending: Cell::new(false),
            logger: UnsafeCell::new(Some(Box::new(logger.clone()))),
            instance: UnsafeCell::new(Some(Box::new(Instance::new(logger, model)))),
        });
        Box::into_raw(comp).cast::<c_void>()
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2FreeInstance")]
pub unsafe extern "C" fn fmi2_free_instance(c: fmi2Component) {
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

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2SetDebugLogging")]
pub unsafe extern "C" fn fmi2_set_debug_logging(
    c: fmi2Component,
    logging_on: fmi2Boolean,
    n: usize,
    categories: *const fmi2String,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`, `categories` (n C strings).
    unsafe {
        call(c, Call::SetDebugLogging, |inst| {
            let raw = slice("fmi2SetDebugLogging", "categories", categories, n)?;
            let names = raw
                .iter()
                .map(|&s| {
                    text(s).map(str::to_owned).ok_or_else(|| {
                        error("fmi2SetDebugLogging: a category is NULL or not UTF-8")
                    })
                })
                .collect::<FmiResult<Vec<_>>>()?;
            inst.set_debug_logging(logging_on != 0, &names)
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2SetupExperiment")]
pub unsafe extern "C" fn fmi2_setup_experiment(
    c: fmi2Component,
    _tolerance_defined: fmi2Boolean,
    _tolerance: fmi2Real,
    start_time: fmi2Real,
    stop_time_defined: fmi2Boolean,
    stop_time: fmi2Real,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(c, Call::SetupExperiment, |inst| {
            inst.setup_experiment(start_time, (stop_time_defined != 0).then_some(stop_time))
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2EnterInitializationMode")]
pub unsafe extern "C" fn fmi2_enter_initialization_mode(c: fmi2Component) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(
            c,
            Call::EnterInitializationMode,
            Instance::enter_initialization_mode,
        )
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2ExitInitializationMode")]
pub unsafe extern "C" fn fmi2_exit_initialization_mode(c: fmi2Component) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(
            c,
            Call::ExitInitializationMode,
            Instance::exit_initialization_mode,
        )
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2Terminate")]
pub unsafe extern "C" fn fmi2_terminate(c: fmi2Component) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe { call(c, Call::Terminate, Instance::terminate) }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2Reset")]
pub unsafe extern "C" fn fmi2_reset(c: fmi2Component) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe { call(c, Call::Reset, Instance::reset) }
}

macro_rules! getter {
    ($export:literal, $call:ident, $fn:ident, $ty:ty, $method:path) => {
        /// # Safety
        /// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
        /// pointer is NULL or valid for the count passed with it.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            n: usize,
            value: *mut $ty,
        ) -> fmi2Status {
            // SAFETY: FMI contract on `c`, `vr` (n entries) and `value` (n entries).
            unsafe {
                call(c, Call::$call, |inst| {
                    let vrs = slice($export, "vr", vr, n)?;
                    let out = slice_mut($export, "value", value, n)?;
                    $method(inst, $export, vrs, out)
                })
            }
        }
    };
}

getter!(
    "fmi2GetReal",
    GetReal,
    fmi2_get_real,
    fmi2Real,
    Instance::get_plain::<Real>
);
getter!(
    "fmi2GetInteger",
    GetInteger,
    fmi2_get_integer,
    fmi2Integer,
    Instance::get_plain::<Integer>
);
getter!(
    "fmi2GetBoolean",
    GetBoolean,
    fmi2_get_boolean,
    fmi2Boolean,
    Instance::get_plain::<Boolean>
);
getter!(
    "fmi2GetString",
    GetString,
    fmi2_get_string,
    fmi2String,
    Instance::get_string
);

macro_rules! setter {
    ($export:literal, $call:ident, $fn:ident, $ty:ty, $method:path) => {
        /// # Safety
        /// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
        /// pointer is NULL or valid for the count passed with it.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            n: usize,
            value: *const $ty,
        ) -> fmi2Status {
            // SAFETY: FMI contract on `c`, `vr` (n entries) and `value` (n entries;
            // each string NULL or NUL-terminated).
            unsafe {
                call(c, Call::$call, |inst| {
                    let vrs = slice($export, "vr", vr, n)?;
                    let values = slice($export, "value", value, n)?;
                    $method(inst, $export, vrs, values)
                })
            }
        }
    };
}

setter!(
    "fmi2SetReal",
    SetReal,
    fmi2_set_real,
    fmi2Real,
    Instance::set_plain::<Real>
);
setter!(
    "fmi2SetInteger",
    SetInteger,
    fmi2_set_integer,
    fmi2Integer,
    Instance::set_plain::<Integer>
);
setter!(
    "fmi2SetBoolean",
    SetBoolean,
    fmi2_set_boolean,
    fmi2Boolean,
    Instance::set_plain::<Boolean>
);
setter!(
    "fmi2SetString",
    SetString,
    fmi2_set_string,
    fmi2String,
    set_strings
);

/// `fmi2SetString`'s values as text (`None`: NULL or not UTF-8).
///
/// # Safety
/// Each entry of `values` is NULL or a NUL-terminated string (FMI contract).
unsafe fn set_strings(
    inst: &mut Instance,
    function: &str,
    vrs: &[fmi2ValueReference],
    values: &[fmi2String],
) -> FmiResult {
    // SAFETY: per this function's contract.
    let texts: Vec<Option<&str>> = values.iter().map(|&s| unsafe { text(s) }).collect();
    inst.set_strings(function, vrs, &texts)
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2DoStep")]
pub unsafe extern "C" fn fmi2_do_step(
    c: fmi2Component,
    current_communication_point: fmi2Real,
    communication_step_size: fmi2Real,
    _no_set_fmu_state_prior_to_current_point: fmi2Boolean,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(c, Call::DoStep, |inst| {
            inst.do_step(current_communication_point, communication_step_size)
        })
    }
}

/// The capabilities this FMU does not offer: exported (masters bind all 34), and
/// answering `fmi2Error` with the reason.
macro_rules! unsupported {
    ($export:literal, $call:ident, $fn:ident, $why:literal, ($($arg:ident: $ty:ty),*)) => {
        /// # Safety
        /// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
        /// pointer is NULL or valid for the count passed with it.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(c: fmi2Component, $(_: $ty),*) -> fmi2Status {
            // SAFETY: FMI contract on `c`.
            unsafe {
                call(c, Call::$call, |_| {
                    Err(error(concat!($export, ": ", $why)))
                })
            }
        }
    };
}

unsupported!("fmi2GetFMUstate", GetFmuState, fmi2_get_fmu_state, "not supported (canGetAndSetFMUstate=\"false\"): the peer's memory cannot be rolled back", (s: *mut fmi2FMUstate));
unsupported!("fmi2SetFMUstate", SetFmuState, fmi2_set_fmu_state, "not supported (canGetAndSetFMUstate=\"false\"): the peer's memory cannot be rolled back", (s: fmi2FMUstate));
unsupported!("fmi2FreeFMUstate", FreeFmuState, fmi2_free_fmu_state, "not supported (canGetAndSetFMUstate=\"false\")", (s: *mut fmi2FMUstate));
unsupported!("fmi2SerializedFMUstateSize", SerializedFmuStateSize, fmi2_serialized_fmu_state_size, "not supported (canSerializeFMUstate=\"false\")", (s: fmi2FMUstate, size: *mut usize));
unsupported!("fmi2SerializeFMUstate", SerializeFmuState, fmi2_serialize_fmu_state, "not supported (canSerializeFMUstate=\"false\")", (s: fmi2FMUstate, bytes: *mut fmi2Byte, size: usize));
unsupported!("fmi2DeSerializeFMUstate", DeSerializeFmuState, fmi2_deserialize_fmu_state, "not supported (canSerializeFMUstate=\"false\")", (bytes: *const fmi2Byte, size: usize, s: *mut fmi2FMUstate));
unsupported!("fmi2GetDirectionalDerivative", GetDirectionalDerivative, fmi2_get_directional_derivative, "not supported (providesDirectionalDerivative=\"false\")", (a: *const fmi2ValueReference, na: usize, b: *const fmi2ValueReference, nb: usize, dv: *const fmi2Real, df: *mut fmi2Real));
unsupported!("fmi2SetRealInputDerivatives", SetRealInputDerivatives, fmi2_set_real_input_derivatives, "not supported (canInterpolateInputs=\"false\")", (vr: *const fmi2ValueReference, n: usize, order: *const fmi2Integer, value: *const fmi2Real));
unsupported!("fmi2GetRealOutputDerivatives", GetRealOutputDerivatives, fmi2_get_real_output_derivatives, "not supported (MaxOutputDerivativeOrder is 0)", (vr: *const fmi2ValueReference, n: usize, order: *const fmi2Integer, value: *mut fmi2Real));
unsupported!(
    "fmi2CancelStep",
    CancelStep,
    fmi2_cancel_step,
    "there is no step to cancel: fmi2DoStep never returns fmi2Pending",
    ()
);

/// Status queries: only `fmi2LastSuccessfulTime` and `fmi2Terminated` have answers
/// (this FMU never runs a step asynchronously); the rest are `fmi2Discard`.
fn status_kind(function: &str, kind: fmi2StatusKind, answerable: fmi2StatusKind) -> FmiResult {
    if kind == answerable {
        Ok(())
    } else {
        Err(instance::FmiError {
            status: fmi2Discard,
            message: format!("{function}: status kind {kind} is not available: this FMU never returns fmi2Pending"),
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2GetStatus")]
pub unsafe extern "C" fn fmi2_get_status(
    c: fmi2Component,
    kind: fmi2StatusKind,
    _value: *mut fmi2Status,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(c, Call::GetStatus, |_| {
            status_kind("fmi2GetStatus", kind, -1)
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2GetRealStatus")]
pub unsafe extern "C" fn fmi2_get_real_status(
    c: fmi2Component,
    kind: fmi2StatusKind,
    value: *mut fmi2Real,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`; `value` NULL or writable.
    unsafe {
        call(c, Call::GetRealStatus, |inst| {
            status_kind("fmi2GetRealStatus", kind, fmi2LastSuccessfulTime)?;
            let out = slice_mut("fmi2GetRealStatus", "value", value, 1)?;
            out[0] = inst.time();
            Ok(())
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2GetIntegerStatus")]
pub unsafe extern "C" fn fmi2_get_integer_status(
    c: fmi2Component,
    kind: fmi2StatusKind,
    _value: *mut fmi2Integer,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(c, Call::GetIntegerStatus, |_| {
            status_kind("fmi2GetIntegerStatus", kind, -1)
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2GetBooleanStatus")]
pub unsafe extern "C" fn fmi2_get_boolean_status(
    c: fmi2Component,
    kind: fmi2StatusKind,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`; `value` NULL or writable.
    unsafe {
        call(c, Call::GetBooleanStatus, |_| {
            status_kind("fmi2GetBooleanStatus", kind, fmi2Terminated)?;
            let out = slice_mut("fmi2GetBooleanStatus", "value", value, 1)?;
            out[0] = fmi2False;
            Ok(())
        })
    }
}

/// # Safety
/// The FMI 2.0 contract: `c` is NULL or came from `fmi2Instantiate`, and every
/// pointer is NULL or valid for the count passed with it.
#[unsafe(export_name = "fmi2GetStringStatus")]
pub unsafe extern "C" fn fmi2_get_string_status(
    c: fmi2Component,
    kind: fmi2StatusKind,
    _value: *mut fmi2String,
) -> fmi2Status {
    // SAFETY: FMI contract on `c`.
    unsafe {
        call(c, Call::GetStringStatus, |_| {
            status_kind("fmi2GetStringStatus", kind, -1)
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_freed_component_keeps_only_a_32_byte_tombstone() {
        assert_eq!(std::mem::size_of::<super::Component>(), 32);
    }
}

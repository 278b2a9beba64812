//! `rfm_attitude`: an FMI 2.0 co-simulation FMU that exchanges the signals of its
//! node with its peers through reflective memory at every `fmi2DoStep`; the
//! same binary's second face is FMI 3.0's ([`fmi3`], packed by `build-fmu
//! --fmi 3`).
//!
//! This file holds the 34 exported FMI 2.0 C functions and nothing else: each is
//! one `component::call` that checks the arguments it names and delegates to
//! `instance::Instance`. The handle, panic handling and the state machine's check
//! are in `component`, the C arguments in `c_args`, instantiation in
//! `instantiate`. Only these 34 symbols and FMI 3.0's 75 are exported.
#![deny(unsafe_op_in_unsafe_fn)]

mod access;
mod c_args;
mod component;
mod config;
mod error;
pub mod fmi3;
mod instance;
mod instantiate;
mod link_failure;
mod logger;
mod realtime;
mod recording;
mod state_machine;
mod status;
mod steps;
mod values;

use std::ffi::c_char;

use access::{Boolean, Integer, Real};
use c_args::{slice, slice_mut, texts};
use component::call;
use error::{error, FmiResult};
use fmu_model::fmi2::*;
use instance::Instance;
use state_machine::Call;
use status::status_kind;

// The FMI 2.0 contract of every export below, which its `# Safety` section
// names: `c` is NULL or came from `fmi2Instantiate`, and every pointer is NULL
// or valid for the count passed with it.

#[unsafe(export_name = "fmi2GetTypesPlatform")]
pub extern "C" fn fmi2_get_types_platform() -> *const c_char {
    c"default".as_ptr()
}

#[unsafe(export_name = "fmi2GetVersion")]
pub extern "C" fn fmi2_get_version() -> *const c_char {
    c"2.0".as_ptr()
}

/// # Safety
/// The FMI 2.0 contract (above).
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
    // SAFETY: the FMI contract on every pointer.
    unsafe {
        instantiate::instantiate(
            instance_name,
            fmu_type,
            fmu_guid,
            resource_location,
            functions,
            logging_on,
        )
    }
}

/// # Safety
/// The FMI 2.0 contract (above).
#[unsafe(export_name = "fmi2FreeInstance")]
pub unsafe extern "C" fn fmi2_free_instance(c: fmi2Component) {
    // SAFETY: the FMI contract on `c`.
    unsafe { component::free_instance(c) }
}

/// An export that is one call on the instance: `$export` is its C name, `$call`
/// its row of the state machine, and `$body` runs on the instance (`$inst`) with
/// the arguments as the master passed them.
macro_rules! export {
    ($export:literal, $call:ident, $fn:ident, ($($arg:ident: $ty:ty),*), |$inst:ident| $body:expr) => {
        /// # Safety
        /// The FMI 2.0 contract (above).
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(c: fmi2Component, $($arg: $ty),*) -> fmi2Status {
            // SAFETY: the FMI contract on `c` and on every pointer argument,
            // which the body turns into slices and strings with their counts.
            unsafe { call(c, Call::$call, |$inst: &mut Instance| -> FmiResult { $body }) }
        }
    };
}

export!("fmi2SetDebugLogging", SetDebugLogging, fmi2_set_debug_logging,
(logging_on: fmi2Boolean, n: usize, categories: *const fmi2String), |inst| {
    let names = texts(slice("categories", categories, n)?)
        .into_iter()
        .map(|t| t.map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| error("a category is NULL or not UTF-8"))?;
    inst.set_debug_logging(logging_on != 0, &names)
});
export!("fmi2SetupExperiment", SetupExperiment, fmi2_setup_experiment,
    (_tolerance_defined: fmi2Boolean, _tolerance: fmi2Real, start_time: fmi2Real,
     stop_time_defined: fmi2Boolean, stop_time: fmi2Real),
    |inst| inst.setup_experiment(start_time, (stop_time_defined != 0).then_some(stop_time)));
export!(
    "fmi2EnterInitializationMode",
    EnterInitializationMode,
    fmi2_enter_initialization_mode,
    (),
    |inst| inst.enter_initialization_mode()
);
export!(
    "fmi2ExitInitializationMode",
    ExitInitializationMode,
    fmi2_exit_initialization_mode,
    (),
    |inst| inst.exit_initialization_mode()
);
export!("fmi2Terminate", Terminate, fmi2_terminate, (), |inst| inst
    .terminate());
export!("fmi2Reset", Reset, fmi2_reset, (), |inst| inst.reset());

/// The value accessors: `$values` is the master's array, of `n` entries like `vr`.
macro_rules! access {
    ($export:literal, $call:ident, $fn:ident, $values:ty, $as_slice:ident, |$inst:ident, $vrs:ident, $vals:ident| $body:expr) => {
        export!($export, $call, $fn, (vr: *const fmi2ValueReference, n: usize, value: $values),
            |$inst| {
                let $vrs = slice("vr", vr, n)?;
                let $vals = $as_slice("value", value, n)?;
                $body
            });
    };
}

access!(
    "fmi2GetReal",
    GetReal,
    fmi2_get_real,
    *mut fmi2Real,
    slice_mut,
    |inst, vrs, out| inst.access().get_plain::<Real>(vrs, out)
);
access!(
    "fmi2GetInteger",
    GetInteger,
    fmi2_get_integer,
    *mut fmi2Integer,
    slice_mut,
    |inst, vrs, out| inst.access().get_plain::<Integer>(vrs, out)
);
access!(
    "fmi2GetBoolean",
    GetBoolean,
    fmi2_get_boolean,
    *mut fmi2Boolean,
    slice_mut,
    |inst, vrs, out| inst.access().get_plain::<Boolean>(vrs, out)
);
access!(
    "fmi2GetString",
    GetString,
    fmi2_get_string,
    *mut fmi2String,
    slice_mut,
    |inst, vrs, out| inst.access().get_string(vrs, out)
);
access!(
    "fmi2SetReal",
    SetReal,
    fmi2_set_real,
    *const fmi2Real,
    slice,
    |inst, vrs, values| inst.access().set_plain::<Real>(vrs, values)
);
access!(
    "fmi2SetInteger",
    SetInteger,
    fmi2_set_integer,
    *const fmi2Integer,
    slice,
    |inst, vrs, values| inst.access().set_plain::<Integer>(vrs, values)
);
access!(
    "fmi2SetBoolean",
    SetBoolean,
    fmi2_set_boolean,
    *const fmi2Boolean,
    slice,
    |inst, vrs, values| inst.access().set_plain::<Boolean>(vrs, values)
);
access!(
    "fmi2SetString",
    SetString,
    fmi2_set_string,
    *const fmi2String,
    slice,
    |inst, vrs, values| inst.access().set_strings(vrs, &texts(values))
);

export!("fmi2DoStep", DoStep, fmi2_do_step,
    (current_communication_point: fmi2Real, communication_step_size: fmi2Real,
     _no_set_fmu_state_prior_to_current_point: fmi2Boolean),
    |inst| inst.do_step(current_communication_point, communication_step_size));

/// The capabilities this FMU does not offer: exported (masters bind all 34), and
/// answering `fmi2Error` with the reason.
macro_rules! unsupported {
    ($export:literal, $call:ident, $fn:ident, $why:literal, ($($arg:ident: $ty:ty),*)) => {
        export!($export, $call, $fn, ($($arg: $ty),*),
            |_inst| Err(error($why)));
    };
}

unsupported!("fmi2GetFMUstate", GetFmuState, fmi2_get_fmu_state, "not supported (canGetAndSetFMUstate=\"false\"): the peer's memory cannot be rolled back", (_s: *mut fmi2FMUstate));
unsupported!("fmi2SetFMUstate", SetFmuState, fmi2_set_fmu_state, "not supported (canGetAndSetFMUstate=\"false\"): the peer's memory cannot be rolled back", (_s: fmi2FMUstate));
unsupported!("fmi2FreeFMUstate", FreeFmuState, fmi2_free_fmu_state, "not supported (canGetAndSetFMUstate=\"false\")", (_s: *mut fmi2FMUstate));
unsupported!("fmi2SerializedFMUstateSize", SerializedFmuStateSize, fmi2_serialized_fmu_state_size, "not supported (canSerializeFMUstate=\"false\")", (_s: fmi2FMUstate, _size: *mut usize));
unsupported!("fmi2SerializeFMUstate", SerializeFmuState, fmi2_serialize_fmu_state, "not supported (canSerializeFMUstate=\"false\")", (_s: fmi2FMUstate, _bytes: *mut fmi2Byte, _size: usize));
unsupported!("fmi2DeSerializeFMUstate", DeSerializeFmuState, fmi2_deserialize_fmu_state, "not supported (canSerializeFMUstate=\"false\")", (_bytes: *const fmi2Byte, _size: usize, _s: *mut fmi2FMUstate));
unsupported!("fmi2GetDirectionalDerivative", GetDirectionalDerivative, fmi2_get_directional_derivative, "not supported (providesDirectionalDerivative=\"false\")", (_a: *const fmi2ValueReference, _na: usize, _b: *const fmi2ValueReference, _nb: usize, _dv: *const fmi2Real, _df: *mut fmi2Real));
unsupported!("fmi2SetRealInputDerivatives", SetRealInputDerivatives, fmi2_set_real_input_derivatives, "not supported (canInterpolateInputs=\"false\")", (_vr: *const fmi2ValueReference, _n: usize, _order: *const fmi2Integer, _value: *const fmi2Real));
unsupported!("fmi2GetRealOutputDerivatives", GetRealOutputDerivatives, fmi2_get_real_output_derivatives, "not supported (MaxOutputDerivativeOrder is 0)", (_vr: *const fmi2ValueReference, _n: usize, _order: *const fmi2Integer, _value: *mut fmi2Real));
unsupported!(
    "fmi2CancelStep",
    CancelStep,
    fmi2_cancel_step,
    "there is no step to cancel: fmi2DoStep never returns fmi2Pending",
    ()
);

// Status queries: only `fmi2LastSuccessfulTime` and `fmi2Terminated` have answers.
export!("fmi2GetStatus", GetStatus, fmi2_get_status,
    (kind: fmi2StatusKind, _value: *mut fmi2Status),
    |_inst| status_kind(kind, -1));
export!("fmi2GetRealStatus", GetRealStatus, fmi2_get_real_status,
(kind: fmi2StatusKind, value: *mut fmi2Real), |inst| {
    status_kind(kind, fmi2LastSuccessfulTime)?;
    slice_mut("value", value, 1)?[0] = inst.time();
    Ok(())
});
export!("fmi2GetIntegerStatus", GetIntegerStatus, fmi2_get_integer_status,
    (kind: fmi2StatusKind, _value: *mut fmi2Integer),
    |_inst| status_kind(kind, -1));
export!("fmi2GetBooleanStatus", GetBooleanStatus, fmi2_get_boolean_status,
(kind: fmi2StatusKind, value: *mut fmi2Boolean), |_inst| {
    status_kind(kind, fmi2Terminated)?;
    slice_mut("value", value, 1)?[0] = fmi2False;
    Ok(())
});
export!("fmi2GetStringStatus", GetStringStatus, fmi2_get_string_status,
    (kind: fmi2StatusKind, _value: *mut fmi2String),
    |_inst| status_kind(kind, -1));

//! The FMI 3.0 face: the same instance behind FMI 3.0's Co-Simulation
//! functions, exported beside FMI 2.0's from one binary (`build-fmu --fmi 3`
//! packs it with an FMI 3.0 model description). Each export is one
//! `component::call` on a row of the one state machine, as FMI 2.0's are.
//!
//! Variables keep their FMI 2.0 value references and are of the FMI 3.0
//! type that holds their values (Real as Float64, Integer as Int32; a lab's
//! struct's element as its C type's own, an array field as one variable,
//! see `typed.rs`); `time`, the independent variable FMI 3.0 asks for, is
//! [`TIME_VALUE_REFERENCE`]. Every function of the standard is exported:
//! those this FMU does not offer (Binary and Clock variables, FMU state,
//! derivatives, Model Exchange, Scheduled Execution) return `fmi3Error` and
//! say so to the master's logger.

use std::ffi::c_char;

use fmu_model::fmi3::*;
use rfm_frames::fmi::Fmi3Type;

use crate::access::{Boolean, Integer, Real};
use crate::c_args::{slice, slice_mut, texts};
use crate::component::{call, free_instance};
use crate::error::{error, FmiResult};
use crate::instance::Instance;
use crate::state_machine::Call;

mod instantiate;
mod typed;
mod unoffered;

#[unsafe(export_name = "fmi3GetVersion")]
pub extern "C" fn fmi3_get_version() -> *const c_char {
    c"3.0".as_ptr()
}

/// # Safety
/// The FMI 3.0 contract: every pointer is NULL or valid.
#[unsafe(export_name = "fmi3InstantiateCoSimulation")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3_instantiate_co_simulation(
    instance_name: fmi3String,
    instantiation_token: fmi3String,
    resource_path: fmi3String,
    _visible: fmi3Boolean,
    logging_on: fmi3Boolean,
    _event_mode_used: fmi3Boolean,
    early_return_allowed: fmi3Boolean,
    _required_intermediate_variables: *const fmi3ValueReference,
    _n_required_intermediate_variables: usize,
    instance_environment: fmi3InstanceEnvironment,
    log_message: Option<fmi3LogMessageCallback>,
    _intermediate_update: Option<fmi3IntermediateUpdateCallback>,
) -> fmi3Instance {
    // SAFETY: the FMI contract on every pointer.
    unsafe {
        instantiate::instantiate(
            instance_name,
            instantiation_token,
            resource_path,
            logging_on,
            early_return_allowed,
            (instance_environment, log_message),
        )
    }
}

#[unsafe(export_name = "fmi3InstantiateModelExchange")]
pub extern "C" fn fmi3_instantiate_model_exchange(
    _instance_name: fmi3String,
    _instantiation_token: fmi3String,
    _resource_path: fmi3String,
    _visible: fmi3Boolean,
    _logging_on: fmi3Boolean,
    instance_environment: fmi3InstanceEnvironment,
    log_message: Option<fmi3LogMessageCallback>,
) -> fmi3Instance {
    instantiate::refuse_kind("ModelExchange", (instance_environment, log_message))
}

#[unsafe(export_name = "fmi3InstantiateScheduledExecution")]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn fmi3_instantiate_scheduled_execution(
    _instance_name: fmi3String,
    _instantiation_token: fmi3String,
    _resource_path: fmi3String,
    _visible: fmi3Boolean,
    _logging_on: fmi3Boolean,
    instance_environment: fmi3InstanceEnvironment,
    log_message: Option<fmi3LogMessageCallback>,
    _clock_update: Option<fmi3ClockUpdateCallback>,
    _lock_preemption: Option<fmi3LockPreemptionCallback>,
    _unlock_preemption: Option<fmi3LockPreemptionCallback>,
) -> fmi3Instance {
    instantiate::refuse_kind("ScheduledExecution", (instance_environment, log_message))
}

/// # Safety
/// The FMI 3.0 contract: `instance` is NULL or came from an instantiation.
#[unsafe(export_name = "fmi3FreeInstance")]
pub unsafe extern "C" fn fmi3_free_instance(instance: fmi3Instance) {
    // SAFETY: the FMI contract on `instance`.
    unsafe { free_instance(instance) }
}

/// An export that is one call on the instance (as FMI 2.0's `export!`).
macro_rules! export3 {
    ($export:literal, $call:ident, $fn:ident, ($($arg:ident: $ty:ty),*), |$inst:ident| $body:expr) => {
        /// # Safety
        /// The FMI 3.0 contract: `instance` came from an instantiation, and
        /// every pointer is NULL or valid for the count passed with it.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(instance: fmi3Instance, $($arg: $ty),*) -> fmi3Status {
            // SAFETY: the FMI contract on `instance` and on every pointer
            // argument, which the body turns into slices with their counts.
            unsafe { call(instance, Call::$call, |$inst: &mut Instance| -> FmiResult { $body }) }
        }
    };
}

export3!("fmi3SetDebugLogging", SetDebugLogging3, fmi3_set_debug_logging,
(logging_on: fmi3Boolean, n: usize, categories: *const fmi3String), |inst| {
    let names = texts(slice("categories", categories, n)?)
        .into_iter()
        .map(|t| t.map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| error("a category is NULL or not UTF-8"))?;
    inst.set_debug_logging(logging_on, &names)
});
export3!("fmi3EnterInitializationMode", EnterInitializationMode3,
fmi3_enter_initialization_mode,
(_tolerance_defined: fmi3Boolean, _tolerance: fmi3Float64, start_time: fmi3Float64,
 stop_time_defined: fmi3Boolean, stop_time: fmi3Float64),
|inst| {
    inst.setup_experiment(start_time, stop_time_defined.then_some(stop_time))?;
    inst.enter_initialization_mode()
});
export3!(
    "fmi3ExitInitializationMode",
    ExitInitializationMode3,
    fmi3_exit_initialization_mode,
    (),
    |inst| inst.exit_initialization_mode()
);
export3!("fmi3Terminate", Terminate3, fmi3_terminate, (), |inst| inst
    .terminate());
export3!("fmi3Reset", Reset3, fmi3_reset, (), |inst| inst.reset());

/// Booleans at once that [`as_integers`] holds on the stack.
const STACK_BOOLEANS: usize = 64;

/// Runs `f` on `n` integers, FMI 2.0's Booleans, which the shared accessors
/// take in place of FMI 3.0's `bool`s: on the stack up to
/// [`STACK_BOOLEANS`] (a master's usual call, so that a step allocates
/// nothing, as FMI 2.0's does), on the heap beyond.
fn as_integers<R>(n: usize, f: impl FnOnce(&mut [i32]) -> R) -> R {
    let mut stack = [0; STACK_BOOLEANS];
    let mut heap = Vec::new();
    let ints = if n <= STACK_BOOLEANS {
        &mut stack[..n]
    } else {
        heap.resize(n, 0);
        &mut heap[..]
    };
    f(ints)
}

/// The value accessors: `$values` is the master's array of `n_values`
/// values for the `n` references (an array variable has several).
macro_rules! access3 {
    ($export:literal, $call:ident, $fn:ident, $values:ty, $as_slice:ident,
     |$inst:ident, $vrs:ident, $vals:ident| $body:expr) => {
        export3!($export, $call, $fn,
            (vr: *const fmi3ValueReference, n: usize, values: $values, n_values: usize),
            |$inst| {
                let $vrs = slice("valueReferences", vr, n)?;
                let $vals = $as_slice("values", values, n_values)?;
                $body
            });
    };
}

access3!(
    "fmi3GetFloat64",
    GetFloat64,
    fmi3_get_float64,
    *mut fmi3Float64,
    slice_mut,
    |inst, vrs, out| {
        let time = inst.time();
        let access = inst.access();
        match typed::plain(access.model(), vrs, Fmi3Type::Float64, out.len()) {
            true => access.get_plain::<Real>(vrs, out),
            false => typed::get_float64(&access, time, vrs, out),
        }
    }
);
access3!(
    "fmi3GetInt32",
    GetInt32,
    fmi3_get_int32,
    *mut fmi3Int32,
    slice_mut,
    |inst, vrs, out| {
        let access = inst.access();
        match typed::plain(access.model(), vrs, Fmi3Type::Int32, out.len()) {
            true => access.get_plain::<Integer>(vrs, out),
            false => typed::get(&access, vrs, out),
        }
    }
);
access3!(
    "fmi3GetBoolean",
    GetBoolean3,
    fmi3_get_boolean,
    *mut fmi3Boolean,
    slice_mut,
    |inst, vrs, out| {
        let access = inst.access();
        if !typed::plain(access.model(), vrs, Fmi3Type::Boolean, out.len()) {
            return typed::get(&access, vrs, out);
        }
        as_integers(vrs.len(), |got| -> FmiResult {
            access.get_plain::<Boolean>(vrs, got)?;
            for (out, got) in out.iter_mut().zip(got) {
                *out = *got != 0;
            }
            Ok(())
        })
    }
);
access3!(
    "fmi3GetString",
    GetString3,
    fmi3_get_string,
    *mut fmi3String,
    slice_mut,
    |inst, vrs, out| typed::get_strings(&mut inst.access(), vrs, out)
);
access3!(
    "fmi3SetFloat64",
    SetFloat64,
    fmi3_set_float64,
    *const fmi3Float64,
    slice,
    |inst, vrs, values| {
        let mut access = inst.access();
        match typed::plain(access.model(), vrs, Fmi3Type::Float64, values.len()) {
            true => access.set_plain::<Real>(vrs, values),
            false => typed::not_time(vrs).and_then(|()| typed::set(&mut access, vrs, values)),
        }
    }
);
access3!(
    "fmi3SetInt32",
    SetInt32,
    fmi3_set_int32,
    *const fmi3Int32,
    slice,
    |inst, vrs, values| {
        let mut access = inst.access();
        match typed::plain(access.model(), vrs, Fmi3Type::Int32, values.len()) {
            true => access.set_plain::<Integer>(vrs, values),
            false => typed::set(&mut access, vrs, values),
        }
    }
);
access3!(
    "fmi3SetBoolean",
    SetBoolean3,
    fmi3_set_boolean,
    *const fmi3Boolean,
    slice,
    |inst, vrs, values| {
        let mut access = inst.access();
        if !typed::plain(access.model(), vrs, Fmi3Type::Boolean, values.len()) {
            return typed::set(&mut access, vrs, values);
        }
        as_integers(values.len(), |ints| {
            for (int, &b) in ints.iter_mut().zip(values) {
                *int = i32::from(b);
            }
            access.set_plain::<Boolean>(vrs, ints)
        })
    }
);
access3!(
    "fmi3SetString",
    SetString3,
    fmi3_set_string,
    *const fmi3String,
    slice,
    |inst, vrs, values| typed::set_strings(&mut inst.access(), vrs, &texts(values))
);

/// The accessors of the exact types a lab's structs give (a `float` field is
/// a Float32, a `uint64` a UInt64): every value through [`typed`].
macro_rules! exact3 {
    ($($get:literal $get_call:ident $get_fn:ident, $set:literal $set_call:ident $set_fn:ident: $t:ty;)*) => {$(
        access3!($get, $get_call, $get_fn, *mut $t, slice_mut,
            |inst, vrs, out| typed::get(&inst.access(), vrs, out));
        access3!($set, $set_call, $set_fn, *const $t, slice,
            |inst, vrs, values| typed::set(&mut inst.access(), vrs, values));
    )*};
}

exact3! {
    "fmi3GetFloat32" GetFloat32 fmi3_get_float32, "fmi3SetFloat32" SetFloat32 fmi3_set_float32: fmi3Float32;
    "fmi3GetInt8" GetInt8 fmi3_get_int8, "fmi3SetInt8" SetInt8 fmi3_set_int8: fmi3Int8;
    "fmi3GetUInt8" GetUInt8 fmi3_get_uint8, "fmi3SetUInt8" SetUInt8 fmi3_set_uint8: fmi3UInt8;
    "fmi3GetInt16" GetInt16 fmi3_get_int16, "fmi3SetInt16" SetInt16 fmi3_set_int16: fmi3Int16;
    "fmi3GetUInt16" GetUInt16 fmi3_get_uint16, "fmi3SetUInt16" SetUInt16 fmi3_set_uint16: fmi3UInt16;
    "fmi3GetUInt32" GetUInt32 fmi3_get_uint32, "fmi3SetUInt32" SetUInt32 fmi3_set_uint32: fmi3UInt32;
    "fmi3GetInt64" GetInt64 fmi3_get_int64, "fmi3SetInt64" SetInt64 fmi3_set_int64: fmi3Int64;
    "fmi3GetUInt64" GetUInt64 fmi3_get_uint64, "fmi3SetUInt64" SetUInt64 fmi3_set_uint64: fmi3UInt64;
}

export3!("fmi3DoStep", DoStep3, fmi3_do_step,
(t: fmi3Float64, h: fmi3Float64, _no_set_state_prior: fmi3Boolean,
 event_handling_needed: *mut fmi3Boolean, terminate_simulation: *mut fmi3Boolean,
 early_return: *mut fmi3Boolean, last_successful_time: *mut fmi3Float64),
|inst| {
    let done = inst.do_step(t, h);
    // The step's outputs, where the master passed them (the macro's
    // block holds the contract: each is NULL or valid): no event, no
    // end asked for; whether it returned early (a peer late, where the
    // master allows it), and the time reached.
    let early = inst.returned_early();
    let flags = [(event_handling_needed, false), (terminate_simulation, false), (early_return, early)];
    for (flag, value) in flags.into_iter().filter(|(p, _)| !p.is_null()) {
        *flag = value;
    }
    if !last_successful_time.is_null() {
        *last_successful_time = inst.time();
    }
    done
});

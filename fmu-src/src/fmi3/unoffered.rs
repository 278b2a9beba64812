//! The FMI 3.0 functions this FMU does not offer, exported because the
//! standard asks every binary for all of them: each returns `fmi3Error` and
//! says which function and why to the master's logger. A getter or setter
//! of a type no variable has is refused only when it names a variable
//! (none with that type exists); called with none, it does nothing.
//!
//! Each takes the arguments it reads and no more: on the C calling
//! conventions of every platform built (x86-64 System V and Windows x64) the
//! caller removes what it passed, so arguments beyond those are ignored.

use fmu_model::fmi3::*;

use crate::component::call;
use crate::error::error;
use crate::state_machine::Call;

/// Refuses `name` on `instance`: an error saying `why`.
///
/// # Safety
/// `instance` came from an instantiation (the FMI 3.0 contract).
unsafe fn refuse(instance: fmi3Instance, name: &str, why: &str) -> fmi3Status {
    // SAFETY: forwarded contract.
    unsafe {
        call(instance, Call::Unoffered3, |_| {
            Err(error(format!("{name}: {why}")))
        })
    }
}

/// Functions of a capability this FMU's description says it has not.
macro_rules! unoffered {
    ($($export:literal $fn:ident $why:literal;)*) => {$(
        /// # Safety
        /// The FMI 3.0 contract on `instance`.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(instance: fmi3Instance) -> fmi3Status {
            // SAFETY: the FMI contract on `instance`.
            unsafe { refuse(instance, $export, $why) }
        }
    )*};
}

unoffered! {
    "fmi3EnterEventMode" fmi3_enter_event_mode "hasEventMode is false: this FMU has no Event Mode";
    "fmi3EnterStepMode" fmi3_enter_step_mode "hasEventMode is false: the FMU is in Step Mode from fmi3ExitInitializationMode on";
    "fmi3EvaluateDiscreteStates" fmi3_evaluate_discrete_states "hasEventMode is false: this FMU has no Event Mode";
    "fmi3UpdateDiscreteStates" fmi3_update_discrete_states "hasEventMode is false: this FMU has no Event Mode";
    "fmi3EnterConfigurationMode" fmi3_enter_configuration_mode "this FMU has no structural parameters";
    "fmi3ExitConfigurationMode" fmi3_exit_configuration_mode "this FMU has no structural parameters";
    "fmi3GetNumberOfVariableDependencies" fmi3_get_number_of_variable_dependencies "this FMU's description gives no dependencies";
    "fmi3GetVariableDependencies" fmi3_get_variable_dependencies "this FMU's description gives no dependencies";
    "fmi3GetFMUState" fmi3_get_fmu_state "canGetAndSetFMUState is false: this FMU's state is its peers' memory";
    "fmi3SetFMUState" fmi3_set_fmu_state "canGetAndSetFMUState is false: this FMU's state is its peers' memory";
    "fmi3FreeFMUState" fmi3_free_fmu_state "canGetAndSetFMUState is false: this FMU's state is its peers' memory";
    "fmi3SerializedFMUStateSize" fmi3_serialized_fmu_state_size "canSerializeFMUState is false";
    "fmi3SerializeFMUState" fmi3_serialize_fmu_state "canSerializeFMUState is false";
    "fmi3DeserializeFMUState" fmi3_deserialize_fmu_state "canSerializeFMUState is false";
    "fmi3GetDirectionalDerivative" fmi3_get_directional_derivative "this FMU provides no derivatives";
    "fmi3GetAdjointDerivative" fmi3_get_adjoint_derivative "this FMU provides no derivatives";
    "fmi3GetOutputDerivatives" fmi3_get_output_derivatives "this FMU provides no derivatives";
    "fmi3GetIntervalDecimal" fmi3_get_interval_decimal "this FMU has no clocks";
    "fmi3GetIntervalFraction" fmi3_get_interval_fraction "this FMU has no clocks";
    "fmi3GetShiftDecimal" fmi3_get_shift_decimal "this FMU has no clocks";
    "fmi3GetShiftFraction" fmi3_get_shift_fraction "this FMU has no clocks";
    "fmi3SetIntervalDecimal" fmi3_set_interval_decimal "this FMU has no clocks";
    "fmi3SetIntervalFraction" fmi3_set_interval_fraction "this FMU has no clocks";
    "fmi3SetShiftDecimal" fmi3_set_shift_decimal "this FMU has no clocks";
    "fmi3SetShiftFraction" fmi3_set_shift_fraction "this FMU has no clocks";
    "fmi3ActivateModelPartition" fmi3_activate_model_partition "this FMU is a Co-Simulation FMU only";
    "fmi3EnterContinuousTimeMode" fmi3_enter_continuous_time_mode "this FMU is a Co-Simulation FMU only";
    "fmi3CompletedIntegratorStep" fmi3_completed_integrator_step "this FMU is a Co-Simulation FMU only";
    "fmi3SetTime" fmi3_set_time "this FMU is a Co-Simulation FMU only";
    "fmi3SetContinuousStates" fmi3_set_continuous_states "this FMU is a Co-Simulation FMU only";
    "fmi3GetContinuousStateDerivatives" fmi3_get_continuous_state_derivatives "this FMU is a Co-Simulation FMU only";
    "fmi3GetEventIndicators" fmi3_get_event_indicators "this FMU is a Co-Simulation FMU only";
    "fmi3GetContinuousStates" fmi3_get_continuous_states "this FMU is a Co-Simulation FMU only";
    "fmi3GetNominalsOfContinuousStates" fmi3_get_nominals_of_continuous_states "this FMU is a Co-Simulation FMU only";
    "fmi3GetNumberOfEventIndicators" fmi3_get_number_of_event_indicators "this FMU is a Co-Simulation FMU only";
    "fmi3GetNumberOfContinuousStates" fmi3_get_number_of_continuous_states "this FMU is a Co-Simulation FMU only";
}

/// Getters and setters of types no variable of this FMU has.
macro_rules! no_variables {
    ($($export:literal $fn:ident;)*) => {$(
        /// # Safety
        /// The FMI 3.0 contract on `instance`.
        #[unsafe(export_name = $export)]
        pub unsafe extern "C" fn $fn(
            instance: fmi3Instance,
            _vr: *const fmi3ValueReference,
            n: usize,
        ) -> fmi3Status {
            // SAFETY: the FMI contract on `instance`.
            unsafe {
                call(instance, Call::Unoffered3, |_| match n {
                    0 => Ok(()),
                    _ => Err(error(format!(
                        "{}: no variable of this FMU is of that type (it has no Binary and \
                         no Clock variables)",
                        $export
                    ))),
                })
            }
        }
    )*};
}

no_variables! {
    "fmi3GetBinary" fmi3_get_binary;
    "fmi3GetClock" fmi3_get_clock;
    "fmi3SetBinary" fmi3_set_binary;
    "fmi3SetClock" fmi3_set_clock;
}

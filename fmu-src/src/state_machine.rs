//! The FMI 2.0 co-simulation state machine: which state each function may be
//! called in, as one table (the Reference FMUs' `MASK_fmi2*` constants). It is
//! checked once, in component.rs's `call`, before any function's body runs, so no body
//! repeats it.

/// Where an instance is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Instantiated,
    Initialization,
    StepComplete,
    Terminated,
    Error,
    /// After a fatal error only `fmi2FreeInstance` is legal.
    Fatal,
}

impl State {
    const ALL: [State; 6] = [
        State::Instantiated,
        State::Initialization,
        State::StepComplete,
        State::Terminated,
        State::Error,
        State::Fatal,
    ];

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The states in `mask`, for messages.
pub fn states(mask: u8) -> Vec<State> {
    State::ALL
        .into_iter()
        .filter(|s| mask & s.bit() != 0)
        .collect()
}

const I: u8 = State::Instantiated.bit();
const N: u8 = State::Initialization.bit();
const S: u8 = State::StepComplete.bit();
const T: u8 = State::Terminated.bit();
const E: u8 = State::Error.bit();

/// The variable rule beside the call table: a parameter of variability `fixed`
/// may be set only until `fmi2ExitInitializationMode`.
pub const fn fixed_parameters_settable(state: State) -> bool {
    (I | N) & state.bit() != 0
}

/// The table's second column: whether the call runs link code, whose `log`
/// records must reach this instance's logger (`log`), or not (`quiet`: no
/// routing is set up, which the per-step getters and setters cannot afford).
macro_rules! logs {
    (log) => {
        true
    };
    (quiet) => {
        false
    };
}

macro_rules! calls {
    ($($call:ident $name:literal $logs:ident $mask:expr;)*) => {
        /// Every exported function that takes a live component (`fmi2FreeInstance`
        /// is legal in every state and is not listed).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Call {
            $($call,)*
        }

        impl Call {
            /// Every function, in declaration order: `ALL[call as usize] == call`.
            pub const ALL: &'static [Call] = &[$(Call::$call,)*];

            /// The exported C name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Call::$call => $name,)*
                }
            }

            /// The states it may be called in, as a mask of [`State`] bits.
            pub const fn allowed(self) -> u8 {
                match self {
                    $(Call::$call => $mask,)*
                }
            }

            /// Whether the `log` records made during the call go to this instance's logger.
            pub const fn logs(self) -> bool {
                match self {
                    $(Call::$call => logs!($logs),)*
                }
            }
        }
    };
}

calls! {
    SetDebugLogging "fmi2SetDebugLogging" quiet I | N | S | T | E;
    SetupExperiment "fmi2SetupExperiment" quiet I;
    EnterInitializationMode "fmi2EnterInitializationMode" quiet I;
    ExitInitializationMode "fmi2ExitInitializationMode" log N;
    Terminate "fmi2Terminate" log S | E;
    Reset "fmi2Reset" log I | N | S | T | E;
    GetReal "fmi2GetReal" quiet N | S | T | E;
    GetInteger "fmi2GetInteger" quiet N | S | T | E;
    GetBoolean "fmi2GetBoolean" quiet N | S | T | E;
    GetString "fmi2GetString" quiet N | S | T | E;
    SetReal "fmi2SetReal" quiet I | N | S;
    SetInteger "fmi2SetInteger" quiet I | N | S;
    SetBoolean "fmi2SetBoolean" quiet I | N | S;
    SetString "fmi2SetString" quiet I | N | S;
    GetFmuState "fmi2GetFMUstate" quiet I | N | S | T | E;
    SetFmuState "fmi2SetFMUstate" quiet I | N | S | T | E;
    FreeFmuState "fmi2FreeFMUstate" quiet I | N | S | T | E;
    SerializedFmuStateSize "fmi2SerializedFMUstateSize" quiet I | N | S | T | E;
    SerializeFmuState "fmi2SerializeFMUstate" quiet I | N | S | T | E;
    DeSerializeFmuState "fmi2DeSerializeFMUstate" quiet I | N | S | T | E;
    GetDirectionalDerivative "fmi2GetDirectionalDerivative" quiet I | N | S | T | E;
    SetRealInputDerivatives "fmi2SetRealInputDerivatives" quiet I | N | S | T | E;
    GetRealOutputDerivatives "fmi2GetRealOutputDerivatives" quiet I | N | S | T | E;
    DoStep "fmi2DoStep" log S;
    CancelStep "fmi2CancelStep" quiet I | N | S | T | E;
    GetStatus "fmi2GetStatus" quiet S | T | E;
    GetRealStatus "fmi2GetRealStatus" quiet S | T | E;
    GetIntegerStatus "fmi2GetIntegerStatus" quiet S | T | E;
    GetBooleanStatus "fmi2GetBooleanStatus" quiet S | T | E;
    GetStringStatus "fmi2GetStringStatus" quiet S | T | E;
    // The FMI 3.0 face, in the same states: Step Mode is StepComplete (the
    // FMU has no Event Mode); its initialization takes the experiment's times.
    SetDebugLogging3 "fmi3SetDebugLogging" quiet I | N | S | T | E;
    EnterInitializationMode3 "fmi3EnterInitializationMode" quiet I;
    ExitInitializationMode3 "fmi3ExitInitializationMode" log N;
    Terminate3 "fmi3Terminate" log S | E;
    Reset3 "fmi3Reset" log I | N | S | T | E;
    GetFloat64 "fmi3GetFloat64" quiet N | S | T | E;
    GetInt32 "fmi3GetInt32" quiet N | S | T | E;
    GetBoolean3 "fmi3GetBoolean" quiet N | S | T | E;
    GetString3 "fmi3GetString" quiet N | S | T | E;
    SetFloat64 "fmi3SetFloat64" quiet I | N | S;
    SetInt32 "fmi3SetInt32" quiet I | N | S;
    SetBoolean3 "fmi3SetBoolean" quiet I | N | S;
    SetString3 "fmi3SetString" quiet I | N | S;
    GetFloat32 "fmi3GetFloat32" quiet N | S | T | E;
    GetInt8 "fmi3GetInt8" quiet N | S | T | E;
    GetUInt8 "fmi3GetUInt8" quiet N | S | T | E;
    GetInt16 "fmi3GetInt16" quiet N | S | T | E;
    GetUInt16 "fmi3GetUInt16" quiet N | S | T | E;
    GetUInt32 "fmi3GetUInt32" quiet N | S | T | E;
    GetInt64 "fmi3GetInt64" quiet N | S | T | E;
    GetUInt64 "fmi3GetUInt64" quiet N | S | T | E;
    SetFloat32 "fmi3SetFloat32" quiet I | N | S;
    SetInt8 "fmi3SetInt8" quiet I | N | S;
    SetUInt8 "fmi3SetUInt8" quiet I | N | S;
    SetInt16 "fmi3SetInt16" quiet I | N | S;
    SetUInt16 "fmi3SetUInt16" quiet I | N | S;
    SetUInt32 "fmi3SetUInt32" quiet I | N | S;
    SetInt64 "fmi3SetInt64" quiet I | N | S;
    SetUInt64 "fmi3SetUInt64" quiet I | N | S;
    DoStep3 "fmi3DoStep" log S;
    // Every FMI 3.0 function this FMU does not offer (each says which).
    Unoffered3 "an FMI 3.0 function this FMU does not offer" quiet I | N | S | T | E;
}

impl Call {
    /// Whether the call is legal in `state` (never in `Fatal`).
    pub const fn permits(self, state: State) -> bool {
        self.allowed() & state.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_function_once_and_none_is_legal_after_a_fatal_error() {
        let mut names: Vec<_> = Call::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        // The 34 functions less the two without a component, fmi2Instantiate and
        // fmi2FreeInstance, and the two without a state, GetTypesPlatform and
        // GetVersion; and the FMI 3.0 face's 31 rows (one for all it does not offer).
        assert_eq!(names.len(), 30 + 31);
        assert!(Call::ALL.iter().all(|c| !c.permits(State::Fatal)));
        assert_eq!(
            states(Call::Terminate.allowed()),
            [State::StepComplete, State::Error]
        );
    }
}

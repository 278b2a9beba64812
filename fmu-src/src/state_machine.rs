//! The FMI 2.0 co-simulation state machine: which state each function may be
//! called in, as one table (the Reference FMUs' `MASK_fmi2*` constants). It is
//! checked once, in lib.rs's `call`, before any function's body runs, so no body
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

macro_rules! calls {
    ($($call:ident $name:literal $mask:expr;)*) => {
        /// Every exported function that takes a live component (`fmi2FreeInstance`
        /// is legal in every state and is not listed).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Call {
            $($call,)*
        }

        impl Call {
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
        }
    };
}

calls! {
    SetDebugLogging "fmi2SetDebugLogging" I | N | S | T | E;
    SetupExperiment "fmi2SetupExperiment" I;
    EnterInitializationMode "fmi2EnterInitializationMode" I;
    ExitInitializationMode "fmi2ExitInitializationMode" N;
    Terminate "fmi2Terminate" S | E;
    Reset "fmi2Reset" I | N | S | T | E;
    GetReal "fmi2GetReal" N | S | T | E;
    GetInteger "fmi2GetInteger" N | S | T | E;
    GetBoolean "fmi2GetBoolean" N | S | T | E;
    GetString "fmi2GetString" N | S | T | E;
    SetReal "fmi2SetReal" I | N | S;
    SetInteger "fmi2SetInteger" I | N | S;
    SetBoolean "fmi2SetBoolean" I | N | S;
    SetString "fmi2SetString" I | N | S;
    GetFmuState "fmi2GetFMUstate" I | N | S | T | E;
    SetFmuState "fmi2SetFMUstate" I | N | S | T | E;
    FreeFmuState "fmi2FreeFMUstate" I | N | S | T | E;
    SerializedFmuStateSize "fmi2SerializedFMUstateSize" I | N | S | T | E;
    SerializeFmuState "fmi2SerializeFMUstate" I | N | S | T | E;
    DeSerializeFmuState "fmi2DeSerializeFMUstate" I | N | S | T | E;
    GetDirectionalDerivative "fmi2GetDirectionalDerivative" I | N | S | T | E;
    SetRealInputDerivatives "fmi2SetRealInputDerivatives" I | N | S | T | E;
    GetRealOutputDerivatives "fmi2GetRealOutputDerivatives" I | N | S | T | E;
    DoStep "fmi2DoStep" S;
    CancelStep "fmi2CancelStep" I | N | S | T | E;
    GetStatus "fmi2GetStatus" S | T | E;
    GetRealStatus "fmi2GetRealStatus" S | T | E;
    GetIntegerStatus "fmi2GetIntegerStatus" S | T | E;
    GetBooleanStatus "fmi2GetBooleanStatus" S | T | E;
    GetStringStatus "fmi2GetStringStatus" S | T | E;
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
        // fmi2FreeInstance, and the two without a state, GetTypesPlatform and GetVersion.
        assert_eq!(names.len(), 30);
        assert!(Call::ALL.iter().all(|c| !c.permits(State::Fatal)));
        assert_eq!(
            states(Call::Terminate.allowed()),
            [State::StepComplete, State::Error]
        );
    }
}

//! Every call in every state of an instance: what the state machine permits
//! succeeds, the rest is refused with the state named.

use super::*;

/// The calls whose legality depends on the state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    SetupExperiment,
    EnterInit,
    ExitInit,
    DoStep,
    Terminate,
    Reset,
    SetDebugLogging,
    SetInput,
    SetFixedParameter,
    GetReal,
    GetString,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::SetupExperiment => "fmi2SetupExperiment",
            Call::EnterInit => "fmi2EnterInitializationMode",
            Call::ExitInit => "fmi2ExitInitializationMode",
            Call::DoStep => "fmi2DoStep",
            Call::Terminate => "fmi2Terminate",
            Call::Reset => "fmi2Reset",
            Call::SetDebugLogging => "fmi2SetDebugLogging",
            Call::SetInput | Call::SetFixedParameter => "fmi2SetReal",
            Call::GetReal => "fmi2GetReal",
            Call::GetString => "fmi2GetString",
        }
    }

    /// The FMI 2.0 co-simulation state machine: where this call is legal.
    fn legal(self) -> &'static [St] {
        use St::*;
        match self {
            Call::SetupExperiment | Call::EnterInit => &[Instantiated],
            Call::ExitInit => &[Initialization],
            Call::DoStep => &[StepComplete],
            Call::Terminate => &[StepComplete, Error],
            Call::Reset | Call::SetDebugLogging => &ALL,
            Call::SetInput => &[Instantiated, Initialization, StepComplete],
            Call::SetFixedParameter => &[Instantiated, Initialization],
            Call::GetReal | Call::GetString => &[Initialization, StepComplete, Terminated, Error],
        }
    }

    fn invoke(self, fmu: &Fmu) -> fmi2Status {
        let c = fmu.c;
        // SAFETY: a live instance; every pointer is valid for its count.
        unsafe {
            match self {
                Call::SetupExperiment => fmi2_setup_experiment(c, 0, 0.0, 0.0, 0, 0.0),
                Call::EnterInit => fmi2_enter_initialization_mode(c),
                Call::ExitInit => fmi2_exit_initialization_mode(c),
                Call::DoStep => fmi2_do_step(c, 0.0, 1e-3, 1),
                Call::Terminate => fmi2_terminate(c),
                Call::Reset => fmi2_reset(c),
                Call::SetDebugLogging => fmi2_set_debug_logging(c, 1, 0, null()),
                Call::SetInput => fmi2_set_real(c, &vr("roll").0, 1, &0.5),
                Call::SetFixedParameter => fmi2_set_real(c, &vr("timeout").0, 1, &2.0),
                Call::GetReal => fmi2_get_real(c, &vr("roll").0, 1, &mut 0.0),
                Call::GetString => fmi2_get_string(c, &vr("device").0, 1, &mut null()),
            }
        }
    }
}

/// Every call in every state: legal ones succeed, the others answer fmi2Error
/// with a message, as the FMI 2.0 co-simulation state machine says.
#[test]
fn every_call_in_every_state_follows_the_state_machine() {
    use Call::*;
    let calls = [
        SetupExperiment,
        EnterInit,
        ExitInit,
        DoStep,
        Terminate,
        Reset,
        SetDebugLogging,
        SetInput,
        SetFixedParameter,
        GetReal,
        GetString,
    ];
    // Why each refusal was made: a parameter that is fixed by then, or a call the
    // state does not allow.
    let mut fixed = Vec::new();
    for call in calls {
        for st in ALL {
            let fmu = in_state(st);
            let got = call.invoke(&fmu);
            if call.legal().contains(&st) {
                assert_eq!(got, fmi2OK, "{call:?} in {st:?}: {:?}", fmu.log());
            } else {
                assert_eq!(got, fmi2Error, "{call:?} in {st:?} must be refused");
                let text = fmu.last_error();
                assert!(
                    text.starts_with(call.name())
                        && (text.contains("illegal call sequence")
                            || text.contains("fixed parameter")),
                    "{call:?} in {st:?}: `{text}`"
                );
                if text.contains("fixed parameter") {
                    fixed.push((call, st));
                }
            }
        }
    }
    // A fixed parameter is refused as fixed exactly where a set is legal (an
    // input may be set) but the parameter may no longer change.
    let expected: Vec<_> = ALL
        .into_iter()
        .filter(|st| SetInput.legal().contains(st) && !SetFixedParameter.legal().contains(st))
        .map(|st| (SetFixedParameter, st))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(fixed, expected);
}

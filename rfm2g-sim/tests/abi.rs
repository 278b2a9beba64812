//! The library exports exactly the header's functions, each with the header's
//! signature.
//!
//! The signatures are checked at compile time: rfm2g-sys's bindgen output of
//! `rfm2g_api.h` (itself checked against the header by rfm2g-sys's `bindings`
//! test) declares each function's pointer type, and an array of that pointer and
//! our export only compiles if the types are identical.

#[path = "support/library.rs"]
mod support;

use rfm2g_sys::ffi::Rfm2gApi;

macro_rules! vendor_functions {
    ($($name:ident),* $(,)?) => {
        /// Never called: it exists to fail compilation on a signature mismatch.
        #[allow(dead_code)]
        fn signatures_match(api: &Rfm2gApi) {
            $( let _ = [*api.$name.as_ref().unwrap(), rfm2g::$name]; )*
        }

        const NAMES: &[&str] = &[$(stringify!($name)),*];

        /// Which header functions the loaded library lacks.
        fn missing(api: &Rfm2gApi) -> Vec<&'static str> {
            let mut out = Vec::new();
            $( if api.$name.is_err() { out.push(stringify!($name)); } )*
            out
        }
    };
}

vendor_functions!(
    RFM2gOpen,
    RFM2gClose,
    RFM2gSize,
    RFM2gNodeID,
    RFM2gBoardID,
    RFM2gFirst,
    RFM2gGetConfig,
    RFM2gUserMemory,
    RFM2gUserMemoryBytes,
    RFM2gUnMapUserMemory,
    RFM2gUnMapUserMemoryBytes,
    RFM2gRead,
    RFM2gWrite,
    RFM2gPeek8,
    RFM2gPeek16,
    RFM2gPeek32,
    RFM2gPeek64,
    RFM2gPoke8,
    RFM2gPoke16,
    RFM2gPoke32,
    RFM2gPoke64,
    RFM2gEnableEvent,
    RFM2gDisableEvent,
    RFM2gSendEvent,
    RFM2gWaitForEvent,
    RFM2gCancelWaitForEvent,
    RFM2gClearEvent,
    RFM2gGetEventCount,
    RFM2gCheckRingCont,
    RFM2gClearOwnData,
    RFM2gSetDMAByteSwap,
    RFM2gGetDMAByteSwap,
    RFM2gSetDMAThreshold,
    RFM2gGetDMAThreshold,
    RFM2gSetPIOByteSwap,
    RFM2gGetPIOByteSwap,
    RFM2gSetLed,
    RFM2gGetLed,
    RFM2gErrorMsg,
);

#[test]
fn the_library_has_every_function_of_the_header() {
    let lib = support::sim_library();
    // SAFETY: the emulator's initialisers do nothing.
    let api = unsafe { Rfm2gApi::new(&lib) }.expect("load librfm2g.so");
    assert_eq!(missing(&api), Vec::<&str>::new());

    // And the header declares every function the list names: bindgen puts each
    // declared function in the struct, so the list and the struct agree when the
    // source of ffi.rs names exactly these.
    let ffi = include_str!("../../rfm2g-sys/src/ffi.rs");
    let declared: Vec<&str> = ffi
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub RFM2g"))
        .filter_map(|l| l.split(':').next())
        .collect();
    let mut declared: Vec<String> = declared.iter().map(|n| format!("RFM2g{n}")).collect();
    let mut names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    declared.sort();
    names.sort();
    assert_eq!(declared, names);
}

#[test]
fn it_exports_nothing_else_but_two_leak_counters_and_the_ring_cut() {
    let lib = support::sim_library();
    let out = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .expect("binutils `nm`");
    assert!(out.status.success());
    let mut exported: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("RFM2g") || s.starts_with("rfm2gsim_"))
        .map(str::to_owned)
        .collect();
    exported.sort();
    let mut expected: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    expected.extend([
        "rfm2gsim_board".into(),
        "rfm2gsim_live_handles".into(),
        "rfm2gsim_live_maps".into(),
        "rfm2gsim_set_link".into(),
    ]);
    expected.sort();
    assert_eq!(exported, expected);
    let other: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" T "))
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| !s.starts_with("RFM2g") && !s.starts_with("rfm2gsim_"))
        .map(str::to_owned)
        .collect();
    assert!(other.is_empty(), "unexpected exported functions: {other:?}");
}

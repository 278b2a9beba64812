//! Random sequences of FMI calls against the FMU's C API, as a hostile or buggy
//! master would make them: any function, in any state, with any value reference,
//! value, string, time and step size, on live, freed and NULL components. The
//! FMU must answer each with a status (or NULL), never crash, never hang.
//!
//! Instances are of the attitude FMU or of an interface FMU (three nodes, every
//! signal type, its resources written once per process).
//!
//! Two adjustments keep iterations fast and local: `shm:` devices become
//! `loopback:` (no files left in /dev/shm), and timeouts are capped at 10 ms.
#![no_main]

use std::ffi::CString;
use std::sync::OnceLock;

#[path = "master.rs"]
mod master;

use libfuzzer_sys::fuzz_target;
use fmu_model::fmi2::*;
use fmu_model::{Model, RESOURCE_INTERFACE, RESOURCE_NODE};
use rfm_attitude::*;

const LAB: &str = r#"
name = "lab"
[[node]]
name = "cockpit"
slot = 0
signals = [
  { name = "roll", type = "Real", min = -4, max = 4 },
  { name = "gear_down", type = "Boolean" },
  { name = "flap_detent", type = "Integer", min = 0, max = 4 },
  { name = "callsign", type = "String", size = 8 },
]
[[node]]
name = "visual"
slot = 1
signals = [ { name = "frame_count", type = "Integer" } ]
"#;

/// The two FMUs: (model, GUID, resource URI).
fn fmus() -> &'static [(Model, CString, CString); 2] {
    static FMUS: OnceLock<[(Model, CString, CString); 2]> = OnceLock::new();
    FMUS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fuzz-fmi-calls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(RESOURCE_INTERFACE), LAB).unwrap();
        std::fs::write(dir.join(RESOURCE_NODE), "cockpit").unwrap();
        let lab = Model::load(&dir).unwrap();
        let attitude = Model::attitude();
        let entry = |m: Model, uri: String| {
            let guid = CString::new(m.guid.as_str()).unwrap();
            (m, guid, CString::new(uri).unwrap())
        };
        [
            entry(attitude, "file:///tmp/r".into()),
            entry(lab, format!("file://{}", dir.display())),
        ]
    })
}

/// The value reference of parameter `name` in FMU `fmu` (the interface FMU
/// has no nodeSlot/peerSlot, so the two differ after them).
fn vr(fmu: usize, name: &str) -> u32 {
    fmus()[fmu].0.variable(name).expect("a parameter").0
}

/// Reads the fuzz input as a stream of small numbers.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([0; 4].map(|_| self.byte().unwrap_or(0)))
    }

    fn f64(&mut self) -> f64 {
        match self.byte().unwrap_or(0) % 8 {
            0 => 0.0,
            1 => 1e-3,
            2 => f64::NAN,
            3 => f64::INFINITY,
            4 => -1.0,
            5 => 1e300,
            6 => f64::from(self.u32()) * 1e-3,
            _ => f64::from_bits(u64::from(self.u32()) << 32 | u64::from(self.u32())),
        }
    }

    fn text(&mut self) -> CString {
        let n = usize::from(self.byte().unwrap_or(0) % 48);
        let bytes: Vec<u8> = (0..n).filter_map(|_| self.byte()).filter(|b| *b != 0).collect();
        CString::new(bytes).expect("NULs filtered")
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let cb = master::callbacks();
    // Each component with the FMU it was instantiated from.
    let mut components: Vec<(fmi2Component, usize)> = Vec::new();
    let mut time = 0.0f64;
    while let Some(op) = input.byte() {
        let pick = input.byte().unwrap_or(0);
        // A live, freed or NULL component.
        let (c, m) = if components.is_empty() || pick == 255 {
            (std::ptr::null_mut(), 0)
        } else {
            components[usize::from(pick) % components.len()]
        };
        let vr = |name: &str| vr(m, name);
        let r = input.u32() % (fmus()[0].0.variables.len().max(fmus()[1].0.variables.len()) as u32 + 2);
        // SAFETY: every pointer passed is NULL or valid for the count passed with
        // it; components are NULL or came from fmi2Instantiate (freed ones too:
        // the FMU keeps their tombstones).
        unsafe {
            match op % 20 {
                0 if components.len() < 4 => {
                    let name = input.text();
                    let (_, guid, uri) = &fmus()[usize::from(pick % 2)];
                    let g = if input.byte().unwrap_or(0) % 4 == 0 { input.text() } else { guid.clone() };
                    let made = fmi2_instantiate(name.as_ptr(), fmi2CoSimulation, g.as_ptr(), uri.as_ptr(), &cb, 0, 1);
                    if !made.is_null() {
                        components.push((made, usize::from(pick % 2)));
                    }
                }
                1 => fmi2_free_instance(c),
                2 => {
                    let (start, stop) = (input.f64(), input.f64());
                    let _ = fmi2_setup_experiment(c, 0, 0.0, start, i32::from(pick % 2 == 0), stop);
                    time = if start.is_finite() { start } else { 0.0 };
                }
                3 => {
                    let _ = fmi2_enter_initialization_mode(c);
                }
                4 => {
                    // Keep the device local and the waits short.
                    let dev = CString::new(format!("loopback:fuzz-{}", pick % 3)).unwrap();
                    let dvr = vr("device");
                    let _ = fmi2_set_string(c, &dvr, 1, &dev.as_ptr());
                    let tvr = [vr("timeout"), vr("startupTimeout"), vr("idleTimeout")];
                    let _ = fmi2_set_real(c, tvr.as_ptr(), 3, [0.01, 0.01, 0.01].as_ptr());
                    let _ = fmi2_exit_initialization_mode(c);
                }
                5 => {
                    let h = input.f64();
                    let t = if pick % 4 == 0 { input.f64() } else { time };
                    if fmi2_do_step(c, t, h, 1) == fmi2OK {
                        time = t + h;
                    }
                }
                6 => {
                    let v = input.f64();
                    let v = if r == vr("timeout") || r == vr("startupTimeout") || r == vr("idleTimeout") {
                        v.min(0.01)
                    } else if r == vr("realTimeFactor") {
                        // Pacing sleeps for the steps' time: a fuzzed step size could be years.
                        0.0
                    } else {
                        v
                    };
                    let _ = fmi2_set_real(c, &r, 1, &v);
                }
                7 => {
                    let v = input.u32() as i32;
                    let _ = fmi2_set_integer(c, &r, 1, &v);
                }
                8 => {
                    let v = input.u32() as i32;
                    let _ = fmi2_set_boolean(c, &r, 1, &v);
                }
                9 => {
                    let mut s = input.text();
                    if r == vr("device") && s.as_bytes().starts_with(b"shm:") {
                        s = CString::new([b"loopback:", &s.as_bytes()[4..]].concat()).unwrap();
                    }
                    let _ = fmi2_set_string(c, &r, 1, &s.as_ptr());
                }
                10 => {
                    let mut v = 0.0;
                    let _ = fmi2_get_real(c, &r, 1, &mut v);
                    let mut i = 0;
                    let _ = fmi2_get_integer(c, &r, 1, &mut i);
                    let _ = fmi2_get_boolean(c, &r, 1, &mut i);
                    let mut s: fmi2String = std::ptr::null();
                    let _ = fmi2_get_string(c, &r, 1, &mut s);
                }
                11 => {
                    let _ = fmi2_terminate(c);
                }
                12 => {
                    let _ = fmi2_reset(c);
                    time = 0.0;
                }
                13 => {
                    // NULL arrays with and without a count.
                    let n = usize::from(pick % 2);
                    let _ = fmi2_set_real(c, std::ptr::null(), n, std::ptr::null());
                    let _ = fmi2_get_real(c, std::ptr::null(), n, std::ptr::null_mut());
                    let _ = fmi2_set_string(c, &r, n, std::ptr::null());
                }
                14 => {
                    let mut st = fmi2OK;
                    let _ = fmi2_get_status(c, 0, &mut st);
                    let mut v = 0.0;
                    let _ = fmi2_get_real_status(c, fmi2LastSuccessfulTime, &mut v);
                    let mut s: fmi2String = std::ptr::null();
                    let _ = fmi2_get_string_status(c, 1, &mut s);
                }
                15 => {
                    let cat = input.text();
                    let cats = [cat.as_ptr()];
                    let _ = fmi2_set_debug_logging(c, i32::from(pick % 2 == 0), usize::from(pick % 2), cats.as_ptr());
                }
                16 => {
                    let _ = fmi2_cancel_step(c);
                    let mut state: fmi2FMUstate = std::ptr::null_mut();
                    let _ = fmi2_get_fmu_state(c, &mut state);
                }
                17 => {
                    let vrs = [r, r.wrapping_add(1), u32::MAX];
                    let vals = [input.f64(), input.f64(), input.f64()];
                    // The waits and the pacing stay as op 6 keeps them: short.
                    let timed = ["timeout", "startupTimeout", "idleTimeout", "realTimeFactor"];
                    if !vrs.iter().any(|v| timed.iter().any(|&t| vr(t) == *v)) {
                        let _ = fmi2_set_real(c, vrs.as_ptr(), 3, vals.as_ptr());
                    }
                }
                _ => {
                    let _ = fmi2_get_types_platform();
                    let _ = fmi2_get_version();
                }
            }
        }
    }
    for (c, _) in components {
        // SAFETY: components from fmi2Instantiate; freeing twice is answered.
        unsafe { fmi2_free_instance(c) };
    }
});

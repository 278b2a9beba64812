//! A minimal co-simulation master for the FMU's own tests: it calls the exported
//! C functions exactly as a master does, and records every logged message.
#![allow(dead_code)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Arc, Mutex};

use fmu_model::fmi2::*;
use fmu_model::Model;
use rfm_attitude::*;
use rfm_frames::fmi::FmiType;

pub mod lab;

/// Messages one instance logged: (status, category, message).
pub type Log = Arc<Mutex<Vec<(fmi2Status, String, String)>>>;

/// What a printf-style logger prints for `format` when it is given no
/// arguments, as the many loggers that print only the format do: the real
/// `snprintf` of the C library.
///
/// # Safety
/// `format` is a NUL-terminated string.
pub unsafe fn printed(format: *const c_char) -> String {
    // SAFETY: per the contract.
    let raw = unsafe { CStr::from_ptr(format) }.to_bytes();
    let mut rest = raw;
    while let Some(i) = rest.iter().position(|&b| b == b'%') {
        assert_eq!(
            rest.get(i + 1),
            Some(&b'%'),
            "the FMU passed a format with a conversion: {:?}",
            String::from_utf8_lossy(raw)
        );
        rest = &rest[i + 2..];
    }
    let mut buf = vec![0u8; raw.len() + 1];
    // SAFETY: `buf` holds `buf.len()` bytes; the format has no conversion (checked
    // above: every `%` is doubled), so snprintf reads no argument.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), format) };
    buf.truncate(usize::try_from(n).expect("snprintf succeeded"));
    String::from_utf8_lossy(&buf).into_owned()
}

/// The master's logger. FMI declares it variadic; stable Rust cannot define a
/// variadic function, so this one takes the five fixed parameters, all the FMU
/// passes: its message is the format, which prints as itself.
unsafe extern "C" fn record(
    env: *mut c_void,
    _name: fmi2String,
    status: fmi2Status,
    category: fmi2String,
    format: fmi2String,
) {
    // SAFETY: `env` is the Log Arc pointer this test passed to fmi2Instantiate;
    // the strings are the FMU's NUL-terminated ones.
    unsafe {
        let log = &*(env as *const Mutex<Vec<(fmi2Status, String, String)>>);
        let category = CStr::from_ptr(category).to_string_lossy().into_owned();
        log.lock()
            .unwrap()
            .push((status, category, printed(format)));
    }
}

pub fn callbacks(log: &Log) -> fmi2CallbackFunctions {
    callbacks_with(record, Arc::as_ptr(log) as *mut c_void)
}

/// One instance, driven like a master drives it.
pub struct Fmu {
    pub c: fmi2Component,
    pub log: Log,
    pub model: Model,
    _name: CString,
}

pub fn vr(name: &str) -> (u32, FmiType) {
    let model = Model::attitude();
    let (r, v) = model
        .variable(name)
        .unwrap_or_else(|| panic!("no variable {name}"));
    (r, v.kind)
}

impl Fmu {
    /// An instance of the attitude FMU.
    pub fn new(name: &str) -> Fmu {
        Fmu::of(name, Model::attitude(), "file:///tmp/r")
    }

    /// An instance of the FMU of `model`, whose resources are at `resources` (a URI).
    pub fn of(name: &str, model: Model, resources: &str) -> Fmu {
        let log: Log = Arc::default();
        let cname = CString::new(name).unwrap();
        let guid = CString::new(model.guid.as_str()).unwrap();
        let resources = CString::new(resources).unwrap();
        let cb = callbacks(&log);
        // SAFETY: valid C strings and callbacks that outlive the instance (Arc kept in self).
        let c = unsafe {
            fmi2_instantiate(
                cname.as_ptr(),
                fmi2CoSimulation,
                guid.as_ptr(),
                resources.as_ptr(),
                &cb,
                0,
                1,
            )
        };
        assert!(
            !c.is_null(),
            "fmi2Instantiate failed: {:?}",
            log.lock().unwrap()
        );
        Fmu {
            c,
            log,
            model,
            _name: cname,
        }
    }

    /// The value reference and type of the variable `name`.
    pub fn vr(&self, name: &str) -> (u32, FmiType) {
        let (r, v) = self
            .model
            .variable(name)
            .unwrap_or_else(|| panic!("no variable {name}"));
        (r, v.kind)
    }

    /// Sets a parameter or input by name, whatever its type.
    pub fn set(&self, name: &str, value: &str) -> fmi2Status {
        let (r, kind) = self.vr(name);
        // SAFETY: one valid value reference and one value of the right type.
        unsafe {
            match kind {
                FmiType::Real => fmi2_set_real(self.c, &r, 1, &value.parse::<f64>().unwrap()),
                FmiType::Integer => fmi2_set_integer(self.c, &r, 1, &value.parse::<i32>().unwrap()),
                FmiType::Boolean => fmi2_set_boolean(self.c, &r, 1, &i32::from(value == "true")),
                FmiType::String => {
                    let s = CString::new(value).unwrap();
                    fmi2_set_string(self.c, &r, 1, &s.as_ptr())
                }
            }
        }
    }

    pub fn set_all(&self, values: &[(&str, &str)]) {
        for (name, value) in values {
            assert_eq!(
                self.set(name, value),
                fmi2OK,
                "set {name} = {value}: {:?}",
                self.log()
            );
        }
    }

    /// Setup, enter and exit initialization; returns the status of the exit.
    pub fn init(&self) -> fmi2Status {
        // SAFETY: a live instance.
        unsafe {
            assert_eq!(fmi2_setup_experiment(self.c, 0, 0.0, 0.0, 0, 0.0), fmi2OK);
            assert_eq!(fmi2_enter_initialization_mode(self.c), fmi2OK);
            fmi2_exit_initialization_mode(self.c)
        }
    }

    pub fn step(&self, t: f64, h: f64) -> fmi2Status {
        // SAFETY: a live instance.
        unsafe { fmi2_do_step(self.c, t, h, 1) }
    }

    pub fn real(&self, name: &str) -> f64 {
        let (r, _) = self.vr(name);
        let mut v = f64::NAN;
        // SAFETY: one value reference, one output slot.
        let status = unsafe { fmi2_get_real(self.c, &r, 1, &mut v) };
        assert_eq!(status, fmi2OK, "{:?}", self.log());
        v
    }

    pub fn reals(&self, names: &[&str]) -> Vec<f64> {
        let vrs: Vec<u32> = names.iter().map(|n| self.vr(n).0).collect();
        let mut out = vec![f64::NAN; vrs.len()];
        // SAFETY: matching lengths.
        let status = unsafe { fmi2_get_real(self.c, vrs.as_ptr(), vrs.len(), out.as_mut_ptr()) };
        assert_eq!(status, fmi2OK);
        out
    }

    pub fn integer(&self, name: &str) -> i32 {
        let (r, _) = self.vr(name);
        let mut v = 0;
        // SAFETY: one value reference, one output slot.
        let status = unsafe { fmi2_get_integer(self.c, &r, 1, &mut v) };
        assert_eq!(status, fmi2OK, "{:?}", self.log());
        v
    }

    pub fn boolean(&self, name: &str) -> bool {
        let (r, _) = self.vr(name);
        let mut v = 0;
        // SAFETY: one value reference, one output slot.
        assert_eq!(unsafe { fmi2_get_boolean(self.c, &r, 1, &mut v) }, fmi2OK);
        v != 0
    }

    pub fn string(&self, name: &str) -> String {
        let (r, _) = self.vr(name);
        let mut v: fmi2String = std::ptr::null();
        // SAFETY: one value reference; the FMU keeps the string alive until the next call.
        unsafe {
            assert_eq!(fmi2_get_string(self.c, &r, 1, &mut v), fmi2OK);
            CStr::from_ptr(v).to_string_lossy().into_owned()
        }
    }

    pub fn log(&self) -> Vec<(fmi2Status, String, String)> {
        self.log.lock().unwrap().clone()
    }

    /// The last message logged, with its status.
    pub fn last_error(&self) -> String {
        self.log()
            .last()
            .map(|(_, _, m)| m.clone())
            .unwrap_or_default()
    }

    pub fn terminate(&self) -> fmi2Status {
        // SAFETY: a live instance.
        unsafe { fmi2_terminate(self.c) }
    }
}

impl Drop for Fmu {
    fn drop(&mut self) {
        // SAFETY: the instance this value created (a tombstone after the first free).
        unsafe { fmi2_free_instance(self.c) };
    }
}

/// Unlinks a `shm:` object when the test ends, pass or fail: run after run,
/// objects left behind fill a developer's /dev/shm.
pub struct ShmGuard(pub String);

impl Drop for ShmGuard {
    fn drop(&mut self) {
        let _ = rfm_memory::backend::shm::unlink(&self.0);
    }
}

/// A resources folder holding `interface` and `node` (removed when it drops;
/// an instance reads it only while it is instantiated), and its file: URI: an
/// interface FMU's resources, as build-fmu packs them.
pub fn resources(interface: &str, node: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(fmu_model::RESOURCE_INTERFACE), interface).unwrap();
    std::fs::write(
        dir.path().join(fmu_model::RESOURCE_NODE),
        format!("{node}\n"),
    )
    .unwrap();
    let uri = format!("file://{}", dir.path().display());
    (dir, uri)
}

/// The instance of `node` of the interface file `interface`, as a master
/// loads its FMU (instantiated: its resources are read and gone).
pub fn interface_fmu(interface: &str, node: &str) -> Fmu {
    let (dir, uri) = resources(interface, node);
    let model = Model::load(dir.path()).unwrap();
    Fmu::of(node, model, &uri)
}

#[path = "../../../rfm2g-sim/tests/support/library.rs"]
mod sim;

/// The RFM2g emulator (`rfm2g-sim`), built for this test profile.
#[allow(unused_imports)]
pub use sim::{article_program, c_program, sim_library, unique, RingGuard};

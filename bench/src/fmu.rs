//! The packaged FMU driven through its C ABI, as a master does: the .so is taken
//! from the .fmu, loaded with dlopen, and called per step with fmi2SetReal (3
//! inputs), fmi2DoStep, fmi2GetReal (3 outputs).

use std::ffi::{c_char, c_void, CString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use rfm_attitude::fmi2::*;

type Instantiate = unsafe extern "C" fn(
    fmi2String,
    fmi2Type,
    fmi2String,
    fmi2String,
    *const fmi2CallbackFunctions,
    fmi2Boolean,
    fmi2Boolean,
) -> fmi2Component;
type Plain = unsafe extern "C" fn(fmi2Component) -> fmi2Status;
type Setup =
    unsafe extern "C" fn(fmi2Component, fmi2Boolean, f64, f64, fmi2Boolean, f64) -> fmi2Status;
type SetReal = unsafe extern "C" fn(fmi2Component, *const u32, usize, *const f64) -> fmi2Status;
type GetReal = unsafe extern "C" fn(fmi2Component, *const u32, usize, *mut f64) -> fmi2Status;
type SetInteger = unsafe extern "C" fn(fmi2Component, *const u32, usize, *const i32) -> fmi2Status;
type GetInteger = unsafe extern "C" fn(fmi2Component, *const u32, usize, *mut i32) -> fmi2Status;
type SetString =
    unsafe extern "C" fn(fmi2Component, *const u32, usize, *const fmi2String) -> fmi2Status;
type DoStep = unsafe extern "C" fn(fmi2Component, f64, f64, fmi2Boolean) -> fmi2Status;
type Free = unsafe extern "C" fn(fmi2Component);

/// The FMU's functions, resolved once.
#[derive(Debug)]
pub struct Fmu {
    _lib: libloading::Library,
    guid: CString,
    vars: Vec<(String, u32)>,
    instantiate: Instantiate,
    setup: Setup,
    enter: Plain,
    exit: Plain,
    terminate: Plain,
    free: Free,
    set_real: SetReal,
    get_real: GetReal,
    set_integer: SetInteger,
    get_integer: GetInteger,
    set_string: SetString,
    do_step: DoStep,
}

/// Errors go to stderr; the FMU passes "%s" + one string (see fmu-src's tests for
/// why a fixed-arity function serves as the variadic logger on x86-64/AArch64 Linux).
unsafe extern "C" fn logger(
    _: *mut c_void,
    _: fmi2String,
    status: fmi2Status,
    _: fmi2String,
    _: fmi2String,
    msg: *const c_char,
) {
    if status >= fmi2Error && !msg.is_null() {
        // SAFETY: the FMU passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(msg) };
        eprintln!("FMU: {}", text.to_string_lossy());
    }
}

fn callbacks() -> fmi2CallbackFunctions {
    fmi2CallbackFunctions {
        // SAFETY: see `logger`.
        logger: Some(unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(
                    *mut c_void,
                    fmi2String,
                    fmi2Status,
                    fmi2String,
                    fmi2String,
                    *const c_char,
                ),
                fmi2CallbackLogger,
            >(logger)
        }),
        allocateMemory: None,
        freeMemory: None,
        stepFinished: None,
        componentEnvironment: std::ptr::null_mut(),
    }
}

impl Fmu {
    /// Extracts the linux64 binary of `fmu` into `dir` and loads it.
    pub fn load(fmu: &Path, dir: &Path) -> Result<Fmu> {
        let file = std::fs::File::open(fmu).with_context(|| {
            format!(
                "{} is missing: run `cargo run --release -p build-fmu`",
                fmu.display()
            )
        })?;
        let mut zip = zip::ZipArchive::new(file)?;
        let mut xml = String::new();
        zip.by_name("modelDescription.xml")?
            .read_to_string(&mut xml)?;
        let doc = roxmltree::Document::parse(&xml)?;
        let root = doc.root_element();
        let guid = root.attribute("guid").ok_or_else(|| anyhow!("no guid"))?;
        let vars = root
            .descendants()
            .filter(|n| n.has_tag_name("ScalarVariable"))
            .filter_map(|n| {
                Some((
                    n.attribute("name")?.to_owned(),
                    n.attribute("valueReference")?.parse().ok()?,
                ))
            })
            .collect();
        std::fs::create_dir_all(dir)?;
        let so: PathBuf = dir.join(format!("rfm_attitude-{}.so", std::process::id()));
        let mut bytes = Vec::new();
        zip.by_name("binaries/linux64/rfm_attitude.so")?
            .read_to_end(&mut bytes)?;
        std::fs::write(&so, bytes)?;
        // SAFETY: loading the FMU runs its (Rust std) initialisers only.
        let lib = unsafe { libloading::Library::new(&so) }?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the FMI 2.0 standard fixes each function's signature.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .with_context(|| format!("the FMU lacks {}", $name))?
            };
        }
        Ok(Fmu {
            guid: CString::new(guid)?,
            vars,
            instantiate: sym!("fmi2Instantiate"),
            setup: sym!("fmi2SetupExperiment"),
            enter: sym!("fmi2EnterInitializationMode"),
            exit: sym!("fmi2ExitInitializationMode"),
            terminate: sym!("fmi2Terminate"),
            free: sym!("fmi2FreeInstance"),
            set_real: sym!("fmi2SetReal"),
            get_real: sym!("fmi2GetReal"),
            set_integer: sym!("fmi2SetInteger"),
            get_integer: sym!("fmi2GetInteger"),
            set_string: sym!("fmi2SetString"),
            do_step: sym!("fmi2DoStep"),
            _lib: lib,
        })
    }

    fn vr(&self, name: &str) -> Result<u32> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| anyhow!("no variable {name}"))
    }

    /// An initialized instance: instantiated, `strings` and `integers` set, and
    /// through initialization. Terminated and freed on drop.
    pub fn start(&self, strings: &[(&str, &str)], integers: &[(&str, i32)]) -> Result<Session<'_>> {
        let cb = callbacks();
        // SAFETY: valid strings and callbacks (copied by the FMU); the component is
        // freed when the session drops.
        let c = unsafe {
            (self.instantiate)(
                c"bench".as_ptr(),
                fmi2CoSimulation,
                self.guid.as_ptr(),
                std::ptr::null(),
                &cb,
                0,
                0,
            )
        };
        if c.is_null() {
            bail!("fmi2Instantiate failed");
        }
        let session = Session {
            inputs: [self.vr("roll")?, self.vr("pitch")?, self.vr("yaw")?],
            outputs: [
                self.vr("peer.roll")?,
                self.vr("peer.pitch")?,
                self.vr("peer.yaw")?,
            ],
            fmu: self,
            c,
        };
        for (name, value) in strings {
            let v = CString::new(*value)?;
            // SAFETY: one reference, one string.
            check(name, unsafe {
                (self.set_string)(c, &self.vr(name)?, 1, &v.as_ptr())
            })?;
        }
        for (name, value) in integers {
            // SAFETY: one reference, one value.
            check(name, unsafe {
                (self.set_integer)(c, &self.vr(name)?, 1, value)
            })?;
        }
        // SAFETY: a live component, in the order FMI requires.
        unsafe {
            check("fmi2SetupExperiment", (self.setup)(c, 0, 0.0, 0.0, 0, 0.0))?;
            check("fmi2EnterInitializationMode", (self.enter)(c))?;
            check("fmi2ExitInitializationMode", (self.exit)(c))?;
        }
        Ok(session)
    }

    /// Instantiates, sets `strings` and `integers`, initializes, then runs `steps`
    /// steps; `batch` steps are timed together (1: every step on its own).
    pub fn run(
        &self,
        strings: &[(&str, &str)],
        integers: &[(&str, i32)],
        steps: u64,
        batch: u64,
    ) -> Result<Vec<u64>> {
        let mut session = self.start(strings, integers)?;
        let mut got = [0.0; 3];
        let mut times = Vec::with_capacity((steps / batch) as usize);
        let mut k = 0u64;
        while k + batch <= steps {
            let start = Instant::now();
            for _ in 0..batch {
                let x = k as f64;
                check("a step", session.step(k, [x, -x, 0.5 * x], &mut got))?;
                k += 1;
            }
            times.push(start.elapsed().as_nanos() as u64 / batch);
        }
        std::hint::black_box(got);
        Ok(times)
    }
}

fn check(what: &str, status: fmi2Status) -> Result<()> {
    if status == fmi2OK {
        Ok(())
    } else {
        Err(anyhow!("{what} returned status {status}"))
    }
}

/// One initialized instance of the FMU.
#[derive(Debug)]
pub struct Session<'a> {
    fmu: &'a Fmu,
    c: fmi2Component,
    inputs: [u32; 3],
    outputs: [u32; 3],
}

impl Session<'_> {
    /// One master step at t = k·1 ms: the 3 inputs set, fmi2DoStep, the peer's
    /// 3 outputs got; the statuses OR-ed (fmi2OK is 0).
    pub fn step(&mut self, k: u64, inputs: [f64; 3], outputs: &mut [f64; 3]) -> fmi2Status {
        let h = 1e-3;
        // SAFETY: a live component; three references and three values each way.
        unsafe {
            (self.fmu.set_real)(self.c, self.inputs.as_ptr(), 3, inputs.as_ptr())
                | (self.fmu.do_step)(self.c, k as f64 * h, h, 1)
                | (self.fmu.get_real)(self.c, self.outputs.as_ptr(), 3, outputs.as_mut_ptr())
        }
    }

    /// An Integer variable by name.
    pub fn integer(&self, name: &str) -> Result<i32> {
        let r = self.fmu.vr(name)?;
        let mut v = 0;
        // SAFETY: a live component, one reference, one value.
        check(name, unsafe {
            (self.fmu.get_integer)(self.c, &r, 1, &mut v)
        })?;
        Ok(v)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: a live component, terminated then freed once.
        unsafe {
            (self.fmu.terminate)(self.c);
            (self.fmu.free)(self.c);
        }
    }
}

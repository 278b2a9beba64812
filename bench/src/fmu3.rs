//! The FMI 3.0 face of a packaged FMU (`build-fmu --fmi 3`: the same binary
//! under `binaries/x86_64-linux`) driven as case 5 drives FMI 2.0's: one
//! instance, its own peer over `loopback:`, free, each step fmi3SetFloat64
//! (3), fmi3DoStep, fmi3GetFloat64 (3). For its instructions per step beside
//! FMI 2.0's (`coupling --against DIR --fmu3 FMU`).

use std::ffi::{c_char, c_void, CString};
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use fmu_model::fmi3::*;

use crate::fmu::{archive, extract, value_reference};

type Instantiate = unsafe extern "C" fn(
    fmi3String,
    fmi3String,
    fmi3String,
    fmi3Boolean,
    fmi3Boolean,
    fmi3Boolean,
    fmi3Boolean,
    *const fmi3ValueReference,
    usize,
    fmi3InstanceEnvironment,
    Option<fmi3LogMessageCallback>,
    *mut c_void,
) -> fmi3Instance;
type Enter = unsafe extern "C" fn(fmi3Instance, bool, f64, f64, bool, f64) -> fmi3Status;
type Plain = unsafe extern "C" fn(fmi3Instance) -> fmi3Status;
type SetF64 =
    unsafe extern "C" fn(fmi3Instance, *const u32, usize, *const f64, usize) -> fmi3Status;
type GetF64 = unsafe extern "C" fn(fmi3Instance, *const u32, usize, *mut f64, usize) -> fmi3Status;
type SetI32 =
    unsafe extern "C" fn(fmi3Instance, *const u32, usize, *const i32, usize) -> fmi3Status;
type SetString =
    unsafe extern "C" fn(fmi3Instance, *const u32, usize, *const fmi3String, usize) -> fmi3Status;
type DoStep = unsafe extern "C" fn(
    fmi3Instance,
    f64,
    f64,
    bool,
    *mut bool,
    *mut bool,
    *mut bool,
    *mut f64,
) -> fmi3Status;
type Free = unsafe extern "C" fn(fmi3Instance);

/// The FMU's FMI 3.0 functions, resolved once.
#[derive(Debug)]
pub struct Fmu3 {
    _lib: libloading::Library,
    token: CString,
    resources: CString,
    vars: Vec<(String, u32)>,
    instantiate: Instantiate,
    enter: Enter,
    exit: Plain,
    terminate: Plain,
    free: Free,
    set_f64: SetF64,
    get_f64: GetF64,
    set_i32: SetI32,
    set_string: SetString,
    do_step: DoStep,
}

/// Errors go to stderr.
unsafe extern "C" fn logger(_: *mut c_void, status: fmi3Status, _: fmi3String, text: fmi3String) {
    if status >= 3 && !text.is_null() {
        // SAFETY: the FMU passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(text) };
        eprintln!("FMU: {}", text.to_string_lossy());
    }
}

fn check(what: &str, status: fmi3Status) -> Result<()> {
    match status {
        0 => Ok(()),
        s => Err(anyhow!("{what} returned status {s}")),
    }
}

impl Fmu3 {
    /// Extracts the FMI 3.0 FMU's Linux binary and resources into `dir` and loads it.
    pub fn load(fmu: &Path, dir: &Path) -> Result<Fmu3> {
        let (mut zip, xml) = archive(fmu, "pack it with `build-fmu --fmi 3`")?;
        let doc = roxmltree::Document::parse(&xml)?;
        let root = doc.root_element();
        let token = (root.attribute("instantiationToken"))
            .ok_or_else(|| anyhow!("{}: no instantiationToken (an FMI 2.0 FMU?)", fmu.display()))?;
        let id = (root.descendants())
            .find(|n| n.has_tag_name("CoSimulation"))
            .and_then(|n| n.attribute("modelIdentifier"))
            .ok_or_else(|| anyhow!("no modelIdentifier"))?;
        let vars = (root.descendants())
            .filter(|n| n.parent().is_some_and(|p| p.has_tag_name("ModelVariables")))
            .filter_map(|n| {
                Some((
                    n.attribute("name")?.to_owned(),
                    n.attribute("valueReference")?.parse().ok()?,
                ))
            })
            .collect();
        let dir = dir.join(format!("{id}-fmi3-{}", std::process::id()));
        let (so, resources) = extract(&mut zip, &dir, id, "x86_64-linux")?;
        // SAFETY: loading the FMU runs its (Rust std) initialisers only.
        let lib = unsafe { libloading::Library::new(&so) }?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the FMI 3.0 standard fixes each function's signature.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .with_context(|| format!("the FMU lacks {}", $name))?
            };
        }
        // FMI 3.0's resourcePath: a native path ending in its separator.
        let resources = std::fs::canonicalize(&resources)?;
        Ok(Fmu3 {
            token: CString::new(token)?,
            resources: CString::new(format!("{}/", resources.display()))?,
            vars,
            instantiate: sym!("fmi3InstantiateCoSimulation"),
            enter: sym!("fmi3EnterInitializationMode"),
            exit: sym!("fmi3ExitInitializationMode"),
            terminate: sym!("fmi3Terminate"),
            free: sym!("fmi3FreeInstance"),
            set_f64: sym!("fmi3SetFloat64"),
            get_f64: sym!("fmi3GetFloat64"),
            set_i32: sym!("fmi3SetInt32"),
            set_string: sym!("fmi3SetString"),
            do_step: sym!("fmi3DoStep"),
            _lib: lib,
        })
    }

    fn vr(&self, name: &str) -> Result<u32> {
        value_reference(&self.vars, name)
    }

    /// Case 5 through FMI 3.0: one instance on `device`, its own peer, free,
    /// `steps` steps timed in batches of `batch`; each batch's time a step.
    pub fn alone(&self, device: &str, steps: u64, batch: u64) -> Result<Vec<u64>> {
        // SAFETY: valid strings; the instance is freed below.
        let c = unsafe {
            (self.instantiate)(
                c"bench3".as_ptr(),
                self.token.as_ptr(),
                self.resources.as_ptr(),
                false,
                false,
                false,
                false,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                Some(logger),
                std::ptr::null_mut(),
            )
        };
        if c.is_null() {
            bail!("fmi3InstantiateCoSimulation failed");
        }
        let run = self.steps(c, device, steps, batch);
        // SAFETY: a live instance, terminated then freed once.
        unsafe {
            (self.terminate)(c);
            (self.free)(c);
        }
        run
    }

    fn steps(&self, c: fmi3Instance, device: &str, steps: u64, batch: u64) -> Result<Vec<u64>> {
        let strings = [
            (self.vr("device")?, CString::new(device)?),
            (self.vr("syncMode")?, CString::new("free")?),
        ];
        for (r, v) in &strings {
            let p: *const c_char = v.as_ptr();
            // SAFETY: one reference, one string.
            check("fmi3SetString", unsafe {
                (self.set_string)(c, r, 1, &p, 1)
            })?;
        }
        let slots = [self.vr("nodeSlot")?, self.vr("peerSlot")?];
        // SAFETY: two references, two values.
        check("fmi3SetInt32", unsafe {
            (self.set_i32)(c, slots.as_ptr(), 2, [0, 0].as_ptr(), 2)
        })?;
        // SAFETY: a live instance, in the order FMI 3.0 requires.
        unsafe {
            check(
                "fmi3EnterInitializationMode",
                (self.enter)(c, false, 0.0, 0.0, false, 0.0),
            )?;
            check("fmi3ExitInitializationMode", (self.exit)(c))?;
        }
        let inputs = [self.vr("roll")?, self.vr("pitch")?, self.vr("yaw")?];
        let outputs = [
            self.vr("peer.roll")?,
            self.vr("peer.pitch")?,
            self.vr("peer.yaw")?,
        ];
        let (mut values, mut got) = ([0.0; 3], [0.0; 3]);
        let (mut event, mut end, mut early, mut reached) = (false, false, false, 0.0);
        let mut times = Vec::with_capacity((steps / batch) as usize);
        let h = 1e-3;
        for b in 0..steps / batch {
            let start = Instant::now();
            for k in b * batch..(b + 1) * batch {
                for (i, x) in values.iter_mut().enumerate() {
                    *x = (k + i as u64) as f64;
                }
                // SAFETY: a live instance; three references and values each way.
                let status = unsafe {
                    (self.set_f64)(c, inputs.as_ptr(), 3, values.as_ptr(), 3)
                        | (self.do_step)(
                            c,
                            k as f64 * h,
                            h,
                            true,
                            &mut event,
                            &mut end,
                            &mut early,
                            &mut reached,
                        )
                        | (self.get_f64)(c, outputs.as_ptr(), 3, got.as_mut_ptr(), 3)
                };
                check("a step", status)?;
            }
            times.push(start.elapsed().as_nanos() as u64 / batch);
            std::hint::black_box(&got);
        }
        Ok(times)
    }
}

//! A packaged FMU driven through its C ABI, as a master does: the .so and the
//! resources are taken from the .fmu, the .so loaded with dlopen, and called per
//! step with fmi2SetReal (the Real inputs), fmi2DoStep, fmi2GetReal (the peer's
//! Reals): 3 each way for the attitude FMU.

use std::ffi::{c_void, CString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use fmu_model::fmi2::*;

/// Where `scripts/bench.sh` and `scripts/soak.sh` pack the FMUs the
/// benchmarks load by default (under the workspace): the attitude FMU for
/// linux64 only, and the interfaces' FMUs beside it. Their own folder, so
/// that they replace nothing `build-fmu` or `scripts/test.sh` packed into
/// target/fmu (linux64 and win64).
pub const PACKED: &str = "target/bench/fmu";

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
    /// `file:` URI of the extracted resources.
    resources: CString,
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

/// Errors go to stderr. The FMU passes its message as a format that prints as
/// itself (`%` doubled) and no variadic argument, so a five-parameter function
/// serves as the variadic logger.
unsafe extern "C" fn logger(
    _: *mut c_void,
    _: fmi2String,
    status: fmi2Status,
    _: fmi2String,
    format: fmi2String,
) {
    if status >= fmi2Error && !format.is_null() {
        // SAFETY: the FMU passes a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(format) };
        eprintln!("FMU: {}", text.to_string_lossy().replace("%%", "%"));
    }
}

/// A variable's name and value reference.
type Variable = (String, u32);

/// The GUID, model identifier and variables a modelDescription.xml gives.
fn described(xml: &str) -> Result<(String, String, Vec<Variable>)> {
    let doc = roxmltree::Document::parse(xml)?;
    let root = doc.root_element();
    let guid = root.attribute("guid").ok_or_else(|| anyhow!("no guid"))?;
    let id = root
        .descendants()
        .find(|n| n.has_tag_name("CoSimulation"))
        .and_then(|n| n.attribute("modelIdentifier"))
        .ok_or_else(|| anyhow!("no modelIdentifier"))?;
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
    Ok((guid.to_owned(), id.to_owned(), vars))
}

/// The value reference of variable `name` among a description's `vars`.
pub(crate) fn value_reference(vars: &[(String, u32)], name: &str) -> Result<u32> {
    (vars.iter())
        .find(|(n, _)| n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| anyhow!("no variable {name}"))
}

/// The archive of `fmu` and its modelDescription.xml; a missing one says to
/// `build` it.
pub(crate) fn archive(fmu: &Path, build: &str) -> Result<(zip::ZipArchive<std::fs::File>, String)> {
    let file = std::fs::File::open(fmu)
        .with_context(|| format!("{} is missing: {build}", fmu.display()))?;
    let mut zip = zip::ZipArchive::new(file)?;
    let mut xml = String::new();
    zip.by_name("modelDescription.xml")?
        .read_to_string(&mut xml)?;
    Ok((zip, xml))
}

/// Extracts the resources and the binary of model `id` under `platform`
/// (`linux64`, FMI 3.0's `x86_64-linux`) into `dir`; returns the binary and
/// the resources folder.
pub(crate) fn extract(
    zip: &mut zip::ZipArchive<std::fs::File>,
    dir: &Path,
    id: &str,
    platform: &str,
) -> Result<(PathBuf, PathBuf)> {
    let resources = dir.join("resources");
    std::fs::create_dir_all(&resources)?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    for name in names.iter().filter(|n| n.starts_with("resources/")) {
        let mut bytes = Vec::new();
        zip.by_name(name)?.read_to_end(&mut bytes)?;
        std::fs::write(dir.join(name), bytes)?;
    }
    let so: PathBuf = dir.join(format!("{id}.so"));
    let mut bytes = Vec::new();
    zip.by_name(&format!("binaries/{platform}/{id}.so"))?
        .read_to_end(&mut bytes)?;
    std::fs::write(&so, bytes)?;
    Ok((so, resources))
}

impl Fmu {
    /// Extracts the linux64 binary and the resources of `fmu` into `dir` and loads it.
    pub fn load(fmu: &Path, dir: &Path) -> Result<Fmu> {
        let (mut zip, xml) = archive(fmu, "run `cargo run --release -p build-fmu`")?;
        let (guid, id, vars) = described(&xml)?;
        let (so, resources) = extract(
            &mut zip,
            &dir.join(format!("{id}-{}", std::process::id())),
            &id,
            "linux64",
        )?;
        // SAFETY: loading the FMU runs its (Rust std) initialisers only.
        let lib = unsafe { libloading::Library::new(&so) }?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the FMI 2.0 standard fixes each function's signature.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .with_context(|| format!("the FMU lacks {}", $name))?
            };
        }
        // A file: URI names an absolute path.
        let resources = std::fs::canonicalize(&resources)?;
        Ok(Fmu {
            guid: CString::new(guid)?,
            resources: CString::new(format!("file://{}", resources.display()))?,
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
        value_reference(&self.vars, name)
    }

    /// The names of every variable whose name satisfies `wanted`, in order.
    pub fn names(&self, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        self.vars
            .iter()
            .filter(|(n, _)| wanted(n))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// An initialized attitude FMU instance: instantiated, `strings` and
    /// `integers` set, and through initialization; its steps set the attitude and
    /// get the peer's. Terminated and freed on drop.
    pub fn start(&self, strings: &[(&str, &str)], integers: &[(&str, i32)]) -> Result<Session<'_>> {
        self.start_with(
            strings,
            integers,
            &["roll", "pitch", "yaw"],
            &["peer.roll", "peer.pitch", "peer.yaw"],
        )
    }

    /// An initialized instance whose steps set the Real `inputs` and get the Real
    /// `outputs`.
    pub fn start_with(
        &self,
        strings: &[(&str, &str)],
        integers: &[(&str, i32)],
        inputs: &[&str],
        outputs: &[&str],
    ) -> Result<Session<'_>> {
        let cb = callbacks_with(logger, std::ptr::null_mut());
        // SAFETY: valid strings and callbacks (copied by the FMU); the component is
        // freed when the session drops.
        let c = unsafe {
            (self.instantiate)(
                c"bench".as_ptr(),
                fmi2CoSimulation,
                self.guid.as_ptr(),
                self.resources.as_ptr(),
                &cb,
                0,
                0,
            )
        };
        if c.is_null() {
            bail!("fmi2Instantiate failed");
        }
        let refs = |names: &[&str]| names.iter().map(|n| self.vr(n)).collect::<Result<Vec<_>>>();
        let session = Session {
            inputs: refs(inputs)?,
            outputs: refs(outputs)?,
            fmu: self,
            c,
            h: 1e-3,
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

    /// Instantiates the attitude FMU, sets `strings` and `integers`, initializes,
    /// then runs `steps` steps; `batch` steps are timed together (1: every step on
    /// its own).
    pub fn run(
        &self,
        strings: &[(&str, &str)],
        integers: &[(&str, i32)],
        steps: u64,
        batch: u64,
    ) -> Result<Vec<u64>> {
        let session = self.start(strings, integers)?;
        timed(session, steps, batch)
    }

    /// As [`Fmu::run`], for an FMU whose steps set the Real `inputs` and get the
    /// Real `outputs`.
    pub fn run_with(
        &self,
        strings: &[(&str, &str)],
        inputs: &[&str],
        outputs: &[&str],
        steps: u64,
    ) -> Result<Vec<u64>> {
        let session = self.start_with(strings, &[], inputs, outputs)?;
        timed(session, steps, 1)
    }

    /// As [`Fmu::run_with`], stepping by `h` seconds (a node's period) and
    /// setting and getting nothing: the cost of the exchange and its waits alone.
    pub fn run_by(&self, strings: &[(&str, &str)], h: f64, steps: u64) -> Result<Vec<u64>> {
        let mut session = self.start_with(strings, &[], &[], &[])?;
        session.h = h;
        timed(session, steps, 1)
    }
}

/// Runs `steps` steps of `session`, feeding input i the value k + i at step k;
/// `batch` steps are timed together.
fn timed(session: Session<'_>, steps: u64, batch: u64) -> Result<Vec<u64>> {
    let mut run = Timed::new(session, steps, batch);
    while run.batch()? {}
    Ok(run.times)
}

/// Runs `steps` steps of each of two sessions in one process, a batch of one,
/// then a batch of the other: whatever slows this process or this moment
/// slows both alike. `first` is the session whose batch comes first.
pub fn side_by_side(
    sessions: [Session<'_>; 2],
    first: usize,
    steps: u64,
    batch: u64,
) -> Result<[Vec<u64>; 2]> {
    let mut runs = sessions.map(|s| Timed::new(s, steps, batch));
    let order = [first, 1 - first];
    while runs[order[0]].batch()? && runs[order[1]].batch()? {}
    Ok(runs.map(|r| r.times))
}

/// A session's timed steps: its step number, buffers and times so far.
struct Timed<'a> {
    session: Session<'a>,
    steps: u64,
    batch: u64,
    k: u64,
    inputs: Vec<f64>,
    got: Vec<f64>,
    times: Vec<u64>,
}

impl<'a> Timed<'a> {
    fn new(session: Session<'a>, steps: u64, batch: u64) -> Timed<'a> {
        Timed {
            inputs: vec![0.0; session.inputs.len()],
            got: vec![0.0; session.outputs.len()],
            times: Vec::with_capacity((steps / batch) as usize),
            session,
            steps,
            batch,
            k: 0,
        }
    }

    /// The next `batch` steps, timed together: false once all are taken.
    fn batch(&mut self) -> Result<bool> {
        if self.k + self.batch > self.steps {
            return Ok(false);
        }
        let start = Instant::now();
        for _ in 0..self.batch {
            let k = self.k;
            for (i, x) in self.inputs.iter_mut().enumerate() {
                *x = (k + i as u64) as f64;
            }
            check("a step", self.session.step(k, &self.inputs, &mut self.got))?;
            self.k += 1;
        }
        self.times
            .push(start.elapsed().as_nanos() as u64 / self.batch);
        std::hint::black_box(&self.got);
        Ok(true)
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
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    /// The communication step, seconds.
    h: f64,
}

impl Session<'_> {
    /// One master step at t = k·h (1 ms unless a period is given): the inputs
    /// set, fmi2DoStep, the peer's outputs got; the statuses OR-ed (fmi2OK is 0).
    pub fn step(&mut self, k: u64, inputs: &[f64], outputs: &mut [f64]) -> fmi2Status {
        assert!(inputs.len() == self.inputs.len() && outputs.len() == self.outputs.len());
        let h = self.h;
        // SAFETY: a live component; as many references as values each way.
        unsafe {
            (self.fmu.set_real)(self.c, self.inputs.as_ptr(), inputs.len(), inputs.as_ptr())
                | (self.fmu.do_step)(self.c, k as f64 * h, h, 1)
                | (self.fmu.get_real)(
                    self.c,
                    self.outputs.as_ptr(),
                    outputs.len(),
                    outputs.as_mut_ptr(),
                )
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

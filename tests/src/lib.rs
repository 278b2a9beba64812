//! Tests of the packaged `.fmu` from outside, as masters use it: `tests/fmi_crate.rs`
//! (the Rust `fmi` 0.8 importer) and `python/test_fmpy.py` (FMPy 0.3.32), plus the
//! masters `src/bin/simulators/` (the demo) and `src/bin/lab/` (one process per
//! node of an interface). What both masters do to start their processes, and to
//! find and set an FMU's variables, is here.

use std::ffi::CString;
use std::process::{Command, ExitStatus};

use fmi::schema::fmi2::Fmi2ModelDescription;

/// The value reference of variable `name` in the description of the FMU `fmu`
/// (named in the message when it has none).
pub fn value_reference(md: &Fmi2ModelDescription, fmu: &str, name: &str) -> Result<u32, String> {
    md.model_variables
        .variables
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.value_reference)
        .ok_or_else(|| format!("{fmu} has no variable {name}"))
}

/// `s` as a C string for the FMU; one holding a NUL is an error.
pub fn cstr(s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|e| e.to_string())
}

/// Prints what the FMU tells its master's logger on stderr as it comes:
/// `instance [status, category]: message`, for every warning, discard and
/// error (every message and the `fmi` crate's own records too with
/// `RFM_TEST_LOG=all`). The `fmi` crate hands the FMU's messages to `log`
/// (dropped without a logger), with the instance as target and module path
/// `logger`, their status as the level (Discard as Trace, Fatal as Error) and
/// without the category, which this FMU gives by status (`logStatusWarning`,
/// …, in fmu-model's category table): shown from it.
struct FmuLog {
    all: bool,
}

/// The status and category of an FMU message the `fmi` crate logged at `level`.
fn status_of(level: log::Level) -> (&'static str, &'static str) {
    match level {
        log::Level::Error => ("Error", "logStatusError"),
        log::Level::Warn => ("Warning", "logStatusWarning"),
        log::Level::Trace => ("Discard", "logStatusDiscard"),
        log::Level::Info | log::Level::Debug => ("OK", "logEvents"),
    }
}

impl log::Log for FmuLog {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        let from_fmu = record.module_path() == Some("logger");
        let level = record.level();
        let line = if from_fmu && (self.all || level != log::Level::Info) {
            let (status, category) = status_of(level);
            format!(
                "{} [{status}, {category}]: {}\n",
                record.target(),
                record.args()
            )
        } else if self.all {
            format!("{} [{level}]: {}\n", record.target(), record.args())
        } else {
            return;
        };
        // One write per line: the nodes are processes sharing one stderr, and
        // `eprintln!` writes a line in pieces that theirs interleave with
        // (a pipe keeps a write of up to 4 KiB whole).
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }

    fn flush(&self) {}
}

/// Installs the logger that prints the FMU's messages (once per process).
pub fn print_fmu_messages() {
    let all = std::env::var("RFM_TEST_LOG").is_ok_and(|v| v == "all");
    let logger: &'static FmuLog = Box::leak(Box::new(FmuLog { all }));
    if log::set_logger(logger).is_ok() {
        // Discards come as Trace.
        log::set_max_level(log::LevelFilter::Trace);
    }
}

/// How a run's processes start, and what it leaves.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spawn<'a> {
    /// Each process starts after a random 0..start_jitter_ms ms (0: all at once):
    /// as a lab's PCs start, never in one order.
    pub start_jitter_ms: u64,
    /// This node's process starts first, every other one 1 ms after it or later.
    pub first: Option<usize>,
    /// The memory the run made (`shm:` object or ring), removed at the end;
    /// `None` keeps it (a memory reused run after run).
    pub memory: Option<&'a str>,
    /// With the emulator: each process has two boards, `/dev/rfm2g0` on ring
    /// `RING-a` and `/dev/rfm2g1` on ring `RING-b` (a redundant pair).
    pub redundant: bool,
}

/// Starts one copy of this program per node (`args(i)` for node i) and waits for
/// every one, whether or not an earlier one failed. With `rfm2g_sim =
/// Some((library, ring))` each process's `/dev/rfm2g0` is its own board, node
/// i + 1 of emulated ring `ring`, as on separate PCs. Whether every process
/// succeeded.
pub fn run_nodes(
    nodes: usize,
    args: impl Fn(usize) -> Vec<String>,
    rfm2g_sim: Option<(&str, &str)>,
    spawn: Spawn,
) -> bool {
    run_node_processes(nodes, args, rfm2g_sim, spawn)
        .iter()
        .all(|s| s.success())
}

/// A random number of milliseconds below `bound` (std's per-process random
/// hash keys: no generator crate for one number).
fn random_ms(bound: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(bound);
    h.finish() % bound.max(1)
}

/// A simulator process ends when the lab that started it does, however the
/// lab ends: a lab killed with SIGKILL (as a test's cleanup or a person's
/// `kill -9` does) would otherwise leave its nodes stepping on until their
/// `--stop`, taking the cores from whatever runs next (test_serve.py's CI
/// runs of 8651813 ran beside the processes of earlier labs).
fn dies_with_its_parent(child: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec, and calls only
    // prctl(2) and getppid(2), both async-signal-safe; it touches no memory of
    // the parent's and allocates nothing.
    unsafe {
        child.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then nothing would
            // send the signal.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// [`run_nodes`], with how each process ended.
pub fn run_node_processes(
    nodes: usize,
    args: impl Fn(usize) -> Vec<String>,
    rfm2g_sim: Option<(&str, &str)>,
    spawn: Spawn,
) -> Vec<ExitStatus> {
    let exe = std::env::current_exe().expect("own path");
    let mut delays: Vec<u64> = (0..nodes)
        .map(|i| match spawn.first {
            Some(first) if first == i => 0,
            Some(_) => 1 + random_ms(spawn.start_jitter_ms),
            None => random_ms(spawn.start_jitter_ms),
        })
        .collect();
    let mut order: Vec<usize> = (0..nodes).collect();
    order.sort_by_key(|&i| delays[i]);
    let started = std::time::Instant::now();
    let mut children: Vec<(usize, std::process::Child)> = order
        .into_iter()
        .map(|i| {
            if spawn.start_jitter_ms > 0 || spawn.first.is_some() {
                let at = std::time::Duration::from_millis(delays[i]);
                std::thread::sleep(at.saturating_sub(started.elapsed()));
            }
            let mut child = Command::new(&exe);
            child.args(args(i));
            dies_with_its_parent(&mut child);
            if let Some((library, ring)) = rfm2g_sim {
                let node = i + 1;
                child.args(["--rfm2g-sim", library]).env(
                    "RFM2G_SIM_DEVICES",
                    if spawn.redundant {
                        format!(
                            "/dev/rfm2g0 ring={ring}-a node={node} size=1M; \
                             /dev/rfm2g1 ring={ring}-b node={node} size=1M"
                        )
                    } else {
                        format!("/dev/rfm2g0 ring={ring} node={node} size=1M")
                    },
                );
            }
            (i, child.spawn().expect("start a simulator process"))
        })
        .collect();
    delays.clear();
    children.sort_by_key(|(i, _)| *i);
    let results: Vec<ExitStatus> = children
        .into_iter()
        .map(|(_, mut c)| c.wait().expect("wait for a simulator process"))
        .collect();
    if let Some(memory) = spawn.memory {
        let mut objects = vec![memory.to_owned()];
        if spawn.redundant {
            // Both rings, and the islands of boards a run left cut.
            objects = ["a", "b"]
                .iter()
                .flat_map(|r| {
                    let ring = format!("{memory}-{r}");
                    let mut objects: Vec<String> =
                        (1..=nodes).map(|n| format!("{ring}.island.{n}")).collect();
                    objects.push(ring);
                    objects
                })
                .collect();
        }
        for object in objects {
            let path = CString::new(object).expect("no NUL");
            // SAFETY: a valid C string; removes the run's own memory (absent if
            // a device given by the caller named another).
            unsafe { libc::shm_unlink(path.as_ptr()) };
        }
    }
    results
}

/// `--cut a:3000..6000` of the masters: the first node's board on ring A (`/dev/rfm2g0`) cut from
/// its ring before its step 3000 and mended before its step 6000 (no end:
/// never mended), through the emulator's `rfm2gsim_set_link`.
#[derive(Debug, Clone)]
pub struct Cut {
    pub board: &'static str,
    pub from: u64,
    pub to: Option<u64>,
}

impl Cut {
    pub fn parse(text: &str) -> Option<Cut> {
        let (ring, range) = text.split_once(':')?;
        let board = match ring {
            "a" => "/dev/rfm2g0",
            "b" => "/dev/rfm2g1",
            _ => return None,
        };
        let (from, to) = range.split_once("..")?;
        Some(Cut {
            board,
            from: from.parse().ok()?,
            to: if to.is_empty() {
                None
            } else {
                Some(to.parse().ok()?)
            },
        })
    }

    /// Whether step `k` runs with this board cut.
    pub fn covers(&self, k: u64) -> bool {
        k >= self.from && self.to.is_none_or(|to| k < to)
    }
}

/// The emulator's `rfm2gsim_set_link` in `library`: the same library instance
/// as the FMU's (one path, one load), so the cut reaches its mappings before
/// the call returns.
#[cfg(unix)]
pub fn set_link(library: &str, board: &str, up: bool) -> Result<(), String> {
    type SetLink = unsafe extern "C" fn(*const std::ffi::c_char, i32) -> i32;
    let lib = cstr(library)?;
    // SAFETY: loading the emulator, which the FMU has loaded already.
    let handle = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        return Err(format!("cannot load {library}"));
    }
    // SAFETY: a loaded library and a NUL-terminated name.
    let sym = unsafe { libc::dlsym(handle, c"rfm2gsim_set_link".as_ptr()) };
    if sym.is_null() {
        return Err(format!(
            "{library} is not the emulator: no rfm2gsim_set_link"
        ));
    }
    // SAFETY: the emulator's export has this signature.
    let set: SetLink = unsafe { std::mem::transmute::<*mut libc::c_void, SetLink>(sym) };
    let board = cstr(board)?;
    // SAFETY: a valid C string.
    match unsafe { set(board.as_ptr(), i32::from(up)) } {
        0 => Ok(()),
        code => Err(format!(
            "rfm2gsim_set_link({board:?}, {up}) returned {code}"
        )),
    }
}

#[cfg(not(unix))]
pub fn set_link(_: &str, _: &str, _: bool) -> Result<(), String> {
    Err("ring cuts are emulated on Linux only".into())
}

impl Cut {
    /// The argument that parses back into this cut.
    pub fn arg(&self) -> String {
        let ring = if self.board == "/dev/rfm2g0" {
            "a"
        } else {
            "b"
        };
        let to = self.to.map(|t| t.to_string()).unwrap_or_default();
        format!("{ring}:{}..{to}", self.from)
    }

    /// Cuts or mends, before step `k` of the node that makes the cuts, the
    /// boards `cuts` name.
    pub fn apply(cuts: &[Cut], library: &str, k: u64) -> Result<(), String> {
        for cut in cuts {
            if cut.from == k || cut.to == Some(k) {
                set_link(library, cut.board, cut.to == Some(k))?;
            }
        }
        Ok(())
    }
}

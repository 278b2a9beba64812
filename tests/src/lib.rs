//! Tests of the packaged `.fmu` from outside, as masters use it: `tests/fmi_crate.rs`
//! (the Rust `fmi` 0.8 importer) and `python/test_fmpy.py` (FMPy 0.3.32), plus the
//! masters `src/bin/simulators.rs` (the demo) and `src/bin/lab.rs` (one process per
//! node of an interface). What both masters do to start their processes is here.

use std::ffi::CString;
use std::process::{Command, ExitStatus};

/// Starts one copy of this program per node (`args(i)` for node i) and waits for
/// every one, whether or not an earlier one failed. With `rfm2g_sim =
/// Some((library, ring))` each process's `/dev/rfm2g0` is its own board, node
/// i + 1 of emulated ring `ring`, as on separate PCs. Removes the memory the run
/// made (`shm:` object or ring, named `memory`) at the end. Whether every process
/// succeeded.
pub fn run_nodes(
    nodes: usize,
    args: impl Fn(usize) -> Vec<String>,
    rfm2g_sim: Option<(&str, &str)>,
    memory: &str,
) -> bool {
    run_node_processes(nodes, args, rfm2g_sim, memory)
        .iter()
        .all(|s| s.success())
}

/// [`run_nodes`], with how each process ended.
pub fn run_node_processes(
    nodes: usize,
    args: impl Fn(usize) -> Vec<String>,
    rfm2g_sim: Option<(&str, &str)>,
    memory: &str,
) -> Vec<ExitStatus> {
    let exe = std::env::current_exe().expect("own path");
    let children: Vec<_> = (0..nodes)
        .map(|i| {
            let mut child = Command::new(&exe);
            child.args(args(i));
            if let Some((library, ring)) = rfm2g_sim {
                child.args(["--rfm2g-sim", library]).env(
                    "RFM2G_SIM_DEVICES",
                    format!("/dev/rfm2g0 ring={ring} node={} size=1M", i + 1),
                );
            }
            child.spawn().expect("start a simulator process")
        })
        .collect();
    let results: Vec<ExitStatus> = children
        .into_iter()
        .map(|mut c| c.wait().expect("wait for a simulator process"))
        .collect();
    let path = CString::new(memory).expect("no NUL");
    // SAFETY: a valid C string; removes the run's own memory (absent if a device
    // given by the caller named another).
    unsafe { libc::shm_unlink(path.as_ptr()) };
    results
}

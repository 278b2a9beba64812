//! The peer process of the fault tests: this test binary run again as node 1,
//! stepping until it fails or is killed, and the survivor's handle on it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use super::{instance, step, Net, PEER_ENV};
use fmu_model::fmi2::*;

/// The peer process: node 1, stepping until it fails or is killed; it reports
/// `ready`, every 50th step, and an error with its message.
pub(crate) fn peer_main(spec: &str) {
    let parts: Vec<&str> = spec.split('|').collect();
    let [device, library, mode, timeout, delay, record] = parts[..] else {
        panic!("bad peer spec {spec}")
    };
    std::thread::sleep(Duration::from_millis(delay.parse().unwrap()));
    let fmu = instance(
        device,
        (!library.is_empty()).then_some(library),
        1,
        mode,
        timeout,
    );
    if !record.is_empty() {
        fmu.set("recordFile", record);
    }
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    println!("ready");
    for k in 0.. {
        let started = Instant::now();
        if step(&fmu, 1, k) != fmi2OK {
            println!(
                "error at step {k} after {:.3} s: {}",
                started.elapsed().as_secs_f64(),
                fmu.last_error()
            );
            return;
        }
        if k % 50 == 0 {
            println!("step {k}");
        }
        if mode == "free" {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A peer process, killed (and resumed first, if stopped) when the test ends,
/// pass or fail: a failing test must not leave a stopped process behind.
pub(crate) struct Peer {
    pub(crate) child: Child,
    lines: Receiver<String>,
}

impl Peer {
    pub(crate) fn kill(&mut self) {
        self.signal(libc::SIGKILL);
        self.child.wait().unwrap();
    }

    pub(crate) fn signal(&self, sig: libc::c_int) {
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }

    /// SIGSTOP, returning once the kernel reports the process stopped.
    pub(crate) fn stop(&self) {
        self.signal(libc::SIGSTOP);
        let stat = format!("/proc/{}/stat", self.child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        // The state is the field after the parenthesised command name.
        while !std::fs::read_to_string(&stat)
            .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|f| f.starts_with('T')))
        {
            assert!(Instant::now() < deadline, "the peer did not stop");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub(crate) fn expect(&self, starts: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(starts) => return line,
                Ok(_) => {}
                Err(_) => panic!("the peer never printed `{starts}…` within {within:?}"),
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        self.signal(libc::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Starts the peer and a thread that passes its stdout lines on.
pub(crate) fn spawn_peer(test: &str, net: &Net, mode: &str, timeout: &str, delay_ms: u64) -> Peer {
    spawn_recording_peer(test, net, mode, timeout, delay_ms, "")
}

/// [`spawn_peer`], the peer recording into `record` (empty: not recording).
pub(crate) fn spawn_recording_peer(
    test: &str,
    net: &Net,
    mode: &str,
    timeout: &str,
    delay_ms: u64,
    record: &str,
) -> Peer {
    let spec = format!(
        "{}|{}|{mode}|{timeout}|{delay_ms}|{record}",
        net.devices[1],
        net.library.as_deref().unwrap_or("")
    );
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(PEER_ENV, spec)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Peer { child, lines: rx }
}

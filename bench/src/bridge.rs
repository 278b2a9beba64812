//! Case 12: PCs without cards. The attitude pair over two `shm:` memories
//! joined by two `rfm-bridge` processes on 127.0.0.1 (12a), against Zenoh's
//! own 128-byte ping-pong with the bridge's configuration (12b, the floor);
//! cases 4a and 4b are UDP blocking and busy-poll. The bench does not link
//! Zenoh: it runs the bridge crate's binaries.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// A child killed when dropped (a failed case leaves no bridge running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn binary(dir: &Path, name: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    if !path.is_file() {
        bail!(
            "{} is missing: run `cargo build --release -p rfm-bridge` first",
            path.display()
        );
    }
    Ok(path)
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Until `log` says another bridge joined.
fn joined(log: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if std::fs::read_to_string(log).is_ok_and(|t| t.contains("joined")) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("no bridge joined {} within 20 s", log.display())
}

/// Starts two bridges between memories `a` and `b` (`shm:` names), runs
/// `couple` while they run, and stops them.
pub fn bridged<T>(
    dir: &Path,
    out: &Path,
    a: &str,
    b: &str,
    couple: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let bridge = binary(dir, "rfm-bridge")?;
    let port = free_port()?;
    let start = |memory: &str, log: &Path, args: &[String]| -> Result<Running> {
        let file = std::fs::File::create(log)?;
        Ok(Running(
            Command::new(&bridge)
                .arg(format!("shm:{memory}"))
                .args(args)
                .args(["--report", "0"])
                .stdout(file)
                .stderr(Stdio::inherit())
                .spawn()
                .context("start rfm-bridge")?,
        ))
    };
    let (log_a, log_b) = (out.join("bridge-a.log"), out.join("bridge-b.log"));
    let _a = start(
        a,
        &log_a,
        &["--listen".into(), format!("tcp/127.0.0.1:{port}")],
    )?;
    let _b = start(
        b,
        &log_b,
        &["--connect".into(), format!("tcp/127.0.0.1:{port}")],
    )?;
    joined(&log_a)?;
    joined(&log_b)?;
    couple()
}

/// Zenoh's ping-pong: `steps` round trips (ns).
pub fn zenoh_floor(dir: &Path, out: &Path, steps: u64) -> Result<Vec<u64>> {
    let bin = binary(dir, "zenoh-pingpong")?;
    let endpoint = format!("tcp/127.0.0.1:{}", free_port()?);
    let _pong = Running(
        Command::new(&bin)
            .args(["pong", "--listen", &endpoint])
            .spawn()
            .context("start zenoh-pingpong pong")?,
    );
    let file = out.join("zenoh-pingpong.samples");
    let status = Command::new(&bin)
        .args([
            "ping",
            "--connect",
            &endpoint,
            "--count",
            &steps.to_string(),
        ])
        .arg("--out")
        .arg(&file)
        .status()?;
    if !status.success() {
        bail!("zenoh-pingpong ping failed: {status}");
    }
    Ok(crate::stats::take_samples(&file)?)
}

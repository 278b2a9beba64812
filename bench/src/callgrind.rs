//! The instructions per step of case 5, counted by callgrind inside the FMI
//! calls of the FMU's own step (nothing of the master's): exact, so a noisy
//! machine does not move them (`--against`'s gate holds them).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::Args;

/// Steps counted under callgrind (it runs the step about 50 times slower);
/// the count per step is the same to a tenth of an instruction from 20,000 on.
const COUNTED_STEPS: u64 = 20_000;

/// Instructions per step of case 5 run by this program's child `child` on
/// `fmu`, inside the functions `counted`; `None` (said on stderr) where
/// valgrind is not installed and no gate asks for it.
pub(crate) fn count(args: &Args, fmu: &Path, counted: &[&str], child: &str) -> Result<Option<f64>> {
    let out = args
        .out
        .join(format!("callgrind-{child}-{}.out", std::process::id()));
    let samples = args
        .out
        .join(format!("counted-{}.samples", std::process::id()));
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--collect-atstart=no"]);
    for f in counted {
        cmd.arg(format!("--toggle-collect={f}"));
    }
    cmd.arg(format!("--callgrind-out-file={}", out.display()))
        .arg(std::env::current_exe()?)
        .arg("--fmu")
        .arg(fmu)
        .arg("--out")
        .arg(&args.out)
        .args(["--child", child, "0", &COUNTED_STEPS.to_string()])
        .arg(&samples)
        .stderr(std::process::Stdio::null());
    let status = match cmd.status() {
        Ok(status) => status,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "coupling: valgrind is not installed: no instruction counts (apt install valgrind)"
            );
            return Ok(None);
        }
        Err(e) => return Err(e).context("could not run valgrind"),
    };
    let _ = std::fs::remove_file(&samples);
    if !status.success() {
        bail!("case 5 ({child}) under callgrind failed: {status}");
    }
    let total = collected(&out)?;
    let _ = std::fs::remove_file(&out);
    Ok(Some(total as f64 / COUNTED_STEPS as f64))
}

/// The instructions a callgrind output file counted (its `totals:` line).
fn collected(file: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("callgrind wrote no {}", file.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("{} has no totals line", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_callgrinds_totals_line() {
        // (rfm-bench has no dev-dependencies: its tests share its build.)
        let file = std::env::temp_dir().join(format!("ab-test-{}.out", std::process::id()));
        std::fs::write(
            &file,
            "events: Ir\nfn=(1) main\n0x10 3 7\ntotals: 37564000\n",
        )
        .unwrap();
        let counted = collected(&file);
        std::fs::write(&file, "events: Ir\n").unwrap();
        let none = collected(&file);
        std::fs::remove_file(&file).unwrap();
        assert_eq!(counted.unwrap(), 37_564_000);
        assert!(none.is_err(), "no totals, no count");
    }
}

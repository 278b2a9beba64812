//! The soak's command line.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The command line.
pub(crate) struct Args {
    pub(crate) fmu: PathBuf,
    pub(crate) steps: u64,
    /// `--device A+B`: two emulated redundant rings (else one `shm:` memory).
    pub(crate) redundant: bool,
    pub(crate) faults: Option<u64>,
    pub(crate) library: PathBuf,
    pub(crate) seed: Option<u64>,
    pub(crate) child: Option<(u64, String)>,
}

const USAGE: &str = "usage: soak [--steps N (default 100000000)] [--fmu PATH] \
                     [--device shm|A+B [--faults EVERY] [--library PATH] [--seed N]]";

pub(crate) fn args(root: &Path) -> Result<Option<Args>> {
    let mut a = Args {
        fmu: root.join(rfm_bench::fmu::PACKED).join("rfm_attitude.fmu"),
        steps: 100_000_000,
        redundant: false,
        faults: None,
        library: root.join("target/release/librfm2g.so"),
        seed: None,
        child: None,
    };
    let mut it = std::env::args().skip(1);
    let mut value = |what: &str| it.next().with_context(|| format!("{what}: {USAGE}"));
    while let Ok(arg) = value("") {
        let number = |text: String, what: &str| {
            text.parse::<u64>()
                .with_context(|| format!("{what} takes a whole number, not `{text}`"))
        };
        match arg.as_str() {
            "--steps" => a.steps = number(value("--steps N")?, "--steps")?,
            "--fmu" => a.fmu = value("--fmu PATH")?.into(),
            "--device" => match value("--device shm|A+B")?.as_str() {
                "A+B" => a.redundant = true,
                "shm" => a.redundant = false,
                other => bail!("--device `{other}`: shm (one memory) or A+B (two emulated rings)"),
            },
            "--faults" => {
                let every = number(value("--faults EVERY")?, "--faults")?;
                if every < 2 {
                    bail!(
                        "--faults EVERY: a cut every EVERY steps, mended EVERY/2 later: 2 or more"
                    );
                }
                a.faults = Some(every);
            }
            "--library" => a.library = value("--library PATH")?.into(),
            "--seed" => a.seed = Some(number(value("--seed N")?, "--seed")?),
            "--child" => {
                let me = number(value("--child NODE DEVICE")?, "--child")?;
                a.child = Some((me, value("--child NODE DEVICE")?));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            other => bail!("unknown argument {other}; {USAGE}"),
        }
    }
    if a.faults.is_some() && !a.redundant {
        bail!("--faults cuts a ring of two: give --device A+B");
    }
    Ok(Some(a))
}

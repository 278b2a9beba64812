//! Opening a device for inspection: never creating memory, never guessing a size.

use std::path::Path;
use std::time::{Duration, Instant};

use rfm_memory::backend::shm::ShmError;
use rfm_memory::{Device, DeviceError, DeviceSetting, DeviceSpec, OpenOptions, Region};

use crate::failure::Failure;

/// Opens `device` as it is. A `shm:` object must exist already (rfmctl inspects,
/// it does not create memory) and is opened with its own size.
pub fn open(device: &str, library: Option<&Path>) -> Result<Device, Failure> {
    let spec = DeviceSpec::parse(device).map_err(Failure::usage)?;
    let mut options = OpenOptions {
        rfm2g_library: library.map(Path::to_path_buf),
        ..OpenOptions::default()
    };
    match &spec {
        DeviceSpec::Loopback { .. } => {
            return Err(Failure::usage(anyhow::anyhow!(
                "`{device}`: loopback memory exists only inside the process that made it (two FMU \
                 instances in one master); rfmctl, another process, cannot see it. Couple through \
                 shm:NAME to inspect the memory from outside"
            )))
        }
        // Opened only if it exists, with its own size, in one call: an object that
        // vanishes meanwhile is an error, never created anew.
        DeviceSpec::Shm { .. } => options.existing_only = true,
        DeviceSpec::Rfm2g { .. } => {}
    }
    Device::open(device, &options).map_err(|e| {
        Failure::device(match e {
            DeviceError::Shm(ShmError::NoSuchMemory { device, name }) => {
                return Failure::device(anyhow::anyhow!(
                    "`{device}` does not exist: no program has created {} (rfmctl only inspects \
                     memory, it does not create it)",
                    rfm_memory::backend::shm::object_path(&name)
                ))
                .not_yet()
            }
            other => anyhow::Error::new(other).context(format!("cannot open `{device}`")),
        })
    })
}

/// The memories a device string names, each as its own device string: two
/// of a redundant device, else the string itself (whose opening says what is
/// wrong with it).
pub fn memories(device: &str) -> Vec<String> {
    match device.parse() {
        Ok(DeviceSetting::Rings(a, b)) => vec![a.to_string(), b.to_string()],
        _ => vec![device.to_owned()],
    }
}

/// The coupling's memory of `device` from `region_offset` on, as a link maps
/// it: of a redundant device (`A+B`), both memories as one window whose
/// readers take each frame and struct from whichever ring holds it (as the
/// FMU's do); the device returned is ring A's (its card's state is shown).
pub fn coupling_memory(
    device: &str,
    library: Option<&Path>,
    region_offset: u64,
) -> Result<(Device, Region), Failure> {
    let (a, b) = match device.parse() {
        Ok(DeviceSetting::Rings(a, b)) => (a.to_string(), b.to_string()),
        Ok(DeviceSetting::Replay(_)) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "`{device}` plays a recording, which holds no memory to read: open it with \
                 `rfmctl show`, or name the memory the nodes run on"
            )))
        }
        // One memory, or none: its opening says what is wrong.
        _ => {
            let dev = open(device, library)?;
            let region = coupling_region(&dev, device, region_offset)?;
            return Ok((dev, region));
        }
    };
    let (a, b) = (a.as_str(), b.as_str());
    let (dev_a, dev_b) = (open(a, library)?, open(b, library)?);
    let (ra, rb) = (
        coupling_region(&dev_a, a, region_offset)?,
        coupling_region(&dev_b, b, region_offset)?,
    );
    let (la, lb) = (ra.len(), rb.len());
    let region = Region::redundant(ra, rb).ok_or_else(|| {
        Failure::usage(anyhow::anyhow!(
            "`{device}`: its two memories differ in size ({la} and {lb} bytes from \
             regionOffset {region_offset:#x}): the two rings of a redundant device are alike"
        ))
    })?;
    // Ring B's window stays valid after its device is dropped.
    Ok((dev_a, region))
}

/// How often `--wait` looks again.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// Runs `attempt` until it succeeds or fails for good. With `wait` (seconds,
/// infinite: until interrupted), a failure of what may yet come ([`Failure::not_yet`]:
/// a memory not created, a node not described) is tried again until then,
/// saying once on stderr what is awaited; without it, such a failure says
/// that `--wait` waits for it.
pub fn waiting<T>(
    wait: Option<f64>,
    mut attempt: impl FnMut() -> Result<T, Failure>,
) -> Result<T, Failure> {
    let started = Instant::now();
    let mut said = false;
    loop {
        match attempt() {
            Err(f) if f.not_yet => {
                let Some(seconds) = wait else {
                    return Err(Failure {
                        error: anyhow::anyhow!("{:#} (--wait waits for it)", f.error),
                        ..f
                    });
                };
                if started.elapsed().as_secs_f64() >= seconds {
                    return Err(Failure {
                        error: anyhow::anyhow!("{:#}, still after --wait {seconds} s", f.error),
                        ..f
                    });
                }
                if !said {
                    let until = match seconds.is_finite() {
                        true => format!("up to {seconds} s"),
                        false => "until interrupted".to_owned(),
                    };
                    eprintln!("rfmctl: waiting ({until}): {:#}", f.error);
                    said = true;
                }
                std::thread::sleep(WAIT_POLL);
            }
            Err(f) => return Err(f),
            Ok(found) => {
                if said {
                    eprintln!(
                        "rfmctl: there after {:.1} s",
                        started.elapsed().as_secs_f64()
                    );
                }
                return Ok(found);
            }
        }
    }
}

/// `--wait [SECONDS]`: a number of seconds above 0, or `inf` (the flag alone).
pub fn parse_wait(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .ok_or_else(|| format!("`{text}` is not a number of seconds above 0"))
}

/// The part of `device` from the FMU's `regionOffset` to the end: where a
/// coupling's areas are.
pub fn coupling_region(
    device: &rfm_memory::Device,
    name: &str,
    region_offset: u64,
) -> Result<rfm_memory::Region, Failure> {
    let size = device.size();
    device
        .map(region_offset, size.saturating_sub(region_offset) as usize)
        .map_err(|e| {
            Failure::device(anyhow::anyhow!(
                "regionOffset {region_offset:#x} is not inside `{name}`: {e}"
            ))
        })
}

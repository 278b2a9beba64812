//! Opening a device for inspection: never creating memory, never guessing a size.

use std::path::Path;

use anyhow::Context;
use rfm_core::backend::shm;
use rfm_core::{Device, DeviceSpec, OpenOptions};

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
        DeviceSpec::Shm { name } => {
            let stat = shm::stat(name).map_err(|e| {
                Failure::device(if e.kind() == std::io::ErrorKind::NotFound {
                    anyhow::anyhow!(
                        "`{device}` does not exist: no program has created /dev/shm/{name} \
                         (rfmctl only inspects memory, it does not create it)"
                    )
                } else {
                    anyhow::Error::new(e)
                        .context(format!("`{device}`: cannot look at /dev/shm/{name}"))
                })
            })?;
            options.memory_size = stat.size as usize;
        }
        DeviceSpec::Rfm2g { .. } => {}
    }
    Device::open(device, &options)
        .with_context(|| format!("cannot open `{device}`"))
        .map_err(Failure::device)
}

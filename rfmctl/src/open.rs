//! Opening a device for inspection: never creating memory, never guessing a size.

use std::path::Path;

use rfm_core::backend::shm::ShmError;
use rfm_core::{Device, DeviceError, DeviceSpec, OpenOptions};

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
            DeviceError::Shm(ShmError::NoSuchMemory { device, name }) => anyhow::anyhow!(
                "`{device}` does not exist: no program has created {} (rfmctl only inspects \
                 memory, it does not create it)",
                rfm_core::backend::shm::object_path(&name)
            ),
            other => anyhow::Error::new(other).context(format!("cannot open `{device}`")),
        })
    })
}

/// The part of `device` from the FMU's `regionOffset` to the end: where a
/// coupling's areas are.
pub fn coupling_region(
    device: &rfm_core::Device,
    name: &str,
    region_offset: u64,
) -> Result<rfm_core::Region, Failure> {
    let size = device.size();
    device
        .map(region_offset, size.saturating_sub(region_offset) as usize)
        .map_err(|e| {
            Failure::device(anyhow::anyhow!(
                "regionOffset {region_offset:#x} is not inside `{name}`: {e}"
            ))
        })
}

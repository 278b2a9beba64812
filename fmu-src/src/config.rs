//! The parameters as a link configuration: each error names the parameter and
//! the values it accepts.

use std::time::Duration;

use rfm_core::frame::framed::SyncMode;
use rfm_core::link::{CardReads, Layout, LinkConfig};
use rfm_core::realtime::{CpuList, RealTime, MAX_PRIORITY};
use rfm_core::wait::WaitStrategy;

use crate::error::{error, FmiError, FmiResult};
use crate::values::Value;
use fmu_model::{Model, Param};

/// The longest `timeout`/`startupTimeout`/`idleTimeout` accepted, in seconds.
const MAX_SECONDS: f64 = 1e9;

/// The parameter values of an instance, indexed by [`Param`].
pub type Params = [Value];

fn bad(name: &str, value: &dyn std::fmt::Display, accepted: &str) -> FmiError {
    error(format!(
        "fmi2ExitInitializationMode: parameter {name} = {value}: {accepted}"
    ))
}

pub(crate) fn string(params: &Params, p: Param) -> &str {
    match &params[p as usize] {
        Value::String(s) => s,
        other => unreachable!("the parameter table: {p:?} is {other:?}"),
    }
}

pub(crate) fn boolean(params: &Params, p: Param) -> bool {
    match params[p as usize] {
        Value::Boolean(b) => b,
        ref other => unreachable!("the parameter table: {p:?} is {other:?}"),
    }
}

fn integer(params: &Params, p: Param) -> i32 {
    match params[p as usize] {
        Value::Integer(i) => i,
        ref other => unreachable!("the parameter table: {p:?} is {other:?}"),
    }
}

fn real(params: &Params, p: Param) -> f64 {
    match params[p as usize] {
        Value::Real(r) => r,
        ref other => unreachable!("the parameter table: {p:?} is {other:?}"),
    }
}

/// A String parameter parsed by its rfm-core type, or named with what it takes.
fn parsed<T: std::str::FromStr>(params: &Params, p: Param, accepted: &str) -> FmiResult<T> {
    let text = string(params, p);
    text.parse()
        .map_err(|_| bad(fmu_model::spec(p).name, &format!("{text:?}"), accepted))
}

/// A time parameter, within the bounds its row of the table gives (its XML
/// `min`, when it has one above 0).
fn seconds(params: &Params, p: Param) -> FmiResult<Duration> {
    let v = real(params, p);
    let spec = fmu_model::spec(p);
    let min: f64 = spec
        .min
        .and_then(|m| m.parse().ok())
        .filter(|&m| m > 0.0)
        .unwrap_or(0.0);
    let inside = if min > 0.0 { v >= min } else { v > 0.0 };
    if v.is_finite() && inside && v <= MAX_SECONDS {
        Ok(Duration::from_secs_f64(v))
    } else {
        let low = match min {
            0.0 => "greater than 0".to_owned(),
            min => format!("of at least {min}"),
        };
        Err(bad(
            spec.name,
            &v,
            &format!("expected seconds {low} and at most {MAX_SECONDS:e} (about 31 years)"),
        ))
    }
}

fn slot(params: &Params, p: Param) -> FmiResult<u8> {
    let v = integer(params, p);
    u8::try_from(v).map_err(|_| bad(fmu_model::spec(p).name, &v, "expected a slot number 0..255"))
}

/// `cpuAffinity`, `realtimePriority` and `lockMemory`: what the stepping thread asks.
fn realtime(params: &Params) -> FmiResult<RealTime> {
    let cpus = string(params, Param::CpuAffinity).trim();
    let cpus = match cpus.is_empty() {
        true => None,
        false => Some(cpus.parse::<CpuList>().map_err(|e| {
            error(format!(
                "fmi2ExitInitializationMode: parameter cpuAffinity: {e}; empty leaves the cores as they are"
            ))
        })?),
    };
    let priority = integer(params, Param::RealtimePriority);
    let priority = u8::try_from(priority)
        .ok()
        .filter(|p| *p <= MAX_PRIORITY)
        .ok_or_else(|| {
            bad(
                "realtimePriority",
                &priority,
                "expected 0 (left as it is) or a real-time priority 1..99",
            )
        })?;
    Ok(RealTime {
        cpus,
        priority,
        lock_memory: boolean(params, Param::LockMemory),
    })
}

/// The link configuration of `model` with `params`.
pub fn link_config(model: &Model, params: &Params) -> FmiResult<LinkConfig> {
    let device = string(params, Param::Device).to_owned();
    if device.is_empty() {
        return Err(bad("device", &"\"\"", rfm_core::DEVICE_FORMS));
    }
    let mode: SyncMode = parsed(params, Param::SyncMode, "expected lockstep or free")?;
    let wait: WaitStrategy = parsed(
        params,
        Param::WaitStrategy,
        "expected adaptive, spin, yield, sleep or event",
    )?;
    let layout: Layout = parsed(params, Param::Layout, "expected framed or seed")?;
    if layout == Layout::Seed && !model.preset {
        return Err(bad(
            "layout",
            &"\"seed\"",
            "the seed layout is the article's attitude packet: only the attitude FMU has it; use framed",
        ));
    }
    let lag = integer(params, Param::Lag);
    let max_lag = model.interface.max_lag;
    let lag = u8::try_from(lag)
        .ok()
        .filter(|l| *l <= max_lag)
        .ok_or_else(|| {
            bad(
                "lag",
                &lag,
                &format!(
                    "expected 0..{max_lag} steps (the rings are sized for the interface's max_lag)"
                ),
            )
        })?;
    let factor = real(params, Param::RealTimeFactor);
    if !(factor.is_finite() && (0.0..=1e6).contains(&factor)) {
        return Err(bad(
            "realTimeFactor",
            &factor,
            "expected 0 (as fast as possible), 1 (real time) or another factor, 0..1e6",
        ));
    }
    let offset = integer(params, Param::RegionOffset);
    let region_offset =
        u64::try_from(offset).map_err(|_| bad("regionOffset", &offset, "expected bytes ≥ 0"))?;
    let library = string(params, Param::Rfm2gLibrary);
    let threshold = integer(params, Param::Rfm2gReadThreshold);
    let block_from = u32::try_from(threshold).map_err(|_| {
        bad(
            "rfm2gReadThreshold",
            &threshold,
            "expected bytes ≥ 0 (0: frames are read word by word)",
        )
    })?;
    let (interface, node_slot, peer_slot) = if model.preset {
        (
            None,
            slot(params, Param::NodeSlot)?,
            slot(params, Param::PeerSlot)?,
        )
    } else {
        let me = model.interface.nodes[model.node].slot;
        (Some(model.interface.clone()), me, me)
    };
    Ok(LinkConfig {
        realtime: realtime(params)?,
        interface,
        device,
        rfm2g_library: (!library.is_empty()).then(|| library.into()),
        region_offset,
        node_slot,
        peer_slot,
        mode,
        lag,
        wait,
        layout,
        timeout: seconds(params, Param::Timeout)?,
        startup_timeout: seconds(params, Param::StartupTimeout)?,
        idle_timeout: seconds(params, Param::IdleTimeout)?,
        real_time_factor: factor,
        card: CardReads {
            block_from: (block_from > 0).then_some(block_from),
            ..CardReads::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use fmu_model::{spec, Param};

    /// The XML's `min` of `timeout` is the link's own bound: one number for the
    /// master's dialog and for the check.
    #[test]
    fn the_timeout_minimum_is_the_links() {
        let min: f64 = spec(Param::Timeout).min.unwrap().parse().unwrap();
        assert_eq!(min, rfm_core::link::MIN_TIMEOUT.as_secs_f64());
    }
}

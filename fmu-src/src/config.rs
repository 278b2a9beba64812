//! The parameters as a link configuration: each error names the parameter and
//! the values it accepts.

use std::sync::Arc;
use std::time::Duration;

use rfm_core::link::{CardReads, Layout, LinkConfig};
use rfm_core::realtime::{CpuList, RealTime, MAX_PRIORITY};
use rfm_frames::frame::framed::SyncMode;
use rfm_frames::wait::WaitStrategy;
use rfm_interface::Interface;

use crate::error::{error, FmiError, FmiResult};
use fmu_model::{Model, Param, ParamValues};

fn bad(name: &str, value: &dyn std::fmt::Display, accepted: &str) -> FmiError {
    error(format!("parameter {name} = {value}: {accepted}"))
}

/// The rule of setting `name` (its row of
/// [`rfm_interface::settings::SETTINGS`], the one table an interface file's
/// line is held to), applied to `value`: at `fmi2Set*`, so that the master
/// learns which value was wrong at the call that gave it, and again here at
/// initialization for the values no call set. A value of another type is
/// left to the parameter's own type check; the device, to its opening at
/// initialization (where its form, board and library are named together, and
/// `replay:` is the link's).
pub fn setting_rule(model: &Model, name: &str, value: &rfm_frames::value::Value) -> FmiResult {
    let Some(spec) = rfm_interface::settings::spec(name) else {
        return Ok(());
    };
    if name == "device" || value.fmi_type() != spec.kind() {
        return Ok(());
    }
    (spec.check(value, model.interface.max_lag)).map_err(|why| bad(name, value, &why))
}

/// Every setting's rule over the values `params` holds ([`setting_rule`]).
fn setting_rules(model: &Model, params: &ParamValues) -> FmiResult {
    for p in fmu_model::PARAMS {
        setting_rule(model, p.name, &params.get(p.param))?;
    }
    Ok(())
}

/// A String parameter parsed by its rfm-core type, or named with what it takes.
fn parsed<T: std::str::FromStr>(text: &str, p: Param, accepted: &str) -> FmiResult<T> {
    text.parse()
        .map_err(|_| bad(fmu_model::spec(p).name, &format!("{text:?}"), accepted))
}

/// A time parameter as a duration: its rule ([`setting_rules`]: finite,
/// over its minimum, at most 1e9 s) already kept.
fn seconds(v: f64, p: Param) -> FmiResult<Duration> {
    Duration::try_from_secs_f64(v).map_err(|_| bad(fmu_model::spec(p).name, &v, "expected seconds"))
}

fn slot(v: i32, p: Param) -> FmiResult<u8> {
    u8::try_from(v).map_err(|_| bad(fmu_model::spec(p).name, &v, "expected a slot number 0..255"))
}

/// `cpuAffinity`, `realtimePriority` and `lockMemory`: what the stepping thread asks.
fn realtime(params: &ParamValues) -> FmiResult<RealTime> {
    let cpus = params.cpu_affinity.trim();
    let cpus = match cpus.is_empty() {
        true => None,
        false => Some(cpus.parse::<CpuList>().map_err(|e| {
            error(format!(
                "parameter cpuAffinity: {e}; empty leaves the cores as they are"
            ))
        })?),
    };
    let priority = params.realtime_priority;
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
        lock_memory: params.lock_memory,
    })
}

/// The link configuration of `model` with `params`; the first parameter that
/// is wrong is named, with what it accepts.
pub fn link_config(model: &Model, params: &ParamValues) -> FmiResult<LinkConfig> {
    let device = params.device.clone();
    if device.is_empty() {
        return Err(bad("device", &"\"\"", rfm_memory::DEVICE_FORMS));
    }
    let mode: SyncMode = parsed(
        &params.sync_mode,
        Param::SyncMode,
        "expected lockstep or free",
    )?;
    let wait: WaitStrategy = parsed(
        &params.wait_strategy,
        Param::WaitStrategy,
        "expected adaptive, spin, yield, sleep or event",
    )?;
    let layout = layout(model, params)?;
    setting_rules(model, params)?;
    let lag = lag(params)?;
    let factor = params.real_time_factor;
    let offset = params.region_offset;
    let region_offset =
        u64::try_from(offset).map_err(|_| bad("regionOffset", &offset, "expected bytes ≥ 0"))?;
    let library = &params.rfm2g_library;
    let card = card_reads(params)?;
    let (interface, node_slot, peer_slot) = slots(model, params)?;
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
        timeout: seconds(params.timeout, Param::Timeout)?,
        startup_timeout: seconds(params.startup_timeout, Param::StartupTimeout)?,
        idle_timeout: seconds(params.idle_timeout, Param::IdleTimeout)?,
        real_time_factor: factor,
        card,
    })
}

/// `layout`: framed, or the article's seed packet, which only the attitude
/// FMU has.
fn layout(model: &Model, params: &ParamValues) -> FmiResult<Layout> {
    let layout: Layout = parsed(&params.layout, Param::Layout, "expected framed or seed")?;
    if layout == Layout::Seed && !model.preset {
        return Err(bad(
            "layout",
            &"\"seed\"",
            "the seed layout is the article's attitude packet: only the attitude FMU has it; use framed",
        ));
    }
    Ok(layout)
}

/// `lag` in steps: its rule ([`setting_rules`]: 0 to the interface's
/// `max_lag`, which sized the rings) already kept.
fn lag(params: &ParamValues) -> FmiResult<u8> {
    u8::try_from(params.lag).map_err(|_| bad("lag", &params.lag, "expected a lag of steps"))
}

/// `rfm2gReadThreshold`: from how many bytes a peer's frame is one block read.
fn card_reads(params: &ParamValues) -> FmiResult<CardReads> {
    let threshold = params.rfm2g_read_threshold;
    let block_from = u32::try_from(threshold).map_err(|_| {
        bad(
            "rfm2gReadThreshold",
            &threshold,
            "expected bytes ≥ 0 (0: frames are read word by word)",
        )
    })?;
    Ok(CardReads {
        block_from: (block_from > 0).then_some(block_from),
        ..CardReads::default()
    })
}

/// The interface the link couples by and this node's and its peer's slots:
/// the attitude FMU's from `nodeSlot` and `peerSlot`, another's from its file.
fn slots(model: &Model, params: &ParamValues) -> FmiResult<(Option<Arc<Interface>>, u8, u8)> {
    if model.preset {
        return Ok((
            None,
            slot(params.node_slot, Param::NodeSlot)?,
            slot(params.peer_slot, Param::PeerSlot)?,
        ));
    }
    let me = model.interface.nodes[model.node].slot;
    Ok((Some(model.interface.clone()), me, me))
}

#[cfg(test)]
mod tests {
    use fmu_model::{spec, Param};

    /// The XML's `min` of `timeout` is the link's own bound: one number for the
    /// master's dialog and for the check.
    #[test]
    fn the_timeout_minimum_is_the_links() {
        let min = spec(Param::Timeout).min.unwrap();
        assert_eq!(min, rfm_core::link::MIN_TIMEOUT.as_secs_f64());
    }
}

//! The parameters as a link configuration: the settings through their table
//! (`rfm_interface::settings`), the real-time and card parameters by the
//! rules here; each error names the parameter and the values it accepts.

use fmu_model::FmuKind;
use rfm_core::link::{CardReads, LinkConfig};
use rfm_core::realtime::{CpuList, RealTime, MAX_PRIORITY};
use rfm_frames::fmi::Value;
use rfm_interface::settings::{spec as setting, LinkSettings, SettingError};

use crate::error::{error, FmiError, FmiResult};
use fmu_model::{Model, Param, ParamValues};

fn bad(name: &str, value: &dyn std::fmt::Display, accepted: &str) -> FmiError {
    error(format!("parameter {name} = {value}: {accepted}"))
}

/// A setting refused by its table, as the master's log reads it.
fn refused(e: SettingError) -> FmiError {
    error(format!("parameter {e}"))
}

/// The rule of parameter `p`'s setting (its row of the settings table, the
/// one an interface file's line is held to), applied to `value`: at
/// `fmi2Set*`, so that the master learns which value was wrong at the call
/// that gave it. A parameter that is no setting is held to its rule at
/// initialization.
pub fn setting_rule(model: &Model, p: Param, value: &Value) -> FmiResult {
    match fmu_model::spec(p).setting {
        Some(s) => setting(s)
            .check(value, model.interface.max_lag)
            .map_err(refused),
        None => Ok(()),
    }
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

/// The link configuration of `model` with `params`: the settings by their
/// table (every value held to its rule again, for those no `fmi2Set*` gave),
/// the rest by this file's rules; the first parameter that is wrong is
/// named, with what it accepts.
pub fn link_config(model: &Model, params: &ParamValues) -> FmiResult<LinkConfig> {
    let interface = (model.kind == FmuKind::Node).then(|| model.interface.clone());
    let settings = LinkSettings::from_values(
        |s| params.get(fmu_model::of_setting(s).param),
        interface.as_deref(),
    )
    .map_err(refused)?;
    let (node_slot, peer_slot) = slots(model, params)?;
    Ok(LinkConfig {
        realtime: realtime(params)?,
        interface,
        settings,
        node_slot,
        peer_slot,
        card: card_reads(params)?,
    })
}

/// `rfm2gReadThreshold`: from how many bytes a peer's frame is one DMA read.
fn card_reads(params: &ParamValues) -> FmiResult<CardReads> {
    let threshold = params.rfm2g_read_threshold;
    let dma_from = u32::try_from(threshold).map_err(|_| {
        bad(
            "rfm2gReadThreshold",
            &threshold,
            "expected bytes ≥ 0 (0: frames are read word by word)",
        )
    })?;
    Ok(CardReads {
        dma_from: (dma_from > 0).then_some(dma_from),
        ..CardReads::default()
    })
}

/// This node's and its peer's slots: the attitude FMU's from `nodeSlot` and
/// `peerSlot`, another's from its file (every other node is a peer).
fn slots(model: &Model, params: &ParamValues) -> FmiResult<(u8, u8)> {
    if model.kind == FmuKind::Attitude {
        return Ok((
            slot(params.node_slot, Param::NodeSlot)?,
            slot(params.peer_slot, Param::PeerSlot)?,
        ));
    }
    let me = model.interface.nodes[model.node].slot;
    Ok((me, me))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rfm_interface::settings::SETTINGS;
    use std::sync::Arc;

    /// Initialization holds every value to the settings' table as `fmi2Set*`
    /// and a file's line do (`tests/errors/parameters.rs`): each value just
    /// outside a rule of the table, put where no set call checked it, fails
    /// the link's configuration naming the parameter; the starts pass. With
    /// an interface of `max_lag = 3`, the lag's bound is the file's.
    #[test]
    fn every_bound_of_the_settings_table_is_refused_at_initialization() {
        let file = "name = \"lab\"\nmax_lag = 3\n[[node]]\nname = \"a\"\nslot = 0\n\
                    signals = [{ name = \"x\", type = \"Real\" }]\n";
        let none = rfm_interface::Reserved::NONE;
        let lab = rfm_interface::Interface::parse("lab.toml", file, &none).unwrap();
        for model in [Model::attitude(), Model::of_node(Arc::new(lab), 0)] {
            let max_lag = model.interface.max_lag;
            assert!(link_config(&model, &model.param_starts).is_ok());
            for spec in &SETTINGS {
                for bad in spec.refused_near(max_lag) {
                    let mut params = model.param_starts.clone();
                    params
                        .set(fmu_model::of_setting(spec.setting).param, bad.clone())
                        .unwrap();
                    let err = link_config(&model, &params).expect_err(spec.key);
                    let named = format!("parameter {} = ", spec.key);
                    assert!(err.message.starts_with(&named), "{bad:?}: {err:?}");
                }
            }
        }
    }
}

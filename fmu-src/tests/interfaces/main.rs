//! FMUs of an interface file, as build-fmu packs them (the file and the node's
//! name in `resources/`): three nodes with every signal type exchange exactly,
//! and resources that do not belong to the description are refused at
//! fmi2Instantiate naming what is wrong.

#[path = "../common/mod.rs"]
mod common;

use common::{resources, unique, Fmu};
use fmu_model::fmi2::*;
use fmu_model::Model;
use rfm_attitude::{fmi2_get_integer, fmi2_set_real};

mod rates;
mod resources;
mod runs;

const LAB: &str = r#"
name = "lab"
[[node]]
name = "cockpit"
slot = 0
signals = [
  { name = "roll", type = "Real", unit = "rad", start = 0.5, description = "bank angle" },
  { name = "gear_down", type = "Boolean", start = true },
  { name = "flap_detent", type = "Integer", start = 2, min = 0, max = 4 },
  { name = "callsign", type = "String", size = 16, start = "DLH4U" },
]
[[node]]
name = "visual"
slot = 1
signals = [ { name = "frame_count", type = "Integer" } ]
[[node]]
name = "ios"
slot = 7
signals = [ { name = "freeze", type = "Boolean" }, { name = "wind", type = "Real", unit = "m/s" } ]
"#;

/// The instance of `node` of [`LAB`], as a master loads its FMU.
fn node(node: &str, device: &str) -> Fmu {
    let (dir, uri) = resources(LAB, node);
    let model = Model::load(dir.path()).unwrap();
    let fmu = Fmu::of(node, model, &uri);
    fmu.set_all(&[("device", device), ("lag", "1"), ("timeout", "5")]);
    fmu
}

#[test]
fn three_nodes_of_an_interface_exchange_every_type_exactly() {
    let device = format!("loopback:{}", unique("lab"));
    let nodes = [
        node("cockpit", &device),
        node("visual", &device),
        node("ios", &device),
    ];
    for n in &nodes {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    // Before the first step: the start values of the file.
    assert_eq!(nodes[1].real("cockpit.roll"), 0.5);
    assert_eq!(nodes[1].string("cockpit.callsign"), "DLH4U");
    assert!(nodes[1].boolean("cockpit.gear_down"));
    assert_eq!(nodes[1].integer("cockpit.flap_detent"), 2);
    assert_eq!(nodes[1].integer("cockpit.step"), -1);
    let h = 0.01;
    for k in 0..200i64 {
        let t = k as f64 * h;
        let [cockpit, visual, ios] = &nodes;
        cockpit.set_all(&[
            ("roll", &(k as f64 * 0.001).to_string()),
            ("gear_down", if k % 3 == 0 { "true" } else { "false" }),
            ("flap_detent", &(k % 5).to_string()),
            ("callsign", &format!("K{k}")),
        ]);
        visual.set_all(&[("frame_count", &(10 * k).to_string())]);
        ios.set_all(&[
            ("freeze", if k % 2 == 1 { "true" } else { "false" }),
            ("wind", &(-(k as f64)).to_string()),
        ]);
        for n in &nodes {
            assert_eq!(n.step(t, h), fmi2OK, "step {k}: {:?}", n.log());
        }
        // Lag 1: after step k, each output is what its node published at step k - 1.
        let j = k - 1;
        if j < 0 {
            assert_eq!(visual.real("cockpit.roll"), 0.5, "the initial frame");
            continue;
        }
        for reader in [visual, ios] {
            assert_eq!(reader.real("cockpit.roll"), j as f64 * 0.001);
            assert_eq!(reader.boolean("cockpit.gear_down"), j % 3 == 0);
            assert_eq!(reader.integer("cockpit.flap_detent"), (j % 5) as i32);
            assert_eq!(reader.string("cockpit.callsign"), format!("K{j}"));
            assert_eq!(reader.integer("cockpit.step"), j as i32);
            assert_eq!(reader.real("cockpit.time"), j as f64 * h);
            assert!(reader.boolean("cockpit.link.ok"));
        }
        for reader in [cockpit, ios] {
            assert_eq!(reader.integer("visual.frame_count"), (10 * j) as i32);
        }
        for reader in [cockpit, visual] {
            assert_eq!(reader.boolean("ios.freeze"), j % 2 == 1);
            assert_eq!(reader.real("ios.wind"), -(j as f64));
            assert_eq!(reader.integer("ios.link.lost"), 0);
        }
    }
    for n in &nodes {
        assert_eq!(n.terminate(), fmi2OK);
    }
}

#[test]
fn a_signal_set_outside_its_declaration_is_refused_naming_it() {
    let fmu = node("cockpit", &format!("loopback:{}", unique("lab")));
    assert_eq!(fmu.set("flap_detent", "5"), fmi2Error);
    assert!(
        fmu.last_error()
            .contains("`flap_detent` = 5: expected 0..4"),
        "{}",
        fmu.last_error()
    );
    let fmu = node("cockpit", &format!("loopback:{}", unique("lab")));
    assert_eq!(fmu.set("callsign", &"x".repeat(17)), fmi2Error);
    assert!(
        fmu.last_error().contains("`callsign`") && fmu.last_error().contains("at most 16 fit"),
        "{}",
        fmu.last_error()
    );
}

const RATES: &str = r#"
name = "rates"
period = 0.001
[[node]]
name = "fast"
slot = 0
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "slow"
slot = 1
period = "1/60"
signals = [ { name = "y", type = "Real" } ]
"#;

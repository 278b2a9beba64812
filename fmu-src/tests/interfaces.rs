//! FMUs of an interface file, as build-fmu packs them (the file and the node's
//! name in `resources/`): three nodes with every signal type exchange exactly,
//! and resources that do not belong to the description are refused at
//! fmi2Instantiate naming what is wrong.

mod common;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use fmu_model::{Model, RESOURCE_INTERFACE, RESOURCE_NODE};
use rfm_attitude::{fmi2_get_integer, fmi2_set_real};
use tempfile::TempDir;

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

/// A resources folder holding `interface` and `node` (removed when it drops;
/// an instance reads it only while it is instantiated), and its file: URI.
fn resources(interface: &str, node: &str) -> (TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(RESOURCE_INTERFACE), interface).unwrap();
    std::fs::write(dir.path().join(RESOURCE_NODE), format!("{node}\n")).unwrap();
    let uri = format!("file://{}", dir.path().display());
    (dir, uri)
}

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

/// Two nodes with runs of signals side by side: node `a` has 12 Reals
/// `r0`..`r11`, then 9 Integers `i0`..`i8`, then a bounded Real `b` that is
/// checked alone; node `b` has 9 Reals `s0`..`s8`.
fn runs_interface() -> String {
    let signals = |prefix: &str, n: usize, kind: &str| {
        (0..n)
            .map(|i| format!("{{ name = \"{prefix}{i}\", type = \"{kind}\" }}, "))
            .collect::<String>()
    };
    format!(
        "name = \"runs\"\n\
         [[node]]\nname = \"a\"\nslot = 0\nsignals = [ {}{}{{ name = \"b\", type = \"Real\", min = -1, max = 1 }} ]\n\
         [[node]]\nname = \"b\"\nslot = 1\nsignals = [ {}]\n",
        signals("r", 12, "Real"),
        signals("i", 9, "Integer"),
        signals("s", 9, "Real"),
    )
}

fn runs_node(node: &str, device: &str) -> Fmu {
    let (dir, uri) = resources(&runs_interface(), node);
    let fmu = Fmu::of(node, Model::load(dir.path()).unwrap(), &uri);
    fmu.set_all(&[("device", device), ("lag", "1"), ("timeout", "5")]);
    fmu
}

/// `prefix` followed by each of `is`: `names("a.r", &[0, 1])` is `a.r0`, `a.r1`.
fn names(prefix: &str, is: &[i32]) -> Vec<String> {
    is.iter().map(|i| format!("{prefix}{i}")).collect()
}

fn vrs(fmu: &Fmu, names: &[String]) -> Vec<u32> {
    names.iter().map(|n| fmu.vr(n).0).collect()
}

fn set_reals(fmu: &Fmu, names: &[String], values: &[f64]) -> fmi2Status {
    let vrs = vrs(fmu, names);
    assert_eq!(vrs.len(), values.len());
    // SAFETY: matching lengths.
    unsafe { fmi2_set_real(fmu.c, vrs.as_ptr(), vrs.len(), values.as_ptr()) }
}

fn reals(fmu: &Fmu, names: &[String]) -> Vec<f64> {
    fmu.reals(&names.iter().map(String::as_str).collect::<Vec<_>>())
}

fn integers(fmu: &Fmu, names: &[String]) -> Vec<i32> {
    let vrs = vrs(fmu, names);
    let mut out = vec![-7; vrs.len()];
    // SAFETY: matching lengths.
    let status = unsafe { fmi2_get_integer(fmu.c, vrs.as_ptr(), vrs.len(), out.as_mut_ptr()) };
    assert_eq!(status, fmi2OK, "{:?}", fmu.log());
    out
}

/// `v` with `more` appended.
fn and<T: Clone>(v: &[T], more: &[T]) -> Vec<T> {
    [v, more].concat()
}

/// A master that sets or gets signals side by side in order is served a run
/// at once (from 8 references on): the values must be the same whatever the
/// order, the repeats, the split across calls and the breaks (another kind, a
/// bound, another peer, a link output).
#[test]
fn runs_of_signals_in_one_call_are_exact_in_any_order() {
    let device = format!("loopback:{}", unique("runs"));
    let [a, b] = [runs_node("a", &device), runs_node("b", &device)];
    for n in [&a, &b] {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    let h = 0.5;
    let all: Vec<i32> = (0..12).collect();
    for k in 0..4i32 {
        let x = |i: i32| f64::from(100 * k + i) + 0.25;
        // The whole run with placeholders, then r11 r10 reversed, then r3 set
        // twice and the rest of the middle.
        let mut first = vec![-1.0; 12];
        (first[..3]).copy_from_slice(&[x(0), x(1), x(2)]);
        first.push(0.5);
        assert_eq!(
            set_reals(&a, &and(&names("r", &all), &["b".into()]), &first),
            fmi2OK
        );
        assert_eq!(
            set_reals(&a, &names("r", &[11, 10]), &[x(11), x(10)]),
            fmi2OK
        );
        let middle: Vec<f64> = [-2.0].into_iter().chain((3..10).map(x)).collect();
        assert_eq!(
            set_reals(&a, &names("r", &[3, 3, 4, 5, 6, 7, 8, 9]), &middle),
            fmi2OK
        );
        for i in 0..9 {
            a.set_all(&[(&format!("i{i}"), &(10 * k + i).to_string())]);
        }
        let s: Vec<f64> = (20..29).map(x).collect();
        assert_eq!(
            set_reals(&b, &names("s", &(0..9).collect::<Vec<_>>()), &s),
            fmi2OK
        );
        for n in [&a, &b] {
            assert_eq!(n.step(f64::from(k) * h, h), fmi2OK, "{:?}", n.log());
        }
        // This node's own inputs, now: a run, then the bounded one.
        let own = [4, 5, 6, 7, 8, 9, 10, 11];
        let want: Vec<f64> = own.iter().map(|&i| x(i)).collect();
        assert_eq!(
            reals(&a, &and(&names("r", &own), &["b".into()])),
            and(&want, &[0.5])
        );
        // Lag 1: the peers' values of step k - 1.
        let j = k - 1;
        if j < 0 {
            continue;
        }
        let x = |i: i32| f64::from(100 * j + i) + 0.25;
        let xs = |is: &[i32]| is.iter().map(|&i| x(i)).collect::<Vec<_>>();
        for order in [
            all.clone(),
            all.iter().rev().copied().collect(),
            vec![1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0],
        ] {
            assert_eq!(reals(&b, &names("a.r", &order)), xs(&order), "{order:?}");
        }
        let tail: Vec<i32> = (2..12).collect();
        assert_eq!(
            reals(
                &b,
                &and(&names("a.r", &tail), &["a.b".into(), "a.r0".into()])
            ),
            and(&xs(&tail), &[0.5, x(0)])
        );
        let ints: Vec<i32> = (0..9).collect();
        let want: Vec<i32> = ints.iter().map(|i| 10 * j + i).collect();
        assert_eq!(integers(&b, &names("a.i", &ints)), want);
        assert_eq!(
            integers(&b, &and(&names("a.i", &ints[1..]), &["a.step".into()])),
            and(&want[1..], &[j])
        );
        // A peer's run followed by a link output.
        let s: Vec<i32> = (0..9).collect();
        assert_eq!(
            reals(&a, &and(&names("b.s", &s), &["b.time".into()])),
            and(&(20..29).map(x).collect::<Vec<_>>(), &[f64::from(j) * h])
        );
    }
}

/// A run is stored whole or not at all, and the refusal names the signal.
#[test]
fn a_run_with_a_value_that_is_not_finite_is_refused_naming_it() {
    let a = runs_node("a", &format!("loopback:{}", unique("runs")));
    let run = names("r", &(0..10).collect::<Vec<_>>());
    let before: Vec<f64> = (0..10).map(f64::from).collect();
    assert_eq!(set_reals(&a, &run, &before), fmi2OK);
    let mut refused: Vec<f64> = (10..20).map(f64::from).collect();
    refused[7] = f64::INFINITY;
    assert_eq!(set_reals(&a, &run, &refused), fmi2Error);
    assert!(
        a.last_error().contains("`r7` = inf is not a finite number"),
        "{}",
        a.last_error()
    );
    assert_eq!(reals(&a, &run), before);
}

/// What fmi2Instantiate logs when it refuses the FMU at `uri` with `guid`.
fn refusal(guid: &str, uri: &str) -> String {
    let log: common::Log = std::sync::Arc::default();
    let cb = common::callbacks(&log);
    let guid = std::ffi::CString::new(guid).unwrap();
    let uri = std::ffi::CString::new(uri).unwrap();
    // SAFETY: valid C strings and callbacks alive for the call.
    let c = unsafe {
        rfm_attitude::fmi2_instantiate(
            c"x".as_ptr(),
            fmi2CoSimulation,
            guid.as_ptr(),
            uri.as_ptr(),
            &cb,
            0,
            0,
        )
    };
    assert!(c.is_null(), "instantiated");
    let text = log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, m)| m.clone())
        .collect();
    text
}

#[test]
fn resources_that_do_not_belong_to_the_description_are_refused() {
    let (dir, uri) = resources(LAB, "visual");
    let guid = Model::load(dir.path()).unwrap().guid;
    // Another file (one start value changed) gives another GUID.
    let (_edited, edited) = resources(&LAB.replace("start = 0.5", "start = 0.25"), "visual");
    let text = refusal(&guid, &edited);
    assert!(
        text.contains(&format!("fmuGUID {guid} does not match"))
            && text.contains("come from different builds"),
        "{text}"
    );
    // A description edited: what the master and the binary agree on is the same.
    let (described, _described) = resources(
        &LAB.replace("bank angle", "bank angle, right wing down"),
        "visual",
    );
    assert_eq!(Model::load(described.path()).unwrap().guid, guid);
    // Another node of the same file.
    let (_other, other) = resources(LAB, "ios");
    assert!(refusal(&guid, &other).contains("does not match"));
    // A node the file does not have.
    let (_missing, missing) = resources(LAB, "tower");
    let text = refusal(&guid, &missing);
    assert!(
        text.contains("names node `tower`, which interface `lab` does not have (it has `cockpit`, `visual`, `ios`)"),
        "{text}"
    );
    // A damaged file: its line and column.
    let (_bad, bad) = resources(
        &LAB.replace("type = \"Boolean\", start = true", "type = \"Bool\""),
        "visual",
    );
    let text = refusal(&guid, &bad);
    assert!(
        text.contains("interface.toml:8:") && text.contains("Bool"),
        "{text}"
    );
    assert!(uri.starts_with("file:///"));
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

/// A node with a period declares it (stepSize) and any master step: a master
/// that steps every FMU by one step size (libcosim, OMSimulator, FMPy in one
/// process) couples nodes of several rates. The first other step size is told
/// to the master's log once; a time that does not continue is refused naming
/// both times.
#[test]
fn a_node_with_a_period_declares_it_and_takes_any_master_step() {
    let (dir, uri) = resources(RATES, "slow");
    let model = Model::load(dir.path()).unwrap();
    let xml = model.xml();
    assert!(
        xml.contains(r#"canHandleVariableCommunicationStepSize="true""#)
            && xml.contains(r#"stepSize="0.016666666666666666""#),
        "{xml}"
    );
    let device = format!("loopback:{}", unique("rates"));
    let slow = Fmu::of("slow", model, &uri);
    slow.set_all(&[("device", &device), ("lag", "1")]);
    assert_eq!(slow.init(), fmi2OK, "{:?}", slow.log());
    // The peer's initial frame, which slow's step 0 takes at lag 1.
    let (fast_dir, fast_uri) = resources(RATES, "fast");
    let fast = Fmu::of("fast", Model::load(fast_dir.path()).unwrap(), &fast_uri);
    fast.set_all(&[("device", &device), ("lag", "1")]);
    assert_eq!(fast.init(), fmi2OK, "{:?}", fast.log());
    // No grid time in [0.001, 0.011): no step, nothing waited for.
    assert_eq!(slow.step(0.0, 0.001), fmi2OK, "{:?}", slow.log());
    assert_eq!(slow.step(0.001, 0.01), fmi2OK, "{:?}", slow.log());
    let told: Vec<String> = slow
        .log()
        .into_iter()
        .filter(|(_, _, m)| m.contains("master step"))
        .map(|(_, _, m)| m)
        .collect();
    assert_eq!(
        told,
        [
            "master step 0.001 s, this node's period 1/60 s: its steps are taken at startTime + \
          k/60 s, inputs held between"
        ],
        "once, at the first other step size"
    );
    // A jump, and a step back: refused, naming both times.
    assert_eq!(slow.step(0.02, 0.001), fmi2Error);
    let message = slow.last_error();
    assert!(
        message.contains("currentCommunicationPoint 0.02 does not continue from 0.011, where the previous step ended"),
        "{message}"
    );
}

/// Node `name` of `interface` in its own thread on `device`, stepped by
/// `master` (each doStep's (t, h)) with `inputs(j)` set before doStep j;
/// the outputs `read` after each doStep.
fn run_node(
    interface: &'static str,
    name: &'static str,
    params: Vec<(&'static str, String)>,
    master: Vec<(f64, f64)>,
    inputs: fn(usize) -> Vec<(&'static str, String)>,
    read: fn(&Fmu) -> Vec<i64>,
) -> std::thread::JoinHandle<Vec<Vec<i64>>> {
    std::thread::spawn(move || {
        let (dir, uri) = resources(interface, name);
        let fmu = Fmu::of(name, Model::load(dir.path()).unwrap(), &uri);
        let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        fmu.set_all(&params);
        assert_eq!(fmu.init(), fmi2OK, "{name}: {:?}", fmu.log());
        let mut seen = Vec::new();
        for (j, &(t, h)) in master.iter().enumerate() {
            let set = inputs(j);
            let set: Vec<(&str, &str)> = set.iter().map(|(k, v)| (*k, v.as_str())).collect();
            fmu.set_all(&set);
            assert_eq!(fmu.step(t, h), fmi2OK, "{name} doStep {j}: {:?}", fmu.log());
            seen.push(read(&fmu));
        }
        assert_eq!(fmu.terminate(), fmi2OK, "{name}: {:?}", fmu.log());
        seen
    })
}

/// Master steps of `n` doSteps of `h` from 0, as a master that adds them.
fn master_steps(h: f64, n: usize) -> Vec<(f64, f64)> {
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            let step = (t, h);
            t += h;
            step
        })
        .collect()
}

/// The node of 1/60 s of [`RATES`] stepped by 3T, T/4 and 1 ms (a master
/// stepping every FMU by one size), beside the 1 ms node in a thread of its
/// own: after each doStep every output is the rule's. The expected values are
/// computed here from the rule (in exact integers), not read from the FMU:
/// doStep j of size h = T·a/b takes the slow node's steps k with k·b/a in
/// [j, j + 1); step k (lag 1) holds the fast node's step ⌊(k − 1)·50/3⌋;
/// the fast node's step i holds the slow node's step ⌊(i − 1)·3/50⌋, whose
/// `y` is the one set before the doStep that took it.
#[test]
fn a_node_stepped_by_3t_t_over_4_and_1_ms_is_exact_by_the_rule() {
    // (a, b): h = T·a/b for T = 1/60 s.
    for (a, b) in [(3u64, 1u64), (1, 4), (3, 50)] {
        let period = 1.0 / 60.0;
        let h = period * a as f64 / b as f64;
        let doing = (60 * b / a) as usize; // doSteps of 1 s
        let device = format!("loopback:{}", unique("hsteps"));
        let params = |d: &str| vec![("device", d.to_owned()), ("lag", "1".to_owned())];
        let slow = run_node(
            RATES,
            "slow",
            params(&device),
            master_steps(h, doing),
            |j| vec![("y", format!("{}", j as f64 * 0.5))],
            |f| vec![f.integer("fast.step") as i64, f.real("fast.x") as i64],
        );
        let fast = run_node(
            RATES,
            "fast",
            params(&device),
            master_steps(0.001, 1000),
            |j| vec![("x", format!("{}", j * 2))],
            |f| {
                vec![
                    f.integer("slow.step") as i64,
                    (f.real("slow.y") * 2.0).round() as i64,
                ]
            },
        );
        let (slow, fast) = (slow.join().unwrap(), fast.join().unwrap());
        // The slow node's steps each doStep j took: k with k·b/a in [j, j+1).
        let taken = |j: u64| (0..61u64).filter(move |k| k * b / a == j);
        let doing_of = |k: u64| k * b / a; // the doStep that took step k
        let mut last: Option<u64> = None;
        for (j, seen) in slow.iter().enumerate() {
            last = taken(j as u64).next_back().or(last);
            let want = match last {
                None => vec![-1, 0],
                Some(k) => {
                    let i = (k as i64 - 1) * 50 / 3;
                    if k == 0 {
                        vec![-1, 0]
                    } else {
                        vec![i, 2 * i]
                    }
                }
            };
            assert_eq!(seen, &want, "h = T·{a}/{b}: slow after doStep {j}");
        }
        for (i, seen) in fast.iter().enumerate() {
            let s = (i as i64 - 1) * 3 / 50;
            let want = if i == 0 {
                vec![-1, 0]
            } else {
                vec![s, doing_of(s as u64) as i64]
            };
            assert_eq!(seen, &want, "h = T·{a}/{b}: fast after step {i}");
        }
    }
}

/// One thread stepping both nodes one after the other (a master on one
/// worker), the slow one by 3T at lag 1: its doStep's second step waits for a
/// frame the fast node can only publish after it. The wait ends within
/// `timeout` (not idleTimeout's 300 s), saying why and what would work.
#[test]
fn a_wait_a_sequential_master_cannot_meet_ends_within_timeout_saying_why() {
    let device = format!("loopback:{}", unique("seqmaster"));
    let [slow, fast] = ["slow", "fast"].map(|name| {
        let (dir, uri) = resources(RATES, name);
        let fmu = Fmu::of(name, Model::load(dir.path()).unwrap(), &uri);
        fmu.set_all(&[("device", &device), ("lag", "1"), ("timeout", "0.3")]);
        assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
        fmu
    });
    let started = std::time::Instant::now();
    assert_eq!(slow.step(0.0, 3.0 / 60.0), fmi2Error);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let message = slow.last_error();
    for part in [
        "no frame for step 1 from node `fast`",
        "this is step 2 of 3 of this node that one master step of 0.05 s takes",
        "give this node lag 3 or more (it runs lag 1)",
        "step the FMUs in threads of their own",
    ] {
        assert!(message.contains(part), "`{message}` lacks `{part}`");
    }
    drop(fast);
}

const TWO_RATES: &str = r#"
name = "tworates"
[[node]]
name = "fast"
slot = 0
period = 0.001
signals = [ { name = "x", type = "Real" }, { name = "n", type = "Integer" } ]
[[node]]
name = "slow"
slot = 1
period = 0.004
signals = [ { name = "y", type = "Real" } ]
"#;

/// The node `name` of [`TWO_RATES`] on `device` at lag 1, recording into `record`.
fn two_rates_node(name: &str, device: &str, record: &str) -> Fmu {
    let (dir, uri) = resources(TWO_RATES, name);
    let fmu = Fmu::of(name, Model::load(dir.path()).unwrap(), &uri);
    fmu.set_all(&[("device", device), ("lag", "1"), ("recordFile", record)]);
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    fmu
}

/// Each step's outputs of one node of [`TWO_RATES`]: the other's values, time
/// and step, as bits.
fn two_rates_outputs(fmu: &Fmu, peer: &str) -> Vec<u64> {
    let signals: &[&str] = if peer == "fast" { &["x"] } else { &["y"] };
    let mut out: Vec<u64> = signals
        .iter()
        .map(|s| fmu.real(&format!("{peer}.{s}")).to_bits())
        .collect();
    out.push(fmu.real(&format!("{peer}.time")).to_bits());
    out.push(fmu.integer(&format!("{peer}.step")) as u64);
    out
}

/// Step `k` of node `name` of [`TWO_RATES`] (period `h`): its inputs set to
/// a function of `k`, the step, which must succeed, and its outputs after it.
fn two_rates_step(fmu: &Fmu, name: &str, k: usize, h: f64) -> Vec<u64> {
    if name == "fast" {
        fmu.set_all(&[
            ("x", &format!("{:?}", (k as f64 * 0.37).sin())),
            ("n", &k.to_string()),
        ]);
    } else {
        fmu.set_all(&[("y", &format!("{:?}", k as f64 * 0.5))]);
    }
    assert_eq!(fmu.step(k as f64 * h, h), fmi2OK, "{:?}", fmu.log());
    two_rates_outputs(fmu, if name == "fast" { "slow" } else { "fast" })
}

/// Two nodes at 1 and 4 ms record their run, in one thread at lag 1 (each
/// communication point in time order, the slow node first); each node then
/// replays alone against its own recording and gets every output bit for bit,
/// its inputs never diverging: the rule on time and the frames' times replay.
#[test]
fn nodes_at_two_rates_record_and_replay_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let rec = |n: &str| dir.path().join(format!("{n}.rec")).display().to_string();
    let device = format!("loopback:{}", unique("tworates"));
    let fast = two_rates_node("fast", &device, &rec("fast"));
    let slow = two_rates_node("slow", &device, &rec("slow"));
    let (mut seen_fast, mut seen_slow) = (Vec::new(), Vec::new());
    for k in 0..400usize {
        if k % 4 == 0 {
            seen_slow.push(two_rates_step(&slow, "slow", k / 4, 0.004));
        }
        seen_fast.push(two_rates_step(&fast, "fast", k, 0.001));
        // The rule: fast step k holds slow's step floor((k - 1) / 4).
        let want = if k == 0 { -1 } else { ((k - 1) / 4) as i32 };
        assert_eq!(fast.integer("slow.step"), want, "fast step {k}");
    }
    assert_eq!(slow.integer("fast.step"), 4 * 99 - 4);
    for fmu in [&fast, &slow] {
        assert_eq!(fmu.terminate(), fmi2OK, "{:?}", fmu.log());
    }
    drop((fast, slow));
    for (name, seen, period) in [("fast", &seen_fast, 0.001), ("slow", &seen_slow, 0.004)] {
        let replay = format!("replay:{}", rec(name));
        let fmu = two_rates_node(name, &replay, "");
        for (k, want) in seen.iter().enumerate() {
            assert_eq!(
                &two_rates_step(&fmu, name, k, period),
                want,
                "{name} step {k}"
            );
        }
        assert_eq!(fmu.integer("replay.divergence"), 0, "{name}");
    }
}

/// `memory_size = 2^40` edited into a packaged FMU's resources (build-fmu
/// refuses such a file): over `loopback:` it once aborted the master in
/// `fmi2ExitInitializationMode` ("memory allocation of 1099511627776 bytes
/// failed"). Now the instance is refused at instantiation, naming the key and
/// its bound, and this process (the master) goes on.
#[test]
fn a_memory_size_of_2_to_the_40_is_refused_and_the_master_survives() {
    let huge = LAB.replacen("[[node]]", "memory_size = 1099511627776\n[[node]]", 1);
    let (_dir, uri) = resources(&huge, "visual");
    let text = refusal("{00000000-0000-0000-0000-000000000000}", &uri);
    assert!(
        text.contains("memory_size 1099511627776")
            && text.contains("at most 268435456 (256 MiB, the largest RFM2g board)"),
        "{text}"
    );
    // The same master instantiates and couples a good node afterwards.
    let fmu = node("visual", &format!("loopback:{}", common::unique("huge")));
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
}

/// A lab whose file gives its device (`shm:`, as between processes), lag and
/// timeout couples with no parameter set by the master (one that cannot set a
/// String, or sets nothing): each FMU starts with the file's values as its
/// parameters' start values, a node's own over the file's.
#[test]
fn a_lab_whose_file_gives_its_settings_couples_with_no_parameter_set() {
    let name = unique("settings");
    let _guard = common::ShmGuard(name.clone());
    let text = format!(
        "name = \"lab\"\ndevice = \"shm:{name}\"\nlag = 1\ntimeout = 5\n{}",
        RATES.replace("name = \"rates\"\nperiod = 0.001\n", "period = 0.001\n")
    )
    .replacen("name = \"slow\"", "name = \"slow\"\nidleTimeout = 60", 1);
    let [fast, slow] = ["fast", "slow"].map(|n| {
        let (dir, uri) = resources(&text, n);
        let model = Model::load(dir.path()).unwrap();
        let xml = model.xml();
        for part in [
            r#"name="device" "#.to_owned(),
            format!(r#"start="shm:{name}""#),
        ] {
            assert!(xml.contains(&part), "{n}: {part}");
        }
        let fmu = Fmu::of(n, model, &uri);
        assert_eq!(fmu.init(), fmi2OK, "{n}: {:?}", fmu.log());
        (fmu, dir)
    });
    let (fast, slow) = (fast.0, slow.0);
    assert_eq!(fast.integer("lag"), 1);
    assert_eq!(fast.real("timeout"), 5.0);
    assert_eq!(slow.real("idleTimeout"), 60.0);
    assert_eq!(fast.real("idleTimeout"), 300.0);
    // At lag 1 one thread steps both, the slow node first at its times.
    let h = 1.0 / 60.0;
    for k in 0..200usize {
        if k * 3 % 50 < 3 {
            let j = k * 3 / 50;
            assert_eq!(slow.step(j as f64 * h, h), fmi2OK, "{:?}", slow.log());
        }
        assert_eq!(
            fast.step(k as f64 * 0.001, 0.001),
            fmi2OK,
            "{:?}",
            fast.log()
        );
    }
}

//! Nodes with periods: the step they declare, any master step taken by the rule
//! on time, a wait a sequential master cannot meet, and two rates recorded and
//! replayed bit for bit.

use super::*;

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

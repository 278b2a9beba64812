//! What an FMU's resources and its interface file's settings decide: resources
//! of another description refused, a memory size too large refused with the
//! master alive, and a lab coupled by its file's settings alone.

use super::*;

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

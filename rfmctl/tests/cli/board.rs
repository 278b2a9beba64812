//! The board and its ring: ring-check, the DMA threshold, interrupts, ping, and
//! an emulated board cut and mended.

use super::*;

#[test]
fn ring_check_passes_on_a_closed_ring_and_fails_on_an_open_fibre() {
    let (ring, lib, dev) = board(3);
    let (code, out, err) = run(&["--library", &lib, "ring-check", &dev]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("ring continuity OK: a packet from node 3 came back"),
        "{out}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args(["--library", &lib, "ring-check", "/dev/rfm2g0"])
        .env(
            "RFM2G_SIM_DEVICES",
            format!("/dev/rfm2g0 ring={} node=4 size=64K link=down", ring.0),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ring continuity FAILED on `/dev/rfm2g0`")
            && err.contains("RFM2G_LINK_TEST_FAIL"),
        "{err}"
    );
}

#[test]
fn the_dma_threshold_is_shown_set_per_board_and_turned_off() {
    let (_ring, lib, dev) = board(1);
    let other = dev.replace("/1/64K", "/2/64K");
    let threshold = |args: &[&str]| {
        let mut all = vec!["--library", &lib, "dma-threshold"];
        all.extend(args);
        run(&all)
    };
    let (code, out, err) = threshold(&[&dev]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("off (every RFM2gRead is PIO in the driver)"),
        "{out}"
    );
    let (code, out, err) = threshold(&[&dev, "64"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(": 64 bytes (RFM2gRead calls"), "{out}");
    let (_, out, _) = threshold(&[&dev]);
    assert!(out.contains(": 64 bytes"), "kept by the board: {out}");
    let (_, out, _) = threshold(&[&other]);
    assert!(out.contains("off"), "another board has its own: {out}");
    let (code, out, _) = threshold(&[&dev, "off"]);
    assert_eq!(code, 0);
    assert!(out.contains("off"), "{out}");
    let (code, _, err) = threshold(&[&dev, "64k"]);
    assert_eq!(code, 2);
    assert!(err.contains("`64k` is not a DMA threshold"), "{err}");
}

#[test]
fn interrupts_sent_by_one_node_are_received_by_another() {
    let (_ring, lib, dev1) = board(1);
    let dev2 = dev1.replace("/1/64K", "/2/64K");
    let waiter = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args([
            "--library",
            &lib,
            "events",
            "wait",
            &dev2,
            "--type",
            "intr2",
            "--timeout-ms",
            "10000",
            "--count",
            "2",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Sends are latched only once the waiter enabled the interrupt, which it
    // says on stderr.
    let mut waiter = Following::new(waiter);
    waiter.until("rfmctl: waiting for 2 INTR2");
    for (sent, data) in ["40", "41"].into_iter().enumerate() {
        let (code, out, err) = run(&[
            "--library",
            &lib,
            "events",
            "send",
            &dev1,
            "--to",
            "2",
            "--type",
            "intr2",
            "--data",
            data,
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out,
            format!(
                "sent INTR2 with data {:#010x} from node 1 to node 2\n",
                40 + sent
            )
        );
    }
    let (status, text, errors) = waiter.finish();
    assert!(status.success(), "{errors}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, data) in lines.into_iter().zip([40, 41]) {
        assert_eq!(
            line,
            format!("INTR2 from node 1, data {data:#010x} ({data})")
        );
    }
}

#[test]
fn events_wait_times_out_and_send_refuses_bad_arguments_with_the_rule() {
    let (_ring, lib, dev1) = board(1);
    let dev2 = dev1.replace("/1/64K", "/2/64K");
    let (code, _, err) = run(&[
        "--library",
        &lib,
        "events",
        "wait",
        &dev2,
        "--timeout-ms",
        "30",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no INTR1 reached") && err.contains("within 30 ms"),
        "{err}"
    );
    let (code, _, err) = run(&["--library", &lib, "events", "send", &dev1, "--to", "1"]);
    assert_eq!(code, 3);
    assert!(err.contains("RFM2G_NODE_ID_SELF"), "{err}");
    let (code, _, err) = run(&["--library", &lib, "events", "send", &dev1, "--to", "300"]);
    assert_eq!(code, 2);
    assert!(err.contains("--to `300` is not a node id"), "{err}");
    let (code, _, err) = run(&[
        "--library",
        &lib,
        "events",
        "send",
        &dev1,
        "--type",
        "intr9",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("`intr9` is not a network interrupt"), "{err}");
}

#[test]
fn ping_measures_round_trips_in_one_process_and_in_two() {
    let m = shm(64 << 10);
    let (code, out, err) = run(&[
        "ping", &m.device, "--slot", "4", "--peer", "5", "--both", "--count", "2000",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("2000 round trips slot 4 -> 5 -> 4"),
        "{out}"
    );
    assert!(
        out.contains("round trip ns: min ") && out.contains(" p99.9 "),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.contains(" ns |#")),
        "a histogram: {out}"
    );

    let (_ring, lib, dev) = board(1);
    let echo = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
        .args([
            "--library",
            &lib,
            "ping",
            &dev.replace("/1/64K", "/2/64K"),
            "--slot",
            "1",
            "--peer",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (code, out, err) = run(&[
        "--library",
        &lib,
        "ping",
        &dev,
        "--slot",
        "0",
        "--peer",
        "1",
        "--count",
        "1000",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("1000 round trips slot 0 -> 1 -> 0"),
        "{out}"
    );
    let echoed = echo.wait_with_output().unwrap();
    assert!(echoed.status.success());
    assert!(String::from_utf8_lossy(&echoed.stdout).contains("answered 1100 pings"));
}

#[test]
fn a_ping_nobody_answers_fails_with_a_hint() {
    let m = shm(64 << 10);
    let (code, _, err) = run(&[
        "ping",
        &m.device,
        "--slot",
        "0",
        "--peer",
        "1",
        "--timeout",
        "1",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no answer to ping 0 from slot 1 within 1 s"),
        "{err}"
    );
    assert!(err.contains("--slot 1 --peer 0"), "{err}");
    let (code, _, err) = run(&["ping", &m.device, "--slot", "3", "--peer", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("a ping needs two slots"), "{err}");
}

/// `cut` and `mend` on an emulated board: a program holding the board's
/// memory (this test, through rfm-core) stops seeing the other board's stores
/// and the ring check fails, until `mend`; a device that is no emulated board
/// is a usage error.
#[test]
fn cut_and_mend_an_emulated_board_while_a_program_holds_its_memory() {
    let (ring, lib, dev) = board(3);
    let other = format!("/dev/rfm2g-sim/{}/4/64K", ring.0);
    let options = OpenOptions {
        rfm2g_library: Some(PathBuf::from(&lib)),
        ..OpenOptions::default()
    };
    let (mine, theirs) = (
        Device::open(&dev, &options).unwrap(),
        Device::open(&other, &options).unwrap(),
    );
    // A node of the attitude pair on this board, for watch to show.
    publish_attitude(&mine.map(0, 1 << 16).unwrap(), 3, 0);
    let (mine, theirs) = (mine.map(0, 4096).unwrap(), theirs.map(0, 4096).unwrap());
    theirs.store_u32(0, 1, Ordering::SeqCst).unwrap();
    assert_eq!(mine.load_u32(0, Ordering::SeqCst).unwrap(), 1);

    let (code, out, err) = run(&["--library", &lib, "cut", &dev]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!(
            "`{dev}` (node 3 of ring `{}`) cut from its ring",
            ring.0
        )),
        "{out}"
    );
    // This process moves its view within the emulator's watch interval.
    let began = Instant::now();
    let mut k = 1;
    while mine.load_u32(0, Ordering::SeqCst).unwrap() == k {
        k += 1;
        theirs.store_u32(0, k, Ordering::SeqCst).unwrap();
        std::thread::sleep(Duration::from_millis(1));
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "the cut did not reach this process"
        );
    }
    let (code, _, err) = run(&["--library", &lib, "ring-check", &dev]);
    assert_eq!(code, 1, "{err}");
    // watch and doctor on the cut board name its open ring.
    let (code, v, err) = watch_json(&[
        "--library",
        &lib,
        "watch",
        &dev,
        "--slots",
        "3",
        "--once",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let open = v["ring_open"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        open.contains("LCSR") && open.contains("RFM2gCheckRingCont fails"),
        "{open}"
    );
    let (code, table, _) = run(&["--library", &lib, "watch", &dev, "--slots", "3", "--once"]);
    assert_eq!(code, 0);
    assert!(
        table.contains("the ring is open at this board (LCSR") && table.contains("fibre into"),
        "{table}"
    );
    let (code, out, _) = run(&["--library", &lib, "doctor", &dev, "--seconds", "0.1"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL  ring") && out.contains("the ring is open at this board"),
        "{out}"
    );

    let (code, out, err) = run(&["--library", &lib, "mend", &dev]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!("`{dev}` (node 3 of ring `{}`) mended", ring.0)),
        "{out}"
    );
    let (code, _, err) = run(&["--library", &lib, "ring-check", &dev]);
    assert_eq!(code, 0, "{err}");
    let began = Instant::now();
    while mine.load_u32(0, Ordering::SeqCst).unwrap() != k {
        std::thread::sleep(Duration::from_millis(1));
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "the mend did not reach this process"
        );
    }

    let (code, _, err) = run(&["cut", "shm:rfmctl-cut"]);
    assert_eq!(code, 2);
    assert!(err.contains("is not an RFM2g device"), "{err}");
}

/// `cut` of a board of a ring no program opened (a typo, or `/dev/rfm2gN`
/// without the simulators' configuration) is refused naming the ring, and
/// makes no memory: neither the ring nor the cut board's island.
#[test]
fn cutting_a_board_of_a_ring_nobody_opened_is_refused_and_creates_nothing() {
    let (ring, lib, dev) = board(2);
    let objects = || -> Vec<String> {
        (std::fs::read_dir("/dev/shm").unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(&ring.0))
            .collect()
    };
    for verb in ["cut", "mend"] {
        let out = Command::new(env!("CARGO_BIN_EXE_rfmctl"))
            .args(["--library", &lib, verb, &dev])
            .env_remove("RFM2G_SIM_DEVICES")
            .env_remove("RFM2G_SIM_CONFIG")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{verb}: {err}");
        assert!(
            err.contains(&format!(
                "it is node 2 of ring `{}`, which no program has opened a board of",
                ring.0
            )),
            "{verb}: {err}"
        );
        assert_eq!(objects(), Vec::<String>::new(), "{verb} made memory");
    }
}

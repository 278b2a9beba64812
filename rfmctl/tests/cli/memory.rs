//! Reading and writing the memory: peek, poke, dump, fill and info on `shm:` and
//! through the RFM2g library, and the rules a bad access breaks.

use super::*;

#[test]
fn peek_poke_dump_fill_on_shared_memory() {
    let m = shm(64 << 10);
    let d = m.device.as_str();
    let (code, out, err) = run(&["poke", d, "0x100", "0xdeadbeef"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "0x00000100: 0xdeadbeef (3735928559) (written 0xdeadbeef)\n"
    );
    let region = m.memory.map(0x100, 8).unwrap();
    assert_eq!(
        region.peek(0, 4).unwrap(),
        0xdead_beef,
        "the write reached the memory"
    );
    for (offset, width, expect) in [
        ("0x100", "8", "0x00000100: 0xef (239)\n"),
        ("0x102", "16", "0x00000102: 0xdead (57005)\n"),
        (
            "0x100",
            "64",
            "0x00000100: 0x00000000deadbeef (3735928559)\n",
        ),
    ] {
        let (code, out, err) = run(&["peek", d, offset, "--width", width]);
        assert_eq!((code, out.as_str()), (0, expect), "{err}");
    }
    let (code, _, _) = run(&["poke", d, "0x108", "0x0123456789abcdef", "--width", "64"]);
    assert_eq!(code, 0);
    assert_eq!(
        m.memory.map(0x108, 8).unwrap().peek(0, 8).unwrap(),
        0x0123_4567_89ab_cdef
    );
    let (code, out, _) = run(&["dump", d, "0xfe", "20"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "000000fe  00 00 ef be ad de 00 00  00 00 ef cd ab 89 67 45  |..............gE|\n\
         0000010e  23 01 00 00                                       |#...|\n"
    );
    let (code, out, _) = run(&["fill", d, "0x200", "16", "0x5a"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "filled 16 bytes at 0x00000200 with 0x5a\n")
    );
    let mut back = [0u8; 24];
    m.memory.map(0x1fc, 24).unwrap().read(0, &mut back).unwrap();
    assert_eq!(
        back,
        [[0u8; 4].as_slice(), &[0x5a; 16], &[0; 4]]
            .concat()
            .as_slice()
    );
}

#[test]
fn bad_accesses_are_refused_with_the_rule_and_the_right_status() {
    let m = shm(64 << 10);
    let d = m.device.as_str();
    for (args, code, part) in [
        (vec!["peek", d, "0x102"], 3, "offset 0x102 of `shm:"),
        (
            vec!["peek", d, "0x102"],
            3,
            "a 32-bit access must be aligned to 4 bytes",
        ),
        (
            vec!["peek", d, "0x104", "--width", "64"],
            3,
            "must be aligned to 8 bytes",
        ),
        (
            vec!["peek", d, "0x10000"],
            3,
            "4 bytes at offset 0x10000 are outside the 65536-byte memory",
        ),
        (
            vec!["peek", d, "0xfffe", "--width", "32"],
            3,
            "not a multiple of 4",
        ),
        (
            vec!["dump", d, "0xfff0", "32"],
            3,
            "32 bytes at offset 0xfff0 are outside",
        ),
        (
            vec!["dump", d, "18446744073709551615", "2"],
            3,
            "are outside",
        ),
        (
            vec!["poke", d, "0", "256", "--width", "8"],
            2,
            "value 0x100 does not fit in 8 bits",
        ),
        (vec!["fill", d, "2", "8", "0"], 3, "must be multiples of 4"),
        (
            vec!["fill", d, "0", "8", "300"],
            2,
            "does not fit in 8 bits",
        ),
        (vec!["peek", d, "12x"], 2, "`12x` is not a number"),
        (
            vec!["peek", d, "0", "--width", "12"],
            2,
            "invalid value '12'",
        ),
        (
            vec!["info", "shm:no-such-memory-here"],
            3,
            "does not exist: no program has created",
        ),
        (
            vec!["info", "loopback:x"],
            2,
            "exists only inside the process that made it",
        ),
        (vec!["info", "udp:x"], 2, "not a form this FMU knows"),
        (
            vec!["ring-check", d],
            2,
            "is not an RFM2g board: the ring continuity test needs one",
        ),
        (
            vec!["dma-threshold", d],
            2,
            "is not an RFM2g board: the DMA threshold needs one",
        ),
        (vec!["events", "send", d], 2, "is not an RFM2g board"),
        (vec!["events", "wait", d], 2, "is not an RFM2g board"),
        (
            vec![
                "--library",
                "/nonexistent/librfm2g.so",
                "info",
                "/dev/rfm2g0",
            ],
            3,
            "could not load the RFM2g library `/nonexistent/librfm2g.so`",
        ),
    ] {
        let (got, _, err) = run(&args);
        assert_eq!(got, code, "{args:?}: {err}");
        assert!(err.contains(part), "{args:?}: `{err}` lacks `{part}`");
    }
}

#[test]
fn info_describes_shared_memory_and_emulated_boards() {
    let m = shm(1 << 20);
    let (code, out, _) = run(&["info", &m.device]);
    assert_eq!(code, 0);
    assert!(
        out.contains("kind        POSIX shared memory /dev/shm/"),
        "{out}"
    );
    assert!(out.contains("memory      1048576 bytes (1 MiB)"), "{out}");
    assert!(
        out.contains("owner       uid ") && out.contains("(you), mode 600"),
        "{out}"
    );

    let (_ring, lib, dev) = board(7);
    let (code, out, err) = run(&["--library", &lib, "info", &dev]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "kind        RFM2g board",
        "node id     7",
        "board id    0x65",
        "memory      65536 bytes (64 KiB)",
        "driver      rfm2g-sim 0.1.0",
    ] {
        assert!(out.contains(line), "`{line}` missing from:\n{out}");
    }
    assert!(out.contains(&format!("library     {lib}")), "{out}");
}

#[test]
fn memory_access_through_the_rfm2g_library_reaches_the_ring() {
    let (_ring, lib, dev) = board(1);
    let (code, _, err) = run(&[
        "--library",
        &lib,
        "poke",
        &dev,
        "0x2000",
        "0x51",
        "--width",
        "16",
    ]);
    assert_eq!(code, 0, "{err}");
    let other = dev.replace("/1/64K", "/2/64K");
    let (code, out, _) = run(&["--library", &lib, "peek", &other, "0x2000", "--width", "16"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "0x00002000: 0x0051 (81)\n"),
        "another node sees it"
    );
    let (code, _, err) = run(&["--library", &lib, "peek", &dev, "65536"]);
    assert_eq!(code, 3);
    assert!(err.contains("outside the 65536-byte memory"), "{err}");
}

/// `dump --decode` names each part of a node's area in the range, with the
/// signals of a ring entry by name, from the node's descriptor alone.
#[test]
fn dump_decode_names_the_parts_of_an_area_and_its_signals() {
    let m = shm(64 << 10);
    let region = m.memory.map(0, interface::attitude_region_len(1)).unwrap();
    publish_attitude(&region, 1, 3);
    let area = interface::attitude_area(1);
    let ring = Ring::of(&area);
    // From the area's start into the first bytes of ring entry 4.
    let (code, out, err) = run(&[
        "dump",
        &m.device,
        &format!("{:#x}", area.offset),
        &(ring.entry_offset(4) + 8).to_string(),
        "--decode",
    ]);
    assert_eq!(code, 0, "{err}");
    for part in [
        "0x00001000-0x0000107f  node `slot1` (slot 1): head, newest frame (low 32 bits) 3",
        "0x00001080-0x000010bf  node `slot1` (slot 1): liveness, owner token 0x00000000",
        "node `slot1` (slot 1): descriptor of interface `rfm_attitude`",
        "5 signals, a ring of 16 frames",
        "node `slot1` (slot 1): ring entry 3: frame 3 (step 2), t = 0.003, session 0x12345679: roll=0.25 rad, pitch=-0.5 rad, yaw=1 rad, status=7, message=\"slot 1\"",
        "ring entry 4: empty",
    ] {
        assert!(out.contains(part), "`{part}` missing:\n{out}");
    }
    assert!(
        !out.contains("ring entry 5"),
        "only the range asked for:\n{out}"
    );
    // A range no area meets.
    let (code, out, _) = run(&["dump", &m.device, "0xf000", "64", "--decode"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no node's area described in this range: 1 nodes describe themselves"),
        "{out}"
    );
}

//! Every error a user can meet opening a device: the variant and the message that
//! tells them what was wrong and what to do.
#![cfg(not(miri))]

mod common;

use rfm_memory::backend::loopback::LoopbackError;
use rfm_memory::backend::rfm2g::BoardError;
use rfm_memory::backend::shm::ShmError;
use rfm_memory::{Device, DeviceError, DeviceSpec, OpenOptions};

fn open(device: &str) -> DeviceError {
    Device::open(device, &OpenOptions::default()).unwrap_err()
}

fn assert_msg(err: &DeviceError, parts: &[&str]) {
    let text = err.to_string();
    for part in parts {
        assert!(text.contains(part), "`{text}` lacks `{part}`");
    }
}

#[test]
fn device_strings_are_parsed_into_the_three_forms() {
    assert_eq!(
        DeviceSpec::parse("/dev/rfm2g0").unwrap(),
        DeviceSpec::Rfm2g {
            path: "/dev/rfm2g0".into()
        }
    );
    assert_eq!(
        DeviceSpec::parse(r"\\.\rfm2g1").unwrap(),
        DeviceSpec::Rfm2g {
            path: r"\\.\rfm2g1".into()
        }
    );
    assert_eq!(
        DeviceSpec::parse("shm:sim-A_1.x").unwrap(),
        DeviceSpec::Shm {
            name: "sim-A_1.x".into()
        }
    );
    assert_eq!(
        DeviceSpec::parse("loopback:any name/ok").unwrap(),
        DeviceSpec::Loopback {
            name: "any name/ok".into()
        }
    );
}

#[test]
fn malformed_device_strings_name_the_accepted_forms() {
    let err = open("");
    assert!(matches!(err, DeviceError::Empty));
    assert_msg(
        &err,
        &[
            "empty",
            "/dev/rfm2gN",
            "shm:NAME",
            "loopback:NAME",
            "replay:PATH",
        ],
    );
    for device in ["tcp:127.0.0.1", "rfm2g0", "SHM:x", "dev/rfm2g0"] {
        let err = open(device);
        assert!(
            matches!(err, DeviceError::UnknownForm { .. }),
            "{device}: {err:?}"
        );
        assert_msg(&err, &[device, "shm:NAME"]);
    }
    // A misspelt prefix: the form it most likely meant.
    assert_msg(&open("smh:hawk"), &["did you mean `shm:hawk`?"]);
    assert_msg(&open("lopback:a"), &["did you mean `loopback:a`?"]);
}

/// A path that names no RFM2g board form (the driver's `/dev/rfm2gN` or
/// `\\.\rfm2gN`, the emulator's `/dev/rfm2g-sim/…`) is refused before any
/// library is loaded, naming the nearest form: `/dev/rfmg20` used to pass
/// (build-fmu exit 0) and, without a vendor library, earn advice to build one.
#[test]
fn a_board_path_of_no_known_form_is_refused_naming_the_nearest() {
    for (device, meant) in [
        ("/dev/rfmg20", Some("/dev/rfm2g0")),
        ("/dev/rfm2g", Some("/dev/rfm2g0")),
        ("/dev/rfm2h1", Some("/dev/rfm2g1")),
        (r"\\.\rfmg21", Some(r"\\.\rfm2g1")),
        ("/dev/nosuchboard", None),
        ("/dev/rfm2g-sim/", None),
    ] {
        let err = open(device);
        assert!(
            matches!(err, DeviceError::BadDevice { .. }),
            "{device}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("no RFM2g board path"), "{text}");
        assert!(text.contains("/dev/rfm2gN"), "{text}");
        match meant {
            Some(m) => assert!(text.contains(&format!("(did you mean `{m}`?)")), "{text}"),
            None => assert!(!text.contains("did you mean"), "{text}"),
        }
        // The interface files' device setting keeps the same rule.
        assert!(rfm_memory::DeviceSetting::parse(device).is_err());
    }
    for device in [
        "/dev/rfm2g0",
        "/dev/rfm2g255",
        r"\\.\rfm2g3",
        "/dev/rfm2g-sim/lab/2/1M",
    ] {
        assert!(DeviceSpec::parse(device).is_ok(), "{device}");
    }
}

#[test]
fn bad_names_are_refused_with_the_rule() {
    let long = format!("shm:{}", "n".repeat(201));
    let cases: &[(&str, &str)] = &[
        ("shm:", "empty"),
        ("shm:a/b", "'/' is not allowed"),
        ("shm:a b", "' ' is not allowed"),
        ("shm:..", "not a usable name"),
        (&long, "at most 200"),
        ("loopback:", "empty"),
        ("/dev/rfm2g\0", "NUL"),
        // A shm: memory's file given as a path: not taken for a board.
        ("/dev/shm/lab", "not RFM2g boards: did you mean `shm:lab`?"),
        ("/dev/shm/a b", "name it as `shm:NAME`"),
    ];
    for (device, part) in cases {
        let err = open(device);
        assert!(
            matches!(err, DeviceError::BadDevice { .. }),
            "{device:?}: {err:?}"
        );
        assert_msg(&err, &[part]);
    }
    let err = open(&format!("loopback:{}", "n".repeat(256)));
    assert_msg(&err, &["at most 255"]);
    assert!(Device::open(&format!("shm:{}", "n".repeat(200)), &OpenOptions::default()).is_ok());
    let _ = rfm_memory::backend::shm::unlink(&"n".repeat(200));
}

#[test]
fn unusable_sizes_are_refused() {
    for size in [0, 6] {
        let options = OpenOptions {
            memory_size: size,
            rfm2g_library: None,
            existing_only: false,
            dma_reads_from: None,
        };
        let err = Device::open("loopback:sizes", &options).unwrap_err();
        assert!(matches!(err, DeviceError::BadSize { .. }), "{err:?}");
        assert_msg(&err, &[&format!("size of {size} bytes")]);
    }
}

#[test]
fn a_memory_of_another_size_is_an_error_not_a_remap() {
    for device in [
        format!("shm:{}", common::unique("size")),
        format!("loopback:{}", common::unique("size")),
    ] {
        let _guard = common::ShmGuard(device.trim_start_matches("shm:").to_owned());
        let _first = Device::open(&device, &OpenOptions::default()).unwrap();
        let err = Device::open(
            &device,
            &OpenOptions {
                memory_size: 2 << 20,
                rfm2g_library: None,
                existing_only: false,
                dma_reads_from: None,
            },
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                DeviceError::Shm(ShmError::SizeMismatch {
                    expected: 2097152,
                    found: 1048576,
                    ..
                }) | DeviceError::Loopback(LoopbackError::SizeMismatch {
                    expected: 2097152,
                    found: 1048576,
                    ..
                })
            ),
            "{err:?}"
        );
        assert_msg(
            &err,
            &[&device, "holds 1048576 bytes but 2097152 were asked for"],
        );
    }
}

/// Creates `/name` with `mode` outside our API, as another program would.
fn create_foreign(name: &str, mode: libc::mode_t) -> libc::c_int {
    let path = std::ffi::CString::new(format!("/{name}")).unwrap();
    // SAFETY: valid C string; the returned descriptor is checked.
    let fd = unsafe {
        libc::shm_open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            mode,
        )
    };
    assert!(fd >= 0, "shm_open: {}", std::io::Error::last_os_error());
    // SAFETY: fd is open; fchmod overrides the umask so the mode is exactly `mode`.
    let status = unsafe { libc::ftruncate(fd, 1 << 20) + libc::fchmod(fd, mode) };
    assert_eq!(status, 0, "{}", std::io::Error::last_os_error());
    fd
}

#[test]
fn shared_memory_created_here_is_owner_only() {
    let name = common::unique("mode");
    let _guard = common::ShmGuard(name.clone());
    let _d = Device::open(&format!("shm:{name}"), &OpenOptions::default()).unwrap();
    let meta = std::fs::metadata(format!("/dev/shm/{name}")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
}

#[test]
fn shared_memory_others_can_write_is_refused() {
    let name = common::unique("open");
    let _guard = common::ShmGuard(name.clone());
    let fd = create_foreign(&name, 0o666);
    // SAFETY: closing the descriptor we opened.
    unsafe { libc::close(fd) };
    let err = open(&format!("shm:{name}"));
    assert!(
        matches!(
            err,
            DeviceError::Shm(ShmError::OpenToOthers { mode: 0o666, .. })
        ),
        "{err:?}"
    );
    assert_msg(&err, &["mode 666", "refusing"]);
}

#[test]
fn shared_memory_of_another_user_is_refused() {
    let name = common::unique("owner");
    let _guard = common::ShmGuard(name.clone());
    let fd = create_foreign(&name, 0o600);
    // SAFETY: fd is open; giving the object away needs root (CI runs as root).
    let chowned = unsafe { libc::fchown(fd, 4242, 4242) } == 0;
    // SAFETY: closing the descriptor we opened.
    unsafe { libc::close(fd) };
    if !chowned {
        eprintln!(
            "not root: cannot give a shm object to another user; ownership check not exercised"
        );
        return;
    }
    let err = open(&format!("shm:{name}"));
    assert!(
        matches!(&err, DeviceError::Shm(ShmError::NotOwner { owner, .. }) if owner == "uid 4242"),
        "{err:?}"
    );
    assert_msg(&err, &["owned by uid 4242", "refusing"]);
}

#[test]
fn a_missing_vendor_library_says_which_and_how_to_build_it() {
    let options = OpenOptions {
        rfm2g_library: Some("/nonexistent/librfm2g.so".into()),
        ..OpenOptions::default()
    };
    let err = Device::open("/dev/rfm2g0", &options).unwrap_err();
    assert!(
        matches!(err, DeviceError::Board(BoardError::LibraryNotLoaded { .. })),
        "{err:?}"
    );
    assert_msg(
        &err,
        &[
            "/nonexistent/librfm2g.so",
            "gcc -shared -fPIC -O2 api/*.c -lpthread -o librfm2g.so",
            "rfm2gLibrary",
        ],
    );
}

#[test]
fn the_default_vendor_library_is_librfm2g_so() {
    let ring = common::unique("default-lib");
    let _ring = common::RingGuard(ring.clone());
    match Device::open(
        &format!("/dev/rfm2g-sim/{ring}/0/64K"),
        &OpenOptions::default(),
    ) {
        Err(err @ DeviceError::Board(BoardError::LibraryNotLoaded { .. })) => {
            assert_msg(&err, &["`librfm2g.so`", "LD_LIBRARY_PATH"])
        }
        // `cargo test` puts target/debug, where the emulator is built, on the
        // library search path.
        Ok(device) => assert_eq!(device.info().library.as_deref(), Some("librfm2g.so")),
        // A vendor library on the search path: it knows no such board.
        Err(DeviceError::Rfm2g(e)) => assert_eq!(e.call, "RFM2gOpen"),
        other => panic!("unexpected: {other:?}"),
    }
}

#[test]
fn a_library_without_the_rfm2g_symbols_names_the_missing_one() {
    let options = OpenOptions {
        rfm2g_library: Some("libc.so.6".into()),
        ..OpenOptions::default()
    };
    let err = Device::open("/dev/rfm2g0", &options).unwrap_err();
    assert!(
        matches!(
            err,
            DeviceError::Board(BoardError::SymbolMissing {
                symbol: "RFM2gOpen",
                ..
            })
        ),
        "{err:?}"
    );
    assert_msg(
        &err,
        &["libc.so.6", "`RFM2gOpen`", "not an RFM2g API library"],
    );
}

#[test]
fn vendor_statuses_become_typed_errors_with_the_vendors_text() {
    let options = OpenOptions {
        rfm2g_library: Some(common::sim_library()),
        ..OpenOptions::default()
    };
    // A board no emulator configuration names.
    let err = Device::open("/dev/rfm2g9", &options).unwrap_err();
    let DeviceError::Rfm2g(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (e.call, e.code, e.name),
        ("RFM2gOpen", 10, "RFM2G_NO_RFM2G_BOARD")
    );
    assert_eq!(e.message, "No RFM2g board at that device path");
    assert_msg(
        &err,
        &[
            "RFM2gOpen on `/dev/rfm2g9` failed with RFM2G_NO_RFM2G_BOARD (10)",
            "check the device path",
        ],
    );
}

/// Tools that inspect memory open a `shm:` object only if it exists, in one call:
/// nothing is created, even when the object vanishes between a look and the open.
#[cfg(not(miri))]
#[test]
fn an_existing_only_open_never_creates_memory_and_takes_the_objects_own_size() {
    let name = common::unique("existing");
    let _guard = common::ShmGuard(name.clone());
    let device = format!("shm:{name}");
    let existing = OpenOptions {
        existing_only: true,
        ..OpenOptions::default()
    };
    let err = Device::open(&device, &existing).unwrap_err();
    assert!(
        matches!(err, DeviceError::Shm(ShmError::NoSuchMemory { .. })),
        "{err:?}"
    );
    assert_msg(&err, &[&device, "does not exist: no program has created"]);
    assert!(
        rfm_memory::backend::shm::stat(&name).is_err(),
        "an inspecting open created the object"
    );
    let made = Device::open(
        &device,
        &OpenOptions {
            memory_size: 64 << 10,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let seen = Device::open(&device, &existing).unwrap();
    assert_eq!((made.info().size, seen.info().size), (64 << 10, 64 << 10));
}

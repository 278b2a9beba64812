//! The emulator behaves as the vendor library where a program can tell: the same
//! status for the same misuse, page rules for mappings, one memory per ring, and
//! network interrupts with their data to the addressed node or to all.

#[path = "../support/library.rs"]
mod support;

use std::ffi::{c_void, CStr, CString};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use rfm2g::*;
use rfm2g_sys::ffi::{RFM2GCONFIG, RFM2GEVENTINFO, RFM2GHANDLE};
use support::{unique, RingGuard};

mod events;
mod memory;

const SUCCESS: i32 = 0;
const NOT_IMPLEMENTED: i32 = 1;
const TIMED_OUT: i32 = 3;
const MEM_NOT_MAPPED: i32 = 5;
const EVENT_IN_USE: i32 = 7;
const NOT_OPEN: i32 = 9;
const NO_BOARD: i32 = 10;
const BAD_PARAMETER_1: i32 = 11;
const BAD_PARAMETER_2: i32 = 12;
const BAD_PARAMETER_3: i32 = 13;
const BAD_PARAMETER_4: i32 = 14;
const OUT_OF_RANGE: i32 = 20;
const LINK_TEST_FAIL: i32 = 22;
const UNALIGNED_OFFSET: i32 = 24;
const HANDLE_NOT_NULL: i32 = 29;
const NOT_ENABLED: i32 = 31;
const ALREADY_ENABLED: i32 = 32;
const NULL_DESCRIPTOR: i32 = 35;
const WAIT_EVENT_CANCELED: i32 = 36;
const NODE_ID_SELF: i32 = 41;
const INTR1: i32 = 1;
const INTR2: i32 = 2;
const BAD_DATA: i32 = 5;
const LAST: i32 = 12;
const ALL: u16 = 0xFFFF;
const OWNDATA: u32 = 1 << 0;
const SIGDET: u32 = 1 << 2;
const SNCLOST: u32 = 1 << 3;

/// An open emulated board; closed on drop.
struct Board(RFM2GHANDLE);

impl Board {
    fn open(path: &str) -> Board {
        let mut h: RFM2GHANDLE = null_mut();
        let c = CString::new(path).unwrap();
        // SAFETY: valid C string and handle variable.
        let status = unsafe { RFM2gOpen(c.as_ptr().cast_mut(), &mut h) };
        assert_eq!(status, SUCCESS, "open {path}");
        Board(h)
    }

    fn wait(&self, ty: i32, timeout_ms: u32) -> (i32, u16, u32) {
        let mut info = RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: ty,
            Timeout: timeout_ms,
            NodeId: 0xEEEE,
            pDrvSpec: null_mut(),
        };
        // SAFETY: open handle, valid in/out struct.
        let status = unsafe { RFM2gWaitForEvent(self.0, &mut info) };
        (status, info.NodeId, info.ExtendedInfo)
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: a handle variable from RFM2gOpen.
        assert_eq!(unsafe { RFM2gClose(&mut self.0) }, SUCCESS);
    }
}

/// Two boards (nodes 1 and 2) on a fresh ring of `size`.
fn ring(size: &str) -> (RingGuard, Board, Board) {
    let name = unique("api");
    let a = Board::open(&format!("/dev/rfm2g-sim/{name}/1/{size}"));
    let b = Board::open(&format!("/dev/rfm2g-sim/{name}/2/{size}"));
    (RingGuard(name), a, b)
}

fn msg(code: i32) -> String {
    // SAFETY: RFM2gErrorMsg returns a static C string.
    unsafe { CStr::from_ptr(RFM2gErrorMsg(code)) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn opening_checks_its_arguments_and_the_path() {
    let mut h: RFM2GHANDLE = null_mut();
    let path = CString::new("/dev/rfm2g-sim/x/1").unwrap();
    // SAFETY: each call passes what its line says: NULLs, or valid pointers.
    unsafe {
        assert_eq!(RFM2gOpen(null_mut(), &mut h), BAD_PARAMETER_1);
        assert_eq!(
            RFM2gOpen(path.as_ptr().cast_mut(), null_mut()),
            BAD_PARAMETER_2
        );
        let mut not_null = 1usize as RFM2GHANDLE;
        assert_eq!(
            RFM2gOpen(path.as_ptr().cast_mut(), &mut not_null),
            HANDLE_NOT_NULL
        );
        for bad in [
            "/dev/nosuchboard",
            "/dev/rfm2g-sim/only-ring",
            "/dev/rfm2g-sim/r/300",
        ] {
            let c = CString::new(bad).unwrap();
            assert_eq!(RFM2gOpen(c.as_ptr().cast_mut(), &mut h), NO_BOARD, "{bad}");
            assert!(h.is_null());
        }
    }
    assert_eq!(msg(NO_BOARD), "No RFM2g board at that device path");
    assert_eq!(msg(9999), "Unknown RFM2G_STATUS");
}

#[test]
fn bad_and_closed_handles_are_refused_not_followed() {
    let (_g, a, _b) = ring("64K");
    let mut size = 0u32;
    let mut closed = Board::open(&format!("/dev/rfm2g-sim/{}/3/64K", _g.0));
    let stale = closed.0;
    // SAFETY: handle variable from RFM2gOpen.
    assert_eq!(unsafe { RFM2gClose(&mut closed.0) }, SUCCESS);
    assert!(closed.0.is_null());
    std::mem::forget(closed);
    // SAFETY: the handles are NULL, made up, or closed: the library must not
    // follow them; `size` is a valid out pointer.
    unsafe {
        assert_eq!(RFM2gSize(null_mut(), &mut size), NULL_DESCRIPTOR);
        assert_eq!(
            RFM2gSize(0xdead_beef as RFM2GHANDLE, &mut size),
            NULL_DESCRIPTOR
        );
        assert_eq!(RFM2gSize(stale, &mut size), NOT_OPEN);
        let mut again = stale;
        assert_eq!(RFM2gClose(&mut again), NOT_OPEN);
        assert_eq!(RFM2gClose(null_mut()), BAD_PARAMETER_1);
        assert_eq!(RFM2gSize(a.0, null_mut()), BAD_PARAMETER_2);
        assert_eq!(RFM2gSize(a.0, &mut size), SUCCESS);
    }
    assert_eq!(size, 64 << 10);
}

#[test]
fn accessors_and_config_describe_the_board() {
    let (g, a, b) = ring("128K");
    let (mut node, mut board, mut first, mut size) = (0u16, 0u8, 7u32, 0u32);
    // SAFETY: open handles, valid out pointers.
    unsafe {
        assert_eq!(RFM2gNodeID(b.0, &mut node), SUCCESS);
        assert_eq!(RFM2gBoardID(b.0, &mut board), SUCCESS);
        assert_eq!(RFM2gFirst(b.0, &mut first), SUCCESS);
        assert_eq!(RFM2gSize(a.0, &mut size), SUCCESS);
    }
    assert_eq!((node, board, first, size), (2, 0x65, 0, 128 << 10));
    // SAFETY: zeroed plain C struct, filled by the call.
    let mut config: RFM2GCONFIG = unsafe { std::mem::zeroed() };
    // SAFETY: open handle, valid out pointer.
    assert_eq!(unsafe { RFM2gGetConfig(a.0, &mut config) }, SUCCESS);
    assert_eq!((config.NodeId, config.MemorySize), (1, 128 << 10));
    // SAFETY: the library NUL-terminates the text fields.
    let device = unsafe { CStr::from_ptr(config.Device.as_ptr()) };
    assert_eq!(
        device.to_str().unwrap(),
        format!("/dev/rfm2g-sim/{}/1/128K", g.0)
    );
    // SAFETY: as above.
    let version = unsafe { CStr::from_ptr(config.DriverVersion.as_ptr()) };
    assert!(version.to_str().unwrap().starts_with("rfm2g-sim "));
}

const CHILD_ENV: &str = "RFM2G_SIM_TEST_CHILD";

/// Board settings come from the environment of the process that opens a board, and
/// a test cannot safely set variables for itself: this test runs itself again in
/// a child process with the configuration in `RFM2G_SIM_DEVICES` and a file.
#[test]
fn the_environment_configures_boards_delay_and_fibre() {
    if let Ok(ring) = std::env::var(CHILD_ENV) {
        return configured_child(&ring);
    }
    let ring = unique("envcfg");
    let _g = RingGuard(ring.clone());
    let file = std::env::temp_dir().join(format!("{ring}.conf"));
    std::fs::write(
        &file,
        format!("# two boards of the ring\n/dev/rfm2g1 ring={ring} node=2 size=64K\n"),
    )
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_environment_configures_boards_delay_and_fibre", "--nocapture"])
        .env(CHILD_ENV, &ring)
        .env(
            "RFM2G_SIM_DEVICES",
            format!("/dev/rfm2g0 ring={ring} node=1 size=64K delay=20ms;/dev/rfm2g7 ring={ring} node=7 size=64K link=down"),
        )
        .env("RFM2G_SIM_CONFIG", &file)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed"), "{text}");
}

fn configured_child(ring: &str) {
    let (a, b, down) = (
        Board::open("/dev/rfm2g0"),
        Board::open("/dev/rfm2g1"),
        Board::open("/dev/rfm2g7"),
    );
    let mut node = 0u16;
    // SAFETY: open handles, valid out pointers, plain arguments.
    unsafe {
        assert_eq!(RFM2gNodeID(b.0, &mut node), SUCCESS);
        assert_eq!(node, 2, "from the file");
        assert_eq!(RFM2gPoke32(a.0, 64, 0x5EED), SUCCESS);
        let mut v = 0u32;
        assert_eq!(RFM2gPeek32(b.0, 64, &mut v), SUCCESS);
        assert_eq!(v, 0x5EED, "both on ring {ring}");
        assert_eq!(RFM2gEnableEvent(b.0, INTR1), SUCCESS);
        assert_eq!(RFM2gEnableEvent(a.0, INTR1), SUCCESS);
        // The board configured down opens the ring for every board on it:
        // a packet goes round the whole ring.
        assert_eq!(RFM2gCheckRingCont(b.0), LINK_TEST_FAIL);
        assert_eq!(RFM2gCheckRingCont(down.0), LINK_TEST_FAIL);
        // The own-data test and the LCSR say the same of each board's ring.
        let own = |board: &Board| {
            let mut state = 7u8;
            assert_eq!(RFM2gClearOwnData(board.0, &mut state), SUCCESS);
            state
        };
        let lcsr = |board: &Board| {
            let mut config: RFM2GCONFIG = std::mem::zeroed();
            assert_eq!(RFM2gGetConfig(board.0, &mut config), SUCCESS);
            config.Lcsr1
        };
        // A packet goes round the whole ring: on a ring open at `down`, no
        // board's comes back, though only `down` lost its signal.
        assert_eq!(RFM2gPoke32(down.0, 128, 1), SUCCESS);
        assert_eq!(
            (own(&a), own(&down)),
            (0, 0),
            "neither a's poke nor down's came back round the open ring"
        );
        assert_eq!(RFM2gClearOwnData(a.0, null_mut()), BAD_PARAMETER_2);
        assert_eq!(lcsr(&a) & (OWNDATA | SIGDET | SNCLOST), SIGDET);
        assert_eq!(lcsr(&down) & (OWNDATA | SIGDET | SNCLOST), SNCLOST);
        let mut word = [0u8; 4];
        assert_eq!(RFM2gWrite(a.0, 256, word.as_mut_ptr().cast(), 4), SUCCESS);
        assert_eq!(lcsr(&a) & OWNDATA, 0, "nor does a block write");
        // Nothing leaves a node whose fibre is open.
        assert_eq!(RFM2gSendEvent(down.0, ALL, INTR1, 1), SUCCESS);
        assert_eq!(a.wait(INTR1, 50).0, TIMED_OUT);
        // /dev/rfm2g0 is 20 ms from the others.
        let sent = Instant::now();
        assert_eq!(RFM2gSendEvent(a.0, 2, INTR1, 99), SUCCESS);
        assert_eq!(
            b.wait(INTR1, 5).0,
            TIMED_OUT,
            "still on the fibre after 5 ms"
        );
        assert_eq!(b.wait(INTR1, 1000), (SUCCESS, 1, 99));
        assert!(
            sent.elapsed() >= Duration::from_millis(20),
            "{:?}",
            sent.elapsed()
        );
        // and the other way there is no delay.
        assert_eq!(RFM2gSendEvent(b.0, 1, INTR1, 98), SUCCESS);
        assert_eq!(a.wait(INTR1, 0), (SUCCESS, 2, 98));
    }
    let mut h: RFM2GHANDLE = null_mut();
    let unknown = CString::new("/dev/rfm2gx").unwrap();
    // SAFETY: valid C string and handle variable.
    let status = unsafe { RFM2gOpen(unknown.as_ptr().cast_mut(), &mut h) };
    assert_eq!(status, NO_BOARD);
}

#[test]
fn board_settings_are_kept_per_board() {
    let (_g, a, b) = ring("64K");
    // SAFETY: open handles, valid out pointers.
    unsafe {
        let mut v = 9u8;
        assert_eq!(RFM2gSetLed(a.0, 1), SUCCESS);
        assert_eq!(RFM2gGetLed(a.0, &mut v), SUCCESS);
        assert_eq!(v, 1);
        assert_eq!(RFM2gGetLed(b.0, &mut v), SUCCESS);
        assert_eq!(v, 0, "each board has its own LED");
        assert_eq!(RFM2gSetPIOByteSwap(a.0, 2), BAD_PARAMETER_2);
        assert_eq!(RFM2gSetDMAByteSwap(a.0, 1), SUCCESS);
        assert_eq!(RFM2gGetDMAByteSwap(a.0, &mut v), SUCCESS);
        assert_eq!(v, 1);
        assert_eq!(RFM2gGetPIOByteSwap(a.0, null_mut()), BAD_PARAMETER_2);
        let mut threshold = 0u32;
        assert_eq!(RFM2gGetDMAThreshold(a.0, &mut threshold), SUCCESS);
        assert_eq!(threshold, u32::MAX, "the driver's default leaves DMA off");
        assert_eq!(RFM2gSetDMAThreshold(a.0, 64), SUCCESS);
        assert_eq!(RFM2gGetDMAThreshold(a.0, &mut threshold), SUCCESS);
        assert_eq!(threshold, 64);
        assert_eq!(RFM2gGetDMAThreshold(b.0, &mut threshold), SUCCESS);
        assert_eq!(threshold, u32::MAX, "each board has its own threshold");
        assert_eq!(RFM2gGetDMAThreshold(a.0, null_mut()), BAD_PARAMETER_2);
    }
}

#[test]
fn a_ring_of_another_size_is_refused_with_a_reason() {
    let name = unique("size");
    let _g = RingGuard(name.clone());
    let _a = Board::open(&format!("/dev/rfm2g-sim/{name}/1/64K"));
    let c = CString::new(format!("/dev/rfm2g-sim/{name}/2/128K")).unwrap();
    let mut h: RFM2GHANDLE = null_mut();
    // SAFETY: valid C string and handle variable.
    let status = unsafe { RFM2gOpen(c.as_ptr().cast_mut(), &mut h) };
    assert_eq!(status, NOT_OPEN);
    let cfg = rfm2g::config::resolve_with(c.to_str().unwrap(), None, None).unwrap();
    let err = rfm2g::ring::Ring::open("dev", &cfg).unwrap_err();
    assert!(
        err.contains("already has 65536 bytes")
            && err.contains("131072")
            && err.contains("rm /dev/shm/"),
        "{err}"
    );
}

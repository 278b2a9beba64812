//! A board cut from its ring and mended while programs run (`rfm2gsim_set_link`):
//! its stores stop reaching the other boards and theirs stop reaching it,
//! through mappings made before or during the cut and through `RFM2gRead`;
//! its LCSR, `RFM2gCheckRingCont`, the own-data test of every board of the
//! ring and events say so (sync loss raised, then switched off as the
//! driver does); a mend gives it the ring
//! as it is. A cut made by another process reaches this one's mappings.
#![cfg(target_os = "linux")]

#[path = "support/library.rs"]
mod support;

use std::ffi::{c_void, CString};
use std::process::Command;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rfm2g::*;
use rfm2g_sys::ffi::{RFM2GCONFIG, RFM2GEVENTINFO, RFM2GHANDLE};
use support::{unique, RingGuard};

const SUCCESS: i32 = 0;
const TIMED_OUT: i32 = 3;
const LINK_TEST_FAIL: i32 = 22;
const NOT_ENABLED: i32 = 31;
const INTR1: i32 = 1;
const SYNC_LOSS: i32 = 9;
const SIGDET: u32 = 1 << 2;
const SNCLOST: u32 = 1 << 3;
/// Set in the child that cuts a board of its parent's ring.
const CHILD_ENV: &str = "RFM2G_SIM_TEST_CUT";

/// An open board and a mapping of its first page; closed on drop.
struct Board {
    h: RFM2GHANDLE,
    path: String,
    words: *mut AtomicU32,
}

impl Board {
    fn open(path: &str) -> Board {
        let mut h: RFM2GHANDLE = null_mut();
        let c = CString::new(path).unwrap();
        // SAFETY: valid C string and handle variable.
        assert_eq!(unsafe { RFM2gOpen(c.as_ptr().cast_mut(), &mut h) }, SUCCESS);
        let mut board = Board {
            h,
            path: path.to_owned(),
            words: null_mut(),
        };
        board.words = board.map();
        board
    }

    /// A new mapping of the first page.
    fn map(&self) -> *mut AtomicU32 {
        let mut p: *mut c_void = null_mut();
        // SAFETY: open handle, valid out pointer, one page.
        assert_eq!(unsafe { RFM2gUserMemory(self.h, &mut p, 0, 1) }, SUCCESS);
        p.cast()
    }

    fn word(&self, i: usize) -> &AtomicU32 {
        // SAFETY: `words` maps a 4096-byte page while the board lives.
        unsafe { &*self.words.add(i) }
    }

    fn read(&self, i: usize) -> u32 {
        self.word(i).load(Ordering::SeqCst)
    }

    fn store(&self, i: usize, v: u32) {
        self.word(i).store(v, Ordering::SeqCst);
    }

    /// Word `i` through `RFM2gRead` (the emulator's own view of the board).
    fn read_api(&self, i: usize) -> u32 {
        let mut v = 0u32;
        // SAFETY: open handle, a 4-byte buffer.
        let status = unsafe { RFM2gRead(self.h, (i * 4) as u32, (&mut v as *mut u32).cast(), 4) };
        assert_eq!(status, SUCCESS);
        v
    }

    fn lcsr(&self) -> u32 {
        // SAFETY: RFM2GCONFIG is plain data; the call fills it.
        let mut config: RFM2GCONFIG = unsafe { std::mem::zeroed() };
        // SAFETY: open handle, valid out pointer.
        assert_eq!(unsafe { RFM2gGetConfig(self.h, &mut config) }, SUCCESS);
        config.Lcsr1
    }

    /// Waits 50 ms for event `ty`: the status.
    fn wait(&self, ty: i32) -> i32 {
        let mut info = RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: ty,
            Timeout: 50,
            NodeId: 0,
            pDrvSpec: null_mut(),
        };
        // SAFETY: open handle, valid in/out struct.
        unsafe { RFM2gWaitForEvent(self.h, &mut info) }
    }

    fn ring_check(&self) -> i32 {
        // SAFETY: open handle.
        unsafe { RFM2gCheckRingCont(self.h) }
    }

    /// The own-data test: pokes a word through the driver, then whether a
    /// packet of this board came back round the ring since the last look.
    fn own_data_back(&self) -> bool {
        let mut back = 7u8;
        // SAFETY: open handle, valid out pointer.
        unsafe {
            assert_eq!(RFM2gClearOwnData(self.h, &mut back), SUCCESS);
            assert_eq!(RFM2gPoke32(self.h, 60, 1), SUCCESS);
            assert_eq!(RFM2gClearOwnData(self.h, &mut back), SUCCESS);
        }
        back == 1
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        // SAFETY: a handle variable from RFM2gOpen.
        unsafe { RFM2gClose(&mut self.h) };
    }
}

fn set_link(path: &str, up: bool) -> i32 {
    let c = CString::new(path).unwrap();
    // SAFETY: a valid C string.
    unsafe { rfm2gsim_set_link(c.as_ptr(), i32::from(up) as _) }
}

#[test]
fn a_cut_board_and_the_ring_no_longer_see_each_others_stores() {
    let name = unique("cut");
    let _guard = RingGuard(name.clone());
    let a = Board::open(&format!("/dev/rfm2g-sim/{name}/1/64K"));
    let b = Board::open(&format!("/dev/rfm2g-sim/{name}/2/64K"));
    a.store(0, 11);
    assert_eq!(b.read(0), 11, "one memory before the cut");
    assert_eq!(a.lcsr() & (SIGDET | SNCLOST), SIGDET);
    assert!(a.own_data_back() && b.own_data_back(), "a whole ring");

    // SAFETY: an open handle.
    assert_eq!(unsafe { RFM2gEnableEvent(a.h, SYNC_LOSS) }, SUCCESS);
    assert_eq!(set_link(&a.path, false), SUCCESS);
    assert_eq!(a.wait(SYNC_LOSS), SUCCESS, "the cut raises sync loss");
    assert_eq!(a.wait(SYNC_LOSS), NOT_ENABLED, "switched off once it fired");
    assert_eq!(a.read(0), 11, "the island starts as the ring was");
    a.store(1, 7);
    b.store(2, 9);
    assert_eq!((b.read(1), a.read(2)), (0, 0), "neither reaches the other");
    assert_eq!(a.read_api(1), 7, "RFM2gRead reads the island");
    let later = a.map();
    // SAFETY: a fresh one-page mapping of the board, kept while the board lives.
    let word = unsafe { &*later.add(1) };
    assert_eq!(word.load(Ordering::SeqCst), 7, "a mapping made while cut");
    assert_eq!(a.lcsr() & (SIGDET | SNCLOST), SNCLOST);
    assert_eq!(a.ring_check(), LINK_TEST_FAIL);
    assert_eq!(
        b.lcsr() & (SIGDET | SNCLOST),
        SIGDET,
        "the others' fibres are fine"
    );
    assert!(
        !a.own_data_back() && !b.own_data_back(),
        "nothing comes back round a ring open anywhere"
    );
    // SAFETY: open handles.
    unsafe {
        assert_eq!(RFM2gEnableEvent(a.h, INTR1), SUCCESS);
        assert_eq!(RFM2gSendEvent(b.h, 1, INTR1, 5), SUCCESS);
    }
    assert_eq!(a.wait(INTR1), TIMED_OUT, "no event reaches it");

    assert_eq!(set_link(&a.path, true), SUCCESS);
    assert_eq!(a.read(2), 9, "mended: the ring as it is");
    assert_eq!(
        a.read(1),
        0,
        "what it stored while cut never reached the ring"
    );
    a.store(3, 4);
    assert_eq!(b.read(3), 4);
    assert_eq!(a.lcsr() & (SIGDET | SNCLOST), SIGDET);
    assert_eq!(a.ring_check(), SUCCESS);
    assert!(a.own_data_back() && b.own_data_back(), "whole again");
}

/// Another process cuts board 1 (as `rfmctl cut` does): this process's
/// mapping of it moves within the watch interval.
#[test]
fn a_cut_from_another_process_reaches_this_ones_mappings() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        std::process::exit(if set_link(&path, false) == SUCCESS {
            0
        } else {
            1
        });
    }
    let name = unique("cutp");
    let _guard = RingGuard(name.clone());
    let a = Board::open(&format!("/dev/rfm2g-sim/{name}/1/64K"));
    let b = Board::open(&format!("/dev/rfm2g-sim/{name}/2/64K"));
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_cut_from_another_process_reaches_this_ones_mappings",
        ])
        .env(CHILD_ENV, &a.path)
        .status()
        .unwrap();
    assert!(status.success());
    let began = Instant::now();
    let mut k = 0;
    loop {
        k += 1;
        b.store(5, k);
        std::thread::sleep(Duration::from_millis(1));
        if a.read(5) != k {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "the cut never reached this process"
        );
    }
    a.store(6, 1);
    assert_eq!(b.read(6), 0);
    assert_eq!(set_link(&a.path, true), SUCCESS);
    assert_eq!(a.read(5), k);
}

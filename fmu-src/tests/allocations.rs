//! The per-step path allocates nothing: fmi2SetReal, fmi2DoStep and fmi2GetReal of
//! a running instance, counted by a global allocator (this test binary's own,
//! which the FMU's code linked into it uses too), per thread: the master's thread
//! is the step path (the heartbeat thread and other tests are not).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{unique, Fmu};
use fmu_model::fmi2::*;
use rfm_attitude::{fmi2_do_step, fmi2_get_real, fmi2_set_real};

struct Counting;

thread_local! {
    /// Allocations made by this thread (a const initializer: reading it never allocates).
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    ALLOCATIONS.with(|n| n.set(n.get() + 1));
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_step_allocates_nothing_in_free_mode() {
    steps_allocate_nothing(&format!("loopback:{}", unique("alloc")), "free");
}

#[test]
fn a_step_allocates_nothing_in_lockstep() {
    steps_allocate_nothing(&format!("loopback:{}", unique("alloc")), "lockstep");
}

/// On a redundant device: every store twice, each frame from ring A, ring B
/// looked at every 10 ms, what the rings did told after each step.
#[test]
fn a_step_allocates_nothing_on_redundant_rings() {
    let (a, b) = (unique("alloca"), unique("allocb"));
    let _names = [common::ShmGuard(a.clone()), common::ShmGuard(b.clone())];
    steps_allocate_nothing(&format!("shm:{a}+shm:{b}"), "lockstep");
}

/// A self-loop on `device` in `mode`: 1,000 warm-up steps, then 10,000 counted.
fn steps_allocate_nothing(device: &str, mode: &str) {
    let fmu = Fmu::new("alloc");
    fmu.set_all(&[("device", device), ("peerSlot", "0"), ("syncMode", mode)]);
    assert_eq!(fmu.init(), fmi2OK);
    let inputs = ["roll", "pitch", "yaw"].map(|n| fmu.vr(n).0);
    let outputs = ["peer.roll", "peer.pitch", "peer.yaw"].map(|n| fmu.vr(n).0);
    let mut got = [0.0; 3];
    let step = |k: u64, got: &mut [f64; 3]| {
        let x = k as f64;
        // SAFETY: a live instance; three references and three values each way.
        unsafe {
            assert_eq!(
                fmi2_set_real(fmu.c, inputs.as_ptr(), 3, [x, -x, 0.5].as_ptr()),
                fmi2OK
            );
            assert_eq!(fmi2_do_step(fmu.c, x * 1e-3, 1e-3, 1), fmi2OK);
            assert_eq!(
                fmi2_get_real(fmu.c, outputs.as_ptr(), 3, got.as_mut_ptr()),
                fmi2OK
            );
        }
    };
    // Warm up: the first steps bind the peer session and fill the health tracker.
    for k in 0..1000 {
        step(k, &mut got);
    }
    let before = ALLOCATIONS.with(Cell::get);
    for k in 1000..11_000 {
        step(k, &mut got);
    }
    let made = ALLOCATIONS.with(Cell::get) - before;
    assert_eq!(made, 0, "{made} allocations in 10,000 steps");
    assert_eq!(
        got[0], 10_999.0,
        "the self-loop echoes the last step's input"
    );
}

/// The FMI 3.0 face's step allocates nothing either: fmi3SetFloat64,
/// fmi3DoStep, fmi3GetFloat64 and a Boolean read (converted through the
/// stack), of a lockstep self-loop instantiated by fmi3InstantiateCoSimulation.
#[test]
fn an_fmi3_step_allocates_nothing() {
    use fmu_model::fmi3::fmi3Instance;
    use rfm_attitude::fmi3::*;
    let model = fmu_model::Model::attitude();
    let vr = |name: &str| model.variable(name).expect("an attitude variable").0;
    // SAFETY: valid C strings, no callbacks (FMI 3.0 allows a NULL logger).
    let c: fmi3Instance = unsafe {
        fmi3_instantiate_co_simulation(
            c"alloc3".as_ptr(),
            std::ffi::CString::new(model.guid.clone()).unwrap().as_ptr(),
            std::ptr::null(),
            false,
            false,
            false,
            false,
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
            None,
            None,
        )
    };
    assert!(!c.is_null(), "fmi3InstantiateCoSimulation failed");
    let device = std::ffi::CString::new(format!("loopback:{}", unique("alloc3"))).unwrap();
    // SAFETY: a live instance; each call with as many references as values.
    unsafe {
        assert_eq!(
            fmi3_set_string(c, &vr("device"), 1, &device.as_ptr(), 1),
            fmi2OK
        );
        assert_eq!(fmi3_set_int32(c, &vr("peerSlot"), 1, &0, 1), fmi2OK);
        assert_eq!(
            fmi3_enter_initialization_mode(c, false, 0.0, 0.0, false, 0.0),
            fmi2OK
        );
        assert_eq!(fmi3_exit_initialization_mode(c), fmi2OK);
    }
    let inputs = ["roll", "pitch", "yaw"].map(vr);
    let outputs = ["peer.roll", "peer.pitch", "peer.yaw"].map(vr);
    let ok = vr("link.ok");
    let (mut got, mut alive) = ([0.0; 3], false);
    let (mut event, mut end, mut early, mut reached) = (false, false, false, 0.0);
    let mut step = |k: u64| {
        let x = k as f64;
        // SAFETY: a live instance; three references and three values each way.
        unsafe {
            assert_eq!(
                fmi3_set_float64(c, inputs.as_ptr(), 3, [x, -x, 0.5].as_ptr(), 3),
                fmi2OK
            );
            let stepped = fmi3_do_step(
                c,
                x * 1e-3,
                1e-3,
                true,
                &mut event,
                &mut end,
                &mut early,
                &mut reached,
            );
            assert_eq!(stepped, fmi2OK);
            assert_eq!(
                fmi3_get_float64(c, outputs.as_ptr(), 3, got.as_mut_ptr(), 3),
                fmi2OK
            );
            assert_eq!(fmi3_get_boolean(c, &ok, 1, &mut alive, 1), fmi2OK);
        }
    };
    for k in 0..1000 {
        step(k);
    }
    let before = ALLOCATIONS.with(Cell::get);
    for k in 1000..11_000 {
        step(k);
    }
    let made = ALLOCATIONS.with(Cell::get) - before;
    assert_eq!(made, 0, "{made} allocations in 10,000 FMI 3.0 steps");
    assert_eq!(
        got[0], 10_999.0,
        "the self-loop echoes the last step's input"
    );
    assert!(alive && !early);
    // SAFETY: a live instance, terminated then freed once.
    unsafe {
        assert_eq!(fmi3_terminate(c), fmi2OK);
        fmi3_free_instance(c);
    }
}

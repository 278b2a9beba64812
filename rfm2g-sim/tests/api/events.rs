//! Interrupts and their events: addressed or broadcast with their data, one
//! queued per type, waits that time out or are cancelled, and waits a close ends.

use super::*;

#[test]
fn interrupts_reach_the_addressed_node_or_all_with_their_data() {
    let name = unique("evt");
    let _g = RingGuard(name.clone());
    let n: Vec<Board> = (1..=3)
        .map(|i| Board::open(&format!("/dev/rfm2g-sim/{name}/{i}/64K")))
        .collect();
    // SAFETY: open handles; plain arguments.
    unsafe {
        assert_eq!(RFM2gSendEvent(n[0].0, 1, INTR1, 5), NODE_ID_SELF);
        assert_eq!(RFM2gSendEvent(n[0].0, 256, INTR1, 5), BAD_PARAMETER_2);
        assert_eq!(RFM2gSendEvent(n[0].0, 2, BAD_DATA, 5), BAD_PARAMETER_3);
        for b in &n[1..] {
            assert_eq!(RFM2gEnableEvent(b.0, INTR1), SUCCESS);
        }
        assert_eq!(RFM2gEnableEvent(n[1].0, INTR1), ALREADY_ENABLED);
        assert_eq!(RFM2gEnableEvent(n[1].0, LAST), BAD_PARAMETER_2);
        // Addressed: only node 3 gets it.
        assert_eq!(RFM2gSendEvent(n[0].0, 3, INTR1, 0xCAFE_F00D), SUCCESS);
    }
    assert_eq!(n[2].wait(INTR1, 1000), (SUCCESS, 1, 0xCAFE_F00D));
    assert_eq!(n[1].wait(INTR1, 0).0, TIMED_OUT);
    // Broadcast: everyone but the sender (whose interrupt is not even enabled).
    // SAFETY: as above.
    assert_eq!(unsafe { RFM2gSendEvent(n[2].0, ALL, INTR1, 77) }, SUCCESS);
    assert_eq!(n[1].wait(INTR1, 1000), (SUCCESS, 3, 77));
    assert_eq!(n[0].wait(INTR1, 0).0, NOT_ENABLED);
    assert_eq!(n[2].wait(INTR1, 0).0, TIMED_OUT, "not back to the sender");
    let mut count = 0u32;
    // SAFETY: open handle, valid out pointer.
    let status = unsafe { RFM2gGetEventCount(n[1].0, INTR1, &mut count) };
    assert_eq!(status, SUCCESS);
    assert_eq!(count, 1);
}

#[test]
fn one_event_per_type_is_queued_and_a_disabled_one_is_not_latched() {
    let (_g, a, b) = ring("64K");
    // SAFETY: open handles; plain arguments.
    unsafe {
        assert_eq!(RFM2gSendEvent(a.0, 2, INTR2, 1), SUCCESS);
        assert_eq!(RFM2gEnableEvent(b.0, INTR2), SUCCESS);
        assert_eq!(RFM2gEnableEvent(b.0, INTR1), SUCCESS);
        for data in [10, 11, 12] {
            assert_eq!(RFM2gSendEvent(a.0, 2, INTR2, data), SUCCESS);
        }
        assert_eq!(RFM2gSendEvent(a.0, 2, INTR1, 20), SUCCESS);
    }
    assert_eq!(b.wait(INTR2, 100), (SUCCESS, 1, 10), "the first one queued");
    assert_eq!(b.wait(INTR2, 0).0, TIMED_OUT, "the later ones were lost");
    assert_eq!(
        b.wait(INTR1, 0),
        (SUCCESS, 1, 20),
        "another type has its own queue"
    );
    // SAFETY: as above.
    unsafe {
        assert_eq!(RFM2gSendEvent(a.0, 2, INTR2, 30), SUCCESS);
        assert_eq!(RFM2gClearEvent(b.0, INTR2), SUCCESS);
        assert_eq!(RFM2gSendEvent(a.0, 2, INTR1, 31), SUCCESS);
        assert_eq!(RFM2gClearEvent(b.0, LAST), SUCCESS);
        assert_eq!(RFM2gClearEvent(b.0, 13), BAD_PARAMETER_2);
        assert_eq!(RFM2gDisableEvent(b.0, INTR2), SUCCESS);
        assert_eq!(RFM2gDisableEvent(b.0, INTR2), NOT_ENABLED);
    }
    assert_eq!(b.wait(INTR1, 0).0, TIMED_OUT, "cleared");
    assert_eq!(b.wait(INTR2, 0).0, NOT_ENABLED);
    let mut info_null = 0;
    // SAFETY: NULL in/out struct must be refused.
    info_null += unsafe { RFM2gWaitForEvent(b.0, null_mut()) };
    assert_eq!(info_null, BAD_PARAMETER_2);
}

#[test]
fn waits_time_out_in_milliseconds_and_can_be_cancelled() {
    let (_g, a, b) = ring("64K");
    // SAFETY: open handle; plain argument.
    assert_eq!(unsafe { RFM2gEnableEvent(b.0, INTR1) }, SUCCESS);
    let t = Instant::now();
    assert_eq!(b.wait(INTR1, 30).0, TIMED_OUT);
    assert!(
        t.elapsed() >= Duration::from_millis(30),
        "{:?}",
        t.elapsed()
    );

    let handle = b.0 as usize;
    let waiter = std::thread::spawn(move || {
        let b = std::mem::ManuallyDrop::new(Board(handle as RFM2GHANDLE));
        // The polls below are waits of their own: one in progress when this
        // one starts makes it busy (CI saw it once: this thread then ended at
        // once, and the polls never found it waiting). Again until it is in.
        loop {
            match b.wait(INTR1, u32::MAX).0 {
                EVENT_IN_USE => std::thread::yield_now(),
                status => break status,
            }
        }
    });
    // Until the waiter is in, a second wait on the same handle and type is busy.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, _, _) = b.wait(INTR1, 0);
        if status == EVENT_IN_USE {
            break;
        }
        assert_eq!(status, TIMED_OUT);
        assert!(
            Instant::now() < deadline,
            "the waiter never started waiting"
        );
        std::thread::yield_now();
    }
    // SAFETY: open handle; plain argument.
    assert_eq!(unsafe { RFM2gCancelWaitForEvent(b.0, INTR1) }, SUCCESS);
    assert_eq!(waiter.join().unwrap(), WAIT_EVENT_CANCELED);
    drop(a);
}

#[test]
fn closing_a_handle_ends_its_waits() {
    let name = unique("close");
    let _g = RingGuard(name.clone());
    let mut b = Board::open(&format!("/dev/rfm2g-sim/{name}/2/64K"));
    // SAFETY: open handle; plain argument.
    assert_eq!(unsafe { RFM2gEnableEvent(b.0, INTR1) }, SUCCESS);
    let handle = b.0 as usize;
    let waiter = std::thread::spawn(move || {
        let b = std::mem::ManuallyDrop::new(Board(handle as RFM2GHANDLE));
        b.wait(INTR1, 10_000).0
    });
    std::thread::sleep(Duration::from_millis(50));
    // SAFETY: handle variable from RFM2gOpen.
    assert_eq!(unsafe { RFM2gClose(&mut b.0) }, SUCCESS);
    std::mem::forget(b);
    assert_eq!(waiter.join().unwrap(), NOT_OPEN);
}

//! Network interrupts: enabling, sending, waiting for, cancelling and
//! counting them.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::sync::atomic::Ordering;

use super::{event_type, put, with_board};
use crate::abi::*;
use crate::handle::Waiter;
use crate::ring::{now_ns, EVENT_TYPES};

#[no_mangle]
pub unsafe extern "C" fn RFM2gEnableEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        b.node()
            .enable(event_type(EventType, Code::BAD_PARAMETER_2)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gDisableEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        b.node()
            .disable(event_type(EventType, Code::BAD_PARAMETER_2)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gSendEvent(
    rh: RFM2GHANDLE,
    ToNode: RFM2G_NODE,
    EventType: RFM2GEVENTTYPE,
    ExtendedData: RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if ToNode > 255 && ToNode != RFM2G_NODE_ALL {
            return Err(Code::BAD_PARAMETER_2);
        }
        if !(RFM2GEVENT_RESET..=RFM2GEVENT_INTR4).contains(&EventType) {
            return Err(Code::BAD_PARAMETER_3);
        }
        let me = b.config.node;
        if ToNode == me {
            return Err(Code::NODE_ID_SELF);
        }
        if !b.link_up() {
            // Nothing leaves a node whose fibre is open.
            return Ok(());
        }
        let due = now_ns() + b.config.delay.as_nanos() as u64;
        let ty = EventType as usize;
        for (node, state) in b.ring.nodes() {
            // Nothing reaches a board cut from the ring.
            if node != me && (ToNode == RFM2G_NODE_ALL || node == ToNode) && !state.cut().0 {
                state.deliver(ty, me, ExtendedData, due);
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gWaitForEvent(
    rh: RFM2GHANDLE,
    EventInfo: *mut RFM2GEVENTINFO,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if EventInfo.is_null() {
            return Err(Code::BAD_PARAMETER_2);
        }
        // SAFETY: non-NULL in/out struct.
        let info = unsafe { &mut *EventInfo };
        let ty = event_type(info.Event, Code::BAD_PARAMETER_2)?;
        if !b.node().is_enabled(ty) {
            return Err(Code::NOT_ENABLED);
        }
        let bit = 1 << ty;
        if b.waiting.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(Code::EVENT_IN_USE);
        }
        b.canceled.fetch_and(!bit, Ordering::AcqRel);
        let deadline = match info.Timeout {
            RFM2G_INFINITE_TIMEOUT => None,
            ms => Some(now_ns() + u64::from(ms) * 1_000_000),
        };
        let got = b.node().wait(ty, deadline, &Waiter { board: b, bit });
        b.waiting.fetch_and(!bit, Ordering::AcqRel);
        let (from, data) = got?;
        if ty >= RFM2GEVENT_BAD_DATA as usize {
            // The driver switches an error event off once it fired: a program
            // enables it again to hear of the next.
            let _ = b.node().disable(ty);
        }
        info.NodeId = from;
        info.ExtendedInfo = data;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn RFM2gCancelWaitForEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let bit = 1 << event_type(EventType, Code::BAD_PARAMETER_2)?;
        if b.waiting.load(Ordering::Acquire) & bit != 0 {
            b.canceled.fetch_or(bit, Ordering::AcqRel);
            b.node().notify();
        }
        Ok(())
    })
}

/// `RFM2GEVENT_LAST` clears every type.
#[no_mangle]
pub unsafe extern "C" fn RFM2gClearEvent(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        if EventType == RFM2GEVENT_LAST {
            (0..EVENT_TYPES).for_each(|t| b.node().clear(t));
        } else {
            b.node()
                .clear(event_type(EventType, Code::BAD_PARAMETER_2)?);
        }
        Ok(())
    })
}

/// Events of the type that reached this node since the ring was created.
#[no_mangle]
pub unsafe extern "C" fn RFM2gGetEventCount(
    rh: RFM2GHANDLE,
    EventType: RFM2GEVENTTYPE,
    Count: *mut RFM2G_UINT32,
) -> RFM2G_STATUS {
    with_board(rh, |b| {
        let ty = event_type(EventType, Code::BAD_PARAMETER_2)?;
        // SAFETY: out pointer per the contract.
        unsafe { put(Count, b.node().count(ty), Code::BAD_PARAMETER_3) }
    })
}

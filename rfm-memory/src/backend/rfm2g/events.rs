//! A card's events: the error events it raises about its ring, and the
//! network interrupts programs send each other (`waitStrategy = event`).

use std::sync::Arc;

use super::ffi::{self, RFM2G_STATUS};
use super::library::EventApi;
use super::{Board, BoardError, Rfm2gError};
use crate::counts;

/// The error events a card raises about its ring. The driver switches each
/// off once it fired: a watcher enables it again to hear of the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingEvent {
    BadData,
    RxFifoFull,
    RoguePacket,
    SyncLoss,
}

impl RingEvent {
    pub const ALL: [RingEvent; 4] = [
        RingEvent::BadData,
        RingEvent::RxFifoFull,
        RingEvent::RoguePacket,
        RingEvent::SyncLoss,
    ];

    pub(super) fn raw(self) -> ffi::RFM2GEVENTTYPE {
        (match self {
            RingEvent::BadData => ffi::RFM2GEVENT_BAD_DATA,
            RingEvent::RxFifoFull => ffi::RFM2GEVENT_RXFIFO_FULL,
            RingEvent::RoguePacket => ffi::RFM2GEVENT_ROGUE_PKT,
            RingEvent::SyncLoss => ffi::RFM2GEVENT_SYNC_LOSS,
        }) as ffi::RFM2GEVENTTYPE
    }

    /// The vendor's name, and what it means.
    pub fn describe(self) -> &'static str {
        match self {
            RingEvent::BadData => "RFM2GEVENT_BAD_DATA (a packet with bad data arrived)",
            RingEvent::RxFifoFull => "RFM2GEVENT_RXFIFO_FULL (its receive buffer overflowed)",
            RingEvent::RoguePacket => {
                "RFM2GEVENT_ROGUE_PKT (a packet went round the ring with no node taking it)"
            }
            RingEvent::SyncLoss => "RFM2GEVENT_SYNC_LOSS (its fibre in lost sync)",
        }
    }
}

impl Board {
    /// Enables `event` (again, after it fired); `Ok(false)` when the
    /// library has no event functions.
    pub(crate) fn enable_ring_event(&self, event: RingEvent) -> Result<bool, BoardError> {
        let Some(api) = self.api.events else {
            return Ok(false);
        };
        // SAFETY: open handle; a plain event number.
        let status = unsafe { (api.enable)(self.handle, event.raw()) };
        if status != ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS {
            self.check("RFM2gEnableEvent", status)?;
        }
        Ok(true)
    }

    /// Whether `event` fired since it was enabled: a wait of no time.
    pub(crate) fn ring_event_fired(&self, event: RingEvent) -> Result<bool, BoardError> {
        let api = self
            .api
            .events
            .ok_or_else(|| self.missing("RFM2gWaitForEvent"))?;
        let mut info = ffi::RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: event.raw(),
            Timeout: 0,
            NodeId: 0,
            pDrvSpec: std::ptr::null_mut(),
        };
        // SAFETY: open handle; `info` is a valid, initialised in/out struct.
        let status = unsafe { (api.wait)(self.handle, &mut info) };
        if status == ffi::RFM2G_TIMED_OUT as RFM2G_STATUS {
            return Ok(false);
        }
        self.check("RFM2gWaitForEvent", status)?;
        Ok(true)
    }
}

/// The network interrupts a program can send (`RFM2gSendEvent` accepts only these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    Reset,
    Intr1,
    Intr2,
    Intr3,
    Intr4,
}

impl Interrupt {
    /// The accepted names, quoted in errors.
    pub const NAMES: &'static str = "reset, intr1, intr2, intr3, intr4";

    pub(super) fn raw(self) -> ffi::RFM2GEVENTTYPE {
        (match self {
            Interrupt::Reset => ffi::RFM2GEVENT_RESET,
            Interrupt::Intr1 => ffi::RFM2GEVENT_INTR1,
            Interrupt::Intr2 => ffi::RFM2GEVENT_INTR2,
            Interrupt::Intr3 => ffi::RFM2GEVENT_INTR3,
            Interrupt::Intr4 => ffi::RFM2GEVENT_INTR4,
        }) as ffi::RFM2GEVENTTYPE
    }
}

impl std::fmt::Display for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Interrupt::Reset => "RESET",
            Interrupt::Intr1 => "INTR1",
            Interrupt::Intr2 => "INTR2",
            Interrupt::Intr3 => "INTR3",
            Interrupt::Intr4 => "INTR4",
        })
    }
}

impl std::str::FromStr for Interrupt {
    type Err = String;

    fn from_str(s: &str) -> Result<Interrupt, String> {
        match s.to_ascii_lowercase().as_str() {
            "reset" => Ok(Interrupt::Reset),
            "intr1" => Ok(Interrupt::Intr1),
            "intr2" => Ok(Interrupt::Intr2),
            "intr3" => Ok(Interrupt::Intr3),
            "intr4" => Ok(Interrupt::Intr4),
            _ => Err(format!(
                "`{s}` is not a network interrupt; use {}",
                Interrupt::NAMES
            )),
        }
    }
}

/// The network interrupt the link uses to wake a waiting peer.
pub const LINK_EVENT: Interrupt = Interrupt::Intr1;

/// One network interrupt of one board, enabled from here on.
///
/// The enable state belongs to the board node, not to a handle: another coupling
/// on the same node, a simulator while `rfmctl` listens, or a process that died
/// all share it. So it is never switched off again (no handle can know that it is
/// the last user); an enabled interrupt that nobody waits for costs one latched
/// event per type.
pub struct Events {
    board: Arc<Board>,
    api: EventApi,
    kind: Interrupt,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("board", &self.board)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Board {
    /// Enables interrupt `kind`; `Ok(None)` when the library lacks the event functions.
    pub(crate) fn events(self: &Arc<Self>, kind: Interrupt) -> Result<Option<Events>, Rfm2gError> {
        let Some(api) = self.api.events else {
            return Ok(None);
        };
        // SAFETY: open handle; a plain event number.
        let status = unsafe { (api.enable)(self.handle, kind.raw()) };
        // Already enabled: by another user of this board node. The interrupt is on,
        // as wanted.
        if status != ffi::RFM2G_ALREADY_ENABLED as RFM2G_STATUS {
            self.check("RFM2gEnableEvent", status)?;
        }
        Ok(Some(Events {
            board: Arc::clone(self),
            api,
            kind,
        }))
    }
}

impl Events {
    /// Sends this interrupt with `data` to every other node on the ring.
    pub fn broadcast(&self, data: u32) -> Result<(), Rfm2gError> {
        self.board.send(self.api, None, self.kind, data)
    }

    /// Waits up to `timeout_ms` for this interrupt: `Some((node, data))`, or `None`
    /// when the time ran out.
    pub fn wait(&self, timeout_ms: u32) -> Result<Option<(u16, u32)>, Rfm2gError> {
        let mut info = ffi::RFM2GEVENTINFO {
            ExtendedInfo: 0,
            Event: self.kind.raw(),
            Timeout: timeout_ms,
            NodeId: 0,
            pDrvSpec: std::ptr::null_mut(),
        };
        // SAFETY: open handle; `info` is a valid, initialised in/out struct.
        let status = unsafe { (self.api.wait)(self.board.handle, &mut info) };
        counts::vendor_call(0, false);
        if status == ffi::RFM2G_TIMED_OUT as RFM2G_STATUS {
            return Ok(None);
        }
        self.board.check("RFM2gWaitForEvent", status)?;
        Ok(Some((info.NodeId, info.ExtendedInfo)))
    }
}

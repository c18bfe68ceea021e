//! One-byte enums added by protocol version 2, and the wire form of
//! [`InstrumentStatus`].

use peregrine_types::InstrumentStatus;

use crate::cursor::{Reader, Writer};
use crate::field::{enum_field, invalid, WireField};
use crate::DecodeError;

/// What a session is for, chosen at login.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SessionKind {
    /// Order entry for the logged-in account; receives the account's reports.
    Trading = 0,
    /// Read-only: receives every report of the target account (or of every account,
    /// for an operator) and may ask for order status and open orders, nothing else.
    DropCopy = 1,
}

impl SessionKind {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Trading),
            1 => Some(Self::DropCopy),
            _ => None,
        }
    }
}

/// The state of an order in an `OrderStatus` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OrderState {
    /// No live order of the session's scope has this id: it never existed, belongs
    /// to another account, or is already filled, cancelled or expired. The three
    /// cases get the same answer, so ids cannot be probed.
    Unknown = 0,
    /// Resting on the book, nothing traded yet.
    New = 1,
    /// Resting on the book after one or more fills.
    PartiallyFilled = 2,
}

impl OrderState {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Unknown),
            1 => Some(Self::New),
            2 => Some(Self::PartiallyFilled),
            _ => None,
        }
    }
}

enum_field!(SessionKind, "u8 SessionKind", 2);
enum_field!(OrderState, "u8 OrderState", 3);

/// `0` Active, `1` Halted.
impl WireField for InstrumentStatus {
    const WIDTH: usize = 1;
    const WIRE_TYPE: &'static str = "u8 InstrumentStatus";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u8(match self {
            InstrumentStatus::Active => 0,
            InstrumentStatus::Halted => 1,
        });
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        match r.u8()? {
            0 => Ok(InstrumentStatus::Active),
            1 => Ok(InstrumentStatus::Halted),
            v => Err(invalid(field, u64::from(v))),
        }
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        if seed & 1 == 0 {
            InstrumentStatus::Active
        } else {
            InstrumentStatus::Halted
        }
    }
}

//! One-byte enums of protocol version 3 (conditional orders, order lists, market
//! structure), and the order-list leg.

use peregrine_types::{
    AuctionKind, ClientOrderId, ListKind, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp, TradingPhase, TrailUnit, TriggerKind,
};

use crate::cursor::{Reader, Writer};
use crate::field::{enum_field, invalid, WireField};
use crate::DecodeError;

enum_field!(TriggerKind, "u8 TriggerKind", 3);
enum_field!(TrailUnit, "u8 TrailUnit", 3);
enum_field!(ListKind, "u8 ListKind", 3);
enum_field!(AuctionKind, "u8 AuctionKind", 4);

/// `0` continuous, `1` halted, `2 + kind` a call auction (2 opening, 3 closing, 4
/// volatility, 5 manual).
impl WireField for TradingPhase {
    const WIDTH: usize = 1;
    const WIRE_TYPE: &'static str = "u8 TradingPhase";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u8(self.to_u8());
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        let v = r.u8()?;
        TradingPhase::from_u8(v).ok_or(invalid(field, u64::from(v)))
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        match TradingPhase::from_u8((seed % 6) as u8) {
            Some(p) => p,
            None => unreachable!("values 0..6 are all defined"),
        }
    }
}

/// Where an accepted order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OrderStage {
    /// In the book (or traded / cancelled in the reports that follow).
    Active = 0,
    /// Parked until the last trade price reaches its trigger.
    WaitingTrigger = 1,
    /// Parked until its list's working leg is completely filled.
    PendingRelease = 2,
}

impl OrderStage {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Active),
            1 => Some(Self::WaitingTrigger),
            2 => Some(Self::PendingRelease),
            _ => None,
        }
    }
}

/// Why a parked order became active (`Triggered.cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TriggerCause {
    /// The last trade price reached its trigger.
    Price = 0,
    /// Its list's working leg was completely filled.
    Released = 1,
}

impl TriggerCause {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Price),
            1 => Some(Self::Released),
            _ => None,
        }
    }
}

/// An order list's state (`ListStatus.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ListState {
    /// Accepted: every leg was entered (their `AcceptedExt` reports follow).
    Accepted = 0,
    /// Refused as a whole: nothing was entered.
    Rejected = 1,
    /// Resolved: no leg depends on another any more.
    Done = 2,
}

impl ListState {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Accepted),
            1 => Some(Self::Rejected),
            2 => Some(Self::Done),
            _ => None,
        }
    }
}

/// What a market-maker protection request does, and what a report says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MmpAction {
    /// Set the limits (request) / the limits are set (report).
    Set = 0,
    /// Lift a freeze and clear the window / the freeze was lifted.
    Reset = 1,
    /// Remove the protection / it was removed.
    Clear = 2,
    /// Report only: a limit was reached; quotes cancelled, new orders refused.
    Triggered = 3,
}

impl MmpAction {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Set),
            1 => Some(Self::Reset),
            2 => Some(Self::Clear),
            3 => Some(Self::Triggered),
            _ => None,
        }
    }
}

/// An admin market command (`MarketControl.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MarketAction {
    /// Halt: no new orders or replaces.
    Halt = 0,
    /// Resume continuous trading (uncrossing first if the book crosses).
    Resume = 1,
    /// Start a call auction of `auction_kind` for `duration_ns` (0: until uncrossed).
    StartAuction = 2,
    /// Uncross the current call auction now.
    Uncross = 3,
}

impl MarketAction {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Halt),
            1 => Some(Self::Resume),
            2 => Some(Self::StartAuction),
            3 => Some(Self::Uncross),
            _ => None,
        }
    }
}

enum_field!(OrderStage, "u8 OrderStage", 3);
enum_field!(TriggerCause, "u8 TriggerCause", 2);
enum_field!(ListState, "u8 ListState", 3);
enum_field!(MmpAction, "u8 MmpAction", 4);
enum_field!(MarketAction, "u8 MarketAction", 4);

/// One leg of a `NewOrderList`: the fields of a `NewOrderExt` but the instrument,
/// which the list gives (`NewOrderList::legs`, `NewOrderList::new`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLeg {
    /// Client's id for the leg's order.
    pub client_order_id: ClientOrderId,
    /// Limit price, or a market order's protection price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// Expiry for Gtd, 0 otherwise.
    pub expire_at: Timestamp,
    /// Trigger price of a fixed stop / take-profit (0: none, or trailing).
    pub stop_price: Price,
    /// Iceberg display quantity (0: not an iceberg).
    pub display_qty: Qty,
    /// Trailing offset in `trail_unit`s (0: not trailing).
    pub trail: u32,
    /// Side.
    pub side: Side,
    /// Limit, market or post-only.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// Self-trade prevention.
    pub stp: StpMode,
    /// Stop-loss, take-profit, or none.
    pub trigger: TriggerKind,
    /// Ticks, basis points, or none.
    pub trail_unit: TrailUnit,
}

impl ListLeg {
    /// An unused leg (all zero).
    pub const UNUSED: ListLeg = ListLeg {
        client_order_id: ClientOrderId(0),
        price: Price::from_raw(0),
        qty: Qty::ZERO,
        expire_at: Timestamp(0),
        stop_price: Price::from_raw(0),
        display_qty: Qty::ZERO,
        trail: 0,
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        trigger: TriggerKind::None,
        trail_unit: TrailUnit::None,
    };
}

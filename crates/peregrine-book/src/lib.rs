//! The Peregrine matching core: a price-time priority order book per instrument and a
//! multi-instrument [`MatchingEngine`] that routes commands to books.
//!
//! # Design
//!
//! * **Single-threaded and deterministic.** A book is driven by [`Command`]s that carry
//!   their own timestamp; it reads no clock and no randomness and iterates nothing in
//!   hash order, so the same command stream always produces byte-identical [`Event`]s
//!   and the same [`Book::state_hash`].
//! * **No allocation after construction.** [`OrderBook`] preallocates an arena of
//!   64-byte order nodes, its level index, an id map and an expiry heap. Events go to a
//!   caller-provided [`EventSink`]. A full arena rejects with
//!   [`RejectReason::BookFull`]; nothing ever grows on the order path
//!   (`tests/no_alloc.rs` proves it with a counting allocator).
//! * **Two books, one contract.** [`ReferenceBook`] is a deliberately naive
//!   implementation (sorted `Vec`s, linear scans) of exactly the same rules; a
//!   differential property test drives both with random command streams and demands
//!   identical events and state. [`OrderBook`] is generic over its [`LevelIndex`] so the
//!   ladder and `BTreeMap` layouts run the same matching code.
//! * **Seams for the pipeline.** [`MatchingEngine`] takes a [`PreMatch`] stage
//!   (balance and risk checks, in a later issue) and writes to an [`EventSink`] that
//!   the post-match stages (settlement, journal, publishing) implement.
//!
//! The rules (kinds, TIF, STP, replace, event order) are documented on the command
//! and event types and in `docs/architecture.md`.
#![deny(unsafe_code)]

pub mod arena;
pub mod book;
pub mod command;
pub mod engine;
pub mod event;
pub mod ids;
pub mod index;
pub mod level;
mod lists;
mod memory;
mod mmp;
mod park;
mod prefetch;
pub mod reference;
pub mod reject;
pub mod venue;

pub use book::{OrderBook, RestoreError, Stage, DEFAULT_PARKED, LOOKAHEAD};
pub use command::{
    Action, Cancel, CancelList, Command, CommandKind, ExtOrder, MarketCommand, MarketOp,
    MassCancel, MmpCommand, MmpOp, MmpParams, NewOrder, OrderList, Replace, SetStatus, Trigger,
    MMP_MAX_FILLS,
};
pub use engine::{MatchingEngine, NoPreMatch, PreMatch};
pub use event::{
    CountingSink, Event, EventSink, Indicative, ListStatus, ListUpdate, MmpStatus, MmpUpdate,
    PhaseChanged, TriggerCause, Triggered,
};
pub use ids::{HashIds, IdWindow, OpenIds, OrderIds};
pub use index::{BTreeLevels, Ladder, LevelIndex};
pub use prefetch::prefetch;
pub use reference::ReferenceBook;
pub use reject::{CancelReason, RejectReason};
pub use venue::{ListStage, ListState, MmpView, ParkedOrder, VenueState};

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentStatus, OrderId, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};

/// A resting order as seen from outside a book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestingOrder {
    /// Exchange id.
    pub id: OrderId,
    /// Client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Side.
    pub side: Side,
    /// Limit price.
    pub price: Price,
    /// Open quantity.
    pub qty: Qty,
    /// GTC or GTD (only those rest).
    pub tif: TimeInForce,
    /// GTD expiry, 0 for GTC.
    pub expire_at: Timestamp,
    /// STP mode.
    pub stp: StpMode,
    /// Post-only flag.
    pub post_only: bool,
    /// Iceberg display size (0: not an iceberg).
    pub display: Qty,
    /// The part of `qty` the book shows (all of it unless an iceberg).
    pub shown: Qty,
    /// The order list it is a leg of (its id; 0: none).
    pub list: OrderId,
}

impl RestingOrder {
    /// The quantity hidden behind an iceberg's shown part.
    pub fn hidden(&self) -> Qty {
        Qty::from_raw(self.qty.lots() - self.shown.lots())
    }
}

/// A 32-byte Blake3 digest of a book's or engine's complete state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateHash(pub [u8; 32]);

impl core::fmt::Display for StateHash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// What every book implementation offers; the conformance and differential tests are
/// written against it.
pub trait Book {
    /// Applies one command.
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S);
    /// Every resting order in priority order: bids best first, then asks best first,
    /// FIFO within a price.
    fn for_each_order(&self, f: &mut dyn FnMut(&RestingOrder));
    /// Trades printed so far.
    fn trade_seq(&self) -> u64;
    /// Latest command time seen.
    fn now(&self) -> Timestamp;
    /// Trading status (`Halted` in a halt; `Active` otherwise, a call auction
    /// included: see [`VenueState::phase`]).
    fn status(&self) -> InstrumentStatus;
    /// Everything besides the resting orders: phase, last price, parked orders,
    /// lists, market-maker protection, in a canonical order (allocates: for hashes,
    /// snapshots and tests).
    fn venue_state(&self) -> VenueState;
    /// Enters an order list at time `ts` (its legs' ids already assigned).
    fn execute_list<S: EventSink>(&mut self, ts: Timestamp, list: &OrderList, sink: &mut S);

    /// Blake3 over the canonical state: clock, trade sequence, status, then each
    /// resting order in priority order with all its fields (little-endian), then the
    /// venue state ([`VenueState::hash_into`]).
    fn state_hash(&self) -> StateHash {
        let mut h = blake3::Hasher::new();
        h.update(&self.now().0.to_le_bytes());
        h.update(&self.trade_seq().to_le_bytes());
        h.update(&[self.status() as u8]);
        self.for_each_order(&mut |o| hash_order(&mut h, o));
        self.venue_state().hash_into(&mut h);
        StateHash(*h.finalize().as_bytes())
    }
}

fn hash_order(h: &mut blake3::Hasher, o: &RestingOrder) {
    let mut buf = [0u8; 48];
    buf[0..8].copy_from_slice(&o.id.0.to_le_bytes());
    buf[8..16].copy_from_slice(&o.client_id.0.to_le_bytes());
    buf[16..20].copy_from_slice(&o.account.0.to_le_bytes());
    buf[20] = o.side as u8;
    buf[21..29].copy_from_slice(&o.price.units().to_le_bytes());
    buf[29..37].copy_from_slice(&o.qty.lots().to_le_bytes());
    buf[37] = o.tif as u8;
    buf[38..46].copy_from_slice(&o.expire_at.0.to_le_bytes());
    buf[46] = o.stp as u8;
    buf[47] = u8::from(o.post_only);
    h.update(&buf);
    // An iceberg or a list leg appends its extra fields (plain orders hash as before).
    if !o.display.is_zero() || o.list.0 != 0 {
        h.update(&o.display.lots().to_le_bytes());
        h.update(&o.shown.lots().to_le_bytes());
        h.update(&o.list.0.to_le_bytes());
    }
}

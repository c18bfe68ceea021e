//! What the replay's parts tell each other, below all of them: the [`Market`] a
//! recorded file becomes (`l3`, `l2`), the [`Checker`] run after each message
//! (`check`), and the counts, findings and fills that the driver (`sim`) passes to
//! the report (`report`). Each original module re-exports its own.

use peregrine_types::Side;
use serde::Serialize;

use crate::data::DataError;
use crate::venue::Venue;

/// A recorded market fed into the core.
pub trait Market {
    /// Its messages.
    type Msg: Copy;
    /// Applies one message at core time `ts`; a trade the book did not show is
    /// returned for the strategy's market data.
    fn apply(&mut self, venue: &mut Venue, ts: u64, msg: &Self::Msg) -> Option<OffBook>;
}

/// A check run after every recorded message.
pub trait Checker<M: Market> {
    /// After message number `step` (from 1) was applied at `ts`.
    fn step(
        &mut self,
        step: u64,
        ts: u64,
        msg: &M::Msg,
        venue: &Venue,
        market: &M,
    ) -> Result<(), DataError>;
    /// After the last message.
    fn finish(&mut self, step: u64, venue: &Venue);
    /// The findings.
    fn report(&self) -> CheckReport;
}

/// What a recorded message did that is not a book change: a trade the strategy
/// should see although the visible book did not trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffBook {
    /// Aggressor side.
    pub aggressor: Side,
    /// Price.
    pub price: i64,
    /// Quantity.
    pub qty: i64,
}

/// Counts of what the recorded messages did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct L3Counts {
    /// Messages applied.
    pub messages: u64,
    /// Requests sent to the core.
    pub requests: u64,
    /// Messages naming an order the file never added (ignored).
    pub unknown_refs: u64,
    /// Recorded orders the core refused (price outside the band, book full).
    pub refused: u64,
    /// Messages acting on an order the core no longer holds (a strategy took it).
    pub gone: u64,
}

/// Counts of what the recorded levels did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct L2Counts {
    /// Messages applied.
    pub messages: u64,
    /// Requests sent to the core.
    pub requests: u64,
    /// Quantity added to levels.
    pub added: i64,
    /// Quantity cancelled from levels.
    pub removed: i64,
    /// Of it, taken from ahead of a strategy order (the model's choice).
    pub removed_ahead: i64,
    /// Trades replayed.
    pub trades: u64,
    /// Snapshots (the book cleared).
    pub clears: u64,
    /// Recorded orders the core refused (outside the band, book full).
    pub refused: u64,
}

/// What the checks found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// What was checked against.
    pub against: String,
    /// Steps checked.
    pub steps: u64,
    /// Full order-by-order comparisons.
    pub full: u64,
    /// Mismatches found.
    pub mismatches: u64,
    /// The first few: message number and what differed.
    pub first: Vec<String>,
}

/// One fill of the strategy's, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StrategyFill {
    /// When the book made it (core time), ns.
    pub ts: u64,
    /// The strategy's client order id.
    pub client_id: u64,
    /// Buy or sell.
    pub side: Side,
    /// Price (units).
    pub price: i64,
    /// Quantity (units).
    pub qty: i64,
    /// Open after the fill.
    pub leaves: i64,
    /// The strategy's order was resting (maker) rather than taking.
    pub maker: bool,
}

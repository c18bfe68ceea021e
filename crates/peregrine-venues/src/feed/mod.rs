//! Market data as venues report it: the venue-independent updates a feed produces
//! ([`MdUpdate`]: level changes, trades, book resets, and `End` closing an atomic
//! group: books are published only at an `End`, so a strategy never sees half of one
//! venue event), and the [`MarketFeed`] the engine's market-data thread polls (it keeps
//! the books these updates build).

use peregrine_queue::Consumer;
use peregrine_types::{InstrumentId, Price, Qty, Side};

/// One change a venue reports. Times are `CLOCK_MONOTONIC` ns (a feed converts the
/// venue's own clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdUpdate {
    /// A price level's new aggregate (qty 0: the level is gone).
    Level {
        /// Instrument.
        instrument: InstrumentId,
        /// Book side.
        side: Side,
        /// Level price.
        price: Price,
        /// New total quantity.
        qty: Qty,
        /// Orders at the level (0: unknown).
        orders: u32,
        /// The venue's timestamp.
        ts: u64,
    },
    /// A trade.
    Trade {
        /// Instrument.
        instrument: InstrumentId,
        /// The venue's trade id.
        trade_id: u64,
        /// Price.
        price: Price,
        /// Quantity.
        qty: Qty,
        /// The aggressor's side.
        aggressor: Side,
        /// The venue's timestamp.
        ts: u64,
    },
    /// Forget the book (a snapshot or a fresh session follows).
    Clear {
        /// Instrument.
        instrument: InstrumentId,
    },
    /// The end of one venue event (a packet, a command): publish what changed.
    End,
}

/// A source of market data for one venue, polled by the market-data thread. Never
/// blocks.
pub trait MarketFeed: Send + std::fmt::Debug {
    /// Hands every update available now to `out`; returns how many.
    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(MdUpdate)) -> usize;
    /// Hands the log lines the feed produced to `out` (see [`crate::log`]).
    fn drain_log(&mut self, _out: &mut dyn FnMut(String)) {}
}

/// A feed fed through an in-process SPSC ring by a venue adapter on its gateway
/// thread (the simulated venue).
#[derive(Debug)]
pub struct RingFeed {
    rx: Consumer<MdUpdate>,
}

impl RingFeed {
    /// Wraps the consumer end.
    pub fn new(rx: Consumer<MdUpdate>) -> RingFeed {
        RingFeed { rx }
    }
}

/// Updates drained per poll at most, so one busy venue cannot starve the others.
const RING_BATCH: usize = 4_096;

impl MarketFeed for RingFeed {
    fn poll(&mut self, _now_ns: u64, out: &mut dyn FnMut(MdUpdate)) -> usize {
        let mut n = 0;
        while n < RING_BATCH {
            let Some(u) = self.rx.try_pop() else { break };
            out(u);
            n += 1;
        }
        n
    }
}

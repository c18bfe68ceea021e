//! Book-depth snapshots for readers off the matching thread.
//!
//! The matching thread owns the books; nobody else may look at them. A
//! [`DepthPublisher`] (owned by the core) copies the top `levels` price levels of
//! every book into a [`DepthSnapshot`] and hands it to a shared [`DepthSlot`], **at
//! most once per interval** (`depth_interval_us`, default 500 µs) and only when a
//! command ran since the last copy — never after every order. Walking `levels`
//! levels per side costs O(levels) per book; the debounce bounds that to a few
//! thousand copies per second whatever the order rate.
//!
//! The hand-off allocates nothing on the matching thread: the publisher fills a
//! preallocated scratch snapshot, then *swaps* it with the slot's under a mutex it
//! only `try_lock`s (a reader copying the slot makes the publisher skip this turn and
//! retry at its next chance, never wait). Readers ([`DepthSlot::read`]) clone under
//! the lock, so the lock is held for a copy of a few kilobytes.
//!
//! Each snapshot names the engine sequence number and the feed sequence number it is
//! consistent with: it is taken after the batch's feed packets were sent, so a feed
//! subscriber can apply the messages after `feed_seq` on top of it. That is what the
//! TCP recovery service needs to serve snapshots from here instead of from the
//! engine.

use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use peregrine_book::{LevelIndex, MatchingEngine, PreMatch};
use peregrine_types::{InstrumentId, InstrumentStatus, Price, Qty, Side, Timestamp};

use crate::feed::FeedPosition;
use crate::telemetry::hist::Debounce;

/// One price level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepthLevel {
    /// Level price.
    pub price: Price,
    /// Total open quantity at the level.
    pub qty: Qty,
    /// Orders at the level.
    pub orders: u32,
}

/// The top levels of one book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookDepth {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Trading status.
    pub status: InstrumentStatus,
    /// Resting orders in the whole book (not only the levels shown).
    pub resting_orders: u64,
    /// Bids, best (highest) first, at most `levels`.
    pub bids: Vec<DepthLevel>,
    /// Asks, best (lowest) first, at most `levels`.
    pub asks: Vec<DepthLevel>,
}

impl BookDepth {
    /// The best level of a side.
    pub fn best(&self, side: Side) -> Option<DepthLevel> {
        match side {
            Side::Buy => self.bids.first().copied(),
            Side::Sell => self.asks.first().copied(),
        }
    }
}

/// Every book's top levels as of one point of the command stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepthSnapshot {
    /// Publishes so far; 0 until the first one (then the books are empty shells).
    pub version: u64,
    /// The last engine sequence number included.
    pub engine_seq: u64,
    /// Feed session id (0 without a feed).
    pub feed_session: u64,
    /// The last feed sequence number whose message is reflected (0 without a feed or
    /// before the first message): the feed continues at `feed_seq + 1`.
    pub feed_seq: u64,
    /// Engine time of the copy.
    pub ts: Timestamp,
    /// Levels shown per side.
    pub levels: usize,
    /// One entry per book, in the engine's order.
    pub books: Vec<BookDepth>,
}

impl DepthSnapshot {
    /// An empty snapshot with room for `levels` per side of every book of `engine`,
    /// so that filling it never allocates.
    fn with_capacity<L: LevelIndex, P: PreMatch>(
        engine: &MatchingEngine<L, P>,
        levels: usize,
    ) -> Self {
        let books = engine
            .books()
            .map(|b| BookDepth {
                instrument: b.spec().id,
                status: b.spec().status,
                resting_orders: 0,
                bids: Vec::with_capacity(levels),
                asks: Vec::with_capacity(levels),
            })
            .collect();
        DepthSnapshot {
            version: 0,
            engine_seq: 0,
            feed_session: 0,
            feed_seq: 0,
            ts: Timestamp(0),
            levels,
            books,
        }
    }

    /// The book of `instrument`.
    pub fn book(&self, instrument: InstrumentId) -> Option<&BookDepth> {
        self.books.iter().find(|b| b.instrument == instrument)
    }
}

/// Where the latest snapshot lives; shared with readers.
#[derive(Debug)]
pub struct DepthSlot {
    latest: Mutex<DepthSnapshot>,
}

impl DepthSlot {
    /// A copy of the latest snapshot (allocates, on the reader's thread).
    pub fn read(&self) -> DepthSnapshot {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Copies the books into the [`DepthSlot`], debounced. Lives on the matching thread.
#[derive(Debug)]
pub struct DepthPublisher {
    slot: Arc<DepthSlot>,
    scratch: DepthSnapshot,
    debounce: Debounce,
    published_seq: Option<u64>,
    version: u64,
}

impl DepthPublisher {
    /// A publisher of the top `levels` levels of every book of `engine`, at most
    /// once per `interval_ns`, and the slot readers read.
    pub fn new<L: LevelIndex, P: PreMatch>(
        engine: &MatchingEngine<L, P>,
        levels: usize,
        interval_ns: u64,
    ) -> Self {
        let slot = Arc::new(DepthSlot {
            latest: Mutex::new(DepthSnapshot::with_capacity(engine, levels)),
        });
        DepthPublisher {
            slot,
            scratch: DepthSnapshot::with_capacity(engine, levels),
            debounce: Debounce::new(interval_ns),
            published_seq: None,
            version: 0,
        }
    }

    /// The slot, for readers.
    pub fn slot(&self) -> Arc<DepthSlot> {
        Arc::clone(&self.slot)
    }

    /// Whether [`DepthPublisher::publish`] would copy now: the interval has passed and
    /// the books changed since the last copy (or there was none).
    #[inline]
    pub fn is_due(&self, now_ns: u64, engine_seq: u64) -> bool {
        self.published_seq != Some(engine_seq) && self.debounce.is_due(now_ns)
    }

    /// Copies the books if [`DepthPublisher::is_due`]; returns whether a new snapshot
    /// reached the slot (false also when a reader held it: retried next call).
    pub fn publish<L: LevelIndex, P: PreMatch>(
        &mut self,
        now_ns: u64,
        engine_seq: u64,
        feed: FeedPosition,
        engine: &MatchingEngine<L, P>,
    ) -> bool {
        if !self.is_due(now_ns, engine_seq) {
            return false;
        }
        let mut guard = match self.slot.latest.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        let s = &mut self.scratch;
        s.version = self.version + 1;
        s.engine_seq = engine_seq;
        s.feed_session = feed.session;
        s.feed_seq = feed.last_seq;
        s.ts = Timestamp(now_ns);
        for (slot, book) in s.books.iter_mut().zip(engine.books()) {
            slot.instrument = book.spec().id;
            slot.status = book.spec().status;
            slot.resting_orders = book.len() as u64;
            for (side, out) in [(Side::Buy, &mut slot.bids), (Side::Sell, &mut slot.asks)] {
                out.clear();
                book.visit_depth(side, s.levels, &mut |price, qty, orders| {
                    out.push(DepthLevel { price, qty, orders });
                });
            }
        }
        std::mem::swap(&mut *guard, &mut self.scratch);
        drop(guard);
        self.version += 1;
        self.published_seq = Some(engine_seq);
        self.debounce.done(now_ns);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Command, NewOrder};
    use peregrine_types::{
        AccountId, ClientOrderId, InstrumentSpec, OrderId, OrderType, StpMode, TimeInForce,
    };

    fn engine() -> MatchingEngine {
        MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap()
    }

    fn rest(e: &mut MatchingEngine, id: u64, side: Side, price: i64, ts: u64) {
        let cmd = Command {
            ts: Timestamp(ts),
            action: Action::New(NewOrder {
                instrument: InstrumentId(1),
                account: AccountId(1),
                id: OrderId(id),
                client_id: ClientOrderId(id),
                side,
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
                price: Price::from_raw(price),
                qty: Qty::from_raw(10),
                expire_at: Timestamp(0),
            }),
        };
        e.execute(&cmd, &mut Vec::new());
    }

    #[test]
    fn publishes_top_levels_with_sequence_numbers() {
        let mut e = engine();
        for (i, p) in [9_990, 9_995, 9_980, 9_970].into_iter().enumerate() {
            rest(&mut e, i as u64 + 1, Side::Buy, p, 1);
        }
        rest(&mut e, 10, Side::Sell, 10_010, 1);
        rest(&mut e, 11, Side::Sell, 10_010, 1);
        let mut p = DepthPublisher::new(&e, 3, 500_000);
        let slot = p.slot();
        assert_eq!(slot.read().version, 0);
        let feed = FeedPosition {
            session: 7,
            last_seq: 42,
        };
        assert!(p.publish(1_000, 6, feed, &e));
        let s = slot.read();
        assert_eq!(
            (s.version, s.engine_seq, s.feed_session, s.feed_seq),
            (1, 6, 7, 42)
        );
        let b = s.book(InstrumentId(1)).unwrap();
        let prices: Vec<i64> = b.bids.iter().map(|l| l.price.units()).collect();
        assert_eq!(prices, [9_995, 9_990, 9_980], "best first, three levels");
        assert_eq!(b.asks.len(), 1);
        assert_eq!((b.asks[0].qty.lots(), b.asks[0].orders), (20, 2));
        assert_eq!(b.resting_orders, 6);
        assert_eq!(b.best(Side::Sell).unwrap().price.units(), 10_010);
    }

    /// An injected clock: 1,000 commands 1 µs apart, a publish attempt after each,
    /// a 500 µs interval: at most one publish per interval, and none without change.
    #[test]
    fn debounced_to_one_copy_per_interval() {
        let e = engine();
        let mut p = DepthPublisher::new(&e, 5, 500_000);
        let mut published = Vec::new();
        for seq in 1..=1_000u64 {
            let now = seq * 1_000;
            if p.publish(now, seq, FeedPosition::default(), &e) {
                published.push((now, seq));
            }
        }
        assert_eq!(published, [(1_000, 1), (501_000, 501)]);
        // Nothing changed since the last copy: not due, however late.
        assert!(!p.is_due(u64::MAX, 501));
        assert!(p.is_due(u64::MAX, 502));
    }

    #[test]
    fn a_reader_holding_the_slot_makes_the_publisher_skip_not_wait() {
        let e = engine();
        let mut p = DepthPublisher::new(&e, 5, 0);
        let slot = p.slot();
        let held = slot.latest.lock().unwrap();
        assert!(!p.publish(1, 1, FeedPosition::default(), &e));
        drop(held);
        assert!(p.publish(2, 1, FeedPosition::default(), &e));
        assert_eq!(slot.read().engine_seq, 1);
    }
}

//! The books under test, behind one small trait so each is driven by the same ops.
//!
//! Baseline adapters map our ops onto each crate's public API as directly as it
//! allows; where a crate lacks an operation the adapter composes it, and says so:
//!
//! * `lobster` 0.7 has no IOC limit order and no replace: IOC = limit, then cancel of
//!   any rested remainder; replace = cancel + limit.
//! * `orderbook-rs` 0.15 has IOC; replace = cancel + limit (its `update_order` goes
//!   through the same cancel-then-add internally for price changes).

use peregrine_book::{CountingSink, LevelIndex, OrderBook};
use peregrine_types::Side;

use super::workload::{spec_for, to_command, Op, Scenario};

/// A book the bench can drive.
pub trait Candidate {
    /// Name in tables.
    const NAME: &'static str;
    /// A fresh, empty book able to run `s`.
    fn build(s: &Scenario) -> Self;
    /// Applies one op.
    fn apply(&mut self, op: &Op);
}

/// Peregrine's book with level index `L`.
#[derive(Debug)]
pub struct Peregrine<L: LevelIndex> {
    book: OrderBook<L>,
    sink: CountingSink,
    ts: u64,
}

impl<L: LevelIndex> Candidate for Peregrine<L> {
    const NAME: &'static str = L::BENCH_NAME;
    fn build(s: &Scenario) -> Self {
        Peregrine {
            book: OrderBook::new(spec_for(s), s.capacity),
            sink: CountingSink::default(),
            ts: 0,
        }
    }
    #[inline]
    fn apply(&mut self, op: &Op) {
        self.ts += 1;
        self.book.execute(&to_command(op, self.ts), &mut self.sink);
    }
}

/// `lobster` 0.7.
#[derive(Debug)]
pub struct Lobster(lobster::OrderBook);

impl Candidate for Lobster {
    const NAME: &'static str = "lobster";
    fn build(s: &Scenario) -> Self {
        Lobster(lobster::OrderBook::new(s.capacity, 16, false))
    }
    #[inline]
    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Add {
                id,
                side,
                price,
                qty,
                ioc,
            } => {
                let ev = self.limit(id, side, price, qty);
                if ioc && !matches!(ev, lobster::OrderEvent::Filled { .. }) {
                    std::hint::black_box(self.cancel(id));
                } else {
                    std::hint::black_box(ev);
                }
            }
            Op::Cancel { id } => {
                std::hint::black_box(self.cancel(id));
            }
            Op::Replace {
                id,
                side,
                price,
                qty,
            } => {
                std::hint::black_box(self.cancel(id));
                std::hint::black_box(self.limit(id, side, price, qty));
            }
        }
    }
}

impl Lobster {
    #[inline]
    fn limit(&mut self, id: u64, side: Side, price: i64, qty: i64) -> lobster::OrderEvent {
        let side = if side == Side::Buy {
            lobster::Side::Bid
        } else {
            lobster::Side::Ask
        };
        self.0.execute(lobster::OrderType::Limit {
            id: id as u128,
            side,
            qty: qty as u64,
            price: price as u64,
        })
    }

    #[inline]
    fn cancel(&mut self, id: u64) -> lobster::OrderEvent {
        self.0
            .execute(lobster::OrderType::Cancel { id: id as u128 })
    }
}

/// `orderbook-rs` 0.15.
#[allow(missing_debug_implementations)] // reason: the wrapped book implements no Debug
pub struct OrderbookRs {
    book: orderbook_rs::DefaultOrderBook,
}

impl Candidate for OrderbookRs {
    const NAME: &'static str = "orderbook-rs";
    fn build(_s: &Scenario) -> Self {
        OrderbookRs {
            book: orderbook_rs::DefaultOrderBook::new("BENCH"),
        }
    }
    #[inline]
    fn apply(&mut self, op: &Op) {
        use orderbook_rs::{Id, TimeInForce};
        let side = |s: Side| {
            if s == Side::Buy {
                orderbook_rs::Side::Buy
            } else {
                orderbook_rs::Side::Sell
            }
        };
        match *op {
            Op::Add {
                id,
                side: s,
                price,
                qty,
                ioc,
            } => {
                let tif = if ioc {
                    TimeInForce::Ioc
                } else {
                    TimeInForce::Gtc
                };
                let _ = std::hint::black_box(self.book.add_limit_order(
                    Id::from_u64(id),
                    price as u128,
                    qty as u64,
                    side(s),
                    tif,
                    None,
                ));
            }
            Op::Cancel { id } => {
                let _ = std::hint::black_box(self.book.cancel_order(Id::from_u64(id)));
            }
            Op::Replace {
                id,
                side: s,
                price,
                qty,
            } => {
                let _ = std::hint::black_box(self.book.cancel_order(Id::from_u64(id)));
                let _ = std::hint::black_box(self.book.add_limit_order(
                    Id::from_u64(id),
                    price as u128,
                    qty as u64,
                    side(s),
                    TimeInForce::Gtc,
                    None,
                ));
            }
        }
    }
}

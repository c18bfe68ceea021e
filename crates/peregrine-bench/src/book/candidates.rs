//! The books under test, behind one small trait so each is driven by the same ops.
//!
//! Baseline adapters map our ops onto each crate's public API as directly as it
//! allows; where a crate lacks an operation the adapter composes it, and says so:
//!
//! * `lobster` 0.7 has no IOC limit order and no replace: IOC = limit, then cancel of
//!   any rested remainder; replace = cancel + limit.
//! * `orderbook-rs` 0.15 has IOC; replace = cancel + limit (its `update_order` goes
//!   through the same cancel-then-add internally for price changes).

use peregrine_book::Command;
use peregrine_book::{
    BTreeLevels, CountingSink, HashIds, IdWindow, Ladder, LevelIndex, OpenIds, OrderBook, OrderIds,
};
use peregrine_types::{Side, Timestamp};

use super::workload::{spec_for, to_command, Op, Scenario};

/// A book the bench can drive.
pub(super) trait Candidate {
    /// Name in tables.
    const NAME: &'static str;
    /// A fresh, empty book able to run `s` (the baseline crates: `s` without the
    /// venue's stops and icebergs, [`Scenario::has_venue_orders`]).
    fn build(s: &Scenario) -> Self;
    /// Applies one op.
    fn apply(&mut self, op: &Op);
    /// Applies `op`, knowing the steps that follow it (a pipelined candidate starts
    /// loading their memory first). Default: [`Candidate::apply`].
    #[inline]
    fn apply_next(&mut self, op: &Op, _next: &[(Op, bool)]) {
        self.apply(op);
    }
}

/// The table name of a Peregrine layout: level index `L`, id map `I`.
pub(super) trait Layout {
    /// Name in tables.
    const NAME: &'static str;
}

impl Layout for (Ladder, IdWindow) {
    const NAME: &'static str = "peregrine";
}

impl Layout for (BTreeLevels, IdWindow) {
    const NAME: &'static str = "peregrine-btree";
}

impl Layout for (Ladder, HashIds) {
    const NAME: &'static str = "peregrine-hashids";
}

impl Layout for (Ladder, OpenIds) {
    const NAME: &'static str = "peregrine-openids";
}

/// Peregrine's book with level index `L` and id map `I`.
#[derive(Debug)]
pub(super) struct Peregrine<L: LevelIndex, I: OrderIds = IdWindow> {
    book: OrderBook<L, I>,
    sink: CountingSink,
    ts: u64,
}

impl<L: LevelIndex, I: OrderIds> Candidate for Peregrine<L, I>
where
    (L, I): Layout,
{
    const NAME: &'static str = <(L, I) as Layout>::NAME;
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

/// Peregrine's default book driven as a pipeline: before each op it runs the
/// prefetch stages for the ops that follow ([`peregrine_book::LOOKAHEAD`]), as the
/// exchange can for a batch it has already decoded. The steps are converted to
/// commands once, when the candidate is built (a batch arrives decoded).
#[derive(Debug)]
pub(super) struct Pipelined {
    inner: Peregrine<Ladder, IdWindow>,
    steps: Vec<Command>,
}

impl Candidate for Pipelined {
    const NAME: &'static str = "peregrine-pipelined";
    fn build(s: &Scenario) -> Self {
        Pipelined {
            inner: Peregrine::build(s),
            steps: s.steps.iter().map(|(op, _)| to_command(op, 0)).collect(),
        }
    }
    #[inline]
    fn apply(&mut self, op: &Op) {
        self.inner.apply(op);
    }
    #[inline]
    fn apply_next(&mut self, _op: &Op, next: &[(Op, bool)]) {
        let i = self.steps.len() - 1 - next.len();
        for (d, stage) in peregrine_book::LOOKAHEAD {
            if let Some(later) = self.steps.get(i + d) {
                self.inner.book.prefetch(later, stage);
            }
        }
        self.inner.ts += 1;
        let cmd = Command {
            ts: Timestamp(self.inner.ts),
            ..self.steps[i]
        };
        self.inner.book.execute(&cmd, &mut self.inner.sink);
    }
}

/// `lobster` 0.7.
#[derive(Debug)]
pub(super) struct Lobster(lobster::OrderBook);

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
            // No stops or icebergs in this crate: the bench never gives it those.
            Op::Stop { .. } | Op::Iceberg { .. } => {}
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
pub(super) struct OrderbookRs {
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
            // No stops or icebergs through this adapter: the bench never gives it those.
            Op::Stop { .. } | Op::Iceberg { .. } => {}
        }
    }
}

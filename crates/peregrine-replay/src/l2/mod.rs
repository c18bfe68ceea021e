//! Recorded price levels as real orders in the exchange core.
//!
//! Each level's recorded quantity rests in the core as orders of the account
//! [`MARKET`]; the strategy's orders rest among them, in the core's own queue. Then:
//!
//! * a level grows by `d`: a new order of `d` joins the back of the level (first,
//!   recorded orders on the other side that it would cross are removed: the
//!   recording's book was momentarily stale; a strategy order it crosses trades, as
//!   it would have in the market);
//! * a level shrinks by more than its trades explain: cancels; the [`QueueModel`]
//!   decides how much was ahead of the strategy's first order there, the rest is
//!   taken from behind it (newest first), each a replace to a smaller quantity that
//!   keeps priority, or a cancel;
//! * a trade: an IOC order of the aggressor's side at the trade's price, so it takes
//!   the level first in first out: what is ahead of the strategy's order, then the
//!   strategy's order;
//! * a snapshot (clear): every recorded order leaves.
//!
//! The core's matching decides the fills; the model decides only where the unseen
//! cancels were. A level's recorded quantity is compared with what the core holds of
//! the market there, so the strategy's own trades move the book until the next
//! update of that level.

pub mod queue;

pub use queue::QueueModel;

use peregrine_book::{Ladder, OrderBook};
use peregrine_types::{
    ClientOrderId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::v2::Inbound;

use crate::data::L2;
pub use crate::outcome::L2Counts;
use crate::outcome::{Market, OffBook};
use crate::recorded::MARKET;
use crate::venue::Venue;

/// One order of a level, as the replay needs it.
#[derive(Debug, Clone, Copy)]
struct Queued {
    id: OrderId,
    qty: i64,
    strategy: bool,
}

/// The recorded L2 market.
#[derive(Debug)]
pub struct L2Market {
    model: QueueModel,
    level: Vec<Queued>,
    ids: Vec<(OrderId, i64)>,
    /// Counts.
    pub counts: L2Counts,
}

impl L2Market {
    /// A market whose cancels are placed by `model`.
    pub fn new(model: QueueModel) -> L2Market {
        L2Market {
            model,
            level: Vec::with_capacity(64),
            ids: Vec::with_capacity(64),
            counts: L2Counts::default(),
        }
    }

    /// The orders at (`side`, `price`), first in line first, into `self.level`.
    fn read_level(&mut self, book: &OrderBook<Ladder>, side: Side, price: i64) {
        self.level.clear();
        let level = &mut self.level;
        book.visit_level(side, Price::from_raw(price), &mut |o| {
            level.push(Queued {
                id: o.id,
                qty: o.qty.lots(),
                strategy: o.account != MARKET,
            })
        });
    }

    fn send(&mut self, venue: &mut Venue, ts: u64, msg: &Inbound) -> bool {
        self.counts.requests += 1;
        !venue
            .submit(ts, MARKET, msg)
            .iter()
            .any(|e| matches!(e, peregrine_book::Event::Rejected(_)))
    }

    /// Takes `qty` off order `id` (open `open`) at `price`: a replace that keeps its
    /// priority, or a cancel.
    fn shrink(&mut self, venue: &mut Venue, ts: u64, id: OrderId, open: i64, price: i64, qty: i64) {
        let instrument = venue.instrument();
        let msg = if qty >= open {
            Inbound::Cancel(Cancel {
                client_order_id: ClientOrderId(0),
                order_id: id,
                instrument,
            })
        } else {
            Inbound::Replace(Replace {
                client_order_id: ClientOrderId(0),
                order_id: id,
                instrument,
                new_price: Price::from_raw(price),
                new_qty: Qty::from_raw(open - qty),
            })
        };
        self.send(venue, ts, &msg);
    }

    /// Removes up to `qty` from the market orders of `self.ids` (taken newest first).
    fn take_from(&mut self, venue: &mut Venue, ts: u64, price: i64, mut qty: i64) {
        while qty > 0 {
            let Some((id, open)) = self.ids.pop() else {
                break;
            };
            let cut = qty.min(open);
            self.shrink(venue, ts, id, open, price, cut);
            qty -= cut;
        }
    }

    fn cancel_level(&mut self, venue: &mut Venue, ts: u64, side: Side, price: i64, cancelled: i64) {
        self.read_level(venue.book(), side, price);
        let first_strategy = self.level.iter().position(|q| q.strategy);
        let split = first_strategy.unwrap_or(self.level.len());
        let market = |v: &[Queued]| -> Vec<(OrderId, i64)> {
            v.iter()
                .filter(|q| !q.strategy)
                .map(|q| (q.id, q.qty))
                .collect()
        };
        let ahead = market(&self.level[..split]);
        let behind = market(&self.level[split..]);
        let front: i64 = ahead.iter().map(|a| a.1).sum();
        let back: i64 = behind.iter().map(|b| b.1).sum();
        let from_ahead = match first_strategy {
            Some(_) => self.model.from_ahead(front, back, cancelled),
            // Nobody to place: take from the back of the whole level.
            None => (cancelled - back).max(0),
        };
        self.counts.removed += cancelled;
        if first_strategy.is_some() {
            self.counts.removed_ahead += from_ahead;
        }
        self.ids = behind;
        self.take_from(venue, ts, price, cancelled - from_ahead);
        self.ids = ahead;
        self.take_from(venue, ts, price, from_ahead);
    }

    /// Removes recorded orders on `side` priced at or through `price` (a stale part of
    /// the recorded book that a new level on the other side would cross).
    fn uncross(&mut self, venue: &mut Venue, ts: u64, side: Side, price: i64) {
        loop {
            let Some((best, _, _)) = venue.book().best(side) else {
                return;
            };
            let crosses = match side {
                Side::Buy => best.units() >= price,
                Side::Sell => best.units() <= price,
            };
            if !crosses {
                return;
            }
            self.read_level(venue.book(), side, best.units());
            let market: Vec<(OrderId, i64)> = self
                .level
                .iter()
                .filter(|q| !q.strategy)
                .map(|q| (q.id, q.qty))
                .collect();
            if market.is_empty() {
                return; // only the strategy's orders: the new level trades with them
            }
            for (id, open) in market {
                self.shrink(venue, ts, id, open, best.units(), open);
            }
        }
    }

    fn set_level(&mut self, venue: &mut Venue, ts: u64, side: Side, price: i64, qty: i64) {
        self.read_level(venue.book(), side, price);
        let held: i64 = self
            .level
            .iter()
            .filter(|q| !q.strategy)
            .map(|q| q.qty)
            .sum();
        let delta = qty - held;
        if delta > 0 {
            self.uncross(venue, ts, side.opposite(), price);
            let instrument = venue.instrument();
            let ok = self.send(
                venue,
                ts,
                &Inbound::NewOrder(NewOrder {
                    client_order_id: ClientOrderId(0),
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(delta),
                    expire_at: Timestamp(0),
                    instrument,
                    side,
                    order_type: OrderType::Limit,
                    tif: TimeInForce::Gtc,
                    stp: StpMode::None,
                }),
            );
            if ok {
                self.counts.added += delta;
            } else {
                self.counts.refused += 1;
            }
        } else if delta < 0 {
            self.cancel_level(venue, ts, side, price, -delta);
        }
    }

    fn clear(&mut self, venue: &mut Venue, ts: u64) {
        self.counts.clears += 1;
        let mut all = Vec::new();
        venue.book().visit_orders(&mut |o| {
            if o.account == MARKET {
                all.push((o.id, o.qty.lots(), o.price.units()));
            }
        });
        for (id, open, price) in all {
            self.shrink(venue, ts, id, open, price, open);
        }
    }
}

impl Market for L2Market {
    type Msg = L2;

    fn apply(&mut self, venue: &mut Venue, ts: u64, msg: &L2) -> Option<OffBook> {
        self.counts.messages += 1;
        match *msg {
            L2::Clear => self.clear(venue, ts),
            L2::Level { side, price, qty } => self.set_level(venue, ts, side, price, qty),
            L2::Trade {
                aggressor,
                price,
                qty,
            } => {
                self.counts.trades += 1;
                let instrument = venue.instrument();
                let ioc = Inbound::NewOrder(NewOrder {
                    client_order_id: ClientOrderId(0),
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(qty),
                    expire_at: Timestamp(0),
                    instrument,
                    side: aggressor,
                    order_type: OrderType::Limit,
                    tif: TimeInForce::Ioc,
                    stp: StpMode::None,
                });
                self.send(venue, ts, &ioc);
            }
        }
        None
    }
}

//! Seed 000's simulated venue: every request is held for a delay D ~ Uniform(lo, hi)
//! (the network and the venue's own latency), then handled by a configurable model:
//! the simulated market ([`market`]: real books, stochastic order flow, fills by queue
//! position, market data), or one of the fixed fill models kept for plumbing tests and
//! latency runs. Pending requests sit in a min-heap keyed by release time (ties by
//! arrival), so `poll` is O(log n) per report. Delays and the flow come from seeded
//! generators: the same inputs give the same reports.

pub mod market;
#[cfg(test)]
mod market_tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use peregrine_types::{Price, Qty, Rng};

use self::market::{MarketConfig, SimMarket};
use super::{Report, Venue, VenueError, VenueOrder};
use crate::feed::{MarketFeed, RingFeed};

/// Slots of the ring carrying the simulated market's data to the md thread.
const MD_RING: usize = 1 << 16;

/// How the simulated venue fills an order once its delay has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FillModel {
    /// Ack, then one fill of the whole quantity at the limit price.
    Full,
    /// Ack, then a fill of `percent`% (rounded down, at least 1 lot) and the rest rests
    /// until cancelled.
    Partial {
        /// Share filled.
        percent: u8,
    },
    /// Ack only: the order rests until cancelled.
    Rest,
    /// Every `every`-th order is rejected (reason 1); the others fill fully.
    RejectEvery {
        /// Period.
        every: u32,
    },
    /// The simulated market (`market` settings): orders rest and fill by queue
    /// position against a stochastic flow; the venue publishes market data.
    Market,
}

/// Simulated venue settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Smallest delay, ns.
    pub delay_lo_ns: u64,
    /// Largest delay, ns.
    pub delay_hi_ns: u64,
    /// Fill model.
    pub model: FillModel,
    /// Seed of the delay generator (and of the market's flow).
    pub seed: u64,
    /// The simulated market's flow (used by `model = { kind = "market" }`).
    #[serde(default)]
    pub market: MarketConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pending {
    /// Release the order: ack and fill per model.
    Release(u64),
    /// Confirm a cancel.
    Cancel(u64),
    /// Apply a replace: new price (units) and open quantity (lots).
    Replace(u64, i64, i64),
}

#[derive(Debug, Clone, Copy)]
struct Held {
    order: VenueOrder,
    leaves: i64,
    released: bool,
}

/// The simulated venue.
#[derive(Debug)]
pub struct SimVenue {
    cfg: SimConfig,
    rng: Rng,
    seq: u64,
    next_venue_id: u64,
    orders_seen: u64,
    last_delay: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Pending)>>,
    /// Fixed models: every open order. Market model: orders not released yet.
    orders: HashMap<u64, Held>,
    market: Option<SimMarket>,
    /// Unix epoch ns minus `CLOCK_MONOTONIC` ns: converts GTD expiries to the
    /// simulated books' clock.
    epoch_offset: u64,
}

impl SimVenue {
    /// A venue with `cfg`; with the market model, one book per instrument.
    pub fn new(cfg: SimConfig, instruments: &[u32]) -> SimVenue {
        let market = (cfg.model == FillModel::Market)
            .then(|| SimMarket::new(cfg.market, instruments, cfg.seed ^ 0x5EED_F10E, None));
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        SimVenue {
            cfg,
            rng: Rng::new(cfg.seed),
            seq: 0,
            next_venue_id: 1,
            orders_seen: 0,
            last_delay: 0,
            heap: BinaryHeap::new(),
            orders: HashMap::new(),
            market,
            epoch_offset: wall.saturating_sub(peregrine_queue::clock::now_ns()),
        }
    }

    /// The simulated market, if this venue runs one.
    pub fn market(&self) -> Option<&SimMarket> {
        self.market.as_ref()
    }

    /// The delay drawn for the next event (also used by tests to know the schedule).
    fn delay(&mut self) -> u64 {
        self.rng.range(self.cfg.delay_lo_ns, self.cfg.delay_hi_ns)
    }

    fn schedule(&mut self, at: u64, what: Pending) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, what)));
    }

    /// Orders still held or resting.
    pub fn open_orders(&self) -> usize {
        self.orders.len()
    }

    fn release(&mut self, id: u64, now: u64, out: &mut dyn FnMut(Report)) -> usize {
        if let Some(m) = self.market.as_mut() {
            let Some(h) = self.orders.remove(&id) else {
                return 0;
            };
            let mut order = h.order;
            if order.expire_at != 0 {
                order.expire_at = order.expire_at.saturating_sub(self.epoch_offset);
            }
            let mut n = 0;
            m.submit(&order, now, &mut |r| {
                n += 1;
                out(r)
            });
            return n;
        }
        let Some(h) = self.orders.get_mut(&id) else {
            return 0;
        };
        h.released = true;
        self.orders_seen += 1;
        let reject = matches!(self.cfg.model, FillModel::RejectEvery { every } if every > 0 && self.orders_seen.is_multiple_of(every as u64));
        if reject {
            self.orders.remove(&id);
            out(Report::Rejected {
                engine_id: id,
                reason: 1,
            });
            return 1;
        }
        let venue_id = self.next_venue_id;
        self.next_venue_id += 1;
        out(Report::Ack {
            engine_id: id,
            venue_id,
        });
        1 + self.fill_by_model(id, out)
    }

    /// Fills the open quantity of order `id` as the model says (at release, and again
    /// after a replace: a re-priced order meets the simulated market anew). Returns
    /// the number of reports.
    fn fill_by_model(&mut self, id: u64, out: &mut dyn FnMut(Report)) -> usize {
        let Some(h) = self.orders.get(&id) else {
            return 0;
        };
        let (qty, price) = (h.leaves, h.order.price);
        let fill = match self.cfg.model {
            FillModel::Full | FillModel::RejectEvery { .. } => qty,
            FillModel::Partial { percent } => (qty * percent.min(100) as i64 / 100).clamp(1, qty),
            FillModel::Rest | FillModel::Market => 0,
        };
        if fill <= 0 {
            return 0;
        }
        let leaves = qty - fill;
        out(Report::Fill {
            engine_id: id,
            price,
            qty: Qty::from_raw(fill),
            leaves: Qty::from_raw(leaves),
        });
        if leaves == 0 {
            self.orders.remove(&id);
        } else if let Some(h) = self.orders.get_mut(&id) {
            h.leaves = leaves;
        }
        1
    }
}

impl SimVenue {
    /// A replace reaches the venue: a released order with quantity left takes the new
    /// terms and then meets the fill model again (as a re-priced order would meet the
    /// market); anything else is refused with reason 10 (unknown order), like the
    /// exchange.
    fn apply_replace(
        &mut self,
        id: u64,
        price: i64,
        qty: i64,
        out: &mut dyn FnMut(Report),
    ) -> usize {
        match self.orders.get_mut(&id) {
            Some(h) if h.released && h.leaves > 0 && qty > 0 && price > 0 => {
                h.leaves = qty;
                h.order.price = Price::from_raw(price);
                out(Report::Replaced {
                    engine_id: id,
                    price: h.order.price,
                    qty: Qty::from_raw(qty),
                });
                return 1 + self.fill_by_model(id, out);
            }
            _ => out(Report::ReplaceRejected {
                engine_id: id,
                reason: 10,
            }),
        }
        1
    }
}

impl SimVenue {
    /// A cancel or replace reaches the simulated market.
    fn market_request(&mut self, what: Pending, now: u64, out: &mut dyn FnMut(Report)) -> usize {
        let Some(m) = self.market.as_mut() else {
            return 0;
        };
        let mut n = 0;
        let mut count = |r| {
            n += 1;
            out(r)
        };
        match what {
            Pending::Cancel(id) => match self.orders.remove(&id) {
                // A cancel that overtakes the release cancels the order unseen.
                Some(h) => count(Report::Cancelled {
                    engine_id: id,
                    qty: Qty::from_raw(h.leaves),
                    leaves: Qty::ZERO,
                }),
                None => m.cancel(id, now, &mut count),
            },
            Pending::Replace(id, price, qty) if !self.orders.contains_key(&id) => m.replace(
                id,
                Price::from_raw(price),
                Qty::from_raw(qty),
                now,
                &mut count,
            ),
            Pending::Replace(id, ..) => count(Report::ReplaceRejected {
                engine_id: id,
                reason: 10,
            }),
            Pending::Release(_) => {}
        }
        n
    }

    fn knows(&self, id: u64) -> bool {
        self.orders.contains_key(&id) || self.market.as_ref().is_some_and(|m| m.knows(id))
    }
}

impl Venue for SimVenue {
    fn market_feed(&mut self) -> Option<Box<dyn MarketFeed>> {
        let m = self.market.as_mut()?;
        let (tx, rx) = peregrine_queue::spsc::ring(MD_RING);
        m.set_md(tx);
        Some(Box::new(RingFeed::new(rx)))
    }

    fn submit(&mut self, order: VenueOrder, now_ns: u64) -> Result<(), VenueError> {
        // The simulated venue matches limit and market orders only.
        if !order.ext.is_plain() {
            return Err(VenueError::Unsupported);
        }
        let d = self.delay();
        self.last_delay = d;
        let at = now_ns + d;
        self.orders.insert(
            order.engine_id,
            Held {
                order,
                leaves: order.qty.lots(),
                released: false,
            },
        );
        self.schedule(at, Pending::Release(order.engine_id));
        Ok(())
    }

    fn cancel(&mut self, engine_id: u64, now_ns: u64) -> Result<(), VenueError> {
        if !self.knows(engine_id) {
            return Err(VenueError::UnknownOrder(engine_id));
        }
        let at = now_ns + self.delay();
        self.schedule(at, Pending::Cancel(engine_id));
        Ok(())
    }

    fn replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<(), VenueError> {
        if !self.knows(engine_id) {
            return Err(VenueError::UnknownOrder(engine_id));
        }
        let at = now_ns + self.delay();
        self.schedule(at, Pending::Replace(engine_id, price.units(), qty.lots()));
        Ok(())
    }

    fn last_scheduled_delay_ns(&self) -> Option<u64> {
        Some(self.last_delay)
    }

    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> usize {
        let mut n = 0;
        let mut count = |r| {
            n += 1;
            out(r)
        };
        self.poll_into(now_ns, &mut count);
        n
    }
}

impl SimVenue {
    /// Everything due by `now_ns`, in time order: the market's flow steps up to each
    /// pending request's time, then the request.
    fn poll_into(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) {
        loop {
            let due = match self.heap.peek() {
                Some(&Reverse((at, _, _))) if at <= now_ns => Some(at),
                _ => None,
            };
            if let Some(m) = self.market.as_mut() {
                m.advance(due.unwrap_or(now_ns), out);
            }
            let Some(at) = due else { return };
            let Some(Reverse((_, _, what))) = self.heap.pop() else {
                return;
            };
            if self.market.is_some() {
                match what {
                    Pending::Release(id) => self.release(id, at, out),
                    other => self.market_request(other, at, out),
                };
                continue;
            }
            match what {
                Pending::Release(id) => self.release(id, at, out),
                Pending::Cancel(id) => match self.orders.get(&id) {
                    // A cancel that overtakes the release cancels the order unseen.
                    Some(h) => {
                        let qty = Qty::from_raw(h.leaves);
                        self.orders.remove(&id);
                        out(Report::Cancelled {
                            engine_id: id,
                            qty,
                            leaves: Qty::ZERO,
                        });
                        1
                    }
                    None => 0, // already filled or rejected: nothing to cancel
                },
                Pending::Replace(id, price, qty) => self.apply_replace(id, price, qty, out),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Price, Side};

    fn order(id: u64, qty: i64) -> VenueOrder {
        VenueOrder::limit(
            id,
            InstrumentId(1),
            Side::Buy,
            Price::from_raw(100),
            Qty::from_raw(qty),
        )
    }

    fn venue(model: FillModel) -> SimVenue {
        SimVenue::new(
            SimConfig {
                delay_lo_ns: 1_000,
                delay_hi_ns: 5_000,
                model,
                seed: 42,
                market: MarketConfig::default(),
            },
            &[1],
        )
    }

    fn drain(v: &mut SimVenue, now: u64) -> Vec<Report> {
        let mut r = Vec::new();
        v.poll(now, &mut |x| r.push(x));
        r
    }

    #[test]
    fn nothing_before_the_delay_then_ack_and_full_fill() {
        let mut v = venue(FillModel::Full);
        v.submit(order(1, 10), 0).unwrap();
        assert!(drain(&mut v, 999).is_empty());
        let r = drain(&mut v, 5_000);
        assert_eq!(r.len(), 2);
        assert!(matches!(r[0], Report::Ack { engine_id: 1, .. }));
        assert!(
            matches!(r[1], Report::Fill { engine_id: 1, qty, leaves, .. } if qty.lots() == 10 && leaves.is_zero())
        );
        assert_eq!(v.open_orders(), 0);
    }

    #[test]
    fn releases_in_time_order_whatever_the_submit_order() {
        let mut v = venue(FillModel::Rest);
        for id in 1..=50 {
            v.submit(order(id, 1), id).unwrap();
        }
        let r = drain(&mut v, 1_000_000);
        assert_eq!(r.len(), 50);
        // Same seed, same schedule: a second venue gives the same order.
        let mut w = venue(FillModel::Rest);
        for id in 1..=50 {
            w.submit(order(id, 1), id).unwrap();
        }
        assert_eq!(drain(&mut w, 1_000_000), r);
    }

    #[test]
    fn partial_then_cancel_the_rest() {
        let mut v = venue(FillModel::Partial { percent: 30 });
        v.submit(order(1, 10), 0).unwrap();
        let r = drain(&mut v, 10_000);
        assert!(
            matches!(r[1], Report::Fill { qty, leaves, .. } if qty.lots() == 3 && leaves.lots() == 7)
        );
        v.cancel(1, 10_000).unwrap();
        assert_eq!(
            drain(&mut v, 20_000),
            vec![Report::Cancelled {
                engine_id: 1,
                qty: Qty::from_raw(7),
                leaves: Qty::ZERO,
            }]
        );
        assert_eq!(v.cancel(1, 20_000), Err(VenueError::UnknownOrder(1)));
    }

    #[test]
    fn replace_changes_a_resting_order_and_refuses_an_unreleased_one() {
        let mut v = venue(FillModel::Rest);
        v.submit(order(1, 10), 0).unwrap();
        v.replace(1, Price::from_raw(99), Qty::from_raw(4), 0)
            .unwrap();
        let r = drain(&mut v, 10_000);
        // Whichever comes first: an unreleased order cannot be replaced.
        assert!(r.contains(&Report::Ack {
            engine_id: 1,
            venue_id: 1
        }));
        v.replace(1, Price::from_raw(98), Qty::from_raw(3), 10_000)
            .unwrap();
        assert_eq!(
            drain(&mut v, 20_000),
            vec![Report::Replaced {
                engine_id: 1,
                price: Price::from_raw(98),
                qty: Qty::from_raw(3)
            }]
        );
        v.cancel(1, 20_000).unwrap();
        assert_eq!(
            drain(&mut v, 30_000),
            vec![Report::Cancelled {
                engine_id: 1,
                qty: Qty::from_raw(3),
                leaves: Qty::ZERO,
            }]
        );
        assert_eq!(
            v.replace(1, Price::from_raw(98), Qty::from_raw(3), 30_000),
            Err(VenueError::UnknownOrder(1))
        );
    }

    #[test]
    fn a_replaced_order_meets_the_fill_model_again() {
        let mut v = venue(FillModel::Partial { percent: 50 });
        v.submit(order(1, 4), 0).unwrap();
        let r = drain(&mut v, 10_000);
        assert_eq!(
            r[1],
            Report::Fill {
                engine_id: 1,
                price: Price::from_raw(100),
                qty: Qty::from_raw(2),
                leaves: Qty::from_raw(2)
            }
        );
        v.replace(1, Price::from_raw(99), Qty::from_raw(4), 10_000)
            .unwrap();
        assert_eq!(
            drain(&mut v, 20_000),
            vec![
                Report::Replaced {
                    engine_id: 1,
                    price: Price::from_raw(99),
                    qty: Qty::from_raw(4)
                },
                Report::Fill {
                    engine_id: 1,
                    price: Price::from_raw(99),
                    qty: Qty::from_raw(2),
                    leaves: Qty::from_raw(2)
                }
            ]
        );
    }

    #[test]
    fn reject_model_rejects_every_nth() {
        let mut v = venue(FillModel::RejectEvery { every: 2 });
        v.submit(order(1, 1), 0).unwrap();
        v.submit(order(2, 1), 0).unwrap();
        let rejected = drain(&mut v, 10_000)
            .iter()
            .filter(|r| matches!(r, Report::Rejected { .. }))
            .count();
        assert_eq!(rejected, 1);
    }
}

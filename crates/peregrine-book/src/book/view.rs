//! Read-only views: resting orders in priority order, depth, and the state hash.

use peregrine_types::{Price, Qty, Side, TimeInForce};

use super::OrderBook;
use crate::arena::NIL;
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::RestingOrder;

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Calls `f` for every resting order: bids best to worst, then asks best to worst,
    /// FIFO within a level.
    pub fn visit_orders(&self, f: &mut dyn FnMut(&RestingOrder)) {
        for side in [Side::Buy, Side::Sell] {
            let mut h = self.levels.best(side);
            while let Some(hh) = h {
                self.visit_fifo(hh, f);
                h = self.levels.next_worse(side, hh);
            }
        }
    }

    /// The orders of the level behind `handle`, first in line first.
    fn visit_fifo(&self, handle: u32, f: &mut dyn FnMut(&RestingOrder)) {
        let mut slot = self.levels.level(handle).head;
        while slot != NIL {
            let n = self.arena.get(slot);
            f(&RestingOrder {
                id: n.id,
                client_id: n.client_id,
                account: n.account,
                side: n.side,
                price: n.price,
                qty: n.qty,
                tif: if n.expire_at.0 == 0 {
                    TimeInForce::Gtc
                } else {
                    TimeInForce::Gtd
                },
                expire_at: n.expire_at,
                stp: n.stp,
                post_only: n.post_only,
            });
            slot = n.next;
        }
    }

    /// The handle of the occupied level at `price` on `side` (`None` for an empty
    /// level, or a price off the band or the tick grid).
    fn level_handle(&self, side: Side, price: Price) -> Option<u32> {
        self.spec.check_price(price).ok()?;
        self.levels.find(side, price.units())
    }

    /// The level at `price` on `side`: total open quantity and order count (`None`:
    /// no order rests there).
    pub fn level_at(&self, side: Side, price: Price) -> Option<(Qty, u32)> {
        let l = self.levels.level(self.level_handle(side, price)?);
        Some((Qty::from_raw(l.total), l.count))
    }

    /// Calls `f` for every order resting at `price` on `side`, first in line first.
    pub fn visit_level(&self, side: Side, price: Price, f: &mut dyn FnMut(&RestingOrder)) {
        if let Some(h) = self.level_handle(side, price) {
            self.visit_fifo(h, f);
        }
    }

    /// Calls `f(price, total qty, order count)` for up to `max` levels of `side`, best
    /// first.
    pub fn visit_depth(&self, side: Side, max: usize, f: &mut dyn FnMut(Price, Qty, u32)) {
        let mut h = self.levels.best(side);
        let mut n = 0;
        while let (Some(hh), true) = (h, n < max) {
            let l = self.levels.level(hh);
            f(Price::from_raw(l.price), Qty::from_raw(l.total), l.count);
            n += 1;
            h = self.levels.next_worse(side, hh);
        }
    }

    /// Walks every level and its FIFO and checks the structural invariants: links are
    /// consistent, level totals and counts equal the sum of their orders, every order
    /// sits at its level's price and side, the id map covers exactly the live orders,
    /// the sides are not crossed, and the cached best is the real best.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = 0usize;
        for side in [Side::Buy, Side::Sell] {
            let mut h = self.levels.best(side);
            let mut prev_price: Option<i64> = None;
            while let Some(hh) = h {
                let l = self.levels.level(hh);
                if let Some(p) = prev_price {
                    if !side.is_better(Price::from_raw(p), Price::from_raw(l.price)) {
                        return Err(format!("{side} levels out of order at {}", l.price));
                    }
                }
                prev_price = Some(l.price);
                let (mut total, mut count, mut prev) = (0i64, 0u32, NIL);
                let mut slot = l.head;
                while slot != NIL {
                    let n = self.arena.get(slot);
                    if !n.live || n.prev != prev || n.side != side || n.price.units() != l.price {
                        return Err(format!("bad node {} in level {}", n.id, l.price));
                    }
                    if n.qty.lots() <= 0 || n.level != hh {
                        return Err(format!("order {} has qty {} / wrong level", n.id, n.qty));
                    }
                    if self.ids.get(n.id.0) != Some(slot) {
                        return Err(format!("order {} missing from id map", n.id));
                    }
                    total += n.qty.lots();
                    count += 1;
                    prev = slot;
                    slot = n.next;
                }
                if l.tail != prev || total != l.total || count != l.count || count == 0 {
                    return Err(format!(
                        "level {} {}: total {} vs {}, count {} vs {}",
                        side, l.price, l.total, total, l.count, count
                    ));
                }
                seen += count as usize;
                h = self.levels.next_worse(side, hh);
            }
        }
        if seen != self.arena.len() || seen != self.ids.len() {
            return Err(format!(
                "{seen} orders in levels, {} live in arena, {} in id map",
                self.arena.len(),
                self.ids.len()
            ));
        }
        if let (Some((b, ..)), Some((a, ..))) = (self.best(Side::Buy), self.best(Side::Sell)) {
            if b >= a {
                return Err(format!("crossed book: bid {b} >= ask {a}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Action, Command, Event, Ladder, NewOrder, OrderBook};
    use peregrine_types::{
        AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty,
        Side, StpMode, TimeInForce, Timestamp,
    };

    #[test]
    fn level_at_and_visit_level() {
        let mut b = OrderBook::<Ladder>::new(InstrumentSpec::example(1), 16);
        let mut ev: Vec<Event> = Vec::new();
        for (id, qty) in [(1, 5), (2, 3)] {
            let o = NewOrder {
                instrument: InstrumentId(1),
                id: OrderId(id),
                client_id: ClientOrderId(id),
                account: AccountId(1),
                side: Side::Buy,
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
                price: Price::from_raw(9_990),
                qty: Qty::from_raw(qty),
                expire_at: Timestamp(0),
            };
            let ts = Timestamp(id);
            b.execute(
                &Command {
                    ts,
                    action: Action::New(o),
                },
                &mut ev,
            );
        }
        let p = Price::from_raw(9_990);
        assert_eq!(b.level_at(Side::Buy, p), Some((Qty::from_raw(8), 2)));
        assert_eq!(b.level_at(Side::Sell, p), None);
        assert_eq!(
            b.level_at(Side::Buy, Price::from_raw(1)),
            None,
            "off the band"
        );
        assert_eq!(b.level_at(Side::Buy, Price::from_raw(9_991)), None);
        let mut ids = Vec::new();
        b.visit_level(Side::Buy, p, &mut |o| ids.push(o.id.0));
        assert_eq!(ids, [1, 2]);
        b.visit_level(Side::Buy, Price::from_raw(-5), &mut |_| panic!("no level"));
    }
}

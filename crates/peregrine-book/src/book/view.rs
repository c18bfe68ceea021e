//! Read-only views: resting orders in priority order, depth, the venue state and the
//! structural invariants.

use peregrine_types::{OrderId, Price, Qty, Side, TimeInForce, Timestamp};

use super::OrderBook;
use crate::arena::{ICEBERG, IN_LIST, NIL};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::park::ParkState;
use crate::venue::{ParkedOrder, VenueState};
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

    /// The resting order in `slot`.
    fn resting(&self, slot: u32) -> RestingOrder {
        let n = self.arena.get(slot);
        let ext = &self.ext[slot as usize];
        let (display, hidden) = if n.flags & ICEBERG != 0 {
            (ext.display, ext.hidden)
        } else {
            (0, 0)
        };
        let list = if n.flags & IN_LIST != 0 {
            OrderId(self.lists.entry(ext.list).id)
        } else {
            OrderId(0)
        };
        RestingOrder {
            id: n.id,
            client_id: n.client_id,
            account: n.account,
            side: n.side,
            price: n.price,
            qty: Qty::from_raw(n.qty.lots() + hidden),
            tif: if n.expire_at.0 == 0 {
                TimeInForce::Gtc
            } else {
                TimeInForce::Gtd
            },
            expire_at: n.expire_at,
            stp: n.stp,
            post_only: n.post_only(),
            display: Qty::from_raw(display),
            shown: n.qty,
            list,
        }
    }

    /// The orders of the level behind `handle`, first in line first.
    fn visit_fifo(&self, handle: u32, f: &mut dyn FnMut(&RestingOrder)) {
        let mut slot = self.levels.level(handle).head;
        while slot != NIL {
            f(&self.resting(slot));
            slot = self.arena.get(slot).next;
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
    /// first (shown quantity only: an iceberg's hidden part is not depth).
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

    /// Calls `f` for every parked order, by order id (allocates: for queries and
    /// snapshots).
    pub fn visit_parked(&self, f: &mut dyn FnMut(&ParkedOrder)) {
        let mut slots = Vec::with_capacity(self.park.len());
        self.park.for_each_slot(&mut |s| slots.push(s));
        slots.sort_unstable_by_key(|&s| self.park.info(s).order.order.id);
        for s in slots {
            let i = self.park.info(s);
            let list = if i.list == NIL {
                OrderId(0)
            } else {
                OrderId(self.lists.entry(i.list).id)
            };
            let waiting = i.state == ParkState::Waiting;
            f(&ParkedOrder {
                order: i.order,
                seq: i.seq,
                pending: i.state == ParkState::Pending,
                list,
                watermark: Price::from_raw(if waiting { i.watermark } else { 0 }),
                trigger_price: Price::from_raw(if waiting { i.eff } else { 0 }),
            });
        }
    }

    /// The venue state (allocates; see [`VenueState`]).
    pub fn venue_state(&self) -> VenueState {
        let mut parked = Vec::with_capacity(self.park.len());
        self.visit_parked(&mut |p| parked.push(*p));
        let mut lists = Vec::with_capacity(self.lists.len());
        self.lists
            .for_each_slot(&mut |s| lists.push(self.lists.entry(s).state()));
        lists.sort_unstable_by_key(|l| l.id);
        let (p, v, s, side) = self.indicative;
        VenueState {
            phase: self.phase,
            ends_at: Timestamp(self.ends_at),
            last_price: Price::from_raw(self.last_price),
            indicative: (Price::from_raw(p), Qty::from_raw(v), Qty::from_raw(s), side),
            park_seq: self.park.seq(),
            parked,
            lists,
            mmp: self.mmp.views(),
        }
    }

    /// Walks every level and its FIFO and checks the structural invariants: links are
    /// consistent, level totals and counts equal the sum of their orders, every order
    /// sits at its level's price and side, the id map covers exactly the live orders,
    /// the sides are not crossed (outside call auctions and halts), the cached best is
    /// the real best, icebergs and list legs are consistent, every list's legs
    /// point back at it, and a book that says it is quiet is.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.quiet && !self.quiet_now() {
            return Err(format!(
                "quiet with work about: phase {:?}, {} parked, {} lists, protections {}, \
                 {} queued, {} tripped, trigger round {}",
                self.phase,
                self.park.len(),
                self.lists.len(),
                self.mmp.any(),
                self.queue.len(),
                self.mmp.tripped.len(),
                self.round_first
            ));
        }
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
                    self.check_ext(slot)?;
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
        if self.phase.is_continuous() && self.is_crossed() {
            return Err("crossed book in continuous trading".into());
        }
        if !self.queue.is_empty() || self.round_first != 0 || !self.mmp.tripped.is_empty() {
            return Err("cascade work left between commands".into());
        }
        self.check_parked()?;
        self.check_lists()
    }

    /// No waiting stop is already reached by the last trade price (the cascade ran
    /// to the end), and none is queued between commands.
    fn check_parked(&self) -> Result<(), String> {
        let mut err = None;
        let last = self.last_price;
        self.park.for_each_slot(&mut |s| {
            let i = self.park.info(s);
            let bad = match i.state {
                ParkState::Waiting => (i.rises && i.eff <= last) || (!i.rises && i.eff >= last),
                ParkState::Queued => true,
                ParkState::Pending => false,
            };
            if bad && err.is_none() {
                err = Some(format!(
                    "parked order {} ({:?}, trigger {}) against last price {last}",
                    i.order.order.id, i.state, i.eff
                ));
            }
        });
        err.map_or(Ok(()), Err)
    }

    fn check_ext(&self, slot: u32) -> Result<(), String> {
        let n = self.arena.get(slot);
        let e = &self.ext[slot as usize];
        if n.flags & ICEBERG != 0 && (e.display <= 0 || e.hidden < 0 || n.qty.lots() > e.display) {
            return Err(format!(
                "iceberg {} inconsistent: {e:?} shown {}",
                n.id, n.qty
            ));
        }
        if n.flags & IN_LIST != 0 {
            let l = self.lists.entry(e.list);
            if l.leg_index(n.id.0).is_none() {
                return Err(format!(
                    "order {} claims list {} without being a leg",
                    n.id, l.id
                ));
            }
        }
        Ok(())
    }

    fn check_lists(&self) -> Result<(), String> {
        let mut err = None;
        self.lists.for_each_slot(&mut |s| {
            let l = self.lists.entry(s);
            for id in l.legs {
                if id == 0 {
                    continue;
                }
                let ok = match (self.ids.get(id), self.park.get(id)) {
                    (Some(slot), _) => {
                        self.arena.get(slot).flags & IN_LIST != 0
                            && self.ext[slot as usize].list == s
                    }
                    (None, Some(p)) => self.park.info(p).list == s,
                    (None, None) => false,
                };
                if !ok && err.is_none() {
                    err = Some(format!("list {} leg {id} does not point back", l.id));
                }
            }
            if l.legs.iter().filter(|&&id| id != 0).count() < 2 && err.is_none() {
                err = Some(format!("list {} has fewer than two legs", l.id));
            }
        });
        err.map_or(Ok(()), Err)
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

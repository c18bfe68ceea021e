//! Order lists in the book: entry (atomic: every leg or none), and what a leg's
//! fill, trigger or exit does to the others (`docs/orders.md`, "Order lists").
//!
//! A list has at most one leg resting in the book at a time (an OCO pairs one limit
//! leg with a trigger leg, or two trigger legs; an OTO's other legs are parked until
//! released), so the rules only ever cancel parked legs from inside a sweep or a
//! walk of the book, never a node the walk is on.

use peregrine_types::{ListKind, OrderId, OrderType};

use super::new_order::accepted;
use super::OrderBook;
use crate::arena::{IN_LIST, NIL};
use crate::command::{CancelList, CommandKind, ExtOrder, OrderList};
use crate::event::{Event, EventSink, ListStatus, ListUpdate, Rejected};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::lists::ListEntry;
use crate::park::rises;
use crate::reject::{CancelReason, RejectReason};
use crate::venue::ListStage;

/// Whether `e` is a plain limit leg that can rest (OCO, OTO working).
fn resting_limit(e: &ExtOrder) -> bool {
    !e.trigger.is_some()
        && matches!(e.order.order_type, OrderType::Limit | OrderType::PostOnly)
        && e.order.tif.can_rest()
}

/// The structural check of an OCO pair: one side; a resting limit leg and a trigger
/// leg, or two fixed trigger legs of opposite directions.
fn oco_ok(a: &ExtOrder, b: &ExtOrder) -> bool {
    if a.order.side != b.order.side {
        return false;
    }
    match (a.trigger.is_some(), b.trigger.is_some()) {
        (false, true) => resting_limit(a),
        (true, false) => resting_limit(b),
        (true, true) => rises(a) != rises(b),
        (false, false) => false,
    }
}

/// Which legs of a `kind` list are pending at entry.
fn pending(kind: ListKind, leg: usize) -> bool {
    kind != ListKind::Oco && leg > 0
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Enters an order list: `List(Accepted)`, each leg's `Accepted`, then the legs
    /// (OCO legs rest or park; an OTO's pending legs park, then its working leg runs);
    /// or `List(Rejected)` and nothing else.
    pub(super) fn new_list<S: EventSink>(&mut self, list: &OrderList, sink: &mut S) {
        self.quiet = false;
        let n = list.kind.legs();
        let legs = &list.legs[..n];
        let update = |status, reason, leg| {
            Event::List(ListUpdate {
                instrument: list.instrument,
                list_id: legs[0].order.id,
                client_id: list.client_id,
                account: list.account,
                kind: list.kind,
                status,
                legs: ids_of(list),
                reason,
                leg,
            })
        };
        if let Err((reason, leg)) = self.check_list(list) {
            sink.push(update(ListStatus::Rejected, Some(reason), leg as u8));
            return;
        }
        let entry = ListEntry {
            id: legs[0].order.id.0,
            client_id: list.client_id,
            account: list.account,
            kind: list.kind,
            stage: match list.kind {
                ListKind::Oco => ListStage::Oco,
                _ => ListStage::Working,
            },
            legs: ids_of(list).map(OrderId::get),
            entered: ids_of(list).map(OrderId::get),
        };
        let Some(slot) = self.lists.insert(entry) else {
            debug_assert!(false, "no list slot after the check");
            return;
        };
        sink.push(update(ListStatus::Accepted, None, 0));
        for leg in legs {
            sink.push(accepted(&leg.order));
        }
        for (i, leg) in legs.iter().enumerate() {
            if pending(list.kind, i) {
                self.park_order(leg, true, slot);
            }
        }
        for (i, leg) in legs.iter().enumerate() {
            if !pending(list.kind, i) {
                self.enter_ext(leg, slot, sink);
            }
        }
    }

    /// Every rule that can refuse a list, with the failing leg: each leg's fields and
    /// trigger / display checks in leg order (an OCO's and a working leg's against the
    /// phase, pending legs' fields only), then the structure of the kind, then
    /// protection and duplicate ids, then room, then the market: an OCO leg or a
    /// pending OCO pair may not take or trigger at once.
    fn check_list(&self, list: &OrderList) -> Result<(), (RejectReason, usize)> {
        let n = list.kind.legs();
        let legs = &list.legs[..n];
        if list.instrument != self.spec.id {
            return Err((RejectReason::UnknownInstrument, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            let o = &leg.order;
            if o.instrument != list.instrument || o.account != list.account {
                return Err((RejectReason::InvalidList, i));
            }
            self.check_ext_fields(leg, pending(list.kind, i))
                .map_err(|r| (r, i))?;
        }
        let shape = match list.kind {
            ListKind::Oco => oco_ok(&legs[0], &legs[1]),
            ListKind::Oto => resting_or_ioc_limit(&legs[0]),
            ListKind::Otoco => resting_or_ioc_limit(&legs[0]) && oco_ok(&legs[1], &legs[2]),
        };
        if !shape {
            return Err((RejectReason::InvalidList, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            let id = leg.order.id;
            if legs[..i].iter().any(|l| l.order.id == id) {
                return Err((RejectReason::DuplicateOrderId, i));
            }
            let parks = leg.trigger.is_some() || pending(list.kind, i);
            self.admit(&leg.order, parks).map_err(|r| (r, i))?;
        }
        let parked = (0..n)
            .filter(|&i| legs[i].trigger.is_some() || pending(list.kind, i))
            .count();
        if self.lists.is_full() || self.park.capacity() - self.park.len() < parked {
            return Err((RejectReason::BookFull, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            let oco_leg = list.kind == ListKind::Oco || (list.kind == ListKind::Otoco && i > 0);
            if !oco_leg {
                continue;
            }
            self.check_would_trigger(leg).map_err(|r| (r, i))?;
            let o = &leg.order;
            if !leg.trigger.is_some()
                && self.phase.is_continuous()
                && self.would_take(o.side, o.price.units())
            {
                return Err((RejectReason::InvalidList, i));
            }
        }
        Ok(())
    }

    /// A leg traded (`leaves`: its open quantity after the fill; `live`: its arena
    /// slot while it still rests). Returns whether the leg is out of its list now.
    ///
    /// OCO: the first fill resolves the list (the other leg is cancelled; `Done`).
    /// A working leg's complete fill releases the pending legs (queued at once); an
    /// OTOCO's pending pair becomes an OCO.
    pub(super) fn list_fill<S: EventSink>(
        &mut self,
        list: u32,
        leg: u64,
        leaves: i64,
        live: Option<u32>,
        sink: &mut S,
    ) -> bool {
        self.quiet = false;
        let e = *self.lists.entry(list);
        if e.leg_index(leg).is_none() {
            return false;
        }
        match e.stage {
            ListStage::Oco => {
                self.detach(list, leg, live);
                self.cancel_legs(list, CancelReason::ListCancelled, sink);
                self.close_list(list, sink);
                true
            }
            ListStage::Working => {
                if e.legs[0] != leg || leaves > 0 {
                    return false;
                }
                self.detach(list, leg, live);
                for &p in &e.legs[1..] {
                    if p == 0 {
                        continue;
                    }
                    if let Some(slot) = self.park.get(p) {
                        self.park.queue(slot, true);
                        self.queue.push_back((slot, p));
                    }
                }
                if e.kind == ListKind::Otoco {
                    let entry = self.lists.entry_mut(list);
                    entry.stage = ListStage::Oco;
                    entry.legs = [e.legs[1], e.legs[2], 0];
                } else {
                    for &p in &e.legs[1..] {
                        self.detach(list, p, None);
                    }
                    self.close_list(list, sink);
                }
                true
            }
        }
    }

    /// An OCO leg triggered: the other leg is cancelled and the list is done.
    pub(super) fn list_triggered<S: EventSink>(&mut self, list: u32, leg: u64, sink: &mut S) {
        let e = *self.lists.entry(list);
        if e.leg_index(leg).is_none() {
            return;
        }
        self.detach(list, leg, None);
        self.cancel_legs(list, CancelReason::ListCancelled, sink);
        self.close_list(list, sink);
    }

    /// A leg left without completing its part (cancelled, expired, refused, or an
    /// unfilled remainder): every other leg still bound is cancelled and the list is
    /// done.
    pub(super) fn list_gone<S: EventSink>(&mut self, list: u32, leg: u64, sink: &mut S) {
        self.quiet = false;
        let e = *self.lists.entry(list);
        let Some(i) = e.leg_index(leg) else {
            return;
        };
        self.lists.entry_mut(list).legs[i] = 0;
        self.cancel_legs(list, CancelReason::ListCancelled, sink);
        self.close_list(list, sink);
    }

    /// Cancels a whole list: every leg still bound (`ListCancelled`), in leg order,
    /// then `Done`.
    pub(super) fn cancel_list<S: EventSink>(&mut self, c: &CancelList, sink: &mut S) {
        self.quiet = false;
        let found = if c.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            match self.lists.get(c.list_id.0) {
                None => Err(RejectReason::UnknownList),
                Some(slot) if self.lists.entry(slot).account != c.account => {
                    Err(RejectReason::NotOwner)
                }
                Some(slot) => Ok(slot),
            }
        };
        match found {
            Ok(slot) => {
                self.cancel_legs(slot, CancelReason::ListCancelled, sink);
                self.close_list(slot, sink);
            }
            Err(reason) => sink.push(Event::Rejected(Rejected {
                instrument: c.instrument,
                command: CommandKind::CancelList,
                id: c.list_id,
                client_id: c.client_id,
                account: c.account,
                reason,
            })),
        }
    }

    /// Cancels every leg still bound to `list` with `reason`, in leg order (each is
    /// detached first, so its cancellation does not come back to the list).
    fn cancel_legs<S: EventSink>(&mut self, list: u32, reason: CancelReason, sink: &mut S) {
        let legs = self.lists.entry(list).legs;
        for id in legs {
            if id == 0 {
                continue;
            }
            self.detach(list, id, None);
            if let Some(slot) = self.ids.get(id) {
                self.cancel_slot(slot, reason, sink);
            } else if let Some(slot) = self.park.get(id) {
                self.cancel_parked(slot, reason, sink);
            }
        }
    }

    /// Unbinds leg `id` from `list` (its node's or parked entry's membership too;
    /// `live`: its arena slot if known).
    fn detach(&mut self, list: u32, id: u64, live: Option<u32>) {
        if let Some(i) = self.lists.entry(list).leg_index(id) {
            self.lists.entry_mut(list).legs[i] = 0;
        }
        if let Some(slot) = live.or_else(|| self.ids.get(id)) {
            if self.arena.get(slot).live && self.arena.get(slot).id.0 == id {
                self.arena.get_mut(slot).flags &= !IN_LIST;
                self.ext[slot as usize].list = NIL;
                return;
            }
        }
        if let Some(slot) = self.park.get(id) {
            self.park.info_mut(slot).list = NIL;
        }
    }

    /// `List(Done)` and forgets the list.
    fn close_list<S: EventSink>(&mut self, list: u32, sink: &mut S) {
        let e = self.lists.remove(list);
        sink.push(Event::List(ListUpdate {
            instrument: self.spec.id,
            list_id: OrderId(e.id),
            client_id: e.client_id,
            account: e.account,
            kind: e.kind,
            status: ListStatus::Done,
            legs: e.entered.map(OrderId),
            reason: None,
            leg: 0,
        }));
    }
}

/// An OTO working leg: a plain limit or post-only order (any time in force).
fn resting_or_ioc_limit(e: &ExtOrder) -> bool {
    !e.trigger.is_some() && matches!(e.order.order_type, OrderType::Limit | OrderType::PostOnly)
}

/// The legs' order ids (unused legs 0).
fn ids_of(list: &OrderList) -> [OrderId; 3] {
    let n = list.kind.legs();
    let mut out = [OrderId(0); 3];
    for (i, o) in out.iter_mut().enumerate().take(n) {
        *o = list.legs[i].order.id;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{NewOrder, Trigger};
    use peregrine_types::{
        AccountId, ClientOrderId, InstrumentId, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
        TrailUnit, TriggerKind,
    };

    fn leg(side: Side, trigger: Trigger) -> ExtOrder {
        ExtOrder {
            order: NewOrder {
                instrument: InstrumentId(1),
                id: OrderId(1),
                client_id: ClientOrderId(1),
                account: AccountId(1),
                side,
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
                price: Price::from_raw(100),
                qty: Qty::from_raw(1),
                expire_at: Timestamp(0),
            },
            trigger,
            display: Qty::ZERO,
        }
    }

    #[test]
    fn oco_shapes() {
        let limit = leg(Side::Sell, Trigger::NONE);
        let stop = leg(
            Side::Sell,
            Trigger::at(TriggerKind::StopLoss, Price::from_raw(90)),
        );
        let tp = leg(
            Side::Sell,
            Trigger::at(TriggerKind::TakeProfit, Price::from_raw(110)),
        );
        assert!(oco_ok(&limit, &stop));
        assert!(oco_ok(&stop, &limit));
        assert!(oco_ok(&stop, &tp), "opposite directions");
        assert!(!oco_ok(&stop, &stop), "same direction");
        assert!(!oco_ok(&limit, &limit), "two resting legs");
        assert!(!oco_ok(&limit, &leg(Side::Buy, stop.trigger)), "two sides");
        let trailing = leg(Side::Sell, Trigger::trailing(TrailUnit::Ticks, 3));
        assert!(oco_ok(&limit, &trailing));
    }
}

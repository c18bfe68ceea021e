//! The reference book's order lists.

use peregrine_types::{ListKind, OrderId, OrderType, TriggerKind};

use super::{ListRec, ReferenceBook};
use crate::command::{CancelList, CommandKind, ExtOrder, OrderList};
use crate::event::{Event, EventSink, ListStatus, ListUpdate};
use crate::reject::{CancelReason, RejectReason};
use crate::venue::ListStage;

fn is_trigger(e: &ExtOrder) -> bool {
    e.trigger.kind != TriggerKind::None
}

fn limit_leg(e: &ExtOrder) -> bool {
    !is_trigger(e) && matches!(e.order.order_type, OrderType::Limit | OrderType::PostOnly)
}

fn oco_pair(a: &ExtOrder, b: &ExtOrder) -> bool {
    let rests = |e: &ExtOrder| limit_leg(e) && e.order.tif.can_rest();
    a.order.side == b.order.side
        && match (is_trigger(a), is_trigger(b)) {
            (false, true) => rests(a),
            (true, false) => rests(b),
            (true, true) => {
                a.trigger.kind.rises(a.order.side) != b.trigger.kind.rises(b.order.side)
            }
            (false, false) => false,
        }
}

fn pending(kind: ListKind, leg: usize) -> bool {
    kind != ListKind::Oco && leg > 0
}

impl ReferenceBook {
    fn list_ids(list: &OrderList) -> [OrderId; 3] {
        let mut out = [OrderId(0); 3];
        for (i, o) in out.iter_mut().enumerate().take(list.kind.legs()) {
            *o = list.legs[i].order.id;
        }
        out
    }

    pub(super) fn new_list(&mut self, list: &OrderList, sink: &mut impl EventSink) {
        let n = list.kind.legs();
        let ids = Self::list_ids(list);
        let update = |status, reason, leg| {
            Event::List(ListUpdate {
                instrument: list.instrument,
                list_id: ids[0],
                client_id: list.client_id,
                account: list.account,
                kind: list.kind,
                status,
                legs: ids,
                reason,
                leg,
            })
        };
        if let Err((r, leg)) = self.check_list(list) {
            sink.push(update(ListStatus::Rejected, Some(r), leg as u8));
            return;
        }
        let id = ids[0].0;
        self.lists.push(ListRec {
            id,
            client_id: list.client_id,
            account: list.account,
            kind: list.kind,
            stage: if list.kind == ListKind::Oco {
                ListStage::Oco
            } else {
                ListStage::Working
            },
            legs: ids.map(|x| x.0),
            entered: ids.map(|x| x.0),
        });
        sink.push(update(ListStatus::Accepted, None, 0));
        for leg in &list.legs[..n] {
            sink.push(Self::accepted(&leg.order));
        }
        for (i, leg) in list.legs[..n].iter().enumerate() {
            if pending(list.kind, i) {
                self.park(leg, true, id, None);
            }
        }
        for (i, leg) in list.legs[..n].iter().enumerate() {
            if !pending(list.kind, i) {
                self.enter_ext(leg, id, sink);
            }
        }
    }

    fn check_list(&self, list: &OrderList) -> Result<(), (RejectReason, usize)> {
        let n = list.kind.legs();
        let legs = &list.legs[..n];
        if list.instrument != self.spec.id {
            return Err((RejectReason::UnknownInstrument, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            if leg.order.instrument != list.instrument || leg.order.account != list.account {
                return Err((RejectReason::InvalidList, i));
            }
            let waits = is_trigger(leg) || pending(list.kind, i);
            self.check_fields(&leg.order, self.phase_for(waits))
                .and_then(|()| self.check_ext(leg))
                .map_err(|r| (r, i))?;
        }
        let shape = match list.kind {
            ListKind::Oco => oco_pair(&legs[0], &legs[1]),
            ListKind::Oto => limit_leg(&legs[0]),
            ListKind::Otoco => limit_leg(&legs[0]) && oco_pair(&legs[1], &legs[2]),
        };
        if !shape {
            return Err((RejectReason::InvalidList, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            if legs[..i].iter().any(|l| l.order.id == leg.order.id) {
                return Err((RejectReason::DuplicateOrderId, i));
            }
            let parks = is_trigger(leg) || pending(list.kind, i);
            self.admit(&leg.order, parks).map_err(|r| (r, i))?;
        }
        let parked = (0..n)
            .filter(|&i| is_trigger(&legs[i]) || pending(list.kind, i))
            .count();
        if self.lists.len() >= self.parked_capacity
            || self.parked_capacity - self.parked.len() < parked
        {
            return Err((RejectReason::BookFull, 0));
        }
        for (i, leg) in legs.iter().enumerate() {
            if list.kind == ListKind::Oto || (list.kind == ListKind::Otoco && i == 0) {
                continue;
            }
            self.check_would_trigger(leg).map_err(|r| (r, i))?;
            let continuous = self.phase == peregrine_types::TradingPhase::Continuous;
            if !is_trigger(leg) && continuous && self.would_take(leg.order.side, leg.order.price) {
                return Err((RejectReason::InvalidList, i));
            }
        }
        Ok(())
    }

    fn list_index(&self, list: u64) -> Option<usize> {
        self.lists.iter().position(|l| l.id == list)
    }

    fn bound(&self, list: u64, leg: u64) -> bool {
        leg != 0
            && self
                .list_index(list)
                .is_some_and(|i| self.lists[i].legs.contains(&leg))
    }

    /// A leg traded; returns whether it left its list.
    pub(super) fn list_fill(
        &mut self,
        list: u64,
        leg: u64,
        leaves: i64,
        sink: &mut impl EventSink,
    ) -> bool {
        if !self.bound(list, leg) {
            return false;
        }
        let l = self.lists[self.list_index(list).unwrap()];
        match l.stage {
            ListStage::Oco => {
                self.detach(list, leg);
                self.cancel_legs(list, CancelReason::ListCancelled, sink);
                self.close(list, sink);
                true
            }
            ListStage::Working => {
                if l.legs[0] != leg || leaves > 0 {
                    return false;
                }
                self.detach(list, leg);
                for &p in &l.legs[1..] {
                    if p == 0 {
                        continue;
                    }
                    if let Some(i) = self.parked_pos(p) {
                        self.parked[i].state = super::PState::Queued;
                        self.parked[i].release = true;
                        self.queue.push_back(p);
                    }
                }
                if l.kind == ListKind::Otoco {
                    let i = self.list_index(list).unwrap();
                    self.lists[i].stage = ListStage::Oco;
                    self.lists[i].legs = [l.legs[1], l.legs[2], 0];
                } else {
                    for &p in &l.legs[1..] {
                        self.detach(list, p);
                    }
                    self.close(list, sink);
                }
                true
            }
        }
    }

    pub(super) fn list_triggered(&mut self, list: u64, leg: u64, sink: &mut impl EventSink) {
        if !self.bound(list, leg) {
            return;
        }
        self.detach(list, leg);
        self.cancel_legs(list, CancelReason::ListCancelled, sink);
        self.close(list, sink);
    }

    pub(super) fn list_gone(&mut self, list: u64, leg: u64, sink: &mut impl EventSink) {
        if !self.bound(list, leg) {
            return;
        }
        self.detach(list, leg);
        self.cancel_legs(list, CancelReason::ListCancelled, sink);
        self.close(list, sink);
    }

    pub(super) fn cancel_list(&mut self, c: &CancelList, sink: &mut impl EventSink) {
        let r = if c.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            match self.list_index(c.list_id.0) {
                None => Err(RejectReason::UnknownList),
                Some(i) if self.lists[i].account != c.account => Err(RejectReason::NotOwner),
                Some(_) => Ok(()),
            }
        };
        match r {
            Ok(()) => {
                self.cancel_legs(c.list_id.0, CancelReason::ListCancelled, sink);
                self.close(c.list_id.0, sink);
            }
            Err(reason) => self.reject(
                sink,
                c.instrument,
                CommandKind::CancelList,
                c.list_id,
                c.client_id,
                c.account,
                reason,
            ),
        }
    }

    fn cancel_legs(&mut self, list: u64, reason: CancelReason, sink: &mut impl EventSink) {
        let Some(i) = self.list_index(list) else {
            return;
        };
        for id in self.lists[i].legs {
            if id == 0 {
                continue;
            }
            self.detach(list, id);
            if let Some(e) = self.pos(OrderId(id)) {
                self.cancel_entry(e, reason, sink);
            } else if self.parked_pos(id).is_some() {
                self.cancel_parked(id, reason, sink);
            }
        }
    }

    fn detach(&mut self, list: u64, leg: u64) {
        if let Some(i) = self.list_index(list) {
            for l in &mut self.lists[i].legs {
                if *l == leg {
                    *l = 0;
                }
            }
        }
        if let Some(e) = self.pos(OrderId(leg)) {
            self.entries[e].order.list = OrderId(0);
        }
        if let Some(p) = self.parked_pos(leg) {
            self.parked[p].list = 0;
        }
    }

    fn close(&mut self, list: u64, sink: &mut impl EventSink) {
        let Some(i) = self.list_index(list) else {
            return;
        };
        let l = self.lists.remove(i);
        sink.push(Event::List(ListUpdate {
            instrument: self.spec.id,
            list_id: OrderId(l.id),
            client_id: l.client_id,
            account: l.account,
            kind: l.kind,
            status: ListStatus::Done,
            legs: l.entered.map(OrderId),
            reason: None,
            leg: 0,
        }));
    }
}

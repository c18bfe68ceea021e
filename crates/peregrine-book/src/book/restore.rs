//! Rebuilding a book from a snapshot: its clocks and status plus the canonical list of
//! resting orders (what [`OrderBook::visit_orders`] yields, bids then asks, best to
//! worst, FIFO within a level), then its venue state ([`OrderBook::restore_venue`]).
//! A restored book has the same `state_hash()` and behaves identically from then on
//! (`tests/restore.rs`).

use peregrine_types::{InstrumentStatus, TimeInForce, Timestamp};

use super::{NodeExt, OrderBook};
use crate::arena::{OrderNode, ICEBERG, IN_LIST, NIL, POST_ONLY};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::lists::ListEntry;
use crate::venue::VenueState;
use crate::RestingOrder;

/// A snapshot could not be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RestoreError {
    /// Restoring needs an empty book.
    #[error("the book is not empty")]
    NotEmpty,
    /// More orders than the arena holds.
    #[error("more resting orders than the book's capacity {0}")]
    Full(usize),
    /// The same order id twice.
    #[error("order {0} listed twice")]
    DuplicateId(u64),
    /// A list names a leg that is neither resting nor parked, or two lists share one.
    #[error("list {0} names a leg that is not live")]
    BadList(u64),
    /// An iceberg whose shown part exceeds its display size or its quantity.
    #[error("order {0}: inconsistent iceberg")]
    BadIceberg(u64),
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Rebuilds an empty book: clock `now`, `trade_seq`, `status`, and `orders` in
    /// priority order (each appended to the back of its level). Emits no events.
    pub fn restore(
        &mut self,
        now: Timestamp,
        trade_seq: u64,
        status: InstrumentStatus,
        orders: &[RestingOrder],
    ) -> Result<(), RestoreError> {
        if !self.is_empty() || self.park.len() != 0 {
            return Err(RestoreError::NotEmpty);
        }
        if orders.len() > self.capacity() {
            return Err(RestoreError::Full(self.capacity()));
        }
        self.now = now.0;
        self.sched_done = now.0;
        self.trade_seq = trade_seq;
        self.set_status(status);
        for o in orders {
            if self.ids.contains(o.id.0) {
                return Err(RestoreError::DuplicateId(o.id.0));
            }
            self.push_resting(o)?;
        }
        self.refresh_timer();
        self.quiet = self.quiet_now();
        Ok(())
    }

    fn push_resting(&mut self, o: &RestingOrder) -> Result<(), RestoreError> {
        let iceberg = !o.display.is_zero();
        if iceberg && (o.shown > o.display || o.shown > o.qty || o.shown.lots() <= 0) {
            return Err(RestoreError::BadIceberg(o.id.0));
        }
        let h = self.levels.get_or_insert(o.side, o.price.units());
        let mut flags = 0;
        if o.post_only {
            flags |= POST_ONLY;
        }
        if iceberg {
            flags |= ICEBERG;
        }
        let node = OrderNode {
            id: o.id,
            client_id: o.client_id,
            price: o.price,
            qty: if iceberg { o.shown } else { o.qty },
            expire_at: o.expire_at,
            account: o.account,
            prev: NIL,
            next: NIL,
            level: h,
            side: o.side,
            stp: o.stp,
            flags,
            live: true,
        };
        let slot = self
            .arena
            .alloc(node)
            .ok_or(RestoreError::Full(self.capacity()))?;
        self.ext[slot as usize] = NodeExt {
            display: o.display.lots(),
            hidden: if iceberg { o.hidden().lots() } else { 0 },
            list: NIL,
        };
        self.ids.insert(o.id.0, slot);
        self.levels.level_mut(h).push_back(&mut self.arena, slot);
        self.levels.occupied(o.side, h);
        if o.expire_at.0 != 0 {
            self.schedule_expiry(o.expire_at.0, o.id.0);
        }
        self.quiet = self.quiet_now();
        Ok(())
    }

    /// Restores the venue state of a snapshot (after [`OrderBook::restore`]): phase,
    /// last price, parked orders, lists (re-binding their resting legs), protections.
    pub fn restore_venue(&mut self, v: &VenueState) -> Result<(), RestoreError> {
        self.set_phase(v.phase);
        self.ends_at = v.ends_at.0;
        self.last_price = v.last_price.units();
        let (p, q, s, side) = v.indicative;
        self.indicative = (p.units(), q.lots(), s.lots(), side);
        self.park.set_seq(v.park_seq);
        for p in &v.parked {
            let id = p.order.order.id.0;
            if self.ids.contains(id) || self.park.get(id).is_some() {
                return Err(RestoreError::DuplicateId(id));
            }
            let slot = self
                .park
                .insert(&p.order, true, NIL, 0, Some(p.seq))
                .ok_or(RestoreError::Full(self.park.capacity()))?;
            if !p.pending {
                self.park
                    .wait_restored(slot, p.watermark.units(), p.trigger_price.units());
            }
            if p.order.order.tif == TimeInForce::Gtd {
                self.schedule_expiry(p.order.order.expire_at.0, id);
            }
        }
        for l in &v.lists {
            let entry = ListEntry {
                id: l.id.0,
                client_id: l.client_id,
                account: l.account,
                kind: l.kind,
                stage: l.stage,
                legs: l.legs.map(|x| x.0),
                entered: l.entered.map(|x| x.0),
            };
            let slot = self
                .lists
                .insert(entry)
                .ok_or(RestoreError::BadList(l.id.0))?;
            for id in l.legs.map(|x| x.0).into_iter().filter(|&x| x != 0) {
                if let Some(s) = self.ids.get(id) {
                    if self.arena.get(s).flags & IN_LIST != 0 {
                        return Err(RestoreError::BadList(l.id.0));
                    }
                    self.arena.get_mut(s).flags |= IN_LIST;
                    self.ext[s as usize].list = slot;
                } else if let Some(p) = self.park.get(id) {
                    if self.park.info(p).list != NIL {
                        return Err(RestoreError::BadList(l.id.0));
                    }
                    self.park.info_mut(p).list = slot;
                } else {
                    return Err(RestoreError::BadList(l.id.0));
                }
            }
        }
        self.mmp.restore(&v.mmp);
        self.refresh_timer();
        self.quiet = self.quiet_now();
        Ok(())
    }
}

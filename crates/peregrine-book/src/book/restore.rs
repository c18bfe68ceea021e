//! Rebuilding a book from a snapshot: its clocks and status plus the canonical list of
//! resting orders (what [`OrderBook::visit_orders`] yields, bids then asks, best to
//! worst, FIFO within a level). A restored book has the same `state_hash()` and
//! behaves identically from then on (`tests/restore.rs`).

use peregrine_types::{InstrumentStatus, Timestamp};

use super::OrderBook;
use crate::arena::{OrderNode, NIL};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
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
        if !self.is_empty() {
            return Err(RestoreError::NotEmpty);
        }
        if orders.len() > self.capacity() {
            return Err(RestoreError::Full(self.capacity()));
        }
        self.now = now.0;
        self.trade_seq = trade_seq;
        self.set_status(status);
        for o in orders {
            if self.ids.contains(o.id.0) {
                return Err(RestoreError::DuplicateId(o.id.0));
            }
            self.push_resting(o)?;
        }
        Ok(())
    }

    fn push_resting(&mut self, o: &RestingOrder) -> Result<(), RestoreError> {
        let h = self.levels.get_or_insert(o.side, o.price.units());
        let node = OrderNode {
            id: o.id,
            client_id: o.client_id,
            price: o.price,
            qty: o.qty,
            expire_at: o.expire_at,
            account: o.account,
            prev: NIL,
            next: NIL,
            level: h,
            side: o.side,
            stp: o.stp,
            post_only: o.post_only,
            live: true,
        };
        let slot = self
            .arena
            .alloc(node)
            .ok_or(RestoreError::Full(self.capacity()))?;
        self.ids.insert(o.id.0, slot);
        self.levels.level_mut(h).push_back(&mut self.arena, slot);
        self.levels.occupied(o.side, h);
        if o.expire_at.0 != 0 {
            self.schedule_expiry(o.expire_at.0, o.id.0);
        }
        Ok(())
    }
}

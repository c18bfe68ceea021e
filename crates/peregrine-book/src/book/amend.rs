//! Changing resting orders: cancel, cancel-replace, mass cancel.

use peregrine_types::{AccountId, InstrumentStatus, OrderId, Qty, Side};

use super::{OrderBook, Taker};
use crate::arena::NIL;
use crate::command::{Cancel, CommandKind, MassCancel, Replace};
use crate::event::{Event, EventSink, MassCancelled, Rejected, Replaced};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::{CancelReason, RejectReason};

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Cancels one order. Allowed while halted.
    pub(super) fn cancel<S: EventSink>(&mut self, c: &Cancel, sink: &mut S) {
        let found = if c.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            self.owned_slot(c.id, c.account)
        };
        match found {
            Ok(slot) => {
                self.prefetch_around(slot, None);
                self.cancel_slot(slot, CancelReason::UserRequested, sink);
            }
            Err(reason) => sink.push(Event::Rejected(Rejected {
                instrument: c.instrument,
                command: CommandKind::Cancel,
                id: c.id,
                client_id: c.client_id,
                account: c.account,
                reason,
            })),
        }
    }

    /// The slot of a live order owned by `account`.
    fn owned_slot(&self, id: OrderId, account: AccountId) -> Result<u32, RejectReason> {
        let slot = self.ids.get(id.0).ok_or(RejectReason::UnknownOrder)?;
        if self.arena.get(slot).account != account {
            return Err(RejectReason::NotOwner);
        }
        Ok(slot)
    }

    /// Cancel-replace. Same price and open quantity not larger: priority kept, changed in
    /// place. Otherwise the order leaves its level, may trade at its new price as a
    /// taker, and rests at the back of its new level.
    pub(crate) fn replace<S: EventSink>(&mut self, r: &Replace, sink: &mut S) {
        let slot = match self.check_replace(r) {
            Ok(slot) => slot,
            Err(reason) => {
                sink.push(Event::Rejected(Rejected {
                    instrument: r.instrument,
                    command: CommandKind::Replace,
                    id: r.id,
                    client_id: r.client_id,
                    account: r.account,
                    reason,
                }));
                return;
            }
        };
        let old = *self.arena.get(slot);
        let keep = r.price == old.price && r.qty <= old.qty;
        if !keep {
            self.prefetch_around(slot, Some(r.price.units()));
        }
        sink.push(Event::Replaced(Replaced {
            instrument: self.spec.id,
            id: r.id,
            client_id: r.client_id,
            account: r.account,
            side: old.side,
            price: r.price,
            qty: r.qty,
            priority_kept: keep,
        }));
        if keep {
            let n = self.arena.get_mut(slot);
            n.qty = r.qty;
            n.client_id = r.client_id;
            self.levels.level_mut(old.level).total -= old.qty.lots() - r.qty.lots();
            self.level_changed(old.side, old.level, sink);
            return;
        }
        self.levels
            .level_mut(old.level)
            .unlink(&mut self.arena, slot);
        self.level_changed(old.side, old.level, sink);
        let mut taker = Taker {
            id: old.id,
            client_id: r.client_id,
            account: old.account,
            side: old.side,
            limit: r.price.units(),
            leaves: r.qty.lots(),
            stp: old.stp,
        };
        let stopped = self.take(&mut taker, sink);
        if taker.leaves == 0 {
            self.release(slot);
        } else if stopped {
            self.release(slot);
            sink.push(self.taker_cancelled(&taker, r.price, CancelReason::SelfTrade));
        } else {
            let h = self.levels.get_or_insert(old.side, r.price.units());
            {
                let n = self.arena.get_mut(slot);
                n.price = r.price;
                n.qty = Qty::from_raw(taker.leaves);
                n.client_id = r.client_id;
                n.level = h;
                n.prev = NIL;
                n.next = NIL;
            }
            self.levels.level_mut(h).push_back(&mut self.arena, slot);
            self.levels.occupied(old.side, h);
            self.level_changed(old.side, h, sink);
        }
    }

    /// All rules that can refuse a replace, in order.
    fn check_replace(&self, r: &Replace) -> Result<u32, RejectReason> {
        if r.instrument != self.spec.id {
            return Err(RejectReason::UnknownInstrument);
        }
        if self.spec.status == InstrumentStatus::Halted {
            return Err(RejectReason::InstrumentHalted);
        }
        if r.qty.lots() <= 0 {
            return Err(RejectReason::InvalidQty);
        }
        if r.price.units() <= 0 {
            return Err(RejectReason::InvalidPrice);
        }
        self.spec.check_qty(r.qty)?;
        self.spec.check_price(r.price)?;
        let slot = self.owned_slot(r.id, r.account)?;
        let n = self.arena.get(slot);
        if n.post_only && r.price != n.price && self.would_take(n.side, r.price.units()) {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(slot)
    }

    /// Cancels every order of an account (optionally one side): bids best to worst, then
    /// asks best to worst, FIFO within a level; one `LevelChanged` per touched level, then
    /// `MassCancelled` with the count. Allowed while halted. O(resting orders).
    pub(super) fn mass_cancel<S: EventSink>(&mut self, m: &MassCancel, sink: &mut S) {
        if m.instrument != self.spec.id {
            sink.push(Event::Rejected(Rejected {
                instrument: m.instrument,
                command: CommandKind::MassCancel,
                id: OrderId(0),
                client_id: peregrine_types::ClientOrderId(0),
                account: m.account,
                reason: RejectReason::UnknownInstrument,
            }));
            return;
        }
        let mut count = 0u32;
        for side in [Side::Buy, Side::Sell] {
            if m.side.is_none_or(|s| s == side) {
                count += self.mass_cancel_side(side, m.account, sink);
            }
        }
        sink.push(Event::MassCancelled(MassCancelled {
            instrument: m.instrument,
            account: m.account,
            side: m.side,
            count,
        }));
    }

    fn mass_cancel_side<S: EventSink>(
        &mut self,
        side: Side,
        account: AccountId,
        sink: &mut S,
    ) -> u32 {
        let mut count = 0;
        let mut h = self.levels.best(side);
        while let Some(hh) = h {
            h = self.levels.next_worse(side, hh);
            let mut touched = false;
            let mut slot = self.levels.level(hh).head;
            while slot != NIL {
                let node = *self.arena.get(slot);
                if node.account == account {
                    self.levels.level_mut(hh).unlink(&mut self.arena, slot);
                    self.release(slot);
                    sink.push(self.cancelled_event(
                        &node,
                        node.qty,
                        Qty::ZERO,
                        CancelReason::MassCancel,
                    ));
                    touched = true;
                    count += 1;
                }
                slot = node.next;
            }
            if touched {
                self.level_changed(side, hh, sink);
            }
        }
        count
    }
}

//! Changing live orders: cancel (resting or parked), cancel-replace (resting), mass
//! cancel.

use peregrine_types::{AccountId, OrderId, Qty, Side, TradingPhase};

use super::{NodeExt, OrderBook, TakeEnd, Taker};
use crate::arena::{ICEBERG, IN_LIST, NIL};
use crate::command::{Cancel, CommandKind, MassCancel, Replace};
use crate::event::{Event, EventSink, MassCancelled, Rejected, Replaced};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::{CancelReason, RejectReason};

/// Where a live order is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Found {
    /// Resting in the book, at this arena slot.
    Resting(u32),
    /// Parked, at this parking slot.
    Parked(u32),
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Cancels one order, resting or parked. Allowed while halted.
    pub(super) fn cancel<S: EventSink>(&mut self, c: &Cancel, sink: &mut S) {
        let found = if c.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            self.owned(c.id, c.account)
        };
        match found {
            Ok(Found::Resting(slot)) => {
                self.prefetch_around(slot, None);
                if self.arena.get(slot).flags & (ICEBERG | IN_LIST) == 0 {
                    self.cancel_resting(slot, 0, CancelReason::UserRequested, sink);
                } else {
                    self.cancel_slot(slot, CancelReason::UserRequested, sink);
                }
            }
            Ok(Found::Parked(slot)) => {
                self.cancel_parked(slot, CancelReason::UserRequested, sink);
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

    /// A live order owned by `account`, resting or parked.
    pub(super) fn owned(&self, id: OrderId, account: AccountId) -> Result<Found, RejectReason> {
        let (found, owner) = match self.ids.get(id.0) {
            Some(slot) => (Found::Resting(slot), self.arena.get(slot).account),
            None => {
                let slot = self.park.get(id.0).ok_or(RejectReason::UnknownOrder)?;
                (
                    Found::Parked(slot),
                    self.park.info(slot).order.order.account,
                )
            }
        };
        if owner != account {
            return Err(RejectReason::NotOwner);
        }
        Ok(found)
    }

    /// The list slot of the resting order in `slot` ([`NIL`]: none).
    #[inline]
    pub(super) fn list_of(&self, slot: u32) -> u32 {
        if self.arena.get(slot).flags & IN_LIST != 0 {
            self.ext[slot as usize].list
        } else {
            NIL
        }
    }

    /// Cancel-replace. Same price and open quantity not larger: priority kept, changed in
    /// place. Otherwise the order leaves its level, may trade at its new price as a
    /// taker (not in a call auction), and rests at the back of its new level. An
    /// iceberg's quantity is its total; it shows at most its display size.
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
        let hidden = self.hidden(slot);
        let total = old.qty.lots() + hidden;
        let keep = r.price == old.price && r.qty.lots() <= total;
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
            let shown = old.qty.lots().min(r.qty.lots());
            let n = self.arena.get_mut(slot);
            n.qty = Qty::from_raw(shown);
            n.client_id = r.client_id;
            if old.flags & ICEBERG != 0 {
                self.ext[slot as usize].hidden = r.qty.lots() - shown;
            }
            self.levels.level_mut(old.level).total -= old.qty.lots() - shown;
            self.level_changed(old.side, old.level, sink);
            return;
        }
        self.levels
            .level_mut(old.level)
            .unlink(&mut self.arena, slot);
        self.level_changed(old.side, old.level, sink);
        // The extension is valid only under the node's flags: a plain order's is not
        // read (a random access into one more table).
        let ext = if old.flags & (ICEBERG | IN_LIST) != 0 {
            self.ext[slot as usize]
        } else {
            NodeExt::EMPTY
        };
        let mut taker = Taker {
            id: old.id,
            client_id: r.client_id,
            account: old.account,
            side: old.side,
            limit: r.price.units(),
            leaves: r.qty.lots(),
            stp: old.stp,
            list: self.list_of(slot),
        };
        if taker.list != NIL {
            self.quiet = false;
        }
        let end = if self.quiet {
            self.take::<true, S>(&mut taker, sink)
        } else if self.phase.is_continuous() {
            self.take::<false, S>(&mut taker, sink)
        } else {
            TakeEnd::Done
        };
        if taker.leaves == 0 {
            self.release(slot);
            if taker.list != NIL {
                self.list_gone(taker.list, taker.id.0, sink);
            }
            return;
        }
        match end {
            TakeEnd::SelfTrade => {
                self.release(slot);
                self.taker_gone(&taker, r.price, CancelReason::SelfTrade, sink);
                return;
            }
            TakeEnd::Volatility => self.start_volatility(sink),
            TakeEnd::Done => {}
        }
        let display = if old.flags & ICEBERG != 0 {
            ext.display
        } else {
            0
        };
        let shown = if display > 0 {
            taker.leaves.min(display)
        } else {
            taker.leaves
        };
        // As in `rest_new`: the matching loop above ended on this predicate.
        debug_assert!(
            !(self.quiet && self.would_take(old.side, r.price.units())),
            "a quiet replace would cross the book"
        );
        let h = self.levels.get_or_insert(old.side, r.price.units());
        {
            let n = self.arena.get_mut(slot);
            n.price = r.price;
            n.qty = Qty::from_raw(shown);
            n.client_id = r.client_id;
            n.level = h;
            n.prev = NIL;
            n.next = NIL;
            if taker.list == NIL {
                n.flags &= !IN_LIST;
            }
        }
        if display > 0 || taker.list != NIL {
            self.ext[slot as usize] = NodeExt {
                display,
                hidden: taker.leaves - shown,
                list: taker.list,
            };
        }
        self.levels.level_mut(h).push_back(&mut self.arena, slot);
        self.levels.occupied(old.side, h);
        self.level_changed(old.side, h, sink);
    }

    /// All rules that can refuse a replace, in order.
    fn check_replace(&self, r: &Replace) -> Result<u32, RejectReason> {
        if r.instrument != self.spec.id {
            return Err(RejectReason::UnknownInstrument);
        }
        if self.phase == TradingPhase::Halted {
            return Err(RejectReason::InstrumentHalted);
        }
        if self.mmp.is_frozen(r.account) {
            return Err(RejectReason::MmpFrozen);
        }
        if r.qty.lots() <= 0 {
            return Err(RejectReason::InvalidQty);
        }
        if r.price.units() <= 0 {
            return Err(RejectReason::InvalidPrice);
        }
        self.spec.check_qty(r.qty)?;
        self.spec.check_price(r.price)?;
        let slot = match self.owned(r.id, r.account)? {
            Found::Resting(slot) => slot,
            Found::Parked(_) => return Err(RejectReason::NotInBook),
        };
        let n = self.arena.get(slot);
        if n.post_only()
            && r.price != n.price
            && self.phase.is_continuous()
            && self.would_take(n.side, r.price.units())
        {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(slot)
    }

    /// Cancels every order of an account (optionally one side): resting bids best to
    /// worst, then asks best to worst, FIFO within a level (one `LevelChanged` per
    /// touched level), then its parked orders by id; then `MassCancelled` with the
    /// count. A list leg's siblings go at once (`ListCancelled`, not counted).
    /// Allowed while halted. O(resting orders + parked orders).
    pub(super) fn mass_cancel<S: EventSink>(&mut self, m: &MassCancel, sink: &mut S) {
        self.quiet = false;
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
                count += self.cancel_resting_of(side, m.account, CancelReason::MassCancel, sink);
            }
        }
        count += self.cancel_parked_of(m.account, m.side, sink);
        sink.push(Event::MassCancelled(MassCancelled {
            instrument: m.instrument,
            account: m.account,
            side: m.side,
            count,
        }));
    }

    /// Cancels `account`'s resting orders on `side` with `reason`, best level first,
    /// FIFO within a level; returns how many.
    pub(super) fn cancel_resting_of<S: EventSink>(
        &mut self,
        side: Side,
        account: AccountId,
        reason: CancelReason,
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
                    let hidden = self.hidden(slot);
                    let list = self.list_of(slot);
                    self.levels.level_mut(hh).unlink(&mut self.arena, slot);
                    self.release(slot);
                    let total = Qty::from_raw(node.qty.lots() + hidden);
                    sink.push(self.cancelled_event(&node, total, Qty::ZERO, reason));
                    if list != NIL {
                        // Its siblings are parked (a list has at most one resting
                        // leg), so this walk's links are untouched.
                        self.list_gone(list, node.id.0, sink);
                    }
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

    /// Cancels `account`'s parked orders (one side, or both) by order id; returns how
    /// many (siblings cancelled by their list on the way are not counted).
    fn cancel_parked_of<S: EventSink>(
        &mut self,
        account: AccountId,
        side: Option<Side>,
        sink: &mut S,
    ) -> u32 {
        if self.park.len() == 0 {
            return 0;
        }
        self.parked_ids.clear();
        let (park, ids) = (&self.park, &mut self.parked_ids);
        park.for_each_slot(&mut |slot| {
            let o = &park.info(slot).order.order;
            if o.account == account && side.is_none_or(|s| s == o.side) {
                ids.push((o.id.0, slot));
            }
        });
        self.parked_ids.sort_unstable();
        let mut count = 0;
        for i in 0..self.parked_ids.len() {
            let (id, slot) = self.parked_ids[i];
            if self.park.holds(slot, id) {
                self.cancel_parked(slot, CancelReason::MassCancel, sink);
                count += 1;
            }
        }
        count
    }

    /// Removes a parked order with `reason` (`Cancelled` for its whole quantity),
    /// then applies its list's rules.
    pub(super) fn cancel_parked<S: EventSink>(
        &mut self,
        slot: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let info = self.park.remove(slot);
        let o = info.order.order;
        sink.push(Event::Cancelled(crate::event::Cancelled {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: o.qty,
            leaves: Qty::ZERO,
            reason,
        }));
        if info.list != NIL {
            self.list_gone(info.list, o.id.0, sink);
        }
    }
}

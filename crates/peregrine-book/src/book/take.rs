//! The matching loop: an incoming order takes from the opposite side, best level first,
//! oldest order first, never beyond its limit nor outside the volatility band.

use peregrine_types::{Price, Qty, StpMode};

use super::new_order::crosses;
use super::{OrderBook, TakeEnd, Taker};
use crate::arena::{ICEBERG, IN_LIST, NIL};
use crate::event::{Event, EventSink, Fill};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::CancelReason;

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Matches `t` against the book until it is filled, its limit stops it, the side is
    /// empty, self-trade prevention stops it ([`TakeEnd::SelfTrade`]: the caller
    /// cancels the remainder) or the next level lies outside the volatility band
    /// ([`TakeEnd::Volatility`]: the caller starts the auction).
    ///
    /// Events per level: fills and STP cancels in FIFO order, then one `LevelChanged`
    /// for the level if any of its orders was touched.
    ///
    /// `QUIET`: the book is quiet (`OrderBook::quiet`) and `t` is in no list, so
    /// the per-fill work for protections, the taker's and the makers' lists and the
    /// trigger round is left out (it would find nothing to do).
    #[inline]
    pub(super) fn take<const QUIET: bool, S: EventSink>(
        &mut self,
        t: &mut Taker,
        sink: &mut S,
    ) -> TakeEnd {
        let opp = t.side.opposite();
        let (lo, hi) = self.band();
        while t.leaves > 0 {
            let Some(h) = self.levels.best(opp) else {
                break;
            };
            let price = self.levels.level(h).price;
            if !crosses(t.side, t.limit, price) {
                break;
            }
            if price < lo || price > hi {
                return TakeEnd::Volatility;
            }
            let (stopped, touched) = self.take_level::<QUIET, S>(t, h, sink);
            if touched {
                self.level_changed(opp, h, sink);
            }
            if stopped {
                return TakeEnd::SelfTrade;
            }
        }
        TakeEnd::Done
    }

    /// The prices a trade may print at now: the volatility band around the last
    /// price, or everything without a volatility rule.
    #[inline]
    pub(super) fn band(&self) -> (i64, i64) {
        match &self.spec.volatility {
            None => (i64::MIN, i64::MAX),
            Some(v) => {
                let w = v.half_width(self.last_price);
                (
                    self.last_price.saturating_sub(w),
                    self.last_price.saturating_add(w),
                )
            }
        }
    }

    /// Takes from one level; returns (stopped by STP, level touched).
    fn take_level<const QUIET: bool, S: EventSink>(
        &mut self,
        t: &mut Taker,
        h: u32,
        sink: &mut S,
    ) -> (bool, bool) {
        let mut touched = false;
        let mut slot = self.levels.level(h).head;
        while slot != NIL && t.leaves > 0 {
            let maker = *self.arena.get(slot);
            let mut next = maker.next;
            if next != NIL {
                // The next maker in the queue: this taker or the next one reads it.
                crate::prefetch::prefetch(self.arena.get(next));
            }
            let refilled = if maker.account == t.account && t.stp != StpMode::None {
                match t.stp {
                    StpMode::CancelNewest => return (true, touched),
                    StpMode::CancelOldest => {
                        self.stp_cancel_maker(slot, h, sink);
                        false
                    }
                    StpMode::CancelBoth => {
                        self.stp_cancel_maker(slot, h, sink);
                        return (true, true);
                    }
                    StpMode::DecrementAndCancel => self.stp_decrement(t, slot, h, sink),
                    StpMode::None => unreachable!("checked above"),
                }
            } else {
                self.fill::<QUIET, S>(t, slot, h, sink)
            };
            // A refilled iceberg went to the back of the level: if it was the last
            // order, it is also the next.
            if refilled && next == NIL {
                next = slot;
            }
            touched = true;
            slot = next;
        }
        (false, touched)
    }

    /// One trade at the maker's price. Returns whether the maker was an iceberg that
    /// refilled (and so moved to the back of its level).
    #[inline]
    fn fill<const QUIET: bool, S: EventSink>(
        &mut self,
        t: &mut Taker,
        slot: u32,
        h: u32,
        sink: &mut S,
    ) -> bool {
        let maker = *self.arena.get(slot);
        let q = t.leaves.min(maker.qty.lots());
        let shown_left = maker.qty.lots() - q;
        let hidden = if maker.flags & ICEBERG != 0 {
            self.ext[slot as usize].hidden
        } else {
            0
        };
        t.leaves -= q;
        self.trade_seq += 1;
        sink.push(Event::Fill(Fill {
            instrument: self.spec.id,
            trade_id: self.trade_seq,
            maker_id: maker.id,
            taker_id: t.id,
            maker_client_id: maker.client_id,
            taker_client_id: t.client_id,
            maker_account: maker.account,
            taker_account: t.account,
            taker_side: t.side,
            price: maker.price,
            qty: Qty::from_raw(q),
            maker_leaves: Qty::from_raw(shown_left + hidden),
            taker_leaves: Qty::from_raw(t.leaves),
            auction: false,
            maker_fee: 0,
            taker_fee: 0,
        }));
        if QUIET {
            // No stop waits for the trigger round.
            self.last_price = maker.price.units();
        } else {
            self.printed(maker.price.units());
        }
        if !QUIET && self.mmp.any() {
            self.mmp.on_fill(maker.account, q, self.now);
        }
        // A quiet book has no live list, so no maker is a list leg.
        let list = if !QUIET && maker.flags & IN_LIST != 0 {
            self.ext[slot as usize].list
        } else {
            NIL
        };
        let refilled = self.reduce_maker(slot, h, q, shown_left);
        if list != NIL {
            let live = (shown_left + hidden > 0).then_some(slot);
            self.list_fill(list, maker.id.0, shown_left + hidden, live, sink);
        }
        if !QUIET && t.list != NIL {
            let list = t.list;
            if self.list_fill(list, t.id.0, t.leaves, None, sink) {
                t.list = crate::arena::NIL;
            }
        }
        refilled
    }

    /// Records a trade price: the last price, and the first of the current round of
    /// trigger evaluation.
    #[inline]
    pub(super) fn printed(&mut self, price: i64) {
        self.last_price = price;
        if self.round_first == 0 {
            self.round_first = price;
        }
    }

    /// Lowers a resting order's shown quantity by `q` (to `shown_left`). At zero it
    /// leaves the book, unless it is an iceberg with hidden quantity: then it shows
    /// its next part and goes to the back of its level (returns `true`).
    #[inline]
    fn reduce_maker(&mut self, slot: u32, h: u32, q: i64, shown_left: i64) -> bool {
        if shown_left > 0 {
            self.arena.get_mut(slot).qty = Qty::from_raw(shown_left);
            self.levels.level_mut(h).total -= q;
            return false;
        }
        if self.arena.get(slot).flags & ICEBERG != 0 && self.ext[slot as usize].hidden > 0 {
            self.refill(slot, h);
            return true;
        }
        self.levels.level_mut(h).unlink(&mut self.arena, slot);
        self.release(slot);
        false
    }

    /// An iceberg whose shown part is gone shows the next part (at most its display
    /// size) at the back of its level: a refill loses time priority.
    fn refill(&mut self, slot: u32, h: u32) {
        let level = self.levels.level_mut(h);
        level.unlink(&mut self.arena, slot);
        let ext = &mut self.ext[slot as usize];
        let next = ext.display.min(ext.hidden);
        ext.hidden -= next;
        self.arena.get_mut(slot).qty = Qty::from_raw(next);
        self.levels.level_mut(h).push_back(&mut self.arena, slot);
    }

    /// STP: cancel the resting order entirely (an iceberg's hidden part included).
    fn stp_cancel_maker<S: EventSink>(&mut self, slot: u32, h: u32, sink: &mut S) {
        let maker = *self.arena.get(slot);
        let hidden = self.hidden(slot);
        let list = self.list_of(slot);
        self.levels.level_mut(h).unlink(&mut self.arena, slot);
        self.release(slot);
        let total = Qty::from_raw(maker.qty.lots() + hidden);
        sink.push(self.cancelled_event(&maker, total, Qty::ZERO, CancelReason::SelfTrade));
        if list != NIL {
            self.list_gone(list, maker.id.0, sink);
        }
    }

    /// STP decrement-and-cancel: both lose the smaller of the taker's quantity and
    /// the maker's shown quantity; the maker's event comes first, then the taker's. A
    /// decremented iceberg refills like a filled one. Returns whether it refilled.
    fn stp_decrement<S: EventSink>(
        &mut self,
        t: &mut Taker,
        slot: u32,
        h: u32,
        sink: &mut S,
    ) -> bool {
        let maker = *self.arena.get(slot);
        let d = t.leaves.min(maker.qty.lots());
        let shown_left = maker.qty.lots() - d;
        let hidden = self.hidden(slot);
        let list = self.list_of(slot);
        let refilled = self.reduce_maker(slot, h, d, shown_left);
        sink.push(self.cancelled_event(
            &maker,
            Qty::from_raw(d),
            Qty::from_raw(shown_left + hidden),
            CancelReason::SelfTrade,
        ));
        if list != NIL && shown_left + hidden == 0 {
            self.list_gone(list, maker.id.0, sink);
        }
        t.leaves -= d;
        sink.push(Event::Cancelled(crate::event::Cancelled {
            instrument: self.spec.id,
            id: t.id,
            client_id: t.client_id,
            account: t.account,
            side: t.side,
            price: Price::from_raw(t.limit),
            qty: Qty::from_raw(d),
            leaves: Qty::from_raw(t.leaves),
            reason: CancelReason::SelfTrade,
        }));
        refilled
    }
}

//! The matching loop: an incoming order takes from the opposite side, best level first,
//! oldest order first, never beyond its limit.

use peregrine_types::{Price, Qty, StpMode};

use super::new_order::crosses;
use super::{OrderBook, Taker};
use crate::arena::NIL;
use crate::event::{Event, EventSink, Fill};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::CancelReason;

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Matches `t` against the book until it is filled, its limit stops it, the side is
    /// empty, or self-trade prevention stops it (returns `true` in that last case; the
    /// caller cancels the remainder).
    ///
    /// Events per level: fills and STP cancels in FIFO order, then one `LevelChanged`
    /// for the level if any of its orders was touched.
    pub(super) fn take<S: EventSink>(&mut self, t: &mut Taker, sink: &mut S) -> bool {
        let opp = t.side.opposite();
        while t.leaves > 0 {
            let Some(h) = self.levels.best(opp) else {
                break;
            };
            if !crosses(t.side, t.limit, self.levels.level(h).price) {
                break;
            }
            let (stopped, touched) = self.take_level(t, h, sink);
            if touched {
                self.level_changed(opp, h, sink);
            }
            if stopped {
                return true;
            }
        }
        false
    }

    /// Takes from one level; returns (stopped by STP, level touched).
    fn take_level<S: EventSink>(&mut self, t: &mut Taker, h: u32, sink: &mut S) -> (bool, bool) {
        let mut touched = false;
        let mut slot = self.levels.level(h).head;
        while slot != NIL && t.leaves > 0 {
            let maker = *self.arena.get(slot);
            let next = maker.next;
            if next != NIL {
                // The next maker in the queue: this taker or the next one reads it.
                crate::prefetch::prefetch(self.arena.get(next));
            }
            if maker.account == t.account && t.stp != StpMode::None {
                match t.stp {
                    StpMode::CancelNewest => return (true, touched),
                    StpMode::CancelOldest => self.stp_cancel_maker(slot, h, sink),
                    StpMode::CancelBoth => {
                        self.stp_cancel_maker(slot, h, sink);
                        return (true, true);
                    }
                    StpMode::DecrementAndCancel => self.stp_decrement(t, slot, h, sink),
                    StpMode::None => unreachable!("checked above"),
                }
            } else {
                self.fill(t, slot, h, sink);
            }
            touched = true;
            slot = next;
        }
        (false, touched)
    }

    /// One trade at the maker's price.
    #[inline]
    fn fill<S: EventSink>(&mut self, t: &mut Taker, slot: u32, h: u32, sink: &mut S) {
        let maker = *self.arena.get(slot);
        let q = t.leaves.min(maker.qty.lots());
        let maker_leaves = maker.qty.lots() - q;
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
            maker_leaves: Qty::from_raw(maker_leaves),
            taker_leaves: Qty::from_raw(t.leaves),
        }));
        self.reduce_maker(slot, h, q, maker_leaves);
    }

    /// Lowers a resting order's open quantity by `q`, removing it at zero.
    #[inline]
    fn reduce_maker(&mut self, slot: u32, h: u32, q: i64, leaves: i64) {
        if leaves == 0 {
            self.levels.level_mut(h).unlink(&mut self.arena, slot);
            self.release(slot);
        } else {
            self.arena.get_mut(slot).qty = Qty::from_raw(leaves);
            self.levels.level_mut(h).total -= q;
        }
    }

    /// STP: cancel the resting order entirely.
    fn stp_cancel_maker<S: EventSink>(&mut self, slot: u32, h: u32, sink: &mut S) {
        let maker = *self.arena.get(slot);
        self.levels.level_mut(h).unlink(&mut self.arena, slot);
        self.release(slot);
        sink.push(self.cancelled_event(&maker, maker.qty, Qty::ZERO, CancelReason::SelfTrade));
    }

    /// STP decrement-and-cancel: both lose the smaller quantity; the maker's event comes
    /// first, then the taker's.
    fn stp_decrement<S: EventSink>(&mut self, t: &mut Taker, slot: u32, h: u32, sink: &mut S) {
        let maker = *self.arena.get(slot);
        let d = t.leaves.min(maker.qty.lots());
        let maker_leaves = maker.qty.lots() - d;
        self.reduce_maker(slot, h, d, maker_leaves);
        sink.push(self.cancelled_event(
            &maker,
            Qty::from_raw(d),
            Qty::from_raw(maker_leaves),
            CancelReason::SelfTrade,
        ));
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
    }
}

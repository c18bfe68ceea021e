//! Adding an order: validation, FOK and post-only pre-checks, matching, resting.

use peregrine_types::{InstrumentStatus, OrderType, Price, Qty, Side, StpMode, TimeInForce};

use super::{OrderBook, Taker};
use crate::arena::{OrderNode, NIL};
use crate::command::{CommandKind, NewOrder};
use crate::event::{Accepted, Event, EventSink, Rejected};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::{CancelReason, RejectReason};

/// Checks a new order's fields against the spec and the book's clock, in the documented
/// order (the first failing rule is the one reported).
pub(crate) fn validate_new(
    spec: &peregrine_types::InstrumentSpec,
    now: u64,
    o: &NewOrder,
) -> Result<(), RejectReason> {
    if o.instrument != spec.id {
        return Err(RejectReason::UnknownInstrument);
    }
    if spec.status == InstrumentStatus::Halted {
        return Err(RejectReason::InstrumentHalted);
    }
    if o.qty.lots() <= 0 {
        return Err(RejectReason::InvalidQty);
    }
    if o.price.units() <= 0 {
        return Err(RejectReason::InvalidPrice);
    }
    spec.check_qty(o.qty)?;
    spec.check_price(o.price)?;
    let tif_ok = match o.order_type {
        OrderType::Limit => true,
        OrderType::Market => matches!(o.tif, TimeInForce::Ioc | TimeInForce::Fok),
        OrderType::PostOnly => o.tif.can_rest(),
    };
    if !tif_ok {
        return Err(RejectReason::InvalidTif);
    }
    let expiry_ok = match o.tif {
        TimeInForce::Gtd => o.expire_at.0 > now,
        _ => o.expire_at.0 == 0,
    };
    if !expiry_ok {
        return Err(RejectReason::InvalidExpiry);
    }
    Ok(())
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Handles a new order.
    pub(crate) fn new_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        if let Err(reason) = self.admit(o) {
            sink.push(Event::Rejected(Rejected {
                instrument: o.instrument,
                command: CommandKind::New,
                id: o.id,
                client_id: o.client_id,
                account: o.account,
                reason,
            }));
            return;
        }
        sink.push(Event::Accepted(Accepted {
            instrument: o.instrument,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: o.qty,
        }));
        let mut taker = Taker {
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            limit: o.price.units(),
            leaves: o.qty.lots(),
            stp: o.stp,
        };
        if o.tif == TimeInForce::Fok && !self.fok_fillable(&taker) {
            sink.push(self.taker_cancelled(&taker, o.price, CancelReason::FokUnfillable));
            return;
        }
        let stopped = self.take(&mut taker, sink);
        if taker.leaves == 0 {
            return;
        }
        if stopped {
            sink.push(self.taker_cancelled(&taker, o.price, CancelReason::SelfTrade));
        } else if o.tif.can_rest() && o.order_type != OrderType::Market {
            self.rest_new(o, taker.leaves, sink);
        } else {
            sink.push(self.taker_cancelled(&taker, o.price, CancelReason::Unfilled));
        }
    }

    /// All rules that can refuse a new order, in order.
    fn admit(&self, o: &NewOrder) -> Result<(), RejectReason> {
        validate_new(&self.spec, self.now, o)?;
        if self.ids.contains(o.id.0) {
            return Err(RejectReason::DuplicateOrderId);
        }
        if o.tif.can_rest() && o.order_type != OrderType::Market && self.arena.is_full() {
            return Err(RejectReason::BookFull);
        }
        if o.order_type == OrderType::PostOnly && self.would_take(o.side, o.price.units()) {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(())
    }

    /// Whether an order at `limit` on `side` would trade on arrival.
    pub(super) fn would_take(&self, side: Side, limit: i64) -> bool {
        self.levels
            .best(side.opposite())
            .is_some_and(|h| crosses(side, limit, self.levels.level(h).price))
    }

    /// FOK pre-check: can the whole quantity trade now? Walks the opposite side in
    /// priority order up to the limit. A resting order of the same account is skipped
    /// when the taker's STP mode would cancel it (cancel-oldest) and ends the walk when
    /// STP would stop or shrink the taker; with STP off it counts as liquidity.
    fn fok_fillable(&self, t: &Taker) -> bool {
        let opp = t.side.opposite();
        let mut need = t.leaves;
        let mut h = self.levels.best(opp);
        while let Some(hh) = h {
            let level = self.levels.level(hh);
            if !crosses(t.side, t.limit, level.price) {
                return false;
            }
            let mut slot = level.head;
            while slot != NIL {
                let n = self.arena.get(slot);
                if n.account == t.account && t.stp != StpMode::None {
                    if t.stp != StpMode::CancelOldest {
                        return false;
                    }
                } else {
                    need -= n.qty.lots();
                    if need <= 0 {
                        return true;
                    }
                }
                slot = n.next;
            }
            h = self.levels.next_worse(opp, hh);
        }
        false
    }

    /// Puts the unfilled rest of a new order on the book.
    fn rest_new<S: EventSink>(&mut self, o: &NewOrder, leaves: i64, sink: &mut S) {
        let h = self.levels.get_or_insert(o.side, o.price.units());
        let node = OrderNode {
            id: o.id,
            client_id: o.client_id,
            price: o.price,
            qty: Qty::from_raw(leaves),
            expire_at: o.expire_at,
            account: o.account,
            prev: NIL,
            next: NIL,
            level: h,
            side: o.side,
            stp: o.stp,
            post_only: o.order_type == OrderType::PostOnly,
            live: true,
        };
        // `admit` checked there is a free slot and nothing since has taken one.
        let Some(slot) = self.arena.alloc(node) else {
            debug_assert!(false, "arena full after admit");
            return;
        };
        self.ids.insert(o.id.0, slot);
        self.levels.level_mut(h).push_back(&mut self.arena, slot);
        self.levels.occupied(o.side, h);
        if o.tif == TimeInForce::Gtd {
            self.schedule_expiry(o.expire_at.0, o.id.0);
        }
        self.level_changed(o.side, h, sink);
    }

    /// `Cancelled` for the taker's remaining quantity.
    pub(super) fn taker_cancelled(&self, t: &Taker, price: Price, reason: CancelReason) -> Event {
        Event::Cancelled(crate::event::Cancelled {
            instrument: self.spec.id,
            id: t.id,
            client_id: t.client_id,
            account: t.account,
            side: t.side,
            price,
            qty: Qty::from_raw(t.leaves),
            leaves: Qty::ZERO,
            reason,
        })
    }
}

/// Whether a `side` order limited at `limit` trades against a resting `price`.
#[inline]
pub(super) fn crosses(side: Side, limit: i64, price: i64) -> bool {
    match side {
        Side::Buy => limit >= price,
        Side::Sell => limit <= price,
    }
}

//! Adding an order: validation, FOK and post-only pre-checks, matching, resting. The
//! same incoming path serves new orders, triggered stops and released list legs.

use peregrine_types::{OrderType, Price, Qty, Side, StpMode, TimeInForce, TradingPhase};

use super::{NodeExt, OrderBook, TakeEnd, Taker};
use crate::arena::{OrderNode, ICEBERG, IN_LIST, NIL, POST_ONLY};
use crate::command::{CommandKind, NewOrder};
use crate::event::{Accepted, Event, EventSink, Rejected};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::reject::{CancelReason, RejectReason};

/// Checks a new order's fields against the spec, the trading phase and the book's
/// clock, in the documented order (the first failing rule is the one reported).
pub(crate) fn validate_new(
    spec: &peregrine_types::InstrumentSpec,
    phase: TradingPhase,
    now: u64,
    o: &NewOrder,
) -> Result<(), RejectReason> {
    if o.instrument != spec.id {
        return Err(RejectReason::UnknownInstrument);
    }
    if phase == TradingPhase::Halted {
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
    if phase.is_auction() && !(o.tif.can_rest() && o.order_type != OrderType::Market) {
        return Err(RejectReason::AuctionPhase);
    }
    Ok(())
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Handles a new order.
    pub(crate) fn new_order<S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        if is_plain(o) {
            if self.quiet {
                self.new_plain::<true, S>(o, sink);
                return;
            }
            if self.phase.is_continuous() {
                self.new_plain::<false, S>(o, sink);
                return;
            }
        }
        self.quiet = false;
        let admitted =
            validate_new(&self.spec, self.phase, self.now, o).and_then(|()| self.admit(o, false));
        if let Err(reason) = admitted {
            sink.push(self.rejected_new(o, reason));
            return;
        }
        sink.push(accepted(o));
        self.incoming(o, 0, NIL, sink);
    }

    /// A plain limit order (see [`is_plain`]) in continuous trading: only the rules of
    /// [`validate_new`] and [`OrderBook::admit`] that can refuse such an order, in
    /// the same order, so the first failing rule is the same one. `QUIET`: the book
    /// is quiet (no protection can have frozen the account, nothing is parked).
    #[inline(always)]
    fn new_plain<const QUIET: bool, S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let spec = &self.spec;
        let refused = if o.instrument != spec.id {
            Some(RejectReason::UnknownInstrument)
        } else if o.qty.lots() <= 0 {
            Some(RejectReason::InvalidQty)
        } else if o.price.units() <= 0 {
            Some(RejectReason::InvalidPrice)
        } else if let Err(e) = spec
            .check_qty(o.qty)
            .and_then(|()| spec.check_price(o.price))
        {
            Some(e.into())
        } else if !QUIET && self.mmp.is_frozen(o.account) {
            Some(RejectReason::MmpFrozen)
        } else if self.ids.contains(o.id.0) || (!QUIET && self.park.get(o.id.0).is_some()) {
            Some(RejectReason::DuplicateOrderId)
        } else if o.tif == TimeInForce::Gtc && self.arena.is_full() {
            Some(RejectReason::BookFull)
        } else {
            None
        };
        if let Some(reason) = refused {
            sink.push(self.rejected_new(o, reason));
            return;
        }
        sink.push(accepted(o));
        self.plain_incoming::<QUIET, S>(o, sink);
    }

    /// [`OrderBook::incoming`] for a plain order in continuous trading (no FOK, no
    /// iceberg, no list), inline in [`OrderBook::execute`]: matching, then a GTC
    /// remainder rests; the rarer ends take the general path out of line.
    #[inline(always)]
    fn plain_incoming<const QUIET: bool, S: EventSink>(&mut self, o: &NewOrder, sink: &mut S) {
        let mut taker = Taker::new_order(o, NIL);
        let end = self.take::<QUIET, S>(&mut taker, sink);
        if taker.leaves == 0 {
            return;
        }
        if end == TakeEnd::Done && o.tif == TimeInForce::Gtc && !self.arena.is_full() {
            self.rest_new::<QUIET, S>(o, taker.leaves, 0, NIL, sink);
        } else {
            self.plain_end(o, &taker, end, sink);
        }
    }

    /// A plain order's remainder that does not simply rest (see `incoming`). It
    /// leaves the quiet path: the command's finish runs in full.
    #[inline(never)]
    fn plain_end<S: EventSink>(&mut self, o: &NewOrder, taker: &Taker, end: TakeEnd, sink: &mut S) {
        self.quiet = false;
        match end {
            TakeEnd::SelfTrade => self.taker_gone(taker, o.price, CancelReason::SelfTrade, sink),
            TakeEnd::Volatility => {
                self.start_volatility(sink);
                self.rest_or_cancel(o, 0, taker, sink);
            }
            TakeEnd::Done => self.rest_or_cancel(o, 0, taker, sink),
        }
    }

    /// The `Rejected` of a new order.
    pub(super) fn rejected_new(&self, o: &NewOrder, reason: RejectReason) -> Event {
        Event::Rejected(Rejected {
            instrument: o.instrument,
            command: CommandKind::New,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            reason,
        })
    }

    /// The rules that can refuse a new order after its fields passed
    /// [`validate_new`], in order: market-maker protection, duplicate id, room, and
    /// post-only would take. `parks`: the order will be parked (a stop), so it needs
    /// a parking slot rather than a resting one and is not checked against the book.
    pub(super) fn admit(&self, o: &NewOrder, parks: bool) -> Result<(), RejectReason> {
        if self.mmp.is_frozen(o.account) {
            return Err(RejectReason::MmpFrozen);
        }
        if self.ids.contains(o.id.0) || self.park.get(o.id.0).is_some() {
            return Err(RejectReason::DuplicateOrderId);
        }
        if parks {
            return if self.park.is_full() {
                Err(RejectReason::BookFull)
            } else {
                Ok(())
            };
        }
        if o.tif.can_rest() && o.order_type != OrderType::Market && self.arena.is_full() {
            return Err(RejectReason::BookFull);
        }
        if o.order_type == OrderType::PostOnly
            && self.phase.is_continuous()
            && self.would_take(o.side, o.price.units())
        {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(())
    }

    /// Runs an active order (accepted, or just triggered / released) against the
    /// book: FOK pre-check, matching, then the remainder rests or is cancelled. In a
    /// call auction nothing matches: the order rests (or, if it cannot, is
    /// cancelled). `display`: iceberg display size (0: none); `list`: its list slot.
    #[inline]
    pub(super) fn incoming<S: EventSink>(
        &mut self,
        o: &NewOrder,
        display: i64,
        list: u32,
        sink: &mut S,
    ) {
        let mut taker = Taker::new_order(o, list);
        if !self.phase.is_continuous() {
            self.rest_or_cancel(o, display, &taker, sink);
            return;
        }
        if o.tif == TimeInForce::Fok && !self.fok_fillable(&taker) {
            self.taker_gone(&taker, o.price, CancelReason::FokUnfillable, sink);
            return;
        }
        let end = self.take::<false, S>(&mut taker, sink);
        if taker.leaves == 0 {
            if taker.list != NIL {
                // Reduced to nothing without a fill completing it (self-trade
                // decrement): its list treats it as gone.
                self.list_gone(taker.list, taker.id.0, sink);
            }
            return;
        }
        match end {
            TakeEnd::SelfTrade => self.taker_gone(&taker, o.price, CancelReason::SelfTrade, sink),
            TakeEnd::Volatility => {
                self.start_volatility(sink);
                self.rest_or_cancel(o, display, &taker, sink);
            }
            TakeEnd::Done => self.rest_or_cancel(o, display, &taker, sink),
        }
    }

    /// The remainder of an active order: rests if its type and time in force allow,
    /// else is cancelled (`Unfilled`); a full book cancels it (`BookFull`, only
    /// possible for triggered and released orders: new ones were checked).
    fn rest_or_cancel<S: EventSink>(
        &mut self,
        o: &NewOrder,
        display: i64,
        taker: &Taker,
        sink: &mut S,
    ) {
        if !(o.tif.can_rest() && o.order_type != OrderType::Market) {
            self.taker_gone(taker, o.price, CancelReason::Unfilled, sink);
        } else if self.arena.is_full() {
            self.taker_gone(taker, o.price, CancelReason::BookFull, sink);
        } else {
            self.rest_new::<false, S>(o, taker.leaves, display, taker.list, sink);
        }
    }

    /// Cancels a taker's remainder and tells its list.
    pub(super) fn taker_gone<S: EventSink>(
        &mut self,
        t: &Taker,
        price: Price,
        reason: CancelReason,
        sink: &mut S,
    ) {
        sink.push(self.taker_cancelled(t, price, reason));
        if t.list != NIL {
            self.list_gone(t.list, t.id.0, sink);
        }
    }

    /// Whether an order at `limit` on `side` would trade on arrival.
    pub(super) fn would_take(&self, side: Side, limit: i64) -> bool {
        self.levels
            .best(side.opposite())
            .is_some_and(|h| crosses(side, limit, self.levels.level(h).price))
    }

    /// FOK pre-check: can the whole quantity trade now, inside the volatility band?
    /// Walks the opposite side in priority order up to the limit. A resting order of
    /// the same account is skipped when the taker's STP mode would cancel it
    /// (cancel-oldest) and ends the walk when STP would stop or shrink the taker; with
    /// STP off it counts as liquidity. An iceberg's hidden quantity counts at the end
    /// of its level (where its refills go), which the walk reaches only if nothing
    /// stopped it there.
    fn fok_fillable(&self, t: &Taker) -> bool {
        let opp = t.side.opposite();
        let (lo, hi) = self.band();
        let mut need = t.leaves;
        let mut h = self.levels.best(opp);
        while let Some(hh) = h {
            let level = self.levels.level(hh);
            if !crosses(t.side, t.limit, level.price) || level.price < lo || level.price > hi {
                return false;
            }
            let mut hidden = 0;
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
                    hidden += self.hidden(slot);
                }
                slot = n.next;
            }
            need -= hidden;
            if need <= 0 {
                return true;
            }
            h = self.levels.next_worse(opp, hh);
        }
        false
    }

    /// Puts the unfilled rest of an order on the book: an iceberg shows at most its
    /// display size and keeps the rest hidden. `QUIET`: a plain order in a quiet
    /// book, whose command's finish does not run (checked builds test here that it
    /// does not cross the book).
    #[inline]
    pub(super) fn rest_new<const QUIET: bool, S: EventSink>(
        &mut self,
        o: &NewOrder,
        leaves: i64,
        display: i64,
        list: u32,
        sink: &mut S,
    ) {
        // The never-crossed post-condition on the quiet path, where the command's
        // finish does not run. Only a checked build tests it: the caller's matching
        // loop has just ended on this very predicate (the opposite best does not
        // cross `o`'s limit, or the side is empty) and nothing has changed since.
        debug_assert!(
            !(QUIET && self.would_take(o.side, o.price.units())),
            "a quiet rest would cross the book"
        );
        let h = self.levels.get_or_insert(o.side, o.price.units());
        let shown = if display > 0 {
            leaves.min(display)
        } else {
            leaves
        };
        let mut flags = 0;
        if o.order_type == OrderType::PostOnly {
            flags |= POST_ONLY;
        }
        if display > 0 {
            flags |= ICEBERG;
        }
        if list != NIL {
            flags |= IN_LIST;
        }
        let node = OrderNode {
            id: o.id,
            client_id: o.client_id,
            price: o.price,
            qty: Qty::from_raw(shown),
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
        // Admission (or `rest_or_cancel`) checked there is a free slot and nothing
        // since has taken one.
        let Some(slot) = self.arena.alloc(node) else {
            debug_assert!(false, "arena full after admit");
            return;
        };
        if flags & (ICEBERG | IN_LIST) != 0 {
            self.ext[slot as usize] = NodeExt {
                display,
                hidden: leaves - shown,
                list,
            };
        }
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

/// A limit order, GTC or IOC, without an expiry: none of the rules for market,
/// post-only, FOK and GTD orders, nor those of the auction phases, can apply to it.
#[inline]
fn is_plain(o: &NewOrder) -> bool {
    o.order_type == OrderType::Limit
        && matches!(o.tif, TimeInForce::Gtc | TimeInForce::Ioc)
        && o.expire_at.0 == 0
}

/// The `Accepted` of a new order.
pub(super) fn accepted(o: &NewOrder) -> Event {
    Event::Accepted(Accepted {
        instrument: o.instrument,
        id: o.id,
        client_id: o.client_id,
        account: o.account,
        side: o.side,
        price: o.price,
        qty: o.qty,
    })
}

/// Whether a `side` order limited at `limit` trades against a resting `price`.
#[inline]
pub(super) fn crosses(side: Side, limit: i64, price: i64) -> bool {
    match side {
        Side::Buy => limit >= price,
        Side::Sell => limit <= price,
    }
}

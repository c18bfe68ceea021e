//! The reference book's matching: one order at a time, the best opposite order
//! found by sorting, a FOK tried on a copy of the book.

use peregrine_types::{AccountId, ClientOrderId, OrderId, OrderType, Price, Qty, Side, StpMode};

use super::{End, Entry, Incoming, ReferenceBook};
use crate::command::{Cancel, CommandKind, MassCancel, NewOrder, Replace};
use crate::event::{self, Event, EventSink};
use crate::reject::{CancelReason, RejectReason};
use crate::RestingOrder;

impl ReferenceBook {
    /// Runs an active order: matching (not in a call or halt), then its remainder
    /// rests or is cancelled.
    pub(super) fn incoming(
        &mut self,
        o: &NewOrder,
        display: i64,
        list: u64,
        sink: &mut impl EventSink,
    ) {
        let mut inc = Incoming {
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            limit: o.price,
            leaves: o.qty.lots(),
            stp: o.stp,
            list,
        };
        if self.phase != peregrine_types::TradingPhase::Continuous {
            self.rest_or_cancel(o, display, &inc, sink);
            return;
        }
        if o.tif == peregrine_types::TimeInForce::Fok && !self.fok_ok(&inc) {
            self.gone(&inc, o.price, CancelReason::FokUnfillable, sink);
            return;
        }
        let end = self.take(&mut inc, sink);
        if inc.leaves == 0 {
            if inc.list != 0 {
                self.list_gone(inc.list, inc.id.0, sink);
            }
            return;
        }
        match end {
            End::SelfTrade => self.gone(&inc, o.price, CancelReason::SelfTrade, sink),
            End::Volatility => {
                self.start_volatility(sink);
                self.rest_or_cancel(o, display, &inc, sink);
            }
            End::Done => self.rest_or_cancel(o, display, &inc, sink),
        }
    }

    fn rest_or_cancel(
        &mut self,
        o: &NewOrder,
        display: i64,
        inc: &Incoming,
        sink: &mut impl EventSink,
    ) {
        let rests = o.tif.can_rest() && o.order_type != OrderType::Market;
        if !rests {
            self.gone(inc, o.price, CancelReason::Unfilled, sink);
        } else if self.entries.len() >= self.capacity {
            self.gone(inc, o.price, CancelReason::BookFull, sink);
        } else {
            let shown = if display > 0 {
                inc.leaves.min(display)
            } else {
                inc.leaves
            };
            let order = RestingOrder {
                id: o.id,
                client_id: o.client_id,
                account: o.account,
                side: o.side,
                price: o.price,
                qty: Qty::from_raw(inc.leaves),
                tif: o.tif,
                expire_at: o.expire_at,
                stp: o.stp,
                post_only: o.order_type == OrderType::PostOnly,
                display: Qty::from_raw(display),
                shown: Qty::from_raw(shown),
                list: OrderId(inc.list),
            };
            self.push_entry(order);
            sink.push(self.level_event(o.side, o.price));
        }
    }

    pub(super) fn push_entry(&mut self, order: RestingOrder) {
        self.next_priority += 1;
        self.entries.push(Entry {
            order,
            priority: self.next_priority,
        });
    }

    /// The taker's remainder is cancelled; its list is told.
    pub(super) fn gone(
        &mut self,
        inc: &Incoming,
        price: Price,
        reason: CancelReason,
        sink: &mut impl EventSink,
    ) {
        sink.push(Event::Cancelled(event::Cancelled {
            instrument: self.spec.id,
            id: inc.id,
            client_id: inc.client_id,
            account: inc.account,
            side: inc.side,
            price,
            qty: Qty::from_raw(inc.leaves),
            leaves: Qty::ZERO,
            reason,
        }));
        if inc.list != 0 {
            self.list_gone(inc.list, inc.id.0, sink);
        }
    }

    /// The band of prices a trade may print at.
    fn band(&self) -> (i64, i64) {
        match &self.spec.volatility {
            None => (i64::MIN, i64::MAX),
            Some(v) => {
                let w = v.half_width(self.last_price);
                (self.last_price - w, self.last_price + w)
            }
        }
    }

    /// Tries a FOK on a copy of the book: fillable if the copy fills it completely
    /// without self-trade prevention stopping or shrinking it.
    fn fok_ok(&self, inc: &Incoming) -> bool {
        let mut probe = self.clone();
        probe.probe = true;
        let mut copy = *inc;
        let mut sink: Vec<Event> = Vec::new();
        probe.take(&mut copy, &mut sink) == End::Done && copy.leaves == 0
    }

    /// The index of the best opposite order.
    fn best_opposite(&self, side: Side) -> Option<usize> {
        self.in_priority(side.opposite()).first().copied()
    }

    /// Matches one order at a time against the best opposite order.
    pub(super) fn take(&mut self, inc: &mut Incoming, sink: &mut impl EventSink) -> End {
        let opp = inc.side.opposite();
        let (lo, hi) = self.band();
        let mut touched: Option<Price> = None;
        loop {
            if inc.leaves == 0 {
                break;
            }
            let Some(i) = self.best_opposite(inc.side) else {
                break;
            };
            let maker = self.entries[i].order;
            if !Self::crosses(inc.side, inc.limit, maker.price) {
                break;
            }
            if touched != Some(maker.price) {
                if let Some(p) = touched.take() {
                    sink.push(self.level_event(opp, p));
                }
                if maker.price.units() < lo || maker.price.units() > hi {
                    return End::Volatility;
                }
            }
            if maker.account == inc.account && inc.stp != StpMode::None {
                if self.probe && inc.stp != StpMode::CancelOldest {
                    return End::SelfTrade;
                }
                match inc.stp {
                    StpMode::CancelNewest => {
                        if let Some(p) = touched {
                            sink.push(self.level_event(opp, p));
                        }
                        return End::SelfTrade;
                    }
                    StpMode::DecrementAndCancel => self.decrement(inc, i, sink),
                    _ => {
                        self.remove_maker(i, CancelReason::SelfTrade, sink);
                        if inc.stp == StpMode::CancelBoth {
                            sink.push(self.level_event(opp, maker.price));
                            return End::SelfTrade;
                        }
                    }
                }
            } else {
                self.fill(inc, i, sink);
            }
            touched = Some(maker.price);
        }
        if let Some(p) = touched {
            sink.push(self.level_event(opp, p));
        }
        End::Done
    }

    /// Removes resting order `i` entirely with `reason`; tells its list.
    fn remove_maker(&mut self, i: usize, reason: CancelReason, sink: &mut impl EventSink) {
        let e = self.entries.remove(i);
        sink.push(self.cancelled(&e.order, e.order.qty.lots(), 0, reason));
        if e.order.list.0 != 0 {
            self.list_gone(e.order.list.0, e.order.id.0, sink);
        }
    }

    /// Lowers resting order `i` by `q` from its shown part; an iceberg whose shown
    /// part runs out shows the next part at the back of the queue. Returns the
    /// order's whole quantity left.
    fn lower(&mut self, i: usize, q: i64) -> i64 {
        let o = &mut self.entries[i].order;
        let total = o.qty.lots() - q;
        let shown = o.shown.lots() - q;
        o.qty = Qty::from_raw(total);
        o.shown = Qty::from_raw(shown);
        if total == 0 {
            self.entries.remove(i);
        } else if shown == 0 {
            o.shown = Qty::from_raw(o.display.lots().min(total));
            self.next_priority += 1;
            self.entries[i].priority = self.next_priority;
        }
        total
    }

    fn fill(&mut self, inc: &mut Incoming, i: usize, sink: &mut impl EventSink) {
        let maker = self.entries[i].order;
        let q = inc.leaves.min(maker.shown.lots());
        inc.leaves -= q;
        self.trade_seq += 1;
        let left = maker.qty.lots() - q;
        sink.push(Event::Fill(event::Fill {
            instrument: self.spec.id,
            trade_id: self.trade_seq,
            maker_id: maker.id,
            taker_id: inc.id,
            maker_client_id: maker.client_id,
            taker_client_id: inc.client_id,
            maker_account: maker.account,
            taker_account: inc.account,
            taker_side: inc.side,
            price: maker.price,
            qty: Qty::from_raw(q),
            maker_leaves: Qty::from_raw(left),
            taker_leaves: Qty::from_raw(inc.leaves),
            auction: false,
            maker_fee: 0,
            taker_fee: 0,
        }));
        self.printed(maker.price.units());
        self.mmp_fill(maker.account, q);
        self.lower(i, q);
        if maker.list.0 != 0 {
            self.list_fill(maker.list.0, maker.id.0, left, sink);
        }
        if inc.list != 0 && self.list_fill(inc.list, inc.id.0, inc.leaves, sink) {
            inc.list = 0;
        }
    }

    pub(super) fn printed(&mut self, price: i64) {
        self.last_price = price;
        if self.round_first == 0 {
            self.round_first = price;
        }
    }

    fn decrement(&mut self, inc: &mut Incoming, i: usize, sink: &mut impl EventSink) {
        let maker = self.entries[i].order;
        let d = inc.leaves.min(maker.shown.lots());
        let left = self.lower(i, d);
        sink.push(self.cancelled(&maker, d, left, CancelReason::SelfTrade));
        if left == 0 && maker.list.0 != 0 {
            self.list_gone(maker.list.0, maker.id.0, sink);
        }
        inc.leaves -= d;
        let me = RestingOrder {
            id: inc.id,
            client_id: inc.client_id,
            account: inc.account,
            side: inc.side,
            price: inc.limit,
            ..maker
        };
        sink.push(self.cancelled(&me, d, inc.leaves, CancelReason::SelfTrade));
    }

    fn owned(&self, id: OrderId, account: AccountId) -> Result<Option<usize>, RejectReason> {
        match self.pos(id) {
            Some(i) if self.entries[i].order.account != account => Err(RejectReason::NotOwner),
            Some(i) => Ok(Some(i)),
            None => match self.parked_pos(id.0) {
                None => Err(RejectReason::UnknownOrder),
                Some(p) if self.parked[p].order.order.account != account => {
                    Err(RejectReason::NotOwner)
                }
                Some(_) => Ok(None),
            },
        }
    }

    pub(super) fn cancel(&mut self, c: &Cancel, sink: &mut impl EventSink) {
        let r = if c.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            self.owned(c.id, c.account)
        };
        match r {
            Err(reason) => self.reject(
                sink,
                c.instrument,
                CommandKind::Cancel,
                c.id,
                c.client_id,
                c.account,
                reason,
            ),
            Ok(Some(i)) => self.cancel_entry(i, CancelReason::UserRequested, sink),
            Ok(None) => self.cancel_parked(c.id.0, CancelReason::UserRequested, sink),
        }
    }

    /// Cancels resting order `i` with `reason`: `Cancelled`, its level, its list.
    pub(super) fn cancel_entry(
        &mut self,
        i: usize,
        reason: CancelReason,
        sink: &mut impl EventSink,
    ) {
        let e = self.entries.remove(i);
        sink.push(self.cancelled(&e.order, e.order.qty.lots(), 0, reason));
        sink.push(self.level_event(e.order.side, e.order.price));
        if e.order.list.0 != 0 {
            self.list_gone(e.order.list.0, e.order.id.0, sink);
        }
    }

    pub(super) fn replace(&mut self, r: &Replace, sink: &mut impl EventSink) {
        let checked = if r.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else if self.halted() {
            Err(RejectReason::InstrumentHalted)
        } else if self.frozen(r.account) {
            Err(RejectReason::MmpFrozen)
        } else {
            self.check_price_qty(r.price, r.qty)
        };
        let checked = checked
            .and_then(|()| self.owned(r.id, r.account))
            .and_then(|i| i.ok_or(RejectReason::NotInBook))
            .and_then(|i| {
                let o = self.entries[i].order;
                let continuous = self.phase == peregrine_types::TradingPhase::Continuous;
                if o.post_only
                    && r.price != o.price
                    && continuous
                    && self.would_take(o.side, r.price)
                {
                    Err(RejectReason::PostOnlyWouldTake)
                } else {
                    Ok(i)
                }
            });
        let i = match checked {
            Ok(i) => i,
            Err(reason) => {
                return self.reject(
                    sink,
                    r.instrument,
                    CommandKind::Replace,
                    r.id,
                    r.client_id,
                    r.account,
                    reason,
                )
            }
        };
        let old = self.entries[i].order;
        let keep = r.price == old.price && r.qty <= old.qty;
        sink.push(Event::Replaced(event::Replaced {
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
            let o = &mut self.entries[i].order;
            o.shown = o.shown.min(r.qty);
            o.qty = r.qty;
            o.client_id = r.client_id;
            sink.push(self.level_event(old.side, old.price));
            return;
        }
        self.entries.remove(i);
        sink.push(self.level_event(old.side, old.price));
        let mut inc = Incoming {
            id: old.id,
            client_id: r.client_id,
            account: old.account,
            side: old.side,
            limit: r.price,
            leaves: r.qty.lots(),
            stp: old.stp,
            list: old.list.0,
        };
        let end = if self.phase == peregrine_types::TradingPhase::Continuous {
            self.take(&mut inc, sink)
        } else {
            End::Done
        };
        if inc.leaves == 0 {
            if inc.list != 0 {
                self.list_gone(inc.list, inc.id.0, sink);
            }
            return;
        }
        match end {
            End::SelfTrade => {
                self.gone(&inc, r.price, CancelReason::SelfTrade, sink);
                return;
            }
            End::Volatility => self.start_volatility(sink),
            End::Done => {}
        }
        let display = old.display.lots();
        let shown = if display > 0 {
            inc.leaves.min(display)
        } else {
            inc.leaves
        };
        let moved = RestingOrder {
            client_id: r.client_id,
            price: r.price,
            qty: Qty::from_raw(inc.leaves),
            shown: Qty::from_raw(shown),
            list: OrderId(inc.list),
            ..old
        };
        self.push_entry(moved);
        sink.push(self.level_event(old.side, r.price));
    }

    pub(super) fn mass_cancel(&mut self, m: &MassCancel, sink: &mut impl EventSink) {
        if m.instrument != self.spec.id {
            return self.reject(
                sink,
                m.instrument,
                CommandKind::MassCancel,
                OrderId(0),
                ClientOrderId(0),
                m.account,
                RejectReason::UnknownInstrument,
            );
        }
        let mut count = 0;
        for side in [Side::Buy, Side::Sell] {
            if m.side.is_none_or(|s| s == side) {
                count += self.cancel_resting_of(side, m.account, CancelReason::MassCancel, sink);
            }
        }
        let mut ids: Vec<u64> = self
            .parked
            .iter()
            .filter(|p| {
                let o = &p.order.order;
                o.account == m.account && m.side.is_none_or(|s| s == o.side)
            })
            .map(|p| p.order.order.id.0)
            .collect();
        ids.sort_unstable();
        for id in ids {
            if self.parked_pos(id).is_some() {
                self.cancel_parked(id, CancelReason::MassCancel, sink);
                count += 1;
            }
        }
        sink.push(Event::MassCancelled(event::MassCancelled {
            instrument: m.instrument,
            account: m.account,
            side: m.side,
            count,
        }));
    }

    /// Cancels an account's resting orders on one side, level by level from the
    /// best, oldest first; one `LevelChanged` per level touched.
    pub(super) fn cancel_resting_of(
        &mut self,
        side: Side,
        account: AccountId,
        reason: CancelReason,
        sink: &mut impl EventSink,
    ) -> u32 {
        let order = self.in_priority(side);
        let mut prices: Vec<Price> = order.iter().map(|&i| self.entries[i].order.price).collect();
        prices.dedup();
        let mut count = 0;
        for price in prices {
            let victims: Vec<OrderId> = self
                .in_priority(side)
                .into_iter()
                .map(|i| self.entries[i].order)
                .filter(|o| o.price == price && o.account == account)
                .map(|o| o.id)
                .collect();
            for id in &victims {
                let Some(i) = self.pos(*id) else { continue };
                let e = self.entries.remove(i);
                sink.push(self.cancelled(&e.order, e.order.qty.lots(), 0, reason));
                if e.order.list.0 != 0 {
                    self.list_gone(e.order.list.0, e.order.id.0, sink);
                }
                count += 1;
            }
            if !victims.is_empty() {
                sink.push(self.level_event(side, price));
            }
        }
        count
    }
}

//! The reference book: the same rules as [`crate::OrderBook`], written to be obviously
//! correct rather than fast. All resting orders live in one `Vec`; every step sorts or
//! scans it. It allocates freely and is only for tests and the differential check.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentSpec, InstrumentStatus, OrderId, OrderType, Price, Qty,
    Side, StpMode, TimeInForce, Timestamp,
};

use crate::command::{Action, Cancel, Command, CommandKind, MassCancel, NewOrder, Replace};
use crate::event::{self, Event, EventSink};
use crate::reject::{CancelReason, RejectReason};
use crate::{Book, RestingOrder};

#[derive(Debug, Clone, Copy)]
struct Entry {
    order: RestingOrder,
    /// Time priority: lower is older. Renewed when an order loses priority.
    priority: u64,
}

/// The naive book.
#[derive(Debug, Clone)]
pub struct ReferenceBook {
    spec: InstrumentSpec,
    capacity: usize,
    entries: Vec<Entry>,
    now: u64,
    trade_seq: u64,
    next_priority: u64,
}

/// The incoming order during matching.
struct Incoming {
    id: OrderId,
    client_id: ClientOrderId,
    account: AccountId,
    side: Side,
    limit: Price,
    leaves: i64,
    stp: StpMode,
}

impl ReferenceBook {
    /// An empty book holding at most `capacity` resting orders.
    pub fn new(spec: InstrumentSpec, capacity: usize) -> ReferenceBook {
        ReferenceBook {
            spec,
            capacity,
            entries: Vec::new(),
            now: 0,
            trade_seq: 0,
            next_priority: 0,
        }
    }

    /// Ids of the resting orders of `side` in priority order.
    fn in_priority(&self, side: Side) -> Vec<OrderId> {
        let mut v: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.order.side == side)
            .collect();
        v.sort_by(|a, b| {
            let by_price = match side {
                Side::Buy => b.order.price.cmp(&a.order.price),
                Side::Sell => a.order.price.cmp(&b.order.price),
            };
            by_price.then(a.priority.cmp(&b.priority))
        });
        v.iter().map(|e| e.order.id).collect()
    }

    fn pos(&self, id: OrderId) -> Option<usize> {
        self.entries.iter().position(|e| e.order.id == id)
    }

    fn level_event(&self, side: Side, price: Price) -> Event {
        let at: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.order.side == side && e.order.price == price)
            .collect();
        Event::LevelChanged(event::LevelChanged {
            instrument: self.spec.id,
            side,
            price,
            qty: Qty::from_raw(at.iter().map(|e| e.order.qty.lots()).sum()),
            count: at.len() as u32,
        })
    }

    fn cancelled(&self, o: &RestingOrder, qty: i64, leaves: i64, reason: CancelReason) -> Event {
        Event::Cancelled(event::Cancelled {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: Qty::from_raw(qty),
            leaves: Qty::from_raw(leaves),
            reason,
        })
    }

    #[allow(clippy::too_many_arguments)] // a reject names everything the command named
    fn reject(
        &self,
        sink: &mut impl EventSink,
        instrument: peregrine_types::InstrumentId,
        command: CommandKind,
        id: OrderId,
        client_id: ClientOrderId,
        account: AccountId,
        reason: RejectReason,
    ) {
        sink.push(Event::Rejected(event::Rejected {
            instrument,
            command,
            id,
            client_id,
            account,
            reason,
        }));
    }

    fn expire(&mut self, now: u64, sink: &mut impl EventSink) {
        let mut due: Vec<(u64, OrderId)> = self
            .entries
            .iter()
            .filter(|e| e.order.expire_at.0 != 0 && e.order.expire_at.0 <= now)
            .map(|e| (e.order.expire_at.0, e.order.id))
            .collect();
        due.sort();
        for (_, id) in due {
            let i = self.pos(id).expect("due order is live");
            let e = self.entries.remove(i);
            sink.push(self.cancelled(&e.order, e.order.qty.lots(), 0, CancelReason::Expired));
            sink.push(self.level_event(e.order.side, e.order.price));
        }
        self.now = self.now.max(now);
    }

    fn check_fields(
        &self,
        instrument: peregrine_types::InstrumentId,
        halted_matters: bool,
        price: Price,
        qty: Qty,
    ) -> Result<(), RejectReason> {
        if instrument != self.spec.id {
            return Err(RejectReason::UnknownInstrument);
        }
        if halted_matters && self.spec.status == InstrumentStatus::Halted {
            return Err(RejectReason::InstrumentHalted);
        }
        if qty.lots() <= 0 {
            return Err(RejectReason::InvalidQty);
        }
        if price.units() <= 0 {
            return Err(RejectReason::InvalidPrice);
        }
        if qty.lots() % self.spec.lot_size != 0 {
            return Err(RejectReason::QtyOffLot);
        }
        if qty.lots() < self.spec.min_qty {
            return Err(RejectReason::QtyBelowMin);
        }
        if qty.lots() > self.spec.max_qty {
            return Err(RejectReason::QtyAboveMax);
        }
        if price.units() % self.spec.tick_size != 0 {
            return Err(RejectReason::PriceOffTick);
        }
        if price.units() < self.spec.band_low() || price.units() > self.spec.band_high() {
            return Err(RejectReason::PriceOutOfBand);
        }
        Ok(())
    }

    fn crosses(side: Side, limit: Price, resting: Price) -> bool {
        match side {
            Side::Buy => limit >= resting,
            Side::Sell => limit <= resting,
        }
    }

    fn would_take(&self, side: Side, limit: Price) -> bool {
        self.entries
            .iter()
            .any(|e| e.order.side != side && Self::crosses(side, limit, e.order.price))
    }

    fn check_new(&self, o: &NewOrder) -> Result<(), RejectReason> {
        self.check_fields(o.instrument, true, o.price, o.qty)?;
        let tif_ok = match o.order_type {
            OrderType::Limit => true,
            OrderType::Market => o.tif == TimeInForce::Ioc || o.tif == TimeInForce::Fok,
            OrderType::PostOnly => o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd,
        };
        if !tif_ok {
            return Err(RejectReason::InvalidTif);
        }
        if (o.tif == TimeInForce::Gtd) != (o.expire_at.0 != 0)
            || (o.tif == TimeInForce::Gtd && o.expire_at.0 <= self.now)
        {
            return Err(RejectReason::InvalidExpiry);
        }
        if self.pos(o.id).is_some() {
            return Err(RejectReason::DuplicateOrderId);
        }
        let rests = (o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd)
            && o.order_type != OrderType::Market;
        if rests && self.entries.len() >= self.capacity {
            return Err(RejectReason::BookFull);
        }
        if o.order_type == OrderType::PostOnly && self.would_take(o.side, o.price) {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(())
    }

    fn new_order(&mut self, o: &NewOrder, sink: &mut impl EventSink) {
        if let Err(r) = self.check_new(o) {
            self.reject(
                sink,
                o.instrument,
                CommandKind::New,
                o.id,
                o.client_id,
                o.account,
                r,
            );
            return;
        }
        sink.push(Event::Accepted(event::Accepted {
            instrument: o.instrument,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: o.qty,
        }));
        let mut inc = Incoming {
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            limit: o.price,
            leaves: o.qty.lots(),
            stp: o.stp,
        };
        let gone = |inc: &Incoming, reason| {
            let ro = RestingOrder {
                id: inc.id,
                client_id: inc.client_id,
                account: inc.account,
                side: inc.side,
                price: o.price,
                qty: Qty::ZERO,
                tif: o.tif,
                expire_at: o.expire_at,
                stp: o.stp,
                post_only: false,
            };
            (ro, inc.leaves, reason)
        };
        if o.tif == TimeInForce::Fok && !self.fok_ok(&inc) {
            let (ro, q, r) = gone(&inc, CancelReason::FokUnfillable);
            sink.push(self.cancelled(&ro, q, 0, r));
            return;
        }
        let stopped = self.take(&mut inc, sink);
        if inc.leaves == 0 {
            return;
        }
        let rests = (o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd)
            && o.order_type != OrderType::Market;
        if stopped || !rests {
            let reason = if stopped {
                CancelReason::SelfTrade
            } else {
                CancelReason::Unfilled
            };
            let (ro, q, r) = gone(&inc, reason);
            sink.push(self.cancelled(&ro, q, 0, r));
            return;
        }
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
        };
        self.push_entry(order);
        sink.push(self.level_event(o.side, o.price));
    }

    fn push_entry(&mut self, order: RestingOrder) {
        self.next_priority += 1;
        self.entries.push(Entry {
            order,
            priority: self.next_priority,
        });
    }

    fn fok_ok(&self, inc: &Incoming) -> bool {
        let mut available = 0i64;
        for id in self.in_priority(inc.side.opposite()) {
            let o = self.entries[self.pos(id).unwrap()].order;
            if !Self::crosses(inc.side, inc.limit, o.price) {
                break;
            }
            if o.account == inc.account && inc.stp != StpMode::None {
                if inc.stp == StpMode::CancelOldest {
                    continue;
                }
                break;
            }
            available += o.qty.lots();
            if available >= inc.leaves {
                return true;
            }
        }
        false
    }

    /// Returns whether STP stopped the incoming order.
    fn take(&mut self, inc: &mut Incoming, sink: &mut impl EventSink) -> bool {
        let opp = inc.side.opposite();
        while inc.leaves > 0 {
            let order = self.in_priority(opp);
            let Some(first) = order.first() else {
                return false;
            };
            let price = self.entries[self.pos(*first).unwrap()].order.price;
            if !Self::crosses(inc.side, inc.limit, price) {
                return false;
            }
            let level: Vec<OrderId> = order
                .into_iter()
                .filter(|id| self.entries[self.pos(*id).unwrap()].order.price == price)
                .collect();
            let mut touched = false;
            let mut stopped = false;
            for id in level {
                if inc.leaves == 0 {
                    break;
                }
                let i = self.pos(id).unwrap();
                let maker = self.entries[i].order;
                if maker.account == inc.account && inc.stp != StpMode::None {
                    if inc.stp == StpMode::CancelNewest {
                        stopped = true;
                        break;
                    }
                    if inc.stp == StpMode::DecrementAndCancel {
                        let d = inc.leaves.min(maker.qty.lots());
                        let left = maker.qty.lots() - d;
                        if left == 0 {
                            self.entries.remove(i);
                        } else {
                            self.entries[i].order.qty = Qty::from_raw(left);
                        }
                        sink.push(self.cancelled(&maker, d, left, CancelReason::SelfTrade));
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
                        touched = true;
                        continue;
                    }
                    self.entries.remove(i);
                    sink.push(self.cancelled(&maker, maker.qty.lots(), 0, CancelReason::SelfTrade));
                    touched = true;
                    if inc.stp == StpMode::CancelBoth {
                        stopped = true;
                        break;
                    }
                    continue;
                }
                let q = inc.leaves.min(maker.qty.lots());
                inc.leaves -= q;
                let left = maker.qty.lots() - q;
                self.trade_seq += 1;
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
                }));
                if left == 0 {
                    self.entries.remove(i);
                } else {
                    self.entries[i].order.qty = Qty::from_raw(left);
                }
                touched = true;
            }
            if touched {
                sink.push(self.level_event(opp, price));
            }
            if stopped {
                return true;
            }
        }
        false
    }

    fn owned(&self, id: OrderId, account: AccountId) -> Result<usize, RejectReason> {
        let i = self.pos(id).ok_or(RejectReason::UnknownOrder)?;
        if self.entries[i].order.account != account {
            return Err(RejectReason::NotOwner);
        }
        Ok(i)
    }

    fn cancel(&mut self, c: &Cancel, sink: &mut impl EventSink) {
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
            Ok(i) => {
                let e = self.entries.remove(i);
                sink.push(self.cancelled(
                    &e.order,
                    e.order.qty.lots(),
                    0,
                    CancelReason::UserRequested,
                ));
                sink.push(self.level_event(e.order.side, e.order.price));
            }
        }
    }

    fn replace(&mut self, r: &Replace, sink: &mut impl EventSink) {
        let checked = self
            .check_fields(r.instrument, true, r.price, r.qty)
            .and_then(|_| self.owned(r.id, r.account))
            .and_then(|i| {
                let o = self.entries[i].order;
                if o.post_only && r.price != o.price && self.would_take(o.side, r.price) {
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
            self.entries[i].order.qty = r.qty;
            self.entries[i].order.client_id = r.client_id;
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
        };
        let stopped = self.take(&mut inc, sink);
        if inc.leaves == 0 {
            return;
        }
        let moved = RestingOrder {
            client_id: r.client_id,
            price: r.price,
            qty: Qty::from_raw(inc.leaves),
            ..old
        };
        if stopped {
            sink.push(self.cancelled(&moved, inc.leaves, 0, CancelReason::SelfTrade));
            return;
        }
        self.push_entry(moved);
        sink.push(self.level_event(old.side, r.price));
    }

    fn mass_cancel(&mut self, m: &MassCancel, sink: &mut impl EventSink) {
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
            if m.side.is_some_and(|s| s != side) {
                continue;
            }
            let ids = self.in_priority(side);
            let mut prices: Vec<Price> = ids
                .iter()
                .map(|id| self.entries[self.pos(*id).unwrap()].order.price)
                .collect();
            prices.dedup();
            for price in prices {
                let victims: Vec<OrderId> = ids
                    .iter()
                    .copied()
                    .filter(|id| {
                        let o = self
                            .entries
                            .get(self.pos(*id).unwrap_or(usize::MAX))
                            .map(|e| e.order);
                        o.is_some_and(|o| o.price == price && o.account == m.account)
                    })
                    .collect();
                for id in &victims {
                    let e = self.entries.remove(self.pos(*id).unwrap());
                    sink.push(self.cancelled(
                        &e.order,
                        e.order.qty.lots(),
                        0,
                        CancelReason::MassCancel,
                    ));
                    count += 1;
                }
                if !victims.is_empty() {
                    sink.push(self.level_event(side, price));
                }
            }
        }
        sink.push(Event::MassCancelled(event::MassCancelled {
            instrument: m.instrument,
            account: m.account,
            side: m.side,
            count,
        }));
    }
}

impl Book for ReferenceBook {
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.expire(cmd.ts.0, sink);
        match &cmd.action {
            Action::New(o) => self.new_order(o, sink),
            Action::Cancel(c) => self.cancel(c, sink),
            Action::Replace(r) => self.replace(r, sink),
            Action::MassCancel(m) => self.mass_cancel(m, sink),
            Action::SetStatus(s) => {
                if s.instrument == self.spec.id {
                    self.spec.status = s.status;
                    sink.push(Event::StatusChanged(*s));
                } else {
                    self.reject(
                        sink,
                        s.instrument,
                        CommandKind::SetStatus,
                        OrderId(0),
                        ClientOrderId(0),
                        AccountId(0),
                        RejectReason::UnknownInstrument,
                    );
                }
            }
            Action::Tick => {}
        }
    }

    fn for_each_order(&self, f: &mut dyn FnMut(&RestingOrder)) {
        for side in [Side::Buy, Side::Sell] {
            for id in self.in_priority(side) {
                f(&self.entries[self.pos(id).unwrap()].order);
            }
        }
    }

    fn trade_seq(&self) -> u64 {
        self.trade_seq
    }

    fn now(&self) -> Timestamp {
        Timestamp(self.now)
    }

    fn status(&self) -> InstrumentStatus {
        self.spec.status
    }
}

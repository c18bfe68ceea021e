//! The reference book: the same rules as [`crate::OrderBook`], written to be obviously
//! correct rather than fast. Resting orders, parked orders, lists and protections
//! live in plain `Vec`s; every step sorts or scans them; a FOK order is tried on a
//! copy of the book; the uncross searches every price on the grid. It allocates
//! freely and is only for tests and the differential check.

mod auction;
mod lists;
mod matching;
mod park;
mod time;

use std::collections::VecDeque;

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentSpec, InstrumentStatus, OrderId, OrderType, Price, Qty,
    Side, StpMode, TimeInForce, Timestamp, TradingPhase, TrailUnit, TriggerKind,
};

use crate::command::{Action, CommandKind, ExtOrder, MmpParams, NewOrder, OrderList};
use crate::event::{self, Event, EventSink};
use crate::reject::{CancelReason, RejectReason};
use crate::venue::{ListStage, ListState, MmpView, ParkedOrder, VenueState};
use crate::{Book, Command, RestingOrder};

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// `qty` is the whole open quantity, `shown` the visible part, `list` the list id.
    order: RestingOrder,
    /// Time priority: lower is older. Renewed when an order loses priority.
    priority: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PState {
    Waiting,
    Pending,
    Queued,
}

#[derive(Debug, Clone, Copy)]
struct Parked {
    order: ExtOrder,
    seq: u64,
    state: PState,
    release: bool,
    list: u64,
    watermark: i64,
    eff: i64,
}

#[derive(Debug, Clone, Copy)]
struct ListRec {
    id: u64,
    client_id: ClientOrderId,
    account: AccountId,
    kind: peregrine_types::ListKind,
    stage: ListStage,
    legs: [u64; 3],
    entered: [u64; 3],
}

#[derive(Debug, Clone)]
struct MmpRec {
    account: AccountId,
    params: MmpParams,
    fills: Vec<(u64, i64)>,
    frozen: bool,
    frozen_until: u64,
    tripped: bool,
}

/// The naive book.
#[derive(Debug, Clone)]
pub struct ReferenceBook {
    spec: InstrumentSpec,
    capacity: usize,
    parked_capacity: usize,
    entries: Vec<Entry>,
    parked: Vec<Parked>,
    lists: Vec<ListRec>,
    mmp: Vec<MmpRec>,
    tripped: Vec<AccountId>,
    queue: VecDeque<u64>,
    now: u64,
    trade_seq: u64,
    next_priority: u64,
    park_seq: u64,
    phase: TradingPhase,
    ends_at: u64,
    last_price: i64,
    round_first: i64,
    indicative: (i64, i64, i64, Option<Side>),
    sched_done: u64,
    /// Set while the book is a FOK probe: STP other than cancel-oldest stops.
    probe: bool,
}

/// The incoming order during matching.
#[derive(Debug, Clone, Copy)]
struct Incoming {
    id: OrderId,
    client_id: ClientOrderId,
    account: AccountId,
    side: Side,
    limit: Price,
    leaves: i64,
    stp: StpMode,
    list: u64,
}

/// Why matching stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Done,
    SelfTrade,
    Volatility,
}

impl ReferenceBook {
    /// An empty book holding at most `capacity` resting orders (and as many parked
    /// orders as [`crate::OrderBook::new`] gives the fast book).
    pub fn new(spec: InstrumentSpec, capacity: usize) -> ReferenceBook {
        Self::with_capacities(spec, capacity, capacity.min(crate::book::DEFAULT_PARKED))
    }

    /// An empty book with room for `capacity` resting and `parked` parked orders.
    pub fn with_capacities(spec: InstrumentSpec, capacity: usize, parked: usize) -> Self {
        let phase = match spec.status {
            InstrumentStatus::Active => TradingPhase::Continuous,
            InstrumentStatus::Halted => TradingPhase::Halted,
        };
        ReferenceBook {
            last_price: spec.reference_price,
            spec,
            capacity,
            parked_capacity: parked,
            entries: Vec::new(),
            parked: Vec::new(),
            lists: Vec::new(),
            mmp: Vec::new(),
            tripped: Vec::new(),
            queue: VecDeque::new(),
            now: 0,
            trade_seq: 0,
            next_priority: 0,
            park_seq: 0,
            phase,
            ends_at: 0,
            round_first: 0,
            indicative: (0, 0, 0, None),
            sched_done: 0,
            probe: false,
        }
    }

    fn pos(&self, id: OrderId) -> Option<usize> {
        self.entries.iter().position(|e| e.order.id == id)
    }

    fn parked_pos(&self, id: u64) -> Option<usize> {
        self.parked.iter().position(|p| p.order.order.id.0 == id)
    }

    /// Resting orders of `side` in priority order (entry indexes).
    fn in_priority(&self, side: Side) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].order.side == side)
            .collect();
        v.sort_by(|&a, &b| {
            let (a, b) = (&self.entries[a], &self.entries[b]);
            let by_price = match side {
                Side::Buy => b.order.price.cmp(&a.order.price),
                Side::Sell => a.order.price.cmp(&b.order.price),
            };
            by_price.then(a.priority.cmp(&b.priority))
        });
        v
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
            qty: Qty::from_raw(at.iter().map(|e| e.order.shown.lots()).sum()),
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

    fn cancelled_new(&self, o: &NewOrder, qty: i64, reason: CancelReason) -> Event {
        Event::Cancelled(event::Cancelled {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: Qty::from_raw(qty),
            leaves: Qty::ZERO,
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

    fn halted(&self) -> bool {
        self.phase == TradingPhase::Halted
    }

    fn frozen(&self, account: AccountId) -> bool {
        self.mmp.iter().any(|m| m.account == account && m.frozen)
    }

    /// Field checks of an order in `phase`, in the documented order.
    fn check_fields(&self, o: &NewOrder, phase: TradingPhase) -> Result<(), RejectReason> {
        if o.instrument != self.spec.id {
            return Err(RejectReason::UnknownInstrument);
        }
        if phase == TradingPhase::Halted {
            return Err(RejectReason::InstrumentHalted);
        }
        self.check_price_qty(o.price, o.qty)?;
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
        let rests = (o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd)
            && o.order_type != OrderType::Market;
        if matches!(phase, TradingPhase::Auction(_)) && !rests {
            return Err(RejectReason::AuctionPhase);
        }
        Ok(())
    }

    fn check_price_qty(&self, price: Price, qty: Qty) -> Result<(), RejectReason> {
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
        self.check_price(price)
    }

    fn check_price(&self, price: Price) -> Result<(), RejectReason> {
        if price.units() % self.spec.tick_size != 0 {
            return Err(RejectReason::PriceOffTick);
        }
        if price.units() < self.spec.band_low() || price.units() > self.spec.band_high() {
            return Err(RejectReason::PriceOutOfBand);
        }
        Ok(())
    }

    /// Trigger and display checks of an extended order.
    fn check_ext(&self, e: &ExtOrder) -> Result<(), RejectReason> {
        let t = e.trigger;
        match t.kind {
            TriggerKind::None => {
                if t.unit != TrailUnit::None || t.trail != 0 || t.price.units() != 0 {
                    return Err(RejectReason::InvalidTrigger);
                }
            }
            _ if e.order.order_type == OrderType::PostOnly => {
                return Err(RejectReason::InvalidTrigger)
            }
            _ if t.unit == TrailUnit::None => {
                if t.trail != 0 || t.price.units() <= 0 {
                    return Err(RejectReason::InvalidTrigger);
                }
                self.check_price(t.price)?;
            }
            _ => {
                let bad_bps = t.unit == TrailUnit::Bps && t.trail > 10_000;
                if t.kind != TriggerKind::StopLoss
                    || t.trail <= 0
                    || t.price.units() != 0
                    || bad_bps
                {
                    return Err(RejectReason::InvalidTrigger);
                }
            }
        }
        let d = e.display.lots();
        if d != 0 {
            let o = &e.order;
            let rests = o.order_type != OrderType::Market
                && (o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd);
            if d < 0
                || !rests
                || d % self.spec.lot_size != 0
                || d < self.spec.min_qty
                || d >= o.qty.lots()
            {
                return Err(RejectReason::InvalidDisplayQty);
            }
        }
        Ok(())
    }

    /// The checks after the fields: protection, duplicate id, room, post-only.
    fn admit(&self, o: &NewOrder, parks: bool) -> Result<(), RejectReason> {
        if self.frozen(o.account) {
            return Err(RejectReason::MmpFrozen);
        }
        if self.pos(o.id).is_some() || self.parked_pos(o.id.0).is_some() {
            return Err(RejectReason::DuplicateOrderId);
        }
        if parks {
            return if self.parked.len() >= self.parked_capacity {
                Err(RejectReason::BookFull)
            } else {
                Ok(())
            };
        }
        let rests = (o.tif == TimeInForce::Gtc || o.tif == TimeInForce::Gtd)
            && o.order_type != OrderType::Market;
        if rests && self.entries.len() >= self.capacity {
            return Err(RejectReason::BookFull);
        }
        if o.order_type == OrderType::PostOnly
            && self.phase == TradingPhase::Continuous
            && self.would_take(o.side, o.price)
        {
            return Err(RejectReason::PostOnlyWouldTake);
        }
        Ok(())
    }

    /// `StopWouldTrigger` for a fixed trigger already reached.
    fn check_would_trigger(&self, e: &ExtOrder) -> Result<(), RejectReason> {
        let t = e.trigger;
        if t.kind != TriggerKind::None && t.unit == TrailUnit::None {
            let reached = if t.kind.rises(e.order.side) {
                self.last_price >= t.price.units()
            } else {
                self.last_price <= t.price.units()
            };
            if reached {
                return Err(RejectReason::StopWouldTrigger);
            }
        }
        Ok(())
    }

    /// The phase field checks use: a conditional or pending order waits through a
    /// call.
    fn phase_for(&self, waits: bool) -> TradingPhase {
        if waits && matches!(self.phase, TradingPhase::Auction(_)) {
            TradingPhase::Continuous
        } else {
            self.phase
        }
    }

    fn accepted(o: &NewOrder) -> Event {
        Event::Accepted(event::Accepted {
            instrument: o.instrument,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: o.qty,
        })
    }

    fn new_order(&mut self, o: &NewOrder, sink: &mut impl EventSink) {
        let checked = self
            .check_fields(o, self.phase)
            .and_then(|()| self.admit(o, false));
        if let Err(r) = checked {
            self.reject_new(o, r, sink);
            return;
        }
        sink.push(Self::accepted(o));
        self.incoming(o, 0, 0, sink);
    }

    fn reject_new(&self, o: &NewOrder, r: RejectReason, sink: &mut impl EventSink) {
        self.reject(
            sink,
            o.instrument,
            CommandKind::New,
            o.id,
            o.client_id,
            o.account,
            r,
        );
    }

    fn new_ext(&mut self, e: &ExtOrder, sink: &mut impl EventSink) {
        let parks = e.trigger.kind != TriggerKind::None;
        let checked = self
            .check_fields(&e.order, self.phase_for(parks))
            .and_then(|()| self.check_ext(e))
            .and_then(|()| self.admit(&e.order, parks))
            .and_then(|()| self.check_would_trigger(e));
        if let Err(r) = checked {
            self.reject_new(&e.order, r, sink);
            return;
        }
        sink.push(Self::accepted(&e.order));
        self.enter_ext(e, 0, sink);
    }

    fn enter_ext(&mut self, e: &ExtOrder, list: u64, sink: &mut impl EventSink) {
        if e.trigger.kind != TriggerKind::None {
            self.park(e, false, list, None);
        } else {
            self.incoming(&e.order, e.display.lots(), list, sink);
        }
    }

    /// Runs what the command set off, then the indicative uncross.
    fn finish(&mut self, sink: &mut impl EventSink) {
        self.cascade(sink);
        if matches!(self.phase, TradingPhase::Auction(_)) {
            self.publish_indicative(sink);
        }
    }
}

impl Book for ReferenceBook {
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.advance(cmd.ts.0, sink);
        match &cmd.action {
            Action::New(o) => self.new_order(o, sink),
            Action::NewExt(e) => self.new_ext(e, sink),
            Action::Cancel(c) => self.cancel(c, sink),
            Action::Replace(r) => self.replace(r, sink),
            Action::MassCancel(m) => self.mass_cancel(m, sink),
            Action::SetStatus(s) => {
                let op = match s.status {
                    InstrumentStatus::Active => crate::MarketOp::Resume,
                    InstrumentStatus::Halted => crate::MarketOp::Halt,
                };
                self.market(s.instrument, op, CommandKind::SetStatus, sink);
            }
            Action::CancelList(c) => self.cancel_list(c, sink),
            Action::Mmp(m) => self.mmp_command(m, sink),
            Action::Market(m) => self.market(m.instrument, m.op, CommandKind::Market, sink),
            Action::Tick => {}
        }
        self.finish(sink);
    }

    fn execute_list<S: EventSink>(&mut self, ts: Timestamp, list: &OrderList, sink: &mut S) {
        self.advance(ts.0, sink);
        self.new_list(list, sink);
        self.finish(sink);
    }

    fn for_each_order(&self, f: &mut dyn FnMut(&RestingOrder)) {
        for side in [Side::Buy, Side::Sell] {
            for i in self.in_priority(side) {
                f(&self.entries[i].order);
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
        if self.halted() {
            InstrumentStatus::Halted
        } else {
            InstrumentStatus::Active
        }
    }

    fn venue_state(&self) -> VenueState {
        let mut parked: Vec<ParkedOrder> = self
            .parked
            .iter()
            .map(|p| {
                let waiting = p.state == PState::Waiting;
                ParkedOrder {
                    order: p.order,
                    seq: p.seq,
                    pending: p.state == PState::Pending,
                    list: OrderId(p.list),
                    watermark: Price::from_raw(if waiting { p.watermark } else { 0 }),
                    trigger_price: Price::from_raw(if waiting { p.eff } else { 0 }),
                }
            })
            .collect();
        parked.sort_by_key(|p| p.order.order.id);
        let mut lists: Vec<ListState> = self
            .lists
            .iter()
            .map(|l| ListState {
                id: OrderId(l.id),
                client_id: l.client_id,
                account: l.account,
                kind: l.kind,
                stage: l.stage,
                legs: l.legs.map(OrderId),
                entered: l.entered.map(OrderId),
            })
            .collect();
        lists.sort_by_key(|l| l.id);
        let mut mmp: Vec<MmpView> = self
            .mmp
            .iter()
            .map(|m| MmpView {
                account: m.account,
                params: m.params,
                frozen: m.frozen,
                frozen_until: Timestamp(m.frozen_until),
                fills: m
                    .fills
                    .iter()
                    .map(|&(t, q)| (Timestamp(t), Qty::from_raw(q)))
                    .collect(),
            })
            .collect();
        mmp.sort_by_key(|m| m.account);
        let (p, v, s, side) = self.indicative;
        VenueState {
            phase: self.phase,
            ends_at: Timestamp(self.ends_at),
            last_price: Price::from_raw(self.last_price),
            indicative: (Price::from_raw(p), Qty::from_raw(v), Qty::from_raw(s), side),
            park_seq: self.park_seq,
            parked,
            lists,
            mmp,
        }
    }
}

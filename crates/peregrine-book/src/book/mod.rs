//! The fast order book: one instrument, price-time priority, zero allocation after
//! construction.
//!
//! Storage: an [`Arena`] of 64-byte nodes, a [`LevelIndex`] of price levels each holding
//! an intrusive FIFO of nodes, an id → slot map ([`OrderIds`]: a direct-indexed window
//! of the newest ids by default) sized at construction so it never grows, and a
//! min-heap of GTD expiries with the same bound. All of it is written once at construction so that no page is
//! first touched (and faulted in) on the order path.

mod amend;
mod lookahead;
mod new_order;
mod restore;
mod take;
mod view;

pub use lookahead::{Stage, LOOKAHEAD};
pub use restore::RestoreError;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentSpec, InstrumentStatus, OrderId, Price, Qty, Side, StpMode,
    Timestamp,
};

use crate::arena::Arena;
use crate::command::{Action, Command, CommandKind};
use crate::event::{Event, EventSink, Rejected};
use crate::ids::{IdWindow, OrderIds};
use crate::index::{Ladder, LevelIndex};
use crate::reject::RejectReason;

/// The fast book, generic over its level index ([`Ladder`] by default) and its order-id
/// map ([`IdWindow`] by default).
#[derive(Debug)]
pub struct OrderBook<L: LevelIndex = Ladder, I: OrderIds = IdWindow> {
    spec: InstrumentSpec,
    arena: Arena,
    ids: I,
    levels: L,
    expiry: BinaryHeap<Reverse<(u64, u64)>>,
    expiry_cap: usize,
    now: u64,
    trade_seq: u64,
}

/// The incoming side of a match: a new order, or a replaced order that lost priority.
#[derive(Debug, Clone, Copy)]
struct Taker {
    id: OrderId,
    client_id: ClientOrderId,
    account: AccountId,
    side: Side,
    limit: i64,
    leaves: i64,
    stp: StpMode,
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// A book for `spec` able to hold `capacity` resting orders. All memory is
    /// allocated here.
    pub fn new(spec: InstrumentSpec, capacity: usize) -> OrderBook<L, I> {
        let levels = L::new(&spec, capacity);
        let ids = I::with_capacity(capacity);
        let mut expiry = BinaryHeap::with_capacity(capacity.max(1));
        for _ in 0..capacity.max(1) {
            expiry.push(Reverse((0, 0)));
        }
        expiry.clear();
        OrderBook {
            spec,
            arena: Arena::with_capacity(capacity),
            ids,
            levels,
            expiry,
            expiry_cap: capacity.max(1),
            now: 0,
            trade_seq: 0,
        }
    }

    /// Applies one command, writing its events to `sink`.
    ///
    /// First the clock advances to `cmd.ts` (expiring GTD orders due by then), then the
    /// action runs. A command for another instrument is rejected as unknown.
    pub fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.advance_time(Timestamp(cmd.ts.0), sink);
        match &cmd.action {
            Action::New(o) => self.new_order(o, sink),
            Action::Cancel(c) => self.cancel(c, sink),
            Action::Replace(r) => self.replace(r, sink),
            Action::MassCancel(m) => self.mass_cancel(m, sink),
            Action::SetStatus(s) => {
                if s.instrument != self.spec.id {
                    sink.push(Event::Rejected(Rejected {
                        instrument: s.instrument,
                        command: CommandKind::SetStatus,
                        id: OrderId(0),
                        client_id: ClientOrderId(0),
                        account: AccountId(0),
                        reason: RejectReason::UnknownInstrument,
                    }));
                } else {
                    self.set_status(s.status);
                    sink.push(Event::StatusChanged(*s));
                }
            }
            Action::Tick => {}
        }
    }

    /// The instrument.
    pub fn spec(&self) -> &InstrumentSpec {
        &self.spec
    }

    /// Halts or resumes trading.
    pub fn set_status(&mut self, status: InstrumentStatus) {
        self.spec.status = status;
    }

    /// Resting orders.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// True when nothing rests.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// Arena capacity.
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Trades printed so far.
    pub fn trade_seq(&self) -> u64 {
        self.trade_seq
    }

    /// The book's clock (the latest command time seen).
    pub fn now(&self) -> Timestamp {
        Timestamp(self.now)
    }

    /// Best level on a side: price, total open quantity and order count. O(1).
    #[inline]
    pub fn best(&self, side: Side) -> Option<(Price, Qty, u32)> {
        self.levels.best(side).map(|h| {
            let l = self.levels.level(h);
            (Price::from_raw(l.price), Qty::from_raw(l.total), l.count)
        })
    }

    /// Open quantity of a live order.
    pub fn order_qty(&self, id: OrderId) -> Option<Qty> {
        self.ids.get(id.0).map(|s| self.arena.get(s).qty)
    }

    /// Expires every GTD order due at or before `now` and moves the clock forward
    /// (never backwards).
    #[inline]
    pub fn advance_time<S: EventSink>(&mut self, now: Timestamp, sink: &mut S) {
        while let Some(&Reverse((at, id))) = self.expiry.peek() {
            if at > now.0 {
                break;
            }
            self.expiry.pop();
            if let Some(slot) = self.ids.get(id) {
                if self.arena.get(slot).expire_at.0 == at {
                    self.cancel_slot(slot, crate::reject::CancelReason::Expired, sink);
                }
            }
        }
        self.now = self.now.max(now.0);
    }

    /// When the earliest resting GTD order expires (`None`: no GTD order rests), so
    /// the caller can run [`OrderBook::advance_time`] (a `Tick`) at that time instead
    /// of waiting for the next command on this book. Drops the heap entries of orders
    /// already gone on the way (what `advance_time` would skip; nothing observable
    /// changes).
    pub fn next_expiry(&mut self) -> Option<Timestamp> {
        while let Some(&Reverse((at, id))) = self.expiry.peek() {
            let live = self
                .ids
                .get(id)
                .is_some_and(|slot| self.arena.get(slot).expire_at.0 == at);
            if live {
                return Some(Timestamp(at));
            }
            self.expiry.pop();
        }
        None
    }

    /// Records a GTD expiry, compacting stale heap entries instead of growing.
    fn schedule_expiry(&mut self, at: u64, id: u64) {
        if self.expiry.len() >= self.expiry_cap {
            let ids = &self.ids;
            self.expiry.retain(|Reverse((_, id))| ids.contains(*id));
        }
        self.expiry.push(Reverse((at, id)));
    }

    /// Unlinks a resting order from its level and frees it; emits `Cancelled` with
    /// `reason` and the level update.
    fn cancel_slot<S: EventSink>(
        &mut self,
        slot: u32,
        reason: crate::reject::CancelReason,
        sink: &mut S,
    ) {
        let node = *self.arena.get(slot);
        let h = node.level;
        self.levels.level_mut(h).unlink(&mut self.arena, slot);
        self.release(slot);
        sink.push(self.cancelled_event(&node, node.qty, Qty::ZERO, reason));
        self.level_changed(node.side, h, sink);
    }

    /// Frees a slot that is already unlinked from its level.
    #[inline]
    fn release(&mut self, slot: u32) {
        let id = self.arena.get(slot).id.0;
        self.ids.remove(id);
        self.arena.free(slot);
    }

    /// Emits the level's new aggregate and forgets it if empty.
    #[inline]
    fn level_changed<S: EventSink>(&mut self, side: Side, h: u32, sink: &mut S) {
        let l = *self.levels.level(h);
        sink.push(Event::LevelChanged(crate::event::LevelChanged {
            instrument: self.spec.id,
            side,
            price: Price::from_raw(l.price),
            qty: Qty::from_raw(l.total),
            count: l.count,
        }));
        if l.is_empty() {
            self.levels.remove(side, h);
        }
    }

    #[inline]
    fn cancelled_event(
        &self,
        node: &crate::arena::OrderNode,
        qty: Qty,
        leaves: Qty,
        reason: crate::reject::CancelReason,
    ) -> Event {
        Event::Cancelled(crate::event::Cancelled {
            instrument: self.spec.id,
            id: node.id,
            client_id: node.client_id,
            account: node.account,
            side: node.side,
            price: node.price,
            qty,
            leaves,
            reason,
        })
    }
}

impl<L: LevelIndex, I: OrderIds> crate::Book for OrderBook<L, I> {
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        OrderBook::execute(self, cmd, sink);
    }

    fn for_each_order(&self, f: &mut dyn FnMut(&crate::RestingOrder)) {
        self.visit_orders(f);
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

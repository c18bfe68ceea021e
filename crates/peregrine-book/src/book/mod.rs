//! The fast order book: one instrument, price-time priority, zero allocation after
//! construction.
//!
//! Storage: an [`Arena`] of 64-byte nodes, a [`LevelIndex`] of price levels each holding
//! an intrusive FIFO of nodes, an id → slot map ([`OrderIds`]: a direct-indexed window
//! of the newest ids by default) sized at construction so it never grows, and a
//! min-heap of GTD expiries with the same bound. All of it is written once at
//! construction so that no page is first touched (and faulted in) on the order path.
//!
//! The venue's rules live beside it, sized the same way: a table of per-slot
//! extensions (iceberg reserve, list membership; read only when a node's flags say
//! so), the parked orders (stops, pending list legs; `crate::park`), the live
//! lists, market-maker protection, and the activation queue that runs a trigger
//! cascade inside one command (`cascade.rs`). Plain orders pay a flag test per fill
//! and one check per command for all of it.

mod amend;
mod cascade;
mod conditional;
mod lists;
mod lookahead;
mod new_order;
mod phase;
mod restore;
mod take;
mod uncross;
mod view;

pub use lookahead::{Stage, LOOKAHEAD};
pub use restore::RestoreError;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentSpec, InstrumentStatus, OrderId, Price, Qty, Side, StpMode,
    Timestamp, TradingPhase,
};

use crate::arena::{Arena, NIL};
use crate::command::{Action, Command, CommandKind, NewOrder, OrderList};
use crate::event::{Event, EventSink, Rejected};
use crate::ids::{IdWindow, OrderIds};
use crate::index::{Ladder, LevelIndex};
use crate::lists::Lists;
use crate::mmp::Mmp;
use crate::park::{Park, TriggerKey};
use crate::reject::{CancelReason, RejectReason};

/// Parked orders a book holds by default (see [`OrderBook::with_capacities`]).
pub const DEFAULT_PARKED: usize = 65_536;

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
    /// Per arena slot: iceberg reserve and list membership, valid under the node's
    /// `ICEBERG` / `IN_LIST` flags.
    ext: Vec<NodeExt>,
    phase: TradingPhase,
    /// When the current call auction uncrosses by itself (0: not timed).
    ends_at: u64,
    /// The last trade price (the reference price before the first trade).
    last_price: i64,
    /// The first trade price since the triggers were last evaluated (0: none).
    round_first: i64,
    park: Park<L>,
    lists: Lists,
    mmp: Mmp,
    /// Parked orders to activate in this command, in order: (slot, order id).
    queue: VecDeque<(u32, u64)>,
    /// Scratch for the triggers one print reaches (sorted before they queue).
    triggered: Vec<TriggerKey>,
    /// Scratch for walking parked orders in id order.
    parked_ids: Vec<(u64, u32)>,
    /// The last indicative uncross published (price, volume, surplus, side).
    indicative: (i64, i64, i64, Option<Side>),
    /// The earliest timer (`u64::MAX`: none): the order path's one check.
    next_timer: u64,
    /// The last schedule boundary run (0: the schedule has not started).
    sched_done: u64,
    /// A lower bound of when [`OrderBook::advance_time`] has work: the earliest of
    /// the GTD expiries, `next_timer`, and 0 while a schedule waits to start. A
    /// command before it pays one comparison for the clock.
    due: u64,
    /// The book is quiet: continuous trading, nothing parked, no live list, no
    /// market-maker protection set, no cascade pending. A plain order or a cancel
    /// then cannot set anything off, so it leaves out the per-fill work for those
    /// rules and its command's finish has nothing to do. Every other action, and any
    /// step that may leave work for the finish, clears it; the full finish
    /// recomputes it.
    quiet: bool,
}

/// Per-slot extension of a resting order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeExt {
    /// Iceberg display size.
    pub(crate) display: i64,
    /// Iceberg quantity not shown.
    pub(crate) hidden: i64,
    /// List slot, or [`NIL`].
    pub(crate) list: u32,
}

impl NodeExt {
    const EMPTY: NodeExt = NodeExt {
        display: 0,
        hidden: 0,
        list: NIL,
    };
}

/// The incoming side of a match: a new order, a replaced order that lost priority,
/// or a parked order that became active.
#[derive(Debug, Clone, Copy)]
struct Taker {
    id: OrderId,
    client_id: ClientOrderId,
    account: AccountId,
    side: Side,
    limit: i64,
    leaves: i64,
    stp: StpMode,
    /// The list it is a leg of, or [`NIL`].
    list: u32,
}

impl Taker {
    /// A new order as a taker, a leg of `list` (or [`NIL`]).
    #[inline(always)]
    fn new_order(o: &NewOrder, list: u32) -> Taker {
        Taker {
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            limit: o.price.units(),
            leaves: o.qty.lots(),
            stp: o.stp,
            list,
        }
    }
}

/// Why a taker stopped matching before its limit, when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TakeEnd {
    /// Filled, out of liquidity, or at its limit.
    Done,
    /// Self-trade prevention stopped it; the caller cancels the remainder.
    SelfTrade,
    /// The next level is outside the volatility band: a volatility auction starts.
    Volatility,
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// A book for `spec` able to hold `capacity` resting orders and
    /// `min(capacity, DEFAULT_PARKED)` parked ones. All memory is allocated here.
    pub fn new(spec: InstrumentSpec, capacity: usize) -> OrderBook<L, I> {
        Self::with_capacities(spec, capacity, capacity.min(DEFAULT_PARKED))
    }

    /// A book for `spec` with room for `capacity` resting orders and `parked` parked
    /// ones (stops waiting for their trigger, list legs waiting for release; at most
    /// as many lists). All memory is allocated here.
    pub fn with_capacities(spec: InstrumentSpec, capacity: usize, parked: usize) -> Self {
        let levels = L::new(&spec, capacity);
        let ids = I::with_capacity(capacity);
        let expiry_cap = (capacity + parked).max(1);
        let mut expiry = BinaryHeap::with_capacity(expiry_cap);
        for _ in 0..expiry_cap {
            expiry.push(Reverse((0, 0)));
        }
        expiry.clear();
        let phase = match spec.status {
            InstrumentStatus::Active => TradingPhase::Continuous,
            InstrumentStatus::Halted => TradingPhase::Halted,
        };
        let mut book = OrderBook {
            last_price: spec.reference_price,
            park: Park::new(&spec, parked),
            spec,
            arena: Arena::with_capacity(capacity),
            ids,
            levels,
            expiry,
            expiry_cap,
            now: 0,
            trade_seq: 0,
            ext: crate::memory::filled_vec(capacity, NodeExt::EMPTY),
            phase,
            ends_at: 0,
            round_first: 0,
            lists: Lists::new(parked),
            mmp: Mmp::default(),
            queue: VecDeque::with_capacity(parked.max(1)),
            triggered: Vec::with_capacity(parked.max(1)),
            parked_ids: Vec::with_capacity(parked.max(1)),
            indicative: (0, 0, 0, None),
            next_timer: u64::MAX,
            sched_done: 0,
            due: 0,
            quiet: false,
        };
        book.refresh_timer();
        book.quiet = book.quiet_now();
        book
    }

    /// Applies one command, writing its events to `sink`.
    ///
    /// First the clock advances to `cmd.ts` (expiring GTD orders due by then, and
    /// running the timers: thaws, auction ends, the schedule), then the action runs,
    /// then the cascade it started (triggers, releases, protections). A command for
    /// another instrument is rejected as unknown.
    pub fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        self.advance_time(Timestamp(cmd.ts.0), sink);
        match &cmd.action {
            Action::New(o) => self.new_order(o, sink),
            Action::NewExt(e) => self.new_ext(e, sink),
            Action::Cancel(c) => self.cancel(c, sink),
            Action::Replace(r) => self.replace(r, sink),
            Action::MassCancel(m) => self.mass_cancel(m, sink),
            Action::SetStatus(s) => {
                if s.instrument != self.spec.id {
                    self.reject_other(s.instrument, CommandKind::SetStatus, sink);
                } else {
                    let op = match s.status {
                        InstrumentStatus::Active => crate::command::MarketOp::Resume,
                        InstrumentStatus::Halted => crate::command::MarketOp::Halt,
                    };
                    self.market(s.instrument, op, CommandKind::SetStatus, sink);
                }
            }
            Action::CancelList(c) => self.cancel_list(c, sink),
            Action::Mmp(m) => self.mmp_command(m, sink),
            Action::Market(m) => self.market(m.instrument, m.op, CommandKind::Market, sink),
            Action::Tick => {}
        }
        self.finish(sink);
    }

    /// Enters an order list at `ts` (see [`OrderList`]).
    pub fn execute_list<S: EventSink>(&mut self, ts: Timestamp, list: &OrderList, sink: &mut S) {
        self.advance_time(ts, sink);
        self.enter_list(list, sink);
    }

    /// Enters an order list at the book's time (after [`OrderBook::advance_time`]).
    pub fn enter_list<S: EventSink>(&mut self, list: &OrderList, sink: &mut S) {
        self.new_list(list, sink);
        self.finish(sink);
    }

    /// Runs what an action set off (the trigger cascade, protections) and publishes
    /// the indicative uncross in a call auction. [`OrderBook::execute`] does it
    /// itself; this is for callers that run an action's parts themselves (the
    /// engine's pre-match stage sits between the clock and the action).
    #[inline]
    pub fn finish_command<S: EventSink>(&mut self, sink: &mut S) {
        self.finish(sink);
    }

    /// A reject naming only an instrument (admin commands for another book).
    fn reject_other<S: EventSink>(
        &self,
        instrument: peregrine_types::InstrumentId,
        command: CommandKind,
        sink: &mut S,
    ) {
        sink.push(Event::Rejected(Rejected {
            instrument,
            command,
            id: OrderId(0),
            client_id: ClientOrderId(0),
            account: AccountId(0),
            reason: RejectReason::UnknownInstrument,
        }));
    }

    /// Whether the book is quiet: a plain order or a cancel now takes the quiet path
    /// (continuous trading, nothing parked, no live list, no market-maker
    /// protection set, no cascade pending).
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// What [`OrderBook::is_quiet`] should say, from the state itself.
    fn quiet_now(&self) -> bool {
        self.phase.is_continuous()
            && self.park.len() == 0
            && self.lists.len() == 0
            && !self.mmp.any()
            && self.queue.is_empty()
            && self.mmp.tripped.is_empty()
            && self.round_first == 0
    }

    /// The instrument.
    pub fn spec(&self) -> &InstrumentSpec {
        &self.spec
    }

    /// Halts or resumes trading directly, without events (restoring a snapshot; a
    /// running book changes phase through commands).
    pub fn set_status(&mut self, status: InstrumentStatus) {
        self.spec.status = status;
        self.phase = match status {
            InstrumentStatus::Active => TradingPhase::Continuous,
            InstrumentStatus::Halted => TradingPhase::Halted,
        };
        self.quiet = self.quiet_now();
    }

    /// The trading phase.
    pub fn phase(&self) -> TradingPhase {
        self.phase
    }

    /// The last trade price (the reference price before the first trade).
    pub fn last_price(&self) -> Price {
        Price::from_raw(self.last_price)
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

    /// Parked orders (stops waiting for a trigger, list legs waiting for release).
    pub fn parked_len(&self) -> usize {
        self.park.len()
    }

    /// Live order lists.
    pub fn lists_len(&self) -> usize {
        self.lists.len()
    }

    /// The live list `id` (its legs still bound).
    pub fn list_state(&self, id: OrderId) -> Option<crate::ListState> {
        self.lists.get(id.0).map(|s| self.lists.entry(s).state())
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

    /// Open quantity of a live resting order (an iceberg's hidden part included).
    pub fn order_qty(&self, id: OrderId) -> Option<Qty> {
        self.ids.get(id.0).map(|s| {
            let n = self.arena.get(s);
            Qty::from_raw(n.qty.lots() + self.hidden(s))
        })
    }

    /// An iceberg's hidden quantity (0 for other orders).
    #[inline]
    fn hidden(&self, slot: u32) -> i64 {
        if self.arena.get(slot).flags & crate::arena::ICEBERG != 0 {
            self.ext[slot as usize].hidden
        } else {
            0
        }
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
            let (ids, park) = (&self.ids, &self.park);
            self.expiry
                .retain(|Reverse((_, id))| ids.contains(*id) || park.get(*id).is_some());
        }
        self.expiry.push(Reverse((at, id)));
        self.due = self.due.min(at);
    }

    /// Unlinks a resting order from its level and frees it; emits `Cancelled` with
    /// `reason` and the level update, then applies its list's rules.
    fn cancel_slot<S: EventSink>(&mut self, slot: u32, reason: CancelReason, sink: &mut S) {
        let hidden = self.hidden(slot);
        let list = self.list_of(slot);
        let id = self.cancel_resting(slot, hidden, reason, sink);
        if list != NIL {
            self.list_gone(list, id, sink);
        }
    }

    /// The part of [`Self::cancel_slot`] every resting order takes: unlink and free
    /// the slot, `Cancelled` for its whole quantity (`hidden`: an iceberg's hidden
    /// part, else 0) and the level update. Returns the order's id. Inlined, so a
    /// plain order's cancel (the cancel command calls this directly for an order
    /// neither an iceberg nor a list leg) runs the unlink's tests in line with the
    /// prefetch that made them.
    #[inline(always)]
    fn cancel_resting<S: EventSink>(
        &mut self,
        slot: u32,
        hidden: i64,
        reason: CancelReason,
        sink: &mut S,
    ) -> u64 {
        let node = *self.arena.get(slot);
        let h = node.level;
        self.levels.level_mut(h).unlink(&mut self.arena, slot);
        self.release(slot);
        let total = Qty::from_raw(node.qty.lots() + hidden);
        sink.push(self.cancelled_event(&node, total, Qty::ZERO, reason));
        self.level_changed(node.side, h, sink);
        node.id.0
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
        reason: CancelReason,
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
        match self.phase {
            TradingPhase::Halted => InstrumentStatus::Halted,
            _ => InstrumentStatus::Active,
        }
    }

    fn venue_state(&self) -> crate::VenueState {
        OrderBook::venue_state(self)
    }

    fn execute_list<S: EventSink>(&mut self, ts: Timestamp, list: &OrderList, sink: &mut S) {
        OrderBook::execute_list(self, ts, list, sink);
    }
}

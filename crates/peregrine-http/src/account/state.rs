//! One account's orders and outstanding requests, moved by exchange reports. Sans-IO:
//! [`AccountState::apply`] turns a report into order changes, answers for waiting
//! requests and [`Change`]s for the user stream and the history writer.

use std::collections::{HashMap, VecDeque};

use peregrine_types::Side;
use tokio::sync::oneshot;

use super::lists::{ListDraft, OrderList, LISTS_KEPT};
use super::order::{ExecType, Fill, Order, OrderType, Status};
use crate::link::{Kind, ListReport, ListState, NewOrder, OpenOrder, Report, Stp, Tif};

/// Closed orders kept in memory per account (older ones are read from history).
pub const CLOSED_KEPT: usize = 4_096;

/// How much of the result a new-order request waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespType {
    /// The acknowledgement only.
    Ack,
    /// The order's state after entry.
    Result,
    /// The state and the fills made on entry.
    Full,
}

/// Why a request got no normal answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The exchange refused it, with this reason code.
    Refused(u16),
    /// It never reached the exchange (no session).
    NotSent,
    /// The session dropped after it was sent: outcome unknown.
    Unknown,
}

/// The answer to a new-order request.
pub type NewAnswer = Result<Order, Failure>;
/// The answer to a cancel request.
pub type CancelAnswer = Result<Order, Failure>;
/// The answer to a new-list or cancel-list request.
pub type ListAnswer = Result<OrderList, Failure>;
/// The answer to a balance request: (available, reserved).
pub type BalanceAnswer = Result<(i64, i64), Failure>;

/// An answer and the moment it was given: on the session task, right after the
/// read that brought it (the `exchange` stage of [`crate::telemetry`] ends there).
#[derive(Debug)]
pub struct Answered<T> {
    /// The answer.
    pub value: T,
    /// When it was given.
    pub at: std::time::Instant,
}

/// The sending half a waiter is answered through; stamps the answer.
#[derive(Debug)]
pub struct Reply<T>(oneshot::Sender<Answered<T>>);

impl<T> Reply<T> {
    /// A reply channel.
    fn channel() -> (Reply<T>, oneshot::Receiver<Answered<T>>) {
        let (tx, rx) = oneshot::channel();
        (Reply(tx), rx)
    }

    /// Answers now (a waiter that gave up is not an error).
    fn send(self, value: T) {
        let _ = self.0.send(Answered {
            value,
            at: std::time::Instant::now(),
        });
    }
}

/// What the API knows about a new order before the exchange answers.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Symbol index.
    pub symbol: usize,
    /// `clientOrderId`.
    pub client_order_id: String,
    /// API type.
    pub kind: OrderType,
    /// The wire request.
    pub wire: NewOrder,
    /// Price the API shows (0 for market orders).
    pub shown_price: i64,
    /// `quoteOrderQty` of a market order by cost (0: by quantity).
    pub orig_quote: i64,
}

#[derive(Debug)]
enum Waiter {
    New {
        draft: Draft,
        resp: RespType,
        tx: Option<Reply<NewAnswer>>,
        order_id: Option<u64>,
    },
    Cancel {
        new_client_id: String,
        tx: Reply<CancelAnswer>,
    },
    Balance {
        tx: Reply<BalanceAnswer>,
    },
    List {
        draft: ListDraft,
        tx: Reply<ListAnswer>,
        list_id: Option<u64>,
    },
    CancelList {
        tx: Reply<ListAnswer>,
    },
}

/// A change to report to the user stream and the history writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The order after the change.
    pub order: Order,
    /// What happened.
    pub exec: ExecType,
    /// The fill, for `Trade`.
    pub fill: Option<Fill>,
    /// For a cancel on request: the cancel's client id (the order's is then in
    /// `origClientOrderId`).
    pub cancel_client_id: Option<String>,
    /// The report's engine time, ns.
    pub time_ns: u64,
}

/// One account.
#[derive(Debug)]
pub struct AccountState {
    next_id: u64,
    waiters: HashMap<u64, Waiter>,
    orders: HashMap<u64, Order>,
    by_coid: HashMap<u64, u64>,
    closed: VecDeque<u64>,
    open_ids: HashMap<(usize, String), u64>,
    /// Reports about orders this gateway does not know (placed elsewhere, or while
    /// it was down).
    pub unknown_reports: u64,
    /// Instrument id → symbol index: orders the gateway did not place here (another
    /// session of the account, or this gateway before a restart, replayed) are
    /// adopted for the instruments it knows.
    symbols: HashMap<u32, usize>,
    /// Order lists by id, and their ids oldest first (for forgetting).
    lists: HashMap<u64, OrderList>,
    list_order: VecDeque<u64>,
    /// Lists changed by the reports applied since the last
    /// [`AccountState::take_list_changes`] (for the user stream's `listStatus`).
    list_changes: Vec<OrderList>,
}

impl AccountState {
    /// A fresh account; request ids start at `first_id` (the clock in µs at start,
    /// so they never repeat across restarts).
    pub fn new(first_id: u64) -> AccountState {
        AccountState {
            next_id: first_id.max(1),
            waiters: HashMap::new(),
            orders: HashMap::new(),
            by_coid: HashMap::new(),
            closed: VecDeque::new(),
            open_ids: HashMap::new(),
            unknown_reports: 0,
            symbols: HashMap::new(),
            lists: HashMap::new(),
            list_order: VecDeque::new(),
            list_changes: Vec::new(),
        }
    }

    /// Adopt orders on these instruments (instrument id → symbol index) when their
    /// reports arrive without a request of this process waiting for them.
    pub fn adopt_instruments(&mut self, symbols: HashMap<u32, usize>) {
        self.symbols = symbols;
    }

    /// The next request id.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Registers a new-order request; the answer comes on the returned channel.
    pub fn expect_new(
        &mut self,
        draft: Draft,
        resp: RespType,
    ) -> oneshot::Receiver<Answered<NewAnswer>> {
        let (tx, rx) = Reply::channel();
        self.waiters.insert(
            draft.wire.coid,
            Waiter::New {
                draft,
                resp,
                tx: Some(tx),
                order_id: None,
            },
        );
        rx
    }

    /// Registers a cancel request with id `id`.
    pub fn expect_cancel(
        &mut self,
        id: u64,
        new_client_id: String,
    ) -> oneshot::Receiver<Answered<CancelAnswer>> {
        let (tx, rx) = Reply::channel();
        self.waiters
            .insert(id, Waiter::Cancel { new_client_id, tx });
        rx
    }

    /// Registers a new order list with session id `id`: its legs' drafts wait as new
    /// orders (answered with the list), the list for its `ListStatus`.
    pub fn expect_list(
        &mut self,
        id: u64,
        draft: ListDraft,
        legs: Vec<Draft>,
    ) -> oneshot::Receiver<Answered<ListAnswer>> {
        for d in legs {
            self.waiters.insert(
                d.wire.coid,
                Waiter::New {
                    draft: d,
                    resp: RespType::Ack,
                    tx: None,
                    order_id: None,
                },
            );
        }
        let (tx, rx) = Reply::channel();
        self.waiters.insert(
            id,
            Waiter::List {
                draft,
                tx,
                list_id: None,
            },
        );
        rx
    }

    /// Registers a cancel-list request with id `id`.
    pub fn expect_cancel_list(&mut self, id: u64) -> oneshot::Receiver<Answered<ListAnswer>> {
        let (tx, rx) = Reply::channel();
        self.waiters.insert(id, Waiter::CancelList { tx });
        rx
    }

    /// A list by id.
    pub fn list(&self, list_id: u64) -> Option<&OrderList> {
        self.lists.get(&list_id)
    }

    /// A list by client id (the newest).
    pub fn list_by_client_id(&self, id: &str) -> Option<&OrderList> {
        self.lists
            .values()
            .filter(|l| l.client_list_id == id)
            .max_by_key(|l| l.list_id)
    }

    /// Every list kept, oldest first.
    pub fn lists(&self) -> Vec<OrderList> {
        let mut v: Vec<OrderList> = self.lists.values().cloned().collect();
        v.sort_by_key(|l| l.list_id);
        v
    }

    /// Lists changed since the last call.
    pub fn take_list_changes(&mut self) -> Vec<OrderList> {
        std::mem::take(&mut self.list_changes)
    }

    /// Registers a balance request with id `id`.
    pub fn expect_balance(&mut self, id: u64) -> oneshot::Receiver<Answered<BalanceAnswer>> {
        let (tx, rx) = Reply::channel();
        self.waiters.insert(id, Waiter::Balance { tx });
        rx
    }

    /// Forgets a request that timed out or was never sent.
    pub fn forget(&mut self, id: u64, why: Failure) {
        if let Some(w) = self.waiters.remove(&id) {
            if let Waiter::List { draft, .. } = &w {
                for c in &draft.leg_coids {
                    self.waiters.remove(c);
                }
            }
            fail(w, why);
        }
    }

    /// Every waiting request fails with `why` (the session dropped).
    pub fn fail_all(&mut self, why: Failure) {
        for (_, w) in self.waiters.drain() {
            fail(w, why);
        }
    }

    /// An order by exchange id.
    pub fn order(&self, order_id: u64) -> Option<&Order> {
        self.orders.get(&order_id)
    }

    /// An order by client id (open orders first, then recently closed).
    pub fn order_by_client_id(&self, symbol: usize, id: &str) -> Option<&Order> {
        if let Some(o) = self.open_ids.get(&(symbol, id.to_owned())) {
            return self.orders.get(o);
        }
        self.orders
            .values()
            .filter(|o| o.symbol == symbol && o.client_order_id == id)
            .max_by_key(|o| (o.status.is_open(), o.order_id))
    }

    /// Open orders (of one symbol, or all), oldest first.
    pub fn open_orders(&self, symbol: Option<usize>) -> Vec<Order> {
        let mut v: Vec<Order> = self
            .orders
            .values()
            .filter(|o| o.status.is_open() && symbol.is_none_or(|s| s == o.symbol))
            .cloned()
            .collect();
        v.sort_by_key(|o| o.order_id);
        v
    }

    /// Is `client_order_id` the id of an open order of `symbol`?
    pub fn client_id_in_use(&self, symbol: usize, client_order_id: &str) -> bool {
        self.open_ids
            .contains_key(&(symbol, client_order_id.to_owned()))
            || self.waiters.values().any(|w| {
                matches!(w, Waiter::New { draft, .. } if draft.symbol == symbol && draft.client_order_id == client_order_id)
            })
    }

    /// Adds an open order read back from history at start.
    pub fn restore(&mut self, order: Order) {
        self.by_coid.insert(order.coid, order.order_id);
        self.open_ids.insert(
            (order.symbol, order.client_order_id.clone()),
            order.order_id,
        );
        self.next_id = self.next_id.max(order.coid);
        self.orders.insert(order.order_id, order);
    }

    /// Requests answered for `RESULT`/`FULL` at the end of a read: every report of
    /// their command has arrived (see `link::session`).
    pub fn end_of_read(&mut self) {
        let done: Vec<u64> = self
            .waiters
            .iter()
            .filter(|(_, w)| {
                matches!(
                    w,
                    Waiter::New {
                        order_id: Some(_),
                        ..
                    }
                )
            })
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            if let Some(Waiter::New {
                tx: Some(tx),
                order_id: Some(oid),
                ..
            }) = self.waiters.remove(&id)
            {
                if let Some(o) = self.orders.get(&oid) {
                    tx.send(Ok(o.clone()));
                }
            }
        }
        let lists: Vec<u64> = self
            .waiters
            .iter()
            .filter(|(_, w)| {
                matches!(
                    w,
                    Waiter::List {
                        list_id: Some(_),
                        ..
                    }
                )
            })
            .map(|(id, _)| *id)
            .collect();
        for id in lists {
            if let Some(Waiter::List {
                tx,
                list_id: Some(lid),
                ..
            }) = self.waiters.remove(&id)
            {
                match self.lists.get(&lid) {
                    Some(l) => tx.send(Ok(l.clone())),
                    None => tx.send(Err(Failure::Unknown)),
                }
            }
        }
    }

    /// The cancel request waiting under `id` (not a cancel-list one: its legs'
    /// `Cancelled` reports carry its id too, and its answer is the `ListStatus`).
    fn take_cancel(&mut self, id: u64) -> Option<Waiter> {
        match self.waiters.get(&id) {
            Some(Waiter::Cancel { .. }) => self.waiters.remove(&id),
            _ => None,
        }
    }

    /// A list's status report.
    fn list_report(&mut self, l: ListReport, out: &mut Vec<Change>) {
        let _ = out;
        let ms = l.time_ns / 1_000_000;
        match l.state {
            ListState::Rejected => {
                if let Some(Waiter::List { draft, tx, .. }) = self.waiters.remove(&l.coid) {
                    for c in draft.leg_coids {
                        self.waiters.remove(&c);
                    }
                    tx.send(Err(Failure::Refused(l.reason)));
                }
            }
            ListState::Accepted => {
                let legs: Vec<u64> = l.legs.iter().copied().filter(|&x| x != 0).collect();
                let list = match self.waiters.get_mut(&l.coid) {
                    Some(Waiter::List { draft, list_id, .. }) => {
                        *list_id = Some(l.list_id);
                        OrderList {
                            list_id: l.list_id,
                            symbol: draft.symbol,
                            client_list_id: draft.client_list_id.clone(),
                            kind: l.kind,
                            legs,
                            done: false,
                            rejected: false,
                            time_ms: ms,
                            update_ms: ms,
                        }
                    }
                    _ => {
                        let Some(&symbol) = self.symbols.get(&l.instrument.0) else {
                            self.unknown_reports += 1;
                            return;
                        };
                        OrderList {
                            list_id: l.list_id,
                            symbol,
                            client_list_id: format!("peregrine-{}", l.coid),
                            kind: l.kind,
                            legs,
                            done: false,
                            rejected: false,
                            time_ms: ms,
                            update_ms: ms,
                        }
                    }
                };
                self.list_changes.push(list.clone());
                self.lists.insert(l.list_id, list);
                self.list_order.push_back(l.list_id);
                while self.list_order.len() > LISTS_KEPT {
                    if let Some(old) = self.list_order.pop_front() {
                        self.lists.remove(&old);
                    }
                }
            }
            ListState::Done => {
                let list = self.lists.get_mut(&l.list_id).map(|x| {
                    x.done = true;
                    x.update_ms = ms;
                    x.clone()
                });
                if let Some(x) = &list {
                    self.list_changes.push(x.clone());
                }
                if let Some(Waiter::CancelList { tx }) = self.waiters.remove(&l.request_id) {
                    match list {
                        Some(x) => tx.send(Ok(x)),
                        None => tx.send(Err(Failure::Unknown)),
                    }
                }
            }
        }
    }

    fn retire(&mut self, order_id: u64) {
        self.closed.push_back(order_id);
        while self.closed.len() > CLOSED_KEPT {
            if let Some(old) = self.closed.pop_front() {
                if let Some(o) = self.orders.remove(&old) {
                    self.by_coid.remove(&o.coid);
                }
            }
        }
    }

    /// Applies one report; pushes the resulting changes onto `out`.
    pub fn apply(&mut self, r: &Report, out: &mut Vec<Change>) {
        match *r {
            Report::Accepted {
                order_id,
                coid,
                instrument,
                price,
                qty,
                time_ns,
                side,
                kind,
                tif,
                stp,
                ext,
                parked,
                list_id,
            } => {
                let foreign = Foreign {
                    symbol: self.symbols.get(&instrument.0).copied(),
                    kind,
                    tif,
                    stp,
                };
                let cond = Conditional {
                    ext,
                    parked,
                    list_id,
                };
                self.accepted(
                    order_id, coid, price, qty, side, foreign, cond, time_ns, out,
                );
            }
            Report::Triggered { order_id, time_ns } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                let ms = time_ns / 1_000_000;
                o.working_ms = Some(ms);
                o.update_ms = ms;
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Working,
                    fill: None,
                    cancel_client_id: None,
                    time_ns,
                });
            }
            Report::List(l) => self.list_report(l, out),
            Report::Open(o) => self.listed(o, out),
            Report::Rejected { coid, reason, .. } => {
                if let Some(w) = self.waiters.remove(&coid) {
                    fail(w, Failure::Refused(reason));
                }
            }
            Report::Fill {
                order_id,
                trade_id,
                price,
                qty,
                leaves,
                maker,
                fee,
                time_ns,
                ..
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                let f = Fill {
                    trade_id,
                    price,
                    qty,
                    maker,
                    fee,
                    time_ms: time_ns / 1_000_000,
                };
                o.fill(f, leaves, !maker);
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Trade,
                    fill: Some(f),
                    cancel_client_id: None,
                    time_ns,
                });
                if leaves == 0 {
                    self.finish(order_id);
                }
            }
            Report::Cancelled {
                order_id,
                request_id,
                cause,
                time_ns,
                ..
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    if let Some(Waiter::Cancel { tx, .. }) = self.take_cancel(request_id) {
                        tx.send(Err(Failure::Refused(0)));
                    }
                    return;
                };
                // A list leg cancelled by the list's resolution is `EXPIRED` on
                // Binance; by a cancel of the list, `CANCELED`.
                let cause = match cause {
                    crate::link::CancelCause::ListCancelled if request_id != 0 => {
                        crate::link::CancelCause::Requested
                    }
                    c => c,
                };
                let exec = o.cancel(cause, time_ns / 1_000_000);
                let order = o.clone();
                let mut cancel_client_id = None;
                if let Some(Waiter::Cancel { tx, new_client_id }) = self.take_cancel(request_id) {
                    cancel_client_id = Some(new_client_id);
                    tx.send(Ok(order.clone()));
                }
                out.push(Change {
                    order,
                    exec,
                    fill: None,
                    cancel_client_id,
                    time_ns,
                });
                self.finish(order_id);
            }
            Report::CancelRejected {
                request_id, reason, ..
            } => {
                if let Some(w) = self.waiters.remove(&request_id) {
                    fail(w, Failure::Refused(reason));
                }
            }
            Report::Replaced {
                order_id,
                coid,
                price,
                qty,
                time_ns,
            } => {
                let Some(o) = self.orders.get_mut(&order_id) else {
                    self.unknown_reports += 1;
                    return;
                };
                self.by_coid.remove(&o.coid);
                o.coid = coid;
                o.price = price;
                o.orig_qty = o.executed + qty;
                o.update_ms = time_ns / 1_000_000;
                self.by_coid.insert(coid, order_id);
                out.push(Change {
                    order: o.clone(),
                    exec: ExecType::Replaced,
                    fill: None,
                    cancel_client_id: None,
                    time_ns,
                });
            }
            Report::Balance {
                request_id,
                available,
                reserved,
                ..
            } => {
                if let Some(Waiter::Balance { tx }) = self.waiters.remove(&request_id) {
                    tx.send(Ok((available, reserved)));
                }
            }
            Report::BalanceRejected { request_id, reason } => {
                if let Some(w) = self.waiters.remove(&request_id) {
                    fail(w, Failure::Refused(reason));
                }
            }
        }
    }

    /// An open order the exchange listed: adopted when unknown (no change if known).
    fn listed(&mut self, o: OpenOrder, out: &mut Vec<Change>) {
        if self.orders.contains_key(&o.order_id) {
            return;
        }
        let Some(&symbol) = self.symbols.get(&o.instrument.0) else {
            return;
        };
        let time_ms = o.time_ns / 1_000_000;
        let order = Order {
            symbol,
            order_id: o.order_id,
            coid: o.coid,
            client_order_id: format!("peregrine-{}", o.coid),
            side: o.side,
            kind: order_type(o.kind),
            tif: o.tif,
            stp: Stp::None,
            price: o.price,
            orig_qty: o.open_qty,
            executed: 0,
            cum_quote: 0,
            status: Status::New,
            time_ms,
            update_ms: time_ms,
            entry_fills: Vec::new(),
            orig_quote: 0,
            ext: crate::link::Ext::NONE,
            list_id: -1,
            working_ms: Some(time_ms),
        };
        self.adopt(order, o.time_ns, out);
    }

    fn adopt(&mut self, order: Order, time_ns: u64, out: &mut Vec<Change>) {
        out.push(Change {
            order: order.clone(),
            exec: ExecType::New,
            fill: None,
            cancel_client_id: None,
            time_ns,
        });
        self.by_coid.insert(order.coid, order.order_id);
        self.open_ids.insert(
            (order.symbol, order.client_order_id.clone()),
            order.order_id,
        );
        self.orders.insert(order.order_id, order);
    }

    #[allow(clippy::too_many_arguments)]
    fn accepted(
        &mut self,
        order_id: u64,
        coid: u64,
        price: i64,
        qty: i64,
        side: Side,
        foreign: Foreign,
        cond: Conditional,
        time_ns: u64,
        out: &mut Vec<Change>,
    ) {
        let time_ms = time_ns / 1_000_000;
        let list_id = if cond.list_id == 0 {
            -1
        } else {
            cond.list_id as i64
        };
        let working_ms = (!cond.parked).then_some(time_ms);
        let (draft, resp) = match self.waiters.get_mut(&coid) {
            Some(Waiter::New {
                draft,
                resp,
                order_id: slot,
                ..
            }) => {
                *slot = Some(order_id);
                (Some(draft.clone()), *resp)
            }
            _ => (None, RespType::Ack),
        };
        let order = match draft {
            Some(d) => Order {
                symbol: d.symbol,
                order_id,
                coid,
                client_order_id: d.client_order_id,
                side,
                kind: d.kind,
                tif: d.wire.tif,
                stp: d.wire.stp,
                price: d.shown_price,
                orig_qty: qty,
                executed: 0,
                cum_quote: 0,
                status: Status::New,
                time_ms,
                update_ms: time_ms,
                entry_fills: Vec::new(),
                orig_quote: d.orig_quote,
                ext: cond.ext,
                list_id,
                working_ms,
            },
            None => {
                // Not placed by this process: another session of the account, or this
                // gateway before a restart (replayed). Adopted when its instrument is
                // known; its Binance client id is not, so it gets one.
                self.unknown_reports += 1;
                Order {
                    symbol: foreign.symbol.unwrap_or(usize::MAX),
                    order_id,
                    coid,
                    client_order_id: format!("peregrine-{coid}"),
                    side,
                    kind: OrderType::of(foreign.kind, cond.ext.trigger),
                    tif: foreign.tif,
                    stp: foreign.stp,
                    price,
                    orig_qty: qty,
                    executed: 0,
                    cum_quote: 0,
                    status: Status::New,
                    time_ms,
                    update_ms: time_ms,
                    entry_fills: Vec::new(),
                    orig_quote: 0,
                    ext: cond.ext,
                    list_id,
                    working_ms,
                }
            }
        };
        if order.symbol == usize::MAX {
            return;
        }
        out.push(Change {
            order: order.clone(),
            exec: ExecType::New,
            fill: None,
            cancel_client_id: None,
            time_ns,
        });
        self.by_coid.insert(coid, order_id);
        self.open_ids
            .insert((order.symbol, order.client_order_id.clone()), order_id);
        self.orders.insert(order_id, order.clone());
        if resp == RespType::Ack {
            if let Some(Waiter::New { tx: Some(tx), .. }) = self.waiters.remove(&coid) {
                tx.send(Ok(order));
            }
        }
    }

    /// The order reached a final state: answer its new-order request now.
    fn finish(&mut self, order_id: u64) {
        let Some(o) = self.orders.get(&order_id) else {
            return;
        };
        if let Some(Waiter::New { tx: Some(tx), .. }) = self.waiters.remove(&o.coid) {
            tx.send(Ok(o.clone()));
        }
        let key = (o.symbol, o.client_order_id.clone());
        if self.open_ids.get(&key) == Some(&order_id) {
            self.open_ids.remove(&key);
        }
        self.retire(order_id);
    }
}

/// An accepted order's trigger, iceberg and list.
#[derive(Debug, Clone, Copy)]
struct Conditional {
    ext: crate::link::Ext,
    parked: bool,
    list_id: u64,
}

/// What an accepted order's report says about it, for adopting it.
#[derive(Debug, Clone, Copy)]
struct Foreign {
    symbol: Option<usize>,
    kind: Kind,
    tif: Tif,
    stp: Stp,
}

fn order_type(kind: Kind) -> OrderType {
    OrderType::of(kind, peregrine_types::TriggerKind::None)
}

fn fail(w: Waiter, why: Failure) {
    match w {
        Waiter::New { tx: Some(tx), .. } => {
            tx.send(Err(why));
        }
        Waiter::New { tx: None, .. } => {}
        Waiter::Cancel { tx, .. } => {
            tx.send(Err(why));
        }
        Waiter::Balance { tx } => {
            tx.send(Err(why));
        }
        Waiter::List { tx, .. } | Waiter::CancelList { tx } => {
            tx.send(Err(why));
        }
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

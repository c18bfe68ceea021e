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

mod apply;

#[cfg(test)]
mod tests;

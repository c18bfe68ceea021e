//! Answers to the version-2 order queries, read from the books: the status of one
//! order and the list of open orders of a scope (protocol document, section 4.7).
//! Read-only and not journaled; the caller sends them to the requesting session only.
//!
//! A session sees only the orders of its scope: an order of another account is
//! answered exactly like an unknown one ([`OrderState::Unknown`]), and an
//! open-orders request naming another account gets an empty list.
//!
//! Cost: both walk the resting orders of the named instrument(s) (`visit_orders`):
//! O(orders) per query, on the thread that owns the books. Queries are rare next to
//! orders; an index by client order id would make status O(1) if they were not.

use peregrine_book::{LevelIndex, MatchingEngine, PreMatch, RestingOrder};
use peregrine_types::{AccountId, OrderId, OrderType, Price, Qty, Side, TimeInForce, Timestamp};
use peregrine_wire::field::OrderState;
use peregrine_wire::v2::queries::{
    OpenOrder, OpenOrdersEnd, OpenOrdersRequest, OrderStatus, OrderStatusRequest,
};

/// Whose orders a session may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One account.
    Account(AccountId),
    /// Every account (an operator's drop copy).
    All,
}

impl Scope {
    fn covers(self, account: AccountId) -> bool {
        match self {
            Scope::Account(a) => a == account,
            Scope::All => true,
        }
    }
}

/// The engine state an answer reflects.
#[derive(Debug, Clone, Copy)]
pub struct AsOf {
    /// Engine sequence number of the last command.
    pub engine_seq: u64,
    /// Engine time.
    pub engine_time: Timestamp,
}

/// The answer to `req` from a session of `scope`. `report_seq(account)` is the
/// account's last report sequence number (what the answer reflects); `traded(id)`
/// says whether a live order has had fills.
pub fn order_status<L: LevelIndex, P: PreMatch>(
    engine: &MatchingEngine<L, P>,
    scope: Scope,
    req: &OrderStatusRequest,
    at: AsOf,
    report_seq: impl Fn(AccountId) -> u64,
    traded: impl Fn(OrderId) -> bool,
) -> OrderStatus {
    let mut found: Option<RestingOrder> = None;
    if let Some(book) = engine.book(req.instrument) {
        book.visit_orders(&mut |o| {
            let hit = if req.order_id.0 != 0 {
                o.id == req.order_id
            } else {
                o.client_id == req.client_order_id
            };
            if found.is_none() && hit && scope.covers(o.account) {
                found = Some(*o);
            }
        });
    }
    let (account, order) = match (found, scope) {
        (Some(o), _) => (o.account, Some(o)),
        (None, Scope::Account(a)) => (a, None),
        (None, Scope::All) => (AccountId(0), None),
    };
    let mut s = OrderStatus {
        session_seq: 0,
        engine_seq: at.engine_seq,
        engine_time: at.engine_time,
        request_id: req.request_id,
        order_id: req.order_id,
        client_order_id: req.client_order_id,
        price: Price::from_raw(0),
        open_qty: Qty::from_raw(0),
        expire_at: Timestamp(0),
        report_seq: report_seq(account),
        account,
        instrument: req.instrument,
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        state: OrderState::Unknown,
    };
    if let Some(o) = order {
        s.order_id = o.id;
        s.client_order_id = o.client_id;
        s.price = o.price;
        s.open_qty = o.qty;
        s.expire_at = o.expire_at;
        s.side = o.side;
        s.order_type = order_type(&o);
        s.tif = o.tif;
        s.state = if traded(o.id) {
            OrderState::PartiallyFilled
        } else {
            OrderState::New
        };
    }
    s
}

/// Streams the open orders `req` asks for (within `scope`) to `each`, then returns the
/// closing `OpenOrdersEnd` with the count. `report_seq` is what the list reflects (the
/// account's last report sequence number; for every account, the engine sequence
/// number).
pub fn open_orders<L: LevelIndex, P: PreMatch>(
    engine: &MatchingEngine<L, P>,
    scope: Scope,
    req: &OpenOrdersRequest,
    at: AsOf,
    report_seq: u64,
    mut each: impl FnMut(OpenOrder),
) -> OpenOrdersEnd {
    let wanted = |a: AccountId| match (req.account, scope) {
        (Some(x), _) => x == a && scope.covers(a),
        (None, s) => s.covers(a),
    };
    let mut count = 0u32;
    for book in engine.books() {
        if req.instrument.is_some_and(|i| i != book.spec().id) {
            continue;
        }
        let instrument = book.spec().id;
        book.visit_orders(&mut |o| {
            if !wanted(o.account) {
                return;
            }
            count = count.saturating_add(1);
            each(OpenOrder {
                session_seq: 0,
                engine_seq: at.engine_seq,
                engine_time: at.engine_time,
                request_id: req.request_id,
                order_id: o.id,
                client_order_id: o.client_id,
                price: o.price,
                open_qty: o.qty,
                expire_at: o.expire_at,
                account: o.account,
                instrument,
                side: o.side,
                order_type: order_type(o),
                tif: o.tif,
            });
        });
    }
    OpenOrdersEnd {
        session_seq: 0,
        engine_seq: at.engine_seq,
        engine_time: at.engine_time,
        request_id: req.request_id,
        report_seq,
        count,
    }
}

fn order_type(o: &RestingOrder) -> OrderType {
    if o.post_only {
        OrderType::PostOnly
    } else {
        OrderType::Limit
    }
}

#[cfg(test)]
#[path = "queries_tests.rs"]
mod tests;
